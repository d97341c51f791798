"""Summary windows of overviews: which windows a stream has, how stretches are merged into them,
and the refresh that keeps a stream's stretches, windows and stream-wide overview current.

Why its own module: :mod:`memory.overview` says what memories are about (composing facets and
merging them, from memories or from stretches' tallies); this module is the bookkeeping around
that: window ids and sizes, the stretch grid windows align to, which windows are worth storing,
and reading the store's memories and overviews at a checkpoint to write only what changed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from episodic.core.interfaces import MemoryStore, TextEmbedder
from episodic.core.records import OverviewScope, ShortTermMemory, StreamOverview, overview_id
from episodic.core.summaries import parse_windows, window_name
from episodic.memory.overview import _overview_of, merge_facets, overview_text, read_span, window_of

STREAM_MEMORIES_MAX = 20000  # memories read per listing when stretches are recomposed
DEFAULT_SUMMARY_WINDOWS = "1h,1d"


def window_overview_id(stream_id: str, t_start: float, window_s: float) -> str:
    """The id of the summary window of ``window_s`` starting at ``t_start`` ("cam2@…​.o1h")."""
    return overview_id(stream_id, t_start) + window_name(window_s)


def merge_overviews(stream_id: str, children: Sequence[StreamOverview], scope: OverviewScope,
                    t_start: float | None = None, window_s: float | None = None) -> StreamOverview:
    """A window (``scope`` "window", starting at ``t_start``) or the stream-wide overview merged
    from its stretches' facets (:func:`merge_facets`); the vector is left to the caller."""
    facets = merge_facets(children)
    spans = [read_span(o) for o in children]
    first = min(a for a, _ in spans)
    if window_s is not None:
        facets["window_s"] = [f"{window_s:g}"]
    if scope == "stream" or t_start is None:
        oid, t0 = overview_id(stream_id), first
    else:
        oid, t0 = window_overview_id(stream_id, t_start, window_s or 0.0), t_start
    return StreamOverview(
        id=oid, stream_id=stream_id, t_start=t0, t_end=max(o.t_end for o in children), scope=scope,
        text=overview_text(facets), vector=np.zeros(0, dtype=np.float32), facets=facets,
        events=sum(o.events for o in children), updated_at=time.time(),
    )


def stretch_starts(t0: float, t1: float, stretch_s: float) -> list[float]:
    """Starts of the stretches (multiples of ``stretch_s``) that [t0, t1] overlaps."""
    first = math.floor(max(t0, 0.0) / stretch_s)
    last = math.floor(max(t1 - 1e-6, t0, 0.0) / stretch_s)
    return [k * stretch_s for k in range(first, last + 1)]


def summary_sizes(stretch_s: float, windows: str | Sequence[float] = DEFAULT_SUMMARY_WINDOWS) -> list[float]:
    """The merged window sizes: those of ``windows`` ("1h,1d") longer than a stretch and a
    whole number of stretches, smallest first (config validation refuses the others)."""
    sizes = parse_windows(windows) if isinstance(windows, str) else sorted({float(w) for w in windows})
    return [w for w in sizes if w > stretch_s + 1e-9 and abs(w / stretch_s - round(w / stretch_s)) < 1e-9]


def align_to(t: float, size: float) -> float:
    return math.floor(max(t, 0.0) / size + 1e-9) * size


def stored_windows(stretches: Sequence[StreamOverview], stretch_s: float,
                   sizes: Sequence[float]) -> dict[float, dict[float, list[StreamOverview]]]:
    """size → window start → its stretches, for the windows worth storing: those whose
    stretches lie in at least two windows of the next smaller size (else the window says
    exactly what that smaller one says)."""
    out: dict[float, dict[float, list[StreamOverview]]] = {}
    smaller = stretch_s
    for w in sizes:
        groups: dict[float, list[StreamOverview]] = {}
        for o in stretches:
            groups.setdefault(align_to(o.t_start, w), []).append(o)
        out[w] = {start: kids for start, kids in groups.items()
                  if len({align_to(k.t_start, smaller) for k in kids}) >= 2}
        smaller = w
    return out


def _memories_from(store: MemoryStore, stream_id: str, t0: float) -> list[ShortTermMemory]:
    """The stream's memories that start at or after ``t0``, in pages of STREAM_MEMORIES_MAX."""
    found: dict[str, ShortTermMemory] = {}
    t = t0
    while True:
        batch = store.list_memories(stream_id, t_min=t if t > 0 else None, limit=STREAM_MEMORIES_MAX)
        fresh = [m for m in batch if m.t_start >= t0 and m.id not in found]
        found.update((m.id, m) for m in fresh)
        if len(batch) < STREAM_MEMORIES_MAX or not fresh:
            break
        t = max(m.t_start for m in batch)
    return sorted(found.values(), key=lambda m: m.t_start)


def refresh_overviews(store: MemoryStore, embedder: TextEmbedder, stream_id: str,
                      stretch_s: float, since_s: float = 0.0,
                      windows: str | Sequence[float] = DEFAULT_SUMMARY_WINDOWS) -> list[StreamOverview]:
    """Recompose the stretches from the one holding ``since_s`` to the stream's end (a live
    stream: the stretch that grew) from their memories, merge the summary windows of
    ``windows`` ("1h,1d") that hold a recomposed stretch and the stream-wide overview from
    the stretches, store them and drop overviews of stretches (and windows) that hold no
    memory any more. Earlier stretches are read from the store, not recomposed: a checkpoint
    reads only the memories of the stretch that grew (``since_s`` 0 recomposes everything,
    as at the end of a stream). Stretches stored before summary windows existed (no
    tallies) are recomposed once. Returns what was written."""
    sizes = summary_sizes(stretch_s, windows)
    stored = store.list_overviews(stream_id)
    old = {o.t_start: o for o in stored if o.scope == "stretch"}
    first = align_to(since_s, stretch_s)
    dated = [t for t, o in old.items() if t < first and (window_of(o) != stretch_s or "memories" not in o.facets)]
    read_from = min([first, *dated])
    grouped: dict[float, list[ShortTermMemory]] = {}
    for m in _memories_from(store, stream_id, read_from):
        grouped.setdefault(align_to(m.t_start, stretch_s), []).append(m)
    fresh = {t: _overview_of(stream_id, ms, t, window_s=stretch_s) for t, ms in grouped.items()}
    stretches = {t: o for t, o in old.items() if t < read_from} | fresh
    if not stretches:
        store.delete_overviews(stream_id)
        return []
    changed = set(fresh) | {t for t in old if t >= read_from}
    kids = sorted(stretches.values(), key=lambda o: o.t_start)
    written = [fresh[t] for t in sorted(fresh)]
    keep = {overview_id(stream_id)} | {o.id for o in kids}
    stored_ids = {o.id for o in stored}
    for w, groups in stored_windows(kids, stretch_s, sizes).items():
        for start, members in sorted(groups.items()):
            oid = window_overview_id(stream_id, start, w)
            keep.add(oid)
            if oid in stored_ids and not any(align_to(t, w) == start for t in changed):
                continue  # none of its stretches changed
            written.append(merge_overviews(stream_id, members, "window", start, w))
    written.append(merge_overviews(stream_id, kids, "stream"))
    texts = list(dict.fromkeys(o.text for o in written))  # a day within one stream says what the stream does
    vectors = dict(zip(texts, embedder.embed_texts(texts), strict=True))
    for o in written:
        o.vector = vectors[o.text]
    store.upsert_overviews(written)
    store.delete_overviews(stream_id, keep_ids=keep)
    return written
