"""Decoding a chunk on its own: fresh decoders per chunk, the audio pre-roll rebuilt and dropped,
timestamps mapped to stream time (see :mod:`episodic.stream.chunks`)."""

from __future__ import annotations

import io
import logging
import math
from typing import Any

import av

from episodic.config import Settings
from episodic.stream.chunks import _EPS
from episodic.stream.decode import (
    DecodedItem,
    _DecodeState,
    _one_line,
    _Refused,
)
from episodic.stream.media_chunk import ChunkError, MediaChunk

log = logging.getLogger(__name__)

# A chunk whose payload_t0 puts its media further than this off its t_start (video keyframe)
# or t_end (audio-only) is aligned to the payload's own timestamps and warned about: under
# one frame at 60 fps, far above the rounding of our own chunks (microseconds).
ALIGN_TOLERANCE_S = 0.012

# -- decoding chunks ----------------------------------------------------------------------
class ChunkDecoder:
    """Decode the chunks of one stream, in order, into ``MediaDecoder``-style items.

    Decoders are fresh for every chunk (see the module docstring); what carries over between
    chunks is the timestamp repair and the audio resampler (:class:`_DecodeState`), so the
    items are continuous. :meth:`flush` ends a run of chunks (end of stream, a checkpoint)
    and returns what the state still holds.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._state: _DecodeState | None = None
        self.bad_packets = 0
        self.realigned_chunks = 0  # chunks whose payload_t0 was off (see _misalignment)
        self._warned_offset = False
        self._last_offset = 0.0
        self.warnings: list[str] = []
        # the most frames per second anything looks at (segmentation, snippets); above twice
        # that, non-reference frames are skipped and the rest thinned to it before scaling
        self.kept_fps = max(settings.sample_fps_max, settings.snippet_fps)
        self.high_fps = 2.0 * self.kept_fps

    def decode(self, chunk: MediaChunk) -> list[DecodedItem]:
        """All items of one chunk (a list: a corrupt chunk fails before anything is used)."""
        if not chunk.payload:
            return []
        where = f"chunk {chunk.seq} of {chunk.stream_id}"
        try:
            container = av.open(io.BytesIO(chunk.payload), mode="r", format=chunk.container)
        except (av.FFmpegError, OSError, ValueError) as exc:
            raise ChunkError(f"{where}: cannot open its {chunk.container} payload ({_one_line(exc)})") from None
        try:
            return self._decode(container, chunk, where)
        finally:
            container.close()

    def _decode(self, container: Any, chunk: MediaChunk, where: str) -> list[DecodedItem]:
        videos = [s for s in container.streams.video if s.codec_context is not None]
        audios = [s for s in container.streams.audio if s.codec_context is not None]
        v = videos[0] if videos and chunk.has_video else None
        a = audios[0] if audios and chunk.has_audio else None
        if v is None and a is None:
            raise ChunkError(f"{where}: its payload holds no {'/'.join(filter(None, (chunk.video_codec, chunk.audio_codec)))} stream")
        for st in (v, a):
            if st is not None:
                st.codec_context.thread_type = "AUTO"
        if v is not None and float(v.average_rate or v.guessed_rate or 0) > self.high_fps:
            # 50/60 fps: frames nothing references are never sampled more densely than
            # sample_fps_max / snippet_fps allow, so they are not decoded at all
            v.codec_context.skip_frame = "NONREF"
        packets = []
        try:
            for p in container.demux([s for s in (v, a) if s is not None]):
                if p.size and (p.pts is not None or p.dts is not None):
                    packets.append(p)
        except (av.FFmpegError, OSError, EOFError, ValueError) as exc:
            if not packets:
                raise ChunkError(f"{where}: unreadable payload ({_one_line(exc)})") from None
            self.warnings.append(f"{where}: payload ends early ({_one_line(exc)}); kept {len(packets)} packets")
        if not packets:
            raise ChunkError(f"{where}: its payload holds no packets")
        stamped = [p for p in packets if p.pts is not None]
        shift_s = (min(float(p.pts * p.time_base) for p in stamped) - chunk.payload_t0) if stamped else 0.0
        shift_s += self._misalignment(chunk, stamped, v, a, shift_s)
        if self._state is None:
            fps = float(v.average_rate or v.guessed_rate or 0) if v is not None else 0.0
            keep = self.kept_fps if fps > self.high_fps else 0.0
            self._state = _DecodeState(self.settings, 0.0, fps, keep_fps=keep)
        state = self._state
        items: list[DecodedItem] = []
        decoded_any = False
        skip_before = chunk.t_start - _EPS if chunk.seq > 0 else -math.inf

        def take(frame: Any, is_audio: bool) -> None:
            if is_audio and frame.pts is not None:
                t = float(frame.pts * frame.time_base)
                if t < skip_before:
                    return  # pre-roll: it primed the decoder; the previous chunk has this audio
                if chunk.seq == 0 and t + frame.samples / (frame.sample_rate or 1) <= _EPS:
                    return  # encoder priming before stream time 0 (MP4 players skip it too)
            items.extend(state.convert(frame, is_audio))

        try:
            for p in packets:
                ticks = round(shift_s / p.time_base)
                if p.pts is not None:
                    p.pts -= ticks
                if p.dts is not None:
                    p.dts -= ticks
                is_audio = p.stream is a
                try:
                    frames = p.decode()
                except (av.FFmpegError, ValueError):
                    self.bad_packets += 1
                    continue
                for frame in frames:
                    decoded_any = True
                    if frame.time_base is None:
                        frame.time_base = p.time_base
                    take(frame, is_audio)
            for st in (v, a):
                if st is None:
                    continue
                try:
                    for frame in st.codec_context.decode(None):
                        decoded_any = True
                        if frame.time_base is None:  # FLAC's last frame, flushed, has none
                            frame.time_base = st.time_base
                        take(frame, st is a)
                except (av.FFmpegError, ValueError):
                    pass
        except _Refused as exc:
            raise ChunkError(f"{where}: {exc}") from None
        if not decoded_any:
            raise ChunkError(f"{where}: none of its {len(packets)} packets decode")
        return items

    def _misalignment(self, chunk: MediaChunk, stamped: list[Any], v: Any, a: Any, shift_s: float) -> float:
        """How far the producer's ``payload_t0`` puts this chunk off its own ``t_start``/``t_end``
        (seconds; 0 when within :data:`ALIGN_TOLERANCE_S` or when nothing can tell).

        The payload's own timestamps are the reference. A chunk with video starts at a keyframe,
        so that keyframe belongs at ``t_start``; an audio-only chunk's last packet ends where the
        next chunk starts, at ``t_end`` (its start holds pre-roll, so the start cannot tell). A
        wrong ``payload_t0`` otherwise shifts every frame and sample of the chunk, and audio
        pushed before ``t_start`` would be dropped as pre-roll: the caller aligns to the payload
        and the stream is warned about once (``warnings`` and the log)."""
        if chunk.seq == 0 or chunk.gap_before_s > 0 or not stamped:
            self._last_offset = 0.0
            return 0.0  # the first chunk (of a stream, or after a live source came back) sets the origin
        off = self._measured_offset(chunk, stamped, v, a, shift_s)
        if off is None:  # this chunk cannot tell: a producer's error is the same chunk after chunk
            off = self._last_offset
        elif abs(off) <= ALIGN_TOLERANCE_S:
            off = 0.0
        self._last_offset = off
        if not off:
            return 0.0
        if not self._warned_offset:
            self._warned_offset = True
            said = (
                f"{chunk.stream_id}: chunk {chunk.seq}'s payload_t0 puts its media {off * 1000:+.0f} ms "
                f"off its t_start/t_end; aligned to the payload's own timestamps (warned once per "
                "stream: fix the producer, see payload_t0 in proto/episodic/v1/media.proto)"
            )
            self.warnings.append(said)
            log.warning("%s", said)
        self.realigned_chunks += 1
        return off

    @staticmethod
    def _measured_offset(chunk: MediaChunk, stamped: list[Any], v: Any, a: Any, shift_s: float) -> float | None:
        """Where the payload's timestamps put the chunk's anchor, minus where the chunk says it
        is; None when the chunk has no anchor (no keyframe, the last audio-only chunk)."""
        if v is not None:
            key = next((p for p in stamped if p.stream is v and p.is_keyframe), None) if chunk.keyframe else None
            return None if key is None else float(key.pts * key.time_base) - shift_s - chunk.t_start
        if a is None or chunk.end_of_stream:
            return None
        last = max((p for p in stamped if p.stream is a), key=lambda p: p.pts, default=None)
        if last is None or not last.duration:
            return None
        off = float((last.pts + last.duration) * last.time_base) - shift_s - chunk.t_end
        return 0.0 if abs(off) <= float(last.duration * last.time_base) / 2 else off  # packet boundaries

    def flush(self) -> list[DecodedItem]:
        """End of a run of chunks: the items the state still holds; the next chunk starts afresh."""
        state, self._state = self._state, None
        if state is None:
            return []
        items = list(state.flush_video()) + list(state.flush_audio())
        if state.bad_audio_frames:
            self.warnings.append(f"dropped {state.bad_audio_frames} damaged audio frame(s)")
        if state.retimed_frames or state.clock_resets:
            self.warnings.append(
                f"repaired {state.retimed_frames} corrupt video timestamp(s)"
                + (f" and {state.clock_resets} clock reset(s)" if state.clock_resets else "")
            )
        return items
