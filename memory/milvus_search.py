"""Searches on Milvus, and the in-process vector cache that answers them on Milvus Lite.
A mixin of :class:`~episodic.memory.milvus_store.MilvusStore`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np

from episodic.core.errors import InputError
from episodic.core.records import (
    ShortTermMemory,
    StreamOverview,
    ThetaEvent,
)
from episodic.memory.milvus_codecs import _check_top_k, _f32, _vector
from episodic.memory.milvus_filters import MODALITY as _MODALITY
from episodic.memory.milvus_filters import build_filter as _filter
from episodic.memory.milvus_filters import scope_clause, scope_filter
from episodic.memory.milvus_filters import stream_list as _stream_list
from episodic.memory.milvus_lite import CACHE_COLLECTIONS, CACHE_LOAD_BATCH, _caches, _caches_lock
from episodic.memory.milvus_schema import EVENTS, FRAMES, MEMORIES, OVERVIEWS, VECTORS
from episodic.memory.vector_cache import VectorCache

log = logging.getLogger(__name__)


class MilvusSearch:
    # -- the vector cache ------------------------------------------------------------------
    def _registered_cache(self, collection: str) -> VectorCache | None:
        if self._lite_path is None or collection not in CACHE_COLLECTIONS:
            return None
        with _caches_lock:
            return _caches.get((self._lite_path, self.name(collection)))

    def _cache_for(self, collection: str) -> VectorCache | None:
        """The collection's vector cache when it is loaded and matches the store."""
        cache = self._registered_cache(collection)
        if cache is None or not cache.ready or cache.dim != self._text_dim:
            return None
        return cache

    def vector_cache_state(self) -> str:
        """"off" (not enabled, or not Milvus Lite), "loading" or "ready"."""
        caches = [self._registered_cache(c) for c in CACHE_COLLECTIONS]
        if self._lite_path is None or any(c is None for c in caches):
            return "off"
        return "ready" if all(c is not None and c.ready for c in caches) else "loading"

    def enable_vector_cache(self, background: bool = False) -> bool:
        """Search this Milvus Lite store from an in-process copy of its text vectors (see
        :class:`VectorCache`): for a long-running query server. Loading reads every event,
        memory and E_i vector once (≈ 4k rows/s on Milvus Lite: 10k events ≈ 10 s, 100k
        events ≈ 2 min), in a daemon thread with ``background``; searches use Milvus until
        it is ready. Writes made through any store of this process keep it exact. Returns
        False where there is nothing to do: a Milvus server (other processes write there and
        it indexes by itself) or an empty store."""
        if self._lite_path is None or not self._attach() or self._text_dim is None:
            return False
        todo: list[tuple[str, VectorCache]] = []
        with _caches_lock:
            for collection in CACHE_COLLECTIONS:
                key = (self._lite_path, self.name(collection))
                if key not in _caches and self._has(collection):
                    cache = VectorCache(int(self._text_dim), collection != MEMORIES, collection == VECTORS)
                    cache.start_loading()
                    _caches[key] = cache
                    todo.append((collection, cache))
        if not todo:
            return True
        if background:
            threading.Thread(target=self._load_caches, args=(todo,), daemon=True,
                             name="episodic-vector-cache").start()
        else:
            self._load_caches(todo)
        return True

    def _load_caches(self, todo: list[tuple[str, VectorCache]]) -> None:
        fields = {
            EVENTS: ["id", "stream_id", "t_start", "t_end", "memory_id", "vector"],
            MEMORIES: ["id", "stream_id", "t_start", "t_end", "vector"],
            VECTORS: ["id", "stream_id", "t_start", "t_end", "memory_id", "modality", "vector"],
        }
        for collection, cache in todo:
            name = self.name(collection)
            try:
                it = self._call(f"reading {name}", self._client.query_iterator, name,
                                batch_size=CACHE_LOAD_BATCH, filter="", output_fields=fields[collection])
                try:
                    while True:
                        batch = self._call(f"reading {name}", it.next)
                        if not batch:
                            break
                        cache.put(batch, loaded=True)
                finally:
                    it.close()
            except Exception as exc:  # closed meanwhile, or a store error: search Milvus
                log.info("vector cache for %s not loaded: %s", name, exc)
                with _caches_lock:
                    if _caches.get((self._lite_path, name)) is cache:
                        del _caches[(self._lite_path, name)]
                continue
            cache.finish_loading()
            log.info("vector cache for %s: %d rows", name, cache.n)

    # -- search ----------------------------------------------------------------------------
    def _search(
        self,
        collection: str,
        vector: Any,
        top_k: int,
        dim: int | None,
        expr: str,
        output_fields: list[str],
    ) -> list[tuple[dict[str, Any], float]]:
        _check_top_k(top_k)
        if not self._has(collection) or dim is None:
            return []
        q = _vector(vector, dim, "query vector")
        name = self.name(collection)
        res = self._call(
            f"searching {name}",
            self._client.search,
            name,
            data=[q],
            limit=int(top_k),
            filter=expr,
            output_fields=output_fields,
            search_params={"metric_type": "COSINE", "params": {"ef": max(64, int(top_k))}},
            **self._read_options(),
        )
        hits = res[0] if res else []
        out = []
        for h in hits:
            entity = dict(h.get("entity") or {})
            entity.setdefault("id", h.get("id"))
            out.append((entity, float(h.get("distance"))))
        out.sort(key=lambda x: -x[1])
        return out

    def search_events(
        self,
        vector: Any,
        top_k: int = 10,
        stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None,
        t_max: float | None = None,
    ) -> list[tuple[ThetaEvent, float]]:
        """Events whose summary embedding is nearest to ``vector``; score = cosine, best first."""
        sids = _stream_list(stream_ids)
        expr = _filter(sids, t_min, t_max)
        if sids == []:
            return []
        self._attach()
        cached = self._cached_hits(EVENTS, vector, top_k, sids, t_min, t_max)
        if cached is not None:
            return [(self._event_from_row(r), s) for r, s in cached]
        hits = self._search(EVENTS, vector, top_k, self._text_dim, expr, ["*"])
        return [(self._event_from_row(r), s) for r, s in hits]

    def search_memories(
        self,
        vector: Any,
        top_k: int = 10,
        stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None,
        t_max: float | None = None,
        with_vectors: bool = False,
    ) -> list[tuple[ShortTermMemory, float]]:
        """Memories whose v_i is nearest to ``vector``; score = cosine, best first."""
        sids = _stream_list(stream_ids)
        expr = _filter(sids, t_min, t_max)
        if sids == []:
            return []
        self._attach()
        cached = self._cached_hits(MEMORIES, vector, top_k, sids, t_min, t_max)
        hits = cached if cached is not None else self._search(
            MEMORIES, vector, top_k, self._text_dim, expr, ["*"]
        )
        out = [(self._memory_from_row(r), s) for r, s in hits]
        if with_vectors and out:
            self._fill_vectors([m for m, _ in out], {r["id"]: r.get("children") for r, _ in hits})
        return out

    def search_vectors(
        self,
        vector: Any,
        top_k: int = 10,
        stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None,
        t_max: float | None = None,
        modality: str | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        """Fine-grained search over E_i. Each hit is a dict with id, memory_id, stream_id,
        t_start, t_end, modality, text and vector (float32); score = cosine, best first."""
        extra = None
        if modality is not None:
            if not isinstance(modality, str) or not _MODALITY.fullmatch(modality):
                raise InputError(f"invalid modality {modality!r}")
            extra = ("modality == {modality}", {"modality": modality})
        sids = _stream_list(stream_ids)
        expr = _filter(sids, t_min, t_max, extra)
        if sids == []:
            return []
        self._attach()
        cached = self._cached_hits(VECTORS, vector, top_k, sids, t_min, t_max, modality)
        hits = cached if cached is not None else self._search(
            VECTORS, vector, top_k, self._text_dim, expr, ["*"]
        )
        for r, _ in hits:
            r["vector"] = _f32(r["vector"])
        return hits

    def search_memory_ids(
        self,
        vector: Any,
        source: str,
        top_k: int = 10,
        stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None,
        t_max: float | None = None,
        modality: str | None = None,
    ) -> list[tuple[str, float]]:
        """(memory id, cosine) of the nearest ``source`` rows ("events": summaries,
        "memories": v_i, "vectors": E_i, optionally of one ``modality``), best first, without
        reading the records: candidate generation needs only which memories to open."""
        if source not in CACHE_COLLECTIONS:
            raise InputError(f"source must be one of {', '.join(CACHE_COLLECTIONS)}, got {source!r}")
        extra = None
        if modality is not None:
            if source != VECTORS or not isinstance(modality, str) or not _MODALITY.fullmatch(modality):
                raise InputError(f"invalid modality {modality!r} for {source}")
            extra = ("modality == {modality}", {"modality": modality})
        sids = _stream_list(stream_ids)
        expr = _filter(sids, t_min, t_max, extra)
        if sids == []:
            return []
        self._attach()
        _check_top_k(top_k)
        cache = self._cache_for(source)
        if cache is not None:
            q = _vector(vector, cache.dim, "query vector")
            return [(mid, sc) for _, mid, sc in cache.search(np.asarray(q, np.float32), int(top_k), sids, t_min, t_max, modality)]
        field = "id" if source == MEMORIES else "memory_id"
        hits = self._search(source, vector, top_k, self._text_dim, expr, [field])
        return [(r[field], sc) for r, sc in hits]

    def search_overviews(
        self,
        vector: Any,
        top_k: int = 10,
        stream_ids: str | Iterable[str] | None = None,
        scope: str | None = None,
    ) -> list[tuple[StreamOverview, float]]:
        """Overviews whose text embedding is nearest to ``vector``; score = cosine, best first.

        Always Milvus, never the vector cache: there is one overview per stream and one per
        stretch (minutes long), so even Milvus Lite's scan of them costs little, and a store
        made before overviews existed simply finds none."""
        sids = _stream_list(stream_ids)
        expr = _filter(sids, None, None, scope_clause(scope_filter(scope)))
        if sids == []:
            return []
        self._attach()
        hits = self._search(OVERVIEWS, vector, top_k, self._text_dim, expr, ["*"])
        return [(self._overview_from_row(r), s) for r, s in hits]

    def _cached_hits(
        self,
        collection: str,
        vector: Any,
        top_k: int,
        sids: list[str] | None,
        t_min: float | None,
        t_max: float | None,
        modality: str | None = None,
    ) -> list[tuple[dict[str, Any], float]] | None:
        """Hits from the vector cache with their rows read by primary key; None without one."""
        cache = self._cache_for(collection)
        if cache is None:
            return None
        _check_top_k(top_k)
        q = _vector(vector, cache.dim, "query vector")
        found = cache.search(np.asarray(q, np.float32), int(top_k), sids, t_min, t_max, modality)
        if not found:
            return []
        rows = {r["id"]: r for r in self._get(collection, [pk for pk, _, _ in found], ["*"])}
        return [(rows[pk], sc) for pk, _, sc in found if pk in rows]

    def search_frames(
        self,
        vector: Any,
        top_k: int = 10,
        stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None,
        t_max: float | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        """Query-by-example over describer frame features. Each hit is a dict with id,
        memory_id, stream_id, t (the frame time) and vector; score = cosine, best first."""
        sids = _stream_list(stream_ids)
        expr = _filter(sids, t_min, t_max)
        if sids == []:
            return []
        self._attach()
        hits = self._search(FRAMES, vector, top_k, self._feature_dim, expr, ["*"])
        out = []
        for r, s in hits:
            out.append(
                (
                    {
                        "id": r["id"],
                        "memory_id": r["memory_id"],
                        "stream_id": r["stream_id"],
                        "t": float(r["t_start"]),
                        "vector": _f32(r["vector"]),
                    },
                    s,
                )
            )
        return out

