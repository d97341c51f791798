"""Fuzzy recall's one shape (issue 16), whoever asks: the Recall RPC's messages and the
``episodic recall --json`` document, from :mod:`core.query`'s RecallRequest and RecallResult.

The same contract as :mod:`episodic.api_convert` (which was full): the server turns dataclasses
into messages, the client turns them back into the same dataclasses, and only
:func:`recall_result_to_dict` makes JSON, so a script reading the CLI's output cannot tell an
in-process answer from a server's. The request builder validates once, with the kernel's
validator, so a bad description gets the same message in-process and remotely.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from episodic.api_convert import _scope, _top_k, put_times, times_of
from episodic.core import validation
from episodic.core.query import FACET_NAMES, RecalledStream, RecallRequest, RecallResult
from episodic.proto.episodic.v1 import episodic_pb2 as pb


def recall_request(
    description: str = "",
    global_impression: str = "",
    key_moment: str = "",
    temporal: str = "",
    audio: str = "",
    stream_ids: Iterable[str] = (),
    t_min: float | None = None,
    t_max: float | None = None,
    top_k: int = 0,
    deadline_s: float | None = None,
) -> RecallRequest:
    """A validated RecallRequest (raises InputError naming the bad field); 0 for ``top_k`` is the
    default (5), as in the proto, so the CLI and the server read the same request the same way."""
    return validation.recall_request(
        RecallRequest(
            description=description,
            global_impression=global_impression,
            key_moment=key_moment,
            temporal=temporal,
            audio=audio,
            scope=_scope(stream_ids, t_min, t_max),
            top_k=_top_k(top_k),
            deadline_s=deadline_s,
        )
    )


# -- the request as a message ---------------------------------------------------------------------
def recall_request_to_proto(req: RecallRequest) -> pb.RecallRequest:
    """The message for a RecallRequest (its deadline travels as the call's gRPC deadline)."""
    msg = pb.RecallRequest(
        description=req.description,
        global_impression=req.global_impression,
        key_moment=req.key_moment,
        temporal=req.temporal,
        audio=req.audio,
        stream_ids=list(req.scope.stream_ids or ()),
        top_k=req.top_k,
    )
    put_times(msg, req.scope)
    return msg


def recall_request_from_proto(
    msg: pb.RecallRequest, deadline_s: float | None = None
) -> RecallRequest:
    """The validated request a message stands for (InputError naming a bad field)."""
    return recall_request(
        msg.description,
        msg.global_impression,
        msg.key_moment,
        msg.temporal,
        msg.audio,
        list(msg.stream_ids),
        *times_of(msg),
        msg.top_k,
        deadline_s,
    )


# -- the result ----------------------------------------------------------------------------------
def recalled_stream_to_proto(r: RecalledStream) -> pb.RecalledStream:
    return pb.RecalledStream(
        stream_id=r.stream_id,
        t=r.t,
        t_start=r.t_start,
        t_end=r.t_end,
        confidence=r.confidence,
        facets={str(k): float(v) for k, v in r.facets.items()},
        why=r.why,
        segment_id=r.segment_id,
    )


def recalled_stream_from_proto(msg: pb.RecalledStream) -> RecalledStream:
    """The RecalledStream a message carries, its facet scores in the canonical facet order."""
    return RecalledStream(
        stream_id=msg.stream_id,
        t=msg.t,
        t_start=msg.t_start,
        t_end=msg.t_end,
        confidence=msg.confidence,
        facets=dict(_facet_order(msg.facets)),
        why=msg.why,
        segment_id=msg.segment_id,
    )


def recalled_stream_to_dict(r: RecalledStream) -> dict[str, Any]:
    """One result of the JSON document; facets in their canonical order (global, key moment,
    temporal, audio) whichever order the map came in, so both paths print the same text."""
    return {
        "stream_id": r.stream_id,
        "t": round(r.t, 3),
        "t_start": round(r.t_start, 3),
        "t_end": round(r.t_end, 3),
        "confidence": round(r.confidence, 4),
        "facets": {k: round(v, 4) for k, v in _facet_order(r.facets)},
        "why": r.why,
        "segment_id": r.segment_id,
    }


def recall_result_to_proto(r: RecallResult) -> pb.RecallResponse:
    return pb.RecallResponse(
        results=[recalled_stream_to_proto(s) for s in r.results],
        facets={str(k): str(v) for k, v in r.facets.items()},
        rejected=list(r.rejected),
        elapsed_s=r.elapsed_s,
    )


def recall_result_from_proto(msg: pb.RecallResponse) -> RecallResult:
    """The RecallResult a message carries; its facet maps in the canonical facet order (a proto
    map has none), so a result compares equal to the one the server sent."""
    return RecallResult(
        results=[recalled_stream_from_proto(s) for s in msg.results],
        facets=dict(_facet_order(msg.facets)),
        rejected=list(msg.rejected),
        elapsed_s=msg.elapsed_s,
    )


def recall_result_to_dict(r: RecallResult) -> dict[str, Any]:
    """The ``episodic recall --json`` document: the RecallResponse fields by the same names (the
    same in-process and through a server)."""
    return {
        "results": [recalled_stream_to_dict(s) for s in r.results],
        "facets": dict(_facet_order(r.facets)),
        "rejected": list(r.rejected),
        "elapsed_s": round(r.elapsed_s, 3),
    }


def _facet_order(facets: Any) -> list[tuple[str, Any]]:
    """A facet map's items: the four known facets first in their order, then any others by name."""
    rank = {name: i for i, name in enumerate(FACET_NAMES)}
    return sorted(facets.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))
