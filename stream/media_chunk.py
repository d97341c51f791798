"""The media chunk record: what travels through Kafka (``proto/episodic/v1/media.proto``), its
validation, and its wire form (see :mod:`episodic.stream.chunks` for how chunks are made and
:mod:`episodic.stream.chunk_decoder` for how they decode on their own)."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

from episodic.config import Settings
from episodic.core.errors import InputError, MediaError
from episodic.core.records import validate_stream_id
from episodic.stream.decode import (
    _one_line,
)

log = logging.getLogger(__name__)

CONTAINERS = ("mpegts", "matroska")

SCHEMA_VERSION = 1


class ChunkError(MediaError):
    """A chunk that cannot be used (corrupt payload, impossible fields): dead-letter it."""


@dataclass
class MediaChunk:
    """One chunk of one stream (see ``proto/episodic/v1/media.proto`` for each field)."""

    stream_id: str
    seq: int
    t_start: float
    t_end: float
    container: str = ""
    video_codec: str = ""
    audio_codec: str = ""
    payload: bytes = field(default=b"", repr=False)
    payload_t0: float = 0.0
    keyframe: bool = True
    end_of_stream: bool = False
    source: str = ""
    duration_s: float = 0.0
    produced_at_ms: int = 0
    session_id: str = ""
    width: int = 0
    height: int = 0
    append: bool = False  # this session continues a stream that has ended
    gap_before_s: float = 0.0  # the live source was unreachable this long before this chunk
    live: bool = False  # sent as its media was captured (a live source, a --realtime push)

    @property
    def is_live(self) -> bool:
        """Whether the chunk comes from a stream sent as it is captured. ``live`` says so; a
        producer from before that field left it false, and then a source of unknown length
        (``duration_s`` 0) is live, as that producer's only live sources were."""
        return self.live or not self.duration_s

    @property
    def has_video(self) -> bool:
        return bool(self.video_codec)

    @property
    def has_audio(self) -> bool:
        return bool(self.audio_codec)

    # -- wire format -------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        from episodic.proto.episodic.v1 import media_pb2

        return media_pb2.MediaChunk(
            schema_version=SCHEMA_VERSION,
            stream_id=self.stream_id,
            seq=self.seq,
            t_start=self.t_start,
            t_end=self.t_end,
            container=self.container,
            video_codec=self.video_codec,
            audio_codec=self.audio_codec,
            payload=self.payload,
            payload_t0=self.payload_t0,
            keyframe=self.keyframe,
            end_of_stream=self.end_of_stream,
            source=self.source,
            duration_s=self.duration_s,
            produced_at_ms=self.produced_at_ms,
            session_id=self.session_id,
            width=self.width,
            height=self.height,
            append=self.append,
            gap_before_s=self.gap_before_s,
            live=self.live,
        ).SerializeToString()

    @classmethod
    def from_bytes(cls, data: Any, settings: Settings | None = None) -> MediaChunk:
        """Parse and check a message; anything malformed is a :class:`ChunkError` that says
        what is wrong (the worker dead-letters it)."""
        from google.protobuf.message import DecodeError

        from episodic.proto.episodic.v1 import media_pb2

        s = settings or Settings()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ChunkError(f"a chunk message must be bytes, got {type(data).__name__}")
        if len(data) > s.kafka_max_message_bytes:
            raise ChunkError(f"message of {len(data)} bytes exceeds kafka_max_message_bytes")
        msg = media_pb2.MediaChunk()
        try:
            msg.ParseFromString(bytes(data))
        except (DecodeError, ValueError) as exc:
            raise ChunkError(f"not a MediaChunk message ({_one_line(exc)})") from None
        chunk = cls(
            stream_id=msg.stream_id,
            seq=msg.seq,
            t_start=msg.t_start,
            t_end=msg.t_end,
            container=msg.container,
            video_codec=msg.video_codec,
            audio_codec=msg.audio_codec,
            payload=msg.payload,
            payload_t0=msg.payload_t0,
            keyframe=msg.keyframe,
            end_of_stream=msg.end_of_stream,
            source=msg.source,
            duration_s=msg.duration_s,
            produced_at_ms=msg.produced_at_ms,
            session_id=msg.session_id,
            width=msg.width,
            height=msg.height,
            append=msg.append,
            gap_before_s=msg.gap_before_s,
            live=msg.live,
        )
        if msg.schema_version != SCHEMA_VERSION:
            raise ChunkError(f"unsupported MediaChunk schema_version {msg.schema_version} (this worker reads {SCHEMA_VERSION})")
        chunk.check(s)
        return chunk

    def check(self, settings: Settings) -> None:
        """Field sanity: a message that passes can be decoded without surprises."""
        try:
            validate_stream_id(self.stream_id)
        except InputError as exc:
            raise ChunkError(str(exc)) from None
        for name in ("t_start", "t_end", "payload_t0", "duration_s", "gap_before_s"):
            if not math.isfinite(getattr(self, name)):
                raise ChunkError(f"chunk {self.seq} of {self.stream_id}: {name} is not finite")
        if not 0 <= self.gap_before_s <= self.t_start:
            raise ChunkError(
                f"chunk {self.seq} of {self.stream_id}: gap_before_s={self.gap_before_s} is not "
                f"within 0..t_start"
            )
        if not 0 <= self.t_start <= self.t_end <= settings.max_stream_duration_s:
            raise ChunkError(
                f"chunk {self.seq} of {self.stream_id}: times [{self.t_start}, {self.t_end}) are "
                f"not within 0..max_stream_duration_s"
            )
        if self.payload:
            if self.container not in CONTAINERS:
                raise ChunkError(f"chunk {self.seq} of {self.stream_id}: unknown container {self.container!r}")
            if not (self.video_codec or self.audio_codec):
                raise ChunkError(f"chunk {self.seq} of {self.stream_id}: names no video or audio codec")
        elif not self.end_of_stream:
            raise ChunkError(f"chunk {self.seq} of {self.stream_id}: empty payload")
        if len(self.payload) > settings.chunk_max_bytes:
            raise ChunkError(
                f"chunk {self.seq} of {self.stream_id}: payload of {len(self.payload)} bytes exceeds "
                f"chunk_max_bytes={settings.chunk_max_bytes}"
            )
        if self.width * self.height > settings.max_frame_pixels:
            raise ChunkError(
                f"chunk {self.seq} of {self.stream_id}: {self.width}x{self.height} frames exceed max_frame_pixels"
            )


