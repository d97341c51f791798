"""Audio decoded from a memory's snippet files (C_i) for just the time range needed, in stream
time and at Whisper's sample rate, and the speech around a sentence."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from episodic.core.errors import EpisodicError
from episodic.core.records import (
    ShortTermMemory,
    SnippetRef,
)
from episodic.retrieval.detailed import (
    Unit,
)

log = logging.getLogger(__name__)
SAMPLE_RATE_HZ = 16000  # what Whisper listens at
PAD_S = 0.3  # audio kept on each side of the pieces being re-transcribed


# -- audio from the snippets -----------------------------------------------------------------
def decode_audio(path: str, t_offset: float, t_start: float, t_end: float) -> np.ndarray:
    """Mono 16 kHz float32 audio of the file at ``path`` for stream times [t_start, t_end],
    where the file's time 0 is stream time ``t_offset`` (a snippet's ``t_start``). Samples are
    placed by their timestamps, so encoder priming and gaps do not shift the words; what the
    file does not cover stays silent."""
    import av

    n = max(0, int(round((t_end - t_start) * SAMPLE_RATE_HZ)))
    out = np.zeros(n, dtype=np.float32)
    if n == 0:
        return out
    with av.open(path) as container:
        if not container.streams.audio:
            return out
        stream = container.streams.audio[0]
        resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE_HZ)
        anchor: float | None = None  # file time of resampled sample 0
        emitted = 0

        def place(frames: list[Any]) -> None:
            nonlocal emitted
            for fr in frames:
                x = np.asarray(fr.to_ndarray(), dtype=np.float32).reshape(-1)
                t0 = t_offset + (anchor or 0.0) + emitted / SAMPLE_RATE_HZ
                emitted += x.size
                i0 = int(round((t0 - t_start) * SAMPLE_RATE_HZ))
                a, b = max(0, i0), min(n, i0 + x.size)
                if b > a:
                    out[a:b] = x[a - i0 : b - i0]

        for frame in container.decode(stream):
            if anchor is None:
                anchor = float(frame.pts * frame.time_base) if frame.pts is not None else 0.0
            if t_offset + (anchor or 0.0) + emitted / SAMPLE_RATE_HZ > t_end:
                break
            place(resampler.resample(frame))
        place(resampler.resample(None))
    return out


CONTEXT_MAX_S = 28.0  # Whisper hears 30 s at once: the sentence and its neighbours within that


def speech_around(memory: ShortTermMemory, sentence: Unit) -> tuple[str, str, float, float]:
    """The transcript pieces said just before and after ``sentence`` in its memory (as far as
    one Whisper window of ``CONTEXT_MAX_S`` holds them, nearest first) and the audio span
    that covers them all: (text before, text after, t_start, t_end)."""
    pieces = sorted(memory.transcript, key=lambda p: p.t_start)
    t0, t1 = sentence.t_start, sentence.t_end
    before: list[str] = []
    after: list[str] = []
    earlier = [p for p in pieces if p.t_end <= sentence.t_start + 1e-3 and p.text.strip() != sentence.text]
    later = [p for p in pieces if p.t_start >= sentence.t_end - 1e-3 and p.text.strip() != sentence.text]
    while earlier or later:
        grew = False
        if earlier and max(t1, earlier[-1].t_end) - earlier[-1].t_start + 2 * PAD_S <= CONTEXT_MAX_S:
            p = earlier.pop()
            before.insert(0, p.text.strip())
            t0 = min(t0, p.t_start)
            grew = True
        if later and later[0].t_end - t0 + 2 * PAD_S <= CONTEXT_MAX_S:
            p = later.pop(0)
            after.append(p.text.strip())
            t1 = max(t1, p.t_end)
            grew = True
        if not grew:
            break
    return " ".join(before), " ".join(after), max(memory.t_start, t0 - PAD_S), min(memory.t_end, t1 + PAD_S)


def audio_or_none(
    memory: ShortTermMemory, t_start: float, t_end: float, path_for: Callable[[str], Any], who: str
) -> np.ndarray | None:
    """:func:`memory_audio`, or None (logged, as ``who`` saw it) when the snippet is missing,
    outside the snippet directory or damaged: listening again never fails a request."""
    try:
        return memory_audio(memory, t_start, t_end, path_for)
    except (EpisodicError, OSError, ValueError) as exc:
        log.info("%s: no audio for %s: %s", who, memory.id, exc)
        return None
    except Exception as exc:  # PyAV raises its own error types for damaged files
        if type(exc).__module__.split(".")[0] != "av":
            raise
        log.info("%s: cannot decode audio of %s: %s", who, memory.id, exc)
        return None


def memory_audio(
    memory: ShortTermMemory, t_start: float, t_end: float, path_for: Callable[[str], Any]
) -> np.ndarray:
    """The memory's audio for [t_start, t_end] from every snippet that overlaps it
    (consolidated memories have one snippet per merged segment). ``path_for`` turns a snippet
    URI into a local path and refuses anything outside the snippet directory."""
    n = max(0, int(round((t_end - t_start) * SAMPLE_RATE_HZ)))
    out = np.zeros(n, dtype=np.float32)
    refs: list[SnippetRef] = sorted(memory.snippets, key=lambda r: r.t_start)
    for ref in refs:
        a, b = max(t_start, ref.t_start), min(t_end, ref.t_end)
        if b <= a:
            continue
        part = decode_audio(str(path_for(ref.uri)), ref.t_start, a, b)
        i0 = int(round((a - t_start) * SAMPLE_RATE_HZ))
        m = min(part.size, n - i0)
        if m > 0:
            out[i0 : i0 + m] = part[:m]
    return out


