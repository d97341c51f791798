"""The REST/JSON API (``episodic serve --http-port``, ``episodic console``): a gRPC client of
the server in the same process (see :mod:`episodic.http_server`), so keys, scopes, validation,
admission and errors are exactly gRPC's, and each document is the CLI's ``--json`` document
for the same call (made by the same ``*_to_dict`` functions).

Routes (``/openapi.json`` documents them): ``GET /healthz``; ``GET /v1/streams``;
``GET /v1/streams/{id}/events``; ``GET /v1/streams/{id}/summaries``; ``DELETE /v1/streams/{id}``
(forget); ``GET /v1/segments/{id}`` and its media (:mod:`episodic.http_media`);
``POST /v1/search``, ``/v1/search/image``, ``/v1/ask``, ``/v1/locate``, ``/v1/recall``,
``/v1/articles``; ``GET``/``POST /v1/watches``, ``DELETE /v1/watches/{id}``, ``GET /v1/alerts``.
The console's static files are served at ``/``. Errors: :mod:`episodic.http_errors`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import anyio
import grpc
from fastapi import FastAPI, File, Form, Query, Request, UploadFile
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, StreamingResponse
from grpc_health.v1 import health_pb2, health_pb2_grpc

from episodic import api_article, api_convert, api_recall, api_records
from episodic.core.errors import InputError
from episodic.http_errors import ApiFailure, Guard, from_rpc_error, install_handlers
from episodic.http_models import (
    ArticleBody,
    AskBody,
    ErrorBody,
    LocateBody,
    RecallBody,
    SearchBody,
    WatchBody,
)
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc

LIST_TIMEOUT_S = 60.0  # listings, records, watches
MODEL_TIMEOUT_S = 300.0  # Ask, Locate, Recall (their deadline_s overrides it)
ARTICLE_TIMEOUT_S = 600.0
MAX_RECEIVE_BYTES = 16 * 1024 * 1024
UPLOAD_PATH = "/v1/search/image"
STREAM_THREADS = 32  # server-streaming calls read at once (each Article holds one while written)
_IMAGE_MAGIC = ((b"\xff\xd8\xff", "image/jpeg"), (b"\x89PNG\r\n\x1a\n", "image/png"))


class HttpContext:
    """What the handlers share: the stub over the private socket, the servicer (for media
    only), the media signer and the settings."""

    def __init__(self, settings: Any, grpc_target: str, servicer: Any, signer: Any) -> None:
        self.settings = settings
        self.servicer = servicer
        self.signer = signer
        options = [("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
                   ("grpc.max_send_message_length", MAX_RECEIVE_BYTES)]
        self.channel = grpc.insecure_channel(grpc_target, options=options)
        self.stub = pb_grpc.EpisodicMemoryStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)
        # an image is sent inside a SearchRequest, which must stay under the server's limit
        self.image_limit = min(settings.http_max_upload_bytes, settings.grpc_max_receive_bytes - 4096)
        self._streams: anyio.CapacityLimiter | None = None

    def streams_limiter(self) -> anyio.CapacityLimiter:
        """Threads for reading server-streaming calls (Article, WatchAlerts), apart from the
        pool that media and other blocking work use; made in the event loop on first use."""
        if self._streams is None:
            self._streams = anyio.CapacityLimiter(STREAM_THREADS)
        return self._streams

    def close(self) -> None:
        self.channel.close()


# -- calling the server ------------------------------------------------------------------------------
def _ctx(request: Request) -> HttpContext:
    return request.app.state.episodic


def _metadata(request: Request) -> tuple[tuple[str, str], ...]:
    """The caller's Authorization header, forwarded as gRPC metadata (nothing else is)."""
    auth = request.headers.get("authorization")
    if auth is None:
        return ()
    if not auth.isascii() or not auth.isprintable() or len(auth) > 4096:
        raise ApiFailure("UNAUTHENTICATED", "the Authorization header is malformed: send `Bearer <key>`")
    return (("authorization", auth),)


def _message(cls: Any, **fields: Any) -> Any:
    """A request message; a value protobuf cannot hold (a lone surrogate) is INVALID_ARGUMENT."""
    optional = {k: fields.pop(k) for k in ("t_min", "t_max") if k in fields}
    try:
        msg = cls(**fields)
        for k, v in optional.items():
            if v is not None:
                setattr(msg, k, v)
    except (ValueError, TypeError) as exc:
        raise ApiFailure("INVALID_ARGUMENT", f"a field could not be sent: {exc}") from None
    return msg


async def _call(request: Request, method: str, msg: Any, timeout: float) -> Any:
    """One unary call, awaited without holding a thread: a request waiting on the model (in
    gRPC's line) never takes a thread that listings need, so HTTP keeps gRPC's admission."""
    return await _await(getattr(_ctx(request).stub, method).future(msg, timeout=timeout, metadata=_metadata(request)))


async def _await(call: Any) -> Any:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def transfer(f: Any) -> None:
        if done.done():
            return
        if f.cancelled():
            done.set_exception(ApiFailure("CANCELLED", "the call was cancelled"))
        elif f.exception() is not None:
            done.set_exception(f.exception())
        else:
            done.set_result(f.result())

    def when_done(f: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile (the server stopped)
            loop.call_soon_threadsafe(transfer, f)

    call.add_done_callback(when_done)
    try:
        return await done
    except grpc.RpcError as exc:
        raise from_rpc_error(exc) from None
    except asyncio.CancelledError:  # the HTTP client went away: so does the call
        call.cancel()
        raise


def _stream(request: Request, method: str, msg: Any, timeout: float | None) -> Iterator[Any]:
    call = getattr(_ctx(request).stub, method)(msg, timeout=timeout, metadata=_metadata(request))
    try:
        yield from call
    except grpc.RpcError as exc:
        raise from_rpc_error(exc) from None
    finally:
        call.cancel()


def _next(it: Iterator[Any]) -> Any:
    return next(it, None)


async def _drain(request: Request, method: str, msg: Any, timeout: float | None) -> AsyncIterator[Any]:
    """A server-streaming call's messages, read on threads of the streams' own limiter (never
    the pool the other handlers use)."""
    it = _stream(request, method, msg, timeout)
    limiter = _ctx(request).streams_limiter()
    try:
        while (item := await anyio.to_thread.run_sync(_next, it, limiter=limiter)) is not None:
            yield item
    finally:
        await anyio.to_thread.run_sync(it.close, limiter=limiter)


def _rebase(request: Request, msgs: Any, *fields: str) -> None:
    """Signed URLs as this request reached the server: without ``http_public_url`` they are
    made for ``http://http_host:http_port``, which a browser that opened ``localhost`` (or
    the machine's name) sees as another origin, refused by the console's CSP; the path and
    signature stay the same."""
    ctx = _ctx(request)
    if ctx.settings.http_public_url or ctx.servicer.links is None:
        return
    made, here = ctx.servicer.links.base_url, str(request.base_url).rstrip("/")
    if made == here:
        return
    for msg in msgs:
        for name in fields:
            url = getattr(msg, name)
            if url.startswith(made + "/"):
                setattr(msg, name, here + url[len(made):])


def _json(doc: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(doc, status_code=status)


# -- the app -----------------------------------------------------------------------------------------
def create_app(settings: Any, grpc_target: str, servicer: Any, signer: Any) -> FastAPI:
    from episodic import http_media

    app = FastAPI(
        title="episodic", version="1",
        description="Streaming episodic memory for video: the REST/JSON API beside gRPC "
                    "(episodic.v1.EpisodicMemory). Send `Authorization: Bearer <key>` when the "
                    "server has API keys; errors are `{\"error\": {\"code\", \"message\"}}`.",
        docs_url=None, redoc_url=None,  # their pages load scripts from a CDN: the CSP refuses that
    )
    app.state.episodic = HttpContext(settings, grpc_target, servicer, signer)
    install_handlers(app)
    app.include_router(http_media.router)
    _routes(app)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    if settings.server.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware, allow_origins=list(settings.server.cors_origins), allow_credentials=False,
            allow_methods=["GET", "POST", "DELETE"], allow_headers=["Authorization", "Content-Type", "Range"],
            expose_headers=["Content-Range", "Accept-Ranges", "Content-Length", "Retry-After"], max_age=600,
        )
    json_limit = max(64 * 1024, settings.grpc_max_receive_bytes)
    app.add_middleware(Guard, json_limit=json_limit, upload_limit=settings.http_max_upload_bytes,
                       upload_paths=frozenset({UPLOAD_PATH}))
    from episodic.console import static_dir

    if static_dir().is_dir():
        from starlette.staticfiles import StaticFiles

        app.mount("/", StaticFiles(directory=static_dir(), html=True), name="console")
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, with the real error body for 422 and the bearer scheme."""
    if app.openapi_schema:
        return app.openapi_schema
    doc = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas["ErrorBody"] = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, sub in schemas["ErrorBody"].pop("$defs", {}).items():
        schemas[name] = sub
    error = {"description": "Error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
    for item in doc.get("paths", {}).values():
        for op in item.values():
            responses = op.setdefault("responses", {})
            if "422" in responses:
                responses["422"] = {**error, "description": "A field of the wrong type, or unknown"}
            responses.setdefault("default", error)
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    doc["security"] = [{"bearer": []}, {}]
    app.openapi_schema = doc
    return doc


def _routes(app: FastAPI) -> None:
    @app.get("/healthz", tags=["health"], summary="Readiness: SERVING once the models are loaded")
    async def healthz(request: Request) -> JSONResponse:
        name = pb.DESCRIPTOR.services_by_name["EpisodicMemory"].full_name
        try:
            reply = await _await(_ctx(request).health.Check.future(health_pb2.HealthCheckRequest(service=name),
                                                                   timeout=5))
        except ApiFailure as exc:
            return _json({"status": "UNAVAILABLE", "error": {"code": exc.code, "message": exc.message}}, 503)
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        return _json({"status": status}, 200 if status == "SERVING" else 503)

    # -- records ---------------------------------------------------------------------------------
    @app.get("/v1/streams", tags=["records"], summary="The streams the key may see (episodic streams --json)")
    async def streams(request: Request, with_storage: bool = False) -> JSONResponse:
        reply = await _call(request, "ListStreams", pb.ListStreamsRequest(with_storage=with_storage), LIST_TIMEOUT_S)
        return _json({"streams": [api_records.stream_to_dict(s) for s in reply.streams]})

    @app.get("/v1/streams/{stream_id}/events", tags=["records"], summary="One stream's events, paged")
    async def events(request: Request, stream_id: str, t_min: float | None = None, t_max: float | None = None,
               page_size: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0, page_token: str = "") -> JSONResponse:
        msg = _message(pb.ListEventsRequest, stream_ids=[stream_id], t_min=t_min, t_max=t_max,
                       page_size=page_size, page_token=page_token)
        reply = await _call(request, "ListEvents", msg, LIST_TIMEOUT_S)
        return _json({"events": [api_records.event_to_dict(e) for e in reply.events],
                      "next_page_token": reply.next_page_token})

    @app.get("/v1/streams/{stream_id}/summaries", tags=["records"],
             summary="The day at a glance: one stream's summary windows (episodic summaries --json)")
    async def summaries(request: Request, stream_id: str, window: str = "", t_min: float | None = None,
                  t_max: float | None = None) -> JSONResponse:
        from episodic import api_summaries

        msg = _message(pb.ListSummariesRequest, stream_id=stream_id, window=window, t_min=t_min, t_max=t_max)
        reply = await _call(request, "ListSummaries", msg, LIST_TIMEOUT_S)
        return _json(api_summaries.summary_list_to_dict(api_summaries.summary_list_from_proto(reply)))

    @app.delete("/v1/streams/{stream_id}", tags=["records"],
                summary="Forget a stream, or the stretch a time range overlaps (episodic forget --json)")
    async def forget(request: Request, stream_id: str, t_min: float | None = None, t_max: float | None = None) -> JSONResponse:
        from episodic import api_forget

        msg = _message(pb.ForgetRequest, stream_id=stream_id, t_min=t_min, t_max=t_max)
        reply = await _call(request, "Forget", msg, ARTICLE_TIMEOUT_S)
        return _json(api_forget.forget_report_to_dict(api_forget.forget_report_from_proto(reply)))

    @app.get("/v1/segments/{segment_id}", tags=["records"],
             summary="One segment (or an event's segment): the `episodic segments --json` entry, with signed media URLs")
    async def segment(request: Request, segment_id: str) -> JSONResponse:
        reply = await _call(request, "GetSegment", _message(pb.GetSegmentRequest, id=segment_id), LIST_TIMEOUT_S)
        _rebase(request, [reply], "thumbnail_url")
        _rebase(request, reply.snippets, "url")
        return _json(api_records.segment_to_dict(reply))

    # -- asking ----------------------------------------------------------------------------------
    @app.post("/v1/search", tags=["asking"], summary="Moments that match a description (episodic search --json)")
    async def search(request: Request, body: SearchBody) -> JSONResponse:
        msg = _message(pb.SearchRequest, query=body.query, stream_ids=body.stream_ids, t_min=body.t_min,
                       t_max=body.t_max, top_k=body.top_k, like_segment_id=body.like_segment_id)
        reply = await _call(request, "Search", msg, body.deadline_s or MODEL_TIMEOUT_S)
        return _json(_moments(request, reply))

    @app.post(UPLOAD_PATH, tags=["asking"], summary="Moments whose key frames look like a picture (multipart)")
    async def search_image(
        request: Request,
        image: Annotated[UploadFile, File(description="JPEG, PNG or WebP")],
        query: Annotated[str, Form()] = "",
        stream_ids: Annotated[list[str] | None, Form()] = None,
        top_k: Annotated[int, Form(ge=-(2**31), le=2**31 - 1)] = 0,
        t_min: Annotated[float | None, Form()] = None,
        t_max: Annotated[float | None, Form()] = None,
    ) -> JSONResponse:
        limit = _ctx(request).image_limit
        data = await image.read(limit + 1)
        if len(data) > limit:
            raise ApiFailure("RESOURCE_EXHAUSTED", f"the image is larger than {limit} bytes", 413)
        if not _is_image(data):
            raise ApiFailure("INVALID_ARGUMENT", "the upload is not a JPEG, PNG or WebP image")
        msg = _message(pb.SearchRequest, query=query, stream_ids=stream_ids or [], t_min=t_min, t_max=t_max,
                       top_k=top_k, image=data)
        reply = await _call(request, "Search", msg, MODEL_TIMEOUT_S)
        return _json(_moments(request, reply))

    @app.post("/v1/ask", tags=["asking"], summary="Answer a question, with its evidence (episodic ask --json)")
    async def ask(request: Request, body: AskBody) -> JSONResponse:
        msg = _message(pb.AskRequest, question=body.question, options=body.choices, stream_ids=body.stream_ids,
                       t_min=body.t_min, t_max=body.t_max, top_k=body.top_k, inspect=body.inspect)
        reply = await _call(request, "Ask", msg, body.deadline_s or MODEL_TIMEOUT_S)
        return _json(api_convert.ask_result_to_dict(api_convert.ask_result_from_proto(reply)))

    @app.post("/v1/locate", tags=["asking"], summary="Look again at the stored video (episodic locate --json)")
    async def locate(request: Request, body: LocateBody) -> JSONResponse:
        msg = _message(pb.LocateRequest, query=body.query, stream_ids=body.stream_ids, t_min=body.t_min,
                       t_max=body.t_max, max_frames=body.max_frames, top_k=body.top_k)
        reply = await _call(request, "Locate", msg, body.deadline_s or MODEL_TIMEOUT_S)
        return _json(api_convert.locate_result_to_dict(api_convert.locate_result_from_proto(reply)))

    @app.post("/v1/recall", tags=["asking"], summary="Find a half-remembered recording (episodic recall --json)")
    async def recall(request: Request, body: RecallBody) -> JSONResponse:
        fields = body.model_dump(exclude={"deadline_s"})
        reply = await _call(request, "Recall", _message(pb.RecallRequest, **fields), body.deadline_s or MODEL_TIMEOUT_S)
        return _json(api_recall.recall_result_to_dict(api_recall.recall_result_from_proto(reply)))

    @app.post("/v1/articles", tags=["asking"],
              summary="Write a cited article (episodic article --json); Accept: text/event-stream streams progress")
    async def articles(request: Request, body: ArticleBody) -> Any:
        try:
            req = api_article.article_request(body.request, body.style, body.stream_ids, body.t_min, body.t_max,
                                              body.fusion or None, body.max_sub_queries)
        except InputError as exc:  # the server's own validator: the same message
            raise ApiFailure("INVALID_ARGUMENT", str(exc)) from None
        msg = api_article.article_request_to_proto(req)
        timeout = body.deadline_s or ARTICLE_TIMEOUT_S
        if "text/event-stream" in request.headers.get("accept", ""):
            return StreamingResponse(_article_events(request, msg, timeout), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-store"})
        async with contextlib.aclosing(_drain(request, "Article", msg, timeout)) as updates:
            async for update in updates:
                if update.WhichOneof("update") == "article":
                    return _json(api_article.article_to_dict(api_article.article_from_proto(update.article)))
        raise ApiFailure("UNAVAILABLE", "the Article call ended without an article")

    # -- standing queries ------------------------------------------------------------------------
    @app.get("/v1/watches", tags=["watches"], summary="The key's watches (episodic watch list --json)")
    async def watches(request: Request) -> JSONResponse:
        from episodic import api_watch

        reply = await _call(request, "ListWatches", pb.ListWatchesRequest(), LIST_TIMEOUT_S)
        return _json({"watches": [api_watch.watch_from_reply(w).public() for w in reply.watches]})

    @app.post("/v1/watches", tags=["watches"], status_code=201, summary="Register a standing query")
    async def add_watch(request: Request, body: WatchBody) -> JSONResponse:
        from episodic import api_watch

        watch = _message(pb.Watch, query=body.query, kind=body.kind, stream_ids=body.stream_ids,
                         within_s=body.within_s or 0.0, by_time=body.by_time, then=body.then, period=body.period,
                         cooldown_s=body.cooldown_s, webhook_url=body.webhook_url)
        reply = await _call(request, "AddWatch", pb.AddWatchRequest(watch=watch), LIST_TIMEOUT_S)
        return _json({"watch": api_watch.watch_from_reply(reply.watch).public(),
                      "webhook_secret": reply.webhook_secret}, 201)

    @app.delete("/v1/watches/{watch_id}", tags=["watches"], summary="Remove one of the key's watches")
    async def remove_watch(request: Request, watch_id: str) -> JSONResponse:
        reply = await _call(request, "RemoveWatch", _message(pb.RemoveWatchRequest, id=watch_id), LIST_TIMEOUT_S)
        return _json({"removed": reply.removed})

    @app.get("/v1/alerts", tags=["watches"], summary="The key's alerts after a position of the alert log")
    async def alerts(request: Request, after_seq: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
               watch_ids: Annotated[list[str] | None, Query()] = None) -> JSONResponse:
        from episodic import api_watch

        msg = _message(pb.WatchAlertsRequest, after_seq=after_seq, watch_ids=watch_ids or [])
        found = [api_watch.alert_from_proto(a).to_dict() async for a in _drain(request, "WatchAlerts", msg, LIST_TIMEOUT_S)]
        return _json({"alerts": found})


def _moments(request: Request, reply: Any) -> dict[str, Any]:
    _rebase(request, reply.moments, "snippet_url", "thumbnail_url")
    return {"moments": [api_convert.moment_to_dict(api_convert.moment_from_proto(m)) for m in reply.moments]}


def _is_image(data: bytes) -> bool:
    if any(data.startswith(magic) for magic, _ in _IMAGE_MAGIC):
        return True
    return len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP"


async def _article_events(request: Request, msg: Any, timeout: float) -> AsyncIterator[bytes]:
    """Server-sent events: ``progress`` (ArticleProgress fields) while it is written, then one
    ``article`` (the article document) or one ``error`` (the error body)."""

    def event(name: str, doc: Any) -> bytes:
        return f"event: {name}\ndata: {json.dumps(doc, ensure_ascii=False)}\n\n".encode()

    try:
        async with contextlib.aclosing(_drain(request, "Article", msg, timeout)) as updates:
            async for update in updates:
                if update.WhichOneof("update") == "progress":
                    p = update.progress
                    yield event("progress", {"stage": p.stage, "done": p.done, "total": p.total, "message": p.message})
                else:
                    yield event("article", api_article.article_to_dict(api_article.article_from_proto(update.article)))
    except ApiFailure as exc:
        yield event("error", {"error": {"code": exc.code, "message": exc.message}})
