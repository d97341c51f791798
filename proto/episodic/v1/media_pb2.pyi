from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MediaChunk(_message.Message):
    __slots__ = ("schema_version", "stream_id", "seq", "t_start", "t_end", "container", "video_codec", "audio_codec", "payload", "payload_t0", "keyframe", "end_of_stream", "source", "duration_s", "produced_at_ms", "session_id", "width", "height", "append", "gap_before_s", "live")
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    VIDEO_CODEC_FIELD_NUMBER: _ClassVar[int]
    AUDIO_CODEC_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_T0_FIELD_NUMBER: _ClassVar[int]
    KEYFRAME_FIELD_NUMBER: _ClassVar[int]
    END_OF_STREAM_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DURATION_S_FIELD_NUMBER: _ClassVar[int]
    PRODUCED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    APPEND_FIELD_NUMBER: _ClassVar[int]
    GAP_BEFORE_S_FIELD_NUMBER: _ClassVar[int]
    LIVE_FIELD_NUMBER: _ClassVar[int]
    schema_version: int
    stream_id: str
    seq: int
    t_start: float
    t_end: float
    container: str
    video_codec: str
    audio_codec: str
    payload: bytes
    payload_t0: float
    keyframe: bool
    end_of_stream: bool
    source: str
    duration_s: float
    produced_at_ms: int
    session_id: str
    width: int
    height: int
    append: bool
    gap_before_s: float
    live: bool
    def __init__(self, schema_version: _Optional[int] = ..., stream_id: _Optional[str] = ..., seq: _Optional[int] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., container: _Optional[str] = ..., video_codec: _Optional[str] = ..., audio_codec: _Optional[str] = ..., payload: _Optional[bytes] = ..., payload_t0: _Optional[float] = ..., keyframe: _Optional[bool] = ..., end_of_stream: _Optional[bool] = ..., source: _Optional[str] = ..., duration_s: _Optional[float] = ..., produced_at_ms: _Optional[int] = ..., session_id: _Optional[str] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., append: _Optional[bool] = ..., gap_before_s: _Optional[float] = ..., live: _Optional[bool] = ...) -> None: ...

class DeadLetter(_message.Message):
    __slots__ = ("chunk", "raw_value", "reason", "topic", "partition", "offset", "rejected_at_ms", "worker_id")
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    RAW_VALUE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TOPIC_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    REJECTED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    chunk: MediaChunk
    raw_value: bytes
    reason: str
    topic: str
    partition: int
    offset: int
    rejected_at_ms: int
    worker_id: str
    def __init__(self, chunk: _Optional[_Union[MediaChunk, _Mapping]] = ..., raw_value: _Optional[bytes] = ..., reason: _Optional[str] = ..., topic: _Optional[str] = ..., partition: _Optional[int] = ..., offset: _Optional[int] = ..., rejected_at_ms: _Optional[int] = ..., worker_id: _Optional[str] = ...) -> None: ...
