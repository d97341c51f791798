"""The expected cost of a listening stage: a first guess, then what it took here."""

from __future__ import annotations

import pytest

from episodic.retrieval.stage_costs import NEWEST_WEIGHT, RunningCost


def test_the_first_guess_until_measured_then_a_running_mean_per_key():
    cost = RunningCost(0.5)
    assert cost.estimate("base") == 0.5
    cost.measured(1.0, "base")
    assert cost.estimate("base") == 1.0  # the first measurement replaces the guess
    cost.measured(2.0, "base")
    assert cost.estimate("base") == pytest.approx((1 - NEWEST_WEIGHT) * 1.0 + NEWEST_WEIGHT * 2.0)
    assert cost.estimate("tiny") == 0.5  # another model keeps the guess
    cost.forget()
    assert cost.estimate("base") == 0.5

