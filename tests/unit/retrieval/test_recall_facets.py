"""Recall, fuzzy recall's first step (retrieval/recall_facets.py, recall_model.py,
recall_request.py): half-remembered descriptions become facet queries. Table-driven over RVMS-Bench's nine task types (G, K, KT, GK, KA, KTA,
GKA, GKT, GKTA); explicit facets; the model path with a scripted model; every bad input.
No model is loaded (the marker comes from the folder, tests/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from episodic.core.errors import InputError, ModelError
from episodic.core.llm import ChatMessage
from episodic.core.query import RecallRequest
from episodic.retrieval.recall_facets import alternatives_of, split_clauses
from episodic.retrieval.recall_model import parse_model_reply
from episodic.retrieval.recall_request import MAX_FIELD_CHARS, parse_description
from tests.fakes import ScriptedLLM

# description, task type, {facet: relation}, {facet: keywords that must be among its keywords}
CASES = [
    ("a cooking vlog, cheerful, someone's birthday", "G", {"global": ""},
     {"global": ["cooking", "vlog", "cheerful", "birthday"]}),
    ("It was a calm documentary about the sea", "G", {"global": ""},
     {"global": ["documentary", "sea"]}),
    ("a cat on the kitchen counter", "K", {"key_moment": ""},
     {"key_moment": ["cat", "kitchen", "counter"]}),
    ("a red umbrella", "K", {"key_moment": ""}, {"key_moment": ["red", "umbrella"]}),
    ("I remember a cat on the kitchen counter, then they talked about the oven", "KT",
     {"key_moment": "", "temporal": "after"}, {"key_moment": ["cat"], "temporal": ["oven"]}),
    ("a red sign near a bridge. Just before that a bus passed", "KT",
     {"key_moment": "", "temporal": "before"}, {"temporal": ["bus"]}),
    ("before the cat jumped, a dog barked", "KT", {"key_moment": "", "temporal": "before"},
     {"key_moment": ["cat", "jumped"], "temporal": ["dog"]}),
    ("a dog barked right after the cat jumped on the table", "KT",
     {"key_moment": "", "temporal": "after"},
     {"key_moment": ["cat", "table"], "temporal": ["dog"]}),
    ("towards the end a boat left the harbour; a man fixing a net on the pier", "KT",
     {"key_moment": "", "temporal": "end"},
     {"temporal": ["boat", "harbour"], "key_moment": ["net"]}),
    ("It was a cooking vlog. A cat sat on the kitchen counter.", "GK",
     {"global": "", "key_moment": ""}, {"global": ["cooking", "vlog"], "key_moment": ["cat"]}),
    ("a tour of an old castle, a guide holds up a map", "GK",
     {"global": "", "key_moment": ""}, {"global": ["castle"], "key_moment": ["map"]}),
    ("a cat on the kitchen counter and someone said forty minutes", "KA",
     {"key_moment": "", "audio": ""}, {"audio": ["40", "minutes"]}),
    ("a dog ran past while music was playing", "KA",
     {"key_moment": "", "audio": ""}, {"key_moment": ["dog"], "audio": ["music"]}),
    ("A cat jumped on the counter. Then they talked about the oven. There was music at the start.",
     "KTA", {"key_moment": "", "temporal": "after", "audio": "start"},
     {"temporal": ["oven"], "audio": ["music"]}),
    ("a woman opens the fridge, afterwards she pours milk; I heard a dog barking", "KTA",
     {"key_moment": "", "temporal": "after", "audio": ""},
     {"key_moment": ["fridge"], "temporal": ["milk"], "audio": ["dog"]}),
    ("a cheerful cooking vlog; a cat on the kitchen counter; someone said forty minutes", "GKA",
     {"global": "", "key_moment": "", "audio": ""}, {"global": ["cheerful"], "audio": ["40"]}),
    ("A travel vlog, calm overall. A red sign near a bridge. Someone mentioned the ferry "
     "leaves at eight", "GKA", {"global": "", "key_moment": "", "audio": ""},
     {"audio": ["ferry", "8"], "key_moment": ["sign", "bridge"]}),
    ("a tour of an old castle, a guide holds up a map, after that they walk into the garden",
     "GKT", {"global": "", "key_moment": "", "temporal": "after"}, {"temporal": ["garden"]}),
    ("the whole thing was busy; a street vendor on the corner; at the end a bus drove away",
     "GKT", {"global": "", "key_moment": "", "temporal": "end"},
     {"global": ["busy"], "key_moment": ["vendor"], "temporal": ["bus"]}),
    ("A travel vlog, calm overall. I remember a red sign near a bridge, just before that a bus "
     "passed. Someone mentioned the ferry leaves at eight", "GKTA",
     {"global": "", "key_moment": "", "temporal": "before", "audio": ""},
     {"temporal": ["bus"], "audio": ["ferry"]}),
    ("A birthday party at home, everyone cheerful. A cat knocked a cup off the table, then they "
     "talked about the cake. Music at the start.", "GKTA",
     {"global": "", "key_moment": "", "temporal": "after", "audio": "start"},
     {"global": ["birthday", "cheerful"], "key_moment": ["cup", "table"], "temporal": ["cake"]}),
]


def test_the_table_covers_every_task_type() -> None:
    assert {c[1] for c in CASES} == {"G", "K", "KT", "GK", "KA", "KTA", "GKA", "GKT", "GKTA"}


@pytest.mark.parametrize(("description", "task", "relations", "keywords"), CASES,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_rules_split_descriptions_into_facets(description, task, relations, keywords) -> None:
    parsed = parse_description(RecallRequest(description=description))
    assert parsed.source == "rules"
    assert {name: q.relation for name, q in parsed.facets.items()} == relations
    for name, words in keywords.items():
        assert set(words) <= set(parsed.facets[name].keywords), parsed.facets[name]
    for name, query in parsed.facets.items():
        assert query.facet == name and query.text and query.keywords
        assert query.keywords == [k.lower() for k in query.keywords]
        assert not {"remember", "video", "someone", "said", "heard"} & set(query.keywords)


def test_speech_keeps_what_was_said_and_numbers_both_ways() -> None:
    parsed = parse_description(RecallRequest(description="someone said forty minutes"))
    audio = parsed.facets["audio"]
    assert audio.text == "forty minutes"
    assert audio.keywords == ["40", "minutes"]  # digits in the keywords …
    assert "40 minutes" in audio.alternatives  # … the other spelling among the alternatives
    assert "forty-five minutes" in alternatives_of("45 minutes")


def test_filler_and_markers_leave_the_text() -> None:
    facets = parse_description(RecallRequest(
        description="So I remember there was a cat on the counter, and then they talked about "
                    "the oven")).facets
    assert facets["key_moment"].text == "a cat on the counter"
    assert facets["temporal"].text == "they talked about the oven"


def test_alternatives_hold_synonyms_and_other_number_forms() -> None:
    alts = alternatives_of("a cat on the kitchen counter")
    assert "a kitten on the kitchen counter" in alts and "a pet on the kitchen counter" in alts
    assert "cats on the kitchen counter" in alts
    assert "two kid on bikes" in alternatives_of("two kids on bikes")
    assert all("sats" not in a for a in alternatives_of("A cat sat on the mat"))  # a verb
    assert "an animal sang" in alternatives_of("a bird sang")
    assert "song" in alternatives_of("music")


def test_commas_only_continue_a_clause_without_its_own_subject() -> None:
    assert split_clauses("a cooking vlog, cheerful, someone said hi") == [
        ("a cooking vlog", False), ("cheerful", True), ("someone said hi", False)]
    audio = parse_description(RecallRequest(
        description="someone said forty minutes, maybe forty-five")).facets
    assert list(audio) == ["audio"] and "45" in audio["audio"].keywords


def test_a_before_after_clue_takes_the_sound_before_it_as_its_moment() -> None:
    parsed = parse_description(RecallRequest(description="a dog barking, then someone said hello"))
    assert parsed.facets["key_moment"].keywords == ["dog", "barking"]
    assert parsed.facets["temporal"].relation == "after"
    assert any("key moment" in n for n in parsed.notes)


# -- explicit facets --------------------------------------------------------------------------


def test_explicit_facets_override_the_free_text() -> None:
    parsed = parse_description(RecallRequest(
        description="a cat on the counter, then they talked about the oven",
        key_moment="I remember a dog on the sofa"))
    assert parsed.facets["key_moment"].text == "a dog on the sofa"
    assert parsed.facets["temporal"].relation == "after"
    assert parsed.source == "rules"  # the free text gave the temporal facet
    assert any("replaces" in n for n in parsed.notes)


def test_explicit_facets_alone() -> None:
    parsed = parse_description(RecallRequest(
        global_impression="a cheerful cooking vlog", key_moment="a cat on the counter",
        temporal="then they talked about the oven", audio="music at the start"))
    assert parsed.source == "explicit"
    assert {n: q.relation for n, q in parsed.facets.items()} == {
        "global": "", "key_moment": "", "temporal": "after", "audio": "start"}
    assert parsed.facets["audio"].text == "music"
    # a temporal clue without a marker: next to the key moment, either side
    assert parse_description(RecallRequest(key_moment="a cat", temporal="a dog barking")
                             ).facets["temporal"].relation == ""


def test_a_description_wholly_overridden_leaves_the_source_explicit() -> None:
    parsed = parse_description(RecallRequest(description="a cat on the counter",
                                             key_moment="a dog on the sofa"))
    assert parsed.source == "explicit" and parsed.facets["key_moment"].keywords == ["dog", "sofa"]


def test_contradicting_facets_are_left_to_the_verifier() -> None:
    parsed = parse_description(RecallRequest(global_impression="a silent film",
                                             audio="loud music", key_moment="a piano"))
    assert set(parsed.facets) == {"global", "key_moment", "audio"}


# -- the model --------------------------------------------------------------------------------

VALID = json.dumps({
    "global": "a cheerful cooking vlog", "key_moment": "a cat on the kitchen counter",
    "temporal": {"text": "they talked about the oven", "relation": "after"},
    "audio": "forty minutes", "alternatives": {"key_moment": ["a kitten on a worktop"],
                                               "made_up": ["ignored"]},
    "confidence": 0.9,
})
DESCRIPTION = "cheerful cooking vlog, cat on the counter, then the oven talk, forty minutes"


def _scripted(*replies: str | Exception) -> ScriptedLLM:
    queue: Iterator[str | Exception] = iter(replies)

    def reply(_messages: list[ChatMessage]) -> str:
        item = next(queue)
        if isinstance(item, Exception):
            raise item
        return item

    return ScriptedLLM(reply=reply)


def test_model_reply_is_used() -> None:
    llm = _scripted(f"Here you are:\n```json\n{VALID}\n```")
    parsed = parse_description(RecallRequest(description=DESCRIPTION), llm, use_model=True)
    assert parsed.source == "model" and len(llm.calls) == 1 and not parsed.notes
    assert set(parsed.facets) == {"global", "key_moment", "temporal", "audio"}
    assert parsed.facets["temporal"].relation == "after"
    assert parsed.facets["key_moment"].alternatives[0] == "a kitten on a worktop"
    assert parsed.facets["audio"].keywords == ["40", "minutes"]
    assert llm.calls[0][0].role == "system" and DESCRIPTION in llm.calls[0][1].content


def test_an_invalid_reply_is_retried_once() -> None:
    llm = _scripted("Sure! The key moment is a cat.", VALID)
    parsed = parse_description(RecallRequest(description=DESCRIPTION), llm, use_model=True)
    assert parsed.source == "model" and len(llm.calls) == 2
    assert llm.calls[1][-1].role == "user" and "JSON" in llm.calls[1][-1].content


@pytest.mark.parametrize("bad", [
    "not json at all",
    '{"key_moment": "a cat", "temporal": {"text": "a dog", "relation": "during"}}',
    '{"key_moment": ' + json.dumps("x" * 201) + "}",
    '{"key_moment": 5}',
    '{"key_moment": "a cat", "alternatives": {"key_moment": "a kitten"}}',
    '{"global": null, "key_moment": null, "temporal": null, "audio": null}',
    '["a cat"]',
])
def test_two_invalid_replies_fall_back_to_the_rules(bad: str) -> None:
    llm = _scripted(bad, bad)
    parsed = parse_description(RecallRequest(description="a cat on the kitchen counter"), llm,
                               use_model=True)
    assert parsed.source == "rules" and len(llm.calls) == 2
    assert parsed.facets["key_moment"].keywords == ["cat", "kitchen", "counter"]
    assert parsed.notes and parsed.notes[-1].endswith("; rules used")


def test_the_note_names_invalid_json() -> None:
    parsed = parse_description(RecallRequest(description="a red sign"),
                               _scripted("{oops", "{oops"), use_model=True)
    assert parsed.notes == ["the model's reply was not valid JSON; rules used"]


@pytest.mark.parametrize("error", [ModelError("the server is down"), RuntimeError("boom")])
def test_a_failing_model_falls_back_to_the_rules(error: Exception) -> None:
    llm = _scripted(error)
    parsed = parse_description(RecallRequest(description="a red sign"), llm, use_model=True)
    assert parsed.source == "rules" and len(llm.calls) == 1
    assert "failed" in parsed.notes[0] and set(parsed.facets) == {"key_moment"}


def test_the_model_is_asked_only_when_wanted() -> None:
    llm = _scripted()
    assert parse_description(RecallRequest(description="a red sign"), llm).source == "rules"
    assert not llm.calls
    parsed = parse_description(RecallRequest(description="a red sign"), None, use_model=True)
    assert parsed.source == "rules" and "no language model" in parsed.notes[0]


def test_parse_model_reply_ignores_unknown_keys_and_rejects_bad_types() -> None:
    facets, why = parse_model_reply('{"key_moment": "a cat", "colour": ["red"]}')
    assert facets == {"key_moment": ("a cat", "", [])} and why == ""
    assert parse_model_reply('{"audio": ["music"]}')[0] == {}


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(("request_", "message"), [
    (RecallRequest(), "nothing to look for"),
    (RecallRequest(description="   ", key_moment="\n\t"), "nothing to look for"),
    (RecallRequest(description="x" * (MAX_FIELD_CHARS + 1)), "at most 2000"),
    (RecallRequest(key_moment="a " * 1001), "at most 2000"),
    (RecallRequest(description=123), "must be text"),  # type: ignore[arg-type]
    (RecallRequest(audio=None), "must be text"),  # type: ignore[arg-type]
    (RecallRequest(description="um, I remember something"), "names nothing"),
    (RecallRequest(key_moment="something"), "names nothing"),
    (RecallRequest(temporal="then they talked about the oven"), "--key-moment"),
    (RecallRequest(global_impression="a cooking vlog", temporal="just before that a dog barked"),
     "needs a key moment"),
])
def test_bad_input_is_an_input_error(request_: RecallRequest, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_description(request_)


def test_before_or_after_inside_what_was_said_or_a_topic_is_no_clue() -> None:
    said = parse_description(RecallRequest(description="someone said they left after the party"))
    assert list(said.facets) == ["audio"]
    topic = parse_description(RecallRequest(description="a video about life after the war"))
    assert list(topic.facets) == ["global"]


def test_a_start_or_end_clue_needs_no_key_moment() -> None:
    parsed = parse_description(RecallRequest(description="at the end a bus drove away"))
    assert parsed.facets["temporal"].relation == "end"


def test_a_free_text_before_after_clue_alone_is_searched_as_the_moment() -> None:
    """Refusing what a person wrote helps nobody: with no moment to be before or after, the
    clue is the moment (an explicit --temporal alone is still refused, above)."""
    parsed = parse_description(RecallRequest(description="then they talked about the oven"))
    assert list(parsed.facets) == ["key_moment"] and "oven" in parsed.facets["key_moment"].keywords
    assert any("searched as the moment" in n for n in parsed.notes)


def test_an_impression_that_carries_a_moment_is_split() -> None:
    parsed = parse_description(RecallRequest(
        description="It was a hectic morning at a farmers market with a sign advertising fresh "
                    "tomatoes somewhere in it."))
    assert "market" in parsed.facets["global"].keywords
    assert {"sign", "tomatoes"} <= set(parsed.facets["key_moment"].keywords)
    vlog = parse_description(RecallRequest(description="a cheerful cooking vlog with music"))
    assert list(vlog.facets) == ["global"]
    clause = parse_description(RecallRequest(  # the moment may be a clause, not a noun phrase
        description="It was a curious visit to a science museum with what the rings of Saturn "
                    "are made of somewhere in it."))
    assert "rings" not in clause.facets["global"].keywords
    assert {"rings", "saturn"} <= set(clause.facets["key_moment"].keywords)


def test_where_a_moment_came_is_a_position_not_a_clue() -> None:
    parsed = parse_description(RecallRequest(key_moment="a rocket on screen",
                                             temporal="it came late in the video"))
    assert list(parsed.facets) == ["key_moment"] and parsed.facets["key_moment"].relation == "end"
