"""The fuzzy-recall set: the loader's errors, and the generator's scripts and queries (planned
without rendering, speech lengths estimated) checked against the truth they were written from."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from episodic.core.errors import InputError
from episodic.recall_content import DESCRIBE, THEMES, RecallTheme, Twins
from episodic.recall_generator import RecallPlan, estimated_seconds, holds, plan_recall_set
from episodic.recall_set import FACET_LETTERS, TASKS, load_recall_set, parse_recall_set

SPLITS = ("dev", "heldout")


@pytest.fixture(scope="module")
def plans() -> dict[str, RecallPlan]:
    return {s: plan_recall_set(s, seed=0, streams=8, seconds=45.0, speech_s=estimated_seconds) for s in SPLITS}


def _doc() -> dict[str, Any]:
    return {
        "format": "episodic-recall/1", "split": "dev",
        "recordings": [{"path": "a.mp4", "stream_id": "a", "duration_s": 60.0},
                       {"path": "b.mp4", "stream_id": "b"}],
        "queries": [
            {"id": "q1", "task": "G", "description": "a cheerful baking vlog",
             "facets": {"global": "a cheerful baking vlog"}, "stream_id": "a", "moment": None},
            {"id": "q2", "task": "KT", "description": "a cat on the counter, then the oven",
             "facets": {"key_moment": "a cat on the counter", "temporal": "then the oven"},
             "stream_id": "a", "moment": {"t_start": 10.0, "t_end": 18.0}, "distractor": "b"},
        ],
    }


# -- the loader ----------------------------------------------------------------------------------
def test_a_valid_set_loads(tmp_path: Path) -> None:
    (tmp_path / "recall.json").write_text(json.dumps(_doc()), encoding="utf-8")
    rs = load_recall_set(tmp_path)
    assert [q.task for q in rs.queries] == ["G", "KT"]
    assert rs.queries[0].moment is None and rs.queries[1].moment is not None
    assert rs.queries[1].distractor == "b" and rs.queries[1].split == "dev"
    assert rs.recording_path(rs.recordings[0]) == tmp_path / "a.mp4"
    again = parse_recall_set(rs.to_dict(), tmp_path)
    assert again.queries == rs.queries


def _broken(edit: Any) -> dict[str, Any]:
    doc = copy.deepcopy(_doc())
    edit(doc)
    return doc


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format="episodic-qa/1"), "format"),
        (lambda d: d.update(recordings=[]), "recordings"),
        (lambda d: d["recordings"].append({"path": "c.mp4", "stream_id": "a"}), "share a stream_id"),
        (lambda d: d["recordings"][0].update(duration_s=-1), "positive"),
        (lambda d: d.update(queries=[]), "queries"),
        (lambda d: d["queries"][1].update(id="q1"), "duplicate id"),
        (lambda d: d["queries"][0].update(task="GX"), "task must be one of"),
        (lambda d: d["queries"][0].update(description=" "), "description"),
        (lambda d: d["queries"][0].update(facets={"global": "x", "mood": "y"}), "unknown facet"),
        (lambda d: d["queries"][1].update(facets={"key_moment": "a cat"}), "needs exactly the facets"),
        (lambda d: d["queries"][0].update(facets="a cheerful vlog"), "facets must be an object"),
        (lambda d: d["queries"][0].update(stream_id="zzz"), "not one of the recordings"),
        (lambda d: d["queries"][1].update(moment=None), "needs the key moment"),
        (lambda d: d["queries"][1].update(moment={"t_start": 9.0, "t_end": 2.0}), "t_start <= t_end"),
        (lambda d: d["queries"][1].update(moment={"t_start": 90.0, "t_end": 95.0}), "after the recording ends"),
        (lambda d: d["queries"][1].update(distractor="a"), "right stream itself"),
        (lambda d: d["queries"][1].update(distractor="c"), "distractor 'c'"),
        (lambda d: d["queries"][1].update(split="test"), "split must be one of"),
    ],
)
def test_the_loader_names_the_problem(edit: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_recall_set(_broken(edit), Path("."))


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no recall set"):
        load_recall_set(tmp_path / "nothing.json")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="cannot read"):
        load_recall_set(tmp_path / "bad.json")


# -- the generator's script and queries ----------------------------------------------------------
@pytest.mark.parametrize("split", SPLITS)
def test_streams_scenes_and_every_task_type(plans: dict[str, RecallPlan], split: str) -> None:
    plan = plans[split]
    assert len(plan.streams) >= 8
    for s in plan.streams:
        assert 5 <= len(s.scenes) <= 8
        assert all(sc.beat.duration_s >= 7.0 for sc in s.scenes)
        assert any(sc.beat.sound for sc in s.scenes)  # one stretch of music, engine or applause
        intro = s.scenes[s.index(f"{s.theme.key}/intro")]  # type: ignore[index]
        assert intro.beat.said and intro.beat.visual == "slide"  # topic said and shown
    counts = {t: sum(q.query.task == t for q in plan.queries) for t in TASKS}
    assert all(n >= 2 for n in counts.values()), counts
    assert sum(1 for s in plan.streams if s.twin) >= 6  # several deliberately similar streams


@pytest.fixture(scope="module")
def series_plans() -> dict[str, RecallPlan]:
    return {s: plan_recall_set(s, seed=0, streams=8, seconds=45.0, speech_s=estimated_seconds, series=True)
            for s in SPLITS}


@pytest.mark.parametrize("split", SPLITS)
def test_queries_are_true_of_their_stream_and_distractors_are_near_misses(
    plans: dict[str, RecallPlan], series_plans: dict[str, RecallPlan], split: str
) -> None:
    _check_truth(plans[split])
    _check_truth(series_plans[split])


@pytest.mark.parametrize("split", SPLITS)
def test_series_twins_are_episodes_of_one_show_told_apart_only_by_time_and_sound(
    series_plans: dict[str, RecallPlan], split: str
) -> None:
    plan = series_plans[split]
    by_id = {s.stream_id: s for s in plan.streams}
    pairs = [(s, by_id[s.twin]) for s in plan.streams if s.twin]
    assert len(pairs) >= 6
    for s, twin in pairs:  # the same opening and closing words, slide and impressions
        assert s.theme.impressions == twin.theme.impressions
        assert s.theme.intro == twin.theme.intro and s.theme.frame_key == twin.theme.frame_key
        assert s.index(f"{s.theme.frame_key}/intro") is not None and twin.index(f"{s.theme.frame_key}/intro") is not None
        assert s.theme.parts != twin.theme.parts  # … different middles
    twin_queries = [qp for qp in plan.queries if qp.query.distractor]
    assert twin_queries and all("T" in qp.query.task or "A" in qp.query.task for qp in twin_queries)
    for qp in twin_queries:
        other = holds(by_id[qp.query.distractor], qp)  # type: ignore[index]
        assert other.get("global", True) and other["key_moment"]  # the impression fits the twin too
        assert not (other.get("temporal", True) and other.get("audio", True))
    assert not any(qp.query.distractor for qp in plan.queries if qp.query.task == "GK")
    # the ordinary set is unchanged by the option: its twins have topics of their own
    ordinary = plan_recall_set(split, seed=0, streams=8, seconds=45.0, speech_s=estimated_seconds)
    assert all(s.theme.series == "" for s in ordinary.streams)


def _check_truth(plan: RecallPlan) -> None:
    by_id = {s.stream_id: s for s in plan.streams}
    rs = plan.to_set(Path("."))
    assert parse_recall_set(rs.to_dict(), Path(".")).queries == rs.queries  # what it writes loads
    for qp in plan.queries:
        q = qp.query
        assert set(q.facets) == {FACET_LETTERS[c] for c in q.task}
        assert all(holds(by_id[q.stream_id], qp).values()), q
        if "K" in q.task:
            assert q.moment is not None and q.moment.t_end > q.moment.t_start
        if q.distractor:
            twin = by_id[q.distractor]
            assert q.distractor != q.stream_id
            assert twin.index(qp.key) is not None  # it shares the key moment …
            assert not all(holds(twin, qp).values())  # … and fails another facet
        if q.moment is not None:  # a loose description, not the sentence read back
            said = by_id[q.stream_id].scenes[by_id[q.stream_id].index(qp.key)].beat.said  # type: ignore[index]
            assert not said or said.lower().rstrip(".!?") not in q.description.lower()


@pytest.mark.parametrize("split", SPLITS)
def test_twin_queries_need_their_other_facets(plans: dict[str, RecallPlan], split: str) -> None:
    twin_queries = [qp for qp in plans[split].queries if qp.query.distractor]
    assert {qp.query.task for qp in twin_queries} == set(TASKS) - {"G", "K"}
    assert all(qp.key and qp.key.startswith("shared/") for qp in twin_queries)


def test_dev_and_heldout_share_no_wording_or_theme(plans: dict[str, RecallPlan]) -> None:
    dev = {t for kind in DESCRIBE["dev"].values() for t in kind}
    held = {t for kind in DESCRIBE["heldout"].values() for t in kind}
    assert dev and held and not dev & held

    def themes(split: str) -> set[str]:
        out: set[str] = set()
        for g in THEMES[split]:
            out |= {g.a.key, g.b.key} if isinstance(g, Twins) else {g.key}
        return out

    assert not themes("dev") & themes("heldout")
    said = {sc.beat.said for split in SPLITS for s in plans[split].streams for sc in s.scenes if sc.beat.said}
    dev_said = {sc.beat.said for s in plans["dev"].streams for sc in s.scenes if sc.beat.said}
    assert dev_said and not dev_said & (said - dev_said) and len(said) > len(dev_said)
    assert not {q.query.description for q in plans["dev"].queries} & {q.query.description for q in plans["heldout"].queries}
    dev_voices = {sc.beat.voice for s in plans["dev"].streams for sc in s.scenes if sc.beat.said}
    held_voices = {sc.beat.voice for s in plans["heldout"].streams for sc in s.scenes if sc.beat.said}
    assert not dev_voices & held_voices


def test_remembered_phrases_are_really_said() -> None:
    for split in SPLITS:
        for g in THEMES[split]:
            for theme in (g.a, g.b) if isinstance(g, Twins) else (g,):
                assert isinstance(theme, RecallTheme)
                i, phrase = theme.said_clue
                assert phrase.lower() in theme.parts[i].said.lower(), theme.key
                assert len(theme.parts) >= 5 and theme.intro.said and theme.outro.said


def test_the_plan_is_reproducible_and_checks_its_arguments() -> None:
    a = plan_recall_set("dev", seed=3, streams=8, seconds=60.0, speech_s=estimated_seconds)
    b = plan_recall_set("dev", seed=3, streams=8, seconds=60.0, speech_s=estimated_seconds)
    assert [q.query for q in a.queries] == [q.query for q in b.queries]
    assert all(len(s.scenes) >= 6 for s in a.streams)
    odd = plan_recall_set("heldout", seed=1, streams=9, seconds=45.0, speech_s=estimated_seconds)
    assert len(odd.streams) == 9 and len(odd.queries) == 9 * len(TASKS)
    with pytest.raises(ValueError, match="split"):
        plan_recall_set("test", speech_s=estimated_seconds)
    with pytest.raises(ValueError, match="streams"):
        plan_recall_set("dev", streams=99, speech_s=estimated_seconds)
    with pytest.raises(ValueError, match="seconds"):
        plan_recall_set("dev", seconds=10, speech_s=estimated_seconds)
