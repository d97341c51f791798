"""Questions asking when in the recording something was said or heard are answered with the
moments that surely hold it, in the recording's own time; a time someone said is another question."""

from __future__ import annotations

import pytest

from episodic.core.query import Moment
from episodic.reasoning.when_said import WHEN_CONFIDENCE, asks_when_said, when_answer
from episodic.retrieval.query_analysis import content_terms


def _moment(why: str, t: float, stream: str = "station-cam", score: float = 0.6) -> Moment:
    return Moment(stream_id=stream, t_start=t, t_end=t + 3.0, score=score, why=why, segment_id=f"{stream}@{t:g}")


@pytest.mark.parametrize("question, when_said", [
    ("When was the suitcase mentioned?", True), ("When were the tomato plants talked about?", True),
    ("At what point in the video did someone mention the apron?", True),
    ("At what moment was the music heard?", True), ("When did anyone talk about the ferry?", True),
    ("How far into the recording was the printer brought up?", True),
    ("When does the ferry crossing open?", False), ("When did Grace say she would meet the baker?", False),
    ("When was the sign PLOT 4 shown?", False), ("What was mentioned about the suitcase?", False),
    ("When is Tom meeting the baker?", False),
])
def test_which_questions_ask_when_in_the_recording(question: str, when_said: bool) -> None:
    assert asks_when_said(question) is when_said


def test_the_moments_holding_the_thing_in_time_order() -> None:
    question = "When was the suitcase mentioned?"
    terms = content_terms("the suitcase")
    moments = [
        _moment('speech: "Ask Grace if you need the suitcase." (matched: suitcase)', 79.1, score=0.7),
        _moment('speech: "There is the luggage trolley again."', 61.9, score=0.65),  # not about it
        _moment('speech: "Chen put the suitcase by the ticket machine." (matched: suitcase)', 46.1, score=0.6),
        _moment("key frames guessed: a suitcase (not a sure sighting)", 12.0, score=0.55),  # a guess
    ]
    draft = when_answer(terms, moments, question)
    assert draft is not None and draft.confidence == WHEN_CONFIDENCE
    assert draft.answer.startswith('At 0:46 in station-cam (speech: "Chen put the suitcase by the ticket machine."')
    assert '; also at 1:19 in station-cam (speech: "Ask Grace if you need the suitcase."' in draft.answer
    assert [u.t_start for u in draft.support] == [46.1, 79.1]
    # nothing holds it: no answer here (the ordinary path answers or refuses)
    assert when_answer(content_terms("the giraffe"), moments, "When was the giraffe mentioned?") is None
    # a thing said to be absent is still a mention, but not a sighting of it
    absent = [_moment('speech: "There is no suitcase here." (matched: suitcase)', 5.0)]
    assert when_answer(terms, absent, question) is not None
    assert when_answer(terms, absent, "When was the suitcase heard?") is None
