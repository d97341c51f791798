"""Detailed recall (HippoMM C.2, Ψ_detailed): back from the gist to the ShortTermMemories.

Pieces shared by every query-side stage live here too:

* :class:`Unit` – one piece of evidence text inside a memory (a transcript piece, a key-frame
  description, the on-screen text of a frame, or the memory's ThetaEvent summary) with its
  times and snippet, i.e. what becomes an :class:`~core.query.Evidence`;
* :class:`MemoryReader` – reads memories and events once per request;
* :class:`TextScorer` – ranks units against a question by embedding cosine *and* lexical
  overlap. The cosine finds paraphrases; the lexical part keeps rare exact words (names,
  numbers, on-screen text) from being drowned, which MiniLM alone does on short texts.

The recall itself follows the paper: **feature search** over the fine-grained vectors E_i of
the modality the query type asks for (k = ``recall_top_k``); for visual questions, when the
best visual similarity is below ``visual_fallback_sim`` (E.4: 0.4) the feature hits are not
trusted and recall **falls back to semantic search** over the text of the memories (captions,
on-screen text, transcripts). For audio and gist questions semantic search over transcripts
and summaries always runs beside feature search (the paper's "alternative"). The Tables 8–9
prompts ask the language model to pick segments; a 135M model cannot do that reliably, so
the selection here is the hybrid ranking, which is deterministic and explains itself.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from episodic.config import RetrievalSettings
from episodic.core.interfaces import CrossModalEmbedder, QueryStore, TextEmbedder
from episodic.core.query import Evidence, Modality, QueryType, Scope
from episodic.core.records import ShortTermMemory, ThetaEvent, event_id
from episodic.retrieval.query_analysis import STOPWORDS, QueryAnalysis, overlap, stem, term_set
from episodic.retrieval.text_match import fuzzy_hits, name_words, sound_phrase_hits

if TYPE_CHECKING:
    from episodic.retrieval.word_candidates import WordCandidates

# Hybrid ranking weights: cosine, lexical overlap with the unit itself, and with the unit's
# surroundings (the rest of its memory and its stream's name: "the sign at the station").
W_COS, W_LEX, W_CONTEXT = 0.55, 0.30, 0.15
# Units of a modality the question does not ask about still count, a little less.
OFF_MODALITY_WEIGHT = 0.85
# A summary is a small model's paraphrase ("the coffee machine is now outside" for "…is
# broken"): where the question is not about the gist, what was really said or shown wins ties.
SUMMARY_WEIGHT = 0.75
# "…at the end": a unit at the named end of its stream scores up to this much more, and the
# memories of the last (first) POSITION_WINDOW_S seconds of each stream are read as candidates.
POSITION_WEIGHT = 0.5
POSITION_WINDOW_S = 30.0
POSITION_MAX_STREAMS = 50
# sentences found by another route (the values a question gives) go in at this rank, unless
# already within the first SENTENCES_WITHIN units, which the answer and re-listening read
SENTENCES_AT = 3
SENTENCES_WITHIN = 8

MODALITY_LABEL = {
    "speech": "speech",
    "ocr": "on-screen text",
    "visual": "visual",
    "summary": "summary",
    "sound": "heard",
}


@dataclass
class Unit:
    """One piece of text inside a memory, scored against the current question."""

    stream_id: str
    memory_id: str
    t_start: float
    t_end: float
    modality: Modality
    text: str  # as stored: what a person is shown
    snippet_uri: str = ""
    vector: np.ndarray | None = None  # a stored text embedding of scored_text, when reusable
    context_terms: frozenset[str] = frozenset()  # stems of the memory's other texts + stream id
    score: float = 0.0  # hybrid rank score (comparable within one request only)
    cos: float = 0.0  # cosine of the question to scored_text
    lex: float = 0.0  # share of the question's content terms found in the text
    lex_context: float = 0.0  # …found in the text or its surroundings
    # Cross-modal association: the cue unit this one was found through (its time window)
    anchor: Unit | None = None
    # question/option words found here only tolerantly (a misheard name: "Mylo" for "Milo")
    fuzzy_terms: set[str] = field(default_factory=set)
    # visual units: the classifier's unsure guesses for these key frames (name, probability),
    # never shown as what was seen; see retrieval/guess_match.py
    guesses: tuple[tuple[str, float], ...] = ()
    # …and for the parts of those key frames (FrameObservation.part_guesses): options only
    part_guesses: tuple[tuple[str, float], ...] = ()
    # speech heard again with the question's words as a hint and taken for this question only
    # (retrieval/relisten.py): the words may be there because the question put them there
    hinted: bool = False
    # why a sentence sharing no word with the question was put near the top of recall
    # ("values": it says a value the options give; "options": it says an option's words;
    # "value lost": it holds the question's words but no value):
    # to be heard again with the question's words, which re-listening does only for units
    # that bear on the question or were put there for this
    found_by: str = ""

    @property
    def support_cos(self) -> float:
        """How well the question matches what this unit stands on: its own cosine, or for an
        associated unit that of the cue it co-occurs with."""
        return max(self.cos, self.anchor.cos) if self.anchor is not None else self.cos

    @property
    def support_terms(self) -> set[str]:
        """Where the question's words may be found for this unit: the unit, its memory and
        stream, and (associated units) the cue it was found through."""
        out = self.terms | set(self.context_terms) | self.fuzzy_terms
        if self.anchor is not None:
            out |= self.anchor.terms | self.anchor.fuzzy_terms
        return out

    @property
    def scored_text(self) -> str:
        """The text that is embedded: on-screen text says what it is, so "what was written on
        the screen" can find a bare "PLATFORM 7"."""
        return f'on-screen text: "{self.text}"' if self.modality == "ocr" else self.text

    @property
    def key(self) -> tuple[str, str, float, str]:
        return (self.memory_id, self.modality, round(self.t_start, 3), self.text)

    @cached_property
    def terms(self) -> set[str]:
        """Stems of the text (cached: scoring asks for them many times)."""
        return term_set(self.text)

    def overlaps(self, t_min: float | None, t_max: float | None) -> bool:
        return (t_min is None or self.t_end >= t_min) and (t_max is None or self.t_start <= t_max)

    def evidence(self) -> Evidence:
        return Evidence(
            stream_id=self.stream_id,
            segment_id=self.memory_id,
            t_start=round(self.t_start, 3),
            t_end=round(self.t_end, 3),
            modality=self.modality,
            text=self.text,
            snippet_uri=self.snippet_uri,
            score=round(float(self.score), 4),
        )

    def cite(self) -> str:
        """"station, 10.6–14.6 s": where a person can go and check."""
        return f"{self.stream_id}, {self.t_start:.1f}–{self.t_end:.1f} s"


def fuzzy_found(query_text: str, query_terms: Iterable[str], text: str, exact: set[str]) -> set[str]:
    """The ``query_terms`` (stems) missing from ``exact`` that ``text`` holds tolerantly: a
    name-like word of the query that sounds like one of the text's, two words of either
    side written as one ("North wind" / "Northwind"), or a phrase of the query misheard as
    words that sound and look nearly the same ("seed packet" / "seat pocket")."""
    missing = {t for t in query_terms if t not in exact}
    if not missing:
        return set()
    hits = fuzzy_hits(query_text, text) | sound_phrase_hits(query_text, text, STOPWORDS)
    if not hits:
        return set()
    found = {stem(h) for h in hits}
    words = [w for w, _ in name_words(query_text)]
    for a, b in zip(words, words[1:], strict=False):
        if a + b in hits:
            found |= {stem(a), stem(b)}
    return found & missing


def merge_guesses(
    a: Sequence[tuple[str, float]], b: Sequence[tuple[str, float]]
) -> tuple[tuple[str, float], ...]:
    """Guesses of consecutive key frames as one list: each name at its highest probability."""
    best: dict[str, float] = {}
    for name, p in list(a) + list(b):
        best[name] = max(float(p), best.get(name, 0.0))
    return tuple(sorted(best.items(), key=lambda x: -x[1]))


def snippet_for(memory: ShortTermMemory, t_start: float, t_end: float) -> str:
    """The first snippet of ``memory`` that overlaps [t_start, t_end] (else its first one)."""
    refs = sorted(memory.snippets, key=lambda r: r.t_start)
    for ref in refs:
        if ref.t_end >= t_start and ref.t_start <= t_end:
            return ref.uri
    return refs[0].uri if refs else ""


def stream_named_in(question: str, streams: Sequence[str]) -> str | None:
    """The one stream of ``streams`` whose id the question writes out ("what was written on
    screen in garden-cam?"). Only ids that cannot be an everyday word count (with a "-", "_",
    "." or a digit: "garden-cam", "cam2"): a stream called "live" is not named by "where does
    Tom live?"."""
    low = question.lower()
    hits = [
        sid for sid in streams
        if re.search(r"[-_.\d]", sid) and re.search(rf"(?<![\w-]){re.escape(sid.lower())}(?![\w-])", low)
    ]
    return hits[0] if len(hits) == 1 else None


def stream_terms(stream_id: str) -> set[str]:
    """Words of a stream's name ("lobby-cam" → lobby, cam): people name streams in questions."""
    return term_set(" ".join(re.split(r"[._-]+", stream_id)))


def units_of(
    memory: ShortTermMemory,
    event: ThetaEvent | None = None,
    reuse_visual_vectors: bool = True,
) -> list[Unit]:
    """Every evidence unit of one memory: transcript pieces, key-frame descriptions, the
    distinct on-screen texts, the distinct non-speech sounds ("music playing", from its first
    to its last occurrence), and the ThetaEvent summary when given.

    Stored vectors are attached where they are text embeddings of exactly the unit's text
    (transcripts always; frame descriptions only when the embedder is text-only, because a
    cross-modal embedder stores pixel vectors there), so ranking needs fewer embedder calls.
    """
    stored: dict[tuple[str, str], np.ndarray] = {}
    for e in memory.embeddings:
        # sound entries are text embeddings of their description with every embedder
        usable = e.modality in ("speech", "sound") or (e.modality == "visual" and reuse_visual_vectors)
        if usable and e.text and e.vector is not None and np.asarray(e.vector).size:
            stored[(e.modality, e.text)] = np.asarray(e.vector, dtype=np.float32)

    out: list[Unit] = []

    def add(
        modality: str,
        t0: float,
        t1: float,
        text: str,
        vec: np.ndarray | None = None,
        guesses: Sequence[tuple[str, float]] = (),
        part_guesses: Sequence[tuple[str, float]] = (),
    ) -> None:
        text = " ".join((text or "").split())
        if not text:
            return
        last = out[-1] if out else None
        if last is not None and last.modality == modality and last.text == text and t0 <= last.t_end + 1e-6:
            last.t_end = max(last.t_end, t1)  # the same text on consecutive frames: one unit
            last.guesses = merge_guesses(last.guesses, guesses)
            last.part_guesses = merge_guesses(last.part_guesses, part_guesses)
            return
        out.append(
            Unit(
                stream_id=memory.stream_id,
                memory_id=memory.id,
                t_start=float(t0),
                t_end=float(max(t1, t0)),
                modality=modality,
                text=text,
                vector=vec,
                guesses=merge_guesses((), guesses),
                part_guesses=merge_guesses((), part_guesses),
            )
        )

    for piece in memory.transcript:
        add("speech", piece.t_start, piece.t_end, piece.text, stored.get(("speech", piece.text.strip())))
    frames = sorted(memory.frames, key=lambda f: f.t)
    for i, f in enumerate(frames):
        t1 = frames[i + 1].t if i + 1 < len(frames) else memory.t_end
        add("visual", f.t, t1, f.description, stored.get(("visual", f.description)), f.guesses, f.part_guesses)
    for i, f in enumerate(frames):
        t1 = frames[i + 1].t if i + 1 < len(frames) else memory.t_end
        add("ocr", f.t, t1, f.ocr_text)
    spans: dict[str, list[float]] = {}
    for o in sorted(memory.sounds, key=lambda o: o.t_start):
        if o.kind != "speech" and o.description:  # speech is the transcript's to stand for
            span = spans.setdefault(o.description, [o.t_start, o.t_end])
            span[0], span[1] = min(span[0], o.t_start), max(span[1], o.t_end)
    for text, (t0, t1) in spans.items():
        add("sound", t0, t1, text, stored.get(("sound", text)))
    if event is not None and event.summary.strip():
        vec = event.summary_vector if np.asarray(event.summary_vector).size else None
        add("summary", memory.t_start, memory.t_end, event.summary, vec)

    context = set(stream_terms(memory.stream_id))
    for u in out:
        context |= u.terms
    frozen = frozenset(context)
    for u in out:
        u.snippet_uri = snippet_for(memory, u.t_start, u.t_end)
        u.context_terms = frozen
    return out


class MemoryReader:
    """Reads memories (with E_i) and events by id, each at most once per request."""

    def __init__(self, store: QueryStore) -> None:
        self.store = store
        self._memories: dict[str, ShortTermMemory | None] = {}
        self._events: dict[str, ThetaEvent | None] = {}
        self._stream_ends: dict[str, float | None] = {}

    def memory(self, memory_id: str) -> ShortTermMemory | None:
        if memory_id not in self._memories:
            self._memories[memory_id] = self.store.get_memory(memory_id, with_vectors=True)
        return self._memories[memory_id]

    def prefetch(self, memory_ids: Iterable[str], events: bool = True) -> None:
        """Read the memories not read yet (with E_i) and, with ``events``, their events, in
        one batch each instead of one round trip per record (a search opens ~25 memories:
        ~75 store calls one by one, 3 in a batch)."""
        missing = [m for m in dict.fromkeys(memory_ids) if m not in self._memories]
        if missing:
            found = self.store.get_memories(missing, with_vectors=True)
            for mid in missing:
                self._memories[mid] = found.get(mid)
        if not events:
            return
        wanted: dict[str, str] = {}  # event id → memory id
        for mid in dict.fromkeys(memory_ids):
            m = self._memories.get(mid)
            if m is not None and m.id not in self._events:
                wanted[event_id(m.stream_id, m.t_start)] = m.id
        if wanted:
            found_events = self.store.get_events(list(wanted))
            for eid, mid in wanted.items():
                self._events[mid] = found_events.get(eid)

    def stream_end(self, stream_id: str) -> float | None:
        """How far the stream goes (seconds), from its StreamInfo; None when unknown."""
        if stream_id not in self._stream_ends:
            info = self.store.get_stream(stream_id)
            self._stream_ends[stream_id] = float(info.t_end) if info and info.t_end > 0 else None
        return self._stream_ends[stream_id]

    def streams_in(self, scope: Scope, limit: int = POSITION_MAX_STREAMS) -> list[str]:
        """The stream ids a scope covers (all known streams when it names none)."""
        if scope.stream_ids is not None:
            return list(scope.stream_ids)[:limit]
        return [info.stream_id for info in self.store.list_streams()][:limit]

    def add(self, memory: ShortTermMemory) -> None:
        """Keep a memory read elsewhere (e.g. by a time-window listing)."""
        self._memories.setdefault(memory.id, memory)

    def remember_event(self, event: ThetaEvent) -> None:
        self._events[event.memory_id] = event

    def event_of(self, memory: ShortTermMemory) -> ThetaEvent | None:
        if memory.id not in self._events:
            self._events[memory.id] = self.store.get_event(event_id(memory.stream_id, memory.t_start))
        return self._events[memory.id]

    def units(self, memory_ids: Iterable[str], reuse_visual_vectors: bool, scope: Scope) -> list[Unit]:
        """Units of the given memories (in order, without repeats) that overlap the scope."""
        memory_ids = list(memory_ids)
        self.prefetch(memory_ids)
        out: list[Unit] = []
        seen: set[str] = set()
        for mid in memory_ids:
            if mid in seen:
                continue
            seen.add(mid)
            m = self.memory(mid)
            if m is None:
                continue
            for u in units_of(m, self.event_of(m), reuse_visual_vectors):
                if u.overlaps(scope.t_min, scope.t_max):
                    out.append(u)
        return out


class TextScorer:
    """Hybrid relevance of evidence units to a question, with a bounded embedding cache."""

    def __init__(self, embedder: TextEmbedder, cache_size: int = 20000) -> None:
        self.embedder = embedder
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        # A cross-modal embedder stores pixel vectors for key frames, not text vectors.
        self.reuse_visual_vectors = not (
            isinstance(embedder, CrossModalEmbedder) and hasattr(embedder, "embed_images")
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm rows for ``texts``, computing only those not seen recently."""
        dim = int(self.embedder.dim)
        out = np.zeros((len(texts), dim), dtype=np.float32)
        missing: list[str] = []
        with self._lock:
            for i, t in enumerate(texts):
                v = self._cache.get(t)
                if v is None:
                    missing.append(t)
                else:
                    self._cache.move_to_end(t)
                    out[i] = v
        if missing:
            unique = list(dict.fromkeys(missing))
            vecs = self.embedder.embed_texts(unique)
            with self._lock:
                for t, v in zip(unique, vecs, strict=True):
                    self._cache[t] = np.asarray(v, dtype=np.float32)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
                for i, t in enumerate(texts):
                    if t in self._cache:
                        out[i] = self._cache[t]
        return out

    def rank(
        self,
        analysis: QueryAnalysis,
        q_vec: np.ndarray,
        units: list[Unit],
        prefer: Sequence[str] | None = None,
    ) -> list[Unit]:
        """Score every unit (fills score/cos/lex) and return them best first.

        score = (0.55·cos + 0.30·lex + 0.15·lex_context) × modality weight (1 for the modalities
        the question is about, 0.85 for others, 0.75 for summaries), where lex is the
        share of the question's content terms in the unit and lex_context the share in the
        unit plus its memory and stream name; a question without content terms ("what is this
        about?") is ranked on the cosine alone.
        """
        if not units:
            return []
        need = [i for i, u in enumerate(units) if u.vector is None or u.vector.size != q_vec.size]
        if need:
            vecs = self.embed([units[i].scored_text for i in need])
            for i, v in zip(need, vecs, strict=True):
                units[i].vector = v
        mat = np.stack([u.vector for u in units]).astype(np.float32)
        cos = mat @ np.asarray(q_vec, dtype=np.float32)
        preferred = set(prefer if prefer is not None else analysis.preferred_modalities)
        terms = analysis.terms
        for u, c in zip(units, cos, strict=True):
            u.cos = float(c) if math.isfinite(float(c)) else 0.0
            if terms:
                u.fuzzy_terms |= fuzzy_found(analysis.question, terms, u.text, u.terms)
            own = u.terms | u.fuzzy_terms
            if terms:
                u.lex = overlap(terms, own)
                u.lex_context = overlap(terms, own | u.context_terms)
                base = W_COS * max(u.cos, 0.0) + W_LEX * u.lex + W_CONTEXT * u.lex_context
            else:
                u.lex = u.lex_context = 0.0
                base = max(u.cos, 0.0)
            if u.modality in preferred:
                weight = 1.0
            elif u.modality == "summary":
                weight = SUMMARY_WEIGHT
            else:
                weight = OFF_MODALITY_WEIGHT
            u.score = base * weight
        return sorted(units, key=lambda u: (-u.score, u.stream_id, u.t_start))


def relevant(unit: Unit, settings: RetrievalSettings, analysis: QueryAnalysis) -> bool:
    """Whether a unit bears on the question at all: a cosine above the no-support floor, or
    some of the question's content words in it or around it."""
    if not analysis.terms and analysis.query_type is QueryType.SUMMARY:
        return True
    return unit.cos > settings.support_cos_min or unit.lex_context > 0


@dataclass
class Recall:
    """What detailed recall found, best first, and how it got there."""

    units: list[Unit]
    route: str  # "feature" | "feature+text" | "text-fallback" | "association"
    best_feature_sim: float | None = None
    notes: dict[str, object] = field(default_factory=dict)


def _window(scope: Scope, end: float | None) -> tuple[float, float] | None:
    """The part of a stream a scope sees: [t_min or 0, t_max or the stream's end]."""
    lo = scope.t_min if scope.t_min is not None else 0.0
    hi = end if end is not None else None
    if scope.t_max is not None:
        hi = scope.t_max if hi is None else min(hi, scope.t_max)
    if hi is None or hi <= lo:
        return None
    return lo, hi


def position_memory_ids(store: QueryStore, scope: Scope, analysis: QueryAnalysis, reader: MemoryReader) -> list[str]:
    """Memories at the end (or start) of each stream in scope, for "what was said last"."""
    if analysis.position is None:
        return []
    ids: list[str] = []
    for sid in reader.streams_in(scope):
        window = _window(scope, reader.stream_end(sid))
        if window is None:
            continue
        lo, hi = window
        if analysis.position == "end":
            lo = max(lo, hi - POSITION_WINDOW_S)
        else:
            hi = min(hi, lo + POSITION_WINDOW_S)
        ids += [m.id for m in store.list_memories(sid, t_min=lo, t_max=hi, limit=64)]
    return ids


def apply_position(
    units: list[Unit], analysis: QueryAnalysis, reader: MemoryReader, scope: Scope
) -> list[Unit]:
    """Re-rank for "at the start/end": score × (1 + POSITION_WEIGHT × closeness to that end of
    the unit's stream, 0..1). Unchanged when the question names no position."""
    if analysis.position is None or not units:
        return units
    for u in units:
        window = _window(scope, reader.stream_end(u.stream_id) or max(x.t_end for x in units))
        if window is None:
            continue
        lo, hi = window
        rel = min(1.0, max(0.0, ((u.t_start + u.t_end) / 2 - lo) / (hi - lo)))
        closeness = rel if analysis.position == "end" else 1.0 - rel
        u.score *= 1.0 + POSITION_WEIGHT * closeness
    return sorted(units, key=lambda u: (-u.score, u.stream_id, u.t_start))


def _scope_args(scope: Scope) -> dict[str, object]:
    return {"stream_ids": scope.stream_ids, "t_min": scope.t_min, "t_max": scope.t_max}


def nearest_memory_ids(
    store, q_vec: np.ndarray, source: str, top_k: int, scope: Scope, modality: str | None = None
) -> list[tuple[str, float]]:
    """(memory id, cosine) of the nearest rows of ``source`` ("vectors", "memories",
    "events"), without reading the records."""
    return store.search_memory_ids(q_vec, source, top_k=top_k, modality=modality, **_scope_args(scope))


def semantic_candidates(store: QueryStore, q_vec: np.ndarray, scope: Scope, settings: RetrievalSettings, k: int) -> list[str]:
    """Memory ids worth reading for text search, best first: the memories owning the nearest
    fine-grained vectors, the nearest memories by v_k and the nearest summaries."""
    ids = [m for m, _ in nearest_memory_ids(store, q_vec, "vectors", max(settings.search_candidates, k), scope)]
    ids += [m for m, _ in nearest_memory_ids(store, q_vec, "memories", max(settings.recall_top_k, k // 4 or 1), scope)]
    ids += [m for m, _ in nearest_memory_ids(store, q_vec, "events", max(settings.fast_top_k, k // 4 or 1), scope)]
    return list(dict.fromkeys(ids))


class DetailedRecall:
    """Ψ_detailed for VIDEO, AUDIO and SUMMARY questions (cross-modal ones go to
    :mod:`retrieval.association`)."""

    def __init__(self, store: QueryStore, scorer: TextScorer, settings: RetrievalSettings,
                 words: WordCandidates | None = None) -> None:
        self.store = store
        self.scorer = scorer
        self.settings = settings
        self.words = words  # memories found by their words too (retrieval/word_candidates.py)

    def recall(
        self, analysis: QueryAnalysis, q_vec: np.ndarray, scope: Scope, reader: MemoryReader
    ) -> Recall:
        s = self.settings
        k = s.recall_top_k
        qt = analysis.query_type
        feature_ids: list[str] = []
        best: float | None = None
        if qt is QueryType.VIDEO:
            hits = nearest_memory_ids(self.store, q_vec, "vectors", k, scope, modality="visual")
            if "speech" in analysis.preferred_modalities:  # it names someone: look in what was said too
                hits += nearest_memory_ids(self.store, q_vec, "vectors", k, scope, modality="speech")
                hits.sort(key=lambda h: -h[1])
                hits = hits[:k]
        elif qt is QueryType.AUDIO:
            # "speech": transcript vectors (text embedders); "audio": raw sound (ImageBind)
            hits = nearest_memory_ids(self.store, q_vec, "vectors", k, scope, modality="speech")
            hits += nearest_memory_ids(self.store, q_vec, "vectors", k, scope, modality="audio")
            # "sound": descriptions of what was heard besides words ("music playing")
            hits += nearest_memory_ids(self.store, q_vec, "vectors", k, scope, modality="sound")
            hits.sort(key=lambda h: -h[1])
            hits = hits[:k]
        else:
            hits = nearest_memory_ids(self.store, q_vec, "memories", k, scope)
        if hits:
            best = float(hits[0][1])
            feature_ids = [mid for mid, _ in hits]

        if qt is QueryType.VIDEO and best is not None and best >= s.visual_fallback_sim:
            route, ids = "feature", feature_ids
        else:
            route = "text-fallback" if qt is QueryType.VIDEO else "feature+text"
            ids = list(dict.fromkeys(feature_ids + semantic_candidates(self.store, q_vec, scope, s, k)))
        ids = ids[: s.search_max_memories]
        if self.words is not None:  # sentences heard too badly for their vectors to be near
            ids = list(dict.fromkeys(ids + self.words.find(analysis, scope)))
        ids += position_memory_ids(self.store, scope, analysis, reader)
        units = reader.units(ids, self.scorer.reuse_visual_vectors, scope)
        ranked = apply_position(self.scorer.rank(analysis, q_vec, units), analysis, reader, scope)
        if analysis.asks_text:
            ranked = modality_first(ranked, ("ocr",), s, analysis)
        return Recall(units=ranked, route=route, best_feature_sim=best, notes={"memories": len(ids)})


def with_sentences_of(
    recall: Recall, memory_ids: Sequence[str], analysis: QueryAnalysis, q_vec: np.ndarray, scope: Scope,
    reader: MemoryReader, scorer: TextScorer, holds: Callable[[str], bool], at: int = SENTENCES_AT,
    within: int = SENTENCES_WITHIN, found_by: str = "",
) -> int:
    """Put the sentences of ``memory_ids`` that ``holds`` accepts into ``recall`` at rank ``at``
    (ranked among themselves), unless already within its first ``within`` units: sentences
    found by something other than their likeness to the question (the values a
    multiple-choice question gives), which the answer and re-listening read only near the top.
    ``found_by`` marks them (:attr:`Unit.found_by`) to be heard again even when they bear on
    the question by none of its words. Returns how many were moved up or added."""
    top = {u.key: u for u in recall.units[:within]}
    said = [u for u in reader.units(memory_ids, scorer.reuse_visual_vectors, scope)
            if u.modality == "speech" and holds(u.text)]
    if found_by:
        for u in said:
            (top.get(u.key) or u).found_by = found_by  # one already near the top is marked where it is
    fresh = [u for u in said if u.key not in top]
    if not fresh:
        return 0
    ranked = apply_position(scorer.rank(analysis, q_vec, fresh), analysis, reader, scope)
    moved = {u.key for u in ranked}
    rest = [u for u in recall.units if u.key not in moved]
    at = min(at, len(rest))
    recall.units[:] = rest[:at] + ranked + rest[at:]
    return len(ranked)


def modality_first(
    units: list[Unit], modalities: Sequence[str], settings: RetrievalSettings, analysis: QueryAnalysis
) -> list[Unit]:
    """The relevant units of ``modalities`` first (in rank order), then the rest.

    Used when a question asks for written text: "what is written on the sign at the
    station" must be answered by the on-screen text of the station stream, even though the
    speech there says "station" and so matches the question's words better.
    """
    first = [u for u in units if u.modality in modalities and relevant(u, settings, analysis)]
    if not first:
        return units
    chosen = {id(u) for u in first}
    return first + [u for u in units if id(u) not in chosen]


def top_distinct(units: Sequence[Unit], n: int) -> list[Unit]:
    """The best ``n`` units, skipping repeats of the same text in the same memory."""
    out: list[Unit] = []
    seen: set[tuple[str, str]] = set()
    for u in units:
        key = (u.memory_id, u.text.lower())
        if key in seen:
            continue
        seen.add(key)
        out.append(u)
        if len(out) >= n:
            break
    return out
