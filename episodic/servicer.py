"""The EpisodicMemory servicer: each RPC validated, scoped to its caller's key, run within its
deadline, and its failure mapped to a gRPC status (see :mod:`episodic.server` for the promises).

Under load: model-bound calls take turns (:class:`ModelTurns`); beyond ``grpc_max_queued_asks``
waiting they are refused at once with RESOURCE_EXHAUSTED and trailing metadata
``retry-after-ms``, so they never hold more than turns + queue threads of the pool. Every call
leaves one line on the ``episodic.access`` logger (method, key id, status, milliseconds; no
user values), and a request body that does not parse is counted and logged in one line
(:class:`MalformedRequests`).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, TypeVar

import grpc

from episodic import api_article, api_convert, api_recall, api_records, metrics
from episodic.core import validation
from episodic.core.article import ArticleProgress
from episodic.core.errors import DeadlineExceeded, InputError, ModelError, StoreError
from episodic.core.records import ShortTermMemory
from episodic.memory.milvus_filters import check_id
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from episodic.server_admission import (  # noqa: F401 - Overloaded and MalformedRequests are used from here too
    MalformedRequests,
    ModelTurns,
    Overloaded,
    _always,
    _Malformed,
    _refuse_malformed,
)
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
from episodic.servicer_articles import _ArticleRun

log = logging.getLogger(__name__)
access_log = logging.getLogger("episodic.access")  # one line per call, no user values

CHUNK_BYTES = 1024 * 1024  # DownloadSnippet chunk size (the proto promises <= 1 MiB)
_NO_DEADLINE_S = 1e8  # time_remaining() above this means the caller set no deadline
MAX_MESSAGE_CHARS = 400  # a status message is cut here: it travels in a size-limited trailer

R = TypeVar("R")
Q = TypeVar("Q")  # a request dataclass with a deadline_s field


# -- errors ------------------------------------------------------------------------------------
def _status_for(exc: BaseException, method: str, caller: Caller | None) -> tuple[grpc.StatusCode, str]:
    """Map an exception to the status the client sees, logging what the client must not."""
    who = caller.key_id if caller else "-"
    if isinstance(exc, ApiError):
        return exc.code, _bounded(exc.message)
    if isinstance(exc, DeadlineExceeded):
        return grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the answer was ready"
    if isinstance(exc, InputError):
        return grpc.StatusCode.INVALID_ARGUMENT, _bounded(str(exc))
    if isinstance(exc, StoreError):
        log.warning("%s (key %s): store unavailable: %s", method, who, exc)
        return grpc.StatusCode.UNAVAILABLE, "the memory store is unavailable; try again later"
    if isinstance(exc, ModelError):
        log.warning("%s (key %s): model unavailable: %s", method, who, exc)
        return grpc.StatusCode.UNAVAILABLE, "a model backend is unavailable; try again later"
    log.error("%s (key %s) failed", method, who, exc_info=exc)
    return grpc.StatusCode.INTERNAL, "internal error (details are in the server log)"


def _bounded(message: str) -> str:
    """A status message of at most about MAX_MESSAGE_CHARS: one echoing a 20 kB value would
    exceed gRPC's metadata limit and reach the client as RESOURCE_EXHAUSTED instead."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return f"{message[:MAX_MESSAGE_CHARS]}… ({len(message)} characters)"


def _finish(method: str, caller: Caller | None, code: grpc.StatusCode, started: float) -> None:
    """Record a finished call: its latency metric and its access log line."""
    seconds = time.perf_counter() - started
    metrics.observe_rpc(method, code.name, seconds)
    access_log.info("method=%s key=%s code=%s ms=%.1f",
                    method, caller.key_id if caller else "-", code.name, 1000 * seconds)


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
            if isinstance(request, _Malformed):
                raise _refuse_malformed(request, method.__name__, caller)
            deadline = _check_deadline(context)
            result = method(self, request, context, caller, deadline)
            _finish(method.__name__, caller, grpc.StatusCode.OK, started)
            return result
        except Exception as exc:  # every failure becomes a status; none escapes to grpc
            code, message = _status_for(exc, method.__name__, caller)
            trailing = getattr(exc, "trailing", ())
        _finish(method.__name__, caller, code, started)
        if trailing:
            context.set_trailing_metadata(trailing)
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
            if isinstance(request, _Malformed):
                raise _refuse_malformed(request, method.__name__, caller)
            deadline = _check_deadline(context)
            yield from method(self, request, context, caller, deadline)
            _finish(method.__name__, caller, grpc.StatusCode.OK, started)
            return
        except Exception as exc:
            code, message = _status_for(exc, method.__name__, caller)
            trailing = getattr(exc, "trailing", ())
        _finish(method.__name__, caller, code, started)
        if trailing:
            context.set_trailing_metadata(trailing)
        context.abort(code, message)

    return wrapper


ALERT_FOLLOWERS_MAX = 8  # WatchAlerts calls with follow open at once (each holds a server thread)
ALERT_POLL_S = 0.5  # how often a following WatchAlerts call looks for new alerts


def _optional(msg: Any, name: str) -> float | None:
    return getattr(msg, name) if msg.HasField(name) else None


class EpisodicServicer(pb_grpc.EpisodicMemoryServicer):
    """``episodic.v1.EpisodicMemory`` over the configured store, snippets and MemoryQA."""

    def __init__(self, components: Any, keys: ApiKeys, max_concurrent_asks: int = 1,
                 max_queued_asks: int = 16) -> None:
        self.components = components
        self.keys = keys
        self._qa: Any = None
        self._qa_lock = threading.Lock()
        self._articles: Any = None
        self._articles_lock = threading.Lock()
        self._recall: Any = None
        self._recall_lock = threading.Lock()
        self._asks = ModelTurns(max_concurrent_asks, max_queued_asks)
        self._followers = threading.BoundedSemaphore(ALERT_FOLLOWERS_MAX)
        # signed HTTP URLs of snippets and thumbnails (episodic.http_links.MediaLinks), set
        # when the HTTP API is on; None leaves the messages' url fields empty
        self.links: Any = None

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
        # Record ids begin with their stream id ("<stream>@<ms>", events add ".e"): an id
        # outside the key is refused from the id alone, before the store is read, so another
        # tenant's record answers exactly like a missing one, in the same time too.
        if not caller.may_see(ident.partition("@")[0]):
            raise ApiError(grpc.StatusCode.NOT_FOUND, f"no segment {ident!r}")
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
        decoding heavy calls queue within their deadline; the wait counts against it). More
        than ``grpc_max_queued_asks`` waiting: RESOURCE_EXHAUSTED at once, with a retry hint."""
        self._take_turn(context, deadline)
        try:
            if deadline is not None:
                req = replace(req, deadline_s=_check_deadline(context))  # type: ignore[type-var]
            return run(req)
        finally:
            self._asks.release()

    def _take_turn(self, context: grpc.ServicerContext, deadline: float | None) -> None:
        # a waiter whose caller is gone leaves the line (minimal test contexts lack is_active)
        if not self._asks.acquire(deadline, getattr(context, "is_active", _always)):
            raise ApiError(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed while waiting for a free model")

    def _recall_takes_turn(self) -> bool:
        """Recall waits on the language model only with a model parser (the rule that
        ``FuzzyRecall`` applies: recall_parser = "model", or "auto" with llm = "openai")."""
        settings = getattr(self.components, "settings", None)
        mode = getattr(settings, "recall_parser", "rules")
        return mode == "model" or (mode == "auto" and getattr(settings, "llm", "") == "openai")

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
        like = request.like_segment_id or None
        if like:  # search by a stored segment's key frame: one this key may see, else NOT_FOUND
            like = self._segment(like, caller).id
        moments = self.qa().search(query, scope, top_k, deadline_s=deadline, image=request.image or None,
                                   like_segment_id=like)
        visible = [m for m in moments if caller.may_see(m.stream_id)]
        if len(visible) != len(moments):
            log.error("Search (key %s): MemoryQA.search returned moments outside the scope", caller.key_id)
        reply = pb.SearchResponse(moments=[api_convert.moment_to_proto(m) for m in visible[:top_k]])
        if self.links is not None:
            self.links.moments(reply.moments, caller.key_id, self.components.store)
        return reply

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
        Search it takes no turn when it embeds and searches only (the rule parser); with a
        model parser it waits on the language model, so it takes a turn like Ask does."""
        req = api_recall.recall_request_from_proto(request, deadline)
        req = replace(req, scope=replace(req.scope, stream_ids=caller.scope(req.scope.stream_ids)))
        if req.scope.stream_ids == ():
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, "this API key may not read any stream")
        service = self.recall_service()
        if self._recall_takes_turn():
            result = self._in_turn(service.recall, req, context, deadline)
        else:
            result = service.recall(req)
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
        req = api_article.article_request_from_proto(request, deadline)
        req = replace(req, scope=replace(req.scope, stream_ids=caller.scope(req.scope.stream_ids)))
        if req.scope.stream_ids == ():
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, "this API key may not read any stream")
        service = self.articles()
        self._take_turn(context, deadline)
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
                    yield pb.ArticleUpdate(progress=api_article.article_progress_to_proto(item))
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
        yield pb.ArticleUpdate(article=api_article.article_to_proto(article))

    # -- reading the store -------------------------------------------------------------------
    # -- standing queries (episodic/api_watch.py) ---------------------------------------------
    def _watches(self) -> Any:
        from episodic.api_watch import Watches

        return Watches(lambda: self.components.watch_store)

    @_unary
    def AddWatch(self, request: pb.AddWatchRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.AddWatchResponse:  # noqa: N802
        from episodic.api_watch import ScopeDenied, watch_from_proto, watch_to_proto

        try:
            watch, secret = self._watches().add(watch_from_proto(request.watch), caller.key_id, caller.streams)
        except ScopeDenied as exc:
            raise ApiError(grpc.StatusCode.PERMISSION_DENIED, str(exc)) from None
        log.info("AddWatch (key %s): %s %s on %d stream(s)", caller.key_id, watch.id, watch.kind, len(watch.stream_ids))
        return pb.AddWatchResponse(watch=watch_to_proto(watch), webhook_secret=secret)

    @_unary
    def ListWatches(self, request: pb.ListWatchesRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.ListWatchesResponse:  # noqa: N802
        from episodic.api_watch import watch_to_proto

        watches = self._watches().visible(caller.key_id, caller.streams)
        return pb.ListWatchesResponse(watches=[watch_to_proto(w) for w in watches])

    @_unary
    def RemoveWatch(self, request: pb.RemoveWatchRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.RemoveWatchResponse:  # noqa: N802
        from episodic.api_watch import WatchNotFound

        try:
            self._watches().remove(request.id, caller.key_id, caller.streams)
        except WatchNotFound:
            raise ApiError(grpc.StatusCode.NOT_FOUND, "no such watch for this API key") from None
        return pb.RemoveWatchResponse(removed=True)

    @_streaming
    def WatchAlerts(self, request: pb.WatchAlertsRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> Iterator[pb.Alert]:  # noqa: N802
        """The caller's alerts from ``after_seq`` on; with ``follow`` the call stays open and
        polls the alert log (which other processes append to) until cancelled. Followers are
        bounded (``ALERT_FOLLOWERS_MAX``) so they never take the threads other calls need."""
        from episodic.api_watch import alert_to_proto

        watches = self._watches()
        seq = int(request.after_seq)
        ids = list(request.watch_ids)[:100] or None
        if request.follow and not self._followers.acquire(blocking=False):
            raise ApiError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                           f"{ALERT_FOLLOWERS_MAX} alert streams are open already; try again later")
        try:
            while context.is_active():
                batch, read_to = watches.alerts(seq, caller.key_id, caller.streams, ids)
                for alert in batch:
                    yield alert_to_proto(alert)
                if read_to == seq:  # the log has nothing newer
                    if not request.follow:
                        return
                    time.sleep(ALERT_POLL_S)
                seq = read_to
        finally:
            if request.follow:
                self._followers.release()

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
        reply = pb.ListEventsResponse(events=[api_records.event_to_proto(e) for e in page], next_page_token=token)
        if self.links is not None:
            self.links.events(reply.events, caller.key_id, self.components.store)
        return reply

    @_unary
    def GetSegment(self, request: pb.GetSegmentRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.Segment:  # noqa: N802
        segment = api_records.segment_to_proto(self._segment(request.id, caller))
        return segment if self.links is None else self.links.segment(segment, caller.key_id)

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
        storage: dict[str, Any] = {}
        if request.with_storage:
            from episodic.api_forget import storage_of

            storage = {sid: storage_of(u) for sid, u in self.forgetter().storage(s.stream_id for s in streams).items()}
        return pb.ListStreamsResponse(streams=[api_records.stream_to_proto(s, storage.get(s.stream_id)) for s in streams])

    # -- the day at a glance (issue 17) ------------------------------------------------------
    @_unary
    def ListSummaries(self, request: pb.ListSummariesRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.ListSummariesResponse:  # noqa: N802
        """One stream's summary windows, scoped like ListEvents: a stream outside the key is
        PERMISSION_DENIED. Stored overviews only: no model and no memory is read."""
        from episodic import api_summaries
        from episodic.services.summaries import list_summaries

        req = api_summaries.summaries_request_from_proto(request)
        caller.scope((req.stream_id,))  # PERMISSION_DENIED outside the key's streams
        result = list_summaries(self.components.store, self.components.settings, req)
        return api_summaries.summary_list_to_proto(result)

    # -- forgetting on purpose (issue 17) ----------------------------------------------------
    def forgetter(self) -> Any:
        """The process's Forgetter (services.forgetting), built on first use; the embedder it
        may need for recomposing overviews loads only then."""
        with _FORGETTER_LOCK:
            if getattr(self, "_forgetter", None) is None:
                from episodic import forgetting_jobs

                self._forgetter = forgetting_jobs.forgetter(self.components)
            return self._forgetter

    @_unary
    def Forget(self, request: pb.ForgetRequest, context: grpc.ServicerContext, caller: Caller, deadline: float | None) -> pb.ForgetResponse:  # noqa: N802
        """Forget a stream or a stretch of it (services.forgetting), audited with the caller's
        key id. The request is checked first (a bad range is INVALID_ARGUMENT whoever owns the
        stream); then a stream outside the key and one with no record are the same NOT_FOUND.
        A key scoped to streams may forget those; a ``["*"]`` key (or none, on loopback) any.
        The deadline is not applied: a forget, once started, completes (it is crash-safe)."""
        from episodic import api_forget, forgetting_jobs
        from episodic.core.records import validate_stream_id
        from episodic.services.forgetting import StreamNotFound, check_forget_range

        sid = validate_stream_id(request.stream_id)
        t_min, t_max = check_forget_range(_optional(request, "t_min"), _optional(request, "t_max"))
        missing = ApiError(grpc.StatusCode.NOT_FOUND, f"no stream {sid!r}")
        if not caller.may_see(sid):
            raise missing
        f = self.forgetter()
        try:
            report = f.forget(sid, t_min, t_max, key_id=caller.key_id, reason="request")
        except StreamNotFound:
            raise missing from None
        log.info("Forget (key %s): %s %s: %d records, %d snippet files (audit %s)", caller.key_id, sid,
                 "whole" if report.whole_stream else f"[{t_min}, {t_max}]", report.records,
                 report.snippet_files, report.audit_id)
        forgetting_jobs.forgotten(report)
        try:
            forgetting_jobs.refresh_stream(f, self.components.settings, sid)
        except Exception as exc:  # the gauges are a convenience: the forget is done
            log.warning("storage gauges not refreshed: %s", exc)
        return api_forget.forget_report_to_proto(report)


_FORGETTER_LOCK = threading.Lock()
