"""Thumbnails: a small JPEG of a segment's middle key frame, made at ingest from the key frame
the encoder already decoded (no second decode) and kept by the snippet store beside the
segment's snippet (``<stream>/<segment>.jpg``), so a list of moments can show what each looked
like without decoding video."""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from PIL import Image

from episodic.core.media import SampledFrame
from episodic.core.records import FrameObservation


def make_thumbnail(frame_rgb: np.ndarray, max_side: int = 320, quality: int = 80) -> bytes:
    """JPEG bytes of ``frame_rgb`` (H×W×3 uint8) downscaled (never upscaled) so that its longest
    side is at most ``max_side``."""
    a = np.asarray(frame_rgb)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 3:
        from episodic.memory.vision import as_rgb_uint8

        a = as_rgb_uint8(a)
    img = Image.fromarray(np.ascontiguousarray(a))
    w, h = img.size
    longest = max(w, h)
    if longest > max_side:
        scale = max_side / longest
        img = img.resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.Resampling.BILINEAR,
                         reducing_gap=2.0)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=int(quality))
    return buf.getvalue()


def middle_keyframe(frames: Sequence[SampledFrame], observations: Sequence[FrameObservation]) -> SampledFrame | None:
    """The sampled frame of the middle key frame (``observations`` are one per key frame, in
    time order, as the encoder made them); None without key frames."""
    if not observations or not frames:
        return None
    t = observations[len(observations) // 2].t
    return min(frames, key=lambda f: abs(float(f.t) - t))
