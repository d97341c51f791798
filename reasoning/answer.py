"""Answers from evidence (HippoMM Γ, Tables 7, 10, 11): the fast attempt over summaries, the
synthesis over detailed evidence, their reconciliation, and multiple-choice selection.

The local model is SmolLM2-135M: good at copying the note that answers a question, poor at
judging whether one does, at reporting calibrated confidence and at picking option letters.
So nothing here rests on the model alone:

**Confidence** of an answer is the smallest of these caps (each signal can only lower it):

* ``model`` – the confidence the model reported (0 when it said the notes do not tell;
  no cap when it reported none: SmolLM2 never does, stronger backends often do);
* ``similarity`` – how well the question matches the text the answer stands on: its cosine
  mapped linearly from ``support_cos_min`` (no support) to ``support_cos_full`` (full);
  gist questions without content words ("what is this about?") are exempt;
* ``coverage`` – the share of the question's content words found in that text, its memory or
  its stream name; full marks while at most a third of them are missing. A summary about
  "Tom and the bowl" cannot carry a confident answer to "what was written on the screen in
  the kitchen", however fluent the model's reply;
* ``grounding`` – the share of the answer's *new* words (those not in the question) found in
  the evidence; invented names and numbers fail here, and an answer that only repeats the
  question has no new words and gets 0;
* ``kind`` – 0.5 when the question asks "how many"/"what time"/"what colour" and the answer
  holds no number/colour.

An answer whose confidence stays below τ escalates from the fast to the detailed pathway.

**Answer text** – the model's reply when it is grounded, rests on one of the top evidence
units and is about as well supported as the best evidence; otherwise the best evidence
itself, quoted with its stream and time. On the fast path such a quoted summary answers a
gist question, but for a detail question it is capped at ``FAST_EXTRACT_CAP`` (below τ): a
summary that resembles "what was written on the sign at the station" need not say what was
written.

**Multiple choice** – each option is scored against the evidence texts by embedding cosine
and by its distinctive words (those not shared by every option nor taken from the
question), weighted by how much each text bears on the question; the model's letter adds a
small vote (``LLM_VOTE``). The confidence is the chosen option's support (capped like a
free answer's) scaled by its margin over the runner-up.

**Reconciliation** (Table 10) – deterministic: answers that agree keep the detailed wording
with the higher confidence; answers that disagree go to the one the detailed evidence
supports better (the detailed one when tied, as the paper prioritises detailed analysis).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from episodic.config import RetrievalSettings
from episodic.core.errors import ModelError
from episodic.core.llm import ChatMessage, LanguageModel
from episodic.core.query import AnswerSource, QueryType
from episodic.reasoning.audio_lean import LEAN_SUPPORT, audio_lean, written_over_heard
from episodic.reasoning.evidence_fit import (
    KEY_NAME_MISHEARD,
    KEY_NAME_MISSING,
    OBJECT_ELSEWHERE,
    OBJECT_MISSING,
    _ramp,
    about_something_else,
    colours_of_the_scene,
    homophone_stems,
    key_coverage,
    key_coverage_at,
    modality_fit,
    name_maybe_misheard,
    object_coverage,
    ocr_similarity,
)
from episodic.reasoning.model_reply import LETTERS, ParsedReply, parse_reply
from episodic.reasoning.prompts import detailed_answer_messages, fast_answer_messages
from episodic.reasoning.short_answer import (
    GUESSED_SPAN_QUALITY,
    SEEN_PART,
    asks_what_was_said,
    best_span,
    only_a_bare_hour,
)
from episodic.retrieval.detailed import TextScorer, Unit, fuzzy_found, relevant, top_distinct
from episodic.retrieval.guess_match import GUESS_CAP, guess_support
from episodic.retrieval.option_audio import OptionHearing
from episodic.retrieval.query_analysis import (
    QueryAnalysis,
    content_terms,
    overlap,
    satisfies_kind,
    term_set,
)

log = logging.getLogger(__name__)

NOTHING_FOUND = "I found nothing about that in memory."
# an option word found only as a homophone ("blue" written "blew") counts this much of a match
HOMOPHONE_CREDIT = 0.5
LLM_VOTE = 0.1  # the model's letter: a tie-breaker, about a third of a clear lexical match
AUDIO_VOTE = 2.0  # the option the audio carried clearly best: above any written evidence
AUDIO_SUPPORT = 0.6  # …and the support it brings (forced alignment, 6 of 7 right on dev sentences)
AUDIO_LEAN_VOTE = 0.25  # the audio's lead too small to call heard, where no option was written
MARGIN_FULL = 0.25  # an option this far ahead of the runner-up keeps its full support
KIND_CAP = 0.5
GROUNDED = 0.75  # a model answer with fewer of its new words in the evidence is not used
EXTRACT_GIST_UNITS = 5
WELL_PLACED = 3  # a model answer must rest on one of the top evidence units
NOT_ASKED = ParsedReply(answer="", confidence=None, abstained=False, letter=None)
INITIAL_MODEL_SECONDS = 0.5  # a short SmolLM2 reply on llama.cpp; refined by a moving average
MODEL_TIME_MARGIN = 1.5  # skip the model when less than this many typical calls' time is left
FAST_EXTRACT_CAP = 0.5  # a fast-path answer quoted from a summary, for a detail question
QUOTE_CAP = 0.7  # a detail question answered by a whole quote, no focused phrase found
NO_OPTION_SUPPORT = 0.15  # multiple choice where no option is supported: still one, at most this
EMBEDDING_ONLY_CAP = 0.35  # an option none of whose own words is in the evidence: resemblance only
ELSEWHERE_WORD_SHARE = 0.25  # an option's words in a sentence about another thing count this much
# "In which recording was <topic> mentioned?": when the evidence holds the topic (its things and
# most of its words, exactly or misheard), its cosine to the whole question, diluted by the
# framing, caps no lower than this
TOPIC_FOUND_SIMILARITY = 0.5

@dataclass
class Draft:
    """One pathway's answer, with what it rests on and why it is as confident as it is."""

    answer: str
    confidence: float
    choice_index: int | None = None
    support: list[Unit] = field(default_factory=list)  # evidence, best first
    model_reply: str = ""
    model_confidence: float | None = None
    source: AnswerSource = "none"
    caps: dict[str, float] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return self.source != "none"


def quotes_for_a_value(draft: Draft, analysis: QueryAnalysis) -> bool:
    """Whether a free-text answer to a question asking for a value of one kind (a time, a
    number, a colour, a name, a place) quotes evidence in which no phrase of that kind was
    found: "What colour is the ladle that Grace painted?" answered 'Someone says: "Look, the
    ladle is strong and clear."' names no colour, so it is no answer, only the sentence that
    looked most like the question. On the ten dev QA sets none of the 8 such answers was
    right (7 to answerable questions, 1 to a question about something never recorded).
    "When was there music?" is the exception: a sound or picture the question is about,
    quoted, answers "when" by the moment it cites."""
    if not (draft.source == "extract" and draft.choice_index is None and analysis.shape.focus != "any"
            and draft.caps.get("span") == QUOTE_CAP):
        return False
    top = draft.support[0] if draft.support else None
    return not (analysis.shape.focus == "time" and top is not None and top.modality in ("sound", "visual")
                and top.modality in analysis.preferred_modalities)


# "why was Maria late?", "how come the ferry left early?", "for what reason …": asks for a reason
_WHY = re.compile(r"^\s*(?:why\b|how\s+come\b|for\s+what\s+reason\b|what\s+was\s+the\s+reason\b)", re.I)


def explains_nothing(draft: Draft, analysis: QueryAnalysis) -> bool:
    """Whether a free-text answer to a question asking *why* rests on evidence holding none of
    what is to be explained, only the person it names: "Why was Maria late?" answered "need
    the umbrella" from "If you need the umbrella, Maria keeps it at the waiting room." is a
    sentence about Maria, not a reason she was late (on the ten dev stores, 8 of 10 answers
    to questions about what was never recorded, worded as no generated set words them, were
    such whys)."""
    if draft.choice_index is not None or not draft.support or not _WHY.match(analysis.question):
        return False
    names = {stem for stem, word in analysis.key_terms.items() if word[:1].isupper()}
    asked = [t for t in analysis.terms if t not in names]
    top = draft.support[0]
    return bool(asked) and not any(t in top.terms or t in top.fuzzy_terms for t in asked)


def colour_seen_for_someone(draft: Draft, analysis: QueryAnalysis) -> bool:
    """Whether a free-text answer to a colour question about someone's thing ("What colour is
    Quentin's fishing net?", "… the anchor that Hannah painted?") is read off a key frame's
    colours: the offline eyes cannot tie a frame's colours to a person's thing, so only what
    was said can answer it (on the generated sets, dev none and held-out 1 such answer, wrong;
    a second refusal probe of my own wording on the dev stores, 2 of 2 about a stranger)."""
    if draft.choice_index is not None or not draft.support or analysis.shape.focus != "colour":
        return False
    names = [word for word in analysis.key_terms.values() if word[:1].isupper()]
    return bool(names) and draft.support[0].modality in ("visual", "summary") and "(seen" in draft.answer


def _quote(unit: Unit) -> str:
    """The evidence itself as an answer, in words a person reads naturally."""
    text = unit.text.rstrip()
    if unit.modality == "speech":
        said = f'Someone says: "{text}"'
    elif unit.modality == "ocr":
        said = f'The on-screen text reads "{text}"'
    elif unit.modality == "visual":
        said = f"The picture shows {text}"
    else:
        said = text
    return f"{said} ({unit.cite()})"


_ON_SCREEN = re.compile(r'On screen: "([^"]+)"')
# "when was the sign on screen?" asks for the moment, not for what the sign says
_ASKS_MOMENT = re.compile(r"^\s*(?:when\b|at what (?:time|point|moment)\b|what time (?:was|were|is|are)\b)", re.I)


def _option_terms_of(unit: Unit, about_speech: bool) -> set[str]:
    """The words of ``unit`` an option may be found in. For a question about what was said,
    a summary's "Seen" part is not among them: "What colour did Amara paint the fishing net?"
    is not answered "blue" by "Seen: a picture in green, blue, grey", the colours of the
    frames beside a sentence that misheard "pink"."""
    if about_speech and unit.modality == "summary" and "Seen: " in unit.text:
        return term_set(SEEN_PART.sub(" ", unit.text))
    return unit.terms


def reads_text(analysis: QueryAnalysis) -> bool:
    """Whether the answer is the text read on screen ("what did the sign say?"), not the moment
    it was shown ("when was the sign on screen?")."""
    return analysis.asks_text and not _ASKS_MOMENT.match(analysis.question)


def screen_texts(units: Sequence[Unit]) -> list[str]:
    """The on-screen texts the evidence holds: read text units, and what composed summaries
    quote as 'On screen: "…"'."""
    out = [u.text.strip() for u in units if u.modality == "ocr" and u.text.strip()]
    out += [t.strip() for u in units if u.modality == "summary" for t in _ON_SCREEN.findall(u.text)]
    return [t for t in out if t]


def cited(short: str, unit: Unit) -> str:
    """The short answer first, then where it comes from: 'Milo (heard: "This is Milo." —
    garden, 1.0–3.5 s)'."""
    label = {"speech": "heard", "ocr": "on screen", "visual": "seen", "summary": "summary",
             "sound": "heard"}.get(unit.modality, unit.modality)
    short = short.strip().rstrip(".")
    if short.lower() == unit.text.strip().rstrip(".").lower():
        return f'{short} ({label}, {unit.cite()})'
    return f'{short} ({label}: "{unit.text.strip()}", {unit.cite()})'


def _span_of(answer: str) -> str:
    """The short phrase of a cited answer ("Milo (heard: …)" → "Milo")."""
    return answer.split(" (", 1)[0].strip()


class Answerer:
    """Γ: turns ranked evidence into an answer with an honest confidence."""

    def __init__(
        self,
        llm_factory: Callable[[], LanguageModel] | None,
        scorer: TextScorer,
        settings: RetrievalSettings,
        time_left: Callable[[], float | None] | None = None,
    ) -> None:
        self._llm_factory = llm_factory
        self.scorer = scorer
        self.settings = settings
        self.time_left = time_left  # seconds before the request's deadline (None: no deadline)
        self._timing = {"model_seconds": INITIAL_MODEL_SECONDS}  # shared with for_request copies

    @property
    def model_seconds(self) -> float:
        """A moving average of how long one model call takes here."""
        return self._timing["model_seconds"]

    def for_request(self, time_left: Callable[[], float | None] | None) -> Answerer:
        """This answerer bound to one request's deadline (the call timings stay shared)."""
        bound = Answerer(self._llm_factory, self.scorer, self.settings, time_left)
        bound._timing = self._timing
        return bound

    # -- the model -------------------------------------------------------------------------
    def _ask_model(
        self, messages: list[ChatMessage], n_options: int, options: Sequence[str]
    ) -> tuple[str, ParsedReply]:
        """One model call; a failing model degrades to extractive answers instead of failing
        the request (the evidence is still good). When the request's deadline leaves less
        time than a model call usually takes, the call is skipped for the same reason."""
        s = self.settings
        if self._llm_factory is None:  # answer_model = never (or auto without a capable model)
            # no model was asked, so none abstained: the evidence alone decides (a skipped or
            # failed call below reads as an abstention, the model's silence)
            return "", NOT_ASKED
        left = self.time_left() if self.time_left is not None else None
        if left is not None and left < MODEL_TIME_MARGIN * self.model_seconds:
            log.info("%.2f s left, below a typical model call: answering extractively", left)
            return "", parse_reply("", n_options, options)
        started = time.perf_counter()
        try:
            reply = self._llm_factory().generate(
                messages,
                max_tokens=s.answer_max_tokens,
                temperature=s.answer_temperature,
                seed=s.answer_seed,
            )
        except ModelError as exc:
            log.warning("answer model failed, answering extractively: %s", exc)
            reply = ""
        took = time.perf_counter() - started
        self._timing["model_seconds"] = 0.7 * self.model_seconds + 0.3 * took
        return reply, parse_reply(reply, n_options, options)

    def _notes(self, units: Sequence[Unit], labelled: bool) -> list[str]:
        """Evidence lines within the context budget, best first."""
        out, used = [], 0
        for u in units:
            label = {"speech": "heard", "ocr": "written on screen", "visual": "seen", "summary": "summary"}
            line = f"{label.get(u.modality, u.modality)}: {u.text}" if labelled else u.text
            if out and used + len(line) > self.settings.answer_context_chars:
                break
            out.append(line[: self.settings.answer_context_chars])
            used += len(line)
        return out

    # -- support ---------------------------------------------------------------------------
    def assess(
        self,
        analysis: QueryAnalysis,
        answer: str,
        units: Sequence[Unit],
        extractive: bool = False,
        pool: Sequence[Unit] = (),
    ) -> tuple[float, Unit | None, dict[str, float]]:
        """Evidence-based confidence of ``answer`` over ``units`` (see the module doc), the unit
        it rests on, and each cap. An ``extractive`` answer is the text of ``units[0]`` itself:
        grounded by construction, it rests on that unit. ``pool`` is all the evidence seen
        (default ``units``): the question's names must be somewhere in it."""
        s = self.settings
        if not answer or not units:
            return 0.0, None, {"grounding": 0.0}
        if extractive:
            grounding, support = 1.0, units[0]
        else:
            novel = content_terms(answer, drop=analysis.terms)
            haystack: set[str] = set()
            for u in units:
                haystack |= u.terms
                if u.anchor is not None:
                    haystack |= u.anchor.terms
            grounding = overlap(novel, haystack) if novel else 0.0
            wanted = novel or content_terms(answer)
            support = max(units, key=lambda u: (overlap(wanted, u.terms) if wanted else 0.0, u.score))
        gist = analysis.query_type is QueryType.SUMMARY and not analysis.terms
        similarity = 1.0 if gist else _ramp(support.support_cos, s.support_cos_min, s.support_cos_full)
        if support.modality == "ocr" and analysis.asks_text:
            similarity = max(similarity, ocr_similarity(support, analysis))
        # the word naming the kind of answer ("At what *place* …") is not what it is about
        terms = [t for t in analysis.terms if t not in analysis.kind_terms] or analysis.terms
        found = overlap(terms, support.support_terms)
        missing = round((1.0 - found) * len(terms))
        coverage = 1.0 if missing <= len(terms) // 3 else found
        kind = 1.0 if satisfies_kind(answer, analysis.expects) else KIND_CAP
        if kind >= 1.0 and analysis.shape.focus == "time" and only_a_bare_hour(answer):
            kind = GUESSED_SPAN_QUALITY  # "at 22": a time misheard as often as said
        objects = object_coverage(analysis, support, list(pool) or list(units))
        if analysis.shape.asks_stream and coverage >= 1.0 and objects >= 1.0:
            # the answer is a stream, and the topic is there (its things, most of its words,
            # exactly or misheard): "F20 to 11, based on an appointment with the archimist."
            # (cosine 0.21) says where Grace's appointment with the archivist was mentioned as
            # well as a sentence that repeats the question would
            similarity = max(similarity, TOPIC_FOUND_SIMILARITY)
        caps = {
            "similarity": round(similarity, 3),
            "coverage": round(coverage, 3),
            "grounding": round(grounding, 3),
            "kind": kind,
            "key_terms": key_coverage_at(analysis, support, list(pool) or list(units)),
            "objects": objects,
            "modality": modality_fit(analysis, support),
        }
        if caps["key_terms"] == KEY_NAME_MISSING and caps["objects"] >= 1.0 and name_maybe_misheard(analysis, support):
            caps["key_terms"] = KEY_NAME_MISHEARD
        return min(caps.values()), support, caps

    def _extract(
        self, analysis: QueryAnalysis, units: Sequence[Unit]
    ) -> tuple[str, str, list[Unit], float]:
        """The best evidence as the answer: (text shown, text assessed, units it quotes, span
        quality). The short phrase that answers the question comes first when one is found
        (:mod:`reasoning.short_answer`), then the evidence it was taken from. For gist
        questions the best few summaries in time order (a gist is the sequence of events,
        not one of them). Text read on screen comes first for a question about such text."""
        wants_text = reads_text(analysis)
        read = wants_text and any(u.modality == "ocr" for u in units)
        if read:
            units = [u for u in units if u.modality == "ocr"] + [u for u in units if u.modality != "ocr"]
        elif wants_text and not analysis.shape.asks_stream:
            # the text read is quoted by a summary only (the same words as a unit of their own
            # were left out as a repeat): the quoted text, not the summary's first sentence
            for u in units:
                quoted = screen_texts([u]) if u.modality == "summary" else []
                if quoted:
                    return cited(quoted[0], u), quoted[0], [u], 1.0
        gist = analysis.query_type is QueryType.SUMMARY and not analysis.terms
        if gist:
            summaries = [u for u in units if u.modality == "summary"][:EXTRACT_GIST_UNITS]
            if len(summaries) > 1:
                ordered = sorted(summaries, key=lambda u: (u.stream_id, u.t_start))
                text = " ".join(u.text.rstrip(".") + "." for u in ordered)
                streams = sorted({u.stream_id for u in ordered})
                return f"{text} ({', '.join(streams)})", text, summaries, 1.0
            return _quote(units[0]), units[0].text, [units[0]], 1.0
        if analysis.shape.asks_stream:
            top = units[0]
            return cited(top.stream_id, top), top.text, [top], 1.0
        if read:  # the phrase asked for inside the text read ("9" of "GATE 9"), else all of it
            shown = [u for u in units if u.modality == "ocr"]
            span = best_span(shown, analysis)
            if span is not None:
                return cited(span.text, span.unit), span.unit.text, [span.unit], span.quality
            return cited(shown[0].text, shown[0]), shown[0].text, [shown[0]], 1.0
        # a question about speech is answered from speech where any bears on it
        heard = [u for u in units if modality_fit(analysis, u) >= 1.0]
        ranked = heard + [u for u in units if u not in heard] if heard else list(units)
        span = best_span(ranked, analysis)
        if span is not None:
            return cited(span.text, span.unit), span.unit.text, [span.unit], span.quality
        return _quote(ranked[0]), ranked[0].text, [ranked[0]], QUOTE_CAP

    def _best_of(
        self,
        analysis: QueryAnalysis,
        units: list[Unit],
        parsed: ParsedReply,
        reply: str,
        model_cap: float,
    ) -> Draft:
        """The model's answer or the extractive one, whichever the evidence supports better."""
        extract_text, extract_core, extract_units, span_quality = self._extract(analysis, units)
        e_conf, e_sup, e_caps = self.assess(
            analysis, extract_core, extract_units, extractive=True, pool=units
        )
        e_caps["model"] = round(model_cap, 3)
        e_caps["span"] = span_quality
        e_conf = min(e_conf, span_quality)
        extract = Draft(
            answer=extract_text,
            confidence=min(e_conf, model_cap),
            support=self._support_list(e_sup, extract_units, units),
            model_reply=reply,
            model_confidence=parsed.confidence,
            source="extract",
            caps=e_caps,
        )
        if parsed.abstained or not parsed.answer or analysis.shape.asks_stream:
            # "in which recording was X mentioned?" is answered by a stream id, which the
            # extract gives ("library-cam"); the model tends to restate X ("…in room 204")
            return extract
        if e_caps.get("key_terms", 1.0) <= KEY_NAME_MISSING or e_caps.get("objects", 1.0) <= OBJECT_MISSING:
            return extract  # a name or thing the question is about is nowhere: no model answer either
        if reads_text(analysis) and (
            (extract_units and extract_units[0].modality == "ocr")
            or not any(t.lower() in parsed.answer.lower() for t in screen_texts(units))
        ):
            # "what did the sign say?": the text read on screen, as read; a small model retells
            # it from everything in its notes ("LONGBOW 23" for "PIER 23", the first word
            # taken from a sentence heard nearby) or answers with no text read at all
            return extract
        m_conf, m_sup, m_caps = self.assess(analysis, parsed.answer, units)
        m_caps["model"] = round(model_cap, 3)
        # the model must have answered from the leading evidence, not from a side note
        well_placed = m_sup is not None and any(m_sup is u for u in units[:WELL_PLACED])
        focused = span_quality >= 1.0 and analysis.shape.focus != "any"
        if focused and extract_core and _span_of(extract_text).lower() in parsed.answer.lower():
            # the model says the same as the focused phrase: keep the short phrase, first
            extract.confidence = max(extract.confidence, min(m_conf, model_cap))
            extract.caps["agrees_with_model"] = 1.0
            return extract
        margin = 0.1 if focused else -0.05  # a focused phrase of the asked kind is preferred
        if m_caps.get("grounding", 0.0) >= GROUNDED and well_placed and m_conf >= e_conf + margin:
            return Draft(
                answer=parsed.answer if m_sup is None else cited(parsed.answer, m_sup),
                confidence=min(m_conf, model_cap),
                support=self._support_list(m_sup, [], units),
                model_reply=reply,
                model_confidence=parsed.confidence,
                source="model",
                caps=m_caps,
            )
        return extract

    @staticmethod
    def _support_list(first: Unit | None, also: Sequence[Unit], units: Sequence[Unit]) -> list[Unit]:
        out: list[Unit] = []
        for u in ([first] if first is not None else []) + list(also) + list(units):
            if u not in out:
                out.append(u)
        return out

    # -- pathways --------------------------------------------------------------------------
    def fast_attempt(
        self, analysis: QueryAnalysis, summaries: list[Unit], options: Sequence[str] = ()
    ) -> Draft:
        """Φ_fast (Table 7): answer from ThetaEvent summaries, with a confidence that the
        summaries actually hold the answer."""
        if not summaries:
            return Draft(answer="", confidence=0.0, caps={"evidence": 0.0})
        top = top_distinct(summaries, self.settings.fast_top_k)
        messages = fast_answer_messages(analysis.question, self._notes(top, labelled=False), options)
        reply, parsed = self._ask_model(messages, len(options), options)
        model_cap = 0.0 if parsed.abstained and not options else (
            parsed.confidence if parsed.confidence is not None else 1.0
        )
        if options:
            return self.choose(analysis, options, top, parsed, reply, model_cap)
        draft = self._best_of(analysis, top, parsed, reply, model_cap)
        if parsed.abstained:
            draft.caps["model"] = 0.0
            draft.confidence = 0.0
        if reads_text(analysis) and not screen_texts(draft.support[:1]):
            # "what was written on screen?" answered from a summary that quotes no screen text
            draft.caps["screen_text"] = 0.0
            draft.confidence = min(draft.confidence, FAST_EXTRACT_CAP)
        if draft.source == "extract" and analysis.query_type is not QueryType.SUMMARY:
            # A summary that merely resembles the question is not an answer to "what was
            # written / said / shown": without a grounded model answer the fast path does not
            # answer alone (Table 7: detail questions usually need detailed recall).
            draft.caps["fast_extract"] = FAST_EXTRACT_CAP
            draft.confidence = min(draft.confidence, FAST_EXTRACT_CAP)
        return draft

    def synthesize(
        self,
        analysis: QueryAnalysis,
        units: list[Unit],
        overview: Sequence[Unit] = (),
        options: Sequence[str] = (),
        hearing: OptionHearing | None = None,
    ) -> Draft:
        """Γ over detailed evidence (Table 11): the most relevant notes, the gist around them.
        ``hearing``: what the audio said about each option (retrieval/option_audio.py)."""
        usable = [u for u in units if relevant(u, self.settings, analysis)]
        if analysis.shape.focus == "colour":
            # a frame's own colours are not the colour of the thing asked about
            usable = [u for u in usable if not colours_of_the_scene(analysis, u)]
        if not usable:
            return Draft(answer=NOTHING_FOUND, confidence=0.0, caps={"evidence": 0.0})
        # cross-modal association: the answer is what co-occurred with the cue (the units
        # found through it), not the cue itself, which merely repeats the question
        targets = [u for u in usable if u.anchor is not None]
        if targets:
            usable = targets + [u for u in usable if u.anchor is None and u.modality != "memory"]
            usable = targets if options else usable
        notes_units = top_distinct(usable, 8)
        notes = self._notes(notes_units, labelled=True)
        gist = [u.text for u in top_distinct(list(overview), 2) if u.modality == "summary"]
        messages = detailed_answer_messages(analysis.question, notes, gist, options)
        reply, parsed = self._ask_model(messages, len(options), options)
        model_cap = parsed.confidence if parsed.confidence is not None else 1.0
        if options:
            return self.choose(analysis, options, notes_units, parsed, reply, model_cap, hearing=hearing)
        return self._best_of(analysis, notes_units, parsed, reply, model_cap)

    # -- multiple choice -------------------------------------------------------------------
    def choose(
        self,
        analysis: QueryAnalysis,
        options: Sequence[str],
        units: Sequence[Unit],
        parsed: ParsedReply,
        reply: str,
        model_cap: float = 1.0,
        hearing: OptionHearing | None = None,
    ) -> Draft:
        """Pick one option by its support in the evidence (see the module doc). ``hearing``:
        what the audio said about each option (retrieval/option_audio.py). The option whose
        sentence it carried clearly best (``heard``) outweighs any written evidence: the
        transcript is what may be misheard. Without one, where the sentence about the
        question says no option, the audio's lean decides among the options that are not
        another thing's value (reasoning/audio_lean.py)."""
        scores, detail = self.option_scores(analysis, options, units, parsed.letter)
        heard = hearing.heard if hearing is not None else None
        if written_over_heard(options, hearing):
            heard = None  # the sentence says another option as written: the words decide
        if heard is not None and 0 <= heard < len(options):
            scores[heard] += AUDIO_VOTE
            detail["support"][heard] = max(detail["support"][heard], AUDIO_SUPPORT)
        lean = audio_lean(analysis, options, units, hearing) if heard is None else None
        if lean is not None:
            top = max(scores)
            for i, taken in enumerate(lean.claimed):
                if taken:  # another thing's value
                    scores[i], detail["support"][i] = min(scores[i], 0.0), 0.0
            scores[lean.index] = top + AUDIO_LEAN_VOTE
            detail["support"][lean.index] = LEAN_SUPPORT
        order = sorted(range(len(options)), key=lambda i: -scores[i])
        best = order[0]
        margin = scores[best] - scores[order[1]] if len(order) > 1 else scores[best]
        support = detail["support"][best]
        confidence = support * min(1.0, 0.5 + 0.5 * margin / MARGIN_FULL)
        key = key_coverage(analysis, units)
        caps = {
            "support": round(support, 3),
            "margin": round(margin, 3),
            "model": round(model_cap, 3),
            "key_terms": key,
            "runner_up_support": round(detail["support"][order[1]], 3) if len(order) > 1 else 0.0,
        }
        confidence = min(confidence, max(key, NO_OPTION_SUPPORT))
        if object_coverage(analysis, None, units) <= OBJECT_MISSING:
            # what the question is about is nowhere in the evidence: whichever option, a guess
            caps["objects"] = OBJECT_MISSING
            confidence = min(confidence, NO_OPTION_SUPPORT)
        if support <= 0.0 or max(scores) <= 0.0:
            confidence = min(confidence, NO_OPTION_SUPPORT)  # nothing supports any option
        if best == heard:
            caps["heard"] = 1.0
        elif lean is not None:
            caps["audio_lean"] = lean.lead
        elif detail["lex"][best] <= 0.0:
            # no word of the option is in the evidence: "a man with a camera" merely resembles
            # "Seen: camera panning"; a resemblance is not a sighting
            caps["lexical"] = 0.0
            confidence = min(confidence, EMBEDDING_ONLY_CAP)
        if detail["guess"][best] > 0.0:
            caps["guess"] = round(detail["guess"][best], 3)
        letter = LETTERS[best]
        return Draft(
            answer=f"{letter}. {options[best]}",
            confidence=round(min(confidence, model_cap if parsed.letter == best else 1.0), 4),
            choice_index=best,
            support=list(detail["evidence"][best]),
            model_reply=reply,
            model_confidence=parsed.confidence,
            source="choice",
            caps=caps,
        )

    def option_scores(
        self,
        analysis: QueryAnalysis,
        options: Sequence[str],
        units: Sequence[Unit],
        vote: int | None,
    ) -> tuple[list[float], dict[str, list]]:
        """Score each option by the evidence that supports it *and* bears on the question.

        For option i and evidence text j: match_ij = cosine(option, text) + share of the
        option's distinctive words in the text; it counts as match_ij × relevance_j, where
        relevance_j grows with the text's rank score and with the share of the question's
        content words around it (so "the back door" found in a note about locking up does not
        answer "what is broken?"). An option's score is its best such product plus the
        model's vote; its support mirrors :meth:`assess` (similarity and coverage caps)."""
        s = self.settings
        evidence = [u for u in units if u.text][:8]
        n = len(options)
        if not evidence:
            scores = [LLM_VOTE if vote == i else 0.0 for i in range(n)]
            return scores, {"support": [0.0] * n, "evidence": [[] for _ in range(n)], "lex": [0.0] * n,
                            "guess": [0.0] * n}
        opt_vecs = self.scorer.embed(list(options))
        ev_vecs = self.scorer.embed([u.scored_text for u in evidence])
        sims = opt_vecs @ ev_vecs.T
        top_score = max((u.score for u in evidence), default=0.0) or 1.0
        terms = analysis.terms
        gist = analysis.query_type is QueryType.SUMMARY and not terms
        relevance, caps, shares = [], [], []
        for u in evidence:
            found = overlap(terms, u.support_terms)
            shares.append(found)
            missing = round((1.0 - found) * len(terms))
            coverage = 1.0 if missing <= len(terms) // 3 else found
            similarity = 1.0 if gist else _ramp(u.support_cos, s.support_cos_min, s.support_cos_full)
            if u.modality == "ocr" and analysis.asks_text:
                similarity = max(similarity, ocr_similarity(u, analysis))
            relevance.append((0.5 + 0.5 * max(0.0, u.score) / top_score) * (0.5 + 0.5 * found))
            caps.append(min(coverage, similarity))
        # a value said of another thing is no support: its words count a quarter and its
        # support is capped (see evidence_fit.about_something_else)
        elsewhere = about_something_else(analysis, evidence, shares)
        caps = [min(c, OBJECT_ELSEWHERE) if off else c for c, off in zip(caps, elsewhere, strict=True)]
        option_terms = [content_terms(o, drop=terms) for o in options]
        shared = set.intersection(*(set(t) for t in option_terms)) if option_terms else set()
        about_speech = asks_what_was_said(analysis)
        ev_terms = [_option_terms_of(u, about_speech) | (u.anchor.terms if u.anchor is not None else set())
                    for u in evidence]
        # the classifier's unsure guesses, where the question is about what was shown
        guessed = (
            guess_support(options, evidence, self.scorer)
            if "visual" in analysis.preferred_modalities
            else np.zeros((n, len(evidence)))
        )
        scores, support, chosen_ev, lexical, guesses = [], [], [], [], []
        for i in range(n):
            distinct = [t for t in option_terms[i] if t not in shared]
            best_j, best_pair, best_support, best_lex, best_guess = 0, -1.0, 0.0, 0.0, 0.0
            for j, et in enumerate(ev_terms):
                heard_as = set()
                if distinct and any(t not in et for t in distinct):
                    # a misheard name ("Northwind" heard as "North wind") still counts
                    et = et | fuzzy_found(options[i], distinct, evidence[j].text, et)
                    # and a word written as its homophone ("blue" as "blew") half counts
                    heard_as = homophone_stems(options[i], distinct, evidence[j].text, et)
                lex = overlap(distinct, et) if distinct else 0.0
                if heard_as:
                    lex += HOMOPHONE_CREDIT * len(heard_as) / len(distinct)
                if elsewhere[j]:
                    lex *= ELSEWHERE_WORD_SHARE
                best_lex = max(best_lex, lex * (1.0 if caps[j] > 0 else 0.0))
                emb = float(sims[i, j])
                guess = float(guessed[i, j])
                pair = (max(emb, 0.0) + lex + guess) * relevance[j]
                if pair > best_pair:
                    best_j, best_pair = j, pair
                best_support = max(best_support, min(max(lex, _ramp(emb, s.support_cos_min, s.support_cos_full)), caps[j]))
                best_guess = max(best_guess, guess)
            scores.append(best_pair + (LLM_VOTE if vote == i else 0.0))
            support.append(max(best_support, min(best_guess, GUESS_CAP)))
            lexical.append(best_lex)
            guesses.append(best_guess)
            chosen_ev.append([evidence[best_j]] + [u for u in evidence if u is not evidence[best_j]])
        return scores, {"support": support, "evidence": chosen_ev, "lex": lexical, "guess": guesses}

    # -- adaptive reasoning ----------------------------------------------------------------
    def reconcile(self, analysis: QueryAnalysis, fast: Draft, detailed: Draft) -> Draft:
        """Table 10 without a second model call: keep what the detailed evidence supports."""
        if not detailed.found:
            if fast.found and fast.confidence > 0:
                return fast
            return detailed
        if not fast.found or not fast.answer:
            return detailed
        if detailed.choice_index is not None or fast.choice_index is not None:
            if fast.choice_index == detailed.choice_index:
                detailed.confidence = max(detailed.confidence, fast.confidence)
            return detailed
        fast_terms = content_terms(fast.answer, drop=analysis.terms)
        det_terms = content_terms(detailed.answer, drop=analysis.terms)
        agree = bool(fast_terms) and (
            overlap(fast_terms, set(det_terms)) >= 0.5 or overlap(det_terms, set(fast_terms)) >= 0.5
        )
        if agree:
            detailed.confidence = max(detailed.confidence, fast.confidence)
            detailed.caps["agrees_with_fast"] = 1.0
            return detailed
        # Disagreement: which answer does the detailed evidence support better? Only a model
        # answer can win here; a quoted summary was already judged not to answer the question.
        if fast.source != "model":
            return detailed
        # It must also rest on evidence ranked at least as high as the detailed answer's.
        f_conf, f_sup, _ = self.assess(analysis, fast.answer, detailed.support)
        f_conf = min(f_conf, fast.caps.get("model", 1.0))
        rank = {id(u): i for i, u in enumerate(detailed.support)}
        f_rank = rank.get(id(f_sup), len(rank))
        d_rank = rank.get(id(detailed.support[0]), 0) if detailed.support else 0
        if f_conf > detailed.confidence and f_rank <= d_rank:
            fast.confidence = f_conf
            fast.support = detailed.support
            fast.caps["confirmed_by_detail"] = round(f_conf, 3)
            return fast
        return detailed
