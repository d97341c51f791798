"""MilvusStore against a real Milvus Lite store in tmp_path (no mocks).

Cross-process behaviour (restart, SIGKILL, the directory lock) runs in child processes,
because Milvus Lite keeps one in-process server per data directory.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from episodic.config import Settings
from episodic.core.errors import InputError, StoreError
from episodic.core.records import (
    EmbeddingEntry,
    FrameObservation,
    ShortTermMemory,
    SnippetRef,
    StreamInfo,
    ThetaEvent,
    TranscriptPiece,
    event_id,
    memory_id,
    normalise,
)
from episodic.memory.milvus_store import MilvusStore, _truncate_utf8, render_filter
from tests.milvus_server_fixtures import unique_prefix

TEXT_DIM = 8
FEATURE_DIM = 4
MODELS = {"embedder": "test-embedder-8", "describer": "test-describer-4", "asr": "test-asr"}
REPO = Path(__file__).resolve().parents[1]


def make_memory(rng: np.random.Generator, stream_id: str, t0: float, n_vec: int = 3) -> ShortTermMemory:
    mid = memory_id(stream_id, t0)
    return ShortTermMemory(
        id=mid,
        stream_id=stream_id,
        t_start=t0,
        t_end=t0 + 7.25,
        vector=normalise(rng.standard_normal(TEXT_DIM)),
        embeddings=[
            EmbeddingEntry(
                t_start=t0 + i * 0.5,
                t_end=t0 + i * 0.5 + 1.0 / 3.0,
                modality=("visual", "speech", "audio")[i % 3],
                text=f"entry {i} – naïve café ✓",
                vector=normalise(rng.standard_normal(TEXT_DIM)),
            )
            for i in range(n_vec)
        ],
        transcript=[
            TranscriptPiece(t0 + 0.1, t0 + 1.9, "hello there"),
            TranscriptPiece(t0 + 2.0, t0 + 3.3, "général Kenobi"),
        ],
        frames=[
            FrameObservation(t0 + 0.5, [("cat", 0.75), ("sofa", 0.125)], ["red", "grey"], "EXIT", "a cat on a sofa"),
            FrameObservation(t0 + 4.0, [], [], "", "an empty room"),
        ],
        frame_features=[
            (t0 + 0.5, normalise(rng.standard_normal(FEATURE_DIM))),
            (t0 + 4.0, normalise(rng.standard_normal(FEATURE_DIM))),
        ],
        snippets=[SnippetRef(f"file:///snips/{stream_id}/{mid}.s.mp4", t0, t0 + 7.25)],
        metadata={"segments": 2, "models": {"asr": "x"}, "score": np.float32(0.5)},
    )


def make_event(rng: np.random.Generator, m: ShortTermMemory) -> ThetaEvent:
    return ThetaEvent(
        id=event_id(m.stream_id, m.t_start),
        stream_id=m.stream_id,
        memory_id=m.id,
        t_start=m.t_start,
        t_end=m.t_end,
        summary=f"Someone talks in {m.stream_id} at {m.t_start:.0f} s.",
        summary_vector=normalise(rng.standard_normal(TEXT_DIM)),
        vector=m.vector,
        visual_context=[f.description for f in m.frames],
        audio_context=[p.text for p in m.transcript],
        metadata={"llm": "test"},
    )


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture()
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture()
def store(settings: Settings):
    s = MilvusStore(settings)
    s.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
    yield s
    s.close()


@pytest.fixture()
def filled(store: MilvusStore):
    """Two streams: a (6 memories, every 10 s) and b (3 memories), with their events."""
    rng = np.random.default_rng(7)
    memories = [make_memory(rng, "a", 10.0 * i) for i in range(6)] + [
        make_memory(rng, "b", 10.0 * i + 5) for i in range(3)
    ]
    events = [make_event(rng, m) for m in memories]
    store.upsert_memories(memories)
    store.upsert_events(events)
    return store, memories, events


def assert_memory_equal(got: ShortTermMemory, want: ShortTermMemory, with_vectors: bool = True) -> None:
    assert (got.id, got.stream_id, got.t_start, got.t_end) == (want.id, want.stream_id, want.t_start, want.t_end)
    assert got.vector.dtype == np.float32
    np.testing.assert_array_equal(got.vector, want.vector)
    assert got.transcript == want.transcript
    assert got.frames == want.frames
    assert got.snippets == want.snippets
    assert got.metadata == {"segments": 2, "models": {"asr": "x"}, "score": 0.5}
    assert got.transcript_text == want.transcript_text
    if not with_vectors:
        assert got.embeddings == [] and got.frame_features == []
        return
    assert len(got.embeddings) == len(want.embeddings)
    for g, w in zip(got.embeddings, want.embeddings, strict=True):
        assert (g.t_start, g.t_end, g.modality, g.text) == (w.t_start, w.t_end, w.modality, w.text)
        assert g.vector.dtype == np.float32
        np.testing.assert_array_equal(g.vector, w.vector)
    assert [t for t, _ in got.frame_features] == [t for t, _ in want.frame_features]
    for (_, g), (_, w) in zip(got.frame_features, want.frame_features, strict=True):
        np.testing.assert_array_equal(g, w)


# -- round trips ---------------------------------------------------------------------------
def test_memory_and_event_round_trip(filled) -> None:
    store, memories, events = filled
    got = store.get_memory(memories[2].id)
    assert got is not None
    assert_memory_equal(got, memories[2])

    listed = store.list_memories("a", with_vectors=True)
    assert [m.id for m in listed] == [m.id for m in memories[:6]]
    for g, w in zip(listed, memories[:6], strict=True):
        assert_memory_equal(g, w)
    assert_memory_equal(store.list_memories("b")[0], memories[6], with_vectors=False)

    ev = store.get_event(events[4].id)
    assert ev is not None
    w = events[4]
    assert (ev.id, ev.stream_id, ev.memory_id, ev.t_start, ev.t_end, ev.summary) == (
        w.id, w.stream_id, w.memory_id, w.t_start, w.t_end, w.summary,
    )
    np.testing.assert_array_equal(ev.summary_vector, w.summary_vector)
    np.testing.assert_array_equal(ev.vector, w.vector)
    assert ev.summary_vector.dtype == ev.vector.dtype == np.float32
    assert (ev.visual_context, ev.audio_context, ev.metadata) == (w.visual_context, w.audio_context, w.metadata)
    assert store.get_memory("a@000000999999") is None
    assert store.get_event("nope.e") is None


def test_stream_info_and_schema_info(store: MilvusStore) -> None:
    info = StreamInfo("cam-1", "rtsp://example/stream", 3600.5, 120, 118, 1_700_000_000.25, {"fps": 15.0})
    store.upsert_stream(info)
    store.upsert_stream(StreamInfo("cam-0", "file.mp4"))
    assert store.get_stream("cam-1") == info
    assert [s.stream_id for s in store.list_streams()] == ["cam-0", "cam-1"]
    assert store.get_stream("cam-9") is None
    meta = store.schema_info()
    assert meta is not None
    assert (meta["schema_version"], meta["text_dim"], meta["feature_dim"]) == (1, TEXT_DIM, FEATURE_DIM)
    assert meta["models"] == MODELS


def test_list_filters_sorting_and_limit(filled) -> None:
    store, memories, events = filled
    all_events = store.list_events()
    keys = [(e.stream_id, e.t_start) for e in all_events]
    assert keys == sorted(keys) and len(keys) == 9
    # overlap with [15, 32]: memories span [t0, t0 + 7.25]
    assert [e.t_start for e in store.list_events("a", t_min=15.0, t_max=32.0)] == [10.0, 20.0, 30.0]
    assert [m.t_start for m in store.list_memories("b", t_min=16.0)] == [15.0, 25.0]
    assert [e.t_start for e in store.list_events("a", limit=2)] == [0.0, 10.0]
    light = store.list_events("b", with_vectors=False)
    assert [e.summary for e in light] == [e.summary for e in events[6:]]
    assert light[0].summary_vector.size == 0 and light[0].vector.size == 0
    assert store.list_events("zzz") == []
    with pytest.raises(InputError):
        store.list_events("a", t_min=float("nan"))
    with pytest.raises(InputError):
        store.list_events("a", t_min=5.0, t_max=1.0)
    with pytest.raises(InputError):
        store.list_memories("a", t_max=float("inf"))


def test_listing_beyond_one_query_page(filled, monkeypatch: pytest.MonkeyPatch) -> None:
    """More rows than one query returns (16384 on Milvus) are read with the query iterator;
    a smaller page makes the real iterator run here without writing 16k rows."""
    import episodic.memory.milvus_store as ms

    store, memories, events = filled
    monkeypatch.setattr(ms, "QUERY_PAGE", 4)
    assert [e.id for e in store.list_events()] == sorted(e.id for e in events)
    assert [m.id for m in store.list_memories("a")] == [m.id for m in memories[:6]]
    assert len(store._query("vectors", "", ["id"])) == 27


def test_reupsert_replaces_vectors_exactly(filled) -> None:
    store, memories, _ = filled
    m = memories[0]
    m.embeddings = m.embeddings[:1]
    m.frame_features = []
    m.transcript = [TranscriptPiece(m.t_start, m.t_end, "replaced")]
    store.upsert_memories([m])
    got = store.get_memory(m.id)
    assert got is not None and len(got.embeddings) == 1 and got.frame_features == []
    assert got.transcript_text == "replaced"
    assert store.counts()["vectors"] == 9 * 3 - 2
    assert store.counts()["frames"] == 9 * 2 - 2


def test_long_text_is_truncated_on_utf8_boundaries(store: MilvusStore) -> None:
    assert _truncate_utf8("aé", 2) == "a"
    assert _truncate_utf8("€€", 4) == "€"
    rng = np.random.default_rng(1)
    m = make_memory(rng, "long", 0.0)
    m.frames = [FrameObservation(float(i), [], [], "", "é" * 3000) for i in range(15)]  # 90 kB
    ev = make_event(rng, m)
    ev.summary = "ü" * 5000  # 10 kB > 4096
    store.upsert_memories([m])
    store.upsert_events([ev])
    got = store.get_memory(m.id)
    assert got is not None and len(got.frames) == 15  # descriptions shortened to fit 64 KiB
    assert all(0 < len(f.description) < 3000 and set(f.description) == {"é"} for f in got.frames)
    got_ev = store.get_event(ev.id)
    assert got_ev is not None
    assert got_ev.summary == "ü" * 2048
    row = store._query("memories", render_filter("id == {i}", i=m.id), ["visual_text"])[0]
    assert len(row["visual_text"].encode()) <= 65535 and set(row["visual_text"]) <= {"é", " ", "|"}


# -- search --------------------------------------------------------------------------------
def test_search_nearest_first_with_filters(filled) -> None:
    store, memories, events = filled
    target = events[3]
    hits = store.search_events(target.summary_vector, top_k=5)
    assert hits[0][0].id == target.id
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True) and len(hits) == 5

    only_b = store.search_events(target.summary_vector, top_k=9, stream_ids=["b"])
    assert {e.stream_id for e, _ in only_b} == {"b"} and len(only_b) == 3
    late = store.search_events(target.summary_vector, top_k=9, t_min=41.0)
    assert all(e.t_end >= 41.0 for e, _ in late) and {e.t_start for e, _ in late} == {40.0, 50.0}
    assert store.search_events(target.summary_vector, top_k=3, stream_ids=[]) == []

    mhits = store.search_memories(memories[7].vector, top_k=2, stream_ids="b", with_vectors=True)
    assert mhits[0][0].id == memories[7].id and len(mhits[0][0].embeddings) == 3

    entry = memories[1].embeddings[1]  # speech
    vhits = store.search_vectors(entry.vector, top_k=3, stream_ids=["a"], modality="speech")
    assert vhits[0][0]["memory_id"] == memories[1].id and vhits[0][0]["text"] == entry.text
    np.testing.assert_array_equal(vhits[0][0]["vector"], entry.vector)
    assert all(d["modality"] == "speech" for d, _ in vhits)

    t, feat = memories[5].frame_features[1]
    fhits = store.search_frames(feat, top_k=2)
    assert fhits[0][0]["memory_id"] == memories[5].id and fhits[0][0]["t"] == t

    with pytest.raises(InputError):
        store.search_events(np.ones(TEXT_DIM + 1), top_k=3)
    with pytest.raises(InputError):
        store.search_events(np.full(TEXT_DIM, np.nan), top_k=3)
    with pytest.raises(InputError):
        store.search_events(target.summary_vector, top_k=0)


INJECTIONS = ['x" or 1==1 or stream_id=="', "a') or (1==1", 'a" || stream_id != "', "a\\", "a b", "", "a\n"]


@pytest.mark.parametrize("evil", INJECTIONS)
def test_injection_is_refused(filled, evil: str) -> None:
    store, memories, events = filled
    for call in (
        lambda: store.list_events(evil),
        lambda: store.list_memories(evil),
        lambda: store.search_events(events[0].summary_vector, top_k=9, stream_ids=[evil]),
        lambda: store.search_vectors(events[0].summary_vector, top_k=9, stream_ids=["a", evil]),
        lambda: store.search_vectors(events[0].summary_vector, top_k=9, modality=evil),
        lambda: store.get_memory(evil),
        lambda: store.get_event(evil),
        lambda: store.get_stream(evil),
        lambda: store.delete_stream_records_except(evil, set()),
    ):
        try:
            result = call()
        except InputError:
            continue
        assert result in ([], None, 0), f"{evil!r} matched {result!r}"
    with pytest.raises(InputError):
        render_filter("id == {x}", x=evil)
    with pytest.raises(InputError):
        store.list_events("a", t_min="1 or 1==1")  # type: ignore[arg-type]
    # Nothing was deleted by any of it.
    assert store.counts()["events"] == len(events)


def test_records_with_unsafe_ids_are_refused(store: MilvusStore) -> None:
    rng = np.random.default_rng(3)
    m = make_memory(rng, "s", 0.0)
    m.id = 'x" or 1==1 or id=="'
    with pytest.raises(InputError):
        store.upsert_memories([m])
    m = make_memory(rng, "s", 0.0)
    m.stream_id = "a') or (1==1"
    with pytest.raises(InputError):
        store.upsert_memories([m])
    assert store.counts()["memories"] == 0


# -- re-ingest cleanup ---------------------------------------------------------------------
def test_delete_stream_records_except(filled) -> None:
    store, memories, _ = filled
    keep = {memories[1].id, memories[4].id}
    removed = store.delete_stream_records_except("a", keep)
    # 4 stale memories of "a": 4 memories + 4 events + 12 E_i rows + 8 frame rows
    assert removed == 28
    assert [m.id for m in store.list_memories("a")] == sorted(keep)
    assert {e.memory_id for e in store.list_events("a")} == keep
    assert len(store.list_memories("b")) == 3 and len(store.list_events("b")) == 3
    assert store.counts()["vectors"] == (2 + 3) * 3
    assert store.counts()["frames"] == (2 + 3) * 2
    hits = store.search_vectors(memories[0].embeddings[0].vector, top_k=20, stream_ids="a")
    assert {d["memory_id"] for d, _ in hits} <= keep
    assert store.delete_stream_records_except("a", keep) == 0
    # An E_i row that its (kept) memory does not list -- left by a write interrupted between
    # the children and the memory row -- is an orphan and goes too.
    orphan = dict(store._query("vectors", render_filter("memory_id == {m}", m=memories[1].id), ["*"])[0])
    orphan["id"] = memories[1].id + ".visual0099"
    store._upsert("vectors", [orphan])
    assert store.delete_stream_records_except("a", keep) == 1
    got = store.get_memory(memories[1].id)
    assert got is not None and len(got.embeddings) == 3


# -- schema guards -------------------------------------------------------------------------
def test_dimension_and_model_mismatch(settings: Settings) -> None:
    with MilvusStore(settings) as s:
        s.ensure_schema(TEXT_DIM, FEATURE_DIM, models={"embedder": "all-MiniLM-L6-v2"})
        s.ensure_schema(TEXT_DIM, FEATURE_DIM, models={"embedder": "all-MiniLM-L6-v2", "llm": "x"})
        with pytest.raises(StoreError) as exc:
            s.ensure_schema(16, FEATURE_DIM, models={"embedder": "imagebind"})
        msg = str(exc.value)
        assert "8-d" in msg and "16-d" in msg and "all-MiniLM-L6-v2" in msg and "--data" in msg
        with pytest.raises(StoreError, match="frame features"):
            s.ensure_schema(TEXT_DIM, 6)
        with pytest.raises(StoreError, match="not comparable"):
            s.ensure_schema(TEXT_DIM, FEATURE_DIM, models={"embedder": "other-8d-model"})
    # Another prefix in the same file is another store.
    with MilvusStore(settings.replace(collection_prefix="other_")) as s:
        s.ensure_schema(16, FEATURE_DIM)
        assert s.schema_info()["text_dim"] == 16  # type: ignore[index]


def test_empty_store_reads_and_unschema_writes(settings: Settings) -> None:
    with MilvusStore(settings) as s:
        assert s.list_events() == [] and s.list_memories() == [] and s.list_streams() == []
        assert s.search_events(np.ones(TEXT_DIM), top_k=3) == []
        assert s.delete_stream_records_except("a", set()) == 0
        with pytest.raises(StoreError, match="ensure_schema"):
            s.upsert_stream(StreamInfo("a"))


def test_bad_uri_and_unreachable_server(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"\.db"):
        MilvusStore(Settings(data_dir=tmp_path, milvus_uri=str(tmp_path / "store")))
    t = time.monotonic()
    with pytest.raises(StoreError, match="127.0.0.1:9"):
        MilvusStore(Settings(data_dir=tmp_path, milvus_uri="http://127.0.0.1:9"))
    assert time.monotonic() - t < 30


# -- durability and the directory lock (child processes) ------------------------------------
WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    sys.path.insert(0, {tests!r})
    from test_milvus_store import make_memory, make_event, TEXT_DIM, FEATURE_DIM, MODELS
    from episodic.config import Settings
    from episodic.memory.milvus_store import MilvusStore
    from episodic.core.records import StreamInfo
    store = MilvusStore(Settings(data_dir={data!r}))
    store.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
    rng = np.random.default_rng(11)
    ms = [make_memory(rng, "kill", 10.0 * i) for i in range(4)]
    store.upsert_memories(ms)
    store.upsert_events([make_event(rng, m) for m in ms])
    store.upsert_stream(StreamInfo("kill", "x.mp4", 40.0, 4, 4, 1.0))
    print("written", flush=True)  # no flush(): the records must already be durable
    sys.stdin.readline()  # the parent says when to close cleanly (or kills us first)
    store.flush()
    store.close()
    """
)


def _start_writer(data: Path) -> subprocess.Popen[str]:
    code = WRITER.format(tests=str(Path(__file__).parent), data=str(data))
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )


def _wait_written(proc: subprocess.Popen[str]) -> None:
    line = proc.stdout.readline() if proc.stdout else ""
    if line.strip() != "written":
        proc.kill()
        raise AssertionError("writer failed: " + (proc.stderr.read() if proc.stderr else ""))


def _check_reopened(settings: Settings) -> None:
    rng = np.random.default_rng(11)
    want = [make_memory(rng, "kill", 10.0 * i) for i in range(4)]
    with MilvusStore(settings) as s:
        got = s.list_memories("kill", with_vectors=True)
        assert [m.id for m in got] == [m.id for m in want]
        for g, w in zip(got, want, strict=True):
            assert_memory_equal(g, w)
        assert len(s.list_events("kill")) == 4
        assert s.get_stream("kill") is not None
        hits = s.search_memories(want[2].vector, top_k=1)
        assert hits[0][0].id == want[2].id


def test_restart_persistence_and_lock(settings: Settings) -> None:
    """A clean close in another process; while it runs, this process must get a StoreError."""
    proc = _start_writer(settings.data_dir)
    try:
        _wait_written(proc)
        with pytest.raises(StoreError, match="in use by another episodic process") as exc:
            MilvusStore(settings)
        assert "milvus-lite server --data-dir" in str(exc.value)
        _, err = proc.communicate("close\n", timeout=60)  # flush, close and exit
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _check_reopened(settings)


def test_sigkill_without_flush_keeps_records(settings: Settings) -> None:
    proc = _start_writer(settings.data_dir)
    try:
        _wait_written(proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    _check_reopened(settings)


def test_close_releases_the_lite_lock(settings: Settings) -> None:
    s1 = MilvusStore(settings)
    s2 = MilvusStore(settings)  # the same process shares one Lite server
    s1.ensure_schema(TEXT_DIM, FEATURE_DIM)
    s1.close()
    s2.upsert_stream(StreamInfo("still-open"))  # s2 keeps working after s1 closed
    s2.close()
    code = (
        "from episodic.config import Settings; from memory.milvus_store import MilvusStore;"
        f"s = MilvusStore(Settings(data_dir={str(settings.data_dir)!r}));"
        "print([x.stream_id for x in s.list_streams()]); s.close()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['still-open']"


# -- the same code on a Milvus server (URI + token): the scale-out path ---------------------
def _fill(store: MilvusStore):
    rng = np.random.default_rng(7)
    memories = [make_memory(rng, "a", 10.0 * i) for i in range(6)] + [
        make_memory(rng, "b", 10.0 * i + 5) for i in range(3)
    ]
    events = [make_event(rng, m) for m in memories]
    store.upsert_memories(memories)
    store.upsert_events(events)
    return store, memories, events


def test_on_a_milvus_server(milvus_server, tmp_path: Path) -> None:
    """Round trip, listing filters, searches with stream/time/modality filters, injection
    attempts and re-ingest cleanup against a Milvus 2.3 server with authentication: the
    assertions of the Lite tests above, on one shared store (creating the six collections
    on the server takes ~20 s, so they are not re-created per test)."""
    settings = Settings(
        data_dir=tmp_path / "data",
        milvus_uri=milvus_server.uri,
        milvus_token=milvus_server.token,
        collection_prefix=unique_prefix("server"),
    )
    with MilvusStore(settings) as store:
        assert not store.is_lite and store.server_version.startswith("v2.3")
        store.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
        filled = _fill(store)
        test_memory_and_event_round_trip(filled)
        test_list_filters_sorting_and_limit(filled)
        test_search_nearest_first_with_filters(filled)
        for evil in INJECTIONS:
            test_injection_is_refused(filled, evil)
        test_delete_stream_records_except(filled)
        with pytest.raises(StoreError, match="16-d"):
            store.ensure_schema(16, FEATURE_DIM, models={"embedder": "imagebind"})
    # a vector cache is for Lite only: a server is shared with other processes
    with MilvusStore(settings) as again:
        assert again.enable_vector_cache() is False
        assert again.counts()["events"] > 0


def test_milvus_server_rejects_a_wrong_token(milvus_server, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, milvus_uri=milvus_server.uri, milvus_token="root:wrong")
    t = time.monotonic()
    with pytest.raises(StoreError, match=re.escape(milvus_server.uri.split("//")[1])):
        MilvusStore(settings).ensure_schema(TEXT_DIM, FEATURE_DIM)
    assert time.monotonic() - t < 60
