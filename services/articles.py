"""Multi-video article synthesis with citations: the MARQUIS pipeline (seed 000) end to end.

``ArticleService(components).write(ArticleRequest("what happened at the station …"))``

1. **decompose** the request into atomic sub-queries (:mod:`retrieval.decomposition`);
2. **retrieve** each over the memory and **fuse** the ranked segment lists (RRF, K = 10 by
   default; :mod:`retrieval.multi_query`, :mod:`retrieval.fusion`);
   with ``article_rerank``, **rerank** the head of the fused list (:mod:`retrieval.rerank`);
3. **extract** notes from the top ``article_max_segments`` fused segments and keep the
   query-conditioned claims (:mod:`reasoning.evidence`);
4. **calibrate** each claim against its own segment and drop those under
   ``article_support_min`` (:mod:`reasoning.calibration`);
   with ``article_qa`` = single or iterative, **QA evidence** (MARQUIS SS-QA / ITER-QA):
   questions made from the sub-queries (:mod:`reasoning.qa_questions`) are answered by Ask,
   one stream at a time, over the first ``article_qa_streams`` streams that the question's
   sub-query ranked (then those of the segments read); an answer that is not an abstention and is
   confident enough becomes a claim, quoted from the stored note it rests on and cited by
   that note's segment, and calibrated like the others; iterative mode asks follow-ups for
   the sub-queries still without a claim, up to ``article_qa_rounds`` rounds;
5. **write** the article in the requested style (:mod:`reasoning.article_writers`), number
   the citations (every one a stored segment of a stream the request may see), and derive
   the grounded multi-step form (AVHaystacks: steps with ⟨stream, start, end⟩).

When the evidence is thin (fewer than ``article_min_claims`` calibrated claims) the article
says so in its first sentence; with none it says that the memory holds nothing on the
request and cites nothing, rather than write around a gap. Progress is reported after each
stage (and each sub-query) through an optional callback, which the gRPC ``Article`` call
streams to the client.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from episodic.config import Settings
from episodic.core import validation
from episodic.core.article import (
    Article,
    ArticleProgress,
    ArticleRequest,
    Citation,
    Claim,
    Fusion,
    Grounding,
    Section,
    Sentence,
    Step,
)
from episodic.core.deadline import Deadline
from episodic.core.interfaces import QueryBackends
from episodic.core.query import AskRequest, AskResult, Scope
from episodic.reasoning.answer import NOTHING_FOUND
from episodic.reasoning.article_writers import ArticleWriter, Prose
from episodic.reasoning.calibration import EvidenceSupport
from episodic.reasoning.evidence import EvidenceExtractor, merge_repeats, notes_of, source_texts
from episodic.reasoning.model_reply import parse_reply
from episodic.reasoning.qa_questions import Question, QuestionMaker
from episodic.retrieval.decomposition import QueryDecomposer, strip_instructions
from episodic.retrieval.detailed import MemoryReader, Unit
from episodic.retrieval.multi_query import FusedRanking, MultiQueryRetriever
from episodic.retrieval.query_analysis import QueryAnalysis, content_terms
from episodic.retrieval.rerank import Reranker, RerankQuery, TextReranker, candidates_of, reorder
from episodic.services.qa import MemoryQA

Progress = Callable[[ArticleProgress], None]
Prepared = tuple[str, QueryAnalysis, np.ndarray]  # a sub-query, its analysis and vector

# Where an answer's own words stop and its citation begins: 'Milo (heard: "…", cam, 1–3 s)'.
_CITED_TAIL = re.compile(r"\s+\(.*$", re.S)
# Modalities an answer may rest on that are the segment's own observations (a summary is a
# paraphrase, a frame is looked at again): the claim quotes the matching note.
_DIRECT = ("speech", "ocr", "visual", "sound")


@dataclass
class QAReport:
    """What the QA step did, for the progress line and the benchmark."""

    asked: int = 0  # Ask calls (question × stream)
    answered: int = 0  # answers kept as evidence (before merging with the other claims)
    rounds: int = 0
    covered: list[str] = field(default_factory=list)  # facets QA found evidence for
    # (round, facet, question, streams whose answer became a claim before calibration), in order
    log: list[tuple[int, str, str, list[str]]] = field(default_factory=list)


def _title(request: str) -> str:
    need = strip_instructions(request) or request
    need = need[:1].upper() + need[1:]
    return need if len(need) <= 100 else need[:99].rstrip() + "…"


class ArticleService:
    """Articles over one store; shares the query side's models and caches with ``qa``."""

    def __init__(
        self, components: QueryBackends, qa: MemoryQA | None = None, settings: Settings | None = None
    ) -> None:
        """``settings`` overrides the components' article settings (benchmarks vary them)."""
        self.c = components
        self.qa = qa or MemoryQA(components, warm_after_request=False)
        self.settings = settings or components.settings
        s = self.settings
        self.decomposer = QueryDecomposer(lambda: self.c.llm, s)
        self.retriever = MultiQueryRetriever(components.store, self.qa.scorer, self.qa.analyzer, s.retrieval)
        self.extractor = EvidenceExtractor(self.qa.scorer, s)
        self.support = EvidenceSupport(self.qa.scorer.embed)
        # behind the Protocol: a video reranker can take its place
        self.reranker: Reranker = TextReranker(self.qa.scorer, self.qa.analyzer)
        self.questions = QuestionMaker(lambda: self.c.llm, s)
        self._local = threading.local()  # per thread: a server writes articles concurrently

    @property
    def last_qa(self) -> QAReport | None:
        """What the QA step of this thread's last article did (None: QA was off); for the
        benchmark and tests, as the Article record has no place for it."""
        return getattr(self._local, "qa", None)

    def _prose(self) -> Prose:
        mode = self.settings.article_writer_llm
        use = mode == "always" or (mode == "auto" and self.settings.llm == "openai")
        return Prose((lambda: self.c.llm) if use else None, self.support, self.settings)

    def write(self, req: ArticleRequest, progress: Progress | None = None) -> Article:
        req = validation.article_request(req)
        s = self.settings
        clock = Deadline(req.deadline_s)

        def report(stage: str, done: int, total: int, message: str = "") -> None:
            if progress is not None:
                progress(ArticleProgress(stage, done, total, message))

        with clock.stage("decompose"):
            decomposition = self.decomposer.decompose(req.request, req.max_sub_queries)
        sub_queries = decomposition.sub_queries
        report("decompose", 1, 1, f"{len(sub_queries)} sub-queries ({decomposition.method})")

        reader = MemoryReader(self.c.store)

        def on_query(done: int, total: int) -> None:
            clock.check("the next sub-query")
            report("retrieve", done, total, sub_queries[done - 1])

        with clock.stage("retrieve"):
            ranking = self.retriever.retrieve(
                sub_queries,
                req.scope,
                reader,
                fusion=(req.fusion or Fusion(s.article_fusion)).value,
                rrf_k=s.article_rrf_k,
                depth=s.article_per_query_k,
                on_query=on_query,
            )
        fused = ranking.segments
        queries: list[Prepared] = [(h.sub_query, h.analysis, h.vector) for h in ranking.per_query]
        if s.article_rerank and fused:
            with clock.stage("rerank"):
                fused = self.rerank(req.request, queries, fused, reader, req.scope)
            report("rerank", 1, 1, f"{min(len(fused), s.article_rerank_depth)} segments reranked")
        segments = [sid for sid, _ in fused[: s.article_max_segments]]

        with clock.stage("extract"):
            notes = notes_of(segments, reader, req.scope)
            claims = self.extractor.claims(notes, queries)
        report("extract", 1, 1, f"{len(claims)} claims from {len(notes)} notes in {len(segments)} segments")

        with clock.stage("calibrate"):
            kept, dropped = self.calibrate(claims, reader)
        report("calibrate", 1, 1, f"{len(kept)} supported, {dropped} dropped")

        self._local.qa = None
        if s.article_qa != "off" and segments:
            with clock.stage("qa"):
                qa_claims, qa_dropped, q = self.qa_evidence(req, queries, ranking, segments, kept, reader, clock, report)
            self._local.qa = q
            dropped += qa_dropped
            kept = merge_repeats(kept + qa_claims, s.association_window_s)
            kept.sort(key=lambda c: (-c.relevance, c.stream_id, c.t_start))
            report("qa", q.asked, q.asked, f"{q.answered} answers kept from {q.asked} asked in {q.rounds} round(s)")

        with clock.stage("write"):
            kept = kept[: s.article_max_claims]
            prose = self._prose()
            writer = ArticleWriter(self.qa.scorer.embed, prose, s)
            sections = writer.write(req.style, req.request, kept, sub_queries)
        report("write", 1, 1, f"{sum(len(x.sentences) for x in sections)} sentences")
        clock.check("returning the article")

        article = self._assemble(req, sections, kept, sub_queries, dropped, reader)
        article.timings_ms = clock.finish()
        return article

    def calibrate(self, claims: list[Claim], reader: MemoryReader) -> tuple[list[Claim], int]:
        """Each claim's support by its own segment; those under the threshold are dropped."""
        if not claims:
            return [], 0
        sources = [source_texts(c.segment_id, reader) for c in claims]
        scores = self.support.support([c.text for c in claims], sources)
        kept = []
        for c, p in zip(claims, scores, strict=True):
            c.support = p
            if p >= self.settings.article_support_min:
                kept.append(c)
        return kept, len(claims) - len(kept)

    # -- reranking -----------------------------------------------------------------------------
    def rerank(
        self,
        request: str,
        queries: Sequence[Prepared],
        fused: Sequence[tuple[str, float]],
        reader: MemoryReader,
        scope: Scope,
    ) -> list[tuple[str, float]]:
        """The fused list with its first ``article_rerank_depth`` segments in the reranker's
        order (MARQUIS reranks the fused candidates before reading them)."""
        candidates = candidates_of(fused, reader, scope, self.settings.article_rerank_depth)
        query = RerankQuery(request, tuple(q[0] for q in queries), tuple(queries))
        return reorder(fused, self.reranker.rerank(query, candidates))

    # -- QA evidence (MARQUIS §4.3: SS-QA, ITER-QA) --------------------------------------------
    def qa_evidence(
        self,
        req: ArticleRequest,
        queries: Sequence[Prepared],
        ranking: FusedRanking,
        segments: Sequence[str],
        kept: Sequence[Claim],
        reader: MemoryReader,
        clock: Deadline,
        report: Callable[[str, int, int, str], None],
    ) -> tuple[list[Claim], int, QAReport]:
        """Questions from the sub-queries, answered by Ask per stream; the answers that hold
        become calibrated claims. Returns (claims, claims calibration dropped, report).

        A question is asked over the streams its sub-query's own ranking found first, then
        those of the segments read, ``article_qa_streams`` at most: a sub-query whose best
        segments were fused below ``article_max_segments`` still has its streams asked, which
        is how QA reaches what the cut left out. Every stream comes from the request's scoped
        retrieval, so Ask never looks outside what the request may see.

        The first round asks the facets without a claim first (gaps are where QA can add
        most), then the others; ``iterative`` mode asks follow-ups for the facets still
        without a claim, until none is left, the questions run out or ``article_qa_rounds``
        rounds have been asked. The deadline is checked before every Ask, and each Ask gets
        only the time that is left."""
        s = self.settings
        facets = [q[0] for q in queries[1:]] or [q[0] for q in queries[:1]]
        prepared = {q[0]: q for q in queries}
        pointed = self._streams_of(segments, reader)
        per_facet = {h.sub_query: self._streams_of([sid for sid, _ in h.ranked], reader) for h in ranking.per_query}
        covered = {c.sub_query for c in kept}
        rounds = 1 if s.article_qa == "single" else s.article_qa_rounds
        history: list[tuple[str, str]] = []
        out: list[Claim] = []
        dropped = 0
        qa = QAReport()
        for r in range(rounds):
            gaps = [f for f in facets if f not in covered]
            if r == 0:
                made = self.questions.first(req.request, gaps + [f for f in facets if f in covered],
                                            s.article_qa_questions)
            elif gaps:
                made = self.questions.follow_up(req.request, gaps, history, s.article_qa_questions)
            else:
                break
            if not made.questions:
                break
            qa.rounds += 1
            found: list[Claim] = []
            for k, question in enumerate(made.questions, 1):
                # the streams its sub-query's own ranking found first (they may lie below the
                # cut: that is where QA can reach), then those of the segments read
                streams = list(dict.fromkeys(per_facet.get(question.facet, []) + pointed))[: s.article_qa_streams]
                answers: list[str] = []
                kept_from: list[str] = []
                for sid in streams:
                    clock.check("the next question")
                    left = clock.remaining()
                    scope = Scope(stream_ids=(sid,), t_min=req.scope.t_min, t_max=req.scope.t_max)
                    result = self.qa.ask(AskRequest(question.text, scope=scope, deadline_s=left))
                    qa.asked += 1
                    claim = self._answer_claim(question, result, sid, reader, req.scope, prepared)
                    if claim is not None:
                        found.append(claim)
                        answers.append(_CITED_TAIL.sub("", result.answer))
                        kept_from.append(sid)
                history.append((question.text, "; ".join(answers)))
                qa.log.append((r + 1, question.facet, question.text, kept_from))
                report("qa", k, len(made.questions), f"round {r + 1}: {question.text}")
            good, bad = self.calibrate(found, reader)
            dropped += bad
            out += good
            covered |= {c.sub_query for c in good}
            qa.covered += [c.sub_query for c in good if c.sub_query not in qa.covered]
        qa.answered = len(out)
        return out, dropped, qa

    @staticmethod
    def _streams_of(segment_ids: Sequence[str], reader: MemoryReader) -> list[str]:
        """The distinct streams of some segments, in the segments' order."""
        reader.prefetch(segment_ids, events=False)
        streams = (m.stream_id for sid in segment_ids if (m := reader.memory(sid)) is not None)
        return list(dict.fromkeys(streams))

    def _answer_claim(
        self,
        question: Question,
        result: AskResult,
        stream_id: str,
        reader: MemoryReader,
        scope: Scope,
        prepared: dict[str, Prepared],
    ) -> Claim | None:
        """An Ask answer as a claim, or None when it is no evidence: an abstention, a
        confidence under ``article_qa_min_confidence``, no cited segment of the asked stream
        that is stored, or a note that does not bear on the question or its facet.

        The claim quotes the stored note the answer rests on (the cited piece itself, or for
        an answer resting on a summary or a frame, the segment's note sharing most of the
        answer's words), so it says only what the segment holds and the writers phrase it
        by its modality (what was said is quoted as said)."""
        s = self.settings
        span = _CITED_TAIL.sub("", result.answer).strip()
        if (
            result.answer == NOTHING_FOUND
            or result.confidence < s.article_qa_min_confidence
            or parse_reply(span).abstained
        ):
            return None
        cited = [e for e in result.evidence if e.stream_id == stream_id and e.modality != "memory"]
        if not cited:
            return None
        top = cited[0]
        memory = reader.memory(top.segment_id)
        if memory is None or memory.stream_id != stream_id:
            return None  # never cite what is not stored, nor outside the stream asked
        notes = notes_of([top.segment_id], reader, scope)
        note = self._note_for(notes, top.text, top.modality, span)
        if note is None:
            return None
        targets = [prepared[question.facet]] if question.facet in prepared else []
        vec = np.asarray(self.qa.scorer.embed([question.text])[0], dtype=np.float32)
        targets.append((question.text, self.qa.analyzer.analyze(question.text, vec), vec))
        # the stream was chosen by us: its name in the question is no sign the note answers it
        if self.extractor.relevance([note], targets, s.article_claim_min_score, stream_words=False).get(0) is None:
            return None
        best = self.extractor.relevance([note], targets).get(0)  # ranked on the others' scale
        if best is None:
            return None
        return Claim(
            id=f"{note.memory_id}#qa-{note.modality}@{note.t_start:.2f}",
            text=note.text,
            modality=note.modality,
            stream_id=note.stream_id,
            segment_id=note.memory_id,
            t_start=round(note.t_start, 3),
            t_end=round(note.t_end, 3),
            kind="qa",
            sub_query=question.facet,
            relevance=round(float(best[0]), 4),
            snippet_uri=note.snippet_uri,
        )

    @staticmethod
    def _note_for(notes: Sequence[Unit], text: str, modality: str, answer: str) -> Unit | None:
        """The note an answer rests on: the cited piece when it is one of the segment's own
        observations; otherwise the observation (summary last) sharing most content words
        with the answer and its cited text; None when no note shares any."""
        if modality in _DIRECT:
            same = " ".join(text.split())
            for u in notes:
                if u.modality == modality and (u.text == same or same.startswith(u.text) or u.text in same):
                    return u
        words = set(content_terms(f"{answer} {text}"))
        for pool in ([u for u in notes if u.modality != "summary"], [u for u in notes if u.modality == "summary"]):
            best, best_n = None, 0
            for u in pool:
                shared = len(words & set(content_terms(u.text)))
                if shared > best_n:
                    best, best_n = u, shared
            if best is not None:
                return best
        return None

    def _assemble(
        self,
        req: ArticleRequest,
        sections: list[Section],
        claims: list[Claim],
        sub_queries: list[str],
        dropped: int,
        reader: MemoryReader,
    ) -> Article:
        """Claim indices → numbered citations in order of first use; the thin-evidence
        notice; the grounded steps."""
        numbers: dict[tuple[str, float, float], int] = {}
        citations: list[Citation] = []
        out_sections: list[Section] = []
        used: list[Claim] = []
        for sec in sections:
            sentences = []
            for sen in sec.sentences:
                ns: list[int] = []
                for i in sen.citations:
                    c = claims[i]
                    key = (c.segment_id, c.t_start, c.t_end)
                    if key not in numbers:
                        if reader.memory(c.segment_id) is None:  # never cite what is not stored
                            continue
                        numbers[key] = len(citations) + 1
                        citations.append(
                            Citation(len(citations) + 1, c.stream_id, c.segment_id, c.t_start, c.t_end, c.snippet_uri)
                        )
                        used.append(c)
                    if numbers[key] not in ns:
                        ns.append(numbers[key])
                if ns:
                    sentences.append(Sentence(sen.text, sorted(ns)))
            if sentences:
                out_sections.append(Section(sec.heading, sentences))

        thin = len(used) < self.settings.article_min_claims
        scope = req.scope.stream_ids
        where = f"the streams {', '.join(scope)}" if scope else "the memory"
        if not used:
            out_sections = [Section("", [Sentence(f"Nothing in {where} bears on this request; there is nothing to report.")])]
        elif thin:
            note = Sentence(f"{where[:1].upper() + where[1:]} holds little about this request; this is all it has.")
            out_sections[0] = Section(out_sections[0].heading, [note, *out_sections[0].sentences])

        by_n = {c.n: c for c in citations}
        steps = [
            Step(sen.text, [Grounding(by_n[n].stream_id, by_n[n].t_start, by_n[n].t_end) for n in sen.citations])
            for sec in out_sections
            for sen in sec.sentences
            if sen.citations
        ]
        return Article(
            request=req.request,
            style=req.style,
            title=_title(req.request),
            sections=out_sections,
            citations=citations,
            claims=[dataclasses.replace(c) for c in claims],
            dropped_claims=dropped,
            sub_queries=list(sub_queries),
            steps=steps,
            thin_evidence=thin,
        )
