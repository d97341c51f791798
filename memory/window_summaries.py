"""The day at a glance (issue 17): a stream's summary windows as :class:`WindowSummary`.

The windows are stored overviews (:mod:`memory.overview`): each stretch is the smallest window
(``overview_stretch_s``, 10 minutes), and the longer ones (``summary_windows``, an hour and a
day) are stored where they hold stretches of at least two smaller windows. A window that was
not stored (it says what its one smaller window says, or its stretches predate summary
windows) is merged here from its stretches, which costs no memory read and no model. Every
window is aligned to stream time 0; with a wall-clock start in the stream's metadata
(``wall_clock_start``) each one also says when that was.

A summary is read from the tallies only, so it says nothing the memory does not hold::

    0:10:00–0:20:00 (10-minute window; memories cover 0:10:00–0:19:58): 58 memories, 58 events.
    Said: "the soup needs more salt" (0:12:05); "table four is waiting" (0:15:40).
    About: soup (12 memories), kitchen (9), onions (5). People named: Maria (4).
    Seen: 2 people; cup (14), table (9). On screen: "TABLE 4" (3).
    Heard: speech 8 min 10 s, music 40 s. Tone: cheerful (great).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from episodic.core.records import StreamOverview
from episodic.core.summaries import WindowSummary, clock_time, wall_clock, window_name, window_words
from episodic.memory.overview import (
    read_count,
    read_said,
    read_sounds,
    read_span,
    read_tally,
    window_of,
)
from episodic.memory.overview_windows import align_to, merge_overviews, window_overview_id

SHOWN_TOPICS = 8
SHOWN_NAMES = 6
SHOWN_SEEN = 6
SHOWN_TEXTS = 6
_KINDS = {"speech": "speech", "music": "music", "engine": "an engine", "applause": "applause",
          "noise": "loud noise", "silence": "silence"}


def windows_of(overviews: Sequence[StreamOverview], sizes: Sequence[float], stretch_s: float | None = None,
               ) -> dict[float, list[tuple[float, StreamOverview]]]:
    """size → [(window start, its overview)] for one stream's overviews, each size that is a
    whole number of stretches (the stretch size itself included); a window not stored is
    merged from its stretches (its id is then "")."""
    stretches = sorted((o for o in overviews if o.scope == "stretch"), key=lambda o: o.t_start)
    if not stretches:
        return {}
    step = window_of(stretches[0]) or stretch_s
    if not step:
        return {}
    stored = {o.id: o for o in overviews if o.scope == "window"}
    sid = stretches[0].stream_id
    out: dict[float, list[tuple[float, StreamOverview]]] = {}
    for w in sorted(set(sizes)):
        if abs(w - step) < 1e-9:
            out[w] = [(o.t_start, o) for o in stretches]
            continue
        if w < step or abs(w / step - round(w / step)) > 1e-9:
            continue  # not made of whole stretches: cannot be told from them
        groups: dict[float, list[StreamOverview]] = {}
        for o in stretches:
            groups.setdefault(align_to(o.t_start, w), []).append(o)
        found: list[tuple[float, StreamOverview]] = []
        for start, kids in sorted(groups.items()):
            o = stored.get(window_overview_id(sid, start, w))
            if o is None:
                o = merge_overviews(sid, kids, "window", start, w)
                o.id, o.updated_at = "", 0.0
            found.append((start, o))
        out[w] = found
    return out


def to_summary(o: StreamOverview, window_s: float, start: float, wall: datetime | None = None) -> WindowSummary:
    """One window's overview as a WindowSummary (tallies read back, the text composed)."""
    f = o.facets
    a, b = read_span(o)
    topics = read_tally(f, "n_topics") or [(w, 0.0) for w in f.get("topics", [])]
    people = read_tally(f, "n_people") or [(w, 0.0) for w in f.get("people", [])]
    seen = read_tally(f, "n_objects")
    if not seen and "n_objects" not in f:  # an overview stored before tallies existed
        seen = [(w, 0.0) for w in f.get("objects", []) if not w.endswith(("people", "person"))]
    ws = WindowSummary(
        stream_id=o.stream_id, window=window_name(window_s), window_s=window_s, t_start=start,
        t_end=start + window_s, covered_start=a, covered_end=b,
        memories=read_count(f, "memories") or o.events, events=o.events,
        said=read_said(f),
        topics=[(w, n) for w, n in topics if w.capitalize() not in {p for p, _ in people}][:SHOWN_TOPICS * 2],
        people=people[:SHOWN_NAMES * 2], seen=seen[:SHOWN_SEEN * 2],
        on_screen=read_tally(f, "n_text") or [(t, 0.0) for t in f.get("text", [])],
        heard=[(kind, sec) for kind, sec, _ in read_sounds(f)],
        tone=list(f.get("tone", [])), people_seen=read_count(f, "people_seen"),
        wall_start=wall_clock(wall, start), wall_end=wall_clock(wall, start + window_s),
        id=o.id, updated_at=o.updated_at,
    )
    ws.text = summary_text(ws)
    return ws


def _counted(items: Sequence[tuple[str, float]], unit: str, quote: bool = False) -> str:
    out = []
    for i, (item, n) in enumerate(items):
        shown = f'"{item}"' if quote else item
        if n > 0:
            shown += f" ({n:.0f} {unit})" if i == 0 else f" ({n:.0f})"
        out.append(shown)
    return ", ".join(out)


def duration_words(seconds: float) -> str:
    """112 → "1 min 52 s", 7260 → "2 h 1 min"."""
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h} h {m} min" if m else f"{h} h"
    if m:
        return f"{m} min {sec} s" if sec else f"{m} min"
    return f"{sec} s"


def _wall_words(ws: WindowSummary) -> str:
    """The window on the wall clock ("08:10–08:20 on 2024-05-01"), "" without one."""
    if not ws.wall_start:
        return ""
    a, b = datetime.fromisoformat(ws.wall_start), datetime.fromisoformat(ws.wall_end)
    if a.date() == b.date():
        return f"{a:%H:%M}–{b:%H:%M} on {a:%Y-%m-%d}"
    return f"{a:%Y-%m-%d %H:%M} – {b:%Y-%m-%d %H:%M}"


def summary_lines(ws: WindowSummary) -> list[str]:
    """What the window held, one line per kind of thing (said, about, named, seen, read, heard,
    tone); only what its memories hold, with how many memories (or seconds) each rests on."""
    lines: list[str] = []
    if ws.said:
        lines.append("Said: " + "; ".join(f'"{q}" ({clock_time(t)})' for t, q in ws.said) + ".")
    if ws.topics:
        lines.append("About: " + _counted(ws.topics[:SHOWN_TOPICS], "memories") + ".")
    if ws.people:
        lines.append("People named: " + _counted(ws.people[:SHOWN_NAMES], "times") + ".")
    seen = ([f"{ws.people_seen} people" if ws.people_seen > 1 else "one person"] if ws.people_seen else [])
    if ws.seen:
        seen.append(_counted(ws.seen[:SHOWN_SEEN], "memories"))
    if seen:
        lines.append("Seen: " + "; ".join(seen) + ".")
    if ws.on_screen:
        lines.append("On screen: " + _counted(ws.on_screen[:SHOWN_TEXTS], "memories", quote=True) + ".")
    if ws.heard:
        lines.append("Heard: " + ", ".join(f"{_KINDS.get(k, k)} {duration_words(s)}" for k, s in ws.heard) + ".")
    if ws.tone:
        lines.append("Tone: " + ", ".join(ws.tone) + ".")
    return lines or ["Nothing said, read or recognised."]


def summary_header(ws: WindowSummary) -> str:
    """The window's span, how much memory it holds, and its wall-clock time when known."""
    wall = _wall_words(ws)
    return (
        f"{clock_time(ws.t_start)}–{clock_time(ws.t_end)} ({window_words(ws.window_s)} window; "
        f"memories cover {clock_time(ws.covered_start)}–{clock_time(ws.covered_end)}"
        + (f"; {wall} wall clock" if wall else "")
        + f"): {ws.memories} memories, {ws.events} events."
    )


def summary_text(ws: WindowSummary) -> str:
    return " ".join([summary_header(ws), *summary_lines(ws)])


def list_window_summaries(overviews: Sequence[StreamOverview], sizes: Sequence[float],
                          stretch_s: float | None = None, window_s: float | None = None,
                          t_min: float | None = None, t_max: float | None = None,
                          wall: datetime | None = None) -> list[WindowSummary]:
    """One stream's summaries: every size of ``sizes`` (or only ``window_s``), smallest first,
    each window that overlaps [t_min, t_max] by start."""
    wanted = [window_s] if window_s is not None else list(sizes)
    out: list[WindowSummary] = []
    for w, found in sorted(windows_of(overviews, wanted, stretch_s).items()):
        for start, o in found:
            if (t_max is not None and start > t_max) or (t_min is not None and start + w <= t_min):
                continue
            out.append(to_summary(o, w, start, wall))
    return out
