"""Plain data that flows from decoding through segmentation (stream time in seconds)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class SampledFrame:
    """A frame chosen by the adaptive sampler for analysis.

    ``rgb`` is at most ``analysis_max_width`` wide (uint8, H×W×3); ``grey`` is the small
    float32 image SSIM runs on (``ssim_width`` wide, values 0..1).
    """

    t: float
    rgb: np.ndarray
    grey: np.ndarray


@dataclass
class SnippetFrame:
    """A frame kept for the playable snippet (decimated to ``snippet_fps``)."""

    t: float
    frame: object  # av.VideoFrame, already scaled to ``snippet_max_width``, format yuv420p


@dataclass
class MediaInfo:
    """What the container says about a source, known once it is opened."""

    source: str
    container: str = ""
    video_codec: str = ""
    audio_codec: str = ""
    width: int = 0
    height: int = 0
    fps: float = 0.0
    duration_s: float | None = None
    has_video: bool = False
    has_audio: bool = False


@dataclass
class Boundary:
    """A candidate cut. ``kind`` is "visual" (hard cut) or "pause" (quiet audio run)."""

    t: float
    kind: str
    score: float = 0.0  # 1−SSIM for visual cuts, pause length in seconds for pauses
    # For pauses, the quiet run itself: the planner may split anywhere inside it, which
    # matters when a long silence straddles the range a split is allowed in.
    start: float | None = None
    end: float | None = None


@dataclass
class Segment:
    """A closed span [t_start, t_end) with everything the encoders need."""

    index: int
    t_start: float
    t_end: float
    frames: list[SampledFrame] = field(default_factory=list)
    snippet_frames: list[SnippetFrame] = field(default_factory=list)
    audio: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    audio_t_start: float = 0.0  # stream time of audio[0]
    sample_rate_hz: int = 16000
    boundary_kind: str = ""  # what closed it: visual | pause | max | end
    # the stream's audio right after ``audio`` (from the next segment, closed already), for
    # hearing the segment's last words in context; not part of the segment (empty: none)
    audio_after: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))

    @property
    def duration_s(self) -> float:
        return self.t_end - self.t_start
