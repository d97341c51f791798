"""Whether a counted thing was said in a sentence heard otherwise (retrieval/mention_audio.py):
the thing's words in the question, the windows of a sentence that sound like it, and the rule
on the scores (with a stand-in scorer; Whisper itself in tests/unit/retrieval/test_relisten.py).
"""

from __future__ import annotations

import pytest

from episodic.retrieval.mention_audio import (
    DECOY_LEAD,
    MIN_GAIN,
    MentionCheck,
    beats_decoys,
    carried_option,
    check_mention,
    decoys_for,
    talked_about,
    telling_phrase,
    thing_phrase,
    thing_windows,
)
from episodic.retrieval.option_audio import words_of


@pytest.mark.parametrize("question, wanted, phrase", [
    ("How many times was the book trolley mentioned in library-cam?", ["book", "trolley"], "book trolley"),
    ("How many times was the robin mentioned in garden-cam?", ["robin"], "robin"),
    ("How often did someone mention the seed packets?", ["seed", "packet"], "seed packets"),
    ("How many times was it mentioned?", [], ""),
])
def test_the_thing_is_named_as_the_question_names_it(question, wanted, phrase):
    assert thing_phrase(question, wanted) == phrase


def _windows(text: str, thing: str) -> list[str]:
    words = words_of(text)
    return [" ".join(words[i : i + n]) for i, n in thing_windows(words, thing)]


def test_the_windows_tried_are_those_that_sound_like_the_thing():
    assert "lobby" in _windows("There is the lobby again.", "robin")
    assert _windows("I can't hear the book trolling outside.", "book trolley")[0] == "book trolling"
    # a window that already says the thing is no misheard mention of it
    assert "book trolley" not in _windows("Look, the book trolley is here.", "book trolley")
    assert _windows("", "robin") == [] and _windows("There is the lobby again.", "") == []
    # a fragment is no sentence to put the thing into; nor may it end a sentence a word early
    assert _windows("We should", "cleaning cart") == [] and _windows("The", "robin") == []
    assert "ladder again." not in _windows("There is the ladder again.", "robin")


def test_the_thing_never_takes_the_place_of_the_questions_other_words():
    """"Where was the umbrella left by Amara?": put in place of "Amara left", the umbrella made
    "umbrella the fishing net next to the lighthouse", which the audio carried at −5 and which
    answered "the lighthouse" for a question about something never said. The question's other
    words stay as heard; the thing's own words are no such word."""
    from episodic.retrieval.query_analysis import stem

    said = "Amara left the fishing net next to the lighthouse."
    windows = [" ".join(words_of(said)[i:i + n]) for i, n in thing_windows(words_of(said), "umbrella", limit=50)]
    assert "Amara left" in windows and "left" in windows
    keep = {stem("amara"), stem("left"), stem("umbrella")}
    kept = [" ".join(words_of(said)[i:i + n]) for i, n in thing_windows(words_of(said), "umbrella", limit=50, keep=keep)]
    assert kept and not any("Amara" in w or "left" in w.split() for w in kept), kept
    assert "fishing net" in kept


def test_a_sentence_whose_audio_carries_the_thing_counts_and_one_that_does_not_stays_out():
    def score(_encoded, texts, _language):
        # the audio fits "robin" in place of "lobby" nearly as well as what was heard
        return [-20.0 if t == "There is the lobby again." else -21.5 if "the robin again" in t else -40.0
                for t in texts]

    check = check_mention(score, None, "There is the lobby again.", "robin")
    assert check is not None and check.heard and check.text == "There is the robin again."
    assert check.gain == pytest.approx(-1.5)

    def far(_encoded, texts, _language):  # every substitution costs much more than the bar
        return [-20.0 if t == "There is the lobby again." else -20.0 + MIN_GAIN - 1.0 for t in texts]

    check = check_mention(far, None, "There is the lobby again.", "robin")
    assert check is not None and not check.heard
    assert check_mention(score, None, "", "robin") is None
    assert check_mention(lambda *_: [None, None, None, None], None, "There is the lobby again.", "robin") is None


def test_the_neighbouring_speech_is_scored_with_the_sentence_and_a_comma_is_dropped_on_both_sides():
    seen: list[list[str]] = []

    def score(_encoded, texts, _language):
        seen.append(list(texts))
        return [-10.0] * len(texts)

    check_mention(score, None, "Look, the roman is here.", "robin", before="Good morning.", after="Bye.")
    heard, *alternatives = seen[0]
    assert heard == "Good morning. Look the roman is here. Bye."
    assert "Good morning. Look the robin is here. Bye." in alternatives
    assert MentionCheck(MIN_GAIN, "x").heard and not MentionCheck(MIN_GAIN - 0.01, "x").heard


@pytest.mark.parametrize("thing, phrase", [
    ("where Priya left the laptop", "laptop"), ("Amara and the seed packets", "seed packets"),
    ("the room for the harvest festival", "harvest festival"), ("the colour of Maria's reading lamp", "reading lamp"),
    ("Ruth's appointment with the archivist", "archivist"), ("the time of the", ""),
    # a modal verb that ends a noun phrase is a noun there; other stop words end nothing
    ("where Ruth left the watering can", "watering can"), ("who takes care of the watering can", "watering can"),
    ("who takes care of it", ""), ("what can", ""), ("the laptop that Priya put down", ""),
])
def test_an_order_question_s_thing_is_named_by_the_words_that_end_it(thing, phrase):
    assert telling_phrase(thing) == phrase


@pytest.mark.parametrize("question, phrase", [
    ("Which camera recorded the talk about the room for the poetry reading?", "poetry reading"),
    ("In which recording was Chen's appointment with the archivist mentioned?", "archivist"),
    ("Where was the price of the egg talked about?", "egg"),
    ("Which camera showed it?", ""),
])
def test_a_question_about_talk_is_named_by_the_words_before_its_cue(question, phrase):
    """What a which-stream question about talk asks after ends before its closing cue words."""
    assert telling_phrase(talked_about(question)) == phrase


@pytest.mark.parametrize(
    ("gains", "candidates", "carried"),
    [
        ({0: -24.5, 1: -8.0, 2: -26.2, 3: -32.1}, [1], 1),  # "stain" → "spade": far ahead
        ({0: -0.3, 1: -16.9}, [0, 1], 0),
        ({0: -6.1, 1: -34.0, 2: -15.3}, [1], None),  # "volunteer" leads but was said elsewhere
        ({0: -6.7, 1: -11.6}, [0], None),  # ahead by 4.9: not clearly
        ({0: -11.3, 1: -19.4}, [0, 1], None),  # far ahead, but costs the sentence too much
        ({0: -2.0}, [0], 0),  # no other option to compare
        ({}, [0], None),
    ],
)
def test_the_option_a_moment_s_audio_carries_is_the_clear_best_of_those_said_nowhere_else(gains, candidates, carried):
    """Figures from the dev sets' dark and picture moments (session 73): each option's thing
    put into the sentence heard then, its log-probability against the audio less the heard one's."""
    assert carried_option(gains, candidates) == carried


def test_a_counted_thing_is_compared_with_other_things_of_its_length_that_share_no_word_with_it():
    assert decoys_for("curtain") and all(" " not in d for d in decoys_for("curtain"))
    assert "paper" not in decoys_for("paper") and decoys_for("paper")
    two = decoys_for("stage bell")
    assert two and all(len(d.split()) == 2 for d in two)
    assert "paper bag" not in decoys_for("paper cup") and "coffee cup" not in decoys_for("paper cup")
    assert decoys_for("book trolley cart") and all(len(d.split()) == 2 for d in decoys_for("book trolley cart"))


def test_a_mention_counts_only_where_the_audio_carries_the_thing_clearly_better_than_other_things():
    """"Rooka painted the script green." took "curtain" for "green" at −7.0, and "basket" at
    −6.7: any noun fits there, so the curtain was not said. "There is the lobby again." took
    "robin" at +0.1 and the best other thing at −3.9: said there."""
    curtain = MentionCheck(-7.0, "Rooka painted the script curtain.")
    assert not beats_decoys(curtain, [MentionCheck(-6.7, "Rooka painted the script basket."), None])
    robin = MentionCheck(0.1, "There is the robin again.")
    assert beats_decoys(robin, [MentionCheck(-3.9, "There is the bottle again."), MentionCheck(-8.0, "…")])
    assert not beats_decoys(robin, [MentionCheck(0.1 - DECOY_LEAD + 0.01, "…")])
    assert beats_decoys(robin, []) and beats_decoys(robin, [None])  # nothing to compare: the bar alone
