"""What the rule-based answerers (reasoning/structured.py, reasoning/time_answers.py) share: how
a phrase matches evidence units, where candidate sentences come from, reading a stream's
sentences and memories, naming streams, and turning option scores into a multiple-choice
:class:`~reasoning.answer.Draft`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from episodic.config import RetrievalSettings
from episodic.core.interfaces import QueryStore
from episodic.core.query import QueryType, Scope
from episodic.reasoning.answer import MARGIN_FULL, NO_OPTION_SUPPORT, Draft
from episodic.reasoning.evidence import split_sentences
from episodic.reasoning.model_reply import LETTERS
from episodic.retrieval.detailed import (
    MemoryReader,
    TextScorer,
    Unit,
    fuzzy_found,
    nearest_memory_ids,
    units_of,
)
from episodic.retrieval.guess_match import DescriberVocabulary
from episodic.retrieval.query_analysis import STOPWORDS, QueryAnalysis, content_terms
from episodic.retrieval.text_match import canonical_tokens
from episodic.retrieval.value_kinds import carried_kinds, kind_overlap, with_kinds

COS_LO, COS_HI = 0.2, 0.65  # option/anchor cosine → match, ramped
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z0-9\"'])")
GENERIC_STREAM_WORDS = frozenset({"cam", "camera", "stream", "feed", "video", "recording", "clip", "the", "a"})


def cosine_ramp(x: float, lo: float = COS_LO, hi: float = COS_HI) -> float:
    return min(1.0, max(0.0, (x - lo) / (hi - lo)))

def stream_words(stream_id: str) -> list[str]:
    """"lobby-cam" → [lobby, cam]; "cam2" → [cam, 2]."""
    parts = re.split(r"[^a-z0-9]+|(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])", stream_id.lower())
    return [canonical_tokens(p)[0] if canonical_tokens(p) else p for p in parts if p]


def _names_stream_word(said: str, word: str) -> bool:
    """Whether a word of a question or option (``said``) names a stream's ``word``: the same,
    longer ("camera" for "cam", "gardens" for "garden"), or a shortening of four letters or
    more ("lib" does not, "libr" does); never a function word that merely begins the name:
    "the" is no "theatre-cam", "for" no "forest-cam", "can" no "canteen-cam"."""
    if said == word:
        return True
    if len(word) >= 3 and len(said) >= 3 and said.startswith(word):
        return True
    return len(said) >= 4 and said not in STOPWORDS and word.startswith(said)


def option_streams(options: Sequence[str], streams: Sequence[str]) -> list[str | None]:
    """For each option, the stream it names by the stream's distinctive words, or None."""
    words = {s: stream_words(s) for s in streams}
    everywhere = set.intersection(*(set(w) for w in words.values())) if words else set()
    out: list[str | None] = []
    for o in options:
        said = canonical_tokens(o)
        best, best_hits, tie = None, 0, False
        for s, ws in words.items():
            distinct = [w for w in ws if w not in everywhere and w not in GENERIC_STREAM_WORDS] or [
                w for w in ws if w not in everywhere
            ]
            hits = sum(1 for w in distinct if any(_names_stream_word(x, w) for x in said))
            if hits > best_hits:
                best, best_hits, tie = s, hits, False
            elif hits and hits == best_hits:
                tie = True
        out.append(None if tie else best)
    return out


def offered_streams(analysis: QueryAnalysis, options: Sequence[str], streams: Sequence[str]) -> list[str | None]:
    """:func:`option_streams`, unless the question names one of ``streams`` itself and does not
    ask for a stream: "What is the main subject of station-cam: a train station, an office
    meeting, boats in a harbour?" offers topics that share a word with the streams' names
    ("station", "harbour"), not the streams. "Which camera …?", "In which recording …?" and
    questions naming no stream, or two, keep the options' streams."""
    if getattr(analysis.shape, "asks_stream", False) or len(streams) < 2:
        return option_streams(options, streams)
    if StructuredBase.named_stream(analysis.question, streams) is not None:
        return [None] * len(options)
    return option_streams(options, streams)


class StructuredBase:
    """The shared reads and scoring of the structured answerers."""

    def __init__(self, store: QueryStore, scorer: TextScorer, settings: RetrievalSettings) -> None:
        self.store = store
        self.scorer = scorer
        self.settings = settings
        self.vocabulary = DescriberVocabulary(store, scorer)  # what the describer can name

    # -- shared ------------------------------------------------------------------------------
    def _match(self, text: str, units: Sequence[Unit], terms: Sequence[str] | None = None,
               raised: bool = False) -> np.ndarray:
        """How well ``text`` matches each unit: its content words (or the given ``terms``)
        found there (exactly or tolerantly) or its cosine, whichever is higher; ``raised``: the
        share of words found raised by the cosine as far as the words leave room (1 - (1 -
        words)(1 - cosine)), so that a sentence holding one of the things asked about and
        meaning something near it comes before one that only means something near it.

        An anchor ("while someone talked about the time of the story hour") is found that way:
        "Act 740 the story of Agate's loading." (story: 0.33, raised by its cosine to 0.48)
        before "We should be finished before the afternoon." (the cosine alone: 0.42), which
        the higher of the two chose. Where a match is compared with fixed bars after discounts
        for a missing thing (:func:`reasoning.time_answers.holders_first`), the higher of the
        two stays: raised, a name alone ("Omar keeps the reading lamp …" for "Omar and the
        novels") would clear the bar its discount is meant to keep it under."""
        if not units:
            return np.zeros(0)
        vecs = self.scorer.embed([text] + [u.scored_text for u in units])
        cos = vecs[1:] @ vecs[0]
        # "the colour of Tom's spade" is partly found in any sentence that holds a colour
        terms, kinds = with_kinds(content_terms(text) if terms is None else list(terms), text)
        out = np.zeros(len(units))
        for i, u in enumerate(units):
            lex = 0.0
            if terms:
                found = u.terms | fuzzy_found(text, terms, u.text, u.terms)
                if kinds:
                    found = found | (carried_kinds(u.text) & kinds)
                lex = kind_overlap(terms, found)
            r = cosine_ramp(float(cos[i]))
            out[i] = 1.0 - (1.0 - lex) * (1.0 - r) if raised else max(lex, r)
        return out

    def _candidates(self, text: str, scope: Scope, reader: MemoryReader, extra: Sequence[Unit]) -> list[Unit]:
        """Units (sentences) near ``text`` by feature search, with ``extra`` (recall's)."""
        vec = self.scorer.embed([text])[0]
        k = max(self.settings.recall_top_k, 8)
        ids = [m for m, _ in nearest_memory_ids(self.store, vec, "vectors", k, scope)]
        ids += [u.memory_id for u in extra]
        units = reader.units(list(dict.fromkeys(ids)), self.scorer.reuse_visual_vectors, scope)
        out: list[Unit] = []
        for u in units:
            if u.modality != "summary":
                out.extend(split_sentences(u, _SENTENCE_END))
        return out

    def units_between(self, stream_id: str, t0: float, t1: float, reader: MemoryReader) -> list[Unit]:
        """Every unit (sentence, key frame, sign, sound) of one stream's memories between t0 and t1."""
        return self._stream_units(stream_id, t0, t1, reader)

    def _stream_units(self, stream_id: str, t0: float, t1: float, reader: MemoryReader) -> list[Unit]:
        out: list[Unit] = []
        for m in self.store.list_memories(stream_id, t_min=t0, t_max=t1, with_vectors=True):
            reader.add(m)
            # the request's own copy, where one was read before: it holds what was heard again
            # for this question (a hinted transcript the store does not keep)
            m = reader.memory(m.id) or m
            for u in units_of(m, None, self.scorer.reuse_visual_vectors):
                out.extend(split_sentences(u, _SENTENCE_END))
        return out

    @staticmethod
    def _wanted_modalities(analysis: QueryAnalysis) -> tuple[str, ...]:
        if analysis.query_type is QueryType.AUDIO:
            # "what was mentioned after …" is about words; sounds only when it names one
            return ("speech", "sound") if getattr(analysis, "asks_sound", False) else ("speech",)
        if analysis.query_type is QueryType.VIDEO:
            return ("ocr", "visual") if not analysis.asks_text else ("ocr",)
        # "what was mentioned before …" is about words here too; sounds only when it names one
        return ("speech", "ocr", "sound") if getattr(analysis, "asks_sound", False) else ("speech", "ocr")

    def _choice_by_match(self, options: Sequence[str], units: Sequence[Unit], confidence: float,
                         caps: dict[str, float], weights: np.ndarray | None = None,
                         bonus: Sequence[float] = ()) -> Draft:
        """Each option scored by its best-matching unit (times ``weights``, plus the option's
        ``bonus``), its support that match times ``confidence`` (how far the units themselves
        are to be trusted)."""
        scores, support, evidence = [], [], []
        for k, o in enumerate(options):
            mm = self._match(o, units)
            w = mm * weights if weights is not None else mm
            j = int(np.argmax(w))
            scores.append(float(w[j]) + (bonus[k] if k < len(bonus) else 0.0))
            support.append(float(mm[j]) * confidence)
            evidence.append([units[j]])
        return self._choice(options, scores, support, evidence, caps)

    def _eliminated(self, options: Sequence[str], left: int, support: float, evidence: Sequence[Unit],
                    caps: dict[str, float], cap: float = 1.0) -> Draft:
        """Option ``left`` chosen because every other was ruled out, at ``support`` (a guess)."""
        scores = [1.0 if k == left else 0.0 for k in range(len(options))]
        supports = [support if k == left else 0.0 for k in range(len(options))]
        caps = {**caps, "eliminated": float(len(options) - 1)}
        return self._choice(options, scores, supports, [list(evidence) for _ in options], caps, cap)

    def _choice(self, options: Sequence[str], scores: Sequence[float], support: Sequence[float],
                evidence: Sequence[Sequence[Unit]], caps: dict[str, float], cap: float = 1.0) -> Draft:
        order = sorted(range(len(options)), key=lambda i: -scores[i])
        best = order[0]
        margin = scores[best] - (scores[order[1]] if len(order) > 1 else 0.0)
        conf = support[best] * min(1.0, 0.5 + 0.5 * margin / MARGIN_FULL)
        if scores[best] <= 0:
            conf = min(conf, NO_OPTION_SUPPORT)
        caps = {**caps, "support": round(float(support[best]), 3), "margin": round(float(margin), 3)}
        return Draft(answer=f"{LETTERS[best]}. {options[best]}", confidence=round(float(min(conf, cap)), 4),
                     choice_index=best, support=list(evidence[best]), source="choice", caps=caps)

    @staticmethod
    def named_stream(question: str, streams: Sequence[str]) -> str | None:
        """The one stream the question names by its distinctive words ("in garden-cam")."""
        if len(streams) < 1:
            return None
        if len(streams) == 1:
            said = set(canonical_tokens(question.replace("-", " ")))
            return streams[0] if said & set(stream_words(streams[0])) else None
        return option_streams([question.replace("-", " ")], streams)[0]

    @classmethod
    def looked_at(cls, question: str, streams: Sequence[str]) -> list[str]:
        """The stream the question names, else all of ``streams``: where to look."""
        named = cls.named_stream(question, streams)
        return [named] if named else list(streams)

    def _memories(self, streams: Sequence[str], scope: Scope) -> list:
        out = []
        for sid in streams:
            out.extend(self.store.list_memories(sid, t_min=scope.t_min, t_max=scope.t_max))
        return out

