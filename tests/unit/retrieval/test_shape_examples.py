"""A question's focus from its nearest labelled example questions, where the wording rules read
none (retrieval/shape_examples.py; the real sentence embedder is asked in
tests/unit/reasoning/test_answering.py::test_end_to_end_questions_worded_freely)."""

from __future__ import annotations

import numpy as np

from episodic.retrieval.query_analysis import QueryAnalyzer
from episodic.retrieval.shape_examples import FOCUS_EXAMPLES, FOCUS_MARGIN

KINDS = list(FOCUS_EXAMPLES)


class KindEmbedder:
    """Puts each example question on its kind's axis, a question asked on the vector given, and
    anything else at the origin."""

    dim = len(KINDS)

    def __init__(self, asked: dict[str, np.ndarray]) -> None:
        self.asked = asked

    def embed_texts(self, texts):
        out = []
        for t in texts:
            kind = next((k for k, qs in FOCUS_EXAMPLES.items() if t in qs), None)
            v = np.eye(len(KINDS), dtype=np.float32)[KINDS.index(kind)] if kind else self.asked.get(t, np.zeros(len(KINDS), dtype=np.float32))
            out.append(v)
        return np.stack(out).astype(np.float32)


def _near(**weights: float) -> np.ndarray:
    v = np.zeros(len(KINDS), dtype=np.float32)
    for k, w in weights.items():
        v[KINDS.index(k)] = w
    return v


def test_a_question_the_rules_read_no_focus_in_takes_the_kind_its_examples_share():
    q = "At what point in the day does Tom meet the baker?"
    analyzer = QueryAnalyzer(KindEmbedder({q: _near(time=0.6, any=0.4)}))
    assert analyzer.shape_of(q, analyzer.embedder.embed_texts([q])[0]).focus == "time"
    analysis = analyzer.analyze(q)
    assert analysis.shape.focus == "time" and "asks for a time (nearest example questions)" in analysis.why


def test_too_close_a_call_or_a_kind_that_is_no_focus_leaves_any():
    q = "At what point in the day does Tom meet the baker?"
    close = _near(time=0.6, any=0.6 - FOCUS_MARGIN / 2)
    analyzer = QueryAnalyzer(KindEmbedder({q: close}))
    assert analyzer.shape_of(q, close).focus == "any"
    day = _near(day=0.7, time=0.3)  # "on which day is it closed?": a day is no clock time
    assert QueryAnalyzer(KindEmbedder({})).shape_of("Which day is it shut?", day).focus == "any"


def test_a_focus_the_rules_read_or_another_shape_is_kept():
    analyzer = QueryAnalyzer(KindEmbedder({}))
    place = _near(place=1.0)
    assert analyzer.shape_of("When does the ferry leave?", place).focus == "time"  # the rules' focus
    # an order, a count, a stream, a sound: the examples do not speak for them
    for q in ("What was mentioned right after the bell?", "How many times was the bell mentioned?",
              "Which camera showed the bell?", "Besides speech, what could you hear in cam-1?"):
        assert analyzer.shape_of(q, place).focus in ("any", "number"), q
        assert analyzer.shape_of(q, place).focus != "place", q


def test_a_phrase_to_find_takes_no_focus_from_examples():
    """A moment query ("the time of the ferry crossing") is searched for, not answered: it
    keeps the rules' reading whatever questions it resembles."""
    analyzer = QueryAnalyzer(KindEmbedder({}))
    assert analyzer.shape_of("the time of the ferry crossing", _near(time=1.0)).focus == "any"
    assert analyzer.shape_of("the ferry crossing starts when?", _near(time=1.0)).focus == "time"
