"""A name heard is answered in the spelling most people with it use, when that is clearly
commoner; the quote beside it keeps the transcript's spelling."""

from __future__ import annotations

import pytest

from episodic.retrieval.given_names import usual_spelling


@pytest.mark.parametrize("heard, usual", [
    ("Hanna", "Hannah"), ("Sara", "Sarah"), ("Ana", "Anna"), ("Markus", "Marcus"), ("Norah", "Nora"),
    ("hanna", "hannah"),
    # the usual spelling already, a distinct name, a name no list knows, not a name at all
    ("Hannah", "Hannah"), ("Jon", "Jon"), ("Catherine", "Catherine"), ("Chen", "Chen"), ("Priya", "Priya"),
    ("Ruto", "Ruto"), ("Look", "Look"), ("Al", "Al"), ("O'Neil", "O'Neil"),
])
def test_the_usual_spelling_of_a_name_heard(heard: str, usual: str) -> None:
    assert usual_spelling(heard) == usual


def test_a_short_answer_names_the_usual_spelling_and_quotes_the_heard_one() -> None:
    from episodic.core.query import QueryType
    from episodic.reasoning.short_answer import span_in
    from episodic.retrieval.detailed import Unit
    from episodic.retrieval.query_analysis import QueryAnalysis, content_terms
    from episodic.retrieval.question_shape import question_shape

    question = "Who do you ask if you need the apron?"
    analysis = QueryAnalysis(question, QueryType.AUDIO, {}, "", content_terms(question), "any",
                             shape=question_shape(question))
    unit = Unit("kitchen-cam", "kitchen-cam@20", 27.6, 29.8, "speech", "Ask Hanna if you need the apron.")
    span = span_in(unit, analysis)
    assert span is not None and span.text == "Hannah" and "Hanna if" in span.unit.text
