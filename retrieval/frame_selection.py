"""Picking k telling frames out of m candidates: the Salient Frame Selector of MAGNET (seed 003).

A long video is sampled at ``m`` evenly spaced times (:func:`uniform_candidates`) and each
candidate gets an embedding ``z_t``. We then want ``k`` of them that neither look alike nor sit
next to each other, because near-duplicates waste the model's frame budget. For candidates
``a`` and ``b`` the affinity is ``Q_ab = S_ab + λ·D_ab`` with ``S_ab`` their cosine similarity and
``D_ab`` a penalty for being close in time; the chosen indices ``t_1 < … < t_k`` minimise the sum
of ``Q`` over consecutive choices, found exactly by dynamic programming with backtracking
(``C[j][i]`` = cheapest chain of ``j + 1`` picks ending at ``i``; O(k·m²) time).

Our reading of the penalty, since the printed formula is garbled: the paper says it is an
inverse sine of the separation (and its ablation prefers that to cosine or exponential forms)
but the argument cannot be read. We use ``D_ab = 1 / sin(π·|a−b| / (2·(m−1)))``: the argument
runs over (0, π/2] as the separation goes from 1 to m−1, so the penalty falls monotonically
from about ``2(m−1)/(π·|a−b|)`` for neighbours to exactly 1 for the two ends, and a sine that
could wrap past π/2 (making far pairs look close again) is avoided. The diagonal is 0, not inf,
so that ``λ = 0`` never forms ``0·inf``; the search only pairs ``p < i`` and never reads it.
With ``m == 1`` there is no pair and the matrix is ``[[0]]``.

Our addition: an optional relevance ``r_t`` in [0, 1] per candidate (from a looker or a
text-image similarity) weighted by ``μ``; the objective becomes ``Σ Q(consecutive) − μ·Σ r``,
so frames that bear on the question are preferred while diversity still counts. Without
relevance the objective is exactly the paper's. Ties go to the earliest indices. With ``k == 1``
there are no pairs: we take the most relevant candidate, or without relevance (or ``μ == 0``)
the middle one (``m // 2``), the single frame that best stands for an evenly sampled span.
"""

from __future__ import annotations

import numpy as np

__all__ = ["affinity", "select_salient", "separation_penalty", "uniform_candidates"]


def uniform_candidates(t_start: float, t_end: float, m: int) -> list[float]:
    """Times (s) at which to sample the ``m`` candidates: midpoints of ``m`` equal slices.

    Midpoints rather than slice starts so that no candidate falls on the very first or last
    instant, which is often a cut, a fade or a blank frame.
    """
    if m <= 0:
        raise ValueError(f"need at least one candidate frame, got m={m}")
    if not (np.isfinite(t_start) and np.isfinite(t_end)) or t_end < t_start:
        raise ValueError(f"bad time span [{t_start}, {t_end}]")
    step = (t_end - t_start) / m
    return [t_start + (i + 0.5) * step for i in range(m)]


def separation_penalty(m: int) -> np.ndarray:
    """The m×m temporal penalty ``D`` (diagonal 0): large for neighbours, 1 for the two ends."""
    if m < 0:
        raise ValueError(f"m must be non-negative, got {m}")
    if m <= 1:
        return np.zeros((m, m))
    gap = np.abs(np.subtract.outer(np.arange(m), np.arange(m))).astype(float)
    with np.errstate(divide="ignore"):
        penalty = 1.0 / np.sin(np.pi * gap / (2.0 * (m - 1)))
    np.fill_diagonal(penalty, 0.0)
    return penalty


def _check_embeddings(embeddings: np.ndarray) -> np.ndarray:
    z = np.asarray(embeddings, dtype=float)
    if z.ndim != 2:
        raise ValueError(f"embeddings must be 2-D (m, d), got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError("embeddings contain NaN or inf")
    return z


def affinity(embeddings: np.ndarray, separation: float) -> np.ndarray:
    """``Q = S + separation·D``: how redundant each pair of candidates would be together.

    A zero embedding has no direction, so its similarity to everything is taken as 0 instead of
    the NaN a plain division would give.
    """
    z = _check_embeddings(embeddings)
    if not np.isfinite(separation) or separation < 0:
        raise ValueError(f"separation must be finite and >= 0, got {separation}")
    norms = np.linalg.norm(z, axis=1)
    unit = np.divide(z, norms[:, None], out=np.zeros_like(z), where=norms[:, None] > 0)
    return unit @ unit.T + separation * separation_penalty(z.shape[0])


def select_salient(
    embeddings: np.ndarray,
    k: int,
    *,
    separation: float = 0.1,
    relevance: np.ndarray | None = None,
    relevance_weight: float = 1.0,
) -> list[int]:
    """Sorted indices of the ``k`` candidates minimising ``Σ Q(consecutive) − μ·Σ r``.

    ``embeddings`` is (m, d), one row per candidate in time order; ``separation`` is λ;
    ``relevance`` (length m, values in [0, 1]) and ``relevance_weight`` (μ) steer the choice
    toward the question. ``k >= m`` returns every index.
    """
    z = _check_embeddings(embeddings)
    m = z.shape[0]
    if m == 0:
        raise ValueError("no candidate frames to select from")
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if not np.isfinite(relevance_weight) or relevance_weight < 0:
        raise ValueError(f"relevance_weight must be finite and >= 0, got {relevance_weight}")
    bonus = np.zeros(m)
    if relevance is not None:
        r = np.asarray(relevance, dtype=float)
        if r.shape != (m,):
            raise ValueError(f"relevance must have shape ({m},), got {r.shape}")
        if not np.all(np.isfinite(r)) or np.any(r < 0) or np.any(r > 1):
            raise ValueError("relevance values must lie in [0, 1]")
        bonus = relevance_weight * r
    q = affinity(z, separation)
    if k >= m:
        return list(range(m))
    if k == 1:
        return [int(np.argmax(bonus))] if np.any(bonus > 0) else [m // 2]
    # cost[i] is the best objective of a chain of j+1 picks ending at candidate i
    cost = -bonus
    back = np.zeros((k, m), dtype=int)
    later = np.triu(np.ones((m, m), dtype=bool), k=1)  # later[p, i] ⇔ p < i
    for j in range(1, k):
        step = np.where(later, cost[:, None] + q, np.inf)
        back[j] = np.argmin(step, axis=0)  # earliest predecessor among ties
        cost = step[back[j], np.arange(m)] - bonus
    chain = [int(np.argmin(cost))]
    for j in range(k - 1, 0, -1):
        chain.append(int(back[j][chain[-1]]))
    return chain[::-1]
