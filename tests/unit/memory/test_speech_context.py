"""Hearing a segment in context (memory/speech_context.py): what audio goes to the recogniser
with a segment, which words are kept, and how the recent audio is held."""

from __future__ import annotations

import math

import numpy as np

from episodic.core.records import TranscriptPiece
from episodic.memory.speech_context import (
    RecentAudio,
    hear,
    hear_joined,
    looped_words,
    without_loops,
    words_within,
)

RATE = 100  # samples per second: small arrays, easy arithmetic


def tone(seconds: float, value: float) -> np.ndarray:
    return np.full(int(round(seconds * RATE)), value, np.float32)


class Recorder:
    """A recogniser that notes what it was given and says one word per second of audio, each
    word naming the level of the audio it stands for ("w3" for samples of 0.3)."""

    model_id = "recorder"

    def __init__(self) -> None:
        self.calls: list[tuple[float, int]] = []

    def transcribe(self, audio: np.ndarray, sample_rate_hz: int, t_offset: float) -> list[TranscriptPiece]:
        self.calls.append((t_offset, audio.size))
        words = []
        for i in range(audio.size // sample_rate_hz):
            level = float(audio[i * sample_rate_hz])
            words.append((t_offset + i, t_offset + i + 1, f"w{round(level * 10)}"))
        if not words:
            return []
        return [TranscriptPiece(t_offset, t_offset + len(words), " ".join(w[2] for w in words), words=words)]


def test_a_segment_is_heard_after_the_audio_before_it_and_keeps_only_its_own_words():
    asr, recent = Recorder(), RecentAudio(max_s=3.0)
    first = hear(asr, tone(2, 0.1), RATE, 10.0, recent)
    assert asr.calls == [(10.0, 200)]  # nothing before it: heard alone
    assert [p.text for p in first] == ["w1 w1"]
    second = hear(asr, tone(2, 0.2), RATE, 12.0, recent)
    assert asr.calls[-1] == (10.0, 400)  # heard after the first segment's audio
    assert [(p.t_start, p.t_end, p.text) for p in second] == [(12.0, 14.0, "w2 w2")]
    third = hear(asr, tone(2, 0.3), RATE, 14.0, recent)
    assert asr.calls[-1] == (11.0, 500)  # at most 3 s before it
    assert [p.text for p in third] == ["w3 w3"]


def test_audio_after_a_gap_is_heard_alone():
    asr, recent = Recorder(), RecentAudio(max_s=30.0)
    hear(asr, tone(2, 0.1), RATE, 0.0, recent)
    hear(asr, tone(2, 0.2), RATE, 5.0, recent)  # 3 s missing between them
    assert asr.calls[-1] == (5.0, 200)


def test_a_segment_heard_again_replaces_its_earlier_audio():
    """A held segment encoded early for a provisional memory and again, longer, when it is
    released is held once; the next segment hears the longer version."""
    asr, recent = Recorder(), RecentAudio(max_s=30.0)
    hear(asr, tone(2, 0.1), RATE, 0.0, recent)
    hear(asr, tone(2, 0.2), RATE, 2.0, recent)  # the preview
    hear(asr, tone(3, 0.2), RATE, 2.0, recent)  # released, longer
    assert asr.calls[-1] == (0.0, 500)  # the preview's audio is not heard twice
    out = hear(asr, tone(1, 0.3), RATE, 5.0, recent)
    assert asr.calls[-1] == (0.0, 600) and [p.text for p in out] == ["w3"]


def test_no_context_when_it_is_off_or_the_rate_changes():
    asr = Recorder()
    off = RecentAudio(max_s=0.0)
    hear(asr, tone(2, 0.1), RATE, 0.0, off)
    hear(asr, tone(2, 0.2), RATE, 2.0, off)
    assert asr.calls[-1] == (2.0, 200) and len(off) == 0
    recent = RecentAudio(max_s=30.0)
    hear(asr, tone(2, 0.1), RATE, 0.0, recent)
    hear(asr, np.full(400, 0.2, np.float32), 2 * RATE, 2.0, recent)
    assert asr.calls[-1] == (2.0, 400)


def test_a_piece_cut_by_the_segment_start_keeps_its_later_words():
    words = [(9.0, 9.6, "Maria"), (9.6, 10.2, "parked"), (10.3, 10.8, "the"), (10.8, 11.5, "bicycle.")]
    piece = TranscriptPiece(9.0, 11.5, "Maria parked the bicycle.", words=words, language="en")
    (kept,) = words_within([piece], 10.0, math.inf)
    assert (kept.t_start, kept.t_end, kept.text, kept.language) == (10.3, 11.5, "the bicycle.", "en")
    assert [w[2] for w in kept.words] == ["the", "bicycle."]
    assert words_within([piece], 12.0, math.inf) == []
    assert words_within([piece], 8.0, math.inf) == [piece]
    bare = TranscriptPiece(9.0, 10.0, "Hello.")
    assert words_within([bare], 9.4, math.inf) == [bare] and words_within([bare], 9.6, math.inf) == []


def test_the_audio_after_a_segment_is_heard_with_it_but_its_words_are_left_to_the_next():
    asr, recent = Recorder(), RecentAudio(max_s=30.0)
    first = hear(asr, tone(2, 0.1), RATE, 0.0, recent, after=tone(3, 0.2))
    assert asr.calls == [(0.0, 500)]  # the segment and the 3 s after it
    assert [(p.t_start, p.t_end, p.text) for p in first] == [(0.0, 2.0, "w1 w1")]
    # the audio after is not held as heard: the next segment brings its own
    second = hear(asr, tone(3, 0.2), RATE, 2.0, recent, after=tone(1, 0.3))
    assert asr.calls[-1] == (0.0, 600)  # 2 s before, 3 s its own, 1 s after
    assert [(p.t_start, p.t_end, p.text) for p in second] == [(2.0, 5.0, "w2 w2 w2")]
    assert hear(asr, tone(1, 0.3), RATE, 5.0, recent, after=np.zeros(0, np.float32))[0].text == "w3"
    assert asr.calls[-1] == (0.0, 600)  # nothing after: up to its own end


def test_a_piece_cut_by_both_ends_keeps_the_words_in_between():
    words = [(9.0, 9.6, "Maria"), (9.6, 10.2, "parked"), (10.3, 10.8, "the"), (10.8, 11.5, "bicycle.")]
    piece = TranscriptPiece(9.0, 11.5, "Maria parked the bicycle.", words=words, language="en")
    (kept,) = words_within([piece], 9.5, 11.0)
    assert (kept.t_start, kept.t_end, kept.text) == (9.6, 10.8, "parked the")
    (head,) = words_within([piece], 0.0, 10.0)
    assert (head.t_start, head.t_end, head.text) == (9.0, 10.0, "Maria parked")
    assert words_within([piece], 0.0, 20.0) == [piece]


def test_segments_heard_together_are_one_pass_split_by_word_times():
    """asr_window_s: consecutive segments go to the recogniser as one clip (after the recent
    audio) and each gets the words said in its own time."""
    asr, recent = Recorder(), RecentAudio(max_s=2.0)
    hear(asr, tone(2, 0.1), RATE, 0.0, recent)
    parts = [(2.0, tone(1, 0.2)), (3.0, tone(2, 0.3)), (5.0, tone(1, 0.4))]
    out = hear_joined(asr, parts, RATE, recent)
    assert asr.calls[-1] == (0.0, 600)  # one pass: 2 s before, then the three segments
    assert [[p.text for p in ps] for ps in out] == [["w2"], ["w3 w3"], ["w4"]]
    assert [(p.t_start, p.t_end) for p in out[1]] == [(3.0, 5.0)]
    # the joined audio is held as heard: the next segment hears the end of it first
    hear(asr, tone(1, 0.5), RATE, 6.0, recent)
    assert asr.calls[-1] == (4.0, 300)


def test_a_gap_or_a_silent_part_splits_the_segments_heard_together():
    asr = Recorder()
    parts = [(0.0, tone(1, 0.1)), (1.0, tone(1, 0.2)), (4.0, tone(2, 0.3)), (6.0, np.zeros(0, np.float32))]
    out = hear_joined(asr, parts, RATE, None, after=tone(1, 0.9))
    assert asr.calls == [(0.0, 200), (4.0, 200)]  # no audio after the last part with audio
    assert [[p.text for p in ps] for ps in out] == [["w1"], ["w2"], ["w3 w3"], []]
    asr = Recorder()
    out = hear_joined(asr, parts[:3], RATE, None, after=tone(1, 0.9))
    assert asr.calls[-1] == (4.0, 300)  # the audio after follows the last part
    assert [p.text for p in out[2]] == ["w3 w3"]


class LoopsOnLongClips(Recorder):
    """Says "la" for each second of w3..w7 in a clip longer than ``limit_s``, as Whisper can
    fall into a loop over a long noisy stretch it hears well in short."""

    def __init__(self, limit_s: float) -> None:
        super().__init__()
        self.limit_s = limit_s

    def transcribe(self, audio: np.ndarray, sample_rate_hz: int, t_offset: float) -> list[TranscriptPiece]:
        pieces = super().transcribe(audio, sample_rate_hz, t_offset)
        if audio.size / sample_rate_hz <= self.limit_s:
            return pieces
        loop = {f"w{k}" for k in range(3, 8)}
        out = []
        for p in pieces:
            words = [(a, b, "la" if t in loop else t) for a, b, t in p.words]
            out.append(TranscriptPiece(p.t_start, p.t_end, " ".join(w[2] for w in words), words=words))
        return out


def test_a_part_the_joined_pass_heard_as_a_loop_is_heard_again_with_the_audio_before_it():
    asr, recent = LoopsOnLongClips(limit_s=6.0), RecentAudio(max_s=2.0)
    hear(asr, tone(2, 0.1), RATE, 0.0, recent)
    said = np.concatenate([tone(1, 0.3), tone(1, 0.5), tone(1, 0.6), tone(1, 0.7)])
    parts = [(2.0, tone(2, 0.2)), (4.0, said), (8.0, tone(2, 0.9))]
    out = hear_joined(asr, parts, RATE, recent)
    assert asr.calls[-2] == (0.0, 1000)  # the joined pass: 2 s before, then 8 s of parts
    assert asr.calls[-1] == (2.0, 600)  # the looping part again, after the 2 s before it
    assert [[p.text for p in ps] for ps in out] == [["w2 w2"], ["w3 w5 w6 w7"], ["w9 w9"]]
    # a loop the short pass repeats is said once, with the first repeat's time
    asr = LoopsOnLongClips(limit_s=0.0)
    out = hear_joined(asr, parts, RATE, None)
    assert len(asr.calls) == 2 and [(p.text, p.words) for p in out[1]] == [("la", [(4.0, 5.0, "la")])]


def test_looped_words_counts_what_speech_does_not_repeat():
    def looped(text: str) -> int:
        return looped_words([TranscriptPiece(0.0, 1.0, text)])

    assert looped("Bing, bing, bing, bing, chan, naka, naka, naka, naka, naka.") == 7
    assert looped("go to go to go to the shop") == 4
    assert looped("No, no, no, that is wrong.") == 0  # said three times: people do
    assert looped("I think that that that is fine, very very good") == 0
    assert looped("The train leaves at 10 past 7.") == 0


def test_a_loop_is_said_once_and_speech_is_left_as_it_was():
    def kept(text: str) -> list[str]:
        return [p.text for p in without_loops([TranscriptPiece(0.0, 1.0, text)])]

    assert kept("I don't know. I don't know. I don't know. I don't know.") == ["I don't know."]
    assert kept("Bing, bing, bing, bing, chan.") == ["Bing, chan."]
    assert kept("No, no, no, that is wrong.") == ["No, no, no, that is wrong."]
    # pieces and their timed words: a piece that is all repeats goes, another loses its repeats
    first = TranscriptPiece(0.0, 2.0, "go to", words=[(0.0, 1.0, "go"), (1.0, 2.0, "to")])
    second = TranscriptPiece(2.0, 5.0, "go to go to the shop",
                             words=[(2.0, 2.5, "go"), (2.5, 3.0, "to"), (3.0, 3.5, "go"), (3.5, 4.0, "to"),
                                    (4.0, 4.5, "the"), (4.5, 5.0, "shop")])
    third = TranscriptPiece(6.0, 7.0, "go to")
    out = without_loops([first, second, third])
    assert [(p.text, [w[2] for w in p.words]) for p in out] == [("go to", ["go", "to"]),
                                                                ("the shop", ["the", "shop"]), ("go to", [])]


class DropsQuietLongClips(Recorder):
    """Keeps no word of a clip longer than ``limit_s`` that is mostly quiet, as Whisper drops
    a 30-s window it judges no speech as a whole (one sentence after a long pause)."""

    def __init__(self, limit_s: float) -> None:
        super().__init__()
        self.limit_s = limit_s

    def transcribe(self, audio: np.ndarray, sample_rate_hz: int, t_offset: float) -> list[TranscriptPiece]:
        pieces = super().transcribe(audio, sample_rate_hz, t_offset)
        if audio.size / sample_rate_hz > self.limit_s and float(np.mean(audio > 0)) < 0.5:
            return []
        return pieces


class Speaks:
    """A voice-activity detector that hears speech wherever the audio is not zero."""

    def __init__(self) -> None:
        self.calls = 0

    def intervals(self, audio: np.ndarray, rate_hz: int, t_offset: float) -> list[tuple[float, float]]:
        self.calls += 1
        on = np.flatnonzero(np.asarray(audio) > 0)
        return [(t_offset + on[0] / rate_hz, t_offset + (on[-1] + 1) / rate_hz)] if on.size else []


def test_a_part_left_without_words_where_someone_speaks_is_heard_again_alone():
    """A joined pass that kept no word of a part the voice-activity detector hears speech in
    (Whisper dropped a mostly quiet window) hears that part again with the audio before it;
    parts without speech are not heard again, and without a detector nothing changes."""
    quiet = np.zeros(3 * RATE, np.float32)
    parts = [(0.0, quiet), (3.0, np.concatenate([np.zeros(RATE, np.float32), tone(2, 0.4)])), (6.0, quiet)]
    asr, vad = DropsQuietLongClips(limit_s=5.5), Speaks()
    out = hear_joined(asr, parts, RATE, RecentAudio(max_s=2.0), speech_activity=vad)
    assert [[p.text for p in ps] for ps in out] == [[], ["w0 w4 w4"], []]
    assert asr.calls == [(0.0, 900), (1.0, 500)]  # the joined pass, then the speaking part after 2 s
    assert vad.calls == 3  # every part left without words was checked, only one had speech
    asr = DropsQuietLongClips(limit_s=5.5)
    assert hear_joined(asr, parts, RATE, RecentAudio(max_s=2.0)) == [[], [], []]
    assert len(asr.calls) == 1
