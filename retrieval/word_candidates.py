"""Memories found by their words as well as by their vectors (hybrid candidate search).

Detailed recall and Search re-rank the memories that the nearest vectors point to. A sentence
the recogniser heard badly ("The flow ashore is in room pre-tweil." for "The flower show is in
room three twelve.") lies far from its question in embedding space, so no nearest vector leads
to it, yet its words still hold the question's, exactly or by sound ("flow ashore" ~ "flower
show", see ``detailed.fuzzy_found``). So the words of every memory in scope are scanned as
well, and the memories holding most of the question's content words join the candidates. A
question about text on screen ("what was written on screen in garden-cam?") has every memory
with on-screen text in scope as a candidate (those holding the question's words first): such
memories are few, and the question's words rarely say what the text is.

Scanning reads each memory's transcript and on-screen text once per process (kept per stream
and read again when the stream's memory count or update time changes; a transcript replaced by
re-listening is seen when its stream next changes, and its memory is still found by its vectors
and by the old words); a scope holding more
than ``MAX_SCANNED_MEMORIES`` (1000) memories is not scanned (a large deployment relies on its
vectors, or on a full-text index of its own).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from episodic.core.interfaces import QueryStore
from episodic.core.query import Scope
from episodic.retrieval.detailed import fuzzy_found
from episodic.retrieval.query_analysis import QueryAnalysis, content_terms, overlap, term_set
from episodic.retrieval.text_match import number_keys

# beyond this a scope is searched by its vectors alone: matching by sound costs ≈ 0.05 ms per
# sentence on this CPU once its words are cached (0.3 ms before), so 1000 memories (≈ 3000
# sentences) stay near a tenth of a second per question
MAX_SCANNED_MEMORIES = 1000
WORD_CANDIDATES = 6  # memories added per question
MIN_SHARE = 0.5  # at least half the question's content words, exactly or by sound
VALUE_CANDIDATES = 4  # memories added for saying one of the given values


@dataclass(frozen=True)
class _Text:
    memory_id: str
    t_start: float
    t_end: float
    text: str
    terms: frozenset[str]
    on_screen: bool = False

    def overlaps(self, scope: Scope) -> bool:
        return not ((scope.t_min is not None and self.t_end < scope.t_min)
                    or (scope.t_max is not None and self.t_start > scope.t_max))


def _heard_terms(analysis: QueryAnalysis, t: _Text) -> set[str]:
    """The text's terms with the question's words it holds only by sound ("flow ashore")."""
    found = set(t.terms)
    missing = [x for x in analysis.terms if x not in found]
    if missing:
        found |= fuzzy_found(analysis.question, missing, t.text, found)
    return found


def _question_share(analysis: QueryAnalysis, t: _Text) -> float:
    """The share of the question's content words the text holds, exactly or by sound."""
    return overlap(analysis.terms, _heard_terms(analysis, t)) if analysis.terms else 0.0


def _first_memories(ranked: Sequence[tuple], limit: int) -> list[str]:
    """The memory ids (each tuple's last item) of the best-sorted tuples, each once."""
    return list(dict.fromkeys(row[-1] for row in sorted(ranked)))[:limit]


def given_values(options: Sequence[str]) -> frozenset[str]:
    """The values the options give, when every one (at least two) is a value: "ten to five",
    "11:15" → {"4:50", "11:15"}; empty otherwise."""
    wanted = [number_keys(o) for o in options]
    if len(wanted) < 2 or not all(wanted):
        return frozenset()
    return frozenset().union(*wanted)


def option_words(options: Sequence[str]) -> list[frozenset[str]]:
    """Each option's content words ("the fuel dock" → {"fuel", "dock"}), when every one (at
    least two) has some; empty otherwise."""
    wanted = [frozenset(content_terms(o)) for o in options]
    if len(wanted) < 2 or not all(wanted):
        return []
    return wanted


def says_option_words(text: str, wanted: Sequence[frozenset[str]]) -> bool:
    """Whether a sentence says a word of one of the options (see :func:`option_words`)."""
    terms = term_set(text)
    return any(w & terms for w in wanted)


def says_one_of(text: str, keys: frozenset[str] | set[str]) -> bool:
    """Whether a sentence says one of the values ``keys`` (see :func:`said_values`)."""
    return bool(keys & said_values(text))


def said_values(text: str) -> set[str]:
    """The values a sentence may say, read the ways Whisper writes them ("450" may be 4:50,
    "4 or 6" 406, "quarter to seven" 6:45)."""
    return {t for t in term_set(text) if t[:1].isdigit()} | number_keys(text)


def lost_its_value(analysis: QueryAnalysis, text: str, terms: frozenset[str] | None = None) -> bool:
    """Whether a sentence holds some of the question's words (exactly or by sound) yet says no
    value at all: where a value question's answer may have been misheard as words (see
    :meth:`WordCandidates.find_values_lost`)."""
    if said_values(text):
        return False
    t = _Text("", 0.0, 0.0, text, frozenset(term_set(text)) if terms is None else terms)
    return _question_share(analysis, t) > 0.0


class WordCandidates:
    """The memories whose own words match a question best (see the module doc)."""

    def __init__(self, store: QueryStore) -> None:
        self.store = store
        self._texts: dict[str, tuple[tuple, list[_Text]]] = {}  # stream id → (version, texts)
        self._lock = threading.Lock()

    def find_values(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                    limit: int = VALUE_CANDIDATES) -> list[str]:
        """Memory ids whose sentences say one of the given values, when every option is one (a
        time, a number, a price: "ten to five", "4:50", "$12"), in time order; else empty. A
        sentence heard so badly that it shares no word with its question ("450 ohmaham and
        appointment with the Malantiyya." for "At four fifty, Omar has an appointment with the
        volunteer.") often keeps its number, and a question that gives the candidate values
        can find it by them. Sentences giving a value of something else are found too (the
        answer still weighs each by the question's words around it); those holding more of
        the question's words, exactly or by sound, come first."""
        keys = given_values(options)
        if not keys or limit <= 0:
            return []
        found = [
            (-_question_share(analysis, t), t.t_start, t.memory_id)
            for t in self._texts_in(scope)
            if not t.on_screen and says_one_of(t.text, keys)
        ]
        return _first_memories(found, limit)

    def find_options(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                     limit: int = VALUE_CANDIDATES) -> list[str]:
        """Memory ids whose sentences say words of the given options, when every option is a
        phrase with content words and none is a value (those are :meth:`find_values`'s).
        Asked when nothing recalled is about the question: "Amara moved the anchor over to the
        fuel dock earlier." heard as "Emerald move, then go over to the fuel harker here." keeps
        no word of "Where is the anchor now?" but still says "fuel" of "fuel dock". Sentences
        holding more of the question's words (exactly or by sound) come first; then those that
        say an option only in part (the rest of it misheard as the question's words may be),
        before those saying one whole and clearly (most likely about something else); then
        time order."""
        wanted = option_words(options)
        if not wanted or given_values(options) or limit <= 0:
            return []
        found = []
        for t in self._texts_in(scope):
            said = 0.0 if t.on_screen else max(len(w & t.terms) / len(w) for w in wanted)
            if said > 0.0:
                found.append((-_question_share(analysis, t), said >= 1.0, t.t_start, t.memory_id))
        return _first_memories(found, limit)

    def find_values_lost(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                         limit: int = VALUE_CANDIDATES) -> list[str]:
        """Memory ids whose sentences hold some of the question's words yet say no value at
        all, when every option is a value. Asked when nothing recalled is about the question:
        "The night train is in room two oh eight." heard as "The height really is in room to
        head." keeps "room" but lost its number to words, so neither its vector nor the given
        values lead to it, and a sentence about a room that names none is where the asked-for
        number most likely went. Sentences holding more of the question's words (exactly or by
        sound) come first, then time order."""
        if not given_values(options) or not analysis.terms or limit <= 0:
            return []
        found = [
            (-_question_share(analysis, t), t.t_start, t.memory_id)
            for t in self._texts_in(scope)
            if not t.on_screen and lost_its_value(analysis, t.text, t.terms)
        ]
        return _first_memories(found, limit)

    def _stream_texts(self, stream_id: str, version: tuple) -> list[_Text]:
        with self._lock:
            cached = self._texts.get(stream_id)
        if cached is not None and cached[0] == version:
            return cached[1]
        texts: list[_Text] = []
        for m in self.store.list_memories(stream_id, with_vectors=False):
            for piece in m.transcript:
                if piece.text.strip():
                    texts.append(_Text(m.id, m.t_start, m.t_end, piece.text, frozenset(term_set(piece.text))))
            ocr = m.ocr_text.strip()
            if ocr:
                texts.append(_Text(m.id, m.t_start, m.t_end, ocr, frozenset(term_set(ocr)), on_screen=True))
        with self._lock:
            self._texts[stream_id] = (version, texts)
        return texts

    def find(self, analysis: QueryAnalysis, scope: Scope, limit: int = WORD_CANDIDATES) -> list[str]:
        """Memory ids, best first, whose sentences hold at least ``MIN_SHARE`` of the
        question's content words (exactly or by sound); empty when the question has none or
        the scope is too large to scan."""
        terms: Sequence[str] = analysis.terms
        screen = bool(getattr(analysis, "asks_text", False))
        if not (terms or screen) or limit <= 0:
            return []
        best: dict[str, float] = {}
        for t in self._texts_in(scope):
            if screen and t.on_screen:
                # "what was written on screen?": every memory with text shown is a
                # candidate (they are few), those holding the question's words first
                share = 1.0 + (overlap(terms, set(t.terms)) if terms else 0.0)
                best[t.memory_id] = max(best.get(t.memory_id, 0.0), share)
                continue
            if not terms:
                continue
            share = overlap(terms, _heard_terms(analysis, t))
            if share >= MIN_SHARE and share > best.get(t.memory_id, 0.0):
                best[t.memory_id] = share
        return sorted(best, key=lambda m: -best[m])[:limit]

    def _texts_in(self, scope: Scope) -> list[_Text]:
        """Every sentence and on-screen text of the memories in ``scope`` (none when the scope
        holds more than ``MAX_SCANNED_MEMORIES`` memories)."""
        streams = [s for s in self.store.list_streams()
                   if scope.stream_ids is None or s.stream_id in scope.stream_ids]
        if sum(s.memories for s in streams) > MAX_SCANNED_MEMORIES:
            return []
        return [t for info in streams
                for t in self._stream_texts(info.stream_id, (info.memories, info.updated_at, info.t_end))
                if t.overlaps(scope)]
