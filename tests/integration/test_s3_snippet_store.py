"""Snippets in object storage: S3SnippetStore against a real S3 HTTP API on loopback (moto's
server), with real PyAV encoding and decoding.

The contract tests run on both stores (file and S3): writing, reading, forgetting
(``delete_uris``), retention after a re-ingest (``delete_stream``) and ``bytes_used`` behave the
same. Then what only S3 has: the byte-for-byte same encoding, the local cache behind
``path_for``, paginated listings, errors, configuration, doctor, and one real ingest whose
snippets live in the bucket and come back through GetSegment/DownloadSnippet and the readers
that decode them.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from episodic.config import Settings, load_settings
from episodic.core.errors import ConfigError, InputError, StoreError
from episodic.memory.snippet_store import FileSnippetStore
from tests.s3_fixtures import S3Server
from tests.unit.memory.test_snippet_store import SR, make_frames, probe, tone

S3 = pytest.importorskip("episodic.memory.s3_snippet_store")
S3SnippetStore = S3.S3SnippetStore

SEG = "cam@000000000000.s"


def _free_port() -> int:
    from episodic.dev_broker import free_port

    return free_port()


def _objects(server: S3Server, bucket: str, prefix: str = "") -> dict[str, int]:
    reply = server.client().list_objects_v2(Bucket=bucket, Prefix=prefix)
    return {o["Key"]: o["Size"] for o in reply.get("Contents", [])}


def _put(store: Any, stream: str, segment: str, t0: float = 0.0, seconds: float = 2.0, video: bool = True) -> Any:
    frames = make_frames([t0 + i / 10 for i in range(int(seconds * 10))]) if video else []
    return store.put(stream, segment, t0, t0 + seconds, frames, tone(seconds, 300 + 40 * len(segment)), SR, 10.0)


# -- the contract, on both stores -------------------------------------------------------------------------
@pytest.fixture(params=["file", "s3"])
def any_store(request, tmp_path: Path) -> Any:
    if request.param == "file":
        return FileSnippetStore(Settings(data_dir=tmp_path / "data"))
    return S3SnippetStore(request.getfixturevalue("s3_settings"))


def test_put_then_open_reads_a_playable_snippet(any_store, tmp_path: Path) -> None:
    ref = _put(any_store, "cam", SEG, 4.0, 3.0)
    assert (ref.t_start, ref.t_end) == (4.0, 7.0) and ref.uri.endswith("/cam/" + SEG + ".mp4")
    with any_store.open(ref.uri) as fh:
        data = fh.read()
        assert fh.seek(0) == 0 and fh.read(12)[4:8] == b"ftyp"
        assert os.fstat(fh.fileno()).st_size == len(data)  # what DownloadSnippet sends as total_size
    copy = tmp_path / "copy.mp4"
    copy.write_bytes(data)
    info = probe(copy)
    assert info["streams"] == ["audio", "video"] and abs(info["duration"] - 3.0) <= 0.1
    assert Path(any_store.path_for(ref.uri)).read_bytes() == data


def test_forgetting_uris_is_exact_and_idempotent(any_store) -> None:
    refs = [_put(any_store, "cam", f"cam@{i:012d}.s", float(i), 1.0) for i in range(3)]
    other = _put(any_store, "mic", "mic@000000000000.s", 0.0, 1.0, video=False)
    assert other.uri.endswith(".m4a")
    before_cam, before_mic = any_store.bytes_used("cam"), any_store.bytes_used("mic")
    assert before_cam > 0 and before_mic > 0 and any_store.bytes_used() == before_cam + before_mic
    size0 = any_store.bytes_used("cam")
    assert any_store.delete_uris([refs[0].uri, refs[2].uri]) == 2
    assert 0 < any_store.bytes_used("cam") < size0
    assert any_store.delete_uris([refs[0].uri, refs[2].uri]) == 0  # already gone: no error
    for gone in (refs[0], refs[2]):
        with pytest.raises(InputError):
            any_store.open(gone.uri)
    with any_store.open(refs[1].uri) as fh:  # the one not named is untouched
        assert fh.read(12)[4:8] == b"ftyp"
    # URIs this store does not hold are left alone, never followed
    assert any_store.delete_uris(["file:///etc/passwd", "s3://elsewhere/cam/x.mp4", "", "http://x/y.mp4"]) == 0
    assert any_store.bytes_used("mic") == before_mic
    assert any_store.delete_uris([]) == 0


def test_retention_after_a_rerun_keeps_exactly_the_kept(any_store) -> None:
    refs = [_put(any_store, "cam", f"cam@{i:012d}.s", float(i), 1.0) for i in range(5)]
    other = _put(any_store, "cam2", "cam2@000000000000.s", 0.0, 1.0)  # a stream whose id extends "cam"
    keep = {refs[1].uri, refs[4].uri}
    assert any_store.delete_stream("cam", keep) == 3
    for r in refs:
        if r.uri in keep:
            with any_store.open(r.uri) as fh:
                assert fh.read(12)[4:8] == b"ftyp"
        else:
            with pytest.raises(InputError):
                any_store.open(r.uri)
    assert any_store.delete_stream("cam", keep) == 0
    with any_store.open(other.uri) as fh:
        assert len(fh.read()) > 100
    assert any_store.delete_stream("cam", set()) == 2
    assert any_store.bytes_used("cam") == 0 and any_store.bytes_used("cam2") > 0
    assert any_store.delete_stream("never", set()) == 0 and any_store.bytes_used("never") == 0


def test_a_segment_that_changes_kind_leaves_one_snippet(any_store) -> None:
    video = _put(any_store, "cam", SEG, 0.0, 2.0)
    audio = _put(any_store, "cam", SEG, 0.0, 2.0, video=False)
    assert audio.uri.endswith(".m4a") and video.uri.endswith(".mp4")
    with pytest.raises(InputError):
        any_store.open(video.uri)
    with any_store.open(audio.uri) as fh:
        assert len(fh.read()) == any_store.bytes_used("cam")


def test_thumbnails_live_beside_the_snippets_and_go_with_them(any_store) -> None:
    ref = _put(any_store, "cam", SEG, 0.0, 1.0)
    jpeg = b"\xff\xd8\xff\xe0 a small picture \xff\xd9"
    uri = any_store.put_thumbnail("cam", SEG, jpeg)
    assert uri == ref.uri[: -len(".mp4")] + ".jpg"
    with any_store.open(uri) as fh:
        assert fh.read() == jpeg
    assert any_store.put_thumbnail("cam", SEG, jpeg + b"!") == uri  # a re-put replaces it
    with any_store.open(uri) as fh:
        assert fh.read() == jpeg + b"!"
    other = _put(any_store, "cam", "cam@000000005000.s", 5.0, 1.0)
    other_thumb = any_store.put_thumbnail("cam", "cam@000000005000.s", jpeg)
    # kept when named, removed when not, like snippets
    assert any_store.delete_stream("cam", {ref.uri, uri, other.uri}) == 1
    with pytest.raises(InputError):
        any_store.open(other_thumb)
    assert any_store.delete_uris([uri]) == 1 and any_store.delete_uris([uri]) == 0
    with any_store.open(ref.uri) as fh:
        assert fh.read(12)[4:8] == b"ftyp"
    with pytest.raises(InputError):
        any_store.put_thumbnail("cam", "../x", jpeg)


def test_bad_input_is_refused_before_anything_is_written(any_store) -> None:
    for stream, segment in (("..", "a.s"), ("a/b", "a.s"), ("cam\n", "a.s"), ("cam", "../x"), ("cam", "a/b")):
        with pytest.raises(InputError):
            any_store.put(stream, segment, 0.0, 1.0, make_frames([0.0]), None, SR, 1.0)
    with pytest.raises(InputError):
        any_store.put("cam", "empty.s", 0.0, 1.0, [], None, SR, 15.0)
    with pytest.raises(InputError):
        any_store.put("cam", "backwards.s", 5.0, 4.0, [], tone(1.0), SR, 15.0)
    assert any_store.bytes_used() == 0


# -- S3 only -----------------------------------------------------------------------------------------------
def test_s3_bytes_equal_the_file_store_encoding(s3_server: S3Server, s3_settings: Settings, tmp_path: Path) -> None:
    store = S3SnippetStore(s3_settings)
    files = FileSnippetStore(Settings(data_dir=tmp_path / "files"))
    times = [100.2 + i / 15 for i in range(30)] + [104.3 + i / 15 for i in range(30)]  # irregular, a gap
    args = ("cam", SEG, 100.0, 108.0, make_frames(times), tone(8.0), SR, 15.0)
    ref = store.put(*args)
    local = files.put(*args)
    bucket, prefix = s3_settings.snippet_s3_location
    key = f"{prefix}/cam/{SEG}.mp4"
    assert ref.uri == f"s3://{bucket}/{key}" and (ref.t_start, ref.t_end) == (100.0, 108.0)
    head = s3_server.client().head_object(Bucket=bucket, Key=key)
    assert head["ContentType"] == "video/mp4"
    with store.open(ref.uri) as fh:
        data = fh.read()
    assert data == files.path_for(local.uri).read_bytes()  # the one encoder, byte for byte
    info = probe(store.path_for(ref.uri))  # PyAV decodes the cached copy
    assert info["streams"] == ["audio", "video"] and (info["video_codec"], info["audio_codec"]) == ("h264", "aac")
    assert len(info["video_times"]) == 61 and any(abs(t - 4.3) < 0.002 for t in info["video_times"])
    assert store.bytes_used() == store.bytes_used("cam") == len(data) == _objects(s3_server, bucket)[key]
    # the writer keeps no local copy, and nothing lands in the local snippet directory
    assert not s3_settings.resolved_snippet_dir.exists()


def test_path_for_caches_and_follows_a_replaced_object(s3_settings: Settings, monkeypatch) -> None:
    store = S3SnippetStore(s3_settings)
    ref = _put(store, "cam", SEG, 0.0, 2.0)
    gets: list[str] = []
    client = store.client()
    real_get = client.get_object
    monkeypatch.setattr(client, "get_object", lambda **kw: gets.append(kw["Key"]) or real_get(**kw))
    first = store.path_for(ref.uri)
    assert first.is_file() and first.is_relative_to(s3_settings.resolved_snippet_cache_dir)
    assert store.path_for(ref.uri) == first and len(gets) == 1  # second read: no download
    with store.open(ref.uri) as fh:
        assert fh.read() == first.read_bytes() and len(gets) == 1
    # another process re-ingests the segment with other content: the stale copy is not served
    _put(store, "cam", SEG, 0.0, 3.0)
    again = store.path_for(ref.uri)
    assert len(gets) == 2 and again != first and not first.exists()
    assert abs(probe(again)["duration"] - 3.0) <= 0.1
    # forgetting drops the local copy too
    assert store.delete_uris([ref.uri]) == 1 and not again.exists()
    with pytest.raises(InputError, match="no snippet"):
        store.path_for(ref.uri)


def test_cache_is_bounded_least_recently_used_first(s3_settings: Settings, monkeypatch) -> None:
    store = S3SnippetStore(s3_settings.replace(snippet_cache_mib=1))
    refs = [_put(store, "cam", f"cam@{i:012d}.s", float(i), 1.0) for i in range(4)]
    paths = [store.path_for(r.uri) for r in refs]
    sizes = [p.stat().st_size for p in paths]
    assert store.cache_bytes() == sum(sizes)
    # all used just now: inside the grace period nothing is evicted, whatever the limit
    store.cache.limit_bytes = 1
    assert store.cache.evict() == 0 and all(p.exists() for p in paths)
    # once out of the grace period: least recently used first, until it fits
    now = time.time()
    for age, p in zip((400, 300, 200, 100), paths, strict=True):
        os.utime(p, (now - age, now - age))
    store.path_for(refs[0].uri)  # the oldest is used again: now the most recent
    store.cache.limit_bytes = sizes[0] + sizes[3] + 1
    assert store.cache.evict() == 2
    assert [p.exists() for p in paths] == [True, False, False, True]
    assert store.cache_bytes() <= store.cache.limit_bytes
    # an evicted copy is simply fetched again
    assert store.path_for(refs[1].uri).read_bytes()[4:8] == b"ftyp"
    # a download left half-done by a crashed process is cleared once stale
    stale = paths[0].parent / f".x.mp4.1.abcd{S3.TMP_SUFFIX}"
    stale.write_bytes(b"half")
    os.utime(stale, (now - 3600, now - 3600))
    store.cache.evict()
    assert not stale.exists()


def test_listings_are_paginated(s3_server: S3Server, s3_settings: Settings) -> None:
    store = S3SnippetStore(s3_settings)
    store.page_size = 2  # five objects: three pages
    store.delete_batch = 2
    refs = [_put(store, "cam", f"cam@{i:012d}.s", float(i), 1.0) for i in range(5)]
    bucket, prefix = s3_settings.snippet_s3_location
    stray = f"{prefix}/cam/notes.txt"  # not a snippet: never deleted by housekeeping
    s3_server.client().put_object(Bucket=bucket, Key=stray, Body=b"hello")
    sizes = _objects(s3_server, bucket, prefix + "/")
    pages: list[int] = []
    store.client().meta.events.register("before-call.s3.ListObjectsV2", lambda **_: pages.append(1))
    assert store.bytes_used("cam") == sum(sizes.values()) and len(sizes) == 6
    assert len(pages) == 3  # six objects, two a page
    assert store.delete_uris([r.uri for r in refs[:3]]) == 3
    assert store.delete_stream("cam", {refs[4].uri}) == 1
    assert set(_objects(s3_server, bucket, prefix + "/")) == {f"{prefix}/cam/cam@{4:012d}.s.mp4", stray}


@pytest.mark.parametrize(
    "uri",
    [
        "",
        "file:///etc/passwd",
        "http://example.com/x.mp4",
        "s3://other-bucket/snips/v1/cam/a.s.mp4",  # another bucket
        "s3://{bucket}/other/v1/cam/a.s.mp4",  # another prefix
        "s3://{bucket}/snips/v1/cam/../cam/a.s.mp4",
        "s3://{bucket}/snips/v1/cam/%2e%2e/a.s.mp4",
        "s3://{bucket}/snips/v1/../v2/cam/a.s.mp4",
        "s3://{bucket}/snips/v1/cam/a.s.mp4?versionId=1",
        "s3://{bucket}/snips/v1/cam/a.s.mp4#x",
        "s3://{bucket}/snips/v1/cam/a.s.txt",  # not a snippet name
        "s3://{bucket}/snips/v1/cam/deeper/a.s.mp4",
        "s3://{bucket}/snips/v1/a.s.mp4",  # no stream
        "s3://{bucket}/snips/v1/.hidden/a.s.mp4",
        "s3://{bucket}/snips/v1/cam/.a.s.mp4",
        "s3://{bucket}/snips/v1",
        "s3://user@{bucket}/snips/v1/cam/a.s.mp4",
    ],
)
def test_uris_outside_the_bucket_and_prefix_are_refused(s3_settings: Settings, uri: str) -> None:
    store = S3SnippetStore(s3_settings)
    _put(store, "cam", "a.s", 0.0, 1.0)
    uri = uri.format(bucket=store.bucket)
    for read in (store.open, store.path_for):
        with pytest.raises(InputError):
            read(uri)
    assert store.delete_uris([uri]) == 0
    assert store.bytes_used("cam") > 0


def test_a_missing_bucket_is_a_clear_store_error(s3_server: S3Server, tmp_path: Path) -> None:
    settings = s3_server.settings(tmp_path / "data", "no-such-bucket-here")
    store = S3SnippetStore(settings)
    with pytest.raises(StoreError, match="no-such-bucket-here.*does not exist"):
        store.check()
    with pytest.raises(StoreError, match="does not exist"):
        _put(store, "cam", SEG)
    with pytest.raises(StoreError, match="does not exist"):
        store.bytes_used()
    from episodic.doctor import Doctor

    status, detail = Doctor(settings).check_snippets()
    assert status == "fail" and "no-such-bucket-here" in detail


def test_an_unreachable_endpoint_is_a_store_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    settings = Settings(data_dir=tmp_path, snippet_uri="s3://bucket", s3_endpoint_url=f"http://127.0.0.1:{port}",
                        s3_access_key_id="a", s3_secret_access_key="b", s3_region="us-east-1")
    import boto3
    from botocore.config import Config

    client = boto3.session.Session(aws_access_key_id="a", aws_secret_access_key="b", region_name="us-east-1").client(
        "s3", endpoint_url=settings.s3_endpoint_url, config=Config(retries={"total_max_attempts": 1}, connect_timeout=2)
    )
    store = S3SnippetStore(settings, client=client)  # no retries: the first refusal is the answer
    with pytest.raises(StoreError, match="cannot reach the S3 endpoint"):
        store.check()
    with pytest.raises(StoreError, match="cannot reach the S3 endpoint"):
        store.path_for("s3://bucket/cam/a.s.mp4")


def test_doctor_checks_bucket_and_cache(s3_settings: Settings) -> None:
    from episodic.doctor import Doctor

    status, detail = Doctor(s3_settings).check_snippets()
    assert status == "ok", detail
    assert s3_settings.snippet_uri in detail and "writable" in detail and "snippet-cache" in detail
    store = S3SnippetStore(s3_settings)
    assert store.bytes_used() == 0  # the check's probe object is gone


def test_configuration(s3_server: S3Server, tmp_path: Path) -> None:
    from episodic.components import Components

    env = {
        "EPISODIC_SNIPPET_URI": "s3://my-bucket/a/b/",
        "EPISODIC_S3_ENDPOINT_URL": s3_server.endpoint_url,
        "EPISODIC_S3_ACCESS_KEY_ID": "key",
        "EPISODIC_S3_SECRET_ACCESS_KEY": "secret",
        "EPISODIC_SNIPPET_CACHE_MIB": "64",
    }
    s = load_settings(data_dir=tmp_path, env=env)
    assert s.snippet_s3_location == ("my-bucket", "a/b") and s.snippet_cache_mib == 64
    snippets = Components(s).snippets
    assert isinstance(snippets, S3SnippetStore) and snippets.root_uri == "s3://my-bucket/a/b"
    assert isinstance(Components(load_settings(data_dir=tmp_path, env={})).snippets, FileSnippetStore)
    for bad, says in (
        ("s3://", "names no bucket"),
        ("s3:///prefix", "names no bucket"),
        ("s3://Upper_Case", "not a valid S3 bucket name"),
        ("s3://ab", "not a valid S3 bucket name"),
        ("s3://bucket/a/../b", "prefix part '..'"),
        ("/var/snippets", "s3://bucket[/prefix]"),
        ("gs://bucket", "s3://bucket[/prefix]"),
    ):
        with pytest.raises(ConfigError, match=None) as info:
            load_settings(data_dir=tmp_path, env={"EPISODIC_SNIPPET_URI": bad})
        assert says in str(info.value), (bad, str(info.value))
    with pytest.raises(ConfigError, match="both s3_access_key_id and s3_secret_access_key"):
        load_settings(data_dir=tmp_path, env={"EPISODIC_S3_ACCESS_KEY_ID": "only-half"})
    with pytest.raises(ConfigError, match="s3_endpoint_url"):
        load_settings(data_dir=tmp_path, s3_endpoint_url="minio:9000")
    with pytest.raises(ConfigError, match="snippet_cache_mib"):
        load_settings(data_dir=tmp_path, snippet_cache_mib=0)


def test_config_command_hides_the_secret(tmp_path: Path) -> None:
    from tests.cli_runner import run_cli

    env = {"EPISODIC_SNIPPET_URI": "s3://my-bucket/p", "EPISODIC_S3_ACCESS_KEY_ID": "AKIAEXAMPLE",
           "EPISODIC_S3_SECRET_ACCESS_KEY": "do-not-print-me"}
    result = run_cli("config", "--json", data=tmp_path, env=env)
    shown = json.loads(result.stdout)
    assert shown["snippet_uri"] == "s3://my-bucket/p" and shown["s3_access_key_id"] == "AKIAEXAMPLE"
    assert shown["s3_secret_access_key"] == "***" and "do-not-print-me" not in result.stdout + result.stderr


# -- one real ingest into the bucket ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ingested(s3_server: S3Server, tmp_path_factory) -> Iterator[tuple[Any, S3Server, str, Path]]:
    from episodic import samples
    from episodic.components import Components
    from episodic.pipeline import ingest_file

    tmp = tmp_path_factory.mktemp("s3-ingest")
    recording = tmp / "desk.mp4"
    samples.make_recording(
        recording,
        [samples.Scene(6, seed=3, text="DESK"), samples.Scene(6, seed=4, text="DOOR", tint=(200, 40, 40))],
        [samples.Speech(1.0, "The red folder is on the desk."), samples.Speech(7.0, "Close the door please.")],
    )
    bucket = s3_server.new_bucket()
    settings = s3_server.settings(tmp / "data", bucket, store="memory")
    components = Components(settings)
    try:
        ingest_file(recording, "desk", components)
        yield components, s3_server, bucket, recording
    finally:
        components.close()


@pytest.mark.slow
def test_an_ingest_stores_its_snippets_in_the_bucket(ingested) -> None:
    from episodic.pipeline import ingest_file
    from episodic.retrieval.snippet_audio import memory_audio
    from episodic.retrieval.video_grid import stream_frames

    components, server, bucket, recording = ingested
    memories = components.store.list_memories("desk")
    refs = [r for m in memories for r in m.snippets]
    assert memories and refs and all(r.uri.startswith(f"s3://{bucket}/snips/v1/desk/") for r in refs)
    assert all(m.thumbnail_uri.startswith(f"s3://{bucket}/snips/v1/desk/") for m in memories)
    keys = set(_objects(server, bucket))
    # one object per snippet and per thumbnail, no orphans
    assert keys == {u[len(f"s3://{bucket}/"):] for m in memories for u in m.file_uris}
    head = server.client().head_object(Bucket=bucket, Key=memories[0].thumbnail_uri[len(f"s3://{bucket}/"):])
    assert head["ContentType"] == "image/jpeg"
    assert not components.settings.resolved_snippet_dir.exists()
    # re-listening decodes the audio of the snippets (a local copy from the cache)
    m = memories[0]
    audio = memory_audio(m, m.t_start, m.t_end, components.snippets.path_for)
    assert audio.size == round((m.t_end - m.t_start) * 16000) and float(np.abs(audio).max()) > 0.05
    # looking again decodes their frames: the second scene is red
    frames = stream_frames(components.store, components.snippets, "desk")
    try:
        pixel = frames.frame_at(9.0)
        assert pixel is not None and pixel.ndim == 3
        r, g, b = (float(pixel[..., i].mean()) for i in range(3))
        assert r > g + 30 and r > b + 30
        assert not frames.missing
    finally:
        frames.close()
    # re-ingesting the same stream leaves exactly the same objects: a snippet of an earlier,
    # different run that no record holds now is removed, as from the snippet directory
    orphan = _put(components.snippets, "desk", "desk@000000099000", 99.0, 1.0)
    assert orphan.uri[len(f"s3://{bucket}/"):] in _objects(server, bucket)
    ingest_file(recording, "desk", components)
    assert set(_objects(server, bucket)) == keys


@pytest.mark.slow
def test_get_segment_and_download_snippet_read_from_the_bucket(ingested) -> None:
    import grpc

    from episodic import server as server_mod
    from episodic.proto.episodic.v1 import episodic_pb2 as pb
    from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc

    components, s3, bucket, _ = ingested
    memory = components.store.list_memories("desk")[-1]
    port = _free_port()
    grpc_server = server_mod.build_server(components.settings.replace(grpc_host="127.0.0.1", grpc_port=port), components)
    grpc_server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        stub = pb_grpc.EpisodicMemoryStub(channel)
        seg = stub.GetSegment(pb.GetSegmentRequest(id=memory.id))
        assert seg.snippets and all(sn.uri.startswith(f"s3://{bucket}/") for sn in seg.snippets)
        key = seg.snippets[0].uri[len(f"s3://{bucket}/"):]
        expected = s3.client().get_object(Bucket=bucket, Key=key)["Body"].read()
        chunks = list(stub.DownloadSnippet(pb.DownloadSnippetRequest(segment_id=memory.id)))
        assert b"".join(c.data for c in chunks) == expected
        assert {(c.total_size, c.content_type) for c in chunks} == {(len(expected), "video/mp4")}
        # forgotten in the bucket: the download says the snippet is missing, as for a file
        assert components.snippets.delete_uris([seg.snippets[0].uri]) == 1
        with pytest.raises(grpc.RpcError) as info:
            list(stub.DownloadSnippet(pb.DownloadSnippetRequest(segment_id=memory.id)))
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        channel.close()
        grpc_server.stop(0).wait()
