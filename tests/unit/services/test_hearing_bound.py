"""With ``relisten_hold_to_bound`` a re-listened Ask stays within ``relistened_ask_max_s``: the
stages that hear the audio again (re-listening, asking the audio where a thing was said, scoring
options, a second model) are told what is left of that bound, not of the call's deadline alone.
Off by default: then only the call's deadline limits them."""

from __future__ import annotations

import time

import pytest

from episodic.config import load_settings
from episodic.core.deadline import Deadline
from episodic.retrieval.relisten import MENTION_CHECK_S, OPTION_HEARING_S, SCORING_S, Relistener
from episodic.services.qa import HEARING_RESERVE_S, MemoryQA

pytestmark = pytest.mark.unit


def _clock(spent_s: float, deadline_s: float | None = None) -> Deadline:
    clock = Deadline(deadline_s)
    clock.started = time.perf_counter() - spent_s
    return clock


def _budgets(spent_s: float, deadline_s: float | None = None, hold: bool = True) -> float | None:
    """What a hearing stage finds it may spend (the stage's own reserve taken off)."""
    qa = MemoryQA.__new__(MemoryQA)
    qa.settings = load_settings(env={}, relisten_hold_to_bound=hold)
    relisten = Relistener.__new__(Relistener)
    relisten.settings = qa.settings
    return relisten._budget(qa._hearing_left(_clock(spent_s, deadline_s)))


def test_a_hearing_stage_gets_what_is_left_of_the_bound_less_the_answers_reserve():
    bound = load_settings().relistened_ask_max_s
    assert _budgets(2.0) == pytest.approx(bound - 2.0 - HEARING_RESERVE_S, abs=0.05)
    # without the bound a call with no deadline has no limit at all (None): the default
    assert _budgets(0.0) is not None
    assert _budgets(2.0, hold=False) is None
    assert load_settings(env={}).relisten_hold_to_bound is False


def test_late_in_the_bound_no_option_scoring_and_no_mention_check_starts():
    # 4 s in: one more mention check (0.5 s) fits, scoring the options (0.8 s) does not
    budget = _budgets(4.0)
    assert MENTION_CHECK_S <= budget < OPTION_HEARING_S
    # 4.5 s in: not even one new hearing is judged
    assert _budgets(4.5) < SCORING_S


def test_a_nearer_deadline_still_rules():
    settings = load_settings()
    # a call with 3 s of deadline, 1 s spent: the deadline's 2 s less its own reserve, bound or not
    for hold in (True, False):
        assert _budgets(1.0, deadline_s=3.0, hold=hold) == pytest.approx(
            3.0 - 1.0 - settings.relisten_reserve_s, abs=0.05)
