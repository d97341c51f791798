"""Hearing several recalled stretches of audio in one recogniser pass.

Whisper encodes a whole 30 s window however short the audio, so listening again to one
three-second sentence costs nearly what listening to thirty seconds does (Whisper base on two
cores: 0.6 s for one sentence alone, 1.7 s for six sentences in one window; six alone: 3.9 s).
When a question's best evidence is misheard, the sentence that really answers it is often not
the first one recalled ("So more than 15 lots of the theme" for "Tom ordered fifteen ropes for the
team" ranked sixth for "How many ropes did Tom order?"), so re-listening several at once finds
it where listening to the first alone could not.

The clips are laid end to end with a short silence between them, transcribed once with word
times, and each word goes back to the clip it was heard in (by the middle of its time), in that
clip's stream time. Pure functions: the recogniser is the caller's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from episodic.core.records import TranscriptPiece

GAP_S = 0.8  # silence between clips: Whisper ends a segment there and starts the next afresh
WINDOW_S = 28.0  # clips and gaps together stay inside one 30 s Whisper window


@dataclass(frozen=True)
class Clip:
    """One stretch to hear: ``audio`` (mono, ``sample_rate_hz``) is stream time ``t_start``
    onwards of one memory."""

    key: str  # whose clip (a memory id)
    t_start: float
    audio: np.ndarray


@dataclass(frozen=True)
class Joined:
    """Clips laid end to end: the audio and where each clip starts in it (seconds)."""

    audio: np.ndarray
    offsets: tuple[float, ...]
    durations: tuple[float, ...]


def join_clips(clips: Sequence[Clip], sample_rate_hz: int, gap_s: float = GAP_S) -> Joined:
    """The clips' audio one after the other, ``gap_s`` of silence before each but the first."""
    gap = np.zeros(int(round(gap_s * sample_rate_hz)), dtype=np.float32)
    parts: list[np.ndarray] = []
    offsets: list[float] = []
    durations: list[float] = []
    at = 0
    for i, clip in enumerate(clips):
        if i:
            parts.append(gap)
            at += gap.size
        audio = np.asarray(clip.audio, dtype=np.float32).reshape(-1)
        offsets.append(at / sample_rate_hz)
        durations.append(audio.size / sample_rate_hz)
        parts.append(audio)
        at += audio.size
    joined = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return Joined(joined, tuple(offsets), tuple(durations))


def _owner(joined: Joined, t: float) -> int:
    """The clip a moment of the joined audio belongs to: the one holding it, else the nearest
    (a word Whisper timed into a gap)."""
    best, best_d = 0, float("inf")
    for i, (o, d) in enumerate(zip(joined.offsets, joined.durations, strict=True)):
        if o <= t <= o + d:
            return i
        dist = o - t if t < o else t - (o + d)
        if dist < best_d:
            best, best_d = i, dist
    return best


def split_pieces(
    pieces: Sequence[TranscriptPiece], clips: Sequence[Clip], joined: Joined
) -> list[list[TranscriptPiece]]:
    """Each clip's pieces, in its own stream time, from pieces heard in the joined audio (times
    from 0 at its start). A piece with word times is cut wherever its words change clip; one
    without them goes whole to the clip holding its middle."""
    out: list[list[TranscriptPiece]] = [[] for _ in clips]

    def to_stream(i: int, t: float) -> float:
        local = min(max(t - joined.offsets[i], 0.0), joined.durations[i])
        return clips[i].t_start + local

    for piece in pieces:
        if not piece.words:
            i = _owner(joined, (piece.t_start + piece.t_end) / 2.0)
            out[i].append(TranscriptPiece(to_stream(i, piece.t_start), to_stream(i, piece.t_end),
                                          piece.text.strip(), language=piece.language))
            continue
        run: list[tuple[float, float, str]] = []
        run_owner = -1
        for w0, w1, word in [*piece.words, (0.0, 0.0, "")]:
            i = _owner(joined, (w0 + w1) / 2.0) if word else -1
            if run and i != run_owner:
                words = [(to_stream(run_owner, a), to_stream(run_owner, b), x) for a, b, x in run]
                out[run_owner].append(TranscriptPiece(
                    words[0][0], max(words[-1][1], words[0][0]), " ".join(x for _, _, x in words),
                    words=words, language=piece.language,
                ))
                run = []
            if word:
                run.append((w0, w1, word))
                run_owner = i
    return out

