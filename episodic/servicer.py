"""The EpisodicMemory servicer: each RPC validated, scoped to its caller's key, run within its
deadline, and its failure mapped to a gRPC status (see :mod:`episodic.server` for the promises).
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, TypeVar

import grpc

from episodic import api_convert, api_recall, api_records, metrics
from episodic.core import validation
from episodic.core.article import ArticleProgress
from episodic.core.errors import DeadlineExceeded, InputError, ModelError, StoreError
from episodic.core.records import ShortTermMemory
from episodic.memory.milvus_filters import check_id
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from episodic.server_auth import ApiError, ApiKeys, Caller
from episodic.server_paging import (
    PAGE_SIZE_DEFAULT,
    PAGE_SIZE_MAX,
    _decode_token,
    _encode_token,
    _event_key,
    _query_fingerprint,
    page_events,
)

log = logging.getLogger(__name__)

CHUNK_BYTES = 1024 * 1024  # DownloadSnippet chunk size (the proto promises <= 1 MiB)
_NO_DEADLINE_S = 1e8  # time_remaining() above this means the caller set no deadline
_POLL_S = 0.25  # how often a streaming call waiting on its worker checks for cancellation

R = TypeVar("R")
Q = TypeVar("Q")  # a request dataclass with a deadline_s field


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
        self._recall: Any = None
        self._recall_lock = threading.Lock()
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

    def recall_service(self) -> Any:
        """The FuzzyRecall, built on first use over the same MemoryQA as Ask and Search (one
        set of models and one vector cache for all)."""
        with self._recall_lock:
            if self._recall is None:
                from episodic.services.recall import FuzzyRecall

                self._recall = FuzzyRecall(self.components, qa=self.qa())
            return self._recall

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

    # -- Ask, Search, Locate and Recall -----------------------------------------------------
    def _in_turn(self, run: Callable[[Q], R], req: Q, context: grpc.ServicerContext, deadline: float | None) -> R:
        """``run(req)`` once one of ``grpc_max_concurrent_asks`` turns is free (model and
        decoding heavy calls queue within their deadline; the wait counts against it)."""
        if not self._asks.acquire(timeout=deadline):
            raise ApiError(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed while waiting for a free model")
        try:
            if deadline is not None:
                req = replace(req, deadline_s=_check_deadline(context))  # type: ignore[type-var]
            return run(req)
        finally:
            self._asks.release()

    @_unary
    def Ask(self, request: pb.AskRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.AskResponse:  # noqa: N802
        req = api_convert.ask_request_from_proto(request, deadline)
        req = replace(req, scope=replace(req.scope, stream_ids=caller.scope(req.scope.stream_ids)))
        if req.scope.stream_ids == ():
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, "this API key may not read any stream")
        result = self._in_turn(self.qa().ask, req, context, deadline)
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

    @_unary
    def Locate(self, request: pb.LocateRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.LocateResponse:  # noqa: N802
        """Look again at the stored video, within the caller's streams: scoped like Search
        before anything is decoded, and nothing outside the scope is returned."""
        req = api_convert.locate_request_from_proto(request, deadline)
        req = replace(req, scope=replace(req.scope, stream_ids=caller.scope(req.scope.stream_ids)))
        if req.scope.stream_ids == ():
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, "this API key may not read any stream")
        # looking decodes video and runs the looker: it takes a turn like Ask does
        result = self._in_turn(self.qa().look.locate, req, context, deadline)
        visible = [m for m in result.moments if caller.may_see(m.stream_id)]
        looked = [s for s in result.streams_looked if caller.may_see(s)]
        if len(visible) != len(result.moments) or len(looked) != len(result.streams_looked):
            log.error("Locate (key %s): LookAgain.locate looked outside the scope", caller.key_id)
            # not_seen lines name their stream first ("cam2: ..."): keep only the caller's
            result = replace(result, moments=visible, streams_looked=looked,
                             not_seen=[n for n in result.not_seen if caller.may_see(n.partition(":")[0])])
        result.moments = result.moments[:req.top_k]
        return api_convert.locate_result_to_proto(result)

    @_unary
    def Recall(self, request: pb.RecallRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.RecallResponse:  # noqa: N802
        """Fuzzy recall within the caller's streams: scoped like Search before anything is
        read, and neither a result nor a rejected stream outside the scope is returned. Like
        Search it takes no turn: it embeds and searches, and the rule parser (the default)
        needs no language model; a model parser's backend serialises its own calls."""
        req = api_recall.recall_request_from_proto(request, deadline)
        req = replace(req, scope=replace(req.scope, stream_ids=caller.scope(req.scope.stream_ids)))
        if req.scope.stream_ids == ():
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, "this API key may not read any stream")
        result = self.recall_service().recall(req)
        visible = [r for r in result.results if caller.may_see(r.stream_id)]
        # rejected lines name their stream first ("cam2: ..."): keep only the caller's
        rejected = [line for line in result.rejected if caller.may_see(line.partition(":")[0])]
        if len(visible) != len(result.results) or len(rejected) != len(result.rejected):
            log.error("Recall (key %s): FuzzyRecall.recall returned streams outside the scope",
                      caller.key_id)
            result = replace(result, results=visible, rejected=rejected)
        result.results = result.results[:req.top_k]
        return api_recall.recall_result_to_proto(result)

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
        requested = validation.stream_ids(list(request.stream_ids))
        streams = caller.scope(requested)
        t_min, t_max = validation.time_range(_optional(request, "t_min"), _optional(request, "t_max"))
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
        return pb.ListEventsResponse(events=[api_records.event_to_proto(e) for e in page], next_page_token=token)

    @_unary
    def GetSegment(self, request: pb.GetSegmentRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.Segment:  # noqa: N802
        return api_records.segment_to_proto(self._segment(request.id, caller))

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
        content_type = api_records.snippet_content_type(uri)
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
        return pb.ListStreamsResponse(streams=[api_records.stream_to_proto(s) for s in streams])


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


