"""Multi-video article synthesis with citations: the MARQUIS pipeline (seed 000) end to end.

``ArticleService(components).write(ArticleRequest("what happened at the station …"))``

1. **decompose** the request into atomic sub-queries (:mod:`retrieval.decomposition`);
2. **retrieve** each over the memory and **fuse** the ranked segment lists (RRF, K = 10 by
   default; :mod:`retrieval.multi_query`, :mod:`retrieval.fusion`);
3. **extract** notes from the top ``article_max_segments`` fused segments and keep the
   query-conditioned claims (:mod:`reasoning.evidence`);
4. **calibrate** each claim against its own segment and drop those under
   ``article_support_min`` (:mod:`reasoning.calibration`);
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
from collections.abc import Callable

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
from episodic.reasoning.article_writers import ArticleWriter, Prose
from episodic.reasoning.calibration import EvidenceSupport
from episodic.reasoning.evidence import EvidenceExtractor, notes_of, source_texts
from episodic.retrieval.decomposition import QueryDecomposer, strip_instructions
from episodic.retrieval.detailed import MemoryReader
from episodic.retrieval.multi_query import MultiQueryRetriever
from episodic.services.qa import MemoryQA

Progress = Callable[[ArticleProgress], None]


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
        segments = [sid for sid, _ in ranking.segments[: s.article_max_segments]]

        with clock.stage("extract"):
            notes = notes_of(segments, reader, req.scope)
            queries = [(h.sub_query, h.analysis, h.vector) for h in ranking.per_query]
            claims = self.extractor.claims(notes, queries)
        report("extract", 1, 1, f"{len(claims)} claims from {len(notes)} notes in {len(segments)} segments")

        with clock.stage("calibrate"):
            kept, dropped = self.calibrate(claims, reader)
        report("calibrate", 1, 1, f"{len(kept)} supported, {dropped} dropped")

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
