"""Fuzzy recall in seconds: overviews composed from memories, and Recall → Search → Verify over
the in-memory store with a hashing embedder (tests/fakes.py).

The streams are written so that only the facet under test can tell them apart: two kitchens
where a cat sits on the counter, one talking about the oven afterwards and one about the
fridge; a garden with music at its start and one with an engine; a birthday party and a
plumbing repair that both mention the kitchen.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from episodic.components import Components
from episodic.config import Settings
from episodic.core.errors import InputError
from episodic.core.query import RecallRequest, Scope
from episodic.core.records import (
    EmbeddingEntry,
    FrameObservation,
    ShortTermMemory,
    SoundObservation,
    ThetaEvent,
    TranscriptPiece,
    event_id,
    memory_id,
    overview_id,
)
from episodic.memory.in_memory_store import InMemoryStore
from episodic.memory.overview import compose_facets
from episodic.memory.overview_windows import refresh_overviews
from episodic.memory.summary_composer import content_words, source_text
from episodic.services.recall import FuzzyRecall
from tests.fakes import HashEmbedder, ScriptedLLM

pytestmark = pytest.mark.unit

SEG_S = 10.0
# stream → [(said, on screen, sound kind)], one memory per SEG_S seconds
STREAMS: dict[str, list[tuple[str, str, str]]] = {
    "kitchen-a": [
        ("Welcome to my kitchen, today we bake bread for the family.", "", ""),
        ("Look, the cat is sitting on the kitchen counter again.", "", ""),
        ("Now we preheat the oven to two hundred degrees.", "", ""),
        ("The bread goes into the oven for forty minutes.", "", ""),
    ],
    "kitchen-b": [
        ("Hello and welcome, this is my small apartment kitchen.", "", ""),
        ("Look, the cat is sitting on the kitchen counter again.", "", ""),
        ("The fridge is almost empty, we need milk and butter.", "", ""),
        ("Let me clean the fridge shelves before shopping.", "", ""),
    ],
    "garden-music": [
        ("", "", "music"),
        ("These roses need water every morning in the summer.", "", ""),
        ("The tomatoes are growing well near the fence.", "", ""),
    ],
    "garden-engine": [
        ("", "", "engine"),
        ("These roses need water every morning in the summer.", "", ""),
        ("The lawn mower is parked next to the shed.", "", ""),
    ],
    "party": [
        ("Happy birthday Maria, we are so happy you are here!", "HAPPY BIRTHDAY", ""),
        ("Let us cut the cake, what a wonderful party.", "", ""),
        ("", "", "applause"),
    ],
    "repair": [
        ("The pipe under the kitchen sink is leaking again.", "", ""),
        ("I will replace the washer with a new one.", "PLUMBING 101", ""),
        ("The leak is fixed, the sink is dry now.", "", ""),
    ],
}
SOUND_TEXT = {"music": "music playing", "engine": "engine running", "applause": "applause"}


def _memory(embedder: HashEmbedder, sid: str, i: int, said: str, shown: str, sound: str
            ) -> tuple[ShortTermMemory, ThetaEvent]:
    t0 = i * SEG_S
    entries: list[EmbeddingEntry] = []
    texts = [x for x in (said, f'on screen: "{shown}"' if shown else "", SOUND_TEXT.get(sound, "")) if x]
    for text in texts:
        modality = "speech" if text == said else ("audio" if sound and text == SOUND_TEXT[sound] else "visual")
        entries.append(EmbeddingEntry(t0, t0 + SEG_S, modality, text, embedder.embed_texts([text])[0]))
    summary = " ".join(texts) or "nothing visible and no speech"
    vec = embedder.embed_texts([summary])[0]
    m = ShortTermMemory(
        id=memory_id(sid, t0), stream_id=sid, t_start=t0, t_end=t0 + SEG_S, vector=vec, embeddings=entries,
        transcript=[TranscriptPiece(t0 + 0.5, t0 + 9.0, said)] if said else [],
        frames=[FrameObservation(t0 + 5.0, ocr_text=shown, description=f'on screen: "{shown}"' if shown else "")],
        sounds=[SoundObservation(t0, t0 + SEG_S, sound, 0.9, SOUND_TEXT[sound])] if sound else [],
    )
    e = ThetaEvent(event_id(sid, t0), sid, m.id, t0, t0 + SEG_S, summary, vec, vec, audio_context=[said])
    return m, e


@pytest.fixture()
def components(tmp_path: Path) -> Components:
    c = Components(Settings(data_dir=tmp_path, store="memory", relisten_max_memories=0))
    embedder = HashEmbedder()
    c.embedder = embedder  # cached properties: the fakes stand in for the models
    c.llm = ScriptedLLM()
    store = c.store
    assert isinstance(store, InMemoryStore)
    store.ensure_schema(embedder.dim, 4, models={"embedder": embedder.model_id})
    from episodic.core.records import StreamInfo

    for sid, scenes in STREAMS.items():
        pairs = [_memory(embedder, sid, i, *scene) for i, scene in enumerate(scenes)]
        store.upsert_memories([m for m, _ in pairs])
        store.upsert_events([e for _, e in pairs])
        store.upsert_stream(StreamInfo(sid, t_end=len(scenes) * SEG_S, memories=len(pairs), events=len(pairs)))
        refresh_overviews(store, embedder, sid, stretch_s=600.0)
    return c


@pytest.fixture()
def recall(components: Components) -> FuzzyRecall:
    return FuzzyRecall(components)


# -- overviews ----------------------------------------------------------------------------------
def test_an_overview_says_only_what_the_memory_holds(components: Components) -> None:
    store = components.store
    memories = store.list_memories("party")
    [ov] = store.list_overviews("party", scope="stream")
    source = {w for m in memories for w in content_words(source_text(m))}
    template = {"about", "opens", "with", "named", "tone", "cheerful", "hardly", "any", "some",
                "throughout", "start", "end", "middle", "applause", "music", "engine", "loud", "noise"}
    invented = [w for w in content_words(ov.text) if w not in source and w not in template]
    assert not invented, ov.text
    assert "Maria" in ov.facets["people"]
    assert "HAPPY BIRTHDAY" in ov.facets["text"]
    assert any(t.startswith("cheerful") for t in ov.facets["tone"])
    assert "applause at the end" in ov.facets["sounds"]


def test_sounds_are_placed_where_they_were_heard() -> None:
    embedder = HashEmbedder()
    ms = [_memory(embedder, "g", i, *scene)[0] for i, scene in enumerate(STREAMS["garden-music"])]
    assert "music at the start" in compose_facets(ms, 0.0, 30.0)["sounds"]


def test_a_growing_stream_updates_its_overviews(components: Components) -> None:
    """A live stream: more memories arrive past the first stretch; the stream overview is
    replaced (same id) and a second stretch appears."""
    store, embedder = components.store, components.embedder
    before = {o.id: o for o in store.list_overviews("repair")}
    assert set(before) == {overview_id("repair"), overview_id("repair", 0.0)}
    late = _memory(embedder, "repair", 70, "The new tap in the bathroom drips now.", "", "")
    store.upsert_memories([late[0]])
    store.upsert_events([late[1]])
    refresh_overviews(store, embedder, "repair", stretch_s=600.0, since_s=600.0)
    after = {o.id: o for o in store.list_overviews("repair")}
    # two stretches in the first hour: its summary window (issue 17) is stored too
    assert set(after) == set(before) | {overview_id("repair", 600.0), overview_id("repair", 0.0) + "1h"}
    assert after[overview_id("repair", 0.0) + "1h"].scope == "window"
    assert after[overview_id("repair")].t_end == pytest.approx(710.0)
    assert after[overview_id("repair")].updated_at > before[overview_id("repair")].updated_at
    assert "bathroom" in after[overview_id("repair", 600.0)].text
    assert after[overview_id("repair", 0.0)].text == before[overview_id("repair", 0.0)].text


# -- recall -------------------------------------------------------------------------------------
def test_key_moment_then_temporal_picks_the_twin_that_talked_about_the_oven(recall: FuzzyRecall) -> None:
    r = recall.recall(RecallRequest("the cat was on the kitchen counter, and then they talked about the oven"))
    assert r.results and r.results[0].stream_id == "kitchen-a"
    top = r.results[0]
    assert top.t_start <= 15.0 <= top.t_end  # the cat's segment, not the oven's
    assert set(top.facets) == {"key_moment", "temporal"}
    twin = [x for x in r.results if x.stream_id == "kitchen-b"]
    assert not twin or twin[0].confidence < top.confidence


def test_the_same_key_moment_with_the_other_clue_picks_the_other_twin(recall: FuzzyRecall) -> None:
    r = recall.recall(RecallRequest(key_moment="the cat on the kitchen counter", temporal="after that the fridge"))
    assert r.results[0].stream_id == "kitchen-b"


def test_a_before_clue_must_come_before(recall: FuzzyRecall) -> None:
    """'before the cat, someone baked bread': true of kitchen-a, whose bread talk came first."""
    r = recall.recall(RecallRequest(key_moment="the cat on the kitchen counter", temporal="before that, baking bread"))
    assert r.results[0].stream_id == "kitchen-a"


def test_a_sound_clue_is_checked_against_what_was_heard(recall: FuzzyRecall) -> None:
    r = recall.recall(RecallRequest(key_moment="watering the roses", audio="music at the start"))
    assert r.results[0].stream_id == "garden-music"
    assert r.results[0].facets["audio"] == pytest.approx(1.0)
    losers = [x for x in r.results if x.stream_id == "garden-engine"]
    assert not losers or losers[0].facets["audio"] < 0.5


def test_a_global_impression_finds_the_recording_it_describes(recall: FuzzyRecall) -> None:
    r = recall.recall(RecallRequest(global_impression="a cheerful birthday party with cake"))
    assert r.results[0].stream_id == "party"
    assert r.results[0].facets["global"] > 0.5


def test_scope_keeps_other_streams_out(recall: FuzzyRecall) -> None:
    r = recall.recall(RecallRequest("the cat on the kitchen counter", scope=Scope(stream_ids=("kitchen-b", "repair"))))
    assert r.results and {x.stream_id for x in r.results} <= {"kitchen-b", "repair"}
    assert r.results[0].stream_id == "kitchen-b"


def test_nothing_in_scope_is_an_empty_answer(recall: FuzzyRecall) -> None:
    r = recall.recall(RecallRequest("the cat on the counter", scope=Scope(stream_ids=("no-such-stream",))))
    assert r.results == []


@pytest.mark.parametrize("req", [
    RecallRequest(),
    RecallRequest("   "),
    RecallRequest(description=42),  # type: ignore[arg-type]
    RecallRequest("x" * 2001),
    RecallRequest("a cat", top_k=0),
])
def test_bad_requests_say_what_is_wrong(recall: FuzzyRecall, req: RecallRequest) -> None:
    with pytest.raises(InputError):
        recall.recall(req)


def test_a_before_after_clue_without_a_key_moment_is_refused(recall: FuzzyRecall) -> None:
    with pytest.raises(InputError, match="key moment"):
        recall.recall(RecallRequest(temporal="then they talked about the oven"))


def test_a_description_of_something_never_recorded_gets_nothing(recall: FuzzyRecall) -> None:
    """Facet scores are relative to the best match in scope; without the absolute check the
    least-bad stream would be offered as if it matched."""
    r = recall.recall(RecallRequest("a purple elephant juggling on a submarine"))
    assert r.results == []
    assert any("nothing in memory matches" in x for x in r.rejected)
