"""Fast retrieval (HippoMM C.2, Φ_fast): answer from the ThetaEvent summaries alone.

The question's embedding is searched against the summary embeddings (top ``fast_top_k``);
the summaries, ranked by the same hybrid score as every other stage, go to the model with
the Table 7 style prompt. The answer's confidence is computed by
:meth:`reasoning.answer.Answerer.assess` from the model's own report *and* the retrieval
evidence, so the pathway escalates to detailed recall whenever the summaries do not hold
the answer, even when the model sounds sure.
"""

from __future__ import annotations

import numpy as np

from episodic.config import RetrievalSettings
from episodic.core.interfaces import QueryStore
from episodic.core.query import QueryType, Scope
from episodic.core.records import ThetaEvent
from episodic.retrieval.detailed import (
    POSITION_WINDOW_S,
    MemoryReader,
    TextScorer,
    Unit,
    apply_position,
    snippet_for,
    stream_terms,
)
from episodic.retrieval.query_analysis import QueryAnalysis, content_terms, overlap

GIST_CANDIDATES = 64  # summaries considered for a gist question (spread over the recording)
NEAR_REPEAT = 0.8  # summaries sharing this share of their content words count as one


def summary_units(events: list[tuple[ThetaEvent, float]], reader: MemoryReader) -> list[Unit]:
    """One evidence unit per event: its summary over its memory's span, with the snippet of
    that memory. Context is the stream name only: the fast path sees summaries, nothing else."""
    kept = [e for e, _ in events if e.summary.strip()]
    for event in kept:
        reader.remember_event(event)
    reader.prefetch([e.memory_id for e in kept], events=False)
    out = []
    for event in kept:
        memory = reader.memory(event.memory_id)
        vec = np.asarray(event.summary_vector, dtype=np.float32)
        out.append(
            Unit(
                stream_id=event.stream_id,
                memory_id=event.memory_id,
                t_start=event.t_start,
                t_end=event.t_end,
                modality="summary",
                text=" ".join(event.summary.split()),
                snippet_uri=snippet_for(memory, event.t_start, event.t_end) if memory else "",
                vector=vec if vec.size else None,
                context_terms=frozenset(stream_terms(event.stream_id)),
            )
        )
    return out


def position_events(store: QueryStore, scope: Scope, analysis: QueryAnalysis, reader: MemoryReader) -> list[ThetaEvent]:
    """The events at the end (or start) of each stream in scope, for "what happened last"."""
    if analysis.position is None:
        return []
    out: list[ThetaEvent] = []
    for sid in reader.streams_in(scope):
        end = reader.stream_end(sid)
        if end is None:
            continue
        lo = scope.t_min if scope.t_min is not None else 0.0
        hi = end if scope.t_max is None else min(end, scope.t_max)
        if analysis.position == "end":
            lo = max(lo, hi - POSITION_WINDOW_S)
        else:
            hi = min(hi, lo + POSITION_WINDOW_S)
        if hi >= lo:
            out += store.list_events(sid, t_min=lo, t_max=hi, limit=32)
    return out


def gist_selection(units: list[Unit], spoken: set[str], k: int) -> list[Unit]:
    """For "what is this about": up to ``k`` summaries spread evenly over time, preferring
    those of moments where something was said (they carry the content; picture-only ones
    mostly repeat the scene), without near-repeats. Returned in time order."""
    distinct: list[Unit] = []
    for u in sorted(units, key=lambda u: (u.memory_id not in spoken, -u.score)):
        terms = set(content_terms(u.text))
        if any(overlap(list(terms), set(content_terms(d.text))) >= NEAR_REPEAT for d in distinct if terms):
            continue
        distinct.append(u)
    pool = [u for u in distinct if u.memory_id in spoken] or distinct
    if len(pool) < k:
        pool += [u for u in distinct if u not in pool][: k - len(pool)]
    pool.sort(key=lambda u: (u.stream_id, u.t_start))
    if len(pool) <= k:
        return pool
    picks = np.linspace(0, len(pool) - 1, k).round().astype(int)
    return [pool[i] for i in dict.fromkeys(picks.tolist())]


class FastRetrieval:
    def __init__(self, store: QueryStore, scorer: TextScorer, settings: RetrievalSettings) -> None:
        self.store = store
        self.scorer = scorer
        self.settings = settings

    def search(
        self, analysis: QueryAnalysis, q_vec: np.ndarray, scope: Scope, reader: MemoryReader
    ) -> tuple[list[tuple[ThetaEvent, float]], list[Unit]]:
        """The nearest summaries in scope, as ranked units (no model call)."""
        k = self.settings.fast_top_k
        gist = analysis.query_type is QueryType.SUMMARY and not analysis.terms
        events = self.store.search_events(
            q_vec,
            top_k=GIST_CANDIDATES if gist else k,
            stream_ids=scope.stream_ids,
            t_min=scope.t_min,
            t_max=scope.t_max,
        )
        events += [(e, 0.0) for e in position_events(self.store, scope, analysis, reader)]
        seen: set[str] = set()
        events = [(e, sc) for e, sc in events if not (e.id in seen or seen.add(e.id))]
        units = summary_units(events, reader)
        ranked = self.scorer.rank(analysis, q_vec, units, prefer=("summary",))
        ranked = apply_position(ranked, analysis, reader, scope)
        if gist:
            spoken = {e.memory_id for e, _ in events if e.audio_context}
            ranked = gist_selection(ranked, spoken, k)
        return events, ranked
