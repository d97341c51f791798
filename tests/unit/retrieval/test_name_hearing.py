"""A name heard as no name, heard again among the names its stream says elsewhere
(retrieval/name_hearing.py).

Unit part: which words are no known name, which names a stream says (never the question's own
people, only those a recogniser may have written as the word heard), where the slot is. End to
end (slow): a generated recording says "Ask Priya if you need the backpack."; its stored words
are overwritten with "Ask Priyot …"; scored against the audio with the names said elsewhere,
"Priya" must be heard, in the sentence's place and hinted, the store untouched; a recording
that really says "Priyot" keeps it.
"""

from __future__ import annotations

import pytest

from episodic.config import load_settings
from episodic.retrieval.detailed import Unit
from episodic.retrieval.name_hearing import (
    NameListener,
    heard_as,
    names_said,
    no_known_name,
    slots_of,
)
from episodic.retrieval.option_audio import words_of
from tests.misheard_audio import hear_again, misheard_recording

QUESTION = "Whom should you ask about the backpack?"


def _said(*texts: str) -> list[Unit]:
    return [Unit("station", f"station@{i}", float(i), i + 2.0, "speech", t) for i, t in enumerate(texts)]


def test_a_word_that_is_no_given_name_is_no_known_name():
    assert no_known_name("Priyot") and no_known_name("Ramen")
    assert not no_known_name("Priya") and not no_known_name("Sophie") and not no_known_name("Mary Ann")
    assert not no_known_name("")


def test_the_names_a_stream_says_that_the_word_heard_may_be():
    said = _said("The ticket inspector and Priya are getting together at ten to one.",
                 "Omar has six tickets.", "Priya left the umbrella here.", "Look, the platform.",
                 "Ask Priyot if you need the backpack.")
    assert names_said(said) == ["Priya", "Omar"]  # most said first; "Look", "Priyot" are no names
    assert names_said(said, like="Priyot") == ["Priya"]  # Omar sounds nothing like it
    assert names_said(said, not_these=["Priya"], like="Priyot") == []  # the question's own person
    assert heard_as("Henrik", "Henry") and heard_as("Priya", "Priyot") and not heard_as("Ravi", "Ramen")


def test_the_slot_is_where_the_word_heard_stands():
    words = words_of("Ask Priyot if you need the backpack.")
    assert slots_of("Priyot")(words, QUESTION, ()) == [(1, 1)]
    assert slots_of("Nobody")(words, QUESTION, ()) == []


# -- end to end ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def components(tmp_path_factory):
    from episodic.components import Components

    c = Components(load_settings(data_dir=tmp_path_factory.mktemp("name-hearing") / "data"))
    yield c
    c.close()


def _hear(components, memory, heard: str, name: str):
    return hear_again(NameListener, components, memory, heard, QUESTION,
                      words=["Priya", "Priyanka"], slots=slots_of(name), as_heard=name)


@pytest.mark.slow
def test_the_name_said_is_heard_among_those_said_elsewhere(components, tmp_path):
    garbled = "Ask Priyot if you need the backpack."
    memory = misheard_recording(components, tmp_path, "station", "Ask Priya if you need the backpack.", garbled,
                                tint=(120, 150, 90))
    out, recall, _ = _hear(components, memory, garbled, "Priyot")
    assert out.taken and out.reason == "heard Priya", out
    assert recall.units[0].text == "Ask Priya if you need the backpack." and recall.units[0].hinted
    assert components.store.get_memory(memory.id).transcript_text == garbled  # the store is not touched


@pytest.mark.slow
def test_a_word_the_audio_carries_as_heard_stays(components, tmp_path):
    said = "Ask Pirelli if you need the backpack."
    memory = misheard_recording(components, tmp_path, "station-2", said, said, tint=(120, 150, 90))
    out, recall, unit = _hear(components, memory, said, "Pirelli")
    assert not out.taken, out
    assert recall.units == [unit]
