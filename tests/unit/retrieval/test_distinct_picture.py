"""The picture that stands out: a guess seen in one stretch of a stream only answers "what did
the picture show?"; guesses that recur (walls, textures) and sign frames never do."""

from __future__ import annotations

from episodic.retrieval.detailed import Unit
from episodic.retrieval.distinct_picture import OPEN_GUESS_MIN, stand_outs, standout_answer


def _frame(t: float, guesses, text: str = "a scene") -> Unit:
    return Unit("cam", f"cam@{t}", t, t + 5.0, "visual", text, guesses=tuple(guesses))


def _background(times) -> list[Unit]:
    return [_frame(t, [("Windsor tie", 0.7), ("clothes", 0.68), ("a bag", 0.06)]) for t in times]


def test_a_guess_seen_in_one_stretch_stands_out_over_recurring_ones():
    units = _background([0, 5, 10, 15]) + [
        _frame(20, [("a rocket", 0.22), ("a lamp", 0.16), ("clothes", 0.05)]),
        _frame(25, [("a rocket", 0.18), ("a lamp", 0.11)]),
    ] + _background([40, 45, 60, 80, 100])
    found = stand_outs(units)
    assert [s.label for s in found] == ["a rocket", "a lamp"]
    assert (found[0].t_start, found[0].t_end) == (20, 30) and found[0].also == ["a lamp"]
    answer, confidence, best = standout_answer(units)
    assert answer.startswith("Probably a rocket (or: a lamp;") and "cam, 20.0–30.0 s" in answer
    assert 0 < confidence <= 0.45 and best.p == 0.22


def test_recurring_guesses_weak_guesses_and_signs_give_nothing():
    # the same picture guessed twice, far apart: background, not a picture shown once
    units = _background([0, 5]) + [_frame(10, [("a cup", 0.6)]), _frame(60, [("a cup", 0.6)])] + _background([70])
    assert stand_outs(units) == []
    # seen once but never sure enough
    units = _background([0, 5, 30]) + [_frame(10, [("a remote control", OPEN_GUESS_MIN - 0.01)])]
    assert standout_answer(units) is None
    # a sign's frame is about its writing; stray marks on a photo are not writing
    sign = _frame(10, [("a scoreboard", 0.5)], 'on-screen text: "OPEN UNTIL 9 PM"')
    units = _background([0, 5, 30, 40]) + [sign, Unit("cam", "cam@10", 10, 15, "ocr", "OPEN UNTIL 9 PM")]
    assert stand_outs(units) == []
    photo = _frame(10, [("a rocket", 0.3)])
    units = _background([0, 5, 30, 40]) + [photo, Unit("cam", "cam@10", 10, 15, "ocr", "米*")]
    assert [s.label for s in stand_outs(units)] == ["a rocket"]
