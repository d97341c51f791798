"""A Python client of `episodic serve`: the same typed results as answering in-process.

``Client`` implements :class:`~episodic.core.interfaces.MemoryService` over gRPC, as
:class:`~episodic.services.local.LocalMemoryService` does in-process, so a caller (the CLI among
them) has one code path for both and cannot tell which one answered::

    with Client("127.0.0.1:50051", api_key="…") as memory:
        print(memory.ask(AskRequest("When does the train leave?")).answer)

A failed call raises :class:`RemoteCallError` with the gRPC status and the server's message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from episodic import api_convert, api_recall
from episodic.core.article import Article, ArticleProgress, ArticleRequest
from episodic.core.errors import EpisodicError, InputError
from episodic.core.query import (
    AskRequest,
    AskResult,
    LocateRequest,
    LocateResult,
    Moment,
    RecallRequest,
    RecallResult,
    Scope,
)
from episodic.core.summaries import SummariesRequest, SummaryList
from episodic.core.watches import Alert, Watch

MAX_RECEIVE_BYTES = 16 * 1024 * 1024
DEFAULT_TIMEOUT_S = 300.0
# how a failed call's status maps to the CLI's exit codes (the same as local errors')
REMOTE_EXIT_CODES = {
    "INVALID_ARGUMENT": 2,
    "UNAUTHENTICATED": 2,
    "PERMISSION_DENIED": 2,
    "NOT_FOUND": 2,
    "UNAVAILABLE": 4,
    "DEADLINE_EXCEEDED": 6,
}


class RemoteCallError(EpisodicError):
    """A call to an `episodic serve` failed: the gRPC status and the server's message."""

    def __init__(self, server: str, code: str, details: str) -> None:
        super().__init__(f"{server}: {code}: {details}")
        self.code = code
        self.exit_code = REMOTE_EXIT_CODES.get(code, 1)


def _check_server(server: str) -> str:
    host, sep, port = server.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise InputError(f"--server must be host:port, got {server!r}")
    return server


def _read_ca(ca_cert: Path | None) -> bytes | None:
    if ca_cert is None:
        return None
    try:
        return Path(ca_cert).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read --ca-cert {ca_cert}: {exc.strerror or exc}") from None


def open_channel(server: str, ca_root: bytes | None = None) -> Any:
    """A gRPC channel to ``host:port`` (TLS when ``ca_root``, the server's CA in PEM, is given)."""
    import grpc

    options = [("grpc.max_receive_message_length", MAX_RECEIVE_BYTES)]
    if ca_root is not None:
        return grpc.secure_channel(server, grpc.ssl_channel_credentials(ca_root), options=options)
    return grpc.insecure_channel(server, options=options)


class Client:
    """Ask, Search, Locate, Recall and Article on an `episodic serve` at ``server`` (host:port)."""

    def __init__(
        self, server: str, api_key: str | None = None, ca_cert: Path | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.server = _check_server(server)  # a bad address or CA file fails here, at once
        self.timeout_s = timeout_s
        self._metadata = (("authorization", f"Bearer {api_key}"),) if api_key else ()
        self._ca_root = _read_ca(ca_cert)
        self._channel: Any = None

    def _stub(self) -> Any:
        from episodic.proto.episodic.v1 import episodic_pb2_grpc

        if self._channel is None:
            self._channel = open_channel(self.server, self._ca_root)
        return episodic_pb2_grpc.EpisodicMemoryStub(self._channel)

    def _failed(self, exc: Any) -> RemoteCallError:
        code = exc.code().name if exc.code() is not None else "UNKNOWN"
        return RemoteCallError(self.server, code, exc.details() or "no details")

    def _unary(self, method: str, request: Any, timeout_s: float) -> Any:
        """One unary call; a gRPC failure becomes a one-line RemoteCallError."""
        import grpc

        try:
            return getattr(self._stub(), method)(request, timeout=timeout_s, metadata=self._metadata)
        except grpc.RpcError as exc:
            raise self._failed(exc) from None

    def _stream(self, method: str, request: Any, timeout_s: float) -> Iterator[Any]:
        """The messages of one server-streaming call as they arrive; a failure (also after some
        messages) becomes a RemoteCallError. Leaving the loop early cancels the call, so the
        server stops working for nobody."""
        import grpc

        call = getattr(self._stub(), method)(request, timeout=timeout_s, metadata=self._metadata)
        try:
            yield from call
        except grpc.RpcError as exc:
            raise self._failed(exc) from None
        finally:
            call.cancel()  # a no-op once the call has ended

    # -- MemoryService ---------------------------------------------------------------------
    def ask(self, req: AskRequest) -> AskResult:
        reply = self._unary("Ask", api_convert.ask_request_to_proto(req), req.deadline_s or self.timeout_s)
        return api_convert.ask_result_from_proto(reply)

    def search(
        self, query: str, scope: Scope | None = None, top_k: int = 5, deadline_s: float | None = None
    ) -> list[Moment]:
        msg = api_convert.search_request_to_proto(query, scope or Scope(), top_k)
        reply = self._unary("Search", msg, deadline_s or self.timeout_s)
        return [api_convert.moment_from_proto(m) for m in reply.moments]

    def locate(self, req: LocateRequest) -> LocateResult:
        """Look again at the server's stored video (its frame decoding, its looker); the
        request's deadline is the call's, as for Ask."""
        reply = self._unary("Locate", api_convert.locate_request_to_proto(req), req.deadline_s or self.timeout_s)
        return api_convert.locate_result_from_proto(reply)

    def recall(self, req: RecallRequest) -> RecallResult:
        """Fuzzy recall on the server's memory (the streams the API key may see); the request's
        deadline is the call's, as for Ask."""
        msg = api_recall.recall_request_to_proto(req)
        reply = self._unary("Recall", msg, req.deadline_s or self.timeout_s)
        return api_recall.recall_result_from_proto(reply)

    def list_summaries(self, req: SummariesRequest) -> SummaryList:
        """The day at a glance: one stream's summary windows on the server (a stream outside
        the API key is PERMISSION_DENIED)."""
        from episodic import api_summaries

        reply = self._unary("ListSummaries", api_summaries.summaries_request_to_proto(req), self.timeout_s)
        return api_summaries.summary_list_from_proto(reply)

    def write_article(
        self, req: ArticleRequest, progress: Callable[[ArticleProgress], None] | None = None
    ) -> Article:
        result = None
        for update in self._stream("Article", api_convert.article_request_to_proto(req), req.deadline_s or self.timeout_s):
            kind = update.WhichOneof("update")
            if kind == "progress" and progress is not None:
                progress(api_convert.article_progress_from_proto(update.progress))
            elif kind == "article":
                result = api_convert.article_from_proto(update.article)
        if result is None:
            raise EpisodicError(f"{self.server}: the Article call ended without an article")
        return result

    # -- standing queries ------------------------------------------------------------------
    def add_watch(self, watch: Watch) -> tuple[Watch, str]:
        """Register a watch; returns it as stored and its webhook signing secret (shown once)."""
        from episodic import api_watch
        from episodic.proto.episodic.v1 import episodic_pb2 as pb

        reply = self._unary("AddWatch", pb.AddWatchRequest(watch=api_watch.watch_to_proto(watch)), self.timeout_s)
        return api_watch.watch_from_reply(reply.watch), reply.webhook_secret

    def list_watches(self) -> list[Watch]:
        from episodic import api_watch
        from episodic.proto.episodic.v1 import episodic_pb2 as pb

        reply = self._unary("ListWatches", pb.ListWatchesRequest(), self.timeout_s)
        return [api_watch.watch_from_reply(w) for w in reply.watches]

    def remove_watch(self, watch_id: str) -> None:
        from episodic.proto.episodic.v1 import episodic_pb2 as pb

        self._unary("RemoveWatch", pb.RemoveWatchRequest(id=watch_id), self.timeout_s)

    def watch_alerts(self, after_seq: int = 0, follow: bool = False,
                     watch_ids: list[str] | None = None) -> Iterator[Alert]:
        """The key's alerts after ``after_seq``; with ``follow`` new ones as they are raised
        (the call then has no deadline; leaving the loop cancels it)."""
        from episodic import api_watch
        from episodic.proto.episodic.v1 import episodic_pb2 as pb

        msg = pb.WatchAlertsRequest(after_seq=after_seq, follow=follow, watch_ids=watch_ids or [])
        for alert in self._stream("WatchAlerts", msg, None if follow else self.timeout_s):
            yield api_watch.alert_from_proto(alert)

    def forget(
        self, stream_id: str, t_min: float | None = None, t_max: float | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        """Forget a stream (no range) or the memories overlapping [t_min, t_max] on the server
        (the Forget RPC); returns a ``services.forgetting.ForgetReport``. NOT_FOUND (a
        RemoteCallError) for a stream that is not there or that the key does not cover."""
        from episodic import api_forget

        reply = self._unary("Forget", api_forget.forget_request_to_proto(stream_id, t_min, t_max),
                            timeout_s or self.timeout_s)
        return api_forget.forget_report_from_proto(reply)

    def close(self) -> None:
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
