"""The store contract (core.interfaces.MemoryStore), one suite for every backend.

Each test runs against the in-memory store and Milvus Lite on disk; the Milvus server test in
test_milvus_store.py runs the same functions on one shared server store (creating collections
on a server takes ~20 s, too slow to do per test). Backend-specific behaviour (Lite's files
and lock, text truncation to Milvus's field limits, query paging) is tested beside each
backend.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from episodic.config import Settings
from episodic.core.errors import InputError, StoreError
from episodic.core.interfaces import MemoryStore, QueryStore
from episodic.core.records import (
    StreamInfo,
    TranscriptPiece,
    normalise,
)
from episodic.memory.in_memory_store import InMemoryStore
from episodic.memory.milvus_store import MilvusStore
from tests.store_fixtures import (  # noqa: F401
    FEATURE_DIM,
    MODELS,
    TEXT_DIM,
    assert_memory_equal,
    assert_overview_equal,
    fill,
    make_event,
    make_memory,
    make_overviews,
)

BACKENDS = ("memory", "lite")


def open_store(backend: str, tmp_path: Path):
    """An empty store of ``backend`` (no schema yet)."""
    if backend == "memory":
        return InMemoryStore()
    return MilvusStore(Settings(data_dir=tmp_path / "data"))


@pytest.fixture(params=BACKENDS)
def bare(request, tmp_path: Path):
    s = open_store(request.param, tmp_path)
    yield s
    s.close()


@pytest.fixture()
def store(bare):
    bare.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
    return bare


@pytest.fixture()
def filled(store):
    return fill(store)


# -- round trips ------------------------------------------------------------------------------


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


def test_stream_info_and_schema_info(store) -> None:
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
        store.list_events("a", t_min="1 or 1==1")  # type: ignore[arg-type]
    # Nothing was deleted by any of it.
    assert store.counts()["events"] == len(events)


def test_records_with_unsafe_ids_are_refused(store) -> None:
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


def test_both_backends_satisfy_the_protocols(bare) -> None:
    assert isinstance(bare, MemoryStore) and isinstance(bare, QueryStore)
    assert bare.describe() and bare.schema_info() is None
    bare.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
    info = bare.schema_info()
    assert (info["text_dim"], info["feature_dim"], info["models"]) == (TEXT_DIM, FEATURE_DIM, MODELS)


def test_dimension_and_model_guards(store) -> None:
    store.ensure_schema(TEXT_DIM, FEATURE_DIM, models={**MODELS, "llm": "x"})  # informational roles may change
    with pytest.raises(StoreError, match="16-d"):
        store.ensure_schema(16, FEATURE_DIM, models={"embedder": "imagebind"})
    with pytest.raises(StoreError, match="frame features"):
        store.ensure_schema(TEXT_DIM, 6)
    with pytest.raises(StoreError, match="not comparable"):
        store.ensure_schema(TEXT_DIM, FEATURE_DIM, models={"embedder": "other-8d-model"})
    with pytest.raises(InputError):
        store.ensure_schema(1, FEATURE_DIM)


def test_empty_store_reads_and_unschema_writes(bare) -> None:
    assert bare.list_events() == [] and bare.list_memories() == [] and bare.list_streams() == []
    assert bare.search_events(np.ones(TEXT_DIM), top_k=3) == []
    assert bare.delete_stream_records_except("a", set()) == 0
    with pytest.raises(StoreError, match="ensure_schema"):
        bare.upsert_stream(StreamInfo("a"))


def test_delete_stream_removes_everything_of_one_stream(filled) -> None:
    store, memories, events = filled
    store.upsert_stream(StreamInfo("a", "a.mp4", 57.25, 6, 6, 1.0))
    store.upsert_stream(StreamInfo("b", "b.mp4", 32.25, 3, 3, 1.0))
    assert store.delete_stream("a") == 6 + 6 + 18 + 12 + 1
    assert store.get_stream("a") is None and store.list_memories("a") == [] and store.list_events("a") == []
    assert [s.stream_id for s in store.list_streams()] == ["b"]
    assert len(store.list_memories("b")) == 3
    assert store.search_memory_ids(memories[0].vector, "memories", top_k=9, stream_ids="a") == []


def test_keyed_batch_reads_and_id_search(filled) -> None:
    store, memories, events = filled
    got = store.get_memories([memories[0].id, memories[7].id, "a@000000999999"], with_vectors=False)
    assert sorted(got) == sorted([memories[0].id, memories[7].id])
    assert_memory_equal(got[memories[7].id], memories[7], with_vectors=False)
    evs = store.get_events([events[1].id, "nope.e"])
    assert list(evs) == [events[1].id] and evs[events[1].id].summary == events[1].summary
    for source, vec, owner in (
        ("events", events[4].summary_vector, memories[4].id),
        ("memories", memories[4].vector, memories[4].id),
        ("vectors", memories[4].embeddings[2].vector, memories[4].id),
    ):
        hits = store.search_memory_ids(vec, source, top_k=3)
        assert hits[0][0] == owner and hits[0][1] == pytest.approx(1.0, abs=1e-5)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    only = store.search_memory_ids(memories[1].embeddings[1].vector, "vectors", top_k=5, modality="speech")
    assert only[0][0] == memories[1].id
    with pytest.raises(InputError):
        store.search_memory_ids(memories[0].vector, "frames", top_k=3)
    with pytest.raises(InputError):
        store.search_memory_ids(memories[0].vector, "memories", top_k=3, modality="speech")


def test_returned_records_are_copies(filled) -> None:
    store, memories, _ = filled
    got = store.get_memory(memories[0].id)
    got.transcript.clear()
    got.vector[:] = 0
    again = store.get_memory(memories[0].id)
    assert again.transcript_text == memories[0].transcript_text
    np.testing.assert_array_equal(again.vector, memories[0].vector)


def test_the_store_is_a_configuration_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from episodic.components import Components
    from episodic.config import load_settings
    from episodic.core.errors import ConfigError

    monkeypatch.setenv("EPISODIC_STORE", "memory")
    components = Components(load_settings(data_dir=tmp_path))
    assert isinstance(components.store, InMemoryStore)
    monkeypatch.setenv("EPISODIC_STORE", "sqlite")
    with pytest.raises(ConfigError, match="store must be milvus or memory"):
        load_settings(data_dir=tmp_path)


# -- overviews (issue 16) ------------------------------------------------------------------
def test_overviews_listing_and_replace(store) -> None:
    overviews = make_overviews()
    store.upsert_overviews(overviews[::-1])  # written out of order: the listing sorts
    listed = store.list_overviews(with_vectors=True)
    assert [o.id for o in listed] == [o.id for o in overviews]
    for got, want in zip(listed, overviews, strict=True):
        assert_overview_equal(got, want)
    light = store.list_overviews("b")  # the stream-wide overview first, though it starts later
    assert [o.id for o in light] == [o.id for o in overviews[3:]]
    assert_overview_equal(light[0], overviews[3], with_vectors=False)
    assert [o.id for o in store.list_overviews(scope="stream")] == [overviews[0].id, overviews[3].id]
    stretches = store.list_overviews(["a", "zzz"], scope="stretch")
    assert [o.id for o in stretches] == [o.id for o in overviews[1:3]]
    assert [o.id for o in store.list_overviews(limit=2)] == [o.id for o in overviews[:2]]
    assert store.list_overviews("zzz") == [] and store.list_overviews([]) == []
    assert store.counts()["overviews"] == 5

    # a live stream's stretch rebuilt as it grows: the same id, so the new version replaces it
    grown = replace(
        overviews[2], t_end=70.0, text="grown", vector=normalise(overviews[2].vector[::-1].copy()),
        facets={"topics": ["baking"]}, events=4, updated_at=1_700_000_100.0,
    )
    store.upsert_overviews([grown])
    assert store.counts()["overviews"] == 5
    got = store.list_overviews("a", scope="stretch", with_vectors=True)[-1]
    assert_overview_equal(got, grown)
    got.facets["topics"].append("changed")  # returned records are copies
    got.vector[:] = 0
    assert_overview_equal(store.list_overviews("a", scope="stretch", with_vectors=True)[-1], grown)


def test_overview_search_ranks_by_cosine_with_filters(store) -> None:
    overviews = make_overviews()
    store.upsert_overviews(overviews)
    query = overviews[1].vector + 0.5 * overviews[4].vector
    cosines = [float(o.vector @ query / np.linalg.norm(query)) for o in overviews]
    want = sorted(zip(cosines, (o.id for o in overviews), strict=True), reverse=True)
    hits = store.search_overviews(query, top_k=5)
    assert [o.id for o, _ in hits] == [i for _, i in want]
    assert [s for _, s in hits] == pytest.approx([c for c, _ in want], abs=1e-5)
    assert_overview_equal(hits[0][0], overviews[1])  # whole records, vectors included
    exact = store.search_overviews(overviews[3].vector, top_k=1)
    assert [o.id for o, _ in exact] == [overviews[3].id] and exact[0][1] == pytest.approx(1.0, abs=1e-5)

    only_b = store.search_overviews(query, top_k=5, stream_ids="b")
    assert sorted(o.id for o, _ in only_b) == sorted(o.id for o in overviews[3:])
    wide = store.search_overviews(query, top_k=5, scope="stream")
    assert sorted(o.id for o, _ in wide) == sorted([overviews[0].id, overviews[3].id])
    parts = store.search_overviews(query, top_k=5, stream_ids=["a"], scope="stretch")
    assert [o.id for o, _ in parts] == [i for _, i in want if i in {overviews[1].id, overviews[2].id}]
    assert store.search_overviews(query, top_k=3, stream_ids=[]) == []


def test_delete_overviews_and_delete_stream(store) -> None:
    overviews = make_overviews()
    store.upsert_overviews(overviews)
    store.upsert_stream(StreamInfo("b", "b.mp4", 32.25, 3, 3, 1.0))
    keep = {overviews[0].id, overviews[2].id}
    assert store.delete_overviews("a", keep_ids=keep) == 1
    assert [o.id for o in store.list_overviews("a")] == [overviews[0].id, overviews[2].id]
    assert store.delete_overviews("a", keep_ids=keep) == 0
    hits = store.search_overviews(overviews[1].vector, top_k=5, stream_ids="a")
    assert overviews[1].id not in {o.id for o, _ in hits}
    assert store.delete_overviews("zzz") == 0
    assert store.delete_stream("b") == 2 + 1  # two overviews and the StreamInfo
    assert store.list_overviews("b") == []
    assert store.search_overviews(overviews[4].vector, top_k=5, stream_ids="b") == []
    assert store.delete_overviews("a") == 2 and store.counts()["overviews"] == 0


def test_overviews_refuse_bad_input(bare) -> None:
    overviews = make_overviews()
    # before the schema: nothing to read, and nothing may be written
    assert bare.list_overviews() == [] and bare.search_overviews(overviews[0].vector, top_k=3) == []
    assert bare.delete_overviews("a") == 0
    with pytest.raises(StoreError, match="ensure_schema"):
        bare.upsert_overviews(overviews)
    bare.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
    store = bare
    store.upsert_overviews([])  # a no-op
    good, first = overviews[1], overviews[0]
    for bad in (
        replace(first, vector=np.ones(TEXT_DIM + 1)),
        replace(first, vector=np.full(TEXT_DIM, np.nan)),
        replace(first, scope="day"),
        replace(first, stream_id='a" or 1==1 or stream_id=="'),
        replace(first, id="x y"),
        replace(first, t_end=float("inf")),
        replace(first, facets={"topics": "cooking"}),
        replace(first, events=-1),
    ):
        with pytest.raises(InputError):
            store.upsert_overviews([good, bad])  # the good one is not written either
    with pytest.raises(InputError):
        store.upsert_overviews([good, good])
    assert store.counts()["overviews"] == 0
    store.upsert_overviews(overviews)
    for call in (
        lambda: store.list_overviews(scope="day"),
        lambda: store.list_overviews(scope=""),
        lambda: store.list_overviews(limit=-1),
        lambda: store.list_overviews('a" or 1==1 or stream_id=="'),
        lambda: store.search_overviews(first.vector, top_k=3, scope="Stream"),
        lambda: store.search_overviews(np.ones(TEXT_DIM + 1), top_k=3),
        lambda: store.search_overviews(first.vector, top_k=0),
        lambda: store.search_overviews(first.vector, top_k=3, stream_ids=["a", "a b"]),
        lambda: store.delete_overviews("a') or (1==1"),
    ):
        with pytest.raises(InputError):
            call()
    assert store.counts()["overviews"] == 5


def test_lite_store_from_before_overviews_gains_them(tmp_path: Path) -> None:
    """A store made before overviews existed (simulated by dropping the collection) reads as
    having none and refuses overview writes until ensure_schema, which creates the collection
    without tripping over the others or touching their records."""
    settings = Settings(data_dir=tmp_path / "data")
    rng = np.random.default_rng(5)
    memory = make_memory(rng, "a", 0.0)
    with MilvusStore(settings) as old:
        old.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
        old.upsert_memories([memory])
        old.upsert_events([make_event(rng, memory)])
        old.upsert_stream(StreamInfo("a", "a.mp4", 7.25, 1, 1, 1.0))
        old._client.drop_collection(old.name("overviews"))
    overviews = make_overviews()
    with MilvusStore(settings) as store:
        assert store.list_overviews() == [] and store.search_overviews(overviews[0].vector, top_k=3) == []
        assert store.counts()["overviews"] == 0 and store.counts()["events"] == 1
        with pytest.raises(StoreError, match="ensure_schema"):
            store.upsert_overviews(overviews)  # a reader never creates collections
        store.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
        store.upsert_overviews(overviews)
        assert [o.id for o in store.list_overviews()] == [o.id for o in overviews]
        hits = store.search_overviews(overviews[2].vector, top_k=1, scope="stretch")
        assert [o.id for o, _ in hits] == [overviews[2].id]
        assert_memory_equal(store.get_memory(memory.id), memory)
        assert store.schema_info()["schema_version"] == 1
        # a memory, its event, 3 E_i, 2 frames, stream a's 3 overviews and its StreamInfo
        assert store.delete_stream("a") == 1 + 1 + 3 + 2 + 3 + 1
