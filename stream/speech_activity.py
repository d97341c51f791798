"""Where someone is speaking: voice-activity detection for speech-respecting boundaries.

The pause detector (stream/boundaries.py) finds *quiet* runs below −40 dBFS. Real recordings
rarely have them: room tone, traffic or a music bed keep the level up, so a segment that
reaches ``segment_max_s`` was split at exactly that time, often inside a sentence ("Two riders
are not | wearing helmets"). A voice-activity detector tells speech from everything else at
any background level, so the segmenter can move such a split into the gap between two
utterances.

The default is the Silero VAD model bundled with faster-whisper (ONNX, CPU, ≈ 5 ms per second
of audio, no download). Without faster-whisper no speech is reported and the segmenter keeps
its old rules.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from episodic.core.interfaces import SpeechActivity

__all__ = ["SileroSpeechActivity", "SpeechActivity", "split_point_outside_speech"]

log = logging.getLogger(__name__)

VAD_RATE_HZ = 16000  # Silero's rate
VAD_MIN_SILENCE_MS = 150  # a gap between words inside a sentence is shorter than this
VAD_SPEECH_PAD_MS = 30


class SileroSpeechActivity:
    """faster-whisper's bundled Silero VAD; loads on first use, thread-safe."""

    _lock = threading.Lock()

    def __init__(self, min_silence_ms: int = VAD_MIN_SILENCE_MS) -> None:
        self.min_silence_ms = int(min_silence_ms)
        self.available = True

    def intervals(self, audio: np.ndarray, rate_hz: int, t_offset: float) -> list[tuple[float, float]]:
        x = np.asarray(audio, dtype=np.float32).reshape(-1)
        if not self.available or x.size < rate_hz // 10:
            return []
        if rate_hz != VAD_RATE_HZ:  # Silero wants 16 kHz; linear resampling is enough for VAD
            n = int(round(x.size * VAD_RATE_HZ / rate_hz))
            x = np.interp(np.arange(n) * (rate_hz / VAD_RATE_HZ), np.arange(x.size), x).astype(np.float32)
            rate_hz = VAD_RATE_HZ
        try:
            from faster_whisper.vad import VadOptions, get_speech_timestamps
        except ImportError:
            log.warning("faster-whisper is not installed: segment splits cannot avoid speech")
            self.available = False
            return []
        options = VadOptions(min_silence_duration_ms=self.min_silence_ms, speech_pad_ms=VAD_SPEECH_PAD_MS)
        with self._lock:
            stamps = get_speech_timestamps(np.ascontiguousarray(x), options, sampling_rate=rate_hz)
        return [(t_offset + s["start"] / rate_hz, t_offset + s["end"] / rate_hz) for s in stamps]


def split_point_outside_speech(
    at: float, speech: list[tuple[float, float]], lo: float, hi: float, margin_s: float = 0.1
) -> float:
    """The point nearest ``at`` within [lo, hi] that no speech interval covers.

    ``at`` itself when it is already outside speech, or when speech covers all of [lo, hi]
    (a monologue without a breath: nothing better exists). Inside a gap the point keeps
    ``margin_s`` from the speech on either side where the gap allows.
    """
    if lo > hi or not any(a < at < b for a, b in speech):
        return at
    gaps: list[tuple[float, float, bool]] = []  # (start, end, bounded by speech on both sides)
    cursor, bounded_left = lo, False
    for a, b in sorted(speech):
        if a > cursor:
            gaps.append((cursor, min(a, hi), bounded_left and a <= hi))
        cursor = max(cursor, b)
        bounded_left = True
        if cursor >= hi:
            break
    if cursor < hi:
        gaps.append((cursor, hi, False))
    best, best_d = at, float("inf")
    for g0, g1, interior in gaps:
        if g1 <= g0:
            continue
        if interior:  # a pause between two utterances: split in its middle
            point = (g0 + g1) / 2
        else:  # open towards the window's edge: as near ``at`` as the margin allows
            m = min(margin_s, (g1 - g0) / 2)
            point = min(max(at, g0 + m), g1 - m)
        if abs(point - at) < best_d:
            best, best_d = point, abs(point - at)
    return best
