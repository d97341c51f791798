"""A Python client of `episodic serve`: the same typed results as answering in-process.

``Client`` implements :class:`~episodic.core.interfaces.MemoryService` over gRPC, as
:class:`~episodic.services.local.LocalMemoryService` does in-process, so a caller (the CLI among
them) has one code path for both and cannot tell which one answered::

    with Client("127.0.0.1:50051", api_key="…") as memory:
        print(memory.ask(AskRequest("When does the train leave?")).answer)
        for event in memory.list_events(stream_id="kitchen"):  # every page, fetched as needed
            print(event.t_start, event.summary)

It also reads the stored records (:mod:`episodic.client_records`: streams, events, segments)
and downloads snippets. A failed call raises :class:`RemoteCallError` with the gRPC status and
the server's message; deadlines and retries are described on :class:`Client`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from episodic import api_article, api_convert, api_recall
from episodic.client_calls import (  # noqa: F401 - the client's public names, kept here
    DEFAULT_TIMEOUT_S,
    MAX_RECEIVE_BYTES,
    REMOTE_EXIT_CODES,
    Connection,
    RemoteCallError,
    open_channel,
)
from episodic.client_records import Event, Segment, Stream
from episodic.core.article import Article, ArticleProgress, ArticleRequest
from episodic.core.errors import EpisodicError
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

EVENTS_PAGE_SIZE = 500  # ListEvents' largest page


class Client(Connection):
    """Ask, Search, Locate, Recall, Article, the stored records, snippets, watches and Forget on
    an `episodic serve` at ``server`` (host:port); ``api_key`` is sent as ``authorization:
    Bearer``, ``ca_cert`` (the PEM of the CA that signed the server's certificate) makes it TLS.

    **Deadlines.** Every call has one: its ``timeout_s`` argument, else the request's
    ``deadline_s`` (Ask, Locate, Recall, Article), else the client's ``timeout_s`` (300 s). It
    covers all the call's tries; past it the call fails with DEADLINE_EXCEEDED (UNAVAILABLE when
    it passed while a server that was down was being retried). ``list_events``
    applies it to each page, ``download_snippet`` to the whole download.

    **Retries.** Calls that change nothing on the server (ListStreams, ListEvents, GetSegment,
    Search, ListSummaries, ListWatches, and Ask, Locate, Recall, which only read the memory)
    are tried again when they fail with UNAVAILABLE (a server not up yet or restarting): four
    tries in all, waiting about 0.2 s × 2^n with ±20 % jitter, never past the deadline. The
    streams (DownloadSnippet, Article, WatchAlerts) are tried again only before their first
    message; once one has begun, a failure is reported. Forget, AddWatch and RemoveWatch are
    never tried again. Other statuses fail at once.

    **Errors.** A failure is a :class:`RemoteCallError` (an EpisodicError) with ``code``, the
    gRPC status name, and the server's message; the CLI exits with its ``exit_code``
    (UNAVAILABLE 4, DEADLINE_EXCEEDED 6, bad input or keys 2).
    """

    # -- MemoryService ---------------------------------------------------------------------
    def ask(self, req: AskRequest) -> AskResult:
        reply = self._unary("Ask", api_convert.ask_request_to_proto(req), req.deadline_s or self.timeout_s)
        return api_convert.ask_result_from_proto(reply)

    def search(
        self, query: str, scope: Scope | None = None, top_k: int = 5, deadline_s: float | None = None,
        image: bytes | None = None, like_segment_id: str | None = None,
    ) -> list[Moment]:
        msg = api_convert.search_request_to_proto(query, scope or Scope(), top_k, image, like_segment_id)
        reply = self._unary("Search", msg, deadline_s or self.timeout_s)
        return [api_convert.moment_from_proto(m) for m in reply.moments]

    def locate(self, req: LocateRequest, on_progress: Callable[..., None] | None = None) -> LocateResult:
        """Look again at the server's stored video (its frame decoding, its looker); the
        request's deadline is the call's, as for Ask. The server does not report progress:
        ``on_progress`` (taken as in-process) is never called."""
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
        for update in self._stream("Article", api_article.article_request_to_proto(req), req.deadline_s or self.timeout_s):
            kind = update.WhichOneof("update")
            if kind == "progress" and progress is not None:
                progress(api_article.article_progress_from_proto(update.progress))
            elif kind == "article":
                result = api_article.article_from_proto(update.article)
        if result is None:
            raise EpisodicError(f"{self.server}: the Article call ended without an article")
        return result

    # -- stored records ----------------------------------------------------------------------
    def list_streams(self, with_storage: bool = False, timeout_s: float | None = None) -> list[Stream]:
        """The streams the API key may see, sorted by id. ``with_storage`` adds what each takes
        (``Stream.storage``: records per collection and snippet bytes; slower on the server)."""
        from episodic.proto.episodic.v1 import episodic_pb2 as pb

        reply = self._unary("ListStreams", pb.ListStreamsRequest(with_storage=with_storage), timeout_s or self.timeout_s)
        return [Stream.from_proto(s) for s in reply.streams]

    def list_events(
        self, stream_id: str | list[str] | None = None, t_min: float | None = None, t_max: float | None = None,
        page_size: int = EVENTS_PAGE_SIZE, timeout_s: float | None = None,
    ) -> Iterator[Event]:
        """Every event of ``stream_id`` (one id or a list; None: every stream the key may see)
        that ends at or after ``t_min`` and starts at or before ``t_max``, sorted by (stream_id,
        t_start, id). The ListEvents pages (``page_size`` events, 1-500) are fetched as the loop
        reaches them; ``timeout_s`` is each page's deadline."""
        from episodic.proto.episodic.v1 import episodic_pb2 as pb

        ids = [stream_id] if isinstance(stream_id, str) else list(stream_id or ())
        msg = pb.ListEventsRequest(stream_ids=ids, page_size=page_size)
        if t_min is not None:
            msg.t_min = t_min
        if t_max is not None:
            msg.t_max = t_max
        while True:
            reply = self._unary("ListEvents", msg, timeout_s or self.timeout_s)
            for event in reply.events:
                yield Event.from_proto(event)
            if not reply.next_page_token:
                return
            if reply.next_page_token == msg.page_token:
                raise EpisodicError(f"{self.server}: ListEvents gave the same page token twice")
            msg.page_token = reply.next_page_token

    def get_segment(self, segment_id: str, timeout_s: float | None = None) -> Segment:
        """One segment (a ShortTermMemory: transcript, visual text, snippets …) by its id, or by
        the id of the event that summarises it. NOT_FOUND outside the key, as for no such id."""
        from episodic.proto.episodic.v1 import episodic_pb2 as pb

        reply = self._unary("GetSegment", pb.GetSegmentRequest(id=segment_id), timeout_s or self.timeout_s)
        return Segment.from_proto(reply)

    def download_snippet(self, segment_id: str, index: int = 0, timeout_s: float | None = None) -> Iterator[bytes]:
        """The bytes of a segment's snippet ``index`` (``Segment.snippets``: a playable .mp4 or
        .m4a) as they arrive, in order, at most 1 MiB at a time; joined, they are the file.
        ``timeout_s`` covers the whole download; leaving the loop early cancels it."""
        from episodic.proto.episodic.v1 import episodic_pb2 as pb

        msg = pb.DownloadSnippetRequest(segment_id=segment_id, index=index)
        offset, total = 0, None
        for chunk in self._stream("DownloadSnippet", msg, timeout_s or self.timeout_s):
            if chunk.offset != offset:
                raise EpisodicError(f"{self.server}: DownloadSnippet sent bytes at {chunk.offset}, expected {offset}")
            offset, total = offset + len(chunk.data), chunk.total_size
            if chunk.data:
                yield chunk.data
        if total is not None and offset != total:
            raise EpisodicError(f"{self.server}: DownloadSnippet ended after {offset} of {total} bytes")

    def save_snippet(self, segment_id: str, index: int, path: str | Path, timeout_s: float | None = None) -> Path:
        """Download snippet ``index`` of a segment into ``path`` and return it. The bytes go to
        a temporary file beside it, renamed once complete: a failed download leaves no part."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
        try:
            with os.fdopen(fd, "wb") as out:
                for data in self.download_snippet(segment_id, index, timeout_s):
                    out.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

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

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
