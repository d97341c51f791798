"""benchmarks/qa_rewordings.py: the generated questions asked in other words keep their answers."""

import importlib.util
from pathlib import Path

import pytest

from episodic.qa_set import Interval, MomentQuery, QAItem, QASet, Recording

_spec = importlib.util.spec_from_file_location(
    "qa_rewordings", Path(__file__).resolve().parents[3] / "benchmarks" / "qa_rewordings.py"
)
qa_rewordings = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qa_rewordings)


def test_dev_wordings_are_asked_otherwise_with_the_same_answers():
    items = [
        QAItem("d1", "order", "What was mentioned right after the price of the rope?", ["a", "b"], 1),
        QAItem("d2", "unanswerable", "Where did Omar leave the spade?", answerable=False),
        QAItem("d3", "V+A", "What was mentioned while a picture of coins was on screen?", ["x", "y"], 0),
        QAItem("d4", "A", "A question no template knows?", answers=["42"]),
        QAItem("d5", "order", "What was mentioned right after the time of the show?", ["c", "d"], 0),
    ]
    qa = QASet([Recording("a.mp4", "a-cam")], items, [MomentQuery("m1", "rope", [Interval("a-cam", 0, 1)])],
               split="dev", name="dev")
    out = qa_rewordings.reworded(qa)
    assert [i.id for i in out.items] == ["rd1", "rd3", "rd5"]  # unanswerable and unknown left out
    assert out.items[0].question == "What came up next, once the price of the rope had been mentioned?"
    assert out.items[1].question == "While a photo of coins was visible, what was talked about?"  # 2nd of 3
    assert out.items[2].question == "the time of the show was mentioned; what came next?"
    assert [(i.options, i.answer_index) for i in out.items] == [(["a", "b"], 1), (["x", "y"], 0), (["c", "d"], 0)]
    assert out.moments == [] and qa.items[0].question.startswith("What was mentioned")  # the original kept


def test_session_82_rewordings_cover_the_dev_wordings_and_fill_every_slot():
    """The second set rewords each dev wording, and a pattern with alternatives never writes
    the other branch's empty group into the question."""
    table = qa_rewordings.FRESH_REWORDINGS
    asked = {
        "Where was the spade left by Omar?": "Where can I find the spade that Omar left?",
        "Where did Omar leave the spade?": "What's the location of Omar's spade?",
        "When will Daniel get together with the captain?": "When do Daniel and the captain meet up?",
        "Which colour should Sofia's library card be?": "Sofia would like the library card in which colour?",
    }
    for n, (question, expected) in enumerate(asked.items()):
        assert qa_rewordings.reword(question, n % 2, table) == expected
    items = [QAItem("d1", "A", "How many novels did Omar buy?", answers=["3"]),
             QAItem("d2", "A", "A question no template knows?", answers=["42"])]
    out = qa_rewordings.reworded(QASet([Recording("a.mp4", "a-cam")], items, [], split="dev", name="dev"), "session82")
    assert [(i.id, i.question) for i in out.items] == [("rd1", "What's the number of novels Omar bought?")]


@pytest.mark.parametrize(
    "table, question, reworded",
    [
        ("session82-check", "Where was the spade left by Omar?", "Any idea where Omar left the spade?"),
        ("session82-check", "Which camera recorded the talk about the rope?", "the rope: which camera was that on?"),
        ("session83-check", "Where was the spade left by Omar?", "Omar left the spade where?"),
        ("session83-check", "When will Daniel get together with the captain?",
         "When are Daniel and the captain supposed to meet?"),
        ("session83-check", "What is the main subject of garden-cam?", "Sum up garden-cam for me."),
        ("session84-check", "Where was the spade left by Omar?", "Where'd Omar leave the spade?"),
        ("session84-check", "When will Daniel get together with the captain?",
         "What's the time of the get-together between Daniel and the captain?"),
        ("session84-check", "Where is the rope now?", "where's the rope now"),
        ("session84-check", 'On which camera was the sign "Quiet please" visible?',
         'Which camera could see a sign saying "Quiet please"?'),
        ("session84-blind", "Where was the spade left by Omar?", "I was wondering where Omar left the spade."),
        ("session84-blind", "Which was mentioned first: the rope or the bell?",
         "Did the rope come up before the bell, or was it the other way around?"),
        ("session85-check", "Where was the spade left by Omar?", "Next to what is Omar's spade?"),
        ("session85-check", "When will Daniel get together with the captain?",
         "When is Daniel's get-together with the captain today?"),
        ("session85-check", "How much is an onion?", "How much do they want for one onion?"),
        ("session85-blind", "Where was the spade left by Omar?", "Where can Omar's spade be found?"),
        ("session85-blind", "What could be heard while the picture was dark in garden-cam?",
         "What was on garden-cam's soundtrack while the screen was black?"),
    ],
)
def test_the_check_tables_reword_with_every_slot_filled(table, question, reworded):
    assert qa_rewordings.reword(question, 0, qa_rewordings.TABLES[table]) == reworded
