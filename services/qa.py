"""The query side in one object: ``MemoryQA(components).ask(request)`` and ``.search(...)``.

Ask follows HippoMM's retrieval (C.2):

1. **query analysis** – the question's modality type (:mod:`retrieval.query_analysis`);
2. **fast retrieval** – an answer from the ThetaEvent summaries with an evidence-capped
   confidence (:mod:`retrieval.fast`, :mod:`reasoning.answer`);
3. if that confidence is below τ (``fast_confidence_tau``, 0.75): **detailed recall** over the
   ShortTermMemories, guided by the type – feature search with the visual text fallback
   (:mod:`retrieval.detailed`) or cross-modal association (:mod:`retrieval.association`);
4. **adaptive reasoning** – synthesis over the detailed evidence, reconciled with the fast
   answer; a multiple-choice question always gets exactly one option.

Every request is validated first (clear :class:`~episodic.core.errors.InputError` messages), and
``deadline_s`` is checked between stages: a request that runs out of time raises
:class:`DeadlineExceeded` instead of answering late. Streams that do not exist simply hold no
evidence, so the answer is "I found nothing about that in memory" with confidence 0.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from episodic.core import validation
from episodic.core.deadline import Deadline
from episodic.core.errors import EpisodicError
from episodic.core.interfaces import QueryBackends
from episodic.core.query import AskRequest, AskResult, Moment, Pathway, QueryType, Scope
from episodic.reasoning.answer import NOTHING_FOUND, Answerer, Draft
from episodic.reasoning.confidence import calibrate
from episodic.reasoning.structured import StructuredAnswerer, asks_pictured, option_streams
from episodic.retrieval.association import CrossModalAssociation
from episodic.retrieval.detailed import DetailedRecall, MemoryReader, Recall, TextScorer, relevant
from episodic.retrieval.fast import FastRetrieval
from episodic.retrieval.modality_check import retype_by_evidence
from episodic.retrieval.moments import MomentSearch
from episodic.retrieval.query_analysis import QueryAnalysis, QueryAnalyzer
from episodic.retrieval.question_shape import question_shape
from episodic.retrieval.relisten import Relistener

# A free-text answer this unsupported (every evidence signal near zero) is reported as
# "nothing found": quoting the least-bad memory would read as an answer.
NOTHING_BELOW = 0.05


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
        self.answerer = Answerer(lambda: self.c.llm, self.scorer, self.settings.retrieval)
        store = components.store
        self.fast = FastRetrieval(store, self.scorer, self.settings.retrieval)
        self.detailed = DetailedRecall(store, self.scorer, self.settings.retrieval)
        self.association = CrossModalAssociation(store, self.scorer, self.settings.retrieval)
        self.moments = MomentSearch(store, self.scorer, self.settings.retrieval)
        self.structured = StructuredAnswerer(store, self.scorer, self.settings.retrieval)
        self.relisten = Relistener(components, self.settings)
        self._store_warm = False

    def prepare(self) -> None:
        """Load the embedder, the example questions, the model and the store's vector cache
        now (a server warm-up), so the first request does not pay for them."""
        self.analyzer.analyze("warm up", None)
        llm = self.c.llm
        if hasattr(llm, "prepare"):
            llm.prepare()
        self.relisten.prepare()
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
        q_vec = np.asarray(self.c.embedder.embed_texts([text])[0], dtype=np.float32)
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
            q_vec, analysis = self._analyse(req.question)
            analysis.shape = question_shape(req.question, len(req.options))
        reader = MemoryReader(self.c.store)
        with clock.stage("modality_check"):
            # a "visual" question about things only ever said is about speech
            analysis = retype_by_evidence(
                analysis, lambda probe: self.detailed.recall(probe, q_vec, req.scope, reader)
            )
        shape = analysis.shape
        # order, count and which-stream questions are answered from the memory's structure
        # (time order, moments, stream ids), which the summaries alone cannot show
        structured = bool(shape.order or shape.counts or shape.sound or shape.gist) or (
            bool(req.options)
            and len({x for x in option_streams(req.options, reader.streams_in(req.scope)) if x}) >= 2
        ) or asks_pictured(analysis)
        with clock.stage("fast_retrieval"):
            _, summaries = self.fast.search(analysis, q_vec, req.scope, reader)
        answerer = self.answerer.for_request(clock.remaining)
        if summaries:
            with clock.stage("fast_answer"):
                fast = answerer.fast_attempt(analysis, summaries, req.options)
        else:
            fast = Draft(answer="", confidence=0.0, caps={"evidence": 0.0})
        trace = Trace(analysis=analysis, fast=fast)

        if fast.found and fast.confidence >= s.fast_confidence_tau and not structured:
            final, pathway = fast, Pathway.FAST
        else:
            with clock.stage("detailed_recall"):
                if analysis.query_type is QueryType.VIDEO_AUDIO:
                    recall = self.association.associate(analysis, q_vec, req.scope, reader)
                else:
                    recall = self.detailed.recall(analysis, q_vec, req.scope, reader)
            # listening again to the recalled audio of a speech question (retrieval/relisten.py)
            heard = self.relisten.run(analysis, q_vec, req.question, req.options, recall, reader,
                                      req.scope, self.scorer, clock.remaining)
            trace.notes["relisten"] = heard
            if heard.memories:
                clock.timings["relisten"] = round(heard.seconds * 1000.0, 2)
            hearing = None
            if req.options and not structured:
                # each short option put into the recalled sentence and scored against its audio
                with clock.stage("option_audio"):
                    hearing = self.relisten.hear_options(
                        analysis, req.question, req.options, recall, reader, clock.remaining
                    )
                trace.notes["options_heard"] = hearing.to_dict()
            with clock.stage("synthesis"):
                detailed = None
                if structured:
                    detailed = self.structured.answer(
                        analysis, q_vec, req.options, recall.units, req.scope, reader
                    )
                if detailed is not None:
                    final = detailed
                else:
                    detailed = answerer.synthesize(
                        analysis, recall.units, summaries, req.options,
                        heard=hearing.heard if hearing is not None else None,
                    )
                    final = answerer.reconcile(analysis, fast, detailed)
            trace.detailed, trace.recall = detailed, recall
            pathway = Pathway.DETAILED
        clock.check("returning the answer")

        signals: dict[str, Any] = dict(final.caps)
        signals.update(raw=round(float(final.confidence), 4), source=final.source,
                       query_type=analysis.query_type.value, focus=shape.focus,
                       order=shape.order or "", options=len(req.options))
        trace.notes["signals"] = signals
        nothing = final.choice_index is None and final.confidence < NOTHING_BELOW
        if not final.found or nothing:
            # no evidence, or none that bears on the question: say so rather than quote noise
            answer, confidence, evidence, choice = NOTHING_FOUND, 0.0, [], None
        else:
            answer, choice = final.answer, final.choice_index
            confidence = calibrate(final.confidence, signals)
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
        self._after_request()
        return result, trace

    def search(
        self, query: str, scope: Scope | None = None, top_k: int = 10, deadline_s: float | None = None
    ) -> list[Moment]:
        """Moments matching ``query``, best first (see :mod:`retrieval.moments`)."""
        text = validation.text(query, "query")
        scope = validation.scope(scope)
        top_k = validation.top_k(top_k)
        clock = Deadline(validation.deadline(deadline_s))
        with clock.stage("analysis"):
            q_vec, analysis = self._analyse(text)
        with clock.stage("search"):
            moments = self.moments.search(analysis, q_vec, scope, top_k, MemoryReader(self.c.store))
        clock.check("returning the moments")
        self._after_request()
        return moments
