"""Article-side metrics against values worked out by hand (the arithmetic is in the comments):
rank fusion (MARQUIS eqs. 1–5), nDCG/Recall, MTGS and STEM (AVHaystacks), citation checks."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from episodic.core.article import Citation, Fusion, Grounding, Sentence, Step
from episodic.reasoning.citation_metrics import (
    CitationScore,
    citation_precision,
    citation_recall,
    citation_validity,
)
from episodic.reasoning.grounding_metrics import (
    embedding_similarity,
    intersection_duration,
    merge_intervals,
    mtgs,
    per_stream_iou,
    stem,
    total_duration,
)
from episodic.retrieval.fusion import fuse
from episodic.retrieval.ranking_metrics import has_relevant, mean, ndcg_at_k, recall_at_k

# ------------------------------------------------------------------ fusion

# Three sub-query lists, best first (rank = 1-based position).
L1 = [("a", 0.9), ("b", 0.8), ("c", 0.5)]
L2 = [("b", 0.7), ("c", 0.6), ("d", 0.4)]
L3 = [("c", 0.95), ("a", 0.3)]
LISTS = [L1, L2, L3]


def scores(fused: list[tuple[str, float]]) -> dict[str, float]:
    return dict(fused)


def ids(fused: list[tuple[str, float]]) -> list[str]:
    return [item for item, _ in fused]


def test_rrf_k10_hand_values_and_tie_order() -> None:
    fused = fuse(LISTS, "rrf", k=10)
    s = scores(fused)
    # a: rank 1 in L1, rank 2 in L3            -> 1/11 + 1/12
    # b: rank 2 in L1, rank 1 in L2            -> 1/12 + 1/11  (ties with a)
    # c: rank 3 in L1, 2 in L2, 1 in L3        -> 1/13 + 1/12 + 1/11
    # d: rank 3 in L2                          -> 1/13
    assert s["a"] == pytest.approx(1 / 11 + 1 / 12)
    assert s["b"] == pytest.approx(1 / 12 + 1 / 11)
    assert s["c"] == pytest.approx(1 / 13 + 1 / 12 + 1 / 11)
    assert s["d"] == pytest.approx(1 / 13)
    # a and b tie exactly (fsum), both have best rank 1 -> item id decides: a before b
    assert s["a"] == s["b"]
    assert ids(fused) == ["c", "a", "b", "d"]


def test_rrf_default_k_is_10_and_k_changes_scores() -> None:
    assert fuse(LISTS) == fuse(LISTS, Fusion.RRF, k=10)
    # k = 1: d is rank 3 in L2 only -> 1/(1+3) = 0.25
    assert scores(fuse(LISTS, "rrf", k=1))["d"] == pytest.approx(0.25)


def test_weighted_rrf_hand_values() -> None:
    fused = fuse(LISTS, "wrrf", k=10)
    s = scores(fused)
    # a: 0.9/11 + 0.3/12            = 0.081818 + 0.025            = 0.106818
    # b: 0.8/12 + 0.7/11            = 0.066667 + 0.063636         = 0.130303
    # c: 0.5/13 + 0.6/12 + 0.95/11  = 0.038462 + 0.05 + 0.086364  = 0.174825
    # d: 0.4/13                                                   = 0.030769
    assert s["a"] == pytest.approx(0.9 / 11 + 0.3 / 12)
    assert s["b"] == pytest.approx(0.8 / 12 + 0.7 / 11)
    assert s["c"] == pytest.approx(0.5 / 13 + 0.6 / 12 + 0.95 / 11)
    assert s["d"] == pytest.approx(0.4 / 13)
    assert ids(fused) == ["c", "b", "a", "d"]
    # the enum member is the same method as its value
    assert fuse(LISTS, Fusion.WEIGHTED_RRF) == fused


def test_max_sum_mean_hand_values() -> None:
    # max: a max(0.9, 0.3)=0.9, b max(0.8, 0.7)=0.8, c max(0.5, 0.6, 0.95)=0.95, d 0.4
    mx = fuse(LISTS, "max")
    assert scores(mx) == pytest.approx({"a": 0.9, "b": 0.8, "c": 0.95, "d": 0.4})
    assert ids(mx) == ["c", "a", "b", "d"]
    # sum: a 0.9+0.3=1.2, b 0.8+0.7=1.5, c 0.5+0.6+0.95=2.05, d 0.4
    sm = fuse(LISTS, Fusion.SUM)
    assert scores(sm) == pytest.approx({"a": 1.2, "b": 1.5, "c": 2.05, "d": 0.4})
    assert ids(sm) == ["c", "b", "a", "d"]
    # mean over the lists that contain the item: a 1.2/2=0.6, b 1.5/2=0.75,
    # c 2.05/3=0.683333, d 0.4/1=0.4. (Dividing by N=3 for all would rank like sum.)
    mn = fuse(LISTS, "mean")
    assert scores(mn) == pytest.approx({"a": 0.6, "b": 0.75, "c": 2.05 / 3, "d": 0.4})
    assert ids(mn) == ["b", "c", "a", "d"]


def test_ties_break_by_best_rank_then_id() -> None:
    # max: x and y both 0.5; y is rank 1 in its list, x rank 2 -> y first despite its id
    fused = fuse([[("y", 0.5), ("x", 0.5)], [("z", 0.5)]], "max")
    # z also 0.5 with best rank 1: y and z tie on rank too -> id order y < z
    assert ids(fused) == ["y", "z", "x"]
    # same input, list order swapped: same result
    assert fuse([[("z", 0.5)], [("y", 0.5), ("x", 0.5)]], "max") == fused


def test_duplicates_count_once_at_their_best_rank() -> None:
    lists = [[("a", 0.9), ("a", 0.2), ("b", 0.8)]]
    # rrf: a at rank 1 -> 1/11; b is rank 2 of the de-duplicated list -> 1/12
    assert scores(fuse(lists, "rrf")) == pytest.approx({"a": 1 / 11, "b": 1 / 12})
    # sum: a keeps its first similarity 0.9 (not 0.9 + 0.2 = 1.1)
    assert scores(fuse(lists, "sum")) == pytest.approx({"a": 0.9, "b": 0.8})


def test_nan_similarity_counts_as_zero() -> None:
    lists = [[("a", float("nan")), ("b", 0.1)]]
    fused = fuse(lists, "sum")
    assert ids(fused) == ["b", "a"]
    assert scores(fused) == {"b": 0.1, "a": 0.0}
    # wrrf: a contributes 0/11, b 0.1/12
    assert scores(fuse(lists, "wrrf")) == pytest.approx({"a": 0.0, "b": 0.1 / 12})


def test_empty_input() -> None:
    assert fuse([]) == []
    assert fuse([[], []], "mean") == []


@pytest.mark.parametrize("k", [0, -1, float("nan"), float("inf"), True, "10", None])
def test_bad_k_is_refused(k: object) -> None:
    with pytest.raises(ValueError, match="K must be a positive finite number"):
        fuse(LISTS, "rrf", k=k)  # type: ignore[arg-type]


def test_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown fusion method 'borda'.*'rrf'"):
        fuse(LISTS, "borda")


# ------------------------------------------------------------------ nDCG / Recall

RANKED = ["a", "b", "c", "d"]
REL = {"b": 2.0, "d": 1.0, "e": 3.0, "f": 0.0}


def test_ndcg_graded_hand_values() -> None:
    # DCG@3 = 0/log2(2) + 2/log2(3) + 0/log2(4)                 = 1.261860
    # IDCG@3 over rels sorted [3, 2, 1]: 3/1 + 2/log2(3) + 1/2     = 4.761860
    dcg3 = 2 / math.log2(3)
    idcg3 = 3 + 2 / math.log2(3) + 1 / 2
    assert ndcg_at_k(RANKED, REL, 3) == pytest.approx(dcg3 / idcg3)  # 0.264993
    assert ndcg_at_k(RANKED, REL, 3) == pytest.approx(0.264993, abs=1e-6)
    # @4 adds d: 1/log2(5); the ideal has only 3 relevant items, so IDCG@4 = IDCG@3
    assert ndcg_at_k(RANKED, REL, 4) == pytest.approx((dcg3 + 1 / math.log2(5)) / idcg3)
    # a cutoff past the list changes nothing
    assert ndcg_at_k(RANKED, REL, 100) == ndcg_at_k(RANKED, REL, 4)


def test_ndcg_ideal_is_cut_at_k_and_perfect_is_one() -> None:
    # @1: ranking starts with a (rel 0) -> 0; the ideal @1 is 3/1
    assert ndcg_at_k(RANKED, REL, 1) == 0.0
    assert ndcg_at_k(["e", "b", "d"], REL, 2) == pytest.approx(1.0)
    # linear gain, not 2^rel - 1: [b, e] @2 = (2 + 3/log2 3) / (3 + 2/log2 3) = 0.936921
    assert ndcg_at_k(["b", "e"], REL, 2) == pytest.approx(
        (2 + 3 / math.log2(3)) / (3 + 2 / math.log2(3))
    )


def test_ndcg_duplicates_and_no_relevant() -> None:
    # b twice: counted once at rank 1, d moves up to rank 2: (2 + 1/log2 3) / IDCG@3
    assert ndcg_at_k(["b", "b", "d"], REL, 3) == pytest.approx(
        (2 + 1 / math.log2(3)) / (3 + 2 / math.log2(3) + 1 / 2)
    )
    assert ndcg_at_k(RANKED, {"a": 0.0}, 3) == 0.0
    assert ndcg_at_k(RANKED, {}, 3) == 0.0
    # a negative judgement is no gain (trec_eval: gain > 0 only), not a penalty:
    # [a, b] with a = -1, b = 1 -> (0 + 1/log2 3) / (1/1) = 0.630930
    assert ndcg_at_k(["a", "b"], {"a": -1.0, "b": 1.0}, 2) == pytest.approx(1 / math.log2(3))


def test_recall_hand_values() -> None:
    # relevant (rel > 0): {b, d, e}; f has rel 0 and is not relevant
    assert recall_at_k(RANKED, REL, 3) == pytest.approx(1 / 3)  # b
    assert recall_at_k(RANKED, REL, 4) == pytest.approx(2 / 3)  # b, d
    assert recall_at_k(RANKED, {"b", "d", "e"}, 4) == pytest.approx(2 / 3)
    assert recall_at_k(["f", "e"], REL, 2) == pytest.approx(1 / 3)  # f does not count
    assert recall_at_k(RANKED, {"a": 0.0}, 4) == 0.0
    assert recall_at_k(RANKED, set(), 4) == 0.0


def test_has_relevant_and_mean() -> None:
    assert has_relevant(REL) and not has_relevant({"a": 0.0}) and not has_relevant([])
    assert mean([0.5, 1.0, 0.0]) == pytest.approx(0.5)
    assert mean([]) == 0.0


@pytest.mark.parametrize("k", [0, -3, 1.5, True, "3"])
def test_bad_cutoff_is_refused(k: object) -> None:
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        ndcg_at_k(RANKED, REL, k)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        recall_at_k(RANKED, REL, k)  # type: ignore[arg-type]


# ------------------------------------------------------------------ intervals / MTGS


def test_interval_helpers() -> None:
    assert merge_intervals([(5, 15), (0, 10), (20, 25), (25, 30)]) == [(0, 15), (20, 30)]
    assert total_duration([(0, 10), (5, 15), (20, 22)]) == pytest.approx(17.0)  # 15 + 2
    # [0,4]∪[6,10] ∩ [2,8] = [2,4] + [6,8] = 4
    assert intersection_duration([(0, 4), (6, 10)], [(2, 8)]) == pytest.approx(4.0)
    assert intersection_duration([(0, 1)], [(1, 2)]) == 0.0
    with pytest.raises(ValueError, match="ends before it starts"):
        merge_intervals([(3, 1)])


def test_mtgs_identical_and_disjoint() -> None:
    assert mtgs([("v1", 0, 10)], [("v1", 0, 10)]) == pytest.approx(1.0)
    assert mtgs([("v1", 0, 10)], [("v1", 20, 30)]) == 0.0


def test_mtgs_merged_unions_over_two_videos() -> None:
    gt = [
        Grounding("v1", 0, 10),
        Grounding("v1", 5, 15),  # v1 GT merges to [0,15], 15 s
        Grounding("v2", 0, 4),
        Grounding("v2", 6, 10),  # v2 GT: [0,4]+[6,10], 8 s
        Grounding("v4", 0, 50),  # only in GT: ignored
    ]
    pred = [
        ("v1", 10, 20),  # 10 s; ∩ [10,15] = 5; ∪ = 15+10-5 = 20 -> IoU 0.25
        ("v2", 2, 8),  # 6 s; ∩ [2,4]+[6,8] = 4; ∪ = 8+6-4 = 10 -> IoU 0.4
        ("v3", 0, 100),  # only in prediction: ignored
    ]
    assert per_stream_iou(gt, pred) == pytest.approx({"v1": 0.25, "v2": 0.4})
    assert mtgs(gt, pred) == pytest.approx((0.25 + 0.4) / 2)  # 0.325


def test_mtgs_no_matched_video_is_zero() -> None:
    assert mtgs([("v1", 0, 10)], [("v2", 0, 10)]) == 0.0
    assert mtgs([], [("v2", 0, 10)]) == 0.0


# ------------------------------------------------------------------ STEM

# Rows: GT steps 0..2; columns: predicted steps 0..2.
SIM = np.array(
    [
        [0.2, 0.9, 0.1],
        [0.8, 0.3, 0.2],
        [0.1, 0.2, 0.4],
    ]
)


def fixed_similarity(gt: list[str], pred: list[str]) -> np.ndarray:
    assert gt == ["boil water", "add pasta", "serve"]
    assert pred == ["add pasta", "boil water", "dance"]
    return SIM


GT_STEPS = [
    Step("boil water", [Grounding("v1", 0, 10), Grounding("v2", 5, 15)]),
    Step("add pasta", [Grounding("v2", 20, 30)]),
    Step("serve", [Grounding("v4", 0, 1)]),
]
PRED_STEPS = [
    Step("add pasta", [Grounding("v2", 25, 35)]),
    Step("boil water", [Grounding("v1", 0, 5), Grounding("v3", 0, 10)]),
    Step("dance", [Grounding("v5", 0, 1)]),
]


def test_stem_hand_example() -> None:
    r = stem(GT_STEPS, PRED_STEPS, fixed_similarity, threshold=0.5)
    # Hungarian maximises total similarity: (0,1)+(1,0)+(2,2) = 0.9+0.8+0.4 = 2.1, the best of
    # the 6 permutations (next: (0,1)+(1,2)+(2,0) = 1.2). (2,2) has 0.4 < 0.5 -> dropped.
    assert r.matched == [(0, 1, pytest.approx(0.9)), (1, 0, pytest.approx(0.8))]
    assert (r.n_gt, r.n_pred) == (3, 3)
    assert r.missing == 1  # GT 2 "serve"
    assert r.hallucinated == 1  # pred 2 "dance"
    assert r.wrong_order == 2  # 0≠1 and 1≠0: the paper's i != j rule counts one swap twice
    assert r.order_inversions == 1  # one pair of matches in inverted order
    # pair (GT0, P1): GT ids {v1, v2}, pred ids {v1, v3}
    #   pred v1 [0,5] vs GT v1 [0,10]: IoU 5/10 = 0.5; pred v3 not in GT ids -> FP
    #   GT v2 not in pred ids -> FN
    # pair (GT1, P0): pred v2 [25,35] vs GT v2 [20,30]: ∩ 5, ∪ 15 -> IoU 1/3; no FP, no FN
    assert r.video_fp == 1
    assert r.video_fn == 1
    assert r.iou_sum == pytest.approx(0.5 + 1 / 3)
    assert r.iou_count == 2
    assert r.pred_groundings == 3  # 2 (P1) + 1 (P0)
    assert r.gt_groundings == 3  # 2 (GT0) + 1 (GT1); GT2's grounding is not counted
    assert r.missing_rate == pytest.approx(1 / 3)
    assert r.hallucinated_rate == pytest.approx(1 / 3)
    assert r.wrong_order_rate == pytest.approx(2 / 2)
    assert r.video_fp_rate == pytest.approx(1 / 3)
    assert r.video_fn_rate == pytest.approx(1 / 3)
    assert r.mean_iou == pytest.approx((0.5 + 1 / 3) / 2)  # 0.416667


def test_stem_threshold_keeps_more_pairs() -> None:
    # threshold 0.35: (2,2) with 0.4 is kept; it is in order (2 == 2)
    r = stem(GT_STEPS, PRED_STEPS, fixed_similarity, threshold=0.35)
    assert [(i, j) for i, j, _ in r.matched] == [(0, 1), (1, 0), (2, 2)]
    assert (r.missing, r.hallucinated, r.wrong_order, r.order_inversions) == (0, 0, 2, 1)
    # GT2 has v4, P2 has v5: one more FP and one more FN; each adds one grounding
    # -> pred_groundings 3 + 1 = 4, gt_groundings 3 + 1 = 4
    assert (r.video_fp, r.video_fn, r.pred_groundings, r.gt_groundings) == (2, 2, 4, 4)
    assert r.video_fp_rate == pytest.approx(2 / 4)
    assert r.wrong_order_rate == pytest.approx(2 / 3)


def test_stem_accepts_duck_typed_steps_and_tuples() -> None:
    gt = [SimpleNamespace(text="t", groundings=[("v1", 0.0, 10.0)])]
    pred = [SimpleNamespace(text="t", groundings=[("v1", 0.0, 5.0), ("v1", 5.0, 20.0)])]
    r = stem(gt, pred, lambda g, p: np.ones((len(g), len(p))))
    # each pred grounding scored alone against GT v1 [0,10]: 5/10 = 0.5 and 5/20 = 0.25
    assert r.matched == [(0, 0, 1.0)]
    assert r.iou_count == 2 and r.mean_iou == pytest.approx((0.5 + 0.25) / 2)
    assert (r.wrong_order, r.video_fp, r.video_fn) == (0, 0, 0)


def test_stem_empty_sides_and_bad_similarity() -> None:
    def never(gt: list[str], pred: list[str]) -> np.ndarray:
        raise AssertionError("similarity must not be called with an empty side")

    r = stem(GT_STEPS, [], never)
    assert (r.missing, r.hallucinated, r.missing_rate, r.hallucinated_rate) == (3, 0, 1.0, 0.0)
    assert (r.wrong_order_rate, r.video_fp_rate, r.mean_iou) == (0.0, 0.0, 0.0)
    r = stem([], PRED_STEPS, never)
    assert (r.missing, r.hallucinated, r.hallucinated_rate) == (0, 3, 1.0)
    with pytest.raises(ValueError, match="expected \\(3, 3\\)"):
        stem(GT_STEPS, PRED_STEPS, lambda g, p: np.zeros((2, 3)))


def test_stem_nan_similarity_never_matches() -> None:
    sim = np.array([[np.nan]])
    r = stem(GT_STEPS[:1], PRED_STEPS[:1], lambda g, p: sim, threshold=-10.0)
    assert r.matched == [] and r.missing == 1 and r.hallucinated == 1


def test_embedding_similarity_is_cosine_of_normalised_rows() -> None:
    vectors = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [0.6, 0.8], "d": [3.0, 4.0]}
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        return np.array([vectors[t] for t in texts])

    sim = embedding_similarity(embed)
    # a·c = 0.6, b·c = 0.8; d = 5·c normalises to c
    assert sim(["a", "b"], ["c", "d"]) == pytest.approx(np.array([[0.6, 0.6], [0.8, 0.8]]))
    assert calls == [["a", "b", "c", "d"]]  # one batch for both sides
    assert sim([], ["c"]).shape == (0, 1)


# ------------------------------------------------------------------ citations

CITES = [
    Citation(1, "s", "seg1", 0.0, 5.0),
    Citation(2, "s", "seg2", 5.0, 9.0),
    Citation(3, "s", "segX", 9.0, 12.0),  # segment not stored
]
STORED = {"seg1", "seg2"}
SENTENCES = [
    Sentence("The train left at noon.", [1, 2, 1]),  # marker 1 twice: one pair
    Sentence("It was red.", [3]),
    Sentence("No source here.", []),
    Sentence("Dangling.", [4]),  # no Citation with n = 4
]
SUPPORTED = {
    ("The train left at noon.", "seg1"),
    ("The train left at noon.", "seg2"),
    # "It was red." is not supported by segX
}


def supports(text: str, c: Citation) -> bool:
    return (text, c.segment_id) in SUPPORTED


def test_citation_validity() -> None:
    # seg1, seg2 exist, segX does not -> 2/3
    assert citation_validity(CITES, STORED.__contains__) == CitationScore(2 / 3, 2, 3)
    # with the sentences, dangling marker 4 is one more invalid citation -> 2/4
    assert citation_validity(CITES, STORED.__contains__, SENTENCES) == CitationScore(0.5, 2, 4)
    # nothing cited: vacuously valid, total 0
    assert citation_validity([], STORED.__contains__) == CitationScore(1.0, 0, 0)


def test_citation_precision_and_recall() -> None:
    # pairs: (S1,1) yes, (S1,2) yes, (S2,3) no, (S4,4) dangling no -> 2/4
    assert citation_precision(SENTENCES, CITES, supports) == CitationScore(0.5, 2, 4)
    # a mapping works too
    by_n = {c.n: c for c in CITES}
    assert citation_precision(SENTENCES, by_n, supports) == CitationScore(0.5, 2, 4)
    # recall: S1 supported; S2 (unsupported), S3 (no citations), S4 (dangling) not -> 1/4
    assert citation_recall(SENTENCES, CITES, supports) == CitationScore(0.25, 1, 4)
    assert citation_precision([], CITES, supports) == CitationScore(1.0, 0, 0)
