"""benchmarks/qa_pool.py: saved bench_qa runs pooled, and where each target stands."""

import importlib.util
import json
from pathlib import Path

import pytest

from episodic.qa_evaluation import ItemRecord, MomentRecord, QAReport

_spec = importlib.util.spec_from_file_location(
    "qa_pool", Path(__file__).resolve().parents[3] / "benchmarks" / "qa_pool.py"
)
qa_pool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qa_pool)


def _items(mode: str, right: int, wrong: int) -> list[ItemRecord]:
    return [ItemRecord(f"{mode}{i}", "A", mode, "heldout", "q?", "a", 0.5, i < right, False, True, "e")
            for i in range(right + wrong)]


def _save(path: Path, report: QAReport, commit: str = "abc123") -> Path:
    path.write_text(json.dumps({"commit": commit, report.split: report.to_dict()}))
    return path


def test_runs_pool_and_targets_get_a_verdict(tmp_path: Path) -> None:
    # 95 of 100 multiple choice right: [0.888, 0.978], wholly above 0.8 → met;
    # 40 of 100 free form: [0.309, 0.498], wholly below 0.6 → missed;
    # 9 of 10 moments at rank ≤ 5: [0.596, 0.982] holds 0.9 → not told apart
    a = QAReport("a", "heldout", _items("choice", 50, 3) + _items("free", 20, 30),
                 [MomentRecord(f"m{i}", "q", "heldout", 1 if i < 5 else None if i == 5 else 2, 0.1) for i in range(6)])
    b = QAReport("b", "heldout", _items("choice", 45, 2) + _items("free", 20, 30),
                 [MomentRecord(f"n{i}", "q", "heldout", 3, 0.1) for i in range(4)])
    runs = qa_pool.load_runs([_save(tmp_path / "a.json", a), _save(tmp_path / "b.json", b, "def456")])
    assert [(c, r.name) for _, c, r in runs] == [("abc123", "a"), ("def456", "b")]
    summary = qa_pool.pooled_report([r for _, _, r in runs]).summary()
    rows = {r["figure"]: r for r in qa_pool.target_rows(summary)}
    assert (rows["multiple choice"]["correct"], rows["multiple choice"]["n"]) == (95, 100)
    assert rows["multiple choice"]["verdict"] == "met"
    assert rows["free form"]["verdict"] == "missed"
    assert (rows["moment R@5"]["correct"], rows["moment R@5"]["n"]) == (9, 10)
    assert rows["moment R@5"]["verdict"] == "not told apart (share above)"
    assert rows["unanswerable refused"]["verdict"] == "no questions"


@pytest.mark.parametrize(("content", "message"), [
    ("not json", "cannot read"),
    ("[1, 2]", "not a bench_qa.py --json run"),
    ('{"commit": "x"}', "holds no QA report"),
    ('{"commit": "x", "dev": {"items": [{"id": "q"}]}}', "not a QA report"),
])
def test_unreadable_runs_are_named(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(SystemExit, match=message):
        qa_pool.load_runs([bad])


def test_moments_of_older_runs_get_the_category_their_wording_tells(tmp_path: Path) -> None:
    """A run saved before moment queries named a category: the generator's wordings tell it
    (a fact's topic is speech); a category the run names is kept."""
    run = QAReport("a", "heldout", [], [
        MomentRecord("m1", "a picture of a clock", "heldout", None, 0.1),
        MomentRecord("m2", "the sign saying GATE 9", "heldout", 1, 0.1),
        MomentRecord("m3", "Tom and the ropes", "heldout", 2, 0.1),
        MomentRecord("m4", "music playing", "heldout", 1, 0.1),
        MomentRecord("m5", "the screen goes dark", "heldout", 3, 0.1),
        MomentRecord("m6", "someone mentions the robin", "heldout", 1, 0.1),
        MomentRecord("m7", "Tom and the ropes", "heldout", 1, 0.1, category="own"),
    ])
    (_, _, back), = qa_pool.load_runs([_save(tmp_path / "a.json", run)])
    assert [m.category for m in back.moments] == ["picture", "sign", "speech", "sound", "dark", "mention", "own"]
    assert back.summary()["moments"]["by_category"]["picture"] == {"n": 1, "r_at_1": 0.0, "r_at_5": 0.0}
