"""Telling given options apart with the classifier's unsure guesses (ConSE-style).

The offline describer only *says* a visual word when it is nearly sure (memory/vision.py), so
most pictures are stored as "a scene; colours: …" with no name at all: precision over recall,
because a wrong word in a memory is worse than none. Its best guesses are kept beside the
frame (``FrameObservation.guesses``: "moped" 0.54, "a motorbike" 0.57) but never shown as
seen. They still carry information when a question *gives* the candidates: "which of these
was shown: a motorcycle, a clock, a cat?" only needs to know which option the guesses lean
to, not what the frame holds. This is the idea of zero-shot recognition by a convex
combination of label embeddings (Norouzi et al., "ConSE", 2014): a class distribution is
compared with unseen names through a text embedding space.

A guess ``g`` with probability ``p`` supports option ``i`` when ``i`` is the option nearest
to ``g`` in the text space, clearly (a margin over the runner-up option), and near enough
(cosine ramped between ``LO`` and ``HI``): support = p × ramp. An option's support on a
unit is the best over that unit's guesses. "a cup" leans to "a cup of coffee" (0.79) over
"a clock" (0.45): it supports the former; "space shuttle" sits between "a rocket" and
"an astronaut": it supports neither. With one phrase only (which stream showed X?) there is
no contrast and the ramp alone decides.

Answers chosen this way are guesses too: callers cap their confidence.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from episodic.core.interfaces import QueryStore
from episodic.core.query import Scope
from episodic.retrieval.detailed import TextScorer, Unit, units_of
from episodic.retrieval.query_analysis import (
    CUE_WORDS,
    GENERIC_QUESTION_WORDS,
    STOPWORDS,
    QueryAnalysis,
    stem,
    tokens,
)
from episodic.retrieval.recurring_guesses import Levels, background_levels, stands_out

LO, HI = 0.45, 0.75  # cosine between an option and a guess name: none … full resemblance
# A guess of the same broad kind as an option ("a dog" for "a horse": both animals) supports it
# this much, when no other option is of that kind: the classifier saw an animal, and one
# option is an animal
SAME_KIND = 0.5
KIND_MIN = 0.3  # …from a guess at least this sure (a texture's stray "a bird" 0.09 says nothing)
MARGIN = 0.08  # the nearest option must lead the runner-up by this much to take a guess
GUESS_CAP = 0.45  # the most confidence an answer resting on guesses alone may carry
MAX_MEMORIES = 5000  # a scan of key frames looks at this many memories at most
KEPT_MEMORIES = 20000  # memories whose key-frame units a process keeps between requests
_CUE_STEMS = frozenset(stem(w) for w in CUE_WORDS)


def _ramp(x: np.ndarray | float, lo: float = LO, hi: float = HI) -> np.ndarray | float:
    return np.clip((np.asarray(x, dtype=np.float32) - lo) / (hi - lo), 0.0, 1.0)


# per phrase, its broad kind (or None); per name the describer gives, its broad kind
Kinds = tuple[list[str | None], dict[str, str]]


def guess_support(
    phrases: Sequence[str], units: Sequence[Unit], scorer: TextScorer, kinds: Kinds | None = None
) -> np.ndarray:
    """(len(phrases), len(units)) support of each phrase by each unit's guesses, in [0, 1];
    with ``kinds`` (:meth:`DescriberVocabulary.kinds`), a guess about the whole frame (not one
    of its parts) of ``KIND_MIN`` or more, of the same broad kind as the only phrase of that
    kind, supports it at ``SAME_KIND`` of itself."""
    out = np.zeros((len(phrases), len(units)), dtype=np.float32)
    names = sorted({g for u in units for g, _ in (*u.guesses, *u.part_guesses)})
    if not phrases or not names:
        return out
    vecs = scorer.embed(list(phrases) + names)
    cos = vecs[: len(phrases)] @ vecs[len(phrases) :].T  # phrases × names
    near = np.asarray(_ramp(cos), dtype=np.float32)
    if len(phrases) > 1:
        order = np.sort(cos, axis=0)
        lead = order[-1] - order[-2]  # per name: nearest option's lead over the runner-up
        nearest = cos.argmax(axis=0)
        keep = np.zeros_like(near, dtype=bool)
        keep[nearest, np.arange(len(names))] = lead >= MARGIN
        near = np.where(keep, near, 0.0)
    by_kind = np.zeros_like(near)
    if kinds is not None:
        own, of_name = kinds
        for i, kind in enumerate(own):
            if kind is None or own.count(kind) > 1:
                continue  # no kind, or two options of it: the kind tells them not apart
            by_kind[i] = np.array([SAME_KIND if of_name.get(n) == kind else 0.0 for n in names])
    column = {n: j for j, n in enumerate(names)}
    for k, u in enumerate(units):
        # only a fairly sure guess about the whole frame says what kind of thing was shown: a
        # part's guess is the best of nine crops, sure of something in one of them far more
        # often (a flower's crops guessed "vegetables" 0.64, the frame 0.17)
        for guesses, of_kind in ((u.guesses, True), (u.part_guesses, False)):
            for g, p in guesses:
                j = column[g]
                out[:, k] = np.maximum(out[:, k], float(p) * near[:, j])
                if of_kind and p >= KIND_MIN:
                    out[:, k] = np.maximum(out[:, k], float(p) * by_kind[:, j])
    return out


NAMEABLE_COS = 0.7  # an option this near a word of the describer's vocabulary is one it could name


class DescriberVocabulary:
    """What the describer that made a scope's memories can name: the vectors of its closed
    vocabulary (``memory/vision.closed_vocabulary``), computed once per describer."""

    def __init__(self, store: QueryStore, scorer: TextScorer) -> None:
        self.store = store
        self.scorer = scorer
        self._vectors: dict[str, np.ndarray] = {}

    def _describer(self, streams: Sequence[str], scope: Scope) -> str:
        """The describer of the first memory found in ``streams`` (its ``models["describer"]``)."""
        for sid in streams:
            first = next(iter(self.store.list_memories(sid, t_min=scope.t_min, t_max=scope.t_max, limit=1)), None)
            if first is not None:
                return str(first.metadata.get("models", {}).get("describer", ""))
        return ""

    def vectors(self, streams: Sequence[str], scope: Scope) -> np.ndarray | None:
        """The vocabulary's vectors for the describer of the first memory found in
        ``streams`` (its ``models["describer"]``); None for an open or unknown one."""
        return self._vectors_of(self._describer(streams, scope))

    def _vectors_of(self, describer: str) -> np.ndarray | None:
        # the describer's module is imported only when asked (the query side never loads it)
        from episodic.memory.vision import closed_vocabulary

        words = closed_vocabulary(describer) if describer else None
        if not words:
            return None
        if describer not in self._vectors:
            self._vectors[describer] = np.asarray(self.scorer.embed(list(words)), dtype=np.float32)
        return self._vectors[describer]

    def kinds(self, phrases: Sequence[str], streams: Sequence[str], scope: Scope) -> Kinds | None:
        """The broad kind of each phrase ("a horse" → "an animal": that of the describer's
        nearest name, when it could name it) and of every name the describer gives, for
        :func:`guess_support`; None for an open or unknown describer."""
        describer = self._describer(streams, scope)
        from episodic.memory.vision import closed_categories, closed_vocabulary

        words = closed_vocabulary(describer) if describer else None
        categories = closed_categories(describer) if describer else None
        vectors = self._vectors_of(describer)  # the describer found once, not again
        if not words or not categories or vectors is None or not phrases:
            return None
        cos = np.asarray(self.scorer.embed(list(phrases)), dtype=np.float32) @ vectors.T
        nearest = cos.argmax(axis=1)
        own = [categories.get(words[int(j)]) if float(cos[i, j]) >= NAMEABLE_COS else None
               for i, j in enumerate(nearest)]
        return own, categories

    def unnameable(self, phrases: Sequence[str], streams: Sequence[str], scope: Scope) -> list[bool] | None:
        """Per phrase, whether that describer has no name for it; None when it can name anything."""
        vectors = self.vectors(streams, scope)
        if vectors is None:
            return None
        return [bool(c < NAMEABLE_COS) for c in nameability(phrases, vectors, self.scorer)]


def nameability(options: Sequence[str], vocabulary: np.ndarray, scorer: TextScorer) -> np.ndarray:
    """Per option, the cosine to the nearest name of the describer's closed vocabulary
    (``vocabulary``: those names' vectors): "a motorcycle" 0.79 (to "a motorbike"), "coins"
    0.54 (to "wallet"). A picture of a thing the describer can name leaves guesses that lean
    to it; one of a thing it cannot name leaves guesses about something else."""
    if not options or vocabulary.size == 0:
        return np.zeros(len(options), dtype=np.float32)
    vecs = np.asarray(scorer.embed(list(options)), dtype=np.float32)
    return (vecs @ vocabulary.T).max(axis=1)


def subject_phrase(question: str, stream_ids: Sequence[str] = ()) -> str:
    """What a "which camera showed X?" question asks about, as plain words: the question
    without stop words, cue words ("showed", "screen"), generic words ("recording", "camera")
    and the streams' own names ("In which recording did a motorcycle appear on screen?" →
    "motorcycle"; "Which camera showed a cup of coffee?" → "cup coffee")."""
    own = {w for s in stream_ids for w in tokens(s.replace("-", " ").replace("_", " "))}
    kept = [
        w
        for w in tokens(question.replace("-", " "))
        if w not in STOPWORDS
        and w not in CUE_WORDS
        and stem(w) not in _CUE_STEMS
        and stem(w) not in GENERIC_QUESTION_WORDS
        and w not in own
        and not w.isdigit()
    ]
    return " ".join(kept)


_SCREEN_ONLY = frozenset({"screen", "onscreen"})
# words that make a question or query about a picture shown ("a picture of…", "…shown on screen")
PICTURED = re.compile(
    r"\b(?:picture|photo|photograph|image|shown|showed|appeared|appear|seen|visible|on screen)\b", re.I
)


def asks_what_was_shown(analysis: QueryAnalysis) -> bool:
    """Whether the question asks in so many words what was seen ("Which camera showed a cup of
    coffee?", "…a picture of…", "…appeared on screen?") and names no talk: "Which camera showed
    someone talking about a cat?" asks where the cat was talked about."""
    return bool(PICTURED.search(analysis.question)) and not getattr(analysis, "cues", {}).get("audio")


def about_pictures(analysis: QueryAnalysis) -> bool:
    """Whether the question asks about what was seen (not what was written on screen).
    "Shown on screen" alone does not make a question about text; "read", "sign", "written"
    do. (The analyser counts "screen" as a text cue, for "what was on the screen?")."""
    text_cues = set(getattr(analysis, "cues", {}).get("text", ()))
    about_text = analysis.asks_text and not (text_cues and text_cues <= _SCREEN_ONLY)
    return not about_text and (
        "visual" in analysis.preferred_modalities or bool(text_cues and text_cues <= _SCREEN_ONLY)
    )


# a stream's background guesses: (among the whole frames' guesses, among their parts')
Background = tuple[Levels, Levels]


def _background(memories: Sequence[tuple[float, float, list[Unit]]]) -> Background:
    frames = [u for _, _, units in memories for u in units]
    return background_levels(frames), background_levels(frames, kind="part_guesses")


def _drop(unit: Unit, background: Background) -> Unit:
    """``unit`` with its stream's background guesses taken off (in place; returned), but for
    one that stands out on it (retrieval/recurring_guesses.py's :func:`stands_out`)."""
    whole, parts = background
    if whole and unit.guesses:
        unit.guesses = tuple(g for g in unit.guesses if g[0] not in whole or stands_out(g[0], g[1], unit, whole))
    if parts and unit.part_guesses:
        unit.part_guesses = tuple(g for g in unit.part_guesses
                                  if g[0] not in parts or stands_out(g[0], g[1], unit, parts))
    return unit


def stream_versions(store: QueryStore) -> dict[str, tuple[int, float, float]]:
    """Each stream's version: its memory count, last update and end. A per-stream cache of
    what was read from a stream is good while the version stays the same."""
    return {s.stream_id: (s.memories, s.updated_at, s.t_end) for s in store.list_streams()}


class KeyFrameUnits:
    """The key-frame units (with their guesses) of whole streams, for questions no text
    search can reach (nothing was said or written about the picture): a scan.

    A scan of key frames reads every memory in scope from the store (≈ 1.5 s for 5000
    memories in Milvus Lite), and Search runs one for every query about a picture. A stream's
    units are read once and again only when the stream changes (its memory count, last update
    or end), as :class:`retrieval.word_candidates.WordCandidates` keeps its words; callers get
    copies, so what a request does to a unit (its score) stays in that request. A stream of
    more than ``MAX_MEMORIES`` memories is read for the request's time range each time, and
    at most ``KEPT_MEMORIES`` memories' units are kept (the streams read longest ago go
    first), so a large store does not move into the process.

    The units come without their stream's background guesses (retrieval/recurring_guesses.py):
    a guess the stream's key frames carry in more than one stretch is about the walls and
    textures it always shows, not about a picture, and would otherwise choose between options
    as surely as the picture's own guesses do."""

    def __init__(self, store: QueryStore) -> None:
        self.store = store
        # stream id → (version, [(t_start, t_end, units)], background guesses), oldest read first
        self._streams: dict[str, tuple[tuple, list[tuple[float, float, list[Unit]]], Background]] = {}
        self._lock = threading.Lock()

    def _read(self, stream_id: str, scope: Scope | None = None) -> list[tuple[float, float, list[Unit]]]:
        lo, hi = (None, None) if scope is None else (scope.t_min, scope.t_max)
        return [(m.t_start, m.t_end, [u for u in units_of(m) if u.modality in ("visual", "ocr")])
                for m in self.store.list_memories(stream_id, t_min=lo, t_max=hi)]

    def _stream(self, stream_id: str, version: tuple) -> tuple[list[tuple[float, float, list[Unit]]], Background]:
        with self._lock:
            cached = self._streams.get(stream_id)
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        memories = self._read(stream_id)
        background = _background(memories)
        with self._lock:
            self._streams.pop(stream_id, None)
            self._streams[stream_id] = (version, memories, background)
            while sum(len(v[1]) for v in self._streams.values()) > KEPT_MEMORIES and len(self._streams) > 1:
                del self._streams[next(iter(self._streams))]
        return memories, background

    def without_background(self, units: Sequence[Unit]) -> None:
        """Take each stream's background guesses off ``units`` (a request's own units, such as
        a detailed recall's), as :meth:`units` does; a stream of more than ``MAX_MEMORIES``
        memories keeps its guesses (judging it would mean reading it whole)."""
        streams = {u.stream_id for u in units if u.guesses or u.part_guesses}
        if not streams:
            return
        versions = stream_versions(self.store)
        background = {sid: self._stream(sid, versions[sid])[1] for sid in streams
                      if sid in versions and versions[sid][0] <= MAX_MEMORIES}
        for u in units:
            if u.stream_id in background:
                _drop(u, background[u.stream_id])

    def units(self, stream_ids: Sequence[str], scope: Scope,
              modalities: tuple[str, ...] = ("visual",)) -> list[Unit]:
        """The key-frame units of ``stream_ids`` inside the scope's time range, from at most
        ``MAX_MEMORIES`` memories; ``("visual", "ocr")`` adds the on-screen text, which tells a
        sign's frame from a picture's (retrieval/distinct_picture.py)."""
        versions = stream_versions(self.store)
        out: list[Unit] = []
        seen = 0
        for sid in stream_ids:
            if sid not in versions:
                continue
            if versions[sid][0] > MAX_MEMORIES:  # large: what the time range holds, judged alone
                memories = self._read(sid, scope)
                background = _background(memories)
            else:
                memories, background = self._stream(sid, versions[sid])
            for t0, t1, units in memories:
                if (scope.t_min is not None and t1 < scope.t_min) or (scope.t_max is not None and t0 > scope.t_max):
                    continue
                if seen >= MAX_MEMORIES:
                    return out
                seen += 1
                out.extend(_drop(replace(u, fuzzy_terms=set(u.fuzzy_terms)), background)
                           for u in units if u.modality in modalities)
        return out
