"""Key frames that look unlike the rest of their stream: where a picture was shown.

A query for "a picture of coins" cannot be answered by name when the classifier has no
name for coins (an ImageNet classifier has none): its guesses on the coins are as unsure
as on the walls ("a keyboard" 0.13). What the memory does hold is how each key frame
*looks*: the classifier's image features, kept per key frame (``frame_features``). A
picture put on screen for a few seconds looks like nothing else the camera shows, while
the background, however varied, comes back. On the twelve dev sets every shown picture's
key frames were among the ten most distinct of their set's 98–130 key frames by this
measure, most often in the first five.

A **stretch** is a run of consecutive key frames of one stream that look alike (cosine of
their features at least ``SAME_STRETCH_COS``): a picture held on screen is one stretch.
Its **distinctness** is one minus the highest cosine between its frames and any key frame
of the stream outside it (and further than ``NEAR_S`` from it, so a fade in or out does not
count as the picture coming back). Dark, flat or blurred frames, frames with writing (a
sign's frame is about its words) stay as comparison but are never candidates themselves. A
stretch holding a frame the classifier names surely is marked ``named``: it is the answer to
"what did the picture show?", but not a picture of something nothing can name (a picture of
a cup, named on one of its frames, is not a picture of coins on the others).

Only candidates, never sightings: callers say so (nothing could name what was asked, or the
answer is a guess).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from episodic.core.interfaces import QueryStore
from episodic.core.query import Scope
from episodic.core.records import ShortTermMemory
from episodic.retrieval.distinct_picture import WRITING
from episodic.retrieval.guess_match import MAX_MEMORIES, stream_versions

SAME_STRETCH_COS = 0.85  # consecutive key frames at least this alike are one stretch
NEAR_S = 3.0  # key frames this close to a stretch are not compared with it
MIN_DISTINCT = 0.2  # a stretch less distinct than this is background, not a shown picture
SURE_NAME = 0.5  # a frame guessed this surely shows that thing, not an unnamed one


@dataclass(frozen=True)
class KeyFrame:
    """One key frame as this module needs it."""

    t: float
    memory_id: str
    feature: np.ndarray  # unit length
    candidate: bool  # usable as a shown picture (not dark, flat or blurred, no writing)
    named: bool  # the classifier is sure what it shows: a stretch holding it is no unnamed picture
    guesses: tuple[tuple[str, float], ...] = ()  # the classifier's guesses, however unsure, best first
    snippet_uri: str = ""  # the stored snippet that holds it


@dataclass(frozen=True)
class DistinctStretch:
    """A run of alike key frames of one stream that looks like nothing else in it."""

    stream_id: str
    memory_id: str  # the memory holding its first frame
    t_start: float  # its first key frame
    t_end: float  # the next key frame after it (its last one when none follows): on screen until then
    distinctness: float  # 1 − the highest cosine to a key frame outside it
    guesses: tuple[tuple[str, float], ...]  # over its frames, each name at its best, best first
    named: bool = False  # a frame of it is named surely
    snippet_uri: str = ""  # the stored snippet holding its first candidate frame

    @property
    def guess(self) -> str:
        """Its best guess, however unsure ("" when none)."""
        return self.guesses[0][0] if self.guesses else ""


def key_frames(memories: Sequence[ShortTermMemory]) -> list[KeyFrame]:
    """The key frames of ``memories`` that have stored features, in time order."""
    out: list[KeyFrame] = []
    for m in memories:
        observed = {round(f.t, 3): f for f in m.frames}
        for t, feature in m.frame_features:
            v = np.asarray(feature, dtype=np.float32).ravel()
            norm = float(np.linalg.norm(v))
            if v.size == 0 or norm == 0.0:
                continue
            f = observed.get(round(t, 3))
            guesses = sorted(f.guesses, key=lambda g: -g[1]) if f is not None else []
            named = bool(guesses) and guesses[0][1] >= SURE_NAME
            candidate = f is not None and not f.quality and not WRITING.search(f.ocr_text or "")
            uri = next((r.uri for r in m.snippets if r.t_start <= t <= r.t_end), "")
            out.append(KeyFrame(float(t), m.id, v / norm, candidate, named,
                                tuple((str(n), float(p)) for n, p in guesses), uri))
    out.sort(key=lambda k: k.t)
    return out


def stretches(frames: Sequence[KeyFrame]) -> list[tuple[int, int]]:
    """Runs [i, j) of consecutive alike frames (``frames`` in time order)."""
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(frames) + 1):
        if i == len(frames) or float(frames[i].feature @ frames[i - 1].feature) < SAME_STRETCH_COS:
            runs.append((start, i))
            start = i
    return runs


def distinct_stretches(stream_id: str, frames: Sequence[KeyFrame]) -> list[DistinctStretch]:
    """The candidate stretches of one stream's key frames at least ``MIN_DISTINCT`` distinct
    (named ones too), most distinct first. A stream with nothing to compare against has none."""
    if len(frames) < 2:
        return []
    times = np.array([k.t for k in frames])
    feats = np.stack([k.feature for k in frames])
    out: list[DistinctStretch] = []
    for i, j in stretches(frames):
        inside = [k for k in range(i, j) if frames[k].candidate]
        if not inside:
            continue
        lo, hi = frames[i].t - NEAR_S, frames[j - 1].t + NEAR_S
        outside = (times < lo) | (times > hi)
        if not outside.any():
            continue
        closest = float((feats[i:j] @ feats[outside].T).max())
        distinct = 1.0 - closest
        if distinct < MIN_DISTINCT:
            continue
        first = frames[inside[0]]
        best: dict[str, float] = {}
        for k in inside:
            for name, p in frames[k].guesses:
                best[name] = max(best.get(name, 0.0), p)
        guesses = tuple(sorted(best.items(), key=lambda g: -g[1]))
        until = frames[j].t if j < len(frames) else frames[j - 1].t
        out.append(DistinctStretch(stream_id, first.memory_id, frames[i].t, until, round(distinct, 4), guesses,
                                   any(frames[k].named for k in range(i, j)), first.snippet_uri))
    out.sort(key=lambda s: (-s.distinctness, s.t_start))
    return out


class DistinctFrames:
    """Each stream's distinct stretches, worked out once and again only when the stream
    changes (its memory count, last update or end), as the key-frame units are kept."""

    def __init__(self, store: QueryStore) -> None:
        self.store = store
        self._streams: dict[str, tuple[tuple, list[DistinctStretch]]] = {}
        self._lock = threading.Lock()

    def of(self, stream_ids: Sequence[str], scope: Scope, named: bool = False) -> list[DistinctStretch]:
        """The distinct stretches of ``stream_ids`` inside the scope's time range, most
        distinct first, those holding a surely named frame only with ``named`` (a stream of
        more than ``MAX_MEMORIES`` memories is judged on what the time range holds)."""
        versions = stream_versions(self.store)
        out: list[DistinctStretch] = []
        for sid in stream_ids:
            if sid not in versions:
                continue
            if versions[sid][0] > MAX_MEMORIES:
                found = self._judge(sid, scope)
            else:
                with self._lock:
                    cached = self._streams.get(sid)
                if cached is not None and cached[0] == versions[sid]:
                    found = cached[1]
                else:
                    found = self._judge(sid, Scope())
                    with self._lock:
                        self._streams[sid] = (versions[sid], found)
            out.extend(s for s in found if (named or not s.named) and (scope.t_min is None or s.t_end >= scope.t_min)
                       and (scope.t_max is None or s.t_start <= scope.t_max))
        out.sort(key=lambda s: (-s.distinctness, s.stream_id, s.t_start))
        return out

    def _judge(self, stream_id: str, scope: Scope) -> list[DistinctStretch]:
        memories = self.store.list_memories(stream_id, t_min=scope.t_min, t_max=scope.t_max,
                                            limit=MAX_MEMORIES, with_vectors=True)
        return distinct_stretches(stream_id, key_frames(memories))
