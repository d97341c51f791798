"""Retrieval for many sub-queries at once, fused into one ranking of segments (MARQUIS §3).

Each sub-query is retrieved on its own, the way moment search retrieves (nearest fine-grained
vectors, memories and summaries as candidates; every text piece ranked by the hybrid score
of :class:`retrieval.detailed.TextScorer`), giving a ranked list of segments (ShortTermMemory
ids) scored by their best piece. The lists are fused with :func:`retrieval.fusion.fuse`
(RRF with K = 10 by default). What each sub-query found in each segment is kept, so evidence
extraction knows which pieces answered which need.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from episodic.config import RetrievalSettings
from episodic.core.interfaces import QueryStore
from episodic.core.query import Scope
from episodic.retrieval.detailed import (
    MemoryReader,
    TextScorer,
    Unit,
    relevant,
    semantic_candidates,
)
from episodic.retrieval.fusion import fuse
from episodic.retrieval.query_analysis import QueryAnalysis, QueryAnalyzer


@dataclass
class SubQueryHits:
    """One sub-query's ranked segments and the pieces that matched in each."""

    sub_query: str
    analysis: QueryAnalysis
    vector: np.ndarray
    ranked: list[tuple[str, float]]  # (segment id, best piece score), best first
    pieces: dict[str, list[Unit]] = field(default_factory=dict)  # segment id → matching pieces


@dataclass
class FusedRanking:
    segments: list[tuple[str, float]]  # (segment id, fused score), best first
    per_query: list[SubQueryHits]


class MultiQueryRetriever:
    def __init__(self, store: QueryStore, scorer: TextScorer, analyzer: QueryAnalyzer, settings: RetrievalSettings) -> None:
        self.store = store
        self.scorer = scorer
        self.analyzer = analyzer
        self.settings = settings

    def retrieve_one(
        self, sub_query: str, q_vec: np.ndarray, scope: Scope, reader: MemoryReader, depth: int
    ) -> SubQueryHits:
        analysis = self.analyzer.analyze(sub_query, q_vec)
        s = self.settings
        ids = semantic_candidates(self.store, q_vec, scope, s, max(s.search_candidates, depth))
        ids = ids[: max(s.search_max_memories, depth)]
        units = reader.units(ids, self.scorer.reuse_visual_vectors, scope)
        ranked_units = self.scorer.rank(analysis, q_vec, units)
        pieces: dict[str, list[Unit]] = {}
        best: dict[str, float] = {}
        for u in ranked_units:
            if not relevant(u, s, analysis):
                continue
            pieces.setdefault(u.memory_id, []).append(u)
            best.setdefault(u.memory_id, u.score)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]
        kept = {mid for mid, _ in ranked}
        return SubQueryHits(sub_query, analysis, q_vec, ranked, {m: p for m, p in pieces.items() if m in kept})

    def retrieve(
        self,
        sub_queries: Sequence[str],
        scope: Scope,
        reader: MemoryReader,
        *,
        fusion: str = "rrf",
        rrf_k: float = 10.0,
        depth: int = 20,
        on_query: Callable[[int, int], None] | None = None,
    ) -> FusedRanking:
        """Every sub-query's ranking, and their fusion. ``on_query(done, total)`` after each."""
        vectors = np.asarray(self.scorer.embed(list(sub_queries)), dtype=np.float32)
        per_query: list[SubQueryHits] = []
        for i, (text, vec) in enumerate(zip(sub_queries, vectors, strict=True)):
            per_query.append(self.retrieve_one(text, vec, scope, reader, depth))
            if on_query is not None:
                on_query(i + 1, len(sub_queries))
        fused = fuse([h.ranked for h in per_query], method=fusion, k=rrf_k)
        return FusedRanking(segments=fused, per_query=per_query)
