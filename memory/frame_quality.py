"""Is a frame worth naming? Dark, flat and blurred frames get no object labels.

An ImageNet classifier always answers, and on a black frame, a plain wall or a smeared
pan it answers with confident nonsense ("nematode", "Windsor tie", "prison"). Three cheap
statistics of a small grey copy tell those frames apart from pictures with content:

* **dark**: low mean luminance *and* nothing bright in it (99th percentile low), so a
  black slide with white text is not "dark";
* **flat**: almost no contrast or almost no edges (a plain colour, fog, a wall);
* **blurred**: low variance of the Laplacian, the usual focus measure, on a fixed-width
  copy so the figure does not depend on the frame's resolution.

The thresholds live in the vision settings (``frame_*``) and were chosen on the development part of
benchmarks/bench_vision.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from episodic.config import VisionSettings

QUALITY_WIDTH = 320  # statistics are taken on a grey copy this wide
EDGE_STEP = 0.08  # a luminance step (0..1) between neighbours that counts as an edge


@dataclass(frozen=True)
class QualityStats:
    """The numbers the gate looks at (luminance in 0..1, Laplacian on the 0..255 scale)."""

    mean: float
    p99: float
    std: float
    edge_fraction: float
    laplacian_var: float


def grey_copy(frame_rgb: np.ndarray, width: int = QUALITY_WIDTH) -> np.ndarray:
    """Float32 luminance (Rec. 601) of a copy ``width`` wide, values 0..1."""
    h, w = frame_rgb.shape[:2]
    height = max(1, round(h * width / max(1, w)))
    img = Image.fromarray(np.ascontiguousarray(frame_rgb)).convert("L")
    if (w, h) != (width, height):
        img = img.resize((width, height), Image.Resampling.BILINEAR, reducing_gap=2.0)
    return np.asarray(img, dtype=np.float32) / 255.0


def quality_stats(frame_rgb: np.ndarray) -> QualityStats:
    """Mean, 99th percentile, spread, edge density and Laplacian variance of a frame."""
    g = grey_copy(frame_rgb)
    if g.shape[0] < 3 or g.shape[1] < 3:
        return QualityStats(float(g.mean()), float(g.max()), 0.0, 0.0, 0.0)
    dx = np.abs(np.diff(g, axis=1))[:-1, :]
    dy = np.abs(np.diff(g, axis=0))[:, :-1]
    edges = float(np.mean(np.maximum(dx, dy) > EDGE_STEP))
    g255 = g * 255.0
    lap = (
        g255[:-2, 1:-1] + g255[2:, 1:-1] + g255[1:-1, :-2] + g255[1:-1, 2:] - 4.0 * g255[1:-1, 1:-1]
    )
    return QualityStats(
        mean=float(g.mean()),
        p99=float(np.percentile(g, 99)),
        std=float(g.std()),
        edge_fraction=edges,
        laplacian_var=float(lap.var()),
    )


def judge(
    stats: QualityStats,
    dark_mean: float,
    dark_p99: float,
    flat_std: float,
    flat_edge_fraction: float,
    blur_laplacian_var: float,
) -> str:
    """"" when the frame is usable, else the first reason: "dark", "flat" or "blurred"."""
    if stats.mean < dark_mean and stats.p99 < dark_p99:
        return "dark"
    if stats.std < flat_std:
        return "flat"
    if stats.laplacian_var < blur_laplacian_var:
        return "blurred"  # contrast but no fine detail: out of focus, smeared, a soft gradient
    if stats.edge_fraction < flat_edge_fraction:
        return "flat"
    return ""


def frame_quality(frame_rgb: np.ndarray, settings: VisionSettings) -> str:
    """The gate with the thresholds from ``settings``."""
    return judge(
        quality_stats(frame_rgb),
        settings.frame_dark_mean,
        settings.frame_dark_p99,
        settings.frame_flat_std,
        settings.frame_flat_edge_fraction,
        settings.frame_blur_laplacian_var,
    )
