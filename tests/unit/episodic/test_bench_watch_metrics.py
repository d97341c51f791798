"""The match-watch figures of benchmarks/bench_watch.py (episodic/watch_evaluation.py) against
hand-computed examples: true matches, recall, precision, F1, false alarms and the choice of
threshold."""

from __future__ import annotations

import pytest

from episodic.qa_set import Interval, MomentQuery
from episodic.watch_evaluation import (
    Figures,
    Scored,
    best_threshold,
    f1_score,
    figures_at,
    is_true_match,
    one_watch_per_query,
    per_query,
    sweep,
    thresholds,
)

pytestmark = pytest.mark.unit

# two queries over 0.5 stream-hours; q1 has two true memories, q2 one, q3 none
SCORED = [
    Scored("q1", "m1", "a", 0.50, True),
    Scored("q1", "m2", "a", 0.30, True),
    Scored("q1", "m3", "b", 0.40, False),
    Scored("q1", "m4", "b", None, False),  # nothing bears on it: never fires
    Scored("q2", "m1", "a", 0.25, False),
    Scored("q2", "m3", "b", 0.35, True),
    Scored("q3", "m1", "a", 0.45, False),
]


def test_true_match_needs_the_same_stream_and_an_overlap():
    targets = [Interval("a", 10.0, 20.0), Interval("b", 50.0, 55.0)]
    assert is_true_match("a", 15.0, 25.0, targets)
    assert is_true_match("b", 40.0, 51.0, targets)
    assert not is_true_match("a", 20.0, 30.0, targets)  # touching is not overlapping
    assert not is_true_match("c", 10.0, 20.0, targets)
    assert not is_true_match("b", 10.0, 20.0, targets)


def test_figures_at_a_threshold_by_hand():
    f = figures_at(SCORED, 0.33, stream_hours=0.5)
    # fired: q1/m1 (true), q1/m3 (false), q2/m3 (true), q3/m1 (false)
    assert (f.fired, f.true_fired, f.false_fired) == (4, 2, 2)
    assert f.precision == pytest.approx(0.5)
    # reachable: q1, q2 (q3 has no true memory); both fire on a true one
    assert (f.queries, f.reachable, f.recalled) == (3, 2, 2)
    assert f.recall == pytest.approx(1.0)
    assert f.f1 == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert f.false_per_hour == pytest.approx(4.0)
    assert f.false_per_watch_hour == pytest.approx(4.0 / 3)


def test_a_higher_threshold_trades_recall_for_precision():
    f = figures_at(SCORED, 0.42, stream_hours=0.5)
    # fired: q1/m1 (true), q3/m1 (false); q2 no longer recalled
    assert (f.fired, f.true_fired, f.recalled) == (2, 1, 1)
    assert f.precision == pytest.approx(0.5)
    assert f.recall == pytest.approx(0.5)
    assert f.f1 == pytest.approx(0.5)


def test_nothing_fires_and_queries_without_scores_still_count():
    f = figures_at(SCORED, 0.9, stream_hours=0.5, query_ids=["q1", "q2", "q3", "q4"])
    assert f.fired == 0 and f.precision is None and f.f1 is None
    assert f.recall == 0.0
    assert f.queries == 4 and f.false_per_watch_hour == 0.0
    assert f1_score(0.0, 0.0) == 0.0
    assert f1_score(None, 1.0) is None


def test_threshold_grid_is_inclusive_and_clean():
    taus = thresholds(0.20, 0.60, 0.02)
    assert len(taus) == 21 and taus[0] == 0.2 and taus[-1] == 0.6 and 0.34 in taus
    with pytest.raises(ValueError):
        thresholds(0.5, 0.4, 0.02)


def test_best_threshold_is_the_best_f1():
    rows = sweep(SCORED, [0.20, 0.33, 0.42, 0.46, 0.60], stream_hours=0.5)
    f1 = {r.threshold: r.f1 for r in rows}
    # 0.20: every scored pair fires → P 3/6, R 1 → 2/3; 0.33: P 2/4, R 1 → 2/3
    assert f1[0.20] == pytest.approx(2 / 3) and f1[0.33] == pytest.approx(2 / 3)
    # 0.42: q1/m1 and q3/m1 → P 1/2, R 1/2 → 1/2; 0.46: q1/m1 alone → P 1, R 1/2 → 2/3 again;
    # 0.60: nothing fires
    assert f1[0.42] == pytest.approx(0.5) and f1[0.46] == pytest.approx(2 / 3)
    assert f1[0.60] is None
    # best F1 at 0.20, 0.33 (a run of two) and 0.46 (alone): the longer run's upper middle row
    assert best_threshold(rows).threshold == 0.33
    assert best_threshold([]) is None


def test_a_plateau_of_equal_f1_gives_its_middle():
    def row(tau: float, f1: float | None) -> Figures:
        return Figures(tau, 1, 1, 1, 1, 1, 0, 1.0, 1.0, 1.0, f1, 0.0, 0.0)

    f1s = {0.30: 0.5, 0.32: 0.8, 0.34: 0.8, 0.36: 0.8, 0.38: 0.6, 0.40: 0.8, 0.42: None}
    rows = [row(t, f) for t, f in f1s.items()]
    assert best_threshold(rows[::-1]).threshold == 0.34  # the longest run, whatever the order
    # two runs as long: the higher one
    rows = [row(t, f) for t, f in {0.30: 0.8, 0.32: 0.1, 0.34: 0.8, 0.36: 0.2}.items()]
    assert best_threshold(rows).threshold == 0.34
    assert best_threshold([row(0.3, None), row(0.4, None)]).threshold == 0.4  # nothing fires anywhere


def test_per_query_best_scores():
    q = per_query(SCORED, 0.33)
    assert q["q1"] == {"best_true": 0.5, "best_false": 0.4, "true_fired": 1, "false_fired": 1}
    assert q["q3"]["best_true"] is None and q["q3"]["false_fired"] == 1


def test_moments_with_the_same_query_are_one_watch_with_all_targets():
    moments = [
        MomentQuery("m1", "the screen goes dark", [Interval("a", 1.0, 2.0)], "dev"),
        MomentQuery("m2", "a picture of a cat", [Interval("a", 5.0, 6.0)], "dev"),
        MomentQuery("m3", "The screen  goes dark", [Interval("b", 3.0, 4.0)], "dev"),
    ]
    watches = one_watch_per_query(moments)
    assert [w.id for w in watches] == ["m1+m3", "m2"]
    assert watches[0].targets == [Interval("a", 1.0, 2.0), Interval("b", 3.0, 4.0)]
    # a dark screen on stream b is a true match for the one watch
    assert is_true_match("b", 2.0, 5.0, watches[0].targets)
    assert moments[0].targets == [Interval("a", 1.0, 2.0)]  # the set itself is left alone
