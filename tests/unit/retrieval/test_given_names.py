"""Given names from around the world tell a person from a misheard word; the English words some
name lists also hold do not."""

from __future__ import annotations

import pytest

from episodic.reasoning.stream_gist import people_answer
from episodic.retrieval.detailed import Unit
from episodic.retrieval.given_names import is_given_name, name_share
from episodic.retrieval.text_match import may_be_name_at_start


@pytest.mark.parametrize("name", ["Kofi", "Tariq", "Yusuf", "Priya", "Noor", "Kwame", "Wanjiru", "Siddharth"])
def test_names_the_us_census_lists_lack_are_known(name: str) -> None:
    assert is_given_name(name)
    assert name_share(name) == 0.0  # no share from those lists: they never change a spelling


@pytest.mark.parametrize("word", ["Floor", "Price", "River", "Lemon", "Doctor", "Can", "Table"])
def test_english_words_in_the_world_lists_are_no_names(word: str) -> None:
    """Faker's lists hold "Floor", "Price", "River", "Lemon": they stay words."""
    assert not is_given_name(word)


@pytest.mark.parametrize("word", ["Floor", "Price", "Doctor", "Can"])
def test_an_everyday_word_in_the_world_lists_opening_a_sentence_is_no_name(word: str) -> None:
    assert not may_be_name_at_start(word)


@pytest.mark.parametrize("name", ["Grace", "Mark", "Hannah"])
def test_the_census_names_that_are_also_words_stay_names(name: str) -> None:
    assert is_given_name(name)


def test_the_person_named_is_the_given_name_not_the_misheard_word_beside_it() -> None:
    """"Kofi bought two melons this morning." heard as "Kofi Bhattu melons this morning.": both
    capitalised words are rare in English, but only one is a given name."""
    unit = Unit("zoo-cam", "zoo-cam@100", 103.1, 105.4, "speech", "Kofi Bhattu melons this morning.")
    draft = people_answer("zoo-cam", [unit], "Name one person who was mentioned in the zoo-cam recording.")
    assert draft is not None and draft.answer.startswith("Kofi "), draft
