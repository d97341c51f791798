"""Still shot, something moving, or a panning camera: from a segment's sampled frames.

"When was the camera panning across the room?" and "when did something move?" are things
people remember about video, and they need no model: between consecutive sampled frames,

1. phase correlation (the peak of the normalised cross-power spectrum) finds the one
   translation that best explains the whole picture; a clear peak away from zero, repeated
   over most frame pairs, that explains most of the change, is a camera **pan**;
2. what still differs after undoing that translation (and a global brightness change, so a
   fade is not motion) is local change: enough of it in enough pairs means something is
   **moving** in the shot;
3. otherwise the shot is **still**.

It runs on the small grey copies the sampler already keeps (``SampledFrame.grey``, 160 px
wide by default): a few milliseconds per frame pair, tens per segment at most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

MOTION_WIDTH = 160  # frames are compared at this width
PIXEL_STEP = 0.1  # a luminance change (0..1) larger than compression noise
PAN_MIN_SHIFT_FRAC = 0.01  # a pan moves the picture by ≥ 1 % of its width between samples
PAN_MIN_PEAK = 0.005  # a phase-correlation peak this high is a candidate translation
PAN_MIN_CHANGED = 0.05  # share of pixels a pan must change (a moving object changes fewer)
PAN_EXPLAINS = 0.5  # after undoing the shift, at most this share of the change is left
MOVING_MIN_FRACTION = 0.0015  # share of pixels that must change for "something moves"
MIN_GAP_S = 1.0  # frames are compared at least this far apart, so slow motion shows
VOTE_SHARE = 0.5  # the share of frame pairs that must agree on pan / moving


@dataclass(frozen=True)
class PairMotion:
    """What one pair of consecutive frames shows."""

    shift_x: float  # pixels at MOTION_WIDTH, positive: content moved right
    shift_y: float
    peak: float  # phase-correlation peak height (0..1)
    changed: float  # share of pixels that changed, as the frames are
    residual: float  # share still changed after undoing the global shift


def _grey(frame: object) -> np.ndarray:
    """Float32 grey 0..1 at MOTION_WIDTH from a SampledFrame, a grey array or an RGB array."""
    a = getattr(frame, "grey", frame)
    a = np.asarray(a)
    if a.ndim == 3:
        a = a[..., :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
        if a.max() > 1.5:
            a /= 255.0
    elif a.dtype == np.uint8:
        a = a.astype(np.float32) / 255.0
    a = a.astype(np.float32)
    h, w = a.shape
    if w != MOTION_WIDTH:
        height = max(8, round(h * MOTION_WIDTH / w))
        a = np.asarray(
            Image.fromarray(a, mode="F").resize((MOTION_WIDTH, height), Image.Resampling.BILINEAR)
        )
    return a


def _phase_correlation(a: np.ndarray, b: np.ndarray, k: int = 5) -> list[tuple[int, int, float]]:
    """Up to ``k`` candidate translations (dx, dy, peak) taking ``a`` to ``b``, best first.

    Several peaks, not one: a caption, logo or ticker that stays put while the camera pans
    gives a strong peak at zero shift, and the pan is the next peak.
    """
    win = np.outer(np.hanning(a.shape[0]), np.hanning(a.shape[1])).astype(np.float32)
    fa = np.fft.rfft2((a - a.mean()) * win)
    fb = np.fft.rfft2((b - b.mean()) * win)
    cross = fb * np.conj(fa)
    cross /= np.maximum(np.abs(cross), 1e-9)
    corr = np.fft.irfft2(cross, s=a.shape)
    h, w = a.shape
    out: list[tuple[int, int, float]] = []
    for _ in range(k):
        iy, ix = np.unravel_index(int(np.argmax(corr)), corr.shape)
        peak = float(corr[iy, ix])
        out.append((int(ix - w if ix > w // 2 else ix), int(iy - h if iy > h // 2 else iy), peak))
        ys = [(iy + d) % h for d in range(-2, 3)]
        xs = [(ix + d) % w for d in range(-2, 3)]
        corr[np.ix_(ys, xs)] = -np.inf  # look for the next, distinct peak
    return out


def _changed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pixels that changed by more than PIXEL_STEP, a global brightness change removed."""
    d = (b - b.mean()) - (a - a.mean())  # a fade is not motion
    return np.abs(d) > PIXEL_STEP


def _changed_share(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(_changed(a, b))) if a.size else 0.0


def _shifted_residual(a: np.ndarray, b: np.ndarray, sx: int, sy: int) -> tuple[float, float] | None:
    """(share still changed, share of the change left) after moving ``a`` by (sx, sy).

    Measured where the shifted ``a`` overlaps ``b`` (what enters the view is unknown). A
    pixel counts as explained when it matches either after the shift or where it was, so a
    caption or logo fixed on screen during a pan is explained (by staying put) like the
    panned background is (by the shift). None: too little overlap or change to judge.
    """
    h, w = a.shape
    ya, yb = max(0, -sy), min(h, h - sy)
    xa, xb = max(0, -sx), min(w, w - sx)
    if yb - ya < h // 3 or xb - xa < w // 3:
        return None
    target = b[ya + sy : yb + sy, xa + sx : xb + sx]
    moved = _changed(a[ya:yb, xa:xb], target)
    stayed = _changed(a[ya + sy : yb + sy, xa + sx : xb + sx], target)
    left = moved & stayed
    if not stayed.any():
        return None
    return float(np.mean(left)), float(left.sum() / stayed.sum())


def pair_motion(a: np.ndarray, b: np.ndarray) -> PairMotion:
    """Global shift and local change between two grey frames of the same size.

    The candidate translation that leaves the smallest share of the change unexplained is
    kept when it explains most of it (a pan); otherwise the shift is zero and all change
    is local.
    """
    changed = _changed_share(a, b)
    if changed < PAN_MIN_CHANGED:  # a pan changes much of the picture; a moving thing does not
        return PairMotion(0.0, 0.0, 0.0, changed, changed)
    best: PairMotion | None = None
    best_left = PAN_EXPLAINS
    for dx, dy, peak in _phase_correlation(a, b):
        if (dx, dy) == (0, 0) or peak < PAN_MIN_PEAK:
            continue
        judged = _shifted_residual(a, b, dx, dy)
        if judged is not None and judged[1] <= best_left:
            best_left = judged[1]
            best = PairMotion(float(dx), float(dy), peak, changed, judged[0])
    return best or PairMotion(0.0, 0.0, 0.0, changed, changed)


def _pairs(frames: Sequence[object], n: int) -> list[tuple[int, int]]:
    """Index pairs at least MIN_GAP_S apart (consecutive frames when times are unknown)."""
    times = [getattr(f, "t", None) for f in frames]
    if any(t is None for t in times):
        return [(i, i + 1) for i in range(n - 1)]
    pairs = []
    for i in range(n - 1):
        j = next((j for j in range(i + 1, n) if times[j] - times[i] >= MIN_GAP_S), None)
        if j is not None and (not pairs or pairs[-1][1] != j):
            pairs.append((i, j))
    return pairs or [(0, n - 1)]


def describe_motion(frames: Sequence[object]) -> tuple[str, float]:
    """("still" | "moving" | "camera panning", confidence 0..1); ("", 0.0) for < 2 frames.

    ``frames`` are a segment's sampled frames in time order (``SampledFrame`` or arrays).
    Confidence is the share of frame pairs that voted for the answer, so one jolt in a long
    still shot gives "still" with slightly less confidence rather than "moving".
    """
    greys = [_grey(f) for f in frames]
    if len(greys) < 2 or any(g.shape != greys[0].shape for g in greys):
        return "", 0.0
    pairs = [pair_motion(greys[i], greys[j]) for i, j in _pairs(frames, len(greys))]
    width = greys[0].shape[1]
    pan_votes = moving_votes = 0
    for p in pairs:
        shift = float(np.hypot(p.shift_x, p.shift_y))
        if shift >= max(1.0, PAN_MIN_SHIFT_FRAC * width):
            pan_votes += 1
        elif p.residual >= MOVING_MIN_FRACTION:
            moving_votes += 1
    n = len(pairs)
    if pan_votes / n >= VOTE_SHARE:
        return "camera panning", round(pan_votes / n, 3)
    if (pan_votes + moving_votes) / n >= VOTE_SHARE:
        return "moving", round((pan_votes + moving_votes) / n, 3)
    return "still", round(1.0 - (pan_votes + moving_votes) / n, 3)
