"""People and faces with MediaPipe's BlazePose and BlazeFace detectors, run by LiteRT.

The classic OpenCV detectors (memory/people.py) miss most people a camera shows: on the
held-out frames of benchmarks/bench_vision.py the Haar face cascade and the HOG pedestrian
detector together found a person in 6 of 27 frames that show one (a portrait, a man talking in
a car, cyclists). Two small networks do far better and ship inside a PyPI wheel:

* BlazePose's person detector (``pose_detection.tflite``, 224 × 224 input, 2254 anchors): a
  box and four keypoints per person (hip centre, a point on the circle round the whole body,
  shoulder centre, one round the upper body), found from the head and shoulders, so a
  portrait counts as well as a whole standing body;
* BlazeFace full range (``face_detection_full_range_sparse.tflite``, 192 × 192, one anchor on
  a 48 × 48 grid): faces up to a few metres from the camera.

Both come in the ``mediapipe`` 0.10.x wheel (later wheels ship no models), installed with
``--no-deps`` (deploy/setup.sh: it would pull a second OpenCV); only the ``.tflite`` files are
read, nothing of mediapipe is imported. ``ai-edge-litert`` (Google's TensorFlow Lite runtime)
runs them: OpenCV's TFLite importer cannot, as the weights are stored sparse (``DENSIFY``).

Frames are letterboxed to a square (as MediaPipe does), scored, and the anchors' boxes kept
by non-maximum suppression. The score bars were chosen on the dev part of bench_vision.py.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from episodic.core.errors import ModelError
from episodic.memory.people import PeopleSeen, box_iou, inside_box

log = logging.getLogger(__name__)

FACE_MODEL = "modules/face_detection/face_detection_full_range_sparse.tflite"
POSE_MODEL = "modules/pose_detection/pose_detection.tflite"
SCORE_CLIP = 100.0  # raw scores are clipped to ±this before the sigmoid (MediaPipe's setting)
NMS_IOU = 0.3  # boxes overlapping this much are one detection (MediaPipe's setting)
CANDIDATES = 50  # the best-scoring anchors looked at per frame


@dataclass(frozen=True)
class _Net:
    """One detector: its input side in pixels, anchor centres (n, 2) in [0, 1], keypoints."""

    size: int
    anchors: np.ndarray
    keypoints: int


def _anchors(size: int, layers: tuple[tuple[int, int], ...]) -> np.ndarray:
    """SSD anchor centres as MediaPipe's ``SsdAnchorsCalculator`` lays them out with fixed-size
    anchors: per (stride, anchors per cell), a grid of ``size / stride`` cells each way, the
    cell's anchors at its centre."""
    out = []
    for stride, per_cell in layers:
        cells = int(np.ceil(size / stride))
        for y in range(cells):
            for x in range(cells):
                out.extend([((x + 0.5) / cells, (y + 0.5) / cells)] * per_cell)
    return np.asarray(out, dtype=np.float32)


# strides 8, 16 and three layers of 32 sharing one grid (2 anchors per layer): 2254 anchors
POSE = _Net(224, _anchors(224, ((8, 2), (16, 2), (32, 6))), 4)
FACE = _Net(192, _anchors(192, ((4, 1),)), 6)


def mediapipe_models() -> Path | None:
    """The folder of the installed ``mediapipe`` package when it holds both models (found
    without importing it), else None."""
    spec = importlib.util.find_spec("mediapipe")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    return root if (root / FACE_MODEL).is_file() and (root / POSE_MODEL).is_file() else None


def available() -> bool:
    """Whether LiteRT and the two model files are installed."""
    return mediapipe_models() is not None and importlib.util.find_spec("ai_edge_litert") is not None


def letterbox(frame_rgb: np.ndarray, size: int) -> tuple[np.ndarray, float, int, int]:
    """``frame_rgb`` padded with black to a square and resized to ``size`` pixels, as floats in
    [−1, 1] (the detectors' input), with the scale and the padding to map boxes back."""
    import cv2

    h, w = frame_rgb.shape[:2]
    side = max(h, w)
    square = np.zeros((side, side, 3), np.uint8)
    top, left = (side - h) // 2, (side - w) // 2
    square[top : top + h, left : left + w] = frame_rgb[..., :3]
    small = cv2.resize(square, (size, size), interpolation=cv2.INTER_AREA)
    return small.astype(np.float32) / 127.5 - 1.0, side / size, left, top


@contextlib.contextmanager
def _native_stderr_quiet() -> Iterator[None]:
    """The process's standard error (file descriptor 2) sent nowhere for a moment: LiteRT's
    runtime writes "INFO: Created TensorFlow Lite XNNPACK delegate for CPU." there when a model
    loads, past Python's logging and every log-level variable, into a CLI's output."""
    try:
        saved = os.dup(2)
    except OSError:  # no standard error to quiet
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class BlazePeopleDetector:
    """Counts people (BlazePose detections ∪ BlazeFace faces outside them) in RGB frames;
    thread-safe lazy loading. ``pose_min_score`` and ``face_min_score`` are the detection
    scores (0–1) a person and a face must reach."""

    name = "blaze"

    def __init__(self, pose_min_score: float = 0.9, face_min_score: float = 0.75, threads: int = 1) -> None:
        self.pose_min_score = float(pose_min_score)
        self.face_min_score = float(face_min_score)
        self.threads = max(1, int(threads))
        self._nets: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _load(self) -> None:
        if self._nets:
            return
        with self._lock:
            if self._nets:
                return
            root = mediapipe_models()
            if root is None:
                raise ModelError(
                    "people_detector = \"blaze\" needs MediaPipe's detector models: "
                    "pip install --no-deps mediapipe==0.10.14 (see deploy/setup.sh)"
                )
            try:
                from ai_edge_litert.interpreter import Interpreter
            except ImportError:
                raise ModelError(
                    "people_detector = \"blaze\" needs LiteRT: pip install ai-edge-litert==2.3.0"
                ) from None
            nets = {}
            for name, path in (("pose", POSE_MODEL), ("face", FACE_MODEL)):
                try:
                    with _native_stderr_quiet():
                        net = Interpreter(model_path=str(root / path), num_threads=self.threads)
                        net.allocate_tensors()
                except (RuntimeError, ValueError) as exc:
                    raise ModelError(f"cannot load {root / path}: {exc}") from exc
                outs = net.get_output_details()
                # (interpreter, input tensor, box regressions (n, 4 + 2k), scores (n, 1)), read once
                nets[name] = (net, net.get_input_details()[0]["index"],
                              next(d["index"] for d in outs if d["shape"][-1] > 1),
                              next(d["index"] for d in outs if d["shape"][-1] == 1))
            self._nets = nets

    def _run(self, name: str, spec: _Net, frame_rgb: np.ndarray, min_score: float) -> list[tuple[float, tuple[int, int, int, int], np.ndarray]]:
        """(score, box (x, y, w, h) in frame pixels, keypoints (k, 2) in frame pixels) of each
        detection at ``min_score`` or more, overlapping ones suppressed, best first."""
        x, scale, left, top = letterbox(frame_rgb, spec.size)
        net, given, box_out, score_out = self._nets[name]
        with self._lock:  # an interpreter runs one frame at a time
            net.set_tensor(given, x[None])
            net.invoke()
            boxes = net.get_tensor(box_out).reshape(len(spec.anchors), -1)
            logits = net.get_tensor(score_out).reshape(-1).astype(np.float64)
        scores = 1.0 / (1.0 + np.exp(-np.clip(logits, -SCORE_CLIP, SCORE_CLIP)))
        # regressions are in input pixels from the anchor's centre; a frame pixel is an input
        # pixel times ``scale``, less the letterbox's padding
        px = spec.size * scale
        pad = np.array([left, top], dtype=np.float32)
        found = []
        for i in np.argsort(-scores)[:CANDIDATES]:
            if scores[i] < min_score:
                break
            centre = boxes[i, :2] / spec.size + spec.anchors[i]
            size = boxes[i, 2:4] / spec.size
            x0, y0 = (centre - size / 2) * px - pad
            box = (int(round(x0)), int(round(y0)), int(round(size[0] * px)), int(round(size[1] * px)))
            points = (boxes[i, 4 : 4 + 2 * spec.keypoints].reshape(-1, 2) / spec.size + spec.anchors[i]) * px - pad
            found.append((float(scores[i]), box, points.astype(np.float32)))
        kept: list[tuple[float, tuple[int, int, int, int], np.ndarray]] = []
        for f in found:  # best first: a box overlapping a better one is the same detection
            if all(box_iou(f[1], k[1]) < NMS_IOU for k in kept):
                kept.append(f)
        return kept

    def detect(self, frame_rgb: np.ndarray) -> PeopleSeen:
        """People and faces in one RGB uint8 frame. A person's body box is the circle round
        the whole body that BlazePose gives (hip centre, radius to its second keypoint)."""
        self._load()
        if frame_rgb.ndim == 2:  # grey: the same grey in each channel
            frame_rgb = np.repeat(frame_rgb[..., None], 3, axis=2)
        if frame_rgb.ndim != 3 or min(frame_rgb.shape[:2]) < 8:
            return PeopleSeen(0, 0)
        frame = np.ascontiguousarray(frame_rgb[..., :3]).astype(np.uint8, copy=False)
        h, w = frame.shape[:2]
        bodies = []
        for _, box, kps in self._run("pose", POSE, frame, self.pose_min_score):
            centre, edge = kps[0], kps[1]
            r = float(np.hypot(*(edge - centre)))
            if r <= 1.0:
                x0, y0, bw, bh = box
            else:
                x0, y0, bw, bh = int(centre[0] - r), int(centre[1] - r), int(2 * r), int(2 * r)
            x1, y1 = min(w, x0 + bw), min(h, y0 + bh)
            x0, y0 = max(0, x0), max(0, y0)
            # the circle clipped to the frame; the detection's own box when nothing of it is left
            bodies.append(box if x1 <= x0 or y1 <= y0 else (x0, y0, x1 - x0, y1 - y0))
        faces = [box for _, box, _ in self._run("face", FACE, frame, self.face_min_score)]
        alone = [f for f in faces if not any(inside_box(f, b) for b in bodies)]
        return PeopleSeen(people=len(bodies) + len(alone), faces=len(faces),
                          face_boxes=tuple(faces), body_boxes=tuple(bodies))
