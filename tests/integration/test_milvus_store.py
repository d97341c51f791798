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
    FrameObservation,
    StreamInfo,
)
from episodic.memory.milvus_store import MilvusStore, _truncate_utf8, render_filter
from tests.integration import test_store_conformance as contract
from tests.integration.test_store_conformance import INJECTIONS
from tests.milvus_server_fixtures import unique_prefix
from tests.store_fixtures import (
    FEATURE_DIM,
    MODELS,
    TEXT_DIM,
    assert_memory_equal,
    fill,
    make_event,
    make_memory,
)

REPO = Path(__file__).resolve().parents[2]


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
    return fill(store)


def test_listing_beyond_one_query_page(filled, monkeypatch: pytest.MonkeyPatch) -> None:
    """More rows than one query returns (16384 on Milvus) are read with the query iterator;
    a smaller page makes the real iterator run here without writing 16k rows."""
    import episodic.memory.milvus_store as ms

    store, memories, events = filled
    monkeypatch.setattr(ms, "QUERY_PAGE", 4)
    assert [e.id for e in store.list_events()] == sorted(e.id for e in events)
    assert [m.id for m in store.list_memories("a")] == [m.id for m in memories[:6]]
    assert len(store._query("vectors", "", ["id"])) == 27


def test_orphaned_rows_are_removed_on_cleanup(filled) -> None:
    """An E_i row that its (kept) memory does not list -- left by a write interrupted between
    the children and the memory row -- is an orphan and goes too."""
    store, memories, _ = filled
    keep = {memories[1].id, memories[4].id}
    store.delete_stream_records_except("a", keep)
    orphan = dict(store._query("vectors", render_filter("memory_id == {m}", m=memories[1].id), ["*"])[0])
    orphan["id"] = memories[1].id + ".visual0099"
    store._upsert("vectors", [orphan])
    assert store.delete_stream_records_except("a", keep) == 1
    got = store.get_memory(memories[1].id)
    assert got is not None and len(got.embeddings) == 3


def test_filters_refuse_injection() -> None:
    for evil in INJECTIONS:
        with pytest.raises(InputError):
            render_filter("id == {x}", x=evil)


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
    from tests.store_fixtures import make_memory, make_event, TEXT_DIM, FEATURE_DIM, MODELS
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
    code = WRITER.format(data=str(data))
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
def test_on_a_milvus_server(milvus_server, tmp_path: Path) -> None:
    """Round trip, listing filters, searches with stream/time/modality filters, injection
    attempts and re-ingest cleanup against a Milvus 2.3 server with authentication: the
    assertions of the Lite tests above, on one shared store (creating the seven collections
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
        filled = fill(store)
        contract.test_memory_and_event_round_trip(filled)
        contract.test_list_filters_sorting_and_limit(filled)
        contract.test_search_nearest_first_with_filters(filled)
        contract.test_keyed_batch_reads_and_id_search(filled)
        for evil in INJECTIONS:
            contract.test_injection_is_refused(filled, evil)
        contract.test_delete_stream_records_except(filled)
        contract.test_overviews_listing_and_replace(store)
        contract.test_overview_search_ranks_by_cosine_with_filters(store)
        assert store.delete_overviews("a") >= 1 and store.list_overviews("a") == []
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
