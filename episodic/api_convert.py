"""One shape for answers, moments and located moments, whoever asks: the gRPC messages and the
CLI's ``--json`` documents are both made here, from the contract dataclasses of :mod:`core.query`.

Why one module: the CLI answers in-process or through a server (``--server``), and a script
reading its JSON must not be able to tell which. So the server turns dataclasses into
messages (``*_to_proto``), the CLI turns messages back into the same dataclasses
(``*_from_proto``), and only ``*_to_dict`` ever makes JSON. The request builders validate the
limits once for both paths, so a bad question gets the same message in-process and remotely.
Fuzzy recall's shapes follow the same rules in :mod:`episodic.api_recall`, articles' in
:mod:`episodic.api_article`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from episodic.core import validation
from episodic.core.query import (
    AskRequest,
    AskResult,
    Evidence,
    LocatedMoment,
    LocateRequest,
    LocateResult,
    Moment,
    Pathway,
    QueryType,
    Scope,
)
from episodic.proto.episodic.v1 import episodic_pb2 as pb

# -- request limits (shared by the server and the in-process CLI) ------------------------------
TOP_K_DEFAULT = 5
LOCATE_TOP_K_DEFAULT = 3  # LocateRequest.top_k 0: a locate wants the few best frames, not a list
LOCATE_MAX_FRAMES_DEFAULT = 1024  # LocateRequest.max_frames 0: sixteen 8×8 grids

_PATHWAY_TO_PROTO = {
    Pathway.FAST: pb.PATHWAY_FAST,
    Pathway.DETAILED: pb.PATHWAY_DETAILED,
    Pathway.INSPECT: pb.PATHWAY_INSPECT,
}
_PATHWAY_FROM_PROTO = {v: k for k, v in _PATHWAY_TO_PROTO.items()}
_QUERY_TYPE_TO_PROTO = {
    QueryType.VIDEO: pb.QUERY_TYPE_VIDEO,
    QueryType.AUDIO: pb.QUERY_TYPE_AUDIO,
    QueryType.VIDEO_AUDIO: pb.QUERY_TYPE_VIDEO_AUDIO,
    QueryType.SUMMARY: pb.QUERY_TYPE_SUMMARY,
}
_QUERY_TYPE_FROM_PROTO = {v: k for k, v in _QUERY_TYPE_TO_PROTO.items()}


# -- validation (the kernel's validator, after the proto's conventions) ------------------------
def _top_k(n: Any) -> int:
    """0 stands for the default: proto3 cannot tell unset from 0."""
    return TOP_K_DEFAULT if n == 0 and not isinstance(n, bool) else validation.top_k(n)


def _locate_top_k(n: Any) -> int:
    """0 stands for Locate's own default (3): proto3 cannot tell unset from 0."""
    return LOCATE_TOP_K_DEFAULT if n == 0 and not isinstance(n, bool) else n


def _max_frames(n: Any) -> int:
    """0 stands for the default frame budget; anything else is checked by the validator."""
    return LOCATE_MAX_FRAMES_DEFAULT if n == 0 and not isinstance(n, bool) else n


def _scope(stream_ids: Iterable[str], t_min: float | None, t_max: float | None) -> Scope:
    """The request's scope, unchecked: the kernel validator checks the whole request once."""
    ids = stream_ids if isinstance(stream_ids, str) else tuple(stream_ids) or None  # a str: refused there
    return Scope(stream_ids=ids, t_min=t_min, t_max=t_max)


def ask_request(
    question: str,
    options: Sequence[str] = (),
    stream_ids: Iterable[str] = (),
    t_min: float | None = None,
    t_max: float | None = None,
    top_k: int = 0,
    deadline_s: float | None = None,
    inspect: bool = False,
) -> AskRequest:
    """A validated AskRequest (raises InputError naming the bad field). ``inspect``: look again
    at the stored video whatever the memory's confidence."""
    return validation.ask_request(AskRequest(
        question=question,
        options=tuple(options) if not isinstance(options, str) else options,
        scope=_scope(stream_ids, t_min, t_max),
        top_k=_top_k(top_k),
        deadline_s=deadline_s,
        inspect=inspect,
    ))


def search_args(
    query: str,
    stream_ids: Iterable[str] = (),
    t_min: float | None = None,
    t_max: float | None = None,
    top_k: int = 0,
    by_example: bool = False,
) -> tuple[str, Scope, int]:
    """Validated ``(query, scope, top_k)`` for ``MemoryQA.search``; with ``by_example`` (a
    picture or a segment to search by is given) the query may be empty."""
    text = validation.text(query, "query") if not by_example or (query or "").strip() else ""
    return text, validation.scope(_scope(stream_ids, t_min, t_max)), _top_k(top_k)


def locate_request(
    query: str,
    stream_ids: Iterable[str] = (),
    t_min: float | None = None,
    t_max: float | None = None,
    max_frames: int = 0,
    top_k: int = 0,
    deadline_s: float | None = None,
) -> LocateRequest:
    """A validated LocateRequest (raises InputError naming the bad field); 0 for ``max_frames``
    or ``top_k`` is the default (1024 frames, 3 moments), as in the proto, so the CLI and the
    server read the same request the same way."""
    return validation.locate_request(LocateRequest(
        query=query,
        scope=_scope(stream_ids, t_min, t_max),
        max_frames=_max_frames(max_frames),
        top_k=_locate_top_k(top_k),
        deadline_s=deadline_s,
    ))


# -- requests as messages (the CLI's client side) -----------------------------------------------
def put_times(msg: Any, scope: Scope) -> None:
    """A request message's optional t_min/t_max from a scope (unset stays unbounded)."""
    if scope.t_min is not None:
        msg.t_min = scope.t_min
    if scope.t_max is not None:
        msg.t_max = scope.t_max


def times_of(msg: Any) -> tuple[float | None, float | None]:
    """A request message's (t_min, t_max), None where the field is not set."""
    return (msg.t_min if msg.HasField("t_min") else None,
            msg.t_max if msg.HasField("t_max") else None)


def ask_request_to_proto(req: AskRequest) -> pb.AskRequest:
    msg = pb.AskRequest(
        question=req.question,
        options=list(req.options),
        stream_ids=list(req.scope.stream_ids or ()),
        top_k=req.top_k,
        inspect=req.inspect,
    )
    put_times(msg, req.scope)
    return msg


def ask_request_from_proto(msg: pb.AskRequest, deadline_s: float | None = None) -> AskRequest:
    return ask_request(
        msg.question,
        list(msg.options),
        list(msg.stream_ids),
        *times_of(msg),
        msg.top_k,
        deadline_s,
        msg.inspect,
    )


def search_request_to_proto(
    query: str, scope: Scope, top_k: int, image: bytes | None = None, like_segment_id: str | None = None
) -> pb.SearchRequest:
    msg = pb.SearchRequest(query=query, stream_ids=list(scope.stream_ids or ()), top_k=top_k,
                           image=image or b"", like_segment_id=like_segment_id or "")
    put_times(msg, scope)
    return msg


def search_request_from_proto(msg: pb.SearchRequest) -> tuple[str, Scope, int]:
    """``(query, scope, top_k)``; the example to search by is in ``msg.image`` and
    ``msg.like_segment_id`` (with one of them the query may be empty)."""
    return search_args(
        msg.query,
        list(msg.stream_ids),
        *times_of(msg),
        msg.top_k,
        by_example=bool(msg.image) or bool(msg.like_segment_id),
    )


def locate_request_to_proto(req: LocateRequest) -> pb.LocateRequest:
    """The message for a LocateRequest (its deadline travels as the call's gRPC deadline)."""
    msg = pb.LocateRequest(
        query=req.query,
        stream_ids=list(req.scope.stream_ids or ()),
        max_frames=req.max_frames,
        top_k=req.top_k,
    )
    put_times(msg, req.scope)
    return msg


def locate_request_from_proto(msg: pb.LocateRequest, deadline_s: float | None = None) -> LocateRequest:
    """The validated request a message stands for (InputError naming a bad field)."""
    return locate_request(
        msg.query,
        list(msg.stream_ids),
        *times_of(msg),
        msg.max_frames,
        msg.top_k,
        deadline_s,
    )


# -- answers -------------------------------------------------------------------------------------
def evidence_to_proto(e: Evidence) -> pb.Evidence:
    return pb.Evidence(
        stream_id=e.stream_id,
        segment_id=e.segment_id,
        t_start=e.t_start,
        t_end=e.t_end,
        modality=e.modality,
        text=e.text,
        snippet_uri=e.snippet_uri,
        score=e.score,
    )


def evidence_from_proto(msg: pb.Evidence) -> Evidence:
    return Evidence(
        stream_id=msg.stream_id,
        segment_id=msg.segment_id,
        t_start=msg.t_start,
        t_end=msg.t_end,
        modality=msg.modality,
        text=msg.text,
        snippet_uri=msg.snippet_uri,
        score=msg.score,
    )


def evidence_to_dict(e: Evidence) -> dict[str, Any]:
    return {
        "stream_id": e.stream_id,
        "segment_id": e.segment_id,
        "t_start": round(e.t_start, 3),
        "t_end": round(e.t_end, 3),
        "modality": e.modality,
        "text": e.text,
        "snippet_uri": e.snippet_uri,
        "score": round(e.score, 4),
    }


def ask_result_to_proto(r: AskResult) -> pb.AskResponse:
    msg = pb.AskResponse(
        answer=r.answer,
        confidence=r.confidence,
        pathway=_PATHWAY_TO_PROTO[Pathway(r.pathway)],
        query_type=_QUERY_TYPE_TO_PROTO[QueryType(r.query_type)],
        evidence=[evidence_to_proto(e) for e in r.evidence],
        fast_answer=r.fast_answer,
        fast_confidence=r.fast_confidence,
        timings_ms={str(k): float(v) for k, v in r.timings_ms.items()},
    )
    if r.choice_index is not None:
        msg.choice_index = r.choice_index
    return msg


def ask_result_from_proto(msg: pb.AskResponse) -> AskResult:
    if msg.pathway not in _PATHWAY_FROM_PROTO or msg.query_type not in _QUERY_TYPE_FROM_PROTO:
        raise ValueError(f"the server sent an unknown pathway/query type: {msg.pathway}/{msg.query_type}")
    return AskResult(
        answer=msg.answer,
        confidence=msg.confidence,
        pathway=_PATHWAY_FROM_PROTO[msg.pathway],
        query_type=_QUERY_TYPE_FROM_PROTO[msg.query_type],
        choice_index=msg.choice_index if msg.HasField("choice_index") else None,
        evidence=[evidence_from_proto(e) for e in msg.evidence],
        fast_answer=msg.fast_answer,
        fast_confidence=msg.fast_confidence,
        timings_ms=dict(msg.timings_ms),
    )


def ask_result_to_dict(r: AskResult) -> dict[str, Any]:
    """The ``episodic ask --json`` document (the same in-process and through a server)."""
    return {
        "answer": r.answer,
        "choice_index": r.choice_index,
        "confidence": round(r.confidence, 4),
        "pathway": Pathway(r.pathway).value,
        "query_type": QueryType(r.query_type).value,
        "evidence": [evidence_to_dict(e) for e in r.evidence],
        "fast_answer": r.fast_answer,
        "fast_confidence": round(r.fast_confidence, 4),
        "timings_ms": {k: round(v, 1) for k, v in sorted(r.timings_ms.items())},
    }


# -- moments -------------------------------------------------------------------------------------
def moment_to_proto(m: Moment) -> pb.Moment:
    return pb.Moment(
        stream_id=m.stream_id,
        t_start=m.t_start,
        t_end=m.t_end,
        score=m.score,
        why=m.why,
        segment_id=m.segment_id,
        snippet_uri=m.snippet_uri,
        snippet_url=m.snippet_url,
        thumbnail_url=m.thumbnail_url,
    )


def moment_from_proto(msg: pb.Moment) -> Moment:
    return Moment(
        stream_id=msg.stream_id,
        t_start=msg.t_start,
        t_end=msg.t_end,
        score=msg.score,
        why=msg.why,
        segment_id=msg.segment_id,
        snippet_uri=msg.snippet_uri,
        snippet_url=msg.snippet_url,
        thumbnail_url=msg.thumbnail_url,
    )


def moment_to_dict(m: Moment) -> dict[str, Any]:
    return {
        "stream_id": m.stream_id,
        "t_start": round(m.t_start, 3),
        "t_end": round(m.t_end, 3),
        "score": round(m.score, 4),
        "why": m.why,
        "segment_id": m.segment_id,
        "snippet_uri": m.snippet_uri,
        "snippet_url": m.snippet_url,
        "thumbnail_url": m.thumbnail_url,
    }


def search_result_to_dict(moments: Sequence[Moment]) -> dict[str, Any]:
    """The ``episodic search --json`` document."""
    return {"moments": [moment_to_dict(m) for m in moments]}


# -- located moments (look again) ----------------------------------------------------------------
def located_moment_to_proto(m: LocatedMoment) -> pb.LocatedMoment:
    return pb.LocatedMoment(
        stream_id=m.stream_id,
        t=m.t,
        t_start=m.t_start,
        t_end=m.t_end,
        confidence=m.confidence,
        why=m.why,
        depth=m.depth,
    )


def located_moment_from_proto(msg: pb.LocatedMoment) -> LocatedMoment:
    return LocatedMoment(
        stream_id=msg.stream_id,
        t=msg.t,
        t_start=msg.t_start,
        t_end=msg.t_end,
        confidence=msg.confidence,
        why=msg.why,
        depth=msg.depth,
    )


def located_moment_to_dict(m: LocatedMoment) -> dict[str, Any]:
    return {
        "stream_id": m.stream_id,
        "t": round(m.t, 3),
        "t_start": round(m.t_start, 3),
        "t_end": round(m.t_end, 3),
        "confidence": round(m.confidence, 4),
        "why": m.why,
        "depth": m.depth,
    }


def locate_result_to_proto(r: LocateResult) -> pb.LocateResponse:
    return pb.LocateResponse(
        moments=[located_moment_to_proto(m) for m in r.moments],
        frames_examined=r.frames_examined,
        depth=r.depth,
        elapsed_s=r.elapsed_s,
        stopped=r.stopped,
        streams_looked=list(r.streams_looked),
        not_seen=list(r.not_seen),
    )


def locate_result_from_proto(msg: pb.LocateResponse) -> LocateResult:
    return LocateResult(
        moments=[located_moment_from_proto(m) for m in msg.moments],
        frames_examined=msg.frames_examined,
        depth=msg.depth,
        elapsed_s=msg.elapsed_s,
        stopped=msg.stopped,
        streams_looked=list(msg.streams_looked),
        not_seen=list(msg.not_seen),
    )


def locate_result_to_dict(r: LocateResult) -> dict[str, Any]:
    """The ``episodic locate --json`` document: the LocateResponse fields by the same names (the
    same in-process and through a server; ``--file`` adds "file")."""
    return {
        "moments": [located_moment_to_dict(m) for m in r.moments],
        "frames_examined": r.frames_examined,
        "depth": r.depth,
        "elapsed_s": round(r.elapsed_s, 3),
        "stopped": r.stopped,
        "streams_looked": list(r.streams_looked),
        "not_seen": list(r.not_seen),
    }
