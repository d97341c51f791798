"""Answering what is asked: number/time normalisation, tolerant name matching, question shapes,
short answers, and end to end over generated recordings (order, which-stream, misheard-name
and unanswerable questions)."""

from __future__ import annotations

import numpy as np
import pytest

from episodic.core.query import QueryType
from episodic.reasoning.answer import NOTHING_FOUND
from episodic.reasoning.confidence import calibrate
from episodic.reasoning.evidence import split_sentences as sentences
from episodic.reasoning.evidence_fit import homophone_stems
from episodic.reasoning.short_answer import best_span, only_a_bare_hour, span_in
from episodic.reasoning.structured_base import option_streams
from episodic.reasoning.time_answers import (
    LISTEN_PER_COUNT,
    LISTEN_PER_THING,
    MENTION_CHECKS_PER_COUNT,
)
from episodic.retrieval.detailed import Unit, fuzzy_found
from episodic.retrieval.query_analysis import (
    QueryAnalysis,
    QueryAnalyzer,
    content_terms,
    key_terms_of,
    object_terms_of,
    stem,
    term_set,
)
from episodic.retrieval.question_shape import question_shape
from episodic.retrieval.text_match import (
    canonical_tokens,
    homophones,
    sounds_alike,
    spoken_zero_keys,
    teen_ty_twin,
)
from tests.fakes import HashEmbedder, ListingStore


def key(text: str) -> list[str]:
    return [t for t in canonical_tokens(text) if t[0].isdigit() or t.endswith("th") or t in ("third",)]


# -- normalisation -------------------------------------------------------------------------
SAME = [
    ("8.15", "8:15"), ("8.15", "eight fifteen"), ("8:15", "quarter past eight"),
    ("Eight fifteen", "a quarter past eight"), ("8:15 pm", "eight fifteen"), ("20:15", "8:15"),
    ("180", "one hundred eighty"), ("180", "a hundred and eighty"), ("180", "one hundred and eighty"),
    ("half past two", "2:30"), ("two thirty", "2.30"), ("twenty past eleven", "11:20"),
    ("20 past 11", "eleven twenty"), ("ten to six", "5:50"), ("quarter to nine", "8:45"),
    ("eight o'clock", "8:00"), ("8 am", "8"), ("eight oh five", "8:05"),
    ("eleven forty-five", "11:45"), ("3rd", "third"), ("twenty-first", "21st"),
    ("1,000", "one thousand"), ("two thousand five hundred", "2500"),
    ("three and a half", "3.5"), ("forty-two", "42"), ("platform seven", "Platform 7"),
]
DIFFERENT = [
    ("8.15", "8.50"), ("eight fifteen", "eight fifty"), ("quarter past eight", "quarter to eight"),
    ("180", "one hundred eight"), ("half past two", "half past three"), ("3.5", "3.50"),
    ("twenty past eleven", "twenty to eleven"),
]


@pytest.mark.parametrize("a, b", SAME)
def test_number_forms_meet(a, b):
    assert canonical_tokens(a)[-1] == canonical_tokens(b)[-1], (canonical_tokens(a), canonical_tokens(b))


@pytest.mark.parametrize("a, b", DIFFERENT)
def test_different_numbers_stay_apart(a, b):
    assert canonical_tokens(a) != canonical_tokens(b)


def test_normalisation_inside_sentences_and_terms():
    assert canonical_tokens("The train leaves at 20 past 11.") == ["the", "train", "leaves", "at", "11:20"]
    assert canonical_tokens("Tom put three green apples") == ["tom", "put", "3", "green", "apples"]
    assert "8:15" in term_set("Breakfast is served at 8.15") & set(content_terms("Eight fifteen"))
    # ordinary words are untouched; "first" stays a word (position questions look for it)
    assert canonical_tokens("the first one in half an hour") == ["the", "first", "1", "in", "half", "an", "hour"]


# -- tolerant names ------------------------------------------------------------------------
@pytest.mark.parametrize("a, b", [("Milo", "Mylo"), ("Stephen", "Steven"), ("Jonathan", "Johnathan"),
                                  ("Priya", "Pria"), ("Smith", "Smyth")])
def test_sound_alike_names(a, b):
    assert sounds_alike(a, b)


@pytest.mark.parametrize("a, b", [("Milo", "Oscar"), ("Oxford", "Oxfam"), ("cat", "cap"), ("Tom", "Tim")])
def test_different_names(a, b):
    assert not sounds_alike(a, b)


def test_names_loosely_alike_only_keep_a_misheard_name_from_counting_as_another():
    from episodic.retrieval.text_match import loosely_alike

    for a, b in [("Felix", "Philip"), ("Felix", "Philips"), ("Maria", "Mark"), ("Grace", "Grace")]:
        assert loosely_alike(a, b) and loosely_alike(b, a), (a, b)
    for a, b in [("Hannah", "Daniel"), ("Oxford", "London"), ("Priya", "Peter"), ("Tom", "Diego"), ("Al", "Ali")]:
        assert not loosely_alike(a, b), (a, b)


def test_a_name_heard_with_another_first_sound():
    from episodic.retrieval.text_match import onset_misheard

    for a, b in [("Ines", "Denise"), ("Fatima", "Putima"), ("Greta", "Brita")]:
        assert onset_misheard(a, b) and onset_misheard(b, a), (a, b)
    for a, b in [("Zara", "Mara"), ("Tom", "Tim"), ("Hannah", "Anna"), ("Felix", "Philip"), ("Daniel", "Hannah"),
                 ("Ines's", "Denise")]:
        assert not onset_misheard(a, b), (a, b)


@pytest.mark.parametrize("a, b", [("Henrik", "Henry"), ("Marcus", "Mark")])
def test_a_given_name_heard_cut_short_is_that_name(a, b):
    """"When does Henrik meet the pastry chef?" recalls "Henry is leaving the pastry chef at …":
    a name written as another known name one sound shorter is found where the question's is."""
    from episodic.retrieval.text_match import clipped_name, fuzzy_hits

    assert clipped_name(a, b) and clipped_name(b, a)
    assert not sounds_alike(a, b)  # what matched names before did not see it
    assert a.lower() in fuzzy_hits(f"When does {a} meet the chef?", f"{b} is leaving the chef.")


@pytest.mark.parametrize("a, b", [("Dan", "Daniel"), ("Chris", "Christopher"), ("Marta", "Mark"),
                                  ("Henrik", "Hendrik"), ("Samuel", "Sam"), ("Ravi", "Ramen"), ("Print", "Printer")])
def test_names_more_than_a_sound_apart_or_too_short_are_not_clipped(a, b):
    from episodic.retrieval.text_match import clipped_name

    assert not clipped_name(a, b) and not clipped_name(b, a)


def test_sound_nearness_ranks_a_sentence_that_may_hold_a_word_misheard():
    """A sentence with "minter" comes nearer to "printer" than one with nothing like it; a
    pair of words can carry one word ("mark part" for "backpack"); nothing for nothing."""
    from episodic.retrieval.text_match import sound_nearness

    assert sound_nearness(["printer"], "Look, that minter in here.") > sound_nearness(
        ["printer"], "Everyone seems to be in a good mood.")
    assert sound_nearness(["backpack"], "Can it repairing the mark part?") > sound_nearness(
        ["backpack"], "Tom painted the umbrella purple.")
    assert sound_nearness(["printer"], "Look, the printer is here.") == 1.0
    assert sound_nearness([], "anything") == 0.0 and sound_nearness(["printer"], "") == 0.0


@pytest.mark.parametrize("a, b", [("blue", "blew"), ("sale", "sail"), ("pair", "pear"), ("meet", "meat"),
                                  ("grey", "gray"), ("four", "for")])
def test_homophones(a, b):
    assert homophones(a, b) and homophones(b, a)


@pytest.mark.parametrize("a, b", [("blue", "blue"), ("blue", "blow"), ("to", "two"), ("purple", "people"),
                                  ("knight", "night"), ("blue", "glue")])
def test_not_homophones(a, b):
    assert not homophones(a, b)


def test_numbers_as_a_recogniser_writes_them_meet_the_numbers_said():
    """Whisper writes "fifty-four dollars" as "$54.00" and the "oh" of "room four oh six" as
    "or"; the evidence side of a match also holds those readings, the plain ones stay."""
    assert {"54", "54.00"} <= term_set("A magazine is $54.00 at the counter.")
    held = term_set("The poetry reading is in room 4 or 6.")
    assert {"406", "4:06", "4", "6"} <= held
    assert "406" not in term_set("We need 4 or more chairs.") and "46" not in held
    assert spoken_zero_keys(["at", "10", "oh", "5"]) == ["1005", "10:05"]


def test_a_for_heard_as_four_before_a_number_leaves_the_number_readable():
    """"You can get a magazine for forty-two euros here." written "… in 442 Euro here.": "for"
    sounds like "four", so the evidence side also reads 442 as 42 (and as 4:42); a number of
    another shape gains no such reading."""
    held = term_set("You can get a madman in 442 Euro here.")
    assert {"442", "4:42", "42"} <= held
    assert "12" not in term_set("The meeting is in room 312.") and "5" not in term_set("It costs 45 pounds.")


@pytest.mark.parametrize("a, b", [("15", "50"), ("13", "30"), ("19", "90"), ("50", "15"), ("70", "17")])
def test_teen_and_ty_are_twins(a, b):
    assert teen_ty_twin(a) == b


@pytest.mark.parametrize("n", ["12", "20", "25", "55", "100", "7", "1.5", "fifteen"])
def test_other_numbers_have_no_twin(n):
    assert teen_ty_twin(n) is None


def test_an_option_heard_with_the_other_ending_counts_as_a_homophone():
    text = "Route order 50 onions and a team."
    assert homophone_stems("15", ["15"], text, term_set(text)) == {"15"}
    assert homophone_stems("18", ["18"], text, term_set(text)) == set()
    assert homophone_stems("50", ["50"], text, term_set(text)) == set()  # heard as itself


@pytest.mark.parametrize("text, focus, want", [
    ("The poetry reading is in room 1 or 4.", "number", "104"),
    ("Go to gate 2 oh 3 now.", "number", "203"),
    ("The show starts at 1 or 5.", "time", "1:05"),
    ("We need 4 or 6 chairs.", "number", "4"),  # plain "or" between two counts
    ("Room 12 or 13 is free.", "number", "12"),  # two whole numbers, no spoken code
])
def test_a_spoken_code_is_read_whole(text, focus, want):
    from episodic.reasoning.short_answer import _number

    assert _number(text, focus).split()[0] == want


def test_twenty_to_an_hour_written_with_a_dash_or_a_point_is_that_time():
    """Whisper writes "twenty to eleven" as "20-11" or "20.11" (dev 4, d028: answered "20:11").
    Both sides of a match and a short answer read it as 10:40; opening hours ("10-6"), a colon
    time, a price and a date keep their own readings."""
    from episodic.reasoning.short_answer import _number

    assert canonical_tokens("We meet at 20-11 today.")[3] == "10:40"
    assert canonical_tokens("getting together at 20.11.")[-1] == "10:40"
    assert canonical_tokens("at 25-3")[-1] == "2:35"
    assert canonical_tokens("open 10-6 daily") == ["open", "10", "6", "daily"]
    assert canonical_tokens("at 20:11")[-1] == "8:11" and canonical_tokens("$20.11")[-1] == "8:11"
    assert canonical_tokens("on 2020-11-03")[1] == "2020"
    assert "10:40" not in canonical_tokens("on 20-11-2024") + canonical_tokens("on 20.11.2024")
    assert _number("At 20-11, Grace has an appointment.", "time") == "20 to 11"
    assert _number("At 20 -11, Grace's an an appointment.", "time") == "20 to 11"  # dev 4 again
    assert canonical_tokens("score 20 - 11")[-2:] == ["20", "11"]
    assert _number("getting together at 20.11.", "time") == "20 to 11"
    assert _number("at 8.11 p.m.", "time") == "8.11"



@pytest.mark.parametrize(("heard", "key"), [
    ("Maria is meeting the volunteer at I-05.", "9:05"),
    ("Please remember that the poet re-reading begins at I'm 35.", "9:35"),
    ("Rami is leading the stylists at I -35.", "9:35"),
    ("The story hour starts at I .30.", "9:30"),
    ("Don't forget, make us to see the concierge at I-50.", "9:50"),
])
def test_nine_heard_as_i_before_minutes_is_nine(heard, key):
    """Whisper writes "at nine thirty-five" as "at I-35", "at I -35", "at I .30" or "at I'm 35"
    (every such time in the dev stores' transcripts was nine): both sides of a match and a
    short answer read it as that time. "I" with no dash or point, a road ("I-95", no minutes)
    and "I" where no time comes next stay as written."""
    from episodic.reasoning.short_answer import _number

    assert canonical_tokens(heard)[-1] == key
    assert _number(heard, "time") == key
    for other in ("We drove at I-95 all day.", "He said it at I 35 times.", "I-35 runs north from here.",
                  "I'm 35 years old.", "Look at I-35-40 on the map."):
        assert not any(k.startswith("9:") for k in canonical_tokens(other)), other


def test_an_open_which_stream_question_is_answered_by_the_stream_not_the_model():
    """The model restates the fact ("…in room 204"); the question asks where it was said."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import Answerer
    from episodic.reasoning.model_reply import ParsedReply
    from episodic.retrieval.detailed import TextScorer

    answerer = Answerer(lambda: None, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    unit = Unit("library-cam", "library-cam@60", 61.6, 64.0, "speech", "The poetry reading is in room 204.")
    unit.score, unit.cos = 0.9, 0.9
    reply = "The room for the poetry reading is room 204."
    parsed = ParsedReply(answer=reply, confidence=0.9, abstained=False, letter=None)
    draft = answerer._best_of(_analysis("In which recording was the room for the poetry reading mentioned?"),
                              [unit], parsed, reply, 1.0)
    assert draft.answer.startswith("library-cam"), draft


def test_an_open_which_stream_question_takes_a_stream_whose_sentence_holds_the_topic_misheard():
    """"F20 to 11, based on an appointment with the archimist." is far from the whole question
    in cosine (the framing "in which recording … mentioned" dilutes it) but holds its topic:
    the cosine no longer caps the answer to nothing. A sentence about another appointment, and
    a question that does not ask for a stream, keep the cosine's cap."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import TOPIC_FOUND_SIMILARITY, Answerer
    from episodic.retrieval.detailed import TextScorer

    embedder = MiniLMEmbedder(Settings())
    answerer = Answerer(lambda: None, TextScorer(embedder), Settings().retrieval)
    analyzer = QueryAnalyzer(embedder)
    asked = analyzer.analyze("In which recording was Grace's appointment with the archivist mentioned?")
    said = Unit("library-cam", "library-cam@63", 63.6, 67.7, "speech",
                "F20 to 11, based on an appointment with the archimist.")
    said.cos = 0.21
    said.fuzzy_terms = fuzzy_found(asked.question, asked.terms, said.text, said.terms)  # as recall does
    assert said.fuzzy_terms == {stem("archivist")}
    confidence, _, caps = answerer.assess(asked, "library-cam", [said], extractive=True)
    assert caps["similarity"] == TOPIC_FOUND_SIMILARITY and caps["objects"] == 1.0, caps
    assert confidence >= 0.3, caps  # Grace is not in the sentence: key_terms still caps it
    other = Unit("station-cam", "station-cam@80", 80.0, 83.9, "speech",
                 "At 11.15, they go down an appointment with the ticket inspector.")
    other.cos = 0.21
    other.fuzzy_terms = fuzzy_found(asked.question, asked.terms, other.text, other.terms)
    confidence, _, caps = answerer.assess(asked, "station-cam", [other], extractive=True)
    assert caps["similarity"] < 0.05 and confidence < 0.05, caps
    when = analyzer.analyze("When is Grace's appointment with the archivist?")
    _, _, caps = answerer.assess(when, "F20 to 11", [said], extractive=True)
    assert caps["similarity"] < TOPIC_FOUND_SIMILARITY, caps


@pytest.mark.parametrize("question, said, place", [
    ("Beside what is the ladder?", "The ladder that Ben brought is beside the shed.", "the shed"),
    # the question's own preposition first, though another place comes before it
    ("Near what is the lamp that Anna mentioned?", "Anna says the lamp in the hall is near the window.", "the window"),
    ("Next to what did Tom leave the box?", "Tom left the box in the kitchen, next to the fridge.", "the fridge"),
    ("Behind which building is the car park?", "The car park is behind the town hall.", "the town hall"),
    # a place ends where a verb starts
    ("Where is the lamp?", "Anna says the lamp in the hall is near the window.", "the hall"),
    # a preposition heard before another ("keeps in at"): the place is after the last one
    ("At what place is the umbrella kept?", "If you need the umbrella, Grace keeps in at the news paper kiosk.",
     "the news paper kiosk"),
    ("Where did Amara move the anchor?", "Amara moved the anchor over to the fuel dock.", "the fuel dock"),
])
def test_a_question_opening_with_a_preposition_of_place_asks_for_the_place_it_names(question, said, place):
    """"Beside what is X?" asks where X is, as "where" does: the answer is the place the
    sentence names after that preposition, not the first words it has ("Anna says")."""
    analysis = _analysis(question)
    assert analysis.shape.focus == "place"
    span = span_in(_unit(said), analysis)
    assert span is not None and span.text == place, span


@pytest.mark.parametrize("question, said, price", [
    # a time of day is no price (session 85: "How much did the concert tickets in Vienna cost?"
    # was answered "1.30 a.m" from a sentence about when a concert starts)
    ("How much did the concert tickets cost?", "We will start the concert at 1.30 a.m. so we'll let it.", None),
    ("What is the price of the bread?", "At twenty past eleven the bread costs 3 euros.", "3 euros"),
    ("How much do they charge for one ream?", "They charge 8 dollars for one ream at 5 pm.", "8 dollars"),
    ("What does a ticket cost?", "The tickets cost 1.30 at the door.", "1.30"),
    # a time asked for is still one
    ("When does the concert start?", "We will start the concert at 1.30 a.m. so we'll let it.", "1.30"),
])
def test_a_price_is_never_a_time_of_day(question, said, price):
    span = span_in(_unit(said), _analysis(question))
    assert (span.text if span is not None else None) == price, span


def test_a_time_with_round_minutes_is_refined_only_by_its_missing_last_word():
    """Whisper base writes "seven thirty-five" as "7.30" (session 85: five dev answers at 0.93):
    a round time is heard again by the second model, whose words are taken only when they
    complete the same minutes ("7.35"), not when they say another time."""
    from episodic.reasoning.short_answer import refines_round_minutes, round_minutes_heard

    q = _analysis("At what time does the sailing race begin?")
    assert round_minutes_heard(_unit("The sailing race starts at 7.30."), q) == (7, 30)
    assert round_minutes_heard(_unit("The sailing race starts at 9:20 sharp."), q) == (9, 20)
    # in words, or with minutes that are no round ten, nothing was cut short
    for said in ("The sailing race starts at 7.35.", "The sailing race starts at 7.00.",
                 "The sailing race starts at 7.", "The sailing race starts at half past two.",
                 "The sailing race starts at seven twenty."):
        assert round_minutes_heard(_unit(said), q) is None, said
    assert round_minutes_heard(_unit("The sailing race costs 7.30."), _analysis("What does the sailing race cost?")) is None
    heard = (7, 30)
    assert refines_round_minutes(heard, _unit("The sailing race starts at 7.35."), q)
    assert refines_round_minutes(heard, _unit("The sailing race starts at seven thirty-five."), q)
    for said in ("The sailing race starts at 7.30.", "The sailing race starts at 8.35.",
                 "The sailing race starts at 7.45.", "The sailing race starts soon."):
        assert not refines_round_minutes(heard, _unit(said), q), said


def test_a_phrase_ending_in_the_thing_asked_about_is_not_where_it_is():
    """"Where did Greta leave the axe?" / "Near in the whistle axe." (a mention check heard
    "again" as "axe"): the phrase after "in" names the axe itself, so the sentence holds no
    place; a place that merely shares a word with the thing is still one ("the stage door" for
    the door key)."""
    assert span_in(_unit("Near in the whistle axe."), _analysis("Where did Greta leave the axe?")) is None
    span = span_in(_unit("Kofi keeps the door key at the stage door."), _analysis("Where is the door key kept?"))
    assert span is not None and span.text == "the stage door", span
    span = span_in(_unit("Greta left the axe by the woodshed."), _analysis("Where did Greta leave the axe?"))
    assert span is not None and span.text == "the woodshed", span


def test_a_preposition_before_what_that_is_not_of_place_changes_nothing():
    assert question_shape("In what room is the quiz?").focus == "number"
    assert question_shape("At what time does the quiz start?").focus == "time"
    assert question_shape("On which camera was the sign visible?").focus != "place"


def test_a_whom_question_asks_for_a_name():
    """"Whom should you ask about the ladle?" is answered by a name, as a who-question is: not
    by the longest run of words the question lacks ("lift" of "Ask him how to lift if you need
    the ladle.")."""
    assert question_shape("Whom should you ask about the ladle?").focus == "name"
    analysis = _analysis("Whom should you ask about the ladle?")
    assert span_in(_unit("Ask him how to lift if you need the ladle."), analysis) is None
    span = span_in(_unit("Ask Amara if you need the ladle."), analysis)
    assert span is not None and span.text == "Amara", span


@pytest.mark.parametrize("said", ["See you all at the front desk.", "Hope the soup is ready.",
                                  "Soon the library will close."])
def test_a_common_word_that_is_also_a_given_name_starts_a_sentence_as_no_name(said):
    from episodic.reasoning.short_answer import _name

    assert _name(said, set()) == ""


@pytest.mark.parametrize("said, number", [
    ("The night train is in room three twenty-five.", "325"),
    ("The safety talk is in room four oh one.", "401"),
    ("Go to room eleven twenty for the meeting.", "1120"),
])
def test_a_number_said_in_pairs_of_digits_is_also_that_number(said, number):
    """Folded into a clock time ("three twenty-five" → 3:25), it may still be a room."""
    assert number in term_set(said)
    assert number not in term_set("The night train leaves at 3 for room 25.")


def test_a_room_said_in_words_is_the_option_written_in_digits():
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import Answerer
    from episodic.retrieval.detailed import TextScorer

    answerer = Answerer(lambda: None, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    unit = _unit("The night train is in room three twenty-five.")
    unit.score, unit.cos = 0.7, 0.7
    scores, _ = answerer.option_scores(_analysis("Which room is the night train in?"), ["418", "325", "116", "124"],
                                       [unit], None)
    assert scores[1] > max(scores[0], scores[2], scores[3]) + 0.2, scores


def test_the_colours_seen_beside_a_misheard_sentence_do_not_answer_what_was_said():
    """A summary quotes "Amara painted the fishing net pink" misheard; its "Seen" part lists
    the frames' colours. Asked what was said, those colours are no option's evidence; asked
    what was shown, they are."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import Answerer
    from episodic.retrieval.detailed import TextScorer

    answerer = Answerer(lambda: None, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    summary = _unit('Someone says "Am I repainted the fishing net being?". Seen: a picture in green, blue, grey, '
                    'camera panning. Heard: background noise.', modality="summary")
    summary.score, summary.cos = 0.8, 0.8
    options = ["blue", "pink", "red", "black"]
    _, said = answerer.option_scores(_analysis("What colour did Amara paint the fishing net?"), options, [summary], None)
    assert said["lex"][0] == 0.0 and max(said["support"]) < 0.5, said["support"]
    _, seen = answerer.option_scores(_analysis("What colour was the picture on screen?", QueryType.VIDEO), options,
                                     [summary], None)
    assert seen["lex"][0] == 1.0


def test_a_colour_asked_of_what_was_said_is_not_read_from_the_colours_seen_beside_it():
    """"Which colour should Lucas's library card be?" over a summary quoting a misheard
    sentence: the frames' colours in its "Seen" part are no short answer (they were given as
    "green blue" at 0.93); asked what was on screen, they are."""
    summary = _unit('Someone says "Lucas wants the library card to be read". Seen: a picture in green, blue, '
                    'cyan, camera panning.', modality="summary")
    for qtype in (QueryType.AUDIO, QueryType.VIDEO):  # a colour question may be typed visual
        said = span_in(summary, _analysis("Which colour should Lucas's library card be?", qtype))
        assert said is None or not ({"green", "blue", "cyan"} & set(said.text.lower().split())), (qtype, said)
    seen = span_in(summary, _analysis("What colour was the picture on screen?", QueryType.VIDEO))
    assert seen is not None and seen.text.lower().startswith("green"), seen


@pytest.mark.parametrize("question, key", [
    ("Where did Omar put the watering can?", 0.0),  # Omar is named, but in another memory
    ("Where did Tom put the watering can?", 0.0),  # … Tom nowhere (a short name counts too)
    ("Where did Maria put the watering can?", 1.0),
    ("Where was the watering can put?", 1.0),
])
def test_a_name_the_question_asks_about_must_be_where_the_answer_comes_from(question, key):
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import Answerer
    from episodic.retrieval.detailed import TextScorer

    answerer = Answerer(lambda: None, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    said = Unit("garden-cam", "garden-cam@30", 33.0, 36.0, "speech", "Maria put the watering can by the compost heap.")
    other = Unit("garden-cam", "garden-cam@0", 1.0, 3.0, "speech", "Omar painted the wheelbarrow yellow.")
    for u in (said, other):
        u.score, u.cos = 0.8, 0.8
    _, support, caps = answerer.assess(_analysis(question), said.text, [said], extractive=True, pool=[said, other])
    assert support is said and caps["key_terms"] == key, caps


def test_an_option_heard_as_its_homophone_is_chosen_over_options_never_heard(monkeypatch):
    """"Priya painted the watering can blue", as Whisper wrote it from an accented voice."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import Answerer
    from episodic.retrieval.detailed import TextScorer

    answerer = Answerer(lambda: None, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    question = "Which colour is the watering can that Priya painted?"
    units = [_unit("Pre-appainted that wandering can blew."), _unit("Everyone seems to be in a good mood.", t=9.0)]
    for u in units:
        u.score, u.cos = 0.6, 0.6
    options = ["purple", "green", "pink", "blue"]

    def margin() -> float:
        scores, _ = answerer.option_scores(_analysis(question), options, units, None)
        return scores[3] - max(scores[:3])

    assert margin() > 0.2
    monkeypatch.setattr("episodic.reasoning.answer.HOMOPHONE_CREDIT", 0.0)
    assert margin() < 0.1  # without it, only the embedding leans (barely) to "blue"
    assert homophone_stems("blue", ["blue"], "the sky was blue", {"blue"}) == set()  # found as itself


def test_fuzzy_matching_only_for_names():
    assert fuzzy_found("Northwind", ["northwin"], "Welcome to the North wind hotel.", set()) == {"northwin"}
    assert fuzzy_found("the North Wind hotel", ["north", "wind"], "the Northwind hotel", set()) == {"north", "wind"}
    assert fuzzy_found("What did Mylo eat?", ["mylo"], "This is Milo, our cat.", set()) == {"mylo"}
    # common words that sound alike are different words, not mishearings
    assert fuzzy_found("bike", ["bike"], "we bake bread", set()) == set()
    assert fuzzy_found("What did Milo do?", ["milo"], "It is one mile away.", set()) == set()
    assert fuzzy_found("the train", ["train"], "a trail in the woods", set()) == set()


def test_key_terms_are_names_and_rare_words():
    q = "When does the train to Oxford leave?"
    assert key_terms_of(q, content_terms(q)) == {"oxford": "Oxford"}
    q = "What did Tom put in the blue bowl?"  # a three-letter given name: matched exactly
    assert key_terms_of(q, content_terms(q)) == {"tom": "Tom"}
    q = "What did the Sun say about the blue bowl?"  # a short everyday word is no such name
    assert key_terms_of(q, content_terms(q)) == {}


# -- question shapes -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "question, n_options, order, anchor, compared, counts, stream, focus",
    [
        ("What was mentioned right after the welcome to the hotel?", 0, "after", "the welcome to the hotel", (), False, False, "any"),
        ("After the greeting, what was announced?", 0, "after", "the greeting", (), False, False, "any"),
        ("What did she say just before the alarm?", 0, "before", "the alarm", (), False, False, "any"),
        ("What happened first, the greeting or the train announcement?", 0, "first", "", ("the greeting", "the train announcement"), False, False, "any"),
        ("Which of these was mentioned last?", 3, "last", "", (), False, False, "any"),
        ("What is shown on the first slide?", 3, None, "", (), False, False, "any"),
        ("How many times did the dog bark?", 0, None, "", (), True, False, "number"),
        ("Which camera showed the red car?", 2, None, "", (), False, True, "any"),
        ("What is the name of the cat?", 0, None, "", (), False, False, "name"),
        ("When does the train to Oxford leave?", 0, None, "", (), False, False, "time"),
        ("What colour is the bowl?", 0, None, "", (), False, False, "colour"),
        ("What was on screen when someone mentioned the train?", 0, None, "", (), False, False, "any"),
        ("Which room is the story hour in?", 0, None, "", (), False, False, "number"),  # not a stream
        ("What aisle number was shown on screen?", 0, None, "", (), False, False, "number"),  # any "X number"
        ("What did a number of people say?", 0, None, "", (), False, False, "any"),
        # wordings of order questions beyond "right after X" / "which first, A or B"
        ("Which topic followed the seed packet?", 0, "after", "the seed packet", (), False, False, "any"),
        ("What was said directly after someone mentioned the seed packet?", 0, "after", "the seed packet", (), False, False, "any"),
        ("What came up right after the talk about the seed packet in garden-cam?", 0, "after", "the seed packet", (), False, False, "any"),
        ("What did they talk about before they mentioned the flower show?", 0, "before", "the flower show", (), False, False, "any"),
        ("Which was mentioned sooner, the seed packet or the flower show?", 0, "first", "", ("the seed packet", "the flower show"), False, False, "any"),
        ("Of the seed packet and the flower show, which one was talked about first?", 0, "first", "", ("the seed packet", "the flower show"), False, False, "any"),
        ("Which of the following came up first in the library-cam recording?", 4, "first", "", (), False, False, "any"),
        ("Which of these did someone talk about last in harbour-cam?", 4, "last", "", (), False, False, "any"),
        ("What was the first of these to be mentioned?", 4, "first", "", (), False, False, "any"),
        ("Which one was said before all the others?", 4, "first", "", (), False, False, "any"),
        ("Was the seed packet mentioned before or after the flower show?", 2, "first", "", ("the seed packet", "the flower show"), False, False, "any"),
        ("Which of these was shown in the following clip?", 4, None, "", (), False, False, "any"),
        # counts and which-stream questions worded other ways
        ("On how many occasions was the lawn mower mentioned?", 4, None, "", (), True, False, "number"),
        ("How frequently did someone mention the printer?", 0, None, "", (), True, False, "number"),
        ("How many mentions of the ferry horn were there?", 0, None, "", (), True, False, "number"),
        ("Which of these recordings mentions the ferry?", 3, None, "", (), False, True, "any"),
        ("From which of the streams did we hear about the anchor?", 3, None, "", (), False, True, "any"),
        # session 19: wordings written without looking at any generated question
        ("What was discussed once the seed packet had been mentioned?", 0, "after", "the seed packet", (), False, False, "any"),
        ("The seed packet was mentioned; what came next?", 0, "after", "The seed packet", (), False, False, "any"),
        ("What was the first thing mentioned in garden-cam?", 4, "first", "", (), False, False, "any"),
        ("What was the final topic in the harbour-cam recording?", 4, "last", "", (), False, False, "any"),
        ("Which was talked about after the other: the seed packet or the flower show?", 0, "last", "",
         ("the seed packet", "the flower show"), False, False, "any"),
        ("Did they mention the rope once or twice?", 2, None, "", (), False, False, "any"),
        ("Which of the three recordings mentions the flower show?", 3, None, "", (), False, True, "any"),
        ("Name the recording in which the flower show was mentioned.", 0, None, "", (), False, True, "name"),
        ("Where was the price of the magazine mentioned?", 0, None, "", (), False, True, "number"),
        ("Where did Lucas say he left the anchor?", 0, None, "", (), False, False, "place"),
        # a fact with a time in it is not an order question
        ("Who is cleaning the anchor after lunch?", 0, None, "", (), False, False, "name"),
        ("Who will meet the chef before noon?", 4, None, "", (), False, False, "name"),
        ("What was mentioned after lunch?", 0, "after", "lunch", (), False, False, "any"),
    ],
)
def test_question_shape(question, n_options, order, anchor, compared, counts, stream, focus):
    shape = question_shape(question, n_options)
    assert shape.relative == question.startswith("Was "), shape
    assert (shape.order, shape.anchor, shape.compared, shape.counts, shape.asks_stream, shape.focus) == (
        order, anchor, compared, counts, stream, focus)


@pytest.mark.parametrize(
    "question, sound",
    [
        ("Besides people talking, what could you hear?", True),
        ("Apart from voices, what sounds were there?", True),
        ("Was there any music?", True),
        ("What is playing in the background at the start?", True),
        ("What was heard when nobody was speaking?", True),
        ("What was said in the background?", False),
        ("What did you hear about the ferry?", False),
        ("What could be heard about the price?", False),
        # the recording's sound as what is asked about (session 85)
        ("What did harbour-cam's sound have while its picture was dark?", True),
        ("What was on the soundtrack of garden-cam while the screen was black?", True),
        ("What did the audio say at the start?", False),
    ],
)
def test_questions_about_sounds_other_than_speech(question, sound):
    assert question_shape(question).sound is sound


def test_options_naming_streams():
    streams = ["lobby-cam", "garden-cam", "cam2"]
    got = option_streams(["the lobby camera", "The garden camera", "camera 2", "the kitchen"], streams)
    assert got == ["lobby-cam", "garden-cam", "cam2", None]
    assert option_streams(["the camera", "a camera"], ["cam-1", "cam-2"]) == [None, None]
    # a function word that only begins a stream's name does not name it: "the" is no theatre
    theatre = ["gym-cam", "airport-cam", "theatre-cam"]
    assert option_streams(["What was mentioned just before the time of the flight to Lisbon?"], theatre) == [None]
    assert option_streams(["What was said in the theatre?", "the airport camera"], theatre) == ["theatre-cam", "airport-cam"]
    assert option_streams(["What is on sale for ten pounds?"], ["forest-cam", "canteen-cam"]) == [None]


# -- short answers -------------------------------------------------------------------------
def _analysis(question: str, qtype: QueryType = QueryType.AUDIO) -> QueryAnalysis:
    terms = content_terms(question)
    return QueryAnalysis(question, qtype, {}, "", terms, "any", shape=question_shape(question),
                         key_terms=key_terms_of(question, terms),
                         object_terms=[t for t in object_terms_of(question) if t in terms])


def _unit(text: str, modality: str = "speech", t: float = 0.0) -> Unit:
    return Unit("s", "s@0", t, t + 2.0, modality, text)


@pytest.mark.parametrize(
    "question, text, modality, expected",
    [
        ("What is the name of the cat?", "This is Milo, our cat.", "speech", "Milo"),
        # a given name that is also an English word, first in its sentence
        ("Who is cleaning the library card after lunch?", "Grace will clean the library card after lunch.",
         "speech", "Grace"),
        ("Who took the keys?", "Mark took the keys to the van.", "speech", "Mark"),
        ("Who greeted the guests?", "The guests were greeted by Anna Berg at the door.", "speech", "Anna Berg"),
        ("What did Tom put in the blue bowl?", "Tom put three green apples in the blue bowl.", "speech", "three green apples"),
        ("When does the train to London leave?", "The train to London leaves at 20 past 11.", "speech", "20 past 11"),
        ("How long is the oven timer set for?", "The oven timer is set for twenty minutes.", "speech", "twenty minutes"),
        ("What colour is the bowl?", "Tom put the apples in the blue bowl.", "speech", "blue bowl"),
        # a recogniser writes "nine twenty" as "920": a time question gets a clock time
        ("When are they starting the science fair?", "We will start the science fair at 920.", "speech", "9:20"),
        ("When is the clinic opening?", "Room 312 is opening at 1145 today.", "speech", "11:45"),
        # … and "twelve twenty" as "12. 20" (two numbers, a full stop between)
        ("When does Priya meet the caretaker?", "Priya is meeting the caretaker at 12. 20.", "speech", "12:20"),
        ("When does the shop open?", "The shop opens at 9 35 today.", "speech", "9:35"),
        ("How many chairs are in room 312?", "Room 312 has 40 chairs.", "speech", "40 chairs"),
        ("Where did Lucas put the anchor?", "Lucas put the anchor by the slipway.", "speech", "the slipway"),
        ("Where is the key?", "The key is under the blue mat.", "speech", "the blue mat"),
        # a name that opens the sentence is the answer; a word in capitals read on screen is not
        ("Who is cleaning the laptop after lunch?", "Tom will clean the laptop after lunch.", "speech", "Tom"),
        ("Who is cleaning the laptop after lunch?",
         'Someone says "Tom will clean the laptop after lunch". On screen: "OPEN UNTIL 10 PM".', "summary", "Tom"),
        ("Who is cleaning the laptop?", "Look, the laptop is clean now. Ask Priya.", "speech", "Priya"),
    ],
)
def test_short_answer_spans(question, text, modality, expected):
    span = span_in(_unit(text, modality), _analysis(question))
    assert span is not None and span.text == expected, span


@pytest.mark.parametrize(
    "question, text, expected",
    [
        # a count is never an amount of money, written with a word or a sign
        ("How many seed packets does Diego have?", "The seed packets are on sale for 45 dollars.", None),
        ("How many sandwiches does Amara have?", "A sandwich is £7 at the counter.", None),
        ("How many sandwiches does Amara have?", "A sandwich is seven euros, Amara has three sandwiches.",
         "three sandwiches"),
        ("How many ropes are left?", "Only 15 ropes are left, Tom told me.", "15 ropes"),
        # …but money is what "how many euros" and "how much" ask for
        ("How many euros does the ticket cost?", "The ticket costs 12 euros.", "12 euros"),
        ("How much is a sandwich?", "A sandwich is £7 at the counter.", "7 pounds"),
        # a colour is not a place
        ("Where did Quentin leave the suitcase?", "He wrapped the suitcase in green.", None),
        ("Where did Quentin leave the suitcase?", "He left the suitcase in the green van.", "the green van"),
        # "to" of a verb is not "to" of a place
        ("Where did Priya leave the ladle?", "Ask him how to lift it if you need the ladle.", None),
        ("Where did Priya take the ladle?", "Priya wants to take the ladle to the kitchen.", "the kitchen"),
        ("Where is Tom going?", "Tom is going to the market.", "the market"),
    ],
)
def test_a_span_is_of_the_kind_asked(question, text, expected):
    span = span_in(_unit(text), _analysis(question))
    assert (span.text if span is not None and span.quality >= 1.0 else None) == expected, span


def test_a_quote_with_no_value_of_the_asked_kind_is_no_answer():
    """"What colour is the ladle that Grace painted?" over a sentence with no colour in it is
    answered by quoting that sentence: the service says it found nothing instead."""
    from episodic.config import Settings
    from episodic.reasoning.answer import QUOTE_CAP, Answerer, Draft, quotes_for_a_value

    answerer = Answerer(lambda: None, scorer=None, settings=Settings().retrieval)
    ladle = _unit("Look, the ladle is strong and clear.")
    colour = _analysis("What colour is the ladle that Grace painted?")
    text, _, units, quality = answerer._extract(colour, [ladle])
    assert quality == QUOTE_CAP and "strong and clear" in text
    quoted = Draft(answer=text, confidence=0.6, support=units, source="extract", caps={"span": quality})
    assert quotes_for_a_value(quoted, colour)
    # a phrase of the kind asked, a question asking for no kind, or a choice: an answer
    _, _, _, found = answerer._extract(colour, [_unit("Grace painted the ladle red.")])
    assert found == 1.0
    assert not quotes_for_a_value(Draft(answer="red", confidence=0.6, source="extract", caps={"span": found}), colour)
    assert not quotes_for_a_value(quoted, _analysis("What did Grace say about the ladle?"))
    chosen = Draft(answer="A. red", confidence=0.6, choice_index=0, source="extract", caps={"span": quality})
    assert not quotes_for_a_value(chosen, colour)
    # "When was there music?": the sound quoted answers by the moment it cites
    music = _unit("music playing", "sound")
    when = _analysis("When was there music?")
    when.asks_sound = True  # "music": the analyser's sound cue
    heard = Draft(answer="music playing", confidence=0.6, support=[music], source="extract", caps={"span": QUOTE_CAP})
    assert when.shape.focus == "time" and not quotes_for_a_value(heard, when)
    said = Draft(answer="x", confidence=0.6, support=[_unit("The ferry leaves soon.")], source="extract",
                 caps={"span": QUOTE_CAP})
    assert quotes_for_a_value(said, _analysis("When does the ferry leave?"))
    seen = Draft(answer="x", confidence=0.6, support=[_unit("a scene; colours: green", "visual")],
                 source="extract", caps={"span": QUOTE_CAP})
    assert quotes_for_a_value(seen, _analysis("What time does Maria see the gardener?"))


def test_term_sets_are_cached_but_each_caller_gets_its_own():
    a = term_set("The train leaves at 8.15 from platform seven.")
    assert {"train", "leav", "8:15", "7"} <= a
    a.add("mutated")
    assert "mutated" not in term_set("The train leaves at 8.15 from platform seven.")


def test_a_number_written_as_two_numbers_is_still_a_span():
    """"5km" is one word but two tokens ("5", "km"): the span is that word, never a crash."""
    span = span_in(_unit("The harbour is 5km away."), _analysis("How far is the harbour?"))
    assert span is not None and span.text.startswith("5km"), span


def test_a_short_answer_comes_from_a_sentence_about_the_question():
    """The best-matching sentence holds no phrase of the asked kind that the extractor knows;
    a place in a sentence about something else ranked far below is still no answer."""
    question = _analysis("Where did Lucas put the anchor?")
    about = _unit("Lucas put the anchor down again.")
    other = _unit("The ferry crossing is in room 316.", t=10.0)
    about.score, other.score = 0.88, 0.12
    assert best_span([about, other], question) is None
    other.score = 0.6  # comparable relevance: the place is a fair answer
    span = best_span([about, other], question)
    assert span is not None and span.text == "room 316"


@pytest.mark.parametrize(
    ("heard", "expected"),
    [
        ("The safety announcement in the room for all one.", "401"),  # "four oh one"
        ("Go to room to won five for the fair.", "215"),
        ("The safety announcement is in room 4 or 1.", "401"),
        ("We booked a room for two people.", "two"),  # a size, not a code
        ("The room for all of us is ready.", None),
        # "four twenty-two": the first digit written as the word it sounds like
        ("The safety announcement is in room for 22.", "422"),
        ("Go to room for 22 for the safety announcement.", "422"),
        ("There is room for 22 people at the safety announcement.", "22"),  # a size, not room 422
        # "three twenty-six" in an accent that says "th" as "f"
        ("The safety announcement in the room free 26.", "326"),
        ("The room is free 26 hours a day for the safety announcement.", "26 hours"),  # not room 326
    ],
)
def test_a_room_code_heard_as_words_that_sound_like_its_digits(heard, expected):
    span = span_in(_unit(heard), _analysis("Which room is the safety announcement in?"))
    assert (span.text if span else None) == expected, span


@pytest.mark.parametrize(
    ("heard", "expected"),
    [
        ("Omar painted the wheelbarrow yet low.", "yellow"),  # one colour heard as two words
        ("Tom painted the umbrella purble.", "purple"),  # misspelt
        ("Tom painted the fence blank.", None),  # a real word is what was said, not a colour
        ("Tom painted the fence today.", None),
    ],
)
def test_a_colour_heard_as_other_words_is_a_guessed_span(heard, expected):
    span = span_in(_unit(heard, "speech"), _analysis("What colour did Omar paint the wheelbarrow?"))
    if expected is None:
        assert span is None, span
    else:
        assert span is not None and span.text == expected and span.quality < 1.0, span


@pytest.mark.parametrize(
    ("answer", "bare"),
    [
        ("The flower show started at 22.", True),  # "twenty to two", misheard
        ("The safety announcement start at 1.0 a.m.", True),  # "one oh five"
        ("The safety announcement starts at 1.0 am.", True),  # the same, another model's spelling
        ("the safety announcement begin at 8.8 .8.", True),  # "eight forty": one digit of minutes
        ("The dinner service gets going at 2.5.", True),  # "two oh five"
        ("15", True),
        # the same bare number in words: "with one" is a phrase as often as an hour
        ("And with one send the poet with reading open that I'm hurted I'm sharp.", True),
        ("The show opens at eleven.", True),
        ("The ferry crossing open at high twenty-nine shower.", True),
        ("We open at eleven o'clock.", False),
        ("It starts at one pm.", False),
        ("at ten past eleven", False),
        ("The last train leaves at 9 p.m. today.", False),
        ("We open at 10 o'clock.", False),
        ("Priya is meeting the caretaker at 12.20.", False),
        ("half past 11", False),
        ("3:40", False),
    ],
)
def test_a_clock_time_that_is_only_a_bare_number_is_a_guess(answer, bare):
    from episodic.config import Settings
    from episodic.reasoning.answer import Answerer

    assert only_a_bare_hour(answer) is bare
    # …and an answer giving one claims less than the same answer with a real time in it
    answerer = Answerer(lambda: None, scorer=None, settings=Settings().retrieval)
    analysis = _analysis("When does the flower show start?")
    unit = _unit(answer, "speech")
    _, _, caps = answerer.assess(analysis, answer, [unit], extractive=True)
    assert (caps["kind"] < 1.0) is bare, caps


def test_a_label_string_is_not_a_name():
    assert span_in(_unit("a scene with Egyptian cat, tiger cat", "visual"), _analysis("What is the name of the cat?")) is None


def test_sentences_keep_time_order():
    parts = sentences(_unit("Welcome to the hotel. Breakfast is at eight. The pool opens at noon."))
    assert [p.text for p in parts][1] == "Breakfast is at eight."
    assert parts[0].t_start < parts[1].t_start < parts[2].t_start < parts[2].t_end


def test_calibrate_is_bounded_and_monotone_in_the_raw_confidence():
    assert calibrate(float("nan"), {}) == 0.0 and calibrate(0.0, {"support": 0.5}) == 0.0
    signals = {"options": 0, "key_terms": 1.0, "source": "extract"}
    values = [calibrate(r, signals) for r in (0.05, 0.3, 0.6, 0.9, 1.0, 1.7)]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert values == sorted(values) and values[0] < values[-1]


# -- end to end ------------------------------------------------------------------------------
RECORDINGS = {
    "lobby-cam": (
        [{"duration_s": 9, "seed": 11, "tint": (180, 150, 90), "text": "LOBBY"},
         {"duration_s": 9, "seed": 12, "tint": (120, 90, 60)}],
        [(1.0, "Welcome to the Northwind hotel."),
         (5.5, "Breakfast is served at eight fifteen."),
         (11.0, "The swimming pool opens at noon.")],
    ),
    "garden-cam": (
        [{"duration_s": 9, "seed": 13, "tint": (60, 160, 60)},
         {"duration_s": 9, "seed": 14, "tint": (90, 140, 200), "text": "GATE 9"}],
        [(1.0, "This is Milo, our cat."),
         (6.0, "The gardener waters the roses every morning."),
         (11.5, "The train to London leaves at twenty past eleven.")],
    ),
}


@pytest.fixture(scope="module")
def qa(tmp_path_factory):
    from episodic import samples
    from episodic.components import Components
    from episodic.config import load_settings
    from episodic.pipeline import ingest_file
    from episodic.services.qa import MemoryQA

    root = tmp_path_factory.mktemp("answering")
    components = Components(load_settings(data_dir=root / "data"))
    for stream_id, (scenes, speech) in RECORDINGS.items():
        path = root / f"{stream_id}.mp4"
        samples.make_recording(path, [samples.Scene(**s) for s in scenes],
                               [samples.Speech(t=t, text=x) for t, x in speech])
        ingest_file(path, stream_id, components)
    service = MemoryQA(components)
    service.prepare()
    yield service
    components.close()


def _ask(qa, question, options=()):
    from episodic.core.query import AskRequest

    res, trace = qa.ask_traced(AskRequest(question, options=tuple(options)))
    assert 0.0 <= res.confidence <= 1.0
    assert "signals" in trace.notes and "raw" in trace.notes["signals"]
    return res


@pytest.mark.slow
def test_end_to_end_answers(qa):
    transcript = " ".join(p.text for m in qa.c.store.list_memories("lobby-cam") for p in m.transcript)
    transcript += " " + " ".join(p.text for m in qa.c.store.list_memories("garden-cam") for p in m.transcript)

    res = _ask(qa, "What was mentioned right after the welcome to the hotel?",
               ["the swimming pool", "breakfast", "the roses"])
    assert res.choice_index == 1, (res, transcript)

    res = _ask(qa, "Which camera showed someone talking about a cat?",
               ["the lobby camera", "the garden camera"])
    assert res.choice_index == 1, (res, transcript)

    if "8:15" in term_set(transcript):  # the recogniser heard the time (as "8.15", "815", …)
        res = _ask(qa, "When is breakfast served?", ["Seven thirty", "Eight fifteen", "Nine o'clock"])
        assert res.choice_index == 1, (res, transcript)

    res = _ask(qa, "What is the name of the hotel?", ["Southgate", "Northwind", "Riverside"])
    assert res.choice_index == 1, (res, transcript)

    res = _ask(qa, "What is the name of the cat?")
    first = res.answer.split()[0].strip(".,(\"")
    assert sounds_alike(first, "Milo"), (res, transcript)  # the name first, then the citation
    assert res.evidence and res.evidence[0].modality in ("speech", "summary"), res

    # on-screen text asked for in other words than "read" or "written sign": the named stream's
    for question in ("What was written on screen in garden-cam?", "What did the sign in garden-cam say?",
                     "What gate number was shown?"):
        res = _ask(qa, question)
        assert "9" in res.answer.split("(")[0] and "LOBBY" not in res.answer, (question, res)
        assert res.evidence and res.evidence[0].modality == "ocr", (question, res)
    res = _ask(qa, "What was written on screen in lobby-cam?")
    assert "LOBBY" in res.answer.split("(")[0].upper() and "GATE" not in res.answer, res

    res = _ask(qa, "What happened first, the swimming pool opening or breakfast?")
    assert "breakfast" in res.answer.split("(")[0].lower(), (res, transcript)

    # "what picture was on screen while …" is read from the frames of that moment
    from episodic.core.query import AskRequest

    _, trace = qa.ask_traced(AskRequest("What picture was on screen while someone talked about the cat?",
                                        options=("a motorcycle", "a clock", "coins")))
    assert trace.notes["signals"].get("route") == 10.0, trace.notes["signals"]

    # an open which-stream question is answered by the stream, not by restating what was said
    res = _ask(qa, "In which recording was the cat mentioned?")
    assert res.answer.startswith("garden-cam"), (res, transcript)

    # the answer is an order word: both things are placed in time and compared
    res = _ask(qa, "Was the swimming pool opening mentioned before or after breakfast?", ["Before it", "After it"])
    assert res.choice_index == 1, (res, transcript)
    res = _ask(qa, "Was breakfast mentioned before or after the swimming pool opening?")
    assert res.answer.startswith("before"), (res, transcript)


@pytest.mark.slow
def test_end_to_end_questions_worded_freely(qa):
    """A contraction, a request around the question or the thing asked first (session 82's
    rewordings) gets the answer the careful wording gets; a question about something never
    said is still refused, however it is asked."""
    for question in ("When's the train to London leaving?", "Tell me when the train to London leaves.",
                     "Do you know when the train to London leaves?", "The train to London leaves at what time?"):
        res = _ask(qa, question)
        assert "11:20" in canonical_tokens(res.answer.split("(")[0]), (question, res)
    # a word that says what kind of fact is wanted ("start time", "location") is no thing to find
    for question in ("What's the start time of breakfast?", "Can you tell me the opening time of the swimming pool?"):
        res = _ask(qa, question)
        assert res.answer != NOTHING_FOUND, (question, res)
    # the question is embedded as the analysis reads it
    import numpy as np

    vec, analysis = qa._analyse("When's the train to London leaving?")
    assert analysis.question == "When is the train to London leaving?"
    assert np.allclose(vec, qa.c.embedder.embed_texts(["When is the train to London leaving?"])[0])
    # ... and the answer stages read the shape of that plain wording: a time is asked
    from episodic.core.query import AskRequest

    _, trace = qa.ask_traced(AskRequest("When's the train to London leaving?"))
    assert trace.analysis.shape.focus == "time", trace.analysis.shape
    # a kind of fact the wording rules do not read, from the nearest example questions
    for question, focus in (("At what point in the day does the train to London leave?", "time"),
                            ("What's the location of the red umbrella?", "place"),
                            ("What did they say about the weather?", "any"),
                            ("According to the sign, on which day is it closed?", "any")):
        _, trace = qa.ask_traced(AskRequest(question))
        assert trace.analysis.shape.focus == focus, (question, trace.analysis.shape)
    res = _ask(qa, "At what point in the day does the train to London leave?")
    assert "11:20" in canonical_tokens(res.answer.split("(")[0]), res
    # a question about the whole recording, however worded, gets its gist
    for question in ("What's the lobby-cam video about?", "Describe the setting of the lobby-cam recording."):
        res = _ask(qa, question)
        assert res.answer.startswith("probably a hotel"), (question, res)
    for question in ("When's the train to Oxford leaving?", "Tell me when the train to Oxford leaves."):
        res = _ask(qa, question)
        assert res.answer == NOTHING_FOUND and res.confidence == 0.0, (question, res)


@pytest.mark.slow
def test_end_to_end_unanswerable_is_refused(qa):
    res = _ask(qa, "When does the train to Oxford leave?")
    assert res.answer == NOTHING_FOUND and res.confidence == 0.0, res
    control = _ask(qa, "When does the train to London leave?")
    assert control.answer != NOTHING_FOUND and control.confidence > 0.3, control
    assert "11:20" in canonical_tokens(control.answer), control
    # a thing someone owns is what is asked about: Milo is in memory, his basket is not; the
    # hotel owns the pool, the question is about the pool (session 85)
    for question in ("Beside what is Milo's basket?", "Where is Milo's basket?"):
        res = _ask(qa, question)
        assert res.answer == NOTHING_FOUND and res.confidence == 0.0, (question, res)
    res = _ask(qa, "What time does the hotel's swimming pool open?")
    assert res.answer.startswith("noon") and res.confidence > 0.3, res


# -- refusing what the memory does not hold, sounds, counts, a stream's gist (issue 12) -----
@pytest.mark.parametrize(
    "question, objects",
    [
        ("Who is repairing the umbrella?", ["umbrella"]),
        ("What did the weather forecast say about snow?", ["weather", "snow"]),
        ("Where was the suitcase left by Daniel?", ["suitcas"]),
        ("What is the price of the seed packet today?", ["packet"]),  # price, today: generic
        ("At what time does the harvest festival begin?", ["festival"]),  # not the verb
        ("Where is the red car parked?", ["car"]),
        ("According to the sign in garden-cam, on which day is it closed?", []),
        ("What is the name of the cat?", ["cat"]),
        # a present-tense verb or a word of time ends the phrase: the thing is before it
        ("What number of seed packets remain, according to Felix?", ["packet"]),
        ("Where is the umbrella now?", ["umbrella"]),
        ("Who takes care of the anchor these days?", ["anchor"]),
        # a word that measures or holds the thing is not the thing ("bottle" heard as "mortal")
        ("How much is a bottle of shampoo?", ["shampoo"]),
        ("How many crates of fish does Sofia have?", ["fish"]),
        ("Where is the bottle now?", ["bottl"]),
        # words that say what kind of fact is wanted, and verbs after the thing (session 82)
        ("What is the location of Maria's spade?", ["spad"]),
        ("What is the count of sandwiches in Amara's bag?", ["sandwich", "bag"]),  # as "in the bag"
        ("What is the start time of the story hour?", ["story"]),
        ("The sailing race kicks off at what time?", ["rac"]),
        ("What does the crate of fish sell for?", ["fish"]),
        ("What is the new room for the story hour?", ["story"]),  # "new" is no thing
        ("What was talked about right before the colour of Grace's anchor?", ["anchor"]),
        # a kind of time and a sum of money are no things (session 84: "What's the closing time
        # written on the sign?" was refused for a sign that says "OPEN UNTIL 10 PM")
        ("What is the closing time written on the sign in garden-cam?", []),
        ("What is the departure time of the night train?", ["train"]),
        ("How much money is the tomato plant?", ["plant"]),
        ("What time does the closing ceremony start?", ["ceremony"]),
        # the thing someone owns, and a thing counted by a number (session 85: "Beside what is
        # Marcus's wrench?" was answered from "Marcus is in charge of the clipboard")
        ("Beside what is Marcus's wrench?", ["wrench"]),
        ("Beside what is Leila’s car jack?", ["jack"]),
        ("How much do they charge for one spark plug?", ["plug"]),
        ("What do 2 tickets cost?", ["ticket"]),
        ("What time does the hotel's swimming pool open?", ["pool"]),
        # …but not what someone does ("Felix's appointment" is "Felix will see …"), nor a time
        # or a sum of money after a number
        ("When is Felix's appointment with the fisherman?", ["fisherma"]),
        ("When is Tom's meeting with the baker today?", ["baker"]),
        ("Who paid 5 dollars at one fifteen?", []),
        ("Anya's order had how many croissants?", ["croissan"]),
        ("How many ropes were in Hannah's shopping today?", ["rop"]),
        # a participle after an adverb describes the thing (found by session 85's blind check)
        ("What colour is Amara's freshly painted fishing net?", ["net"]),
        ("Where is the newly bought lamp?", ["lamp"]),
        # the owner is the thing when what it has is the kind of fact asked; "it's" owns nothing
        ("What's the coffee's price?", ["coffe"]),
        ("Which day does the sign in garden-cam say it's closed?", []),
    ],
)
def test_object_terms_are_the_things_asked_about(question, objects):
    from episodic.retrieval.query_analysis import object_terms_of

    assert [t for t in object_terms_of(question) if t in content_terms(question)] == objects


def _with_objects(question: str, qtype: QueryType = QueryType.AUDIO) -> QueryAnalysis:
    from episodic.retrieval.query_analysis import object_terms_of

    a = _analysis(question, qtype)
    a.object_terms = [t for t in object_terms_of(question) if t in a.terms]
    return a


def test_an_answer_about_another_thing_is_refused():
    from episodic.reasoning.evidence_fit import OBJECT_ELSEWHERE, OBJECT_MISSING, object_coverage

    net = _unit("Tom is repairing the fishing net.")
    a = _with_objects("Who is repairing the umbrella?")
    assert object_coverage(a, net, [net]) == OBJECT_MISSING
    umbrella = _unit("Anna is repairing the umbrella.", t=10.0)
    umbrella.context_terms = frozenset(umbrella.terms)
    assert object_coverage(a, umbrella, [net, umbrella]) == 1.0
    assert object_coverage(a, net, [net, umbrella]) == OBJECT_ELSEWHERE
    # a misrecognised object still counts as present: garbled speech is not refused for it
    caretaker = _with_objects("At what time is Ruth meeting the caretaker?")
    assert object_coverage(caretaker, _unit("Ruth is meeting the caremaker at five."), []) == 1.0


def test_a_missing_name_may_have_been_misheard_only_where_no_other_name_stands():
    """"Where is the wheelbarrow that Hannah put down?" over "And put the wheelbarrow by the
    tool shed.": the name was misheard, the answer is there (at a low confidence); over
    "Daniel put the wheelbarrow …" or "The train to London …" it is about someone (somewhere)
    else, and still refused."""
    from episodic.config import Settings
    from episodic.reasoning.answer import Answerer
    from episodic.reasoning.evidence_fit import KEY_NAME_MISHEARD, name_maybe_misheard

    hannah = _with_objects("Where is the wheelbarrow that Hannah put down?")
    misheard = _unit("And put the wheelbarrow by the tool shed.")
    misheard.cos = 0.7
    assert name_maybe_misheard(hannah, misheard)
    assert not name_maybe_misheard(hannah, _unit("Daniel put the wheelbarrow by the tool shed."))
    assert not name_maybe_misheard(_with_objects("When does the train to Oxford leave?"),
                                   _unit("The train to London leaves at 20 past 11."))
    # a name that sounds loosely like the asked one is that name misheard; another is not
    felix = _with_objects("When is Felix's appointment with the fisherman?")
    assert name_maybe_misheard(felix, _unit("At quarter past 8, Philip's turn an appointment with the fisherman."))
    assert not name_maybe_misheard(felix, _unit("At quarter past 8, Priya has an appointment with the fisherman."))
    # … and so is one heard with another first sound, the rest alike (three sounds or more)
    ines = _with_objects("When is Ines's appointment with the housekeeper?")
    assert name_maybe_misheard(ines, _unit("At 8 .25, Denise does an appointment with the housekeeper."))
    assert name_maybe_misheard(_with_objects("What time must Fatima see the crane operator?"),
                               _unit("Don't forget, Putima has to see the crane operator at 6.10."))
    assert not name_maybe_misheard(_with_objects("When is Zara's appointment with the vet?"),
                                   _unit("At 7.50, Mara has an appointment with the vet."))  # MR / SR: too short
    assert not name_maybe_misheard(_with_objects("Where is the wheelbarrow that Daniel put down?"),
                                   _unit("Hannah put the wheelbarrow by the tool shed."))
    # a given name opening the sentence is a name even when it is also an English word
    assert not name_maybe_misheard(_with_objects("Where is the umbrella that Hannah put down?"),
                                   _unit("Grace put the umbrella by the newspaper kiosk."))
    # the sentence must hold the question's other words too, not just its object
    assert not name_maybe_misheard(_with_objects("Where did Grace leave the cutting board?"),
                                   _unit("Can't board the element madameen this morning."))
    # …but not the words that only say what kind of fact is wanted ("number", "morning");
    # the name's verb is often misheard with it ("Lucas bought" as "You can pause")
    assert name_maybe_misheard(_with_objects("What number of magazines did Lucas buy this morning?"),
                               _unit("You can pause 15 magazines this morning."))
    # "I" (and "OK") is no one's name: "Amara ordered" heard as "And I ordered"
    assert name_maybe_misheard(_with_objects("How many tomato plants did Amara order?"),
                               _unit("And I ordered 14 tomato plants for the team."))
    answerer = Answerer(lambda: None, scorer=None, settings=Settings().retrieval)
    conf, support, caps = answerer.assess(hannah, "the tool shed", [misheard])
    assert caps["key_terms"] == KEY_NAME_MISHEARD and 0.0 < conf <= KEY_NAME_MISHEARD, caps
    daniel = _unit("Daniel put the wheelbarrow by the tool shed.")
    daniel.cos = 0.7
    conf, _, caps = answerer.assess(hannah, "the tool shed", [daniel])
    assert caps["key_terms"] == 0.0 and conf == 0.0, caps


@pytest.mark.parametrize(
    "question, pictured_while, said_while_pictured",
    [
        ("What picture was on screen while someone talked about the rope?", "the rope", ""),
        ("Which image was showing when the seed packet was mentioned?", "the seed packet", ""),
        ("What was shown on screen as the price of the seed packet was discussed?", "the price of the seed packet", ""),
        ("During the talk about the flower show, what picture was displayed?", "the flower show", ""),
        ("What could be seen while the flower show was being talked about?", "the flower show", ""),
        ("Which picture accompanied the mention of the flower show?", "the flower show", ""),
        ("What did the camera show while someone mentioned the anchor?", "the anchor", ""),
        ("What was mentioned while a picture of coins was on screen?", "", "coins"),
        ("What topic came up while an image of a rocket was on screen?", "", "a rocket"),
        ("While a picture of coins was visible, what was mentioned?", "", "coins"),
        ("What was said during the coins picture?", "", "coins"),
        ("Which topic was discussed as the screen showed a cat?", "", "a cat"),
        ("What did Tom say while the photo of coins was on screen?", "", "coins"),
        ("While the photo of the coins was showing, what did people talk about?", "", "the coins"),
        ("What were they talking about when the coins picture was up?", "", "coins"),
        ("What was said while the clock photo was on display?", "", "clock"),
        # not a picture asked at a moment of speech, nor speech asked at a picture
        ("What time was it when the seed packet was mentioned?", "", ""),
        ("What was written on the sign when Tom was mentioned?", "", ""),
        ("What colour was the screen while the rope was talked about?", "", ""),
        ("What was talked about while the screen was black?", "", ""),
        ("In harbour-cam, what was said while nothing could be seen?", "", ""),  # said while dark
        ("When was the sign for the west pier on screen?", "", ""),
        ("What was mentioned as the price of the rope?", "", ""),
        ("Which camera showed a cat when the music played?", "", ""),
    ],
)
def test_a_moment_named_by_what_was_said_or_shown(question, pictured_while, said_while_pictured):
    shape = question_shape(question, 4)
    assert shape.said_while_dark == ("black" in question or "nothing could be seen" in question)
    assert (shape.pictured_while, shape.said_while_pictured) == (pictured_while, said_while_pictured)
    if pictured_while or said_while_pictured:  # cross-modal however it is worded
        analysis = QueryAnalyzer(HashEmbedder()).analyze(question)
        assert analysis.query_type is QueryType.VIDEO_AUDIO
        assert (analysis.cue_modality, analysis.target_modality) == (
            ("speech", "visual") if pictured_while else ("visual", "speech"))


def test_words_that_name_no_fact_are_not_looked_for():
    analyzer = QueryAnalyzer(HashEmbedder())
    # the recording and its verb are what is asked for, not words to find in it
    assert analyzer.analyze("On which of the cameras could a cat be seen?").terms == ["cat"]
    assert analyzer.analyze("In which of the recordings was the ferry mentioned?").terms == ["ferry"]
    # a topic in a sequence is something said: "which topic followed X?" is not a gist question,
    # and what "came up" was raised in conversation
    for q in ("Which topic preceded the price of the ticket?", "Directly after the rope, which topic followed?",
              "Which came up earlier, the rope or the ferry?", "What came up next after the price of the rope?"):
        assert analyzer.analyze(q).query_type in (QueryType.AUDIO, QueryType.VIDEO_AUDIO), q
    # the framing of an order or count question is not looked for: the anchor is
    assert analyzer.analyze("Directly after the price of the rope, which topic followed?").terms == ["pric", "rop"]
    assert analyzer.analyze("On how many occasions did the robin come up?").terms == ["robin"]


def test_when_something_said_begins_is_no_end_of_the_recording():
    """"At what time does the flower show begin?" asks when a thing said begins: it used to be
    taken as "at the start of the recording", which raised the first moments of every stream
    above the sentence that answers. The same for "closing time" and "how long … last"."""
    analyzer = QueryAnalyzer(HashEmbedder())
    for q in ("At what time does the flower show begin?", "What time does the poetry reading begin?",
              "What closing time was written on the sign?", "How long did the meeting last?",
              "What are the opening hours of the bakery?"):
        assert analyzer.analyze(q).position is None, q
    for q, edge in (("What was said at the beginning?", "start"), ("What was the first sign shown?", "start"),
                    ("What was said last?", "end"), ("What was said in the closing remarks?", "end")):
        assert analyzer.analyze(q).position == edge, q
    # "show" followed by what an event does is the event, not the verb of seeing
    assert "visual" not in analyzer.analyze("When does the flower show begin?").cues
    assert "visual" in analyzer.analyze("What does the sign show?").cues


def test_a_time_question_typed_visual_with_no_word_of_seeing_also_looks_in_speech():
    """A time is said or written: a question typed visual only by resembling questions about
    pictures ("At what time does the flower show begin?") keeps speech among its modalities,
    so the sentence saying "2.10" is recalled; one that says it is about what was seen does not."""
    shown = QueryAnalysis("At what time does the flower show begin?", QueryType.VIDEO, {}, "", ["flow", "show"],
                          "any", shape=question_shape("At what time does the flower show begin?"))
    assert shown.preferred_modalities == ("ocr", "visual", "speech")
    clock = "What time did the clock on the wall show?"
    seen = QueryAnalysis(clock, QueryType.VIDEO, {}, "", ["clock", "wall"], "any",
                         cues={"visual": ["show"]}, shape=question_shape(clock))
    assert seen.preferred_modalities == ("ocr", "visual")
    colour = "What colour is the sky?"
    assert QueryAnalysis(colour, QueryType.VIDEO, {}, "", ["sky"], "any",
                         shape=question_shape(colour)).preferred_modalities == ("ocr", "visual")


def test_summary_template_words_are_never_the_answer():
    unit = _unit('Someone says "I can\'t hear that". Seen: camera panning. Heard: music playing.', "summary")
    for q in ("Name one person who was mentioned in the garden recording.", "What was going on in the garden?"):
        span = span_in(unit, _analysis(q))
        assert span is None or not {"Seen", "Heard", "Someone", "says"} & set(span.text.split()), span


@pytest.mark.parametrize(
    "question, sound, gist",
    [
        ("Besides people talking, what could you hear in garden-cam?", True, ""),
        ("What could be heard while the picture was dark in harbour-cam?", True, ""),
        ("What sound is heard after the bell?", True, ""),
        ("What could you hear Tom say about the train?", False, ""),
        ("Which non-speech sound was in garden-cam?", True, ""),
        ("What background noise was there in the lobby?", True, ""),
        ("What is the garden-cam recording mostly about?", False, "topic"),
        ("What is the main subject of harbour-cam?", False, "topic"),
        ("Name one person who was mentioned in the library-cam recording.", False, "people"),
        ("Who is one of the people talked about in clinic-cam?", False, "people"),
        ("Which people are mentioned in the lobby recording?", False, "people"),
        ("Who was discussed in cam-2?", False, "people"),
        ("What is one of the names on the sign?", False, ""),
        ("Who is the person at the door?", False, ""),
        ("What is the name of the cat?", False, ""),
        ("What is happening in the lobby-cam recording, overall?", False, "topic"),
        ("Which setting does harbour-cam show?", False, "topic"),
        ("Which place does Tom mention?", False, ""),
        # worded freely: only a stream's name and words asking for its gist (session 82)
        ("Describe the setting of the garden-cam recording.", False, "topic"),
        ("Where was the garden-cam recording made?", False, "topic"),
        ("What's the lobby video about?", False, "topic"),
        ("What theme does the kitchen feed have?", False, "topic"),
        ("What do people talk about in cam-2?", False, "topic"),
        ("Can you name anyone that the speaker in garden-cam talked about?", False, "people"),
        ("Mention a person whose name was said in cam2.", False, "people"),
        # …and not when another word names something in it, or nothing looks like a stream
        ("What is garden-cam?", False, ""),
        ("Where was the spade left in garden-cam?", False, ""),
        ("What did Tom say in garden-cam?", False, ""),
        ("Who is the cat?", False, ""),
        ("What was shown in garden-cam?", False, ""),
        # more wordings from session 82's rewordings and its check
        ("What goes on in harbour-cam?", False, "topic"),
        ("Who gets a mention in museum-cam?", False, "people"),
        ("What non-voice sound was in garden-cam?", True, ""),
        ("Which names did you hear in garden-cam?", False, "people"),  # names heard are said
    ],
)
def test_sound_and_gist_shapes(question, sound, gist):
    shape = question_shape(question)
    assert (shape.sound, shape.gist) == (sound, gist)


def _memory(stream_id, t0, said=(), sounds=(), dark=False):
    import numpy as np

    from episodic.core.records import (
        FrameObservation,
        ShortTermMemory,
        SoundObservation,
        TranscriptPiece,
    )

    return ShortTermMemory(
        id=f"{stream_id}@{t0}", stream_id=stream_id, t_start=t0, t_end=t0 + 10.0, vector=np.zeros(4),
        transcript=[TranscriptPiece(t0 + i, t0 + i + 1.0, x) for i, x in enumerate(said)],
        frames=[FrameObservation(t=t0, description="a dark frame" if dark else "a scene",
                                 quality="dark" if dark else "")],
        sounds=[SoundObservation(t0 + a, t0 + b, kind, 0.9, desc) for a, b, kind, desc in sounds],
    )


def _structured(memories, embed: bool = False, hashed: bool = False):
    from types import SimpleNamespace

    from episodic.config import Settings
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader

    store = ListingStore(memories)
    if hashed:  # options matched by their words (a hashing embedder's cosines say little)
        from episodic.retrieval.detailed import TextScorer
        from tests.fakes import HashEmbedder

        scorer = TextScorer(HashEmbedder())
    elif embed:  # a stream's topic is compared with places and activities by the text embedder
        from episodic.memory.text_embedder import MiniLMEmbedder
        from episodic.retrieval.detailed import TextScorer

        scorer = TextScorer(MiniLMEmbedder(Settings()))
    else:
        scorer = SimpleNamespace(reuse_visual_vectors=False)  # most free-form answers embed nothing
    return StructuredAnswerer(store, scorer=scorer, settings=Settings().retrieval), MemoryReader(store)


def _shaped(question: str) -> QueryAnalysis:
    a = _with_objects(question)
    a.shape = question_shape(question)
    return a


STREAMS = [
    _memory("garden-cam", 0.0, ["The lawn mower is broken.", "Priya ordered tomato plants."],
            [(0, 10, "music", "music playing")]),
    _memory("garden-cam", 10.0, ["Daniel fixed the lawn mower, the long mower."], [(0, 4, "noise", "loud noise")]),
    _memory("garden-cam", 20.0, ["Tomato plants again, and the lawn mower."],
            [(0, 10, "engine", "an engine running")], dark=True),
    _memory("harbour-cam", 0.0, ["The ferry leaves at noon.", "The lawn mower is in the shed."],
            [(0, 10, "applause", "applause, people clapping")]),
]


def test_counting_mentions_in_a_named_stream():
    from episodic.core.query import Scope

    answerer, reader = _structured(STREAMS)
    draft = answerer.count(_shaped("How many times was the lawn mower mentioned in garden-cam?"), (), [], Scope(), reader)
    assert draft is not None and draft.source == "count"
    assert draft.answer.startswith("3 times"), draft.answer  # not the harbour's mention


def test_a_count_chosen_among_options_is_not_claimed_as_sure():
    """One mention misheard past recognition makes a count wrong: a count chosen among options
    is offered below 0.75 once calibrated (on the dev sets such answers were right about four
    times in five, short of the nine in ten that 0.75 and above promise)."""
    from episodic.core.query import Scope
    from episodic.reasoning.confidence import calibrate

    answerer, reader = _structured(STREAMS)
    options = ("once", "twice", "three times", "four times")
    draft = answerer.count(_shaped("How many times was the lawn mower mentioned in garden-cam?"), options, [],
                           Scope(), reader)
    assert draft is not None and draft.choice_index == 2, draft
    signals = {**draft.caps, "options": len(options), "source": draft.source}
    assert 0.5 < calibrate(draft.confidence, signals) < 0.75, (draft.confidence, signals)


def test_counting_mentions_of_a_thing_that_is_also_a_word_of_hearing():
    """"siren" tells the analysis what to listen for, so it is no content word of "How many
    times was the siren mentioned in fire-cam?"; it is still what is counted."""
    from episodic.core.query import Scope

    fire = [_memory("fire-cam", 0.0, ["There is the siren again.", "Luca left the helmet by the tower."]),
            _memory("fire-cam", 10.0, ["At 815, Greta has an appointment with the firefighter."]),
            _memory("fire-cam", 20.0, ["Look, the siren is here."]),
            _memory("salon-cam", 0.0, ["I can hear the siren outside."])]
    answerer, reader = _structured(fire)
    draft = answerer.count(_shaped("How many times was the siren mentioned in fire-cam?"), (), [], Scope(), reader)
    assert draft is not None and draft.answer.startswith("2 times"), draft


@pytest.mark.parametrize("question, times", [
    ("How many times was the jet engine mentioned in airport-cam?", "1 time"),
    ("In airport-cam, how often did someone talk about the jet engine?", "1 time"),
    ("How many times could the engine be heard in airport-cam?", "2 times"),  # the sound counts here
])
def test_a_mention_is_said_not_an_engine_heard(question, times):
    """An engine running is no mention of the jet engine: counted mentions are words said (or
    written), not sounds heard; a question about hearing it counts the sound too."""
    from episodic.core.query import Scope

    airport = [_memory("airport-cam", 0.0, ["Look, the jet engine is here.", "Mei left the passport by the gate."]),
               _memory("airport-cam", 110.0, ["The weather looks fine today."],
                       [(2, 12, "engine", "an engine running")])]
    answerer, reader = _structured(airport)
    draft = answerer.count(_shaped(question), (), [], Scope(), reader)
    assert draft is not None and draft.answer.startswith(times), draft


def test_a_count_of_mentions_is_told_from_one_of_sightings_or_sounds():
    from episodic.reasoning.time_answers import counts_mentions

    assert counts_mentions("How many times was the flower show mentioned in garden-cam?")
    assert counts_mentions("In site-cam, how often did someone talk about the sound check?")
    assert not counts_mentions("How many times could a siren be heard?")
    assert not counts_mentions("How many times was the dog seen on screen?")
    assert not counts_mentions("How many times did the clock appear?")

def test_sounds_besides_speech_come_from_sound_units():
    from episodic.core.query import Scope

    answerer, reader = _structured(STREAMS)
    draft = answerer.sounds(_shaped("Besides people talking, what could you hear in garden-cam?"), (), Scope(), reader)
    assert draft is not None and draft.answer.startswith("music playing"), draft  # named before noise
    draft = answerer.sounds(_shaped("What could be heard while the picture was dark in garden-cam?"), (), Scope(), reader)
    assert draft is not None and draft.answer.startswith("an engine running"), draft
    assert answerer.sounds(_shaped("What did Tom say about the ferry?"), (), Scope(), reader) is None


def test_of_two_sounds_heard_the_option_heard_longer_is_chosen():
    """An engine heard for ten seconds and a one-second window taken for applause: asked which
    of the two could be heard, the engine, clearly; with the engine heard as briefly as the
    applause, the time heard no longer separates them."""
    from episodic.core.query import Scope

    library = [_memory("library-cam", 0.0, ["The printer is broken."], [(0, 1, "applause", "applause, people clapping")]),
               _memory("library-cam", 10.0, ["Look at the clock."], [(0, 10, "engine", "an engine running")]),
               _memory("library-cam", 20.0, ["Quiet now."], [(0, 10, "noise", "background noise")])]
    answerer, reader = _structured(library, hashed=True)
    question = _shaped("Besides speech, what could be heard in the library-cam recording?")
    options = ("birdsong", "applause", "a telephone ringing", "an engine")
    draft = answerer.sounds(question, options, Scope(), reader)
    assert draft is not None and draft.choice_index == 3, draft
    assert draft.caps["margin"] > 0.3, draft.caps
    library[1] = _memory("library-cam", 10.0, ["Look at the clock."], [(0, 1, "engine", "an engine running")])
    answerer, reader = _structured(library, hashed=True)
    draft = answerer.sounds(question, options, Scope(), reader)
    assert draft is not None and draft.caps["margin"] < 0.2, draft.caps


def test_where_a_named_sound_was_heard_is_answered_by_its_stream():
    from episodic.core.query import Scope

    answerer, reader = _structured(STREAMS)
    # the sound the question names, not the longest other one (music in garden-cam)
    draft = answerer.sounds(_shaped("Where could you hear applause?"), (), Scope(), reader)
    assert draft is not None and draft.answer.startswith("harbour-cam (heard: applause"), draft
    draft = answerer.sounds(_shaped("When could you hear an engine?"), (), Scope(), reader)
    assert draft is not None and draft.answer.startswith("an engine running"), draft
    # which camera: the stream that held the named sound longest, not one short mislabel
    mislabel = [*STREAMS, _memory("library-cam", 0.0, ["The printer is broken."],
                                  [(0, 2, "applause", "applause, people clapping")])]
    answerer, reader = _structured(mislabel)
    options = ("garden-cam", "library-cam", "harbour-cam")
    for question in ("Which camera picked up applause?", "In which recording could people be heard clapping?"):
        draft = answerer.which_stream(_shaped(question), np.zeros(4, dtype=np.float32), options, Scope(), reader)
        assert draft is not None and draft.choice_index == 2 and draft.support[0].modality == "sound", (question, draft)


class _SearchingStore(ListingStore):
    """A listing store whose vector search offers every memory in scope (the answerer ranks
    their sentences itself)."""

    def search_memory_ids(self, q_vec, source, top_k=10, modality=None, stream_ids=None, t_min=None,
                          t_max=None, **_):
        return [(m.id, 0.5) for m in self.list_memories(stream_ids)][:top_k]

    def get_memories(self, ids, with_vectors=False):
        return {m.id: m for m in self.memories if m.id in set(ids)}

    def get_events(self, ids):
        return {}


def test_an_open_which_stream_question_is_answered_as_if_every_stream_were_offered():
    """"In which recording was the time of the flower show mentioned?" asked without options:
    each stream judged by its own best sentence (the misheard "flower shore" in garden-cam),
    answered by the stream's name and where it was heard; a thing said nowhere gets no
    stream (the evidence extract then answers or refuses, as before), and a question that
    offers options, asks no stream or has one stream to choose from is not one of these."""
    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer

    memories = [
        _memory("garden-cam", 0.0, ["Lucas has to see the volunteer at 8.50.",
                                    "Everyone sends the flower shore of the map, 1020 sharp."]),
        _memory("harbour-cam", 0.0, ["The ferry leaves at noon.", "Tom ordered ropes for the team."]),
        _memory("kitchen-cam", 0.0, ["The soup tasting has moved to room 327.", "Ask Hannah about the apron."]),
    ]
    store = _SearchingStore(memories)
    embedder = MiniLMEmbedder(Settings())
    answerer = StructuredAnswerer(store, scorer=TextScorer(embedder), settings=Settings().retrieval)
    reader, analyzer = MemoryReader(store), QueryAnalyzer(embedder)

    def asked(question: str) -> tuple[QueryAnalysis, np.ndarray]:
        vec = np.asarray(embedder.embed_texts([question])[0], dtype=np.float32)
        analysis = analyzer.analyze(question, vec)
        analysis.shape = question_shape(question)
        return analysis, vec

    flower, vec = asked("In which recording was the time of the flower show mentioned?")
    streams = answerer.streams_as_options(flower, (), Scope(), reader)
    assert streams == ["garden-cam", "harbour-cam", "kitchen-cam"]
    draft = answerer.which_stream_open(flower, vec, streams, Scope(), reader)
    assert draft is not None and draft.choice_index is None, draft
    assert draft.answer.startswith('garden-cam (heard: "Everyone sends the flower shore'), draft.answer

    dog, vec = asked("In which recording was the dog mentioned?")
    assert answerer.which_stream_open(dog, vec, answerer.streams_as_options(dog, (), Scope(), reader),
                                      Scope(), reader) is None
    assert answerer.streams_as_options(flower, ("garden-cam", "kitchen-cam"), Scope(), reader) == []
    assert answerer.streams_as_options(asked("When does the flower show open?")[0], (), Scope(), reader) == []
    assert answerer.streams_as_options(flower, (), Scope(stream_ids=("garden-cam",)), reader) == []


def test_the_sentence_next_to_the_anchor_is_heard_again_when_it_matches_no_option():
    """"What came up next after the time of the flower show?": the sentence after it is where
    the answer must be; heard as "If you need the real value, or mark it, set up the compost
    key." it matches no option, so it is heard again first (with the options' words). Heard
    well, nothing is; asked without options, re-listening keeps its own choice."""
    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer

    def answerer_over(next_said: str):
        memories = [_memory("garden-cam", 0.0, ["Lucas has to see the volunteer at 8.50."]),
                    _memory("garden-cam", 10.0, ["Everyone says the flower show opens at ten twenty sharp."]),
                    _memory("garden-cam", 20.0, [next_said]),
                    _memory("garden-cam", 30.0, ["The harvest festival is in room 312."])]
        store = _SearchingStore(memories)
        scorer = TextScorer(MiniLMEmbedder(Settings()))
        return StructuredAnswerer(store, scorer=scorer, settings=Settings().retrieval), MemoryReader(store)

    question = _shaped("What came up next after the time of the flower show?")
    options = ("where Omar left the wheelbarrow", "the room for the harvest festival",
               "Lucas's appointment with the volunteer")
    answerer, reader = answerer_over("If you need the real value, or mark it, set up the compost key.")
    targets = answerer.listen_targets(question, options, [], Scope(), reader)
    assert targets and targets[0].text.startswith("If you need the real value"), targets
    assert all(u.memory_id != "garden-cam@0.0" for u in targets), targets  # nothing before the anchor
    assert answerer.listen_targets(question, (), [], Scope(), reader) is None
    answerer, reader = answerer_over("If you need the wheelbarrow, Omar keeps it at the compost heap.")
    assert answerer.listen_targets(question, options, [], Scope(), reader) == []


def test_show_the_event_is_not_show_the_verb():
    """"the flower show" names an event, not something seen: a question about where it was
    mentioned has no visual cue (it was typed cross-modal and its misheard sentence never
    heard again); "what did the camera show?" keeps its verb."""
    analyzer = QueryAnalyzer(HashEmbedder())
    for question in ("In which recording was the time of the flower show mentioned?", "When is the show?"):
        assert "visual" not in analyzer.analyze(question).cues, question
    for question in ("What did the camera show?", "Which camera shows a rocket?", "Did the slide show a chart?"):
        assert "show" in " ".join(analyzer.analyze(question).cues.get("visual", ())), question


def test_a_query_naming_a_sound_in_any_form_asks_about_sounds():
    """"people applauding", "a dog barking", "a telephone ringing" name sounds as surely as
    "applause": sound evidence counts for them (and Search never offers a sentence that merely
    sounds like the words for them)."""
    a = QueryAnalyzer(HashEmbedder())
    for q in ("people applauding", "a dog barking", "a telephone ringing", "the crowd cheered", "music playing"):
        assert a.analyze(q).asks_sound and "sound" in a.analyze(q).preferred_modalities, q
    for q in ("someone mentions the robin", "the price of the novel"):
        assert not a.analyze(q).asks_sound, q


def test_a_question_about_text_on_screen_needs_no_picture_word():
    a = QueryAnalyzer(HashEmbedder())
    for q in ("What was written on screen in garden-cam?", "What did the sign say?", "What does the banner read?",
              "Which words were shown on screen?"):
        assert a.analyze(q).asks_text, q
    for q in ("What did Maria read?", "What words did Tom say?", "What is the name of the cat?"):
        assert not a.analyze(q).asks_text, q
    from episodic.reasoning.answer import reads_text

    # the text is the answer, unless the question asks when it was shown
    assert reads_text(a.analyze("What time did the sign say?"))
    assert not reads_text(a.analyze("When was the sign for the west pier on screen?"))
    assert not reads_text(a.analyze("At what time was the sign shown?"))


def test_a_stream_is_named_by_its_id_written_out():
    from episodic.retrieval.detailed import stream_named_in

    streams = ["garden-cam", "harbour-cam", "live", "cam2"]
    assert stream_named_in("What was written on screen in garden-cam?", streams) == "garden-cam"
    assert stream_named_in("What did CAM2 show at noon?", streams) == "cam2"
    assert stream_named_in("Where does Tom live?", streams) is None  # an everyday word
    assert stream_named_in("Was it garden-cam or harbour-cam?", streams) is None  # two
    assert stream_named_in("What did the garden-cams show?", streams) is None  # not the id itself


def test_which_camera_picked_up_a_thing_is_not_looking_for_the_word_picked():
    a = QueryAnalyzer(HashEmbedder())
    assert "pick" not in a.analyze("Which camera picked up the engine?").terms
    assert "record" not in a.analyze("Which recording recorded the ferry horn?").terms
    assert "engin" in a.analyze("Which camera picked up the engine?").terms
    assert "pick" in a.analyze("Who picked the apples?").terms  # a fact, when no stream is asked for


def test_what_was_said_while_the_screen_was_dark():
    from episodic.core.query import Scope

    answerer, reader = _structured(STREAMS)
    question = "What was talked about while the screen was dark in garden-cam?"
    assert question_shape(question).said_while_dark and not question_shape(question).sound
    draft = answerer.said_while_dark(_shaped(question), (), Scope(), reader)
    assert draft is not None and "Tomato plants again" in draft.answer, draft  # 20–30 s, the dark one
    assert "Priya" not in draft.answer and "Daniel" not in draft.answer
    # no dark frame in the harbour: nothing to say (the ordinary path answers)
    assert answerer.said_while_dark(_shaped("What was said while the screen was black in harbour-cam?"),
                                    (), Scope(), reader) is None
    assert answerer.said_while_dark(_shaped("What did Tom say about the ferry?"), (), Scope(), reader) is None
    # a dark stretch with no words: that is the answer (with what could be heard), not a
    # sentence from elsewhere; with options the ordinary path chooses
    quiet = [_memory("pier-cam", 0.0, ["The ferry leaves at noon."]),
             _memory("pier-cam", 10.0, [], [(0, 10, "music", "music playing")], dark=True)]
    quiet_answerer, quiet_reader = _structured(quiet)
    draft = quiet_answerer.said_while_dark(_shaped("What was said while the screen was dark?"), (), Scope(), quiet_reader)
    assert draft is not None and draft.answer.startswith("No words were heard while the picture was dark; heard: music"), draft
    assert "ferry" not in draft.answer and "pier-cam, 10.0–20.0 s" in draft.answer
    assert quiet_answerer.said_while_dark(_shaped("What was said while the screen was dark?"), ("the ferry", "the rain"),
                                          Scope(), quiet_reader) is None
    # units read from a store carry their vectors: the same sentence read twice (two dark
    # frames in one memory) is one, and units are never compared by their arrays
    import copy

    import numpy as np

    read = answerer._stream_units

    def with_vectors(*args):
        units = read(*args)
        for u in units:
            u.vector = np.ones(4, dtype=np.float32)
        again = [copy.copy(u) for u in units]
        for u in again:
            u.vector = np.ones(4, dtype=np.float32)
        return units + again

    answerer._stream_units = with_vectors
    draft = answerer.said_while_dark(_shaped(question), (), Scope(), reader)
    assert draft is not None and len(draft.support) == 1, draft


def test_said_while_dark_misheard_rules_out_the_options_said_clearly_elsewhere():
    """The sentence heard while the screen was dark matches no option (misheard beyond
    recognition): the two options said clearly elsewhere are ruled out and the choice is among
    the two found nowhere, at a guess's confidence, never one of the ruled-out two."""
    from episodic.core.query import Scope
    from episodic.reasoning.time_answers import ELIMINATION_CONFIDENCE

    memories = [_memory("pier-cam", 0.0, ["The ferry leaves at noon from the pier."]),
                _memory("pier-cam", 10.0, ["Look, the seagull is sitting on the railing."]),
                _memory("pier-cam", 20.0, ["Grob flim a wonky dralt zeppo."], dark=True)]
    answerer, reader = _speech_answerer(memories)
    options = ("the ferry", "the seagull", "the anchor", "the fishing net")
    draft = answerer.said_while_dark(_shaped("What was talked about while the screen was dark?"), options,
                                     Scope(), reader)
    assert draft is not None and draft.choice_index in (2, 3), draft
    assert draft.caps.get("eliminated") == 2.0 and draft.confidence <= ELIMINATION_CONFIDENCE, draft
    # misheard but not beyond recognition: of the two left, the one the sentence sounds like
    memories[2].transcript[0].text = "Prey up into the lead open."
    answerer, reader = _speech_answerer(memories)
    for given, right in ((options[:3] + ("the colour of Priya's ladle",), 3),
                         (("the colour of Priya's ladle",) + options[:3], 0)):
        draft = answerer.said_while_dark(_shaped("What was talked about while the screen was dark?"), given,
                                         Scope(), reader)
        assert draft is not None and draft.choice_index == right, (given, draft)


def test_a_moment_whose_words_tell_no_option_is_asked_of_the_audio_and_a_named_thing_outweighs_a_shared_name():
    """"What was talked about while the screen was dark?" with "Ruth will clean the stain after
    lunch." heard then: the sentence tells no option by more than the name Ruth, so the options
    said nowhere else (the spade, not the gardener or the wheelbarrow, said clearly) are
    offered to the audio with each option's thing. Once the sentence names one option's thing
    (as the audio may have carried it), that option is chosen over one sharing its name, which
    MiniLM puts a little nearer ("Ruth's appointment with the gardener": 0.773 against 0.764)."""
    from episodic.core.query import Scope

    memories = [_memory("garden-cam", 0.0, ["Ruth is meeting the gardener at noon."]),
                _memory("garden-cam", 10.0, ["Ruth will clean the stain after lunch."], dark=True),
                _memory("garden-cam", 20.0, ["Tom painted the wheelbarrow blue."])]
    answerer, reader = _speech_answerer(memories)
    question = _shaped("What was talked about while the screen was dark in garden-cam?")
    options = ("Ruth's appointment with the gardener", "who takes care of the spade", "the colour of Tom's wheelbarrow")
    checks = answerer.said_then_checks(question, options, Scope(), reader)
    assert checks is not None, checks
    phrases, candidates, said = checks
    assert phrases == ["gardener", "spade", "wheelbarrow"] and candidates == [1], checks
    assert [u.text for u in said] == ["Ruth will clean the stain after lunch."]
    # no check without options, for another kind of question, or when a word of an option is heard then
    assert answerer.said_then_checks(question, (), Scope(), reader) is None
    assert answerer.said_then_checks(_shaped("What did Ruth say about the spade?"), options, Scope(), reader) is None
    memories[1].transcript[0].text = "Ruth will clean the spade after lunch."
    answerer, reader = _speech_answerer(memories)
    assert answerer.said_then_checks(question, options, Scope(), reader) is None
    draft = answerer.said_while_dark(question, options, Scope(), reader)
    assert draft is not None and draft.choice_index == 1, draft
    # a name alone: the option sharing it, as before
    memories[1].transcript[0].text = "Ruth will clean the stain after lunch."
    answerer, reader = _speech_answerer(memories)
    draft = answerer.said_while_dark(question, options, Scope(), reader)
    assert draft is not None and draft.choice_index == 0, draft
    # the thing named in a sentence otherwise garbled, matching no option well (0.33 at best),
    # and no option said clearly elsewhere to rule out: still that option
    zoo = [_memory("zoo-cam", 0.0, ["The weather looks fine today."]),
           _memory("zoo-cam", 10.0, ["Ram it in the guide of it 13."], dark=True)]
    answerer, reader = _speech_answerer(zoo)
    given = ("the price of the fish", "Anya's appointment with the guide", "Kofi and the melons",
             "the colour of Ravi's camera")
    draft = answerer.said_while_dark(_shaped("What was talked about while the screen was dark in zoo-cam?"), given,
                                     Scope(), reader)
    assert draft is not None and draft.choice_index == 1, draft


def _reading_all_speech(memories):
    """A structured answerer over ``memories`` whose every sentence is a candidate for every
    option (the search that narrows them is not under test), and its store."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import TextScorer, units_of

    store = ListingStore(memories)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    everything = [u for m in memories for u in units_of(m, None, False)]
    answerer._candidates = lambda text, scope, reader, extra: [u for u in everything if u.modality == "speech"]
    return answerer, store


def test_of_two_options_found_nowhere_the_one_the_next_sentence_sounds_like_is_chosen():
    """Right after the dinner service, "Chen and the eggs" was heard as "Can ordered high necks
    for the team"; later "Chen's appointment with the baker" was heard as "Can is meeting the
    maker at eleven". Neither matches well enough to be placed, the other two options were said
    clearly: the choice is between the two found nowhere, by how the sentence right after
    sounds (a weak match further on argues for later, not next), resting on that sentence."""
    from episodic.core.query import Scope
    from episodic.reasoning.time_answers import ELIMINATION_CONFIDENCE
    from episodic.retrieval.detailed import MemoryReader

    answerer, store = _reading_all_speech([
        _memory("kitchen-cam", 0.0, ["Hannah takes care of the apron."]),
        _memory("kitchen-cam", 10.0, ["The dinner service starts at 4.45.", "Can ordered high necks for the team."]),
        _memory("kitchen-cam", 20.0, ["The soup tasting is in room 327."]),
        _memory("kitchen-cam", 30.0, ["Can is meeting the maker at eleven."]),
    ])
    options = ["Chen and the eggs", "who takes care of the apron", "the room for the soup tasting",
               "Chen's appointment with the baker"]
    for given, right in ((options, 0), (options[::-1], 3)):
        draft = answerer.next_to(_shaped("What came up next after the time of the dinner service?"), given, [],
                                 Scope(), MemoryReader(store))
        assert draft is not None and draft.caps.get("eliminated") == 2.0, draft
        assert draft.choice_index == right and draft.confidence <= ELIMINATION_CONFIDENCE, draft
        assert draft.support[0].text.startswith("Can ordered"), draft


def test_of_two_options_found_nowhere_one_asking_a_value_the_sentence_lacks_is_less_likely():
    """Right after the soup tasting, "Ruth bought sixteen eggs" was heard as "Bruce got 16 notes
    this morning", which sounds a little nearer "the colour of Daniel's apron" (never heard)
    than "Ruth and the eggs"; but it holds no colour, and a misheard sentence keeps its value
    more often than its words: the eggs."""
    from episodic.core.query import Scope
    from episodic.retrieval.detailed import MemoryReader

    answerer, store = _reading_all_speech([
        _memory("kitchen-cam", 0.0, ["Priya will clean the cutting board after lunch."]),
        _memory("kitchen-cam", 10.0, ["The soup tasting begins at 9.45.", "Bruce got 16 notes this morning."]),
        _memory("kitchen-cam", 30.0, ["The dinner service is in room 119."]),
    ])
    options = ["Ruth and the eggs", "the colour of Daniel's apron", "who takes care of the cutting board",
               "the room for the dinner service"]
    draft = answerer.next_to(_shaped("What came up next after the time of the soup tasting?"), options, [],
                             Scope(), MemoryReader(store))
    assert draft is not None and draft.caps.get("eliminated") == 2.0, draft
    assert draft.choice_index == 0, draft
    # where the sentence does hold a colour, the option asking for one is the likelier
    answerer, store = _reading_all_speech([
        _memory("kitchen-cam", 0.0, ["Priya will clean the cutting board after lunch."]),
        _memory("kitchen-cam", 10.0, ["The soup tasting begins at 9.45.", "Then we'll paint it late from orange."]),
        _memory("kitchen-cam", 30.0, ["The dinner service is in room 119."]),
    ])
    draft = answerer.next_to(_shaped("What came up next after the time of the soup tasting?"), options, [],
                             Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 1, draft
    # a price heard without its unit is a bare number: neither for nor against the price
    from episodic.reasoning.time_answers import KIND_FIT, TimeAnswers
    from episodic.retrieval.detailed import Unit

    def near(option: str, text: str) -> float:
        return TimeAnswers._option_sounding([option], [Unit("k", "k@0", 0.0, 3.0, "speech", text)])[0]

    def sounds(option: str, text: str) -> float:
        return float(TimeAnswers._sounding_whole(option, [Unit("k", "k@0", 0.0, 3.0, "speech", text)]).max())

    bare, priced, wordless = ("That may have been 54 times that of a cone top.",
                              "That may have been 54 pounds at the cone top.", "That may have been the cone top.")
    assert near("the price of the egg", bare) == pytest.approx(sounds("the price of the egg", bare))
    assert near("the price of the egg", priced) == pytest.approx(min(1.0, sounds("the price of the egg", priced) + KIND_FIT))
    assert near("the price of the egg", wordless) == pytest.approx(max(0.0, sounds("the price of the egg", wordless) - KIND_FIT))


def test_what_a_stream_is_about_names_the_place_its_words_point_to():
    """A few characteristic words ("ladle, apron, oven") leave the listener to guess; the
    answer leads with the setting they point to, with the two they point to about equally,
    and with none when nothing comes near."""
    from episodic.core.query import Scope

    kitchen = [_memory("cam-a", 0.0, ["Ruth will clean the ladle after lunch.", "The oven timer is set."]),
               _memory("cam-a", 10.0, ["Chen painted the apron pink.", "The soup needs more onions."]),
               _memory("cam-b", 0.0, ["The ferry leaves at noon from the pier.", "The seagull is back."])]
    answerer, reader = _structured(kitchen, embed=True)
    draft = answerer.gist(_shaped("What is the cam-a recording mostly about?"), (), Scope(), reader)
    assert draft is not None and draft.answer.startswith("probably a kitchen:"), draft
    draft = answerer.gist(_shaped("What is the cam-b recording mostly about?"), (), Scope(), reader)
    assert draft is not None and draft.answer.startswith("probably a harbour:"), draft
    # the same asked in words no pattern lists
    for question, setting in (("Describe the setting of the cam-a recording.", "a kitchen"),
                              ("Where was the cam-b video made?", "a harbour"),
                              ("What's the cam-a feed about?", "a kitchen")):
        draft = answerer.gist(_shaped(question), (), Scope(), reader)
        assert draft is not None and draft.answer.startswith(f"probably {setting}:"), (question, draft)
    # a stream between two settings (a farm's animals, a garden's plants) names both rather
    # than toss a coin between them, and names no third
    mixed = [_memory("cam-d", 10.0 * i, [t]) for i, t in enumerate((
        "The cows are in the barn.", "The tractor is in the field.", "Water the tomato plants.",
        "The seed packets are in the shed."))] + kitchen[2:]
    answerer, reader = _structured(mixed, embed=True)
    draft = answerer.gist(_shaped("What is the cam-d recording mostly about?"), (), Scope(), reader)
    lead = draft.answer.split(":")[0] if draft is not None else ""
    assert lead.startswith("probably ") and lead.count(" or ") == 1, draft
    assert "a farm" in lead and "a garden" in lead, draft
    vague = [_memory("cam-c", 0.0, ["Everyone seems to be in a good mood.", "Let me check the list once more."])]
    answerer, reader = _structured(vague, embed=True)
    draft = answerer.gist(_shaped("What is the cam-c recording mostly about?"), (), Scope(), reader)
    assert draft is not None and not draft.answer.startswith("probably"), draft


def test_a_streams_gist_and_people_come_from_its_own_words():
    from episodic.core.query import Scope

    answerer, reader = _structured(STREAMS)
    draft = answerer.gist(_shaped("Name one person who was mentioned in the garden-cam recording."), (), Scope(), reader)
    assert draft is not None and draft.answer.split()[0] in ("Priya", "Daniel"), draft
    # a capitalised thing after "the" is not a person ("There is the Robin again.")
    robin = [_memory("garden-cam", 0.0, ["There is the Robin again.", "Look, the book Trolley is here."]),
             _memory("garden-cam", 10.0, ["Look, the Robin is here.", "Hannah put the rake down."])]
    robin_answerer, robin_reader = _structured(robin)
    draft = robin_answerer.gist(_shaped("Name one person who was mentioned in the garden-cam recording."), (), Scope(), robin_reader)
    assert draft is not None and draft.answer.startswith("Hannah"), draft
    # a rare word before a preposition is a misheard sentence, not someone doing something
    misheard = [_memory("library-cam", 0.0, ["Restaint at the Regan Lump Bunk."]),
                _memory("library-cam", 10.0, ["Amara will clean the laptop after lunch."])]
    m_answerer, m_reader = _structured(misheard)
    draft = m_answerer.gist(_shaped("Name one person who was mentioned in the library-cam recording."), (), Scope(), m_reader)
    assert draft is not None and draft.answer.startswith("Amara"), draft
    # a known given name outweighs a misheard word in a subject's place ("Vorbing paid for",
    # where "Grace paid for" was said); an everyday word that is also a name counts as one
    # inside a sentence, not at its start
    station = [_memory("station-cam", 0.0, ["Vorbing paid for the six tickets."]),
               _memory("station-cam", 10.0, ["The conductor meets Hannah at noon."])]
    s_answerer, s_reader = _structured(station)
    draft = s_answerer.gist(_shaped("Name one person who was mentioned in the station-cam recording."), (), Scope(), s_reader)
    assert draft is not None and draft.answer.startswith("Hannah"), draft
    from episodic.retrieval.given_names import is_given_name, name_share

    assert is_given_name("Hannah") and is_given_name("tom") and not is_given_name("Brace")
    # an everyday word that is a name, opening a sentence as the subject of a verb, is one
    # ("Grace ordered …"); not when it opens a sentence otherwise ("Grace period …")
    opening = [_memory("station-cam", 0.0, ["Please put the umbrella behind the newspaper key."]),
               _memory("station-cam", 10.0, ["Grace ordered six tickets for the team."])]
    o_answerer, o_reader = _structured(opening)
    draft = o_answerer.gist(_shaped("Name one person who was mentioned in the station-cam recording."), (), Scope(), o_reader)
    assert draft is not None and draft.answer.startswith("Grace"), draft
    idle = [_memory("station-cam", 0.0, ["Grace period ends soon, please."])]
    i_answerer, i_reader = _structured(idle)
    draft = i_answerer.gist(_shaped("Name one person who was mentioned in the station-cam recording."), (), Scope(), i_reader)
    assert draft is None or not draft.answer.startswith("Grace"), draft
    # names heard equally often: the commoner one (a rare "Oma" is likelier "Omar" misheard)
    assert name_share("Maria") > name_share("Oma") > 0.0 and name_share("Brace") == 0.0
    tied = [_memory("garden-cam", 0.0, ["Oma painted the wheelbarrow yellow."]),
            _memory("garden-cam", 10.0, ["Maria put the watering can by the heap."])]
    t_answerer, t_reader = _structured(tied)
    draft = t_answerer.gist(_shaped("Name one person who was mentioned in the garden-cam recording."), (), Scope(), t_reader)
    assert draft is not None and draft.answer.startswith("Maria"), draft
    # a name after a hyphen is a fragment of a misheard word ("O-Mark" for "Omar painted")
    fragment = [_memory("station-cam", 0.0, ["At 2.40, Omar has an appointment with the driver."]),
                _memory("station-cam", 10.0, ["O-Mark hinted the map up green."])]
    f_answerer, f_reader = _structured(fragment)
    draft = f_answerer.gist(_shaped("Name one person who was mentioned in the station-cam recording."), (), Scope(), f_reader)
    assert draft is not None and draft.answer.startswith("Omar"), draft
    # a currency, a day or a month is no one, nor a capitalised word after a number: with no
    # name heard right ("Felix" misheard), none of them is offered as one
    money = [_memory("library-cam", 0.0, ["You can get a magazine for 442 Euro here."]),
             _memory("library-cam", 10.0, ["On Thursday the lamp moved.", "It costs 3 Quid Tomorrow."]),
             _memory("library-cam", 20.0, ["See you in October, said Philips."])]
    y_answerer, y_reader = _structured(money)
    draft = y_answerer.gist(_shaped("Name one person who was mentioned in the library-cam recording."), (), Scope(), y_reader)
    assert draft is not None and draft.answer.split()[0] not in ("Euro", "Thursday", "Quid", "October"), draft
    answerer, reader = _structured(STREAMS, embed=True)
    draft = answerer.gist(_shaped("What is the garden-cam recording mostly about?"), (), Scope(), reader)
    words = draft.answer.split(" (")[0]
    assert "tomato" in words or "mower" in words, draft  # the stream's own, not the summary's template
    assert "ferry" not in words
    # the people named are not what a stream is about; a capitalised everyday word or a thing
    # also said in lower case is no name
    from episodic.reasoning.stream_gist import spoken_names, topic_words
    from episodic.retrieval.detailed import units_of

    market = [u for m in [_memory("market-cam", 0.0, ["Felix sold the oranges.", "Maria counted the euros, Felix watched.",
                                                     "Look, Oranges again.", "oranges are cheap"])]
              for u in units_of(m, None, False)]
    assert spoken_names(market) == {"felix", "maria"}
    words, _ = topic_words("market-cam", market, {"market-cam": market}, 10)
    assert "oranges" in words and not {"felix", "maria"} & set(words), words


def test_a_streams_topic_is_not_its_days_colours_prices_or_sign_words():
    """"CLOSED ON TUESDAYS" on a sign and "it costs 12 pounds today" are said in one stream
    only, but say when, how much or what colour, never what the stream is about; the setting
    is judged from more words (SETTING_WORDS) than the answer lists (TOPIC_WORDS)."""
    from episodic.reasoning.stream_gist import SETTING_WORDS, TOPIC_WORDS, topic_answer, topic_words
    from episodic.retrieval.detailed import units_of

    said = ["The oven is hot, the soup is ready.", "Closed on Tuesdays, open until four.", "Closed on Tuesdays.",
            "The purple apron costs 12 pounds today.", "A purple apron, 12 pounds today.", "Stir the soup, the oven timer rang.",
            "The baker sliced the bread.", "The recipe needs two onions.", "Chop the onions for the recipe.",
            "The ladle is by the sink.", "The kettle boiled on the stove.", "The fridge holds the butter."]
    own = [u for i, t in enumerate(said) for u in units_of(_memory("kitchen-cam", 10.0 * i, [t]), None, False)]
    other = [u for u in units_of(_memory("garden-cam", 0.0, ["The tomato plants need watering."]), None, False)]
    texts = {"kitchen-cam": own, "garden-cam": other}
    words, _ = topic_words("kitchen-cam", own, texts, 30)
    assert {"soup", "oven"} <= set(words), words
    for noise in ("tuesdays", "closed", "open", "until", "today", "purple", "pounds"):
        assert noise not in words, (noise, words)
    heard: list[list[str]] = []
    draft = topic_answer("kitchen-cam", own, texts, lambda w: heard.append(list(w)) or ["a kitchen, cooking"])
    assert draft is not None and draft.answer.startswith("probably a kitchen: "), draft
    shown = draft.answer.split(": ", 1)[1].split(" (")[0].split(", ")
    assert len(shown) == TOPIC_WORDS and len(heard[0]) == SETTING_WORDS > TOPIC_WORDS, (shown, heard)
    assert heard[0][:TOPIC_WORDS] == shown


def test_a_streams_gist_chooses_between_given_settings():
    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer

    store = ListingStore(STREAMS)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    q = "What is going on in the garden-cam recording, overall?"
    options = ["a ferry port", "gardening: plants and a lawn mower", "a hospital ward"]
    draft = answerer.gist(_shaped(q), options, Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 1, draft
    assert 0.0 < draft.confidence <= 0.5
    # the most characteristic words are misheard ones ("ward", "patients" for what was said in
    # the kitchen): the stream's sentences, nearer to one option than the other streams'
    # sentences are (cam3 is the clinic), still tell its setting
    misheard = [
        _memory("cam1", 0.0, ["Patients wait, the patients again.", "Ruth chopped the onions for the soup."]),
        _memory("cam1", 10.0, ["The patients are in the ward.", "The soup tasting starts at noon."]),
        _memory("cam1", 20.0, ["Priya stirred the pot on the stove.", "Patients, said the nurse."]),
        _memory("cam1", 30.0, ["The ward patients, the nurse, again."]),
        _memory("cam2", 0.0, ["The tomato plants need watering.", "Daniel fixed the lawn mower."]),
        _memory("cam2", 10.0, ["The roses in the flower bed are blooming."]),
        _memory("cam3", 0.0, ["The patient waits for the doctor.", "The nurse checks the blood pressure."]),
    ]
    store = ListingStore(misheard)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    options = ["a community garden", "a medical clinic", "cooking in a kitchen", "a train station"]
    draft = answerer.gist(_shaped("What is the cam1 recording mostly about?"), options, Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 2, draft


def test_topics_sharing_a_word_with_stream_names_are_not_streams_when_the_question_names_one():
    """"What is the main subject of station-cam: a train station, an office meeting, boats in
    a harbour, a community garden?" offers topics, two of which share a word with a stream's
    name: answered as the stream's gist, not as "which camera?" (which took "boats in a
    harbour" for harbour-cam and answered by which stream's evidence was nearest)."""
    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.reasoning.structured_base import offered_streams
    from episodic.retrieval.detailed import MemoryReader, TextScorer

    memories = [
        _memory("station-cam", 0.0, ["Amara is meeting the ticket inspector at noon.", "The train to Leeds is late."]),
        _memory("station-cam", 10.0, ["Platform four, the luggage trolley is here.", "Tickets are sold at the counter."]),
        _memory("station-cam", 20.0, ["The safety announcement starts at nine.", "The train is meeting the timetable."]),
        _memory("harbour-cam", 0.0, ["The ferry leaves at noon.", "Felix moved the fishing net to the dock."]),
        _memory("harbour-cam", 10.0, ["The boats are back in the harbour."]),
        _memory("garden-cam", 0.0, ["The tomato plants need watering.", "Daniel fixed the lawn mower."]),
    ]
    store = ListingStore(memories)
    embedder = MiniLMEmbedder(Settings())
    answerer = StructuredAnswerer(store, scorer=TextScorer(embedder), settings=Settings().retrieval)
    streams = ["station-cam", "harbour-cam", "garden-cam"]
    options = ["a train station", "an office meeting", "boats in a harbour", "a community garden"]
    q = "What is the main subject of station-cam?"
    assert offered_streams(_shaped(q), options, streams) == [None] * 4
    # asked for a stream, or naming none, the same options still name streams
    asked = "Which camera recorded the talk about trains?"
    assert offered_streams(_shaped(asked), options, streams) == ["station-cam", None, "harbour-cam", "garden-cam"]
    reader = MemoryReader(store)
    q_vec = embedder.embed_texts([q])[0]
    assert answerer.which_stream(_shaped(q), q_vec, options, Scope(), reader) is None
    draft = answerer.answer(_shaped(q), q_vec, options, [], Scope(), reader)
    assert draft is not None and draft.choice_index == 0 and draft.caps.get("route") == 6.0, draft


def test_the_one_option_found_nowhere_is_the_misheard_sentence_right_after():
    """"What was mentioned right after X?" when the sentence after X was misheard: it matches
    no option, every option but one was said clearly elsewhere, so the one left is chosen (as
    a guess); with two options found nowhere, the choice is between those two."""
    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer, units_of

    kitchen = [
        _memory("kitchen-cam", 0.0, ["Daniel left the ladle by the sink.", "The ego order twelve legs for the team."]),
        _memory("kitchen-cam", 10.0, ["The soup tasting starts at noon."]),
        _memory("kitchen-cam", 20.0, ["Sofia has an appointment with the chef at five."]),
        _memory("kitchen-cam", 30.0, ["Hannah takes care of the apron."]),
    ]
    store = ListingStore(kitchen)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    reader = MemoryReader(store)
    everything = [u for m in kitchen for u in units_of(m, None, False)]
    answerer._candidates = lambda text, scope, reader, extra: [u for u in everything if u.modality == "speech"]
    question = "What was mentioned right after where Daniel left the ladle?"
    options = ["Sofia's appointment with the chef", "the time of the soup tasting", "Diego and the eggs",
               "who takes care of the apron"]
    draft = answerer.next_to(_shaped(question), options, [], Scope(), reader)
    assert draft is not None and draft.choice_index == 2, draft
    assert draft.confidence <= 0.3 and draft.caps.get("eliminated") == 3.0
    # a fourth topic nobody spoke of: two options are found nowhere; the two said clearly
    # elsewhere are still ruled out, and the choice between the other two goes to the one the
    # sentence right after sounds like ("The ego order twelve legs": Diego and the eggs), as
    # a guess
    draft = answerer.next_to(_shaped(question), options[:3] + ["the price of the bread"], [], Scope(), reader)
    assert draft is not None and draft.caps.get("eliminated") == 2.0, draft
    assert draft.choice_index == 2 and draft.confidence <= 0.3, draft
    # the sentence right after matches an option: that option, as before
    kitchen[0].transcript[1].text = "Diego ordered twelve eggs for the team."
    everything[:] = [u for m in kitchen for u in units_of(m, None, False)]
    draft = answerer.next_to(_shaped(question), options, [], Scope(), reader)
    assert draft is not None and draft.choice_index == 2 and "eliminated" not in draft.caps, draft


def test_another_things_price_does_not_place_an_option_asking_for_a_price():
    """"Right after the soup tasting: the price of the egg, or the room for the dinner
    service?" with the egg's sentence misheard ("Here is 20 pounds at the counter.") and the
    room said clearly after it. "The price of the bread is 3 pounds." elsewhere resembles "the
    price of the egg" (well enough to place it) but holds no egg, so it does not rule that
    option out: the egg is the one found nowhere, so the misheard sentence right after is it
    (a guess)."""
    from episodic.core.query import Scope
    from episodic.reasoning.time_answers import ELIMINATION_CONFIDENCE

    memories = [
        _memory("garden-cam", 0.0, ["The price of the bread is 3 pounds."]),
        _memory("kitchen-cam", 0.0, ["The soup tasting starts at 12.20.", "Here is 20 pounds at the counter."]),
        _memory("kitchen-cam", 10.0, ["The dinner service is in room 107."]),
        _memory("kitchen-cam", 20.0, ["Priya is repairing the apron.", "Lucas is meeting the chef at 7.30."]),
    ]
    answerer, reader = _order_answerer(memories)
    options = ["who takes care of the apron", "the price of the egg", "the room for the dinner service",
               "Lucas's appointment with the chef"]
    draft = answerer.next_to(_shaped("What was mentioned right after the time of the soup tasting?"), options, [],
                             Scope(), reader)
    assert draft is not None and draft.choice_index == 1, draft
    assert draft.caps.get("eliminated") == 3.0 and draft.confidence <= ELIMINATION_CONFIDENCE, draft
    # said with its own thing, the egg's price places that option (nothing is eliminated)
    memories[0].transcript[0].text = "The price of the egg is 3 pounds."
    answerer, reader = _order_answerer(memories)
    draft = answerer.next_to(_shaped("What was mentioned right after the time of the soup tasting?"), options, [],
                             Scope(), reader)
    assert draft is None or "eliminated" not in draft.caps, draft


def _order_answerer(memories):
    """A structured answerer over ``memories`` whose candidate sentences are all their speech
    (no feature search), and a reader for them."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer, units_of

    store = ListingStore(memories)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    everything = [u for m in memories for u in units_of(m, None, False) if u.modality == "speech"]
    answerer._candidates = lambda text, scope, reader, extra: everything
    return answerer, MemoryReader(store)


def test_an_option_said_right_after_a_sentence_that_sounds_like_the_unplaced_anchor_came_next():
    """"Right after where Noor left the scissors?" with that sentence misheard past matching
    ("If you need mercy son, nor keep sat at the mirror.", a dev recording's words): every
    option is placed, and the one said right after the sentence that sounds like the anchor
    (more than the recording's sentences do on the whole) is chosen, as a guess; "just
    before" reads the other way. With no sentence sounding like it, no guess is made."""
    from episodic.core.query import Scope
    from episodic.reasoning.time_answers import ELIMINATION_CONFIDENCE

    said = ["The color appointment has room to room for row one.", "The hair clip is on sale for 15 pounds.",
            "It is quite busy here this morning.", "Everyone sends the wedding styling open at 8 o'clock.",
            "We shall be finished before they have to noon.", "If you need mercy son, nor keep sat at the mirror.",
            "Not with a salmon bottle, not shampoo in the mag."]
    memories = [_memory("salon-cam", 10.0 * i, [x]) for i, x in enumerate(said)]
    options = ["the time of the wedding styling", "the price of the hair clip", "the room for the colour appointment",
               "Zara and the bottles of shampoo"]
    answerer, reader = _order_answerer(memories)
    after = answerer.next_to(_shaped("What was mentioned right after where Noor left the scissors?"), options, [],
                             Scope(), reader)
    assert after is not None and after.choice_index == 3 and "by_neighbour" in after.caps, after
    assert after.confidence <= ELIMINATION_CONFIDENCE
    before = answerer.next_to(_shaped("What was mentioned just before where Noor left the scissors?"), options, [],
                              Scope(), reader)
    assert before is not None and before.choice_index == 0 and "by_neighbour" in before.caps, before
    memories[5].transcript[0].text = "Let me check the list once more."
    answerer, reader = _order_answerer(memories)
    none = answerer.next_to(_shaped("What was mentioned right after where Noor left the scissors?"), options, [],
                            Scope(), reader)
    assert none is None or "by_neighbour" not in none.caps, none


def test_the_anchor_of_an_order_question_is_not_an_options_sentence():
    """"Right after where Priya left the laptop?" with "Priya's appointment with the caretaker"
    among the options: "Priya is meeting the caretaker" shares Priya with the anchor but is
    that option's sentence, not the anchor; the laptop sentence (its name misheard) is."""
    from episodic.core.query import Scope

    library = [
        _memory("library-cam", 0.0, ["Priya is leading the caretaker at twelve.", "Chen bought eleven magazines."]),
        _memory("library-cam", 10.0, ["The novel costs fifteen pounds."]),
        _memory("library-cam", 20.0, ["Pre-report left the lap top by the map shelf.",
                                      "Amara takes care of the library card."]),
    ]
    answerer, reader = _order_answerer(library)
    options = ["Chen and the magazines", "Priya's appointment with the caretaker", "the price of the novel",
               "who takes care of the library card"]
    question = "What was mentioned right after where Priya left the laptop?"
    draft = answerer.next_to(_shaped(question), options, [], Scope(), reader)
    assert draft is not None and draft.choice_index == 3, draft


def test_the_anchor_of_an_order_question_holds_its_thing_rather_than_resembling_it():
    """"Right after who takes care of the suitcase?": "There is the luggage trolley again."
    resembles the anchor more (cosine 0.60) than "Hannah looks after the suitcase these days."
    (0.54), but only the second holds the suitcase; what follows it is the answer, not the
    night train after the trolley (chosen at 0.97 before)."""
    from episodic.core.query import Scope

    station = [
        _memory("station-cam", 20.0, ["Hannah looks after the suitcase these days."]),
        _memory("station-cam", 30.0, ["At ten past seven the safety announcement gets going."]),
        _memory("station-cam", 40.0, ["Only six tickets are left, Grace told me."]),
        _memory("station-cam", 110.0, ["There is the luggage trolley again."]),
        _memory("station-cam", 120.0, ["The night train has moved to room 208."]),
    ]
    answerer, reader = _order_answerer(station)
    options = ["the room for the night train", "Grace and the tickets", "where Grace left the umbrella",
               "the time of the safety announcement"]
    question = "What was mentioned right after who takes care of the suitcase?"
    draft = answerer.next_to(_shaped(question), options, [], Scope(), reader)
    assert draft is not None and draft.choice_index == 3, draft


def test_a_sentence_cut_between_two_memories_is_one_neighbour():
    """Whisper ended one memory with "… the barber at 11 o'clock in the" and began the next with
    "morning." (timed 3.7 s later, zero seconds long): what was mentioned just before "Ask Pablo
    if you need the scissors." is the whole sentence, barber and all, not "morning."."""
    from episodic.core.query import Scope
    from episodic.core.records import TranscriptPiece
    from episodic.reasoning.time_answers import joined_across_cuts
    from episodic.retrieval.detailed import units_of

    salon = [_memory("salon-cam", 66.8, ["Noor wants the hair dryer to be purple."]),
             _memory("salon-cam", 76.8), _memory("salon-cam", 86.8)]
    salon[1].transcript = [TranscriptPiece(78.15, 82.87, "Don't forget, Noor has to see the barber at 11 o'clock in the")]
    salon[2].transcript = [TranscriptPiece(86.58, 86.58, "morning."),
                           TranscriptPiece(86.58, 88.88, "Ask Pablo if you need the scissors.")]
    answerer, reader = _order_answerer(salon)
    draft = answerer.next_to(_shaped("What was mentioned just before who takes care of the scissors?"), (), [],
                             Scope(), reader)
    assert draft is not None and "barber" in draft.answer and "in the morning" in draft.answer, draft
    # …and only a piece in lower case after one left without a full stop, in another memory
    units = [u for m in salon for u in units_of(m, None, False) if u.modality == "speech"]
    assert [u.text for u in joined_across_cuts(units)][1:] == [
        "Don't forget, Noor has to see the barber at 11 o'clock in the morning.",
        "Ask Pablo if you need the scissors."]
    # a misheard name opens a sentence of its own in lower case: no continuation
    salon[2].transcript[0].text = "pre-upainted little brother you"
    units = [u for m in salon for u in units_of(m, None, False) if u.modality == "speech"]
    assert len(joined_across_cuts(units)) == len(units)
    salon[2].transcript[0].text = "morning."
    salon[1].transcript[0].text = "Don't forget, Noor has to see the barber at 11 o'clock."
    units = [u for m in salon for u in units_of(m, None, False) if u.modality == "speech"]
    assert len(joined_across_cuts(units)) == len(units)


def test_a_thing_compared_in_time_is_placed_by_the_sentence_holding_it():
    """"Which was mentioned first: who takes care of the suitcase or the room for the night
    train?": the suitcase is placed where it was said (after the train), not at the luggage
    trolley that only resembles it (before the train; chosen at 0.89 before)."""
    from episodic.core.query import Scope

    station = [
        _memory("station-cam", 10.0, ["There is the luggage trolley again."]),
        _memory("station-cam", 20.0, ["The night train has moved to room 208."]),
        _memory("station-cam", 30.0, ["Hannah looks after the suitcase these days."]),
    ]
    answerer, reader = _order_answerer(station)
    options = ["who takes care of the suitcase", "the room for the night train"]
    question = "Which was mentioned first: who takes care of the suitcase or the room for the night train?"
    draft = answerer.which_first(_shaped(question), options, [], Scope(), reader)
    assert draft is not None and draft.choice_index == 1, draft


def test_a_thing_whose_noun_was_heard_nowhere_is_not_placed_by_its_name_alone():
    """"Which was mentioned first: who takes care of the library card or Omar and the novels?"
    with "Omar has 8 novels" heard as "Oh, Mata said our mail's in the bag.": Omar's other
    sentence (the reading lamp, after the card) does not place the novels, so only the card
    is placed, and with more of the stream's sentences before it than after, it is probably
    not the first (dev 5, harsher sound, other sentences: the card was chosen at 0.71)."""
    from episodic.core.query import Scope

    library = [
        _memory("library-cam", 10.0, ["Look, the printer is here."]),
        _memory("library-cam", 20.0, ["You can get a magazine for $54 here."]),
        _memory("library-cam", 30.0, ["Oh, Mata said our mail's in the bag."]),
        _memory("library-cam", 40.0, ["It is quite busy here this morning."]),
        _memory("library-cam", 50.0, ["Ask Grace if you need the library card."]),
        _memory("library-cam", 60.0, ["If you need the reading lamp, Omar keeps it at the front desk."]),
    ]
    answerer, reader = _order_answerer(library)
    options = ["who takes care of the library card", "Omar and the novels"]
    question = "Which was mentioned first: who takes care of the library card or Omar and the novels?"
    draft = answerer.which_first(_shaped(question), options, [], Scope(), reader)
    assert draft is not None and draft.choice_index == 1 and draft.caps["placed"] == 1.0, draft
    assert draft.confidence < 0.5


@pytest.mark.parametrize("question, options, expected", [
    # what came before is the sentence the attribution ends, not the attribution
    ("What was mentioned just before Omar's appointment with the volunteer?", [], "seed packets"),
    # nor a word the recogniser left on its own between two sentences ("And")
    ("What was mentioned just before where Grace keeps the umbrella?", [], "six tickets"),
    # what came after the tickets is the umbrella, not "Grace told me." (misheard, it seemed)
    ("What was mentioned right after Grace and the tickets?",
     ["the price of the seed packets", "where Grace left the umbrella", "Omar's appointment with the volunteer",
      "the time of the flower show"], "where Grace left the umbrella"),
])
def test_a_sentence_saying_only_who_said_the_one_before_is_not_what_was_mentioned(question, options, expected):
    """"Only nine seed packets are left, Felix told me." is often ended early by the recogniser:
    "Felix told me." on its own mentions nothing; it is the tail of the sentence before it."""
    from episodic.core.query import Scope

    garden = [
        _memory("garden-cam", 0.0, ["Only nine seed packets are left.", "Felix told me."]),
        _memory("garden-cam", 10.0, ["The volunteer and Omar are getting together at ten to three."]),
        _memory("garden-cam", 20.0, ["Only six tickets are left.", "Grace told me.", "And"]),
        _memory("garden-cam", 30.0, ["If you need the umbrella, Grace keeps it at the newspaper kiosk."]),
    ]
    answerer, reader = _order_answerer(garden)
    draft = answerer.next_to(_shaped(question), options, [], Scope(), reader)
    assert draft is not None
    if options:
        assert draft.choice_index == options.index(expected), draft
        # … because the umbrella sentence is what came next, not "Grace told me." (cited before)
        assert draft.support[0].text.startswith("If you need the umbrella"), [u.text for u in draft.support]
    else:
        assert draft.answer.startswith("Only nine " + expected) or draft.answer.startswith("Only " + expected), draft.answer


def test_a_question_naming_someone_looks_in_speech_even_when_it_asks_for_a_colour():
    """No describer knows who Priya is: "which colour is the watering can Priya painted?" is
    answered by what was said, so speech ranks with the pictures, not below them."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.retrieval.detailed import TextScorer

    question = "Which colour is the watering can that Priya painted?"
    analysis = _analysis(question, QueryType.VIDEO)
    assert analysis.names_someone and "speech" in analysis.preferred_modalities
    plain = _analysis("Which colour is the watering can?", QueryType.VIDEO)
    assert not plain.names_someone and "speech" not in plain.preferred_modalities
    # a name of three letters, too short to be matched tolerantly, still names someone
    assert _analysis("What colour did Tom paint the spade?", QueryType.VIDEO).names_someone
    assert not _analysis("What colour is the TV in the hall?", QueryType.VIDEO).names_someone
    scorer = TextScorer(MiniLMEmbedder(Settings()))
    units = [_unit("a scene; colours: green, cyan", "visual", 1.0), _unit("a watering can; colours: green", "visual", 5.0),
             _unit("Priya painted the watering can blue.", "speech", 9.0)]
    ranked = scorer.rank(analysis, scorer.embed([question])[0], units)
    assert ranked[0].modality == "speech", [(u.text, u.score) for u in ranked]


def test_a_picture_the_describer_cannot_name_is_the_option_it_has_no_word_for():
    """"Which of these appeared in a picture?" when nothing was clearly seen: an ImageNet
    classifier would have leaned to a motorcycle, a cat or a cup of coffee had one been
    shown, but has no word for coins; its guesses were about something else ("a remote
    control"), so coins is left, at a guess's confidence. Of two options it cannot name (coins,
    the moon) one is the answer, a lower guess. With an open-vocabulary describer nothing is
    ruled out."""
    import numpy as np

    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.core.records import FrameObservation, ShortTermMemory
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer

    def frame(t, guesses):
        return FrameObservation(t=t, description="a scene; colours: grey, blue", guesses=guesses)

    def memories(describer):
        return [ShortTermMemory(
            id=f"desk-cam@{t0}", stream_id="desk-cam", t_start=t0, t_end=t0 + 10.0, vector=np.zeros(4),
            frames=[frame(t0, g)], metadata={"models": {"describer": describer}})
            for t0, g in ((0.0, [("clothes", 0.3), ("Windsor tie", 0.2)]),
                          (10.0, [("a remote control", 0.19), ("a keyboard", 0.14)]))]

    scorer = TextScorer(MiniLMEmbedder(Settings()))
    question = "Which of these appeared in a picture in the desk-cam recording?"
    analysis = _analysis(question, QueryType.VIDEO)
    options = ["a cup of coffee", "a motorcycle", "coins", "a cat"]
    store = ListingStore(memories(OfflineVisualDescriber.model_id))
    answerer = StructuredAnswerer(store, scorer=scorer, settings=Settings().retrieval)
    draft = answerer.pictured(analysis, options, Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 2, draft
    assert draft.confidence <= 0.3 and draft.caps.get("eliminated") == 3.0
    # two options it has no word for: the one it could have named is still ruled out, and the
    # answer is one of the two, at half the support of one left alone
    draft = answerer.pictured(analysis, ["a cat", "coins", "the moon"], Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index in (1, 2) and draft.caps.get("eliminated") == 1.0, draft
    assert draft.confidence <= 0.15, draft
    # a describer that can name anything: nothing is assumed about what it missed
    store = ListingStore(memories("vlm:qwen2.5-vl"))
    answerer = StructuredAnswerer(store, scorer=scorer, settings=Settings().retrieval)
    draft = answerer.pictured(analysis, options, Scope(), MemoryReader(store))
    assert draft is None or "eliminated" not in draft.caps, draft


def _speech_answerer(memories):
    """A structured answerer over ``memories`` whose candidates are all their sentences, and
    a reader of them."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer, units_of

    store = ListingStore(memories)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    everything = [u for m in memories for u in units_of(m, None, False) if u.modality == "speech"]
    answerer._candidates = lambda text, scope, reader, extra: list(everything)
    return answerer, MemoryReader(store)


def test_which_came_first_places_each_option_by_the_words_only_it_has():
    """"Where Priya left the laptop or Priya's appointment with the caretaker: which first?"
    The laptop sentence was misheard ("Pre-report the left top …"); by "Priya" it would be
    placed at the caretaker sentence, so each option is placed by the words that tell it
    from the other."""
    from episodic.core.query import Scope

    answerer, reader = _speech_answerer([_memory("library-cam", 0.0, ["Priya is meeting the caretaker at noon."]),
                                         _memory("library-cam", 10.0, ["Pre-report the left top by the left chain."])])
    options = ["where Priya left the laptop", "Priya's appointment with the caretaker"]
    question = f"Which was mentioned first: {options[0]} or {options[1]}?"
    draft = answerer.which_first(_shaped(question), options, [], Scope(), reader)
    assert draft is not None and draft.choice_index == 1, draft


def test_what_came_before_a_clause_is_not_the_clauses_own_sentence():
    """Whisper joins a time to its sentence with a comma ("At 410, Kempers and Appointment with
    the archive list."): the anchor is the clause, and the sentence it belongs to is not what
    was said before it; the sentence before is."""
    from episodic.core.query import Scope

    cases = [  # (stream, sentence first, sentence ten seconds later, question, answer opens with)
        ("library-cam", "The story hour is in room 114.", "At 410, Chen has an appointment with the archivist.",
         "What was mentioned just before Chen's appointment with the archivist?", "The story hour"),
        # a time of four words in front is still the anchor's own sentence
        ("library-cam", "Lucas put the laptop by the front window.", "At 20 to 11, Grace's appointment with the archivist.",
         "What was mentioned just before Grace's appointment with the archivist?", "Lucas put the laptop"),
        # two sentences joined by a comma are two: what came after the first is the second
        ("hotel-cam", "Welcome to the grand hotel, breakfast is served at 8.", "The pool opens at noon.",
         "What was said right after the welcome to the hotel?", "breakfast is served"),
        # a clause holding words of the anchor is the rest of its sentence, not what came before it
        ("garden-cam", "Amara wants the spade to be red.", "Only four tomato plants are left, Omar told me.",
         "What was mentioned just before Omar and the tomato plants?", "Amara wants the spade"),
    ]
    for stream, first, second, question, expected in cases:
        answerer, reader = _speech_answerer([_memory(stream, 0.0, [first]), _memory(stream, 10.0, [second])])
        draft = answerer.next_to(_shaped(question), (), [], Scope(), reader)
        assert draft is not None and draft.answer.startswith(expected), (question, draft)


def test_what_was_mentioned_before_is_what_was_said_not_a_sign_in_between():
    """"What was mentioned just before X?" asks what was said: a sign on screen between the
    two sentences ("CLOSED ON MONDAYS") was shown, not mentioned."""
    from episodic.core.query import Scope
    from episodic.core.records import FrameObservation

    sign = _memory("station-cam", 10.0)
    sign.frames = [FrameObservation(t=15.0, ocr_text="CLOSED ON MONDAYS", description="a scene")]
    memories = [_memory("station-cam", 0.0, ["Ruth ordered six sandwiches for the team."]), sign,
                _memory("station-cam", 20.0, ["Felix painted the backpack purple."])]
    answerer, reader = _speech_answerer(memories)
    question = "What was mentioned just before the colour of Felix's backpack?"
    shaped = _shaped(question)
    shaped.query_type = QueryType.VIDEO_AUDIO  # as the analyser takes it ("colour")
    assert shaped.shape.asks_said
    draft = answerer.next_to(shaped, (), [], Scope(), reader)
    assert draft is not None and draft.answer.startswith("Ruth ordered six sandwiches"), draft
    assert not _shaped("What was shown just before the colour of Felix's backpack?").shape.asks_said
    assert not _shaped("What was said or shown right after the welcome?").shape.asks_said
    assert _shaped("Right after the welcome, what did they talk about?").shape.asks_said
    # in neutral words about a moment that was talked about: what was said (session 85:
    # "Earlier today, what came just before Ruth and the seed packets?" answered with a sign)
    for question in ("Earlier today, what came just before the colour of Felix's backpack?",
                     "What preceded the colour of Felix's backpack?",
                     "Just before the colour of Felix's backpack, what came up?"):
        neutral = _shaped(question)
        neutral.query_type = QueryType.VIDEO_AUDIO
        assert neutral.shape.asks_said, question
        draft = answerer.next_to(neutral, (), [], Scope(), reader)
        assert draft is not None and draft.answer.startswith("Ruth ordered six sandwiches"), (question, draft)
    # …but not about a moment seen or heard as a sound
    for question in ("What came right after the screen went dark?", "What happened just after the music stopped?",
                     "What came just before the sign saying CLOSED ON MONDAYS?"):
        assert not _shaped(question).shape.asks_said, question


def test_which_came_first_with_one_option_found_guesses_from_where_it_was_said():
    """"Which was mentioned first: A or B?" with B misheard beyond recognition: B is one of
    the stream's other sentences, so A found near the end was probably not first (and A
    found at the start probably was). Answered as a guess, never from A alone."""
    from episodic.core.query import Scope

    said = ["Tom bought apples this morning.", "The weather looks fine today.",
            "Restaint at the Regan Lump Bunk.", "Priya is meeting the caretaker at noon."]
    options = ["where Grace left the library card", "Priya's appointment with the caretaker"]
    question = f"Which was mentioned first: {options[0]} or {options[1]}?"
    for order, expected in ((said, 0), (said[::-1], 1)):
        answerer, reader = _speech_answerer([_memory("library-cam", 10.0 * i, [x]) for i, x in enumerate(order)])
        draft = answerer.which_first(_shaped(question), options, [], Scope(), reader)
        assert draft is not None and draft.choice_index == expected, draft
        assert draft.confidence <= 0.3 and draft.caps.get("placed") == 1.0, draft


def test_which_came_first_compares_times_within_one_recording():
    """Times of two recordings are not comparable: with "the night train" misheard in
    station-cam ("The height really is in room to head."), a room said early in library-cam
    must not place it before the tickets; both are placed in the stream where both are found."""
    from episodic.core.query import Scope

    answerer, reader = _speech_answerer([
        _memory("library-cam", 50.0, ["The story hour is in room 312."]),
        _memory("station-cam", 110.0, ["Grace ordered six tickets for the team."]),
        _memory("station-cam", 125.0, ["The height really is in room two oh eight."]),
        _memory("station-cam", 140.0, ["The weather looks fine today."])])
    options = ["the room for the night train", "Grace and the tickets"]
    question = f"Which was mentioned first: {options[0]} or {options[1]}?"
    draft = answerer.which_first(_shaped(question), options, [], Scope(), reader)
    assert draft is not None and draft.choice_index == 1, draft
    assert draft.caps.get("placed") == 2.0, draft


def test_an_appointment_is_placed_where_a_time_is_said_with_the_name():
    """"Luca's appointment with the baker", the baker misheard ("The Mika and Luca are getting
    together at 4.35"), is placed where Luca is said with a time, not where Luca only looks
    after something: an appointment is told with its time. So the price of the loaf came first."""
    from episodic.core.query import Scope

    answerer, reader = _speech_answerer([
        _memory("bakery-cam", 48.0, ["Luca looks after the red eye for these days."]),
        _memory("bakery-cam", 56.0, ["You can get a loaf of 40 pounds here."]),
        _memory("bakery-cam", 82.0, ["The Mika and Luca are getting together at 4.35."]),
        _memory("bakery-cam", 90.0, ["We should be finished before the afternoon."])])
    options = ["Luca's appointment with the baker", "the price of the loaf"]
    question = f"Which was mentioned first: {options[1]} or {options[0]}?"
    draft = answerer.which_first(_shaped(question), options, [], Scope(), reader)
    assert draft is not None and draft.choice_index == 1, draft

def test_a_sentence_described_by_the_kind_of_fact_it_holds():
    """"The colour of Tom's spade" is partly found in a sentence that holds a colour even
    when the names were misheard ("on painted a stained red"), a price in "34 euros", a
    time in "at quarter to two" or Whisper's "at 410"; a sentence without such a value
    does not get that part."""
    from episodic.retrieval.value_kinds import (
        CLOCK,
        COLOUR,
        PRICE,
        asked_kinds,
        carried_kinds,
        with_kinds,
    )

    assert asked_kinds("the colour of Tom's spade") == {COLOUR}
    assert asked_kinds("the price of the tomato plant") == {PRICE}
    assert asked_kinds("how much the rope costs") == {PRICE}
    assert asked_kinds("the time of the flower show") == {CLOCK}
    assert asked_kinds("when the soup tasting begins") == {CLOCK}
    assert asked_kinds("the room for the story hour") == frozenset()
    assert carried_kinds("on painted a stained red.") == {COLOUR}
    assert carried_kinds("At a motto planted in 34 Euro-mattele counter.") == {PRICE}
    assert carried_kinds("It costs $5 now") == {PRICE}
    assert carried_kinds("At quarter to two, there you open an appointment.") == {CLOCK}
    assert carried_kinds("At 410, Kempers and Appointment with the archive list.") == {CLOCK}
    assert carried_kinds("We meet at 4 p.m.") == {CLOCK}
    assert carried_kinds("Am I going to need in 52 roll or not the counter?") == frozenset()
    assert carried_kinds("The story always in Room 1114.") == frozenset()
    terms, kinds = with_kinds(["pric", "tomato", "plant"], "the price of the tomato plant")
    assert terms == ["tomato", "plant", PRICE] and kinds == {PRICE}
    # an appointment is told with its time, and stays a word to find
    assert asked_kinds("Luca's appointment with the baker") == {CLOCK}
    terms, kinds = with_kinds(["luca", "appoint", "baker"], "Luca's appointment with the baker")
    assert terms == ["luca", "appoint", "baker", CLOCK] and kinds == {CLOCK}


def test_the_picture_on_screen_while_something_was_said_comes_from_that_moments_frames():
    """"What picture was on screen while someone talked about Priya's appointment?": the key
    frames shown while that sentence was said, not the stream's best-guessed picture (a cat,
    clearly seen a minute later); there nothing was clearly seen, and of the options only
    coins is a thing the describer has no word for."""
    import numpy as np

    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.core.records import FrameObservation, ShortTermMemory, TranscriptPiece
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer, units_of

    def memory(t0, said, guesses, description="a scene; colours: grey"):
        return ShortTermMemory(
            id=f"library-cam@{t0}", stream_id="library-cam", t_start=t0, t_end=t0 + 10.0, vector=np.zeros(4),
            transcript=[TranscriptPiece(t0 + 1.0, t0 + 3.0, said)],
            frames=[FrameObservation(t=t0, description=description, guesses=guesses)],
            metadata={"models": {"describer": OfflineVisualDescriber.model_id}})

    library = [memory(0.0, "Priya is leading the caretaker at twelve.", [("a remote control", 0.19), ("a keyboard", 0.14)]),
               memory(60.0, "Tom bought a new rope.", [("a cat", 0.82), ("tabby cat", 0.5)], "a cat; colours: orange")]
    store = ListingStore(library)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    everything = [u for m in library for u in units_of(m, None, False)]
    answerer._candidates = lambda text, scope, reader, extra: list(everything)
    question = "What picture was on screen while someone talked about Priya's appointment with the caretaker?"
    options = ["a motorcycle", "a man with a camera", "coins", "a cat"]
    analysis = _analysis(question, QueryType.VIDEO_AUDIO)
    assert analysis.shape.pictured_while == "Priya's appointment with the caretaker"
    draft = answerer.answer(analysis, np.zeros(384), options, [], Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 2 and draft.caps["route"] == 10.0, draft
    # while the rope was talked about, the cat was on screen
    rope = _analysis("What picture was on screen while someone talked about the rope?", QueryType.VIDEO_AUDIO)
    draft = answerer.answer(rope, np.zeros(384), options, [], Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 3, draft
    # and the other way round: what was said while the coins (no name for them) or the cat
    # (named surely) were on screen
    topics = ["Priya's appointment with the caretaker", "the price of the rope", "Chen and the magazines"]
    coins = _analysis("What was mentioned while a picture of coins was on screen?", QueryType.VIDEO_AUDIO)
    draft = answerer.answer(coins, np.zeros(384), topics, [], Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 0 and draft.caps["route"] == 11.0, draft
    assert draft.confidence <= 0.25
    cat = _analysis("What was said while a photo of a cat was shown?", QueryType.VIDEO_AUDIO)
    draft = answerer.answer(cat, np.zeros(384), (), [], Scope(), MemoryReader(store))
    assert draft is not None and "rope" in draft.answer and draft.caps["route"] == 11.0, draft
    # what was said then was misheard and matches no option: the one option said nowhere else
    library[1].transcript[0].text = "The vlog is a thing you'll long have to account to."
    everything[:] = [u for m in library for u in units_of(m, None, False)]
    topics = ["Priya's appointment with the caretaker", "the price of the rope"]
    draft = answerer.answer(cat, np.zeros(384), topics, [], Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 1 and draft.caps.get("eliminated") == 1.0, draft
    # Search for "a picture of coins" offers the unnamed picture that stands out (not the
    # cat, named surely), saying it is no sighting
    from episodic.retrieval.moments import MomentSearch

    search = MomentSearch(store, answerer.scorer, Settings().retrieval)
    found = search._guessed("coins", Scope(), MemoryReader(store), [], 5)
    assert [(m.stream_id, m.t_start) for m in found] == [("library-cam", 0.0)], found
    assert "not a sure sighting" in found[0].why
    # a thing it can name that no key frame was recognised as: the same picture, as a candidate
    # (since session 62; before, nothing), said to be no sighting of a motorcycle
    (maybe,) = search._guessed("a motorcycle", Scope(), MemoryReader(store), [], 5)
    assert maybe.t_start == 0.0 and "no key frame was recognised as a motorcycle" in maybe.why


def test_the_picture_on_screen_while_a_misheard_sentence_was_said_is_one_shown_at_some_time():
    """"What picture was on screen while someone talked about Diego's appointment?" when no
    sentence places it (misheard beyond matching): the answer is still a picture that was on
    screen at some time. Options the describer could have named and that no frame shows (a
    motorcycle, a cup of coffee) are ruled out; one seen (the cat) comes before one it has no
    word for (coins); with every option ruled out there is no answer from pictures."""
    import numpy as np

    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.core.records import FrameObservation, ShortTermMemory, TranscriptPiece
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.reasoning.structured import UNANCHORED_SUPPORT, StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer, units_of

    def memory(t0, said, guesses, description="a scene; colours: grey"):
        return ShortTermMemory(
            id=f"garden-cam@{t0}", stream_id="garden-cam", t_start=t0, t_end=t0 + 10.0, vector=np.zeros(4),
            transcript=[TranscriptPiece(t0 + 1.0, t0 + 3.0, said)],
            frames=[FrameObservation(t=t0, description=description, guesses=guesses)],
            metadata={"models": {"describer": OfflineVisualDescriber.model_id}})

    garden = [memory(0.0, "The weather looks fine today.", [("a remote control", 0.19), ("a keyboard", 0.14)]),
              memory(30.0, "The vlog is a thing you'll long have to account to.", []),
              memory(60.0, "It is quite busy here this morning.", [("a cat", 0.82), ("tabby cat", 0.5)],
                     "a cat; colours: orange")]
    store = ListingStore(garden)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    everything = [u for m in garden for u in units_of(m, None, False)]
    answerer._candidates = lambda text, scope, reader, extra: list(everything)
    question = "What picture was on screen while someone talked about Diego's appointment with the baker?"
    analysis = _analysis(question, QueryType.VIDEO_AUDIO)
    assert analysis.shape.pictured_while == "Diego's appointment with the baker"

    def ask(options):
        return answerer.answer(analysis, np.zeros(384), options, [], Scope(), MemoryReader(store))

    draft = ask(["a motorcycle", "coins", "a cat", "a cup of coffee"])
    assert draft is not None and draft.choice_index == 2 and draft.caps["anchor"] == 0.0, draft
    assert draft.confidence <= UNANCHORED_SUPPORT
    draft = ask(["a motorcycle", "coins", "a cup of coffee"])  # nothing offered was seen
    assert draft is not None and draft.choice_index == 1 and draft.caps["shown"] == 0.0, draft
    reader = MemoryReader(store)
    assert answerer._shown_at_some_time(["a motorcycle", "a cup of coffee"], Scope(), reader) is None


def test_two_hearings_of_one_sentence_are_one_moment_not_one_before_the_other():
    """"What was said just before X?" must not answer with another hearing of X (a re-listened
    version kept beside the first), which starts a little earlier."""
    from episodic.reasoning.time_answers import _same_moment

    first = _unit("Oma ordered for tomato plants for the team.", t=44.9)
    first.t_end = 47.0
    again = _unit("Omar ordered 4 tomato plants for the team.", t=45.1)
    again.t_end = 46.9
    before = _unit("The spade is by the shed.", t=41.0)
    before.t_end = 44.8
    assert _same_moment(first, again) and _same_moment(again, first)
    assert not _same_moment(before, again)  # said before it, touching it
    shown = _unit("OPEN UNTIL 6 PM", "ocr", t=45.0)
    shown.t_end = 47.0
    assert not _same_moment(shown, again)  # read on screen meanwhile: another modality


def test_an_order_question_names_the_sentences_it_may_have_misheard():
    """"Which came first: the night train or the tickets?": the tickets are placed by all
    their words and need nothing; the night train, placed by none, is most likely the
    sentence nearest to it in that stream, which is worth hearing again. Other questions have
    no opinion (None); two things both placed well need nothing ([])."""
    from episodic.core.query import Scope

    answerer, reader = _speech_answerer([
        _memory("station-cam", 100.0, ["The weather looks fine today."]),
        _memory("station-cam", 110.0, ["Grace ordered six tickets for the team."]),
        _memory("station-cam", 125.0, ["The height really is in room to head."]),
        _memory("library-cam", 50.0, ["Omar bought eight novels this morning."])])
    options = ["the room for the night train", "Grace and the tickets"]
    question = f"Which was mentioned first: {options[0]} or {options[1]}?"
    targets = answerer.listen_targets(_shaped(question), options, [], Scope(), reader)
    assert targets and targets[0].text.startswith("The height"), targets
    assert all(u.stream_id == "station-cam" and not u.text.startswith("Grace") for u in targets), targets
    assert answerer.listen_targets(_shaped("Who ordered the tickets?"), (), [], Scope(), reader) is None
    clear = ["Grace and the tickets", "the weather"]
    assert answerer.listen_targets(_shaped(f"Which was mentioned first: {clear[0]} or {clear[1]}?"), clear, [],
                                   Scope(), reader) == []


def test_a_which_stream_question_names_the_sentence_it_may_have_misheard():
    """"Which camera recorded the talk about Chen's appointment with the baker?" when no
    option's stream says it: the sentence nearest to it by words and sound, in any of the
    options' streams ("Chad is leaving the maker at 305"), is worth hearing again. Said
    clearly somewhere: nothing ([]). About a picture or a sound, or with no streams as
    options: no opinion (None)."""
    from episodic.core.query import Scope

    memories = [
        _memory("harbour-cam", 0.0, ["The ferry crossing is in room two twenty-six."]),
        _memory("harbour-cam", 10.0, ["There you go, it's repairing the fishing net."]),
        _memory("kitchen-cam", 0.0, ["Look, the timer is here."]),
        _memory("kitchen-cam", 10.0, ["Chad is leaving the maker at 305."]),
        _memory("kitchen-cam", 20.0, ["Amara ordered three eggs for the team."])]
    answerer, reader = _speech_answerer(memories)
    options = ["harbour-cam", "kitchen-cam"]
    question = "Which camera recorded the talk about Chen's appointment with the baker?"
    targets = answerer.listen_targets(_shaped(question), options, [], Scope(), reader)
    assert targets and targets[0].text.startswith("Chad is leaving"), targets
    assert len({u.memory_id for u in targets}) == len(targets) <= 2
    said = "Which camera recorded the talk about Amara and the eggs?"
    assert answerer.listen_targets(_shaped(said), options, [], Scope(), reader) == []
    for other in ("Which camera showed a cup of coffee?", "Which camera picked up applause?"):
        assert answerer.listen_targets(_shaped(other), options, [], Scope(), reader) is None, other
    assert answerer.listen_targets(_shaped(question), (), [], Scope(), reader) is None


def test_a_picture_while_question_names_the_sentence_it_may_have_misheard():
    """"What picture was on screen while someone talked about Chen and the eggs?": the
    sentence about Chen's eggs places the frames; heard as "Can ordered high necks for the
    team." it matches nothing, and is the sentence nearest to it by all its words' sound (the
    telling word alone, "Chen", sounds like "then" and "when" everywhere): worth hearing again.
    Said clearly: nothing ([])."""
    from episodic.core.query import Scope

    memories = [
        _memory("garden-cam", 0.0, ["Please remember that the flower show begin at 10.20."]),
        _memory("garden-cam", 10.0, ["And then one seemed to be in a good mood."]),
        _memory("kitchen-cam", 0.0, ["Look, the timer is here when you want it."]),
        _memory("kitchen-cam", 10.0, ["Can ordered high necks for the team."]),
        _memory("kitchen-cam", 20.0, ["Amara will clean the ladle after lunch."])]
    answerer, reader = _speech_answerer(memories)
    options = ["coins", "an astronaut", "a cup of coffee", "a clock"]
    question = "What picture was on screen while someone talked about Chen and the eggs?"
    targets = answerer.listen_targets(_shaped(question), options, [], Scope(), reader)
    assert targets and targets[0].text.startswith("Can ordered"), targets
    assert len({u.memory_id for u in targets}) == len(targets) <= 2
    said = "What picture was on screen while someone talked about Amara and the ladle?"
    assert answerer.listen_targets(_shaped(said), options, [], Scope(), reader) == []


def test_a_picture_while_question_hears_first_what_was_said_under_an_offered_picture():
    """"What picture was on screen while someone talked about the colour of Priya's ladle?"
    with the sentence heard as "Pre-op into the lid open.": by words and sound the sentences
    naming Priya are nearer to it, but the answer is one of the pictures offered, so the
    sentence said while one of them (the cat) was clearly on screen is heard again first."""
    from episodic.core.query import Scope

    def memories(under_the_cat: str) -> list:
        out = [_memory("kitchen-cam", 0.0, ["Priya will clean the apron after lunch."]),
               _memory("kitchen-cam", 10.0, ["Priya ordered seven onions for the team."]),
               _memory("kitchen-cam", 20.0, ["Pre-op into the lid open."]),
               _memory("kitchen-cam", 30.0, ["Look, the timer is here."])]
        out[2].frames[0].description = f"{under_the_cat}; colours: orange"
        return out

    options = ["a rocket", "coins", "a cat", "a cup of coffee"]
    question = "What picture was on screen while someone talked about the colour of Priya's ladle?"
    answerer, reader = _speech_answerer(memories("a cat"))
    targets = answerer.listen_targets(_shaped(question), options, [], Scope(), reader)
    assert targets and targets[0].text == "Pre-op into the lid open.", targets
    assert len({u.memory_id for u in targets}) == len(targets)
    # no offered picture seen there: only the nearest by words and sound, as before
    answerer, reader = _speech_answerer(memories("a scene"))
    targets = answerer.listen_targets(_shaped(question), options, [], Scope(), reader)
    assert targets and targets[0].text != "Pre-op into the lid open.", targets


def test_a_count_question_names_the_sentences_that_may_hide_a_mention():
    """"How many times was the printer mentioned in library-cam?": sentences that already
    mention it need nothing; of the others, the nearest to the printer ("Look, that minter in
    here.") are worth hearing again. A question naming no stream has no opinion."""
    from episodic.core.query import Scope

    answerer, reader = _speech_answerer([
        _memory("library-cam", 0.0, ["There is the printer again."]),
        _memory("library-cam", 10.0, ["Emma will clean the reading lamp after lunch."]),
        _memory("library-cam", 20.0, ["Look, that minter in here."]),
        _memory("library-cam", 30.0, ["Look, the printer is here."]),
        _memory("garden-cam", 0.0, ["Look, the minter is here."])])
    question = "How many times was the printer mentioned in library-cam?"
    targets = answerer.listen_targets(_shaped(question), (), [], Scope(), reader)
    assert targets and targets[0].text == "Look, that minter in here.", targets
    assert all(u.stream_id == "library-cam" and "printer" not in u.text for u in targets), targets
    assert len({u.memory_id for u in targets}) == len(targets) <= LISTEN_PER_COUNT
    assert answerer.listen_targets(_shaped("How many times was the printer mentioned?"), (), [], Scope(), reader) is None


def test_a_time_in_front_of_the_anchor_is_not_what_was_said_before_it():
    """"What was mentioned just before Grace's appointment with the archivist?" where the
    recogniser wrote "At 20 to 11" as "F20 to 11": that clause is the anchor sentence's own
    time, not a sentence of its own, so the sentence before answers."""
    from episodic.core.query import Scope
    from episodic.reasoning.time_answers import stands_alone

    assert not stands_alone("F20 to 11") and not stands_alone("At 20 to 11")
    assert stands_alone("Welcome to the hotel") and stands_alone("Tom has 3 cats")
    answerer, reader = _speech_answerer([
        _memory("library-cam", 0.0, ["Lucas put the laptop by the front desk."]),
        _memory("library-cam", 10.0, ["F20 to 11, based on an appointment with the archimist."]),
        _memory("library-cam", 20.0, ["The story hour is in room 312."])])
    q = "What was mentioned just before Grace's appointment with the archivist?"
    draft = answerer.next_to(_shaped(q), (), [], Scope(), reader)
    assert draft is not None and "laptop" in draft.answer and "F20" not in draft.answer, draft.answer


def test_a_count_question_hears_again_more_sentences_than_an_order_question():
    """A mention misheard may sound nearer to something else than other sentences do ("Look,
    that minter in here" came third for "printer" on a dev set, after "Lucas painted the
    library card" and "Pre-Sport 19RM"): a count hears up to LISTEN_PER_COUNT sentences again."""
    from episodic.core.query import Scope

    assert LISTEN_PER_COUNT > LISTEN_PER_THING
    said = ["Lucas painted the library card for me.", "Pre-Sport 19RM this morning.", "Look, that minter in here.",
            "Tom put the laptop by the front desk.", "The printer is here.", "Amara will clean the lamp after lunch."]
    answerer, reader = _speech_answerer([_memory("library-cam", 10.0 * i, [t]) for i, t in enumerate(said)])
    targets = answerer.listen_targets(_shaped("How many times was the printer mentioned in library-cam?"), (), [], Scope(), reader)
    assert targets is not None and len(targets) == min(LISTEN_PER_COUNT, len(said) - 1), targets
    assert "Look, that minter in here." in [u.text for u in targets]
    assert all("printer" not in u.text for u in targets)
    # more are asked of their audio whether they name it (retrieval/mention_audio.py) than are
    # heard again, those heard again first; the same sentences, none that already names it
    asked = answerer.mention_targets(_shaped("How many times was the printer mentioned in library-cam?"), Scope(), reader)
    assert MENTION_CHECKS_PER_COUNT > LISTEN_PER_COUNT
    assert [u.text for u in asked[: len(targets)]] == [u.text for u in targets]
    assert len(asked) == min(MENTION_CHECKS_PER_COUNT, len(said) - 1)
    assert answerer.mention_targets(_shaped("When is the story hour?"), Scope(), reader) == []
    thing, mentions = answerer.counted_thing(_shaped("How many times was the printer mentioned in library-cam?"),
                                             ["library-cam"])
    assert thing == "printer"
    assert mentions(asked[0].__class__("library-cam", "m", 0.0, 1.0, "speech", "The printer is here."))
    assert not mentions(asked[0])


def test_an_order_question_asks_the_audio_where_a_thing_it_cannot_place_was_said():
    """"What came up next after where Priya left the laptop?" with that sentence heard as
    "Bring your left, the left, top, next to the map, Shell.": the laptop is placed nowhere,
    so the sentences nearest to it that lack "laptop" are offered to be asked of the audio
    (retrieval/mention_audio.py); the same for the thing a "which came first" question cannot
    place, and nothing for a thing placed by its words or a question about sounds."""
    from episodic.core.query import Scope
    from episodic.reasoning.time_answers import SOUND_CHECKS_PER_THING

    said = ["The weather looks fine today.", "Bring your left, the left, top, next to the map, Shell.",
            "At six o'clock, Ruth has an appointment with the archivist.", "Maria painted the reading lamp yellow.",
            "Everyone seems to be in a good mood.", "Let me check the list once more."]
    answerer, reader = _speech_answerer([_memory("library-cam", 10.0 * i, [t]) for i, t in enumerate(said)])
    options = ["Ruth's appointment with the archivist", "the colour of Maria's reading lamp"]
    checks = answerer.placement_checks(_shaped("What came up next after where Priya left the laptop?"), options, [],
                                       Scope(), reader)
    assert [phrase for phrase, _ in checks] == ["laptop"]
    offered = [u.text for u in checks[0][1]]
    assert len(offered) == min(SOUND_CHECKS_PER_THING, len(said)) and said[1] in offered, offered
    first = _shaped("Which was mentioned first: where Priya left the laptop or Ruth's appointment with the archivist?")
    checks = answerer.placement_checks(first, ["where Priya left the laptop", "Ruth's appointment with the archivist"],
                                       [], Scope(), reader)
    assert [phrase for phrase, _ in checks] == ["laptop"] and said[1] in [u.text for u in checks[0][1]]
    # a thing said that is a colour ("the colour of Maria's reading lamp") makes the question
    # typed audio+video; what was mentioned is still asked of the audio. Not what was shown.
    coloured = "Which was mentioned first: the colour of Maria's reading lamp or where Priya left the laptop?"
    mixed = _shaped(coloured)
    mixed.query_type = QueryType.VIDEO_AUDIO
    checks = answerer.placement_checks(mixed, ["the colour of Maria's reading lamp", "where Priya left the laptop"],
                                       [], Scope(), reader)
    assert [phrase for phrase, _ in checks] == ["laptop"] and said[1] in [u.text for u in checks[0][1]]
    mixed.query_type = QueryType.VIDEO
    assert answerer.placement_checks(mixed, ["the colour of Maria's reading lamp", "where Priya left the laptop"],
                                     [], Scope(), reader) == []
    placed = _shaped("What came up next after Maria painted the reading lamp?")
    assert answerer.placement_checks(placed, ["the weather", "the list"], [], Scope(), reader) == []
    assert answerer.placement_checks(_shaped("When is the story hour?"), [], [], Scope(), reader) == []


def test_a_thing_is_looked_for_by_all_its_words_in_the_sentences_that_sound_like_it():
    """"The poetry reading" heard as "The only three reason is in room 104.": by its less
    everyday word alone ("poetry") the sentences nearest in sound are "Luke has put the laptop
    …" and the like; by all its words the misheard sentence is among those asked of the audio,
    for an order question, a which-stream question and a "while someone talked about" one;
    nothing when a sentence says it, or for a which-stream question about a picture."""
    from episodic.core.query import Scope
    from episodic.reasoning.time_answers import SOUND_CHECKS_PER_THING

    library = ["Luke has put the laptop by the front desk.", "Amara will clean the reading lamp after lunch.",
               "The only three reason is in room 104.", "Lucas painted the library card for me.",
               "There is the printer again.", "I can hear the printer outside.", "Petra put the tray by the door."]
    station = ["The night train is in room 325.", "Tom painted the umbrella purple.", "Put the poster up, please."]
    memories = ([_memory("library-cam", 10.0 * i, [t]) for i, t in enumerate(library)]
                + [_memory("station-cam", 10.0 * i, [t]) for i, t in enumerate(station)])
    answerer, reader = _speech_answerer(memories)
    after = _shaped("What was mentioned right after the room for the poetry reading?")
    checks = answerer.placement_checks(after, ["Grace and the novels", "where Lucas left the laptop"], [], Scope(), reader)
    assert [phrase for phrase, _ in checks] == ["poetry reading"]
    assert library[2] in [u.text for u in checks[0][1]], [u.text for u in checks[0][1]]
    assert len(checks[0][1]) == SOUND_CHECKS_PER_THING
    which = _shaped("Which camera recorded the talk about the room for the poetry reading?")
    checks = answerer.talk_checks(which, ["station-cam", "library-cam"], Scope(), reader)
    assert [phrase for phrase, _ in checks] == ["poetry reading"]
    assert library[2] in [u.text for u in checks[0][1]], [u.text for u in checks[0][1]]
    pictured = _shaped("What picture was on screen while someone talked about the room for the poetry reading?")
    checks = answerer.talk_checks(pictured, ["a cat", "the moon"], Scope(), reader)
    assert [phrase for phrase, _ in checks] == ["poetry reading"] and library[2] in [u.text for u in checks[0][1]]
    assert answerer.talk_checks(_shaped("Which camera showed the moon?"), ["station-cam", "library-cam"],
                                Scope(), reader) == []
    heard = _shaped("Which camera recorded the talk about the umbrella Tom painted?")
    assert answerer.talk_checks(heard, ["station-cam", "library-cam"], Scope(), reader) == []
    # a sentence naming it places it, however weakly it matches the rest of the question
    named = _shaped("Which camera recorded the talk about the night train?")
    assert answerer.talk_checks(named, ["station-cam", "library-cam"], Scope(), reader) == []


def test_a_question_about_speech_asks_the_audio_for_a_thing_nothing_recalled_holds():
    """"How much is an egg?" with the price heard as "That may have been 54 times that of a
    cone top.": no sentence holds the egg, so the sentences nearest to the question are
    offered to be asked of the audio whether one says "egg"; nothing when a recalled sentence
    holds it (or a sign that does), or for a question about a sound."""
    from episodic.core.query import Scope
    from episodic.reasoning.time_answers import PLACE_CHECKS_PER_THING

    said = ["The weather looks fine today.", "That may have been 54 times that of a cone top.",
            "Maria painted the reading lamp yellow.", "Everyone seems to be in a good mood.",
            "Let me check the list once more.", "The soup tasting is in room 119."]
    answerer, reader = _speech_answerer([_memory("kitchen-cam", 10.0 * i, [t]) for i, t in enumerate(said)])
    question = _shaped("How much is an egg?")
    checks = answerer.object_checks(question, [], Scope(), reader)
    assert [phrase for phrase, _ in checks] == ["egg"]
    assert len(checks[0][1]) == PLACE_CHECKS_PER_THING and said[1] in [u.text for u in checks[0][1]]
    held = _unit("An egg is fifty-four pounds at the counter.")
    assert answerer.object_checks(question, [held], Scope(), reader) == []
    sign = _unit('EGGS £2', 'ocr')
    assert answerer.object_checks(question, [sign], Scope(), reader) == []  # a price tag may answer it
    heard = _shaped("What could be heard while the engine ran?")
    heard.asks_sound = True
    assert answerer.object_checks(heard, [], Scope(), reader) == []


def test_a_thing_priced_in_a_misheard_sentence_is_looked_for_where_an_option_s_price_was_said():
    """"How much is a magazine?" (34, 52, 31 or 45 dollars) with "Amaghaninen 52 northern at
    the counter.": the sentence shares no word with the question and would not be among the
    nearest, but it says one of the offered values, so it is asked of the audio besides them
    (not instead: the nearest may hold the thing with a value misheard)."""
    from episodic.core.query import Scope
    from episodic.reasoning.time_answers import PLACE_CHECKS_PER_THING

    said = ["How much is the magic show tonight?", "Magnets are on the counter.", "The magpie is back again.",
            "A map and a magnifier are at the counter.", "Let me check the list once more.",
            "Amaghaninen 52 northern at the counter.", "It is quite busy here this morning."]
    answerer, reader = _speech_answerer([_memory("library-cam", 10.0 * i, [t]) for i, t in enumerate(said)])
    question = _shaped("How much is a magazine?")
    (phrase, plain), = answerer.object_checks(question, [], Scope(), reader)
    assert phrase == "magazine" and said[5] not in [u.text for u in plain]
    options = ["34 dollars", "52 dollars", "31 dollars", "45 dollars"]
    (_, offered), = answerer.object_checks(question, [], Scope(), reader, options)
    assert [u.text for u in offered] == [u.text for u in plain] + [said[5]]
    assert len(plain) == PLACE_CHECKS_PER_THING


def test_a_count_takes_a_mention_heard_as_two_words():
    """"seagull" written as "sea call" (the same sounds, split in two) is a mention; a
    sentence with neither is not."""
    from episodic.core.query import Scope

    answerer, reader = _structured([
        _memory("harbour-cam", 0.0, ["Look, the seagull is here."]),
        _memory("harbour-cam", 10.0, ["No, it's the sea call again."]),
        _memory("harbour-cam", 20.0, ["The sea is calm today."]),
        _memory("harbour-cam", 30.0, ["Felix ordered ten ropes for the team."])])
    draft = answerer.count(_shaped("How many times was the seagull mentioned in harbour-cam?"), (), [], Scope(), reader)
    assert draft is not None and draft.answer.startswith("2 times"), draft.answer


def test_a_frames_colours_are_not_the_colour_of_the_thing_asked_about():
    """"What colour did Omar paint the spade?" with the painting sentence misheard ("map into
    the state blue"): a green frame ("a scene; colours: green") says nothing about the spade
    and must not outvote the sentence; a frame that names the thing ("a spade; colours: red")
    still counts."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import Answerer
    from episodic.reasoning.evidence_fit import colours_of_the_scene
    from episodic.retrieval.detailed import TextScorer

    question = "What colour did Omar paint the spade?"
    analysis = _with_objects(question, QueryType.VIDEO)
    assert analysis.shape.focus == "colour"
    scene = _unit("a scene; colours: green, grey", "visual", t=1.0)
    named = _unit("a spade; colours: red", "visual", t=1.0)
    said = _unit("Map into the state blue.", t=1.0)
    assert colours_of_the_scene(analysis, scene) and not colours_of_the_scene(analysis, named)
    assert not colours_of_the_scene(analysis, said)
    assert not colours_of_the_scene(_with_objects("What colour was it?", QueryType.VIDEO), scene)

    answerer = Answerer(None, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    for u, score in ((scene, 0.9), (said, 0.5)):
        u.score, u.cos = score, score
    options = ["blue", "pink", "purple", "green"]
    draft = answerer.synthesize(analysis, [scene, said], (), options)
    assert draft.choice_index == 0, draft


def test_the_audio_of_the_sentence_about_the_question_decides_where_it_says_no_option():
    """"The seed packet cost sport if I've not learned to make." holds the thing asked about
    but not its price; "55 pounds" is written only in the onion's sentence. The written match
    picks the onion's price; the audio of the seed packet's sentence, scored with each option
    in it (retrieval/option_audio.py), leans to another, and that lean is taken (a guess), never
    the other thing's value."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import NOT_ASKED, Answerer
    from episodic.reasoning.audio_lean import LEAN_SUPPORT, audio_lean
    from episodic.retrieval.detailed import TextScorer
    from episodic.retrieval.option_audio import OptionHearing

    answerer = Answerer(lambda: None, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    question = "How much does the seed packet cost?"
    own = _unit("The seed packet cost sport if I've not learned to make.")
    onion = _unit("Lidonium cost 55 pounds today.", t=60.0)
    for u in (own, onion):
        u.score, u.cos = 0.6, 0.6
    options = ["34 dollars", "45 dollars", "12 dollars", "55 pounds"]
    analysis = _with_objects(question)

    def choose(scores):
        hearing = None if scores is None else OptionHearing(scores=scores, heard=None, heard_in=own.text)
        return answerer.choose(analysis, options, [own, onion], NOT_ASKED, "", hearing=hearing)

    assert choose(None).choice_index == 3  # the written words alone: the onion's price
    lean = choose([-35.3, -31.6, -31.7, -37.5])
    assert lean.choice_index == 1 and "audio_lean" in lean.caps and lean.confidence <= LEAN_SUPPORT, lean
    # the other thing's value is ruled out even where the audio leans to it
    assert choose([-35.0, -33.0, -34.0, -30.0]).choice_index == 1
    said = OptionHearing(scores=[-35.0, -31.0, -34.0, -30.0], heard_in="The seed packet costs 45 dollars today.")
    assert audio_lean(analysis, options, [own, onion], said) is None  # the words say an option: they answer
    again = _unit("The seed packet is 45 dollars, I said.", t=90.0)
    assert audio_lean(analysis, options, [own, onion, again], OptionHearing(
        scores=[-35.3, -31.6, -31.7, -37.5], heard_in=own.text)) is None  # so does another sentence about it
    heard = OptionHearing(scores=[-40.0, -30.0, -36.0, -38.0], heard=1, heard_in=own.text)
    assert audio_lean(analysis, options, [own, onion], heard) is None  # clearly heard: the audio vote stands
    # an option is said whichever way its number is written, and only in full
    from episodic.reasoning.audio_lean import holds_option

    assert holds_option("45 dollars", "It costs forty-five dollars today.")
    assert not holds_option("45 dollars", "It costs 45 euros today.") and not holds_option("", "anything")
    # options the audio could not score (None) are never chosen by it
    unscored = OptionHearing(scores=[None, -31.6, None, -37.5], heard_in=own.text)
    assert audio_lean(analysis, options, [own, onion], unscored).index == 1


def test_a_sentence_that_says_an_option_as_written_outweighs_the_audio_s_pick_of_another():
    """Heard again with the options as hot words, "At 20 to 11, Grace's an appointment with
    the archivist." says 10:40; scoring each option in its slot against noisy audio led with
    1:20 by 3.1. The recogniser wrote 10:40 itself: the words decide, the audio's pick is
    dropped (on the dev sets' hearings whose sentence said one option, it was right 52 of 53
    times and the audio's other pick wrong twice). Where the sentence says no option, or the
    audio picks the one it says, the audio's vote stands."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import NOT_ASKED, Answerer
    from episodic.reasoning.audio_lean import written_over_heard
    from episodic.retrieval.detailed import TextScorer
    from episodic.retrieval.option_audio import OptionHearing

    answerer = Answerer(lambda: None, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    options = ["11:50", "1:20", "8:35", "10:40"]
    said = _unit("At 20 to 11, Grace's an appointment with the archivist.")
    said.score, said.cos = 0.6, 0.6
    analysis = _with_objects("When is Grace's appointment with the archivist?")
    against = OptionHearing(scores=[-30.0, -20.0, -29.0, -23.1], heard=1, margin=3.1, heard_in=said.text)
    assert written_over_heard(options, against)
    draft = answerer.choose(analysis, options, [said], NOT_ASKED, "", hearing=against)
    assert draft.choice_index == 3 and "heard" not in draft.caps, draft
    # the audio picking the option the sentence says, or a sentence saying none: the vote stands
    agrees = OptionHearing(scores=[-30.0, -25.0, -29.0, -20.0], heard=3, margin=5.0, heard_in=said.text)
    assert not written_over_heard(options, agrees)
    garbled = _unit("At quarter for Grace's an appointment with the archivist.")
    garbled.score, garbled.cos = 0.6, 0.6
    silent = OptionHearing(scores=[-30.0, -20.0, -29.0, -23.1], heard=1, margin=3.1, heard_in=garbled.text)
    assert not written_over_heard(options, silent)
    draft = answerer.choose(analysis, options, [garbled], NOT_ASKED, "", hearing=silent)
    assert draft.choice_index == 1 and draft.caps.get("heard") == 1.0, draft


def test_a_sentence_rules_out_only_the_option_it_matches_best():
    """Right after the magazine's price, "Omar bought 8 novels" was heard as "Oh, my bought
    it, how veils this morning." "Omar put the reading lamp by the front desk" shares the name
    with "Omar and the novels" but is where Omar left the lamp: it rules that option out, not
    the novels, which are left as the one option found nowhere."""
    from episodic.core.query import Scope
    from episodic.reasoning.time_answers import ELIMINATION_CONFIDENCE
    from episodic.retrieval.detailed import MemoryReader

    answerer, store = _reading_all_speech([
        _memory("library-cam", 0.0, ["A magazine is 54 dollars at the counter."]),
        _memory("library-cam", 10.0, ["Oh, my bought it, how veils this morning."]),
        _memory("library-cam", 20.0, ["The poetry reading is in room 406."]),
        _memory("library-cam", 30.0, ["Grace will clean the library card after lunch."]),
        _memory("library-cam", 40.0, ["Omar put the reading lamp by the front desk."]),
    ])
    options = ["the room for the poetry reading", "Omar and the novels", "where Omar left the reading lamp",
               "who takes care of the library card"]
    draft = answerer.next_to(_shaped("What was mentioned right after the price of the magazine?"), options, [],
                             Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 1, draft
    assert draft.caps.get("eliminated") == 3.0 and draft.confidence <= ELIMINATION_CONFIDENCE, draft


def test_a_value_said_of_another_thing_does_not_answer_the_option_question():
    """"The poetry reading has moved to room 1 or 4." says 104, but of the poetry reading; the
    flower show's own sentence ("…flower shop has moved to room 16", "one sixteen" misheard)
    says no option. The poetry reading's room is not chosen as the flower show's with full
    support (it was, at 0.96: "moved to room" matched the question as well as the right
    sentence did); with no sentence about the flower show, the value still counts."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import NOT_ASKED, Answerer
    from episodic.reasoning.evidence_fit import OBJECT_ELSEWHERE, about_something_else
    from episodic.retrieval.detailed import TextScorer

    answerer = Answerer(lambda: None, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    analysis = _with_objects("Which room has the flower show moved to?")
    other = _unit("The poetry reading has moved to room 1 or 4.", t=40.0)
    own = _unit("The flower shop has moved to room 16.", t=48.0)
    for u in (other, own):
        u.score, u.cos = 0.6, 0.6
    options = ["104", "124", "116", "202"]
    assert about_something_else(analysis, [other, own], [0.67, 1.0]) == [True, False]
    assert about_something_else(analysis, [other], [0.67]) == [False]  # nothing about the show: no judge
    draft = answerer.choose(analysis, options, [other, own], NOT_ASKED, "")
    assert draft.choice_index != 0 or draft.caps["support"] <= OBJECT_ELSEWHERE, draft
    assert draft.confidence <= 0.5, draft
    alone = answerer.choose(analysis, options, [other], NOT_ASKED, "")
    assert alone.choice_index == 0 and alone.caps["support"] > OBJECT_ELSEWHERE, alone


def test_an_order_question_naming_a_stream_places_its_anchor_in_that_stream():
    """"What was said right after the screen went dark in garden-cam?": garden-cam's dark
    stretch, not an earlier one elsewhere."""
    from episodic.core.query import Scope

    memories = [
        _memory("library-cam", 0.0, ["Quiet please."], dark=True),
        _memory("library-cam", 10.0, ["The poetry reading starts soon."]),
        _memory("garden-cam", 0.0, ["The robin is back."]),
        _memory("garden-cam", 10.0, [], dark=True),
        _memory("garden-cam", 20.0, ["Water the tomato plants now."]),
    ]
    from episodic.retrieval.detailed import units_of

    answerer, reader = _structured(memories, embed=True)
    everything = [u for m in memories for u in units_of(m, None, False) if u.modality != "summary"]
    # feature search stands in: every unit of the streams in scope
    answerer._candidates = lambda text, scope, reader, extra: [
        u for u in everything if not scope.stream_ids or u.stream_id in scope.stream_ids]
    question = "What was said right after the screen went dark in garden-cam?"
    draft = answerer.next_to(_shaped(question), (), [], Scope(), reader)
    assert draft is not None and draft.answer.startswith("Water the tomato plants"), draft


def test_irregular_past_forms_and_the_asked_kind_do_not_cost_coverage():
    """"At what place is the watering can kept?" over "…, Omar keeps it at the tool shed.":
    "kept" is "keeps" (no suffix rule reaches it) and "place" only says what kind of answer is
    wanted; before, two of three question words were missing and the answer was refused."""
    from episodic.config import Settings
    from episodic.reasoning.answer import Answerer
    from episodic.retrieval.query_analysis import answer_kind_terms, stem

    assert stem("kept") == stem("keeps") and stem("left") == stem("leaves") and stem("bought") == stem("buy")
    assert stem("apples") == stem("apple")  # the suffix rules still apply
    assert answer_kind_terms("At what place is the watering can kept?") == {stem("place")}
    assert answer_kind_terms("Which colour should Chen's board be?") == {stem("colour")}
    assert answer_kind_terms("What did Omar keep in the shed?") == frozenset()
    a = _with_objects("At what place is the watering can kept?")
    unit = _unit("If you need the watering can, Omar keeps it at the tool shed.")
    unit.cos = 0.7
    answerer = Answerer(lambda: None, scorer=None, settings=Settings().retrieval)
    conf, _, caps = answerer.assess(a, "the tool shed", [unit])
    assert caps["coverage"] == 1.0 and conf > 0.5, caps


def test_next_to_a_sound_is_once_it_stopped_and_is_said_not_heard():
    """"What was said right after the music?": a sound lasts, so what came after it is what
    came once it stopped (not a sentence said over it), and what was *said* is a sentence, not
    the background noise that followed; "…just before the music?" with music at the start and
    again later is answered before the later one (before the first there is nothing)."""
    import numpy as np

    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.core.records import ShortTermMemory, SoundObservation, TranscriptPiece
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer, units_of

    def memory(t0, said=(), sounds=()):
        return ShortTermMemory(
            id=f"library-cam@{t0}", stream_id="library-cam", t_start=t0, t_end=t0 + 10.0, vector=np.zeros(4),
            transcript=[TranscriptPiece(a, b, x) for a, b, x in said],
            sounds=[SoundObservation(a, b, kind, 0.9, desc) for a, b, kind, desc in sounds])

    memories = [
        memory(0.0, [(6.0, 7.5, "Tom is here already.")], [(0.0, 9.0, "music", "music playing")]),
        memory(10.0, [(12.0, 14.0, "The story hour is in room 12.")], [(9.0, 11.0, "noise", "background noise")]),
        memory(20.0, [(21.0, 23.0, "Lucas bought four novels.")]),
        memory(30.0, [], [(30.0, 38.0, "music", "music playing")]),
    ]
    store = ListingStore(memories)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    everything = [u for m in memories for u in units_of(m, None, False) if u.modality in ("speech", "sound")]
    answerer._candidates = lambda text, scope, reader, extra: list(everything)
    reader = MemoryReader(store)

    draft = answerer.next_to(_shaped("What was said right after the music?"), (), [], Scope(), reader)
    assert draft is not None and draft.answer.startswith("The story hour is in room 12."), draft
    draft = answerer.next_to(_shaped("What was said just before the music?"), (), [], Scope(), reader)
    assert draft is not None and draft.answer.startswith("Lucas bought four novels."), draft


def test_a_named_sound_is_not_placed_by_another_sound():
    """"What was said right after the engine noise?" where the engine ran late in the stream
    and plain background noise came early: the engine places the moment, not the sound that
    shares the word "noise"; with no engine heard at all, no sound places it."""
    from episodic.core.query import Scope

    memories = [
        _memory("kitchen-cam", 0.0, ["Everyone seems to be in a good mood."], [(0.0, 4.0, "noise", "background noise")]),
        _memory("kitchen-cam", 10.0, ["The soup tasting starts at noon."]),
        _memory("kitchen-cam", 20.0, [], [(0.0, 8.0, "engine", "an engine running")]),
        _memory("kitchen-cam", 30.0, ["Lucas bought four onions."]),
    ]
    def answerer_over(kept):
        from episodic.config import Settings
        from episodic.memory.text_embedder import MiniLMEmbedder
        from episodic.reasoning.structured import StructuredAnswerer
        from episodic.retrieval.detailed import MemoryReader, TextScorer, units_of

        store = ListingStore(kept)
        answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
        everything = [u for m in kept for u in units_of(m, None, False) if u.modality in ("speech", "sound")]
        answerer._candidates = lambda text, scope, reader, extra: list(everything)
        return answerer, MemoryReader(store)

    answerer, reader = answerer_over(memories)
    draft = answerer.next_to(_shaped("What was said right after the engine noise?"), (), [], Scope(), reader)
    assert draft is not None and draft.answer.startswith("Lucas bought four onions."), draft
    answerer, reader = answerer_over(memories[:2])
    draft = answerer.next_to(_shaped("What was said right after the engine noise?"), (), [], Scope(), reader)
    assert draft is None or "background noise" not in draft.answer, draft


@pytest.mark.parametrize("question", ["Tell me about the lawn mower.", "What was said about the lawn mower?",
                                      "What do you know about the lawn mower?"])
def test_asked_for_an_account_the_answer_is_the_sentence_not_a_phrase_of_it(question):
    """"Tell me about the lawn mower." over "Lord, that lawn mower is here.": the sentence, not
    "Lord" (the words of it the question does not have); "What is by the lawn mower?" still
    gets the phrase."""
    unit = _unit("Lord, that lawn mower is here.")
    assert span_in(unit, _analysis(question)) is None
    assert span_in(unit, _analysis("What is by the lawn mower?")) is not None


def test_what_was_said_while_a_sound_went_on():
    """"What was said while the engine was running?": the sentences spoken during the engine's
    stretch (in the named stream), not the text most like the question; a sound during which
    no words were heard says so; speech *about* a sound is another question."""
    from episodic.core.query import Scope

    assert question_shape("What happened while the engine was running in garden-cam?").said_while_sound
    assert question_shape("While people were clapping, what was mentioned?").said_while_sound
    assert not question_shape("What was said while someone talked about the engine?").said_while_sound
    assert not question_shape("What picture was on screen while the music played?").said_while_sound
    answerer, reader = _structured(STREAMS)
    draft = answerer.said_while_sound(_shaped("What was said while the engine was running?"), (), Scope(), reader)
    assert draft is not None and draft.answer.startswith('"Tomato plants again, and the lawn mower."'), draft
    draft = answerer.said_while_sound(_shaped("What was said during the music in garden-cam?"), (), Scope(), reader)
    assert draft is not None and "The lawn mower is broken." in draft.answer, draft
    silent = [_memory("garden-cam", 0.0, [], [(0, 10, "music", "music playing")]),
              _memory("garden-cam", 10.0, ["The lawn mower is broken."])]
    answerer, reader = _structured(silent)
    draft = answerer.said_while_sound(_shaped("What was said during the music?"), (), Scope(), reader)
    assert draft is not None and draft.answer.startswith("No words were heard while"), draft
    assert answerer.said_while_sound(_shaped("What was said while the siren wailed?"), (), Scope(), reader) is None


def test_who_was_mentioned_names_everyone_and_one_person_names_one():
    """"Who was mentioned in garden-cam?" and "How many people were mentioned …?" ask for all
    the names heard there (most voted first, counted for "how many"); "Name one person …" for
    one. People on screen are the detectors' question, not this one."""
    from episodic.core.query import Scope
    from episodic.reasoning.recording_facts import asks_about_the_recording

    answerer, reader = _structured(STREAMS)
    everyone = answerer.gist(_shaped("Who was mentioned in garden-cam?"), (), Scope(), reader)
    assert everyone is not None and set(everyone.answer.split(" (heard")[0].split(", ")) == {"Priya", "Daniel"}
    counted = answerer.gist(_shaped("How many people were mentioned in garden-cam?"), (), Scope(), reader)
    assert counted is not None and counted.answer.startswith("2: "), counted
    one = answerer.gist(_shaped("Name one person who was mentioned in garden-cam."), (), Scope(), reader)
    assert one is not None and "," not in one.answer.split(" (heard")[0], one
    # one name heard two ways is one person
    heard = [_memory("harbour-cam", 0.0, ["Omar is meeting the captain at noon.", "Oma put the rope by the dock."])]
    h_answerer, h_reader = _structured(heard)
    draft = h_answerer.gist(_shaped("Who was mentioned in harbour-cam?"), (), Scope(), h_reader)
    assert draft is not None and draft.answer.startswith("Omar (heard"), draft
    assert not asks_about_the_recording("How many people were mentioned in garden-cam?")
    assert asks_about_the_recording("How many people were on screen in garden-cam?")


def test_who_someone_meets_is_not_their_own_name_misheard_and_may_be_a_role():
    """"Who is Sofia meeting?" is not answered "Sophie" (Sofia heard another way); with no
    other name in the sentence, the person met by what they do is the answer, as a guess:
    "Sofia is meeting the fisherman at quarter to seven." → "the fisherman"."""
    from episodic.reasoning.short_answer import GUESSED_SPAN_QUALITY
    from episodic.retrieval.people_words import role_phrase

    a = _analysis("Who is Sofia meeting?")
    assert span_in(_unit("Sophie."), a) is None
    span = span_in(_unit("Sofia is meeting the fisherman at quarter to seven."), a)
    assert span is not None and span.text == "the fisherman" and span.quality == GUESSED_SPAN_QUALITY
    named = span_in(_unit("Sofia is meeting Daniel at noon."), a)
    assert named is not None and named.text == "Daniel" and named.quality == 1.0
    assert role_phrase("Chen is meeting the ticket inspector at noon.") == "the ticket inspector"
    assert role_phrase("Put it by the water tower.") == ""


def test_what_was_said_while_a_picture_was_on_screen_spans_every_key_frame_showing_it():
    """A rocket on screen from 60 s to 71 s leaves two key frames that show it about as surely:
    one over the memory where "Noor will clean the suitcase" was said, and a one-second sliver
    at the start of the next memory, guessed a hair more surely. What was said while the rocket
    was shown is read over both (taken from the sliver alone, nothing was said then). And a
    stretch the classifier surely guessed as something (the rocket) is no picture of coins."""
    import numpy as np

    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.core.records import FrameObservation, ShortTermMemory, TranscriptPiece
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.reasoning.structured import StructuredAnswerer, surely_something
    from episodic.retrieval.detailed import MemoryReader, TextScorer, units_of

    def memory(t0, said, frames):
        return ShortTermMemory(
            id=f"airport-cam@{t0}", stream_id="airport-cam", t_start=t0, t_end=t0 + 10.0, vector=np.zeros(4),
            transcript=[TranscriptPiece(t0 + 1.0, t0 + 3.0, said)],
            frames=[FrameObservation(t=t, description=f"a scene; colours: {c}", guesses=g, part_guesses=p)
                    for t, g, p, c in frames],
            metadata={"models": {"describer": OfflineVisualDescriber.model_id}})

    rocket = ([("a rocket", 0.39), ("missile", 0.15)], [("a rocket", 0.76)])
    airport = [memory(0.0, "The weather looks fine today.", [(0.0, [("a remote control", 0.19)], [], "grey")]),
               memory(30.0, "Zara ordered three coffees for the team.", [(30.0, [], [], "grey")]),
               memory(60.0, "Noor will clean the suitcase after lunch.", [(60.0, *rocket, "blue")]),
               memory(70.0, "Everyone seems to be in a good mood.",
                      [(70.0, rocket[0], [("a rocket", 0.77)], "blue"), (71.0, [], [], "green")])]
    # the rest of the stream: a rocket on most of its key frames would be its background
    airport += [memory(t0, "Let me check the list once more.", [(t0, [], [], "grey")]) for t0 in range(90, 200, 10)]
    store = ListingStore(airport)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    everything = [u for m in airport for u in units_of(m, None, False)]
    answerer._candidates = lambda text, scope, reader, extra: list(everything)
    analysis = _analysis("What was mentioned while a picture of a rocket was on screen?", QueryType.VIDEO_AUDIO)
    options = ["Zara and the coffees", "who takes care of the suitcase", "the weather today"]
    draft = answerer.said_while_pictured(analysis, options, Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 1 and draft.caps["route"] == 11.0, draft
    frames = [u for u in everything if u.modality == "visual"]
    assert surely_something(frames, "airport-cam", 60.0, 71.0)
    assert not surely_something(frames, "airport-cam", 0.0, 10.0)
    assert not surely_something(frames, "desk-cam", 60.0, 71.0)


def test_a_stream_where_the_thing_was_only_said_did_not_show_it():
    """"Which camera showed a cup of coffee?": airport-cam only *said* coffee ("Ravi ordered 17
    coffees for the team."), zoo-cam showed it, unnamed in its description but guessed an
    espresso by the classifier. The guess is a sighting, the sentence is not; asked which
    recording *mentioned* coffee, the sentence answers."""
    from dataclasses import replace

    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.core.records import FrameObservation
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer

    said = _memory("airport-cam", 140.0, ["Ravi ordered 17 coffees for the team."])
    shown = replace(_memory("zoo-cam", 54.6, ["Let's find today."]),
                    frames=[FrameObservation(t=55.0, description="a scene; colours: orange",
                                             guesses=[("espresso", 0.55), ("cup", 0.2)])])
    store = _SearchingStore([said, shown, _memory("pool-cam", 7.0, ["The whistle is here."])])
    embedder = MiniLMEmbedder(Settings())
    answerer = StructuredAnswerer(store, scorer=TextScorer(embedder), settings=Settings().retrieval)
    reader, analyzer = MemoryReader(store), QueryAnalyzer(embedder)
    options = ("airport-cam", "pool-cam", "zoo-cam")

    def answer(question: str):
        vec = np.asarray(embedder.embed_texts([question])[0], dtype=np.float32)
        analysis = analyzer.analyze(question, vec)
        analysis.shape = question_shape(question)
        return answerer.which_stream(analysis, vec, options, Scope(), reader)

    draft = answer("Which camera showed a cup of coffee?")
    assert draft is not None and options[draft.choice_index] == "zoo-cam", draft
    for question in ("In which recording were coffees mentioned?", "Which camera showed someone talking about coffee?"):
        draft = answer(question)
        assert draft is not None and options[draft.choice_index] == "airport-cam", (question, draft)


def test_a_sentence_holding_one_of_the_things_asked_about_beats_one_that_only_means_something_near():
    """"What picture was on screen while someone talked about the time of the story hour?":
    the story hour was said in noise ("At seven forty the story hour gets going." heard "Act
    740 the story of Agate's loading."), and a sentence about the afternoon means something
    near "the time of the story hour" without holding any of its words. The word found and the
    cosine together place the story hour's sentence first; the higher of the two alone chose
    the afternoon (0.43 against 0.33), and the picture shown then."""
    from episodic.retrieval.detailed import Unit

    answerer, _ = _structured([], embed=True)
    units = [Unit("library-cam", "l@0", 1.6, 4.4, "speech", "Act 740 the story of Agate's loading."),
             Unit("harbour-cam", "h@47", 47.3, 49.4, "speech", "We should be finished before the afternoon.")]
    m = answerer._match("the time of the story hour", units, raised=True)
    assert m[0] > m[1], m
    plain = answerer._match("the time of the story hour", units)  # the higher of the two
    assert plain[0] < plain[1] and m[1] == pytest.approx(plain[1])
    assert m[0] >= 1 / 3  # never below the share of words found
    # the cosine alone where no word is found, the words alone where the meaning is far
    far = Unit("s", "s@0", 0.0, 1.0, "speech", "Zebra stripes.")
    assert answerer._match("the story hour", [far], raised=True)[0] == pytest.approx(0.0, abs=1e-6)
    assert answerer._match("story", [Unit("s", "s@0", 0.0, 1.0, "speech", "A story.")], raised=True)[0] == \
        pytest.approx(1.0)


@pytest.mark.parametrize(
    "question, field, value",
    [
        ("When's the flower show happening?", "focus", "time"),
        ("What's the start time of the poetry reading?", "focus", "time"),
        ("Zara's appointment with the vet is when?", "focus", "time"),
        ("Tell me when the wedding styling starts.", "focus", "time"),
        ("The sign in museum-cam says it's open till when?", "focus", "time"),
        ("What closing time did the sign in harbour-cam give?", "focus", "time"),
        ("While garden-cam showed nothing but darkness, what was discussed?", "said_while_dark", True),
        ("In garden-cam, when the image went black, what were they saying?", "said_while_dark", True),
        ("With a cup of coffee pictured on screen, what was said?", "said_while_pictured", "a cup of coffee"),
        ("What was pictured during the talk about the price of the magazine?", "pictured_while", "the price of the magazine"),
        # a request around the question
        ("Tell me where Maria left the spade.", "focus", "place"),
        ("I want to know when the ferry leaves.", "focus", "time"),
        ("Could you tell me which room the flower show is in?", "focus", "number"),
        ("I'd like to know how many tickets Tom bought.", "focus", "number"),
        # …and what they must not become
        ("When Tom arrived, what did he say?", "focus", "any"),
        ("When the screen went dark what was said?", "focus", "any"),
        ("Who's Tom's sister?", "focus", "name"),
        ("With whom did Tom meet?", "said_while_pictured", ""),
    ],
)
def test_questions_worded_freely_keep_their_shape(question, field, value):
    """Session 82's rewordings (benchmarks/qa_rewordings.py): contractions, a sign open "till
    when", "darkness", a moment placed by "with … pictured"; read as the analysis reads them."""
    from episodic.retrieval.plain_wording import asked_plainly
    from episodic.retrieval.query_analysis import QueryAnalyzer

    assert getattr(question_shape(asked_plainly(question)), field) == value
    # the analysis reads the question so, whatever else it does with it
    assert getattr(QueryAnalyzer(HashEmbedder()).analyze(question).shape, field) == value


@pytest.mark.parametrize(
    "question, spelled",
    [
        ("When's the show?", "When is the show?"),
        ("What's Tom's job?", "What is Tom's job?"),  # the possessive kept
        ("Where'd Tom put the cat's bowl?", "Where did Tom put the cat's bowl?"),
        ("Why doesn't it start? I can't tell, we won't know.", "Why does not it start? I cannot tell, we will not know."),
        ("They're sure it's here, aren't they?", "They are sure it is here, are not they?"),
        ("Who’ll fix it?", "Who will fix it?"),  # a typographic apostrophe
        ("Where is the spade?", "Where is the spade?"),
        ("Till when is it open? Open 'til 8?", "Until when is it open? Open until 8?"),
        ("Where is the till?", "Where is the till?"),  # a shop's till
    ],
)
def test_contractions_are_spelled_out(question, spelled):
    from episodic.retrieval.plain_wording import spelled_out

    assert spelled_out(question) == spelled


@pytest.mark.parametrize(
    "question, plain",
    [
        ("Can you tell me where Tom left the bag?", "Where Tom left the bag?"),
        ("Please, tell me what colour the lamp is.", "What colour the lamp is?"),
        # a question embedded in a statement or a polite frame (session 84)
        ("I'm trying to remember when Maria is meeting the volunteer.", "When Maria is meeting the volunteer?"),
        ("Do you happen to know at what time Daniel sees the captain?", "At what time Daniel sees the captain?"),
        ("I can't remember how many novels Omar bought.", "How many novels Omar bought?"),
        ("Can you remind me where Diego put the watering can down?", "Where Diego put the watering can down?"),
        ("I was wondering, who fixed the lamp?", "Who fixed the lamp?"),
        ("I'd like to know the time of the flower show.", "What is the time of the flower show?"),
        ("I forgot Tom's birthday.", "I forgot Tom's birthday."),
        ("Do you know who's fixing the ladle?", "Who is fixing the ladle?"),
        ("Any idea how much the egg costs?", "How much the egg costs?"),
        # no question word after it: a request for something else, kept
        ("Tell me about the garden.", "Tell me about the garden."),
        ("Do you know Tom?", "Do you know Tom?"),
    ],
)
def test_a_request_around_a_question_is_dropped(question, plain):
    from episodic.retrieval.plain_wording import asked_plainly

    assert asked_plainly(question) == plain


@pytest.mark.parametrize(
    "question, plain",
    [
        # said before a question, asking nothing; a trailing "please"
        ("And after the bell, what came next?", "After the bell, what came next?"),
        ("So, where is the spade?", "Where is the spade?"),
        ("Room number for the flower show, please.", "What is the room number for the flower show."),
        # a thing put first, asked about after a comma or colon
        ("The umbrella Priya painted, what colour is it?", "What colour is the umbrella Priya painted?"),
        ("So the story hour, what time is that?", "What time is the story hour?"),
        ("Tom's bag - where is it now?", "Where is Tom's bag now?"),
        ("The bell or the song: which came up first?", "Which came up first, the bell or the song?"),
        ("where Tom left the watering can or who fixed the lamp: which was said sooner?",
         "Which was said sooner, where Tom left the watering can or who fixed the lamp?"),
        # a bare noun phrase asking for a kind of fact, and a request for one
        ("Price of the novel?", "What is the price of the novel?"),
        ("Closing time on the sign in garden-cam?", "What is the closing time on the sign in garden-cam?"),
        ("I need the time of Mei's appointment.", "What is the time of Mei's appointment?"),
        ("Tell me the colour Henrik painted the brochure.", "What is the colour Henrik painted the brochure?"),
        # frames, clauses and phrases that are not questions stay as they are
        ("In garden-cam, when the image went black, what were they saying?",
         "In garden-cam, when the image went black, what were they saying?"),
        ("Ignoring the voices, what else was audible in garden-cam?", "Ignoring the voices, what else was audible in garden-cam?"),
        ("Overall, what is garden-cam about?", "Overall, what is garden-cam about?"),
        ("Right after the bell, what was said?", "Right after the bell, what was said?"),
        ("Where did Tom, the porter, leave it?", "Where did Tom, the porter, leave it?"),
        ("the rope was mentioned; what came next?", "the rope was mentioned; what came next?"),
        ("The sign in school-cam named a classroom: which number?", "The sign in school-cam named a classroom: which number?"),
        ("the price of the novel", "the price of the novel"),  # a moment query
    ],
)
def test_a_question_in_a_loose_spoken_build_is_put_in_order(question, plain):
    """Session 83: "And …", "…, please", a thing put first, a bare noun phrase: ways of asking
    that do not depend on what is asked about."""
    from episodic.retrieval.plain_wording import asked_plainly

    assert asked_plainly(question) == plain


@pytest.mark.parametrize(
    "question, plain",
    [
        ("where did omar leave the spade", "where did Omar leave the spade"),
        ("what did grace say about the bill", "what did Grace say about the bill"),
        ("how much is the mark down on the rose", "how much is the mark down on the rose"),
        ("Where did omar leave it?", "Where did omar leave it?"),  # written with capitals: as written
    ],
)
def test_given_names_typed_in_lower_case_are_read_as_names(question, plain):
    """Session 84: a question typed all in lower case named nobody ("omar" was no key term)."""
    from episodic.retrieval.plain_wording import asked_plainly
    from episodic.retrieval.query_analysis import QueryAnalyzer

    assert asked_plainly(question) == plain
    if plain != question:
        assert QueryAnalyzer(HashEmbedder()).analyze(question).names_someone


@pytest.mark.parametrize(
    "question, field, value",
    [
        ("What's the latest Maria can see the driver?", "focus", "time"),
        # session 84: a question embedded in a statement, one of two offered with its reverse,
        # a screen that "showed nothing"
        ("I'm trying to remember when Maria is meeting the volunteer.", "focus", "time"),
        ("Tom left the laptop where?", "focus", "place"),
        ("Was the time of the flower show mentioned before where Diego left the watering can, or the other way round?",
         "compared", ("the time of the flower show", "where Diego left the watering can")),
        ("Did the rope come up after the price of the novel, or before?", "order", "last"),
        ("What was being discussed while garden-cam showed nothing?", "said_while_dark", True),
        ("Diego sees the librarian when exactly?", "focus", "time"),
        ("I need the time of Mei's appointment with the stylist.", "focus", "time"),
        ("What was mentioned right after the time of the flower show?", "focus", "any"),  # not asked
        ("What was the latest thing mentioned in garden-cam?", "focus", "any"),
        ("Ignoring the voices, what else was audible in garden-cam?", "sound", True),
        ("What were they talking about before they got to the price of the rope?", "anchor", "the price of the rope"),
        ("And after the price of the rope, what did they move on to?", "asks_said", True),
        # session 83's check (after its figures were taken): "bring up", "ahead of"
        ("What did they bring up after the price of the rope?", "anchor", "the price of the rope"),
        ("What did they bring up after the price of the rope?", "asks_said", True),
        ("What came just ahead of the price of the rope?", "order", "before"),
        ("When the garden-cam had no picture, what did people talk about?", "said_while_dark", True),
        ("What was audible while harbour-cam was blacked out?", "sound", True),
        ("What was said while harbour-cam was blacked out?", "said_while_dark", True),
        ("The bell or the song: which came up sooner?", "compared", ("the bell", "the song")),
        ("Did the bell or the song come up first?", "compared", ("the bell", "the song")),
        ("Was the price of the rope or where Tom left the bag mentioned later?", "order", "last"),
    ],
)
def test_loosely_built_questions_keep_their_shape(question, field, value):
    from episodic.retrieval.query_analysis import QueryAnalyzer

    assert getattr(QueryAnalyzer(HashEmbedder()).analyze(question).shape, field) == value


def test_words_for_dear_or_cheap_are_no_things_to_find():
    """"Is the novel expensive? How much?": the memory says the novel costs $12, never
    "expensive"; the word asks for a price like "price" does."""
    from episodic.retrieval.query_analysis import QueryAnalyzer

    analysis = QueryAnalyzer(HashEmbedder()).analyze("Is the novel expensive? How much?")
    assert analysis.object_terms == ["novel"] and analysis.shape.focus == "number"


def test_a_when_that_closes_the_question_asks_a_time_and_joins_no_moments():
    """"The sign says it's open till when?": the "when" asks for the time; read as a connector
    with "says" it made the question cross-modal (speech while a sign was shown), and the sign
    was never retrieved."""
    from episodic.retrieval.query_analysis import QueryAnalyzer

    analyzer = QueryAnalyzer(HashEmbedder())
    for question in ("The sign in garden-cam says it's open till when?", "Zara's appointment with the vet is when?"):
        analysis = analyzer.analyze(question)
        assert "temporal" not in analysis.cues and analysis.query_type is not QueryType.VIDEO_AUDIO, (question, analysis.why)
    assert "temporal" in analyzer.analyze("What was said when the screen went dark?").cues
    assert "temporal" in analyzer.analyze("When Omar was discussed, which image was on screen?").cues



def test_a_which_stream_question_reads_the_sentence_its_nearest_vectors_miss():
    """"Which camera recorded the talk about Mei's appointment with the concierge?": a
    stream's key frames each keep a vector, and theirs ("a scene; colours: green") took every
    nearest place, so "Don't forget, make us to see the concierge at I-50." was never read and
    its stream lost to one whose receptionist sentence was merely near in meaning. The
    sentences that best match the thing talked about are read too."""
    from episodic.config import Settings
    from episodic.core.query import Scope
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer

    memories = [
        _memory("gym-cam", 0.0, ["Don't forget Greta has to see the receptionist at 7.30 am."]),
        _memory("gym-cam", 10.0, ["Look, the rowing machine is here."]),
        _memory("hotel-cam", 0.0, ["It is quite busy here this morning."]),
        _memory("hotel-cam", 10.0, ["Don't forget, make us to see the concierge at I-50."]),
        _memory("hotel-cam", 20.0, ["The pillow is on sale for 57 pounds."]),
    ]

    class FramesFirst(_SearchingStore):
        """Nearest rows as a store whose key frames each keep a vector answers them: each
        stream's first memory, however many rows are asked for."""

        def search_memory_ids(self, q_vec, source, top_k=10, modality=None, stream_ids=None, **_):
            return [(m.id, 0.33) for m in self.list_memories(stream_ids) if m.t_start == 0.0] * top_k

    store = FramesFirst(memories)
    embedder = MiniLMEmbedder(Settings())
    answerer = StructuredAnswerer(store, scorer=TextScorer(embedder), settings=Settings().retrieval)
    question = "Which camera recorded the talk about Mei's appointment with the concierge?"
    vec = np.asarray(embedder.embed_texts([question])[0], dtype=np.float32)
    analysis = QueryAnalyzer(embedder).analyze(question, vec)
    analysis.shape = question_shape(question)
    draft = answerer.which_stream(analysis, vec, ["gym-cam", "hotel-cam"], Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 1, draft
    assert draft.support[0].memory_id == "hotel-cam@10.0", draft.support


def test_a_time_written_as_one_bare_number_in_the_sentence_about_the_question_answers():
    """"When is the story hour starting?" recalls "Please remember at the story hour we've been
    at 425.": Whisper writes "four twenty-five" as one number. That sentence says the option
    "four twenty-five"; the audio of its slot, which leaned to "four twenty" by 1.8 (a margin
    too small to call heard), does not overrule the words. A bare number read as a clock time
    only for a clock-time option, and only in the sentences about the question."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.answer import NOT_ASKED, Answerer
    from episodic.reasoning.audio_lean import audio_lean, says_option
    from episodic.retrieval.detailed import TextScorer
    from episodic.retrieval.option_audio import OptionHearing

    answerer = Answerer(lambda: None, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    said = _unit("Please remember at the story hour we've been at 425.")
    said.score, said.cos = 0.6, 0.6
    options = ["11:25", "8:50", "four twenty-five", "4:20"]
    analysis = _with_objects("When is the story hour starting?")
    leaning = OptionHearing(scores=[-28.6, -28.4, -17.2, -15.3], heard=None, margin=1.8, heard_in=said.text)
    assert audio_lean(analysis, options, [said], leaning) is None
    draft = answerer.choose(analysis, options, [said], NOT_ASKED, "", hearing=leaning)
    assert draft.choice_index == 2 and "audio_lean" not in draft.caps, draft
    assert says_option("4:25", said.text) and says_option("10:40", "See you at 1040.")
    assert not says_option("4:20", said.text) and not says_option("425 pounds", "at 4.25")
    assert not says_option("4:25", "It is 4 25 metres long.")  # two numbers are no one clock time


def test_a_thing_whose_words_were_heard_is_not_looked_for_in_the_audio_of_other_sentences():
    """"Which was mentioned first: Luca and the seats or Henrik's appointment with the stage
    manager?" with Henrik heard as "Henry": the appointment is placed weakly (its name is not
    found), but its telling words, "stage manager", were heard. Asking the audio of the other
    sentences for them could only place it a second time, wrongly ("There is the stage bit
    again." took "stage manager" at -6.9 and made the answer "Luca and the seats" at 0.97);
    a thing whose words no sentence holds is still offered."""
    from episodic.core.query import Scope

    said = ["Don't forget, Henry has to see the stage manager at 10 o'clock.", "Nor looks after the wig these days.",
            "Only for seats are left, Luca told me.", "There is the stage bit again.",
            "Look, the stage Bailey's gear.", "The dress rehearsal has moved to room 405."]
    answerer, reader = _speech_answerer([_memory("theatre-cam", 15.0 * i, [t]) for i, t in enumerate(said)])
    options = ["Luca and the seats", "Henrik's appointment with the stage manager"]
    first = _shaped("Which was mentioned first: Luca and the seats or Henrik's appointment with the stage manager?")
    assert answerer.placement_checks(first, options, [], Scope(), reader) == []
    lost = ["Luca and the seats", "Henrik's appointment with the costume maker"]
    other = _shaped("Which was mentioned first: Luca and the seats or Henrik's appointment with the costume maker?")
    checks = answerer.placement_checks(other, lost, [], Scope(), reader)
    assert [phrase for phrase, _ in checks] == ["costume maker"], checks


def test_a_thing_of_two_words_is_listened_for_where_it_sounds_like_one_word_split_otherwise():
    """"How many times was the lawn mower mentioned in garden-cam?" with both mentions heard
    as "long noise": word by word, "mower" sounds like nothing in "There is the long noise
    again." (0.5, last of twelve sentences, so never asked of the audio and the count one
    short); said as one word, LNMWR against "longnoise" is 0.82, and that sentence is among
    those asked."""
    from episodic.core.query import Scope
    from episodic.retrieval.text_match import phrase_sound_nearness, sound_nearness

    said = ["The harvest has been in room 309.", "Look, the long noise in here.",
            "We should be finished before the afternoon.", "I see pocket and thirty seven year long at the counter.",
            "There is the long noise again.", "Ruth painted the wheelbarrow light.",
            "Diego bought seven tomato plants this morning.", "The flower show starts at center 9.",
            "And is repairing the stage.", "Let me check the least once more.", "The way that looks I interpret.",
            "Erm, with one scene, I'm in a good mood."]
    answerer, reader = _speech_answerer([_memory("garden-cam", 7.0 * i, [t]) for i, t in enumerate(said)])
    asked = [u.text for u in answerer.mention_targets(
        _shaped("How many times was the lawn mower mentioned in garden-cam?"), Scope(), reader)]
    assert said[4] in asked and said[1] in asked, asked
    assert phrase_sound_nearness(["lawn", "mower"], said[4]) > sound_nearness(["lawn", "mower"], said[4]) + 0.2
    assert phrase_sound_nearness(["mower"], said[4]) == sound_nearness(["mower"], said[4])  # one word: as it was


def test_a_head_word_that_only_sounds_like_the_counted_thing_needs_the_rest_of_it():
    """"How many times was the stage bell mentioned in theatre-cam?": "stagebell" twice, and
    "Look at once the street to the poor bill." (said "… the script to be purple"), where
    "bill" only sounds like "bell" and nothing is a stage: two, not three. A modifier misheard
    too ("fairy horn" for the ferry horn) still counts, and so does a head heard right."""
    from episodic.core.query import Scope

    said = ["Don't forget, Henry has to see the stage manager at 10 o'clock.", "There is the stagebell again.",
            "Look, the stagebell is here.", "Look at once the street to the poor bill.",
            "We should be finished before the afternoon."]
    answerer, reader = _speech_answerer([_memory("theatre-cam", 15.0 * i, [t]) for i, t in enumerate(said)])
    draft = answerer.count(_shaped("How many times was the stage bell mentioned in theatre-cam?"), [], [],
                           Scope(), reader)
    assert draft is not None and draft.answer.startswith("2 times"), draft
    harbour = ["There is the fairy horn again.", "Look, the ferry horn is here.", "The ferry crossing is in room 320."]
    answerer, reader = _speech_answerer([_memory("harbour-cam", 15.0 * i, [t]) for i, t in enumerate(harbour)])
    shaped = _shaped("How many times was the ferry horn mentioned in harbour-cam?")
    thing, mentions = answerer.counted_thing(shaped, ["harbour-cam"])
    units = [u for u in answerer._stream_units("harbour-cam", None, None, reader) if u.modality == "speech"]
    assert thing == "ferry horn" and [mentions(u) for u in units] == [True, True, False]
