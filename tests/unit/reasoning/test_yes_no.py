"""Whether-questions: the best moment says yes only when it surely quotes every thing asked."""

from __future__ import annotations

import pytest

from episodic.core.query import Moment
from episodic.reasoning.answer import Draft
from episodic.reasoning.yes_no import YES_CONFIDENCE, YES_LOOKED, beside_the_question, yes_answer
from episodic.retrieval.detailed import Unit
from episodic.retrieval.moments import surely_holds
from episodic.retrieval.query_analysis import asks_yes_or_no, content_terms


def _moment(why: str, score: float = 0.6) -> Moment:
    return Moment(stream_id="cam", t_start=84.12, t_end=93.36, score=score, why=why, segment_id="cam@84")


@pytest.mark.parametrize("question, whether", [
    ("Was there a picture of a cat on screen?", True), ("Did anyone mention the weather?", True),
    ("Could you hear an engine?", True), ("  is the shop open on Sundays?", True),
    ("Wasn't there music?", True), ("What was shown?", False), ("When was there music?", False),
    ("Which camera showed the cat?", False), ("Island trip: what did Tom buy?", False),
    ("In the cam recording, was there a picture of a guitar?", True),
    ("In the garden-cam recording, what was shown?", False),
])
def test_whether_questions_open_with_an_auxiliary(question: str, whether: bool) -> None:
    assert asks_yes_or_no(question) is whether


@pytest.mark.parametrize("why, terms, sure", [
    ('visual: "a cat; colours: green, orange" (matched: cat)', ["cat"], True),
    ('speech: "So they put the reading lamp by the map shelf." (matched: reading, lamp)', ["read", "lamp"], True),
    ('heard: "music playing"', ["music"], True),
    ('speech: "The reading room is closed."', ["read", "lamp"], False),  # one of two things
    ("key frames guessed: a cat, Egyptian cat (not a sure sighting)", ["cat"], False),
    ("a picture unlike anything else in cam (guessed: a keyboard); no key frame was recognised as guitar, "
     "so not a sure sighting", ["guitar"], False),
    ('speech, heard again with the query as a hint; the audio check did not confirm it: "the weather" '
     "(matched: weather)", ["weather"], False),
    ('heard: "music playing"', [], False),
])
def test_a_moment_surely_holds_every_thing_asked_or_nothing(why: str, terms: list[str], sure: bool) -> None:
    assert surely_holds(_moment(why), terms) is sure


def test_yes_cites_the_first_moment_holding_every_thing_asked_without_its_match_list() -> None:
    best = _moment('visual: "a cat; colours: green, orange" (matched: cat)')
    draft = yes_answer(content_terms("Was there a picture of a cat on screen?"), [best])
    assert draft is not None and draft.confidence == YES_CONFIDENCE
    assert draft.answer == 'Yes: visual: "a cat; colours: green, orange" (cam, 84.1–93.4 s)'
    unit = draft.support[0]
    assert (unit.modality, unit.memory_id, unit.text) == ("visual", "cam@84", "a cat; colours: green, orange")
    heard = yes_answer(["music"], [_moment('heard: "music playing"')])
    assert heard is not None and heard.support[0].modality == "sound"
    # the first moment holding every word answers, even below one that holds only some
    later = yes_answer(content_terms("Did anyone mention the delivery van?"), [_moment('speech: "Look, the delivery man appears." (matched: delivery)'),
                                             _moment('speech: "Look, the delivery van is here." (matched: delivery, van)')])
    assert later is not None and "delivery van" in later.answer
    assert yes_answer(["cat"], [_moment('speech: "The dog barked."')] * YES_LOOKED + [best]) is None
    assert yes_answer(["cat"], []) is None


def test_an_ordinary_answer_to_a_whether_question_must_rest_on_what_was_asked() -> None:
    def draft(text: str) -> Draft:
        return Draft("x", 0.6, support=[Unit("cam", "cam@0", 0.0, 5.0, "sound", text)], source="extract")

    assert beside_the_question(["siren"], draft("music playing"))
    assert beside_the_question(content_terms("Was a sign saying PLATFORM 9 shown?"), draft("PLATFORM 18"))
    assert not beside_the_question(content_terms("Was a sign saying OPEN UNTIL 10 PM shown?"), draft("OPEN UNTIL 1O PM"))
    assert not beside_the_question([], draft("music playing"))


def test_words_asked_apart_may_be_heard_as_one_and_ordinary_evidence_holding_them_is_a_yes() -> None:
    from episodic.reasoning.yes_no import yes_from_evidence
    from episodic.retrieval.moments import holds_all

    terms = content_terms("Did anyone mention the lawn mower?")
    assert holds_all("Look, the lawnmower is here.", terms)
    assert not holds_all("Look, the lawn is here.", terms) and not holds_all("The mower lawn.", ["cat"])

    def draft(modality: str, text: str) -> Draft:
        return Draft("Look", 0.7, support=[Unit("cam", "cam@100", 103.2, 110.2, modality, text)], source="extract")

    yes = yes_from_evidence(terms, draft("speech", "Look, the lawnmower is here."))
    assert yes is not None and yes.answer == 'Yes: speech: "Look, the lawnmower is here." (cam, 103.2–110.2 s)'
    assert yes_from_evidence(terms, draft("summary", "Someone says the lawn mower is here.")) is None
    assert yes_from_evidence(terms, draft("speech", "The lawn is wet.")) is None
    assert yes_from_evidence(terms, Draft("", 0.0)) is None



def test_a_thing_said_not_to_be_there_is_no_yes_unless_the_question_asks_what_was_said() -> None:
    from episodic.reasoning.yes_no import asks_about_words, negates

    terms = content_terms("Was there a luggage trolley?")
    assert negates("There is no luggage trolley again.", terms)
    assert not negates("Look, the luggage trolley is here.", terms)
    assert negates("I can't see the luggage trolley.", terms)
    negated = _moment('speech: "There is no luggage trolley again." (matched: luggage, trolley)')
    assert yes_answer(terms, [negated]) is None
    assert asks_about_words("Did anyone mention the luggage trolley?")
    assert not asks_about_words("Was there a luggage trolley?")
    mentioned = yes_answer(content_terms("Did anyone mention the luggage trolley?"), [negated], about_words=True)
    assert mentioned is not None and "no luggage trolley" in mentioned.answer
