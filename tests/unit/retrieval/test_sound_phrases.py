"""Phrases of a question found in a transcript that misheard them (retrieval/text_match.py
``sound_phrase_hits``) and their use as tolerant matches (retrieval/detailed.py ``fuzzy_found``)."""

from __future__ import annotations

import pytest

from episodic.retrieval.detailed import fuzzy_found
from episodic.retrieval.query_analysis import STOPWORDS, term_set
from episodic.retrieval.text_match import sound_key, sound_phrase_hits


@pytest.mark.parametrize(
    ("question", "heard", "found"),
    [
        ("What is the price of the seed packet today?", "The seat pocket costs 32 pounds to day.", {"seed", "packet"}),
        ("When is Ruth meeting the caretaker?", "Root is leaving the care maker at eleven.", {"caretaker"}),
        ("Which colour is the watering can?", "that wandering can blew", {"watering"}),
        ("In what room is the ferry crossing?", "The fairy crossing is in room 316.", {"ferry", "crossing"}),
        # two words heard as one, with "-wn" heard as "-ng": Metaphone alone keys them LNMWR / LNKMR
        ("How many times was the lawn mower mentioned?", "There is no longmore again.", {"lawn", "mower"}),
    ],
)
def test_a_misheard_phrase_or_long_word_is_found(question: str, heard: str, found: set[str]) -> None:
    assert sound_phrase_hits(question, heard, STOPWORDS) == found


@pytest.mark.parametrize(
    ("question", "heard"),
    [
        ("Where is the printer?", "Look, the winter in air."),  # two sounds differ
        ("When does the ferry horn sound?", "Look, the ferry port is here."),  # horn ≠ port
        ("What did the baker bake?", "He rode a bike."),  # short words never match alone
        ("What is the price of the seed packet?", "The seed packet costs 32 pounds."),  # exact: not "misheard"
        ("Where is the station?", "The nation was proud."),  # another first sound
        ("Where is the singer?", "Look, the sinner is here."),  # "ng" before a vowel is no "n"
        ("", "anything at all"),
        ("What is the price of the seed packet?", ""),
    ],
)
def test_different_words_and_exact_ones_are_not_misheard_phrases(question: str, heard: str) -> None:
    assert sound_phrase_hits(question, heard, STOPWORDS) == set()


def test_function_words_split_phrases_and_never_match() -> None:
    # "of the" between "price" and "seed" keeps them apart: no "priceseed" phrase
    hits = sound_phrase_hits("the price of the seed packet", "the prize of the seat pocket", STOPWORDS)
    assert "the" not in hits and "of" not in hits
    assert {"seed", "packet"} <= hits


def test_fuzzy_found_gives_the_missing_stems_a_misheard_phrase_holds() -> None:
    question = "What is the price of the seed packet today?"
    text = "The seat pocket costs 32 pounds to day."
    terms = ["price", "seed", "packet", "today"]
    found = fuzzy_found(question, terms, text, term_set(text))
    assert found == {"seed", "packet"}
    # terms already present are never reported again
    assert fuzzy_found(question, ["seed", "packet"], "seed packet", term_set("seed packet")) == set()


@pytest.mark.parametrize(
    ("old", "new", "asked", "lost"),
    [
        # the sounds survive, the name does not: the likelier common words must not win
        ("This is Milo, our cat.", "This is my low-hour cat.", ["cat"], ["Milo"]),
        ("This is Milo, our cat.", "This is Mylo, our cat.", [], []),  # a spelling of the name
        ("Welcome to the North Wind Hotel.", "Welcome to the Northwind hotel.", [], []),  # joined
        ("Welcome to the north wind hotel.", "Welcome to the North Wind Hotel.", [], []),  # gained
        ("They go left the state next to the Greenhouse.", "Diego left the spade next to the green house.",
         ["diego", "leave", "spade"], []),  # a compound written as its parts
        ("This is Milo, our cat.", "This is my low, our cat.", ["Milo"], []),  # the question's own word
        # a sentence's first word is a name only when it is a known given name and no everyday word
        ("Will is here. Root is there.", "Root is there.", [], []),
        ("Ruth is here. Root is there.", "Root is there.", [], ["Ruth"]),
        ("Amara put the laptop by the front desk.", "My umbrella put my laptop by my front desk.", ["umbrella"],
         ["Amara"]),  # not excused by the asked word in its place: the recogniser knew the name
        ("Ravi is repairing the even pocket.", "Ramen is repairing the feeding bucket.", ["feeding", "bucket"],
         ["Ravi"]),
        # …and not lost to another given name, or to a name the question asks about
        ("Luke is moved the apron over to the oven.", "Lucas moved the apron over to the oven.", ["apron"], []),
        ("Chad is leaving the maker at 305.", "Chen is meeting the baker at 305.", ["Chen's", "baker"], []),
        # heard again as the name the question asks about: replaced, not lost
        ("The Eagle ordered 19X.", "Diego ordered 19 eggs.", ["Diego", "eggs"], []),
        ("The Eagle met Ruth.", "Diego met Ruth.", ["diego"], []),
        ("The Eagle met Oscar.", "Diego met the old man.", ["diego"], ["Oscar"]),  # one for one
        ("The Eagle ordered 19X.", "The egg ordered 19 eggs.", ["Diego", "eggs"], ["Eagle"]),  # no name added
        # a capitalised guess at an unknown word, heard again in its place as the word asked about
        ("Sadly, Luke had come to see the Malinter at 8.50.", "Sadly, Lucas has to see the volunteer at 850.",
         ["Lucas", "volunteer"], []),
        ("Ask Hanna if you need the apon.", "Ask her if you need the apron.", ["apron"], ["Hanna"]),  # elsewhere
        ("Ask Hanna if you need the apron.", "Ask apron if you need the apron.", ["apron"], ["Hanna"]),  # not new
    ],
)
def test_names_a_re_hearing_would_lose(old: str, new: str, asked: list[str], lost: list[str]) -> None:
    from episodic.retrieval.listen_targets import names_lost

    assert names_lost(old, new, asked) == lost


@pytest.mark.parametrize(
    ("word", "key"),
    [("longmore", "LNMR"), ("rubbing", "RBN"), ("lawnmower", "LNMWR"), ("singer", "SNJR"), ("Long", "LN")],
)
def test_sound_keys_fold_ng_before_a_consonant_or_at_the_end_to_n(word: str, key: str) -> None:
    assert sound_key(word) == key
