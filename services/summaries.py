"""``ListSummaries`` and ``episodic summaries`` in one place (issue 17): a stream's summary
windows read from the store (:mod:`memory.window_summaries`), with the configured sizes and the
stream's wall-clock start. No model is loaded and no memory is read: the windows are stored
overviews, or merged from them."""

from __future__ import annotations

from typing import Any

from episodic.core.errors import InputError
from episodic.core.interfaces import MemoryStore
from episodic.core.summaries import (
    WALL_CLOCK_KEY,
    SummariesRequest,
    SummaryList,
    parse_wall_clock,
    parse_window,
    summaries_request,
    window_name,
)
from episodic.memory.overview_windows import summary_sizes
from episodic.memory.window_summaries import list_window_summaries


def window_sizes(settings: Any) -> list[float]:
    """The sizes kept: the overview stretch, then ``summary_windows``, smallest first."""
    stretch = float(settings.overview_stretch_s)
    return [stretch, *summary_sizes(stretch, settings.summary_windows)]


def wall_clock_of(store: MemoryStore, stream_id: str) -> Any:
    """The stream's wall-clock start (datetime), None when its metadata has none."""
    info = store.get_stream(stream_id)
    return parse_wall_clock((info.metadata or {}).get(WALL_CLOCK_KEY)) if info is not None else None


def list_summaries(store: MemoryStore, settings: Any, req: SummariesRequest) -> SummaryList:
    """The stream's summaries the request asks for (none for a stream with no memory)."""
    req = summaries_request(req.stream_id, req.window, req.t_min, req.t_max)
    sizes = window_sizes(settings)
    window_s = None
    if req.window:
        window_s = parse_window(req.window)
        if not any(abs(window_s - w) < 1e-6 for w in sizes):
            kept = ", ".join(window_name(w) for w in sizes)
            raise InputError(f"no {req.window} summaries are kept: the window sizes are {kept} "
                             "(overview_stretch_s and summary_windows)")
    wall = wall_clock_of(store, req.stream_id)
    summaries = list_window_summaries(store.list_overviews(req.stream_id), sizes, sizes[0], window_s,
                                      req.t_min, req.t_max, wall)
    return SummaryList(req.stream_id, summaries, wall.isoformat(timespec="seconds") if wall else "",
                       [window_name(w) for w in sizes])
