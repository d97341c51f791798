"""Hearing a segment in context: the stream's audio just before and just after it goes to the
recogniser too.

Whisper hears a two-second sentence cut out on its own much worse than the same sentence with
the stream around it: the earlier speech tells it the voices, the accent, the noise and the
words in use, and a clip that stops right after the last word loses that word more often than
one that runs on. On the generated dev QA recordings (accented espeak-ng voices over noise;
`benchmarks/bench_asr_context.py`), Whisper base's word error rate per segment was 47.8 %
alone, 35.1 % after the 15 s before it holding at most 6 s of speech (the default), and 33.6 %
with 3 s of the audio after it as well (``asr_context_after_s``, off by default: see below).
The context's words are decoded again with the segment's, so a longer
context costs ingest speed (a stream where someone talks all the time would pay for all of it
per segment). Only the words whose middle falls in the segment are kept; what was heard before
belongs to the segments stored already, what was heard after to the next one, which hears it
again in its own context.

The audio after comes with the segment (``Segment.audio_after``, when ``asr_context_after_s``
is set): the segmenter holds each closed segment back until the next one closes, so the next
one's audio is there already and waiting for it costs nothing; the last segment of a run has
none. A live stream's provisional memory (encoded before the next segment closed) keeps what
it heard without it. It is off by default: Whisper's word times near the boundary are not
exact, so the next sentence's first words are now and then kept at the end of a segment too
(heard twice, which confuses "what came right after"), the dev QA sets were not answered
better with it, and ingest was slower on some recordings.

Segments are heard together by default (``asr_window_s`` = 60, :func:`hear_joined`): the
ingestor writes each closed segment's snippet and reads its key frames at once, and keeps only
its audio until the segments waiting span 60 s (or the run ends at a checkpoint or the
stream's end); then their joined audio is heard in one pass after the recent audio and each
segment keeps the words whose middle falls in its time. Whisper then hears a sentence between
its neighbours, with room to find its own 30-s windows, and decodes each word once instead of
once per segment whose context holds it: dev word error rate 37.7 % → 25.9 % (seed 4) and
35.9 % → 28.6 % (seed 5), ASR time about 2.5× less. A memory forms up to a window later, so a
live stream's provisional memories are heard alone at once (``hear(..., keep=False)``: the
context the window will hear is left as it was) and replaced when the window is heard. A long
pass can fall into a loop that a short one would not ("bing, bing, bing, naka, naka, naka"
over a noisy stretch): a segment whose words loop (:func:`looped_words`) is heard again with
only the audio before it, keeps whichever transcript loops less, and says a loop that remains
once (:func:`without_loops`).

The encoder keeps :class:`RecentAudio` for its stream run. A run starts afresh at every
checkpoint (see ``episodic.pipeline.StreamRunner``); the runner then seeds it with the audio
of the stored memories before the checkpoint, so a restarted worker hears exactly what an
uninterrupted one heard.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from episodic.core.interfaces import SpeechActivity, SpeechRecognizer
from episodic.core.records import TranscriptPiece
from episodic.memory.speech import loop_mask, to_mono_float32

# Audio this close to the end of the previous piece still counts as continuing it (a frame of
# rounding between segment boundaries and audio block edges).
CONTIGUOUS_S = 0.1
# a part of a joined pass that kept no word although the voice-activity detector hears this
# much speech in it is heard again on its own (see hear_joined)
LOST_SPEECH_S = 0.8


@dataclass
class _Piece:
    t_start: float
    samples: np.ndarray
    speech: tuple[tuple[float, float], ...]  # where words were heard in it (stream time)

    def t_end(self, rate_hz: int) -> float:
        return self.t_start + self.samples.size / rate_hz


class RecentAudio:
    """The last ``max_s`` seconds of one stream's audio, as heard, for the next segment's
    context, holding at most ``max_speech_s`` seconds of speech: the recogniser decodes the
    context's words again with the segment's, so talk that never stops would otherwise cost
    ``max_s`` of decoding per segment. Audio added at or after a time already held replaces it
    (a segment encoded early for a provisional memory and again when released is held once)."""

    def __init__(self, max_s: float, max_speech_s: float | None = None, rate_hz: int | None = None) -> None:
        self.max_s = max(0.0, float(max_s))
        self.max_speech_s = self.max_s if max_speech_s is None else max(0.0, float(max_speech_s))
        self.rate_hz = rate_hz
        self._pieces: list[_Piece] = []

    def __len__(self) -> int:
        return len(self._pieces)

    def add(self, t_start: float, samples: np.ndarray, rate_hz: int,
            speech: Sequence[tuple[float, float]] = ()) -> None:
        """Audio from stream time ``t_start``; ``speech``: the spans in it where words were heard."""
        if self.max_s <= 0 or self.max_speech_s <= 0 or samples.size == 0:
            return
        if self.rate_hz != rate_hz:
            self._pieces, self.rate_hz = [], rate_hz  # another rate: start again
        self._pieces = [p for p in self._pieces if p.t_start < t_start - CONTIGUOUS_S]
        self._pieces.append(_Piece(float(t_start), to_mono_float32(samples),
                                   tuple((float(a), float(b)) for a, b in speech if b > a)))
        end = self._pieces[-1].t_end(rate_hz)
        while self._pieces and self._pieces[0].t_end(rate_hz) <= end - self.max_s:
            self._pieces.pop(0)

    def before(self, t: float, rate_hz: int) -> tuple[float, np.ndarray] | None:
        """(start, samples) of the audio held that runs without a gap up to ``t``, at most
        ``max_s`` long; None when nothing held ends at ``t``."""
        if self.rate_hz != rate_hz or not self._pieces:
            return None
        chain: list[_Piece] = []
        edge = t
        for p in reversed(self._pieces):
            if p.t_start >= edge - CONTIGUOUS_S:
                continue  # at or after the segment being heard
            if abs(p.t_end(rate_hz) - edge) > CONTIGUOUS_S:
                break
            chain.append(p)
            edge = p.t_start
        if not chain:
            return None
        chain.reverse()
        audio = np.concatenate([p.samples for p in chain])
        start = max(chain[0].t_start, t - self.max_s, self._speech_cut(chain, t))
        if start >= t - CONTIGUOUS_S:
            return None
        return start, audio[max(0, int(round((start - chain[0].t_start) * rate_hz))) :]

    def _speech_cut(self, chain: list[_Piece], t: float) -> float:
        """The latest time from which the chain up to ``t`` holds ``max_speech_s`` of speech
        (the start of the chain when it holds less)."""
        spans = sorted((a, min(b, t)) for p in chain for a, b in p.speech if a < t)
        left = self.max_speech_s
        for a, b in reversed(spans):
            if b - a >= left:
                return b - left
            left -= b - a
        return chain[0].t_start


def words_within(pieces: list[TranscriptPiece], t0: float, t1: float) -> list[TranscriptPiece]:
    """The part of ``pieces`` said in [t0, t1): words whose middle falls there (a piece cut
    by either edge keeps those words as its text); a piece without word times is kept when
    its middle is. ``t1 = math.inf``: everything said from ``t0`` on."""

    def inside(a: float, b: float) -> bool:
        return t0 <= (a + b) / 2 < t1

    out: list[TranscriptPiece] = []
    for p in pieces:
        if not p.words:
            if inside(p.t_start, p.t_end):
                out.append(p)
            continue
        kept = [w for w in p.words if inside(w[0], w[1])]
        if not kept:
            continue
        if len(kept) == len(p.words):
            out.append(p)
            continue
        text = " ".join(w[2] for w in kept)
        start = p.t_start if kept[0] == p.words[0] else max(t0, kept[0][0])
        end = p.t_end if kept[-1] == p.words[-1] else min(t1, kept[-1][1])
        out.append(TranscriptPiece(t_start=start, t_end=end, text=text, words=kept, language=p.language))
    return out


def hear(
    asr: SpeechRecognizer,
    audio: np.ndarray,
    rate_hz: int,
    t_start: float,
    recent: RecentAudio | None,
    after: np.ndarray | None = None,
    keep: bool = True,
) -> list[TranscriptPiece]:
    """The transcript of ``audio`` (stream time ``t_start``), heard after the recent audio
    that leads up to it when there is some and before ``after`` (the audio that follows it)
    when given; only the words said within ``audio`` are kept. Then ``audio`` joins the
    recent audio (unless ``keep`` is False)."""
    x = to_mono_float32(audio)
    tail = to_mono_float32(after) if after is not None and after.size else np.zeros(0, np.float32)
    context = recent.before(t_start, rate_hz) if recent is not None else None
    # with nothing after it, whatever is heard at its end is the segment's own
    t_end = t_start + x.size / rate_hz if tail.size else math.inf
    if context is None and not tail.size:
        pieces = asr.transcribe(x, rate_hz, t_start)
    else:
        c_start, c_audio = context if context is not None else (t_start, np.zeros(0, np.float32))
        pieces = words_within(asr.transcribe(np.concatenate([c_audio, x, tail]), rate_hz, c_start), t_start, t_end)
    if recent is not None and keep:
        recent.add(t_start, x, rate_hz, speech_spans(pieces))
    return pieces


def hear_joined(
    asr: SpeechRecognizer,
    parts: Sequence[tuple[float, np.ndarray]],
    rate_hz: int,
    recent: RecentAudio | None,
    after: np.ndarray | None = None,
    speech_activity: SpeechActivity | None = None,
) -> list[list[TranscriptPiece]]:
    """Each part's words (``parts``: consecutive segments' (stream start, audio)), heard in
    one pass: parts whose audio runs on without a gap are joined into one clip, heard as
    :func:`hear` hears a segment (``after`` follows the last part), and split again where each
    word's middle falls. A gap (a source gap, a part with no audio) starts another clip.

    A part is heard again on its own (with only the audio before it) when the long pass left
    it looping, or, given ``speech_activity``, left it without a word although someone speaks
    in it for ``LOST_SPEECH_S`` or more: Whisper judges each 30-s window as a whole, and a
    window that is mostly quiet (a long pause, a music bed) can be dropped as no speech with
    the one sentence in it ("Omar has 8 novels in the bag." after 25 s without a word)."""
    out: list[list[TranscriptPiece]] = [[] for _ in parts]
    mono = [to_mono_float32(x) for _, x in parts]
    runs: list[list[int]] = []
    for i, x in enumerate(mono):
        if not x.size:
            continue
        last = runs[-1][-1] if runs else None
        if last is not None and abs(parts[last][0] + mono[last].size / rate_hz - parts[i][0]) <= CONTIGUOUS_S:
            runs[-1].append(i)
        else:
            runs.append([i])
    for run in runs:
        tail = after if run[-1] == len(parts) - 1 else None
        start = parts[run[0]][0]
        joined = np.concatenate([mono[i] for i in run])
        before = recent.before(start, rate_hz) if recent is not None and len(run) > 1 else None
        pieces = hear(asr, joined, rate_hz, start, recent, tail)

        def alone(i: int, joined: np.ndarray = joined, start: float = start,
                  before: tuple[float, np.ndarray] | None = before) -> list[TranscriptPiece]:
            """Part ``i`` heard again after the audio before it (at most the context's length)."""
            t0, t1 = parts[i][0], parts[i][0] + mono[i].size / rate_hz
            clip_start, clip = (before[0], np.concatenate([before[1], joined])) if before else (start, joined)
            a = max(clip_start, t0 - (recent.max_s if recent is not None else 0.0))
            x = clip[int(round((a - clip_start) * rate_hz)) : int(round((t1 - clip_start) * rate_hz))]
            return words_within(asr.transcribe(x, rate_hz, a), t0, math.inf)

        for j, i in enumerate(run):
            lo = -math.inf if j == 0 else parts[i][0]
            hi = math.inf if j == len(run) - 1 else parts[run[j + 1]][0]
            out[i] = words_within(pieces, lo, hi)
            if len(run) > 1 and looped_words(out[i]):
                # a long pass can fall into a loop a short one would not ("bing, bing, bing,
                # naka, naka, naka"): this part is heard again with only the audio before it
                again = alone(i)
                if looped_words(again) < looped_words(out[i]):
                    out[i] = again
                out[i] = without_loops(out[i])  # a loop both passes made is said once
            elif len(run) > 1 and not out[i] and speech_activity is not None:
                spoken = sum(b - a for a, b in speech_activity.intervals(mono[i], rate_hz, parts[i][0]))
                if spoken >= LOST_SPEECH_S:
                    out[i] = without_loops(alone(i))
    return out


def _tokens(piece: TranscriptPiece) -> list[str]:
    """A piece's words as said: its timed words when it has them, else its text's words."""
    return [w[2] for w in piece.words] if piece.words else piece.text.split()


def looped_words(pieces: Sequence[TranscriptPiece]) -> int:
    """How many words of ``pieces`` loop (see :func:`~episodic.memory.speech.loop_mask`). Whisper falls into such
    loops on noise; people rarely say "no, no, no" a fourth time."""
    return sum(loop_mask([w for p in pieces for w in _tokens(p)]))


def without_loops(pieces: Sequence[TranscriptPiece]) -> list[TranscriptPiece]:
    """``pieces`` with the repeats of their loops left out ("I don't know. I don't know. I don't
    know." → "I don't know."), as Whisper's own check leaves out a piece that is all loop."""
    mask = loop_mask([w for p in pieces for w in _tokens(p)])
    if not any(mask):
        return list(pieces)
    out: list[TranscriptPiece] = []
    k = 0
    for p in pieces:
        n = len(_tokens(p))
        keep = [not m for m in mask[k : k + n]]
        k += n
        if all(keep):
            out.append(p)
            continue
        if not any(keep):
            continue
        if p.words:
            words = [w for w, ok in zip(p.words, keep, strict=True) if ok]
            out.append(TranscriptPiece(p.t_start, p.t_end, " ".join(w[2] for w in words), words=words,
                                       language=p.language))
        else:
            text = " ".join(w for w, ok in zip(p.text.split(), keep, strict=True) if ok)
            out.append(TranscriptPiece(p.t_start, p.t_end, text, language=p.language))
    return out


def speech_spans(pieces: Sequence[TranscriptPiece]) -> list[tuple[float, float]]:
    """Where words were heard: each word's span, or each piece's when it has no word times."""
    out: list[tuple[float, float]] = []
    for p in pieces:
        out += [(w[0], w[1]) for w in p.words] if p.words else [(p.t_start, p.t_end)]
    return out
