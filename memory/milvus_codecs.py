"""Milvus field limits and value conversion: what a record's values become in a Milvus row
(truncated text, bounded JSON, float32 lists, base64 vectors) and back."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

from episodic.core.errors import InputError

BATCH_ROWS = 512  # rows per insert/upsert/delete call
MAX_TOP_K = 16384
ID_MAX = 256
STREAM_ID_MAX = 128
TEXT_MAX_BYTES = 65535  # the largest VARCHAR Milvus allows; it costs nothing until used
SUMMARY_MAX_BYTES = 4096
SOURCE_MAX_BYTES = 4096
MODALITY_MAX = 32
SCOPE_MAX = 16  # an overview's scope: "stream", "stretch" or "window"
JSON_MAX_BYTES = 65536  # Milvus's limit for one JSON value
PLACEHOLDER_DIM = 2
PLACEHOLDER_VECTOR = [1.0, 0.0]

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


def _reraise(exc: BaseException) -> None:
    raise exc


def _check_limit(limit: Any) -> int:
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 0:
        raise InputError(f"limit must be a non-negative integer, got {limit!r}")
    return int(limit)


def _check_count(value: Any, what: str) -> int:
    """A non-negative integer count (stored as INT64)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{what} must be a non-negative integer, got {value!r}")
    return int(value)


def _facet_lists(value: Any, what: str) -> dict[str, list[str]]:
    """An overview's facets as plain ``{name: [str, ...]}``: a tuple or a numpy string would
    come back from Milvus's JSON as something else, and a bare string as its characters, so
    both stores accept only lists (or tuples) of strings and keep lists."""
    if not isinstance(value, dict):
        raise InputError(f"{what} must be a dict of lists of strings, got {type(value).__name__}")
    out: dict[str, list[str]] = {}
    for name, items in value.items():
        if not isinstance(name, str) or not isinstance(items, (list, tuple)):
            raise InputError(f"{what}: facet {name!r} must be a list of strings under a str name")
        if not all(isinstance(x, str) for x in items):
            raise InputError(f"{what}: facet {name!r} holds something other than strings")
        out[name] = list(items)
    return out


def _check_dim(dim: Any, what: str) -> int:
    """A vector dimension the store accepts (Milvus's range)."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or not 2 <= dim <= 32768:
        raise InputError(f"{what} must be an integer in [2, 32768], got {dim!r}")
    return int(dim)
