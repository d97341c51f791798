"""Stored records (streams, events, segments) as the gRPC messages and as JSON: the one mapping
that ``ListStreams``/``ListEvents``/``GetSegment`` and ``episodic streams/events/segments --json``
share, so a script reading either sees the same names (see :mod:`episodic.api_convert` for
answers, articles and moments)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from episodic.core.records import ShortTermMemory, StreamInfo, ThetaEvent
from episodic.proto.episodic.v1 import episodic_pb2 as pb

_CONTENT_TYPES = {".mp4": "video/mp4", ".m4a": "audio/mp4", ".jpg": "image/jpeg"}


# -- stored records ------------------------------------------------------------------------------
def snippet_content_type(uri: str) -> str:
    """The media type the snippet store writes for this file name (see snippet_store)."""
    return _CONTENT_TYPES.get(PurePosixPath(uri).suffix.lower(), "application/octet-stream")


def event_to_proto(e: ThetaEvent) -> pb.Event:
    return pb.Event(
        id=e.id,
        stream_id=e.stream_id,
        segment_id=e.memory_id,
        t_start=e.t_start,
        t_end=e.t_end,
        summary=e.summary,
        provisional=bool((e.metadata or {}).get("provisional")),
    )


def event_to_dict(e: pb.Event) -> dict[str, Any]:
    return {
        "id": e.id,
        "stream_id": e.stream_id,
        "segment_id": e.segment_id,
        "t_start": round(e.t_start, 3),
        "t_end": round(e.t_end, 3),
        "summary": e.summary,
        "provisional": e.provisional,
        "thumbnail_url": e.thumbnail_url,
    }


def segment_to_proto(m: ShortTermMemory) -> pb.Segment:
    models = m.metadata.get("models") or {}
    return pb.Segment(
        id=m.id,
        stream_id=m.stream_id,
        t_start=m.t_start,
        t_end=m.t_end,
        transcript=m.transcript_text,
        transcript_pieces=[
            pb.TranscriptPiece(t_start=p.t_start, t_end=p.t_end, text=p.text) for p in m.transcript
        ],
        visual_text=m.visual_text,
        ocr_text=m.ocr_text,
        snippets=[
            pb.Snippet(
                index=i,
                uri=s.uri,
                t_start=s.t_start,
                t_end=s.t_end,
                content_type=snippet_content_type(s.uri),
            )
            for i, s in enumerate(m.snippets)
        ],
        keyframe_times=list(m.keyframe_times),
        models={str(k): str(v) for k, v in models.items()} if isinstance(models, dict) else {},
        thumbnail_uri=m.thumbnail_uri,
    )


def segment_to_dict(s: pb.Segment) -> dict[str, Any]:
    return {
        "id": s.id,
        "stream_id": s.stream_id,
        "t_start": round(s.t_start, 3),
        "t_end": round(s.t_end, 3),
        "transcript": s.transcript,
        "transcript_pieces": [
            {"t_start": round(p.t_start, 3), "t_end": round(p.t_end, 3), "text": p.text}
            for p in s.transcript_pieces
        ],
        "visual_text": s.visual_text,
        "ocr_text": s.ocr_text,
        "snippets": [
            {
                "index": sn.index,
                "uri": sn.uri,
                "t_start": round(sn.t_start, 3),
                "t_end": round(sn.t_end, 3),
                "content_type": sn.content_type,
                "url": sn.url,  # over the HTTP API (signed); "" when the server runs none
            }
            for sn in s.snippets
        ],
        "keyframe_times": [round(t, 3) for t in s.keyframe_times],
        "models": dict(sorted(s.models.items())),
        "thumbnail_uri": s.thumbnail_uri,
        "thumbnail_url": s.thumbnail_url,
    }


def stream_to_proto(s: StreamInfo, storage: pb.StreamStorage | None = None) -> pb.Stream:
    complete = s.metadata.get("complete")
    return pb.Stream(
        stream_id=s.stream_id,
        source=s.source,
        t_end=s.t_end,
        segments=s.memories,
        events=s.events,
        updated_at=s.updated_at,
        complete=bool(complete) if complete is not None else None,
        gaps=[pb.Gap(t_start=float(a), t_end=float(b)) for a, b in s.metadata.get("gaps", [])],
        storage=storage,
    )


def stream_to_dict(s: pb.Stream) -> dict[str, Any]:
    return {
        "stream_id": s.stream_id,
        "source": s.source,
        "t_end": round(s.t_end, 3),
        "segments": s.segments,
        "events": s.events,
        "updated_at": s.updated_at,
        "complete": s.complete if s.HasField("complete") else None,
        "gaps": [{"t_start": round(g.t_start, 3), "t_end": round(g.t_end, 3)} for g in s.gaps],
        **({"storage": _storage_to_dict(s.storage)} if s.HasField("storage") else {}),
    }


def _storage_to_dict(msg: pb.StreamStorage) -> dict[str, Any]:
    from episodic.api_forget import storage_to_dict

    return storage_to_dict(msg)


# the CLI's listings: records → messages → the one JSON shape
def events_document(events: Iterable[ThetaEvent]) -> dict[str, Any]:
    """The ``episodic events --json`` document (the same names as ``ListEvents``)."""
    return {"events": [event_to_dict(event_to_proto(e)) for e in events]}


def segments_document(memories: Iterable[ShortTermMemory]) -> dict[str, Any]:
    """The ``episodic segments --json`` document (the same names as ``GetSegment``)."""
    return {"segments": [segment_to_dict(segment_to_proto(m)) for m in memories]}


def streams_document(
    streams: Iterable[StreamInfo], storage: dict[str, pb.StreamStorage] | None = None
) -> dict[str, Any]:
    """The ``episodic streams --json`` document (the same names as ``ListStreams``; with
    ``storage``, as ``ListStreams`` with ``with_storage``)."""
    return {"streams": [stream_to_dict(stream_to_proto(s, (storage or {}).get(s.stream_id))) for s in streams]}
