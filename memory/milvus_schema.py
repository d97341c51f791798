"""The Milvus collections: their layout, creation (safe against another process creating
them at the same moment), indexes, and the meta record that names the models and dimensions.
A mixin of :class:`~episodic.memory.milvus_store.MilvusStore` (it uses the store's connection)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

from episodic.core.errors import StoreError
from episodic.memory.milvus_codecs import (
    ID_MAX,
    MODALITY_MAX,
    PLACEHOLDER_DIM,
    PLACEHOLDER_VECTOR,
    SCOPE_MAX,
    SOURCE_MAX_BYTES,
    STREAM_ID_MAX,
    SUMMARY_MAX_BYTES,
    TEXT_MAX_BYTES,
    _check_dim,
    _jsonable,
    _reraise,
)
from episodic.memory.milvus_filters import render_filter

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
CREATE_RACE_WAIT_S = 10.0  # how long a collection another process is creating may take to appear
# Model roles whose change makes stored vectors incomparable with new ones; other roles
# (asr, llm) are informational and simply updated in the meta record.
VECTOR_MODEL_ROLES = ("embedder", "describer")

EVENTS, MEMORIES, VECTORS, FRAMES, OVERVIEWS, STREAMS, META = (
    "events",
    "memories",
    "vectors",
    "frames",
    "overviews",
    "streams",
    "meta",
)
# Stores made before a collection existed lack it (overviews: before issue 16); ensure_schema
# creates what is missing, and readers of such a store find that collection empty.
ALL_COLLECTIONS = (EVENTS, MEMORIES, VECTORS, FRAMES, OVERVIEWS, STREAMS, META)
EVENT_FIELDS = (
    "id", "stream_id", "t_start", "t_end", "memory_id", "summary", "memory_vector",
    "visual_context", "audio_context", "metadata", "vector",
)
OVERVIEW_FIELDS = (
    "id", "stream_id", "t_start", "t_end", "scope", "text", "facets", "events", "updated_at",
    "vector",
)
TEXT_DIM_COLLECTIONS = (EVENTS, MEMORIES, VECTORS, OVERVIEWS)


class MilvusSchema:
    # -- schema ----------------------------------------------------------------------------
    def _schema(self, collection: str, text_dim: int, feature_dim: int) -> Any:
        from pymilvus import DataType, MilvusClient

        s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        if collection == META:
            s.add_field("key", DataType.VARCHAR, is_primary=True, max_length=64)
            s.add_field("value", DataType.JSON)
            s.add_field("vector", DataType.FLOAT_VECTOR, dim=PLACEHOLDER_DIM)
            return s
        if collection == STREAMS:
            s.add_field("stream_id", DataType.VARCHAR, is_primary=True, max_length=STREAM_ID_MAX)
        else:
            s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX)
            s.add_field("stream_id", DataType.VARCHAR, max_length=STREAM_ID_MAX)
        s.add_field("t_start", DataType.DOUBLE)
        s.add_field("t_end", DataType.DOUBLE)
        if collection == EVENTS:
            s.add_field("memory_id", DataType.VARCHAR, max_length=ID_MAX)
            s.add_field("summary", DataType.VARCHAR, max_length=SUMMARY_MAX_BYTES)
            # v_k (shared with the memory) as base64 float32: a second vector field would
            # not run on Milvus 2.3, and base64 keeps it exact.
            s.add_field("memory_vector", DataType.VARCHAR, max_length=4 * text_dim * 4 // 3 + 16)
            s.add_field("visual_context", DataType.JSON)
            s.add_field("audio_context", DataType.JSON)
            s.add_field("metadata", DataType.JSON)
            s.add_field("vector", DataType.FLOAT_VECTOR, dim=text_dim)
        elif collection == MEMORIES:
            s.add_field("transcript_text", DataType.VARCHAR, max_length=TEXT_MAX_BYTES)
            s.add_field("visual_text", DataType.VARCHAR, max_length=TEXT_MAX_BYTES)
            s.add_field("ocr_text", DataType.VARCHAR, max_length=TEXT_MAX_BYTES)
            s.add_field("transcript", DataType.JSON)
            s.add_field("frames", DataType.JSON)
            s.add_field("snippets", DataType.JSON)
            s.add_field("metadata", DataType.JSON)
            # ids of this memory's rows in `vectors` and `frames`: re-upserts and reads
            # then go by primary key (fast everywhere) instead of scanning by memory_id.
            s.add_field("children", DataType.JSON)
            s.add_field("vector", DataType.FLOAT_VECTOR, dim=text_dim)
        elif collection == VECTORS:
            s.add_field("memory_id", DataType.VARCHAR, max_length=ID_MAX)
            s.add_field("ord", DataType.INT64)
            s.add_field("modality", DataType.VARCHAR, max_length=MODALITY_MAX)
            s.add_field("text", DataType.VARCHAR, max_length=TEXT_MAX_BYTES)
            s.add_field("vector", DataType.FLOAT_VECTOR, dim=text_dim)
        elif collection == FRAMES:
            s.add_field("memory_id", DataType.VARCHAR, max_length=ID_MAX)
            s.add_field("ord", DataType.INT64)
            s.add_field("vector", DataType.FLOAT_VECTOR, dim=feature_dim)
        elif collection == OVERVIEWS:
            s.add_field("scope", DataType.VARCHAR, max_length=SCOPE_MAX)
            s.add_field("text", DataType.VARCHAR, max_length=SUMMARY_MAX_BYTES)
            s.add_field("facets", DataType.JSON)
            s.add_field("events", DataType.INT64)
            s.add_field("updated_at", DataType.DOUBLE)
            s.add_field("vector", DataType.FLOAT_VECTOR, dim=text_dim)
        elif collection == STREAMS:
            s.add_field("source", DataType.VARCHAR, max_length=SOURCE_MAX_BYTES)
            s.add_field("memories", DataType.INT64)
            s.add_field("events", DataType.INT64)
            s.add_field("updated_at", DataType.DOUBLE)
            s.add_field("metadata", DataType.JSON)
            s.add_field("vector", DataType.FLOAT_VECTOR, dim=PLACEHOLDER_DIM)
        return s

    def _create(self, collection: str, text_dim: int, feature_dim: int) -> None:
        """Create one collection with its indexes and load it (idempotent after a crash)."""
        name = self.name(collection)
        c = self._client
        if not self._call("has_collection", c.has_collection, name):
            self._unless_exists(
                f"creating {name}",
                lambda: c.has_collection(name),
                c.create_collection,
                name,
                schema=self._schema(collection, text_dim, feature_dim),
                consistency_level="Strong",  # read-your-writes on servers too
            )
        self._ensure_indexes(collection)
        self._call(f"loading {name}", c.load_collection, name)
        self._collections.add(collection)

    def _unless_exists(
        self, what: str, exists: Callable[[], bool], fn: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> None:
        """A create call that another process may be making at the same moment (several
        workers, or a worker and a query server, starting together on one server). When it
        fails, ``exists()`` decides: made by the other process (it may take a moment to
        appear) is success; otherwise the failure stands."""
        from pymilvus.exceptions import MilvusException

        try:
            fn(*args, **kwargs)
            return
        except MilvusException as exc:
            failure = exc
        deadline = time.monotonic() + CREATE_RACE_WAIT_S
        while True:
            try:
                if exists():
                    log.debug("%s: done by another process", what)
                    return
            except MilvusException:
                pass
            if time.monotonic() >= deadline:
                self._call(what, _reraise, failure)
            time.sleep(0.2)

    def _ensure_indexes(self, collection: str) -> None:
        from pymilvus.exceptions import MilvusException

        name = self.name(collection)
        c = self._client
        existing = set(self._call("list_indexes", c.list_indexes, name) or [])
        if "vector" not in existing and not any("vector" in i for i in existing):
            params = c.prepare_index_params()
            if collection in (STREAMS, META):
                params.add_index(field_name="vector", index_type="FLAT", metric_type="COSINE")
            else:
                params.add_index(
                    field_name="vector",
                    index_type="HNSW",
                    metric_type="COSINE",
                    params={"M": 16, "efConstruction": 200},
                )
            # sync=False: pymilvus otherwise polls every 0.5 s per index; the collection is
            # empty here, and load_collection waits for the index anyway.
            self._unless_exists(
                f"indexing {name}",
                lambda: any("vector" in i for i in c.list_indexes(name) or []),
                c.create_index, name, params, sync=False,
            )
        if collection not in (STREAMS, META) and not any("stream_id" in i for i in existing):
            params = c.prepare_index_params()
            params.add_index(
                field_name="stream_id", index_type=self._varchar_index_type(), index_name="stream_id"
            )
            try:
                c.create_index(name, params, sync=False)
            except MilvusException as exc:
                # An unknown server that takes neither: stream filters still work, unindexed.
                log.info("no scalar index on %s.stream_id: %s", name, exc)

    def _server_version(self) -> str:
        """"milvus_lite-3.2.2", "v2.3.5", ...; "" if the server does not say."""
        try:
            return str(self._call("asking the server version", self._client.get_server_version))
        except StoreError:
            return ""

    def _varchar_index_type(self) -> str:
        """INVERTED (Milvus Lite, Milvus >= 2.4); Milvus 2.3 only indexes VARCHAR as Trie."""
        m = re.match(r"v?(\d+)\.(\d+)", self.server_version)
        if m and (int(m.group(1)), int(m.group(2))) < (2, 4):
            return "Trie"
        return "INVERTED"

    def _existing_dims(self) -> dict[str, int]:
        """Vector dimension of each record collection that exists (the ground truth); a
        collection the store does not have yet is simply absent, and created later."""
        dims: dict[str, int] = {}
        c = self._client
        for collection in (*TEXT_DIM_COLLECTIONS, FRAMES):
            name = self.name(collection)
            if not self._call("has_collection", c.has_collection, name):
                continue
            desc = self._call("describe_collection", c.describe_collection, name)
            for f in desc.get("fields", []):
                if f.get("name") == "vector":
                    dims[collection] = int(f.get("params", {}).get("dim", 0))
        return dims

    def _read_meta(self) -> dict[str, Any] | None:
        c = self._client
        name = self.name(META)
        if not self._call("has_collection", c.has_collection, name):
            return None
        self._call(f"loading {name}", c.load_collection, name)
        rows = self._call(
            "reading the schema record",
            c.query,
            name,
            filter=render_filter("key == {k}", k="schema"),
            output_fields=["value"],
            limit=1,
        )
        return dict(rows[0]["value"]) if rows else None

    def _write_meta(self, meta: dict[str, Any]) -> None:
        self._call(
            "writing the schema record",
            self._client.upsert,
            self.name(META),
            [{"key": "schema", "value": _jsonable(meta), "vector": PLACEHOLDER_VECTOR}],
        )

    def schema_info(self) -> dict[str, Any] | None:
        """What the store was built with: ``schema_version``, ``text_dim``, ``feature_dim``,
        ``models`` (role → model id), or None for an empty store. The query side uses it to
        pick (or check) the embedder before searching."""
        self._attach()
        return dict(self._meta) if self._meta else None

    def ensure_schema(
        self, text_dim: int, feature_dim: int, models: dict[str, str] | None = None
    ) -> None:
        """Create what is missing and refuse a store built for other vectors.

        Dimensions are checked against the collections themselves (not only the meta
        record), so a store from before the meta record, or a half-created one, is judged by
        what it really holds.
        """
        text_dim, feature_dim = _check_dim(text_dim, "text_dim"), _check_dim(feature_dim, "feature_dim")
        models = {str(k): str(v) for k, v in (models or {}).items()}
        meta = self._read_meta() or {}
        old_models: dict[str, str] = dict(meta.get("models") or {})
        dims = self._existing_dims()
        where = f"store at {self.uri}" + (
            f" (collection prefix {self.settings.collection_prefix!r})" if not self.is_lite else ""
        )
        version = meta.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"{where} has schema version {version}; this episodic reads version "
                f"{SCHEMA_VERSION}: use a matching episodic or another --data directory"
            )
        for collection, dim in dims.items():
            want = feature_dim if collection == FRAMES else text_dim
            if dim != want:
                role = "describer" if collection == FRAMES else "embedder"
                model = old_models.get(role) or "model not recorded"
                kind = "frame features" if collection == FRAMES else "vectors"
                new_model = models.get(role)
                raise StoreError(
                    f"{where} was built with {dim}-d {kind} ({model}); the configured {role}"
                    + (f" ({new_model})" if new_model else "")
                    + f" gives {want}-d: use another --data directory or collection_prefix"
                )
        for role in VECTOR_MODEL_ROLES:
            old, new = old_models.get(role), models.get(role)
            if old and new and old != new:
                raise StoreError(
                    f"{where} was built with the {role} {old}; the configured {role} is {new}, "
                    "whose vectors are not comparable: use another --data directory or "
                    "collection_prefix (or configure the original model)"
                )
        for collection in ALL_COLLECTIONS:
            self._create(collection, text_dim, feature_dim)
        new_meta = {
            "schema_version": SCHEMA_VERSION,
            "text_dim": text_dim,
            "feature_dim": feature_dim,
            "models": {**old_models, **models},
            "created_at": meta.get("created_at", time.time()),
        }
        if new_meta != meta:
            self._write_meta(new_meta)
        self._meta = new_meta
        self._text_dim, self._feature_dim = text_dim, feature_dim
        self._attached = True

    def _attach(self) -> bool:
        """Load an existing store without creating anything (readers such as `episodic
        events` must not need the models). False when the store has no collections yet."""
        if self._attached:
            return True
        meta = self._read_meta()
        dims = self._existing_dims()
        if not dims and not meta:
            return False
        c = self._client
        for collection in ALL_COLLECTIONS:
            name = self.name(collection)
            if self._call("has_collection", c.has_collection, name):
                self._ensure_indexes(collection)
                self._call(f"loading {name}", c.load_collection, name)
                self._collections.add(collection)
        self._meta = meta
        self._text_dim = (meta or {}).get("text_dim") or dims.get(EVENTS) or dims.get(MEMORIES)
        self._feature_dim = (meta or {}).get("feature_dim") or dims.get(FRAMES)
        self._attached = True
        return True

    def _require_writable(self) -> None:
        if not self._attach() or self._text_dim is None:
            raise StoreError(f"the store at {self.uri} has no schema yet: call ensure_schema first")

    def _has(self, collection: str) -> bool:
        return self._attach() and collection in self._collections

    def _require_collection(self, collection: str) -> None:
        """Writes to a collection that an older store lacks need ensure_schema to create it
        (a reader must never create collections, so attaching does not)."""
        if not self._has(collection):
            raise StoreError(
                f"the store at {self.uri} has no {collection} collection yet (it was made by an "
                "earlier episodic): call ensure_schema first"
            )

