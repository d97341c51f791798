"""A memory store in process memory: the whole :class:`~episodic.core.interfaces.MemoryStore`
without a database.

For tests of the query side that should run in seconds, and for embedding episodic in a
program that keeps nothing on disk. It searches through the same
:class:`~episodic.memory.vector_cache.VectorCache` as Milvus Lite's cache, so ranking and
filters agree with Milvus; ``tests/integration/test_store_conformance.py`` holds both to one contract.
Records are copied in and out, so changing a returned record never changes the store.
Nothing survives the process.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from episodic.core.errors import InputError, StoreError
from episodic.core.records import ShortTermMemory, StreamInfo, StreamOverview, ThetaEvent, vector_id
from episodic.memory.milvus_codecs import _check_dim, _check_limit, _check_top_k, _vector
from episodic.memory.milvus_filters import (
    MODALITY,
    check_id,
    check_range,
    check_stream,
    check_time,
    overview_order,
    scope_filter,
    stream_list,
)
from episodic.memory.milvus_rows import checked_overviews
from episodic.memory.vector_cache import VectorCache

SEARCH_SOURCES = ("events", "memories", "vectors")
SCHEMA_VERSION = 1  # the record layout's version, as Milvus's meta record states it
VECTOR_MODEL_ROLES = ("embedder", "describer")  # a change makes stored vectors incomparable


def _array(value: Any, dim: int, what: str) -> np.ndarray:
    """A finite float32 vector of ``dim`` dimensions (the same check as a Milvus row's)."""
    return np.asarray(_vector(value, dim, what), dtype=np.float32)


def _modality(value: Any) -> str:
    if not isinstance(value, str) or not MODALITY.fullmatch(value):
        raise InputError(f"invalid modality {value!r}")
    return value


def _overlaps(t0: float, t1: float, t_min: float | None, t_max: float | None) -> bool:
    return (t_min is None or t1 >= t_min) and (t_max is None or t0 <= t_max)


class InMemoryStore:
    """Memories, events, overviews and streams in dicts; vectors in :class:`VectorCache`
    matrices."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._text_dim: int | None = None
        self._feature_dim: int | None = None
        self._models: dict[str, str] = {}
        self._memories: dict[str, ShortTermMemory] = {}
        self._events: dict[str, ThetaEvent] = {}
        self._streams: dict[str, StreamInfo] = {}
        self._overviews: dict[str, StreamOverview] = {}
        self._children: dict[str, tuple[list[str], list[str]]] = {}  # memory id → (E_i ids, frame ids)
        self._rows: dict[str, dict[str, dict[str, Any]]] = {"vectors": {}, "frames": {}}
        self._caches: dict[str, VectorCache] = {}

    # -- schema ----------------------------------------------------------------------------
    def ensure_schema(self, text_dim: int, feature_dim: int, models: dict[str, str] | None = None) -> None:
        text_dim, feature_dim = _check_dim(text_dim, "text_dim"), _check_dim(feature_dim, "feature_dim")
        models = {str(k): str(v) for k, v in (models or {}).items()}
        with self._lock:
            for what, old, new in (("vectors", self._text_dim, text_dim), ("frame features", self._feature_dim, feature_dim)):
                if old is not None and old != new:
                    raise StoreError(f"the in-memory store holds {old}-d {what}; got {new}-d")
            for role in VECTOR_MODEL_ROLES:
                old_model, new_model = self._models.get(role), models.get(role)
                if old_model and new_model and old_model != new_model:
                    raise StoreError(
                        f"the in-memory store was built with the {role} {old_model}; "
                        f"the configured {role} is {new_model}, whose vectors are not comparable"
                    )
            if self._text_dim is None:
                self._caches = {
                    "events": VectorCache(text_dim, has_memory_id=True, has_modality=False),
                    "memories": VectorCache(text_dim, has_memory_id=False, has_modality=False),
                    "vectors": VectorCache(text_dim, has_memory_id=True, has_modality=True),
                    "frames": VectorCache(feature_dim, has_memory_id=True, has_modality=False),
                    # the modality column holds the scope, so a scope filter is a cache mask
                    "overviews": VectorCache(text_dim, has_memory_id=False, has_modality=True),
                }
            self._text_dim, self._feature_dim = text_dim, feature_dim
            self._models.update(models)

    def describe(self) -> str:
        return "in-memory store (this process only: nothing is kept after it)"

    def schema_info(self) -> dict[str, Any] | None:
        if self._text_dim is None:
            return None
        return {
            "schema_version": SCHEMA_VERSION, "text_dim": self._text_dim,
            "feature_dim": self._feature_dim, "models": dict(self._models),
        }

    def _require_schema(self) -> None:
        if self._text_dim is None:
            raise StoreError("the in-memory store has no schema yet: call ensure_schema first")

    # -- writes ----------------------------------------------------------------------------
    def upsert_memories(self, memories: Sequence[ShortTermMemory]) -> None:
        if not memories:
            return
        self._require_schema()
        if len({m.id for m in memories}) != len(memories):
            raise InputError("upsert_memories got the same memory id twice in one batch")
        staged = [self._memory_rows(m) for m in memories]  # validate everything before writing
        with self._lock:
            for m, (vec_rows, frame_rows) in zip(memories, staged, strict=True):
                self._drop_children(m.id)
                self._put("vectors", vec_rows)
                self._put("frames", frame_rows)
                self._children[m.id] = ([r["id"] for r in vec_rows], [r["id"] for r in frame_rows])
                self._memories[m.id] = copy.deepcopy(m)
                self._memories[m.id].keyframe_images = []  # never stored
                self._caches["memories"].put([{"id": m.id, "stream_id": m.stream_id, "t_start": m.t_start, "t_end": m.t_end, "vector": m.vector}])

    def _memory_rows(self, m: ShortTermMemory) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        mid = check_id(m.id, "memory id")
        sid = check_stream(m.stream_id)
        check_time(m.t_start, f"{mid}: t_start")
        check_time(m.t_end, f"{mid}: t_end")
        _array(m.vector, self._text_dim, f"memory {mid} vector")
        vec_rows = []
        for i, e in enumerate(m.embeddings):
            modality = _modality(str(e.modality))
            vid = vector_id(mid, modality, i)
            vec_rows.append({
                "id": check_id(vid, "vector id"), "memory_id": mid, "stream_id": sid, "ord": i,
                "t_start": check_time(e.t_start, f"{vid}: t_start"), "t_end": check_time(e.t_end, f"{vid}: t_end"),
                "modality": modality, "text": str(e.text), "vector": _array(e.vector, self._text_dim, f"embedding {vid}"),
            })
        frame_rows = []
        for i, (t, feat) in enumerate(m.frame_features):
            fid = vector_id(mid, "f", i)
            tt = check_time(t, f"{fid}: t")
            frame_rows.append({
                "id": fid, "memory_id": mid, "stream_id": sid, "ord": i, "t_start": tt, "t_end": tt,
                "vector": _array(feat, self._feature_dim, f"frame feature {fid}"),
            })
        return vec_rows, frame_rows

    def _put(self, collection: str, rows: list[dict[str, Any]]) -> None:
        for r in rows:
            self._rows[collection][r["id"]] = r
        self._caches[collection].put(rows)

    def _drop_children(self, memory_id: str) -> None:
        vec_ids, frame_ids = self._children.pop(memory_id, ([], []))
        for collection, ids in (("vectors", vec_ids), ("frames", frame_ids)):
            for i in ids:
                self._rows[collection].pop(i, None)
            self._caches[collection].delete(ids)

    def upsert_events(self, events: Sequence[ThetaEvent]) -> None:
        if not events:
            return
        self._require_schema()
        for e in events:
            check_id(e.id, "event id")
            check_id(e.memory_id, "memory id")
            check_stream(e.stream_id)
            check_time(e.t_start, f"{e.id}: t_start")
            check_time(e.t_end, f"{e.id}: t_end")
            _array(e.summary_vector, self._text_dim, f"event {e.id} summary vector")
        with self._lock:
            for e in events:
                self._events[e.id] = copy.deepcopy(e)
            self._caches["events"].put([
                {"id": e.id, "memory_id": e.memory_id, "stream_id": e.stream_id, "t_start": e.t_start,
                 "t_end": e.t_end, "vector": e.summary_vector}
                for e in events
            ])

    def upsert_overviews(self, overviews: Sequence[StreamOverview]) -> None:
        if not overviews:
            return
        self._require_schema()
        staged = checked_overviews(overviews, self._text_dim)  # validate everything before writing
        with self._lock:
            for o in staged:
                self._overviews[o.id] = o
            self._caches["overviews"].put([
                {"id": o.id, "stream_id": o.stream_id, "t_start": o.t_start, "t_end": o.t_end,
                 "modality": o.scope, "vector": o.vector}
                for o in staged
            ])

    def delete_overviews(self, stream_id: str, keep_ids: set[str] | None = None) -> int:
        sid = check_stream(stream_id)
        keep = set(keep_ids or ())
        with self._lock:
            stale = [i for i, o in self._overviews.items() if o.stream_id == sid and i not in keep]
            for i in stale:
                del self._overviews[i]
            if stale:
                self._caches["overviews"].delete(stale)
        return len(stale)

    def upsert_stream(self, info: StreamInfo) -> None:
        self._require_schema()
        check_stream(info.stream_id)
        check_time(info.t_end, "t_end")
        check_time(info.updated_at, "updated_at")
        with self._lock:
            self._streams[info.stream_id] = copy.deepcopy(info)

    def delete_stream_records_except(self, stream_id: str, keep_memory_ids: set[str]) -> int:
        sid = check_stream(stream_id)
        keep = set(keep_memory_ids)
        removed = 0
        with self._lock:
            for eid in [i for i, e in self._events.items() if e.stream_id == sid and e.memory_id not in keep]:
                del self._events[eid]
                self._caches["events"].delete([eid])
                removed += 1
            for mid in [i for i, m in self._memories.items() if m.stream_id == sid and i not in keep]:
                vec_ids, frame_ids = self._children.get(mid, ([], []))
                removed += 1 + len(vec_ids) + len(frame_ids)
                self._drop_children(mid)
                del self._memories[mid]
                self._caches["memories"].delete([mid])
        return removed

    def delete_range(
        self, stream_id: str, t_min: float | None = None, t_max: float | None = None
    ) -> dict[str, int]:
        sid = check_stream(stream_id)
        lo, hi = check_range(t_min, t_max)
        out = {"memories": 0, "events": 0, "vectors": 0, "frames": 0}
        with self._lock:
            gone = {i for i, m in self._memories.items() if m.stream_id == sid and _overlaps(m.t_start, m.t_end, lo, hi)}
            stale = [
                i for i, e in self._events.items()
                if e.stream_id == sid and (e.memory_id in gone or (
                    e.memory_id not in self._memories and _overlaps(e.t_start, e.t_end, lo, hi)))
            ]
            for eid in stale:
                del self._events[eid]
            if stale:
                self._caches["events"].delete(stale)
            out["events"] = len(stale)
            for mid in sorted(gone):
                vec_ids, frame_ids = self._children.get(mid, ([], []))
                out["vectors"] += len(vec_ids)
                out["frames"] += len(frame_ids)
                self._drop_children(mid)
                del self._memories[mid]
                self._caches["memories"].delete([mid])
            out["memories"] = len(gone)
        return out

    def delete_stream(self, stream_id: str) -> int:
        sid = check_stream(stream_id)
        with self._lock:
            removed = self.delete_stream_records_except(sid, set()) + self.delete_overviews(sid)
            if self._streams.pop(sid, None) is not None:
                removed += 1
        return removed

    # -- reads -----------------------------------------------------------------------------
    def list_events(
        self, stream_id: str | Iterable[str] | None = None, t_min: float | None = None,
        t_max: float | None = None, limit: int = 10000, with_vectors: bool = True,
    ) -> list[ThetaEvent]:
        limit, sids = _check_limit(limit), stream_list(stream_id)
        lo, hi = check_range(t_min, t_max)
        with self._lock:
            found = [e for e in self._events.values() if (sids is None or e.stream_id in sids) and _overlaps(e.t_start, e.t_end, lo, hi)]
        found.sort(key=lambda e: (e.stream_id, e.t_start, e.id))
        return [self._event_out(e, with_vectors) for e in found[:limit]]

    def list_memories(
        self, stream_id: str | Iterable[str] | None = None, t_min: float | None = None,
        t_max: float | None = None, limit: int = 10000, with_vectors: bool = False,
    ) -> list[ShortTermMemory]:
        limit, sids = _check_limit(limit), stream_list(stream_id)
        lo, hi = check_range(t_min, t_max)
        with self._lock:
            found = [m for m in self._memories.values() if (sids is None or m.stream_id in sids) and _overlaps(m.t_start, m.t_end, lo, hi)]
        found.sort(key=lambda m: (m.stream_id, m.t_start, m.id))
        return [self._memory_out(m, with_vectors) for m in found[:limit]]

    @staticmethod
    def _memory_out(m: ShortTermMemory, with_vectors: bool) -> ShortTermMemory:
        out = copy.deepcopy(m)
        if not with_vectors:
            out.embeddings, out.frame_features = [], []
        return out

    @staticmethod
    def _event_out(e: ThetaEvent, with_vectors: bool) -> ThetaEvent:
        out = copy.deepcopy(e)
        if not with_vectors:
            out.summary_vector = np.zeros(0, dtype=np.float32)
            out.vector = np.zeros(0, dtype=np.float32)
        return out

    def list_overviews(
        self, stream_id: str | Iterable[str] | None = None, scope: str | None = None,
        limit: int = 10000, with_vectors: bool = False,
    ) -> list[StreamOverview]:
        limit, sids, scope = _check_limit(limit), stream_list(stream_id), scope_filter(scope)
        with self._lock:
            found = [
                o for o in self._overviews.values()
                if (sids is None or o.stream_id in sids) and (scope is None or o.scope == scope)
            ]
        found.sort(key=overview_order)
        return [self._overview_out(o, with_vectors) for o in found[:limit]]

    @staticmethod
    def _overview_out(o: StreamOverview, with_vectors: bool) -> StreamOverview:
        out = copy.deepcopy(o)
        if not with_vectors:
            out.vector = np.zeros(0, dtype=np.float32)
        return out

    def get_memory(self, memory_id: str, with_vectors: bool = True) -> ShortTermMemory | None:
        m = self._memories.get(check_id(memory_id, "memory id"))
        return None if m is None else self._memory_out(m, with_vectors)

    def get_memories(self, memory_ids: Iterable[str], with_vectors: bool = True) -> dict[str, ShortTermMemory]:
        ids = {check_id(i, "memory id") for i in memory_ids}
        with self._lock:
            return {i: self._memory_out(self._memories[i], with_vectors) for i in sorted(ids) if i in self._memories}

    def get_event(self, event_id: str) -> ThetaEvent | None:
        e = self._events.get(check_id(event_id, "event id"))
        return None if e is None else self._event_out(e, True)

    def get_events(self, event_ids: Iterable[str]) -> dict[str, ThetaEvent]:
        ids = {check_id(i, "event id") for i in event_ids}
        with self._lock:
            return {i: self._event_out(self._events[i], True) for i in sorted(ids) if i in self._events}

    def get_stream(self, stream_id: str) -> StreamInfo | None:
        info = self._streams.get(check_stream(stream_id))
        return copy.deepcopy(info)

    def list_streams(self) -> list[StreamInfo]:
        with self._lock:
            return [copy.deepcopy(s) for _, s in sorted(self._streams.items())]

    def counts(self, stream_id: str | None = None) -> dict[str, int]:
        if stream_id is not None:
            sid = check_stream(stream_id)
            with self._lock:
                return {
                    "events": sum(e.stream_id == sid for e in self._events.values()),
                    "memories": sum(m.stream_id == sid for m in self._memories.values()),
                    "vectors": sum(r["stream_id"] == sid for r in self._rows["vectors"].values()),
                    "frames": sum(r["stream_id"] == sid for r in self._rows["frames"].values()),
                    "overviews": sum(o.stream_id == sid for o in self._overviews.values()),
                    "streams": int(sid in self._streams),
                }
        with self._lock:
            return {
                "events": len(self._events), "memories": len(self._memories), "vectors": len(self._rows["vectors"]),
                "frames": len(self._rows["frames"]), "overviews": len(self._overviews),
                "streams": len(self._streams), "meta": int(self._text_dim is not None),
            }

    # -- searches --------------------------------------------------------------------------
    def _hits(
        self, collection: str, vector: Any, top_k: int, stream_ids: Any, t_min: Any, t_max: Any, modality: str | None = None
    ) -> list[tuple[str, str, float]]:
        """(row id, memory id, cosine) from one collection, best first."""
        sids = stream_list(stream_ids)
        _check_top_k(top_k)
        lo, hi = check_range(t_min, t_max)
        if modality is not None:
            _modality(modality)
        if sids == [] or self._text_dim is None:
            return []
        dim = self._feature_dim if collection == "frames" else self._text_dim
        q = _array(vector, dim, "query vector")
        return self._caches[collection].search(q, top_k, sids, lo, hi, modality)

    def search_events(
        self, vector: Any, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None, t_max: float | None = None,
    ) -> list[tuple[ThetaEvent, float]]:
        with self._lock:
            return [(self._event_out(self._events[i], True), s) for i, _, s in self._hits("events", vector, top_k, stream_ids, t_min, t_max)]

    def search_memories(
        self, vector: Any, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None, t_max: float | None = None, with_vectors: bool = False,
    ) -> list[tuple[ShortTermMemory, float]]:
        with self._lock:
            return [
                (self._memory_out(self._memories[i], with_vectors), s)
                for i, _, s in self._hits("memories", vector, top_k, stream_ids, t_min, t_max)
            ]

    def search_vectors(
        self, vector: Any, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None, t_max: float | None = None, modality: str | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        with self._lock:
            hits = self._hits("vectors", vector, top_k, stream_ids, t_min, t_max, modality)
            return [(dict(self._rows["vectors"][i], vector=self._rows["vectors"][i]["vector"].copy()), s) for i, _, s in hits]

    def search_memory_ids(
        self, vector: Any, source: str, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None, t_max: float | None = None, modality: str | None = None,
    ) -> list[tuple[str, float]]:
        if source not in SEARCH_SOURCES:
            raise InputError(f"source must be one of {', '.join(SEARCH_SOURCES)}, got {source!r}")
        if modality is not None and source != "vectors":
            raise InputError(f"invalid modality {modality!r} for {source}")
        with self._lock:
            return [(mid, s) for _, mid, s in self._hits(source, vector, top_k, stream_ids, t_min, t_max, modality)]

    def search_overviews(
        self, vector: Any, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        scope: str | None = None,
    ) -> list[tuple[StreamOverview, float]]:
        scope = scope_filter(scope)
        with self._lock:
            hits = self._hits("overviews", vector, top_k, stream_ids, None, None, modality=scope)
            return [(self._overview_out(self._overviews[i], True), s) for i, _, s in hits]

    def search_frames(
        self, vector: Any, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None, t_max: float | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        with self._lock:
            out = []
            for i, _, s in self._hits("frames", vector, top_k, stream_ids, t_min, t_max):
                r = self._rows["frames"][i]
                out.append(({"id": r["id"], "memory_id": r["memory_id"], "stream_id": r["stream_id"], "t": r["t_start"], "vector": r["vector"].copy()}, s))
            return out

    # -- lifecycle -------------------------------------------------------------------------
    def enable_vector_cache(self, background: bool = False) -> bool:
        """Everything is in memory already."""
        return False

    def vector_cache_state(self) -> str:
        return "off"

    def flush(self) -> None:
        """Nothing to seal: writes are visible at once."""

    def close(self) -> None:
        """Nothing to release (the records live as long as the object)."""
