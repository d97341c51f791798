"""Ranking quality: nDCG@k and Recall@k, as MARQUIS reports them (via ir-measures).

They follow trec_eval 9 (``ndcg_cut.k`` and ``recall.k``), which ir-measures wraps, so numbers
from this module can be put beside the paper's:

- nDCG@k: ``DCG@k = Σ_{r=1..k} gain(d_r) / log2(r + 1)`` with the *linear* gain
  ``gain(d) = rel(d)`` (not ``2^rel - 1``) and ranks 1-based; the ideal DCG@k is that of the
  judged relevance values sorted descending and cut at k. Relevance ≤ 0 (or unjudged) is no
  gain, as in trec_eval. nDCG@k = DCG@k / IDCG@k, and 0.0 when nothing is relevant.
  (trec_eval 8 discounted rank r by ``max(1, log2 r)``; version 9, and so ir-measures, uses
  ``log2(r + 1)``, the form here.)
- Recall@k: ``|top-k ∩ relevant| / |relevant|``, relevant meaning relevance > 0; 0.0 when
  nothing is relevant.

Caveat on "nothing relevant": trec_eval skips such queries when it averages, while these
functions return 0.0 for them (a number is always defined). To reproduce trec_eval's means,
leave those queries out before calling ``mean`` (``has_relevant`` tells which).

The ranking is taken in the order given (trec_eval re-sorts a run by score, ties by docno).
An id repeated in it counts once, at its first position, so a duplicate can neither earn its
gain twice nor push later items down.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Collection, Iterable, Mapping, Sequence


def _k(k: int) -> int:
    """``k`` as an int ≥ 1: a cutoff of 0, a negative one or a fraction is a caller's bug."""
    if isinstance(k, bool):
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    try:
        kk = operator.index(k)
    except TypeError:
        raise ValueError(f"k must be an integer >= 1, got {k!r}") from None
    if kk < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    return kk


def _top(ranked_ids: Iterable[str], k: int) -> list[str]:
    """The first ``k`` distinct ids of the ranking."""
    out: list[str] = []
    seen: set[str] = set()
    for item in ranked_ids:
        if item in seen:
            continue
        seen.add(item)
        out.append(item)
        if len(out) == k:
            break
    return out


def _gain(rel: float) -> float:
    """Linear gain; a judgement ≤ 0 earns nothing, a NaN judgement is refused."""
    r = float(rel)
    if math.isnan(r):
        raise ValueError("relevance judgements must be numbers, got NaN")
    return r if r > 0 else 0.0


def dcg_at_k(ranked_ids: Sequence[str], relevance: Mapping[str, float], k: int) -> float:
    """Discounted cumulative gain of the first ``k`` distinct ids (linear gain)."""
    top = _top(ranked_ids, _k(k))
    return math.fsum(_gain(relevance.get(d, 0.0)) / math.log2(r + 1) for r, d in enumerate(top, 1))


def ndcg_at_k(ranked_ids: Sequence[str], relevance: Mapping[str, float], k: int) -> float:
    """nDCG@k with graded relevance ``relevance[id]`` (missing ids are not relevant).

    The ideal ranking orders every judged id by relevance; 0.0 when no id has relevance > 0.
    """
    kk = _k(k)
    ideal = sorted((g for g in (_gain(v) for v in relevance.values()) if g > 0), reverse=True)
    idcg = math.fsum(g / math.log2(r + 1) for r, g in enumerate(ideal[:kk], 1))
    if idcg <= 0:
        return 0.0
    return dcg_at_k(ranked_ids, relevance, kk) / idcg


def _relevant(relevant_ids: Mapping[str, float] | Collection[str]) -> set[str]:
    """The relevant ids: a mapping's keys with relevance > 0, or the collection itself."""
    if isinstance(relevant_ids, Mapping):
        return {d for d, rel in relevant_ids.items() if _gain(rel) > 0}
    return set(relevant_ids)


def has_relevant(relevant_ids: Mapping[str, float] | Collection[str]) -> bool:
    """Whether a query has any relevant item (trec_eval averages only over those that do)."""
    return bool(_relevant(relevant_ids))


def recall_at_k(
    ranked_ids: Sequence[str], relevant_ids: Mapping[str, float] | Collection[str], k: int
) -> float:
    """Share of the relevant items found in the first ``k`` distinct ids; 0.0 if none exist.

    ``relevant_ids`` is either a set of ids or a relevance mapping (relevant: relevance > 0).
    """
    kk = _k(k)
    relevant = _relevant(relevant_ids)
    if not relevant:
        return 0.0
    return sum(1 for d in _top(ranked_ids, kk) if d in relevant) / len(relevant)


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean over queries; 0.0 for no values (an empty evaluation scores nothing)."""
    vals = [float(v) for v in values]
    return math.fsum(vals) / len(vals) if vals else 0.0
