"""Questions asking for every time, room, price or colour said are answered with each one
heard, in the order said, never with the one sentence most like the question."""

from __future__ import annotations

import pytest

from episodic.reasoning.short_answer import values_of_kind
from episodic.reasoning.value_list import asks_for_values, values_answer
from episodic.retrieval.detailed import Unit


@pytest.mark.parametrize("question, kind", [
    ("What times were mentioned in harbour-cam?", "time"), ("Which rooms were mentioned?", "room"),
    ("What prices were given?", "price"), ("List all the colours mentioned in garden-cam.", "colour"),
    ("What colors were said?", "colour"),
    ("What time does the ferry leave?", None), ("Which room is the flower show in?", None),
    ("What colours were shown?", None), ("How many times was the ferry mentioned?", None),
])
def test_which_questions_ask_for_every_value(question: str, kind: str | None) -> None:
    assert asks_for_values(question) == kind


def test_values_as_said() -> None:
    assert values_of_kind("The ferry crossing starts at 8.35.", "time") == ["8.35"]
    assert values_of_kind("The flower show started at 22.", "time") == []  # a bare hour is a guess
    # a time of day said by its name (session 84: "The swimming pool opens at noon." had no time in it)
    assert values_of_kind("The swimming pool opens at noon.", "time") == ["noon"]
    assert values_of_kind("We should be finished before the afternoon.", "time") == []
    assert values_of_kind("The sailing race is in room 4 or 7.", "room") == ["room 407"]
    assert values_of_kind("I am in the waiting room.", "room") == []
    assert values_of_kind("You can get a sandwich for £10 here.", "price") == ["10 pounds"]
    assert values_of_kind("Hannah painted the anchor purple and green.", "colour") == ["purple", "green"]


@pytest.mark.parametrize("said, times", [
    ("Omar ordered six onions from the team.", []),  # a count is no time
    ("The dinner service is in Room 101.", []),  # nor a room number written like 1:01
    ("Gate 12 opens soon.", []),
    ("The poetry readings start at 3 p.m.", ["3 p.m."]),  # an hour said to be one
    ("The harvest festival start at 8 o 'clock.", ["8 o'clock"]),
    ("Lucas is meeting the chef at 730.", ["7:30"]),
    ("Please remember to begin at 3.30 am.", ["3.30 am"]),
    ("Please remember that the night train begins at quarter past 12.", ["quarter past 12"]),
    ("The poetry reading begins at 2.5.", []),  # one digit of minutes: a guess
])
def test_only_clock_times_are_times(said: str, times: list[str]) -> None:
    assert values_of_kind(said, "time") == times


def test_every_value_in_the_order_said_once_each() -> None:
    units = [Unit("harbour-cam", "h@60", 62.9, 65.0, "speech", "Sofia is meeting the fisherman at quarter to seven."),
             Unit("harbour-cam", "h@40", 48.8, 51.0, "speech", "The ferry crossing starts at 8.35."),
             Unit("harbour-cam", "h@100", 100.0, 102.0, "speech", "The ferry crossing starts at 8.35."),
             Unit("harbour-cam", "h@110", 110.0, 112.0, "visual", "a clock; colours: red")]
    draft = values_answer("time", units)
    assert draft.answer == "8.35 (harbour-cam, 48.8 s), quarter to seven (harbour-cam, 62.9 s)"
    assert [u.t_start for u in draft.support] == [48.8, 62.9]
    assert values_answer("colour", units).answer.startswith("No colours were heard")
