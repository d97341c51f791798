"""Questions answered from the structure of the memory rather than from one piece of text:

* **which stream** – options that name streams ("the lobby camera", "Camera 2") are matched
  to stream ids by their distinctive words ("lobby-cam" → lobby; "cam-2" → 2), and each
  stream is scored by its own best evidence for the question (searched per stream, so a
  stream that ranks second overall is not missed);
* **order** – "what was said right after X" finds the anchor X (its best-matching sentence)
  and answers with the nearest following (or preceding) evidence in the same stream, in
  time order; "which happened first, A or B" (or options with "…first?") compares the times
  of each candidate's best match, and so does "was A mentioned before or after B?";
* **how many times** – counts distinct moments that hold the question's words: mentions in
  speech (each occurrence), and time-separated appearances elsewhere;
* **what was pictured** – "which of these was shown in X?" looks at every key frame of the
  stream: an option said in a description wins, otherwise the classifier's unsure guesses
  choose (retrieval/guess_match.py), at a guess's confidence. "Which camera showed X?" falls
  back to the same guesses when no stream's evidence names X.

Each returns a :class:`~reasoning.answer.Draft` (with its signals in ``caps``) or None when
the question does not have that shape or the memory cannot place it; the ordinary answer
path then answers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from episodic.config import RetrievalSettings
from episodic.core.interfaces import QueryStore
from episodic.core.query import QueryType, Scope
from episodic.reasoning.answer import MARGIN_FULL, NO_OPTION_SUPPORT, Draft
from episodic.reasoning.distinct_picture import StandOut, standout_answer
from episodic.reasoning.evidence import split_sentences
from episodic.reasoning.evidence_fit import holds_loosely, key_coverage
from episodic.reasoning.model_reply import LETTERS
from episodic.reasoning.stream_gist import (
    TOPIC_CONFIDENCE,
    people_answer,
    topic_answer,
    topic_words,
)
from episodic.retrieval.detailed import (
    MemoryReader,
    TextScorer,
    Unit,
    fuzzy_found,
    nearest_memory_ids,
    units_of,
)
from episodic.retrieval.guess_match import (
    GUESS_CAP,
    PICTURED,
    about_pictures,
    guess_support,
    subject_phrase,
    visual_units,
)
from episodic.retrieval.query_analysis import QueryAnalysis, content_terms, overlap, stem
from episodic.retrieval.text_match import canonical_tokens

ANCHOR_MIN = 0.35  # an anchor matched worse than this is not trusted to place the answer
NEIGHBOUR_WINDOW_S = 60.0  # how far after (before) the anchor the next evidence is looked for
ORDER_WEIGHTS = (1.0, 0.6, 0.35, 0.2)  # the 1st, 2nd, … following unit
MATCH_MIN = 0.3  # a candidate matched worse than this has no place in time
COS_LO, COS_HI = 0.2, 0.65  # option/anchor cosine → match, ramped
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z0-9\"'])")
GENERIC_STREAM_WORDS = frozenset({"cam", "camera", "stream", "feed", "video", "recording", "clip", "the", "a"})
COUNT_GAP_S = 3.0  # appearances closer than this are one moment
UNINFORMATIVE_SOUNDS = ("noise", "silence")  # kinds that say little about what was heard
SOUND_CONFIDENCE = 0.7  # a sound label from feature rules: right more often than not, not always
TOPIC_WORDS_FOR_CHOICE = 10  # "what is X mostly about: A, B or C?": options meet this many words
GUESS_FALLBACK = 0.3  # which stream: below this support the key-frame guesses are asked
_ANCHORED = re.compile(r"\b(?:while|when|during|after|before)\b", re.I)
DARK_SLACK_S = 1.0  # a sentence this close to a dark key frame's span was said during it
DARK_SPEECH_CONFIDENCE = 0.7  # the words themselves may be misheard
_DARK = re.compile(r"\b(?:dark|black|blank|nothing (?:was )?(?:visible|shown|on screen))\b", re.I)


# words of "how many separate times / on how many occasions / how frequently / count the
# mentions …" that say how to count, not what (stems, as QueryAnalysis.terms holds them)
_COUNT_WORDS = frozenset(stem(w) for w in (
    "time", "times", "often", "frequently", "frequent", "occasion", "occasions", "instance", "instances",
    "mention", "mentions", "count", "separate", "distinct", "different", "individual", "total", "number"))
# option words that say "earlier" / "later" (for "was A mentioned before or after B?")
_ORDER_SAID = (re.compile(r"\b(?:before|earlier|first|sooner|prior)\b", re.I),
               re.compile(r"\b(?:after|later|afterwards|second|next)\b", re.I))


def _ramp(x: float, lo: float = COS_LO, hi: float = COS_HI) -> float:
    return min(1.0, max(0.0, (x - lo) / (hi - lo)))


def clauses(unit: Unit) -> list[Unit]:
    """A speech unit split at commas and semicolons into clauses of at least three words
    (times shared out by length); the unit itself when it has no such split."""
    if unit.modality != "speech":
        return [unit]
    parts = [p.strip() for p in re.split(r"[,;]\s+", unit.text) if p.strip()]
    merged: list[str] = []
    for p in parts:
        if merged and len(p.split()) < 3:
            merged[-1] += ", " + p
        else:
            merged.append(p)
    if len(merged) <= 1:
        return [unit]
    total = sum(len(p) for p in merged)
    span = max(unit.t_end - unit.t_start, 0.0)
    out, t = [], unit.t_start
    for p in merged:
        dt = span * len(p) / total
        out.append(Unit(unit.stream_id, unit.memory_id, t, t + dt, unit.modality, p,
                        snippet_uri=unit.snippet_uri, context_terms=unit.context_terms))
        t += dt
    return out


def stream_words(stream_id: str) -> list[str]:
    """"lobby-cam" → [lobby, cam]; "cam2" → [cam, 2]."""
    parts = re.split(r"[^a-z0-9]+|(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])", stream_id.lower())
    return [canonical_tokens(p)[0] if canonical_tokens(p) else p for p in parts if p]


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
            hits = sum(
                1
                for w in distinct
                if any(x == w or (len(w) >= 3 and len(x) >= 3 and (x.startswith(w) or w.startswith(x))) for x in said)
            )
            if hits > best_hits:
                best, best_hits, tie = s, hits, False
            elif hits and hits == best_hits:
                tie = True
        out.append(None if tie else best)
    return out


def asks_pictured(analysis: QueryAnalysis) -> bool:
    """"Which of these was shown in X?", "what did the photo in X show?": a question about what
    a stream showed as a whole (answered here only when options are given), with no moment to anchor it ("while …", "after …"), no
    colour, number or name asked for, and no order, count, stream or sound shape."""
    shape = analysis.shape
    return (
        about_pictures(analysis)
        # "…a picture nobody talked about: what did it show?" names speech too, yet asks
        # about the picture: cross-modal only when a moment anchors it (_ANCHORED)
        and analysis.query_type in (QueryType.VIDEO, QueryType.VIDEO_AUDIO)
        and bool(PICTURED.search(analysis.question))
        and not _ANCHORED.search(analysis.question)
        and shape.focus == "any"
        and not (shape.order or shape.counts or shape.asks_stream or shape.sound or shape.gist)
    )


def dark_spans(memories: Sequence) -> list[tuple[str, float, float]]:
    """(stream id, start, end) of each key frame the quality gate found dark, up to the next
    key frame (or the memory's end)."""
    out: list[tuple[str, float, float]] = []
    for m in memories:
        frames = sorted(m.frames, key=lambda f: f.t)
        for i, f in enumerate(frames):
            if getattr(f, "quality", "") == "dark":
                t1 = frames[i + 1].t if i + 1 < len(frames) else m.t_end
                out.append((m.stream_id, f.t, t1))
    return out


class StructuredAnswerer:
    def __init__(self, store: QueryStore, scorer: TextScorer, settings: RetrievalSettings) -> None:
        self.store = store
        self.scorer = scorer
        self.settings = settings

    # -- shared ------------------------------------------------------------------------------
    def _match(self, text: str, units: Sequence[Unit]) -> np.ndarray:
        """How well ``text`` matches each unit: its distinctive words found there (exactly or
        tolerantly) or its cosine, whichever is higher."""
        if not units:
            return np.zeros(0)
        vecs = self.scorer.embed([text] + [u.scored_text for u in units])
        cos = vecs[1:] @ vecs[0]
        terms = content_terms(text)
        out = np.zeros(len(units))
        for i, u in enumerate(units):
            lex = 0.0
            if terms:
                found = u.terms | fuzzy_found(text, terms, u.text, u.terms)
                lex = overlap(terms, found)
            out[i] = max(lex, _ramp(float(cos[i])))
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

    def _stream_units(self, stream_id: str, t0: float, t1: float, reader: MemoryReader) -> list[Unit]:
        out: list[Unit] = []
        for m in self.store.list_memories(stream_id, t_min=t0, t_max=t1, with_vectors=True):
            reader.add(m)
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

    # -- which stream ------------------------------------------------------------------------
    def which_stream(self, analysis: QueryAnalysis, q_vec: np.ndarray, options: Sequence[str],
                     scope: Scope, reader: MemoryReader) -> Draft | None:
        if not options:
            return None
        streams = reader.streams_in(scope)
        named = option_streams(options, streams)
        if len({s for s in named if s is not None}) < 2:
            return None
        best_units: dict[str, list[Unit]] = {}
        for sid in {s for s in named if s is not None}:
            sub = Scope(stream_ids=(sid,), t_min=scope.t_min, t_max=scope.t_max)
            ids = [m for m, _ in nearest_memory_ids(self.store, q_vec, "vectors", self.settings.recall_top_k, sub)]
            ids += [m for m, _ in nearest_memory_ids(self.store, q_vec, "events", self.settings.fast_top_k, sub)]
            units = reader.units(list(dict.fromkeys(ids)), self.scorer.reuse_visual_vectors, sub)
            best_units[sid] = self.scorer.rank(analysis, q_vec, units) if units else []
        scores, support, evidence = [], [], []
        for sid in named:
            ranked = best_units.get(sid or "", [])
            top = ranked[0] if ranked else None
            scores.append(top.score if top else 0.0)
            cover = overlap(analysis.terms, top.support_terms) if top is not None else 0.0
            support.append(min(1.0, cover, _ramp(top.cos, self.settings.support_cos_min,
                                                 self.settings.support_cos_full) if top else 0.0)
                           if analysis.terms else (_ramp(top.cos) if top else 0.0))
            evidence.append(ranked[:3])
        caps = {"route": 0.0, "streams_named": float(sum(s is not None for s in named))}
        if max(support, default=0.0) < GUESS_FALLBACK and about_pictures(analysis):
            guessed = self._stream_guesses(analysis, named, scope)
            if guessed is not None:
                scores, support, evidence, best = guessed
                caps["guess"] = round(best, 3)
        draft = self._choice(options, scores, support, evidence, caps)
        draft.caps["key_terms"] = key_coverage(analysis, [u for e in evidence for u in e])
        draft.confidence = min(draft.confidence, max(draft.caps["key_terms"], NO_OPTION_SUPPORT))
        return draft

    # -- what was pictured ---------------------------------------------------------------------
    def _visual_units(self, streams: Sequence[str], scope: Scope) -> list[Unit]:
        return visual_units(self.store, streams, scope, self.scorer.reuse_visual_vectors)

    def _stream_guesses(self, analysis: QueryAnalysis, named: Sequence[str | None], scope: Scope
                        ) -> tuple[list[float], list[float], list[list[Unit]], float] | None:
        """Per option (a stream), how strongly that stream's key-frame guesses resemble what the
        question asks about; None when no stream's guesses do."""
        phrase = subject_phrase(analysis.question, [s for s in named if s])
        if not phrase:
            return None
        scores, support, evidence = [], [], []
        for sid in named:
            units = self._visual_units([sid], scope) if sid else []
            g = guess_support([phrase], units, self.scorer)[0] if units else np.zeros(0)
            j = int(np.argmax(g)) if g.size else -1
            best = float(g[j]) if j >= 0 else 0.0
            scores.append(best)
            support.append(min(best, GUESS_CAP))
            evidence.append([units[j]] if best > 0 else [])
        if max(scores) <= 0.0:
            return None
        return scores, support, evidence, max(scores)

    def pictured(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                 reader: MemoryReader) -> Draft | None:
        """"Which of these was shown (in a picture) in X?": every key frame of the named stream
        (else of the scope) against the options: an option's words in a frame description
        (a label the describer was sure of) count fully, the classifier's guesses as guesses."""
        # an open "what did the picture show?" is not answered from guesses: textures are
        # guessed as confidently as pictures ("a shower curtain" at 0.7)
        if not options or not asks_pictured(analysis):
            return None
        streams = reader.streams_in(scope)
        if option_streams(options, streams).count(None) < len(options):
            return None  # the options are streams: which_stream's
        named = self.named_stream(analysis.question, streams)
        units = self._visual_units([named] if named else streams, scope)
        if not units:
            return None
        guessed = guess_support(options, units, self.scorer)
        option_terms = [content_terms(o) for o in options]
        shared = set.intersection(*(set(t) for t in option_terms)) if option_terms else set()
        scores, support, evidence, said = [], [], [], []
        for i in range(len(options)):
            distinct = [t for t in option_terms[i] if t not in shared]
            lex = np.array([overlap(distinct, u.terms) if distinct else 0.0 for u in units])
            both = np.maximum(lex, guessed[i])
            j = int(np.argmax(both))
            scores.append(float(both[j]))
            support.append(float(lex[j]) if lex[j] >= guessed[i][j] else min(float(guessed[i][j]), GUESS_CAP))
            said.append(float(lex[j]))
            evidence.append([units[j]] if both[j] > 0 else [])
        if max(scores) <= 0.0:
            return None
        best = int(np.argmax(scores))
        caps = {"route": 7.0, "frames": float(len(units)), "lexical": said[best]}
        if said[best] < 1.0:
            caps["guess"] = round(float(guessed[best].max()), 3)
        return self._choice(options, scores, support, evidence, caps)

    def pictured_open(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                      reader: MemoryReader) -> Draft | None:
        """"A picture was shown that nobody talked about: what did it show?" (no options): the
        guess that stands out in one stretch of the named stream (else of any stream in scope),
        hedged and at a guess's confidence (reasoning/distinct_picture.py)."""
        if options or not asks_pictured(analysis):
            return None
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        best: tuple[str, float, StandOut] | None = None
        for sid in [named] if named else streams:
            units = [u for m in self._memories([sid], scope)
                     for u in units_of(m, None, self.scorer.reuse_visual_vectors) if u.modality in ("visual", "ocr")]
            found = standout_answer(units)
            if found is not None and (best is None or found[1] > best[1]):
                best = found
        if best is None:
            return None
        answer, confidence, standout = best
        return Draft(answer=answer, confidence=round(confidence, 4), support=list(standout.units), source="extract",
                     caps={"route": 9.0, "guess": round(standout.p, 3), "span": 1.0})

    # -- order -------------------------------------------------------------------------------
    def next_to(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                scope: Scope, reader: MemoryReader) -> Draft | None:
        shape = analysis.shape
        if shape.order not in ("after", "before") or not shape.anchor:
            return None
        cands = self._candidates(shape.anchor, scope, reader, recall)
        if not cands:
            return None
        m = self._match(shape.anchor, cands)
        i = int(np.argmax(m))
        anchor, anchor_q = cands[i], float(m[i])
        if anchor_q < ANCHOR_MIN:
            return None
        # Whisper often joins two sentences with a comma ("Welcome to the hotel, breakfast is
        # at 815."): the anchor is then the clause that matches it, and the rest comes next
        inner = clauses(anchor)
        if len(inner) > 1:
            cm = self._match(shape.anchor, inner)
            k = int(np.argmax(cm))
            if cm[k] >= ANCHOR_MIN:
                following = inner[k + 1 :] if shape.order == "after" else inner[:k][::-1]
                anchor = inner[k]
                first = [u for u in following if len(u.text.split()) >= 3]
            else:
                first = []
        else:
            first = []
        wanted = self._wanted_modalities(analysis)
        lo, hi = anchor.t_start - NEIGHBOUR_WINDOW_S, anchor.t_end + NEIGHBOUR_WINDOW_S
        if scope.t_min is not None:
            lo = max(lo, scope.t_min)
        if scope.t_max is not None:
            hi = min(hi, scope.t_max)
        around = [u for u in self._stream_units(anchor.stream_id, lo, hi, reader)
                  if u.modality in wanted and u.text.strip().lower() != anchor.text.strip().lower()]
        mid = (anchor.t_start + anchor.t_end) / 2
        if shape.order == "after":
            seq = sorted((u for u in around if (u.t_start + u.t_end) / 2 > mid), key=lambda u: u.t_start)
        else:
            seq = sorted((u for u in around if (u.t_start + u.t_end) / 2 < mid), key=lambda u: -u.t_end)
        seq = [u for u in seq if not (u.t_start >= anchor.t_start - 0.05 and u.t_end <= anchor.t_end + 0.05
                                      and u.text in cands[i].text)]
        seq = list({(u.text, round(u.t_start, 2)): u for u in first + seq}.values())[: len(ORDER_WEIGHTS)]
        if not seq:
            return None
        caps = {"anchor": round(anchor_q, 3), "route": 1.0}
        if options:
            scores, support, evidence = [], [], []
            for o in options:
                mm = self._match(o, seq)
                w = np.array(ORDER_WEIGHTS[: len(seq)]) * mm
                j = int(np.argmax(w))
                scores.append(float(w[j]))
                support.append(float(mm[j]) * (ORDER_WEIGHTS[j] if j else 1.0))
                evidence.append([seq[j], anchor])
            return self._choice(options, scores, support, evidence, caps, cap=min(1.0, anchor_q + 0.3))
        nxt = seq[0]
        word = "after" if shape.order == "after" else "before"
        answer = f'{nxt.text.strip()} ({word} "{anchor.text.strip()}", {nxt.cite()})'
        conf = min(0.9, anchor_q)
        return Draft(answer=answer, confidence=round(conf, 4), support=[nxt, anchor], source="order",
                     caps={**caps, "span": 1.0, "key_terms": key_coverage(analysis, [nxt, anchor] + list(recall))})

    def which_first(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                    scope: Scope, reader: MemoryReader) -> Draft | None:
        shape = analysis.shape
        if shape.order not in ("first", "last"):
            return None
        relative = shape.relative and len(shape.compared) == 2
        compared = list(shape.compared) if relative else list(options) or list(shape.compared)
        if len(compared) < 2:
            return None
        placed: list[tuple[float, float, Unit | None]] = []  # (time, match, unit)
        for c in compared:
            cands = self._candidates(c, scope, reader, recall)
            m = self._match(c, cands)
            if len(m) == 0 or float(m.max()) < MATCH_MIN:
                placed.append((float("nan"), 0.0, None))
                continue
            j = int(np.argmax(m))
            placed.append((cands[j].t_start, float(m[j]), cands[j]))
        known = [i for i, p in enumerate(placed) if p[2] is not None]
        if not known:
            return None
        pick = (min if shape.order == "first" else max)(known, key=lambda i: placed[i][0])
        others = [placed[i][1] for i in known if i != pick]
        gap = min((abs(placed[pick][0] - placed[i][0]) for i in known if i != pick), default=0.0)
        sure = placed[pick][1] * (min(others) if others else 0.3) * (1.0 if gap >= 1.0 else 0.5)
        caps = {"route": 2.0, "placed": float(len(known)), "gap_s": round(gap, 2)}
        unit = placed[pick][2]
        assert unit is not None
        if relative:
            return self._before_or_after(options, placed, caps, sure)
        if options:
            scores = [1.0 if i == pick else 0.0 for i in range(len(options))]
            support = [sure if i == pick else 0.0 for i in range(len(options))]
            evidence = [[p[2]] if p[2] is not None else [] for p in placed]
            return self._choice(options, scores, support, evidence, caps)
        answer = f"{compared[pick]} ({unit.cite()})"
        return Draft(answer=answer, confidence=round(sure, 4), support=[unit], source="order",
                     caps={**caps, "span": 1.0})

    def _before_or_after(self, options: Sequence[str], placed: Sequence[tuple[float, float, Unit | None]],
                         caps: dict[str, float], sure: float) -> Draft | None:
        """"Was A mentioned before or after B?": "before" when A was placed first. Both must be
        found; with options, the one that says that order word (or its synonym)."""
        (ta, _, ua), (tb, _, ub) = placed[0], placed[1]
        if ua is None or ub is None:
            return None
        first = ta <= tb
        word = "before" if first else "after"
        units = [ua, ub]
        if options:
            says = _ORDER_SAID[0] if first else _ORDER_SAID[1]
            wanted = [says.search(o) is not None for o in options]
            if not any(wanted):
                return None
            scores = [1.0 if w else 0.0 for w in wanted]
            support = [sure if w else 0.0 for w in wanted]
            return self._choice(options, scores, support, [units for _ in options], caps)
        answer = f"{word} ({ua.cite()}; {ub.cite()})"
        return Draft(answer=answer, confidence=round(sure, 4), support=units, source="order", caps={**caps, "span": 1.0})

    # -- how many times ----------------------------------------------------------------------
    def count(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
              scope: Scope, reader: MemoryReader) -> Draft | None:
        """Distinct moments whose text mentions the thing asked about: each sentence of speech
        that mentions it (a misheard word counts, see :func:`reasoning.evidence_fit.holds_loosely`), and
        time-separated appearances elsewhere. A stream named in the question ("… in
        library-cam") is read whole; otherwise the moments near the thing are searched."""
        if not analysis.shape.counts:
            return None
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        of_streams = {w for sid in streams for w in stream_words(sid)} | {stem(w) for sid in streams for w in stream_words(sid)}
        terms = [t for t in analysis.terms if t not in _COUNT_WORDS and t not in of_streams]
        wanted = [t for t in getattr(analysis, "object_terms", []) if t in terms] or terms
        if not wanted:
            return None
        if named is not None:
            cands = self._stream_units(named, scope.t_min, scope.t_max, reader)
        else:
            cands = self._candidates(" ".join(terms), scope, reader, recall)
        moments: list[tuple[str, float, float, Unit]] = []
        mentions = 0
        seen: set[tuple[str, str, float]] = set()
        for u in sorted(cands, key=lambda u: (u.stream_id, u.t_start)):
            if u.modality == "summary":
                continue
            key = (u.stream_id, u.text.lower(), round(u.t_start, 1))
            if key in seen:
                continue
            seen.add(key)
            words = [stem(w) for w in canonical_tokens(u.text)]
            have = set(words) | fuzzy_found(analysis.question, wanted, u.text, u.terms)
            if not all(holds_loosely(t, have) for t in wanted):
                continue
            if u.modality == "speech":
                # one sentence is one moment: a loose match may hit twice in it ("mower … moor")
                mentions += 1
                moments.append((u.stream_id, u.t_start, u.t_end, u))
                continue
            last = next((mo for mo in reversed(moments) if mo[0] == u.stream_id and mo[3].modality != "speech"), None)
            if last is not None and u.t_start - last[2] <= COUNT_GAP_S:
                continue
            mentions += 1
            moments.append((u.stream_id, u.t_start, u.t_end, u))
        n = mentions
        support_units = [mo[3] for mo in moments]
        caps = {"route": 3.0, "moments": float(len(moments))}
        if options:
            values = []
            for o in options:
                nums = [t for t in canonical_tokens(o) if re.fullmatch(r"\d+", t)]
                once = re.search(r"\b(once|twice|thrice)\b", o, re.I)
                if nums:
                    values.append(int(nums[0]))
                elif once:
                    values.append({"once": 1, "twice": 2, "thrice": 3}[once.group(1).lower()])
                else:
                    values.append(0 if re.search(r"\b(never|none|no)\b", o, re.I) else None)
            scores = [0.0 if v is None else 1.0 / (1.0 + abs(v - n)) for v in values]
            support = [0.7 if v == n and n > 0 else 0.3 * s for v, s in zip(values, scores, strict=True)]
            evidence = [support_units[:3] for _ in options]
            return self._choice(options, scores, support, evidence, caps)
        if n == 0:
            return None
        answer = f"{n} time{'s' if n != 1 else ''} ({'; '.join(u.cite() for u in support_units[:5])})"
        return Draft(answer=answer, confidence=0.6, support=support_units, source="count",
                     caps={**caps, "span": 1.0})

    # -- a stream's sounds, topic and people ------------------------------------------------
    @staticmethod
    def named_stream(question: str, streams: Sequence[str]) -> str | None:
        """The one stream the question names by its distinctive words ("in garden-cam")."""
        if len(streams) < 1:
            return None
        if len(streams) == 1:
            said = set(canonical_tokens(question.replace("-", " ")))
            return streams[0] if said & set(stream_words(streams[0])) else None
        return option_streams([question.replace("-", " ")], streams)[0]

    def _memories(self, streams: Sequence[str], scope: Scope) -> list:
        out = []
        for sid in streams:
            out.extend(self.store.list_memories(sid, t_min=scope.t_min, t_max=scope.t_max))
        return out

    def sounds(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
               reader: MemoryReader) -> Draft | None:
        """"Besides speech, what could be heard (while the picture was dark)?": answered from
        the non-speech sounds of the named stream (else every stream in scope), those during
        dark frames when the question says so; the kinds that name something (music, an
        engine, applause) before plain noise, longer before shorter."""
        if not getattr(analysis.shape, "sound", False):
            return None
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        memories = self._memories([named] if named else streams, scope)
        heard: dict[str, list] = {}  # description → [seconds, kind, first unit]
        dark = dark_spans(memories)
        want_dark = bool(_DARK.search(analysis.question)) and bool(dark)
        for m in memories:
            for o in m.sounds:
                if o.kind == "speech" or not o.description:
                    continue
                if want_dark and not any(sid == m.stream_id and o.t_end >= a - 1.0 and o.t_start <= b + 1.0
                                         for sid, a, b in dark):
                    continue
                entry = heard.setdefault(o.description, [0.0, o.kind, None])
                entry[0] += max(o.t_end - o.t_start, 0.0)
                if entry[2] is None:
                    entry[2] = Unit(m.stream_id, m.id, o.t_start, o.t_end, "sound", o.description)
        if not heard:
            return None
        ranked = sorted(heard.values(), key=lambda e: (e[1] in UNINFORMATIVE_SOUNDS, -e[0]))
        units = [e[2] for e in ranked]
        caps = {"route": 4.0, "sounds": float(len(units)), "dark": float(want_dark)}
        if options:
            scores, support, evidence = [], [], []
            for o in options:
                mm = self._match(o, units)
                weights = np.array([0.6 if e[1] in UNINFORMATIVE_SOUNDS else 1.0 for e in ranked])
                w = mm * weights
                j = int(np.argmax(w))
                scores.append(float(w[j]))
                support.append(float(mm[j]) * SOUND_CONFIDENCE)
                evidence.append([units[j]])
            return self._choice(options, scores, support, evidence, caps)
        top = units[0]
        return Draft(answer=f"{top.text} (heard, {top.cite()})", confidence=SOUND_CONFIDENCE,
                     support=units, source="sound", caps={**caps, "span": 1.0})

    def said_while_dark(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                        reader: MemoryReader) -> Draft | None:
        """"What was talked about while the screen was dark?": the sentences spoken during the
        dark key frames of the named stream (else of every stream in scope). The memory keeps
        each key frame's quality, so the moment is known even though nothing was seen."""
        if not getattr(analysis.shape, "said_while_dark", False):
            return None
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        spans = dark_spans(self._memories([named] if named else streams, scope))
        said: list[Unit] = []
        for sid, a, b in spans:
            for u in self._stream_units(sid, a - DARK_SLACK_S, b + DARK_SLACK_S, reader):
                if u.modality == "speech" and u.t_end >= a - DARK_SLACK_S and u.t_start <= b + DARK_SLACK_S and u not in said:
                    said.append(u)
        said = list({(u.stream_id, round(u.t_start, 2), u.text): u for u in said}.values())
        if not said:
            return None
        caps = {"route": 8.0, "dark_spans": float(len(spans)), "sentences": float(len(said))}
        if options:
            scores, support, evidence = [], [], []
            for o in options:
                mm = self._match(o, said)
                j = int(np.argmax(mm))
                scores.append(float(mm[j]))
                support.append(float(mm[j]) * DARK_SPEECH_CONFIDENCE)
                evidence.append([said[j]])
            return self._choice(options, scores, support, evidence, caps)
        top = said[0]
        return Draft(answer=f'"{top.text.strip()}" (said while the picture was dark, {top.cite()})',
                     confidence=DARK_SPEECH_CONFIDENCE, support=said, source="order", caps={**caps, "span": 1.0})

    def gist(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
             reader: MemoryReader) -> Draft | None:
        """"What is X mostly about?": the words most characteristic of the stream's speech and
        on-screen text (frequent there, rare in the other streams and in English);
        "name one person mentioned in X": the name said most often. Never the composed
        summary's own wording ("Seen", "Someone says")."""
        kind = getattr(analysis.shape, "gist", "")
        if not kind or (options and kind != "topic"):
            return None
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        if named is None:
            return None
        texts: dict[str, list[Unit]] = {}
        for m in self._memories(streams, scope):
            for u in units_of(m, None, self.scorer.reuse_visual_vectors):
                if u.modality in ("speech", "ocr"):
                    texts.setdefault(m.stream_id, []).append(u)
        own = texts.get(named, [])
        if not own:
            return None
        if kind == "people":
            return people_answer(named, own)
        if options:
            return self._topic_choice(named, own, texts, options)
        return topic_answer(named, own, texts)

    def _topic_choice(self, stream_id: str, own: Sequence[Unit], texts: dict[str, list[Unit]],
                      options: Sequence[str]) -> Draft | None:
        """"What is X mostly about: A, B or C?": the option nearest (MiniLM cosine) to the
        stream's most characteristic words."""
        words, support = topic_words(stream_id, own, texts, TOPIC_WORDS_FOR_CHOICE)
        if not words:
            return None
        vecs = self.scorer.embed([", ".join(words)] + list(options))
        cos = vecs[1:] @ vecs[0]
        scores = [float(c) for c in cos]
        support_of = [TOPIC_CONFIDENCE * _ramp(c) for c in scores]
        draft = self._choice(options, scores, support_of, [support or list(own[:1])] * len(options),
                             {"route": 6.0, "topic_words": float(len(words))})
        draft.source = "gist"
        return draft

    def answer(self, analysis: QueryAnalysis, q_vec: np.ndarray, options: Sequence[str],
               recall: Sequence[Unit], scope: Scope, reader: MemoryReader) -> Draft | None:
        """The structured answer for this question's shape, or None."""
        for attempt in (
            lambda: self.which_stream(analysis, q_vec, options, scope, reader),
            lambda: self.which_first(analysis, options, recall, scope, reader),
            lambda: self.next_to(analysis, options, recall, scope, reader),
            lambda: self.count(analysis, options, recall, scope, reader),
            lambda: self.sounds(analysis, options, scope, reader),
            lambda: self.said_while_dark(analysis, options, scope, reader),
            lambda: self.pictured(analysis, options, scope, reader),
            lambda: self.pictured_open(analysis, options, scope, reader),
            lambda: self.gist(analysis, options, scope, reader),
        ):
            draft = attempt()
            if draft is not None:
                return draft
        return None
