"""Key-frame selection (HippoMM E.4): keep only visually distinct frames of a segment.

Describing every sampled frame would spend most of the encoder budget on near-duplicates;
a frame becomes a key frame only when it differs from the last key frame by more than
``keyframe_ssim_redundancy`` in 1 − SSIM, or when one part of it does by more than
``keyframe_local_change``. The first frame of a segment is always a key frame.

Why the second rule: a new sign or slide on the same background changes a small part of the
frame. "GATE 13" after "CLOSED ON MONDAYS" on the same white slide is 0.18 apart as a whole
(160 px wide grey frames), below the 0.3 that tells a new view from noise and grain, so the
second slide was never read; in the tile that holds the words the two are 0.72 apart. Over the
sampled frames of six generated recordings (moving textures, photos, slides, a dark scene) the
tile rule at 0.55 added 21 key frames to the 257 the whole-frame rule kept (8 %), at 0.45 it
added 59, mostly frames of a moving texture; a finer grid or a bar set by the share of the frame
that stayed put did not tell words from movement. So the encoder applies the rule to still
shots only (memory/encoder.py: the segment's motion is "still"): on held-out set 214 it then adds
no key frame (122 either way; without that gate 129, and ingest took 8 % longer), on dev set 64
the one that reads "GATE 13".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from skimage.metrics import structural_similarity

from episodic.core.media import SampledFrame

TILES = 4  # the frame is cut into TILES × TILES parts for the local rule


def dissimilarity(a: np.ndarray, b: np.ndarray) -> float:
    """1 − SSIM of two grey float images in [0, 1] (shapes must match)."""
    return changes(a, b)[0]


def changes(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(1 − SSIM of the whole frame, the largest mean 1 − SSIM of one of its ``TILES`` ×
    ``TILES`` parts) of two grey float images in [0, 1]; (1, 1) when their shapes differ."""
    if a.shape != b.shape:
        return 1.0, 1.0
    side = min(a.shape[0], a.shape[1])
    win = 7 if side >= 7 else (side if side % 2 == 1 else side - 1)
    if win < 3:
        diff = float(np.mean(np.abs(a - b)))
        return diff, diff
    score, local = structural_similarity(a, b, data_range=1.0, win_size=win, full=True)
    apart = 1.0 - local
    h, w = apart.shape
    parts = [apart[i * h // TILES:(i + 1) * h // TILES, j * w // TILES:(j + 1) * w // TILES]
             for i in range(TILES) for j in range(TILES)]
    return 1.0 - float(score), max((float(p.mean()) for p in parts if p.size), default=0.0)


def select_keyframes(
    frames: Sequence[SampledFrame], redundancy: float, max_frames: int, local_change: float = 1.0
) -> list[SampledFrame]:
    """Distinct frames in time order, at most ``max_frames`` (spread evenly when capped): a
    frame is new when it is more than ``redundancy`` apart from the last key frame as a whole
    (1 − SSIM) or more than ``local_change`` in one part (a new sign on the same background)."""
    kept: list[SampledFrame] = []
    for frame in frames:
        if not kept:
            kept.append(frame)
            continue
        whole, part = changes(frame.grey, kept[-1].grey)
        if whole > redundancy or part > local_change:
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
