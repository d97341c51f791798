"""SUMMARY questions about a window of time answered from the summary windows (issue 17):
"what happened on camera 2 this morning?", "summarise the last hour of stream cam1", "what
happened between minute 10 and 20?".

A question is taken here when it asks for a summary (it says "summarise", "what happened", …,
or its type is SUMMARY and it asks for no one fact: a name, time, place, number or colour) and
names a time (:mod:`retrieval.window_scope`), or names a
stream and asks in so many words what happened there; a multiple-choice question, one that
asks to look again (``inspect``), or one with no summary stored for its streams, goes the usual
way (the top-k events). The answer is the
matching window's summary, composed only from the memory (memory/window_summaries.py), and
cites that window and the events its quotes come from. The window is a stored one when the
asked time covers exactly its 10-minute windows (the last hour of a stream that ends on the
hour is its 1-hour window), else the 10-minute windows the time mostly covers, merged when asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from episodic.core.query import AskRequest, Evidence, QueryType
from episodic.core.records import StreamOverview
from episodic.core.summaries import WALL_CLOCK_KEY, WindowSummary, clock_time, parse_wall_clock
from episodic.memory.overview import read_span, window_of
from episodic.memory.overview_windows import merge_overviews
from episodic.memory.window_summaries import to_summary, windows_of
from episodic.retrieval.query_analysis import QueryAnalysis
from episodic.retrieval.window_scope import (
    AskedTime,
    Resolved,
    asked_time,
    asks_for_summary,
    mentioned_streams,
    resolve,
)
from episodic.services.summaries import window_sizes

WINDOW_CONFIDENCE = 0.8  # the summary is the memory's own account of the window
MAX_STREAMS = 3  # streams summarised in one answer when none is named
MIN_OVERLAP = 0.5  # a 10-minute window counts when the asked time covers this much of it


@dataclass
class WindowAnswer:
    """The answer, its confidence, what it cites (best first) and how it was found."""

    answer: str
    confidence: float
    evidence: list[Evidence] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)


def _selected(stretches: list[StreamOverview], lo: float, hi: float) -> list[StreamOverview]:
    """The 10-minute windows the time [lo, hi] mostly covers (or that cover most of it)."""
    out = []
    for o in stretches:
        a, b = read_span(o)
        overlap = min(b, hi) - max(a, lo)
        if overlap > 0 and (overlap >= MIN_OVERLAP * max(b - a, 1e-6) or overlap >= MIN_OVERLAP * (hi - lo)):
            out.append(o)
    return out


class WindowAnswerer:
    """Answers summary questions about a window from the stored summaries of ``store``."""

    def __init__(self, store: Any, settings: Any) -> None:
        self.store = store
        self.settings = settings

    def answer(self, req: AskRequest, analysis: QueryAnalysis) -> WindowAnswer | None:
        """The answer from the summary windows, or None when the question is not one for them
        (or no summary is stored for its streams)."""
        question = req.question
        summary_words = asks_for_summary(question)
        if req.options or req.inspect or not (summary_words or analysis.query_type is QueryType.SUMMARY):
            return None
        if not summary_words and analysis.shape.focus != "any":
            # "Who is in charge of the toolbox today?", "When is Rafael seeing the accountant
            # today?": one fact is asked for (a name, a time…), the time phrase only places it;
            # the window's summary is not an answer to it
            return None
        asked = asked_time(question)
        known = list(req.scope.stream_ids) if req.scope.stream_ids is not None else [
            s.stream_id for s in self.store.list_streams()]
        named = mentioned_streams(question, known)
        if asked is None and not (named and summary_words):
            return None
        streams = named or known
        overviews = self.store.list_overviews(streams) if streams else []
        by_stream: dict[str, list[StreamOverview]] = {}
        for o in overviews:
            by_stream.setdefault(o.stream_id, []).append(o)
        if not by_stream:
            return None
        parts: list[tuple[str, WindowSummary | None, str]] = []
        for sid in sorted(by_stream):
            parts.append(self._stream_part(sid, by_stream[sid], asked, req))
        found = [p for p in parts if p[1] is not None and p[1].memories > 0]
        if not named and len(found) > MAX_STREAMS:  # the streams that hold most of the time
            found = sorted(found, key=lambda p: -(p[1].memories if p[1] else 0))[:MAX_STREAMS]
        notes = {"asked": asked.phrase if asked else "", "streams": [p[0] for p in parts],
                 "windows": [(p[0], p[1].window, p[1].t_start, p[1].id) for p in found if p[1]]}
        if not found:
            said = " ".join(p[2] for p in parts if p[2]) or "I found nothing in memory for that time."
            return WindowAnswer(said, 0.0, [], notes)
        lines: list[str] = []
        evidence: list[Evidence] = []
        events: list[Evidence] = []
        for sid, ws, label in found:
            assert ws is not None
            lines.append(f"{sid}, {label}: {ws.text}")
            evidence.append(Evidence(sid, "", ws.t_start, min(ws.t_end, ws.covered_end), "summary",
                                     f"[{ws.window} window {ws.id or 'merged from its 10-minute windows'}] {ws.text}",
                                     score=1.0))
            events += self._quoted_events(ws)
        evidence += events
        return WindowAnswer("\n".join(lines), WINDOW_CONFIDENCE, evidence[: max(req.top_k, len(found))], notes)

    def _stream_part(self, sid: str, overviews: list[StreamOverview], asked: AskedTime | None,
                     req: AskRequest) -> tuple[str, WindowSummary | None, str]:
        """(stream, its summary of the asked time or None, how the time reads / why none)."""
        stretches = sorted((o for o in overviews if o.scope == "stretch"), key=lambda o: o.t_start)
        if not stretches:
            return sid, None, ""
        spans = [read_span(o) for o in stretches]
        start, end = min(a for a, _ in spans), max(b for _, b in spans)
        info = self.store.get_stream(sid)
        wall = parse_wall_clock((info.metadata or {}).get(WALL_CLOCK_KEY)) if info is not None else None
        resolved = resolve(asked, end, wall, sid, start) if asked else Resolved(None, None)
        if resolved.empty:
            return sid, None, resolved.note + "."
        lo = max(x for x in (resolved.t_min, req.scope.t_min, start) if x is not None)
        hi = min(x for x in (resolved.t_max, req.scope.t_max, end) if x is not None)
        chosen = _selected(stretches, lo, hi) if hi > lo else []
        if not chosen:
            return sid, None, f"{sid}'s memory holds nothing between {clock_time(lo)} and {clock_time(hi)}."
        ws = self._window(sid, overviews, chosen, wall)
        phrase = asked.phrase if asked else "all of it"
        label = f"{phrase} (stream time {clock_time(lo)}–{clock_time(hi)})"
        if resolved.note:
            label += f"; {resolved.note}"
        return sid, ws, label

    def _window(self, sid: str, overviews: list[StreamOverview], chosen: list[StreamOverview],
                wall: Any) -> WindowSummary:
        """The stored window made of exactly ``chosen`` (the smallest), else ``chosen`` merged."""
        sizes = window_sizes(self.settings)
        step = window_of(chosen[0]) or sizes[0]
        ids = {o.id for o in chosen}
        for w, found in sorted(windows_of(overviews, sizes, step).items()):
            for start, o in found:
                members = {k.id for k in overviews if k.scope == "stretch"
                           and start <= k.t_start < start + w}
                if members == ids:
                    return to_summary(o, w, start, wall)
        first, last = chosen[0].t_start, chosen[-1].t_start + step
        merged = merge_overviews(sid, chosen, "window", first, last - first)
        merged.id, merged.updated_at = "", 0.0
        return to_summary(merged, last - first, first, wall)

    def _quoted_events(self, ws: WindowSummary) -> list[Evidence]:
        """The events the window's quotes come from (what the answer's words rest on)."""
        out: list[Evidence] = []
        seen: set[str] = set()
        for t, _quote in ws.said:
            for e in self.store.list_events(ws.stream_id, t_min=t, t_max=t, with_vectors=False):
                if e.t_start <= t <= e.t_end and e.id not in seen:
                    seen.add(e.id)
                    out.append(Evidence(e.stream_id, e.memory_id, e.t_start, e.t_end, "summary", e.summary,
                                        score=0.9))
                    break
        return out
