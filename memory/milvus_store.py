"""The memory store on Milvus: Milvus Lite (a local directory) or a Milvus server, one code path.

Layout (all names carry ``settings.collection_prefix``); every record collection has
``stream_id`` (VARCHAR, INVERTED index where the server has it), ``t_start`` and ``t_end``
(DOUBLE) so every query and search can be restricted to streams and a time window:

========== ============================================ =========================
collection rows                                          vector (COSINE, HNSW)
========== ============================================ =========================
events     ThetaEvents                                   summary embedding, text_dim
memories   ShortTermMemories (text, JSON details)        v_i, text_dim
vectors    E_i: one row per key frame / audio window     the entry, text_dim
frames     describer features per key frame              the feature, feature_dim
overviews  StreamOverviews: a stream's, each stretch's   the text embedding, text_dim
streams    StreamInfo                                    2-d placeholder
meta       schema version, dimensions, model ids         2-d placeholder
========== ============================================ =========================

Exactly one vector field per collection, so the same code runs on Milvus Lite, a Milvus 2.3
server and current clusters (checked against Milvus Lite 3.2.2, `milvus-lite server` and the
Milvus 2.3.5 standalone server; 2.3 has no INVERTED index, so VARCHAR gets its Trie index
there). A memory row lists the ids of its ``vectors``/``frames`` rows (``children``), so
re-upserts and reads of E_i go by primary key instead of scanning by memory id.

**Filters** are rendered from code-owned templates with validated values only
(:mod:`memory.milvus_filters`); pymilvus's own ``get(ids=...)``/``delete(ids=...)`` paste ids
unescaped, so they are not used.

**Durability.** Milvus Lite appends every write to a WAL and pushes it to the OS before the
call returns, so records survive the process being killed without :meth:`MilvusStore.flush`
(the tests check this with SIGKILL). ``flush()`` seals segments; call it at the end of a run.

**Speed on Milvus Lite.** Unflushed rows are searched by a Python scan (≈ 60 µs per row
per search) and Lite flushes by itself only at 128 MB, so the store flushes a collection
after every 1024 rows written to it (Lite only; servers index growing segments and
rate-limit flushes). Searches over 10k events then take ≈ 20 ms once flushed.
"""

from __future__ import annotations

import logging
import re
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from episodic.config import Settings
from episodic.core.errors import ConfigError, InputError, StoreError
from episodic.core.records import (
    EmbeddingEntry,
    ShortTermMemory,
    StreamInfo,
    StreamOverview,
    ThetaEvent,
)
from episodic.memory.milvus_codecs import (
    PLACEHOLDER_VECTOR,
    SOURCE_MAX_BYTES,
    T,
    _check_limit,
    _chunks,
    _f32,
    _json_field,
    _truncate_utf8,
)
from episodic.memory.milvus_connection import MilvusConnection
from episodic.memory.milvus_deletion import MilvusDeletion
from episodic.memory.milvus_filters import build_filter as _filter
from episodic.memory.milvus_filters import check_id as _check_id
from episodic.memory.milvus_filters import check_stream as _check_stream
from episodic.memory.milvus_filters import check_time as _check_time
from episodic.memory.milvus_filters import overview_order, render_filter, scope_clause, scope_filter
from episodic.memory.milvus_filters import stream_list as _stream_list
from episodic.memory.milvus_lite import (
    CACHE_LISTING_MAX,
    _release_lite,
)
from episodic.memory.milvus_rows import MilvusRows, checked_overviews
from episodic.memory.milvus_schema import (
    ALL_COLLECTIONS,
    EVENT_FIELDS,
    EVENTS,
    FRAMES,
    MEMORIES,
    OVERVIEW_FIELDS,
    OVERVIEWS,
    STREAMS,
    VECTORS,
    MilvusSchema,
)
from episodic.memory.milvus_search import MilvusSearch

log = logging.getLogger(__name__)

AUTO_FLUSH_ROWS = 1024  # Milvus Lite only, see MilvusStore._wrote
STRONG_AFTER_DELETE_S = 2.0  # Milvus servers: see MilvusStore._deleted
QUERY_PAGE = 16384  # Milvus caps offset+limit of one query (and top_k of a search) here

_PREFIX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")
_SERVER_SCHEMES = ("http://", "https://", "tcp://", "grpc://", "unix:")


# -- the store -----------------------------------------------------------------------------
class MilvusStore(MilvusConnection, MilvusSchema, MilvusRows, MilvusSearch, MilvusDeletion):
    """MemoryStore over ``pymilvus.MilvusClient``: every Milvus failure becomes a StoreError."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        prefix = settings.collection_prefix
        if not _PREFIX.fullmatch(prefix):
            raise ConfigError(
                f"collection_prefix {prefix!r} must start with a letter or _ and contain only "
                "letters, digits and _"
            )
        self._names = {c: prefix + c for c in ALL_COLLECTIONS}
        self.uri = settings.resolved_milvus_uri
        self.is_lite = not self.uri.startswith(_SERVER_SCHEMES)
        self._lite_path: str | None = None
        self._readonly_copy: str | None = None  # a temporary copy of a read-only store
        self._text_dim: int | None = None
        self._feature_dim: int | None = None
        self._meta: dict[str, Any] | None = None
        self._attached = False
        self._collections: set[str] = set()  # record kinds known to exist (after attach)
        self._unflushed: dict[str, int] = {}  # rows written since the last flush (Lite)
        self._strong_reads_until = 0.0  # monotonic time; see _deleted
        self._client: Any = None
        self._client = self._connect()
        self.server_version = self._server_version()
        # Milvus Lite, in-process or as `milvus-lite server`: see _wrote.
        self._auto_flush = self.is_lite or self.server_version.startswith("milvus_lite")

    def _call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run one client call; expected failures come back as StoreError with the URI."""
        from pymilvus.exceptions import MilvusException

        if self._client is None:
            raise StoreError(f"the store at {self.uri} is closed")
        try:
            return fn(*args, **kwargs)
        except MilvusException as exc:
            raise StoreError(
                f"Milvus at {self.uri}: {what} failed: {getattr(exc, 'message', exc)}"
            ) from None
        except (ConnectionError, TimeoutError, OSError) as exc:
            raise StoreError(f"Milvus at {self.uri}: {what} failed: {exc}") from None
        except Exception as exc:
            if type(exc).__module__.startswith("grpc"):
                raise StoreError(f"Milvus at {self.uri}: {what} failed: {exc}") from None
            raise

    def name(self, collection: str) -> str:
        """The full collection name for ``events``, ``memories``, ... (with the prefix)."""
        return self._names[collection]

    # -- low-level I/O ---------------------------------------------------------------------
    def _upsert(self, collection: str, rows: list[dict[str, Any]]) -> None:
        name = self.name(collection)
        for chunk in _chunks(rows):
            self._call(f"writing to {name}", self._client.upsert, name, list(chunk))
        cache = self._registered_cache(collection)
        if cache is not None:
            cache.put(rows)
        self._wrote(collection, len(rows))

    def _wrote(self, collection: str, n: int) -> None:
        """Milvus Lite searches unflushed rows by a Python scan (≈ 60 µs per row per search)
        and only flushes by itself at 128 MB; flushing every AUTO_FLUSH_ROWS rows keeps live
        searches fast. Servers index growing segments themselves and rate-limit flushes."""
        if not self._auto_flush or n <= 0:
            return
        pending = self._unflushed.get(collection, 0) + n
        if pending >= AUTO_FLUSH_ROWS:
            name = self.name(collection)
            self._call(f"flushing {name}", self._client.flush, name)
            pending = 0
        self._unflushed[collection] = pending

    def _delete_ids(self, collection: str, ids: Sequence[str]) -> int:
        name = self.name(collection)
        n = 0
        for chunk in _chunks(list(ids)):
            self._call(
                f"deleting from {name}",
                self._client.delete,
                name,
                filter=render_filter("id in {ids}", ids=list(chunk)),
            )
            n += len(chunk)
        cache = self._registered_cache(collection)
        if cache is not None:
            cache.delete(ids)
        self._wrote(collection, n)
        self._deleted()
        return n

    def _deleted(self) -> None:
        # pymilvus's Session consistency tracks this client's inserts and upserts, not its
        # deletes: read Strong for a moment so this process never sees what it just deleted
        self._strong_reads_until = time.monotonic() + STRONG_AFTER_DELETE_S

    def _read_options(self, strong: bool = False) -> dict[str, Any]:
        """The consistency of a read on a Milvus server (Lite has one process: nothing to say).

        ``Strong`` makes every read wait for the server's next time tick (≈ 0.2–0.4 s per
        call on Milvus 2.3, measured), so ordinary reads use ``milvus_read_consistency``
        (Session: this client's own writes at once, other processes' within a tick or so);
        the reads a worker resumes from (checkpoints) ask for Strong."""
        if self.is_lite:
            return {}
        strong = strong or time.monotonic() < self._strong_reads_until
        return {"consistency_level": "Strong" if strong else self.settings.milvus_read_consistency}

    def _query(
        self, collection: str, filter: str, output_fields: list[str], strong: bool = False
    ) -> list[dict[str, Any]]:
        """All rows matching ``filter`` (one call up to 16384 rows, an iterator beyond)."""
        if not self._has(collection):
            return []
        name = self.name(collection)
        expr = filter
        rows = self._call(
            f"reading {name}",
            self._client.query,
            name,
            filter=expr,
            output_fields=output_fields,
            limit=QUERY_PAGE,
            **self._read_options(strong),
        )
        if len(rows) < QUERY_PAGE:
            return list(rows)
        out: list[dict[str, Any]] = []
        it = self._call(
            f"reading {name}",
            self._client.query_iterator,
            name,
            batch_size=4096,
            filter=expr,
            output_fields=output_fields,
            **self._read_options(strong),
        )
        try:
            while True:
                batch = self._call(f"reading {name}", it.next)
                if not batch:
                    break
                out.extend(batch)
        finally:
            it.close()
        return out

    def _get(
        self, collection: str, ids: Sequence[str], output_fields: list[str], strong: bool = False
    ) -> list[dict[str, Any]]:
        """Rows by primary key, 512 per call (``pk in [...]`` is a direct lookup)."""
        pk = "stream_id" if collection == STREAMS else "id"
        return self._query_in(collection, pk, ids, output_fields, strong)

    def _query_in(
        self, collection: str, field: str, values: Sequence[str], output_fields: list[str],
        strong: bool = False,
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for chunk in _chunks(sorted(set(values))):
            if not chunk:
                continue
            out.extend(
                self._query(
                    collection,
                    render_filter(f"{field} in {{vals}}", vals=list(chunk)),
                    output_fields,
                    strong,
                )
            )
        return out

    # -- writes ----------------------------------------------------------------------------
    def upsert_memories(self, memories: Sequence[ShortTermMemory]) -> None:
        """Write memories with their E_i and frame features; a re-upsert replaces them exactly
        (rows of E_i/frames that the new version no longer has are deleted).

        Children are written before the memory row that lists them, so a memory that can be
        read always has its E_i; rows orphaned by a crash in between are removed by the next
        upsert of that memory or by delete_stream_records_except.
        """
        if not memories:
            return
        self._require_writable()
        if len({m.id for m in memories}) != len(memories):
            raise InputError("upsert_memories got the same memory id twice in one batch")
        mem_rows = [self._memory_row(m) for m in memories]
        vec_rows: list[dict[str, Any]] = []
        frame_rows: list[dict[str, Any]] = []
        for m, row in zip(memories, mem_rows, strict=True):
            vecs, frames = self._embedding_rows(m), self._frame_rows(m)
            row["children"] = {"vectors": [r["id"] for r in vecs], "frames": [r["id"] for r in frames]}
            vec_rows.extend(vecs)
            frame_rows.extend(frames)
        previous = self._get(MEMORIES, [m.id for m in memories], ["id", "children"])
        self._upsert(VECTORS, vec_rows)
        self._upsert(FRAMES, frame_rows)
        self._upsert(MEMORIES, mem_rows)
        for collection, rows, key in ((VECTORS, vec_rows, "vectors"), (FRAMES, frame_rows, "frames")):
            fresh = {r["id"] for r in rows}
            stale = {i for p in previous for i in (p.get("children") or {}).get(key, [])} - fresh
            if stale:
                self._delete_ids(collection, sorted(stale))

    def upsert_events(self, events: Sequence[ThetaEvent]) -> None:
        if not events:
            return
        self._require_writable()
        self._upsert(EVENTS, [self._event_row(e) for e in events])

    def upsert_overviews(self, overviews: Sequence[StreamOverview]) -> None:
        """Write overviews; a re-upsert (same id) replaces the previous version. A store made
        before overviews existed needs ensure_schema first (StoreError saying so)."""
        if not overviews:
            return
        self._require_writable()
        assert self._text_dim is not None
        rows = [self._overview_row(o) for o in checked_overviews(overviews, self._text_dim)]
        self._require_collection(OVERVIEWS)
        self._upsert(OVERVIEWS, rows)

    def upsert_stream(self, info: StreamInfo) -> None:
        self._require_writable()
        sid = _check_stream(info.stream_id)
        self._upsert(
            STREAMS,
            [
                {
                    "stream_id": sid,
                    "source": _truncate_utf8(str(info.source), SOURCE_MAX_BYTES),
                    "t_start": 0.0,
                    "t_end": _check_time(info.t_end, "t_end"),
                    "memories": int(info.memories),
                    "events": int(info.events),
                    "updated_at": _check_time(info.updated_at, "updated_at"),
                    "metadata": _json_field(dict(info.metadata), sid, "metadata"),
                    "vector": PLACEHOLDER_VECTOR,
                }
            ],
        )

    # -- reads -----------------------------------------------------------------------------
    def list_events(
        self,
        stream_id: str | None = None,
        t_min: float | None = None,
        t_max: float | None = None,
        limit: int = 10000,
        with_vectors: bool = True,
    ) -> list[ThetaEvent]:
        """Events overlapping [t_min, t_max], sorted by (stream_id, t_start).

        ``with_vectors=False`` leaves ``summary_vector`` and ``vector`` empty: listings for
        people read about half as much (10k events: ≈ 2 s instead of ≈ 4 s on Milvus Lite).
        """
        limit = _check_limit(limit)
        sids = _stream_list(stream_id)
        expr = _filter(sids, t_min, t_max)
        fields = ["*"] if with_vectors else [f for f in EVENT_FIELDS if f not in ("vector", "memory_vector")]
        rows = self._cached_listing(EVENTS, sids, t_min, t_max, fields)
        if rows is None:
            rows = self._query(EVENTS, expr, fields)
        rows.sort(key=lambda r: (r["stream_id"], r["t_start"], r["id"]))
        return [self._event_from_row(r) for r in rows[:limit]]

    def list_memories(
        self,
        stream_id: str | None = None,
        t_min: float | None = None,
        t_max: float | None = None,
        limit: int = 10000,
        with_vectors: bool = False,
    ) -> list[ShortTermMemory]:
        """Memories overlapping [t_min, t_max], sorted by (stream_id, t_start); with
        ``with_vectors`` also E_i and the frame features (one more query per 512 memories)."""
        limit = _check_limit(limit)
        sids = _stream_list(stream_id)
        expr = _filter(sids, t_min, t_max)
        rows = self._cached_listing(MEMORIES, sids, t_min, t_max, ["*"])
        if rows is None:
            rows = self._query(MEMORIES, expr, ["*"])
        rows.sort(key=lambda r: (r["stream_id"], r["t_start"], r["id"]))
        rows = rows[:limit]
        memories = [self._memory_from_row(r) for r in rows]
        if with_vectors:
            self._fill_vectors(memories, {r["id"]: r.get("children") for r in rows})
        return memories

    def list_overviews(
        self,
        stream_id: str | Iterable[str] | None = None,
        scope: str | None = None,
        limit: int = 10000,
        with_vectors: bool = False,
    ) -> list[StreamOverview]:
        """Overviews sorted by (stream_id, the stream-wide one first, t_start); ``scope``
        keeps one kind. Without ``with_vectors`` the vector is empty (not read)."""
        limit, sids, scope = _check_limit(limit), _stream_list(stream_id), scope_filter(scope)
        if sids == []:
            return []
        expr = _filter(sids, None, None, scope_clause(scope))
        fields = ["*"] if with_vectors else [f for f in OVERVIEW_FIELDS if f != "vector"]
        found = [self._overview_from_row(r) for r in self._query(OVERVIEWS, expr, fields)]
        found.sort(key=overview_order)
        return found[:limit]

    def _cached_listing(
        self, collection: str, sids: list[str] | None, t_min: float | None, t_max: float | None, fields: list[str]
    ) -> list[dict[str, Any]] | None:
        """Rows of a small time window found through the vector cache and read by primary key
        (Milvus Lite evaluates a filter over every row: ≈ 0.5 s per window at 100k memories).
        None without a cache, or for listings too large to read by key."""
        cache = self._cache_for(collection)
        if cache is None:
            return None
        if sids == []:
            return []
        ids = cache.select(sids, t_min, t_max)
        if len(ids) > CACHE_LISTING_MAX:
            return None
        return self._get(collection, ids, fields)

    def _fill_vectors(self, memories: list[ShortTermMemory], children: dict[str, Any]) -> None:
        """Attach E_i and frame features, read by the ids each memory row lists."""
        vec_ids = [i for m in memories for i in (children.get(m.id) or {}).get("vectors", [])]
        frame_ids = [i for m in memories for i in (children.get(m.id) or {}).get("frames", [])]
        entries: dict[str, list[tuple[int, EmbeddingEntry]]] = {}
        for r in self._get(VECTORS, vec_ids, ["*"]):
            entries.setdefault(r["memory_id"], []).append(
                (
                    int(r["ord"]),
                    EmbeddingEntry(
                        float(r["t_start"]), float(r["t_end"]), r["modality"], r["text"], _f32(r["vector"])
                    ),
                )
            )
        feats: dict[str, list[tuple[int, float, np.ndarray]]] = {}
        for r in self._get(FRAMES, frame_ids, ["*"]):
            feats.setdefault(r["memory_id"], []).append((int(r["ord"]), float(r["t_start"]), _f32(r["vector"])))
        for m in memories:
            m.embeddings = [e for _, e in sorted(entries.get(m.id, []), key=lambda x: x[0])]
            m.frame_features = [(t, v) for _, t, v in sorted(feats.get(m.id, []), key=lambda x: x[0])]

    def get_memory(self, memory_id: str, with_vectors: bool = True) -> ShortTermMemory | None:
        rows = self._get(MEMORIES, [_check_id(memory_id, "memory id")], ["*"])
        if not rows:
            return None
        m = self._memory_from_row(rows[0])
        if with_vectors:
            self._fill_vectors([m], {m.id: rows[0].get("children")})
        return m

    def get_memories(
        self, memory_ids: Iterable[str], with_vectors: bool = True
    ) -> dict[str, ShortTermMemory]:
        """Memories by id in one read (512 ids per call), with ``with_vectors`` their E_i and
        frame features in one more read each: the query side opens a few dozen memories per
        request, and one round trip per memory cost more than the searches themselves.
        Ids that are not stored are simply absent from the result."""
        ids = sorted({_check_id(i, "memory id") for i in memory_ids})
        if not ids:
            return {}
        rows = self._get(MEMORIES, ids, ["*"])
        memories = [self._memory_from_row(r) for r in rows]
        if with_vectors and memories:
            self._fill_vectors(memories, {r["id"]: r.get("children") for r in rows})
        return {m.id: m for m in memories}

    def get_events(self, event_ids: Iterable[str]) -> dict[str, ThetaEvent]:
        """Events by id in one read (512 ids per call); ids not stored are absent."""
        ids = sorted({_check_id(i, "event id") for i in event_ids})
        if not ids:
            return {}
        return {r["id"]: self._event_from_row(r) for r in self._get(EVENTS, ids, ["*"])}

    def get_event(self, event_id: str) -> ThetaEvent | None:
        rows = self._get(EVENTS, [_check_id(event_id, "event id")], ["*"])
        return self._event_from_row(rows[0]) if rows else None

    def get_stream(self, stream_id: str) -> StreamInfo | None:
        """The stream's record; read Strong, because a worker resumes from the checkpoint in
        it, possibly written by another worker a moment before a rebalance."""
        rows = self._get(STREAMS, [_check_stream(stream_id)], ["*"], strong=True)
        return self._stream_from_row(rows[0]) if rows else None

    def list_streams(self) -> list[StreamInfo]:
        rows = self._query(STREAMS, "", ["*"])
        return sorted((self._stream_from_row(r) for r in rows), key=lambda s: s.stream_id)

    def counts(self, stream_id: str | None = None) -> dict[str, int]:
        """Rows per collection (for status displays and tests); of one stream with
        ``stream_id`` (its storage use, without the store-wide ``meta``)."""
        out: dict[str, int] = {}
        where = "" if stream_id is None else render_filter("stream_id == {sid}", sid=_check_stream(stream_id))
        for collection in ALL_COLLECTIONS:
            if stream_id is not None and collection not in (EVENTS, MEMORIES, VECTORS, FRAMES, OVERVIEWS, STREAMS):
                continue
            if not self._has(collection):
                out[collection] = 0
                continue
            rows = self._call(
                "counting",
                self._client.query,
                self.name(collection),
                filter=where,
                output_fields=["count(*)"],
                **self._read_options(),
            )
            out[collection] = int(rows[0]["count(*)"]) if rows else 0
        return out

    def describe(self) -> str:
        kind = "Milvus Lite" if self.is_lite else "Milvus server"
        return f"{kind} {self.server_version or 'unknown'} at {self.uri}"

    # -- lifecycle -------------------------------------------------------------------------
    def flush(self) -> None:
        """Seal written data into segments (end of a run, Milvus Lite); not needed for crash
        safety. A server persists every acknowledged write by itself and rate-limits flushes
        (3–5 s each on Milvus 2.3), so there this does nothing."""
        if self._client is None or not self._auto_flush:
            return
        for collection in ALL_COLLECTIONS:
            name = self.name(collection)
            if self._call("has_collection", self._client.has_collection, name):
                self._call(f"flushing {name}", self._client.flush, name)
        self._unflushed.clear()

    def close(self) -> None:
        """Close the client; for Milvus Lite also stop this process's server for the file
        once no other store in the process uses it, which releases the directory lock."""
        client, self._client = self._client, None
        if client is None:
            return
        try:
            client.close()
        except Exception as exc:  # closing must not mask the error that led here
            log.debug("closing the Milvus client failed: %s", exc)
        if self._lite_path is not None:
            _release_lite(self._lite_path)
        if self._readonly_copy is not None:
            shutil.rmtree(self._readonly_copy, ignore_errors=True)
            self._readonly_copy = None

    def __enter__(self) -> MilvusStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
