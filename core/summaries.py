"""The day at a glance (issue 17): what one stream held in each window of its stream time.

A stream's memory is summarised per window (every ``overview_stretch_s``, 10 minutes by
default, and per ``summary_windows``, an hour and a day by default), each window aligned to
stream time 0. A summary says only what the memory holds: the span it covers, the main things
said (short quotes and the words most memories mention), what was seen, read on screen and
heard, each with how many memories (or seconds) it rests on. ``ListSummaries`` and ``episodic
summaries`` serve them; SUMMARY questions about a window ("the last hour on cam2") are answered
from them (memory/window_summaries.py, services/window_answer.py).

Window sizes are written as people say them: ``10m``, ``1h``, ``1d`` (also ``90s``, ``2h``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from episodic.core import validation
from episodic.core.durations import parse_duration
from episodic.core.errors import InputError
from episodic.core.records import validate_stream_id

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_UNIT_WORDS = {"s": "second", "m": "minute", "h": "hour", "d": "day"}
MAX_WINDOW_S = 7 * 86400.0
# where a stream's wall-clock start is kept in StreamInfo.metadata: ISO 8601 ("2024-05-01T
# 08:00:00+02:00"; no offset means UTC) or Unix seconds
WALL_CLOCK_KEY = "wall_clock_start"


def window_name(seconds: float) -> str:
    """``600`` → ``"10m"``, ``3600`` → ``"1h"``, ``86400`` → ``"1d"``, ``90`` → ``"90s"``."""
    s = float(seconds)
    for unit in ("d", "h", "m"):
        n = s / _UNITS[unit]
        if n >= 1 and abs(n - round(n)) < 1e-9:
            return f"{round(n)}{unit}"
    return f"{s:g}s"


def window_words(seconds: float) -> str:
    """The window's length in words: "10-minute", "1-hour", "1-day"."""
    name = window_name(seconds)
    return f"{name[:-1]}-{_UNIT_WORDS[name[-1]]}"


def parse_window(text: Any) -> float:
    """``"10m"`` → 600.0 (InputError naming the mistake otherwise)."""
    try:
        seconds = parse_duration(text, "a window", unit_required=True)
    except InputError:
        raise InputError(f"a window is a number and a unit (s, m, h, d) such as 10m, 1h or 1d; got {text!r}") from None
    if not 1.0 <= seconds <= MAX_WINDOW_S:
        raise InputError(f"a window must be between 1 s and 7 days, got {text!r}")
    return seconds


def parse_windows(text: Any) -> tuple[float, ...]:
    """``"1h,1d"`` → (3600.0, 86400.0): sorted, without repeats; "" → ()."""
    if not isinstance(text, str):
        raise InputError(f"summary windows are a comma-separated list such as '1h,1d', got {text!r}")
    return tuple(sorted({parse_window(p) for p in text.split(",") if p.strip()}))


def parse_wall_clock(value: Any) -> datetime | None:
    """A stream's wall-clock start from its metadata value (ISO 8601 or Unix seconds); None
    when absent or unreadable (summaries then speak of stream time only)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(float(value)):
            return None
        return datetime.fromtimestamp(float(value), tz=UTC)
    if isinstance(value, str) and value.strip():
        try:
            t = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return t if t.tzinfo is not None else t.replace(tzinfo=UTC)
    return None


def wall_clock(start: datetime | None, t: float) -> str:
    """Stream time ``t`` on the wall clock (ISO 8601, seconds), "" without a start."""
    if start is None:
        return ""
    return (start + timedelta(seconds=float(t))).isoformat(timespec="seconds")


def clock_time(t: float) -> str:
    """Stream time as h:mm:ss (a summary's spans run past the hour)."""
    s = int(round(max(float(t), 0.0)))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h:d}:{m:02d}:{sec:02d}"


@dataclass(frozen=True)
class SummariesRequest:
    """One stream's summaries: every size (``window`` "") or one (``"1h"``), those overlapping
    [t_min, t_max] (either open)."""

    stream_id: str
    window: str = ""
    t_min: float | None = None
    t_max: float | None = None


def summaries_request(stream_id: Any, window: Any = "", t_min: Any = None, t_max: Any = None) -> SummariesRequest:
    """A validated request (InputError naming the bad field); the window is written back in its
    canonical name ("60m" → "1h")."""
    if not isinstance(stream_id, str) or not stream_id:
        raise InputError("a stream id is required (--stream-id)")
    sid = validate_stream_id(stream_id)
    if window is not None and not isinstance(window, str):
        raise InputError(f"window must be text such as 1h, got {window!r}")
    name = window_name(parse_window(window)) if window and window.strip() else ""
    lo, hi = validation.time_range(t_min, t_max)
    return SummariesRequest(sid, name, lo, hi)


@dataclass
class WindowSummary:
    """One window of one stream, in the words and numbers of its memories.

    ``t_start``/``t_end`` are the window's bounds (aligned to stream time 0); ``covered_*``
    where its first memory starts and its last ends. Tallies are (item, count): topics, names
    and things seen count the memories they occur in, on-screen text the memories it was read
    in, ``heard`` the seconds of each sound (speech included). ``said`` is (stream time, quote).
    """

    stream_id: str
    window: str  # "10m", "1h", "1d"
    window_s: float
    t_start: float
    t_end: float
    covered_start: float
    covered_end: float
    memories: int = 0
    events: int = 0
    said: list[tuple[float, str]] = field(default_factory=list)
    topics: list[tuple[str, float]] = field(default_factory=list)
    people: list[tuple[str, float]] = field(default_factory=list)
    seen: list[tuple[str, float]] = field(default_factory=list)
    on_screen: list[tuple[str, float]] = field(default_factory=list)
    heard: list[tuple[str, float]] = field(default_factory=list)
    tone: list[str] = field(default_factory=list)
    people_seen: int = 0  # the most people one key frame showed
    text: str = ""  # the summary as one paragraph
    wall_start: str = ""  # t_start on the wall clock (ISO 8601), "" when the stream has none
    wall_end: str = ""
    id: str = ""  # the stored record it was read from ("" when merged when asked)
    updated_at: float = 0.0


@dataclass
class SummaryList:
    """A stream's summaries, by window size (smallest first) then start."""

    stream_id: str
    summaries: list[WindowSummary] = field(default_factory=list)
    wall_clock_start: str = ""  # the stream's (ISO 8601), "" when it has none: stream time only
    windows: list[str] = field(default_factory=list)  # the sizes kept, smallest first
