"""Paging through events: opaque page tokens bound to the query they came from, and pages read
in growing time windows so a page of a long stream does not read the whole stream."""

from __future__ import annotations

import base64
import hashlib
import json
import math
from typing import Any

import grpc

from episodic.core.records import ThetaEvent
from episodic.server_auth import ApiError

PAGE_SIZE_DEFAULT = 100
PAGE_SIZE_MAX = 500
MAX_PAGE_TOKEN_CHARS = 2048
_LIST_ALL = 1 << 62  # list_events' limit when the server pages by itself


# -- page tokens -------------------------------------------------------------------------------
def _query_fingerprint(streams: tuple[str, ...] | None, t_min: float | None, t_max: float | None) -> str:
    """Ties a page token to the query it came from: reusing it for another query is an error,
    not a silently wrong page."""
    raw = json.dumps([sorted(streams) if streams is not None else None, t_min, t_max])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _encode_token(last: tuple[str, float, str], fingerprint: str) -> str:
    raw = json.dumps([1, *last, fingerprint], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_token(token: str, fingerprint: str) -> tuple[str, float, str]:
    """The (stream_id, t_start, id) of the last event already returned."""
    invalid = ApiError(grpc.StatusCode.INVALID_ARGUMENT, "invalid page_token")
    if len(token) > MAX_PAGE_TOKEN_CHARS:
        raise invalid
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        version, sid, t, eid, fp = json.loads(raw)
    except (ValueError, TypeError):
        raise invalid from None
    if version != 1 or not all(isinstance(v, str) for v in (sid, eid, fp)):
        raise invalid
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        raise invalid
    if fp != fingerprint:
        raise ApiError(
            grpc.StatusCode.INVALID_ARGUMENT,
            "page_token belongs to a different query: repeat stream_ids, t_min and t_max unchanged",
        )
    return sid, float(t), eid


# -- event paging ------------------------------------------------------------------------------
EventKey = tuple[str, float, str]
WINDOW_S_PER_EVENT = 10.0  # first guess of stream seconds per event (segments last 5-10 s)
MAX_WINDOW_S = 1e7  # beyond this (about 4 months of stream time) read the rest of the stream


def _event_key(e: ThetaEvent) -> EventKey:
    """The listing order: (stream_id, t_start, id), as the store sorts."""
    return (e.stream_id, e.t_start, e.id)


def page_events(
    store: Any,
    streams: tuple[str, ...] | None,
    t_min: float | None,
    t_max: float | None,
    after: EventKey | None,
    limit: int,
) -> list[ThetaEvent]:
    """Up to ``limit`` events overlapping [t_min, t_max] whose key follows ``after``, in
    (stream_id, t_start, id) order; ``streams`` None means every stream.

    The store filters but neither sorts nor skips, so reading every match for every page would
    cost O(all events) per page (0.7 s per page at 5,000 events on Milvus Lite). With a known
    set of streams, each stream is read in time windows instead: a window "t_start <= hi"
    returns exactly a prefix of that stream's order, so it is widened (×4) only until it holds
    enough events, and the rest of a stream is read unbounded once the window passes the
    stream's recorded end (or there is no stream record), so live streams lose nothing. With
    no stream set (an all-streams key listing everything) the streams are not known up front,
    and the whole match is read and sorted.
    """
    if limit <= 0:
        return []
    if streams is None:
        rows = store.list_events(stream_id=None, t_min=t_min, t_max=t_max, limit=_LIST_ALL, with_vectors=False)
        return [e for e in rows if after is None or _event_key(e) > after][:limit]
    ends = {s.stream_id: s.t_end for s in store.list_streams()}
    out: list[ThetaEvent] = []
    for sid in sorted(streams):
        if after is not None and sid < after[0]:
            continue
        cursor = after if after is not None and sid == after[0] else None
        out += _stream_page(store, sid, t_min, t_max, cursor, limit - len(out), ends.get(sid))
        if len(out) >= limit:
            break
    return out[:limit]


def _stream_page(
    store: Any,
    sid: str,
    t_min: float | None,
    t_max: float | None,
    cursor: EventKey | None,
    need: int,
    stream_end: float | None,
) -> list[ThetaEvent]:
    """The first ``need`` events of one stream after ``cursor`` (see :func:`page_events`)."""
    lo = t_min
    if cursor is not None:  # later events start at or after the cursor, so they end after it
        lo = cursor[1] if lo is None else max(lo, cursor[1])
    anchor = lo if lo is not None else 0.0
    width = need * WINDOW_S_PER_EVENT
    while True:
        window_end = anchor + width
        final = (
            stream_end is None
            or window_end >= stream_end
            or (t_max is not None and window_end >= t_max)
            or width > MAX_WINDOW_S
        )
        hi = t_max if final else window_end
        rows = store.list_events(stream_id=sid, t_min=lo, t_max=hi, limit=_LIST_ALL, with_vectors=False)
        if cursor is not None:
            rows = [e for e in rows if _event_key(e) > cursor]
        if len(rows) >= need or final:
            return rows[:need]
        width *= 4


