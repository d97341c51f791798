"""The Article RPC's worker: one ``ArticleService.write`` run in a thread of its own, its progress
reports queued for the streaming handler in :mod:`episodic.servicer` to yield.

Why its own module: this is the servicer's only thread-and-queue machinery (start, report,
drain, cancel), and it is the same whichever article is written; the handler itself (scoping,
the model turn, the leak check on the citations) stays with the other RPCs in the servicer.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import grpc

from episodic.server_admission import ModelTurns

_POLL_S = 0.25  # how often a call waiting on a worker checks for cancellation


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

    def start(self, req: Any, semaphore: ModelTurns) -> None:
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
