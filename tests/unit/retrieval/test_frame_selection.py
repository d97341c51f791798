"""The salient frame selector (MAGNET's SFS, seed 003): the inverse-sine penalty, affinities,
hand-worked selections, a brute-force check of the dynamic programme, and bad inputs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from episodic.retrieval.frame_selection import (
    affinity,
    select_salient,
    separation_penalty,
    uniform_candidates,
)

R2 = 1 / math.sqrt(2)
# Four 2-D candidates used by the hand-worked cases. Cosine similarities:
#   S01 = -1, S02 = 0, S03 = +0.7071, S12 = 0, S13 = -0.7071, S23 = +0.7071
FOUR = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [R2, R2]])
# With m = 4 the penalty is 1 / sin(π·gap / 6): gap 1 → 2, gap 2 → 2/√3 ≈ 1.1547, gap 3 → 1.
D4 = {1: 2.0, 2: 2 / math.sqrt(3), 3: 1.0}


def objective(z: np.ndarray, picks: tuple[int, ...], lam: float, r=None, mu: float = 1.0) -> float:
    """Σ Q over consecutive picks − μ·Σ r, computed directly (no shared code with the module)."""
    total = 0.0
    for a, b in itertools.pairwise(picks):
        na, nb = np.linalg.norm(z[a]), np.linalg.norm(z[b])
        s = 0.0 if na == 0 or nb == 0 else float(z[a] @ z[b] / (na * nb))
        m = len(z)
        total += s + lam / math.sin(math.pi * (b - a) / (2 * (m - 1)))
    if r is not None:
        total -= mu * sum(r[i] for i in picks)
    return total


# ---- the penalty and the affinity ----------------------------------------------------------


def test_penalty_m4_by_hand() -> None:
    d = separation_penalty(4)
    expected = np.array(
        [
            [0, D4[1], D4[2], D4[3]],
            [D4[1], 0, D4[1], D4[2]],
            [D4[2], D4[1], 0, D4[1]],
            [D4[3], D4[2], D4[1], 0],
        ]
    )
    np.testing.assert_allclose(d, expected, rtol=1e-12)


def test_penalty_small_and_shape() -> None:
    assert separation_penalty(0).shape == (0, 0)
    np.testing.assert_array_equal(separation_penalty(1), [[0.0]])
    np.testing.assert_allclose(separation_penalty(2), [[0, 1], [1, 0]])
    d = separation_penalty(512)
    assert np.all(np.isfinite(d))
    np.testing.assert_allclose(d, d.T)
    assert d[0, 511] == pytest.approx(1.0)
    # neighbours: ≈ 2(m−1)/π, and the penalty falls as the gap grows
    assert d[0, 1] == pytest.approx(2 * 511 / math.pi, rel=1e-4)
    assert np.all(np.diff(d[0, 1:]) < 0)


def test_affinity_adds_scaled_penalty() -> None:
    q = affinity(FOUR, 1.0)
    assert q[0, 1] == pytest.approx(-1 + 2)
    assert q[1, 3] == pytest.approx(-R2 + 2 / math.sqrt(3))
    assert q[2, 3] == pytest.approx(R2 + 2)
    np.testing.assert_allclose(affinity(FOUR, 0.0)[0, 3], R2)


def test_zero_vectors_give_zero_similarity_not_nan() -> None:
    z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    q = affinity(z, 0.0)
    assert np.all(np.isfinite(q))
    assert q[0, 1] == 0.0 and q[0, 2] == 0.0 and q[1, 1] == pytest.approx(1.0)


def test_all_zero_embeddings_spread_by_penalty_alone() -> None:
    # Q = λ·D only. m=4, k=2: the smallest D is 1 at gap 3 → (0, 3).
    assert select_salient(np.zeros((4, 3)), 2, separation=1.0) == [0, 3]
    # m=5 (D = 1/sin(π·gap/8)): gap 1 → 2.6131, 2 → 1.4142, 3 → 1.0824, 4 → 1.
    # k=3: (0,2,4) costs 2·1.4142 = 2.828; (0,1,4) 2.613+1.082 = 3.695; (0,3,4) the same;
    # every other triple has a gap-1 step plus more → (0, 2, 4), evenly spread.
    assert select_salient(np.zeros((5, 3)), 3, separation=1.0) == [0, 2, 4]


# ---- hand-worked selections ----------------------------------------------------------------


def test_without_penalty_the_most_dissimilar_pair_wins() -> None:
    # λ = 0: Q = S; the unique minimum is S01 = −1 → (0, 1), even though they are neighbours.
    assert select_salient(FOUR, 2, separation=0.0) == [0, 1]


def test_penalty_changes_the_choice() -> None:
    # λ = 1: Q01 = −1+2 = 1, Q02 = 0+1.1547, Q03 = 0.7071+1 = 1.7071, Q12 = 0+2 = 2,
    # Q13 = −0.7071+1.1547 = 0.4476, Q23 = 0.7071+2 = 2.7071 → (1, 3) wins at 0.4476.
    assert select_salient(FOUR, 2, separation=1.0) == [1, 3]
    # λ = 0.5: Q01 = 0, Q13 = −0.7071+0.5774 = −0.1298, the rest positive → (1, 3) again.
    assert select_salient(FOUR, 2, separation=0.5) == [1, 3]
    # λ = 0.2: Q01 = −1+0.4 = −0.6 beats Q13 = −0.7071+0.2309 = −0.4762 → back to (0, 1).
    assert select_salient(FOUR, 2, separation=0.2) == [0, 1]


def test_three_of_four_by_hand() -> None:
    # λ = 1, k = 3: (0,1,2) = Q01+Q12 = 1+2 = 3; (0,1,3) = 1+0.4476 = 1.4476;
    # (0,2,3) = 1.1547+2.7071 = 3.8618; (1,2,3) = 2+2.7071 = 4.7071 → (0, 1, 3).
    assert select_salient(FOUR, 3, separation=1.0) == [0, 1, 3]


def test_relevance_changes_the_choice() -> None:
    r = np.array([0.0, 0.0, 1.0, 0.0])
    # λ = 1, μ = 1: pairs holding frame 2 lose 1 → Q02−1 = 0.1547, Q12−1 = 1, Q23−1 = 1.7071;
    # the best pair without it is Q13 = 0.4476 → (0, 2) wins.
    assert select_salient(FOUR, 2, separation=1.0, relevance=r, relevance_weight=1.0) == [0, 2]
    # μ = 0.2: Q02−0.2 = 0.9547 > Q13 = 0.4476 → the relevance is too weak, (1, 3) stays.
    assert select_salient(FOUR, 2, separation=1.0, relevance=r, relevance_weight=0.2) == [1, 3]
    # Relevance on the first frame counts too: r = (1, 0, 0, 0), μ = 1 → Q01−1 = 0,
    # Q02−1 = 0.1547, Q03−1 = 0.7071, against Q13 = 0.4476 → (0, 1).
    first = np.array([1.0, 0.0, 0.0, 0.0])
    assert select_salient(FOUR, 2, separation=1.0, relevance=first) == [0, 1]
    # μ = 0 or no relevance: the paper's objective.
    assert select_salient(FOUR, 2, separation=1.0, relevance=r, relevance_weight=0.0) == [1, 3]


def test_k_one_and_k_at_least_m() -> None:
    z = np.eye(5)
    assert select_salient(z, 1) == [2]  # no relevance → the middle candidate m // 2
    tied = np.array([0.1, 0.9, 0.3, 0.9, 0.0])
    assert select_salient(z, 1, relevance=tied) == [1]  # the most relevant; a tie → the earliest
    assert select_salient(z, 1, relevance=np.zeros(5)) == [2]
    assert select_salient(z, 5) == [0, 1, 2, 3, 4]
    assert select_salient(z, 9) == [0, 1, 2, 3, 4]
    assert select_salient(z[:1], 3) == [0]


# ---- the dynamic programme against brute force ---------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_dp_reaches_the_brute_force_minimum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 9))
    k = int(rng.integers(2, m + 1)) if m > 2 else 2
    z = rng.normal(size=(m, int(rng.integers(2, 6))))
    if seed % 5 == 0:
        z[rng.integers(m)] = 0.0  # a zero vector now and then
    lam = float(rng.choice([0.0, 0.05, 0.3, 1.0]))
    r = rng.random(m) if seed % 2 else None
    mu = float(rng.choice([0.0, 0.5, 2.0]))
    picks = select_salient(z, k, separation=lam, relevance=r, relevance_weight=mu)
    assert len(picks) == min(k, m) and picks == sorted(set(picks))
    best = min(objective(z, c, lam, r, mu) for c in itertools.combinations(range(m), min(k, m)))
    assert objective(z, tuple(picks), lam, r, mu) == pytest.approx(best, abs=1e-9)


def test_large_m_runs() -> None:
    z = np.random.default_rng(0).normal(size=(512, 16))
    picks = select_salient(z, 8)
    assert len(picks) == 8 and picks == sorted(set(picks))


# ---- uniform candidates --------------------------------------------------------------------


def test_uniform_candidates_are_slice_midpoints() -> None:
    assert uniform_candidates(0.0, 10.0, 5) == pytest.approx([1, 3, 5, 7, 9])
    assert uniform_candidates(60.0, 61.0, 1) == pytest.approx([60.5])
    assert uniform_candidates(2.0, 2.0, 3) == pytest.approx([2, 2, 2])


@pytest.mark.parametrize(("a", "b", "m"), [(0, 10, 0), (0, 10, -2), (5, 1, 3), (0, math.inf, 3)])
def test_uniform_candidates_rejects(a: float, b: float, m: int) -> None:
    with pytest.raises(ValueError):
        uniform_candidates(a, b, m)


# ---- bad inputs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("embeddings", "k", "kwargs", "match"),
    [
        (np.eye(4), 0, {}, "k must be positive"),
        (np.eye(4), -1, {}, "k must be positive"),
        (np.zeros((0, 3)), 2, {}, "no candidate"),
        (np.ones(4), 2, {}, "2-D"),
        (np.ones((2, 2, 2)), 2, {}, "2-D"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), 1, {}, "NaN or inf"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), 1, {}, "NaN or inf"),
        (np.eye(4), 2, {"relevance": np.ones(3)}, "shape"),
        (np.eye(4), 2, {"relevance": np.array([0, 0, 1.5, 0])}, r"\[0, 1\]"),
        (np.eye(4), 2, {"relevance": np.array([0, -0.1, 0, 0])}, r"\[0, 1\]"),
        (np.eye(4), 2, {"relevance": np.array([0, np.nan, 0, 0])}, r"\[0, 1\]"),
        (np.eye(4), 2, {"separation": -0.1}, "separation"),
        (np.eye(4), 2, {"separation": math.nan}, "separation"),
        (np.eye(4), 2, {"relevance_weight": -1.0}, "relevance_weight"),
    ],
)
def test_select_rejects(embeddings, k, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        select_salient(embeddings, k, **kwargs)


def test_bad_input_rejected_even_when_k_covers_all() -> None:
    with pytest.raises(ValueError, match="NaN"):
        select_salient(np.array([[np.nan, 1.0]]), 5)
