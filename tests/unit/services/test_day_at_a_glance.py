"""The day at a glance (issue 17, item 3): rolling summaries per stream and window, over a
generated hour of stored memories (episodic/glance_set.py: each 10-minute window has its own
theme, person, sign and sound), in the in-memory store with the hashing embedder.

The hour is stored as a live stream stores it: a minute at a time, the overviews refreshed at
every checkpoint from the checkpoint before, then once more from 0 at the stream's end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from episodic.components import Components
from episodic.config import Settings
from episodic.core.errors import InputError
from episodic.core.query import AskRequest, Pathway, QueryType, Scope
from episodic.core.records import StreamInfo, overview_id
from episodic.core.summaries import (
    SummariesRequest,
    parse_wall_clock,
    parse_window,
    parse_windows,
    summaries_request,
    window_name,
)
from episodic.glance_set import SEGMENT_S, WINDOW_S, GlanceWindow, glance_records, glance_window
from episodic.memory.in_memory_store import InMemoryStore
from episodic.memory.overview import compose_facets, read_sounds, read_tally
from episodic.memory.overview_windows import refresh_overviews, window_overview_id
from episodic.retrieval.window_scope import asked_time, asks_for_summary, mentioned_streams, resolve
from episodic.services.local import LocalMemoryService
from episodic.services.qa import MemoryQA
from tests.fakes import HashEmbedder, ScriptedLLM

pytestmark = pytest.mark.unit

SID = "cam2"
HOUR = 3600.0
CHECKPOINT_S = 60.0


class CountingStore(InMemoryStore):
    """The in-memory store, counting the memories each listing returns."""

    def __init__(self) -> None:
        super().__init__()
        self.memories_read = 0

    def list_memories(self, *args: Any, **kwargs: Any) -> Any:
        found = super().list_memories(*args, **kwargs)
        self.memories_read += len(found)
        return found


def _grow(c: Components, start_s: float, end_s: float, windows: str = "1h,1d") -> list[Any]:
    """Store [start_s, end_s) a checkpoint at a time, refreshing as the pipeline does; returns
    the memories stored."""
    memories, events, _ = glance_records(c.embedder, SID, start_s, end_s)
    per = int(CHECKPOINT_S / SEGMENT_S)
    for i in range(0, len(memories), per):
        c.store.upsert_memories(memories[i:i + per])
        c.store.upsert_events(events[i:i + per])
        refresh_overviews(c.store, c.embedder, SID, 600.0, since_s=memories[i].t_start, windows=windows)
    c.store.upsert_stream(StreamInfo(SID, t_end=end_s, memories=int(end_s // SEGMENT_S),
                                     events=int(end_s // SEGMENT_S)))
    return memories


@pytest.fixture()
def components(tmp_path: Path) -> Components:
    c = Components(Settings(data_dir=tmp_path, store="memory", relisten_max_memories=0))
    embedder = HashEmbedder()
    c.embedder = embedder  # cached properties: the fakes stand in for the models
    c.llm = ScriptedLLM()
    c.store = CountingStore()
    c.store.ensure_schema(embedder.dim, 4, models={"embedder": embedder.model_id})
    return c


@pytest.fixture()
def hour(components: Components) -> Components:
    _grow(components, 0.0, HOUR)
    refresh_overviews(components.store, components.embedder, SID, 600.0)  # the stream's end
    return components


def _summaries(c: Components, window: str = "", t_min: float | None = None, t_max: float | None = None) -> Any:
    with LocalMemoryService(c) as service:
        return service.list_summaries(summaries_request(SID, window, t_min, t_max))


def _truth(memories: list[Any], w: GlanceWindow) -> dict[str, float]:
    """Straight from the records: memories of the window naming its person, showing its sign,
    and seconds of its sound."""
    inside = [m for m in memories if w.start <= m.t_start < w.start + WINDOW_S]
    return {
        "name": sum(w.name in m.transcript_text for m in inside),
        "sign": sum(any(f.ocr_text == w.sign for f in m.frames) for m in inside),
        "sound": sum(o.t_end - o.t_start for m in inside for o in m.sounds),
        "memories": len(inside),
    }


# -- the windows ---------------------------------------------------------------------------------
def test_the_10m_1h_and_1d_windows_exist_and_cover_the_right_spans(hour: Components) -> None:
    result = _summaries(hour)
    assert result.windows == ["10m", "1h", "1d"] and result.wall_clock_start == ""
    by_size: dict[str, list[Any]] = {}
    for s in result.summaries:
        by_size.setdefault(s.window, []).append(s)
    assert list(by_size) == ["10m", "1h", "1d"]
    tens = by_size["10m"]
    assert [(s.t_start, s.t_end) for s in tens] == [(k * 600.0, (k + 1) * 600.0) for k in range(6)]
    assert [(s.covered_start, s.covered_end) for s in tens] == [(k * 600.0, (k + 1) * 600.0) for k in range(6)]
    assert all(s.memories == s.events == 60 for s in tens)
    assert [s.id for s in tens] == [overview_id(SID, k * 600.0) for k in range(6)]
    (h,) = by_size["1h"]
    assert (h.t_start, h.t_end, h.covered_end, h.memories, h.events) == (0.0, HOUR, HOUR, 360, 360)
    assert h.id == window_overview_id(SID, 0.0, HOUR) == "cam2@000000000000.o1h"
    (d,) = by_size["1d"]
    # the day holds one hour only: it says what that hour says and is not stored twice
    assert (d.t_start, d.t_end, d.memories, d.id) == (0.0, 86400.0, 360, "")
    assert d.said == h.said and d.topics == h.topics and d.on_screen == h.on_screen
    stored = {o.id: o.scope for o in hour.store.list_overviews(SID)}
    assert stored == {overview_id(SID): "stream", h.id: "window",
                      **{overview_id(SID, k * 600.0): "stretch" for k in range(6)}}
    # a time range keeps the windows that overlap it
    only = _summaries(hour, "10m", t_min=1300.0, t_max=2400.0)
    assert [s.t_start for s in only.summaries] == [1200.0, 1800.0, 2400.0]


def test_each_window_holds_the_facts_of_its_own_time_only(hour: Components) -> None:
    memories = hour.store.list_memories(SID)
    tens = _summaries(hour, "10m").summaries
    windows = [glance_window(k) for k in range(6)]
    for s, w in zip(tens, windows, strict=True):
        truth = _truth(memories, w)
        people = dict(s.people)
        assert people.get(w.name) == truth["name"] > 0, (w, s.people)
        assert dict(s.on_screen) == {w.sign: truth["sign"]}
        assert all(w.start <= t < w.start + WINDOW_S for t, _ in s.said) and len(s.said) >= 3
        others = [o for o in windows if o is not w]
        text = s.text.lower()
        assert not [o.name for o in others if o.name.lower() in text], s.text
        assert not [o.sign for o in others if o.sign.lower() in text], s.text
        assert not [x for o in others for x in o.words if x not in w.words and f" {x} " in f" {text} "], s.text
        heard = dict(s.heard)
        assert heard.get(w.sound, 0.0) == truth["sound"] if w.sound else set(heard) == {"speech"}
        assert f"{w.sign}\" ({truth['sign']:.0f} memories)" in s.text and f"{w.name} ({truth['name']:.0f} times)" in s.text
    (h,) = _summaries(hour, "1h").summaries
    assert {w.name for w in windows} <= dict(h.people).keys()
    assert dict(h.on_screen) == {w.sign: _truth(memories, w)["sign"] for w in windows}
    assert dict(h.heard)["music"] == sum(_truth(memories, w)["sound"] for w in windows if w.sound == "music")
    assert len({int(t // WINDOW_S) for t, _ in h.said}) == len(h.said) == 5  # one quote per window


def test_an_hour_merged_from_its_windows_counts_what_reading_every_memory_counts(hour: Components) -> None:
    """Merging the 10-minute tallies gives the counts of composing from all 360 memories."""
    memories = hour.store.list_memories(SID)
    direct = compose_facets(memories, 0.0, HOUR)
    (stored,) = [o for o in hour.store.list_overviews(SID) if o.scope == "window"]
    merged = stored.facets
    assert dict(read_tally(merged, "n_people")) == dict(read_tally(direct, "n_people"))
    assert dict(read_tally(merged, "n_text")) == dict(read_tally(direct, "n_text"))
    assert dict(read_tally(merged, "n_objects")) == dict(read_tally(direct, "n_objects"))
    direct_topics = dict(read_tally(direct, "n_topics"))
    assert all(direct_topics[w] == n for w, n in read_tally(merged, "n_topics")[:10])
    assert {k: s for k, s, _ in read_sounds(merged)} == pytest.approx({k: s for k, s, _ in read_sounds(direct)})
    assert merged["memories"] == ["360"] and stored.events == 360
    # the stream-wide overview is merged from the same stretches
    (stream,) = hour.store.list_overviews(SID, scope="stream")
    assert (stream.t_start, stream.t_end, stream.events) == (0.0, HOUR, 360)
    assert dict(read_tally(stream.facets, "n_text")) == dict(read_tally(direct, "n_text"))


def test_the_windows_update_as_the_stream_grows_and_a_checkpoint_reads_only_its_stretch(components: Components) -> None:
    c = components
    _grow(c, 0.0, 3000.0)
    (h,) = _summaries(c, "1h").summaries
    assert (h.memories, h.covered_end) == (300, 3000.0)
    assert glance_window(5).name not in dict(h.people)
    assert [s.t_start for s in _summaries(c, "10m").summaries] == [0.0, 600.0, 1200.0, 1800.0, 2400.0]
    before = {o.id: o.updated_at for o in c.store.list_overviews(SID)}
    # the next minute arrives: the checkpoint recomposes its stretch from its memories only
    memories, events, _ = glance_records(c.embedder, SID, 3000.0, 3060.0)
    c.store.upsert_memories(memories)
    c.store.upsert_events(events)
    c.store.memories_read = 0
    written = refresh_overviews(c.store, c.embedder, SID, 600.0, since_s=3000.0)
    assert c.store.memories_read <= 7  # its 6 (and the one ending where it starts), not 306
    assert {o.id for o in written} == {overview_id(SID, 3000.0), window_overview_id(SID, 0.0, HOUR), overview_id(SID)}
    after = {o.id: o.updated_at for o in c.store.list_overviews(SID)}
    assert all(after[i] == t for i, t in before.items() if i not in {o.id for o in written})
    _grow(c, 3060.0, HOUR)
    (h,) = _summaries(c, "1h").summaries
    assert (h.memories, h.covered_end) == (360, HOUR)
    assert glance_window(5).name in dict(h.people) and glance_window(5).sign in dict(h.on_screen)
    tens = _summaries(c, "10m").summaries
    assert tens[-1].t_start == 3000.0 and tens[-1].memories == 60
    # into the second hour: a new 1-hour window, and the day is now two hours merged (stored)
    _grow(c, HOUR, HOUR + 1200.0)
    sizes = {(s.window, s.t_start): s for s in _summaries(c).summaries}
    assert sizes[("1h", HOUR)].memories == 120 and sizes[("1h", 0.0)].memories == 360
    assert sizes[("1d", 0.0)].memories == 480 and sizes[("1d", 0.0)].id == window_overview_id(SID, 0.0, 86400.0)
    assert glance_window(6).name in dict(sizes[("1d", 0.0)].people)


def test_a_stream_overview_built_before_summary_windows_is_brought_up_to_date(components: Components) -> None:
    """Stretches stored without tallies (before issue 17) are recomposed once, at the next
    checkpoint, whatever ``since_s`` says."""
    c = components
    _grow(c, 0.0, 1200.0)
    old = [o for o in c.store.list_overviews(SID, with_vectors=True) if o.scope == "stretch"]
    for o in old:
        o.facets = {k: v for k, v in o.facets.items() if k in ("topics", "people", "objects", "text", "sounds", "tone", "opening")}
    c.store.upsert_overviews(old)
    assert "said" not in c.store.list_overviews(SID, scope="stretch")[0].facets
    refresh_overviews(c.store, c.embedder, SID, 600.0, since_s=1200.0)
    assert all("said" in o.facets for o in c.store.list_overviews(SID, scope="stretch"))


def test_a_wall_clock_start_is_said_and_unknown_windows_are_refused(hour: Components) -> None:
    hour.store.upsert_stream(StreamInfo(SID, t_end=HOUR, metadata={"wall_clock_start": "2024-05-01T09:30:00+02:00"}))
    result = _summaries(hour, "10m")
    assert result.wall_clock_start == "2024-05-01T09:30:00+02:00"
    first = result.summaries[0]
    assert (first.wall_start, first.wall_end) == ("2024-05-01T09:30:00+02:00", "2024-05-01T09:40:00+02:00")
    assert "09:30–09:40 on 2024-05-01 wall clock" in first.text
    with pytest.raises(InputError, match="no 45m summaries are kept"):
        _summaries(hour, "45m")
    with pytest.raises(InputError, match="a window is a number and a unit"):
        summaries_request(SID, "an hour")
    assert [s.window for s in _summaries(hour, t_min=HOUR + 600.0).summaries] == ["1d"]


def test_window_names_and_settings() -> None:
    assert [window_name(parse_window(x)) for x in ("10m", "60m", "1h", "24h", "90s", "2d")] == \
        ["10m", "1h", "1h", "1d", "90s", "2d"]
    assert parse_windows("1d, 1h,1h") == (3600.0, 86400.0) and parse_windows("") == ()
    assert parse_wall_clock(0) is not None and parse_wall_clock("yesterday") is None
    assert Settings().summary_windows == "1h,1d"
    assert any("summary_windows 45m" in p for p in Settings(summary_windows="45m").consolidation.problems())
    assert Settings(summary_windows="20m,2h").consolidation.problems() == []
    with pytest.raises(InputError):
        summaries_request("", "1h")
    assert summaries_request(SID, "60m") == SummariesRequest(SID, "1h")


# -- what a question names -----------------------------------------------------------------------
@pytest.mark.parametrize(("question", "kind", "a", "b"), [
    ("What happened in the last hour on cam2?", "last", 3600.0, 0.0),
    ("Summarise the past 10 minutes", "last", 600.0, 0.0),
    ("What happened between minute 10 and 20?", "range", 600.0, 1200.0),
    ("Summary of the first 5 minutes", "first", 300.0, 0.0),
    ("What happened between 0:10:00 and 0:30:00?", "range", 600.0, 1800.0),
    ("What happened in the second hour?", "range", 3600.0, 7200.0),
    ("What happened on camera 2 this morning?", "wall", 6.0, 12.0),
    ("Give me a recap from 9 to 11 am", "wall", 9.0, 11.0),
])
def test_the_time_a_question_names(question: str, kind: str, a: float, b: float) -> None:
    asked = asked_time(question)
    assert asked is not None and (asked.kind, asked.a, asked.b) == (kind, a, b)
    assert asks_for_summary(question)


def test_phrases_that_name_no_window_and_streams_named() -> None:
    assert asked_time("When does the night train leave?") is None
    assert asked_time("What is the station-cam recording mostly about?") is None
    assert not asks_for_summary("What is going on in the station-cam recording, overall?")
    streams = ["cam1", "cam2", "cam12", "north-cam-2", "kitchen-cam"]
    assert mentioned_streams("what happened on camera 2 this morning?", streams) == ["cam2", "north-cam-2"]
    assert mentioned_streams("summarise the last hour of kitchen cam", streams) == ["kitchen-cam"]
    morning = asked_time("this morning")
    assert morning is not None
    placed = resolve(morning, 8 * 3600.0, parse_wall_clock("2024-05-01T05:30:00+02:00"), "cam2")
    assert (placed.t_min, placed.t_max, placed.empty) == (1800.0, 23400.0, False)
    unplaced = resolve(morning, 3600.0, None, "cam2")
    assert (unplaced.t_min, unplaced.t_max) == (None, None) and "no wall-clock start" in unplaced.note


# -- SUMMARY questions ---------------------------------------------------------------------------
def _ask(c: Components, question: str, **kw: Any) -> Any:
    return MemoryQA(c, warm_after_request=False).ask_traced(AskRequest(question, **kw))


def test_a_summary_question_about_a_window_cites_that_window_and_its_events(hour: Components) -> None:
    w1, w0 = glance_window(1), glance_window(0)
    result, trace = _ask(hour, "What happened between minute 10 and 20 on cam2?")
    assert "windows" in trace.notes and result.pathway is Pathway.FAST
    assert result.query_type is QueryType.SUMMARY and result.confidence > 0.5
    assert w1.name in result.answer and w1.sign in result.answer
    assert w0.name not in result.answer and w0.sign not in result.answer
    window, *events = result.evidence
    assert window.text.startswith(f"[10m window {overview_id(SID, 600.0)}]") and window.segment_id == ""
    assert events and all(600.0 <= e.t_start < 1200.0 and e.segment_id for e in events)
    (ten,) = _summaries(hour, "10m", 600.0, 600.0).summaries
    quotes = [q.split(" …")[0] for _, q in ten.said]
    assert len(events) == 4 and all(any(q in e.text for q in quotes) for e in events)  # top_k 5

    result, _ = _ask(hour, "Summarise the last hour of stream cam2")
    assert result.evidence[0].text.startswith(f"[1h window {window_overview_id(SID, 0.0, HOUR)}]")
    assert all(glance_window(k).sign in result.answer for k in range(6))

    result, _ = _ask(hour, "What happened in the last 10 minutes on cam2?")
    w5 = glance_window(5)
    assert w5.sign in result.answer and w1.sign not in result.answer
    assert result.evidence[0].text.startswith(f"[10m window {overview_id(SID, 3000.0)}]")


def test_this_morning_needs_a_wall_clock_and_is_placed_with_one(hour: Components) -> None:
    result, _ = _ask(hour, "What happened on camera 2 this morning?")
    assert "no wall-clock start" in result.answer and result.evidence  # all of it, and says why
    hour.store.upsert_stream(StreamInfo(SID, t_end=HOUR, metadata={"wall_clock_start": "2024-05-01T11:40:00+00:00"}))
    # 11:40-12:40: the morning is its first 20 minutes
    result, _ = _ask(hour, "What happened on camera 2 this morning?")
    assert glance_window(0).sign in result.answer and glance_window(1).sign in result.answer
    assert glance_window(2).sign not in result.answer
    assert "11:40–12:00 on 2024-05-01 wall clock" in result.answer
    hour.store.upsert_stream(StreamInfo(SID, t_end=HOUR, metadata={"wall_clock_start": "2024-05-01T13:00:00+00:00"}))
    result, _ = _ask(hour, "What happened on camera 2 this morning?")
    assert result.confidence == 0.0 and "nothing this morning" in result.answer and not result.evidence


def test_other_questions_keep_the_usual_way(hour: Components) -> None:
    w1 = glance_window(1)
    for question, kw in [
        (f"What did {w1.name} say about the ladle?", {}),
        ("What is the cam2 recording mostly about?", {}),
        ("What happened in the last hour?", {"options": ("cooking", "sailing")}),
        # one moment placed against another, and a moment of the stream's own time
        ("What happened right after the screen went dark on cam2?", {}),
        ("What happened at the 20-minute mark on cam2?", {}),
        # one fact asked for, placed by its time phrase: not the window's summary
        ("Who is in charge of the ladle today?", {}),
        (f"When is {w1.name} seeing the baker today?", {}),
        ("How much did the bread cost this morning?", {}),
    ]:
        _, trace = _ask(hour, question, **kw)
        assert "windows" not in trace.notes, question
    # a stream outside the request's scope is not summarised
    _, trace = _ask(hour, "What happened in the last hour on cam2?", scope=Scope(stream_ids=("cam9",)))
    assert "windows" not in trace.notes


def test_the_start_of_a_recording_is_its_first_moments_not_its_window(hour: Components) -> None:
    """"What happened at the start of cam2?" is read off the recording's first moments, not
    answered with the summary of the window it opens ("the last hour" still is a window)."""
    result, trace = _ask(hour, "What happened at the start of cam2?")
    assert "windows" not in trace.notes and result.evidence, result
    assert result.evidence[0].t_start < 60.0 and not result.evidence[0].text.startswith("["), result.evidence[0]
