"""Records for store tests: two streams of memories with E_i, frames and events, their
overviews, and an exact comparison (shared by the store conformance suite and the unit tests
that use the in-memory store)."""

from __future__ import annotations

import numpy as np

from episodic.core.records import (
    EmbeddingEntry,
    FrameObservation,
    ShortTermMemory,
    SnippetRef,
    StreamOverview,
    ThetaEvent,
    TranscriptPiece,
    event_id,
    memory_id,
    normalise,
    overview_id,
)

TEXT_DIM = 8
FEATURE_DIM = 4
MODELS = {"embedder": "test-embedder-8", "describer": "test-describer-4", "asr": "test-asr"}

def make_memory(rng: np.random.Generator, stream_id: str, t0: float, n_vec: int = 3) -> ShortTermMemory:
    mid = memory_id(stream_id, t0)
    return ShortTermMemory(
        id=mid,
        stream_id=stream_id,
        t_start=t0,
        t_end=t0 + 7.25,
        vector=normalise(rng.standard_normal(TEXT_DIM)),
        embeddings=[
            EmbeddingEntry(
                t_start=t0 + i * 0.5,
                t_end=t0 + i * 0.5 + 1.0 / 3.0,
                modality=("visual", "speech", "audio")[i % 3],
                text=f"entry {i} – naïve café ✓",
                vector=normalise(rng.standard_normal(TEXT_DIM)),
            )
            for i in range(n_vec)
        ],
        transcript=[
            TranscriptPiece(t0 + 0.1, t0 + 1.9, "hello there"),
            TranscriptPiece(t0 + 2.0, t0 + 3.3, "général Kenobi"),
        ],
        frames=[
            FrameObservation(t0 + 0.5, [("cat", 0.75), ("sofa", 0.125)], ["red", "grey"], "EXIT", "a cat on a sofa"),
            FrameObservation(t0 + 4.0, [], [], "", "an empty room"),
        ],
        frame_features=[
            (t0 + 0.5, normalise(rng.standard_normal(FEATURE_DIM))),
            (t0 + 4.0, normalise(rng.standard_normal(FEATURE_DIM))),
        ],
        snippets=[SnippetRef(f"file:///snips/{stream_id}/{mid}.s.mp4", t0, t0 + 7.25)],
        metadata={"segments": 2, "models": {"asr": "x"}, "score": np.float32(0.5)},
        thumbnail_uri=f"file:///snips/{stream_id}/{mid}.s.jpg",
    )


def make_event(rng: np.random.Generator, m: ShortTermMemory) -> ThetaEvent:
    return ThetaEvent(
        id=event_id(m.stream_id, m.t_start),
        stream_id=m.stream_id,
        memory_id=m.id,
        t_start=m.t_start,
        t_end=m.t_end,
        summary=f"Someone talks in {m.stream_id} at {m.t_start:.0f} s.",
        summary_vector=normalise(rng.standard_normal(TEXT_DIM)),
        vector=m.vector,
        visual_context=[f.description for f in m.frames],
        audio_context=[p.text for p in m.transcript],
        metadata={"llm": "test"},
    )


def make_overview(
    rng: np.random.Generator, stream_id: str, t_start: float, t_end: float, scope: str = "stretch"
) -> StreamOverview:
    """The stream-wide overview (``scope`` "stream") or the stretch one starting at ``t_start``."""
    return StreamOverview(
        id=overview_id(stream_id, None if scope == "stream" else t_start),
        stream_id=stream_id,
        t_start=t_start,
        t_end=t_end,
        scope=scope,  # type: ignore[arg-type]
        text=f"In {stream_id} from {t_start:.0f} s: cooking – naïve café ✓",
        vector=normalise(rng.standard_normal(TEXT_DIM)),
        facets={"topics": ["cooking", f"{stream_id} {t_start:.0f}"], "people": ["a woman"], "sounds": []},
        events=int(t_end - t_start) // 10,
        updated_at=1_700_000_000.5 + t_start,
    )


def make_overviews(seed: int = 11) -> list[StreamOverview]:
    """Stream a: its overview and stretches at 0 s and 30 s; stream b: its overview (from its
    first memory at 5 s) and the stretch aligned at 0 s, which starts earlier but lists after
    the stream-wide overview. Returned in the listing order."""
    rng = np.random.default_rng(seed)
    return [
        make_overview(rng, "a", 0.0, 57.25, "stream"),
        make_overview(rng, "a", 0.0, 30.0),
        make_overview(rng, "a", 30.0, 57.25),
        make_overview(rng, "b", 5.0, 32.25, "stream"),
        make_overview(rng, "b", 0.0, 32.25),
    ]


def assert_overview_equal(got: StreamOverview, want: StreamOverview, with_vectors: bool = True) -> None:
    assert (got.id, got.stream_id, got.t_start, got.t_end, got.scope, got.text) == (
        want.id, want.stream_id, want.t_start, want.t_end, want.scope, want.text,
    )
    assert (got.facets, got.events, got.updated_at) == (want.facets, want.events, want.updated_at)
    assert got.vector.dtype == np.float32
    if with_vectors:
        np.testing.assert_array_equal(got.vector, want.vector)
    else:
        assert got.vector.size == 0


def assert_memory_equal(got: ShortTermMemory, want: ShortTermMemory, with_vectors: bool = True) -> None:
    assert (got.id, got.stream_id, got.t_start, got.t_end) == (want.id, want.stream_id, want.t_start, want.t_end)
    assert got.vector.dtype == np.float32
    np.testing.assert_array_equal(got.vector, want.vector)
    assert got.transcript == want.transcript
    assert got.frames == want.frames
    assert got.snippets == want.snippets
    assert got.thumbnail_uri == want.thumbnail_uri
    assert got.metadata == {"segments": 2, "models": {"asr": "x"}, "score": 0.5}
    assert got.transcript_text == want.transcript_text
    if not with_vectors:
        assert got.embeddings == [] and got.frame_features == []
        return
    assert len(got.embeddings) == len(want.embeddings)
    for g, w in zip(got.embeddings, want.embeddings, strict=True):
        assert (g.t_start, g.t_end, g.modality, g.text) == (w.t_start, w.t_end, w.modality, w.text)
        assert g.vector.dtype == np.float32
        np.testing.assert_array_equal(g.vector, w.vector)
    assert [t for t, _ in got.frame_features] == [t for t, _ in want.frame_features]
    for (_, g), (_, w) in zip(got.frame_features, want.frame_features, strict=True):
        np.testing.assert_array_equal(g, w)


def fill(store):
    """Two streams: a (6 memories, every 10 s) and b (3 memories), with their events."""
    rng = np.random.default_rng(7)
    memories = [make_memory(rng, "a", 10.0 * i) for i in range(6)] + [
        make_memory(rng, "b", 10.0 * i + 5) for i in range(3)
    ]
    events = [make_event(rng, m) for m in memories]
    store.upsert_memories(memories)
    store.upsert_events(events)
    return store, memories, events


