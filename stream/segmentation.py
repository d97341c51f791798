"""Incremental segmentation: decoded media in, closed 5–10 s segments out.

Two layers, so the decisions can be tested without any media:

* :class:`BoundaryPlanner` sees only times: candidate boundaries (visual cuts, audio
  pauses), how far the stream has been seen ("now") and, at the end, where it ended. It
  decides the segment edges.
* :class:`StreamSegmenter` owns the sampler, the detectors and the buffers, feeds the
  planner, and turns the planner's spans into :class:`~core.media.Segment` objects
  carrying their sampled frames, snippet frames and audio.

The rules (ours; HippoMM only says "merge short, split long" to hold segments to
``segment_min_s``..``segment_max_s``):

1. **Visual cuts are hard.** A cut ``c`` with ``c − t0 ≥ min`` (``t0`` = start of the
   open segment) closes ``[t0, c)`` at once. A cut closer than ``min`` to ``t0`` is
   dropped: the short shot merges into the current segment (flashes, quick cut-aways).
2. **Audio pauses are soft.** When no cut has closed the segment by ``t0 + max``, the
   split is decided once the stream has been seen up to ``t0 + max + min`` (or has
   ended), so the choice can account for what follows:

   * a cut ``c`` in ``(t0 + max, t0 + max + min]`` would leave a piece too short or too
     long whichever single split we made blindly, so ``[t0, c)`` is split in two parts
     that both respect the rule: at the longest pause inside the allowed range, else at
     the midpoint (the end of the stream counts as such a cut);
   * otherwise at the longest pause whose time lies in ``[t0 + min, t0 + max]`` (ties go
     to the later one, for longer segments), else at exactly ``t0 + max``.

   A pause is a quiet *run*; the split may fall anywhere inside it, so a long silence
   that straddles the allowed range still gives a clean split point.
3. **Speech is not cut** (``segment_speech_bend_s``, 2 s by default). A split chosen by rules 1
   or 2 that falls inside an utterance (voice-activity detection, stream/speech_activity.py)
   moves to the nearest gap between utterances within ``bend`` seconds, so a sentence stays
   in one segment; segment lengths then bend to [min − bend, max + bend]. With no gap in
   reach (continuous speech) the split stays where it was. A visual cut inside speech is
   decided ``bend`` seconds later than before, once the audio after it is known.
4. **The tail merges.** The last closed segment is held back until the next one closes
   or the stream ends. A tail shorter than ``min`` is merged into it; if the merged span
   exceeds ``max`` it is split again in two parts (pause-aware, else equal halves). A
   recording shorter than ``min`` is one short segment; a zero-length one yields none.

With the default 5/10 s every segment lands in [5, 10] s and every cut that is at least
5 s from the previous edge becomes a segment edge exactly, except where rule 3 moved an edge
out of a sentence (then [3, 12] s, the edge within 2 s of the cut).
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from episodic.config import SegmentationSettings, Settings
from episodic.core.media import Boundary, SampledFrame, Segment, SnippetFrame
from episodic.stream.boundaries import AudioPauseDetector, VisualBoundaryDetector
from episodic.stream.sampling import FrameSampler, SnippetDecimator
from episodic.stream.speech_activity import (
    SileroSpeechActivity,
    SpeechActivity,
    split_point_outside_speech,
)

# Speech intervals in [lo, hi] of stream time (the segmenter's voice-activity detector).
SpeechLookup = Callable[[float, float], list[tuple[float, float]]]
SPEECH_CONTEXT_S = 0.5  # audio either side of the window the detector sees, for context

_EPS = 1e-6
# When both media flow, decisions wait for the slower one, but never by more than this:
# a stalled or missing track must not make the buffers grow without bound.
MEDIA_SKEW_S = 10.0


@dataclass(frozen=True)
class Span:
    """A decided segment ``[t_start, t_end)`` and what closed it (visual|pause|max|end)."""

    t_start: float
    t_end: float
    kind: str

    @property
    def duration_s(self) -> float:
        return self.t_end - self.t_start


class BoundaryPlanner:
    """Pure boundary decisions over times (see the module docstring for the rules).

    Feed candidates with :meth:`add` in any order (visual cuts normally arrive in time
    order), call :meth:`advance` with the time up to which all candidates are known, and
    :meth:`finish` with the stream's end. Both return the spans that are now final, in
    order and contiguous from 0.
    """

    def __init__(
        self,
        settings: SegmentationSettings | None = None,
        *,
        min_s: float | None = None,
        max_s: float | None = None,
        start_s: float = 0.0,
        speech: SpeechLookup | None = None,
        bend_s: float | None = None,
    ) -> None:
        s = settings or SegmentationSettings()
        self.min_s = float(s.segment_min_s if min_s is None else min_s)
        self.max_s = float(s.segment_max_s if max_s is None else max_s)
        if not 0 < self.min_s <= self.max_s:
            raise ValueError("need 0 < min_s <= max_s")
        self.speech = speech
        # never bend so far that a part could vanish: a bend of at least min_s would allow 0 s
        self.bend_s = min(float(s.segment_speech_bend_s if bend_s is None else bend_s), self.min_s * 0.5)
        self.t0 = float(start_s)  # start of the open segment
        self._cuts: list[float] = []
        self._pauses: list[Boundary] = []
        self._held: Span | None = None
        self.finished = False

    # -- inputs -----------------------------------------------------------------------

    def add(self, boundary: Boundary) -> None:
        """Register a candidate: ``kind`` "visual" (hard cut) or "pause" (soft)."""
        if boundary.kind == "visual":
            if boundary.t > self.t0 + _EPS:
                bisect.insort(self._cuts, boundary.t)
        elif boundary.kind == "pause":
            self._pauses.append(boundary)
        else:
            raise ValueError(f"unknown boundary kind {boundary.kind!r}")

    @property
    def held(self) -> Span | None:
        """The last closed span, held back until the next one closes (see :meth:`_close`)."""
        return self._held

    @property
    def last_edge(self) -> float:
        """The latest known segment edge: the open segment's start or a visual cut after it."""
        return max([self.t0, *self._cuts])

    @property
    def pending_start(self) -> float:
        """Earliest time not yet released in a span (the held segment's start)."""
        return self._held.t_start if self._held is not None else self.t0

    # -- decisions --------------------------------------------------------------------

    def advance(self, now: float, provisional: Iterable[Boundary] = ()) -> list[Span]:
        """Spans that are final given candidates known up to ``now``.

        ``provisional`` are pauses still in progress (a quiet run that has not ended);
        they may be used as split points but are not stored.
        """
        if self.finished:
            return []
        extra = [b for b in provisional if b is not None]
        out: list[Span] = []
        while self._step(now, extra, out, end=None):
            pass
        return out

    def finish(self, end: float, provisional: Iterable[Boundary] = ()) -> list[Span]:
        """The stream ended at ``end``: close everything, merging a short tail."""
        if self.finished:
            return []
        extra = [b for b in provisional if b is not None]
        out: list[Span] = []
        if end > self.t0 + _EPS:
            while self._step(end, extra, out, end=end):
                pass
        if self._held is not None:
            out.append(self._held)
            self._held = None
        self.finished = True
        return out

    def _step(self, now: float, extra: list[Boundary], out: list[Span], end: float | None) -> bool:
        """Make at most one decision; True when a span was closed (try again)."""
        t0, mn, mx = self.t0, self.min_s, self.max_s
        cuts = [c for c in self._cuts if c > t0 + _EPS and (end is None or c < end - _EPS)]
        first = next((c for c in cuts if c - t0 >= mn - _EPS), None)
        if first is not None and first - t0 <= mx + _EPS:
            at = self._outside_speech(first, now, end)
            if at is None:
                return False  # the cut may sit inside a sentence: wait for the audio after it
            self._close(at, "visual", out)
            return True
        if end is not None and end - t0 <= mx + _EPS:
            self._close_final(end, extra, out)
            return False
        horizon = t0 + mx + mn
        if first is not None and first <= horizon + _EPS:
            limit: float | None = first
        elif end is not None and end <= horizon + _EPS:
            limit = end
        elif end is not None or now >= horizon - _EPS:
            limit = None
        else:
            return False  # not enough lookahead yet
        pauses = self._pauses + extra
        if limit is not None:
            at, kind = self._split_between(t0, limit, pauses)
        else:
            at, kind = self._split_long(t0, pauses)
        moved = self._outside_speech(at, now, end, limit)
        if moved is None:
            return False
        if abs(moved - at) > _EPS:
            kind = "speech-gap"
        self._close(moved, kind, out)
        return True

    def _outside_speech(
        self, at: float, now: float, end: float | None, limit: float | None = None
    ) -> float | None:
        """``at``, or the nearest point within ``bend_s`` that is not inside an utterance;
        ``None`` while the audio needed to decide has not arrived yet."""
        bend = self.bend_s
        if self.speech is None or bend <= 0:
            return at
        lo = max(self.t0 + self.min_s - bend, at - bend)
        hi = min(self.t0 + self.max_s + bend, at + bend)
        if limit is not None:  # the part after the split must keep min − bend too
            hi = min(hi, limit - (self.min_s - bend))
        if end is not None:
            hi = min(hi, end)
        elif now < hi + SPEECH_CONTEXT_S - _EPS:
            return None
        if hi <= lo + _EPS:
            return at
        speech = self.speech(lo - SPEECH_CONTEXT_S, hi + SPEECH_CONTEXT_S)
        return split_point_outside_speech(at, speech, lo, hi)

    def _close(self, t: float, kind: str, out: list[Span]) -> None:
        span = Span(self.t0, t, kind)
        if self._held is not None:
            out.append(self._held)
        self._held = span
        self.t0 = t
        self._prune()

    def _close_final(self, end: float, extra: list[Boundary], out: list[Span]) -> None:
        tail = Span(self.t0, end, "end")
        held, self._held = self._held, None
        if held is not None and tail.duration_s < self.min_s - _EPS:
            a = held.t_start
            if end - a > self.max_s + _EPS:
                at, kind = self._split_between(a, end, self._pauses + extra)
                out.extend([Span(a, at, kind), Span(at, end, "end")])
            else:
                out.append(Span(a, end, "end"))
        else:
            if held is not None:
                out.append(held)
            out.append(tail)
        self.t0 = end

    def _prune(self) -> None:
        keep_from = self.pending_start
        self._cuts = [c for c in self._cuts if c > self.t0 + _EPS]
        self._pauses = [
            p for p in self._pauses if (p.end if p.end is not None else p.t) >= keep_from - _EPS
        ]

    # -- split point choice -----------------------------------------------------------

    @staticmethod
    def _point_in(p: Boundary, lo: float, hi: float) -> float | None:
        """Where pause ``p`` offers a split inside [lo, hi], if anywhere."""
        if p.start is not None and p.end is not None:
            a, b = max(lo, p.start), min(hi, p.end)
            if a > b + _EPS:
                return None
            return min(max(p.t, a), b)
        return p.t if lo - _EPS <= p.t <= hi + _EPS else None

    def _split_between(self, a: float, b: float, pauses: Sequence[Boundary]) -> tuple[float, str]:
        """Split [a, b) (longer than max) so both parts are within [min, max]."""
        lo = max(a + self.min_s, b - self.max_s)
        hi = min(a + self.max_s, b - self.min_s)
        mid = (a + b) / 2
        if lo > hi + _EPS:  # only when max < 2·min: no split satisfies both; halve it
            return mid, "max"
        best: tuple[float, float] | None = None
        best_at = mid
        for p in pauses:
            at = self._point_in(p, lo, hi)
            if at is None:
                continue
            key = (round(p.score, 3), -abs(at - mid))
            if best is None or key > best:
                best, best_at = key, at
        if best is not None:
            return best_at, "pause"
        return min(max(mid, lo), hi), "max"

    def _split_long(self, a: float, pauses: Sequence[Boundary]) -> tuple[float, str]:
        """Split a long shot at the longest pause in [a+min, a+max], else at a+max."""
        lo, hi = a + self.min_s, a + self.max_s
        best: tuple[float, float] | None = None
        best_at = hi
        for p in pauses:
            at = self._point_in(p, lo, hi)
            if at is None:
                continue
            key = (round(p.score, 3), at)  # ties → later
            if best is None or key > best:
                best, best_at = key, at
        return (best_at, "pause") if best is not None else (hi, "max")


class StreamSegmenter:
    """Turns pushed video frames and audio blocks into closed, contiguous segments.

    Push media as it is decoded (any interleaving, any block sizes); each push returns
    the segments that became final. :meth:`finish` closes the rest. Segments cover the
    stream from 0 to the end of the last media without gaps or overlaps; each carries
    the sampled frames, snippet frames and audio that fall inside it.

    ``has_video`` / ``has_audio`` (from :class:`~core.media.MediaInfo`) let decisions
    wait for a medium that has not produced data yet; when left ``None`` a medium counts
    once it has been pushed. Buffers hold only the held-back segment and the open one.

    ``start_s`` starts the segmentation at a later stream time (segments then cover
    ``start_s`` onwards): a pipeline restarted at a checkpoint continues from there.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        has_video: bool | None = None,
        has_audio: bool | None = None,
        start_s: float = 0.0,
    ) -> None:
        self.settings = s = settings or Settings()
        self.rate = s.audio_sample_rate_hz
        self.sampler = FrameSampler(s.sampling)
        self.decimator = SnippetDecimator(s.snippets)
        self.visual = VisualBoundaryDetector(s.segmentation)
        self.pauses = AudioPauseDetector(s.segmentation, s.audio_sample_rate_hz)
        self.vad: SpeechActivity | None = (
            SileroSpeechActivity() if s.segment_speech_bend_s > 0 and has_audio is not False else None
        )
        self.planner = BoundaryPlanner(
            s.segmentation, start_s=start_s, speech=self._speech_in if self.vad is not None else None
        )
        self.has_video = has_video
        self.has_audio = has_audio
        self._frames: deque[SampledFrame] = deque()
        self._snippets: deque[SnippetFrame] = deque()
        self._audio: deque[tuple[int, np.ndarray]] = deque()  # (absolute sample index, samples)
        self._video_seen = False
        self._audio_seen = False
        self.start_s = float(start_s)
        self._video_now = self.start_s
        self._video_end = self.start_s
        self._audio_end = self.start_s
        self._last_video_t: float | None = None
        self._frame_dur = 0.0
        self._emitted_until = self.start_s
        self._index = 0
        self._finished = False

    # -- state ------------------------------------------------------------------------

    @property
    def open_since(self) -> float:
        """Stream time of the earliest data not yet emitted in a segment."""
        return self.planner.pending_start

    @property
    def tail_since(self) -> float:
        """Where the last segment would start if the segmenter were closed now: after the last
        boundary decided or visual cut seen (a cut is known before it is decided, which waits
        for the audio after it). A close leaves ``[tail_since, now)`` a segment of its own when
        it is at least ``segment_min_s`` long; a shorter tail is merged into the segment before
        it and the two are split again, off the visual cut between them."""
        return self.planner.last_edge

    @property
    def emitted_until(self) -> float:
        """End of the last emitted segment (``start_s`` before the first)."""
        return self._emitted_until

    @property
    def segments_emitted(self) -> int:
        return self._index

    # -- input ------------------------------------------------------------------------

    def push(self, kind: str, t: float, payload: Any) -> list[Segment]:
        """Dispatch one ``MediaDecoder`` item: ``("video", t, frame)`` or ``("audio", t, x)``."""
        if kind == "video":
            return self.push_video_frame(t, payload)
        if kind == "audio":
            return self.push_audio(t, payload)
        raise ValueError(f"unknown media kind {kind!r}")

    def push_video_frame(self, t: float, frame: Any) -> list[Segment]:
        """One decoded ``av.VideoFrame`` at stream time ``t``."""
        self._check_open()
        self._video_seen = True
        dur = _frame_duration(frame)
        if dur <= 0 and self._last_video_t is not None and t > self._last_video_t:
            dur = min(t - self._last_video_t, 1.0)
        if dur > 0:
            self._frame_dur = dur
        self._last_video_t = t
        self._video_now = max(self._video_now, t)
        self._video_end = max(self._video_end, t + self._frame_dur)
        if t < self._emitted_until - _EPS:
            return []  # late frame for a segment already emitted
        snippet = self.decimator.offer(t, frame)
        if snippet is not None:
            self._snippets.append(snippet)
        sample = self.sampler.offer(t, frame)
        if sample is not None:
            self._frames.append(sample)
            cut = self.visual.update(sample)
            if cut is not None:
                self.planner.add(cut)
        return self._advance()

    def push_audio(self, t_start: float, samples: np.ndarray) -> list[Segment]:
        """A block of mono float32 samples at ``audio_sample_rate_hz`` starting at ``t_start``."""
        self._check_open()
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        if x.size == 0:
            return []
        self._audio_seen = True
        start_idx = round(t_start * self.rate)
        if (start_idx + x.size) / self.rate <= self._emitted_until + _EPS:
            return []  # late audio for segments already emitted
        self._audio.append((start_idx, x))
        self._audio_end = max(self._audio_end, (start_idx + x.size) / self.rate)
        for pause in self.pauses.push(t_start, x):
            self.planner.add(pause)
        return self._advance()

    def finish(self) -> list[Segment]:
        """The stream ended: emit everything left (idempotent)."""
        if self._finished:
            return []
        self._finished = True
        for pause in self.pauses.finish():
            self.planner.add(pause)
        end = max(self._video_end, self._audio_end)
        segments = self._materialise(self.planner.finish(end), None)
        self._frames.clear()
        self._snippets.clear()
        self._audio.clear()
        return segments

    # -- internals --------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._finished:
            raise RuntimeError("the segmenter has finished; create a new one for a new stream")

    def _now(self) -> float | None:
        """Time up to which every active medium's candidates are known."""
        times: list[float] = []
        if self.has_video or (self.has_video is None and self._video_seen):
            times.append(self._video_now if self._video_seen else self.start_s)
        if self.has_audio or (self.has_audio is None and self._audio_seen):
            times.append(self.pauses.analysed_until if self._audio_seen else self.start_s)
        if not times:
            return None
        return max(min(times), max(times) - MEDIA_SKEW_S)

    def _advance(self) -> list[Segment]:
        now = self._now()
        if now is None:
            return []
        spans = self.planner.advance(now, [self.pauses.open_run()])
        held = self.planner.held
        return self._materialise(spans, held.t_end if held is not None else None)

    def _materialise(self, spans: Sequence[Span], held_end: float | None) -> list[Segment]:
        """Segments of ``spans``, taken out of the buffers; ``held_end``: the end of the span
        closed after them and held back (None when there is none, as at the end)."""
        out: list[Segment] = []
        ends = [sp.t_end for sp in spans[1:]] + [held_end] if spans else []
        for span, next_end in zip(spans, ends, strict=True):
            frames = _take_before(self._frames, span.t_start, span.t_end)
            snippets = _take_before(self._snippets, span.t_start, span.t_end)
            audio, audio_t = self._take_audio(span.t_start, span.t_end)
            out.append(
                Segment(
                    index=self._index,
                    t_start=span.t_start,
                    t_end=span.t_end,
                    frames=frames,
                    snippet_frames=snippets,
                    audio=audio,
                    audio_t_start=audio_t,
                    sample_rate_hz=self.rate,
                    boundary_kind=span.kind,
                    audio_after=self._audio_after(audio, audio_t, next_end),
                )
            )
            self._index += 1
            self._emitted_until = span.t_end
        return out

    def _audio_after(self, audio: np.ndarray, audio_t: float, next_end: float | None) -> np.ndarray:
        """Up to ``asr_context_after_s`` of the audio that follows ``audio`` without a gap,
        from the next span only (closed already, so its audio is buffered whatever the push
        sizes were: the same stream gives the same segments however it is fed)."""
        limit = float(self.settings.asr_context_after_s)
        if limit <= 0 or next_end is None or not audio.size:
            return np.zeros(0, dtype=np.float32)
        end = audio_t + audio.size / self.rate
        after, t = self._peek_audio(end, min(end + limit, next_end))
        if not after.size or abs(t - end) > 1.5 / self.rate:
            return np.zeros(0, dtype=np.float32)
        return after

    def held_preview(self) -> Segment | None:
        """The segment the planner has closed but holds back, built from the buffers without
        consuming them (None when nothing is held). It is released when the next segment
        closes, so that a short last piece of the stream can still be merged into it; a live
        source stores it provisionally now instead of waiting. The released segment has the
        same span and media unless the stream ends with a short piece or media for it arrives
        late (callers compare before reusing anything computed from the preview)."""
        span = self.planner.held
        if span is None:
            return None
        lo, hi = span.t_start - _EPS, span.t_end - _EPS
        audio, audio_t = self._peek_audio(span.t_start, span.t_end)
        return Segment(
            index=self._index,
            t_start=span.t_start,
            t_end=span.t_end,
            frames=[f for f in self._frames if lo <= f.t < hi],
            snippet_frames=[f for f in self._snippets if lo <= f.t < hi],
            audio=audio,
            audio_t_start=audio_t,
            sample_rate_hz=self.rate,
            boundary_kind=span.kind,
        )

    def speaking_at(self, t: float, lookback_s: float = 1.5, tolerance_s: float = 0.25) -> bool:
        """Whether an utterance is still going on at ``t`` (the end of the audio pushed so far).

        The voice-activity detector runs over the last ``lookback_s`` of buffered audio; speech
        that reaches within ``tolerance_s`` of ``t`` counts as going on. False without audio or
        without a detector: then nothing better than the caller's own choice is known.
        """
        if self.vad is None:
            return False
        return any(b >= t - tolerance_s for _, b in self._speech_in(t - lookback_s, t))

    def _speech_in(self, t_start: float, t_end: float) -> list[tuple[float, float]]:
        """Speech intervals in the buffered audio of [t_start, t_end) (none without audio)."""
        if self.vad is None or not self._audio:
            return []
        audio, t0 = self._peek_audio(t_start, t_end)
        return self.vad.intervals(audio, self.rate, t0) if audio.size else []

    def _peek_audio(self, t_start: float, t_end: float) -> tuple[np.ndarray, float]:
        """Buffered audio for [t_start, t_end), gaps zero-filled; the buffer is untouched."""
        a, b = round(t_start * self.rate), round(t_end * self.rate)
        pieces = [(i, x) for i, x in self._audio if i < b and i + x.size > a]
        if not pieces or b <= a:
            return np.zeros(0, dtype=np.float32), t_start
        first = max(a, min(i for i, _ in pieces))
        last = min(b, max(i + x.size for i, x in pieces))
        buf = np.zeros(max(0, last - first), dtype=np.float32)
        for i, x in pieces:
            lo, hi = max(i, first), min(i + x.size, last)
            if hi > lo:
                buf[lo - first : hi - first] = x[lo - i : hi - i]
        return buf, first / self.rate

    def _take_audio(self, t_start: float, t_end: float) -> tuple[np.ndarray, float]:
        """Audio for [t_start, t_end), gaps zero-filled; drops what is no longer needed."""
        out = self._peek_audio(t_start, t_end)
        b = round(t_end * self.rate)
        while self._audio and self._audio[0][0] + self._audio[0][1].size <= b:
            self._audio.popleft()
        return out


def _take_before(buf: deque[Any], t_start: float, t_end: float) -> list[Any]:
    """Pop items with ``t < t_end`` from the left of a time-ordered deque."""
    taken: list[Any] = []
    while buf and buf[0].t < t_end - _EPS:
        item = buf.popleft()
        if item.t >= t_start - _EPS:
            taken.append(item)
    return taken


def _frame_duration(frame: Any) -> float:
    """A frame's own duration in seconds when the container says (0 when unknown)."""
    try:
        dur, tb = frame.duration, frame.time_base
        if dur and tb:
            value = float(dur * tb)
            if math.isfinite(value) and 0 < value <= 1.0:
                return value
    except (AttributeError, TypeError, ValueError, ZeroDivisionError):
        pass
    return 0.0
