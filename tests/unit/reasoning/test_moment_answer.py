"""What the memory holds at one second: the kinds asked about that cover it, else the nearest."""

from __future__ import annotations

from episodic.reasoning.moment_answer import (
    AT_MOMENT_CONFIDENCE,
    NEAR_MOMENT_CONFIDENCE,
    moment_answer,
    moment_modalities,
)
from episodic.retrieval.detailed import Unit


def _u(modality: str, t0: float, t1: float, text: str, guesses=()) -> Unit:
    u = Unit("cam", f"cam@{t0:g}", t0, t1, modality, text)
    u.guesses = tuple(guesses)
    return u


UNITS = [
    _u("speech", 0.6, 3.6, "The harvest festival is in room one fourteen."),
    _u("sound", 5.0, 7.0, "music playing"),
    _u("visual", 0.0, 7.0, 'on-screen text: "PLOT 35"; a scene; colours: blue', [("a rocket", 0.12), ("pole", 0.09)]),
    _u("ocr", 0.0, 7.0, "PLOT 35"),
    _u("summary", 0.0, 7.0, "Someone says the harvest festival is in room 114."),
]


def test_the_kinds_a_question_about_a_moment_asks_for() -> None:
    assert moment_modalities("What could be heard at 0:04?", ("speech",))[:2] == ("sound", "speech")
    assert moment_modalities("What was shown at 0:04?", ("ocr", "visual"))[:2] == ("ocr", "visual")
    assert moment_modalities("What was written at 0:04?", ("ocr",), asks_text=True) == ("ocr",)
    assert moment_modalities("What happened at 0:04?", ("summary", "speech", "ocr", "visual"))[-1] == "summary"


def test_what_covers_the_second_of_each_kind_asked_and_a_guess_said_to_be_one() -> None:
    heard = moment_answer(UNITS, 4.0, ("sound", "speech", "summary"))
    # the music starts a second later: near enough to a second read off a player
    assert heard is not None and heard.confidence == AT_MOMENT_CONFIDENCE
    assert heard.answer.startswith('heard: music playing; said: "The harvest festival'), heard.answer
    shown = moment_answer(UNITS, 4.0, ("visual", "summary"))
    assert shown is not None
    assert shown.answer == "seen: a scene; colours: blue; perhaps a rocket, pole, not sure (cam, 0.0–7.0 s)"
    # nothing of the kind at the second itself: the nearest in the window, less sure
    near = moment_answer(UNITS, 20.0, ("speech",))
    assert near is not None and near.confidence == NEAR_MOMENT_CONFIDENCE and "harvest" in near.answer
    assert moment_answer(UNITS, 4.0, ("ocr",)).answer.startswith('on screen: "PLOT 35"')
    assert moment_answer([u for u in UNITS if u.modality == "speech"], 4.0, ("sound",)) is None
