"""Standing queries evaluated as memories form (issue 17): each stored memory (provisional or
final) is offered to every watch whose streams it belongs to, and alerts are written to the
watch store, which deduplicates them by id (core/watches.py) and hands them to delivery.

Whether a memory *matches* a watch's query is decided the way ``episodic search`` ranks a
moment: every evidence unit of the memory (what was said, read, seen, heard, its summary)
is scored against the query by the same hybrid scorer (cosine + content words,
retrieval/detailed.py), and the best unit must reach ``watch_min_score``. The alert cites
that unit's time, the event and segment, and the snippet; its confidence is the score
scaled so that ``watch_full_score`` is 1.

Kinds (state per watch and stream is kept in the store, so restarts continue, never repeat):

* match: every matching memory, at most one alert per ``cooldown_s`` of stream time;
* first: the first match on a stream per local day (``period`` day) or ever;
* again: a match ≥ ``cooldown_s`` after the previous one is a new occurrence; from the
  second occurrence within ``within_s`` (default 7 days) each one alerts with its count;
* absent: ``within_s`` of stream time with memories but no match alerts once per quiet
  stretch; ``by_time`` (HH:MM, local): no match that day by then alerts once (see :meth:`tick`);
* order: ``query`` matched and then ``then`` matched later on the same stream, within
  ``within_s`` (default 1 h) after it; each match of ``query`` pairs with one ``then`` only.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from episodic.core.interfaces import TextEmbedder, WatchStore
from episodic.core.records import ShortTermMemory, ThetaEvent
from episodic.core.watches import Alert, Watch, alert_id
from episodic.retrieval.detailed import TextScorer, Unit, units_of
from episodic.retrieval.query_analysis import QueryAnalysis, QueryAnalyzer

log = logging.getLogger(__name__)

AGAIN_DEFAULT_WINDOW_S = 7 * 86400.0
ORDER_DEFAULT_WINDOW_S = 3600.0
ORDER_KEEP = 20  # earlier matches of an order watch's first query kept per stream
RELOAD_EVERY_S = 1.0  # how often the store is asked whether watches changed


@dataclass
class MatchResult:
    score: float
    unit: Unit | None

    def matched(self, floor: float) -> bool:
        return self.unit is not None and self.score >= floor


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _span(seconds: float) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{seconds:.0f} s"


class WatchEvaluator:
    """Offers formed memories to the stored watches; returns the alerts that are new."""

    def __init__(self, store: WatchStore, embedder: TextEmbedder, *, min_score: float = 0.33,
                 full_score: float = 0.7, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.scorer = TextScorer(embedder)
        self.analyzer = QueryAnalyzer(embedder)
        self.embedder = embedder
        self.min_score = min_score
        self.full_score = max(full_score, min_score + 1e-6)
        self.clock = clock
        self._watches: list[Watch] = []
        self._version: int | None = None
        self._checked_at = 0.0
        self._queries: dict[str, tuple[np.ndarray, QueryAnalysis]] = {}
        self._lock = threading.Lock()

    # -- watches ---------------------------------------------------------------------------
    def watches(self) -> list[Watch]:
        now = time.monotonic()
        if self._version is None or now - self._checked_at >= RELOAD_EVERY_S:
            self._checked_at = now
            version = self.store.watches_version()
            if version != self._version:
                self._watches = self.store.list_watches()
                self._version = version
        return self._watches

    def _prepared(self, query: str) -> tuple[np.ndarray, QueryAnalysis]:
        if query not in self._queries:
            q_vec = np.asarray(self.embedder.embed_texts([query])[0], dtype=np.float32)
            self._queries[query] = (q_vec, self.analyzer.analyze(query, q_vec))
        return self._queries[query]

    def score(self, query: str, units: list[Unit]) -> MatchResult:
        """The best unit of a memory for ``query`` and its score (0 and None: nothing bears on it)."""
        if not units:
            return MatchResult(0.0, None)
        q_vec, analysis = self._prepared(query)
        fresh = [Unit(**{k: getattr(u, k) for k in ("stream_id", "memory_id", "t_start", "t_end", "modality",
                                                     "text", "snippet_uri", "vector", "context_terms")})
                 for u in units]
        ranked = self.scorer.rank(analysis, q_vec, fresh)
        best = ranked[0]
        if best.lex_context <= 0 and best.cos <= 0:
            return MatchResult(0.0, None)
        return MatchResult(best.score, best)

    def confidence(self, score: float) -> float:
        return float(min(1.0, max(0.0, score / self.full_score)))

    # -- evaluation ------------------------------------------------------------------------
    def on_memory(self, memory: ShortTermMemory, event: ThetaEvent) -> list[Alert]:
        """Evaluate every watch on one stored memory; the alerts stored now (new ones only)."""
        with self._lock:
            watches = [w for w in self.watches() if not w.stream_ids or memory.stream_id in w.stream_ids]
            if not watches:
                return []
            units = units_of(memory, event, self.scorer.reuse_visual_vectors)
            out: list[Alert] = []
            for w in watches:
                try:
                    out.extend(self._evaluate(w, memory, event, units))
                except Exception:  # one broken watch must not silence the others
                    log.exception("watch %s failed on %s", w.id, memory.id)
            return out

    def _evaluate(self, w: Watch, m: ShortTermMemory, e: ThetaEvent, units: list[Unit]) -> list[Alert]:
        state = self.store.get_state(w.id, m.stream_id)
        before = dict(state)
        hit = self.score(w.query, units)
        matched = hit.matched(self.min_score)
        wall = float(m.metadata.get("ingested_at") or self.clock())
        if w.created_at and wall < w.created_at:
            wall = self.clock()  # a recording ingested later: its formation time is now
        alerts: list[Alert] = []
        kind = w.kind
        if kind == "match" and matched:
            last = state.get("last_alert_t")
            if last is None or m.t_start - last >= w.cooldown_s or state.get("last_alert_event") == e.id:
                alerts.append(self._alert(w, m, e, hit, (e.id,), f"matched {w.query!r}"))
                state["last_alert_t"], state["last_alert_event"] = hit.unit.t_start, e.id
        elif kind == "first" and matched:
            key = "ever" if w.period == "ever" else dt.datetime.fromtimestamp(wall).date().isoformat()
            if state.get("first") != key:
                when = "ever" if key == "ever" else f"on {key}"
                alerts.append(self._alert(w, m, e, hit, (m.stream_id, key), f"first match {when} of {w.query!r}"))
                state["first"] = key
        elif kind == "again" and matched:
            alerts += self._again(w, m, e, hit, state, wall)
        elif kind == "absent":
            alerts += self._absent(w, m, e, hit, matched, state, wall)
        elif kind == "order":
            alerts += self._order(w, m, e, units, hit, matched, state)
        if matched:
            state["last_match_t"] = max(float(state.get("last_match_t", -1e18)), hit.unit.t_end)
        if state != before:
            self.store.put_state(w.id, m.stream_id, state)
        return [a for a in alerts if self.store.add_alert(a, webhook=bool(w.webhook_url))]

    def _again(self, w: Watch, m: ShortTermMemory, e: ThetaEvent, hit: MatchResult,
               state: dict[str, Any], wall: float) -> list[Alert]:
        window = w.within_s or AGAIN_DEFAULT_WINDOW_S
        occ = [o for o in state.get("occurrences", []) if wall - o[0] <= window]
        if any(o[1] == e.id for o in occ):
            state["occurrences"] = occ
            return []
        last = state.get("last_match_t")
        if last is not None and hit.unit.t_start - last < w.cooldown_s and occ:
            state["occurrences"] = occ
            return []  # the same occurrence going on
        occ.append([wall, e.id])
        state["occurrences"] = occ
        n = len(occ)
        if n < 2:
            return []
        msg = f"{w.query!r} again: the {_ordinal(n)} time in {_span(window)}"
        alert = self._alert(w, m, e, hit, (e.id,), msg)
        alert.count = n
        return [alert]

    def _absent(self, w: Watch, m: ShortTermMemory, e: ThetaEvent, hit: MatchResult, matched: bool,
                state: dict[str, Any], wall: float) -> list[Alert]:
        if matched:
            days = state.get("matched_days", [])
            today = dt.datetime.fromtimestamp(wall).date().isoformat()
            if today not in days:
                state["matched_days"] = (days + [today])[-8:]
        if w.within_s is None:
            return []
        state.setdefault("from_t", m.t_start)
        if matched:
            return []
        quiet_from = max(float(state["from_t"]), float(state.get("last_match_t", state["from_t"])))
        if m.t_end - quiet_from < w.within_s or state.get("alerted_from") == quiet_from:
            return []
        state["alerted_from"] = quiet_from
        msg = f"nothing matched {w.query!r} for {_span(w.within_s)} of {m.stream_id} (since t={quiet_from:.0f} s)"
        alert = self._alert(w, m, e, None, (m.stream_id, round(quiet_from, 3)), msg)
        alert.t_start, alert.t_end = quiet_from, m.t_end
        return [alert]

    def _order(self, w: Watch, m: ShortTermMemory, e: ThetaEvent, units: list[Unit], hit: MatchResult,
               matched: bool, state: dict[str, Any]) -> list[Alert]:
        earlier = state.get("first_matches", [])
        if matched and not any(x[2] == e.id for x in earlier):
            entry = [hit.unit.t_start, hit.unit.t_end, e.id, m.id, self.confidence(hit.score)]
            earlier = (earlier + [entry])[-ORDER_KEEP:]
            state["first_matches"] = earlier
        then = self.score(w.then, units)
        if not then.matched(self.min_score):
            return []
        window = w.within_s or ORDER_DEFAULT_WINDOW_S
        before = [x for x in earlier if x[0] < then.unit.t_start and then.unit.t_start - x[1] <= window]
        if not before:
            return []
        x = before[-1]
        # each earlier match pairs with the first later one only ("the van came after the boats")
        state["first_matches"] = [y for y in earlier if y[2] != x[2]]
        msg = f"{w.query!r} and then {w.then!r} ({then.unit.t_start - x[0]:.0f} s later)"
        alert = self._alert(w, m, e, then, (x[2], e.id), msg)
        alert.t_start = x[0]
        alert.event_ids = list(dict.fromkeys([x[2], e.id]))
        alert.segment_ids = list(dict.fromkeys([x[3], m.id]))
        alert.confidence = min(alert.confidence, float(x[4]))
        return [alert]

    def tick(self, now: float | None = None, streams: list[str] | None = None) -> list[Alert]:
        """Deadlines that pass without a memory forming: an *absent* watch with ``by_time``
        whose stream had no match today by then. ``streams``: the streams to check for
        watches that name none (default: those the watch has seen)."""
        now = self.clock() if now is None else now
        out: list[Alert] = []
        with self._lock:
            for w in self.watches():
                if w.kind != "absent" or not w.by_time:
                    continue
                hour, minute = (int(x) for x in w.by_time.split(":"))
                local = dt.datetime.fromtimestamp(now)
                deadline = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
                if local < deadline or deadline.timestamp() < w.created_at:
                    continue
                today = local.date().isoformat()
                for sid in w.stream_ids or streams or []:
                    state = self.store.get_state(w.id, sid)
                    if today in state.get("matched_days", []) or state.get("by_alerted") == today:
                        continue
                    state["by_alerted"] = today
                    self.store.put_state(w.id, sid, state)
                    alert = Alert(
                        id=alert_id(w.id, sid, today), watch_id=w.id, kind=w.kind, stream_id=sid,
                        t_start=0.0, t_end=0.0, confidence=1.0, query=w.query, created_at=now,
                        message=f"nothing matched {w.query!r} on {sid} by {w.by_time} ({today})",
                    )
                    if self.store.add_alert(alert, webhook=bool(w.webhook_url)):
                        out.append(alert)
        return out

    def _alert(self, w: Watch, m: ShortTermMemory, e: ThetaEvent, hit: MatchResult | None,
               about: tuple[object, ...], message: str) -> Alert:
        unit = hit.unit if hit is not None else None
        evidence = f": {unit.text[:160]!r} at t={unit.t_start:.1f} s" if unit is not None else ""
        return Alert(
            id=alert_id(w.id, *about),
            watch_id=w.id,
            kind=w.kind,
            stream_id=m.stream_id,
            t_start=unit.t_start if unit is not None else m.t_start,
            t_end=unit.t_end if unit is not None else m.t_end,
            confidence=self.confidence(hit.score) if hit is not None else 1.0,
            message=message + evidence,
            event_ids=[e.id],
            segment_ids=[m.id],
            snippet_uris=[r.uri for r in m.snippets],
            query=w.query,
            created_at=self.clock(),
        )
