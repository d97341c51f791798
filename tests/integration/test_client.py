"""The Python client (episodic.client.Client) and every read command through a server (issue 18).

A real gRPC server on loopback over a Milvus Lite store of generated memory (glance_set: "cam1"
200 s, "cam2" 50 s, one 2.5 MiB snippet file), with the hashing embedder and a scripted language
model standing in for the models (tests/fakes.py), so nothing here loads a model. Checked: the
typed results, paging, snippet downloads, retries (a server that comes up late, one that never
does, a Forget that is never sent twice), the CLI printing the same in-process and with
--server, auto-routing to a running `episodic serve` that holds the store, and reflection v1.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2 as alpha

from episodic import cli_remote
from episodic import server as server_mod
from episodic.client import Client, RemoteCallError
from episodic.client_records import Event, Segment, Stream
from episodic.components import Components
from episodic.config import Settings, load_settings
from episodic.core.errors import ConfigError
from episodic.core.records import SnippetRef, StreamInfo, TranscriptPiece
from episodic.dev_broker import free_port
from episodic.glance_set import glance_records
from episodic.services.forgetting import StreamStorage
from episodic.services.local import LocalMemoryService
from tests.cli_runner import run_cli
from tests.fakes import HashEmbedder, ScriptedLLM

KEY_ALL = "admin-key-0123456789abcdef01"  # sees everything
KEY_1 = "cam1-key-0123456789abcdef0123"  # sees "cam1"
LENGTHS = {"cam1": 200.0, "cam2": 50.0}  # 20 and 5 memories of 10 s
SNIPPET_BYTES = 2_500_000  # three DownloadSnippet chunks


@dataclass
class Memory:
    settings: Settings
    components: Components
    address: str
    snippet: Path  # the file of cam1's first segment, snippet 0
    segment_id: str


def _fill(settings: Settings) -> tuple[Components, Path, str]:
    """Components over ``settings`` with the stand-in models, holding the generated memory."""
    components = Components(settings)
    embedder = HashEmbedder()
    components.embedder = embedder  # cached properties: the fakes stand in for the models
    components.llm = ScriptedLLM()
    store = components.store
    store.ensure_schema(embedder.dim, 4, models={"embedder": embedder.model_id})
    snippet, first = Path(), ""
    for sid, length in LENGTHS.items():
        memories, events, _ = glance_records(embedder, sid, 0.0, length)
        if sid == "cam1":
            first = memories[0].id
            snippet = components.snippets.root / sid / f"{first}.s.mp4"
            snippet.parent.mkdir(parents=True, exist_ok=True)
            snippet.write_bytes(os.urandom(SNIPPET_BYTES))
            memories[0].snippets = [SnippetRef(components.snippets.uri_for(snippet), 0.0, 10.0)]
        store.upsert_memories(memories)
        store.upsert_events(events)
        store.upsert_stream(StreamInfo(sid, f"{sid}.mp4", length, len(memories), len(events)))
    return components, snippet, first


def _start(settings: Settings, components: Components, port: int | None = None) -> server_mod.ServerHandle:
    for attempt in range(3):
        try:
            handle = server_mod.create_server(settings.replace(grpc_port=port or free_port()), components)
            break
        except ConfigError:
            if attempt == 2 or port:
                raise
    handle.server.start()
    return handle


@pytest.fixture(scope="module")
def memory(tmp_path_factory) -> Iterator[Memory]:
    tmp = tmp_path_factory.mktemp("client")
    keys = tmp / "keys.toml"
    keys.write_text(f'"{KEY_ALL}" = ["*"]\n"{KEY_1}" = ["cam1"]\n')
    keys.chmod(0o600)
    settings = load_settings(data_dir=tmp / "data").replace(
        relisten_max_memories=0, grpc_host="127.0.0.1", api_keys_file=str(keys))
    components, snippet, first = _fill(settings)
    handle = _start(settings, components)
    try:
        yield Memory(settings, components, handle.address, snippet, first)
    finally:
        handle.server.stop(0).wait()
        components.close()


@pytest.fixture()
def client(memory) -> Iterator[Client]:
    with Client(memory.address, api_key=KEY_ALL, timeout_s=30) as c:
        yield c


# -- typed results --------------------------------------------------------------------------------
def test_typed_results(client, memory):
    streams = client.list_streams()
    assert [s.stream_id for s in streams] == ["cam1", "cam2"] and all(isinstance(s, Stream) for s in streams)
    assert (streams[0].segments, streams[0].events, streams[0].t_end, streams[0].storage) == (20, 20, 200.0, None)
    with_storage = client.list_streams(with_storage=True)
    assert isinstance(with_storage[0].storage, StreamStorage)
    assert with_storage[0].storage.snippet_bytes == SNIPPET_BYTES and with_storage[0].storage.records > 40
    event = next(client.list_events("cam2"))
    assert isinstance(event, Event) and event.stream_id == "cam2" and event.segment_id.startswith("cam2@")
    segment = client.get_segment(memory.segment_id)
    assert isinstance(segment, Segment) and segment.id == memory.segment_id
    assert all(isinstance(p, TranscriptPiece) for p in segment.transcript_pieces) and segment.transcript_pieces
    (snippet,) = segment.snippets
    assert (snippet.index, snippet.content_type) == (0, "video/mp4")
    assert client.get_segment(event.id).id == event.segment_id  # an event id stands for its segment
    with Client(memory.address, api_key=KEY_1) as scoped:  # a key's scope holds for every read
        assert [s.stream_id for s in scoped.list_streams()] == ["cam1"]
        with pytest.raises(RemoteCallError) as info:
            scoped.get_segment(event.segment_id)
        assert info.value.code == "NOT_FOUND" and info.value.exit_code == 2


def test_list_events_pages_through_every_event(client, monkeypatch):
    pages: list[str] = []
    real = Client._unary

    def counting(self: Client, method: str, request: Any, timeout_s: Any) -> Any:
        if method == "ListEvents":
            pages.append(request.page_token)
        return real(self, method, request, timeout_s)

    monkeypatch.setattr(Client, "_unary", counting)
    paged = list(client.list_events(page_size=7))
    assert len(pages) == 4 and pages[0] == "" and len(set(pages)) == 4  # 25 events, 7 a page
    pages.clear()
    whole = list(client.list_events())
    assert paged == whole and len(whole) == 25 and len(pages) == 1
    assert [(e.stream_id, e.t_start) for e in whole] == sorted((e.stream_id, e.t_start) for e in whole)
    window = list(client.list_events(["cam1"], t_min=50.0, t_max=79.0, page_size=2))
    assert [e.t_start for e in window] == [40.0, 50.0, 60.0, 70.0]


def test_download_snippet_bytes_equal_the_file(client, memory, tmp_path):
    chunks = list(client.download_snippet(memory.segment_id, 0))
    assert len(chunks) == 3 and b"".join(chunks) == memory.snippet.read_bytes()
    saved = client.save_snippet(memory.segment_id, 0, tmp_path / "clip.mp4")
    assert saved.read_bytes() == memory.snippet.read_bytes()
    with pytest.raises(RemoteCallError, match="NOT_FOUND"):
        client.save_snippet(memory.segment_id, 1, tmp_path / "none.mp4")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4"]  # a failed save leaves nothing


# -- retries ----------------------------------------------------------------------------------------
def _count_tries(monkeypatch) -> list[str]:
    tries: list[str] = []
    real = Client._stub

    def stub(self: Client) -> Any:
        tries.append(self.server)
        return real(self)

    monkeypatch.setattr(Client, "_stub", stub)
    return tries


def test_a_read_waits_for_a_server_that_comes_up(memory, monkeypatch):
    port = free_port()
    started: list[server_mod.ServerHandle] = []
    timer = threading.Timer(0.5, lambda: started.append(_start(memory.settings, memory.components, port)))
    tries = _count_tries(monkeypatch)
    t0 = time.monotonic()
    timer.start()
    try:
        with Client(f"127.0.0.1:{port}", api_key=KEY_ALL, timeout_s=20) as late:
            assert [s.stream_id for s in late.list_streams()] == ["cam1", "cam2"]
        assert time.monotonic() - t0 >= 0.5 and len(tries) >= 2
    finally:
        timer.join()
        for handle in started:
            handle.server.stop(0).wait()


def test_a_server_that_stays_down_fails_after_the_retries(monkeypatch):
    tries = _count_tries(monkeypatch)
    down = Client(f"127.0.0.1:{free_port()}", timeout_s=20)
    t0 = time.monotonic()
    with pytest.raises(RemoteCallError) as info:
        down.list_streams()
    assert info.value.code == "UNAVAILABLE" and info.value.exit_code == 4
    assert len(tries) == down.tries == 4 and 1.0 < time.monotonic() - t0 < 5.0
    tries.clear()
    with pytest.raises(RemoteCallError, match="UNAVAILABLE"):  # a write is sent once
        down.forget("cam1")
    assert len(tries) == 1
    tries.clear()
    with pytest.raises(RemoteCallError, match="UNAVAILABLE"):  # never past the deadline
        down.list_streams(timeout_s=0.3)
    # a second try fits in 0.3 s (the first pause is 0.16-0.24 s), a third never; on a busy
    # machine a slow first try leaves no room for the second
    assert 1 <= len(tries) <= 2
    down.close()


def test_the_cli_exits_4_when_the_server_stays_down(tmp_path):
    proc = run_cli("streams", "--server", f"127.0.0.1:{free_port()}", "--json", data=tmp_path, check=False)
    assert proc.returncode == 4 and proc.stdout == ""
    assert "UNAVAILABLE" in proc.stderr and "Traceback" not in proc.stderr


# -- the CLI: the same in-process and through --server -------------------------------------------------
class _KeptOpen(LocalMemoryService):
    """The in-process service over the module's components (the stand-in models)."""

    def close(self) -> None:
        pass


def _invoke(*args: str) -> Any:
    from typer.testing import CliRunner

    from episodic import cli

    return CliRunner().invoke(cli.app, list(args))


VOLATILE = {"timings_ms", "elapsed_s", "elapsed_ms"}


def _stable(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _stable(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [_stable(v) for v in doc]
    return doc


@pytest.mark.parametrize(
    "args",
    [
        ["streams"],
        ["events", "--stream-id", "cam2"],
        ["segments", "--stream-id", "cam1"],
        ["events"],
        ["search", "a red car", "--top-k", "3"],
        ["ask", "What was on screen?", "--top-k", "3"],
        ["article", "What happened?", "--style", "bullet", "--max-sub-queries", "1"],
    ],
    ids=["streams", "events-cam2", "segments-cam1", "events-all", "search", "ask", "article"],
)
def test_every_read_command_prints_the_same_through_the_server(memory, monkeypatch, args):
    monkeypatch.setattr(cli_remote, "local_memory_service", lambda data, config: _KeptOpen(memory.components))
    data = ["--data", str(memory.settings.data_dir)]
    local = _invoke(*args, *data, "--json")
    remote = _invoke(*args, "--json", "--server", memory.address, "--api-key", KEY_ALL, "--timeout", "30")
    assert local.exit_code == 0, local.output
    assert remote.exit_code == 0, remote.output
    assert _stable(json.loads(remote.stdout)) == _stable(json.loads(local.stdout))
    if args[0] in ("streams", "events", "segments"):  # and the same table
        local_text = _invoke(*args, *data)
        remote_text = _invoke(*args, "--server", memory.address, "--api-key", KEY_ALL)
        assert local_text.exit_code == 0 and remote_text.stdout == local_text.stdout and local_text.stdout


# -- auto-routing to the `episodic serve` that holds the store ------------------------------------------
SERVE_WITH_STANDINS = (
    "import sys, runpy; from functools import cached_property; "
    "from episodic.components import Components; from tests.fakes import HashEmbedder, ScriptedLLM; "
    "Components.embedder = cached_property(lambda self: HashEmbedder()); Components.embedder.__set_name__(Components, 'embedder'); "
    "Components.llm = cached_property(lambda self: ScriptedLLM()); Components.llm.__set_name__(Components, 'llm'); "
    "sys.argv = ['episodic', *sys.argv[1:]]; runpy.run_module('episodic.cli', run_name='__main__')"
)


@pytest.fixture()
def serving(tmp_path) -> Iterator[tuple[subprocess.Popen, Path, str]]:
    """`episodic serve` (stand-in models) in a child process over a store of its own."""
    settings = load_settings(data_dir=tmp_path / "data").replace(relisten_max_memories=0)
    components, _, _ = _fill(settings)
    components.close()  # the server takes the store
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPISODIC_")}
    env.update(EPISODIC_GRPC_GRACE_S="1", EPISODIC_SERVE_WARM_UP="false", EPISODIC_RELISTEN_MAX_MEMORIES="0")
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE_WITH_STANDINS, "serve", "--port", "0", "--data", str(settings.data_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=Path(__file__).resolve().parents[2],
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("listening on "), (line, proc.stderr.read() if proc.poll() is not None else "")
        yield proc, Path(settings.data_dir), line.split()[-1]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_read_commands_ask_the_serve_that_holds_the_store(serving, monkeypatch):
    proc, data, address = serving
    marker = json.loads((data / "serve.json").read_text())
    assert (marker["address"], marker["pid"], marker["tls"]) == (address, proc.pid, False)
    monkeypatch.delenv("EPISODIC_SERVER", raising=False)
    note = f"the store is in use by episodic serve (pid {proc.pid}); asking it at {address}"
    for args in (["streams"], ["events", "--stream-id", "cam2"], ["segments", "--stream-id", "cam2"],
                 ["ask", "What was on screen?"]):
        out = _invoke(*args, "--data", str(data), "--json")
        assert out.exit_code == 0, (args, out.output)
        assert note in out.stderr, args
        doc = json.loads(out.stdout)
        if args[0] == "streams":
            assert [s["stream_id"] for s in doc["streams"]] == ["cam1", "cam2"] and "storage" in doc["streams"][0]
        elif args[0] in ("events", "segments"):
            assert len(doc[args[0]]) == 5
        else:
            assert doc["answer"]
    # a marker whose process is gone is not followed: the error says how to go on
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (data / "serve.json").write_text(json.dumps({**marker, "pid": dead.pid}))
    assert cli_remote.live_marker(data) is None
    out = _invoke("streams", "--data", str(data))
    assert out.exit_code != 0 and "--server HOST:PORT" in str(out.exception)
    (data / "serve.json").write_text(json.dumps(marker))
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert not (data / "serve.json").exists()  # removed on stop
    out = _invoke("streams", "--data", str(data), "--json")  # and the store is free again
    assert out.exit_code == 0 and "in use" not in out.stderr


def test_the_serve_marker_helpers(tmp_path):
    path = cli_remote.write_marker(tmp_path, "0.0.0.0:5001", tls=False)
    doc = cli_remote.live_marker(tmp_path)
    assert doc is not None and doc["pid"] == os.getpid() and path == tmp_path / "serve.json"
    assert cli_remote.connect_address(doc["address"]) == "127.0.0.1:5001"
    assert cli_remote.connect_address("[::]:7") == "[::1]:7" and cli_remote.connect_address("10.0.0.2:7") == "10.0.0.2:7"
    path.write_text("{not json")
    assert cli_remote.live_marker(tmp_path) is None
    cli_remote.write_marker(tmp_path, "127.0.0.1:5001", tls=False)
    cli_remote.remove_marker(tmp_path)
    assert not path.exists() and not list(tmp_path.iterdir())


# -- reflection -----------------------------------------------------------------------------------
def test_reflection_v1_lists_and_describes_the_service(memory):
    from google.protobuf import descriptor_pb2

    with grpc.insecure_channel(memory.address) as channel:
        info = channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=alpha.ServerReflectionRequest.SerializeToString,
            response_deserializer=alpha.ServerReflectionResponse.FromString,
        )
        listed, described = info(iter([
            alpha.ServerReflectionRequest(list_services=""),
            alpha.ServerReflectionRequest(file_containing_symbol="episodic.v1.EpisodicMemory"),
        ]), timeout=10)
    names = {s.name for s in listed.list_services_response.service}
    assert {"episodic.v1.EpisodicMemory", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection"} <= names
    files = [descriptor_pb2.FileDescriptorProto.FromString(b) for b in described.file_descriptor_response.file_descriptor_proto]
    assert any(s.name == "EpisodicMemory" for f in files for s in f.service)


def test_the_status_line_names_the_server_a_command_waits_for() -> None:
    """A command routed to a server (named, or found holding the store) says it waits for that
    server, not that it loads models it never loads."""
    from episodic.cli_remote import waiting_note

    with Client("127.0.0.1:50051") as remote:
        assert waiting_note(remote, "loading the models …") == "waiting for 127.0.0.1:50051 …"
    assert waiting_note(object(), "loading the models …") == "loading the models …"
