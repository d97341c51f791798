"""How well standing-query *match* watches fire, measured on labelled moments
(benchmarks/bench_watch.py): the figures behind ``watch_min_score``.

Every labelled moment query of a QA set (:mod:`episodic.qa_set`, "this query happens here") is
used as a match watch's query over all streams (moments with the same query text are one watch
with all their targets, :func:`one_watch_per_query`). Every stored memory is scored against it with
the live watch's own scorer (:meth:`services.watching.WatchEvaluator.score`); the memory is a
**true** match when it overlaps a target interval of the same stream. At a threshold τ a memory
**fires** for a query when its score is at least τ (a memory nothing of which bears on the query,
score ``None``, never fires), exactly as ``MatchResult.matched`` decides live.

Figures at τ (memory level: the live watch's ``cooldown_s`` merging of nearby alerts is left out):

* **recall** (per query): the share of queries with at least one true memory that fire on at
  least one of them;
* **precision** (per alert): fired memories that are true / all fired memories;
* **F1**: their harmonic mean;
* **false alarms per watch-hour**: false fired memories / (queries × stream hours), what one
  watch costs on an hour of unrelated footage (``false_per_hour`` is the whole set's count).

The threshold is chosen as the best F1 on the dev split only (a plateau of equal F1: its
middle, :func:`best_threshold`); the held-out split is measured, never chosen on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from episodic.qa_evaluation import overlaps
from episodic.qa_set import Interval, MomentQuery


@dataclass(frozen=True)
class Scored:
    """One (query, memory) pair: the watch scorer's best-unit score and the label."""

    query_id: str
    memory_id: str
    stream_id: str
    score: float | None  # None: nothing in the memory bears on the query (never fires)
    true: bool

    def fires(self, threshold: float) -> bool:
        return self.score is not None and self.score >= threshold


@dataclass(frozen=True)
class Figures:
    """The figures of one split at one threshold (rates None where undefined)."""

    threshold: float
    queries: int  # every query scored
    reachable: int  # queries with at least one true memory (recall's denominator)
    recalled: int  # reachable queries that fire on a true memory
    fired: int  # (query, memory) pairs that fire
    true_fired: int
    false_fired: int
    stream_hours: float
    recall: float | None
    precision: float | None
    f1: float | None
    false_per_hour: float | None  # all the queries together
    false_per_watch_hour: float | None  # per query

    def to_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def is_true_match(stream_id: str, t_start: float, t_end: float, targets: Iterable[Interval]) -> bool:
    """A memory of ``stream_id`` spanning [t_start, t_end] overlaps one of the targets."""
    return any(t.stream_id == stream_id and overlaps(t_start, t_end, t.t_start, t.t_end) for t in targets)


def one_watch_per_query(moments: Sequence[MomentQuery]) -> list[MomentQuery]:
    """One watch per distinct query text: moments asking the same thing (the generator writes
    "the screen goes dark" once per stream that goes dark) become one query whose targets are
    all of theirs, since a watch over every stream rightly fires on each of them. Ids are
    joined with "+", the order is that of first appearance."""
    merged: dict[str, MomentQuery] = {}
    for mq in moments:
        key = " ".join(mq.query.lower().split())
        if key in merged:
            m = merged[key]
            merged[key] = MomentQuery(f"{m.id}+{mq.id}", m.query, [*m.targets, *mq.targets], m.split, m.scope)
        else:
            merged[key] = MomentQuery(mq.id, mq.query, list(mq.targets), mq.split, mq.scope)
    return list(merged.values())


def thresholds(lo: float = 0.20, hi: float = 0.60, step: float = 0.02) -> list[float]:
    """lo, lo + step, … up to hi inclusive, rounded so 0.2 + 0.02·k prints as itself."""
    if step <= 0 or hi < lo:
        raise ValueError("need step > 0 and hi >= lo")
    n = int(round((hi - lo) / step))
    return [round(lo + i * step, 6) for i in range(n + 1)]


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def f1_score(precision: float | None, recall: float | None) -> float | None:
    """Harmonic mean; None when either is undefined, 0 when both are 0."""
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def figures_at(scored: Sequence[Scored], threshold: float, stream_hours: float,
               query_ids: Iterable[str] | None = None) -> Figures:
    """Recall, precision, F1 and false alarms when every memory scoring ≥ ``threshold`` fires.
    ``query_ids``: every query of the split (default: those in ``scored``), so a query that no
    memory was scored for still counts in the per-watch false-alarm rate."""
    queries = set(query_ids) if query_ids is not None else set()
    queries |= {s.query_id for s in scored}
    reachable = {s.query_id for s in scored if s.true}
    recalled = {s.query_id for s in scored if s.true and s.fires(threshold)}
    fired = [s for s in scored if s.fires(threshold)]
    true_fired = sum(1 for s in fired if s.true)
    false_fired = len(fired) - true_fired
    recall = _ratio(len(recalled), len(reachable))
    precision = _ratio(true_fired, len(fired))
    per_hour = _ratio(false_fired, stream_hours)
    return Figures(
        threshold=threshold, queries=len(queries), reachable=len(reachable), recalled=len(recalled),
        fired=len(fired), true_fired=true_fired, false_fired=false_fired, stream_hours=stream_hours,
        recall=recall, precision=precision, f1=f1_score(precision, recall), false_per_hour=per_hour,
        false_per_watch_hour=None if per_hour is None or not queries else per_hour / len(queries),
    )


def sweep(scored: Sequence[Scored], taus: Sequence[float], stream_hours: float,
          query_ids: Iterable[str] | None = None) -> list[Figures]:
    ids = list(query_ids) if query_ids is not None else None
    return [figures_at(scored, t, stream_hours, ids) for t in taus]


def best_threshold(rows: Sequence[Figures]) -> Figures | None:
    """The row with the best F1 (undefined F1 counts as 0). Where neighbouring thresholds tie
    (a plateau; F1 moves in steps on a small set) the middle of the run is taken, away from
    the edges where recall or precision is about to drop: the longest run, the higher one
    when two are as long, and of an even run the upper of its two middle rows. None when
    there are no rows."""
    if not rows:
        return None
    ordered = sorted(rows, key=lambda r: r.threshold)
    best = max(round(r.f1 or 0.0, 9) for r in ordered)
    runs: list[list[Figures]] = []
    previous_best = False
    for r in ordered:
        is_best = round(r.f1 or 0.0, 9) == best
        if is_best and previous_best:
            runs[-1].append(r)
        elif is_best:
            runs.append([r])
        previous_best = is_best
    run = max(reversed(runs), key=len)  # reversed: of equally long runs, the higher one
    return run[len(run) // 2]


def per_query(scored: Sequence[Scored], threshold: float) -> dict[str, dict[str, Any]]:
    """For each query: its best true and best false score, and what fires at ``threshold``
    (where a threshold cannot help: a true memory scoring below the best false one)."""
    out: dict[str, dict[str, Any]] = {}
    for s in scored:
        q = out.setdefault(s.query_id, {"best_true": None, "best_false": None, "true_fired": 0, "false_fired": 0})
        key = "best_true" if s.true else "best_false"
        if s.score is not None and (q[key] is None or s.score > q[key]):
            q[key] = s.score
        if s.fires(threshold):
            q["true_fired" if s.true else "false_fired"] += 1
    for q in out.values():
        for key in ("best_true", "best_false"):
            if q[key] is not None:
                q[key] = round(q[key], 4)
    return out
