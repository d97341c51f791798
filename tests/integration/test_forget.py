"""Forgetting on purpose (issue 17) end to end, on a real Milvus Lite store after a real ingest:
`episodic forget` for a range and a whole stream (every collection and the snippet files on
disk checked), idempotence, `kill -9` part-way and a rerun, the audit log, retention through
`episodic retention`/`episodic gc` and the sweep of `episodic serve`, storage in
`episodic streams`, and the Forget RPC's access rules.

One recording is ingested as two streams ("cam" and "other") once per module; each test works
on its own copy of that data directory.
"""

from __future__ import annotations

import json
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from episodic import samples
from episodic import server as server_mod
from episodic.config import Settings, load_settings
from episodic.core.errors import ConfigError
from episodic.dev_broker import free_port
from episodic.memory.milvus_store import MilvusStore
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from episodic.server_auth import _digest
from tests.cli_runner import run_cli, start_cli

pytestmark = pytest.mark.slow  # the module's store is built by the real models

KEY_CAM = "cam-key-0123456789abcdef0123"
KEY_OTHER = "other-key-0123456789abcdef012"
KEY_ALL = "all-key-0123456789abcdef01234"
KINDS = ("memories", "events", "vectors", "frames", "overviews", "streams")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    from episodic.components import Components
    from episodic.pipeline import ingest_file

    tmp = tmp_path_factory.mktemp("forget")
    recording = tmp / "rec.mp4"
    samples.make_recording(
        recording,
        [samples.Scene(8, seed=1, text="KITCHEN"), samples.Scene(8, seed=2, text="PLATFORM 7"),
         samples.Scene(8, seed=3, tint=(200, 60, 60))],
        [samples.Speech(1.0, "Tom put three green apples in the blue bowl."),
         samples.Speech(9.0, "The train to Oxford leaves from platform seven."),
         samples.Speech(17.0, "The library closes at six tonight.")],
    )
    data = tmp / "data"
    components = Components(load_settings(data_dir=data))
    try:
        ingest_file(recording, "cam", components)
        ingest_file(recording, "other", components)
    finally:
        components.close()
    return data


@pytest.fixture()
def data(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(pristine, copy)
    return copy


def _look(data: Path) -> dict[str, Any]:
    """Everything the store holds of each stream, read in this process and closed again (the
    CLI children need the Milvus Lite directory)."""
    with MilvusStore(Settings(data_dir=data)) as store:
        out: dict[str, Any] = {}
        for sid in ("cam", "other"):
            memories = store.list_memories(sid, with_vectors=True)
            out[sid] = {
                "counts": store.counts(sid),
                "memories": memories,
                "events": store.list_events(sid, with_vectors=False),
                "overviews": store.list_overviews(sid),
                "info": store.get_stream(sid),
            }
        return out


def _files(data: Path, sid: str) -> set[str]:
    d = data / "snippets" / sid
    return {p.name for p in d.iterdir()} if d.is_dir() else set()


def _names(memories: Any) -> set[str]:
    """The files the memories name: their snippets and thumbnails."""
    return {u.rsplit("/", 1)[-1] for m in memories for u in m.file_uris}


# -- the CLI on a real store ----------------------------------------------------------------------
def test_forget_a_range_then_the_whole_stream(data: Path) -> None:
    before = _look(data)
    cam = before["cam"]["memories"]
    assert len(cam) >= 2 and _files(data, "cam") == _names(cam)
    first = cam[0]
    assert first.t_start == 0.0 and cam[1].t_start > 0.5
    listed = json.loads(run_cli("streams", "--json", data=data).stdout)["streams"]
    storage = {s["stream_id"]: s["storage"] for s in listed}
    assert storage["cam"]["memories"] == len(cam) and storage["cam"]["records"] == sum(before["cam"]["counts"].values())
    assert storage["cam"]["snippet_bytes"] == sum(p.stat().st_size for p in (data / "snippets" / "cam").iterdir())
    assert "records" in run_cli("streams", data=data).stdout

    out = run_cli("forget", "--stream-id", "cam", "--t-min", "0", "--t-max", "0.5", "--json", data=data)
    report = json.loads(out.stdout)
    assert (report["whole_stream"], report["t_min"], report["t_max"]) == (False, 0.0, 0.5)
    want = {"memories": 1, "events": 1, "vectors": len(first.embeddings), "frames": len(first.frame_features)}
    assert {k: report["counts"][k] for k in want} == want and report["counts"]["streams"] == 0
    assert report["snippet_files"] == len(first.file_uris) == len(first.snippets) + 1  # + its thumbnail
    after = _look(data)
    # every collection: the forgotten memory's rows are gone, the rest of cam is untouched
    for kind in ("memories", "events", "vectors", "frames"):
        assert after["cam"]["counts"][kind] == before["cam"]["counts"][kind] - want[kind], kind
    assert [m.id for m in after["cam"]["memories"]] == [m.id for m in cam[1:]]
    assert first.id not in {e.memory_id for e in after["cam"]["events"]}
    assert _files(data, "cam") == _names(cam[1:])
    assert after["cam"]["info"].memories == len(cam) - 1
    # the overviews were recomposed from what remains: the stream-wide one starts later now
    whole = [o for o in after["cam"]["overviews"] if o.scope == "stream"]
    assert whole and whole[0].t_start == cam[1].t_start
    assert after["other"]["counts"] == before["other"]["counts"] and _files(data, "other") == _names(before["other"]["memories"])
    # again: nothing more to forget
    again = json.loads(run_cli("forget", "--stream-id", "cam", "--t-max", "0.5", "--json", data=data).stdout)
    assert again["records"] == 0 and again["snippet_files"] == 0

    # the whole stream: refused without --yes when not run in a terminal
    refused = run_cli("forget", "--stream-id", "cam", data=data, check=False)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    report = json.loads(run_cli("forget", "--stream-id", "cam", "--yes", "--json", data=data).stdout)
    assert report["whole_stream"] and report["counts"]["streams"] == 1
    assert report["counts"]["memories"] == len(cam) - 1
    gone = _look(data)
    assert all(gone["cam"]["counts"][k] == 0 for k in KINDS) and gone["cam"]["info"] is None
    assert not (data / "snippets" / "cam").exists()
    assert gone["other"]["counts"] == before["other"]["counts"]
    listed = json.loads(run_cli("streams", "--json", data=data).stdout)["streams"]
    assert [s["stream_id"] for s in listed] == ["other"]
    missing = run_cli("forget", "--stream-id", "cam", "--yes", data=data, check=False)
    assert missing.returncode == 2 and "no stream 'cam'" in missing.stderr

    # the audit log: three forgets of cam, by this user, with counts and no content
    audit = json.loads(run_cli("forget", "--audit", "--stream-id", "cam", "--json", data=data).stdout)["forgets"]
    assert [(r["whole_stream"], r["state"]) for r in audit] == [(False, "done"), (False, "done"), (True, "done")]
    assert all(r["key_id"].startswith("local") and r["reason"] == "request" for r in audit)
    text = (data / "forgetting" / "audit.jsonl").read_text()
    for words in ("apples", "Oxford", "library", "KITCHEN", ".mp4"):
        assert words not in text
    assert "nothing has been forgotten" in run_cli("forget", "--audit", "--stream-id", "other", data=data).stderr


@pytest.mark.parametrize(("step", "whole"), [("intent", True), ("snippets", True), ("records", True), ("snippets", False)])
def test_kill_9_part_way_then_a_rerun_leaves_nothing(data: Path, step: str, whole: bool) -> None:
    before = _look(data)
    lo = before["cam"]["memories"][1].t_start + 0.1  # the first memory ends before it and stays
    rng = [] if whole else ["--t-min", str(lo), "--t-max", "1000"]
    crash = {"EPISODIC_FORGET_CRASH_AT": step}
    killed = run_cli("forget", "--stream-id", "cam", "--yes", *rng, data=data, env=crash, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    pending = [json.loads(x) for x in (data / "forgetting" / "audit.jsonl").read_text().splitlines()]
    assert [x["state"] for x in pending] == ["pending"]
    half = _look(data)
    if step == "intent":
        assert half["cam"]["counts"] == before["cam"]["counts"]
    else:  # the snippet files went first
        forgotten = [m for m in before["cam"]["memories"] if whole or m.t_end >= lo]
        assert forgotten and not (_files(data, "cam") & _names(forgotten))
    rerun = json.loads(run_cli("forget", "--stream-id", "cam", "--yes", *rng, "--json", data=data).stdout)
    assert rerun["recovered"]
    after = _look(data)
    if whole:
        assert all(after["cam"]["counts"][k] == 0 for k in KINDS) and not (data / "snippets" / "cam").exists()
    else:
        left = after["cam"]["memories"]
        assert [m.id for m in left] == [before["cam"]["memories"][0].id]
        assert _files(data, "cam") == _names(left) and after["cam"]["info"].memories == len(left)
    assert after["other"]["counts"] == before["other"]["counts"]
    audit = json.loads(run_cli("forget", "--audit", "--json", data=data).stdout)["forgets"]
    assert [(r["state"], r["recovered"]) for r in audit] == [("done", True)]


def test_retention_by_gc_and_by_the_serve_sweep(data: Path, tmp_path: Path) -> None:
    out = json.loads(run_cli("retention", "--stream-id", "cam", "--days", "0.00001", "--json", data=data).stdout)
    assert out["days"] == 0.00001 and out["default_days"] == 0
    time.sleep(1.0)  # 0.86 s of retention: cam's memories have expired, other keeps the default (forever)
    report = json.loads(run_cli("gc", "--json", data=data).stdout)
    assert [(r["stream_id"], r["whole_stream"], r["reason"]) for r in report["forgotten"]] == [("cam", True, "retention")]
    assert report["streams_checked"] == 2
    after = _look(data)
    assert all(after["cam"]["counts"][k] == 0 for k in KINDS) and not (data / "snippets" / "cam").exists()
    assert after["other"]["counts"]["memories"] > 0

    # serve: a forget killed part-way is finished by the sweep at start, and retention is swept
    run_cli("retention", "--stream-id", "other", "--days", "0.00002", data=data)
    killed = run_cli("forget", "--stream-id", "other", "--t-max", "5", data=data,
                     env={"EPISODIC_FORGET_CRASH_AT": "records"}, check=False)
    assert killed.returncode == -signal.SIGKILL
    port = free_port()
    proc = start_cli("serve", "--port", str(port), data=data,
                     env={"EPISODIC_RETENTION_SWEEP_INTERVAL_S": "1", "EPISODIC_SERVE_WARM_UP": "false"})
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            audit = [json.loads(x) for x in (data / "forgetting" / "audit.jsonl").read_text().splitlines()]
            if any(x.get("state") == "done" and x["stream_id"] == "other" and not x.get("recovered") for x in audit):
                break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.5)
        else:
            raise AssertionError("serve did not sweep within 120 s")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    records = json.loads(run_cli("forget", "--audit", "--stream-id", "other", "--json", data=data).stdout)["forgets"]
    assert [(r["reason"], r["state"], r["recovered"]) for r in records] == [
        ("request", "done", True), ("retention", "done", False)]
    assert all(_look(data)["other"]["counts"][k] == 0 for k in KINDS)


# -- the Forget RPC ---------------------------------------------------------------------------------
@pytest.fixture()
def served(data: Path, tmp_path: Path) -> Iterator[tuple[Any, Any, str]]:
    from episodic.components import Components

    keys = tmp_path / "keys.toml"
    keys.write_text(f'"{KEY_CAM}" = ["cam"]\n"{KEY_OTHER}" = ["other"]\n"{KEY_ALL}" = ["*"]\n')
    keys.chmod(0o600)
    settings = load_settings(data_dir=data, api_keys_file=str(keys), grpc_host="127.0.0.1")
    components = Components(settings)
    for attempt in range(3):
        try:
            handle = server_mod.create_server(settings.replace(grpc_port=free_port()), components)
            break
        except ConfigError:
            if attempt == 2:
                raise
    handle.server.start()
    channel = grpc.insecure_channel(handle.address)
    try:
        yield pb_grpc.EpisodicMemoryStub(channel), components, handle.address
    finally:
        channel.close()
        handle.stop(0)
        components.close()


def _md(key: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {key}"),)


def _error(stub: Any, req: pb.ForgetRequest, key: str) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        stub.Forget(req, metadata=_md(key), timeout=60)
    return info.value.code(), info.value.details()


def test_the_forget_rpc_checks_the_key_and_the_range(served, data: Path) -> None:
    stub, components, address = served
    store = components.store
    n_cam = len(store.list_memories("cam"))
    # a bad range is INVALID_ARGUMENT whoever's stream it names
    for t_min, t_max in ((9.0, 5.0), (float("nan"), 5.0), (-1.0, 5.0), (0.0, float("inf"))):
        for key in (KEY_CAM, KEY_OTHER):
            code, _ = _error(stub, pb.ForgetRequest(stream_id="cam", t_min=t_min, t_max=t_max), key)
            assert code == grpc.StatusCode.INVALID_ARGUMENT
    # another tenant's stream and a stream that does not exist: the same answer
    foreign = _error(stub, pb.ForgetRequest(stream_id="cam", t_max=30.0), KEY_OTHER)
    assert foreign == (grpc.StatusCode.NOT_FOUND, "no stream 'cam'")
    assert len(store.list_memories("cam")) == n_cam  # and nothing was forgotten
    assert _error(stub, pb.ForgetRequest(stream_id="ghost"), KEY_ALL) == (grpc.StatusCode.NOT_FOUND, "no stream 'ghost'")
    with pytest.raises(grpc.RpcError) as info:
        stub.Forget(pb.ForgetRequest(stream_id="cam"), timeout=30)
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED

    # the key scoped to cam forgets a stretch of it; the audit names the key's id, never the key
    reply = stub.Forget(pb.ForgetRequest(stream_id="cam", t_min=0.0, t_max=0.5), metadata=_md(KEY_CAM), timeout=60)
    assert (reply.stream_id, reply.whole_stream, reply.t_min, reply.t_max) == ("cam", False, 0.0, 0.5)
    assert reply.forgotten.memories == 1 and reply.snippet_files >= 1 and reply.audit_id
    assert len(store.list_memories("cam")) == n_cam - 1
    audit = (data / "forgetting" / "audit.jsonl").read_text()
    assert _digest(KEY_CAM).hex()[:12] in audit and KEY_CAM not in audit

    # storage through ListStreams, only when asked for
    plain = stub.ListStreams(pb.ListStreamsRequest(), metadata=_md(KEY_ALL), timeout=30)
    assert not any(s.HasField("storage") for s in plain.streams)
    sized = {s.stream_id: s.storage for s in stub.ListStreams(pb.ListStreamsRequest(with_storage=True), metadata=_md(KEY_ALL), timeout=30).streams}
    assert sized["cam"].memories == n_cam - 1 and sized["cam"].snippet_bytes > 0 and sized["other"].records > 0

    # the CLI's remote path: the whole stream, by the key that sees everything
    out = run_cli("forget", "--server", address, "--api-key", KEY_ALL, "--stream-id", "cam", "--yes", "--json", data=data)
    report = json.loads(out.stdout)
    assert report["whole_stream"] and report["counts"]["streams"] == 1 and report["counts"]["memories"] == n_cam - 1
    assert store.get_stream("cam") is None and store.list_memories("cam") == [] and not (data / "snippets" / "cam").exists()
    # now cam does not exist: the answer its own key gets is the one another tenant got
    assert _error(stub, pb.ForgetRequest(stream_id="cam", t_max=30.0), KEY_CAM) == foreign
    remote = run_cli("forget", "--server", address, "--api-key", KEY_OTHER, "--stream-id", "cam", "--yes", data=data, check=False)
    assert remote.returncode == 2 and "NOT_FOUND" in remote.stderr
    assert len(store.list_memories("other")) > 0
