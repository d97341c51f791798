"""Articles' one shape, whoever asks: the Article RPC's request, progress and result messages and
the ``episodic article --json`` document, from :mod:`core.article`'s dataclasses.

Why its own module: the article shapes are the largest of the API's (a request with a style and a
fusion, a result of sections, citations, claims and steps), and they follow the same contract as
:mod:`episodic.api_convert`, whose helpers they share: the server turns dataclasses into messages,
the client turns them back into the same dataclasses, and only :func:`article_to_dict` makes JSON,
so a script reading the CLI's output cannot tell an in-process article from a server's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from episodic.api_convert import _scope, put_times, times_of
from episodic.core import validation
from episodic.core.article import (
    Article,
    ArticleProgress,
    ArticleRequest,
    ArticleStyle,
    Citation,
    Claim,
    Fusion,
    Grounding,
    Section,
    Sentence,
    Step,
)
from episodic.core.errors import InputError
from episodic.proto.episodic.v1 import episodic_pb2 as pb

_STYLE_TO_PROTO = {
    ArticleStyle.BULLET: pb.ARTICLE_STYLE_BULLET,
    ArticleStyle.CAG: pb.ARTICLE_STYLE_CAG,
    ArticleStyle.GINGER: pb.ARTICLE_STYLE_GINGER,
}
_STYLE_FROM_PROTO = {v: k for k, v in _STYLE_TO_PROTO.items()}
_FUSION_TO_PROTO = {
    Fusion.RRF: pb.FUSION_METHOD_RRF,
    Fusion.WEIGHTED_RRF: pb.FUSION_METHOD_WEIGHTED_RRF,
    Fusion.MAX: pb.FUSION_METHOD_MAX,
    Fusion.MEAN: pb.FUSION_METHOD_MEAN,
    Fusion.SUM: pb.FUSION_METHOD_SUM,
}
_FUSION_FROM_PROTO = {v: k for k, v in _FUSION_TO_PROTO.items()}
ARTICLE_STYLE_DEFAULT = ArticleStyle.GINGER  # what ARTICLE_STYLE_UNSPECIFIED stands for
FUSION_DEFAULT = None  # FUSION_METHOD_UNSPECIFIED: the server's configured article_fusion


# -- requests ----------------------------------------------------------------------------------
def _max_sub_queries(n: Any) -> int | None:
    """0 stands for the configured default: proto3 cannot tell unset from 0."""
    return None if n == 0 and not isinstance(n, bool) else validation.max_sub_queries(n)


def article_request(
    request: str,
    style: Any = ARTICLE_STYLE_DEFAULT,
    stream_ids: Iterable[str] = (),
    t_min: float | None = None,
    t_max: float | None = None,
    fusion: Any = FUSION_DEFAULT,
    max_sub_queries: int = 0,
    deadline_s: float | None = None,
) -> ArticleRequest:
    """A validated ArticleRequest (raises InputError naming the bad field): the same checks as
    the article service's own, so the CLI refuses a bad request before sending it and the
    message is the same in-process and through a server. "weighted_rrf" (the proto's spelling)
    is accepted for "wrrf"; None or "" leaves the fusion to the configured ``article_fusion``."""
    return validation.article_request(ArticleRequest(
        request=request,
        style=validation.choice(style, ArticleStyle, "style"),
        scope=_scope(stream_ids, t_min, t_max),
        fusion=fusion,
        max_sub_queries=_max_sub_queries(max_sub_queries),
        deadline_s=deadline_s,
    ))


def article_request_to_proto(req: ArticleRequest) -> pb.ArticleRequest:
    msg = pb.ArticleRequest(
        request=req.request,
        style=_STYLE_TO_PROTO[ArticleStyle(req.style)],
        stream_ids=list(req.scope.stream_ids or ()),
        fusion=pb.FUSION_METHOD_UNSPECIFIED if req.fusion is None else _FUSION_TO_PROTO[Fusion(req.fusion)],
        max_sub_queries=req.max_sub_queries or 0,
    )
    put_times(msg, req.scope)
    return msg


def article_request_from_proto(msg: pb.ArticleRequest, deadline_s: float | None = None) -> ArticleRequest:
    """The request a message stands for; UNSPECIFIED enums are the defaults, and a number this
    server does not know (proto3 enums are open) is an InputError, not a silent default."""
    if msg.style == pb.ARTICLE_STYLE_UNSPECIFIED:
        style = ARTICLE_STYLE_DEFAULT
    elif msg.style in _STYLE_FROM_PROTO:
        style = _STYLE_FROM_PROTO[msg.style]
    else:
        raise InputError(f"style {msg.style} is not an ArticleStyle this server knows")
    if msg.fusion == pb.FUSION_METHOD_UNSPECIFIED:
        fusion = FUSION_DEFAULT
    elif msg.fusion in _FUSION_FROM_PROTO:
        fusion = _FUSION_FROM_PROTO[msg.fusion]
    else:
        raise InputError(f"fusion {msg.fusion} is not a FusionMethod this server knows")
    return article_request(
        msg.request,
        style,
        list(msg.stream_ids),
        *times_of(msg),
        fusion,
        msg.max_sub_queries,
        deadline_s,
    )


# -- results -------------------------------------------------------------------------------------
def _record_fields(record: Any) -> dict[str, Any]:
    """A flat article record's fields, for the proto message of the same field names."""
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def _message_fields(msg: Any, cls: Any) -> dict[str, Any]:
    """The fields of ``cls`` read from a proto message with the same field names."""
    return {f.name: getattr(msg, f.name) for f in dataclasses.fields(cls)}


def article_to_proto(a: Article) -> pb.ArticleResult:
    return pb.ArticleResult(
        request=a.request,
        style=_STYLE_TO_PROTO[ArticleStyle(a.style)],
        title=a.title,
        sections=[
            pb.Section(
                heading=sec.heading,
                sentences=[pb.Sentence(text=s.text, citations=list(s.citations)) for s in sec.sentences],
            )
            for sec in a.sections
        ],
        citations=[pb.Citation(**_record_fields(c)) for c in a.citations],
        claims=[pb.Claim(**_record_fields(c)) for c in a.claims],
        dropped_claims=a.dropped_claims,
        sub_queries=list(a.sub_queries),
        steps=[
            pb.Step(
                text=st.text,
                groundings=[pb.Grounding(**_record_fields(g)) for g in st.groundings],
            )
            for st in a.steps
        ],
        thin_evidence=a.thin_evidence,
        timings_ms={str(k): float(v) for k, v in a.timings_ms.items()},
        markdown=a.markdown(),
    )


def article_from_proto(msg: pb.ArticleResult) -> Article:
    """The Article a message carries (``markdown`` is not kept: ``Article.markdown()`` renders
    the same text from the fields)."""
    if msg.style not in _STYLE_FROM_PROTO:
        raise ValueError(f"the server sent an unknown article style: {msg.style}")
    return Article(
        request=msg.request,
        style=_STYLE_FROM_PROTO[msg.style],
        title=msg.title,
        sections=[
            Section(
                heading=sec.heading,
                sentences=[Sentence(text=s.text, citations=list(s.citations)) for s in sec.sentences],
            )
            for sec in msg.sections
        ],
        citations=[Citation(**_message_fields(c, Citation)) for c in msg.citations],
        claims=[Claim(**_message_fields(c, Claim)) for c in msg.claims],
        dropped_claims=msg.dropped_claims,
        sub_queries=list(msg.sub_queries),
        steps=[
            Step(
                text=st.text,
                groundings=[Grounding(**_message_fields(g, Grounding)) for g in st.groundings],
            )
            for st in msg.steps
        ],
        thin_evidence=msg.thin_evidence,
        timings_ms=dict(msg.timings_ms),
    )


def article_to_dict(a: Article) -> dict[str, Any]:
    """The ``episodic article --json`` document: the ArticleResult message's fields, by the
    same names (the same in-process and through a server)."""
    return {
        "request": a.request,
        "style": ArticleStyle(a.style).value,
        "title": a.title,
        "sections": [
            {
                "heading": sec.heading,
                "sentences": [{"text": s.text, "citations": list(s.citations)} for s in sec.sentences],
            }
            for sec in a.sections
        ],
        "citations": [
            {
                "n": c.n,
                "stream_id": c.stream_id,
                "segment_id": c.segment_id,
                "t_start": round(c.t_start, 3),
                "t_end": round(c.t_end, 3),
                "snippet_uri": c.snippet_uri,
            }
            for c in a.citations
        ],
        "claims": [
            {
                "id": c.id,
                "text": c.text,
                "modality": c.modality,
                "stream_id": c.stream_id,
                "segment_id": c.segment_id,
                "t_start": round(c.t_start, 3),
                "t_end": round(c.t_end, 3),
                "kind": c.kind,
                "sub_query": c.sub_query,
                "relevance": round(c.relevance, 4),
                "support": round(c.support, 4),
                "snippet_uri": c.snippet_uri,
            }
            for c in a.claims
        ],
        "dropped_claims": a.dropped_claims,
        "sub_queries": list(a.sub_queries),
        "steps": [
            {
                "text": st.text,
                "groundings": [
                    {"stream_id": g.stream_id, "t_start": round(g.t_start, 3), "t_end": round(g.t_end, 3)}
                    for g in st.groundings
                ],
            }
            for st in a.steps
        ],
        "thin_evidence": a.thin_evidence,
        "timings_ms": {k: round(v, 1) for k, v in sorted(a.timings_ms.items())},
        "markdown": a.markdown(),
    }


def article_progress_to_proto(p: ArticleProgress) -> pb.ArticleProgress:
    """Counts are clamped at 0: the message's fields are unsigned, and a progress report must
    never be what fails a call."""
    return pb.ArticleProgress(
        stage=p.stage, done=max(0, int(p.done)), total=max(0, int(p.total)), message=p.message
    )


def article_progress_from_proto(msg: pb.ArticleProgress) -> ArticleProgress:
    return ArticleProgress(stage=msg.stage, done=msg.done, total=msg.total, message=msg.message)
