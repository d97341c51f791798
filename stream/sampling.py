"""Choosing which decoded frames to look at, and which to keep for playback.

:class:`FrameSampler` implements the adaptive 1–10 fps sampling of HippoMM C.1: a static
shot is looked at about once a second, a changing one up to ten times a second. The
change test runs on a 64×36 grey thumbnail made by swscale (tens of microseconds), and it
only runs on frames the rate limit lets through, so a 60 fps source costs little more than
a 10 fps one. Change is measured against the last *sampled* thumbnail, so a slow drift
accumulates until it is worth a new sample instead of hiding below a per-frame threshold.

:class:`SnippetDecimator` independently keeps frames at ≤ ``snippet_fps`` for the playable
snippet of each memory.

Both honour the display rotation of phone videos (portrait clips are stored sideways with
a rotation flag), so encoders, OCR and snippets see the picture the way a person would.
"""

from __future__ import annotations

from typing import Any

import av
import numpy as np
from av.video.reformatter import VideoReformatter

from episodic.config import SamplingSettings, SnippetSettings
from episodic.core.media import SampledFrame, SnippetFrame

THUMB_W, THUMB_H = 64, 36
# Rate-limit comparisons tolerate this much timestamp jitter (seconds), so a 30 fps source
# whose third frame lands at 0.0999… s still counts as 0.1 s after the last sample.
_JITTER_S = 1e-3


def even_size(src_w: int, src_h: int, max_w: int) -> tuple[int, int]:
    """(w, h) no wider than ``max_w``, aspect kept, both even and at least 2."""
    w = min(max_w, src_w) if src_w > 0 else max_w
    w = max(2, w - (w % 2))
    h = round(w * src_h / src_w) if src_w > 0 else w
    h = max(2, h - (h % 2))
    return w, h


def rotation_of(frame: Any) -> int:
    """Counter-clockwise display rotation of ``frame`` in quarter turns (0..3)."""
    try:
        degrees = int(frame.rotation or 0)
    except (AttributeError, TypeError, ValueError):
        return 0
    return (round(degrees / 90)) % 4


def _display_dims(frame: Any, quarter_turns: int) -> tuple[int, int]:
    w, h = int(frame.width), int(frame.height)
    return (h, w) if quarter_turns % 2 else (w, h)


class _Scaler:
    """swscale with a kept context.

    ``frame.reformat()`` builds a new swscale context for every frame (~2 ms of filter
    set-up, more than decoding a 360p frame); one reformatter per purpose reuses its
    context as long as the geometry stays the same, bringing a thumbnail to ~0.1 ms.
    AREA averaging suppresses sensor noise and aliasing when shrinking a lot.
    """

    def __init__(self) -> None:
        self._r = VideoReformatter()

    def __call__(self, frame: Any, width: int, height: int, fmt: str) -> Any:
        return self._r.reformat(frame, width=width, height=height, format=fmt, interpolation="AREA")


def _reformat_array(
    scaler: _Scaler, frame: Any, width: int, height: int, fmt: str, quarter_turns: int
) -> np.ndarray:
    """Scale with swscale, then rotate the (small) result with numpy if needed."""
    if quarter_turns % 2:
        width, height = height, width  # scale in storage orientation, then rotate
    arr = scaler(frame, width, height, fmt).to_ndarray()
    if quarter_turns:
        arr = np.ascontiguousarray(np.rot90(arr, k=quarter_turns))
    return arr


class FrameSampler:
    """Adaptive frame sampling between ``sample_fps_min`` and ``sample_fps_max``.

    A frame is sampled when at least ``1/sample_fps_max`` has passed since the last sample
    AND either the thumbnail changed by more than ``sample_change_threshold`` (mean
    absolute difference, 0..1) or ``1/sample_fps_min`` has passed. The first frame is
    always sampled.
    """

    def __init__(self, settings: SamplingSettings) -> None:
        self.settings = settings
        self.min_gap_s = 1.0 / settings.sample_fps_max
        self.max_gap_s = 1.0 / settings.sample_fps_min
        self.threshold = settings.sample_change_threshold
        # Thumbnails are checked at most twice per 1/sample_fps_max, so a cut is still
        # caught within half a sampling interval but a 60 fps source is not 60 checks/s.
        self.check_gap_s = 0.5 / settings.sample_fps_max
        self.last_check_t: float | None = None
        self.last_t: float | None = None
        self.last_thumb: np.ndarray | None = None
        self.last_change = 0.0  # change score of the most recent sampled frame
        self.offered = 0
        self.sampled = 0
        self._thumb_scaler = _Scaler()
        self._rgb_scaler = _Scaler()
        self._grey_scaler = _Scaler()

    def thumbnail(self, frame: Any) -> np.ndarray:
        """64×36 grey float32 thumbnail, 0..1 (rotation ignored: it only measures change)."""
        arr = self._thumb_scaler(frame, THUMB_W, THUMB_H, "gray").to_ndarray()
        return arr.astype(np.float32) * (1.0 / 255.0)

    def offer(self, t: float, frame: Any) -> SampledFrame | None:
        """Look at one decoded frame at stream time ``t``; return it if it is sampled."""
        self.offered += 1
        if self.last_t is not None:
            gap = t - self.last_t
            if gap < -self.max_gap_s:
                self.last_t = self.last_check_t = None  # time went back: start afresh
            elif gap < self.min_gap_s - _JITTER_S:
                return None
            elif (
                self.last_check_t is not None
                and 0 <= t - self.last_check_t < self.check_gap_s - _JITTER_S
                and gap < self.max_gap_s - _JITTER_S
            ):
                return None  # looked at a frame very recently; high-fps sources stay cheap
        self.last_check_t = t
        thumb = self.thumbnail(frame)
        if self.last_t is not None and self.last_thumb is not None:
            change = float(np.abs(thumb - self.last_thumb).mean())
            if change <= self.threshold and t - self.last_t < self.max_gap_s - _JITTER_S:
                return None
        else:
            change = 1.0
        self.last_t, self.last_thumb, self.last_change = t, thumb, change
        self.sampled += 1
        return self.make_sample(t, frame)

    def make_sample(self, t: float, frame: Any) -> SampledFrame:
        """The analysis copies of a frame: RGB for encoders, small grey for SSIM."""
        turns = rotation_of(frame)
        dw, dh = _display_dims(frame, turns)
        s = self.settings
        rgb_w, rgb_h = even_size(dw, dh, s.analysis_max_width)
        rgb = _reformat_array(self._rgb_scaler, frame, rgb_w, rgb_h, "rgb24", turns)
        grey_h = max(8, round(s.ssim_width * dh / dw)) if dw else s.ssim_width
        grey = _reformat_array(self._grey_scaler, frame, s.ssim_width, grey_h, "gray", turns)
        return SampledFrame(t=t, rgb=rgb, grey=grey.astype(np.float32) * (1.0 / 255.0))


class SnippetDecimator:
    """Keeps frames at ≤ ``snippet_fps``, scaled to ≤ ``snippet_max_width``, as yuv420p.

    Frames are kept on a fixed time grid (one per ``1/snippet_fps`` slot) rather than
    "every n-th frame", so variable-frame-rate phone video decimates evenly too.
    """

    def __init__(self, settings: SnippetSettings) -> None:
        self.settings = settings
        self.step_s = 1.0 / settings.snippet_fps if settings.snippet_fps > 0 else 0.0
        self.next_t: float | None = None
        self._scaler = _Scaler()

    def offer(self, t: float, frame: Any) -> SnippetFrame | None:
        if self.next_t is not None and t < self.next_t - _JITTER_S:
            if self.next_t - t <= 2 * self.step_s + 1.0:
                return None
            self.next_t = None  # time jumped back by more than a slot: resynchronise
        if self.next_t is None or t > self.next_t + self.step_s:
            self.next_t = t  # first frame, or after a gap: restart the grid here
        self.next_t += self.step_s
        return SnippetFrame(t=t, frame=self.scale(frame))

    def scale(self, frame: Any) -> Any:
        turns = rotation_of(frame)
        dw, dh = _display_dims(frame, turns)
        w, h = even_size(dw, dh, self.settings.snippet_max_width)
        if not turns:
            if frame.width == w and frame.height == h and frame.format.name == "yuv420p":
                return frame
            return self._scaler(frame, w, h, "yuv420p")
        rgb = _reformat_array(self._scaler, frame, w, h, "rgb24", turns)
        return av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")
