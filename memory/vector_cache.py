"""Vectors and their filter fields in numpy, searched exactly (or with an IVF index when large).

Milvus Lite's vector cache and the in-memory store both search through it, so both rank and
filter the same way.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

CACHE_SUBSET_SHARE = 0.25  # a filter keeping fewer rows than this share scores only those
# From this many rows a cache also keeps an IVF index (faiss, which Milvus Lite ships with):
# an exact scan reads the whole matrix per search (300k × 384 floats ≈ 25 ms on one core),
# the index ≈ 24/√n of it. Smaller caches, and filters that keep few rows, stay exact.
ANN_MIN_ROWS = 50_000
ANN_NPROBE = 24


class VectorCache:
    """One collection's vectors and filter fields in numpy, searched exactly (cosine).

    Milvus Lite 3 searches in Python: every search walks every stored row (dedup by sequence
    number, tombstones, filter mask) before its per-segment HNSW index is consulted, about
    1.5 µs per row, so one search over 300k E_i rows takes ≈ 0.45 s whatever the index type.
    A query server keeps this copy instead: a matrix–vector product over unit rows (≈ 10 ms
    for 300k × 384 on one core) with vectorised stream/time/modality masks. It is filled
    once from the store and then kept exact by the writes of this process (Milvus Lite
    allows one process per store, so there are no others); records are still read from
    Milvus by primary key, which Lite looks up directly.
    """

    def __init__(self, dim: int, has_memory_id: bool, has_modality: bool) -> None:
        self.dim = dim
        self.has_memory_id = has_memory_id
        self.has_modality = has_modality
        self.lock = threading.Lock()
        self.n = 0
        self._alloc(1024)
        self.ids: list[str] = []
        self.memory_ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.stream_codes: dict[str, int] = {}
        self.modality_codes: dict[str, int] = {}
        self.ready = True
        self._touched: set[str] | None = None  # while loading: ids written meanwhile
        self._ann: Any = None  # faiss IndexIVFFlat over the live rows (ids = row numbers)

    def start_loading(self) -> None:
        with self.lock:
            self.ready, self._touched = False, set()

    def finish_loading(self) -> None:
        with self.lock:
            self._build_ann()
            self.ready, self._touched = True, None

    def _build_ann(self) -> None:
        """The IVF index over the live rows, for caches of ANN_MIN_ROWS rows or more."""
        live = np.flatnonzero(self.alive[: self.n])
        if live.size < ANN_MIN_ROWS:
            return
        try:
            import faiss
        except ImportError:  # exact search then; slower, never wrong
            return
        nlist = int(math.sqrt(live.size))
        rng = np.random.default_rng(0)
        sample = self.mat[np.sort(rng.choice(live, min(live.size, 40 * nlist), replace=False))]
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(self.dim), self.dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.train(sample)
        index.add_with_ids(self.mat[live], live.astype(np.int64))
        self._ann = index

    def _ann_update(self, changed: list[int], removed: list[int]) -> None:
        if self._ann is None or not (changed or removed):
            return
        gone = np.asarray(sorted(set(changed) | set(removed)), dtype=np.int64)
        self._ann.remove_ids(gone)
        if changed:
            keep = np.asarray(sorted(set(changed)), dtype=np.int64)
            self._ann.add_with_ids(self.mat[keep], keep)

    def _alloc(self, cap: int) -> None:
        old = self.n
        mat = np.zeros((cap, self.dim), dtype=np.float32)
        alive = np.zeros(cap, dtype=bool)
        stream = np.zeros(cap, dtype=np.int32)
        modality = np.zeros(cap, dtype=np.int16)
        t0 = np.zeros(cap, dtype=np.float64)
        t1 = np.zeros(cap, dtype=np.float64)
        if old:
            mat[:old], alive[:old], stream[:old] = self.mat[:old], self.alive[:old], self.stream[:old]
            modality[:old], t0[:old], t1[:old] = self.modality[:old], self.t0[:old], self.t1[:old]
        self.mat, self.alive, self.stream, self.modality, self.t0, self.t1 = mat, alive, stream, modality, t0, t1

    def _code(self, table: dict[str, int], value: str) -> int:
        code = table.get(value)
        if code is None:
            code = table[value] = len(table)
        return code

    def put(self, rows: Sequence[dict[str, Any]], loaded: bool = False) -> None:
        """Insert or replace rows (as written to Milvus: id, stream_id, t_start, t_end,
        vector and, per collection, memory_id / modality). ``loaded``: rows read by the
        initial load, which must not undo a write made while it ran."""
        with self.lock:
            changed: list[int] = []
            for r in rows:
                pk = r["id"]
                if self._touched is not None:
                    if loaded and pk in self._touched:
                        continue
                    if not loaded:
                        self._touched.add(pk)
                i = self.row_of.get(pk)
                if i is None:
                    if self.n == self.mat.shape[0]:
                        self._alloc(self.n * 2)
                    i = self.n
                    self.n += 1
                    self.row_of[pk] = i
                    self.ids.append(pk)
                    self.memory_ids.append("")
                v = np.asarray(r["vector"], dtype=np.float32).reshape(-1)
                norm = float(np.linalg.norm(v))
                self.mat[i] = v / norm if norm > 0 else v
                self.alive[i] = True
                self.stream[i] = self._code(self.stream_codes, r["stream_id"])
                self.t0[i], self.t1[i] = float(r["t_start"]), float(r["t_end"])
                if self.has_memory_id:
                    self.memory_ids[i] = r["memory_id"]
                if self.has_modality:
                    self.modality[i] = self._code(self.modality_codes, r["modality"])
                changed.append(i)
            self._ann_update(changed, [])

    def delete(self, ids: Iterable[str]) -> None:
        with self.lock:
            removed: list[int] = []
            for pk in ids:
                if self._touched is not None:
                    self._touched.add(pk)
                i = self.row_of.get(pk)
                if i is not None:
                    self.alive[i] = False
                    removed.append(i)
            self._ann_update([], removed)

    def search(
        self,
        vector: np.ndarray,
        top_k: int,
        stream_ids: list[str] | None,
        t_min: float | None,
        t_max: float | None,
        modality: str | None = None,
    ) -> list[tuple[str, str, float]]:
        """(id, memory_id, cosine) of the nearest live rows that pass the filter, best first."""
        with self.lock:
            n = self.n
            mask = self._mask(stream_ids, t_min, t_max, modality)
            rows = np.flatnonzero(mask)
            if rows.size == 0:
                return []
            q = np.asarray(vector, dtype=np.float32).reshape(-1)
            norm = float(np.linalg.norm(q))
            q = q / norm if norm > 0 else q
            if self._ann is not None and rows.size >= CACHE_SUBSET_SHARE * n:
                return self._ann_search(q, int(top_k), mask, rows.size == n)
            if rows.size < CACHE_SUBSET_SHARE * n:
                scores = self.mat[rows] @ q
            else:
                scores = self.mat[:n] @ q
                scores = scores[rows]
            k = min(int(top_k), rows.size)
            best = np.argpartition(-scores, k - 1)[:k] if k < rows.size else np.arange(rows.size)
            best = best[np.lexsort((rows[best], -scores[best]))]
            return [self._hit(int(rows[j]), float(scores[j])) for j in best]

    def select(self, stream_ids: list[str] | None, t_min: float | None, t_max: float | None) -> list[str]:
        """Ids of the live rows of the streams overlapping [t_min, t_max] (no vectors)."""
        with self.lock:
            return [self.ids[int(i)] for i in np.flatnonzero(self._mask(stream_ids, t_min, t_max, None))]

    def _mask(
        self, stream_ids: list[str] | None, t_min: float | None, t_max: float | None, modality: str | None
    ) -> np.ndarray:
        n = self.n
        mask = self.alive[:n].copy()
        if stream_ids is not None:
            codes = [self.stream_codes[s] for s in stream_ids if s in self.stream_codes]
            mask &= np.isin(self.stream[:n], np.asarray(codes, dtype=np.int32))
        if t_min is not None:
            mask &= self.t1[:n] >= t_min
        if t_max is not None:
            mask &= self.t0[:n] <= t_max
        if modality is not None:
            code = self.modality_codes.get(modality)
            mask &= False if code is None else self.modality[:n] == code
        return mask

    def _hit(self, i: int, score: float) -> tuple[str, str, float]:
        return (self.ids[i], self.memory_ids[i] if self.has_memory_id else self.ids[i], score)

    def _ann_search(self, q: np.ndarray, top_k: int, mask: np.ndarray, everything: bool) -> list[tuple[str, str, float]]:
        import faiss

        bitmap = None
        if everything:
            params = faiss.SearchParametersIVF(nprobe=ANN_NPROBE)
        else:
            bitmap = np.packbits(mask, bitorder="little")
            params = faiss.SearchParametersIVF(
                nprobe=ANN_NPROBE, sel=faiss.IDSelectorBitmap(mask.size, faiss.swig_ptr(bitmap))
            )
        dist, idx = self._ann.search(q.reshape(1, -1), top_k, params=params)
        del bitmap  # the selector reads it during search only
        hits = [(int(i), float(d)) for i, d in zip(idx[0], dist[0], strict=True) if i >= 0]
        hits.sort(key=lambda h: (-h[1], h[0]))
        return [self._hit(i, d) for i, d in hits]
