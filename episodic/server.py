"""The gRPC query server: ``episodic.v1.EpisodicMemory`` plus standard health and reflection.

What it promises, and where each promise is kept:

* **Access control** (:class:`ApiKeys`, :class:`Caller`): keys come from ``api_keys_file``,
  each scoped to stream ids or to all (``["*"]``). A call's scope is the intersection of what
  it asks for and what its key may see; naming a stream outside the key is PERMISSION_DENIED,
  and an id (segment, event, snippet) outside it is NOT_FOUND with the same message as an id
  that does not exist, so a key cannot probe for other tenants' records. Keys are compared by
  their SHA-256 digests, so the lookup time does not depend on how much of a key is right.
  With no keys configured anyone may call, so the server then refuses to bind anything but
  loopback.
* **Typed errors** (:func:`_status_for`): InputError → INVALID_ARGUMENT with its message;
  StoreError/ModelError → UNAVAILABLE and anything unexpected → INTERNAL, both with generic
  messages (their details, which can hold paths and URIs, go to the server log only).
* **Deadlines**: the gRPC deadline is checked before work starts and handed to
  ``MemoryQA.ask`` and ``ArticleService.write`` as ``deadline_s``; ``DeadlineExceeded``
  becomes DEADLINE_EXCEEDED.
* **Bad input never takes the server down**: every field is validated before it reaches the
  store (which renders filters from validated values only), request messages are capped at
  ``grpc_max_receive_bytes``, and a failing call is answered and logged, not raised further.

Calls run on a thread pool (``grpc_max_workers``); the store and snippet store are opened
before the server starts, so threads never race to create them. Ask and Article hold a
language model, so at most ``grpc_max_concurrent_asks`` answers or articles are computed at
once and the rest queue within their deadlines. Article runs the writing in a thread of its
own and streams its progress from there, so a cancelled call stops the work at the next
progress report instead of holding the model for nothing.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import ipaddress
import json
import logging
import math
import os
import queue
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import grpc
import tomllib
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from episodic import api_convert, metrics
from episodic.config import Settings
from episodic.core.article import ArticleProgress
from episodic.core.errors import ConfigError, DeadlineExceeded, InputError, ModelError, StoreError
from episodic.core.records import ShortTermMemory, ThetaEvent, validate_stream_id
from episodic.memory.milvus_filters import check_id
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["EpisodicMemory"].full_name
CHUNK_BYTES = 1024 * 1024  # DownloadSnippet chunk size (the proto promises <= 1 MiB)
PAGE_SIZE_DEFAULT = 100
PAGE_SIZE_MAX = 500
MAX_PAGE_TOKEN_CHARS = 2048
MAX_SEND_BYTES = 16 * 1024 * 1024  # a 500-event page of 4 KiB summaries stays far below this
MIN_API_KEY_CHARS = 16
ALL_STREAMS = "*"
_LIST_ALL = 1 << 62  # list_events' limit when the server pages by itself
_NO_DEADLINE_S = 1e8  # time_remaining() above this means the caller set no deadline
_POLL_S = 0.25  # how often a streaming call waiting on its worker checks for cancellation

R = TypeVar("R")


class ApiError(Exception):
    """A failure the caller should see as exactly this status and message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- access control ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Caller:
    """Who is calling: a key fingerprint (for logs, never the key) and the streams it may see
    (None = all streams)."""

    key_id: str
    streams: frozenset[str] | None

    def may_see(self, stream_id: str) -> bool:
        return self.streams is None or stream_id in self.streams

    def scope(self, requested: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """The streams a call may touch: the requested ones if all are allowed, else
        PERMISSION_DENIED; with none requested, everything the key allows (None = all)."""
        if requested is None:
            return None if self.streams is None else tuple(sorted(self.streams))
        denied = [s for s in requested if not self.may_see(s)]
        if denied:
            raise ApiError(
                grpc.StatusCode.PERMISSION_DENIED,
                f"this API key may not read stream(s) {', '.join(map(repr, denied[:5]))}",
            )
        return requested


ANONYMOUS = Caller(key_id="anonymous", streams=None)


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


class ApiKeys:
    """The configured API keys: digest → allowed streams (None = all)."""

    def __init__(self, mapping: dict[str, list[str]], source: str = "api keys") -> None:
        self._scopes: dict[bytes, Caller] = {}
        for key, streams in mapping.items():
            if not isinstance(key, str) or len(key) < MIN_API_KEY_CHARS or not key.isprintable() or key != key.strip():
                raise ConfigError(
                    f"{source}: every API key must be at least {MIN_API_KEY_CHARS} printable "
                    "characters without surrounding spaces (e.g. `python -c 'import secrets; "
                    "print(secrets.token_urlsafe(32))'`)"
                )
            if not isinstance(streams, list) or not streams or not all(isinstance(s, str) for s in streams):
                raise ConfigError(
                    f"{source}: the value of each key must be a non-empty list of stream ids "
                    'or ["*"] for all streams'
                )
            if ALL_STREAMS in streams:
                allowed = None
            else:
                try:
                    allowed = frozenset(validate_stream_id(s) for s in streams)
                except InputError as exc:
                    raise ConfigError(f"{source}: {exc}") from None
            key_id = _digest(key).hex()[:12]
            self._scopes[_digest(key)] = Caller(key_id=key_id, streams=allowed)

    @classmethod
    def from_file(cls, path: str | Path) -> ApiKeys:
        """Read a TOML file (``"<key>" = ["cam1"]``, optionally under ``[api_keys]``) or a
        JSON object of the same shape (when the name ends in ``.json``)."""
        p = Path(path).expanduser()
        try:
            text = p.read_text(encoding="utf-8")
            mode = p.stat().st_mode
        except OSError as exc:
            raise ConfigError(f"cannot read api_keys_file {p}: {exc.strerror or exc}") from None
        # other users, not the group: Kubernetes mounts secrets group-readable (fsGroup)
        if mode & stat.S_IROTH:
            log.warning("api_keys_file %s is readable by every user; chmod 600 (or 640) it", p)
        try:
            data = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"api_keys_file {p} is not valid {p.suffix.lstrip('.') or 'TOML'}: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"api_keys_file {p} must hold a mapping of key → stream ids")
        if set(data) == {"api_keys"} and isinstance(data["api_keys"], dict):
            data = data["api_keys"]
        return cls(data, source=f"api_keys_file {p}")

    def __len__(self) -> int:
        return len(self._scopes)

    def authenticate(self, metadata: tuple[tuple[str, Any], ...] | None) -> Caller:
        """The caller for a call's metadata, or UNAUTHENTICATED."""
        if not self._scopes:
            return ANONYMOUS
        presented: set[str] = set()
        for name, value in metadata or ():
            if not isinstance(value, str):
                continue
            if name == "authorization":
                scheme, _, token = value.strip().partition(" ")
                if scheme.lower() == "bearer" and token.strip():
                    presented.add(token.strip())
            elif name == "x-api-key" and value.strip():
                presented.add(value.strip())
        if not presented:
            raise ApiError(
                grpc.StatusCode.UNAUTHENTICATED,
                "missing API key: send metadata `authorization: Bearer <key>` or `x-api-key: <key>`",
            )
        if len(presented) > 1:
            raise ApiError(grpc.StatusCode.UNAUTHENTICATED, "more than one API key was sent")
        caller = self._scopes.get(_digest(presented.pop()))
        if caller is None:
            raise ApiError(grpc.StatusCode.UNAUTHENTICATED, "invalid API key")
        return caller


def load_api_keys(settings: Settings) -> ApiKeys:
    return ApiKeys.from_file(settings.api_keys_file) if settings.api_keys_file else ApiKeys({})


# -- errors ------------------------------------------------------------------------------------
def _status_for(exc: BaseException, method: str, caller: Caller | None) -> tuple[grpc.StatusCode, str]:
    """Map an exception to the status the client sees, logging what the client must not."""
    who = caller.key_id if caller else "-"
    if isinstance(exc, ApiError):
        return exc.code, exc.message
    if isinstance(exc, DeadlineExceeded):
        return grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the answer was ready"
    if isinstance(exc, InputError):
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc)
    if isinstance(exc, StoreError):
        log.warning("%s (key %s): store unavailable: %s", method, who, exc)
        return grpc.StatusCode.UNAVAILABLE, "the memory store is unavailable; try again later"
    if isinstance(exc, ModelError):
        log.warning("%s (key %s): model unavailable: %s", method, who, exc)
        return grpc.StatusCode.UNAVAILABLE, "a model backend is unavailable; try again later"
    log.error("%s (key %s) failed", method, who, exc_info=exc)
    return grpc.StatusCode.INTERNAL, "internal error (details are in the server log)"


def _check_deadline(context: grpc.ServicerContext) -> float | None:
    """Seconds left for this call (None = no deadline); DEADLINE_EXCEEDED when none are."""
    remaining = context.time_remaining()
    if remaining is None or remaining > _NO_DEADLINE_S:
        return None
    if remaining <= 0:
        raise ApiError(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the call started")
    return remaining


# -- page tokens -------------------------------------------------------------------------------
def _query_fingerprint(streams: tuple[str, ...] | None, t_min: float | None, t_max: float | None) -> str:
    """Ties a page token to the query it came from: reusing it for another query is an error,
    not a silently wrong page."""
    raw = json.dumps([sorted(streams) if streams is not None else None, t_min, t_max])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _encode_token(last: tuple[str, float, str], fingerprint: str) -> str:
    raw = json.dumps([1, *last, fingerprint], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_token(token: str, fingerprint: str) -> tuple[str, float, str]:
    """The (stream_id, t_start, id) of the last event already returned."""
    invalid = ApiError(grpc.StatusCode.INVALID_ARGUMENT, "invalid page_token")
    if len(token) > MAX_PAGE_TOKEN_CHARS:
        raise invalid
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        version, sid, t, eid, fp = json.loads(raw)
    except (ValueError, TypeError):
        raise invalid from None
    if version != 1 or not all(isinstance(v, str) for v in (sid, eid, fp)):
        raise invalid
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        raise invalid
    if fp != fingerprint:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "page_token belongs to a different query: repeat stream_ids, t_min and t_max unchanged",
        )
    return sid, float(t), eid


# -- event paging ------------------------------------------------------------------------------
EventKey = tuple[str, float, str]
WINDOW_S_PER_EVENT = 10.0  # first guess of stream seconds per event (segments last 5-10 s)
MAX_WINDOW_S = 1e7  # beyond this (about 4 months of stream time) read the rest of the stream


def _event_key(e: ThetaEvent) -> EventKey:
    """The listing order: (stream_id, t_start, id), as the store sorts."""
    return (e.stream_id, e.t_start, e.id)


def page_events(
    store: Any,
    streams: tuple[str, ...] | None,
    t_min: float | None,
    t_max: float | None,
    after: EventKey | None,
    limit: int,
) -> list[ThetaEvent]:
    """Up to ``limit`` events overlapping [t_min, t_max] whose key follows ``after``, in
    (stream_id, t_start, id) order; ``streams`` None means every stream.

    The store filters but neither sorts nor skips, so reading every match for every page would
    cost O(all events) per page (0.7 s per page at 5,000 events on Milvus Lite). With a known
    set of streams, each stream is read in time windows instead: a window "t_start <= hi"
    returns exactly a prefix of that stream's order, so it is widened (×4) only until it holds
    enough events, and the rest of a stream is read unbounded once the window passes the
    stream's recorded end (or there is no stream record), so live streams lose nothing. With
    no stream set (an all-streams key listing everything) the streams are not known up front,
    and the whole match is read and sorted.
    """
    if limit <= 0:
        return []
    if streams is None:
        rows = store.list_events(stream_id=None, t_min=t_min, t_max=t_max, limit=_LIST_ALL, with_vectors=False)
        return [e for e in rows if after is None or _event_key(e) > after][:limit]
    ends = {s.stream_id: s.t_end for s in store.list_streams()}
    out: list[ThetaEvent] = []
    for sid in sorted(streams):
        if after is not None and sid < after[0]:
            continue
        cursor = after if after is not None and sid == after[0] else None
        out += _stream_page(store, sid, t_min, t_max, cursor, limit - len(out), ends.get(sid))
        if len(out) >= limit:
            break
    return out[:limit]


def _stream_page(
    store: Any,
    sid: str,
    t_min: float | None,
    t_max: float | None,
    cursor: EventKey | None,
    need: int,
    stream_end: float | None,
) -> list[ThetaEvent]:
    """The first ``need`` events of one stream after ``cursor`` (see :func:`page_events`)."""
    lo = t_min
    if cursor is not None:  # later events start at or after the cursor, so they end after it
        lo = cursor[1] if lo is None else max(lo, cursor[1])
    anchor = lo if lo is not None else 0.0
    width = need * WINDOW_S_PER_EVENT
    while True:
        window_end = anchor + width
        final = (
            stream_end is None
            or window_end >= stream_end
            or (t_max is not None and window_end >= t_max)
            or width > MAX_WINDOW_S
        )
        hi = t_max if final else window_end
        rows = store.list_events(stream_id=sid, t_min=lo, t_max=hi, limit=_LIST_ALL, with_vectors=False)
        if cursor is not None:
            rows = [e for e in rows if _event_key(e) > cursor]
        if len(rows) >= need or final:
            return rows[:need]
        width *= 4


# -- the service -------------------------------------------------------------------------------
def _unary(method: Callable[..., R]) -> Callable[..., R]:
    """Authenticate, check the deadline, run, and turn any failure into a gRPC status."""

    @functools.wraps(method)
    def wrapper(self: EpisodicServicer, request: Any, context: grpc.ServicerContext) -> R:
        caller: Caller | None = None
        started = time.perf_counter()
        try:
            caller = self.keys.authenticate(context.invocation_metadata())
            deadline = _check_deadline(context)
            result = method(self, request, context, caller, deadline)
            metrics.observe_rpc(method.__name__, "OK", time.perf_counter() - started)
            return result
        except Exception as exc:  # every failure becomes a status; none escapes to grpc
            code, message = _status_for(exc, method.__name__, caller)
        metrics.observe_rpc(method.__name__, code.name, time.perf_counter() - started)
        context.abort(code, message)
        raise AssertionError("unreachable: context.abort raises")

    return wrapper


def _streaming(method: Callable[..., Iterator[R]]) -> Callable[..., Iterator[R]]:
    """:func:`_unary` for server-streaming methods (errors may come mid-stream)."""

    @functools.wraps(method)
    def wrapper(self: EpisodicServicer, request: Any, context: grpc.ServicerContext) -> Iterator[R]:
        caller: Caller | None = None
        started = time.perf_counter()
        try:
            caller = self.keys.authenticate(context.invocation_metadata())
            deadline = _check_deadline(context)
            yield from method(self, request, context, caller, deadline)
            metrics.observe_rpc(method.__name__, "OK", time.perf_counter() - started)
            return
        except Exception as exc:
            code, message = _status_for(exc, method.__name__, caller)
        metrics.observe_rpc(method.__name__, code.name, time.perf_counter() - started)
        context.abort(code, message)

    return wrapper


def _optional(msg: Any, name: str) -> float | None:
    return getattr(msg, name) if msg.HasField(name) else None


class EpisodicServicer(pb_grpc.EpisodicMemoryServicer):
    """``episodic.v1.EpisodicMemory`` over the configured store, snippets and MemoryQA."""

    def __init__(self, components: Any, keys: ApiKeys, max_concurrent_asks: int = 1) -> None:
        self.components = components
        self.keys = keys
        self._qa: Any = None
        self._qa_lock = threading.Lock()
        self._articles: Any = None
        self._articles_lock = threading.Lock()
        self._asks = threading.BoundedSemaphore(max_concurrent_asks)

    # -- helpers -----------------------------------------------------------------------------
    def qa(self) -> Any:
        """The MemoryQA, built on first use (it loads models; listing never needs it)."""
        with self._qa_lock:
            if self._qa is None:
                from episodic.services.qa import MemoryQA

                self._qa = MemoryQA(self.components)
            return self._qa

    def articles(self) -> Any:
        """The ArticleService, built on first use over the same MemoryQA as Ask (one set of
        models and one vector cache for both)."""
        with self._articles_lock:
            if self._articles is None:
                from episodic.services.articles import ArticleService

                self._articles = ArticleService(self.components, qa=self.qa())
            return self._articles

    def _segment(self, segment_or_event_id: str, caller: Caller) -> ShortTermMemory:
        """The segment a caller may see, by segment id or event id; NOT_FOUND otherwise
        (the same message whether it does not exist or belongs to another key)."""
        ident = check_id(segment_or_event_id, "segment id")
        store = self.components.store
        memory = None
        if ident.endswith(".e"):  # event ids end in ".e"; segment ids never do
            event = store.get_event(ident)
            if event is not None and caller.may_see(event.stream_id):
                memory = store.get_memory(event.memory_id, with_vectors=False)
        else:
            memory = store.get_memory(ident, with_vectors=False)
        if memory is None or not caller.may_see(memory.stream_id):
            raise ApiError(grpc.StatusCode.NOT_FOUND, f"no segment {ident!r}")
        return memory

    # -- Ask and Search ----------------------------------------------------------------------
    @_unary
    def Ask(self, request: pb.AskRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.AskResponse:  # noqa: N802
        req = api_convert.ask_request_from_proto(request, deadline)
        req = replace(req, scope=replace(req.scope, stream_ids=caller.scope(req.scope.stream_ids)))
        if req.scope.stream_ids == ():
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, "this API key may not read any stream")
        qa = self.qa()
        if not self._asks.acquire(timeout=deadline):
            raise ApiError(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed while waiting for a free model")
        try:
            if deadline is not None:  # the time spent in line counts against the deadline
                req = replace(req, deadline_s=_check_deadline(context))
            result = qa.ask(req)
        finally:
            self._asks.release()
        metrics.ASKS.labels(result.pathway.value).inc()
        leaked = sorted({e.stream_id for e in result.evidence if not caller.may_see(e.stream_id)})
        if leaked:  # the answer text may rest on them: refuse rather than filter
            raise RuntimeError(f"MemoryQA.ask cited streams outside the request scope: {leaked}")
        return api_convert.ask_result_to_proto(result)

    @_unary
    def Search(self, request: pb.SearchRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.SearchResponse:  # noqa: N802
        query, scope, top_k = api_convert.search_request_from_proto(request)
        scope = replace(scope, stream_ids=caller.scope(scope.stream_ids))
        if scope.stream_ids == ():
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, "this API key may not read any stream")
        moments = self.qa().search(query, scope, top_k, deadline_s=deadline)
        visible = [m for m in moments if caller.may_see(m.stream_id)]
        if len(visible) != len(moments):
            log.error("Search (key %s): MemoryQA.search returned moments outside the scope", caller.key_id)
        return pb.SearchResponse(moments=[api_convert.moment_to_proto(m) for m in visible[:top_k]])

    # -- Article -----------------------------------------------------------------------------
    @_streaming
    def Article(self, request: pb.ArticleRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> Iterator[pb.ArticleUpdate]:  # noqa: N802
        req = api_convert.article_request_from_proto(request, deadline)
        req = replace(req, scope=replace(req.scope, stream_ids=caller.scope(req.scope.stream_ids)))
        if req.scope.stream_ids == ():
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, "this API key may not read any stream")
        service = self.articles()
        if not self._asks.acquire(timeout=deadline):
            raise ApiError(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed while waiting for a free model")
        run = _ArticleRun(service)
        try:
            if deadline is not None:  # the time spent in line counts against the deadline
                req = replace(req, deadline_s=_check_deadline(context))
            run.start(req, self._asks)  # from here the worker releases the semaphore
        except BaseException:
            self._asks.release()
            raise
        article: Any = None
        try:
            for item in run.updates(context):
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, ArticleProgress):
                    yield pb.ArticleUpdate(progress=api_convert.article_progress_to_proto(item))
                else:
                    article = item
        finally:
            run.cancel()  # a no-op once the article is written
        if article is None:
            return  # cancelled, or the deadline passed: nobody is listening any more
        leaked = sorted(
            {c.stream_id for c in article.citations if not caller.may_see(c.stream_id)}
            | {c.stream_id for c in article.claims if not caller.may_see(c.stream_id)}
            | {g.stream_id for st in article.steps for g in st.groundings if not caller.may_see(g.stream_id)}
        )
        if leaked:  # the text may rest on them: refuse rather than filter
            raise RuntimeError(f"ArticleService.write cited streams outside the request scope: {leaked}")
        yield pb.ArticleUpdate(article=api_convert.article_to_proto(article))

    # -- reading the store -------------------------------------------------------------------
    @_unary
    def ListEvents(self, request: pb.ListEventsRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.ListEventsResponse:  # noqa: N802
        requested = api_convert.check_stream_ids(list(request.stream_ids))
        streams = caller.scope(requested)
        t_min, t_max = api_convert.check_time_range(_optional(request, "t_min"), _optional(request, "t_max"))
        page_size = request.page_size or PAGE_SIZE_DEFAULT
        if not 1 <= page_size <= PAGE_SIZE_MAX:
            raise InputError(f"page_size must be between 1 and {PAGE_SIZE_MAX}, got {request.page_size}")
        fingerprint = _query_fingerprint(requested, t_min, t_max)
        after = _decode_token(request.page_token, fingerprint) if request.page_token else None
        events = page_events(self.components.store, streams, t_min, t_max, after, page_size + 1)
        visible = [e for e in events if caller.may_see(e.stream_id)]
        if len(visible) != len(events):  # page_events only reads `streams`: a bug if this fires
            raise RuntimeError("page_events returned events outside the caller's streams")
        page, more = visible[:page_size], len(visible) > page_size
        token = _encode_token(_event_key(page[-1]), fingerprint) if more else ""
        return pb.ListEventsResponse(events=[api_convert.event_to_proto(e) for e in page], next_page_token=token)

    @_unary
    def GetSegment(self, request: pb.GetSegmentRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.Segment:  # noqa: N802
        return api_convert.segment_to_proto(self._segment(request.id, caller))

    @_streaming
    def DownloadSnippet(self, request: pb.DownloadSnippetRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> Iterator[pb.SnippetChunk]:  # noqa: N802
        if request.index < 0:
            raise InputError(f"index must be >= 0, got {request.index}")
        memory = self._segment(request.segment_id, caller)
        if request.index >= len(memory.snippets):
            raise ApiError(
                grpc.StatusCode.NOT_FOUND,
                f"segment {memory.id!r} has {len(memory.snippets)} snippet(s); no index {request.index}",
            )
        uri = memory.snippets[request.index].uri
        try:
            f = self.components.snippets.open(uri)
        except InputError as exc:  # the record points at a missing or foreign file
            log.warning("DownloadSnippet (key %s): %s", caller.key_id, exc)
            raise ApiError(grpc.StatusCode.NOT_FOUND, f"the snippet file of segment {memory.id!r} is missing") from None
        content_type = api_convert.snippet_content_type(uri)
        with f:
            total = os.fstat(f.fileno()).st_size
            offset = 0
            while True:
                data = f.read(CHUNK_BYTES)
                if not data and offset > 0:
                    return
                if not context.is_active():  # cancelled, or the deadline passed
                    return
                yield pb.SnippetChunk(data=data, content_type=content_type, offset=offset, total_size=total)
                offset += len(data)
                if not data:
                    return  # an empty file: one chunk carrying the metadata

    @_unary
    def ListStreams(self, request: pb.ListStreamsRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.ListStreamsResponse:  # noqa: N802
        streams = [s for s in self.components.store.list_streams() if caller.may_see(s.stream_id)]
        return pb.ListStreamsResponse(streams=[api_convert.stream_to_proto(s) for s in streams])


class ArticleCancelled(Exception):  # noqa: N818 - it is a signal, not an error
    """Raised inside ``ArticleService.write`` (from its progress callback) once the call that
    wanted the article is gone, so the writing stops at the next stage boundary."""


class _ArticleRun:
    """One ``ArticleService.write`` in a thread of its own, reporting through a queue.

    Why a thread: gRPC streams what the handler yields, and write() reports progress through a
    callback, so the callback puts each report on a queue the handler drains and yields. The
    thread also lets the handler notice a cancelled call while write() is busy; it then sets
    ``cancelled`` and the next progress report raises :class:`ArticleCancelled` inside write().
    """

    def __init__(self, service: Any) -> None:
        self.service = service
        self.cancelled = threading.Event()
        self._queue: queue.Queue[Any] = queue.Queue()
        self._done = object()

    def start(self, req: Any, semaphore: threading.BoundedSemaphore) -> None:
        """Run write(req) in a daemon thread that releases ``semaphore`` when it is done."""

        def work() -> None:
            try:
                self._queue.put(self.service.write(req, progress=self._report))
            except BaseException as exc:  # handed to the handler, which maps it to a status
                self._queue.put(exc)
            finally:
                semaphore.release()
                self._queue.put(self._done)

        threading.Thread(target=work, name="episodic-article", daemon=True).start()

    def _report(self, progress: Any) -> None:
        if self.cancelled.is_set():
            raise ArticleCancelled("the Article call was cancelled")
        self._queue.put(progress)

    def updates(self, context: grpc.ServicerContext) -> Iterator[Any]:
        """Progress reports, then the article (or the exception write() raised); ends early,
        without either, when the call is cancelled or its deadline passes."""
        while True:
            try:
                item = self._queue.get(timeout=_POLL_S)
            except queue.Empty:
                if not context.is_active():
                    self.cancel()
                    return
                continue
            if item is self._done:
                return
            yield item

    def cancel(self) -> None:
        self.cancelled.set()


# -- building and running ----------------------------------------------------------------------
def _is_loopback(host: str) -> bool:
    h = host.strip("[]")
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def format_address(host: str, port: int) -> str:
    """``host:port``, with IPv6 literals in brackets as gRPC targets need them."""
    h = host.strip("[]")
    return f"[{h}]:{port}" if ":" in h else f"{h}:{port}"


def _server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    if not settings.tls_cert_path:
        return None
    try:
        cert = Path(settings.tls_cert_path).expanduser().read_bytes()
        key = Path(settings.tls_key_path).expanduser().read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the TLS certificate or key: {exc}") from None
    return grpc.ssl_server_credentials([(key, cert)])


@dataclass
class ServerHandle:
    """A built, bound (not yet started) server and what callers need to know about it."""

    server: grpc.Server
    address: str  # host:port actually bound (the port is real even when 0 was asked for)
    servicer: EpisodicServicer
    health: health.HealthServicer
    tls: bool

    def stop(self, grace_s: float | None = None) -> None:
        """Stop taking calls, give the ones in flight ``grace_s`` seconds, and wait."""
        self.health.enter_graceful_shutdown()
        self.server.stop(grace_s).wait()


def create_server(settings: Settings, components: Any = None) -> ServerHandle:
    """Build and bind the server (see :func:`build_server`); the handle also carries the bound
    address, the servicer and the health servicer."""
    keys = load_api_keys(settings)
    host = settings.grpc_host
    if not keys and not _is_loopback(host):
        raise ConfigError(
            f"refusing to serve on {host!r} without API keys: anyone who can reach it could read "
            "every stream. Set api_keys_file (key → stream ids), or bind 127.0.0.1"
        )
    credentials = _server_credentials(settings)
    if components is None:
        from episodic.pipeline import Components

        components = Components(settings)
    # Open the stores now: a locked or unreachable store fails here, at start, with its own
    # message, and worker threads never race to create them.
    _ = components.store, components.snippets

    servicer = EpisodicServicer(components, keys, settings.grpc_max_concurrent_asks)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=settings.grpc_max_workers, thread_name_prefix="episodic-grpc"),
        maximum_concurrent_rpcs=settings.grpc_max_concurrent_rpcs,
        options=[
            ("grpc.max_receive_message_length", settings.grpc_max_receive_bytes),
            ("grpc.max_send_message_length", MAX_SEND_BYTES),
            ("grpc.so_reuseport", 0),  # a second server on a busy port must fail, not share it
        ],
    )
    pb_grpc.add_EpisodicMemoryServicer_to_server(servicer, server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in ("", SERVICE_NAME):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
        server,
    )
    target = format_address(host, settings.grpc_port)
    try:
        if credentials is not None:
            port = server.add_secure_port(target, credentials)
        else:
            port = server.add_insecure_port(target)
    except RuntimeError as exc:
        raise ConfigError(f"cannot listen on {target}: {exc} (is another server using the port?)") from None
    if not port:
        raise ConfigError(f"cannot listen on {target} (is another server using the port?)")
    return ServerHandle(
        server=server,
        address=format_address(host, port),
        servicer=servicer,
        health=health_servicer,
        tls=credentials is not None,
    )


def build_server(settings: Settings, components: Any = None) -> grpc.Server:
    """A bound, not yet started gRPC server for ``episodic.v1.EpisodicMemory``, health and
    reflection, on ``grpc_host:grpc_port`` (TLS when ``tls_cert_path``/``tls_key_path`` are
    set). ``components`` defaults to ``Components(settings)``. Raises ConfigError for a
    non-loopback host without API keys, unreadable keys or certificates, or a busy port."""
    return create_server(settings, components).server


def _warm_up(handle: ServerHandle) -> None:
    """Load the embedder, the language model and the store's vector cache, then report
    ``episodic.v1.EpisodicMemory`` SERVING. Calls are answered meanwhile (they load what
    they need); a failed warm-up is logged and the server still reports SERVING, because
    listing and search work without the model that failed."""
    t0 = time.perf_counter()
    try:
        handle.servicer.qa().prepare()
        log.info("warmed up in %.1f s: serving", time.perf_counter() - t0)
    except Exception as exc:
        log.error("warm-up failed after %.1f s (%s); serving anyway, calls that need the "
                  "failed part will report it", time.perf_counter() - t0, exc)
    handle.health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)


def serve(
    settings: Settings,
    components: Any = None,
    on_ready: Callable[[ServerHandle], None] | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Run the server until SIGTERM or SIGINT (or until ``stop`` is set), then stop
    gracefully: health turns NOT_SERVING, new calls are refused, and calls in flight get
    ``grpc_grace_s`` seconds to finish. Signal handlers are installed only when called from
    the main thread (Python delivers signals there); elsewhere pass ``stop``."""
    own_components = components is None
    if own_components:
        from episodic.pipeline import Components

        components = Components(settings)
    try:
        handle = create_server(settings, components)
        stop = stop or threading.Event()

        def on_signal(signum: int, frame: Any) -> None:
            log.info("signal %d: stopping (grace %.1f s)", signum, settings.grpc_grace_s)
            stop.set()

        previous = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, on_signal)
        endpoint = None
        try:
            endpoint = metrics.start_metrics_server(settings)
            if settings.serve_warm_up:
                # ready (for load balancers) only once the models and caches are loaded
                handle.health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.NOT_SERVING)
            handle.server.start()
            if settings.serve_warm_up:
                threading.Thread(target=_warm_up, args=(handle,), daemon=True,
                                 name="episodic-warm-up").start()
            if on_ready is not None:
                on_ready(handle)
            while not stop.wait(0.5):
                pass
        finally:
            handle.stop(settings.grpc_grace_s)
            if endpoint is not None:
                endpoint.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    finally:
        if own_components:
            components.close()


__all__ = [
    "ANONYMOUS",
    "ApiError",
    "ApiKeys",
    "Caller",
    "EpisodicServicer",
    "SERVICE_NAME",
    "ServerHandle",
    "build_server",
    "create_server",
    "format_address",
    "load_api_keys",
    "serve",
]
