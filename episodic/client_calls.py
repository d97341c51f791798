"""How :class:`episodic.client.Client` makes its calls: the channel, the API key, deadlines,
retries of reads on UNAVAILABLE, and one error type for every failure.

Every call has a deadline (``timeout_s``) that covers all its tries. A call that changes
nothing on the server (every read; Ask, Locate, Recall and Article, which only read the memory)
is tried again when it fails with UNAVAILABLE (the server is not up yet, restarts, or its
store is briefly unreachable): ``RETRY_TRIES`` tries in all, waiting about ``RETRY_BASE_S`` ×
2^n (±20 % jitter) between them, and never past the deadline. A streaming call is tried again
only before its first message arrived: after that a failure is reported, since the caller has
already acted on part of it. Forget, AddWatch and RemoveWatch change the server and are never
tried again (a retried Forget that had in fact run would report a second, empty forget).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from episodic.core.errors import EpisodicError, InputError

MAX_RECEIVE_BYTES = 16 * 1024 * 1024
DEFAULT_TIMEOUT_S = 300.0
RETRY_TRIES = 4  # the first try and three more: 0.2 + 0.4 + 0.8 s of waiting, about 1.4 s
RETRY_BASE_S = 0.2
RETRY_JITTER = 0.2
# the RPCs that change something on the server: never sent twice
NOT_RETRIED = frozenset({"Forget", "AddWatch", "RemoveWatch"})
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


def check_server(server: str) -> str:
    host, sep, port = server.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise InputError(f"--server must be host:port, got {server!r}")
    return server


def read_ca(ca_cert: Path | None) -> bytes | None:
    if ca_cert is None:
        return None
    try:
        return Path(ca_cert).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read --ca-cert {ca_cert}: {exc.strerror or exc}") from None


def open_channel(server: str, ca_root: bytes | None = None) -> Any:
    """A gRPC channel to ``host:port`` (TLS when ``ca_root``, the server's CA in PEM, is given).
    A refused connection is tried again after 0.1 s, not gRPC's default second, so a retried
    call sees a server that has just come up."""
    import grpc

    options = [
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 250),
    ]
    if ca_root is not None:
        return grpc.secure_channel(server, grpc.ssl_channel_credentials(ca_root), options=options)
    return grpc.insecure_channel(server, options=options)


def retry_pause(attempt: int) -> float:
    """Seconds to wait after failed try ``attempt`` (0-based): 0.2 × 2^n, ±20 %."""
    return RETRY_BASE_S * 2**attempt * (1 + RETRY_JITTER * (2 * random.random() - 1))


class Connection:
    """The channel to one `episodic serve` and the two ways to call it (see the module)."""

    def __init__(self, server: str, api_key: str | None = None, ca_cert: Path | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.server = check_server(server)  # a bad address or CA file fails here, at once
        self.timeout_s = timeout_s
        self.tries = RETRY_TRIES
        self._metadata = (("authorization", f"Bearer {api_key}"),) if api_key else ()
        self._ca_root = read_ca(ca_cert)
        self._channel: Any = None

    def _stub(self) -> Any:
        from episodic.proto.episodic.v1 import episodic_pb2_grpc

        if self._channel is None:
            self._channel = open_channel(self.server, self._ca_root)
        return episodic_pb2_grpc.EpisodicMemoryStub(self._channel)

    def _failed(self, exc: Any, unavailable: Any = None) -> RemoteCallError:
        """The error to report for the try that failed with ``exc``. When a retry after
        UNAVAILABLE (``unavailable``, that earlier failure) ran out of deadline, the server's
        being down is the cause, not the deadline: the channel waits out its reconnect backoff
        and a busy machine turns the same down server into one status or the other."""
        import grpc

        if unavailable is not None and exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            details = unavailable.details() or "no details"
            return RemoteCallError(self.server, "UNAVAILABLE", f"{details} (the deadline passed while retrying)")
        code = exc.code().name if exc.code() is not None else "UNKNOWN"
        return RemoteCallError(self.server, code, exc.details() or "no details")

    def _wait_to_retry(self, method: str, exc: Any, attempt: int, deadline: float | None) -> bool:
        """After failed try ``attempt``: wait and say True when the call should be tried again."""
        import grpc

        if method in NOT_RETRIED or exc.code() != grpc.StatusCode.UNAVAILABLE or attempt + 1 >= self.tries:
            return False
        pause = retry_pause(attempt)
        if deadline is not None and time.monotonic() + pause >= deadline:
            return False
        time.sleep(pause)
        return True

    @staticmethod
    def _left(deadline: float | None) -> float | None:
        return None if deadline is None else max(deadline - time.monotonic(), 0.001)

    def _unary(self, method: str, request: Any, timeout_s: float | None) -> Any:
        """One unary call within ``timeout_s`` (all tries together); a gRPC failure becomes a
        one-line RemoteCallError."""
        import grpc

        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        attempt = 0
        unavailable = None  # the last try's failure when it was UNAVAILABLE and is being retried
        while True:
            try:
                return getattr(self._stub(), method)(request, timeout=self._left(deadline), metadata=self._metadata)
            except grpc.RpcError as exc:
                if not self._wait_to_retry(method, exc, attempt, deadline):
                    raise self._failed(exc, unavailable) from None
                unavailable = exc
            attempt += 1

    def _stream(self, method: str, request: Any, timeout_s: float | None) -> Iterator[Any]:
        """The messages of one server-streaming call as they arrive; a failure (also after some
        messages) becomes a RemoteCallError. Tried again only before the first message.
        Leaving the loop early cancels the call, so the server stops working for nobody."""
        import grpc

        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        attempt = 0
        unavailable = None
        while True:
            call = getattr(self._stub(), method)(request, timeout=self._left(deadline), metadata=self._metadata)
            started = False
            try:
                for message in call:
                    started = True
                    yield message
                return
            except grpc.RpcError as exc:
                if started or not self._wait_to_retry(method, exc, attempt, deadline):
                    raise self._failed(exc, None if started else unavailable) from None
                unavailable = exc
            finally:
                call.cancel()  # a no-op once the call has ended
            attempt += 1

    def close(self) -> None:
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()
