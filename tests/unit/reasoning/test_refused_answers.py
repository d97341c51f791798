"""Answers that would only look like answers: a "why" resting on a sentence about the person
alone, a colour of someone's thing read off a key frame."""

from __future__ import annotations

from episodic.core.query import QueryType
from episodic.reasoning.answer import Draft
from episodic.retrieval.detailed import Unit
from episodic.retrieval.query_analysis import QueryAnalysis, content_terms, key_terms_of
from episodic.retrieval.question_shape import question_shape


def _analysis(question: str, qtype: QueryType = QueryType.AUDIO) -> QueryAnalysis:
    terms = content_terms(question)
    return QueryAnalysis(question, qtype, {}, "", terms, "any", shape=question_shape(question),
                         key_terms=key_terms_of(question, terms))


def test_an_answer_to_why_must_rest_on_what_is_to_be_explained_not_only_on_the_person() -> None:
    from episodic.reasoning.answer import explains_nothing

    def draft(text: str) -> Draft:
        return Draft("need the umbrella", 0.7, support=[Unit("cam", "cam@0", 0.0, 5.0, "speech", text)], source="extract")

    about_maria = draft("If you need the umbrella, Maria keeps it at the waiting room.")
    assert explains_nothing(about_maria, _analysis("Why was Maria late?"))
    assert not explains_nothing(draft("Maria was late because the ferry left early."), _analysis("Why was Maria late?"))
    assert not explains_nothing(about_maria, _analysis("Where does Maria keep the umbrella?"))  # not a why
    assert explains_nothing(about_maria, _analysis("How come Maria was late?"))


def test_a_colour_of_someones_thing_is_never_read_off_a_key_frame() -> None:
    from episodic.reasoning.answer import colour_seen_for_someone

    seen = Draft('blue green (seen: "a scene; colours: blue, green", cam, 72.2–79.2 s)', 0.5,
                 support=[Unit("cam", "cam@70", 72.2, 79.2, "visual", "a scene; colours: blue, green")], source="extract")
    said = Draft('pink (heard: "Maria wants the net to be pink.", cam, 1.0–3.0 s)', 0.9,
                 support=[Unit("cam", "cam@0", 1.0, 3.0, "speech", "Maria wants the net to be pink.")], source="extract")
    assert colour_seen_for_someone(seen, _analysis("What colour is Quentin's fishing net?", QueryType.VIDEO))
    assert not colour_seen_for_someone(said, _analysis("What colour does Maria want the net to be?", QueryType.VIDEO))
    assert not colour_seen_for_someone(seen, _analysis("What colour was the fishing net?", QueryType.VIDEO))  # nobody's
