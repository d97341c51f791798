"""Watches, their state and the alert log in one SQLite file (``<data_dir>/watches.sqlite3``).

Why SQLite: watches are a handful of small rows that several processes on one data
directory share (``serve`` answers the Watch RPCs and streams alerts; ``ingest`` and
``worker`` evaluate watches as memories form), and the alert log must be durable and
deduplicated across restarts. SQLite gives exactly that with file locking, in WAL mode so
readers never wait for a writer. Alerts are keyed by their deterministic id
(core/watches.py): raising the same alert again (a restarted worker, two evaluators) is
an ``INSERT OR IGNORE`` that changes nothing, so nothing is delivered twice.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from episodic.core.errors import StoreError
from episodic.core.watches import Alert, Watch

_SCHEMA = """
CREATE TABLE IF NOT EXISTS watches (id TEXT PRIMARY KEY, body TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS watch_state (
    watch_id TEXT NOT NULL, stream_id TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (watch_id, stream_id));
CREATE TABLE IF NOT EXISTS alerts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, watch_id TEXT NOT NULL,
    stream_id TEXT NOT NULL, body TEXT NOT NULL, created_at REAL NOT NULL,
    webhook TEXT NOT NULL DEFAULT 'none', attempts INTEGER NOT NULL DEFAULT 0, next_at REAL);
CREATE INDEX IF NOT EXISTS alerts_webhook ON alerts (webhook, next_at);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
"""


class SqliteWatchStore:
    """WatchStore on a SQLite file; safe across threads (one lock) and processes (SQLite's)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=10.0, check_same_thread=False,
                                       isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the watch store {self.path}: {exc}") from None

    def _run(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"watch store {self.path}: {exc}") from None

    def _tx(self, statements: list[tuple[str, tuple]]) -> int:
        """Run statements in one transaction; returns the last statement's rowcount."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                count = 0
                for sql, args in statements:
                    count = self._db.execute(sql, args).rowcount
                self._db.execute("COMMIT")
                return count
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
                raise StoreError(f"watch store {self.path}: {exc}") from None

    _BUMP = ("INSERT INTO meta (k, v) VALUES ('watches', 1) ON CONFLICT(k) DO UPDATE SET v = v + 1", ())

    # -- watches ---------------------------------------------------------------------------
    def get_watch(self, watch_id: str) -> Watch | None:
        rows = self._run("SELECT body FROM watches WHERE id = ?", (watch_id,))
        return _watch(json.loads(rows[0][0])) if rows else None

    def add_watch(self, watch: Watch) -> None:
        body = json.dumps({**watch.public(), "webhook_secret": watch.webhook_secret})
        self._tx([("INSERT INTO watches (id, body, created_at) VALUES (?, ?, ?)", (watch.id, body, watch.created_at)),
                  self._BUMP])

    def remove_watch(self, watch_id: str) -> bool:
        removed = self._tx([("DELETE FROM watch_state WHERE watch_id = ?", (watch_id,)),
                            self._BUMP, ("DELETE FROM watches WHERE id = ?", (watch_id,))])
        return removed > 0

    def list_watches(self) -> list[Watch]:
        rows = self._run("SELECT body FROM watches ORDER BY created_at, id")
        return [_watch(json.loads(b)) for (b,) in rows]

    def watches_version(self) -> int:
        rows = self._run("SELECT v FROM meta WHERE k = 'watches'")
        return int(rows[0][0]) if rows else 0

    # -- per-stream state ------------------------------------------------------------------
    def get_state(self, watch_id: str, stream_id: str) -> dict[str, Any]:
        rows = self._run("SELECT body FROM watch_state WHERE watch_id = ? AND stream_id = ?", (watch_id, stream_id))
        return json.loads(rows[0][0]) if rows else {}

    def put_state(self, watch_id: str, stream_id: str, state: dict[str, Any]) -> None:
        self._run(
            "INSERT INTO watch_state (watch_id, stream_id, body) VALUES (?, ?, ?) "
            "ON CONFLICT(watch_id, stream_id) DO UPDATE SET body = excluded.body",
            (watch_id, stream_id, json.dumps(state)),
        )

    # -- alerts ----------------------------------------------------------------------------
    def add_alert(self, alert: Alert, webhook: bool) -> bool:
        alert.created_at = alert.created_at or time.time()
        body = json.dumps(alert.to_dict())
        with self._lock:
            added = self._tx([(
                "INSERT OR IGNORE INTO alerts (id, watch_id, stream_id, body, created_at, webhook, next_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (alert.id, alert.watch_id, alert.stream_id, body, alert.created_at,
                 "pending" if webhook else "none", alert.created_at),
            )])
            if added:
                alert.seq = int(self._run("SELECT seq FROM alerts WHERE id = ?", (alert.id,))[0][0])
        return bool(added)

    def alerts_since(self, seq: int, limit: int = 100) -> list[Alert]:
        rows = self._run("SELECT seq, body FROM alerts WHERE seq > ? ORDER BY seq LIMIT ?", (int(seq), int(limit)))
        return [_alert(s, b) for s, b in rows]

    def last_seq(self) -> int:
        rows = self._run("SELECT MAX(seq) FROM alerts")
        return int(rows[0][0] or 0)

    def due_webhooks(self, now: float, limit: int = 20, lease_s: float = 60.0) -> list[tuple[Alert, int]]:
        """Claims them too: their next attempt moves ``lease_s`` ahead in the same transaction,
        so two processes delivering from one store never send the same alert at once."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                rows = self._db.execute(
                    "SELECT seq, body, attempts FROM alerts WHERE webhook = 'pending' AND next_at <= ? "
                    "ORDER BY seq LIMIT ?", (now, int(limit)),
                ).fetchall()
                self._db.executemany("UPDATE alerts SET next_at = ? WHERE seq = ?", [(now + lease_s, r[0]) for r in rows])
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
                raise StoreError(f"watch store {self.path}: {exc}") from None
        return [(_alert(s, b), int(a)) for s, b, a in rows]

    def webhook_result(self, alert_id: str, delivered: bool, next_attempt_at: float | None) -> None:
        if delivered:
            state, next_at = "delivered", None
        elif next_attempt_at is None:
            state, next_at = "failed", None
        else:
            state, next_at = "pending", next_attempt_at
        self._run("UPDATE alerts SET webhook = ?, attempts = attempts + 1, next_at = ? WHERE id = ?",
                  (state, next_at, alert_id))

    def webhook_state(self, alert_id: str) -> tuple[str, int]:
        rows = self._run("SELECT webhook, attempts FROM alerts WHERE id = ?", (alert_id,))
        return (rows[0][0], int(rows[0][1])) if rows else ("", 0)

    def forget_alerts(self, stream_id: str, t_min: float | None = None, t_max: float | None = None) -> int:
        """Forgetting a stream or a stretch of it: its alerts overlapping the range go (they
        quote what was said and seen), and with the whole stream its watch state. Idempotent."""
        lo = float("-inf") if t_min is None else float(t_min)
        hi = float("inf") if t_max is None else float(t_max)
        rows = self._run("SELECT id, body FROM alerts WHERE stream_id = ?", (stream_id,))
        gone = [aid for aid, body in rows
                if (lambda d: d["t_end"] >= lo and d["t_start"] <= hi)(json.loads(body))]
        statements = [("DELETE FROM alerts WHERE id = ?", (aid,)) for aid in gone]
        if t_min is None and t_max is None:
            statements.append(("DELETE FROM watch_state WHERE stream_id = ?", (stream_id,)))
        if statements:
            self._tx(statements)
        return len(gone)

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()


def _watch(d: dict[str, Any]) -> Watch:
    return Watch(**{k: v for k, v in d.items() if k in Watch.__dataclass_fields__})


def _alert(seq: int, body: str) -> Alert:
    d = json.loads(body)
    d["seq"] = int(seq)
    return Alert(**{k: v for k, v in d.items() if k in Alert.__dataclass_fields__})
