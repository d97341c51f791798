"""Minutes told before "past" or "to", misheard, heard from the audio (retrieval/clock_hearing.py).

Unit part: where the slots are (the word or two just before "past"/"to" and an hour, never a
number, a function word or the question's own). End to end (slow): a generated recording says
"quarter past one"; its stored words are overwritten with a hearing that lost the minutes
("… at Florida past one."); the minute words scored against the audio must bring back
"quarter", and the answer's value must then read as a clock time; a sentence whose minutes were
heard ("ten past one") has no slot and its audio is not read.
"""

from __future__ import annotations

import pytest

from episodic.reasoning.short_answer import clean_value, span_in
from episodic.retrieval.clock_hearing import MINUTE_WORDS, ClockListener, minute_slots
from episodic.retrieval.detailed import Unit
from episodic.retrieval.option_audio import words_of
from tests.misheard_audio import analysis_of, fresh_components, hear_again, misheard_recording

SENTENCE = "Henrik is meeting the pastry chef at quarter past one."
GARBLED = "Henrik is meeting the pastry chef at Florida past one."
QUESTION = "When does Henrik meet the pastry chef?"


@pytest.mark.parametrize(
    ("heard", "slots"),
    [
        (GARBLED, ["Florida"]),  # "at Florida": "at" is a function word
        ("The ferry leaves at closure two past one.", []),  # "two" is minutes heard
        ("The ferry leaves at lovely wee to six.", ["wee", "lovely wee"]),
        ("The ferry leaves at ten past one.", []),  # the minutes were heard
        ("The ferry leaves at half past one.", []),
        ("I will talk to one of them.", []),  # "talk" is no minute, but "to one of them" …
        ("The ferry leaves at Florida past noon.", []),  # no hour after the link
        ("Henrik past one.", []),  # the question's own word
    ],
)
def test_the_minutes_slot_is_just_before_past_or_to_an_hour(heard, slots):
    words = words_of(heard)
    found = [" ".join(words[i : i + n]) for i, n in minute_slots(words, QUESTION)]
    assert found == slots, found


def test_a_time_told_with_minute_words_is_a_clock_time_read():
    unit = Unit("bakery", "bakery@0", 1.0, 4.0, "speech", SENTENCE)
    analysis = analysis_of(QUESTION)
    assert clean_value(unit, analysis) and span_in(unit, analysis).text.lower().startswith("quarter past")
    assert not clean_value(Unit("bakery", "bakery@0", 1.0, 4.0, "speech", GARBLED), analysis)


# -- end to end ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def misheard(tmp_path_factory):
    with fresh_components(tmp_path_factory, "clock-hearing") as made:
        yield made


@pytest.mark.slow
def test_the_minutes_said_are_heard_where_the_words_lost_them(misheard):
    components, root = misheard
    memory = misheard_recording(components, root, "bakery", SENTENCE, GARBLED, tint=(150, 120, 90))
    out, recall, _ = hear_again(ClockListener, components, memory, GARBLED, QUESTION)
    assert out.taken and out.reason == "heard quarter", out
    assert recall.units[0].text == SENTENCE.rstrip(".") + "." and recall.units[0].hinted
    assert components.store.get_memory(memory.id).transcript_text == GARBLED  # the store is not touched


@pytest.mark.slow
def test_minutes_heard_already_leave_the_audio_unread(misheard):
    components, root = misheard
    said = "Henrik is meeting the pastry chef at ten past one."
    memory = misheard_recording(components, root, "bakery-2", said, said, tint=(150, 120, 90))
    out, recall, unit = hear_again(ClockListener, components, memory, said, QUESTION)
    assert not out.taken and out.reason == "no slot", out
    assert recall.units == [unit]
    assert set(MINUTE_WORDS) >= {"quarter", "half", "twenty-five"}
