"""Key-frame selection (HippoMM E.4): keep only visually distinct frames of a segment.

Describing every sampled frame would spend most of the encoder budget on near-duplicates;
a frame becomes a key frame only when it differs from the last key frame by more than
``keyframe_ssim_redundancy`` in 1 − SSIM. The first frame of a segment is always a key frame.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from skimage.metrics import structural_similarity

from episodic.core.media import SampledFrame


def dissimilarity(a: np.ndarray, b: np.ndarray) -> float:
    """1 − SSIM of two grey float images in [0, 1] (shapes must match)."""
    if a.shape != b.shape:
        return 1.0
    side = min(a.shape[0], a.shape[1])
    win = 7 if side >= 7 else (side if side % 2 == 1 else side - 1)
    if win < 3:
        return float(np.mean(np.abs(a - b)))
    return 1.0 - float(structural_similarity(a, b, data_range=1.0, win_size=win))


def select_keyframes(
    frames: Sequence[SampledFrame], redundancy: float, max_frames: int
) -> list[SampledFrame]:
    """Distinct frames in time order, at most ``max_frames`` (spread evenly when capped)."""
    kept: list[SampledFrame] = []
    for frame in frames:
        if not kept or dissimilarity(frame.grey, kept[-1].grey) > redundancy:
            kept.append(frame)
    if len(kept) <= max_frames:
        return kept
    idx = np.linspace(0, len(kept) - 1, max_frames).round().astype(int)
    return [kept[i] for i in sorted(set(idx.tolist()))]


def ocr_mask(n: int, max_ocr: int) -> list[bool]:
    """Which of ``n`` key frames get OCR: evenly spread, first frame always included."""
    if n == 0 or max_ocr <= 0:
        return [False] * n
    chosen = set(np.linspace(0, n - 1, min(n, max_ocr)).round().astype(int).tolist())
    return [i in chosen for i in range(n)]
