"""The query side in one object: ``MemoryQA(components).ask(request)`` and ``.search(...)``.

Ask follows HippoMM's retrieval (C.2):

1. **query analysis** – the question's modality type (:mod:`retrieval.query_analysis`);
2. **fast retrieval** – an answer from the ThetaEvent summaries with an evidence-capped
   confidence (:mod:`retrieval.fast`, :mod:`reasoning.answer`);
3. if that confidence is below τ (``fast_confidence_tau``, 0.75): **detailed recall** over the
   ShortTermMemories, guided by the type – feature search with the visual text fallback
   (:mod:`retrieval.detailed`) or cross-modal association (:mod:`retrieval.association`);
4. **adaptive reasoning** – synthesis over the detailed evidence, reconciled with the fast
   answer; a multiple-choice question always gets exactly one option;
5. **inspect** (issue 15) – when both stay below τ on a question the configured eyes can
   answer, when a "when … on screen" answer rests on a memory too long to say the second, or
   on request: look again at the stored video around the best hits
   (:mod:`services.look_again`); that answer is kept when it is surer and cites the frame.

Every request is validated first (clear :class:`~episodic.core.errors.InputError` messages), and
``deadline_s`` is checked between stages: a request that runs out of time raises
:class:`DeadlineExceeded` instead of answering late. Streams that do not exist simply hold no
evidence, so the answer is "I found nothing about that in memory" with confidence 0.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from episodic.core import validation
from episodic.core.deadline import Deadline
from episodic.core.errors import EpisodicError, InputError
from episodic.core.interfaces import QueryBackends
from episodic.core.query import (
    AskRequest,
    AskResult,
    LocatedMoment,
    Moment,
    Pathway,
    QueryType,
    Scope,
)
from episodic.reasoning.answer import (
    NOTHING_FOUND,
    Answerer,
    Draft,
    colour_seen_for_someone,
    explains_nothing,
    quotes_for_a_value,
)
from episodic.reasoning.confidence import calibrate
from episodic.reasoning.evidence_fit import OBJECT_ELSEWHERE
from episodic.reasoning.short_answer import (
    clean_value,
    refines_round_minutes,
    round_minutes_heard,
    span_in,
)
from episodic.reasoning.structured import (
    StructuredAnswerer,
    asks_pictured,
    offered_streams,
)
from episodic.retrieval.association import CrossModalAssociation
from episodic.retrieval.by_example import (
    Example,
    ExampleSearch,
    fuse_moments,
    image_example,
    segment_example,
)
from episodic.retrieval.clock_hearing import ClockListener
from episodic.retrieval.colour_hearing import ColourListener
from episodic.retrieval.detailed import (
    SENTENCES_WITHIN,
    DetailedRecall,
    MemoryReader,
    Recall,
    TextScorer,
    Unit,
    apply_position,
    relevant,
    stream_named_in,
    with_sentences_of,
)
from episodic.retrieval.fast import FastRetrieval
from episodic.retrieval.given_names import given_names
from episodic.retrieval.grid_search import FIRST_LOOK_S
from episodic.retrieval.listen_targets import about_speech, about_the_question
from episodic.retrieval.mention_audio import MIN_GAIN, OBJECT_MIN_GAIN, decoys_for
from episodic.retrieval.modality_check import retype_by_evidence, without_place_words
from episodic.retrieval.moments import MomentSearch, says_all
from episodic.retrieval.name_hearing import NameListener, names_said, no_known_name, slots_of
from episodic.retrieval.plain_wording import asked_plainly
from episodic.retrieval.query_analysis import QueryAnalysis, QueryAnalyzer
from episodic.retrieval.relisten import Relistener
from episodic.retrieval.round_minutes_hearing import RoundMinutesListener
from episodic.retrieval.second_listen import SecondListener, wants_second_opinion
from episodic.retrieval.video_grid import format_time
from episodic.retrieval.word_candidates import (
    WordCandidates,
    given_values,
    lost_its_value,
    option_words,
    says_one_of,
    says_option_words,
)
from episodic.services.direct_answers import DirectAnswers
from episodic.services.look_again import LookAgain
from episodic.services.window_answer import WindowAnswerer

SEARCH_HITS = 10  # moments asked for when inspect has no recall to start from
INSPECT_RESERVE_S = 0.5  # of a request's deadline, kept for answering after looking
# of ``relistened_ask_max_s``, kept for answering after the last hearing (synthesis took
# 0.03-0.2 s on the held-out sets, two at a time)
HEARING_RESERVE_S = 0.3
WHEN_SPAN_S = 4.0  # evidence longer than this does not say when to the second
# what the offline looker can read: questions about writing on screen
_WRITING = re.compile(r"\b(sign|signs|signboard|written|writing|text|label|poster|banner|title|caption|"
                      r"slide|headline|read|reads|says on|spelled|lettering|"
                      # a board people write on, not a cutting board or a board of directors
                      r"(?:notice|bulletin|message|departures?|arrivals?|menu|white|black|chalk|score|display)"
                      r"[ -]?board)\b", re.I)
_ON_SCREEN = re.compile(r"\b(on screen|on the screen|shown|showed|appear(ed|s)?|visible|displayed|seen)\b", re.I)
# "when was …", "at what point …": answered by where in the recording it was seen
# "what happened at the start of harbour-cam?": the recording's first moments (read off its
# structure), not its window summary ("the last hour" is a window)
_AT_AN_EDGE = re.compile(r"\b(?:at|in|near|towards?)\s+the\s+(?:very\s+)?(?:start|beginning|end)\s+of\b", re.I)
_ASKS_WHEN = re.compile(r"\s*(when\b|at what (point|moment|second|minute|time)\b|how far into\b)", re.I)


def about_writing(text: str) -> bool:
    """Whether ``text`` is about writing on screen (a sign, a slide, a caption): what the
    offline looker can find by looking again; other looks need a vision-language model."""
    return bool(_WRITING.search(text))


def _distinct(anchors: list[Moment], n: int) -> list[Moment]:
    """The best ``n`` anchors, one per stretch (hits of one stream within a minute are one)."""
    out: list[Moment] = []
    for m in anchors:
        if all(m.stream_id != x.stream_id or abs(m.t_start - x.t_start) > 60.0 for x in out):
            out.append(m)
        if len(out) >= n:
            break
    return out


# A free-text answer this unsupported (every evidence signal near zero) is reported as
# "nothing found": quoting the least-bad memory would read as an answer.
NOTHING_BELOW = 0.05


def about_another_thing(draft: Draft) -> bool:
    """Whether a free-text answer comes from a sentence without the thing asked about while
    other evidence holds it (``OBJECT_ELSEWHERE``): "What time does the sailing race start?"
    answered "10 past 7" from "The safety announcement starts at 10 past 7." is another
    event's time, not a low-confidence answer. (On the ten dev QA sets one of 237 free-form
    answers given came from such a sentence, a which-stream one now answered by its own
    route.)"""
    objects = draft.caps.get("objects")
    return objects is not None and objects <= OBJECT_ELSEWHERE


# The most an answer resting on a hinted re-hearing may claim (speech heard again with the
# question's words as the hint, taken for this question though the audio carries the old words
# as well): right far more often than not on the dev sets, but the question's words may be
# in it because the question put them there, so it stays below 0.75, where answers are meant
# to be right at least 9 times in 10.
HINTED_CONFIDENCE_CAP = 0.7
# a name heard as no name is looked for among the names said this far (seconds) around it
NAMES_WINDOW_S = 600.0
# sentences that hold a value question's words but no value, put first for re-listening when
# nothing recalled is about the question (each is one more memory to hear again)
VALUES_LOST = 2


@dataclass
class Trace:
    """How an answer came about (for debugging and tests; not part of the wire format)."""

    analysis: QueryAnalysis
    fast: Draft
    detailed: Draft | None = None
    recall: Recall | None = None
    notes: dict[str, Any] = field(default_factory=dict)


# -- the service ---------------------------------------------------------------------------
class MemoryQA:
    """Questions and moment search over one store; safe to share between threads."""

    def __init__(self, components: QueryBackends, warm_after_request: bool = True) -> None:
        """``warm_after_request=False`` for one-shot use (a CLI question): the vector cache
        would load in the background only to be thrown away when the process ends."""
        self.c = components
        self._warm_after_request = warm_after_request
        self.settings = components.settings
        self.scorer = TextScorer(components.embedder)
        self.analyzer = QueryAnalyzer(components.embedder)
        self.asks_model = self.settings.asks_answer_model
        self.answerer = Answerer(
            (lambda: self.c.llm) if self.asks_model else None, self.scorer, self.settings.retrieval
        )
        store = components.store
        self.fast = FastRetrieval(store, self.scorer, self.settings.retrieval)
        words = WordCandidates(store)  # one per process: it keeps every stream's words
        self.detailed = DetailedRecall(store, self.scorer, self.settings.retrieval, words)
        self.association = CrossModalAssociation(store, self.scorer, self.settings.retrieval)
        self.moments = MomentSearch(store, self.scorer, self.settings.retrieval, words)
        self.structured = StructuredAnswerer(store, self.scorer, self.settings.retrieval)
        self.structured.key_frames = self.moments.key_frames  # one per process, kept per stream
        self.structured.distinct = self.moments.distinct
        self.structured.words = words
        self.relisten = Relistener(components, self.settings)
        # another model's opinion on a value the hearing garbled (retrieval/second_listen.py)
        self.second_listen = SecondListener(components, self.settings, self.relisten.record_attempt)
        # a colour misheard: the basic colours scored against the audio (retrieval/colour_hearing.py)
        self.colours = ColourListener(self.relisten.hear_in_sentence, self.settings, self._relisten_model)
        # … and minutes told before "past" or "to" misheard (retrieval/clock_hearing.py)
        self.clock = ClockListener(self.relisten.hear_in_sentence, self.settings, self._relisten_model)
        # … and a name heard as no name, among those its stream says elsewhere (retrieval/name_hearing.py)
        self.names = NameListener(self.relisten.hear_in_sentence, self.settings, self._relisten_model)
        # … and the five a time written with round minutes lost ("7.30" for 7:35; retrieval/round_minutes_hearing.py)
        self.round_minutes = RoundMinutesListener(self.relisten.hear_in_sentence, self.settings, self._relisten_model)
        # looking again at the stored video: Locate, and Ask's inspect pathway
        self.look = LookAgain(components, lambda q, scope, k: self.search(q, scope, k))
        # SUMMARY questions about a window of time: the stored summary windows (issue 17)
        self.windows = WindowAnswerer(store, self.settings)
        # whether-questions, moments of stream time, the recordings themselves
        self.direct = DirectAnswers(store, self.moments, self.structured)
        self._store_warm = False

    def _relisten_model(self) -> str:
        """The re-listening recogniser's id, for the records of what scored against the audio."""
        return str(getattr(self.relisten.recognizer(), "model_id", ""))

    def prepare(self) -> None:
        """Load the embedder, the example questions, the language model (when Ask asks one)
        and the store's vector cache now (a server warm-up), so the first request does not pay
        for them; also the given-name lists (about 0.4 s: the Census lists, Faker's locales and
        the English word list they are filtered by)."""
        self.analyzer.analyze("warm up", None)
        given_names()
        if self.asks_model:  # a model Ask never calls is not loaded
            llm = self.c.llm
            if hasattr(llm, "prepare"):
                llm.prepare()
        self.relisten.prepare()
        if self.settings.relisten_max_memories > 0:
            self.second_listen.prepare()
        self.warm_store(background=False)

    def warm_store(self, background: bool = True) -> None:
        """Have the store search from an in-process vector cache where it offers one
        (Milvus Lite searches walk every row in Python: ≈ 0.45 s per search at 100k events;
        see :class:`memory.vector_cache.VectorCache`). Started in the background after the
        first request, so a one-shot CLI question never waits for it, and a server is fast
        from then on; :meth:`prepare` loads it up front."""
        if self._store_warm:
            return
        self._store_warm = True
        self.c.store.enable_vector_cache(background=background)

    def _analyse(self, text: str) -> tuple[np.ndarray, QueryAnalysis]:
        # embedded as the analysis reads it ("it's open till when" as "it is open until
        # when"): the vector and the rules then see the same question
        q_vec = np.asarray(self.c.embedder.embed_texts([asked_plainly(text)])[0], dtype=np.float32)
        return q_vec, self.analyzer.analyze(text, q_vec)

    def ask(self, req: AskRequest) -> AskResult:
        return self.ask_traced(req)[0]

    def _after_request(self) -> None:
        if self._warm_after_request and not self._store_warm:
            # the answer is out already: on failure searches simply stay on Milvus
            with contextlib.suppress(EpisodicError):
                self.warm_store(background=True)

    def ask_traced(self, req: AskRequest) -> tuple[AskResult, Trace]:
        req = validation.ask_request(req)
        clock = Deadline(req.deadline_s)
        s = self.settings
        with clock.stage("analysis"):
            # every stage reads the question in the plain wording the analysis reads ("Do you
            # happen to know at what time Tom sees the baker?" as "At what time Tom sees the
            # baker?"): the words of a request are no hot words to listen for, no terms to find
            req = replace(req, question=asked_plainly(req.question))
            # "what was on screen at 0:50 in garden-cam?": the seconds around it, the question
            # without its time
            req, anchor = self.direct.scoped_to_moment(req)
            q_vec, analysis = self._analyse(req.question)
            # the shape reads the plain wording too ("When's …" asks a time, as "When is …" does)
            analysis.shape = self.analyzer.shape_of(analysis.question, q_vec, len(req.options))
        with clock.stage("window_summaries"):
            # "what happened right after the screen went dark in cam2?" asks for one moment
            # placed against another, not for the stream's summary
            sh = analysis.shape
            placed = anchor is not None or bool(sh.order or sh.said_while_dark or sh.pictured_while
                                                or sh.said_while_pictured or sh.said_while_sound
                                                or _AT_AN_EDGE.search(req.question))
            windowed = None if placed else self.windows.answer(req, analysis)
        if windowed is not None:  # "what happened on cam2 this morning?": the window's summary
            clock.check("returning the answer")
            draft = Draft(answer=windowed.answer, confidence=windowed.confidence, source="gist")
            result = AskResult(
                answer=windowed.answer, confidence=windowed.confidence, pathway=Pathway.FAST,
                query_type=QueryType.SUMMARY, evidence=windowed.evidence, fast_answer=windowed.answer,
                fast_confidence=windowed.confidence, timings_ms=clock.finish(),
            )
            self._after_request()
            return result, Trace(analysis=analysis, fast=draft, notes={"windows": windowed.notes})
        reader = MemoryReader(self.c.store)
        sh = analysis.shape
        in_scope = reader.streams_in(req.scope)
        named = stream_named_in(req.question, in_scope)
        analysis = without_place_words(analysis, named)
        if (named is not None and not any(offered_streams(analysis, req.options, in_scope))
                and not (sh.order or sh.counts or sh.sound or sh.gist or sh.said_while_dark or sh.said_while_sound
                         or sh.asks_stream)):
            # "what was written on screen in garden-cam?": that stream's memory, not another's
            # (the structured answers read the named stream themselves, against the others)
            req = replace(req, scope=Scope(stream_ids=(named,), t_min=req.scope.t_min, t_max=req.scope.t_max))
        with clock.stage("modality_check"):
            # a "visual" question about things only ever said is about speech
            analysis = retype_by_evidence(
                analysis, lambda probe: self.detailed.recall(probe, q_vec, req.scope, reader)
            )
        shape = analysis.shape
        # order, count and which-stream questions are answered from the memory's structure
        # (time order, moments, stream ids), which the summaries alone cannot show
        # "in which recording was X mentioned?" without options: as if every stream were offered
        open_streams = self.structured.streams_as_options(analysis, req.options, req.scope, reader)
        structured = bool(shape.order or shape.counts or shape.sound or shape.gist or shape.said_while_dark
                          or shape.said_while_sound) or (
            bool(req.options)
            and len({x for x in offered_streams(analysis, req.options, reader.streams_in(req.scope)) if x}) >= 2
        ) or asks_pictured(analysis) or bool(req.options and shape.pictured_while) or bool(shape.said_while_pictured)
        with clock.stage("direct"):
            # whether-questions, moments of stream time, a recording's ends, its length and
            # counts: read off the memory's structure (services/direct_answers.py)
            yes, asked = self.direct.whether(req, analysis, q_vec, named, reader)
            direct = (yes or self.direct.when_said(req, analysis, q_vec, named, reader)
                      or self.direct.read_off(req, analysis, anchor, named, in_scope, reader))
        with clock.stage("fast_retrieval"):
            _, summaries = self.fast.search(analysis, q_vec, req.scope, reader)
        answerer = self.answerer.for_request(clock.remaining)
        hearing_left = self._hearing_left(clock)
        if summaries:
            with clock.stage("fast_answer"):
                fast = answerer.fast_attempt(analysis, summaries, req.options)
        else:
            fast = Draft(answer="", confidence=0.0, caps={"evidence": 0.0})
        trace = Trace(analysis=analysis, fast=fast)

        if direct is not None:
            final, pathway = direct, Pathway.DETAILED
        elif fast.found and fast.confidence >= s.fast_confidence_tau and not structured:
            final, pathway = fast, Pathway.FAST
        else:
            with clock.stage("detailed_recall"):
                if analysis.query_type is QueryType.VIDEO_AUDIO:
                    recall = self.association.associate(analysis, q_vec, req.scope, reader)
                else:
                    recall = self.detailed.recall(analysis, q_vec, req.scope, reader)
                if "visual" in analysis.preferred_modalities:
                    # the guesses a stream carries all through are its walls, not a picture
                    self.moments.key_frames.without_background(recall.units)
            if req.options and not structured and self.detailed.words is not None:
                self._option_sentences(analysis, q_vec, req, recall, reader)
            # listening again to the recalled audio of a speech question (retrieval/relisten.py);
            # an order, count or which-stream question names the sentences it is unsure of itself
            chosen = None
            if structured or open_streams:
                with clock.stage("listen_targets"):
                    chosen = self.structured.listen_targets(analysis, req.options or open_streams, recall.units,
                                                            req.scope, reader)
            heard = self.relisten.run(analysis, q_vec, req.question, req.options, recall, reader,
                                      req.scope, self.scorer, hearing_left, chosen=chosen)
            trace.notes["relisten"] = heard
            if heard.memories:
                clock.timings["relisten"] = round(heard.seconds * 1000.0, 2)
            if shape.counts:
                # a mention still misheard after that: asked of the audio (retrieval/mention_audio.py)
                thing, mentions = self.structured.counted_thing(analysis, reader.streams_in(req.scope))
                with clock.stage("mention_audio"):
                    trace.notes["mentions_heard"] = self.relisten.hear_mentions(
                        thing, self.structured.mention_targets(analysis, req.scope, reader), mentions, analysis,
                        q_vec, recall, reader, req.scope, self.scorer, hearing_left, decoys=decoys_for(thing))
            else:
                # a thing an order, which-stream or while-question still cannot place, or the
                # thing a question about speech asks of that nothing recalled holds: where does
                # the audio say it? (the last at a stricter bar: it turns refusals into answers)
                keep: frozenset[str] = frozenset()
                said_then = self.structured.said_then_checks(analysis, req.options, req.scope, reader) if structured else None
                if said_then is not None:
                    # what was said while the screen was dark (…) tells no option: which does its audio carry?
                    checks = []
                    with clock.stage("mention_audio"):
                        trace.notes["mentions_heard"] = self.relisten.hear_which(
                            *said_then, analysis, q_vec, recall, reader, req.scope, self.scorer, hearing_left)
                elif shape.order:
                    checks = self.structured.placement_checks(analysis, req.options, recall.units, req.scope, reader)
                    bar = MIN_GAIN
                elif structured or open_streams:
                    checks, bar = self.structured.talk_checks(analysis, req.options, req.scope, reader), MIN_GAIN
                else:
                    checks = self.structured.object_checks(analysis, recall.units, req.scope, reader, req.options)
                    bar = OBJECT_MIN_GAIN
                    # the thing goes where it sounds, never in place of the question's other
                    # words: the sentence must still say whom and what else the question asks of
                    keep = frozenset(analysis.terms)
                if checks:
                    with clock.stage("mention_audio"):
                        placed: list[dict[str, Any]] = []
                        for phrase, targets in checks:
                            words = phrase.lower().split()
                            placed += self.relisten.hear_mentions(
                                phrase, targets, lambda u, w=words: all(x in u.text.lower() for x in w), analysis,
                                q_vec, recall, reader, req.scope, self.scorer, hearing_left, best_only=True,
                                min_gain=bar, keep=keep)
                        trace.notes["mentions_heard"] = placed
            hearing = None
            if req.options and not structured:
                # each short option put into the recalled sentence and scored against its audio
                with clock.stage("option_audio"):
                    hearing = self.relisten.hear_options(
                        analysis, req.question, req.options, recall, reader, hearing_left, heard
                    )
                trace.notes["options_heard"] = hearing.to_dict()
            with clock.stage("synthesis"):
                detailed = None
                if structured:
                    detailed = self.structured.answer(
                        analysis, q_vec, req.options, recall.units, req.scope, reader
                    )
                elif open_streams:
                    detailed = self.structured.which_stream_open(
                        analysis, q_vec, open_streams, req.scope, reader, recall.units
                    )
                by_rule = detailed is not None
                if by_rule:
                    final = detailed
                else:
                    detailed = answerer.synthesize(
                        analysis, recall.units, summaries, req.options,
                        hearing=hearing,
                    )
                    final = answerer.reconcile(analysis, fast, detailed)
            if not structured and not req.options and not by_rule:
                final, detailed = self._second_opinion(analysis, q_vec, req, recall, reader, summaries,
                                                       answerer, fast, final, detailed, trace, clock,
                                                       hearing_left)
            trace.detailed, trace.recall = detailed, recall
            pathway = Pathway.DETAILED
        # "when was X on screen?" answered by a whole memory (tens of seconds): look for the second
        refine = s.look.inspect_enabled and self._to_the_second(analysis, final)
        if req.inspect or refine or (s.look.inspect_enabled and pathway is Pathway.DETAILED
                                     and self._worth_inspecting(analysis, final, structured)):
            with clock.stage("inspect"):
                looked = self._inspect(req, analysis, q_vec, trace, clock)
            if looked is not None and (req.inspect or refine or looked.confidence > final.confidence):
                final, pathway = looked, Pathway.INSPECT
        clock.check("returning the answer")
        # a whether-question answered the ordinary way: a yes when its evidence holds what was
        # asked, refused when it holds too little of it
        final, off_the_question = self.direct.settle_whether(req.question, asked, yes, final)

        signals: dict[str, Any] = dict(final.caps)
        rests_on_hint = bool(final.support) and final.support[0].hinted
        signals.update(raw=round(float(final.confidence), 4), source=final.source,
                       query_type=analysis.query_type.value, focus=shape.focus,
                       order=shape.order or "", options=len(req.options), hinted=rests_on_hint)
        trace.notes["signals"] = signals
        nothing = final.choice_index is None and (final.confidence < NOTHING_BELOW or about_another_thing(final)
                                                  or quotes_for_a_value(final, analysis)
                                                  or explains_nothing(final, analysis)
                                                  or colour_seen_for_someone(final, analysis)
                                                  or off_the_question)
        if not final.found or nothing:
            # no evidence, or none that bears on the question: say so rather than quote noise
            answer, confidence, evidence, choice = NOTHING_FOUND, 0.0, [], None
        else:
            answer, choice = final.answer, final.choice_index
            confidence = calibrate(final.confidence, signals)
            if rests_on_hint:
                confidence = min(confidence, HINTED_CONFIDENCE_CAP)
            # the unit the answer rests on, then the others that bear on the question
            kept = [
                u
                for i, u in enumerate(final.support)
                if u.modality != "memory" and (i == 0 or relevant(u, s.retrieval, analysis))
            ]
            evidence = [u.evidence() for u in kept[: req.top_k]]
        trace.notes["caps"] = dict(final.caps)
        result = AskResult(
            answer=answer,
            confidence=round(float(min(1.0, max(0.0, confidence))), 4),
            pathway=pathway,
            query_type=analysis.query_type,
            choice_index=choice,
            evidence=evidence,
            fast_answer=fast.answer,
            fast_confidence=round(float(fast.confidence), 4),
            timings_ms=clock.finish(),
        )
        if anchor is not None:
            trace.notes["anchor"] = {"seconds": anchor.seconds, "phrase": anchor.phrase,
                                     "scope": [req.scope.t_min, req.scope.t_max]}
        self._after_request()
        return result, trace

    def _option_sentences(self, analysis: QueryAnalysis, q_vec: np.ndarray, req: AskRequest,
                          recall: Recall, reader: MemoryReader) -> None:
        """Put the sentences that say one of a multiple-choice question's options near the top
        of ``recall``, where the answer and re-listening read: the given values of a question
        about speech (a misheard sentence often keeps its number); and, when nothing recalled is
        about a question that speech answers, first the sentences holding its words but no
        value where the options are values ("in room to head" may be "in room two oh eight"),
        else the sentences saying words of the options ("the fuel harker" may be "the fuel
        dock"). Each is marked (``Unit.found_by``) to be heard again with the question's words."""
        words = self.detailed.words
        keys = given_values(req.options)
        spoken = about_speech(analysis, recall.units, self.settings.retrieval)
        if "speech" in analysis.preferred_modalities or spoken:
            # (a question about what is seen, "how many people are on screen?", is not; "how
            # much does a magazine cost here?", typed visual for its object, is when what
            # bears on it best was said)
            said = words.find_values(analysis, req.options, req.scope)
            if said:
                recall.notes["value_sentences"] = with_sentences_of(
                    recall, said, analysis, q_vec, req.scope, reader, self.scorer,
                    lambda text: says_one_of(text, keys), found_by="values",
                )
        if not spoken or any(
            about_the_question(analysis, u) for u in recall.units[:SENTENCES_WITHIN] if u.modality == "speech"
        ):
            return
        if keys:  # no sentence about it says a value: one about it may have lost its value to words
            said = words.find_values_lost(analysis, req.options, req.scope, limit=VALUES_LOST)
            if said:
                recall.notes["value_lost_sentences"] = with_sentences_of(
                    recall, said, analysis, q_vec, req.scope, reader, self.scorer,
                    lambda text: lost_its_value(analysis, text),
                    at=0, within=0, found_by="value lost",
                )
            return
        said = words.find_options(analysis, req.options, req.scope)
        if said:
            wanted = option_words(req.options)
            recall.notes["option_sentences"] = with_sentences_of(
                recall, said, analysis, q_vec, req.scope, reader, self.scorer,
                lambda text: says_option_words(text, wanted), at=0, within=0, found_by="options",
            )

    def _second_opinion(self, analysis, q_vec, req, recall, reader, summaries, answerer, fast, final, detailed,
                        trace, clock, hearing_left) -> tuple[Draft, Draft]:
        """When a time, number, name or colour answer rests on a sentence holding no clean value
        of that kind, another model hears that sentence (retrieval/second_listen.py); its words
        answer only when the new answer rests on them with a clean value (within
        ``hearing_left``, see :meth:`_hearing_left`). Returns (final, detailed), changed or not."""
        unit = wants_second_opinion(analysis, final.caps, final.support)
        name, others = "", []
        round_time = None
        if unit is None:
            # a "who?" answered with a word that is no name: the names the stream says elsewhere
            unit, name, others = self._misheard_name(analysis, final, req, reader)
        if unit is None and final.support:
            # a time read with round minutes ("7.30"), perhaps with the word after "thirty" dropped
            round_time = round_minutes_heard(final.support[0], analysis)
            unit = final.support[0] if round_time is not None else None
        if unit is None or self.settings.relisten_max_memories <= 0 or final.confidence < NOTHING_BELOW:
            return final, detailed  # (an answer that will be refused rests on nothing worth hearing)

        def rescore(u: Unit) -> Unit:
            ranked = apply_position(self.scorer.rank(analysis, q_vec, [u]), analysis, reader, req.scope)
            return ranked[0] if ranked else u

        with clock.stage("second_listen"):  # the hearing and, when taken, the answer again
            def clean(u: Unit) -> bool:
                if round_time is not None:  # taken only when it completes the round minutes
                    return refines_round_minutes(round_time, u, analysis)
                return clean_value(u, analysis)

            heard = None
            # one of a few words (a colour, the minutes before "past", a name said elsewhere in
            # the stream): each scored against the audio
            if others:
                heard = self.names.hear(analysis, req.question, unit, recall, reader, rescore, clean,
                                        hearing_left, words=others, slots=slots_of(name), as_heard=name)
                trace.notes["name_heard"] = heard.to_dict()
            words = {"colour": self.colours, "time": self.clock}.get(analysis.shape.focus)
            if words is not None and round_time is None:
                heard = words.hear(analysis, req.question, unit, recall, reader, rescore, clean, hearing_left)
                trace.notes[f"{words.kind}_heard"] = heard.to_dict()
            # a time written with round minutes ("7.30"), however the sentence was chosen: the time
            # as heard against five minutes later ("7.35"), in the audio
            rounded = round_time or (None if others else round_minutes_heard(unit, analysis))
            if rounded is not None and (heard is None or not heard.taken):
                by_minutes = self.round_minutes.listen(
                    rounded, analysis, req.question, unit, recall, reader, rescore,
                    lambda u: refines_round_minutes(rounded, u, analysis), hearing_left)
                if by_minutes is not None:
                    trace.notes["round_minutes_heard"] = by_minutes.to_dict()
                    heard = by_minutes if by_minutes.taken or heard is None else heard
            if others and not heard.taken:
                # the sentence's name was read cleanly, only not as anyone's: nothing for the
                # second model to find there
                return final, detailed
            if heard is None or not heard.taken:
                heard = self.second_listen.hear(analysis, req.question, unit, recall, reader, rescore, clean,
                                                hearing_left)
            trace.notes["second_listen"] = heard.to_dict()
            if not heard.taken or heard.unit is None:
                return final, detailed
            again = answerer.synthesize(analysis, recall.units, summaries, req.options)
            settled = answerer.reconcile(analysis, fast, again)
        # only an answer resting on the words the second model heard, with a clean value there
        if settled.support and settled.support[0].key == heard.unit.key and min(
            float(settled.caps.get("span", 1.0)), float(settled.caps.get("kind", 1.0))
        ) >= 1.0:
            trace.notes["second_listen"]["answered"] = True
            return settled, again
        return final, detailed

    def _hearing_left(self, clock: Deadline) -> Callable[[], float | None]:
        """What the stages that hear the audio again are told is left of this Ask: the call's
        deadline, and with ``relisten_hold_to_bound`` no more than ``relistened_ask_max_s`` (the
        issue's 5 s for a re-listened Ask) from its start, less ``HEARING_RESERVE_S`` for
        answering. Each stage keeps ``relisten_reserve_s`` of what it is told, a margin for a
        hard deadline; the bound's own margin is the smaller reserve, so that difference is
        added back. Without the bound a loaded machine stretches them (on held-out 220-225 run
        two at a time, 12 of 250 re-listened Asks took over 5 s: re-listening 4.6 s, then 1.5 s
        of asking the audio where a counted thing was said); with it, answers those stages
        would have found are lost, hence off by default."""
        s = self.settings
        if not s.relisten_hold_to_bound:
            return clock.remaining
        slack = s.relisten_reserve_s - HEARING_RESERVE_S

        def left() -> float | None:
            within = s.relistened_ask_max_s - clock.elapsed() + slack
            deadline = clock.remaining()
            return within if deadline is None else min(deadline, within)

        return left

    def _misheard_name(self, analysis, final, req, reader) -> tuple[Unit | None, str, list[str]]:
        """(sentence, its name, the other names its stream says) when a question asking for a
        name is answered from a transcript sentence whose name is no known given name and the
        stream names someone else, not the question's own people (retrieval/name_hearing.py);
        (None, "", []) otherwise."""
        if analysis.shape.focus != "name" or not final.support or final.support[0].modality != "speech":
            return None, "", []
        unit = final.support[0]
        span = span_in(unit, analysis)
        if span is None or span.quality < 1.0 or not no_known_name(span.text):
            return None, "", []
        asked = [w for w in analysis.key_terms.values() if w[:1].isupper()]
        # the stream around it, not all of a long one: a name misheard is heard right nearby
        lo, hi = unit.t_start - NAMES_WINDOW_S, unit.t_end + NAMES_WINDOW_S
        t0 = lo if req.scope.t_min is None else max(req.scope.t_min, lo)
        t1 = hi if req.scope.t_max is None else min(req.scope.t_max, hi)
        said = self.structured.units_between(unit.stream_id, t0, t1, reader)
        others = names_said(said, asked, like=span.text)
        return (unit, span.text, others) if others else (None, "", [])

    # -- the inspect pathway: looking again at the stored video ---------------------------
    def _worth_inspecting(self, analysis: QueryAnalysis, final: Draft, structured: bool) -> bool:
        """Both recalls stayed below τ on a question the configured eyes can answer: with a
        vision-language model what was shown or written, a colour, when something was on
        screen; with the offline looker only writing and when something was on screen (on the
        held-out set a wider gate looked 29 times, 5.6 s each, and never answered better).
        Order and count questions are answered from the memory's structure, not by looking."""
        if structured and not asks_pictured(analysis):
            return False
        if final.found and final.confidence >= self.settings.fast_confidence_tau:
            return False
        if self.settings.look.looker == "offline":
            # the offline eyes read writing and name whole-frame colours, nothing else: only a
            # question about writing, or about when something was on screen, is worth the look
            question = analysis.question
            return about_writing(question) or (bool(_ASKS_WHEN.match(question)) and bool(_ON_SCREEN.search(question)))
        visual = analysis.query_type in (QueryType.VIDEO, QueryType.VIDEO_AUDIO)
        return visual or analysis.shape.focus in ("colour", "time") or asks_pictured(analysis)

    def _to_the_second(self, analysis: QueryAnalysis, final: Draft) -> bool:
        """A question about when something was on screen whose answer rests on a memory of
        more than ``WHEN_SPAN_S``: the memory knows roughly when, looking can say the second."""
        question = analysis.question
        if not (_ASKS_WHEN.match(question) and _ON_SCREEN.search(question)):
            return False
        top = final.support[0] if final.found and final.support else None
        return top is None or top.t_end - top.t_start > WHEN_SPAN_S

    def _inspect(
        self, req: AskRequest, analysis: QueryAnalysis, q_vec: np.ndarray, trace: Trace, clock: Deadline
    ) -> Draft | None:
        """Look around the memory's best hits; a Draft citing the frames, or None."""
        look = self.settings.look
        if trace.recall is not None and trace.recall.units:
            units = sorted(trace.recall.units, key=lambda u: -u.score)
            anchors = [Moment(u.stream_id, u.t_start, u.t_end, u.score, u.text, u.memory_id) for u in units]
        else:
            anchors = self.moments.search(analysis, q_vec, req.scope, SEARCH_HITS, MemoryReader(self.c.store))
        anchors = _distinct(anchors, look.inspect_anchors)
        left = clock.remaining()
        heard = trace.notes.get("relisten")
        if heard is not None and heard.memories:
            # time spent listening again is not spent twice: the Ask stays within its bound
            after_listening = self.settings.relistened_ask_max_s - clock.elapsed()
            left = after_listening if left is None else min(left, after_listening)
        budget = look.inspect_budget_s if left is None else min(look.inspect_budget_s, left - INSPECT_RESERVE_S)
        if not anchors or budget < FIRST_LOOK_S:  # a look begun with less left ends past the bound
            trace.notes["inspect"] = {"looked": False, "why": "no memory to start from" if not anchors else "no time left"}
            return None
        asks_when = analysis.shape.focus == "time" or bool(_ASKS_WHEN.match(req.question))
        seen = self.look.inspect(req.question, req.options, anchors, asks_time=asks_when, budget_s=budget,
                                 scope=req.scope)
        trace.notes["inspect"] = {
            "looked": True, "anchors": [(a.stream_id, a.t_start, a.t_end) for a in anchors],
            "answer": seen.answer if seen else "", "frames_examined": seen.frames_examined if seen else 0,
            "not_seen": seen.not_seen if seen else [],
        }
        if seen is None:
            return None
        support = [self._frame_unit(m) for m in seen.moments]
        return Draft(answer=seen.answer, confidence=seen.confidence, choice_index=seen.choice_index,
                     support=support, source="look", caps={"frames": float(seen.frames_examined)})

    def _frame_unit(self, m: LocatedMoment) -> Unit:
        """A frame looked at, as evidence: the memory it falls in (for GetSegment), its time."""
        memories = self.c.store.list_memories(stream_id=m.stream_id, t_min=m.t, t_max=m.t, with_vectors=False)
        inside = [x for x in memories if x.t_start <= m.t <= x.t_end] or memories
        memory_id = inside[0].id if inside else ""
        uri = next((r.uri for x in inside[:1] for r in x.snippets if r.t_start <= m.t <= r.t_end), "")
        return Unit(m.stream_id, memory_id, m.t_start, m.t_end, "frame", f"[{format_time(m.t)}] {m.why}",
                    snippet_uri=uri, score=m.confidence)

    def search(
        self, query: str, scope: Scope | None = None, top_k: int = 10, deadline_s: float | None = None,
        image: bytes | None = None, like_segment_id: str | None = None,
    ) -> list[Moment]:
        """Moments matching ``query``, best first (see :mod:`retrieval.moments`). Search by
        example (:mod:`retrieval.by_example`): ``image`` (JPEG, PNG or WebP bytes) or
        ``like_segment_id`` (a stored segment's key frame) finds the moments that look like
        it; ``query`` may then be empty, and words and picture together are rank-fused."""
        by_example = bool(image) or bool(like_segment_id)
        if image and like_segment_id:
            raise InputError("search by an image or by like_segment_id, not both")
        text = validation.text(query, "query") if not by_example or (query or "").strip() else ""
        scope = validation.scope(scope)
        top_k = validation.top_k(top_k)
        clock = Deadline(validation.deadline(deadline_s))
        example = None
        if by_example:
            with clock.stage("example"):
                example = self._example(image, like_segment_id)
        moments: list[Moment] = []
        if text:
            with clock.stage("analysis"):
                q_vec, analysis = self._analyse(text)
            reader = MemoryReader(self.c.store)
            with clock.stage("search"):
                moments = self.moments.search(analysis, q_vec, scope, top_k, reader)
            if self.settings.retrieval.relisten_search and self.settings.relisten_max_memories > 0:
                moments = self._listen_for(text, analysis, q_vec, scope, top_k, moments, reader, clock)
        if example is not None:
            with clock.stage("search_by_example"):
                pictured = ExampleSearch(self.c.store).search(example, scope, top_k)
            moments = fuse_moments(moments, pictured, top_k) if text else pictured
        clock.check("returning the moments")
        self._after_request()
        return moments

    def _listen_for(self, text: str, analysis: QueryAnalysis, q_vec: np.ndarray, scope: Scope, top_k: int,
                    moments: list[Moment], reader: MemoryReader, clock: Deadline) -> list[Moment]:
        """A search for something said that no moment found quotes ("someone mentions the
        seagull"): the sentences that sound like it are heard again with the query as a hint
        (retrieval/relisten.py, judged against the audio as for Ask), and one that now says it
        comes first. Within the request's deadline; the moments found stay when nothing is."""
        words, sounding = self.moments.unheard_subject(analysis, scope, moments, top_k, reader)
        if not sounding:
            return moments
        misheard = [u for u in sounding if not says_all(u.text, words)]  # not those saying it
        if misheard:
            with clock.stage("relisten"):
                recall = Recall(units=list(misheard), route="sounds-like")
                self.relisten.run(analysis, q_vec, text, (), recall, reader, scope, self.scorer, clock.remaining,
                                  chosen=misheard)
        return self.moments.with_heard_again(sounding, words, moments, top_k, reader)

    def _example(self, image: bytes | None, like_segment_id: str | None) -> Example:
        """What a search by example looks for: a picture encoded by the describer's frame
        feature extractor (the one that made the stored frame features), or a stored
        segment's key frame features as they are."""
        if like_segment_id:
            return segment_example(self.c.store, like_segment_id)
        describer = self.c.describer
        features = getattr(describer, "frame_features", None)
        if features is None:  # any VisualDescriber: its describe() gives the same features
            def features(frames: Any) -> Any:
                return describer.describe(frames, [0.0] * len(frames), [False] * len(frames))[1]
        return image_example(image or b"", features, int(self.settings.analysis_max_width))

    def prepare_query(self, text: str) -> tuple[np.ndarray, QueryAnalysis]:
        """A query's vector and analysis, computed once for several scoped searches."""
        return self._analyse(validation.text(text, "query"))

    def search_prepared(self, prepared: tuple[np.ndarray, QueryAnalysis], scope: Scope, top_k: int,
                        reader: MemoryReader | None = None) -> list[Moment]:
        """:meth:`search` for a query :meth:`prepare_query` analysed (fuzzy recall runs one
        facet's query over many streams and windows); ``reader`` shares memories read."""
        q_vec, analysis = prepared
        return self.moments.search(analysis, q_vec, scope, top_k, reader or MemoryReader(self.c.store))
