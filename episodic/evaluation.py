"""Score the memory against a labelled set: retrieval, articles, grounded answers, citations.

For every labelled query (:mod:`episodic.labelled_set`):

* **retrieval** – nDCG@k and Recall@k (k = 10) of the fused segment ranking the article
  pipeline uses (decomposition + fusion), and of the same retrieval for the request alone
  (no decomposition): the MARQUIS Table 1 comparison. A segment's relevance is the grade of
  the best labelled moment of its stream that it overlaps.
* **grounded answer** – the article's steps against the labelled facts: MTGS (mean temporal
  IoU over the streams both name) and STEM (missing / hallucinated / out-of-order steps,
  stream-id false positives and negatives; steps matched at text cosine ≥ 0.5).
* **citations** – validity (every cited segment exists in the store) and precision (the
  cited segment supports the sentence, or the quotation in it that it is cited for:
  calibrated support ≥ ``article_support_min`` against what the segment holds).
* **facts** – the share of labelled facts whose keywords the article mentions.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from episodic.core.article import (
    Article,
    ArticleRequest,
    ArticleStyle,
    Citation,
    Fusion,
    Grounding,
    Step,
)
from episodic.core.query import Scope
from episodic.labelled_set import LabelledQuery, LabelledSet
from episodic.reasoning.citation_metrics import citation_precision, citation_validity
from episodic.reasoning.evidence import source_texts
from episodic.reasoning.grounding_metrics import embedding_similarity, mtgs, stem
from episodic.retrieval.detailed import MemoryReader
from episodic.retrieval.ranking_metrics import mean, ndcg_at_k, recall_at_k
from episodic.services.articles import ArticleService

K = 10
_QUOTE = re.compile(r"“([^”]+)”")


@dataclass
class QueryScores:
    id: str
    ndcg: float
    recall: float
    ndcg_single: float  # the request alone, no decomposition/fusion
    recall_single: float
    mtgs: float
    stem_missing: float
    stem_hallucinated: float
    stem_order: float
    stem_fp: float
    stem_fn: float
    citation_precision: float
    citation_validity: float
    fact_recall: float
    sub_queries: int
    seconds: float
    facts_missed: list[str] = field(default_factory=list)


@dataclass
class EvaluationReport:
    style: str
    fusion: str
    k: int
    queries: list[QueryScores]

    def means(self) -> dict[str, float]:
        keys = [k for k, v in asdict(self.queries[0]).items() if isinstance(v, float)] if self.queries else []
        return {k: round(mean(getattr(q, k) for q in self.queries), 4) for k in keys}

    def to_dict(self) -> dict[str, Any]:
        return {"style": self.style, "fusion": self.fusion, "k": self.k,
                "means": self.means(), "queries": [asdict(q) for q in self.queries]}


def _overlaps(a0: float, a1: float, b0: float, b1: float) -> bool:
    return a0 < b1 and b0 < a1


def segment_relevance(segment_ids: list[str], query: LabelledQuery, reader: MemoryReader) -> dict[str, float]:
    """Grade of each segment: the best labelled moment of its stream it overlaps."""
    out: dict[str, float] = {}
    for sid in segment_ids:
        m = reader.memory(sid)
        if m is None:
            continue
        grades = [r.grade for r in query.relevant if r.stream_id == m.stream_id and _overlaps(m.t_start, m.t_end, r.t_start, r.t_end)]
        if grades:
            out[sid] = max(grades)
    return out


def all_relevant_segments(service: ArticleService, query: LabelledQuery, reader: MemoryReader) -> dict[str, float]:
    """Every stored segment a labelled moment overlaps (the ideal ranking's pool)."""
    ids: list[str] = []
    for r in query.relevant:
        ids += [m.id for m in service.c.store.list_memories(r.stream_id, t_min=r.t_start, t_max=r.t_end, limit=1000)]
    reader.prefetch(ids, events=False)
    return segment_relevance(list(dict.fromkeys(ids)), query, reader)


def _mentions(text: str, keyword: str) -> bool:
    low = text.lower()
    return any(alt.strip().lower() in low for alt in keyword.split("|") if alt.strip())


def evaluate(
    service: ArticleService,
    labels: LabelledSet,
    style: ArticleStyle = ArticleStyle.GINGER,
    fusion: Fusion = Fusion.RRF,
    scope: Scope | None = None,
    on_query: Callable[[int, int, str], None] | None = None,
) -> EvaluationReport:
    s = service.settings
    scope = scope or Scope()
    embed = service.qa.scorer.embed
    similarity = embedding_similarity(embed)
    results: list[QueryScores] = []
    for n, q in enumerate(labels.queries, 1):
        if on_query is not None:
            on_query(n, len(labels.queries), q.id)
        reader = MemoryReader(service.c.store)
        pool = all_relevant_segments(service, q, reader)

        t0 = time.perf_counter()
        article: Article = service.write(ArticleRequest(q.request, style=style, scope=scope, fusion=fusion))
        seconds = time.perf_counter() - t0

        fused = service.retriever.retrieve(article.sub_queries, scope, reader, fusion=fusion.value,
                                           rrf_k=s.article_rrf_k, depth=s.article_per_query_k)
        single = service.retriever.retrieve(article.sub_queries[:1], scope, reader, fusion=fusion.value,
                                            rrf_k=s.article_rrf_k, depth=s.article_per_query_k)
        ranked = [sid for sid, _ in fused.segments]
        ranked_single = [sid for sid, _ in single.segments]
        rel = dict(pool)
        rel.update(segment_relevance(ranked + ranked_single, q, reader))

        gt_steps = [Step(f.text, [Grounding(f.stream_id, f.t_start, f.t_end)]) for f in q.facts]
        gt_groundings = [g for st in gt_steps for g in st.groundings]
        pred_groundings = [g for st in article.steps for g in st.groundings]
        stem_result = stem(gt_steps, article.steps, similarity)

        sentences = [sen for sec in article.sections for sen in sec.sentences]

        def exists(segment_id: str) -> bool:
            return service.c.store.get_memory(segment_id, with_vectors=False) is not None

        def supports(text: str, citation: Citation, reader: MemoryReader = reader) -> bool:
            """The segment supports the sentence, or one quotation in it ("…says: “A”, and
            later: “B”" cites A's and B's segments; each supports its own quote)."""
            if not exists(citation.segment_id):
                return False
            source = [*source_texts(citation.segment_id, reader), citation.stream_id.replace("-", " ").replace("_", " ")]
            pieces = [text, *_QUOTE.findall(text)]
            return max(service.support.score(p, source) for p in pieces) >= s.article_support_min

        text = article.markdown()
        missed = [f.text for f in q.facts if not all(_mentions(text, kw) for kw in f.keywords)]
        results.append(
            QueryScores(
                id=q.id,
                ndcg=round(ndcg_at_k(ranked, rel, K), 4),
                recall=round(recall_at_k(ranked, rel, K), 4),
                ndcg_single=round(ndcg_at_k(ranked_single, rel, K), 4),
                recall_single=round(recall_at_k(ranked_single, rel, K), 4),
                mtgs=round(mtgs(gt_groundings, pred_groundings), 4),
                stem_missing=round(stem_result.missing_rate, 4),
                stem_hallucinated=round(stem_result.hallucinated_rate, 4),
                stem_order=round(stem_result.wrong_order_rate, 4),
                stem_fp=round(stem_result.video_fp_rate, 4),
                stem_fn=round(stem_result.video_fn_rate, 4),
                citation_precision=round(citation_precision(sentences, article.citations, supports).value, 4),
                citation_validity=round(citation_validity(article.citations, exists, sentences).value, 4),
                fact_recall=round(1.0 - len(missed) / len(q.facts), 4) if q.facts else 1.0,
                sub_queries=len(article.sub_queries),
                seconds=round(seconds, 3),
                facts_missed=missed,
            )
        )
    return EvaluationReport(style=style.value, fusion=fusion.value, k=K, queries=results)
