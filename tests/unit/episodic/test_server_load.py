"""The query server under load and abuse, against a real gRPC server on a loopback port.

No models run: the components are stand-ins (a store that counts its reads, a question
answerer whose Ask blocks until the test lets it go), because what is under test is the
server's scheduling and error handling, not the model. Timings are asserted only loosely
(benchmarks/bench_serving.py measures them).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY

from episodic import server as server_mod
from episodic import servicer as servicer_mod
from episodic.config import Settings, load_settings
from episodic.core.errors import InputError, shown
from episodic.core.query import AskResult, Pathway, QueryType
from episodic.core.records import ShortTermMemory, StreamInfo
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc

KEY_A = "kitchen-key-0123456789abcdef"  # sees "kitchen"
KEY_ALL = "admin-key-0123456789abcdef01"  # sees everything
SEG_K0, SEG_S0 = "kitchen@000000000000", "station@000000000000"
Code = grpc.StatusCode
GENEROUS_S = 1.0  # "fast" in a test on a shared 2-core machine; typically a few milliseconds


def md(key: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {key}"),)


# -- stand-ins ---------------------------------------------------------------------------------
class CountingStore:
    """Two segments (one per stream) and their streams; every record read is counted."""

    def __init__(self) -> None:
        self.memories = {
            sid: ShortTermMemory(sid, sid.partition("@")[0], 0.0, 8.0, np.zeros(4, dtype=np.float32))
            for sid in (SEG_K0, SEG_S0)
        }
        self.reads: list[str] = []
        self._lock = threading.Lock()

    def _read(self, ident: str) -> None:
        with self._lock:
            self.reads.append(ident)

    def get_memory(self, ident: str, with_vectors: bool = False) -> ShortTermMemory | None:
        self._read(ident)
        return self.memories.get(ident)

    def get_event(self, ident: str) -> Any:
        self._read(ident)
        memory = self.memories.get(ident.removesuffix(".e"))
        if memory is None:
            return None
        return type("Event", (), {"stream_id": memory.stream_id, "memory_id": memory.id})()

    def list_streams(self) -> list[StreamInfo]:
        return [StreamInfo("kitchen", t_end=8.0), StreamInfo("station", t_end=8.0)]


class SlowQA:
    """Ask blocks until ``go`` is set (a model that is busy for as long as the test likes);
    Search answers at once."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.entered = 0
        self._lock = threading.Lock()

    def ask(self, req: Any) -> AskResult:
        with self._lock:
            self.entered += 1
        assert self.go.wait(60), "the test never let the model go"
        return AskResult(answer="three apples", confidence=0.9, pathway=Pathway.FAST,
                         query_type=QueryType.AUDIO, evidence=[])

    def search(self, query: str, scope: Any, top_k: int, deadline_s: float | None = None, **example: Any) -> list[Any]:
        return []


@dataclass
class FakeComponents:
    store: Any
    settings: Settings
    snippets: Any = None


@dataclass
class Running:
    handle: server_mod.ServerHandle
    channel: grpc.Channel
    stub: pb_grpc.EpisodicMemoryStub
    health: health_pb2_grpc.HealthStub
    store: CountingStore
    qa: SlowQA

    @property
    def turns(self) -> servicer_mod.ModelTurns:
        return self.handle.servicer._asks


@pytest.fixture
def serve(tmp_path) -> Iterator[Any]:
    """``serve(**settings)`` → a started server over the stand-ins, stopped afterwards."""
    started: list[Running] = []
    keys_file = tmp_path / "keys.toml"
    keys_file.write_text(f'"{KEY_A}" = ["kitchen"]\n"{KEY_ALL}" = ["*"]\n')
    keys_file.chmod(0o600)

    def start(**overrides: Any) -> Running:
        settings = load_settings(data_dir=tmp_path / "data", env={}, grpc_host="127.0.0.1", grpc_port=0,
                                 api_keys_file=str(keys_file), **overrides)
        store = CountingStore()
        handle = server_mod.create_server(settings, FakeComponents(store, settings))
        qa = SlowQA()
        handle.servicer._qa = qa
        handle.server.start()
        channel = grpc.insecure_channel(handle.address)
        grpc.channel_ready_future(channel).result(timeout=10)
        running = Running(handle, channel, pb_grpc.EpisodicMemoryStub(channel),
                          health_pb2_grpc.HealthStub(channel), store, qa)
        started.append(running)
        return running

    yield start
    for running in started:
        running.qa.go.set()
        running.channel.close()
        running.handle.stop(0)


def _wait_until(condition: Any, timeout_s: float = 20.0) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < end, "timed out waiting for the server"
        time.sleep(0.01)


def _timed(call: Any) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def _code(future: Any) -> Code:
    try:
        future.result()
    except grpc.RpcError as exc:
        return exc.code()
    return Code.OK


# -- health and listings stay fast while Asks wait ---------------------------------------------
def test_health_listings_and_search_stay_fast_while_50_asks_wait_for_the_model(serve):
    """The pool has grpc_max_workers threads that model calls can never take: with 50 Asks
    holding a thread each (1 running, 49 in line), the other calls still find one. Before,
    8 waiting Asks took every thread and a health check waited for the model."""
    srv = serve(grpc_max_workers=4, grpc_max_concurrent_asks=1, grpc_max_queued_asks=64)
    with grpc.insecure_channel(srv.handle.address) as ask_channel:
        stub = pb_grpc.EpisodicMemoryStub(ask_channel)
        asks = [stub.Ask.future(pb.AskRequest(question=f"What is in bowl {i}?"), metadata=md(KEY_ALL), timeout=60)
                for i in range(50)]
        _wait_until(lambda: srv.qa.entered == 1 and srv.turns.waiting == 49)

        slowest = 0.0
        for _ in range(5):
            slowest = max(
                slowest,
                _timed(lambda: srv.health.Check(health_pb2.HealthCheckRequest(), timeout=5)),
                _timed(lambda: srv.health.Check(
                    health_pb2.HealthCheckRequest(service="episodic.v1.EpisodicMemory"), timeout=5)),
                _timed(lambda: srv.stub.ListStreams(pb.ListStreamsRequest(), metadata=md(KEY_A), timeout=5)),
                _timed(lambda: srv.stub.Search(pb.SearchRequest(query="apples"), metadata=md(KEY_A), timeout=5)),
                _timed(lambda: srv.stub.GetSegment(pb.GetSegmentRequest(id=SEG_K0), metadata=md(KEY_A), timeout=5)),
            )
        assert slowest < GENEROUS_S, slowest
        assert not any(f.done() for f in asks)  # all still waiting for the model meanwhile

        srv.qa.go.set()
        replies = [f.result(timeout=60) for f in asks]
    assert [r.answer for r in replies] == ["three apples"] * 50
    assert srv.turns.running == 0 and srv.turns.waiting == 0


def test_asks_beyond_the_queue_are_refused_at_once_with_a_retry_hint(serve):
    srv = serve(grpc_max_workers=2, grpc_max_concurrent_asks=1, grpc_max_queued_asks=3)
    with grpc.insecure_channel(srv.handle.address) as ask_channel:
        stub = pb_grpc.EpisodicMemoryStub(ask_channel)
        queued = [stub.Ask.future(pb.AskRequest(question="What?"), metadata=md(KEY_A), timeout=60)
                  for _ in range(4)]
        _wait_until(lambda: srv.qa.entered == 1 and srv.turns.waiting == 3)
        extra = [stub.Ask.future(pb.AskRequest(question="What?"), metadata=md(KEY_A), timeout=60)
                 for _ in range(6)]
        # refused while the model is still busy: nobody waited for it
        for future in extra:
            err = future.exception(timeout=10)
            assert err is not None and err.code() == Code.RESOURCE_EXHAUSTED, err
            assert "retry after" in err.details() and "grpc_max_queued_asks" in err.details()
            hint = dict(err.trailing_metadata())["retry-after-ms"]
            assert 100 <= int(hint) <= 60_000
            assert f"retry after {hint} ms" in err.details()
        assert not any(f.done() for f in queued)
        # the refusals left the line as it was, and everything else still answers
        assert srv.turns.waiting == 3
        srv.health.Check(health_pb2.HealthCheckRequest(), timeout=5)
        srv.qa.go.set()
        assert [_code(f) for f in queued] == [Code.OK] * 4
    # the line is free again: a new Ask is answered
    assert srv.stub.Ask(pb.AskRequest(question="What?"), metadata=md(KEY_A), timeout=30).answer == "three apples"


def test_model_turns_are_first_come_first_served_and_waiters_leave_the_line():
    turns = servicer_mod.ModelTurns(turns=1, queue_max=3)
    assert turns.acquire(1.0)
    order: list[int] = []

    def wait(i: int) -> None:
        assert turns.acquire(30.0)
        order.append(i)
        turns.release()

    threads = []
    for i in range(3):
        t = threading.Thread(target=wait, args=(i,))
        t.start()
        threads.append(t)
        _wait_until(lambda i=i: turns.waiting == i + 1)
    with pytest.raises(servicer_mod.Overloaded) as info:
        turns.acquire(30.0)
    assert info.value.code == Code.RESOURCE_EXHAUSTED and info.value.trailing[0][0] == "retry-after-ms"
    turns.release()
    for t in threads:
        t.join(10)
    assert order == [0, 1, 2]
    # a waiter whose deadline passes, or whose caller is gone, leaves the line with False
    assert turns.acquire(1.0)
    assert turns.acquire(0.05) is False
    assert turns.acquire(30.0, alive=lambda: False) is False
    assert turns.waiting == 0
    turns.release()
    with pytest.raises(ValueError):
        turns.release()


# -- bounded error messages --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "request_"),
    [
        ("GetSegment", pb.GetSegmentRequest(id="x" * 20_000)),
        ("DownloadSnippet", pb.DownloadSnippetRequest(segment_id="k" * 20_000)),
        ("ListEvents", pb.ListEventsRequest(stream_ids=["s" * 20_000])),
        ("Ask", pb.AskRequest(question="What?", stream_ids=["s" * 20_000])),
        ("Search", pb.SearchRequest(query="apples", stream_ids=["s" * 20_000])),
    ],
    ids=["segment-id", "snippet-id", "events-stream", "ask-stream", "search-stream"],
)
def test_a_20kB_value_is_invalid_argument_with_a_short_message(serve, method, request_):
    srv = serve()
    with pytest.raises(grpc.RpcError) as info:
        reply = getattr(srv.stub, method)(request_, metadata=md(KEY_ALL), timeout=10)
        if isinstance(reply, Iterator):
            list(reply)
    err = info.value
    assert err.code() == Code.INVALID_ARGUMENT, err.details()
    assert len(err.details()) < 300 and "20000 characters" in err.details(), err.details()
    assert srv.store.reads == []


def test_status_messages_are_bounded_centrally():
    code, message = servicer_mod._status_for(InputError("bad value " + "z" * 20_000), "GetSegment", None)
    assert code == Code.INVALID_ARGUMENT
    assert len(message) <= servicer_mod.MAX_MESSAGE_CHARS + 40 and message.endswith("(20010 characters)")
    code, message = servicer_mod._status_for(servicer_mod.ApiError(Code.NOT_FOUND, "y" * 5000), "X", None)
    assert code == Code.NOT_FOUND and len(message) < 450
    assert shown("a" * 20_000) == repr("a" * 20_000)[:100] + "… (20000 characters)"
    assert shown("short") == "'short'"


# -- another tenant's record costs what a missing one costs ------------------------------------
def test_foreign_and_missing_ids_are_the_same_not_found_and_foreign_ids_read_nothing(serve):
    srv = serve()

    def not_found(ident: str, method: str = "GetSegment") -> str:
        with pytest.raises(grpc.RpcError) as info:
            if method == "GetSegment":
                srv.stub.GetSegment(pb.GetSegmentRequest(id=ident), metadata=md(KEY_A), timeout=10)
            else:
                list(srv.stub.DownloadSnippet(pb.DownloadSnippetRequest(segment_id=ident), metadata=md(KEY_A),
                                              timeout=10))
        assert info.value.code() == Code.NOT_FOUND, info.value.details()
        return info.value.details().replace(ident, "ID")

    foreign = [SEG_S0, SEG_S0 + ".e", "station@000000099000", "station@000000099000.e", "nosuchstream@000000000000"]
    messages = {not_found(ident) for ident in foreign}
    messages |= {not_found(ident, "DownloadSnippet") for ident in foreign}
    assert srv.store.reads == []  # decided from the id: existence never mattered
    # the key's own stream is read, and a missing record there reads the same
    messages.add(not_found("kitchen@000000099000"))
    messages.add(not_found("kitchen@000000099000.e"))
    assert srv.store.reads == ["kitchen@000000099000", "kitchen@000000099000.e"]
    assert messages == {"no segment 'ID'"}
    # while records the key may see are found, and another key sees the foreign one
    assert srv.stub.GetSegment(pb.GetSegmentRequest(id=SEG_K0), metadata=md(KEY_A), timeout=10).stream_id == "kitchen"
    assert srv.stub.GetSegment(pb.GetSegmentRequest(id=SEG_S0 + ".e"), metadata=md(KEY_ALL),
                               timeout=10).stream_id == "station"


# -- malformed bodies and the access log -------------------------------------------------------
def _malformed_count(method: str) -> float:
    return REGISTRY.get_sample_value("episodic_malformed_requests_total", {"method": method}) or 0.0


@pytest.mark.parametrize("method", ["GetSegment", "DownloadSnippet"])
def test_a_malformed_body_is_one_log_line_and_a_count(serve, caplog, method):
    srv = serve()
    before = _malformed_count(method)
    call = (srv.channel.unary_unary if method == "GetSegment" else srv.channel.unary_stream)(
        f"/episodic.v1.EpisodicMemory/{method}")  # no serializers: the bytes go as they are
    caplog.set_level(logging.INFO)
    with pytest.raises(grpc.RpcError) as info:
        reply = call(b"\xff\xff\xff\xff", metadata=md(KEY_A), timeout=10)
        if method == "DownloadSnippet":
            list(reply)
    assert info.value.code() == Code.INVALID_ARGUMENT
    assert "not a valid" in info.value.details() and "4 bytes" in info.value.details()
    assert _malformed_count(method) == before + 1
    lines = [r for r in caplog.records if r.name != "episodic.access"]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "does not parse" in lines[0].getMessage() and lines[0].exc_info is None
    assert "Traceback" not in caplog.text and "deserializing" not in caplog.text
    srv.stub.ListStreams(pb.ListStreamsRequest(), metadata=md(KEY_A), timeout=10)  # still serving


def test_every_call_leaves_one_access_log_line_without_user_values(serve, caplog):
    srv = serve()
    caplog.set_level(logging.INFO, logger="episodic.access")
    srv.stub.ListStreams(pb.ListStreamsRequest(), metadata=md(KEY_A), timeout=10)
    with pytest.raises(grpc.RpcError):
        srv.stub.GetSegment(pb.GetSegmentRequest(id="station@000000000123"), metadata=md(KEY_A), timeout=10)
    with pytest.raises(grpc.RpcError):
        srv.stub.ListStreams(pb.ListStreamsRequest(), metadata=md("not-a-key-but-long-enough-000"), timeout=10)
    lines = [r.getMessage() for r in caplog.records if r.name == "episodic.access"]
    key_id = srv.handle.servicer.keys.authenticate(md(KEY_A)).key_id
    assert len(lines) == 3, lines
    assert lines[0].startswith(f"method=ListStreams key={key_id} code=OK ms=")
    assert lines[1].startswith(f"method=GetSegment key={key_id} code=NOT_FOUND ms=")
    assert lines[2].startswith("method=ListStreams key=- code=UNAUTHENTICATED ms=")
    assert float(lines[0].rpartition("ms=")[2]) >= 0
    assert not any("station@" in line or KEY_A in line or "not-a-key" in line for line in lines)


def test_the_pool_leaves_grpc_max_workers_threads_to_everything_but_the_model(tmp_path):
    settings = load_settings(data_dir=tmp_path, env={}, grpc_max_workers=8, grpc_max_concurrent_asks=2,
                             grpc_max_queued_asks=16)
    assert server_mod.pool_size(settings) == 8 + 2 + 16 + servicer_mod.ALERT_FOLLOWERS_MAX
    assert "grpc_max_queued_asks must be in 0..1000" in " ".join(
        settings.replace(grpc_max_queued_asks=-1).server.problems())
