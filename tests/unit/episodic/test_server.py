"""The gRPC API against a real server on a loopback port, over a store built by a real ingest.

One generated recording is ingested twice, as streams "kitchen" and "station", so that two
API keys scoped to one stream each can be checked for isolation; a third key sees all.
Besides Ask/Search (through the question-answering service, services.qa): listing, segments,
snippets, keys, TLS, bad input, deadlines, error mapping, concurrency and the CLI's client side.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from episodic import api_convert, api_records, samples, server_auth, server_paging
from episodic import server as server_mod
from episodic import servicer as servicer_mod
from episodic.config import Settings, load_settings
from episodic.core.errors import ConfigError, StoreError
from episodic.dev_broker import free_port
from episodic.proto import generate
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from tests.cli_runner import run_cli

slow = pytest.mark.slow  # the store fixture runs the real models

KEY_A = "kitchen-key-0123456789abcdef"  # sees "kitchen"
KEY_B = "station-key-0123456789abcdef"  # sees "station"
KEY_ALL = "admin-key-0123456789abcdef01"  # sees everything
SEG_K0, SEG_K1 = "kitchen@000000000000", "kitchen@000000008000"
SEG_S0 = "station@000000000000"
Code = grpc.StatusCode


def md(key: str | None, header: str = "authorization") -> tuple[tuple[str, str], ...]:
    if key is None:
        return ()
    return ((header, f"Bearer {key}" if header == "authorization" else key),)


def rpc_error(fn: Any, request: Any, **kwargs: Any) -> grpc.RpcError:
    """Call a unary method (or drain a streaming one) and return the error it must raise."""
    with pytest.raises(grpc.RpcError) as info:
        reply = fn(request, **kwargs)
        if isinstance(reply, Iterator):
            list(reply)
    return info.value


@dataclass
class Store:
    settings: Settings
    components: Any
    keys_file: Path


@dataclass
class Server:
    address: str
    stub: pb_grpc.EpisodicMemoryStub
    channel: grpc.Channel


# -- fixtures ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Iterator[Store]:
    from episodic.components import Components
    from episodic.pipeline import ingest_file

    tmp = tmp_path_factory.mktemp("grpc-store")
    recording = tmp / "kitchen.mp4"
    samples.make_recording(
        recording,
        [samples.Scene(8, seed=1, text="KITCHEN"), samples.Scene(8, seed=2, text="PLATFORM 7")],
        [
            samples.Speech(1.0, "Tom put three green apples in the blue bowl."),
            samples.Speech(9.5, "The train to Oxford leaves from platform seven."),
        ],
    )
    components = Components(load_settings(data_dir=tmp / "data"))
    try:
        ingest_file(recording, "kitchen", components)
        ingest_file(recording, "station", components)
        keys_file = tmp / "api-keys.toml"
        keys_file.write_text(
            f'"{KEY_A}" = ["kitchen"]\n"{KEY_B}" = ["station"]\n"{KEY_ALL}" = ["*"]\n'
        )
        keys_file.chmod(0o600)
        yield Store(components.settings, components, keys_file)
    finally:
        components.close()


def _start(settings: Settings, components: Any) -> server_mod.ServerHandle:
    """A started server on a free loopback port (retrying if another process took the port)."""
    for attempt in range(3):
        try:
            handle = server_mod.create_server(settings.replace(grpc_port=free_port()), components)
            break
        except ConfigError:
            if attempt == 2:
                raise
    handle.server.start()
    return handle


@pytest.fixture(scope="module")
def server(store) -> Iterator[Server]:
    settings = store.settings.replace(grpc_host="127.0.0.1", api_keys_file=str(store.keys_file))
    for attempt in range(3):
        port = free_port()
        try:
            grpc_server = server_mod.build_server(settings.replace(grpc_port=port), store.components)
            break
        except ConfigError:
            if attempt == 2:
                raise
    grpc_server.start()
    address = f"127.0.0.1:{port}"
    channel = grpc.insecure_channel(address)
    grpc.channel_ready_future(channel).result(timeout=10)
    try:
        yield Server(address, pb_grpc.EpisodicMemoryStub(channel), channel)
    finally:
        channel.close()
        grpc_server.stop(0).wait()


def _serving(srv: Server) -> None:
    """The server still answers an ordinary call correctly."""
    reply = srv.stub.ListStreams(pb.ListStreamsRequest(), metadata=md(KEY_A), timeout=10)
    assert [s.stream_id for s in reply.streams] == ["kitchen"]


# -- generated code --------------------------------------------------------------------------------
def test_generated_code_is_current(tmp_path):
    fresh = generate.generate(tmp_path)
    assert [p.name for p in fresh] == [
        f"{stem}{suffix}" for stem in ("episodic", "media") for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")
    ]
    committed = generate.PROTO_ROOT / "episodic" / "v1"
    for path in fresh:
        assert path.read_bytes() == (committed / path.name).read_bytes(), (
            f"{path.name} is stale: run `python -m episodic.proto.generate` and commit the result"
        )
    assert "from . import episodic_pb2" in (committed / "episodic_pb2_grpc.py").read_text()


# -- standard services -------------------------------------------------------------------------------
@slow
def test_health_is_serving_without_a_key(server):
    health = health_pb2_grpc.HealthStub(server.channel)
    for name in ("", "episodic.v1.EpisodicMemory"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=name), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


@slow
def test_reflection_lists_the_service(server):
    stub = reflection_pb2_grpc.ServerReflectionStub(server.channel)
    replies = list(
        stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10)
    )
    names = {s.name for s in replies[0].list_services_response.service}
    assert {"episodic.v1.EpisodicMemory", "grpc.health.v1.Health"} <= names
    (reply,) = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(file_containing_symbol="episodic.v1.EpisodicMemory")]),
        timeout=10,
    )
    assert reply.file_descriptor_response.file_descriptor_proto  # clients can build stubs from it


# -- reading, filtered by key ---------------------------------------------------------------------------
@slow
def test_list_streams_is_filtered_by_key(server):
    def ids(key: str) -> list[str]:
        return [s.stream_id for s in server.stub.ListStreams(pb.ListStreamsRequest(), metadata=md(key)).streams]

    assert ids(KEY_A) == ["kitchen"]
    assert ids(KEY_B) == ["station"]
    assert ids(KEY_ALL) == ["kitchen", "station"]
    (kitchen,) = server.stub.ListStreams(pb.ListStreamsRequest(), metadata=md(KEY_A)).streams
    assert kitchen.segments == 2 and kitchen.events == 2 and abs(kitchen.t_end - 16.0) < 0.5


@slow
def test_list_events_filtered_by_key_and_time(server):
    reply = server.stub.ListEvents(pb.ListEventsRequest(), metadata=md(KEY_A))
    assert [e.stream_id for e in reply.events] == ["kitchen", "kitchen"]
    assert [e.segment_id for e in reply.events] == [SEG_K0, SEG_K1]
    assert all(e.summary.strip() and e.id == e.segment_id + ".e" for e in reply.events)
    assert reply.next_page_token == ""
    # x-api-key works as well as authorization: Bearer
    same = server.stub.ListEvents(pb.ListEventsRequest(), metadata=md(KEY_A, "x-api-key"))
    assert same == reply
    later = server.stub.ListEvents(pb.ListEventsRequest(t_min=9.0), metadata=md(KEY_B))
    assert [(e.stream_id, e.t_start) for e in later.events] == [("station", 8.0)]
    early = server.stub.ListEvents(pb.ListEventsRequest(t_max=7.0), metadata=md(KEY_ALL))
    assert [(e.stream_id, e.t_start) for e in early.events] == [("kitchen", 0.0), ("station", 0.0)]


@slow
def test_list_events_pages(server):
    everything = server.stub.ListEvents(pb.ListEventsRequest(), metadata=md(KEY_ALL)).events
    assert len(everything) == 4
    seen, token = [], ""
    for _ in range(10):
        page = server.stub.ListEvents(pb.ListEventsRequest(page_size=3, page_token=token), metadata=md(KEY_ALL))
        seen += list(page.events)
        token = page.next_page_token
        if not token:
            break
    assert seen == list(everything)
    first = server.stub.ListEvents(pb.ListEventsRequest(page_size=1), metadata=md(KEY_ALL))
    err = rpc_error(
        server.stub.ListEvents,
        pb.ListEventsRequest(page_size=1, page_token=first.next_page_token, t_min=1.0),
        metadata=md(KEY_ALL),
    )
    assert err.code() == Code.INVALID_ARGUMENT and "different query" in err.details()


@slow
def test_get_segment(server, store):
    seg = server.stub.GetSegment(pb.GetSegmentRequest(id=SEG_K0), metadata=md(KEY_A))
    assert (seg.id, seg.stream_id, seg.t_start, seg.t_end) == (SEG_K0, "kitchen", 0.0, 8.0)
    assert "apple" in seg.transcript.lower() and "KITCHEN" in seg.ocr_text
    assert seg.transcript_pieces and seg.visual_text and seg.keyframe_times
    assert len(seg.snippets) == 1 and seg.snippets[0].content_type == "video/mp4"
    assert {"embedder", "asr", "describer"} <= set(seg.models)
    by_event = server.stub.GetSegment(pb.GetSegmentRequest(id=SEG_K1 + ".e"), metadata=md(KEY_A))
    assert by_event.id == SEG_K1 and "platform" in by_event.transcript.lower()
    stored = store.components.store.get_memory(SEG_K1, with_vectors=False)
    assert api_records.segment_to_proto(stored) == by_event


@slow
def test_download_snippet_bytes_equal_the_file(server, store, monkeypatch):
    seg = server.stub.GetSegment(pb.GetSegmentRequest(id=SEG_K0), metadata=md(KEY_A))
    expected = store.components.snippets.path_for(seg.snippets[0].uri).read_bytes()
    chunks = list(server.stub.DownloadSnippet(pb.DownloadSnippetRequest(segment_id=SEG_K0), metadata=md(KEY_A)))
    assert b"".join(c.data for c in chunks) == expected
    assert all(len(c.data) <= 1024 * 1024 for c in chunks)
    # small chunks: offsets and sizes line up, metadata on every chunk
    monkeypatch.setattr(servicer_mod, "CHUNK_BYTES", 10_000)
    chunks = list(server.stub.DownloadSnippet(pb.DownloadSnippetRequest(segment_id=SEG_K0), metadata=md(KEY_A)))
    assert len(chunks) == -(-len(expected) // 10_000)
    assert b"".join(c.data for c in chunks) == expected
    offsets = [sum(len(c.data) for c in chunks[:i]) for i in range(len(chunks))]
    assert [c.offset for c in chunks] == offsets
    assert {(c.total_size, c.content_type) for c in chunks} == {(len(expected), "video/mp4")}


# -- access control --------------------------------------------------------------------------------------
@slow
def test_tenant_isolation(server):
    stub = server.stub
    err = rpc_error(stub.ListEvents, pb.ListEventsRequest(stream_ids=["station"]), metadata=md(KEY_A))
    assert err.code() == Code.PERMISSION_DENIED and "station" in err.details()
    err = rpc_error(stub.ListEvents, pb.ListEventsRequest(stream_ids=["kitchen", "station"]), metadata=md(KEY_A))
    assert err.code() == Code.PERMISSION_DENIED
    # another tenant's segment reads exactly like one that does not exist
    for ident in (SEG_S0, SEG_S0 + ".e"):
        hidden = rpc_error(stub.GetSegment, pb.GetSegmentRequest(id=ident), metadata=md(KEY_A))
        assert hidden.code() == Code.NOT_FOUND
    missing = rpc_error(stub.GetSegment, pb.GetSegmentRequest(id="station@000000099000"), metadata=md(KEY_A))
    assert missing.code() == Code.NOT_FOUND
    assert hidden.details().replace(SEG_S0 + ".e", "X") == missing.details().replace("station@000000099000", "X")
    err = rpc_error(stub.DownloadSnippet, pb.DownloadSnippetRequest(segment_id=SEG_S0), metadata=md(KEY_A))
    assert err.code() == Code.NOT_FOUND
    # Ask and Search are scoped before any model runs
    err = rpc_error(stub.Ask, pb.AskRequest(question="What train?", stream_ids=["station"]), metadata=md(KEY_A))
    assert err.code() == Code.PERMISSION_DENIED
    err = rpc_error(stub.Search, pb.SearchRequest(query="train", stream_ids=["station"]), metadata=md(KEY_A))
    assert err.code() == Code.PERMISSION_DENIED
    # and the other key sees its own stream, not kitchen
    assert stub.GetSegment(pb.GetSegmentRequest(id=SEG_S0), metadata=md(KEY_B)).stream_id == "station"
    err = rpc_error(stub.GetSegment, pb.GetSegmentRequest(id=SEG_K0), metadata=md(KEY_B))
    assert err.code() == Code.NOT_FOUND
    _serving(server)


@slow
@pytest.mark.parametrize(
    "metadata",
    [
        (),
        md("not-a-key-but-long-enough-000"),
        (("authorization", "Bearer "),),
        (("authorization", f"Basic {KEY_A}"),),
        (("authorization", f"Bearer {KEY_A}"), ("x-api-key", KEY_B)),
    ],
    ids=["missing", "wrong", "empty-bearer", "wrong-scheme", "two-keys"],
)
def test_missing_or_wrong_key_is_unauthenticated(server, metadata):
    for method, request in [
        (server.stub.ListStreams, pb.ListStreamsRequest()),
        (server.stub.ListEvents, pb.ListEventsRequest()),
        (server.stub.GetSegment, pb.GetSegmentRequest(id=SEG_K0)),
        (server.stub.DownloadSnippet, pb.DownloadSnippetRequest(segment_id=SEG_K0)),
        (server.stub.Ask, pb.AskRequest(question="What?")),
        (server.stub.Search, pb.SearchRequest(query="apples")),
    ]:
        err = rpc_error(method, request, metadata=metadata)
        assert err.code() == Code.UNAUTHENTICATED, (method, err.details())
    _serving(server)


# -- bad input --------------------------------------------------------------------------------------------
INJECTIONS = ['" or 1==1', "kitchen\" or stream_id != \"", "[kitchen]", "kitchen'", "kitchen\n", "", "a" * 200]
BAD_IDS = ['" or 1==1', 'kitchen@000000000000" or id != "', "[kitchen]", "kitchen'", SEG_K0 + "\n", "x" * 300,
           "../../etc/passwd", "kitchen@0 0"]


def _bad_requests() -> list[tuple[str, str, Any]]:
    cases: list[tuple[str, str, Any]] = [
        ("empty-question", "Ask", pb.AskRequest(question="")),
        ("blank-question", "Ask", pb.AskRequest(question=" \n\t ")),
        ("100kB-question", "Ask", pb.AskRequest(question="why " * 25_000)),
        ("top_k=-1", "Ask", pb.AskRequest(question="What?", top_k=-1)),
        ("top_k=1e9", "Ask", pb.AskRequest(question="What?", top_k=10**9)),
        ("reversed-range", "Ask", pb.AskRequest(question="What?", t_min=10, t_max=2)),
        ("nan-time", "Ask", pb.AskRequest(question="What?", t_min=float("nan"))),
        ("11-options", "Ask", pb.AskRequest(question="What?", options=[str(i) for i in range(11)])),
        ("1-option", "Ask", pb.AskRequest(question="What?", options=["only"])),
        ("long-option", "Ask", pb.AskRequest(question="What?", options=["a", "b" * 501])),
        ("empty-option", "Ask", pb.AskRequest(question="What?", options=["a", ""])),
        ("empty-query", "Search", pb.SearchRequest(query="")),
        ("100kB-query", "Search", pb.SearchRequest(query="x" * 100_000)),
        ("search-top_k=-1", "Search", pb.SearchRequest(query="apples", top_k=-1)),
        ("search-top_k=1e9", "Search", pb.SearchRequest(query="apples", top_k=10**9)),
        ("search-reversed", "Search", pb.SearchRequest(query="apples", t_min=5, t_max=1)),
        ("events-reversed", "ListEvents", pb.ListEventsRequest(t_min=10, t_max=2)),
        ("events-inf", "ListEvents", pb.ListEventsRequest(t_max=float("inf"))),
        ("page_size=-1", "ListEvents", pb.ListEventsRequest(page_size=-1)),
        ("page_size=1e6", "ListEvents", pb.ListEventsRequest(page_size=10**6)),
        ("garbage-token", "ListEvents", pb.ListEventsRequest(page_token="not a token")),
        ("huge-token", "ListEvents", pb.ListEventsRequest(page_token="A" * 100_000)),
        ("empty-segment-id", "GetSegment", pb.GetSegmentRequest(id="")),
        ("snippet-index=-1", "DownloadSnippet", pb.DownloadSnippetRequest(segment_id=SEG_K0, index=-1)),
    ]
    for i, bad in enumerate(INJECTIONS):
        cases.append((f"events-stream-{i}", "ListEvents", pb.ListEventsRequest(stream_ids=[bad])))
        cases.append((f"ask-stream-{i}", "Ask", pb.AskRequest(question="What?", stream_ids=[bad])))
        cases.append((f"search-stream-{i}", "Search", pb.SearchRequest(query="apples", stream_ids=[bad])))
    for i, bad in enumerate(BAD_IDS):
        cases.append((f"segment-id-{i}", "GetSegment", pb.GetSegmentRequest(id=bad)))
        cases.append((f"snippet-id-{i}", "DownloadSnippet", pb.DownloadSnippetRequest(segment_id=bad)))
    return cases


@slow
@pytest.mark.parametrize(("method", "request_"), [c[1:] for c in _bad_requests()], ids=[c[0] for c in _bad_requests()])
def test_bad_input_is_invalid_argument_and_the_server_keeps_serving(server, method, request_):
    err = rpc_error(getattr(server.stub, method), request_, metadata=md(KEY_ALL), timeout=30)
    assert err.code() == Code.INVALID_ARGUMENT, err.details()
    assert err.details() and "Traceback" not in err.details()
    _serving(server)


@slow
@pytest.mark.parametrize(
    ("method", "request_"),
    [
        ("GetSegment", pb.GetSegmentRequest(id="kitchen@000000099000")),
        ("GetSegment", pb.GetSegmentRequest(id="kitchen@000000099000.e")),
        ("GetSegment", pb.GetSegmentRequest(id="nosuchstream@000000000000")),
        ("DownloadSnippet", pb.DownloadSnippetRequest(segment_id="kitchen@000000099000")),
        ("DownloadSnippet", pb.DownloadSnippetRequest(segment_id=SEG_K0, index=1)),
        ("DownloadSnippet", pb.DownloadSnippetRequest(segment_id=SEG_K0, index=2**31 - 1)),
    ],
    ids=["segment", "event", "stream", "snippet-segment", "snippet-index", "snippet-index-max"],
)
def test_unknown_ids_are_not_found(server, method, request_):
    err = rpc_error(getattr(server.stub, method), request_, metadata=md(KEY_ALL))
    assert err.code() == Code.NOT_FOUND, err.details()
    _serving(server)


@slow
def test_oversized_message_is_refused_and_the_server_keeps_serving(server):
    # over grpc_max_receive_bytes (9 MiB by default: a Search picture may be 8 MiB)
    too_big = Settings().grpc_max_receive_bytes + 1024 * 1024
    err = rpc_error(server.stub.Ask, pb.AskRequest(question="x" * too_big), metadata=md(KEY_ALL))
    assert err.code() == Code.RESOURCE_EXHAUSTED
    _serving(server)


@slow
def test_expired_deadline(server):
    # a deadline already in the past: gRPC rounds a tiny positive timeout so that a fast reply can
    # still beat it (1e-6 s got a reply in 491 of 500 calls on loopback), a negative one never
    err = rpc_error(server.stub.ListEvents, pb.ListEventsRequest(), metadata=md(KEY_A), timeout=-1)
    assert err.code() == Code.DEADLINE_EXCEEDED
    _serving(server)


# -- the servicer's own error handling, without the network ---------------------------------------------
class FakeContext:
    """Just enough of grpc.ServicerContext to call a servicer method directly."""

    class Aborted(Exception):
        pass

    def __init__(self, key: str | None = KEY_ALL, remaining: float = 30.0) -> None:
        self.metadata = md(key)
        self.remaining = remaining
        self.code: grpc.StatusCode | None = None
        self.details = ""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    def time_remaining(self) -> float:
        return self.remaining

    def is_active(self) -> bool:
        return self.remaining > 0

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.code, self.details = code, details
        raise self.Aborted()


class BrokenStore:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def list_streams(self) -> list[Any]:
        raise self.exc

    def list_events(self, **kwargs: Any) -> list[Any]:
        raise self.exc


class FakeComponents:
    def __init__(self, store: Any) -> None:
        self.store = store
        self.snippets = None


def _servicer(store: Any) -> servicer_mod.EpisodicServicer:
    keys = server_auth.ApiKeys({KEY_ALL: ["*"], KEY_A: ["kitchen"]})
    return servicer_mod.EpisodicServicer(FakeComponents(store), keys)


@pytest.mark.parametrize(
    ("exc", "code", "message"),
    [
        (StoreError("Milvus at /secret/path/milvus.db: reading failed"), Code.UNAVAILABLE, "store is unavailable"),
        (RuntimeError("bug with /secret/path inside"), Code.INTERNAL, "internal error"),
        (KeyError("/secret/path"), Code.INTERNAL, "internal error"),
    ],
)
def test_failures_map_to_status_without_leaking_details(exc, code, message, caplog):
    servicer = _servicer(BrokenStore(exc))
    ctx = FakeContext()
    with pytest.raises(FakeContext.Aborted):
        servicer.ListStreams(pb.ListStreamsRequest(), ctx)
    assert ctx.code == code and message in ctx.details and "/secret" not in ctx.details
    assert "/secret/path" in caplog.text  # the details are in the server log


def test_servicer_refuses_work_after_the_deadline():
    servicer = _servicer(BrokenStore(AssertionError("the store must not be called")))
    ctx = FakeContext(remaining=0.0)
    with pytest.raises(FakeContext.Aborted):
        servicer.ListEvents(pb.ListEventsRequest(), ctx)
    assert ctx.code == Code.DEADLINE_EXCEEDED
    ctx = FakeContext(remaining=0.0)
    with pytest.raises(FakeContext.Aborted):
        list(servicer.DownloadSnippet(pb.DownloadSnippetRequest(segment_id=SEG_K0), ctx))
    assert ctx.code == Code.DEADLINE_EXCEEDED


def test_servicer_ask_deadline_exceeded_from_memory_qa(monkeypatch):
    """MemoryQA gets the call's deadline as deadline_s, and its DeadlineExceeded becomes
    DEADLINE_EXCEEDED."""
    from episodic.core.errors import DeadlineExceeded

    class SlowQA:
        def ask(self, req: Any) -> Any:
            assert req.deadline_s is not None and 0 < req.deadline_s <= 5.0
            raise DeadlineExceeded("too slow")

    servicer = _servicer(BrokenStore(AssertionError()))
    servicer._qa = SlowQA()
    ctx = FakeContext(remaining=5.0)
    with pytest.raises(FakeContext.Aborted):
        servicer.Ask(pb.AskRequest(question="What?"), ctx)
    assert ctx.code == Code.DEADLINE_EXCEEDED


def test_ask_refuses_answers_citing_other_streams():
    from episodic.core.query import AskResult, Evidence, Pathway, QueryType

    class LeakyQA:
        def ask(self, req: Any) -> AskResult:
            return AskResult(
                answer="platform 7",
                confidence=0.9,
                pathway=Pathway.FAST,
                query_type=QueryType.AUDIO,
                evidence=[Evidence("station", SEG_S0, 0.0, 8.0, "speech", "platform seven")],
            )

    servicer = _servicer(BrokenStore(AssertionError()))
    servicer._qa = LeakyQA()
    ctx = FakeContext(key=KEY_A)
    with pytest.raises(FakeContext.Aborted):
        servicer.Ask(pb.AskRequest(question="Which platform?"), ctx)
    assert ctx.code == Code.INTERNAL and "platform" not in ctx.details


# -- paging ------------------------------------------------------------------------------------------------------
class ListingStore:
    """The store's listing semantics (overlap filter, (stream, t_start, id) order) in memory,
    counting the rows each call reads."""

    def __init__(self, events: list[Any], stream_ends: dict[str, float]) -> None:
        self.events = events
        self.ends = stream_ends
        self.rows_read = 0

    def list_events(self, stream_id: Any, t_min: Any, t_max: Any, limit: int, with_vectors: bool) -> list[Any]:
        sids = None if stream_id is None else ({stream_id} if isinstance(stream_id, str) else set(stream_id))
        rows = [
            e for e in self.events
            if (sids is None or e.stream_id in sids)
            and (t_min is None or e.t_end >= t_min)
            and (t_max is None or e.t_start <= t_max)
        ]
        self.rows_read += len(rows)
        return sorted(rows, key=lambda e: (e.stream_id, e.t_start, e.id))[:limit]

    def list_streams(self) -> list[Any]:
        from episodic.core.records import StreamInfo

        return [StreamInfo(sid, t_end=t) for sid, t in sorted(self.ends.items())]


def _random_events(seed: int) -> tuple[list[Any], dict[str, float]]:
    import random

    import numpy as np

    from episodic.core.records import ThetaEvent, event_id

    rng = random.Random(seed)
    events, ends = [], {}
    for sid in ("a", "b", "c", "d"):
        t = rng.uniform(0, 50)
        for i in range(rng.randint(0, 120)):
            length = rng.choice([5.0, 8.0, 10.0, 60.0])
            eid = f"{event_id(sid, t)}{i:03d}"  # unique, like the store's primary key
            events.append(ThetaEvent(eid, sid, sid + "@m", t, t + length, "s", np.zeros(0), np.zeros(0)))
            t += rng.choice([0.0, 5.0, 8.0, 10.0, 60.0, 3000.0])  # same starts, overlaps and gaps
        if rng.random() < 0.7:  # some streams have no record, some a stale one (still ingesting)
            ends[sid] = max((e.t_end for e in events if e.stream_id == sid), default=0.0) * rng.choice([1.0, 0.5])
    return events, ends


@pytest.mark.parametrize("seed", range(12))
def test_paging_returns_every_event_once_in_order(seed):
    import random

    events, ends = _random_events(seed)
    rng = random.Random(seed)
    for _ in range(6):
        streams = rng.choice([None, ("a", "b", "c", "d"), ("b",), ("a", "d")])
        t_min = rng.choice([None, 0.0, 100.0, 4000.0])
        t_max = rng.choice([None, 500.0, 9000.0])
        if t_min is not None and t_max is not None and t_min > t_max:
            continue
        store = ListingStore(events, ends)
        expected = store.list_events(streams, t_min, t_max, 1 << 62, False)
        size = rng.choice([1, 3, 10, 100])
        got, after = [], None
        for _ in range(len(expected) + 2):
            page = server_paging.page_events(store, streams, t_min, t_max, after, size + 1)
            got += page[:size]
            if len(page) <= size:
                break
            after = server_paging._event_key(page[size - 1])
        assert [e.id for e in got] == [e.id for e in expected], (streams, t_min, t_max, size)


def test_paging_named_streams_reads_about_a_page_per_page():
    from episodic.core.records import ThetaEvent, event_id

    events = [ThetaEvent(event_id("cam", 8.0 * i), "cam", "m", 8.0 * i, 8.0 * i + 8, "s", None, None) for i in range(5000)]
    store = ListingStore(events, {"cam": 40000.0})
    after = server_paging._event_key(events[2999])
    page = server_paging.page_events(store, ("cam",), None, None, after, 101)
    assert [e.id for e in page] == [e.id for e in events[3000:3101]]
    assert store.rows_read < 400  # not the 5000 a full read would take


# -- configuration ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('"short" = ["kitchen"]\n', "at least 16"),
        (f'"{KEY_A}" = []\n', "non-empty list"),
        (f'"{KEY_A}" = ["bad stream"]\n', "invalid stream id"),
        (f'"{KEY_A}" = "kitchen"\n', "non-empty list"),
        ("not toml at all [", "not valid"),
    ],
)
def test_bad_api_keys_file_is_a_config_error(tmp_path, content, needle):
    path = tmp_path / "keys.toml"
    path.write_text(content)
    with pytest.raises(ConfigError, match=needle):
        server_auth.ApiKeys.from_file(path)


def test_api_keys_json_and_table_forms(tmp_path):
    (tmp_path / "k.json").write_text(json.dumps({KEY_A: ["kitchen"]}))
    (tmp_path / "k.toml").write_text(f'[api_keys]\n"{KEY_A}" = ["kitchen"]\n')
    for name in ("k.json", "k.toml"):
        keys = server_auth.ApiKeys.from_file(tmp_path / name)
        caller = keys.authenticate(md(KEY_A))
        assert caller.streams == frozenset({"kitchen"}) and KEY_A not in caller.key_id


def test_no_keys_refuses_to_bind_beyond_loopback(tmp_path):
    settings = load_settings(data_dir=tmp_path, env={}, grpc_host="0.0.0.0", grpc_port=0)
    with pytest.raises(ConfigError, match="refusing to serve on '0.0.0.0' without API keys"):
        server_mod.build_server(settings, FakeComponents(None))


@slow
def test_no_keys_on_loopback_is_open(store):
    handle = _start(store.settings.replace(api_keys_file=""), store.components)
    try:
        with grpc.insecure_channel(handle.address) as channel:
            reply = pb_grpc.EpisodicMemoryStub(channel).ListStreams(pb.ListStreamsRequest(), timeout=10)
        assert [s.stream_id for s in reply.streams] == ["kitchen", "station"]
    finally:
        handle.stop(0)


@slow
@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is needed to make a test certificate")
def test_tls(store, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )
    settings = store.settings.replace(
        tls_cert_path=str(cert), tls_key_path=str(key), api_keys_file=str(store.keys_file)
    )
    handle = _start(settings, store.components)
    try:
        assert handle.tls
        creds = grpc.ssl_channel_credentials(cert.read_bytes())
        with grpc.secure_channel(handle.address, creds) as channel:
            stub = pb_grpc.EpisodicMemoryStub(channel)
            reply = stub.ListStreams(pb.ListStreamsRequest(), metadata=md(KEY_B), timeout=10)
            assert [s.stream_id for s in reply.streams] == ["station"]
        # the CLI's client side over TLS: the handshake and the key work, the scope is enforced
        proc = run_cli("search", "apples", "--server", handle.address, "--ca-cert", str(cert),
                       "--api-key", KEY_B, "--stream-id", "kitchen", data=tmp_path, check=False)
        assert proc.returncode == 2 and "PERMISSION_DENIED" in proc.stderr, proc.stderr
        with grpc.insecure_channel(handle.address) as channel:  # plaintext to a TLS port fails
            err = rpc_error(pb_grpc.EpisodicMemoryStub(channel).ListStreams, pb.ListStreamsRequest(),
                            metadata=md(KEY_B), timeout=5)
            assert err.code() == Code.UNAVAILABLE
    finally:
        handle.stop(0)


# -- concurrency ------------------------------------------------------------------------------------------------
def _concurrently(n: int, work: Any) -> list[Any]:
    """Run ``work(i)`` in n threads released together; each thread is its own client."""
    barrier = threading.Barrier(n)

    def run(i: int) -> Any:
        barrier.wait(timeout=60)
        return work(i)

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(run, range(n)))


@slow
def test_50_concurrent_clients_list_events(server):
    expected = {
        KEY_A: [SEG_K0 + ".e", SEG_K1 + ".e"],
        KEY_B: [SEG_S0 + ".e", "station@000000008000.e"],
    }

    def client(i: int) -> tuple[str, list[str], str]:
        key = KEY_A if i % 2 else KEY_B
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.EpisodicMemoryStub(channel)
            events = stub.ListEvents(pb.ListEventsRequest(), metadata=md(key), timeout=60).events
            seg = stub.GetSegment(pb.GetSegmentRequest(id=events[-1].segment_id), metadata=md(key), timeout=60)
        return key, [e.id for e in events], seg.stream_id

    for key, ids, stream in _concurrently(50, client):
        assert ids == expected[key]
        assert stream == ("kitchen" if key == KEY_A else "station")


# -- Ask and Search end to end (need services.qa) -------------------------------------------------------
@slow
def test_50_concurrent_clients_search(server):
    """Every client gets its own tenant's moments. "to Oxford" is stored misheard, so each
    station Search released at once hears it again before any has recorded the hearing: the
    Whisper passes queue on one model: 170 s for the test on a 2-core AMD EPYC at 2.45 GHz,
    past the 120 s deadline it once had. The deadline is generous: this checks answers under
    load, not speed (benchmarks/bench_serving.py measures that)."""

    def client(i: int) -> tuple[str, list[pb.Moment]]:
        key = KEY_A if i % 2 else KEY_B
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.EpisodicMemoryStub(channel)
            reply = stub.Search(pb.SearchRequest(query="the train to Oxford", top_k=3), metadata=md(key), timeout=600)
        return key, list(reply.moments)

    for key, moments in _concurrently(50, client):
        assert moments, key
        assert {m.stream_id for m in moments} == {"kitchen" if key == KEY_A else "station"}
        assert moments[0].t_end > 8.0  # the Oxford sentence is in the second half


@slow
def test_concurrent_clients_ask(server):
    """Asks queue for the model (grpc_max_concurrent_asks, 1 here; grpc_max_queued_asks wait)
    but every client gets its own, correct answer from its own tenant's stream. Ten clients
    queue nine deep and outnumber grpc_max_workers (8); 16 and 50 took longer and showed
    nothing new (benchmarks/bench_serving.py measures the queue under load)."""
    questions = {
        KEY_A: ("What did Tom put in the blue bowl?", re.compile(r"apple", re.I), "kitchen"),
        # (not "the train to Oxford": Whisper base hears this synthetic voice's "to Oxford" as
        # "talks for", so that question depends on re-listening, which test_relisten covers)
        KEY_B: ("Which platform does the train leave from?", re.compile(r"7|seven", re.I), "station"),
    }

    def client(i: int) -> tuple[str, pb.AskResponse]:
        key = KEY_A if i % 2 else KEY_B
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.EpisodicMemoryStub(channel)
            reply = stub.Ask(pb.AskRequest(question=questions[key][0], top_k=3), metadata=md(key), timeout=600)
        return key, reply

    for key, reply in _concurrently(10, client):
        _, pattern, stream = questions[key]
        assert pattern.search(reply.answer), (key, reply.answer)
        assert reply.evidence and {e.stream_id for e in reply.evidence} == {stream}


@slow
def test_ask_end_to_end(server):
    reply = server.stub.Ask(
        pb.AskRequest(question="What did Tom put in the blue bowl?", top_k=3), metadata=md(KEY_A), timeout=300
    )
    assert reply.answer.strip()
    assert 0.0 <= reply.confidence <= 1.0 and 0.0 <= reply.fast_confidence <= 1.0
    assert reply.pathway in (pb.PATHWAY_FAST, pb.PATHWAY_DETAILED)
    assert reply.query_type != pb.QUERY_TYPE_UNSPECIFIED
    assert reply.evidence and {e.stream_id for e in reply.evidence} == {"kitchen"}
    assert not reply.HasField("choice_index")
    choice = server.stub.Ask(
        pb.AskRequest(question="Which platform does the train to Oxford leave from?", options=["3", "7", "9"]),
        metadata=md(KEY_B),
        timeout=300,
    )
    assert choice.HasField("choice_index") and 0 <= choice.choice_index < 3
    assert {e.stream_id for e in choice.evidence} <= {"station"}


@slow
def test_ask_past_its_deadline(server):
    """A deadline shorter than a model call: the server either answers in time from the
    evidence alone (it skips the model near the deadline) or says DEADLINE_EXCEEDED; never
    another error, and it keeps serving. Which of the two depends on the machine's speed."""
    try:
        reply = server.stub.Ask(pb.AskRequest(question="What did Tom put in the bowl?"),
                                metadata=md(KEY_A), timeout=0.05)
    except grpc.RpcError as err:
        assert err.code() == Code.DEADLINE_EXCEEDED, err.details()
    else:
        assert reply.answer.strip() and {e.stream_id for e in reply.evidence} <= {"kitchen"}
    err = rpc_error(server.stub.Ask, pb.AskRequest(question="What did Tom put in the bowl?"),
                    metadata=md(KEY_A), timeout=1e-4)
    assert err.code() == Code.DEADLINE_EXCEEDED
    _serving(server)


@slow
def test_search_end_to_end(server):
    reply = server.stub.Search(pb.SearchRequest(query="train to Oxford", top_k=2), metadata=md(KEY_ALL), timeout=300)
    assert 1 <= len(reply.moments) <= 2
    top = reply.moments[0]
    assert top.t_start < 16.0 and top.t_end > 8.0 and top.why
    scoped = server.stub.Search(
        pb.SearchRequest(query="green apples", stream_ids=["station"], t_max=8.0), metadata=md(KEY_ALL), timeout=300
    )
    assert all(m.stream_id == "station" and m.t_start <= 8.0 for m in scoped.moments)


# -- the CLI's client side -----------------------------------------------------------------------------------------
@slow
def test_cli_ask_and_search_through_the_server(server, tmp_path):
    proc = run_cli("search", "train to Oxford", "--server", server.address, "--api-key", KEY_A,
                   "--top-k", "2", "--json", data=tmp_path)
    doc = json.loads(proc.stdout)  # exactly one JSON document
    assert doc["moments"] and {m["stream_id"] for m in doc["moments"]} == {"kitchen"}
    proc = run_cli("ask", "Which platform does the train to Oxford leave from?", "--choices", "3", "7", "9",
                   "--stream-id", "kitchen", "--server", server.address, "--api-key", KEY_A, "--json", data=tmp_path)
    doc = json.loads(proc.stdout)
    assert set(doc) >= {"answer", "choice_index", "confidence", "pathway", "query_type", "evidence"}
    assert doc["choice_index"] in (0, 1, 2) and doc["pathway"] in ("fast", "detailed")


@slow
def test_cli_server_errors_are_one_line(server, tmp_path):
    env_key = {k: v for k, v in os.environ.items() if k != "EPISODIC_API_KEY"}
    cases = [
        (["ask", "What?", "--api-key", "wrong-key-0123456789abcdef"], "UNAUTHENTICATED", 2),
        (["search", "apples", "--api-key", KEY_A, "--stream-id", "station"], "PERMISSION_DENIED", 2),
        (["ask", "What?", "--api-key", KEY_A, "--stream-id", "station", "--choices", "a", "b"], "PERMISSION_DENIED", 2),
    ]
    for args, needle, code in cases:
        proc = subprocess.run(
            [*_cli(), *args, "--server", server.address, "--json"],
            capture_output=True, text=True, env={**env_key, "EPISODIC_DATA": str(tmp_path)}, timeout=120,
        )
        assert proc.returncode == code, proc.stderr
        assert proc.stdout == ""  # --json: nothing but a document on stdout, and there is none
        assert needle in proc.stderr and proc.stderr.strip().count("\n") == 0, proc.stderr
        assert "Traceback" not in proc.stderr
    proc = run_cli("ask", "x" * 5000, "--server", server.address, data=tmp_path, check=False)
    assert proc.returncode == 2 and "5000 characters" in proc.stderr  # checked before sending


def _cli() -> list[str]:
    return [sys.executable, "-m", "episodic.cli"]


def test_cli_ask_json_matches_api_convert(monkeypatch, tmp_path):
    """`--choices A B C` collects every word; the JSON is api_convert's, from the reply."""
    from typer.testing import CliRunner

    from episodic import cli
    from episodic.core.query import AskResult, Evidence, Pathway, QueryType

    result = AskResult(
        answer="seven",
        confidence=0.8125,
        pathway=Pathway.DETAILED,
        query_type=QueryType.VIDEO_AUDIO,
        choice_index=1,
        evidence=[Evidence("kitchen", SEG_K1, 8.0, 16.0, "speech", "platform seven", "file:///x.mp4", 0.5)],
        fast_answer="nine",
        fast_confidence=0.25,
        timings_ms={"total": 12.5},
    )
    sent: list[Any] = []

    def fake_call(client: Any, method: str, request: Any, *rest: Any) -> Any:
        sent.append((client.server, method, request))
        return api_convert.ask_result_to_proto(result)

    from episodic.client import Client

    monkeypatch.setattr(Client, "_unary", fake_call)
    out = CliRunner().invoke(
        cli.app,
        ["ask", "Which platform?", "--choices", "3", "7", "9", "--stream-id", "kitchen", "--stream-id", "station",
         "--t-min", "1", "--top-k", "4", "--server", "host:1", "--json"],
    )
    assert out.exit_code == 0, out.output
    (server_addr, method, request) = sent[0]
    assert (server_addr, method) == ("host:1", "Ask")
    assert list(request.options) == ["3", "7", "9"] and list(request.stream_ids) == ["kitchen", "station"]
    assert request.t_min == 1.0 and not request.HasField("t_max") and request.top_k == 4
    assert json.loads(out.stdout) == api_convert.ask_result_to_dict(result)
    assert api_convert.ask_result_from_proto(api_convert.ask_result_to_proto(result)) == result


@slow
def test_cli_in_process_and_through_the_server_print_the_same_json(server, store):
    """The promise of api_convert: a script cannot tell whether --server was used."""
    from typer.testing import CliRunner

    from episodic import cli

    args = ["search", "train to Oxford", "--top-k", "3", "--json"]
    local = CliRunner().invoke(cli.app, [*args, "--data", str(store.settings.data_dir)])
    assert local.exit_code == 0, local.output
    remote = run_cli(*args, "--server", server.address, "--api-key", KEY_ALL, data=store.settings.data_dir)
    assert json.loads(local.stdout) == json.loads(remote.stdout)


def _serve_process(tmp_path) -> subprocess.Popen:
    """`episodic serve` on an empty store in a child process, any free port, 1 s grace."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPISODIC_")}
    env["EPISODIC_GRPC_GRACE_S"] = "1"
    return subprocess.Popen(
        [*_cli(), "serve", "--port", "0", "--data", str(tmp_path / "data")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )


def test_serve_prints_its_address_and_stops_on_sigterm(tmp_path):
    """`episodic serve` on an empty store: it says where it listens, answers health checks and
    calls, and exits 0 on SIGTERM after a graceful stop."""
    import signal

    proc = _serve_process(tmp_path)
    try:
        line = proc.stdout.readline()  # blocks until the server is up (or the process died)
        assert line.startswith("listening on 127.0.0.1:"), (line, proc.stderr.read() if proc.poll() is not None else "")
        address = line.split()[-1]
        with grpc.insecure_channel(address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            assert health.Check(health_pb2.HealthCheckRequest(), timeout=30).status == health_pb2.HealthCheckResponse.SERVING
            reply = pb_grpc.EpisodicMemoryStub(channel).ListStreams(pb.ListStreamsRequest(), timeout=30)
            assert list(reply.streams) == []
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_stopped_while_it_warms_up_exits_cleanly(tmp_path):
    """SIGTERM right after start, while the models still load in a background thread: the
    process used to die with SIGABRT (a model loading in native code at interpreter exit);
    the stop now waits for the warm-up and exits 0."""
    import signal

    proc = _serve_process(tmp_path)
    try:
        assert proc.stdout.readline().startswith("listening on 127.0.0.1:")
        proc.send_signal(signal.SIGTERM)  # the warm-up has only just begun
        assert proc.wait(timeout=120) == 0, proc.stderr.read()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_servicer_lists_events_by_page_within_the_key(tmp_path):
    """ListEvents through the servicer over the in-memory store (no models, no server): pages
    of the caller's streams only, a token that continues where the last page ended, and the
    same validation as everywhere else."""
    from episodic.memory.in_memory_store import InMemoryStore
    from tests.store_fixtures import FEATURE_DIM, MODELS, TEXT_DIM, fill

    store = InMemoryStore()
    store.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
    fill(store)  # streams a (6 events) and b (3)
    keys = server_auth.ApiKeys({KEY_ALL: ["*"], KEY_A: ["a"]})
    servicer = servicer_mod.EpisodicServicer(FakeComponents(store), keys)
    seen: list[str] = []
    token = ""
    while True:
        reply = servicer.ListEvents(pb.ListEventsRequest(page_size=4, page_token=token), FakeContext(KEY_A))
        seen += [e.stream_id for e in reply.events]
        token = reply.next_page_token
        if not token:
            break
    assert seen == ["a"] * 6
    reply = servicer.ListEvents(pb.ListEventsRequest(t_min=15.0, t_max=32.0), FakeContext(KEY_ALL))
    assert [(e.stream_id, e.t_start) for e in reply.events] == [("a", 10.0), ("a", 20.0), ("a", 30.0), ("b", 15.0), ("b", 25.0)]
    for bad in (pb.ListEventsRequest(t_min=10, t_max=2), pb.ListEventsRequest(stream_ids=['a" or 1==1'])):
        ctx = FakeContext(KEY_ALL)
        with pytest.raises(FakeContext.Aborted):
            servicer.ListEvents(bad, ctx)
        assert ctx.code == grpc.StatusCode.INVALID_ARGUMENT


def test_listings_have_one_json_shape_for_the_cli_and_the_api():
    """`episodic streams/events/segments --json` are made from the gRPC messages by the same
    mapping the API uses: the names are the API's (segments, segment_id, snippets[].uri), and
    what only the listing knew (complete, gaps) travels in the message too."""
    import numpy as np

    from episodic.core.records import ShortTermMemory, SnippetRef, StreamInfo, ThetaEvent

    live = StreamInfo("cam", "rtsp://x", 30.0, 3, 3, 5.0, {"gaps": [[10.0, 12.5]]})
    done = StreamInfo("file", "/a.mp4", 60.0, 8, 7, 6.0, {"complete": False})
    doc = api_records.streams_document([live, done])["streams"]
    assert doc[0]["complete"] is None and doc[0]["gaps"] == [{"t_start": 10.0, "t_end": 12.5}]
    assert doc[1]["complete"] is False and doc[1]["segments"] == 8 and doc[1]["gaps"] == []
    assert doc == [api_records.stream_to_dict(m) for m in (api_records.stream_to_proto(s) for s in (live, done))]
    v = np.zeros(4, np.float32)
    event = ThetaEvent(id="cam@0.e", stream_id="cam", memory_id="cam@0", t_start=0.0, t_end=5.0,
                       summary="s", summary_vector=v, vector=v)
    (e,) = api_records.events_document([event])["events"]
    assert e["segment_id"] == "cam@0" and "memory_id" not in e
    memory = ShortTermMemory(id="cam@0", stream_id="cam", t_start=0.0, t_end=5.0, vector=v,
                             snippets=[SnippetRef(uri="file:///s/cam@0.s.mp4", t_start=0.0, t_end=5.0)])
    (seg,) = api_records.segments_document([memory])["segments"]
    assert seg["snippets"][0]["uri"] == "file:///s/cam@0.s.mp4" and seg["snippets"][0]["content_type"] == "video/mp4"
