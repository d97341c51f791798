"""Where the picture changed briefly, read from the compressed video without decoding it.

Looking again (issue 15) starts from the memory's best hits. A recording that was never
ingested, or a detail the memory never wrote down, gives the navigator no anchor, and a
2-second event in an hour sits between the root grid's frames (each root cell lasts 56 s):
any sampling at a logarithmic frame budget misses it most of the time.

The encoder has already looked at every frame. A predicted frame that must code new content
(a sign held up, a screen turning red, a cut) is several times larger than its neighbours, a
picture that became busier or plainer changes the size of every frame after it, and an encoder
that detects a scene cut starts a new keyframe there; when the new content goes away again,
the same happens a second time. Reading only the packet sizes and keyframe flags (demuxing, no
decoding: about a hundred times cheaper than decoding the frames) finds these changes, and the
stretch between a change and the next one at most ``max_brief_s`` later is a **brief shot**:
something on screen for a few seconds only, exactly what key frames sampled at ingest miss.
The navigator looks first at one grid whose cells are the strongest brief shots, one frame
each (MAGNET's idea of spending frames where the video is salient, seed 003, with salience
taken from the codec), right after the memory's anchors.

A brief shot is a lead, not evidence: footage with steady motion or many cuts has many, and
the looker still decides whether what is there bears on the question.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

SPIKE_RATIO = 3.0  # a predicted frame this many times its recent neighbours' size is a change
BASELINE_S = 4.0  # the neighbours: the predicted frames of the seconds before it …
BASELINE_QUANTILE = 0.9  # … and their size that counts as usual
MIN_BASELINE = 3  # fewer neighbours than this: no judgement (a file's first frames)
STEP_WINDOW_S = 1.0  # a step: the frames of this long after a point against those before
STEP_MIN_FRAMES = 8  # (at least this many: a median of fewer is moved by one large frame) …
STEP_RATIO = 2.0  # … their medians this many times apart (either way) …
STEP_FLOOR_SHARE = 0.25  # … the busier side at least this share of the spike floor
MIN_SPIKE_BYTES = 2000  # a spike smaller than this is noise (a nearly static scene's tiny frames) …
MIN_SPIKE_KEY_SHARE = 0.1  # … or than this share of the file's usual keyframe, when that is less
KEY_GAP_SHARE = 0.8  # a keyframe sooner than this share of the regular keyframe gap: a cut
MAX_BRIEF_S = 6.0  # two changes at most this far apart bound a brief shot …
MIN_BRIEF_S = 0.2  # … and at least this far (one burst of motion is not two changes)
LONE_SHARE = 0.6  # a change with no partner ranks at this share of its strength …
LONE_SIDE_S = 1.0  # … as the seconds either side of it
READ_STRIDE = 8  # files are read every 8th first (see brief_shots_of)
CACHE_ROWS = 2_000_000  # packets kept per process, all files together (48 MB; files are
# immutable: keyed by path, size and modification time)


@dataclass(frozen=True)
class Change:
    """One change in the picture: when, and how much larger than usual its frame was (log)."""

    t: float
    strength: float


@dataclass(frozen=True)
class BriefShot:
    """What was on screen from ``t_start`` to ``t_end`` only: a shot between two changes close
    together, or the second either side of a lone change."""

    t_start: float
    t_end: float
    strength: float  # the mean of its two changes' strengths


@dataclass(frozen=True)
class MediaFile:
    """A file holding part of a stream: stream time ``offset_s`` is the file's t = 0, and
    only its packets in [t_start, t_end) of stream time count."""

    path: Path
    offset_s: float = 0.0
    t_start: float = -math.inf
    t_end: float = math.inf


# -- reading packets ------------------------------------------------------------------------------
_cache: OrderedDict[tuple[str, int, int], np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()
_cached_rows = 0


def packet_table(path: Path, budget_s: float | None = None) -> np.ndarray:
    """The file's video packets as rows (time in the file, size in bytes, keyframe 0/1), in
    decoding order; an empty table for a file without video or one that cannot be read.
    Kept per process, by path, size and modification time. ``budget_s``: stop reading after
    this long (a day-long recording is millions of packets) and return what was read, which
    is not kept."""
    global _cached_rows
    try:
        st = os.stat(path)
    except OSError:
        return np.zeros((0, 3))
    key = (str(path), st.st_size, st.st_mtime_ns)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    table, whole = _read_packets(path, budget_s)
    if not whole:
        return table
    with _cache_lock:
        if key not in _cache:
            _cache[key] = table
            _cached_rows += len(table)
        while _cached_rows > CACHE_ROWS and len(_cache) > 1:
            _cached_rows -= len(_cache.popitem(last=False)[1])
    return table


def _read_packets(path: Path, budget_s: float | None) -> tuple[np.ndarray, bool]:
    """The packet rows, and whether they are all of them (False: out of time)."""
    import av

    rows: list[tuple[float, int, int]] = []
    until = time.perf_counter() + budget_s if budget_s is not None else math.inf
    whole = True
    try:
        # skip_frame: opening a file decodes a frame to learn its parameters; none is needed
        # here (halves the time per file, most of which is opening it)
        with av.open(str(path), options={"skip_frame": "all"}) as container:
            if not container.streams.video:
                return np.zeros((0, 3)), True
            stream = container.streams.video[0]
            tb = float(stream.time_base)
            for packet in container.demux(stream):
                if packet.size <= 0 or packet.pts is None:
                    continue  # the flush packet at the end, or one with no time
                rows.append((packet.pts * tb, packet.size, 1 if packet.is_keyframe else 0))
                if len(rows) % 1024 == 0 and time.perf_counter() > until:
                    whole = False
                    break
    except (av.FFmpegError, OSError, ValueError):
        pass  # a damaged tail: what was read still counts
    return np.asarray(rows, dtype=float).reshape(-1, 3), whole


# -- finding changes --------------------------------------------------------------------------------
def changes_in(table: np.ndarray, regular_gap_s: float | None = None) -> list[Change]:
    """The changes of one file's packets (file time), of three kinds:

    * a predicted frame far larger than those of the seconds before (new content coded at once);
    * a lasting step in the size of predicted frames, up or down (the picture became busier or
      plainer: a flat red screen with sensor noise codes larger than a still textured scene,
      a caption that goes away makes every frame after it cheaper);
    * a keyframe sooner than the encoder's regular keyframe gap (its scene cuts).

    ``regular_gap_s``: that gap, when known from more files of the same stream (a short snippet
    holds one or two keyframes); else read from this file. The file's first keyframe is where
    the file starts, not a change."""
    if len(table) < 2:
        return []
    table = table[np.argsort(table[:, 0], kind="stable")]
    t, size, key = table[:, 0], table[:, 1], table[:, 2] > 0
    keys = np.flatnonzero(key)
    # a small or plain picture codes a keyframe in a few hundred bytes: the floor scales with it
    floor = min(MIN_SPIKE_BYTES, MIN_SPIKE_KEY_SHARE * float(np.median(size[keys]))) if len(keys) else MIN_SPIKE_BYTES
    pt, ps = t[~key], np.maximum(size[~key], 1.0)
    rate = (len(pt) - 1) / (pt[-1] - pt[0]) if len(pt) > 1 and pt[-1] > pt[0] else 0.0
    out: list[Change] = []
    # spikes: against a high quantile of the frames before, not their median (with B-frames
    # most of them are tiny, and every P-frame would look like a change next to them)
    w = max(MIN_BASELINE, round(BASELINE_S * rate))
    if rate and len(ps) > w:
        base = np.maximum(np.quantile(sliding_window_view(ps, w)[:-1], BASELINE_QUANTILE, axis=1), 1.0)
        after = ps[w:]
        for n in np.flatnonzero((after >= floor) & (after >= SPIKE_RATIO * base)):
            out.append(Change(float(pt[w + n]), math.log(after[n] / base[n])))
    # steps: the median of the frames just after a point against that of the frames just before
    w = max(STEP_MIN_FRAMES, round(STEP_WINDOW_S * rate))
    if rate and len(ps) >= 2 * w + 1:
        med = np.median(sliding_window_view(ps, w), axis=1)  # med[j]: frames j … j + w - 1
        before, after = med[:-w], med[w:]  # around the point between frames j + w - 1 and j + w
        step = np.abs(np.log(after / before))
        busy = np.maximum(before, after) >= STEP_FLOOR_SHARE * floor
        padded = np.pad(step, w, constant_values=0.0)
        local_max = step >= sliding_window_view(padded, 2 * w + 1).max(axis=1)
        for j in np.flatnonzero((step >= math.log(STEP_RATIO)) & busy & local_max):
            out.append(Change(float(pt[j + w]), float(step[j])))
    gaps = np.diff(t[keys])
    regular = regular_gap_s if regular_gap_s is not None else _regular_gap(gaps, float(t[-1] - t[0]))
    for n in range(1, len(keys)):
        # a keyframe sooner than the encoder's own rhythm: it judged the picture new
        if gaps[n - 1] < KEY_GAP_SHARE * regular:
            j = np.searchsorted(pt, t[keys[n]])
            usual = float(np.quantile(ps[max(0, j - 3 * MIN_BASELINE):j], BASELINE_QUANTILE)) if j else 0.0
            ratio = size[keys[n]] / usual if usual else SPIKE_RATIO
            out.append(Change(float(t[keys[n]]), math.log(max(ratio, SPIKE_RATIO))))
    return _one_per_moment(sorted(out, key=lambda c: c.t))


def _one_per_moment(changes: list[Change], within_s: float = 0.25) -> list[Change]:
    """Changes a fraction of a second apart (a spike that also starts a step) are one: the
    strongest."""
    out: list[Change] = []
    for c in changes:
        if out and c.t - out[-1].t <= within_s:
            if c.strength > out[-1].strength:
                out[-1] = c
            continue
        out.append(c)
    return out


def _regular_gap(gaps: np.ndarray, span_s: float) -> float:
    """The encoder's keyframe rhythm: the most common gap between keyframes (to 0.1 s). When
    no gap repeats, every keyframe after a file's first is a cut and the rhythm is longer than
    what was seen: the longest gap or ``span_s`` (the longest file), whichever is longer."""
    if not len(gaps):
        return math.inf
    rounded = np.round(gaps, 1)
    values, counts = np.unique(rounded, return_counts=True)
    if counts.max() < 2:
        return max(float(gaps.max()), span_s)
    return float(values[counts == counts.max()].max())


def brief_shots(changes: Sequence[Change], max_brief_s: float = MAX_BRIEF_S,
                  min_brief_s: float = MIN_BRIEF_S) -> list[BriefShot]:
    """The brief shots between ``changes``: stretches that begin with a change and end with the
    next one at most ``max_brief_s`` later (what was on screen between them was there for a
    few seconds only), strongest first (the mean of their two changes). Then each **lone**
    change (both of its shots long) as the second before it and the second after it, at
    ``LONE_SHARE`` of its strength: one end of a brief scene can be invisible in the packets
    (a change that falls on a keyframe the encoder placed anyway costs nothing extra), and a
    cut shows new content too. Shots are disjoint, so one frame from the middle of each shows
    what each held."""
    ordered = sorted(changes, key=lambda c: c.t)
    shots: list[BriefShot] = []
    brief = [min_brief_s - 1e-9 <= b.t - a.t <= max_brief_s for a, b in zip(ordered, ordered[1:], strict=False)]
    for i, (a, b) in enumerate(zip(ordered, ordered[1:], strict=False)):
        if brief[i]:
            shots.append(BriefShot(a.t, b.t, (a.strength + b.strength) / 2))
    for i, c in enumerate(ordered):
        if (i == 0 or not brief[i - 1]) and (i == len(ordered) - 1 or not brief[i]):
            shots += [BriefShot(c.t - LONE_SIDE_S, c.t, LONE_SHARE * c.strength),
                      BriefShot(c.t, c.t + LONE_SIDE_S, LONE_SHARE * c.strength)]
    return sorted(shots, key=lambda x: (-x.strength, x.t_start))


def brief_shots_of(files: Sequence[MediaFile], max_brief_s: float = MAX_BRIEF_S,
                     budget_s: float | None = None) -> list[BriefShot]:
    """The brief shots of a stream held in ``files`` (stream time), strongest first.
    ``budget_s``: stop opening files after this long (a day of snippets is thousands of
    files, a few milliseconds each); they are read every ``READ_STRIDE``-th first, so what
    was read by then is spread over the whole span, and it still counts."""
    started = time.perf_counter()
    order = [i for first in range(READ_STRIDE) for i in range(first, len(files), READ_STRIDE)]
    read: dict[int, np.ndarray] = {}
    for i in order:
        spent = time.perf_counter() - started
        if budget_s is not None and spent > budget_s:
            break
        read[i] = packet_table(files[i].path, None if budget_s is None else budget_s - spent)
    files = [files[i] for i in sorted(read)]
    tables = [read[i] for i in sorted(read)]
    gaps = [np.diff(np.sort(tab[tab[:, 2] > 0, 0])) for tab in tables]
    longest = max((float(np.ptp(tab[:, 0])) for tab in tables if len(tab)), default=0.0)
    regular = _regular_gap(np.concatenate(gaps), longest) if gaps else math.inf
    changes: list[Change] = []
    for f, table in zip(files, tables, strict=True):
        for c in changes_in(table, regular):
            t = c.t + f.offset_s
            if f.t_start <= t < f.t_end:
                changes.append(Change(t, c.strength))
    return brief_shots(changes, max_brief_s)
