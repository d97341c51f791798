"""The day at a glance (issue 17) wherever the other reads are exposed: the ListSummaries
messages and their conversions, the servicer's scoping, the Python client, and ``episodic
summaries`` in-process and through a server.

A real gRPC server on loopback over the in-memory store with the hashing embedder
(tests/fakes.py), holding generated memory (episodic/glance_set.py): half an hour of "cam1" and
an hour of "cam2". Keys: one sees cam1, one everything.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from episodic import api_summaries
from episodic.components import Components
from episodic.config import Settings
from episodic.core.errors import InputError
from episodic.core.records import StreamInfo
from episodic.core.summaries import summaries_request
from episodic.glance_set import glance_records, glance_window
from episodic.memory.overview_windows import refresh_overviews
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from episodic.services.local import LocalMemoryService
from tests.fakes import HashEmbedder, ScriptedLLM

pytestmark = pytest.mark.unit

KEY_1 = "cam1-key-0123456789abcdef0123"  # sees "cam1"
KEY_ALL = "admin-key-0123456789abcdef01"  # sees everything
Code = grpc.StatusCode
LENGTHS = {"cam1": 1800.0, "cam2": 3600.0}


def md(key: str | None) -> tuple[tuple[str, str], ...]:
    return () if key is None else (("authorization", f"Bearer {key}"),)


def rpc_error(fn: Any, request: Any, **kwargs: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        fn(request, **kwargs)
    return info.value


@dataclass
class Server:
    address: str
    stub: pb_grpc.EpisodicMemoryStub
    components: Components


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    from episodic import server as server_mod

    tmp = tmp_path_factory.mktemp("summaries-store")
    keys_file = tmp / "api-keys.toml"
    keys_file.write_text(f'"{KEY_1}" = ["cam1"]\n"{KEY_ALL}" = ["*"]\n')
    keys_file.chmod(0o600)
    settings = Settings(data_dir=tmp / "data", store="memory", relisten_max_memories=0,
                        grpc_host="127.0.0.1", grpc_port=0, api_keys_file=str(keys_file))
    components = Components(settings)
    embedder = HashEmbedder()
    components.embedder = embedder  # cached properties: the fakes stand in for the models
    components.llm = ScriptedLLM()
    store = components.store
    store.ensure_schema(embedder.dim, 4, models={"embedder": embedder.model_id})
    for sid, length in LENGTHS.items():
        memories, events, _ = glance_records(embedder, sid, 0.0, length)
        store.upsert_memories(memories)
        store.upsert_events(events)
        store.upsert_stream(StreamInfo(sid, f"{sid}.mp4", length, len(memories), len(events)))
        refresh_overviews(store, embedder, sid, 600.0)
    handle = server_mod.create_server(settings, components)
    handle.server.start()
    channel = grpc.insecure_channel(handle.address)
    grpc.channel_ready_future(channel).result(timeout=10)
    try:
        yield Server(handle.address, pb_grpc.EpisodicMemoryStub(channel), components)
    finally:
        channel.close()
        handle.server.stop(0).wait()
        components.close()


class _KeptOpen(LocalMemoryService):
    """The in-process service over the module's components, which must outlive one command."""

    def close(self) -> None:
        pass


def _local(server: Server, *args: Any) -> Any:
    return _KeptOpen(server.components).list_summaries(summaries_request(*args))


# -- conversions ---------------------------------------------------------------------------------
def test_a_summary_list_round_trips_and_has_one_json_shape(server):
    result = _local(server, "cam2")
    assert [s.window for s in result.summaries] == ["10m"] * 6 + ["1h", "1d"]
    assert api_summaries.summary_list_from_proto(api_summaries.summary_list_to_proto(result)) == result
    doc = api_summaries.summary_list_to_dict(result)
    assert set(doc) == {f.name for f in pb.ListSummariesResponse.DESCRIPTOR.fields}
    assert set(doc["summaries"][0]) == {f.name for f in pb.WindowSummary.DESCRIPTOR.fields}
    req = summaries_request("cam2", "1h", 10.0, 99.0)
    msg = api_summaries.summaries_request_to_proto(req)
    assert api_summaries.summaries_request_from_proto(msg) == req
    bare = api_summaries.summaries_request_from_proto(pb.ListSummariesRequest(stream_id="cam2"))
    assert (bare.window, bare.t_min, bare.t_max) == ("", None, None)


# -- over the wire -------------------------------------------------------------------------------
def test_list_summaries_over_the_wire_is_what_the_process_says(server):
    from episodic.client import Client

    reply = server.stub.ListSummaries(pb.ListSummariesRequest(stream_id="cam2", window="1h"),
                                      metadata=md(KEY_ALL), timeout=30)
    (hour,) = reply.summaries
    assert (hour.window, hour.t_start, hour.t_end, hour.memories) == ("1h", 0.0, 3600.0, 360)
    assert {glance_window(k).sign for k in range(6)} == {t.item for t in hour.on_screen}
    assert list(reply.windows) == ["10m", "1h", "1d"] and reply.wall_clock_start == ""
    with Client(server.address, api_key=KEY_ALL, timeout_s=30) as client:
        remote = client.list_summaries(summaries_request("cam2", "10m", 600.0, 1200.0))
    local = _local(server, "cam2", "10m", 600.0, 1200.0)
    assert remote == local and [s.t_start for s in remote.summaries] == [600.0, 1200.0]
    # a key scoped to cam1 reads cam1, and only cam1
    mine = server.stub.ListSummaries(pb.ListSummariesRequest(stream_id="cam1"), metadata=md(KEY_1), timeout=30)
    assert {s.stream_id for s in mine.summaries} == {"cam1"} and len(mine.summaries) == 3 + 1 + 1


def test_list_summaries_is_scoped_and_checked_like_list_events(server):
    stub = server.stub
    denied = rpc_error(stub.ListSummaries, pb.ListSummariesRequest(stream_id="cam2"), metadata=md(KEY_1), timeout=30)
    events = rpc_error(stub.ListEvents, pb.ListEventsRequest(stream_ids=["cam2"]), metadata=md(KEY_1), timeout=30)
    assert denied.code() == events.code() == Code.PERMISSION_DENIED and denied.details() == events.details()
    err = rpc_error(stub.ListSummaries, pb.ListSummariesRequest(stream_id="cam1"), metadata=md(None), timeout=30)
    assert err.code() == Code.UNAUTHENTICATED
    for request, needle in [
        (pb.ListSummariesRequest(), "a stream id is required"),
        (pb.ListSummariesRequest(stream_id='cam1" or 1==1'), "invalid stream id"),
        (pb.ListSummariesRequest(stream_id="cam1", window="45m"), "no 45m summaries are kept"),
        (pb.ListSummariesRequest(stream_id="cam1", window="soon"), "a window is a number and a unit"),
        (pb.ListSummariesRequest(stream_id="cam1", t_min=9, t_max=1), "reversed"),
    ]:
        err = rpc_error(stub.ListSummaries, request, metadata=md(KEY_ALL), timeout=30)
        assert err.code() == Code.INVALID_ARGUMENT and needle in err.details(), err.details()
    empty = stub.ListSummaries(pb.ListSummariesRequest(stream_id="attic"), metadata=md(KEY_ALL), timeout=30)
    assert list(empty.summaries) == []


# -- the CLI -------------------------------------------------------------------------------------
@pytest.fixture()
def in_process(server, monkeypatch) -> None:
    from episodic import cli_summaries

    real = cli_summaries._service

    def service(srv: str | None, *args: Any) -> Any:
        return real(srv, *args) if srv else _KeptOpen(server.components)

    monkeypatch.setattr(cli_summaries, "_service", service)


def _invoke(*args: str) -> Any:
    from typer.testing import CliRunner

    from episodic import cli

    return CliRunner().invoke(cli.app, ["summaries", *args])


def test_cli_summaries_in_process_and_through_the_server_agree(server, in_process):
    args = ["--stream-id", "cam2", "--window", "1h", "--json"]
    local = _invoke(*args)
    remote = _invoke(*args, "--server", server.address, "--api-key", KEY_ALL)
    assert local.exit_code == 0 and remote.exit_code == 0, (local.output, remote.output)
    here, there = json.loads(local.stdout), json.loads(remote.stdout)
    assert here == there and [s["window"] for s in here["summaries"]] == ["1h"]
    assert here["summaries"][0]["memories"] == 360
    denied = _invoke(*args, "--server", server.address, "--api-key", KEY_1)
    assert denied.exit_code != 0 and "PERMISSION_DENIED" in str(denied.exception)


def test_cli_summaries_human_output_and_refusals(server, in_process):
    out = _invoke("--stream-id", "cam1", "--t-max", "700")
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert "cam1: stream time only (no wall-clock start" in text
    assert "10-minute windows (10m)" in text and "1-hour windows (1h)" in text and "1-day windows (1d)" in text
    assert "0:00:00–0:10:00 (10-minute window" in text and "0:10:00–0:20:00 (10-minute window" in text
    assert "0:20:00–0:30:00" not in text and f'"{glance_window(0).sign}" (10 memories)' in text
    empty = _invoke("--stream-id", "attic")
    assert empty.exit_code == 0 and empty.stdout == "" and "no summaries for stream 'attic'" in empty.stderr
    for args, needle in [
        (["--stream-id", "cam1", "--window", "45m"], "no 45m summaries are kept"),
        (["--stream-id", "cam1", "--window", "later"], "a window is a number and a unit"),
        (["--stream-id", "cam 1"], "invalid stream id"),
    ]:
        res = _invoke(*args)
        assert isinstance(res.exception, InputError) and needle in str(res.exception), res.output
