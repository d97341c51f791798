"""Opening a Milvus store: a Milvus Lite directory (one process per directory, a read-only
mount read through a temporary copy) or a Milvus server, with a clear error for each way it
can fail. A mixin of :class:`memory.milvus_store.MilvusStore`, which holds the state."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from episodic.core.errors import StoreError, StoreLockedError
from episodic.memory.milvus_lite import _lite_dir_locked, _lite_lock, _lite_refs, _lite_served_here

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10.0


def _check_scipy_once() -> None:
    """pymilvus looks for scipy.sparse on the first insert or search (``SciPyHelper``), with
    no lock: many server threads doing it at once raced inside the import and failed with a
    module-lock deadlock (seen with 50 concurrent Searches). Do it once, here, first."""
    try:
        from pymilvus.client.utils import SciPyHelper

        SciPyHelper.is_scipy_sparse(None)
    except (ImportError, AttributeError):  # another pymilvus layout: nothing to warm
        pass


class MilvusConnection:
    """``_connect`` for the store (uses ``self.uri``, ``self.is_lite``, ``self.settings``)."""

    uri: str
    is_lite: bool
    settings: Any
    _lite_path: str | None
    _readonly_copy: str | None

    def _connect(self) -> Any:
        from pymilvus import MilvusClient
        from pymilvus.exceptions import MilvusException

        _check_scipy_once()

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
    def _locked_error(path: str) -> StoreLockedError:
        return StoreLockedError(
            f"the store at {path} is in use by another episodic process (Milvus Lite allows one "
            "process per data directory); stop it, or run `milvus-lite server --data-dir "
            f"{path} --host 127.0.0.1 --port 19530` and point milvus_uri at http://127.0.0.1:19530"
        )
