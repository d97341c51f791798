"""Who gets in, before a servicer method runs: the bounded line for model-bound calls (so
waiting Asks never take the threads health checks, listings and searches need) and request
bodies that do not parse (answered INVALID_ARGUMENT, counted, one log line)."""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc

from episodic import metrics
from episodic.core.errors import InputError
from episodic.server_auth import ApiError, Caller

log = logging.getLogger("episodic.servicer")

_POLL_S = 0.25  # how often a call waiting for a model turn checks for cancellation


class Overloaded(ApiError):
    """RESOURCE_EXHAUSTED with a retry hint (trailing metadata ``retry-after-ms``)."""

    def __init__(self, message: str, retry_after_ms: int) -> None:
        super().__init__(grpc.StatusCode.RESOURCE_EXHAUSTED, message)
        self.retry_after_ms = retry_after_ms
        self.trailing = (("retry-after-ms", str(retry_after_ms)),)


def _always() -> bool:
    return True


class ModelTurns:
    """At most ``turns`` model-bound calls run at once, at most ``queue_max`` wait for a turn
    (first come, first served), and one more is refused at once with :class:`Overloaded`.

    A waiting call holds a gRPC worker thread, so model-bound calls hold at most turns +
    queue_max threads; the server gives its pool that many on top of ``grpc_max_workers``, and
    health checks, listings and searches always find a thread. A waiter leaves the line when
    its deadline passes or its caller goes away. ``release`` may come from another thread (an
    Article's worker), like a semaphore's.
    """

    def __init__(self, turns: int = 1, queue_max: int = 16) -> None:
        self.turns = max(1, turns)
        self.queue_max = max(0, queue_max)
        self._cond = threading.Condition()
        self._running = 0
        self._line: collections.deque[object] = collections.deque()
        self._starts: collections.deque[float] = collections.deque()
        self._turn_s = 1.0  # moving average of how long a turn is held (for the retry hint)

    @property
    def waiting(self) -> int:
        return len(self._line)

    @property
    def running(self) -> int:
        return self._running

    def retry_after_ms(self) -> int:
        """About how long the calls now running and waiting take to have their turns (a turn's
        recent average length; 1 s before any): a refused client that waits this long finds
        room in the line, and a crowd of refused clients does not come back all at once."""
        calls = self._running + len(self._line)
        return int(min(60_000, max(100, 1000 * self._turn_s * max(1, calls) / self.turns)))

    def acquire(self, timeout: float | None = None, alive: Callable[[], bool] = _always) -> bool:
        """Take a turn: True once taken, False when ``timeout`` seconds passed or ``alive()``
        turned false first; :class:`Overloaded` at once when the line is full."""
        with self._cond:
            if not self._line and self._running < self.turns:
                self._take()
                return True
            if len(self._line) >= self.queue_max:
                ms = self.retry_after_ms()
                raise Overloaded(
                    f"the server is busy: {self._running} model call(s) running and "
                    f"{len(self._line)} waiting (grpc_max_queued_asks); retry after {ms} ms "
                    "(trailing metadata retry-after-ms)",
                    ms,
                )
            ticket = object()
            self._line.append(ticket)
            self._publish()
            end = None if timeout is None else time.monotonic() + timeout
            try:
                while True:
                    if self._line[0] is ticket and self._running < self.turns:
                        self._take()
                        return True
                    left = None if end is None else end - time.monotonic()
                    if (left is not None and left <= 0) or not alive():
                        return False
                    self._cond.wait(_POLL_S if left is None else min(_POLL_S, left))
            finally:
                self._line.remove(ticket)
                self._cond.notify_all()  # the next in line may be at the head now
                self._publish()

    def release(self) -> None:
        with self._cond:
            if self._running <= 0:
                raise ValueError("ModelTurns released more often than acquired")
            self._running -= 1
            held = time.monotonic() - self._starts.popleft()
            self._turn_s = 0.8 * self._turn_s + 0.2 * held
            self._cond.notify_all()
            self._publish()

    def _take(self) -> None:
        self._running += 1
        self._starts.append(time.monotonic())
        self._publish()

    def _publish(self) -> None:
        metrics.MODEL_CALLS.labels("running").set(self._running)
        metrics.MODEL_CALLS.labels("waiting").set(len(self._line))


class _Malformed:
    """Stands in for a request body that did not parse; the handler refuses it."""

    __slots__ = ("error", "size")

    def __init__(self, size: int, error: str) -> None:
        self.size, self.error = size, error


def _tolerant(deserializer: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception as exc:  # gRPC would log a traceback and answer INTERNAL
            return _Malformed(len(data), type(exc).__name__)

    return parse


class MalformedRequests(grpc.ServerInterceptor):
    """Hands the handlers of ``service`` a :class:`_Malformed` for a body that does not parse,
    so the call is answered INVALID_ARGUMENT, counted and logged in one line, instead of gRPC
    logging a full traceback per call and answering INTERNAL."""

    def __init__(self, service: str) -> None:
        self._prefix = f"/{service}/"
        self._handlers: dict[str, Any] = {}

    def intercept_service(self, continuation: Callable[[Any], Any], handler_call_details: Any) -> Any:
        method = handler_call_details.method
        if not method.startswith(self._prefix):
            return continuation(handler_call_details)
        handler = self._handlers.get(method)
        if handler is None:
            handler = continuation(handler_call_details)
            if handler is None or handler.request_deserializer is None:
                return handler
            handler = handler._replace(request_deserializer=_tolerant(handler.request_deserializer))
            self._handlers[method] = handler  # one per method the service registered
        return handler


def _refuse_malformed(request: _Malformed, method: str, caller: Caller) -> InputError:
    metrics.MALFORMED_REQUESTS.labels(method).inc()
    log.warning("%s (key %s): request body of %d bytes does not parse (%s); refused",
                method, caller.key_id, request.size, request.error)
    return InputError(f"the request body ({request.size} bytes) is not a valid {method} request message")
