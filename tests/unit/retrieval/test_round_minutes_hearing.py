"""The "five" a time written with round minutes lost, heard from the audio
(retrieval/round_minutes_hearing.py).

Unit part: where the time is in the sentence (with the word after it that may be the five
misheard), what five minutes later is, and that "4.30pm" counts as round minutes in digits.
End to end (slow): a generated recording says "eleven thirty-five"; its stored words are
overwritten with "11.30 a .m." (as Whisper base wrote a dev sentence); the two times scored
against the audio must bring back 11.35; a recording that said "eleven thirty" keeps it.
"""

from __future__ import annotations

import pytest

from episodic.reasoning.short_answer import round_minutes_heard
from episodic.retrieval.detailed import Unit
from episodic.retrieval.option_audio import words_of
from episodic.retrieval.round_minutes_hearing import (
    RoundMinutesListener,
    as_heard,
    five_later,
    fixed_slot,
    round_time_window,
)
from tests.misheard_audio import analysis_of, fresh_components, hear_again, misheard_recording

QUESTION = "At what time is Daniel meeting the beekeeper?"
SAID = "Daniel is meeting the beekeeper at eleven thirty-five."
HEARD = "Daniel is meeting the beekeeper at 11.30 a .m."


@pytest.mark.parametrize(
    ("heard", "time", "window", "later"),
    [
        (HEARD, (11, 30), "11.30 a .m.", "11.35"),
        ("The dress rehearsal starts at 4.30pm.", (4, 30), "4.30pm.", "4.35"),
        ("Please remember that the poetry reading begin at 9.30 times.", (9, 30), "9.30 times.", "9.35"),
        ("The sailing race starts at 7:20, there.", (7, 20), "7:20", "7:25"),
        ("The sailing race starts at 7.30.", (8, 30), None, None),  # another time
        ("The room is 730 on the left.", (7, 30), None, None),  # no time written
    ],
)
def test_the_time_and_what_may_be_its_five_are_the_slot(heard, time, window, later):
    words = words_of(heard)
    found = round_time_window(words, *time)
    if window is None:
        assert found is None
        return
    assert found is not None and " ".join(words[found[0]:found[0] + found[1]]) == window
    assert five_later(words, found) == later
    assert as_heard(words, found) == window.rstrip(".")
    assert fixed_slot(found)(words, QUESTION, ()) == [found]


def test_a_round_time_with_am_or_pm_written_after_it_is_round_minutes():
    """"4.30pm" is written with round minutes in digits like "4.30"; "half past four" is not."""
    analysis = analysis_of("When does the dress rehearsal start?")

    def said(text: str):
        return round_minutes_heard(Unit("theatre", "theatre@0", 1.0, 4.0, "speech", text), analysis)

    assert said("The dress rehearsal starts at 4.30pm.") == (4, 30)
    assert said("The dress rehearsal starts at 4.30.") == (4, 30)
    assert said("The dress rehearsal starts at half past four.") is None
    assert said("The dress rehearsal starts at 4.35pm.") is None


# -- end to end ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def misheard(tmp_path_factory):
    with fresh_components(tmp_path_factory, "round-minutes") as made:
        yield made


def _given(heard: str, time: tuple[int, int]) -> dict:
    words = words_of(heard)
    window = round_time_window(words, *time)
    return {"words": [five_later(words, window)], "slots": fixed_slot(window), "as_heard": as_heard(words, window)}


@pytest.mark.slow
def test_the_five_said_is_heard_where_the_digits_lost_it(misheard):
    components, root = misheard
    memory = misheard_recording(components, root, "garden", SAID, HEARD, tint=(120, 150, 90))
    out, recall, _ = hear_again(RoundMinutesListener, components, memory, HEARD, QUESTION, **_given(HEARD, (11, 30)))
    assert out.taken and out.reason == "heard 11.35", out
    assert "11.35" in recall.units[0].text and recall.units[0].hinted
    assert components.store.get_memory(memory.id).transcript_text == HEARD  # the store is not touched


@pytest.mark.slow
def test_round_minutes_said_stay_as_heard(misheard):
    components, root = misheard
    said = "Daniel is meeting the beekeeper at eleven thirty."
    heard = "Daniel is meeting the beekeeper at 11.30."
    memory = misheard_recording(components, root, "garden-2", said, heard, tint=(120, 150, 90))
    out, recall, unit = hear_again(RoundMinutesListener, components, memory, heard, QUESTION, **_given(heard, (11, 30)))
    assert not out.taken, out
    assert recall.units == [unit]
