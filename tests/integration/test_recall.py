"""Fuzzy recall over a generated multi-stream memory with the real text embedder (MiniLM).

The memory is written from the recall generator's own script (episodic/recall_generator.py):
eight streams in four pairs of twins that share a key moment and differ in what came before
or after it, their sound and their topic, and a query of each of RVMS-Bench's nine task types
per stream. The records hold what the script says was said, shown and heard, in the shapes the
encoder writes (transcript pieces, on-screen text, plain-word labels, sound observations,
composed summaries, overviews), so this tests Recall → Search → Verify → Localise itself;
perception (espeak-ng, Whisper, OCR) on the rendered recordings is what
benchmarks/bench_recall.py adds, too slow for every CI run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from episodic.components import Components
from episodic.config import Settings
from episodic.core.query import RecallRequest
from episodic.core.records import (
    EmbeddingEntry,
    FrameObservation,
    ShortTermMemory,
    SoundObservation,
    StreamInfo,
    ThetaEvent,
    TranscriptPiece,
    event_id,
    memory_id,
    normalise,
)
from episodic.memory.overview_windows import refresh_overviews
from episodic.memory.sound import DESCRIPTIONS
from episodic.memory.summary_composer import compose_summary
from episodic.memory.vision import describe_text
from episodic.recall_generator import RecallPlan, StreamPlan, estimated_seconds, plan_recall_set
from episodic.services.recall import FuzzyRecall

pytestmark = pytest.mark.integration


def _memories(embedder, stream: StreamPlan) -> tuple[list[ShortTermMemory], list[ThetaEvent]]:
    memories, events = [], []
    for scene in stream.scenes:
        b = scene.beat
        t0, t1 = b.t_start, b.t_start + b.duration_s
        labels = [(b.photo.label.removeprefix("a ").removeprefix("an "), 0.6)] if b.photo else []
        frame = FrameObservation(t0 + 1.0, labels=labels, ocr_text=b.sign)
        frame.description = describe_text(labels, ["grey"], b.sign, 60)
        transcript = [TranscriptPiece(t0 + 0.5, t1 - 0.5, b.said)] if b.said else []
        sounds = [SoundObservation(t0, t1, b.sound, 0.9, DESCRIPTIONS[b.sound])] if b.sound in DESCRIPTIONS else []
        texts = [(frame.t, t1, "visual", frame.description)]
        texts += [(p.t_start, p.t_end, "speech", p.text) for p in transcript]
        texts += [(o.t_start, o.t_end, "sound", o.description) for o in sounds]
        vectors = embedder.embed_texts([t for *_, t in texts])
        entries = [EmbeddingEntry(a, z, m, t, v) for (a, z, m, t), v in zip(texts, vectors, strict=True)]
        mid = memory_id(stream.stream_id, t0)
        m = ShortTermMemory(mid, stream.stream_id, t0, t1, normalise(np.mean(vectors, axis=0)), entries,
                            transcript, [frame], sounds=sounds)
        summary = compose_summary(m)
        s_vec = embedder.embed_texts([summary])[0]
        memories.append(m)
        events.append(ThetaEvent(event_id(stream.stream_id, t0), stream.stream_id, mid, t0, t1, summary,
                                 s_vec, m.vector, audio_context=[b.said] if b.said else []))
    return memories, events


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[FuzzyRecall, RecallPlan]:
    return _world(tmp_path_factory, series=False)


@pytest.fixture(scope="module")
def series_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[FuzzyRecall, RecallPlan]:
    return _world(tmp_path_factory, series=True)


def _world(tmp_path_factory: pytest.TempPathFactory, series: bool) -> tuple[FuzzyRecall, RecallPlan]:
    plan = plan_recall_set("dev", seed=3, streams=8, seconds=45.0, speech_s=estimated_seconds, series=series)
    c = Components(Settings(data_dir=Path(tmp_path_factory.mktemp("recall")), store="memory"))
    store, embedder = c.store, c.embedder
    store.ensure_schema(embedder.dim, 4, models={"embedder": embedder.model_id})
    for stream in plan.streams:
        memories, events = _memories(embedder, stream)
        store.upsert_memories(memories)
        store.upsert_events(events)
        store.upsert_stream(StreamInfo(stream.stream_id, t_end=memories[-1].t_end,
                                       memories=len(memories), events=len(events)))
        refresh_overviews(store, embedder, stream.stream_id, stretch_s=600.0)
    return FuzzyRecall(c), plan


def test_the_right_stream_first_and_the_moment_localised_for_most(world) -> None:
    recall, plan = world
    right = localised = twins_below = twin_queries = 0
    for qp in plan.queries:
        q = qp.query
        result = recall.recall(RecallRequest(q.description))
        ranked = [r.stream_id for r in result.results]
        first = result.results[0] if result.results else None
        right += bool(first and first.stream_id == q.stream_id)
        if q.moment is not None and first is not None and first.stream_id == q.stream_id:
            localised += q.moment.t_start - 2.0 <= first.t <= q.moment.t_end + 2.0
        if q.distractor:
            twin_queries += 1
            twins_below += q.stream_id in ranked and (
                q.distractor not in ranked or ranked.index(q.stream_id) < ranked.index(q.distractor))
    n, with_moment = len(plan.queries), sum(qp.query.moment is not None for qp in plan.queries)
    assert n == 72 and twin_queries >= 40
    assert right / n >= 0.8, f"right stream first for {right}/{n}"
    assert localised / with_moment >= 0.7, f"localised {localised}/{with_moment}"
    assert twins_below / twin_queries >= 0.8, f"twin below the right stream in {twins_below}/{twin_queries}"


def test_a_twin_that_shares_the_key_moment_but_not_what_came_after_is_rejected(world) -> None:
    recall, plan = world
    by_id = {s.stream_id: s for s in plan.streams}
    checked = 0
    for qp in plan.queries:
        q = qp.query
        if q.task != "KT" or not q.distractor:
            continue
        result = recall.recall(RecallRequest(key_moment=q.facets["key_moment"], temporal=q.facets["temporal"]))
        ranked = [r.stream_id for r in result.results]
        assert ranked and ranked[0] == q.stream_id, (q.description, ranked, result.rejected)
        twin = next((r for r in result.results if r.stream_id == q.distractor), None)
        first = result.results[0]
        # "early on" places the key moment instead of naming a second clue: then K tells them apart
        told_by = "temporal" if "temporal" in first.facets else "key_moment"
        assert twin is None or twin.facets[told_by] < first.facets[told_by]
        assert by_id[q.distractor].twin == q.stream_id
        checked += 1
    assert checked >= 4


def test_episodes_of_one_show_are_told_apart_by_what_came_around_the_moment_and_the_sound(
    series_world,
) -> None:
    """Twins that open and close alike and fit the same impression (two episodes of one show,
    ``--series``): one query string matches both, so the verified T and A facets decide."""
    recall, plan = series_world
    right = below = n = 0
    for qp in plan.queries:
        q = qp.query
        if not q.distractor:
            continue
        ranked = [r.stream_id for r in recall.recall(RecallRequest(q.description)).results]
        n += 1
        right += bool(ranked) and ranked[0] == q.stream_id
        below += q.stream_id in ranked and (
            q.distractor not in ranked or ranked.index(q.stream_id) < ranked.index(q.distractor))
    assert n >= 40
    # (47/48 here; without verifying T and A, 39/48: the single query string cannot do it)
    assert right / n >= 0.9, f"right episode first for {right}/{n}"
    assert below / n >= 0.9, f"the other episode below the right one in {below}/{n}"
