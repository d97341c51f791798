"""Milvus Lite bookkeeping for this process: one embedded server per directory, shared by
every store opened on it and released with the last; the directory lock another process
holds; and the registry of in-process vector caches."""

from __future__ import annotations

import logging
import os
import threading

from episodic.memory.milvus_schema import EVENTS, MEMORIES, VECTORS
from episodic.memory.vector_cache import VectorCache

log = logging.getLogger(__name__)

# -- Milvus Lite bookkeeping ---------------------------------------------------------------
_lite_lock = threading.Lock()
_lite_refs: dict[str, int] = {}


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


