"""An order question's modality: what came before or after a moment is what was said or written
next, unless the question names seeing outside the moments it places (session 84: "What
followed the price of the tomato plant?" was typed visual by its resemblance to questions about
pictures, and its answer was looked for in on-screen text and pictures only)."""

from __future__ import annotations

import numpy as np
import pytest

from episodic.core.query import QueryType
from episodic.retrieval.query_analysis import EXAMPLES, QueryAnalyzer


class VisualLeaning:
    """Every question lies on the visual examples' axis: typed by resemblance alone, it is VIDEO."""

    dim = 2

    def embed_texts(self, texts):
        others = {q for t, qs in EXAMPLES.items() if t is not QueryType.VIDEO for q in qs}
        return np.stack([np.array([0.0, 1.0] if t in others else [1.0, 0.0], dtype=np.float32) for t in texts])


@pytest.mark.parametrize(
    "question, visual",
    [
        ("What followed the price of the tomato plant?", False),
        ("What came just ahead of the room for the flower show?", False),
        ("What followed the colour of Ruth's anchor?", False),  # the colour was talked about
        ("What came earlier, the rope or the colour of Tom's spade?", False),
        ("Which picture came after the price of the rope?", True),  # it names seeing
        ("What is the price of the tomato plant?", True),  # no order: resemblance decides
    ],
)
def test_an_order_question_is_visual_only_when_it_names_seeing(question, visual):
    analysis = QueryAnalyzer(VisualLeaning()).analyze(question)
    assert (analysis.query_type is QueryType.VIDEO) is visual, analysis.why


@pytest.mark.parametrize(
    "question, terms",
    [
        # a word that places the question in the day is no fact to look for (session 85: "Which
        # camera had coins on it today?" was answered by the sentences that say "today")
        ("Which camera had coins on it today?", ["coin"]),
        ("Who is repairing the umbrella now?", ["repair", "umbrella"]),
        ("What does the tomato plant cost tonight?", ["tomato", "plant", "cost"]),
    ],
)
def test_words_placing_a_question_today_are_not_looked_for(question, terms):
    analysis = QueryAnalyzer(VisualLeaning()).analyze(question)
    assert analysis.terms == terms, analysis.terms
