"""People and faces in a key frame: what a detector reports (:class:`PeopleSeen`), the
detector configured (:func:`people_finder`: by default MediaPipe's BlazePose and BlazeFace,
memory/blaze_people.py, which find far more of the people a camera shows), and the classic
detectors that ship inside OpenCV 4.x, used where those are not installed.

ImageNet has no "person" class, so the classifier can only hint at people through what they
wear ("suit", "Windsor tie"). Two detectors that come with the ``opencv-python`` 4.x wheel
(no download) say it directly:

* the Viola–Jones frontal-face cascade (``haarcascade_frontalface_default.xml``) for faces
  turned towards the camera, the most common person shot in talks, calls and interviews;
* the Dalal–Triggs HOG + linear SVM pedestrian detector for whole standing people.

Both fire on busy textures if left at their defaults, so a face must be confirmed by
several overlapping detections (``face_min_neighbors``) and be a sizeable part of the frame,
and a body must score above ``people_hog_min_score``; the values were chosen on the
development part of benchmarks/bench_vision.py to keep false alarms on textures and signs
rare. OpenCV 5 wheels ship neither detector, so ``pyproject.toml`` pins OpenCV 4.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from episodic.config import VisionSettings
from episodic.core.errors import ModelError

log = logging.getLogger(__name__)

DETECT_MAX_WIDTH = 640  # detectors run on a copy at most this wide (cost grows with area)


@dataclass(frozen=True)
class PeopleSeen:
    """How many people and faces were found, and their boxes (x, y, w, h) in input pixels."""

    people: int
    faces: int
    face_boxes: tuple[tuple[int, int, int, int], ...] = ()
    body_boxes: tuple[tuple[int, int, int, int], ...] = ()


def inside_box(inner: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
    """Whether the centre of ``inner`` lies in ``outer`` (a face within a body box)."""
    cx, cy = inner[0] + inner[2] / 2, inner[1] + inner[3] / 2
    return outer[0] <= cx <= outer[0] + outer[2] and outer[1] <= cy <= outer[1] + outer[3]


def people_phrase(people: int, faces: int) -> str:
    """'one person, a face' / 'two people' / '' — the words a frame description uses."""
    numbers = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
    parts = []
    if people == 1:
        parts.append("one person")
    elif people > 1:
        parts.append(f"{numbers.get(people, str(people))} people")
    if faces == 1:
        parts.append("a face")
    elif faces > 1:
        parts.append(f"{numbers.get(faces, str(faces))} faces")
    return ", ".join(parts)


class PeopleFinder(Protocol):
    """Counts the people and faces in an RGB uint8 frame."""

    name: str  # which detectors ("blaze", "opencv")

    def detect(self, frame_rgb: np.ndarray) -> PeopleSeen: ...


def people_finder(settings: VisionSettings) -> PeopleFinder:
    """The configured detector (``people_detector``): MediaPipe's BlazePose + BlazeFace when
    chosen, or on ``auto`` when LiteRT and the models are installed; else OpenCV's pair."""
    from episodic.memory import blaze_people  # it builds on this module's records

    choice = settings.people_detector
    if choice == "blaze" or (choice == "auto" and blaze_people.available()):
        return blaze_people.BlazePeopleDetector(settings.people_pose_min_score, settings.people_face_min_score)
    return PeopleDetector.from_settings(settings)


class PeopleDetector:
    """Counts people (faces ∪ bodies) in RGB frames; thread-safe lazy loading."""

    name = "opencv"

    def __init__(
        self,
        face_min_neighbors: int = 12,
        face_min_size_frac: float = 0.08,
        hog_min_score: float = 1.5,
        use_hog: bool = True,
    ) -> None:
        self.face_min_neighbors = int(face_min_neighbors)
        self.face_min_size_frac = float(face_min_size_frac)
        self.hog_min_score = float(hog_min_score)
        self.use_hog = bool(use_hog)
        self._cv2: Any = None
        self._face: Any = None
        self._hog: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: VisionSettings) -> PeopleDetector:
        return cls(
            settings.face_min_neighbors,
            settings.face_min_size_frac,
            settings.people_hog_min_score,
            settings.people_hog,
        )

    def _load(self) -> None:
        if self._cv2 is not None:
            return
        with self._lock:
            if self._cv2 is not None:
                return
            try:
                import cv2
            except ImportError:
                raise ModelError(
                    "people detection needs OpenCV 4 (pip install opencv-python==4.11.0.86)"
                ) from None
            data = getattr(cv2, "data", None)
            folder = getattr(data, "haarcascades", "") if data is not None else ""
            face = cv2.CascadeClassifier(folder + "haarcascade_frontalface_default.xml")
            if face.empty() or not hasattr(cv2, "HOGDescriptor"):
                raise ModelError(
                    f"OpenCV {cv2.__version__} lacks the Haar cascades or the HOG detector "
                    "(OpenCV 5 wheels ship neither): pip install opencv-python==4.11.0.86"
                )
            hog = cv2.HOGDescriptor()
            hog.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())
            self._face, self._hog, self._cv2 = face, hog, cv2

    def detect(self, frame_rgb: np.ndarray) -> PeopleSeen:
        """Faces and standing people in one RGB uint8 frame."""
        self._load()
        cv2 = self._cv2
        h, w = frame_rgb.shape[:2]
        scale = min(1.0, DETECT_MAX_WIDTH / max(1, w))
        small = frame_rgb
        if scale < 1.0:
            small = cv2.resize(
                frame_rgb, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA
            )
        grey = cv2.cvtColor(np.ascontiguousarray(small), cv2.COLOR_RGB2GRAY)
        side = max(24, int(min(grey.shape[:2]) * self.face_min_size_frac))
        faces = self._face.detectMultiScale(
            grey,
            scaleFactor=1.1,
            minNeighbors=self.face_min_neighbors,
            minSize=(side, side),
        )
        face_boxes = [tuple(int(v / scale) for v in f) for f in (faces if len(faces) else [])]
        body_boxes: list[tuple[int, int, int, int]] = []
        if self.use_hog and min(grey.shape[:2]) >= 128:
            rects, weights = self._hog.detectMultiScale(
                grey, winStride=(8, 8), padding=(8, 8), scale=1.05
            )
            for r, wgt in zip(rects if len(rects) else [], np.ravel(weights), strict=False):
                if float(wgt) >= self.hog_min_score:
                    body_boxes.append(tuple(int(v / scale) for v in r))
            body_boxes = _suppress(body_boxes)
        extra_faces = [f for f in face_boxes if not any(inside_box(f, b) for b in body_boxes)]
        return PeopleSeen(
            people=len(body_boxes) + len(extra_faces),
            faces=len(face_boxes),
            face_boxes=tuple(face_boxes),
            body_boxes=tuple(body_boxes),
        )


def _suppress(boxes: list[tuple[int, int, int, int]], overlap: float = 0.4) -> list:
    """Greedy non-maximum suppression by area (HOG returns several boxes per person)."""
    kept: list[tuple[int, int, int, int]] = []
    for b in sorted(boxes, key=lambda r: -r[2] * r[3]):
        if all(box_iou(b, k) < overlap and not inside_box(b, k) for k in kept):
            kept.append(b)
    return kept


def box_iou(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> float:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    inter = max(0, x2 - x1) * max(0, y2 - y1)
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0
