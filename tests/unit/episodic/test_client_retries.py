"""The client's retries end in the error that says why: a server that stays down is UNAVAILABLE
even when the deadline runs out during a retry (the channel then waits out its reconnect
backoff, and on a busy machine the same down server came back as DEADLINE_EXCEEDED)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from episodic.client import Client
from episodic.client_calls import RemoteCallError
from episodic.client_inprocess import _LocalRpcError as _Failure

pytestmark = pytest.mark.unit


class _Stub:
    """A stub whose ListStreams fails with the given statuses in turn."""

    def __init__(self, codes: list[grpc.StatusCode]) -> None:
        self.codes = list(codes)
        self.calls = 0

    def ListStreams(self, request: Any, timeout: float | None = None, metadata: Any = ()) -> Any:  # noqa: N802
        self.calls += 1
        code = self.codes.pop(0)
        raise _Failure(code, "failed to connect" if code == grpc.StatusCode.UNAVAILABLE else "Deadline Exceeded")


def _client(monkeypatch, codes: list[grpc.StatusCode]) -> tuple[Client, _Stub]:
    stub = _Stub(codes)
    client = Client("127.0.0.1:1", timeout_s=20)
    monkeypatch.setattr(client, "_stub", lambda: stub)
    monkeypatch.setattr("episodic.client_calls.retry_pause", lambda attempt: 0.0)
    return client, stub


def test_a_deadline_that_passes_while_retrying_a_down_server_reports_it_unavailable(monkeypatch):
    client, stub = _client(monkeypatch, [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED])
    with pytest.raises(RemoteCallError) as info:
        client.list_streams()
    assert stub.calls == 2
    assert info.value.code == "UNAVAILABLE" and info.value.exit_code == 4
    assert "failed to connect" in str(info.value) and "deadline passed while retrying" in str(info.value)


def test_a_deadline_on_the_first_try_stays_a_deadline(monkeypatch):
    # a server that is up but too slow: nothing was retried, so the deadline is the cause
    client, stub = _client(monkeypatch, [grpc.StatusCode.DEADLINE_EXCEEDED])
    with pytest.raises(RemoteCallError) as info:
        client.list_streams()
    assert stub.calls == 1 and info.value.code == "DEADLINE_EXCEEDED" and info.value.exit_code == 6


def test_a_server_down_for_every_try_is_unavailable_after_four(monkeypatch):
    client, stub = _client(monkeypatch, [grpc.StatusCode.UNAVAILABLE] * 4)
    with pytest.raises(RemoteCallError) as info:
        client.list_streams()
    assert stub.calls == 4 and info.value.code == "UNAVAILABLE"
    assert "retrying" not in str(info.value)
