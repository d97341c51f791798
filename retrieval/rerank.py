"""Reranking the fused segment list before evidence is read (MARQUIS §3.2).

MARQUIS reorders the top 100 fused candidates with a video-native reranker (RankVideo) that
judges each candidate against the full request; on MAGMaR2026 that lifted RRF K=10 from
0.700 to 0.759 nDCG@10. No video reranker runs offline here, so :class:`TextReranker` is the
best scorer this project has: the hybrid text score of :class:`retrieval.detailed.TextScorer`
(embedding cosine + the query's own words in the piece and around it), taken for each
candidate segment's pieces against the request and each sub-query, the best over the
sub-queries (a segment is worth reading when it answers *one* facet well), and blended with
the candidate's fused score, so that a segment many sub-queries agree on (what RRF rewards)
is not thrown out for one sharp match elsewhere.

The pipeline sees only the :class:`Reranker` Protocol: a candidate carries its segment id,
stream, times and snippet (what a video reranker needs) as well as its text pieces (what this
one reads), so a video or cross-encoder reranker can replace this class without touching the
article service.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from episodic.core.query import Scope
from episodic.retrieval.detailed import MemoryReader, TextScorer, Unit
from episodic.retrieval.query_analysis import QueryAnalysis, QueryAnalyzer

# How much of the final score is the text score (the rest is the normalised fused score).
# An even blend. On the labelled article set (episodic.labelled_set, 4 distractor streams)
# nDCG@10 of the reranked list was 0.85 with the fused score alone (weight 0), 0.97 at 0.5,
# 0.97–0.99 anywhere from 0.35 to 0.8, and 0.89 with the text score alone (weight 1): three
# requests are too few to tune finer than "both halves count".
TEXT_WEIGHT = 0.5
# Candidates reordered: the head of the fused list (MARQUIS reranks 100 videos; a segment is
# far smaller than a video, and the article reads only article_max_segments of them).
DEFAULT_DEPTH = 40


@dataclass(frozen=True)
class RerankQuery:
    """What the candidates are judged against: the request and its sub-queries.

    ``prepared`` may carry each sub-query's analysis and vector (the retrieval computed them
    already); a reranker that does not need them ignores them.
    """

    request: str
    sub_queries: tuple[str, ...] = ()
    prepared: tuple[tuple[str, QueryAnalysis, np.ndarray], ...] = ()


@dataclass
class RerankCandidate:
    """One fused segment: where it is (for a reranker that looks at the video), what it holds
    as text (for one that reads), and its scores."""

    segment_id: str
    stream_id: str
    t_start: float
    t_end: float
    fused_score: float  # the first stage's score (RRF or the configured fusion)
    fused_rank: int  # 1-based position in the fused list
    snippet_uri: str = ""
    units: list[Unit] = field(default_factory=list)
    score: float = 0.0  # the reranker's score: higher is better
    text_score: float = 0.0  # the reranker's own judgement before blending (for explanation)


class Reranker(Protocol):
    def rerank(self, query: RerankQuery, candidates: Sequence[RerankCandidate]) -> list[RerankCandidate]:
        """The candidates re-scored (``score``), best first."""
        ...


def candidates_of(
    ranking: Sequence[tuple[str, float]], reader: MemoryReader, scope: Scope, depth: int = DEFAULT_DEPTH
) -> list[RerankCandidate]:
    """The head of a fused ranking as rerank candidates, with every text piece of each
    segment inside the scope (segments no longer stored are left out)."""
    head = list(ranking[: max(0, depth)])
    ids = [sid for sid, _ in head]
    reader.prefetch(ids)
    out: list[RerankCandidate] = []
    for rank, (sid, score) in enumerate(head, 1):
        memory = reader.memory(sid)
        if memory is None:
            continue
        units = reader.units([sid], reuse_visual_vectors=True, scope=scope)
        snippet = memory.snippets[0].uri if memory.snippets else ""
        out.append(
            RerankCandidate(sid, memory.stream_id, memory.t_start, memory.t_end, float(score), rank, snippet, units)
        )
    return out


class TextReranker:
    """The hybrid text scorer over each candidate's pieces, best over the sub-queries, blended
    with the fused score (see the module docstring)."""

    def __init__(self, scorer: TextScorer, analyzer: QueryAnalyzer, text_weight: float = TEXT_WEIGHT) -> None:
        self.scorer = scorer
        self.analyzer = analyzer
        self.text_weight = text_weight

    def _queries(self, query: RerankQuery) -> list[tuple[str, QueryAnalysis, np.ndarray]]:
        if query.prepared:
            return list(query.prepared)
        texts = list(dict.fromkeys([query.request, *query.sub_queries]))
        vecs = np.asarray(self.scorer.embed(texts), dtype=np.float32)
        return [(t, self.analyzer.analyze(t, v), v) for t, v in zip(texts, vecs, strict=True)]

    def text_scores(self, query: RerankQuery, candidates: Sequence[RerankCandidate]) -> list[float]:
        """Each candidate's best piece score over the sub-queries (0 for one without text)."""
        units = [u for c in candidates for u in c.units]
        best: dict[str, float] = {}
        if units:
            for _, analysis, vec in self._queries(query):
                for u in self.scorer.rank(analysis, vec, list(units)):
                    if u.score > best.get(u.memory_id, -math.inf):
                        best[u.memory_id] = u.score
        return [max(0.0, best.get(c.segment_id, 0.0)) for c in candidates]

    def rerank(self, query: RerankQuery, candidates: Sequence[RerankCandidate]) -> list[RerankCandidate]:
        if not candidates:
            return []
        text = self.text_scores(query, candidates)
        top_text = max(text) or 1.0
        top_fused = max((c.fused_score for c in candidates), default=0.0) or 1.0
        w = self.text_weight
        out = []
        for c, t in zip(candidates, text, strict=True):
            blended = w * t / top_text + (1.0 - w) * max(c.fused_score, 0.0) / top_fused
            out.append(replace(c, score=round(blended, 6), text_score=round(t, 6)))
        out.sort(key=lambda c: (-c.score, c.fused_rank))
        return out


def reorder(ranking: Sequence[tuple[str, float]], reranked: Sequence[RerankCandidate]) -> list[tuple[str, float]]:
    """The fused ranking with its head in the reranker's order (scores are the reranker's);
    the tail the reranker did not see follows in its fused order."""
    head = [(c.segment_id, c.score) for c in reranked]
    seen = {sid for sid, _ in head}
    return head + [(sid, s) for sid, s in ranking if sid not in seen]
