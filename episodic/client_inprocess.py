"""A :class:`~episodic.client.Client` whose calls the servicer answers in this process.

``episodic mcp`` without ``--server`` answers through it: the very servicer `episodic serve`
runs, called without a socket, so validation, API-key scoping, model turns, deadlines and error
messages are the ones a remote caller gets. Only the part of ``grpc.ServicerContext`` the
servicer uses is provided (metadata, the deadline, cancellation, abort).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from episodic.client import Client
from episodic.proto.episodic.v1 import episodic_pb2 as pb

DEFAULT_TIMEOUT_S = 60.0

_STREAMING = frozenset(
    m.name for m in pb.DESCRIPTOR.services_by_name["EpisodicMemory"].methods if m.server_streaming
)


class _Aborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code, self.details = code, details


class _LocalRpcError(grpc.RpcError):
    """What a failed in-process call raises: the status and message a socket would carry."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


class _CallContext:
    """The part of ``grpc.ServicerContext`` the servicer uses, for one call in this process."""

    def __init__(self, metadata: Any, timeout_s: float | None) -> None:
        self._metadata = tuple(metadata or ())
        self._deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self._cancelled = False

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def expired(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def is_active(self) -> bool:
        return not self._cancelled and not self.expired()

    def cancel(self) -> None:
        self._cancelled = True

    def set_trailing_metadata(self, metadata: Any) -> None:
        pass  # a retry hint: the message says it too

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise _Aborted(code, details)


_LATE = "the deadline passed before the answer was ready"


class _StreamCall:
    """A server-streaming call in this process: its messages, then its status."""

    def __init__(self, messages: Iterator[Any], context: _CallContext) -> None:
        self._messages, self._context = messages, context

    def __iter__(self) -> Iterator[Any]:
        try:
            yield from self._messages
        except _Aborted as exc:
            raise _LocalRpcError(exc.code, exc.details) from None
        if self._context.expired():  # the servicer stops quietly; gRPC would say why
            raise _LocalRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, _LATE)

    def cancel(self) -> None:
        self._context.cancel()


class _ServicerStub:
    """``EpisodicMemoryStub``'s calling convention over a servicer object."""

    def __init__(self, servicer: Any) -> None:
        self._servicer = servicer

    def __getattr__(self, method: str) -> Callable[..., Any]:
        handler = getattr(self._servicer, method)

        def call(request: Any, timeout: float | None = None, metadata: Any = ()) -> Any:
            context = _CallContext(metadata, timeout)
            if method in _STREAMING:
                return _StreamCall(handler(request, context), context)
            try:
                return handler(request, context)
            except _Aborted as exc:
                raise _LocalRpcError(exc.code, exc.details) from None

        return call


class InProcessClient(Client):
    """:class:`Client` whose calls the servicer answers in this process: the same requests,
    replies, scoping and status messages as through a socket, without one."""

    def __init__(self, servicer: Any, authorization: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        super().__init__("in-process:0", timeout_s=timeout_s)  # no channel is ever opened
        self.server = "in-process"
        self._metadata = (("authorization", authorization),) if authorization else ()
        self._local = _ServicerStub(servicer)

    def _stub(self) -> Any:
        return self._local
