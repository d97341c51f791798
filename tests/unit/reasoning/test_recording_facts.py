"""Questions about the recordings themselves are answered from the memory's structure, never
from a number that stands in the nearest text."""

from __future__ import annotations

import numpy as np
import pytest

from episodic.core.records import FrameObservation, ShortTermMemory, SoundObservation
from episodic.reasoning.recording_facts import asks_about_the_recording, duration, recording_fact


def _memory(sid: str, t0: float, frames=(), sounds=()) -> ShortTermMemory:
    return ShortTermMemory(id=f"{sid}@{t0:g}", stream_id=sid, t_start=t0, t_end=t0 + 10.0, vector=np.zeros(4),
                           frames=list(frames), sounds=list(sounds))


MEMORIES = [
    _memory("garden-cam", 0.0, [FrameObservation(t=1.0, ocr_text="PLOT 35"), FrameObservation(t=6.0, ocr_text="PLOT 35")],
            [SoundObservation(5.0, 7.0, "music"), SoundObservation(7.0, 9.0, "music")]),
    _memory("garden-cam", 10.0, [FrameObservation(t=10.0, quality="dark"), FrameObservation(t=14.0, quality="dark"),
                                 FrameObservation(t=18.0, ocr_text="CLOSED ONTHURSDAYS", people=1, faces=2)]),
    _memory("garden-cam", 20.0, [FrameObservation(t=21.0, ocr_text="CLOSED ON THURSDAYS")],
            [SoundObservation(25.0, 27.0, "music")]),
]
ENDS = {"garden-cam": 154.0}


@pytest.mark.parametrize("question, fact", [
    ("How long is the garden-cam recording?", True), ("What is the length of the video?", True),
    ("How long was the screen dark?", True), ("How long did the music play?", True),
    ("How many recordings are there?", True), ("How many signs were shown?", True),
    ("How many people were on screen?", True), ("When was the screen dark?", True),
    ("Which signs were shown in garden-cam?", True),
    ("When was the flower show?", False), ("Which sign said PLOT 35?", False),
    ("When the screen was dark, what was said?", False),
    ("How long does the flower show last?", False), ("How many times was the robin mentioned?", False),
    ("How many tickets did Grace buy?", False), ("How long is the ferry crossing?", False),
])
def test_which_questions_are_about_the_recording(question: str, fact: bool) -> None:
    assert asks_about_the_recording(question) is fact


def test_lengths_durations_and_counts_from_the_structure() -> None:
    def ask(q: str) -> str:
        draft = recording_fact(q, ["garden-cam"], MEMORIES, ENDS)
        assert draft is not None, q
        return draft.answer

    assert ask("How long is the garden-cam recording?") == "2 min 34 s (garden-cam)"
    assert ask("How long was the screen dark?").startswith("about 8 s in all (the screen was dark 1 time: garden-cam, 10.0–18.0 s")
    # touching sound windows make one stretch
    assert ask("How long did the music play?").startswith("about 6 s in all (music could be heard 2 times:")
    assert ask("How many signs were shown?") == '2 ("PLOT 35", "CLOSED ONTHURSDAYS")'
    assert ask("Which signs were shown?") == '2 ("PLOT 35", "CLOSED ONTHURSDAYS")'
    assert ask("When was the screen dark?") == "garden-cam, 10.0–18.0 s (the screen was dark)"
    assert ask("How many people were on screen?").startswith("2 at most at once")
    assert ask("How many recordings are there?") == "1 (garden-cam)"
    assert ask("How long was there applause?").startswith("0 s: no applause was heard")
    assert duration(3725) == "1 h 2 min" and duration(45.4) == "45 s"
    assert recording_fact("What did Tom buy?", ["garden-cam"], MEMORIES, ENDS) is None
