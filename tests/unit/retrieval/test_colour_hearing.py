"""A colour misheard, heard from the audio (retrieval/colour_hearing.py).

Unit part: each option put into the likeliest slot keeps its sentence alone (the answer quotes
it), scored by any scorer. End to end (slow): a generated recording says a colour; its stored
words are overwritten with what a weak hearing made of it ("… to be right." for "… to be
white."); the basic colours scored against the audio must bring back the colour said, in the
sentence's place among the recalled units and marked as hinted; a sentence that said no colour
("… to be repaired.") must give none; and nothing changes when the deadline is all but spent,
when the audio is gone or when option scoring is off.
"""

from __future__ import annotations

import pytest

from episodic.config import load_settings
from episodic.retrieval.colour_hearing import (
    BASIC_COLOURS,
    SLOTS_TRIED,
    ColourListener,
    colour_slots,
)
from episodic.retrieval.detailed import Unit
from episodic.retrieval.option_audio import hear_options, words_of
from tests.misheard_audio import hear_again, misheard_recording

SENTENCE = "Omar wants the anchor to be white."
GARBLED = "Omar wants the anchor to be right."
QUESTION = "Which colour should Omar's anchor be?"


def test_each_option_keeps_the_sentence_it_was_heard_in_without_the_context():
    said = "Omar wants the anchor to be white"

    def score(_encoded, texts, _language):  # a log-likelihood: each word said and in the text counts 5
        return [5.0 * len(set(t.split()) & set(said.split())) - len(t.split()) / 100 for t in texts]

    out = hear_options(score, None, GARBLED, QUESTION, list(BASIC_COLOURS), before="Look here.", after="Thanks.")
    assert out.heard == BASIC_COLOURS.index("white"), out
    assert out.filled[out.heard] == "Omar wants the anchor to be white"
    assert out.sentences[out.heard] == "Look here. Omar wants the anchor to be white Thanks."
    assert all(f.startswith("Omar wants the anchor to be ") for f in out.filled)


@pytest.mark.parametrize(
    ("question", "heard", "first"),
    [
        (QUESTION, GARBLED, "right."),  # spelling likeness put it fourth, behind "the"
        ("Which colour should Felix's backpack be?", "Helix wants the backpack to be popular.", "popular."),
        ("What colour does Chen want the apron to be?", "Chin won't sleep when to make pink.", "pink."),
    ],
)
def test_the_words_that_sound_like_a_colour_are_its_slots(question, heard, first):
    words = words_of(heard)
    slots = [" ".join(words[i : i + n]) for i, n in colour_slots(words, question, BASIC_COLOURS)]
    assert slots[0] == first, slots
    assert 1 <= len(slots) <= SLOTS_TRIED
    assert not {"the", "to", "be", "Omar", "anchor", "backpack", "apron"} & set(slots)  # function or question words


# -- end to end ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def misheard(tmp_path_factory):
    from episodic.components import Components

    root = tmp_path_factory.mktemp("colour-hearing")
    components = Components(load_settings(data_dir=root / "data"))
    yield components, misheard_recording(components, root, "harbour", SENTENCE, GARBLED)
    components.close()


def _hear(components, memory, left_s=None, garbled=GARBLED, **settings):
    other = Unit(memory.stream_id, "elsewhere@0", 20.0, 22.0, "speech", "Something else entirely.")
    return hear_again(ColourListener, components, memory, garbled, QUESTION,
                      components.settings.replace(**settings), left_s, before=[other])


@pytest.mark.slow
def test_the_colour_said_is_heard_where_the_words_hold_none(misheard):
    components, memory = misheard
    out, recall, unit = _hear(components, memory)
    assert out.taken and out.reason == "heard white", out
    assert out.text == "Omar wants the anchor to be white"
    assert [u.text for u in recall.units] == ["Something else entirely.", out.text]  # in the sentence's place
    assert recall.units[1].hinted and recall.units[1].memory_id == memory.id
    # the stored words are not touched: the hearing serves this question only
    assert components.store.get_memory(memory.id).transcript_text == GARBLED


@pytest.mark.slow
def test_no_colour_is_heard_where_none_was_said(misheard, tmp_path):
    # "repaired" misheard as "compared": red, green and blue fit it about equally badly
    components, _ = misheard
    garbled = "Omar wants the anchor to be compared."
    memory = misheard_recording(components, tmp_path, "quay", "Omar wants the anchor to be repaired.", garbled)
    out, recall, unit = _hear(components, memory, garbled=garbled)
    assert not out.taken and out.reason.startswith("no colour heard clearly"), out
    assert recall.units[1] is unit


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "left_s", "reason"),
    [
        (None, 0.5, "no time left"),  # the deadline is all but spent
        ("no snippets", None, "no stored audio"),
        ("off", None, "off"),
    ],
)
def test_what_cannot_be_heard_changes_nothing(misheard, change, left_s, reason):
    from dataclasses import replace

    components, memory = misheard
    if change == "no snippets":
        memory = replace(memory, snippets=[])
    settings = {"relisten_score_options": False} if change == "off" else {}
    out, recall, unit = _hear(components, memory, left_s, **settings)
    assert out.reason == reason and not out.taken, out
    assert recall.units[1] is unit
