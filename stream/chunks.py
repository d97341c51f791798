"""Media chunks: a stream cut into small, self-contained containers, and decoded back.

A :class:`MediaChunk` is what travels through Kafka (``proto/episodic/v1/media.proto``): 1–2 s
of one stream, remuxed without re-encoding into MPEG-TS (or Matroska for codecs TS does not
carry), starting at a video keyframe, with a few audio packets of pre-roll from just before
its start. Embedded ingest uses exactly the same chunks, so ``episodic ingest`` and
``episodic push`` + ``episodic worker`` run the same code and store the same records.

Why chunks decode on their own: every chunk gets fresh decoders (:class:`~episodic.stream.chunk_decoder.ChunkDecoder`).
Video starts at a keyframe; audio codecs carry state from one packet to the next (the MDCT
overlap of AAC, the bit reservoir of MP3), which the pre-roll packets rebuild before the
chunk's own audio starts. The decoded pre-roll is dropped. So a worker that starts, restarts
or skips a broken chunk at any chunk boundary decodes the same media an uninterrupted one
does, and a corrupt chunk cannot poison the decoding of the next.

Packets are assigned to chunks by time: a chunk closes at the first video keyframe at least
``chunk_target_s`` after its start (audio-only streams: the first audio packet), and an audio
packet goes to the chunk whose [t_start, t_end) holds its timestamp, whatever the
interleaving of the source. Timestamps inside a payload are stream time (seconds since the
stream's start); ``payload_t0`` pins them down because muxers may shift them (MPEG-TS adds a
constant delay).
"""

from __future__ import annotations

import io
import logging
import math
import time
import uuid
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import av

from episodic.config import Settings
from episodic.core.errors import MediaError
from episodic.core.media import MediaInfo
from episodic.core.records import validate_stream_id
from episodic.stream.decode import (
    MediaDecoder,
    _one_line,
    codec_name,
    is_url,
    working_side_px,
)
from episodic.stream.media_chunk import MediaChunk
from episodic.stream.sampling import rotation_of

log = logging.getLogger(__name__)

# Codecs FFmpeg's MPEG-TS muxer carries; anything else goes into Matroska.
TS_VIDEO = frozenset({"h264", "hevc", "mpeg1video", "mpeg2video"})
TS_AUDIO = frozenset({"aac", "mp3", "mp2", "ac3", "eac3"})
# Audio pre-roll: at least this many packets and this much time before a chunk's start.
PREROLL_PACKETS = 2
PREROLL_S = 0.1
PREROLL_MAX_PACKETS = 16
PREROLL_PACKET_BYTES = 2048  # an audio packet's size at most, counted for the pre-roll
# Muxing overhead, (bytes per packet, factor on the media bytes), measured with FFmpeg's muxers
# (MPEG-TS: ~210-300 bytes a packet and 188/184 for transport headers; Matroska: ~8-10 bytes).
MUX_OVERHEAD = {"mpegts": (320, 188 / 184), "matroska": (32, 1.0)}
_EPS = 1e-6


# Embedded ingest never sends chunks through Kafka, so a camera's long GOP (x264's default 250
# frames, 10 s at 25 fps: tens of MB at 4K) is no reason to refuse a local file; this only
# bounds the memory one keyframe-to-keyframe stretch may take.
LOCAL_CHUNK_MAX_BYTES = 512 * 1024 * 1024


# -- making chunks ------------------------------------------------------------------------
@dataclass
class _Pkt:
    """A demuxed packet, copied (muxing consumes av packets) with stream-time stamps."""

    kind: str  # "video" | "audio"
    data: bytes
    pts: int | None  # rebased to stream time, in time_base units
    dts: int | None
    duration: int
    keyframe: bool
    time_base: Fraction
    t: float  # stream time of pts (or dts)

    @property
    def t_end(self) -> float:
        return self.t + float(self.duration * self.time_base)


@dataclass
class _Open:
    t_start: float
    packets: list[_Pkt] = field(default_factory=list)
    nbytes: int = 0
    t_end: float | None = None
    reencoded: bool = False  # its video comes from the KeyframeReencoder


# An audio track's bytes per second before a second of it has been read (320 kbit/s: AAC and
# Opus are well below; PCM is above, and is counted as soon as it arrives)
AUDIO_BYTES_PER_S_GUESS = 40_000

ROTATION_PROBE_PACKETS = 16  # video packets decoded at most to learn the display rotation


def choose_container(video_codec: str, audio_codec: str) -> str:
    """MPEG-TS when it carries both codecs (the usual camera case), else Matroska."""
    if (not video_codec or video_codec in TS_VIDEO) and (not audio_codec or audio_codec in TS_AUDIO):
        return "mpegts"
    return "matroska"


class Chunker:
    """Cut a source (file, URL, capture device: anything :class:`MediaDecoder` opens) into
    :class:`MediaChunk` objects, in order, the last one marked ``end_of_stream``.

    Opening errors are those of :class:`MediaDecoder` (clear InputError/MediaError); a
    source that breaks off mid-way ends with what was read and a note in :attr:`warnings`.
    """

    def __init__(
        self,
        source: str,
        stream_id: str,
        settings: Settings,
        *,
        format: str | None = None,
        options: dict[str, str] | None = None,
        timeout: float | None = None,
        session_id: str | None = None,
        display_source: str | None = None,
        append: bool = False,
        first_seq: int = 0,
        t_offset_s: float = 0.0,
        gap_before_s: float = 0.0,
        mark_end: bool = True,
        max_bytes: int | None = None,
    ) -> None:
        """``first_seq``, ``t_offset_s``, ``gap_before_s``: a live source reopened after a drop
        continues its push session (:mod:`stream.reconnect`): numbering goes on from
        ``first_seq``, its first packet is stream time ``t_offset_s``, and its first chunk says
        how long the source was away. ``mark_end`` False: the last chunk is not marked
        ``end_of_stream`` (the caller decides whether the stream ends there). ``max_bytes``:
        the most media one chunk may hold (default ``chunk_max_bytes``, which Kafka's message
        size bounds; embedded ingest passes :data:`LOCAL_CHUNK_MAX_BYTES`)."""
        self.stream_id = validate_stream_id(stream_id)
        self.append = append
        self.first_seq = first_seq
        self.t_offset_s = t_offset_s
        self.gap_before_s = gap_before_s
        self.mark_end = mark_end
        self.max_bytes = max_bytes or settings.chunk_max_bytes
        self.settings = settings
        self.decoder = MediaDecoder(source, settings, format=format, options=options, timeout=timeout)
        self.info: MediaInfo = self.decoder.info
        self.session_id = session_id or uuid.uuid4().hex[:16]
        self.display_source = display_source if display_source is not None else str(source)
        v, a = self.decoder.video_stream, self.decoder.audio_stream
        # the codec's name ("av1"), not the decoder's ("libdav1d")
        self.video_codec = codec_name(v) if v is not None else ""
        self.audio_codec = codec_name(a) if a is not None else ""
        self.container = choose_container(self.video_codec, self.audio_codec)
        self.warnings: list[str] = []
        self.chunks = first_seq  # the next chunk's number
        # the display rotation (phone video: a 90° display matrix), read from the first
        # decoded frame and carried into every chunk (Matroska keeps it, MPEG-TS cannot)
        self.rotation_deg = 0
        self._rotation_probes = 0 if v is not None else ROTATION_PROBE_PACKETS
        self.bad_packets = 0  # packets of damaged regions left out of the chunks
        # a source whose keyframes are too far apart for one chunk: its video from then on
        # (see :mod:`stream.gop_reencode`)
        self._reencoder: Any = None
        self.reencoded_video_codec = ""
        self.reencoded_container = ""

    def close(self) -> None:
        if self._reencoder is not None:
            self._reencoder.close()
            self._reencoder = None
        self.decoder.close()

    def __enter__(self) -> Chunker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- cutting ---------------------------------------------------------------------
    def __iter__(self) -> Iterator[MediaChunk]:
        s = self.settings
        dec = self.decoder
        v, a = dec.video_stream, dec.audio_stream
        origin = None if dec.origin_s is None else dec.origin_s - self.t_offset_s
        current = _Open(t_start=self.t_offset_s)
        closed: deque[_Open] = deque()  # waiting until no more audio can belong to them
        previous: _Open | None = None  # the last emitted chunk (its audio is the next pre-roll)
        audio_mark = -math.inf
        audio_bytes, audio_s = 0, 0.0  # the audio read so far (its bitrate, once a second is in)
        last_t = self.t_offset_s
        redo: deque[_Pkt] = deque()  # packets to cut again (the video now re-encoded)
        records = self._records(origin)
        while True:
            rec = redo.popleft() if redo else next(records, None)
            if rec is None:
                break
            kind = rec.kind
            if rec.t > s.max_stream_duration_s:
                self.warnings.append(
                    f"{self.display_source}: stopped at t={rec.t:.1f} s, past max_stream_duration_s"
                )
                break
            last_t = max(last_t, rec.t_end)
            starts_chunk = (
                (rec.keyframe if kind == "video" else v is None)
                and current.packets
                and rec.t - current.t_start >= s.chunk_target_s - _EPS
            )
            if starts_chunk:
                current.t_end = rec.t
                # audio that arrived before the keyframe but plays after it (B-frame delay, or
                # a re-encoder's) belongs to the new chunk
                done, current = current, _Open(t_start=rec.t, reencoded=self._reencoder is not None)
                kept = [p for p in done.packets if p.kind != "audio" or p.t < rec.t - _EPS]
                if len(kept) < len(done.packets):
                    current.packets = [p for p in done.packets if p.kind == "audio" and p.t >= rec.t - _EPS]
                    current.nbytes = sum(len(p.data) for p in current.packets)
                    done.packets, done.nbytes = kept, done.nbytes - current.nbytes
                closed.append(done)
            target = current
            if kind == "audio":
                audio_bytes += len(rec.data)
                audio_s += float(rec.duration * rec.time_base)
                audio_mark = max(audio_mark, rec.t)
                # audio goes where its time belongs, even if it arrives after a video cut
                for c in reversed(closed):
                    if rec.t < c.t_end:  # type: ignore[operator]
                        target = c
            target.packets.append(rec)
            target.nbytes += len(rec.data)
            # The audio of this stretch may still be on its way (files that store the tracks
            # apart): count what it will add, so the decision falls on a video packet.
            pending_audio = 0
            if a is not None and kind == "video":
                rate = audio_bytes / audio_s if audio_s >= 1.0 else AUDIO_BYTES_PER_S_GUESS
                pending_audio = int(rate * max(0.0, rec.t - max(audio_mark, current.t_start)))
            if (
                kind == "video"
                and self._payload_bound(current) + pending_audio > self.max_bytes
                and self._start_reencoding(current)
            ):
                # the stretch since the last keyframe is cut again, its video re-encoded
                redo.extend(self._reencoded(current.packets))
                current = _Open(t_start=current.t_start, reencoded=True)
                continue
            if self._payload_bound(target) > self.max_bytes:
                kafka_bound = self.max_bytes == s.chunk_max_bytes
                limit = f"chunk_max_bytes={self.max_bytes}" if kafka_bound else f"{self.max_bytes >> 20} MiB"
                if target.reencoded:
                    raise MediaError(
                        f"{self.display_source}: more than {limit} of media in a chunk (at "
                        f"t={target.t_start:.1f} s) even with its video re-encoded at "
                        f"{self._reencoder.width}x{self._reencoder.height} and a keyframe every "
                        f"{s.chunk_target_s:g} s; raise chunk_max_bytes (with kafka_max_message_bytes)"
                    )
                raise MediaError(
                    f"{self.display_source}: more than {limit} of media between two video "
                    f"keyframes (at t={target.t_start:.1f} s); re-encode it with keyframes every "
                    "1-2 s (e.g. ffmpeg -g 30)"
                    + (" or raise chunk_max_bytes (with kafka_max_message_bytes)" if kafka_bound else "")
                )
            while closed and (a is None or audio_mark >= closed[0].t_end - _EPS):  # type: ignore[operator]
                done = closed.popleft()
                yield self._build(done, previous, end_of_stream=False)
                previous = done
        if dec.stop_reason:
            self.warnings.append(
                f"reading {self.display_source} stopped at t={last_t:.2f} s because "
                f"{dec.stop_reason}; kept what was read before"
            )
        current.t_end = max([last_t] + [p.t_end for p in current.packets])
        closed.append(current)
        if not any(c.packets for c in closed) and previous is None:
            raise MediaError(self._nothing_read(dec))
        while closed:
            done = closed.popleft()
            yield self._build(done, previous, end_of_stream=self.mark_end and not closed)
            previous = done

    def _payload_bound(self, chunk: _Open) -> int:
        """How big ``chunk``'s payload can get once muxed, pre-roll included: MPEG-TS wraps
        every packet in 188-byte transport packets (a small audio packet costs ~200 bytes of
        padding and headers), Matroska adds a few bytes a block."""
        container = self.reencoded_container if chunk.reencoded else self.container
        per_packet, factor = MUX_OVERHEAD.get(container, MUX_OVERHEAD["mpegts"])
        packets = len(chunk.packets) + PREROLL_MAX_PACKETS
        return int(chunk.nbytes * factor) + packets * per_packet + PREROLL_MAX_PACKETS * PREROLL_PACKET_BYTES

    def _records(self, origin: float | None) -> Iterator[_Pkt]:
        """The source's packets as stream-time records; video through the re-encoder once it
        has started (:meth:`_start_reencoding`)."""
        v = self.decoder.video_stream
        for packet in self.decoder.packets():
            if packet.size == 0 or (packet.pts is None and packet.dts is None):
                continue
            tb = packet.time_base
            raw = packet.pts if packet.pts is not None else packet.dts
            if origin is None:  # a live source: its first timestamp is stream time 0 (or
                origin = float(raw * tb) - self.t_offset_s  # where a reconnection resumes)
            shift = round(origin / tb)
            kind = "video" if packet.stream is v else "audio"
            if kind == "video" and self._rotation_probes < ROTATION_PROBE_PACKETS:
                self._probe_rotation(packet)
            rec = _Pkt(
                kind=kind,
                data=bytes(packet),
                pts=None if packet.pts is None else packet.pts - shift,
                dts=None if packet.dts is None else packet.dts - shift,
                duration=int(packet.duration or 0),
                keyframe=bool(packet.is_keyframe),
                time_base=tb,
                t=float((raw - shift) * tb),
            )
            if kind == "video" and self._reencoder is not None:
                yield from self._reencoder.feed(rec)
            else:
                yield rec
        if self._reencoder is not None:
            yield from self._reencoder.flush()

    def _start_reencoding(self, current: _Open) -> bool:
        """Re-encode the video from ``current`` on, when its keyframe-to-keyframe stretch is
        too big for one chunk (True: started). Only where Kafka bounds the chunk, for video
        that is not re-encoded already, and when ``reencode_long_gop`` allows it."""
        v = self.decoder.video_stream
        s = self.settings
        if (
            self._reencoder is not None
            or v is None
            or not s.reencode_long_gop
            or self.max_bytes != s.chunk_max_bytes
        ):
            return False
        from episodic.stream.gop_reencode import CODEC, KeyframeReencoder

        container = choose_container(CODEC, self.audio_codec)
        if self.rotation_deg:
            container = "matroska"  # MPEG-TS cannot carry the rotation
        try:
            self._reencoder = KeyframeReencoder(
                v,
                longer_side=working_side_px(s),
                keyframe_interval_s=s.chunk_target_s,
                container=container,
                make_packet=_Pkt,
            )
        except (av.FFmpegError, ValueError) as exc:
            log.warning("%s: cannot re-encode its video (%s)", self.display_source, _one_line(exc))
            return False
        r = self._reencoder
        self.reencoded_video_codec, self.reencoded_container = CODEC, container
        said = (
            f"{self.display_source}: more than chunk_max_bytes={s.chunk_max_bytes} of video "
            f"between two keyframes at t={current.t_start:.1f} s (a long keyframe interval, as "
            f"phones and cameras write); re-encoding its video from there as {CODEC} "
            f"{r.width}x{r.height} with a keyframe every {s.chunk_target_s:g} s (the size the "
            "memory keeps, so nothing is lost; reencode_long_gop = false refuses such sources)"
        )
        self.warnings.append(said)
        log.info("%s", said)
        return True

    def _reencoded(self, packets: list[_Pkt]) -> list[_Pkt]:
        """``packets`` again with their video re-encoded (audio as it was, in order)."""
        assert self._reencoder is not None
        out: list[_Pkt] = []
        for p in packets:
            out += self._reencoder.feed(p) if p.kind == "video" else [p]
        return out

    def _nothing_read(self, dec: MediaDecoder) -> str:
        """Why not a single packet came out, as precisely as known."""
        if not dec.stop_reason:
            return f"{self.display_source} holds no decodable audio or video"
        fmt = str(getattr(getattr(dec._container, "format", None), "name", "") or "")
        if is_url(dec.source) and ("mp4" in fmt or "mov" in fmt):
            # FFmpeg found the index (moov) at the end but cannot go back for the media
            return (
                f"{self.display_source}: nothing could be read ({dec.stop_reason}): the MP4's "
                "index is at its end and the server does not let it be read out of order (no "
                "range requests); serve it with range support, or re-mux it with "
                "`ffmpeg -i IN -c copy -movflags +faststart OUT`"
            )
        return f"{self.display_source}: nothing could be read ({dec.stop_reason})"

    def _probe_rotation(self, packet: Any) -> None:
        """Decode the first video packets once (the chunker otherwise only copies packets) to
        learn the display rotation; a rotated stream is packed into Matroska chunks."""
        self._rotation_probes += 1
        v = self.decoder.video_stream
        try:
            frames = v.codec_context.decode(packet) if v is not None else []
        except (av.FFmpegError, ValueError):
            return
        for frame in frames:
            self._rotation_probes = ROTATION_PROBE_PACKETS  # known now
            self.rotation_deg = 90 * rotation_of(frame)
            if self.rotation_deg:
                self.container = "matroska"
            return

    def _build(self, chunk: _Open, previous: _Open | None, end_of_stream: bool) -> MediaChunk:
        seq = self.chunks
        self.chunks += 1
        preroll: list[_Pkt] = []
        if previous is not None:
            earlier = [p for p in previous.packets if p.kind == "audio" and p.t < chunk.t_start - _EPS]
            covered = 0.0
            for p in reversed(earlier):
                if len(preroll) >= PREROLL_MAX_PACKETS or (
                    len(preroll) >= PREROLL_PACKETS and covered >= PREROLL_S
                ):
                    break
                preroll.insert(0, p)
                covered = chunk.t_start - p.t
        packets = preroll + chunk.packets
        payload, t0 = self._mux(packets, chunk.reencoded) if packets else (b"", 0.0)
        first_video = next((p for p in chunk.packets if p.kind == "video"), None)
        info = self.info
        container, video_codec = self.container, self.video_codec
        width, height = (info.width, info.height) if info.has_video else (0, 0)
        if chunk.reencoded:
            container, video_codec = self.reencoded_container, self.reencoded_video_codec
            width, height = self._reencoder.width, self._reencoder.height
        return MediaChunk(
            stream_id=self.stream_id,
            seq=seq,
            t_start=round(chunk.t_start, 6),
            t_end=round(max(chunk.t_end or chunk.t_start, chunk.t_start), 6),
            container=container if packets else "",
            video_codec=video_codec,
            audio_codec=self.audio_codec,
            payload=payload,
            payload_t0=t0,
            keyframe=first_video.keyframe if first_video is not None else True,
            end_of_stream=end_of_stream,
            source=self.display_source,
            duration_s=float(info.duration_s or 0.0),
            produced_at_ms=int(time.time() * 1000),
            session_id=self.session_id,
            append=self.append,
            gap_before_s=round(self.gap_before_s, 6) if seq == self.first_seq else 0.0,
            live=not info.duration_s,  # a file pushed with --realtime is marked by the pusher
            width=width,
            height=height,
        )

    def _mux(self, packets: list[_Pkt], reencoded: bool = False) -> tuple[bytes, float]:
        buf = io.BytesIO()
        v, a = self.decoder.video_stream, self.decoder.audio_stream
        container = self.container
        if reencoded:
            v, container = self._reencoder.stream, self.reencoded_container
        try:
            out = av.open(buf, mode="w", format=container)
            try:
                streams = {}
                # opaque: the packets are copied, never re-encoded, so the stream needs the
                # codec's parameters only (AV1 decoded by libdav1d has no encoder to name)
                if v is not None:
                    streams["video"] = out.add_stream_from_template(v, opaque=True)
                    if self.rotation_deg:
                        streams["video"].set_display_rotation(self.rotation_deg)
                if a is not None:
                    streams["audio"] = out.add_stream_from_template(a, opaque=True)
                muxed = 0
                for p in packets:
                    pkt = av.Packet(p.data)
                    pkt.pts, pkt.dts = p.pts, p.dts
                    pkt.duration = p.duration
                    pkt.time_base = p.time_base
                    pkt.is_keyframe = p.keyframe
                    pkt.stream = streams[p.kind]
                    try:
                        out.mux(pkt)
                        muxed += 1
                    except (av.FFmpegError, ValueError):
                        # a damaged region of the file: skip its packets, keep the rest
                        self.bad_packets += 1
                if not muxed:
                    raise ValueError("none of its packets could be written")
            finally:
                out.close()
        except (av.FFmpegError, ValueError) as exc:
            raise MediaError(
                f"{self.display_source}: cannot pack its {self.video_codec or '-'}/{self.audio_codec or '-'} "
                f"media into {container} chunks ({_one_line(exc)})"
            ) from None
        t0 = min(float(p.pts * p.time_base) for p in packets if p.pts is not None) if any(
            p.pts is not None for p in packets
        ) else min(p.t for p in packets)
        return buf.getvalue(), t0


