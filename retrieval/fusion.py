"""Rank fusion of per-sub-query ranked lists (MARQUIS §3.1, eqs. 1–5).

A long request is decomposed into N sub-queries, each retrieved on its own; this module merges
the N ranked lists into one. Each list is a sequence of ``(item_id, similarity)`` best first,
and ``rank(v, q_i)`` is the 1-based position of ``v`` in list ``i``. With ``s(v, q_i)`` the
similarity and ``L(v)`` the lists that contain ``v``:

- ``rrf``  (eq. 1): ``Σ_{i∈L(v)} 1 / (K + rank(v, q_i))``; K = 10 by default, the paper's best.
- ``wrrf`` (eq. 5): ``Σ_{i∈L(v)} s(v, q_i) / (K + rank(v, q_i))``.
- ``sum``  (eq. 2): ``Σ_{i∈L(v)} s(v, q_i)``: a list that misses ``v`` adds nothing.
- ``max``  (eq. 3): ``max_{i∈L(v)} s(v, q_i)``.
- ``mean`` (eq. 4): ``Σ_{i∈L(v)} s(v, q_i) / |L(v)|``: the mean over the lists that *contain*
  ``v``, not over all N. Eq. 4 writes ``1/N``, but with a fixed N per query Mean would rank
  exactly like Sum, while the paper's Table 1 reports different numbers for the two (0.637 vs
  0.703 nDCG@10) and explains Mean's loss as "averaging dilutes strong matches with weak ones";
  a candidate's similarity to a list it is absent from (beyond the top 1,000) is unknown, not 0.

Input hygiene, chosen so that a sloppy retriever cannot silently distort a ranking:

- an item repeated within one list counts once, at its first (best) position and with that
  position's similarity; ranks are then the positions in the de-duplicated list, so a
  duplicate does not push the items after it down;
- a NaN (or infinite) similarity counts as 0.0, the neutral value of cosine similarity;
- K must be a positive finite number; an unknown method raises ``ValueError``.

The result is sorted by fused score descending; ties go to the item with the better best rank
(its smallest rank over all lists), then to the smaller item id, so equal inputs always give the
same order. Scores are summed with ``math.fsum`` so that equal contributions in a different
list order give bit-identical totals (1/11 + 1/12 == 1/12 + 1/11) and tie as they should.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from episodic.core.article import Fusion

DEFAULT_K = 10.0  # MARQUIS: K = 10 beat K = 60 and K = 100 (Table 1)


@dataclass
class _Hits:
    """What one candidate collected across the lists: a rank and similarity per list."""

    ranks: list[int] = field(default_factory=list)
    sims: list[float] = field(default_factory=list)


def _method(method: Fusion | str) -> Fusion:
    """The ``Fusion`` member for ``method``; a clear error for anything else."""
    if isinstance(method, Fusion):
        return method
    try:
        return Fusion(str(method).strip().lower())
    except ValueError:
        valid = ", ".join(repr(m.value) for m in Fusion)
        raise ValueError(f"unknown fusion method {method!r}: use one of {valid}") from None


def _k(k: float) -> float:
    """``k`` as a float, refusing values that would make 1/(K + rank) meaningless."""
    if isinstance(k, bool) or not isinstance(k, (int, float)):
        raise ValueError(f"fusion K must be a positive finite number, got {k!r}")
    k = float(k)
    if not math.isfinite(k) or k <= 0:
        raise ValueError(f"fusion K must be a positive finite number, got {k!r}")
    return k


def _similarity(value: object) -> float:
    """A similarity as a float; NaN and ±inf count as 0.0 (no evidence either way)."""
    s = float(value)  # type: ignore[arg-type]
    return s if math.isfinite(s) else 0.0


def _collect(lists: Iterable[Sequence[tuple[str, float]]]) -> dict[str, _Hits]:
    """Per candidate, its rank and similarity in every list that holds it."""
    hits: dict[str, _Hits] = {}
    for ranked in lists:
        seen: set[str] = set()
        rank = 0
        for item_id, sim in ranked:
            if item_id in seen:
                continue  # a duplicate keeps its first (best) position only
            seen.add(item_id)
            rank += 1
            h = hits.setdefault(item_id, _Hits())
            h.ranks.append(rank)
            h.sims.append(_similarity(sim))
    return hits


def _score(h: _Hits, method: Fusion, k: float) -> float:
    """The fused score of one candidate (see the module docstring for each formula)."""
    if method is Fusion.RRF:
        return math.fsum(1.0 / (k + r) for r in h.ranks)
    if method is Fusion.WEIGHTED_RRF:
        return math.fsum(s / (k + r) for s, r in zip(h.sims, h.ranks, strict=True))
    if method is Fusion.SUM:
        return math.fsum(h.sims)
    if method is Fusion.MAX:
        return max(h.sims)
    return math.fsum(h.sims) / len(h.sims)  # MEAN over the lists that contain the item


def fuse(
    lists: Iterable[Sequence[tuple[str, float]]],
    method: Fusion | str = Fusion.RRF,
    k: float = DEFAULT_K,
) -> list[tuple[str, float]]:
    """Fuse ranked lists of ``(item_id, similarity)`` (best first) into one ranking.

    ``method`` is a ``Fusion`` member or its value ("rrf", "wrrf", "max", "mean", "sum");
    ``k`` is RRF's smoothing constant (used by "rrf" and "wrrf" only, validated always so a
    bad configuration fails on the first call, whatever the method). Returns
    ``[(item_id, score), ...]`` by score descending; no lists, or only empty ones, give ``[]``.
    """
    how = _method(method)
    kk = _k(k)
    hits = _collect(lists)
    scored = [(item, _score(h, how, kk), min(h.ranks)) for item, h in hits.items()]
    scored.sort(key=lambda t: (-t[1], t[2], str(t[0])))
    return [(item, score) for item, score, _ in scored]
