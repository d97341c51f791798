"""Forgetting on purpose (issue 17): a stream, or a stretch of it, taken out of every collection
and the snippet store, with an audit record of what went, when and for whom; per-stream
retention swept on a timer; and a guard so a worker writing the stream never brings forgotten
records back.

**What goes.** A *range* forget (``t_min`` and/or ``t_max``) removes every memory that overlaps
[t_min, t_max] (closed; an open end reaches the stream's start or end), exactly those
``list_memories`` returns for that range, with its events, E_i, frame rows
and snippet files; the stream's overviews are recomposed from what remains (or deleted when no
embedder is at hand) and its listing's counts are corrected. A *whole-stream* forget (no range)
also removes the overviews, the listing and with it the worker's checkpoint, and every snippet
file under the stream. A memory that only partly overlaps the range goes whole: nothing is cut.

**Books** (``forget_dir``, default ``<data_dir>/forgetting``):

* ``audit.jsonl``: append-only, fsynced after every line. A ``pending`` line (stream, range,
  key id, reason, time) is written before anything is deleted and a ``done`` line (the counts
  per collection and of snippet files) after. Ids, ranges and counts only: never a transcript,
  a summary or a file name.
* ``tombstones.json``: per stream, the stream-time range forgotten and when (a sequence
  number and a Unix time), rewritten atomically. Workers read it (see ``services/forget_guard.py``
  and ``episodic/worker_forget.py``).
* ``retention.json``: the streams given their own retention (days).
* ``lock``: an flock. A forget holds it exclusively from its tombstone to its last deletion;
  a guarded worker write holds it shared while it checks the tombstones and writes.

**Crash safety.** The order is: pending line → tombstone → snippet files → records → overviews
and listing → ``done`` line. Every step is idempotent, and a forget killed anywhere is
finished by the next forget, ``episodic gc``, or the sweep ``serve`` and ``worker`` run at
start and every ``retention_sweep_interval_s``: it leaves no record in any collection and no
snippet file. Snippet files go before the records that name them, so none is ever orphaned.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from episodic.core.errors import InputError
from episodic.core.interfaces import MemoryStore, SnippetStore, TextEmbedder
from episodic.core.records import ShortTermMemory, StreamInfo, validate_stream_id
from episodic.services.forget_books import (  # noqa: F401 - re-exported: callers import the books from here
    AuditLog,
    ForgetBooks,
    ForgetLock,
    RetentionPolicies,
    Tombstone,
    Tombstones,
    _overlaps,
)

log = logging.getLogger(__name__)

CRASH_ENV = "EPISODIC_FORGET_CRASH_AT"  # tests: SIGKILL this process right after that step
CRASH_STEPS = ("intent", "snippets", "records")
ALL = 1 << 40  # "every memory" as a listing limit
DAY_S = 86400.0
RECORD_KINDS = ("memories", "events", "vectors", "frames", "overviews", "streams")


class StreamNotFound(InputError):
    """The stream has no record here (a server answers NOT_FOUND, the same as for a stream the
    caller's key may not see)."""


def check_forget_range(t_min: Any, t_max: Any) -> tuple[float | None, float | None]:
    """Stream times for a forget: finite, not negative, t_min <= t_max; either may be None."""
    out: list[float | None] = []
    for name, value in (("t_min", t_min), ("t_max", t_max)):
        if value is None:
            out.append(None)
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{name} must be a number of seconds, got {value!r}")
        v = float(value)
        if not math.isfinite(v):
            raise InputError(f"{name} must be finite, got {value!r}")
        if v < 0:
            raise InputError(f"{name} must not be negative (stream time starts at 0), got {v:g}")
        out.append(v)
    lo, hi = out
    if lo is not None and hi is not None and lo > hi:
        raise InputError(f"the time range is reversed: t_min ({lo:g}) is after t_max ({hi:g})")
    return lo, hi


# -- reports -------------------------------------------------------------------------------------
@dataclass
class ForgetReport:
    """What one forget removed (``counts`` per collection, ``snippet_files`` deleted)."""

    audit_id: str
    stream_id: str
    whole_stream: bool
    t_min: float | None
    t_max: float | None
    counts: dict[str, int]
    snippet_files: int
    at: float
    finished_at: float
    overviews_recomposed: int = 0  # rewritten from what remains (range forgets)
    reason: str = "request"
    key_id: str = "local"
    recovered: bool = False  # this call finished a forget that a crash had interrupted

    @property
    def records(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "audit_id": self.audit_id, "stream_id": self.stream_id, "whole_stream": self.whole_stream,
            "t_min": self.t_min, "t_max": self.t_max,
            "counts": {k: int(self.counts.get(k, 0)) for k in RECORD_KINDS},
            "records": self.records, "snippet_files": self.snippet_files,
            "overviews_recomposed": self.overviews_recomposed, "at": round(self.at, 3), "finished_at": round(self.finished_at, 3),
            "reason": self.reason, "key_id": self.key_id, "recovered": self.recovered,
        }


@dataclass
class StreamStorage:
    """What a stream takes: records per collection and bytes of snippet files."""

    counts: dict[str, int]
    snippet_bytes: int

    @property
    def records(self) -> int:
        return sum(self.counts.values())


@dataclass
class SweepReport:
    recovered: list[ForgetReport] = field(default_factory=list)
    forgotten: list[ForgetReport] = field(default_factory=list)
    streams_checked: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "recovered": [r.to_dict() for r in self.recovered],
            "forgotten": [r.to_dict() for r in self.forgotten],
            "streams_checked": self.streams_checked,
            "seconds": round(self.seconds, 3),
        }


def stream_storage(store: MemoryStore, snippets: SnippetStore, stream_ids: Iterable[str]) -> dict[str, StreamStorage]:
    """Records and snippet bytes of each stream (one count per collection, one walk of its
    snippets)."""
    out = {}
    for sid in stream_ids:
        counts = store.counts(sid)
        out[sid] = StreamStorage({k: int(counts.get(k, 0)) for k in RECORD_KINDS}, int(snippets.bytes_used(sid)))
    return out


# -- forgetting ------------------------------------------------------------------------------------
def _crash_point(step: str) -> None:
    if os.environ.get(CRASH_ENV) == step:
        log.error("%s=%s: killing this process (a test of crash safety)", CRASH_ENV, step)
        os.kill(os.getpid(), signal.SIGKILL)


def _ingested_at(m: ShortTermMemory, fallback: float) -> float:
    v = (m.metadata or {}).get("ingested_at")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else fallback


class Forgetter:
    """Forgets, retention sweeps and storage figures over one store and snippet store.

    ``embedder`` (built on first use: a zero-argument callable) recomposes a stream's overviews
    after a range forget; without it those overviews are deleted and recomposed by the stream's
    next checkpoint or ingest. ``clock`` is injectable for tests of retention."""

    def __init__(
        self,
        store: MemoryStore,
        snippets: SnippetStore,
        books: ForgetBooks,
        *,
        embedder: Callable[[], TextEmbedder] | None = None,
        overview_stretch_s: float = 600.0,
        summary_windows: str | None = None,
        retention_days: float = 0.0,
        clock: Callable[[], float] = time.time,
        alerts: Callable[[str, float | None, float | None], int] | None = None,
    ) -> None:
        # forgets the alerts of standing queries about the range (they quote what was said)
        self.alerts = alerts
        self.store = store
        self.snippets = snippets
        self.books = books
        self._embedder = embedder
        self.overview_stretch_s = overview_stretch_s
        self.summary_windows = summary_windows  # None: the overview module's default
        self.retention_days = retention_days
        self.clock = clock

    @classmethod
    def for_backends(cls, backends: Any, clock: Callable[[], float] = time.time) -> Forgetter:
        """Over a Components-like object (settings, store, snippets, embedder on demand)."""
        s = backends.settings
        return cls(
            backends.store, backends.snippets, ForgetBooks(s.resolved_forget_dir),
            embedder=lambda: backends.embedder, overview_stretch_s=s.overview_stretch_s,
            summary_windows=getattr(s, "summary_windows", None), retention_days=s.retention_days, clock=clock,
        )

    # -- forgetting ------------------------------------------------------------------------
    def forget(
        self, stream_id: str, t_min: float | None = None, t_max: float | None = None,
        key_id: str = "local", reason: str = "request",
    ) -> ForgetReport:
        """Forget ``stream_id`` (whole when no range is given) or the memories overlapping
        [t_min, t_max]; StreamNotFound when the stream has no record here. Finishes any
        forget a crash interrupted first."""
        sid = validate_stream_id(stream_id)
        lo, hi = check_forget_range(t_min, t_max)
        whole = lo is None and hi is None
        self.books.ensure()
        if not whole and self._embedder is not None and self.store.list_overviews(sid, limit=1):
            self._embedder()  # load a model now, not while holding up writers
        with self.books.lock.exclusive():
            recovered = self._finish_pending()
            same = [r for r in recovered if (r.stream_id, r.t_min, r.t_max) == (sid, lo, hi)]
            if same:  # this very forget, interrupted before (a rerun after a crash): now done
                return same[-1]
            info = self.store.get_stream(sid)
            if info is None and not any(self.store.counts(sid).values()):
                raise StreamNotFound(f"no stream {sid!r}")
            reached = self._reached(sid, info)
            at = self.clock()
            intent = {
                "audit_id": f"fg-{int(at)}-{uuid.uuid4().hex[:12]}", "state": "pending", "at": at,
                "stream_id": sid, "t_min": lo, "t_max": hi, "whole_stream": whole,
                # the stream time the tombstone reaches: what is stored now, never the future
                "tombstone": [lo or 0.0, reached if hi is None else hi],
                "reason": reason, "key_id": key_id,
            }
            self.books.audit.append(intent)
            _crash_point("intent")
            return self._carry_out(intent)

    def finish_pending(self) -> list[ForgetReport]:
        """Finish every forget a crash interrupted (each one from the step it had reached)."""
        if not self.books.audit.path.exists():
            return []
        with self.books.lock.exclusive():
            return self._finish_pending()

    def _finish_pending(self) -> list[ForgetReport]:
        done = []
        for intent in self.books.audit.pending():
            log.warning("finishing the forget %s of %s that was interrupted", intent["audit_id"], intent["stream_id"])
            done.append(self._carry_out(intent, recovered=True))
        return done

    def _reached(self, sid: str, info: StreamInfo | None) -> float:
        """The stream time stored so far (the listing's end, or a later memory's)."""
        t = float(info.t_end) if info is not None else 0.0
        later = self.store.list_memories(sid, t_min=t if info is not None else None, limit=ALL)
        return max([t, *(m.t_end for m in later)])

    def _carry_out(self, intent: dict[str, Any], recovered: bool = False) -> ForgetReport:
        """The steps after the pending line; each is idempotent (the lock is held)."""
        sid, lo, hi, whole = intent["stream_id"], intent["t_min"], intent["t_max"], intent["whole_stream"]
        tomb_lo, tomb_hi = intent["tombstone"]
        self.books.tombstones.add(sid, float(tomb_lo), float(tomb_hi), float(intent["at"]), whole, intent["audit_id"])
        memories = self.store.list_memories(sid, t_min=lo, t_max=hi, limit=ALL)
        files = self.snippets.delete_uris(sorted({u for m in memories for u in m.file_uris}))
        _crash_point("snippets")
        counts = {k: 0 for k in RECORD_KINDS}
        recomposed = 0
        if whole:
            had_listing = self.store.get_stream(sid) is not None
            counts.update(self.store.delete_range(sid))
            _crash_point("records")
            counts["overviews"] = self.store.delete_overviews(sid)
            extra = self.store.delete_stream(sid) - int(had_listing)
            if extra > 0:
                log.warning("forget %s: %d records of %s appeared meanwhile and went too", intent["audit_id"], extra, sid)
            counts["streams"] = int(had_listing)
            # snippet files no stored memory names (a crashed writer's, a segment still
            # held open when the stream was forgotten)
            left = {u for m in self.store.list_memories(sid, limit=ALL) for u in m.file_uris}
            files += self.snippets.delete_stream(sid, left)
        else:
            counts.update(self.store.delete_range(sid, lo, hi))
            _crash_point("records")
            since = min([m.t_start for m in memories], default=lo or 0.0)
            counts["overviews"], recomposed = self._recompose_overviews(sid, since)
            self._correct_listing(sid)
        if self.alerts is not None:
            counts["alerts"] = self.alerts(sid, lo, hi)
        self.store.flush()
        finished = self.clock()
        counts = {k: int(v) for k, v in counts.items()}
        self.books.audit.append({
            "audit_id": intent["audit_id"], "state": "done", "at": finished, "stream_id": sid,
            "counts": counts, "snippet_files": int(files), "overviews_recomposed": recomposed,
            "recovered": recovered,
        })
        return ForgetReport(
            audit_id=intent["audit_id"], stream_id=sid, whole_stream=whole, t_min=lo, t_max=hi,
            counts=counts, snippet_files=int(files), overviews_recomposed=recomposed,
            at=float(intent["at"]), finished_at=finished,
            reason=intent.get("reason", "request"), key_id=intent.get("key_id", "local"), recovered=recovered,
        )

    def _recompose_overviews(self, sid: str, since_s: float) -> tuple[int, int]:
        """Overviews after a range forget: recomposed from what remains (stretches from the
        first forgotten memory's on, and the stream-wide one), or all deleted when there is no
        embedder. Returns (deleted, recomposed)."""
        existing = self.store.list_overviews(sid)
        if not existing:
            return 0, 0
        if self._embedder is None:
            return self.store.delete_overviews(sid), 0
        from episodic.memory.overview_windows import refresh_overviews

        before = {o.id for o in existing}
        windows = {} if self.summary_windows is None else {"windows": self.summary_windows}
        written = refresh_overviews(self.store, self._embedder(), sid, self.overview_stretch_s, since_s=since_s, **windows)
        after = {o.id for o in self.store.list_overviews(sid)}
        return len(before - after), len({o.id for o in written} & after)

    def _correct_listing(self, sid: str) -> None:
        info = self.store.get_stream(sid)
        if info is None:
            return
        counts = self.store.counts(sid)
        info.memories, info.events = int(counts.get("memories", 0)), int(counts.get("events", 0))
        self.store.upsert_stream(info)  # updated_at stays: it says when the stream was written

    # -- retention -------------------------------------------------------------------------
    def retention_for(self, stream_id: str, policies: dict[str, float] | None = None) -> float:
        """Days ``stream_id`` is kept (0 = until forgotten on purpose)."""
        policies = self.books.retention.all() if policies is None else policies
        return policies.get(stream_id, self.retention_days)

    def expired(self, info: StreamInfo, cutoff: float) -> tuple[bool, float | None] | None:
        """What retention takes of a stream at ``cutoff`` (Unix time): None (nothing),
        (True, None) the whole stream, or (False, t) the memories starting at or before t.

        A memory's age is when it was ingested (``ingested_at``; the listing's ``updated_at``
        for records that lack it); a live stream loses its oldest stretch, a stream nobody has
        written since the cutoff goes whole. A memory ingested later but placed earlier in the
        stream (rare) keeps the older ones after it until it expires too."""
        memories = self.store.list_memories(info.stream_id, limit=ALL)
        if not memories:
            return (True, None) if info.updated_at < cutoff else None
        old = [m for m in memories if _ingested_at(m, info.updated_at) < cutoff]
        if not old:
            return None
        young = [m for m in memories if _ingested_at(m, info.updated_at) >= cutoff]
        if not young and info.updated_at < cutoff:
            return True, None
        first_young = min((m.t_start for m in young), default=math.inf)
        starts = [m.t_start for m in old if m.t_start < first_young]
        return (False, max(starts)) if starts else None

    def sweep(self, now: float | None = None) -> SweepReport:
        """Finish interrupted forgets, then forget what each stream's retention says has
        expired (audited with reason "retention")."""
        started = time.perf_counter()
        report = SweepReport(recovered=self.finish_pending())
        policies = self.books.retention.all() if self.books.dir.is_dir() else {}
        now = self.clock() if now is None else now
        for info in self.store.list_streams():
            report.streams_checked += 1
            days = self.retention_for(info.stream_id, policies)
            if days <= 0:
                continue
            plan = self.expired(info, now - days * DAY_S)
            if plan is None:
                continue
            whole, t_max = plan
            try:
                report.forgotten.append(
                    self.forget(info.stream_id, None, None if whole else t_max, key_id="retention", reason="retention")
                )
            except StreamNotFound:  # forgotten meanwhile by someone else
                continue
        report.seconds = time.perf_counter() - started
        return report

    # -- reading ---------------------------------------------------------------------------
    def storage(self, stream_ids: Iterable[str] | None = None) -> dict[str, StreamStorage]:
        ids = [s.stream_id for s in self.store.list_streams()] if stream_ids is None else list(stream_ids)
        return stream_storage(self.store, self.snippets, ids)

    def audit(self, stream_id: str | None = None) -> list[dict[str, Any]]:
        return self.books.audit.records(stream_id)


class RetentionSweeper:
    """``Forgetter.sweep`` every ``interval_s`` in a daemon thread, the first one at start (so
    a forget interrupted by a crash is finished when the process comes back). A failing sweep
    is logged and tried again at the next interval; it never stops the process."""

    def __init__(self, forgetter: Forgetter, interval_s: float,
                 on_sweep: Callable[[SweepReport], None] | None = None) -> None:
        self.forgetter = forgetter
        self.interval_s = interval_s
        self.on_sweep = on_sweep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.sweeps = 0

    def start(self) -> RetentionSweeper:
        if self.interval_s > 0:
            self._thread = threading.Thread(target=self._run, name="episodic-retention", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                report = self.forgetter.sweep()
                self.sweeps += 1
                for r in report.recovered + report.forgotten:
                    log.info("forgot %s%s (%s): %d records, %d snippet files", r.stream_id,
                             "" if r.whole_stream else f" up to t={r.t_max:.1f} s", r.reason, r.records, r.snippet_files)
                if self.on_sweep is not None:
                    self.on_sweep(report)
            except Exception as exc:  # a store outage must not end the thread
                log.error("retention sweep failed (%s); trying again in %.0f s", exc, self.interval_s)
            self._stop.wait(self.interval_s)

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
