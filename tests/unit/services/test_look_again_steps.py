"""MAGNET's meta step (issue 15): the agents' finds over several streams become grounded steps
⟨stream, start, end⟩ in order, which the project's MTGS metric scores against the truth."""

from __future__ import annotations

import pytest

from episodic.core.query import LocatedMoment
from episodic.reasoning.grounding_metrics import mtgs
from episodic.retrieval.grid_search import Located, LocateReport
from episodic.services.look_again import grounded_steps, meta_result


def _m(stream: str, a: float, b: float, conf: float, depth: int = 1) -> LocatedMoment:
    return LocatedMoment(stream, a, a, b, conf, f"seen in {stream}", depth)


def test_finds_become_ordered_merged_steps_that_mtgs_scores():
    finds = [
        _m("cam2", 40.0, 41.0, 1.0), _m("cam2", 41.5, 42.5, 0.9),  # nearly touching: one step
        _m("cam1", 10.0, 11.0, 0.8),
        _m("cam1", 300.0, 301.0, 0.3),  # too unsure to be a step
        _m("cam3", 5.0, 6.0, 0.6),
    ]
    steps = grounded_steps(finds)
    assert [(s.stream_id, s.t_start, s.t_end) for s in steps] == [
        ("cam3", 5.0, 6.0), ("cam1", 10.0, 11.0), ("cam2", 40.0, 42.5)]
    assert steps[2].confidence == 1.0 and steps[2].why == "seen in cam2"
    truth = [("cam1", 10.0, 11.0), ("cam2", 40.0, 42.0)]
    assert mtgs(truth, steps) == pytest.approx((1.0 + 2.0 / 2.5) / 2)
    assert mtgs(truth, grounded_steps(finds, min_confidence=1.1)) == 0.0


def test_the_meta_ranking_puts_the_surest_find_of_any_stream_first():
    a = LocateReport(moments=[Located(10.0, 9.5, 10.5, 0.6, "a", 1)], frames_examined=128, depth=1, stopped="found")
    b = LocateReport(moments=[Located(70.0, 69.5, 70.5, 1.0, "b", 1)], frames_examined=64, depth=1, stopped="found")
    c = LocateReport(frames_examined=256, stopped="no lead")
    merged = meta_result([("cam1", a), ("cam2", b), ("cam3", c)], top_k=3)
    assert [m.stream_id for m in merged.moments] == ["cam2", "cam1"]
    assert merged.frames_examined == 448 and merged.stopped == "found"
    assert merged.streams_looked == ["cam1", "cam2", "cam3"]
    assert meta_result([("cam3", c)], top_k=3).stopped == "no lead"


def test_the_first_stream_looked_at_leaves_the_others_their_share_of_the_time(monkeypatch):
    """An agent spends whatever time it is given (a slow machine, a stream with no find): the
    first of three streams must not spend the time of the other two, which may hold the answer."""
    import time
    from types import SimpleNamespace

    from episodic.config import LookSettings
    from episodic.core.deadline import Deadline
    from episodic.core.query import Moment, Scope
    from episodic.services import look_again

    given: dict[str, float] = {}

    def greedy_agent(self, query, source, seeds, max_frames, top_k, clock, on_progress):
        given[source.sid] = clock.remaining()
        while clock.remaining() > 0:
            time.sleep(0.005)
        return LocateReport(frames_examined=64, stopped="deadline")

    monkeypatch.setattr(look_again, "stream_frames",
                        lambda store, snippets, sid, lo, hi: SimpleNamespace(sid=sid, missing=[], close=lambda: None))
    monkeypatch.setattr(look_again.LookAgain, "_agent", greedy_agent)
    components = SimpleNamespace(settings=SimpleNamespace(look=LookSettings()), store=None, snippets=None)
    look = look_again.LookAgain(components, search=lambda *a: [])
    anchors = {sid: [Moment(sid, 0.0, 60.0, 1.0, "", "")] for sid in ("cam1", "cam2", "cam3")}
    result = look.look("the sign", ["cam1", "cam2", "cam3"], anchors, Scope(), 384, 3, Deadline(0.6),
                       whole_streams=False)
    assert sorted(given) == ["cam1", "cam2", "cam3"] and not result.not_seen, (given, result.not_seen)
    assert given["cam1"] == pytest.approx(0.2, abs=0.05)  # a third of the time, not all of it
