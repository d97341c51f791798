"""The QA evaluation: metrics against hand-computed examples, the set loader's errors, the
generator's truth, and one end-to-end run through `episodic evaluate --qa … --json`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from episodic.core.errors import InputError
from episodic.qa_evaluation import (
    ItemRecord,
    MomentRecord,
    QAReport,
    first_hit_rank,
    free_form_correct,
    is_abstention,
    mentions,
    normalise,
    percentile,
    pooled_report,
    recall_at,
    reliability,
    wilson_interval,
)
from episodic.qa_set import CATEGORIES, Interval, load_qa_set, parse_qa_set

# -- normalisation and free-form matching --------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("8:15", "eight fifteen"),
        ("8.15", "quarter past eight"),
        ("8:15 am", "eight fifteen"),
        ("2:30", "half past two"),
        ("8:45", "quarter to nine"),
        ("11:20", "twenty past eleven"),
        ("8:50", "ten to nine"),
        ("8:00", "eight o'clock"),
        ("180", "one hundred and eighty"),
        ("180", "one hundred eighty"),
        ("305", "three hundred and five"),
        ("14 dollars", "$14"),
        ("2", "twice"),
        ("apples", "apple"),
        ("45", "forty-five"),
        # one word spelt the British or the American way (session 85: "the tire rack" was
        # marked wrong against "tyre rack")
        ("the tire rack", "tyre rack"),
        ("grey", "gray"),
        ("the theater", "the theatre"),
    ],
)
def test_number_and_time_forms_compare_equal(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("8:15", "8:50"), ("two fourteen", "214"), ("quarter past eight", "quarter to eight"), ("12", "2")],
)
def test_different_numbers_stay_different(a: str, b: str) -> None:
    assert normalise(a) != normalise(b)


def test_free_form_matching() -> None:
    assert mentions("It is at eight fifteen.", "8:15 am")
    assert free_form_correct("Maria meets the driver at quarter past eight.", ["8:15"])
    assert not free_form_correct("Maria meets the driver at half past eight.", ["8:15"])
    # a reply listing the right answer and a wrong one does not score
    assert not free_form_correct("It is at 8:15 or maybe 9:15.", ["8:15"], wrong_answers=["9:15"])
    # a wrong answer contained in the right one ("8" in "8:15") does not count against it
    assert free_form_correct("At 8:15.", ["8:15"], wrong_answers=["8:00"])
    # citations are not the answer: neither their times nor their quotes count
    assert free_form_correct("7 (heard: we need seven, cam, 95.6–106.3 s)", ["7"], wrong_answers=["6", "95"])
    assert not free_form_correct("Oh the ambulance (heard: \"we need seven\")", ["7"])
    assert free_form_correct("(on screen: OPEN UNTIL 7 PM)", ["7 pm"])  # nothing else said
    # keywords: every one must appear; a|b accepts either
    assert free_form_correct("A train left the station.", [], keywords=["train|bus", "station"])
    assert not free_form_correct("A train left.", [], keywords=["train|bus", "station"])
    assert not free_form_correct("anything", [], keywords=[])
    # whole tokens only: "cat" is not in "category"
    assert not mentions("the category was wrong", "cat")
    assert mentions("I saw two cats", "cat")
    # a compound in one word or two, either way round; not a word that merely starts the same
    assert free_form_correct("the green house (heard: …)", ["greenhouse"])
    assert mentions("by the toolbox", "tool box") and mentions("by the tool box", "toolbox")
    assert not mentions("the green hat", "greenhouse") and not mentions("a tool", "toolbox")


def test_abstention_detection() -> None:
    assert is_abstention("I found nothing about that in memory.")
    assert is_abstention("The recording does not mention it, I don't know.")
    assert is_abstention("", ())
    assert is_abstention("B", ("a", "b"), None)  # options given but none chosen
    assert not is_abstention("The meeting is at 8:15.")
    assert not is_abstention("B", ("a", "b"), 1)


# -- metrics -------------------------------------------------------------------------------------


def test_reliability_bins_and_ece_by_hand() -> None:
    conf = [0.1, 0.15, 0.5, 0.55, 0.9, 0.95, 1.0, 0.85]
    right = [False, False, True, False, True, True, True, False]
    bins, ece = reliability(conf, right, n_bins=5)
    by_lo = {round(b.lo, 1): b for b in bins}
    assert [b.n for b in bins] == [2, 0, 2, 0, 4]
    assert by_lo[0.0].accuracy == 0.0 and by_lo[0.0].mean_confidence == 0.125
    assert by_lo[0.4].accuracy == 0.5 and by_lo[0.4].mean_confidence == 0.525
    assert by_lo[0.8].accuracy == 0.75 and by_lo[0.8].mean_confidence == 0.925
    assert by_lo[0.2].accuracy is None
    # ECE = 2/8·|0−0.125| + 2/8·|0.5−0.525| + 4/8·|0.75−0.925| = 0.03125 + 0.00625 + 0.0875
    assert ece == pytest.approx(0.125, abs=1e-4)
    assert reliability([], []) == (reliability([], [])[0], None)
    with pytest.raises(ValueError):
        reliability([0.5], [])


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentile(values, 95) == 19.0
    assert percentile(values, 50) == 10.0
    assert percentile([3.0], 95) == 3.0
    assert percentile([], 95) is None


def test_moment_ranks_and_recall() -> None:
    targets = [Interval("cam-a", 10.0, 20.0)]
    returned = [("cam-b", 10.0, 20.0), ("cam-a", 0.0, 9.9), ("cam-a", 19.0, 25.0)]
    assert first_hit_rank(returned, targets) == 3  # wrong stream, then no overlap, then a hit
    assert first_hit_rank([("cam-a", 20.0, 30.0)], targets) is None  # touching is not overlapping
    ranks = [1, 3, None, 6]
    assert recall_at(ranks, 1) == 0.25
    assert recall_at(ranks, 5) == 0.5
    assert recall_at([], 5) is None


def _rec(category: str, mode: str, correct: bool, conf: float, abstained: bool = False,
         answerable: bool = True, latency: float = 1.0) -> ItemRecord:
    return ItemRecord(id="x", category=category, mode=mode, split="dev", question="q", answer="a",
                      confidence=conf, correct=correct, abstained=abstained, answerable=answerable,
                      expected="e", latency_s=latency)


def test_summary_by_category_and_abstention() -> None:
    items = [
        _rec("A", "choice", True, 0.9, latency=1.0),
        _rec("A", "choice", False, 0.8, latency=2.0),
        _rec("A", "free", True, 0.6, latency=3.0),
        _rec("V", "choice", True, 0.95, latency=4.0),
        _rec("A", "free", False, 0.0, abstained=True, latency=5.0),  # a false abstention
        _rec("unanswerable", "free", True, 0.0, abstained=True, answerable=False, latency=6.0),
        _rec("unanswerable", "free", False, 0.7, answerable=False, latency=7.0),
    ]
    s = QAReport("t", "dev", items, []).summary()
    assert s["multiple_choice"]["accuracy"] == pytest.approx(2 / 3, abs=1e-4)
    assert s["multiple_choice"]["by_category"]["A"] == {
        "n": 2, "correct": 1, "accuracy": 0.5, "interval_95": [0.0945, 0.9055]}
    assert s["free_form"]["accuracy"] == 0.5  # unanswerable items are not free-form accuracy
    assert s["by_category"]["unanswerable"]["accuracy"] == 0.5
    assert s["unanswerable"] == {"n": 2, "abstained": 1, "abstention_rate": 0.5, "interval_95": [0.0945, 0.9055]}
    assert s["false_abstention_rate"] == 0.2  # 1 of 5 answerable
    assert s["latency"]["ask"]["mean_s"] == 4.0 and s["latency"]["ask"]["p95_s"] == 7.0
    assert s["latency"]["relistened_ask"] == {"n": 0, "mean_s": None, "p95_s": None, "median_s": None, "over_5_s": 0}
    # the Asks that listened again (their timings name the stage) and how many took over 5 s
    for r, ms in zip(items[:4], (900.0, 2500.0, 0.0, 3100.0), strict=True):
        r.timings_ms = {"relisten": ms} if ms else {}
    items[3].latency_s = 5.5
    again = QAReport("t", "dev", items, []).summary()["latency"]["relistened_ask"]
    assert again == {"n": 3, "mean_s": round((1.0 + 2.0 + 5.5) / 3, 3), "p95_s": 5.5, "median_s": 2.0, "over_5_s": 1}
    cal = s["calibration"]
    assert cal["answers_given"] == 5  # abstentions are not claims
    assert cal["accuracy_at_confidence_ge_0.75"] == pytest.approx(2 / 3, abs=1e-4)  # 0.9 ✓, 0.8 ✗, 0.95 ✓
    assert list(s["by_category"]) == [c for c in CATEGORIES if c in s["by_category"]]


@pytest.mark.parametrize(
    ("k", "n", "expected"),
    [
        (231, 294, (0.7353, 0.8288)),  # by hand: centre 0.78203, half-width 0.04675
        (18, 18, (0.8241, 1.0)),  # all right is not certainty: centre 0.91206, half 0.08794
        (0, 10, (0.0, 0.2775)),
        (1, 2, (0.0945, 0.9055)),
    ],
)
def test_wilson_interval_by_hand(k: int, n: int, expected: tuple[float, float]) -> None:
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(expected[0], abs=1e-4) and hi == pytest.approx(expected[1], abs=1e-4)


def test_wilson_interval_refuses_what_is_no_share() -> None:
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="3 of 2"):
        wilson_interval(3, 2)


def test_moments_are_reported_by_their_category() -> None:
    """R@1 and R@5 per category, counted by hand: pictures 1 of 3 at rank 1, 2 of 3 by rank 5;
    speech 1 of 1 (rank 2: not at 1); a moment without a category only in the totals."""
    report = QAReport("s", "heldout", [], [
        MomentRecord("m1", "a picture of a clock", "heldout", 1, 0.1, category="picture"),
        MomentRecord("m2", "a picture of a cat", "heldout", 4, 0.1, category="picture"),
        MomentRecord("m3", "a picture of coins", "heldout", None, 0.1, category="picture"),
        MomentRecord("m4", "Tom and the ropes", "heldout", 2, 0.1, category="speech"),
        MomentRecord("m5", "music", "heldout", 1, 0.1),
    ])
    moments = report.summary()["moments"]
    assert moments["n"] == 5 and moments["r_at_5"] == pytest.approx(0.8)
    assert moments["by_category"] == {
        "picture": {"n": 3, "r_at_1": pytest.approx(1 / 3, abs=1e-4), "r_at_5": pytest.approx(2 / 3, abs=1e-4)},
        "speech": {"n": 1, "r_at_1": 0.0, "r_at_5": 1.0},
    }
    assert QAReport.from_dict(json.loads(json.dumps(report.to_dict()))).summary() == report.summary()


def test_pooled_report_counts_every_set_once(tmp_path: Path) -> None:
    one = QAReport("s1", "heldout", [_rec("A", "choice", True, 0.9), _rec("A", "free", False, 0.2)],
                   [MomentRecord("m1", "q", "heldout", 1, 0.1), MomentRecord("m2", "q", "heldout", None, 0.1)])
    two = QAReport("s2", "heldout", [_rec("V", "choice", False, 0.3), _rec("A", "choice", True, 0.8),
                                     _rec("unanswerable", "free", True, 0.0, abstained=True, answerable=False)],
                   [MomentRecord("m3", "q", "heldout", 6, 0.1)])
    # a saved run comes back as it was written (bench_qa.py's JSON), newer fields ignored
    saved = json.loads(json.dumps({**two.to_dict(), "added_later": 1}))
    saved["items"][0]["a_new_field"] = "x"
    back = QAReport.from_dict(saved)
    assert back.summary() == two.summary()
    s = pooled_report([one, back]).summary()
    assert s["multiple_choice"]["n"] == 3 and s["multiple_choice"]["correct"] == 2
    assert s["multiple_choice"]["interval_95"] == list(wilson_interval(2, 3))
    assert s["free_form"]["n"] == 1 and s["free_form"]["correct"] == 0
    assert s["unanswerable"]["abstained"] == 1
    assert s["moments"]["n"] == 3 and s["moments"]["r_at_5"] == pytest.approx(1 / 3, abs=1e-4)
    assert pooled_report([one, back]).split == "heldout"
    assert pooled_report([one, QAReport("d", "dev", [], [])]).split == "mixed"
    with pytest.raises(ValueError, match="not a QA report"):
        QAReport.from_dict({"items": [{"id": "x"}]})


# -- the file format ------------------------------------------------------------------------------


def _doc(**item_changes: object) -> dict:
    item = {"id": "q1", "category": "A", "question": "When?", "options": ["8:15", "9:00"], "answer_index": 0}
    item.update(item_changes)
    return {"recordings": [{"path": "a.mp4", "stream_id": "cam-a"}], "items": [item]}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "expected a JSON object"),
        ({"items": []}, "recordings"),
        ({"recordings": [], "items": [], "moments": []}, "no items"),
        (_doc(category="X"), "category must be one of"),
        (_doc(question=""), "question must be a non-empty string"),
        (_doc(answer_index=2), "answer_index 2 is not an option"),
        (_doc(answer_index=None), "needs an integer answer_index"),
        (_doc(options=["a"]), "give 2 to 10 options"),
        (_doc(options=["a", "A"]), "options repeat"),
        (_doc(options=None, answer_index=None), "needs options + answer_index, or answers"),
        (_doc(options=None, answer_index=1, answers=["x"]), "answer_index without options"),
        (_doc(category="unanswerable", options=None, answer_index=None, answers=["x"]), "no answers or keywords"),
        (_doc(split="test"), "split must be one of"),
        (_doc(scope={"streams": ["a"]}), "unknown field"),
        (_doc(evidence=[{"stream_id": "cam-a", "t_start": 5, "t_end": 1}]), "is before t_start"),
        ({**_doc(), "format": "other/2"}, "is not 'episodic-qa/1'"),
        ({**_doc(), "moments": [{"id": "m", "query": "music", "targets": []}]}, "non-empty list"),
        ({**_doc(), "moments": [{"id": "q1", "query": "music", "stream_id": "a", "t_start": 0, "t_end": 1}]}, "duplicate id"),
        ({**_doc(), "moments": [{"id": "m", "query": "music", "stream_id": "a", "t_start": 0, "t_end": 1,
                                 "category": 3}]}, "m).category must be a string"),
    ],
)
def test_loader_names_the_problem(doc: object, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        parse_qa_set(doc, Path("."))


def test_loader_reads_files_and_round_trips(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no QA set"):
        load_qa_set(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="cannot read"):
        load_qa_set(bad)
    doc = _doc()
    doc["items"].append({"id": "u1", "category": "unanswerable", "question": "Oxford?"})
    doc["items"].append({"id": "f1", "category": "ocr", "question": "Sign?", "answers": ["12"], "split": "dev",
                         "scope": {"stream_ids": ["cam-a"]}})
    doc["moments"] = [{"id": "m1", "query": "music", "stream_id": "cam-a", "t_start": 1, "t_end": 4}]
    path = tmp_path / "set" / "qa.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc), encoding="utf-8")
    qa = load_qa_set(path.parent)  # a folder means its qa.json
    assert qa.recording_path(qa.recordings[0]) == path.parent / "a.mp4"
    assert [i.is_free_form for i in qa.items] == [False, True, True]
    assert qa.items[1].answerable is False
    assert qa.moments[0].targets == [Interval("cam-a", 1.0, 4.0)]
    assert [i.id for i in qa.only_split("dev").items] == ["f1"]
    again = parse_qa_set(json.loads(json.dumps(qa.to_dict())), path.parent)
    assert again.items == qa.items and again.moments == qa.moments


# -- the generator --------------------------------------------------------------------------------


@pytest.mark.slow
def test_generated_set_is_consistent_with_its_script(tmp_path: Path) -> None:
    from episodic.qa_content import VOICES
    from episodic.qa_generator import build_qa_set

    qa = build_qa_set(tmp_path, "heldout", seed=3, streams=2, minutes=0.4)
    again = load_qa_set(tmp_path / "qa.json")
    assert again.items == qa.items
    script = {s["stream_id"]: s for s in json.loads((tmp_path / "script.json").read_text())}
    assert {r.stream_id for r in qa.recordings} == set(script)
    for rec in qa.recordings:
        assert qa.recording_path(rec).stat().st_size > 10_000
    cats = {i.category for i in qa.items}
    assert {"A", "V", "S", "ocr", "sound", "order", "which_stream", "count", "unanswerable"} <= cats
    voices = {b["voice"] for s in script.values() for b in s["beats"] if b["said"]}
    assert voices and voices <= set(VOICES["heldout"])  # held-out voices only
    said = {sid: " ".join(b["said"] for b in s["beats"]) for sid, s in script.items()}
    for item in qa.items:
        if item.category == "A":
            ev = item.evidence[0]
            spoken = " ".join(b["said"] for b in script[ev.stream_id]["beats"]
                              if b["speech_t"] and b["speech_t"][0] <= ev.t_start + 0.01 and b["said"])
            truth = item.options[item.answer_index] if item.options else item.answers[0]
            # the label is what was said (a room number is said "three nineteen" for 319)
            forms = [truth] + ([f"{truth[0]} {truth[1:]}"] if truth.isdigit() and len(truth) == 3 else [])
            assert any(mentions(spoken, f) for f in forms), (item.question, truth, spoken)
        if item.category == "unanswerable":
            assert item.options == [] and not item.answerable
        if item.category == "ocr":
            sign_texts = [b["sign"] for s in script.values() for b in s["beats"] if b["sign"]]
            truth = item.options[item.answer_index] if item.options else item.answers[0]
            assert any(mentions(t, truth) for t in sign_texts)
    names = [n for s in said.values() for n in s.split() if n.istitle()]
    assert names
    for m in qa.moments:
        for t in m.targets:
            assert 0 <= t.t_start < t.t_end <= script[t.stream_id]["duration_s"] + 0.01
    # every moment query says what it looks for, as the wording-based reading of older runs would
    from episodic.qa_generator import moment_category

    assert {m.category for m in qa.moments} >= {"speech", "picture", "sign"}
    assert all(m.category == moment_category(m.query) for m in qa.moments)


# -- end to end ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_evaluate_qa_end_to_end_json(tmp_path: Path) -> None:
    from episodic import samples
    from tests.cli_runner import run_cli

    scenes = [samples.Scene(8.0, seed=31, tint=(90, 110, 160), text="PLATFORM 7"),
              samples.Scene(8.0, seed=32, tint=(200, 160, 90))]
    speech = [samples.Speech(1.0, "The train to Oxford leaves from platform seven."),
              samples.Speech(9.0, "Tom put three green apples in the blue bowl.")]
    samples.make_recording(tmp_path / "rec" / "cam.mp4", scenes, speech)
    doc = {
        "name": "tiny", "split": "dev",
        "recordings": [{"path": "cam.mp4", "stream_id": "cam"}],
        "items": [
            {"id": "mc", "category": "A", "question": "Which platform does the train to Oxford leave from?",
             "options": ["platform three", "platform seven", "platform nine"], "answer_index": 1},
            {"id": "ff", "category": "A", "question": "How many apples did Tom put in the bowl?",
             "answers": ["3"], "wrong_answers": ["2", "4"]},
            {"id": "un", "category": "unanswerable", "question": "What did the weather forecast say about snow in Vienna?"},
        ],
        "moments": [{"id": "m1", "query": "apples in a bowl", "stream_id": "cam", "t_start": 8.0, "t_end": 16.0}],
    }
    (tmp_path / "rec" / "qa.json").write_text(json.dumps(doc), encoding="utf-8")
    proc = run_cli("evaluate", "--qa", str(tmp_path / "rec" / "qa.json"), "--json", data=tmp_path / "data")
    out = json.loads(proc.stdout)
    s = out["summary"]
    assert [(i["stream_id"], i["skipped"]) for i in out["ingest"]] == [("cam", False)]
    assert out["ingest"][0]["stream_s"] == pytest.approx(16.0, abs=0.5)
    by_id = {r["id"]: r for r in out["items"]}
    assert set(by_id) == {"mc", "ff", "un"}
    assert by_id["mc"]["mode"] == "choice" and by_id["ff"]["mode"] == "free"
    assert by_id["mc"]["correct"], by_id["mc"]  # clearly spoken, shown on a sign too
    # the summary is computed from the records it prints
    assert s["multiple_choice"]["accuracy"] == float(by_id["mc"]["correct"])
    assert s["unanswerable"]["abstention_rate"] == float(by_id["un"]["abstained"])
    assert s["moments"]["n"] == 1 and out["moments"][0]["returned"]
    assert s["latency"]["ask"]["n"] == 3 and s["latency"]["ask"]["mean_s"] > 0
    assert sum(b["n"] for b in s["calibration"]["bins"]) == s["calibration"]["answers_given"]
    # a second run (the moment query only: no model answers) finds the recording already
    # stored and does not ingest it again
    (tmp_path / "rec" / "qa.json").write_text(json.dumps({**doc, "items": []}), encoding="utf-8")
    proc = run_cli("evaluate", "--qa", str(tmp_path / "rec"), "--json", data=tmp_path / "data")
    again = json.loads(proc.stdout)
    assert again["ingest"] == [{"stream_id": "cam", "skipped": True}]
    assert again["moments"][0]["rank"] == out["moments"][0]["rank"]


@pytest.mark.slow
def test_a_harsher_set_is_the_same_set_in_louder_noise(tmp_path: Path) -> None:
    """``harsher_db`` changes the sound only: the same questions, answers and sentences, the
    noise recorded that many dB nearer the speech, and more noise power where nothing is said."""
    import av

    from episodic.qa_generator import build_qa_set

    plain = build_qa_set(tmp_path / "plain", "dev", seed=5, streams=1, minutes=0.4)
    harsh = build_qa_set(tmp_path / "harsh", "dev", seed=5, streams=1, minutes=0.4, harsher_db=8)
    assert [(i.question, i.options, i.answer_index, i.answers) for i in harsh.items] == [
        (i.question, i.options, i.answer_index, i.answers) for i in plain.items]
    scripts = [json.loads((tmp_path / d / "script.json").read_text())[0] for d in ("plain", "harsh")]
    assert [b["said"] for b in scripts[0]["beats"]] == [b["said"] for b in scripts[1]["beats"]]
    (colour, snr), (colour2, snr2) = scripts[0]["noise"], scripts[1]["noise"]
    assert colour == colour2 and snr - snr2 == pytest.approx(8.0)

    def quiet_power(folder: str) -> float:
        """Mean power where no one speaks and no sound (engine, music, applause) plays."""
        with av.open(str(tmp_path / folder / scripts[0]["path"])) as c:
            rate = c.streams.audio[0].rate
            x = np.concatenate([f.to_ndarray()[0] for f in c.decode(audio=0)]).astype(np.float64)
        quiet = np.ones(len(x), dtype=bool)
        busy = [b["speech_t"] for b in scripts[0]["beats"] if b["speech_t"]]
        busy += [(t0, t1) for _, t0, t1 in scripts[0]["sounds"]]
        for t0, t1 in busy:
            quiet[max(0, int((t0 - 0.3) * rate)) : int((t1 + 0.3) * rate)] = False
        assert quiet.sum() > rate  # at least a second of background alone
        return float(np.mean(x[quiet] ** 2))

    assert quiet_power("harsh") > 3 * quiet_power("plain")  # 8 dB: 6.3× the noise power
    with pytest.raises(ValueError, match="harsher_db"):
        build_qa_set(tmp_path / "bad", "dev", seed=5, streams=1, minutes=0.4, harsher_db=-3)


def test_other_sentences_say_dev_facts_in_shapes_neither_split_uses() -> None:
    """The third sentence set (dev only) is what its facts are said in, each asked with that
    shape's own questions; and no sentence of it is a dev or held-out sentence shape."""
    import string

    from episodic.qa_content import NAMES, PHOTOS, TEMPLATES, THEMES
    from episodic.qa_generator import build_qa_set
    from episodic.qa_script import script_stream

    def pattern(sentence: str) -> re.Pattern[str]:
        parts = [re.escape(lit) + ("(.+?)" if field else "")
                 for lit, field, _, _ in string.Formatter().parse(sentence)]
        return re.compile("^" + "".join(parts) + "$", re.IGNORECASE)

    shapes = {key: [pattern(t.sentence) for kind in TEMPLATES.values() for t in kind[key]]
              for key in ("dev", "heldout", "dev-other")}
    questions = {t.questions for kind in TEMPLATES.values() for t in kind["dev-other"]}
    script = script_stream(THEMES["dev"][0], "dev", np.random.default_rng(3), 2.5, list(NAMES["dev"][:3]),
                           [PHOTOS["dev"][0]], ["music"], dark=False, noise=("pink", 25.0), used={},
                           sentences="dev-other")
    assert len(script.facts) >= 4
    for fact in script.facts:
        assert any(p.match(fact.sentence) for p in shapes["dev-other"]), fact.sentence
        assert not any(p.match(fact.sentence) for p in shapes["dev"] + shapes["heldout"]), fact.sentence
        assert fact.questions in questions
    with pytest.raises(ValueError, match="dev split only"):
        build_qa_set("/nonexistent", "heldout", other_sentences=True)


def test_other_people_are_in_neither_split() -> None:
    """The people and places of ``other_people`` (dev only) are no dev or held-out name or
    setting, and a script made with them says their names and their things."""
    from episodic.qa_content import NAMES, NAMES_OTHER, PHOTOS, THEMES, THEMES_OTHER
    from episodic.qa_generator import build_qa_set
    from episodic.qa_script import script_stream

    known_names = set(NAMES["dev"]) | set(NAMES["heldout"])
    assert not known_names & set(NAMES_OTHER) and len(NAMES_OTHER) >= 9
    known = {t.key for split in THEMES.values() for t in split} | {t.stream_id for split in THEMES.values() for t in split}
    assert not known & ({t.key for t in THEMES_OTHER} | {t.stream_id for t in THEMES_OTHER}) and len(THEMES_OTHER) >= 5
    theme = THEMES_OTHER[0]
    script = script_stream(theme, "dev", np.random.default_rng(4), 2.5, list(NAMES_OTHER[:3]), [PHOTOS["dev"][0]],
                           ["music"], dark=False, noise=("pink", 25.0), used={})
    said = " ".join(b.said for b in script.beats)
    assert any(n in said for n in NAMES_OTHER[:3]) and not any(n in said for n in known_names)
    assert any(o in said for o in theme.objects + theme.places + theme.roles)
    with pytest.raises(ValueError, match="dev split only"):
        build_qa_set("/nonexistent", "heldout", other_people=True)


def test_a_count_question_counts_a_fact_that_names_the_thing() -> None:
    """"How many times was the hair dryer mentioned?" counts "Noor painted the hair dryer
    black." as well as "Look, the hair dryer is here.": a fact naming the recurring thing is a
    mention too (the answer was one short whenever a theme's objects and recurring things met)."""
    from episodic.qa_content import NAMES_OTHER, PHOTOS, THEMES_OTHER
    from episodic.qa_generator import _Questions
    from episodic.qa_script import script_stream

    theme = next(t for t in THEMES_OTHER if "hair dryer" in t.recurring)
    script = script_stream(theme, "dev", np.random.default_rng(4), 2.5, list(NAMES_OTHER[:3]), [PHOTOS["dev"][0]],
                           ["music"], dark=False, noise=("pink", 25.0), used={})
    recurring = [b for b in script.beats if b.recurring]
    thing = next(t for t in theme.recurring if t in recurring[0].said)
    fact = next(b for b in script.beats if b.fact is not None and thing not in b.said)
    fact.said = f"Noor painted the {thing} black."
    questions = _Questions([script], "dev", np.random.default_rng(0), [], [])
    questions.count(script)
    (item,) = [i for i in questions.items if i.category == "count"]
    n = sum(1 for b in script.beats if b.recurring) + 1
    assert str(n) in item.answers and len(item.evidence) == n, (item.answers, item.evidence)


def test_other_pictures_are_in_neither_split_and_only_dev_shows_them() -> None:
    """``other_pictures`` (dev only) shows pictures no split has; a silhouette stored as
    booleans renders white on black, not as a black frame."""
    from episodic.qa_content import PHOTOS, PHOTOS_OTHER
    from episodic.qa_generator import build_qa_set
    from episodic.qa_render import _photo_array

    known = {p.name for split in PHOTOS.values() for p in split} | {p.label for split in PHOTOS.values() for p in split}
    assert len(PHOTOS_OTHER) >= 4 and not known & ({p.name for p in PHOTOS_OTHER} | {p.label for p in PHOTOS_OTHER})
    horse = _photo_array(next(p for p in PHOTOS_OTHER if p.name == "horse"))
    assert horse.dtype == np.uint8 and horse.max() == 255 and horse.ndim == 3
    with pytest.raises(ValueError, match="dev split only"):
        build_qa_set("/nonexistent", "heldout", other_pictures=True)


def test_everyday_pictures_are_in_no_other_pool_and_load_from_both_libraries() -> None:
    """``other_pictures="everyday"`` (dev only) shows pictures no split and no other pool has;
    scikit-learn's sample photos load as RGB like scikit-image's; an unknown pool is an error."""
    from episodic.qa_content import PHOTOS, PHOTOS_EVERYDAY, PICTURE_POOLS
    from episodic.qa_generator import build_qa_set
    from episodic.qa_render import _photo_array

    others = [p for split in PHOTOS.values() for p in split] + list(PICTURE_POOLS["other"])
    assert len(PHOTOS_EVERYDAY) >= 4 and PICTURE_POOLS["everyday"] is PHOTOS_EVERYDAY
    assert not ({p.name for p in others} | {p.label for p in others}) & (
        {p.name for p in PHOTOS_EVERYDAY} | {p.label for p in PHOTOS_EVERYDAY})
    for photo in PHOTOS_EVERYDAY:
        img = _photo_array(photo)
        assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3 and img.std() > 10, photo.name
    with pytest.raises(ValueError, match="dev split only"):
        build_qa_set("/nonexistent", "heldout", other_pictures="everyday")
    with pytest.raises(ValueError, match="must be one of"):
        build_qa_set("/nonexistent", "dev", other_pictures="holiday")


@pytest.mark.slow
def test_a_set_with_other_pictures_asks_about_them(tmp_path: Path) -> None:
    from episodic.qa_content import PHOTOS_OTHER
    from episodic.qa_generator import build_qa_set

    qa = build_qa_set(tmp_path, "dev", seed=2, streams=2, minutes=0.5, other_pictures=True)
    labels = {p.label for p in PHOTOS_OTHER}
    shown = [i for i in qa.items if i.category == "V" and i.options]
    assert shown and all(i.options[i.answer_index] in labels for i in shown)
    assert any(len(labels & set(i.options)) >= 2 for i in shown)  # several unnameable options at once


def test_other_voices_come_from_another_synthesiser_at_the_asked_speed() -> None:
    """``other_voices`` (dev only) are flite's, in no split; each speaks, a slower rate takes
    longer, and a voice flite lacks is an error (flite itself would say it as "kal", silently)."""
    from episodic.core.errors import EpisodicError
    from episodic.qa_content import VOICES, VOICES_OTHER
    from episodic.qa_generator import build_qa_set
    from episodic.samples import synthesize

    assert not set(VOICES_OTHER) & {v for split in VOICES.values() for v in split}
    text = "The ferry to the island leaves at seven forty five."
    for voice in VOICES_OTHER:
        slow, fast = synthesize(text, voice, 120), synthesize(text, voice, 180)
        assert fast.size > 16000 and slow.size > 1.3 * fast.size, (voice, slow.size, fast.size)
    assert synthesize(text, "flite:rms", 150).size != synthesize(text, "flite:slt", 150).size
    with pytest.raises(EpisodicError, match="no voice 'nobody'"):
        synthesize(text, "flite:nobody", 150)
    with pytest.raises(ValueError, match="dev split only"):
        build_qa_set("/nonexistent", "heldout", other_voices=True)


@pytest.mark.slow
def test_a_set_with_other_voices_is_all_said_by_them(tmp_path: Path) -> None:
    import json

    from episodic.qa_content import VOICES_OTHER
    from episodic.qa_generator import build_qa_set

    qa = build_qa_set(tmp_path, "dev", seed=3, streams=1, minutes=0.4, other_voices=True)
    beats = [b for s in json.loads((tmp_path / "script.json").read_text()) for b in s["beats"] if b["said"]]
    assert beats and {b["voice"] for b in beats} <= set(VOICES_OTHER) and "other voices" in qa.name
