"""The stored records a :class:`~episodic.client.Client` reads (ListStreams, ListEvents,
GetSegment), as typed values: plain dataclasses with every field of their gRPC message.

``to_dict()`` gives exactly the JSON of ``episodic streams/events/segments --json`` (it goes
through :mod:`episodic.api_records`, the one mapping the CLI and the API share), so a record
read through a server prints the same as one read in-process. Transcript pieces are
:class:`episodic.core.records.TranscriptPiece` and storage figures
:class:`episodic.services.forgetting.StreamStorage`, as in-process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from episodic import api_records
from episodic.core.records import TranscriptPiece
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.services.forgetting import RECORD_KINDS, StreamStorage


def storage_from_proto(msg: pb.StreamStorage) -> StreamStorage:
    return StreamStorage({k: int(getattr(msg, k)) for k in RECORD_KINDS}, int(msg.snippet_bytes))


@dataclass(frozen=True)
class Stream:
    """A stream the caller may see (ListStreams)."""

    stream_id: str
    source: str = ""
    t_end: float = 0.0  # stream seconds covered so far
    segments: int = 0
    events: int = 0
    updated_at: float = 0.0  # Unix time, seconds
    complete: bool | None = None  # None for a live stream (no end to reach)
    gaps: tuple[tuple[float, float], ...] = ()  # where a live source was away, stream seconds
    storage: StreamStorage | None = None  # only from list_streams(with_storage=True)

    @classmethod
    def from_proto(cls, msg: pb.Stream) -> Stream:
        return cls(
            stream_id=msg.stream_id, source=msg.source, t_end=msg.t_end, segments=int(msg.segments),
            events=int(msg.events), updated_at=msg.updated_at,
            complete=msg.complete if msg.HasField("complete") else None,
            gaps=tuple((g.t_start, g.t_end) for g in msg.gaps),
            storage=storage_from_proto(msg.storage) if msg.HasField("storage") else None,
        )

    def to_proto(self) -> pb.Stream:
        from episodic.api_forget import storage_of

        return pb.Stream(
            stream_id=self.stream_id, source=self.source, t_end=self.t_end, segments=self.segments,
            events=self.events, updated_at=self.updated_at, complete=self.complete,
            gaps=[pb.Gap(t_start=a, t_end=b) for a, b in self.gaps],
            storage=storage_of(self.storage) if self.storage is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return api_records.stream_to_dict(self.to_proto())


@dataclass(frozen=True)
class Event:
    """A ThetaEvent: the one-sentence summary of one segment (ListEvents)."""

    id: str
    stream_id: str
    segment_id: str  # pass it to Client.get_segment
    t_start: float
    t_end: float
    summary: str
    provisional: bool = False  # still open on a live stream: may be replaced (same id)

    @classmethod
    def from_proto(cls, msg: pb.Event) -> Event:
        return cls(id=msg.id, stream_id=msg.stream_id, segment_id=msg.segment_id, t_start=msg.t_start,
                   t_end=msg.t_end, summary=msg.summary, provisional=msg.provisional)

    def to_proto(self) -> pb.Event:
        return pb.Event(id=self.id, stream_id=self.stream_id, segment_id=self.segment_id, t_start=self.t_start,
                        t_end=self.t_end, summary=self.summary, provisional=self.provisional)

    def to_dict(self) -> dict[str, Any]:
        return api_records.event_to_dict(self.to_proto())


@dataclass(frozen=True)
class Snippet:
    """One raw audio/video file of a segment: pass ``index`` to Client.download_snippet."""

    index: int
    uri: str  # where the server keeps it (its disk: use download_snippet, or url)
    t_start: float
    t_end: float
    content_type: str  # "video/mp4" or "audio/mp4"
    url: str = ""  # the same file over the server's HTTP API, when it runs one

    @classmethod
    def from_proto(cls, msg: pb.Snippet) -> Snippet:
        return cls(index=int(msg.index), uri=msg.uri, t_start=msg.t_start, t_end=msg.t_end,
                   content_type=msg.content_type, url=msg.url)

    def to_proto(self) -> pb.Snippet:
        return pb.Snippet(index=self.index, uri=self.uri, t_start=self.t_start, t_end=self.t_end,
                          content_type=self.content_type, url=self.url)


@dataclass(frozen=True)
class Segment:
    """One consolidated ShortTermMemory with everything recorded about it (GetSegment)."""

    id: str
    stream_id: str
    t_start: float
    t_end: float
    transcript: str = ""
    transcript_pieces: tuple[TranscriptPiece, ...] = ()
    visual_text: str = ""
    ocr_text: str = ""
    snippets: tuple[Snippet, ...] = ()
    keyframe_times: tuple[float, ...] = ()
    models: dict[str, str] = field(default_factory=dict)  # role → model
    thumbnail_uri: str = ""
    thumbnail_url: str = ""

    @classmethod
    def from_proto(cls, msg: pb.Segment) -> Segment:
        return cls(
            id=msg.id, stream_id=msg.stream_id, t_start=msg.t_start, t_end=msg.t_end, transcript=msg.transcript,
            transcript_pieces=tuple(TranscriptPiece(p.t_start, p.t_end, p.text) for p in msg.transcript_pieces),
            visual_text=msg.visual_text, ocr_text=msg.ocr_text,
            snippets=tuple(Snippet.from_proto(s) for s in msg.snippets),
            keyframe_times=tuple(msg.keyframe_times), models=dict(msg.models),
            thumbnail_uri=msg.thumbnail_uri, thumbnail_url=msg.thumbnail_url,
        )

    def to_proto(self) -> pb.Segment:
        return pb.Segment(
            id=self.id, stream_id=self.stream_id, t_start=self.t_start, t_end=self.t_end,
            transcript=self.transcript,
            transcript_pieces=[pb.TranscriptPiece(t_start=p.t_start, t_end=p.t_end, text=p.text)
                               for p in self.transcript_pieces],
            visual_text=self.visual_text, ocr_text=self.ocr_text,
            snippets=[s.to_proto() for s in self.snippets], keyframe_times=list(self.keyframe_times),
            models=self.models, thumbnail_uri=self.thumbnail_uri, thumbnail_url=self.thumbnail_url,
        )

    def to_dict(self) -> dict[str, Any]:
        return api_records.segment_to_dict(self.to_proto())
