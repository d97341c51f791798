"""The books of forgetting (``forget_dir``, default ``<data_dir>/forgetting``): the audit log,
the tombstones workers check, per-stream retention and the lock a forget and a guarded write
share. See :mod:`services.forgetting` for what each promises; files here are written
atomically or appended and fsynced, so a crash never leaves a torn book behind."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import math
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from episodic.core.errors import InputError
from episodic.core.records import validate_stream_id

log = logging.getLogger(__name__)


def _overlaps(t0: float, t1: float, lo: float | None, hi: float | None) -> bool:
    return (lo is None or t1 >= lo) and (hi is None or t0 <= hi)


# -- the books -----------------------------------------------------------------------------------
def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_json_atomically(path: Path, doc: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, sort_keys=True, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


class AuditLog:
    """``audit.jsonl``: one JSON object per line, appended and fsynced."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, sort_keys=True, separators=(",", ":")) + "\n").encode()
        new = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # a line torn by a crash: never glue the next one to it
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        if new:
            _fsync_dir(self.path.parent)

    def entries(self) -> list[dict[str, Any]]:
        """Every whole line, oldest first (a line a crash tore is skipped)."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        out = []
        for raw in text.splitlines():
            with contextlib.suppress(ValueError):
                doc = json.loads(raw)
                if isinstance(doc, dict) and isinstance(doc.get("audit_id"), str):
                    out.append(doc)
        return out

    def pending(self) -> list[dict[str, Any]]:
        """Intents with no ``done`` line: forgets a crash interrupted."""
        done = {e["audit_id"] for e in self.entries() if e.get("state") == "done"}
        seen: dict[str, dict[str, Any]] = {}
        for e in self.entries():
            if e.get("state") == "pending" and e["audit_id"] not in done:
                seen.setdefault(e["audit_id"], e)
        return list(seen.values())

    def records(self, stream_id: str | None = None) -> list[dict[str, Any]]:
        """One record per forget, oldest first: its intent merged with its outcome
        (``state`` "done", or "pending" while unfinished)."""
        entries = [e for e in self.entries() if stream_id is None or e.get("stream_id") == stream_id]
        outcome = {e["audit_id"]: e for e in entries if e.get("state") == "done"}
        out: dict[str, dict[str, Any]] = {}
        for e in entries:
            if e.get("state") != "pending" or e["audit_id"] in out:
                continue
            rec = dict(e)
            done = outcome.get(e["audit_id"])
            if done is not None:
                rec.update(state="done", finished_at=done.get("at"), counts=done.get("counts", {}),
                           snippet_files=done.get("snippet_files", 0), recovered=bool(done.get("recovered")))
            out[e["audit_id"]] = rec
        return list(out.values())


@dataclass(frozen=True)
class Tombstone:
    """A stretch of a stream forgotten at ``at`` (Unix time); ``seq`` orders tombstones."""

    seq: int
    stream_id: str
    t_min: float
    t_max: float
    at: float
    whole: bool
    audit_id: str

    def covers(self, t0: float, t1: float) -> bool:
        """Whether a record spanning [t0, t1] lies in the forgotten stretch. A range forget's
        stretch is closed (as the range the user gave); a whole-stream forget reaches what was
        stored then, so its end is open: a record that starts exactly there was never stored
        and is new (the next chunk after the forget starts where the last memory ended)."""
        if self.whole:
            return t1 >= self.t_min and t0 < self.t_max
        return _overlaps(t0, t1, self.t_min, self.t_max)


class Tombstones:
    """``tombstones.json``, read through a cache that a stat() keeps fresh (workers check it
    before every chunk)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._key: tuple[int, int, int] | None = None
        self._items: list[Tombstone] = []
        self._lock = threading.Lock()

    def load(self) -> list[Tombstone]:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return []
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        with self._lock:
            if key != self._key:
                try:
                    doc = json.loads(self.path.read_text(encoding="utf-8"))
                    self._items = [Tombstone(**t) for t in doc.get("tombstones", [])]
                except (OSError, ValueError, TypeError) as exc:
                    log.error("cannot read %s (%s): keeping the tombstones read before", self.path, exc)
                    return list(self._items)
                self._key = key
            return list(self._items)

    def for_stream(self, stream_id: str, after_seq: int = 0) -> list[Tombstone]:
        return [t for t in self.load() if t.stream_id == stream_id and t.seq > after_seq]

    def latest_seq(self) -> int:
        return max((t.seq for t in self.load()), default=0)

    def add(self, stream_id: str, t_min: float, t_max: float, at: float, whole: bool, audit_id: str) -> Tombstone:
        """Record a tombstone (the caller holds the exclusive lock); one already recorded for
        ``audit_id`` is returned as it was. Older tombstones of the stream that the new one
        covers (a range inside it, made earlier) are dropped, so daily retention sweeps keep
        one per stream."""
        items = self.load()
        for t in items:
            if t.audit_id == audit_id:
                return t
        new = Tombstone(max((t.seq for t in items), default=0) + 1, stream_id, t_min, t_max, at, whole, audit_id)
        kept = [
            t for t in items
            if not (t.stream_id == stream_id and t.t_min >= t_min and t.t_max <= t_max
                    and t.at <= at and (whole or not t.whole))
        ]
        _write_json_atomically(self.path, {"tombstones": [asdict(t) for t in [*kept, new]]})
        return new


class RetentionPolicies:
    """``retention.json``: streams with their own retention in days (0 = keep forever).

    Kept here, not in StreamInfo metadata, because ingest and the worker rewrite the metadata
    at every checkpoint; a setting outlives the stream's records (it applies when the stream
    comes back)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def all(self) -> dict[str, float]:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read {self.path}: {exc}") from None
        return {str(k): float(v) for k, v in (doc.get("streams") or {}).items()}

    def set(self, stream_id: str, days: float | None) -> None:
        """Give ``stream_id`` its own retention, or (None) return it to the default."""
        sid = validate_stream_id(stream_id)
        if days is not None and (isinstance(days, bool) or not math.isfinite(float(days)) or not 0 <= float(days) <= 1e6):
            raise InputError(f"days must be in 0..1e6 (0 = keep until forgotten), got {days!r}")
        streams = self.all()
        if days is None:
            streams.pop(sid, None)
        else:
            streams[sid] = float(days)
        _write_json_atomically(self.path, {"streams": dict(sorted(streams.items()))})


class ForgetLock:
    """The flock that orders forgets against guarded worker writes (across processes on one
    host, and across threads: each holder opens the file anew)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextlib.contextmanager
    def _held(self, mode: int) -> Iterator[None]:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, mode)
            yield
        finally:
            os.close(fd)  # releases the lock

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        return self._held(fcntl.LOCK_EX)

    def shared(self) -> contextlib.AbstractContextManager[None]:
        return self._held(fcntl.LOCK_SH)


class ForgetBooks:
    """The audit log, tombstones, retention policies and lock under one directory."""

    def __init__(self, directory: Path | str) -> None:
        self.dir = Path(directory).expanduser()
        self.audit = AuditLog(self.dir / "audit.jsonl")
        self.tombstones = Tombstones(self.dir / "tombstones.json")
        self.retention = RetentionPolicies(self.dir / "retention.json")
        self.lock = ForgetLock(self.dir / "lock")

    def ensure(self) -> ForgetBooks:
        """Create the directory (the forgetting side; readers never need to)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        return self

    def guard_lock(self) -> contextlib.AbstractContextManager[None]:
        """The shared lock for a guarded write; nothing to hold when nothing was ever
        forgotten here (the directory does not exist)."""
        if not self.dir.is_dir():
            return contextlib.nullcontext()
        return self.lock.shared()
