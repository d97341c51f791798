"""Boundaries that respect speech (issue 12): a forced split never cuts a sentence in half."""

import numpy as np
import pytest

from episodic.config import Settings
from episodic.samples import synthesize
from episodic.stream.segmentation import BoundaryPlanner, StreamSegmenter
from episodic.stream.speech_activity import split_point_outside_speech

RATE = 16000


def _speech_extent(x: np.ndarray, t0: float) -> tuple[float, float]:
    loud = np.flatnonzero(np.abs(x) > 0.02)
    return t0 + loud[0] / RATE, t0 + loud[-1] / RATE


def _segments(audio: np.ndarray, settings: Settings) -> list[tuple[float, float]]:
    seg = StreamSegmenter(settings, has_video=False, has_audio=True)
    out = []
    block = 1600
    for i in range(0, audio.size, block):
        out += seg.push_audio(i / RATE, audio[i : i + block])
    out += seg.finish()
    return [(s.t_start, s.t_end) for s in out]


def _noisy_track(duration_s: float, sentences: list[tuple[float, str]]) -> tuple[np.ndarray, list]:
    """Speech over steady room noise at about −30 dBFS: never quiet enough for the −40 dBFS
    pause rule, so only voice activity can find the gaps."""
    rng = np.random.default_rng(7)
    audio = rng.normal(0, 0.03, int(duration_s * RATE)).astype(np.float32)
    extents = []
    for t, text in sentences:
        x = synthesize(text, voice="en-gb", wpm=150)
        i = int(t * RATE)
        audio[i : i + x.size] += x[: audio.size - i]
        extents.append(_speech_extent(x, t))
    return audio, extents


@pytest.mark.parametrize("start", [8.4, 9.2])
def test_sentence_across_the_forced_split_stays_in_one_segment(start):
    sentences = [
        (1.0, "Good morning everyone."),
        (start, "Two riders are not wearing helmets this morning."),
        (14.5, "Please be careful on the bridge."),
    ]
    audio, extents = _noisy_track(24.0, sentences)
    a, b = extents[1]
    assert a < 10.0 < b  # the sentence straddles t0 + segment_max_s

    old = _segments(audio, Settings(segment_speech_bend_s=0))
    assert any(a + 0.1 < e < b - 0.1 for _, e in old)  # the exact rule cuts it

    spans = _segments(audio, Settings())
    inside = [e for _, e in spans[:-1] if a + 0.05 < e < b - 0.05]
    assert inside == [], (spans, (a, b))
    for s0, s1 in spans[:-1]:  # the 5–10 s rule bends by at most 2 s
        assert 3.0 - 1e-6 <= s1 - s0 <= 12.0 + 1e-6
    assert spans[0][0] == 0 and spans[-1][1] == pytest.approx(24.0, abs=0.01)
    assert all(x[1] == pytest.approx(y[0]) for x, y in zip(spans, spans[1:], strict=False))


def test_split_point_outside_speech():
    speech = [(7.0, 8.2), (8.6, 11.4)]
    assert split_point_outside_speech(9.8, speech, 8.0, 12.0) == pytest.approx(8.4)  # mid-pause
    assert split_point_outside_speech(10.0, speech, 8.0, 12.0) == pytest.approx(11.5)  # nearer
    assert split_point_outside_speech(11.0, speech, 9.0, 13.0) == pytest.approx(11.5)
    assert split_point_outside_speech(9.5, speech, 9.0, 11.0) == 9.5  # no gap in reach
    assert split_point_outside_speech(12.0, speech, 10.0, 14.0) == 12.0  # already outside


def test_planner_bends_a_forced_split_and_a_visual_cut_out_of_speech():
    from episodic.core.media import Boundary

    speech = [(8.5, 11.5), (16.0, 19.0)]

    def lookup(lo, hi):
        return [(a, b) for a, b in speech if b > lo and a < hi]

    p = BoundaryPlanner(Settings(), speech=lookup)
    p.add(Boundary(t=17.0, kind="visual", score=0.9))
    spans = p.advance(30.0) + p.finish(30.0)
    edges = [s.t_end for s in spans[:-1]]
    assert not any(a < e < b for e in edges for a, b in speech), spans
    assert any(abs(e - 15.9) < 0.2 or abs(e - 19.1) < 0.2 for e in edges)  # the moved cut
    # a planner without voice activity keeps the exact rule
    q = BoundaryPlanner(Settings())
    q.add(Boundary(t=17.0, kind="visual", score=0.9))
    assert [s.t_end for s in q.advance(30.0) + q.finish(30.0)][:2] == [10.0, 17.0]


def test_speaking_at_tells_a_sentence_going_on_from_a_pause():
    """What a checkpoint asks before it closes the open segment at a chunk's start."""
    audio, extents = _noisy_track(8.0, [(1.0, "Two riders are not wearing helmets this morning.")])
    a, b = extents[0]
    seg = StreamSegmenter(Settings(), has_video=False, has_audio=True)

    def fed_until(t: float) -> StreamSegmenter:
        s = StreamSegmenter(Settings(), has_video=False, has_audio=True)
        s.push_audio(0.0, audio[: int(t * RATE)])
        return s

    assert fed_until((a + b) / 2).speaking_at((a + b) / 2)  # mid-sentence
    assert not fed_until(b + 0.8).speaking_at(b + 0.8)  # after it, in the room noise
    assert not fed_until(a - 0.5).speaking_at(a - 0.5)  # before it
    assert not seg.speaking_at(1.0)  # nothing pushed yet
