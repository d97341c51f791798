"""Standing queries for the API and the CLI: who may add, list and remove which watch, and
the conversions between the records (core/watches.py) and their protobuf messages.

Ownership and scope: a watch belongs to the API key that added it (its key id) and covers
only streams that key may read; a scoped key that names no streams gets its whole scope,
fixed at creation. A key lists, removes and receives the alerts of its own watches; an
unscoped (admin) key sees all. Another key's watch answers NOT_FOUND, like a missing one.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from episodic.core.errors import InputError
from episodic.core.records import validate_stream_id
from episodic.core.watches import Alert, Watch, validate_watch
from episodic.proto.episodic.v1 import episodic_pb2 as pb

MAX_WATCHES_PER_KEY = 100
DEFAULT_COOLDOWN_S = 60.0


class WatchNotFound(LookupError):
    """No such watch for this caller (missing or another key's: the same answer)."""


class ScopeDenied(PermissionError):
    """The watch names streams the caller may not read."""


def watch_from_proto(msg: pb.Watch) -> Watch:
    return Watch(
        id="",
        query=msg.query,
        kind=msg.kind or "match",
        stream_ids=list(msg.stream_ids),
        within_s=msg.within_s if msg.within_s > 0 else None,
        by_time=msg.by_time,
        then=msg.then,
        period=msg.period or "day",
        cooldown_s=msg.cooldown_s if msg.cooldown_s > 0 else DEFAULT_COOLDOWN_S,
        webhook_url=msg.webhook_url,
    )


def watch_from_reply(msg: pb.Watch) -> Watch:
    """A watch as the server stored it (with its id, owner and times)."""
    w = watch_from_proto(msg)
    w.id, w.key_id, w.created_at = msg.id, msg.key_id, msg.created_at
    w.cooldown_s = msg.cooldown_s
    return w


def watch_to_proto(w: Watch) -> pb.Watch:
    return pb.Watch(
        id=w.id, query=w.query, kind=w.kind, stream_ids=w.stream_ids, within_s=w.within_s or 0.0,
        by_time=w.by_time, then=w.then, period=w.period, cooldown_s=w.cooldown_s, webhook_url=w.webhook_url,
        key_id=w.key_id, created_at=w.created_at,
    )


def alert_to_proto(a: Alert) -> pb.Alert:
    return pb.Alert(
        id=a.id, seq=a.seq, watch_id=a.watch_id, kind=a.kind, query=a.query, stream_id=a.stream_id,
        t_start=a.t_start, t_end=a.t_end, confidence=a.confidence, message=a.message, count=a.count,
        event_ids=a.event_ids, segment_ids=a.segment_ids, snippet_uris=a.snippet_uris, created_at=a.created_at,
    )


def alert_from_proto(msg: pb.Alert) -> Alert:
    return Alert(
        id=msg.id, watch_id=msg.watch_id, kind=msg.kind, stream_id=msg.stream_id, t_start=msg.t_start,
        t_end=msg.t_end, confidence=msg.confidence, message=msg.message, event_ids=list(msg.event_ids),
        segment_ids=list(msg.segment_ids), snippet_uris=list(msg.snippet_uris), query=msg.query,
        created_at=msg.created_at, seq=msg.seq, count=msg.count,
    )


class Watches:
    """Add, list and remove watches and read alerts, for one caller at a time.

    ``store`` is a WatchStore; ``key_id`` and ``streams`` describe the caller (streams None =
    every stream)."""

    def __init__(self, store_factory: Callable[[], object]) -> None:
        self._store_factory = store_factory

    @property
    def store(self):  # noqa: ANN201 - a WatchStore
        return self._store_factory()

    def add(self, watch: Watch, key_id: str, streams: frozenset[str] | None) -> tuple[Watch, str]:
        watch = validate_watch(watch, check_stream=validate_stream_id)
        if streams is not None:
            denied = [s for s in watch.stream_ids if s not in streams]
            if denied:
                raise ScopeDenied(f"this API key may not read stream(s) {', '.join(map(repr, denied[:5]))}")
            if not watch.stream_ids:
                if not streams:
                    raise ScopeDenied("this API key may not read any stream")
                watch.stream_ids = sorted(streams)
        owned = [w for w in self.store.list_watches() if w.key_id == key_id]
        if len(owned) >= MAX_WATCHES_PER_KEY:
            raise InputError(f"this key has {len(owned)} watches, the most one key may have; remove some first")
        watch.id = "w-" + secrets.token_hex(6)
        watch.key_id = key_id
        watch.webhook_secret = secrets.token_urlsafe(24) if watch.webhook_url else ""
        self.store.add_watch(watch)
        return watch, watch.webhook_secret

    def visible(self, key_id: str, streams: frozenset[str] | None) -> list[Watch]:
        return [w for w in self.store.list_watches() if streams is None or w.key_id == key_id]

    def remove(self, watch_id: str, key_id: str, streams: frozenset[str] | None) -> None:
        if not isinstance(watch_id, str) or not watch_id or len(watch_id) > 64:
            raise WatchNotFound("no such watch")
        if not any(w.id == watch_id for w in self.visible(key_id, streams)):
            raise WatchNotFound(f"no watch {watch_id!r} for this key")
        if not self.store.remove_watch(watch_id):
            raise WatchNotFound(f"no watch {watch_id!r} for this key")

    def alerts(self, after_seq: int, key_id: str, streams: frozenset[str] | None,
               watch_ids: list[str] | None = None, limit: int = 100) -> tuple[list[Alert], int]:
        """Alerts after ``after_seq`` the caller may see, and the log position read up to."""
        own = {w.id for w in self.visible(key_id, streams)}
        wanted = set(watch_ids) & own if watch_ids else own
        rows = self.store.alerts_since(after_seq, limit=limit)
        last = rows[-1].seq if rows else after_seq
        out = [a for a in rows if (streams is None and not watch_ids) or a.watch_id in wanted]
        out = [a for a in out if streams is None or a.stream_id in streams]
        return out, last
