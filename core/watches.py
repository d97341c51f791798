"""Standing queries (watches) and the alerts they raise: records and their validation.

A watch is a question asked once and answered every time a memory forms: *match* (a new
memory matches), *first* (the first match on a stream today, or ever), *again* (it recurs:
"the 3rd time this week"), *absent* (nothing matched for ``within_s`` of stream time, or by
a time of day) and *order* (``query`` happened and then ``then`` within ``within_s``).

An alert's id is derived from what it is about (the watch and the events it rests on), so
raising it twice, after a restart or from two processes, is the same alert: stores keep it
once and deliver it once.
"""

from __future__ import annotations

import hashlib
import re
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from episodic.core.durations import parse_duration
from episodic.core.errors import InputError

WATCH_KINDS = ("match", "first", "again", "absent", "order")
FIRST_PERIODS = ("day", "ever")
MAX_QUERY_CHARS = 500
MAX_WINDOW_S = 366 * 86400.0  # a year: longer windows are a typo, not a plan
MIN_WINDOW_S = 1.0
MAX_COOLDOWN_S = 7 * 86400.0
MAX_URL_CHARS = 2000
MAX_STREAMS = 100
_TIME_OF_DAY = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


@dataclass
class Watch:
    """A standing query. ``stream_ids`` empty: every stream the owner's key may see (the
    key's scope, fixed when the watch is created). ``key_id``: the API key that owns it."""

    id: str
    query: str
    kind: str = "match"
    stream_ids: list[str] = field(default_factory=list)
    within_s: float | None = None  # absent: the quiet window; again: the counting window; order: max gap
    by_time: str = ""  # absent: "HH:MM" local time of day by which a match is expected
    then: str = ""  # order: the query that must match after ``query``
    period: str = "day"  # first: "day" or "ever"
    cooldown_s: float = 60.0  # match/again: repeats closer than this (stream time) are one occurrence
    webhook_url: str = ""
    webhook_secret: str = ""  # HMAC-SHA256 key for the webhook's signature header
    key_id: str = ""
    created_at: float = 0.0

    def public(self) -> dict[str, Any]:
        """The watch as listings show it (never the webhook secret)."""
        return {
            "id": self.id, "query": self.query, "kind": self.kind, "stream_ids": list(self.stream_ids),
            "within_s": self.within_s, "by_time": self.by_time, "then": self.then, "period": self.period,
            "cooldown_s": self.cooldown_s, "webhook_url": self.webhook_url, "key_id": self.key_id,
            "created_at": self.created_at,
        }


@dataclass
class Alert:
    """What a watch raised: where and when, the events and segments it rests on, how sure."""

    id: str
    watch_id: str
    kind: str
    stream_id: str
    t_start: float
    t_end: float
    confidence: float
    message: str
    event_ids: list[str] = field(default_factory=list)
    segment_ids: list[str] = field(default_factory=list)
    snippet_uris: list[str] = field(default_factory=list)
    query: str = ""
    created_at: float = 0.0
    seq: int = 0  # position in the store's alert log (0 until stored)
    count: int = 1  # again: which occurrence this is

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "seq": self.seq, "watch_id": self.watch_id, "kind": self.kind, "query": self.query,
            "stream_id": self.stream_id, "t_start": round(self.t_start, 3), "t_end": round(self.t_end, 3),
            "confidence": round(self.confidence, 3), "message": self.message, "count": self.count,
            "event_ids": list(self.event_ids), "segment_ids": list(self.segment_ids),
            "snippet_uris": list(self.snippet_uris), "created_at": self.created_at,
        }


def alert_id(watch_id: str, *about: object) -> str:
    """The same watch about the same things → the same id (dedupe across restarts)."""
    text = "|".join([watch_id, *(str(a) for a in about)])
    return "al-" + hashlib.sha256(text.encode()).hexdigest()[:20]


def _query(text: Any, what: str) -> str:
    if not isinstance(text, str):
        raise InputError(f"{what} must be text, got {type(text).__name__}")
    clean = " ".join(text.split())
    if not clean:
        raise InputError(f"{what} is empty: say what to watch for, e.g. \"a delivery van arrives\"")
    if len(clean) > MAX_QUERY_CHARS:
        raise InputError(f"{what} is {len(clean)} characters; at most {MAX_QUERY_CHARS}")
    if any(ord(c) < 32 for c in clean):
        raise InputError(f"{what} contains control characters")
    return clean


def check_webhook_url(url: Any) -> str:
    """An http(s) URL with a host, or ""; InputError saying what is wrong otherwise."""
    if url in (None, ""):
        return ""
    if not isinstance(url, str) or len(url) > MAX_URL_CHARS:
        raise InputError(f"webhook URL must be text of at most {MAX_URL_CHARS} characters")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port  # ValueError on a bad port
    except ValueError:
        raise InputError(f"webhook URL is not a valid URL: {url[:100]!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"webhook URL must be http:// or https:// with a host, got {url[:100]!r}")
    if port == 0 or any(ord(c) < 33 for c in url):
        raise InputError(f"webhook URL is not a valid URL: {url[:100]!r}")
    return url


def validate_watch(w: Watch, check_stream: Any = None) -> Watch:
    """Normalise and check a watch before it is stored (InputError on anything wrong)."""
    w.query = _query(w.query, "query")
    if w.kind not in WATCH_KINDS:
        raise InputError(f"unknown watch kind {str(w.kind)[:40]!r}: use one of {', '.join(WATCH_KINDS)}")
    if w.within_s is not None:
        w.within_s = parse_duration(w.within_s, "within")
        if not MIN_WINDOW_S <= w.within_s <= MAX_WINDOW_S:
            raise InputError(f"within must be between {MIN_WINDOW_S:.0f} s and 366 days")
    w.cooldown_s = parse_duration(w.cooldown_s, "cooldown")
    if w.cooldown_s > MAX_COOLDOWN_S:
        raise InputError("cooldown must be at most 7 days")
    if w.kind == "order":
        w.then = _query(w.then, "then (the query that must follow)")
    elif w.then:
        raise InputError("--then is for --kind order only")
    if w.by_time and (w.kind != "absent" or not _TIME_OF_DAY.match(w.by_time)):
        raise InputError("--by takes a time of day HH:MM and is for --kind absent only")
    if w.kind == "absent" and w.within_s is None and not w.by_time:
        raise InputError("an absent watch needs --within DURATION (a quiet window) or --by HH:MM")
    if w.period not in FIRST_PERIODS:
        raise InputError(f"period must be one of {', '.join(FIRST_PERIODS)}")
    if not isinstance(w.stream_ids, list) or len(w.stream_ids) > MAX_STREAMS:
        raise InputError(f"a watch names at most {MAX_STREAMS} streams")
    if check_stream is not None:
        w.stream_ids = [check_stream(s) for s in w.stream_ids]
    w.stream_ids = list(dict.fromkeys(w.stream_ids))
    w.webhook_url = check_webhook_url(w.webhook_url)
    if not w.created_at:
        w.created_at = time.time()
    return w
