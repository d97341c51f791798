"""Locate (issue 15, look again) wherever the other queries are exposed: the proto messages and
their conversions, the servicer's scoping, the Python client, and ``episodic locate`` in-process
and through a server.

The fast tests drive the servicer and the CLI over fakes; the ``slow`` ones run a real server on
loopback over a store built by a real ingest of one generated recording with on-screen text
("KITCHEN" for 8 s, then "PLATFORM 7" for 8 s), stored as stream "kitchen". Keys: one sees
"kitchen", one "station" (a stream that is never ingested: scope checks come before any read),
one sees all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from episodic import api_convert, samples, server_auth
from episodic import servicer as servicer_mod
from episodic.config import Settings, load_settings
from episodic.core.errors import ConfigError, InputError
from episodic.core.query import (
    AskResult,
    Evidence,
    LocatedMoment,
    LocateRequest,
    LocateResult,
    Pathway,
    QueryType,
    Scope,
)
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from tests.cli_runner import run_cli

slow = pytest.mark.slow  # the store fixture runs the real models

KEY_A = "kitchen-key-0123456789abcdef"  # sees "kitchen"
KEY_B = "station-key-0123456789abcdef"  # sees "station" (never ingested)
KEY_ALL = "admin-key-0123456789abcdef01"  # sees everything
Code = grpc.StatusCode
SIGN_FROM, SIGN_TO, STREAM_END = 8.0, 16.0, 16.0  # "PLATFORM 7" is on screen from 8 to 16 s

MOMENT = LocatedMoment("kitchen", 9.25, 9.0, 9.5, 1.0, "read: PLATFORM 7", 2)
RESULT = LocateResult(
    moments=[MOMENT, LocatedMoment("kitchen", 12.0, 10.0, 14.0, 0.5, "colours: green", 1)],
    frames_examined=192,
    depth=2,
    elapsed_s=1.5,
    stopped="found",
    streams_looked=["kitchen"],
    not_seen=["cam2: no stored video (audio only)"],
)


def md(key: str | None) -> tuple[tuple[str, str], ...]:
    return () if key is None else (("authorization", f"Bearer {key}"),)


def rpc_error(fn: Any, request: Any, **kwargs: Any) -> grpc.RpcError:
    """Call a unary method and return the error it must raise."""
    with pytest.raises(grpc.RpcError) as info:
        fn(request, **kwargs)
    return info.value


# -- conversions (no server) ---------------------------------------------------------------------
def test_locate_request_round_trips_and_zero_means_the_default():
    req = api_convert.locate_request("the platform sign", ["kitchen", "station"], 1.0, 9.0, 256, 4, 30.0)
    assert req == LocateRequest("the platform sign", Scope(("kitchen", "station"), 1.0, 9.0), 256, 4, 30.0)
    msg = api_convert.locate_request_to_proto(req)
    assert (msg.max_frames, msg.top_k, msg.t_min, msg.t_max) == (256, 4, 1.0, 9.0)
    # the deadline travels as the call's gRPC deadline, not in the message
    assert api_convert.locate_request_from_proto(msg, deadline_s=30.0) == req
    # proto3 cannot tell unset from 0: 0 is the documented default, unset times are unbounded
    bare = api_convert.locate_request_from_proto(pb.LocateRequest(query="sign"))
    assert bare == LocateRequest("sign", Scope(), max_frames=1024, top_k=3)
    assert not api_convert.locate_request_to_proto(bare).HasField("t_min")


@pytest.mark.parametrize(
    ("msg", "needle"),
    [
        (pb.LocateRequest(query=""), "query is empty"),
        (pb.LocateRequest(query="  \n"), "query is empty"),
        (pb.LocateRequest(query="sign", max_frames=10), "max_frames"),
        (pb.LocateRequest(query="sign", max_frames=-1), "max_frames"),
        (pb.LocateRequest(query="sign", max_frames=100_001), "max_frames"),
        (pb.LocateRequest(query="sign", top_k=101), "top_k"),
        (pb.LocateRequest(query="sign", t_min=9, t_max=1), "reversed"),
        (pb.LocateRequest(query="sign", stream_ids=['a" or 1==1']), "stream"),
    ],
)
def test_bad_locate_requests_are_input_errors(msg, needle):
    """The same validator as in-process (core.validation.locate_request), so a bad request gets
    the same message through the server as from the CLI."""
    with pytest.raises(InputError, match=needle):
        api_convert.locate_request_from_proto(msg)


def test_locate_result_round_trips_and_has_one_json_shape():
    assert api_convert.locate_result_from_proto(api_convert.locate_result_to_proto(RESULT)) == RESULT
    doc = api_convert.locate_result_to_dict(RESULT)
    assert list(doc) == ["moments", "frames_examined", "depth", "elapsed_s", "stopped", "streams_looked", "not_seen"]
    assert doc["moments"][0] == {"stream_id": "kitchen", "t": 9.25, "t_start": 9.0, "t_end": 9.5,
                                 "confidence": 1.0, "why": "read: PLATFORM 7", "depth": 2}
    # the JSON names are the message's field names
    assert set(doc) == {f.name for f in pb.LocateResponse.DESCRIPTOR.fields}
    assert set(doc["moments"][0]) == {f.name for f in pb.LocatedMoment.DESCRIPTOR.fields}


def test_inspect_pathway_and_flag_cross_the_wire():
    result = AskResult(
        answer="At 0:09.2 in kitchen (read: PLATFORM 7).",
        confidence=0.8,
        pathway=Pathway.INSPECT,
        query_type=QueryType.VIDEO,
        evidence=[Evidence("kitchen", "kitchen@000000008000", 9.0, 9.5, "frame", "[0:09.2] read: PLATFORM 7")],
    )
    msg = api_convert.ask_result_to_proto(result)
    assert msg.pathway == pb.PATHWAY_INSPECT and msg.evidence[0].modality == "frame"
    assert api_convert.ask_result_from_proto(msg) == result
    assert api_convert.ask_result_to_dict(result)["pathway"] == "inspect"
    req = api_convert.ask_request("When was the platform sign shown?", inspect=True)
    assert req.inspect and api_convert.ask_request_to_proto(req).inspect
    assert api_convert.ask_request_from_proto(api_convert.ask_request_to_proto(req)) == req
    assert not api_convert.ask_request_from_proto(pb.AskRequest(question="What?")).inspect


# -- the servicer over a fake look (no models, no network) ------------------------------------------
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

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.code, self.details = code, details
        raise self.Aborted()


class FakeLook:
    """LookAgain.locate that records its requests and answers ``result``."""

    def __init__(self, result: LocateResult) -> None:
        self.result = result
        self.requests: list[LocateRequest] = []

    def locate(self, req: LocateRequest) -> LocateResult:
        self.requests.append(req)
        return LocateResult(**{k: (list(v) if isinstance(v, list) else v) for k, v in vars(self.result).items()})


@dataclass
class FakeQA:
    look: FakeLook

    def search(self, *args: Any, **kwargs: Any) -> list[Any]:
        raise AssertionError("a scope refused before looking never searches")


def _servicer(result: LocateResult = RESULT) -> tuple[servicer_mod.EpisodicServicer, FakeLook]:
    keys = server_auth.ApiKeys({KEY_ALL: ["*"], KEY_A: ["kitchen"], KEY_B: ["station"]})
    servicer = servicer_mod.EpisodicServicer(components=None, keys=keys)
    look = FakeLook(result)
    servicer._qa = FakeQA(look)
    return servicer, look


def _call(servicer: servicer_mod.EpisodicServicer, request: pb.LocateRequest, ctx: FakeContext) -> Any:
    try:
        return servicer.Locate(request, ctx)
    except FakeContext.Aborted:
        return None


def test_servicer_locate_scopes_the_request_and_passes_the_deadline():
    servicer, look = _servicer()
    reply = _call(servicer, pb.LocateRequest(query="platform sign", top_k=1), FakeContext(KEY_A, remaining=12.0))
    assert reply is not None and api_convert.locate_result_from_proto(reply).moments == [MOMENT]  # top_k kept
    (req,) = look.requests
    assert req.scope.stream_ids == ("kitchen",)  # none named: the key's streams
    assert req.deadline_s is not None and 0 < req.deadline_s <= 12.0
    assert (req.max_frames, req.top_k) == (1024, 1)
    all_streams = _call(servicer, pb.LocateRequest(query="sign"), FakeContext(KEY_ALL, remaining=1e9))
    assert all_streams is not None
    assert look.requests[-1].scope.stream_ids is None and look.requests[-1].deadline_s is None  # no deadline set


def test_servicer_locate_refuses_what_search_refuses():
    """Out of scope, bad input and an expired deadline are refused before anything is looked at,
    with the same status (and, for scope, the same message) as Search."""
    servicer, look = _servicer()
    cases = [
        (pb.LocateRequest(query="sign", stream_ids=["station"]), FakeContext(KEY_A), Code.PERMISSION_DENIED),
        (pb.LocateRequest(query="sign", max_frames=10), FakeContext(KEY_A), Code.INVALID_ARGUMENT),
        (pb.LocateRequest(query=""), FakeContext(KEY_A), Code.INVALID_ARGUMENT),
        (pb.LocateRequest(query="sign"), FakeContext(None), Code.UNAUTHENTICATED),
        (pb.LocateRequest(query="sign"), FakeContext(KEY_A, remaining=0.0), Code.DEADLINE_EXCEEDED),
    ]
    for request, ctx, code in cases:
        assert _call(servicer, request, ctx) is None
        assert ctx.code == code, (request, ctx.details)
    assert look.requests == []
    search_ctx, locate_ctx = FakeContext(KEY_A), FakeContext(KEY_A)
    with pytest.raises(FakeContext.Aborted):
        servicer.Search(pb.SearchRequest(query="sign", stream_ids=["station"]), search_ctx)
    _call(servicer, pb.LocateRequest(query="sign", stream_ids=["station"]), locate_ctx)
    assert (locate_ctx.code, locate_ctx.details) == (search_ctx.code, search_ctx.details)


def test_servicer_locate_never_returns_moments_outside_the_scope(caplog):
    leaky = LocateResult(
        moments=[LocatedMoment("station", 3.0, 2.0, 4.0, 1.0, "read: OXFORD"), MOMENT],
        frames_examined=128, stopped="found", streams_looked=["station", "kitchen"],
        not_seen=["station: 1 snippet file(s) missing on disk", "kitchen: 1 snippet file(s) missing on disk"],
    )
    servicer, _ = _servicer(leaky)
    reply = _call(servicer, pb.LocateRequest(query="sign"), FakeContext(KEY_A))
    assert reply is not None
    assert [m.stream_id for m in reply.moments] == ["kitchen"] and list(reply.streams_looked) == ["kitchen"]
    assert list(reply.not_seen) == ["kitchen: 1 snippet file(s) missing on disk"]
    assert "outside the scope" in caplog.text


# -- the client and the CLI's client side (a faked call) --------------------------------------------------
def test_cli_locate_through_a_server_sends_the_request_and_prints_the_reply(monkeypatch):
    from typer.testing import CliRunner

    from episodic import cli
    from episodic.client import Client

    sent: list[tuple[str, str, Any, float]] = []

    def fake_call(client: Any, method: str, request: Any, timeout_s: float) -> Any:
        sent.append((client.server, method, request, timeout_s))
        return api_convert.locate_result_to_proto(RESULT)

    monkeypatch.setattr(Client, "_unary", fake_call)
    out = CliRunner().invoke(
        cli.app,
        ["locate", "the platform sign", "--stream-id", "kitchen", "--stream-id", "station", "--t-min", "2",
         "--max-frames", "128", "--top-k", "2", "--timeout", "40", "--server", "host:1", "--json"],
    )
    assert out.exit_code == 0, out.output
    ((server_addr, method, request, timeout_s),) = sent
    assert (server_addr, method, timeout_s) == ("host:1", "Locate", 40.0)
    assert list(request.stream_ids) == ["kitchen", "station"] and request.t_min == 2.0
    assert not request.HasField("t_max") and (request.max_frames, request.top_k) == (128, 2)
    assert json.loads(out.stdout) == api_convert.locate_result_to_dict(RESULT)
    # Client.locate itself: the typed result, whichever way it came
    with Client("host:1") as client:
        assert client.locate(LocateRequest("sign")) == RESULT
    assert sent[-1][3] == client.timeout_s  # no request deadline: the client's timeout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["sign", "--stream-id", "a", "--file", "x.mp4"], "either --stream-id"),
        (["sign", "--file", "x.mp4", "--server", "host:1"], "--file is looked at in this process"),
        (["sign", "--file", "x.mp4", "--t-min", "3"], "--t-min/--t-max"),
        (["  ", "--server", "host:1"], "query is empty"),
        (["sign", "--server", "host:1", "--t-min", "9", "--t-max", "1"], "reversed"),
    ],
)
def test_cli_locate_refuses_bad_requests_before_any_call(monkeypatch, args, needle):
    from typer.testing import CliRunner

    from episodic import cli
    from episodic.client import Client

    def no_call(*a: Any) -> Any:
        raise AssertionError("a bad request must not be sent")

    monkeypatch.setattr(Client, "_unary", no_call)
    out = CliRunner().invoke(cli.app, ["locate", *args])
    assert isinstance(out.exception, InputError) and needle in str(out.exception), out.output


def test_cli_ask_inspect_sets_the_flag(monkeypatch):
    from typer.testing import CliRunner

    from episodic import cli
    from episodic.client import Client

    result = AskResult("At 0:09.2 in kitchen.", 0.8, Pathway.INSPECT, QueryType.VIDEO)
    sent: list[Any] = []

    def fake_call(client: Any, method: str, request: Any, *rest: Any) -> Any:
        sent.append(request)
        return api_convert.ask_result_to_proto(result)

    monkeypatch.setattr(Client, "_unary", fake_call)
    out = CliRunner().invoke(cli.app, ["ask", "When was the sign shown?", "--inspect", "--server", "host:1", "--json"])
    assert out.exit_code == 0, out.output
    assert sent[0].inspect and json.loads(out.stdout)["pathway"] == "inspect"
    out = CliRunner().invoke(cli.app, ["ask", "When was the sign shown?", "--server", "host:1"])
    assert out.exit_code == 0 and not sent[1].inspect
    assert "inspect path" in out.stderr


# -- end to end: a real server over a real store ------------------------------------------------------------
@dataclass
class Store:
    settings: Settings
    components: Any
    keys_file: Path


@dataclass
class Server:
    address: str
    stub: pb_grpc.EpisodicMemoryStub


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Iterator[Store]:
    from episodic.components import Components
    from episodic.pipeline import ingest_file

    tmp = tmp_path_factory.mktemp("locate-store")
    recording = tmp / "kitchen.mp4"
    samples.make_recording(
        recording,
        [samples.Scene(8, seed=1, text="KITCHEN"), samples.Scene(8, seed=2, text="PLATFORM 7")],
        [samples.Speech(9.5, "The train to Oxford leaves from platform seven.")],
    )
    components = Components(load_settings(data_dir=tmp / "data"))
    try:
        ingest_file(recording, "kitchen", components)
        keys_file = tmp / "api-keys.toml"
        keys_file.write_text(f'"{KEY_A}" = ["kitchen"]\n"{KEY_B}" = ["station"]\n"{KEY_ALL}" = ["*"]\n')
        keys_file.chmod(0o600)
        yield Store(components.settings, components, keys_file)
    finally:
        components.close()


@pytest.fixture(scope="module")
def server(store) -> Iterator[Server]:
    import socket

    from episodic import server as server_mod

    settings = store.settings.replace(grpc_host="127.0.0.1", api_keys_file=str(store.keys_file))
    for attempt in range(3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
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
        yield Server(address, pb_grpc.EpisodicMemoryStub(channel))
    finally:
        channel.close()
        grpc_server.stop(0).wait()


def _shows_the_sign(m: Any) -> bool:
    return m.stream_id == "kitchen" and SIGN_FROM - 0.5 <= m.t <= SIGN_TO + 0.5 and "PLATFORM" in m.why.upper()


@slow
def test_locate_end_to_end_finds_the_sign_in_scope(server):
    reply = server.stub.Locate(pb.LocateRequest(query="the PLATFORM 7 sign", stream_ids=["kitchen"]),
                               metadata=md(KEY_A), timeout=300)
    result = api_convert.locate_result_from_proto(reply)
    assert result.moments and all(isinstance(m, LocatedMoment) for m in result.moments)
    best = result.moments[0]
    assert _shows_the_sign(best), result
    assert 0.0 <= best.t_start <= best.t <= best.t_end <= STREAM_END + 0.5 and 0 < best.confidence <= 1
    assert 1 <= len(result.moments) <= 3  # top_k 0: the default, 3
    assert result.streams_looked == ["kitchen"] and result.not_seen == []
    assert 64 <= result.frames_examined <= 1024 and result.stopped and result.elapsed_s >= 0
    # no stream named: the key's streams; the all-streams key: the streams the memory points at
    for key in (KEY_A, KEY_ALL):
        reply = server.stub.Locate(pb.LocateRequest(query="the PLATFORM 7 sign", top_k=1, max_frames=256),
                                   metadata=md(key), timeout=300)
        assert len(reply.moments) == 1 and _shows_the_sign(reply.moments[0]), (key, reply)


@slow
def test_locate_scope_and_bad_input_over_the_wire(server):
    stub = server.stub
    denied = rpc_error(stub.Locate, pb.LocateRequest(query="sign", stream_ids=["station"]), metadata=md(KEY_A), timeout=30)
    search = rpc_error(stub.Search, pb.SearchRequest(query="sign", stream_ids=["station"]), metadata=md(KEY_A), timeout=30)
    assert denied.code() == search.code() == Code.PERMISSION_DENIED
    assert denied.details() == search.details()
    # the scoped-out key never sees kitchen, even when it names nothing
    reply = stub.Locate(pb.LocateRequest(query="the PLATFORM 7 sign"), metadata=md(KEY_B), timeout=120)
    assert list(reply.moments) == [] and "kitchen" not in reply.streams_looked
    for request, needle in [
        (pb.LocateRequest(query="sign", max_frames=10), "max_frames"),
        (pb.LocateRequest(query=""), "query is empty"),
        (pb.LocateRequest(query="sign", top_k=-1), "top_k"),
    ]:
        err = rpc_error(stub.Locate, request, metadata=md(KEY_ALL), timeout=30)
        assert err.code() == Code.INVALID_ARGUMENT and needle in err.details(), err.details()
    # max_frames 0 is the default budget, not an error
    reply = stub.Locate(pb.LocateRequest(query="the PLATFORM 7 sign", stream_ids=["kitchen"], max_frames=0),
                        metadata=md(KEY_ALL), timeout=300)
    assert reply.moments and reply.frames_examined <= 1024
    err = rpc_error(stub.Locate, pb.LocateRequest(query="sign"), metadata=md(None), timeout=30)
    assert err.code() == Code.UNAUTHENTICATED


@slow
def test_cli_locate_in_process_and_through_the_server_agree(server, store, tmp_path):
    """`episodic locate --json` on a stream: one document, the same moments whether --server was
    used or not (only the time it took may differ). In-process runs here (Milvus Lite allows one
    process per data directory), the remote one is a real CLI process."""
    from typer.testing import CliRunner

    from episodic import cli

    args = ["locate", "the PLATFORM 7 sign", "--stream-id", "kitchen", "--top-k", "1", "--json"]
    out = CliRunner().invoke(cli.app, [*args, "--data", str(store.settings.data_dir)])
    assert out.exit_code == 0, out.output
    local = json.loads(out.stdout)
    remote = json.loads(run_cli(*args, "--server", server.address, "--api-key", KEY_A, data=tmp_path).stdout)
    assert set(local) == set(remote) == {
        "moments", "frames_examined", "depth", "elapsed_s", "stopped", "streams_looked", "not_seen"}
    (best,) = local["moments"]
    assert _shows_the_sign(LocatedMoment(**best)) and local["streams_looked"] == ["kitchen"]
    (far,) = remote["moments"]
    assert far["stream_id"] == "kitchen" and abs(far["t"] - best["t"]) <= 1.0
    assert {k: v for k, v in local.items() if k not in ("elapsed_s", "moments")} == \
        {k: v for k, v in remote.items() if k not in ("elapsed_s", "moments")}
    # a stream that cannot be looked at at all is one clear line, not an empty document
    unknown = CliRunner().invoke(cli.app, ["locate", "sign", "--stream-id", "nobody", "--json",
                                           "--data", str(store.settings.data_dir)])
    assert isinstance(unknown.exception, InputError) and unknown.stdout == ""
    assert "no memories of stream 'nobody'" in str(unknown.exception)
