"""Candidate event boundaries from pictures (SSIM cuts) and sound (pauses).

Both detectors follow HippoMM C.1 and only *propose* boundaries; which ones become segment
edges is decided by :class:`stream.segmentation.BoundaryPlanner`, which enforces the
5–10 s segment rule.

* :class:`VisualBoundaryDetector`: a cut when ``1 − SSIM(F_t, F_{t−1}) > ssim_boundary``
  between consecutive *sampled* frames (grey, ``ssim_width`` wide, ``data_range=1``).
  Because the sampler speeds up to 10 fps whenever the picture moves, consecutive samples
  of a continuous shot stay similar, while a real cut changes the structure of the whole
  picture at once. Our addition: a fast pan over fine texture can still push plain SSIM
  past the threshold, so a candidate cut is re-scored after undoing the global
  translation found by phase correlation; only a change no camera move explains counts.
* :class:`AudioPauseDetector`: a window is quiet when its negative log energy
  ``−10·log10(mean x²)`` exceeds ``audio_neglog_energy_boundary`` (40 ≈ below −40 dBFS).
  A run of quiet windows lasting at least ``audio_pause_min_s`` is a pause: a natural
  place to split a long shot between sentences rather than mid-word.
"""

from __future__ import annotations

import numpy as np
from skimage.metrics import structural_similarity

from episodic.config import SegmentationSettings
from episodic.core.media import Boundary, SampledFrame

_ENERGY_FLOOR = 1e-12  # −120 dBFS: digital silence does not produce −log10(0)


def energy_db(samples: np.ndarray) -> float:
    """Mean power of ``samples`` (float, full scale ±1) in dBFS; −120 for digital silence."""
    x = np.asarray(samples, dtype=np.float32)
    if x.size == 0:
        return -120.0
    power = float(np.mean(np.square(x, dtype=np.float64)))
    return float(10.0 * np.log10(max(power, _ENERGY_FLOOR)))


def ssim_distance(a: np.ndarray, b: np.ndarray) -> float:
    """``1 − SSIM`` of two grey float images in 0..1 (0 = identical, ~1 = unrelated)."""
    if a.shape != b.shape:
        return 1.0  # the picture geometry changed: certainly not the same shot
    side = min(a.shape[:2])
    if side < 3:
        return float(np.abs(a - b).mean())
    win = min(7, side if side % 2 else side - 1)
    score = structural_similarity(a, b, data_range=1.0, win_size=win)
    return float(1.0 - score)


def global_shifts(a: np.ndarray, b: np.ndarray, k: int = 3) -> list[tuple[int, int]]:
    """Up to ``k`` candidate (dy, dx) with ``b[y, x] ≈ a[y − dy, x − dx]``, best first.

    Phase correlation; several peaks because a fixed overlay (subtitles, a logo, a
    dashboard) produces a (0, 0) peak that can outshine the moving background's.
    """
    fa = np.fft.rfft2(a - a.mean())
    fb = np.fft.rfft2(b - b.mean())
    cross = fb * np.conj(fa)
    cross /= np.abs(cross) + 1e-9
    corr = np.fft.irfft2(cross, s=a.shape)
    h, w = a.shape
    out: list[tuple[int, int]] = []
    for _ in range(k):
        dy, dx = np.unravel_index(int(np.argmax(corr)), corr.shape)
        out.append(
            (int(dy) - h if dy > h // 2 else int(dy), int(dx) - w if dx > w // 2 else int(dx))
        )
        for yy in (dy - 1, dy, dy + 1):  # suppress the peak and its neighbours
            for xx in (dx - 1, dx, dx + 1):
                corr[yy % h, xx % w] = -np.inf
    return out


def aligned_ssim_distance(a: np.ndarray, b: np.ndarray, max_shift: float = 0.25) -> float:
    """``1 − SSIM`` after undoing a global translation (camera pan, tilt, shake).

    The best of the plain distance and the distances at the strongest phase-correlation
    shifts (at most ``max_shift`` of each side), so a real cut, which no translation
    explains, keeps its high score.
    """
    best = ssim_distance(a, b)
    if a.shape != b.shape or min(a.shape[:2]) < 16:
        return best
    h, w = a.shape
    for dy, dx in global_shifts(a, b):
        if (dy == 0 and dx == 0) or abs(dy) > h * max_shift or abs(dx) > w * max_shift:
            continue
        a_crop = a[max(0, -dy) : h - max(0, dy), max(0, -dx) : w - max(0, dx)]
        b_crop = b[max(0, dy) : h - max(0, -dy), max(0, dx) : w - max(0, -dx)]
        best = min(best, ssim_distance(a_crop, b_crop))
    return best


class VisualBoundaryDetector:
    """Proposes a visual cut when consecutive sampled frames stop resembling each other."""

    def __init__(self, settings: SegmentationSettings) -> None:
        self.threshold = settings.ssim_boundary
        self.prev: SampledFrame | None = None
        self.last_score = 0.0

    def update(self, frame: SampledFrame) -> Boundary | None:
        """Compare ``frame`` with the previous sampled frame; a cut is reported at ``frame.t``."""
        prev, self.prev = self.prev, frame
        if prev is None:
            return None
        score = ssim_distance(prev.grey, frame.grey)
        if score > self.threshold:
            # Rare, so affordable: check that a camera move does not explain the change.
            score = min(score, aligned_ssim_distance(prev.grey, frame.grey))
        self.last_score = score
        if score > self.threshold:
            return Boundary(t=frame.t, kind="visual", score=score)
        return None


class AudioPauseDetector:
    """Finds quiet runs in an audio stream pushed in blocks of any size.

    Energy is measured on a fixed grid of ``audio_window_s`` windows anchored at the first
    sample, so the result does not depend on how the audio was chunked. A pause is
    reported once it has ended (or at :meth:`finish`) as ``Boundary(kind="pause",
    t=centre, score=length_s, start=..., end=...)``. A gap or a backwards jump in the
    pushed timestamps ends the current run at the last sample seen and restarts the grid.
    """

    def __init__(self, settings: SegmentationSettings, rate_hz: int = 16000) -> None:
        self.rate = int(rate_hz)
        self.window_n = max(1, round(settings.audio_window_s * self.rate))
        self.threshold = settings.audio_neglog_energy_boundary
        self.min_pause_s = settings.audio_pause_min_s
        self._carry = np.zeros(0, dtype=np.float32)
        self._carry_t: float | None = None  # stream time of _carry[0]
        self._run_start: float | None = None
        self._run_end: float | None = None
        self.analysed_until = 0.0  # stream time up to which windows have been judged

    # -- public -----------------------------------------------------------------------

    def push(self, t_start: float, samples: np.ndarray) -> list[Boundary]:
        """Feed samples starting at stream time ``t_start``; returns pauses that ended."""
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        out: list[Boundary] = []
        if self._carry_t is not None:
            expected = self._carry_t + self._carry.size / self.rate
            if abs(t_start - expected) > max(2.0 / self.rate, 0.01):
                out.extend(self._discontinuity())
        if self._carry_t is None:
            self._carry_t = t_start
            self._carry = x
        else:
            self._carry = np.concatenate([self._carry, x]) if self._carry.size else x
        out.extend(self._consume())
        return out

    def finish(self) -> list[Boundary]:
        """Judge the last partial window and close any open run."""
        out: list[Boundary] = []
        if self._carry_t is not None and self._carry.size >= max(1, self.window_n // 4):
            self._judge(self._carry_t, self._carry)
            self.analysed_until = self._carry_t + self._carry.size / self.rate
        self._carry = np.zeros(0, dtype=np.float32)
        self._carry_t = None
        out.extend(self._close_run())
        return out

    def open_run(self) -> Boundary | None:
        """The quiet run still in progress, as a provisional pause (or ``None``).

        The planner may need to split inside a long silence before it has ended.
        """
        if self._run_start is None or self._run_end is None:
            return None
        length = self._run_end - self._run_start
        if length < self.min_pause_s:
            return None
        return Boundary(
            t=(self._run_start + self._run_end) / 2,
            kind="pause",
            score=length,
            start=self._run_start,
            end=self._run_end,
        )

    # -- internals --------------------------------------------------------------------

    def _consume(self) -> list[Boundary]:
        n_windows = self._carry.size // self.window_n
        if n_windows == 0 or self._carry_t is None:
            return []
        used = n_windows * self.window_n
        frames = self._carry[:used].reshape(n_windows, self.window_n).astype(np.float64)
        power = np.mean(frames * frames, axis=1)
        neglog = -10.0 * np.log10(np.maximum(power, _ENERGY_FLOOR))
        quiet = neglog > self.threshold
        t0 = self._carry_t
        out: list[Boundary] = []
        for i, q in enumerate(quiet):
            ws = t0 + i * self.window_n / self.rate
            we = ws + self.window_n / self.rate
            if q:
                if self._run_start is None:
                    self._run_start = ws
                self._run_end = we
            elif self._run_start is not None:
                out.extend(self._close_run())
        self._carry = self._carry[used:].copy()
        self._carry_t = t0 + used / self.rate
        self.analysed_until = self._carry_t
        return out

    def _judge(self, ws: float, x: np.ndarray) -> None:
        quiet = -energy_db(x) > self.threshold
        we = ws + x.size / self.rate
        if quiet:
            if self._run_start is None:
                self._run_start = ws
            self._run_end = we

    def _discontinuity(self) -> list[Boundary]:
        out = self.finish()
        return out

    def _close_run(self) -> list[Boundary]:
        start, end = self._run_start, self._run_end
        self._run_start = self._run_end = None
        if start is None or end is None:
            return []
        length = end - start
        if length + 1e-9 < self.min_pause_s:
            return []
        return [Boundary(t=(start + end) / 2, kind="pause", score=length, start=start, end=end)]
