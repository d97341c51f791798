"""Which questions the offline eyes are worth asking (the inspect pathway's gate): writing on
screen, read by OCR; not a kitchen's cutting board, which looking again for 6 s never read."""

from __future__ import annotations

import pytest

from episodic.services.qa import about_writing


@pytest.mark.parametrize("question, writing", [
    ("Which plot number was shown on a sign in garden-cam?", True),
    ("What did the departure board show?", True),
    ("What was written on the whiteboard?", True),
    ("What was on the notice board?", True),
    ("Which person is fixing the cutting board?", False),
    ("Where did Tom leave the cutting board?", False),
    ("Who is on the board of the museum?", False),
    ("Where did Sofia put the reading lamp?", False),
])
def test_writing_on_screen_is_told_from_things_called_board(question, writing):
    assert about_writing(question) is writing


def test_an_ask_that_listened_again_looks_only_within_what_is_left_of_its_bound():
    """The inspect pathway has 6 s of its own; after 2 s of listening again it gets what is left
    of ``relistened_ask_max_s`` (5 s) less the reserve for answering, and nothing after 5 s."""
    import time
    from types import SimpleNamespace

    from episodic.config import load_settings
    from episodic.core.deadline import Deadline
    from episodic.core.query import QueryType, Scope
    from episodic.reasoning.answer import Draft
    from episodic.retrieval.detailed import Unit
    from episodic.retrieval.query_analysis import QueryAnalysis
    from episodic.retrieval.question_shape import question_shape
    from episodic.services.qa import INSPECT_RESERVE_S, MemoryQA, Trace

    budgets: list[float] = []
    qa = MemoryQA.__new__(MemoryQA)
    qa.settings = load_settings()
    qa.look = SimpleNamespace(inspect=lambda *a, budget_s, **k: budgets.append(budget_s))
    question = "What did the sign in cam say?"
    analysis = QueryAnalysis(question, QueryType.VIDEO, {}, "", ["sign", "cam"], "any", shape=question_shape(question))
    req = SimpleNamespace(question=question, options=[], scope=Scope())

    def look(listened: bool, spent_s: float) -> None:
        trace = Trace(analysis=analysis, fast=Draft(answer="", confidence=0.0),
                      recall=SimpleNamespace(units=[Unit("cam", "cam@0", 0.0, 5.0, "ocr", "OPEN", score=1.0)]))
        trace.notes["relisten"] = SimpleNamespace(memories=["cam@0"] if listened else [])
        clock = Deadline(None)
        clock.started = time.perf_counter() - spent_s
        qa._inspect(req, analysis, None, trace, clock)

    look(False, 2.0)
    assert budgets[-1] == qa.settings.look.inspect_budget_s  # no re-hearing: its own 6 s
    look(True, 2.0)
    assert abs(budgets[-1] - (5.0 - 2.0 - INSPECT_RESERVE_S)) < 0.05
    n = len(budgets)
    look(True, 4.8)  # the bound is all but spent: no look at all
    assert len(budgets) == n
    look(True, 3.8)  # 0.7 s left for looking, less than a first look takes: none begun
    assert len(budgets) == n
