"""A moment of the recording's own time named in a question: which phrases name one, which
clock times are times someone said, and what the question asks once the time is taken out."""

from __future__ import annotations

import pytest

from episodic.retrieval.time_anchor import (
    ANCHOR_HALF_WIDTH_S,
    anchored_to,
    time_anchor,
    without_anchor,
)


@pytest.mark.parametrize("question, seconds, explicit, rest", [
    ("What was on screen at 0:50 in garden-cam?", 50.0, True, "What was on screen in garden-cam?"),
    ("What was said at 1:40 in garden-cam?", 100.0, False, "What was said in garden-cam?"),
    ("What was said 1 minute 40 seconds into the recording?", 100.0, True, "What was said?"),
    ("What could be heard at the 90-second mark?", 90.0, True, "What could be heard?"),
    ("What was shown 30 seconds in?", 30.0, True, "What was shown?"),
    ("What happens at 1:02:10?", 3730.0, True, "What happens?"),
    ("At 2:05, what was written on screen in station-cam?", 125.0, False, "What was written on screen in station-cam?"),
    ("What was said around the 2:05 mark?", 125.0, True, "What was said?"),
])
def test_phrases_that_name_a_moment(question: str, seconds: float, explicit: bool, rest: str) -> None:
    anchor = time_anchor(question)
    assert anchor is not None and anchor.seconds == seconds and anchor.explicit is explicit
    assert without_anchor(question, anchor) == rest
    lo, hi = anchor.window()
    assert hi - lo <= 2 * ANCHOR_HALF_WIDTH_S and lo <= seconds <= hi


@pytest.mark.parametrize("question", [
    "Who arrives at 8:15 am?", "What time is the flower show?", "When does the ferry leave at 9:75?",
    "How many tickets did Grace buy?",
])
def test_no_moment_where_none_is_named(question: str) -> None:
    assert time_anchor(question) is None


def test_a_clock_time_is_the_recordings_only_where_nothing_else_can_be_meant() -> None:
    said_time = "Who meets the baker at 8:15 in harbour-cam?"  # a time someone said
    assert not anchored_to(said_time, time_anchor(said_time), True, 3600.0)
    on_screen = "What was on screen at 1:40 in garden-cam?"
    assert anchored_to(on_screen, time_anchor(on_screen), True, 150.0)
    assert not anchored_to(on_screen, time_anchor(on_screen), False, 150.0)  # no recording named
    assert not anchored_to(on_screen, time_anchor(on_screen), True, 60.0)  # past its end
    explicit = "What was said 20 seconds into the video?"
    assert anchored_to(explicit, time_anchor(explicit), False, None)
    assert not anchored_to("x", None, True, 100.0)


@pytest.mark.parametrize("question, edge", [
    ("What was said last in library-cam?", "end"), ("What is the last thing said?", "end"),
    ("What did someone say at the end of the recording?", "end"), ("What was the first sign shown?", "start"),
    ("What was shown at the very beginning?", "start"),
    # words of things said, not an end of the recording
    ("What closing time was written on the sign?", None), ("When does the poetry reading begin?", None),
    ("What was said first and what last?", None),
])
def test_an_end_of_the_recording_asked_about(question: str, edge: str | None) -> None:
    from episodic.retrieval.time_anchor import recording_edge

    assert recording_edge(question) == edge
