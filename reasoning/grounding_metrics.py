"""How well a grounded multi-step answer points at the right moments: MTGS and STEM
(AVHaystacks §4.1 and Algorithm 2).

A grounding is ⟨stream id, start, end⟩ in stream seconds: a ``core.article.Grounding``
or any ``(stream_id, t_start, t_end)`` triple. A step is anything with ``.text`` and
``.groundings`` (``core.article.Step``).

**MTGS** (Matched Temporal Grounding Score). Per stream id present in *both* the ground truth
and the prediction, IoU = Duration(∪G_v ∩ ∪P_v) / Duration(∪G_v ∪ ∪P_v), where ∪ merges the
overlapping intervals of that stream first; MTGS is the mean over those matched ids, and 0.0
when no id matches. Ids found on one side only are left out, as the paper says: MTGS measures
*where* in a video, video retrieval is measured elsewhere (Recall@k).

**STEM** (STep-wise Error Metric). ``similarity(gt_texts, pred_texts)`` gives the |G|×|P|
cosine matrix; Hungarian matching (``scipy.optimize.linear_sum_assignment`` on ``1 - sim``)
pairs the steps, and a pair is kept only if its similarity ≥ ``threshold`` (s = 0.5). As in
the paper, the threshold filters *after* the assignment over the full matrix, so a pair below
it can, in rare cases, displace a pair above it; the result is still a valid matching. Then:

- ``wrong_order`` S_O: kept pairs (i, j) with i ≠ j, the paper's rule. One swap of two adjacent
  steps counts 2; an extra step inserted early shifts, and counts, every later one.
  ``order_inversions`` (not in the paper) counts the kept pairs whose relative order is
  inverted (i < i' but j > j'), which counts a single swap as 1 and ignores shifts.
- for each kept pair, with V_G the stream ids of the GT step and V_P those of the predicted one:
  ``video_fp`` S_FP: predicted groundings whose stream id is not in V_G; every other predicted
  grounding adds its IoU against the merged GT intervals of its stream in that step to
  ``iou_sum`` S_IoU (``iou_count`` of them); ``video_fn`` S_FN: GT groundings whose stream id
  is not in V_P.
- ``missing`` S_M: GT steps without a kept pair; ``hallucinated`` S_H: predicted steps without one.

The paper does not say how its reported values (e.g. 0.15) are normalised. We report the raw
counts above *and* these rates, each 0.0 when its denominator is 0:

- ``missing_rate`` = S_M / |G|, ``hallucinated_rate`` = S_H / |P|;
- ``wrong_order_rate`` = S_O / (kept pairs);
- ``video_fp_rate`` = S_FP / (groundings of the matched predicted steps);
- ``video_fn_rate`` = S_FN / (groundings of the matched GT steps);
- ``mean_iou`` = S_IoU / ``iou_count`` (the in-stream predicted groundings of matched steps).

All rates but ``mean_iou`` are errors: lower is better. Groundings of missing or hallucinated
steps are not counted again: those steps are already wrong as a whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from scipy.optimize import linear_sum_assignment

Interval = tuple[float, float]
GroundingLike = Any  # a Grounding, or a (stream_id, t_start, t_end) triple
Similarity = Callable[[list[str], list[str]], np.ndarray]


class StepLike(Protocol):
    """What STEM reads from a step: ``core.article.Step`` or any look-alike."""

    text: str
    groundings: Sequence[GroundingLike]


# ---------------------------------------------------------------- intervals


def _interval(t_start: float, t_end: float) -> Interval:
    """A checked interval: finite ends, start ≤ end (a reversed one is a caller's bug)."""
    a, b = float(t_start), float(t_end)
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"interval ends must be finite, got ({t_start!r}, {t_end!r})")
    if b < a:
        raise ValueError(f"interval ends before it starts: ({t_start!r}, {t_end!r})")
    return a, b


def merge_intervals(intervals: Iterable[Interval]) -> list[Interval]:
    """The union of ``intervals`` as sorted, disjoint intervals (touching ones are joined)."""
    spans = sorted(_interval(a, b) for a, b in intervals)
    merged: list[Interval] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def total_duration(intervals: Iterable[Interval]) -> float:
    """Seconds covered by ``intervals``, overlaps counted once."""
    return math.fsum(b - a for a, b in merge_intervals(intervals))


def intersection_duration(a: Iterable[Interval], b: Iterable[Interval]) -> float:
    """Seconds covered by both the union of ``a`` and the union of ``b``."""
    xs, ys = merge_intervals(a), merge_intervals(b)
    i = j = 0
    parts: list[float] = []
    while i < len(xs) and j < len(ys):
        lo, hi = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        if hi > lo:
            parts.append(hi - lo)
        if xs[i][1] <= ys[j][1]:
            i += 1
        else:
            j += 1
    return math.fsum(parts)


def interval_iou(a: Iterable[Interval], b: Iterable[Interval]) -> float:
    """IoU of the union of ``a`` and the union of ``b``; 0.0 when together they cover no time."""
    xs, ys = merge_intervals(a), merge_intervals(b)
    inter = intersection_duration(xs, ys)
    union = total_duration(xs) + total_duration(ys) - inter
    return inter / union if union > 0 else 0.0


# ---------------------------------------------------------------- groundings


def _grounding(g: GroundingLike) -> tuple[str, Interval]:
    """``(stream_id, (t_start, t_end))`` from a Grounding-like object or a triple."""
    if hasattr(g, "stream_id"):
        return str(g.stream_id), _interval(g.t_start, g.t_end)
    try:
        stream_id, t_start, t_end = g
    except (TypeError, ValueError):
        raise TypeError(
            f"a grounding is a Grounding or a (stream_id, t_start, t_end) triple, got {g!r}"
        ) from None
    return str(stream_id), _interval(t_start, t_end)


def _by_stream(groundings: Iterable[GroundingLike]) -> dict[str, list[Interval]]:
    """The intervals of ``groundings`` per stream id."""
    out: dict[str, list[Interval]] = {}
    for g in groundings:
        stream_id, span = _grounding(g)
        out.setdefault(stream_id, []).append(span)
    return out


def per_stream_iou(
    ground_truth: Iterable[GroundingLike], predicted: Iterable[GroundingLike]
) -> dict[str, float]:
    """IoU of the merged intervals per stream id present on both sides (MTGS's terms)."""
    gt, pred = _by_stream(ground_truth), _by_stream(predicted)
    return {sid: interval_iou(gt[sid], pred[sid]) for sid in sorted(gt.keys() & pred.keys())}


def mtgs(ground_truth: Iterable[GroundingLike], predicted: Iterable[GroundingLike]) -> float:
    """Matched Temporal Grounding Score: mean per-stream IoU over matched ids, 0.0 if none."""
    ious = per_stream_iou(ground_truth, predicted)
    return math.fsum(ious.values()) / len(ious) if ious else 0.0


# ---------------------------------------------------------------- STEM


@dataclass(frozen=True)
class StemResult:
    """STEM's counts (the paper's S_M, S_H, S_O, S_FP, S_FN, S_IoU) and their rates."""

    n_gt: int  # |G|
    n_pred: int  # |P|
    matched: list[tuple[int, int, float]] = field(default_factory=list)  # (gt i, pred j, sim)
    missing: int = 0  # S_M
    hallucinated: int = 0  # S_H
    wrong_order: int = 0  # S_O: kept pairs with i != j
    order_inversions: int = 0  # kept pairs in inverted relative order (not in the paper)
    video_fp: int = 0  # S_FP
    video_fn: int = 0  # S_FN
    iou_sum: float = 0.0  # S_IoU
    iou_count: int = 0  # predicted groundings whose IoU went into iou_sum
    pred_groundings: int = 0  # groundings of the matched predicted steps
    gt_groundings: int = 0  # groundings of the matched GT steps
    missing_rate: float = 0.0
    hallucinated_rate: float = 0.0
    wrong_order_rate: float = 0.0
    video_fp_rate: float = 0.0
    video_fn_rate: float = 0.0
    mean_iou: float = 0.0


def _rate(num: float, den: int) -> float:
    """``num / den``, 0.0 for an empty denominator (nothing could go wrong)."""
    return num / den if den else 0.0


def _similarity_matrix(similarity: Similarity, gt: list[str], pred: list[str]) -> np.ndarray:
    """The caller's similarity matrix, checked for shape; NaN entries can never match."""
    sim = np.asarray(similarity(gt, pred), dtype=float)
    if sim.shape != (len(gt), len(pred)):
        raise ValueError(
            f"similarity returned shape {sim.shape}, expected ({len(gt)}, {len(pred)})"
        )
    return sim


def _match(sim: np.ndarray, threshold: float) -> list[tuple[int, int, float]]:
    """Hungarian pairs on ``1 - sim`` kept when sim ≥ threshold, by GT index."""
    finite = np.isfinite(sim)
    if not finite.any():
        return []
    # a non-finite similarity gets a cost worse than any real one, and is dropped below
    worst = float(sim[finite].min()) - 1.0
    cost = 1.0 - np.where(finite, sim, worst)
    rows, cols = linear_sum_assignment(cost)
    return [
        (int(i), int(j), float(sim[i, j]))
        for i, j in zip(rows, cols, strict=True)
        if finite[i, j] and sim[i, j] >= threshold
    ]


def _inversions(pairs: list[tuple[int, int, float]]) -> int:
    """Pairs of matches whose GT order and predicted order disagree."""
    js = [j for _, j, _ in sorted(pairs)]
    return sum(1 for a in range(len(js)) for b in range(a + 1, len(js)) if js[a] > js[b])


def stem(
    gt_steps: Sequence[StepLike],
    pred_steps: Sequence[StepLike],
    similarity: Similarity,
    threshold: float = 0.5,
) -> StemResult:
    """STEM of a predicted step sequence against the ground truth (see the module docstring).

    ``similarity(gt_texts, pred_texts)`` returns the |G|×|P| cosine matrix; it is not called
    when either side has no steps.
    """
    if not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    n, m = len(gt_steps), len(pred_steps)
    pairs: list[tuple[int, int, float]] = []
    if n and m:
        sim = _similarity_matrix(
            similarity, [str(s.text) for s in gt_steps], [str(s.text) for s in pred_steps]
        )
        pairs = _match(sim, float(threshold))

    fp = fn = pred_total = gt_total = 0
    ious: list[float] = []
    for i, j, _ in pairs:
        gt_by = _by_stream(gt_steps[i].groundings)
        pred = [_grounding(g) for g in pred_steps[j].groundings]
        pred_ids = {sid for sid, _ in pred}
        pred_total += len(pred)
        gt_total += sum(len(v) for v in gt_by.values())
        for sid, span in pred:
            if sid not in gt_by:
                fp += 1
            else:
                ious.append(interval_iou([span], gt_by[sid]))
        fn += sum(len(spans) for sid, spans in gt_by.items() if sid not in pred_ids)
    iou_count = len(ious)
    iou_sum = math.fsum(ious)
    order = sum(1 for i, j, _ in pairs if i != j)
    missing, hallucinated = n - len(pairs), m - len(pairs)
    return StemResult(
        n_gt=n,
        n_pred=m,
        matched=sorted(pairs),
        missing=missing,
        hallucinated=hallucinated,
        wrong_order=order,
        order_inversions=_inversions(pairs),
        video_fp=fp,
        video_fn=fn,
        iou_sum=iou_sum,
        iou_count=iou_count,
        pred_groundings=pred_total,
        gt_groundings=gt_total,
        missing_rate=_rate(missing, n),
        hallucinated_rate=_rate(hallucinated, m),
        wrong_order_rate=_rate(order, len(pairs)),
        video_fp_rate=_rate(fp, pred_total),
        video_fn_rate=_rate(fn, gt_total),
        mean_iou=_rate(iou_sum, iou_count),
    )


def embedding_similarity(embed: Callable[[list[str]], np.ndarray]) -> Similarity:
    """A STEM ``similarity`` from a text embedder ``embed(texts) -> rows``.

    Both sides are embedded in one call (one batch for the model), and rows are normalised
    here too, so an embedder that does not return unit rows still yields cosines; an all-zero
    row has similarity 0 to everything.
    """

    def similarity(gt: list[str], pred: list[str]) -> np.ndarray:
        if not gt or not pred:
            return np.zeros((len(gt), len(pred)))
        vecs = np.asarray(embed(list(gt) + list(pred)), dtype=float)
        if vecs.ndim != 2 or vecs.shape[0] != len(gt) + len(pred):
            raise ValueError(f"embed returned shape {vecs.shape} for {len(gt) + len(pred)} texts")
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        unit = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
        return unit[: len(gt)] @ unit[len(gt) :].T

    return similarity
