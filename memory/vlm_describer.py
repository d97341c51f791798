"""Key frames → captions from a vision-language model on an OpenAI-compatible server (vLLM).

``VLMVisualDescriber`` (``describer = "openai"``) keeps the offline describer for everything a
caption cannot give: EfficientNet-Lite0 frame features (frame-to-frame similarity and
query-by-example need a fixed-size vector), ImageNet labels, colour names and RapidOCR text.
Only ``FrameObservation.description`` (the text that stands for the frame in the shared text
space) changes: it becomes the model's caption, plus the OCR text when the caption leaves it
out, within ``visual_description_max_tokens``.

Every key frame of a call is sent at once (``generate_many``: as many in flight as
``openai_max_concurrency`` allows, so vLLM batches them) while the offline models run on the
CPU. A frame whose call fails keeps its offline description, with a warning: a model outage
degrades the words, never loses the segment.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PIL import Image

from episodic.config import Settings
from episodic.core.errors import ModelError
from episodic.core.llm import ChatMessage, LanguageModel
from episodic.core.records import FrameObservation
from episodic.memory.vision import FEATURE_DIM, OfflineVisualDescriber, approx_tokens, as_rgb_uint8

JPEG_QUALITY = 85
OCR_COVERED_FRACTION = 0.6  # the caption "has" the on-screen text if it holds this share of its words

CAPTION_SYSTEM = (
    "You describe single frames of a video recording for a searchable log. Reply with one or "
    "two plain English sentences that say what is visible: the people (how many, what they "
    "look like or wear, what they are doing), the main objects, the actions and the setting. "
    "If there is readable text (signs, captions, labels, screens), quote it exactly. Describe "
    "only what can be seen: no guesses about names, intentions, places or anything outside "
    "the frame, and no preamble."
)
CAPTION_USER = "Describe this frame."

log = logging.getLogger(__name__)


def encode_jpeg(frame_rgb: np.ndarray, max_side: int, quality: int = JPEG_QUALITY) -> bytes:
    """JPEG bytes of a frame downscaled (never upscaled) so its longest side is ≤ max_side."""
    img = Image.fromarray(as_rgb_uint8(frame_rgb))
    w, h = img.size
    longest = max(w, h)
    if longest > max_side:
        scale = max_side / longest
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        img = img.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=int(quality))
    return buf.getvalue()


def caption_messages(jpeg: bytes) -> list[ChatMessage]:
    """The chat that asks for one frame's caption."""
    return [
        ChatMessage("system", CAPTION_SYSTEM),
        ChatMessage("user", CAPTION_USER, images=(jpeg,)),
    ]


def clip_tokens(text: str, budget: int) -> str:
    """``text`` cut at a word boundary to about ``budget`` tokens (an ellipsis marks a cut)."""
    if approx_tokens(text) <= budget:
        return text
    kept, used = [], 0
    for word in text.split():
        n = approx_tokens(word)
        if used + n > budget - 1:
            break
        kept.append(word)
        used += n
    return " ".join(kept) + "…" if kept else ""


_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def caption_description(caption: str, ocr_text: str, max_tokens: int) -> str:
    """The caption, plus the on-screen text when the caption does not already carry most of
    it, within ``max_tokens`` (the caption wins; the OCR text is what gets cut)."""
    caption = clip_tokens(" ".join(caption.split()), max(1, max_tokens))
    text = " ".join(ocr_text.split())
    ocr_words = _words(text)
    if not ocr_words:
        return caption
    said = set(_words(caption))
    if sum(w in said for w in ocr_words) >= OCR_COVERED_FRACTION * len(ocr_words):
        return caption
    joiner = "; on-screen text: "
    budget = max_tokens - approx_tokens(caption) - approx_tokens(joiner + '""')
    if budget <= 0:
        return caption
    text = clip_tokens(text, budget)
    return f'{caption.rstrip(".")}{joiner}"{text}"' if text else caption


class VLMVisualDescriber:
    """Captions from a vision-language model over the offline describer's features, labels,
    colours and OCR; implements ``VisualDescriber``."""

    feature_dim = FEATURE_DIM

    def __init__(
        self,
        settings: Settings,
        llm: LanguageModel,
        offline: OfflineVisualDescriber | None = None,
    ) -> None:
        self.settings = settings
        self.llm = llm
        self.offline = offline if offline is not None else OfflineVisualDescriber(settings)
        self.feature_dim = self.offline.feature_dim
        model = getattr(llm, "model", "") or llm.model_id
        self.model_id = f"vlm:{model}+{self.offline.model_id}"

    def prepare(self, ocr: bool = True) -> None:
        """Load the offline models now (the server is reached on the first frame)."""
        self.offline.prepare(ocr=ocr)

    def frame_features(self, frames_rgb: Sequence[np.ndarray]) -> np.ndarray:
        """The offline describer's frame features (those :meth:`describe` stores)."""
        return self.offline.frame_features(frames_rgb)

    def _captions(self, frames_rgb: Sequence[np.ndarray]) -> list[str | ModelError]:
        """One caption (or the call's ModelError) per frame, requested concurrently."""
        max_side = int(self.settings.openai_image_max_side)
        chats = [caption_messages(encode_jpeg(f, max_side)) for f in frames_rgb]
        max_tokens = int(self.settings.visual_description_max_tokens)
        many = getattr(self.llm, "generate_many", None)
        if many is not None:
            return many(chats, max_tokens=max_tokens, temperature=0.0, return_exceptions=True)
        out: list[str | ModelError] = []
        for chat in chats:  # a LanguageModel without batching: one call after another
            try:
                out.append(self.llm.generate(chat, max_tokens=max_tokens, temperature=0.0))
            except ModelError as exc:
                out.append(exc)
        return out

    def describe(
        self, frames_rgb: Sequence[np.ndarray], times: Sequence[float], ocr_mask: Sequence[bool]
    ) -> tuple[list[FrameObservation], np.ndarray]:
        """Observations per frame (caption descriptions) and (n, 1280) offline features."""
        if len(times) != len(frames_rgb):
            raise ValueError(f"{len(frames_rgb)} frames but {len(times)} times")
        if not frames_rgb:
            return [], np.zeros((0, self.feature_dim), dtype=np.float32)
        frames = [as_rgb_uint8(f) for f in frames_rgb]
        # The captions are on the network while the offline models use the CPU.
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vlm-describer")
        try:
            pending = pool.submit(self._captions, frames)
            observations, features = self.offline.describe(frames, times, ocr_mask)
            try:
                captions = pending.result()
            except ModelError as exc:  # e.g. a LanguageModel that cannot take images at all
                captions = [exc] * len(frames)
        finally:
            pool.shutdown(wait=False)  # on an offline failure, do not wait out the server
        max_tokens = int(self.settings.visual_description_max_tokens)
        failed = []
        for i, (obs, caption) in enumerate(zip(observations, captions, strict=True)):
            if isinstance(caption, BaseException):
                failed.append((i, str(caption)))
                continue
            if not caption.strip():
                failed.append((i, "empty caption"))
                continue
            obs.description = caption_description(caption, obs.ocr_text, max_tokens)
        if failed:
            log.warning(
                "%s: %d of %d key frames keep the offline description (first at t=%.2f s: %s)",
                self.model_id,
                len(failed),
                len(observations),
                observations[failed[0][0]].t,
                failed[0][1],
            )
        return observations, features
