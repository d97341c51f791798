"""The query server's fast paths on Milvus Lite: the in-process vector cache must give exactly
the searches Milvus gives (ids, order, scores, filters) and follow every write; batch reads
(get_memories/get_events, MemoryReader.prefetch) must read what one-by-one reads read."""

from __future__ import annotations

import numpy as np
import pytest

from episodic.config import Settings
from episodic.core.query import Scope
from episodic.memory.milvus_store import MilvusStore
from episodic.memory.vector_cache import VectorCache
from episodic.retrieval.detailed import MemoryReader, nearest_memory_ids
from tests.integration.test_milvus_store import (
    FEATURE_DIM,
    MODELS,
    TEXT_DIM,
    assert_memory_equal,
    make_event,
    make_memory,
)


@pytest.fixture()
def filled(tmp_path):
    """Two streams: a (6 memories, every 10 s) and b (3 memories), with their events."""
    lite = MilvusStore(Settings(data_dir=tmp_path / "data"))
    lite.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
    rng = np.random.default_rng(7)
    memories = [make_memory(rng, "a", 10.0 * i) for i in range(6)] + [
        make_memory(rng, "b", 10.0 * i + 5) for i in range(3)
    ]
    events = [make_event(rng, m) for m in memories]
    lite.upsert_memories(memories)
    lite.upsert_events(events)
    yield lite, memories, events
    lite.close()


def _queries(n: int = 6) -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    return [rng.standard_normal(TEXT_DIM).astype(np.float32) for _ in range(n)]


FILTERS = [
    {},
    {"stream_ids": ["a"]},
    {"stream_ids": ["b", "nobody"]},
    {"t_min": 12.0, "t_max": 31.0},
    {"stream_ids": ["a"], "t_max": 20.0},
    {"stream_ids": ["nobody"]},
]


def _ids(hits) -> list[str]:
    return [getattr(r, "id", None) or r["id"] for r, _ in hits]


def _all_searches(store: MilvusStore, q: np.ndarray, f: dict) -> dict[str, list]:
    return {
        "events": [(e.id, round(s, 4)) for e, s in store.search_events(q, top_k=4, **f)],
        "memories": [(m.id, round(s, 4)) for m, s in store.search_memories(q, top_k=4, **f)],
        "vectors": [(h["id"], round(s, 4)) for h, s in store.search_vectors(q, top_k=5, **f)],
        "speech": [(h["id"], round(s, 4)) for h, s in store.search_vectors(q, top_k=5, modality="speech", **f)],
        "ids": store.search_memory_ids(q, "vectors", top_k=5, **f),
    }


def test_cache_gives_the_searches_milvus_gives(filled):
    store, memories, events = filled
    before = {(i, j): _all_searches(store, q, f) for i, q in enumerate(_queries()) for j, f in enumerate(FILTERS)}
    assert store.vector_cache_state() == "off"
    assert store.enable_vector_cache() is True
    assert store.vector_cache_state() == "ready"
    for (i, j), want in before.items():
        got = _all_searches(store, _queries()[i], FILTERS[j])
        for key in want:
            assert [x[0] for x in got[key]] == [x[0] for x in want[key]], (key, FILTERS[j])
            np.testing.assert_allclose([x[1] for x in got[key]], [x[1] for x in want[key]], atol=1e-3)
    # the records that come back are whole
    e, _ = store.search_events(_queries()[0], top_k=1)[0]
    want_e = next(x for x in events if x.id == e.id)
    assert e.summary == want_e.summary and e.memory_id == want_e.memory_id
    h, _ = store.search_vectors(_queries()[0], top_k=1)[0]
    assert h["vector"].dtype == np.float32 and h["vector"].shape == (TEXT_DIM,) and h["text"]


def test_cache_follows_writes_and_deletes(filled):
    store, memories, events = filled
    store.enable_vector_cache()
    rng = np.random.default_rng(3)
    q = _queries()[0]
    # a new memory whose vectors equal the query: it must come first everywhere
    m = make_memory(rng, "c", 100.0)
    m.vector = q / np.linalg.norm(q)
    m.embeddings[1].vector = m.vector
    ev = make_event(rng, m)
    ev.summary_vector = m.vector
    store.upsert_memories([m])
    store.upsert_events([ev])
    assert store.search_events(q, top_k=1)[0][0].id == ev.id
    assert store.search_memories(q, top_k=1)[0][0].id == m.id
    assert store.search_memory_ids(q, "vectors", top_k=1)[0][0] == m.id
    assert store.search_memory_ids(q, "vectors", top_k=3, stream_ids=["a"])[0][0] != m.id
    # a re-upsert that moves the vector away replaces it (no stale row)
    m.vector = -m.vector
    store.upsert_memories([m])
    assert store.search_memories(q, top_k=1)[0][0].id != m.id
    # deletes: the stream's records vanish from every search
    store.delete_stream_records_except("c", set())
    for source in ("events", "memories", "vectors"):
        assert all(mid != m.id for mid, _ in store.search_memory_ids(q, source, top_k=50))
    # closing the last store of the path drops the cache (another process may write next)
    path = store.uri
    store.close()
    reopened = MilvusStore(store.settings)
    try:
        assert reopened.uri == path and reopened.vector_cache_state() == "off"
    finally:
        reopened.close()


def test_vector_cache_unit():
    c = VectorCache(3, has_memory_id=True, has_modality=True)
    rows = [
        {"id": f"r{i}", "memory_id": f"m{i // 2}", "stream_id": "s" if i % 2 else "t", "t_start": float(i),
         "t_end": i + 1.0, "modality": "speech" if i % 3 else "visual", "vector": [1.0, i * 0.1, 0.0]}
        for i in range(3000)  # past the first allocation
    ]
    c.put(rows)
    mat = np.array([r["vector"] for r in rows], dtype=np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    q = np.array([0.2, 1.0, 0.0], dtype=np.float32)
    want = np.argsort(-(mat @ (q / np.linalg.norm(q))), kind="stable")[:7]
    assert [pk for pk, _, _ in c.search(q, 7, None, None, None)] == [f"r{i}" for i in want]
    hits = c.search(q, 50, ["s"], 10.0, 400.0, "speech")
    assert hits and all(
        rows[int(pk[1:])]["stream_id"] == "s" and rows[int(pk[1:])]["modality"] == "speech"
        and rows[int(pk[1:])]["t_end"] >= 10.0 and rows[int(pk[1:])]["t_start"] <= 400.0
        for pk, _, _ in hits
    )
    assert c.search(q, 5, ["nobody"], None, None) == [] and c.search(q, 5, None, None, None, "audio") == []
    c.delete([pk for pk, _, _ in c.search(q, 3, None, None, None)])
    assert [pk for pk, _, _ in c.search(q, 1, None, None, None)] == [f"r{want[3]}"]
    # while the initial load runs, a row written meanwhile wins over the older copy read
    c2 = VectorCache(3, has_memory_id=False, has_modality=False)
    c2.start_loading()
    c2.put([{"id": "x", "stream_id": "s", "t_start": 0.0, "t_end": 1.0, "vector": [0.0, 1.0, 0.0]}])
    c2.put([{"id": "x", "stream_id": "s", "t_start": 0.0, "t_end": 1.0, "vector": [1.0, 0.0, 0.0]}], loaded=True)
    c2.finish_loading()
    assert c2.search(np.array([0.0, 1.0, 0.0]), 1, None, None, None)[0] == ("x", "x", pytest.approx(1.0))


def test_batch_reads_match_single_reads(filled):
    store, memories, events = filled
    ids = [m.id for m in memories[:5]] + ["a@000000999999"]
    got = store.get_memories(ids)
    assert sorted(got) == sorted(m.id for m in memories[:5])
    for m in memories[:5]:
        assert_memory_equal(got[m.id], store.get_memory(m.id))
    evs = store.get_events([e.id for e in events[:3]] + ["a@000000999999.e"])
    assert sorted(evs) == sorted(e.id for e in events[:3])
    assert store.get_memories([]) == {} and store.get_events([]) == {}

    calls = {"n": 0}
    inner = store._query

    def counting(*args, **kwargs):
        calls["n"] += 1
        return inner(*args, **kwargs)

    store._query = counting
    reader = MemoryReader(store)
    units = reader.units([m.id for m in memories], True, Scope())
    assert calls["n"] <= 4  # memories, E_i, frame features, events: not one round trip each
    assert {u.memory_id for u in units} == {m.id for m in memories}
    assert any(u.modality == "summary" for u in units)
    assert nearest_memory_ids(store, _queries()[0], "memories", 3, Scope(stream_ids=("b",)))[0][0].startswith("b@")


def test_large_caches_search_an_ivf_index_that_follows_writes(monkeypatch):
    pytest.importorskip("faiss")
    import episodic.memory.vector_cache as vc

    monkeypatch.setattr(vc, "ANN_MIN_ROWS", 2000)
    rng = np.random.default_rng(5)
    vecs = rng.standard_normal((4000, 16)).astype(np.float32)
    c = VectorCache(16, has_memory_id=True, has_modality=False)
    c.start_loading()
    c.put([{"id": f"r{i}", "memory_id": f"m{i}", "stream_id": f"s{i % 4}", "t_start": float(i), "t_end": i + 1.0,
            "vector": v} for i, v in enumerate(vecs)], loaded=True)
    c.finish_loading()
    assert c._ann is not None
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    agree = 0
    for j in range(20):
        q = unit[j * 100]  # a stored vector: its own row must come first
        hits = c.search(q, 5, None, None, None)
        assert hits[0][0] == f"r{j * 100}" and hits[0][2] == pytest.approx(1.0, abs=1e-4)
        exact = np.argsort(-(unit @ q))[:5]
        agree += len({h[0] for h in hits} & {f"r{i}" for i in exact})
        # a filter that keeps most rows goes through the index's selector
        kept = c.search(q, 5, ["s0", "s1", "s2"], None, None)
        assert all(int(h[0][1:]) % 4 != 3 for h in kept)
    assert agree >= 0.9 * 100
    # writes after the build: a replaced vector moves, a deleted row is gone
    target = unit[7]
    c.put([{"id": "r11", "memory_id": "m11", "stream_id": "s3", "t_start": 11.0, "t_end": 12.0, "vector": target}])
    assert {h[0] for h in c.search(target, 2, None, None, None)} == {"r7", "r11"}
    c.delete(["r7"])
    assert c.search(target, 1, None, None, None)[0][0] == "r11"


def test_listings_through_the_cache_match_milvus(filled):
    store, memories, events = filled
    windows = [("a", None, None), ("a", 15.0, 32.0), ("b", 0.0, 6.0), (None, 40.0, None), ("nobody", None, None)]
    before = [
        ([m.id for m in store.list_memories(s, t_min=lo, t_max=hi)],
         [e.id for e in store.list_events(s, t_min=lo, t_max=hi, with_vectors=False)])
        for s, lo, hi in windows
    ]
    store.enable_vector_cache()
    after = [
        ([m.id for m in store.list_memories(s, t_min=lo, t_max=hi)],
         [e.id for e in store.list_events(s, t_min=lo, t_max=hi, with_vectors=False)])
        for s, lo, hi in windows
    ]
    assert after == before
    got = store.list_memories("a", t_min=15.0, t_max=32.0, with_vectors=True)
    for m in got:
        assert_memory_equal(m, next(x for x in memories if x.id == m.id))
