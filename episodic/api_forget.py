"""Forgetting's one shape, whoever asks: the Forget RPC's messages, ``episodic forget --json`` and
the storage figures of ``ListStreams``/``episodic streams``, from :mod:`services.forgetting`'s
ForgetReport and StreamStorage (the server turns them into messages, the client back into the
same dataclasses, and only the ``*_to_dict`` functions make JSON)."""

from __future__ import annotations

from typing import Any

from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.services.forgetting import RECORD_KINDS, ForgetReport, StreamStorage


def storage_to_proto(counts: dict[str, int], snippet_bytes: int = 0) -> pb.StreamStorage:
    values = {k: int(counts.get(k, 0)) for k in RECORD_KINDS}
    return pb.StreamStorage(**values, records=sum(values.values()), snippet_bytes=int(snippet_bytes))


def storage_of(s: StreamStorage) -> pb.StreamStorage:
    return storage_to_proto(s.counts, s.snippet_bytes)


def storage_to_dict(msg: pb.StreamStorage) -> dict[str, Any]:
    return {**{k: getattr(msg, k) for k in RECORD_KINDS}, "records": msg.records, "snippet_bytes": msg.snippet_bytes}


def forget_request_to_proto(stream_id: str, t_min: float | None, t_max: float | None) -> pb.ForgetRequest:
    msg = pb.ForgetRequest(stream_id=stream_id)
    if t_min is not None:
        msg.t_min = t_min
    if t_max is not None:
        msg.t_max = t_max
    return msg


def forget_report_to_proto(r: ForgetReport) -> pb.ForgetResponse:
    msg = pb.ForgetResponse(
        audit_id=r.audit_id, stream_id=r.stream_id, whole_stream=r.whole_stream,
        forgotten=storage_to_proto(r.counts), snippet_files=r.snippet_files,
        overviews_recomposed=r.overviews_recomposed, at=r.at, finished_at=r.finished_at, recovered=r.recovered,
    )
    if r.t_min is not None:
        msg.t_min = r.t_min
    if r.t_max is not None:
        msg.t_max = r.t_max
    return msg


def forget_report_from_proto(msg: pb.ForgetResponse, key_id: str = "") -> ForgetReport:
    return ForgetReport(
        audit_id=msg.audit_id, stream_id=msg.stream_id, whole_stream=msg.whole_stream,
        t_min=msg.t_min if msg.HasField("t_min") else None,
        t_max=msg.t_max if msg.HasField("t_max") else None,
        counts={k: int(getattr(msg.forgotten, k)) for k in RECORD_KINDS},
        snippet_files=int(msg.snippet_files), overviews_recomposed=int(msg.overviews_recomposed),
        at=msg.at, finished_at=msg.finished_at, key_id=key_id, recovered=msg.recovered,
    )


def forget_report_to_dict(r: ForgetReport) -> dict[str, Any]:
    """The ``episodic forget --json`` document (the same in-process and through --server)."""
    doc = r.to_dict()
    doc.pop("key_id", None)  # who asked: in the audit log, not in the answer
    doc.pop("reason", None)
    return doc
