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

import base64
import json
import logging
import math
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from episodic.config import Settings
from episodic.core.errors import ConfigError, InputError, StoreError
from episodic.core.records import (
    EmbeddingEntry,
    FrameObservation,
    ShortTermMemory,
    SnippetRef,
    SoundObservation,
    StreamInfo,
    ThetaEvent,
    TranscriptPiece,
    vector_id,
)
from episodic.memory.milvus_filters import MODALITY as _MODALITY
from episodic.memory.milvus_filters import build_filter as _filter
from episodic.memory.milvus_filters import check_id as _check_id
from episodic.memory.milvus_filters import check_stream as _check_stream
from episodic.memory.milvus_filters import check_time as _check_time
from episodic.memory.milvus_filters import render_filter
from episodic.memory.milvus_filters import stream_list as _stream_list
from episodic.memory.vector_cache import VectorCache

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
BATCH_ROWS = 512  # rows per insert/upsert/delete call
AUTO_FLUSH_ROWS = 1024  # Milvus Lite only, see MilvusStore._wrote
STRONG_AFTER_DELETE_S = 2.0  # Milvus servers: see MilvusStore._deleted
QUERY_PAGE = 16384  # Milvus caps offset+limit of one query (and top_k of a search) here
MAX_TOP_K = 16384
CONNECT_TIMEOUT_S = 10.0

ID_MAX = 256
STREAM_ID_MAX = 128
TEXT_MAX_BYTES = 65535  # the largest VARCHAR Milvus allows; it costs nothing until used
SUMMARY_MAX_BYTES = 4096
SOURCE_MAX_BYTES = 4096
MODALITY_MAX = 32
JSON_MAX_BYTES = 65536  # Milvus's limit for one JSON value
PLACEHOLDER_DIM = 2
PLACEHOLDER_VECTOR = [1.0, 0.0]

# Model roles whose change makes stored vectors incomparable with new ones; other roles
# (asr, llm) are informational and simply updated in the meta record.
VECTOR_MODEL_ROLES = ("embedder", "describer")

EVENTS, MEMORIES, VECTORS, FRAMES, STREAMS, META = (
    "events",
    "memories",
    "vectors",
    "frames",
    "streams",
    "meta",
)
ALL_COLLECTIONS = (EVENTS, MEMORIES, VECTORS, FRAMES, STREAMS, META)
CREATE_RACE_WAIT_S = 10.0  # how long a collection another process is creating may take to appear
EVENT_FIELDS = (
    "id", "stream_id", "t_start", "t_end", "memory_id", "summary", "memory_vector",
    "visual_context", "audio_context", "metadata", "vector",
)
TEXT_DIM_COLLECTIONS = (EVENTS, MEMORIES, VECTORS)

_PREFIX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")
_SERVER_SCHEMES = ("http://", "https://", "tcp://", "grpc://", "unix:")

T = TypeVar("T")


# -- value conversion ----------------------------------------------------------------------
def _truncate_utf8(text: str, max_bytes: int) -> str:
    """Cut to at most ``max_bytes`` UTF-8 bytes without splitting a character."""
    text = text or ""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= max_bytes:
        return text if "\x00" not in text else text.replace("\x00", "")
    return raw[:max_bytes].decode("utf-8", "ignore").replace("\x00", "")


def _jsonable(obj: Any) -> Any:
    """numpy scalars/arrays, tuples and non-finite floats made into strict JSON values."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        return _jsonable(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if obj is None or isinstance(obj, (str, int, bool)):
        return obj
    return str(obj)


def _json_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))


def _shorten_strings(obj: Any, max_bytes: int) -> Any:
    if isinstance(obj, str):
        return _truncate_utf8(obj, max_bytes)
    if isinstance(obj, dict):
        return {k: _shorten_strings(v, max_bytes) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_shorten_strings(v, max_bytes) for v in obj]
    return obj


def _json_field(value: Any, record_id: str, field: str) -> Any:
    """A JSON value within Milvus's 64 KiB: long strings inside are shortened (halving the
    allowance until it fits) rather than failing an ingest over one verbose description."""
    out = _jsonable(value)
    size = _json_size(out)
    allowance = 8192
    while size > JSON_MAX_BYTES and allowance >= 16:
        out = _shorten_strings(out, allowance)
        size = _json_size(out)
        allowance //= 2
    if size > JSON_MAX_BYTES:
        raise InputError(
            f"record {record_id}: field {field!r} is {size} bytes as JSON even with its texts "
            f"shortened; Milvus stores at most {JSON_MAX_BYTES}"
        )
    return out


def _vector(value: Any, dim: int, what: str) -> list[float]:
    arr = np.asarray(value, dtype=np.float32).reshape(-1)
    if arr.shape[0] != dim:
        raise InputError(f"{what} has {arr.shape[0]} dimensions; the store expects {dim}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{what} contains NaN or infinity")
    return arr.tolist()


def _b64_vector(value: Any) -> str:
    return base64.b64encode(np.asarray(value, dtype="<f4").reshape(-1).tobytes()).decode("ascii")


def _from_b64(text: str) -> np.ndarray:
    if not text:
        return np.zeros(0, dtype=np.float32)
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)


def _f32(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=np.float32)


def _items(value: Any) -> list[Any]:
    if isinstance(value, dict):
        items = value.get("items", [])
        return items if isinstance(items, list) else []
    return value if isinstance(value, list) else []


def _check_top_k(top_k: Any) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k <= MAX_TOP_K:
        raise InputError(f"top_k must be an integer in [1, {MAX_TOP_K}], got {top_k!r}")


def _chunks(seq: Sequence[T], size: int = BATCH_ROWS) -> Iterator[Sequence[T]]:
    for i in range(0, len(seq), size):
        yield seq[i : i + size]


# -- Milvus Lite bookkeeping ---------------------------------------------------------------
_lite_lock = threading.Lock()
_lite_refs: dict[str, int] = {}


def _reraise(exc: BaseException) -> None:
    raise exc


def _lite_dir_locked(path: str) -> bool:
    """True if another process holds Milvus Lite's LOCK on ``path`` (checked without taking it
    for longer than an instant). Only meaningful when this process does not serve ``path``."""
    lock = os.path.join(path, "LOCK")
    if not os.path.exists(lock):
        return False
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _lite_served_here(path: str) -> bool:
    """Whether this process already runs a Milvus Lite server for ``path`` (opened by other
    code): then the LOCK is ours and probing it would wrongly report another process."""
    try:
        from milvus_lite.server_manager import server_manager_instance

        return path in getattr(server_manager_instance, "_servers", {})
    except Exception:
        return False


def _release_lite(path: str) -> None:
    """Stop this process's Milvus Lite server for ``path`` when its last store closes, so the
    directory lock is released for another process (pymilvus's close() keeps it running)."""
    with _lite_lock:
        n = _lite_refs.get(path, 0) - 1
        if n > 0:
            _lite_refs[path] = n
            return
        _lite_refs.pop(path, None)
    with _caches_lock:  # another process may write the store next: never trust them again
        for key in [k for k in _caches if k[0] == path]:
            del _caches[key]
    try:
        from milvus_lite.server_manager import server_manager_instance

        server_manager_instance.release_server(path)
    except Exception as exc:  # the server is gone at exit anyway; never fail a close
        log.debug("releasing Milvus Lite server for %s failed: %s", path, exc)


# -- in-process vector cache (Milvus Lite) --------------------------------------------------
CACHE_COLLECTIONS = (EVENTS, MEMORIES, VECTORS)
CACHE_LOAD_BATCH = 4096
CACHE_LISTING_MAX = 2048  # larger listings are one Milvus query rather than many key reads


_caches_lock = threading.Lock()
_caches: dict[tuple[str, str], VectorCache] = {}  # (Lite path, collection name) → cache


# -- the store -----------------------------------------------------------------------------
class MilvusStore:
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

    # -- connection ----------------------------------------------------------------------
    def _connect(self) -> Any:
        from pymilvus import MilvusClient
        from pymilvus.exceptions import MilvusException

        if self.is_lite:
            path = Path(self.uri).expanduser()
            if path.suffix != ".db":
                raise StoreError(
                    f"milvus_uri {self.uri!r}: a Milvus Lite store is a path ending in .db; "
                    "a server is http(s)://host:port"
                )
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the store directory {path.parent}: {exc}") from None
            abs_path = self._writable_copy(os.path.abspath(path))
            self.uri = abs_path
            with _lite_lock:
                served_here = _lite_refs.get(abs_path, 0) > 0 or _lite_served_here(abs_path)
            if not served_here and _lite_dir_locked(abs_path):
                raise self._locked_error(abs_path)
            try:
                client = MilvusClient(uri=abs_path, token=self.settings.milvus_token)
            except MilvusException:
                if _lite_dir_locked(abs_path):
                    raise self._locked_error(abs_path) from None
                raise StoreError(
                    f"cannot open the Milvus Lite store at {abs_path} (see the log above for the "
                    "cause; a damaged store can be moved aside and rebuilt by ingesting again)"
                ) from None
            with _lite_lock:
                _lite_refs[abs_path] = _lite_refs.get(abs_path, 0) + 1
            self._lite_path = abs_path
            return client
        try:
            return MilvusClient(
                uri=self.uri, token=self.settings.milvus_token, timeout=CONNECT_TIMEOUT_S
            )
        except MilvusException as exc:
            raise StoreError(
                f"cannot reach the Milvus server at {self.uri}: {getattr(exc, 'message', exc)}"
            ) from None
        except Exception as exc:  # grpc/URI errors for a malformed or dead endpoint
            raise StoreError(f"cannot reach the Milvus server at {self.uri}: {exc}") from None

    def _writable_copy(self, path: str) -> str:
        """``path``, or a private copy of it when it lies on a read-only mount (or is not
        writable for this user): Milvus Lite must write a lock file and its own bookkeeping even
        to read, so a store mounted read-only (an archive, a shared snapshot) is read through a
        temporary copy, removed again on close. Nothing is ever written to the original."""
        if not os.path.isdir(path) or os.access(path, os.W_OK):
            return path
        size = sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())
        tmp = tempfile.mkdtemp(prefix="episodic-readonly-")
        try:
            copy = os.path.join(tmp, os.path.basename(path))
            shutil.copytree(path, copy, ignore=shutil.ignore_patterns("LOCK"))
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise StoreError(
                f"the store at {path} is read-only and could not be copied to read it ({exc})"
            ) from None
        log.warning(
            "the store at %s is read-only: reading a temporary copy (%.1f MB); nothing done "
            "now is written back", path, size / 1e6,
        )
        self._readonly_copy = tmp
        return copy

    @staticmethod
    def _locked_error(path: str) -> StoreError:
        return StoreError(
            f"the store at {path} is in use by another episodic process (Milvus Lite allows one "
            "process per data directory); stop it, or run `milvus-lite server --data-dir "
            f"{path} --host 127.0.0.1 --port 19530` and point milvus_uri at http://127.0.0.1:19530"
        )

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
        """Vector dimension of each record collection that exists (the ground truth)."""
        dims: dict[str, int] = {}
        c = self._client
        for collection in (EVENTS, MEMORIES, VECTORS, FRAMES):
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
        for what, dim in (("text_dim", text_dim), ("feature_dim", feature_dim)):
            if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or not 2 <= dim <= 32768:
                raise InputError(f"{what} must be an integer in [2, 32768], got {dim!r}")
        text_dim, feature_dim = int(text_dim), int(feature_dim)
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

    # -- row conversion --------------------------------------------------------------------
    def _memory_row(self, m: ShortTermMemory) -> dict[str, Any]:
        assert self._text_dim is not None
        mid = _check_id(m.id, "memory id")
        return {
            "id": mid,
            "stream_id": _check_stream(m.stream_id),
            "t_start": _check_time(m.t_start, f"{mid}: t_start"),
            "t_end": _check_time(m.t_end, f"{mid}: t_end"),
            "vector": _vector(m.vector, self._text_dim, f"memory {mid} vector"),
            "transcript_text": _truncate_utf8(m.transcript_text, TEXT_MAX_BYTES),
            "visual_text": _truncate_utf8(m.visual_text, TEXT_MAX_BYTES),
            "ocr_text": _truncate_utf8(m.ocr_text, TEXT_MAX_BYTES),
            "transcript": _json_field(
                {
                    "items": [{"t_start": p.t_start, "t_end": p.t_end, "text": p.text} for p in m.transcript],
                    # non-speech sound observations ride with the transcript (no schema change)
                    "sounds": [
                        {
                            "t_start": o.t_start,
                            "t_end": o.t_end,
                            "kind": o.kind,
                            "confidence": o.confidence,
                            "description": o.description,
                        }
                        for o in m.sounds
                    ],
                },
                mid,
                "transcript",
            ),
            "frames": _json_field(
                {
                    "items": [
                        {
                            "t": f.t,
                            "labels": [[str(lbl), float(p)] for lbl, p in f.labels],
                            "colours": list(f.colours),
                            "ocr_text": f.ocr_text,
                            "description": f.description,
                            "people": int(f.people),
                            "faces": int(f.faces),
                            "quality": f.quality,
                            "guesses": [[str(g), float(p)] for g, p in f.guesses],
                        }
                        for f in m.frames
                    ]
                },
                mid,
                "frames",
            ),
            "snippets": _json_field(
                {"items": [{"uri": s.uri, "t_start": s.t_start, "t_end": s.t_end} for s in m.snippets]},
                mid,
                "snippets",
            ),
            "metadata": _json_field(dict(m.metadata), mid, "metadata"),
            "children": {"vectors": [], "frames": []},  # filled in by upsert_memories
        }

    def _embedding_rows(self, m: ShortTermMemory) -> list[dict[str, Any]]:
        assert self._text_dim is not None
        rows = []
        for i, e in enumerate(m.embeddings):
            modality = str(e.modality)
            if not _MODALITY.fullmatch(modality):
                raise InputError(f"memory {m.id}: invalid embedding modality {modality!r}")
            vid = vector_id(m.id, modality, i)
            rows.append(
                {
                    "id": _check_id(vid, "vector id"),
                    "memory_id": m.id,
                    "stream_id": m.stream_id,
                    "t_start": _check_time(e.t_start, f"{vid}: t_start"),
                    "t_end": _check_time(e.t_end, f"{vid}: t_end"),
                    "ord": i,
                    "modality": modality,
                    "text": _truncate_utf8(e.text, TEXT_MAX_BYTES),
                    "vector": _vector(e.vector, self._text_dim, f"embedding {vid}"),
                }
            )
        return rows

    def _frame_rows(self, m: ShortTermMemory) -> list[dict[str, Any]]:
        if not m.frame_features:
            return []
        if self._feature_dim is None:
            raise StoreError(f"the store at {self.uri} has no frame-feature collection")
        rows = []
        for i, (t, feat) in enumerate(m.frame_features):
            fid = vector_id(m.id, "f", i)
            tt = _check_time(t, f"{fid}: t")
            rows.append(
                {
                    "id": _check_id(fid, "frame id"),
                    "memory_id": m.id,
                    "stream_id": m.stream_id,
                    "t_start": tt,
                    "t_end": tt,
                    "ord": i,
                    "vector": _vector(feat, self._feature_dim, f"frame feature {fid}"),
                }
            )
        return rows

    @staticmethod
    def _memory_from_row(r: dict[str, Any]) -> ShortTermMemory:
        transcript = [
            TranscriptPiece(float(p["t_start"]), float(p["t_end"]), str(p.get("text", "")))
            for p in _items(r.get("transcript"))
        ]
        frames = [
            FrameObservation(
                t=float(f["t"]),
                labels=[(str(lbl), float(p)) for lbl, p in f.get("labels", [])],
                colours=[str(c) for c in f.get("colours", [])],
                ocr_text=str(f.get("ocr_text", "")),
                description=str(f.get("description", "")),
                people=int(f.get("people", 0) or 0),
                faces=int(f.get("faces", 0) or 0),
                quality=str(f.get("quality", "")),
                guesses=[(str(g), float(p)) for g, p in f.get("guesses", [])],
            )
            for f in _items(r.get("frames"))
        ]
        tr = r.get("transcript")
        sounds = [
            SoundObservation(
                float(o["t_start"]),
                float(o["t_end"]),
                str(o.get("kind", "")),
                float(o.get("confidence", 0.0)),
                str(o.get("description", "")),
            )
            for o in (tr.get("sounds", []) if isinstance(tr, dict) else [])
        ]
        snippets = [
            SnippetRef(str(s["uri"]), float(s["t_start"]), float(s["t_end"]))
            for s in _items(r.get("snippets"))
        ]
        return ShortTermMemory(
            id=r["id"],
            stream_id=r["stream_id"],
            t_start=float(r["t_start"]),
            t_end=float(r["t_end"]),
            vector=_f32(r["vector"]),
            transcript=transcript,
            frames=frames,
            snippets=snippets,
            metadata=dict(r.get("metadata") or {}),
            sounds=sounds,
        )

    def _event_row(self, e: ThetaEvent) -> dict[str, Any]:
        assert self._text_dim is not None
        eid = _check_id(e.id, "event id")
        mv = np.asarray(e.vector, dtype=np.float32).reshape(-1)
        if mv.size not in (0, self._text_dim) or not np.all(np.isfinite(mv)):
            raise InputError(f"event {eid}: vector must be finite with {self._text_dim} dimensions")
        return {
            "id": eid,
            "stream_id": _check_stream(e.stream_id),
            "memory_id": _check_id(e.memory_id, "memory id"),
            "t_start": _check_time(e.t_start, f"{eid}: t_start"),
            "t_end": _check_time(e.t_end, f"{eid}: t_end"),
            "summary": _truncate_utf8(e.summary, SUMMARY_MAX_BYTES),
            "memory_vector": _b64_vector(mv),
            "visual_context": _json_field({"items": list(e.visual_context)}, eid, "visual_context"),
            "audio_context": _json_field({"items": list(e.audio_context)}, eid, "audio_context"),
            "metadata": _json_field(dict(e.metadata), eid, "metadata"),
            "vector": _vector(e.summary_vector, self._text_dim, f"event {eid} summary_vector"),
        }

    @staticmethod
    def _event_from_row(r: dict[str, Any]) -> ThetaEvent:
        return ThetaEvent(
            id=r["id"],
            stream_id=r["stream_id"],
            memory_id=r["memory_id"],
            t_start=float(r["t_start"]),
            t_end=float(r["t_end"]),
            summary=r.get("summary", ""),
            summary_vector=_f32(r.get("vector", [])),
            vector=_from_b64(r.get("memory_vector", "")),
            visual_context=[str(x) for x in _items(r.get("visual_context"))],
            audio_context=[str(x) for x in _items(r.get("audio_context"))],
            metadata=dict(r.get("metadata") or {}),
        )

    @staticmethod
    def _stream_from_row(r: dict[str, Any]) -> StreamInfo:
        return StreamInfo(
            stream_id=r["stream_id"],
            source=r.get("source", ""),
            t_end=float(r["t_end"]),
            memories=int(r["memories"]),
            events=int(r["events"]),
            updated_at=float(r["updated_at"]),
            metadata=dict(r.get("metadata") or {}),
        )

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

    def delete_stream_records_except(self, stream_id: str, keep_memory_ids: set[str]) -> int:
        """Delete the stream's memories, events, E_i and frame rows whose memory is not in
        ``keep_memory_ids`` (after a re-ingest the store then holds exactly the new run), and
        E_i/frame rows that a kept memory no longer lists (orphans of an interrupted write).
        Returns the number of rows deleted across the four collections."""
        sid = _check_stream(stream_id)
        if not self._attach():
            return 0
        keep = set(keep_memory_ids)
        where = render_filter("stream_id == {sid}", sid=sid)
        mem_rows = self._query(MEMORIES, where, ["id", "children"])
        listed = {
            key: {i for r in mem_rows if r["id"] in keep for i in (r.get("children") or {}).get(key, [])}
            for key in ("vectors", "frames")
        }
        removed = 0
        for collection in (EVENTS, VECTORS, FRAMES):
            rows = self._query(collection, where, ["id", "memory_id"])
            if collection == EVENTS:
                stale = [r["id"] for r in rows if r["memory_id"] not in keep]
            else:
                children = listed[collection]
                stale = [r["id"] for r in rows if r["memory_id"] not in keep or r["id"] not in children]
            if stale:
                removed += self._delete_ids(collection, stale)
        stale = [r["id"] for r in mem_rows if r["id"] not in keep]
        if stale:
            removed += self._delete_ids(MEMORIES, stale)
        return removed

    def delete_stream(self, stream_id: str) -> int:
        """Remove every record of a stream, its StreamInfo included; returns rows deleted."""
        sid = _check_stream(stream_id)
        removed = self.delete_stream_records_except(sid, set())
        if self._has(STREAMS) and self.get_stream(sid) is not None:
            self._call(
                "deleting a stream",
                self._client.delete,
                self.name(STREAMS),
                filter=render_filter("stream_id == {sid}", sid=sid),
            )
            self._deleted()
            removed += 1
        return removed

    # -- reads -----------------------------------------------------------------------------
    @staticmethod
    def _check_limit(limit: Any) -> int:
        if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 0:
            raise InputError(f"limit must be a non-negative integer, got {limit!r}")
        return int(limit)

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
        limit = self._check_limit(limit)
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
        limit = self._check_limit(limit)
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

    def counts(self) -> dict[str, int]:
        """Rows per collection (for status displays and tests)."""
        out: dict[str, int] = {}
        for collection in ALL_COLLECTIONS:
            if not self._has(collection):
                out[collection] = 0
                continue
            rows = self._call(
                "counting",
                self._client.query,
                self.name(collection),
                filter="",
                output_fields=["count(*)"],
                **self._read_options(),
            )
            out[collection] = int(rows[0]["count(*)"]) if rows else 0
        return out

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
