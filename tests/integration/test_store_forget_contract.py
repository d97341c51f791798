"""The store contract for forgetting (issue 17): ``delete_range`` and per-stream ``counts``, held
to the same rules on the in-memory store and Milvus Lite on disk (the fixtures of
test_store_conformance.py: stream a has memories every 10 s from 0 to 50 s, each 7.25 s long
with 3 E_i and 2 frames; stream b has three from 5 s)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from episodic.core.errors import InputError
from episodic.core.records import StreamInfo
from tests.integration.test_store_conformance import BACKENDS, open_store
from tests.store_fixtures import (
    FEATURE_DIM,
    MODELS,
    TEXT_DIM,
    fill,
    make_event,
    make_memory,
    make_overviews,
)

ZERO = {"memories": 0, "events": 0, "vectors": 0, "frames": 0}


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


def _ids(store, sid: str) -> list[str]:
    return [m.id for m in store.list_memories(sid)]


def test_delete_range_removes_exactly_the_overlapping_memories_and_their_rows(filled) -> None:
    store, memories, events = filled
    before_b = store.counts("b")
    gone = [m for m in memories[:6] if m.t_end >= 12.0 and m.t_start <= 21.0]  # 10 s and 20 s
    assert [m.t_start for m in gone] == [10.0, 20.0]
    assert store.delete_range("a", 12.0, 21.0) == {"memories": 2, "events": 2, "vectors": 6, "frames": 4}
    assert _ids(store, "a") == [m.id for m in memories[:6] if m not in gone]
    for m in gone:
        assert store.get_memory(m.id) is None
    assert not store.get_events([e.id for e in events if e.memory_id in {m.id for m in gone}])
    # nothing of them is found by any search either
    gone_ids = {m.id for m in gone}
    for m in gone:
        assert gone_ids.isdisjoint(i for i, _ in store.search_memory_ids(m.vector, "memories", top_k=50))
        assert gone_ids.isdisjoint(i for i, _ in store.search_memory_ids(m.vector, "events", top_k=50))
        hits = store.search_vectors(m.embeddings[0].vector, top_k=50, stream_ids="a")
        assert gone_ids.isdisjoint(h["memory_id"] for h, _ in hits)
        frames = store.search_frames(m.frame_features[0][1], top_k=50, stream_ids="a")
        assert gone_ids.isdisjoint(f["memory_id"] for f, _ in frames)
    assert store.counts("a") == {"memories": 4, "events": 4, "vectors": 12, "frames": 8, "overviews": 0, "streams": 0}
    assert store.counts("b") == before_b == {"memories": 3, "events": 3, "vectors": 9, "frames": 6, "overviews": 0, "streams": 0}
    # a repeat finds nothing more
    assert store.delete_range("a", 12.0, 21.0) == ZERO
    assert len(_ids(store, "a")) == 4


def test_delete_range_bounds_are_closed_and_either_may_be_open(filled) -> None:
    store, memories, _ = filled
    # a memory ending exactly at t_min overlaps (the list filters' rule)
    assert [m.t_start for m in store.list_memories("a", 7.25, 7.25)] == [0.0]
    assert store.delete_range("a", 7.25, 7.25)["memories"] == 1
    assert store.delete_range("a", t_min=45.0)["memories"] == 2  # 40 and 50 s
    assert store.delete_range("a", t_max=10.0)["memories"] == 1  # 10 s (0 s went already)
    assert [m.t_start for m in store.list_memories("a")] == [20.0, 30.0]
    assert store.delete_range("a") == {"memories": 2, "events": 2, "vectors": 6, "frames": 4}
    assert store.list_memories("a") == [] and store.list_events("a") == []
    assert len(_ids(store, "b")) == 3


def test_delete_range_leaves_overviews_and_the_listing_to_the_caller(store) -> None:
    rng = np.random.default_rng(3)
    memory = make_memory(rng, "a", 0.0)
    store.upsert_memories([memory])
    store.upsert_events([make_event(rng, memory)])
    store.upsert_overviews(make_overviews())
    store.upsert_stream(StreamInfo("a", "a.mp4", 7.25, 1, 1, 1.0))
    assert store.delete_range("a")["memories"] == 1
    assert store.get_stream("a") is not None and len(store.list_overviews("a")) == 3
    assert store.counts("a") == {"memories": 0, "events": 0, "vectors": 0, "frames": 0, "overviews": 3, "streams": 1}


def test_delete_range_removes_orphan_events_in_the_range(store) -> None:
    rng = np.random.default_rng(4)
    kept, lone = make_memory(rng, "a", 0.0), make_memory(rng, "a", 20.0)
    store.upsert_memories([kept])
    store.upsert_events([make_event(rng, kept), make_event(rng, lone)])  # lone's memory is not stored
    assert store.delete_range("a", 15.0, 30.0) == {"memories": 0, "events": 1, "vectors": 0, "frames": 0}
    assert [e.memory_id for e in store.list_events("a")] == [kept.id]


def test_delete_range_refuses_bad_input_and_is_a_no_op_without_records(bare) -> None:
    assert bare.delete_range("a", 0.0, 10.0) == ZERO  # no schema yet: nothing to delete
    bare.ensure_schema(8, 4, models={"embedder": "test-embedder-8", "describer": "test-describer-4"})
    for call in (
        lambda: bare.delete_range("a", 10.0, 5.0),
        lambda: bare.delete_range("a", float("nan"), 5.0),
        lambda: bare.delete_range("a", 0.0, float("inf")),
        lambda: bare.delete_range('a" or 1==1 or stream_id=="', 0.0, 5.0),
        lambda: bare.counts("a b"),
    ):
        with pytest.raises(InputError):
            call()
    assert bare.delete_range("nothing-here") == ZERO
    assert bare.counts("nothing-here") == {k: 0 for k in ("memories", "events", "vectors", "frames", "overviews", "streams")}
