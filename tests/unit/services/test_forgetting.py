"""Forgetting on purpose (services/forgetting.py) over the in-memory store and real snippet
files on disk: what a range and a whole-stream forget remove, the audit log, crash recovery,
retention with an injected clock, and the guard a worker writes through."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from episodic.config import Settings
from episodic.core.errors import InputError
from episodic.core.records import SnippetRef, StreamInfo, TranscriptPiece, overview_id
from episodic.memory.in_memory_store import InMemoryStore
from episodic.memory.overview_windows import refresh_overviews
from episodic.memory.snippet_store import FileSnippetStore
from episodic.services.forget_guard import GuardedStore
from episodic.services.forgetting import (
    DAY_S,
    ForgetBooks,
    Forgetter,
    StreamNotFound,
    check_forget_range,
)
from tests.fakes import HashEmbedder
from tests.store_fixtures import FEATURE_DIM, MODELS, TEXT_DIM, make_event, make_memory

NOW = 1_800_000_000.0
STRETCH_S = 20.0


class World:
    """An in-memory store with streams whose memories name real snippet files."""

    def __init__(self, tmp: Path) -> None:
        self.settings = Settings(data_dir=tmp / "data")
        self.store = InMemoryStore()
        self.store.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
        self.snippets = FileSnippetStore(self.settings)
        self.embedder = HashEmbedder(TEXT_DIM)
        self.books = ForgetBooks(self.settings.resolved_forget_dir)
        self.now = NOW
        self.rng = np.random.default_rng(5)

    def forgetter(self, embedder: bool = True, retention_days: float = 0.0) -> Forgetter:
        return Forgetter(
            self.store, self.snippets, self.books, embedder=(lambda: self.embedder) if embedder else None,
            overview_stretch_s=STRETCH_S, retention_days=retention_days, clock=lambda: self.now,
        )

    def memory(self, sid: str, t0: float, ingested_at: float = NOW):
        m = make_memory(self.rng, sid, t0)
        path = self.snippets.root / sid / f"{m.id}.mp4"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\0" * 1000)
        m.snippets = [SnippetRef(self.snippets.uri_for(path), m.t_start, m.t_end)]
        m.transcript = [TranscriptPiece(t0 + 0.5, t0 + 2.0, f"secret{int(t0)} was said here")]
        m.metadata = {**m.metadata, "ingested_at": ingested_at}
        return m

    def stream(self, sid: str, starts: list[float], ingested_at: list[float] | None = None, updated_at: float = NOW):
        ms = [self.memory(sid, t, (ingested_at or [NOW] * len(starts))[i]) for i, t in enumerate(starts)]
        self.store.upsert_memories(ms)
        self.store.upsert_events([make_event(self.rng, m) for m in ms])
        self.store.upsert_stream(StreamInfo(sid, f"{sid}.mp4", max(m.t_end for m in ms), len(ms), len(ms), updated_at,
                                            {"checkpoint": {"seq": 3, "t_s": 20.0, "ended": True}}))
        refresh_overviews(self.store, self.embedder, sid, STRETCH_S)
        return ms

    def files(self, sid: str) -> list[str]:
        d = self.snippets.root / sid
        return sorted(p.name for p in d.iterdir()) if d.is_dir() else []


@pytest.fixture()
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_a_range_forget_removes_overlapping_memories_their_rows_and_files(world: World) -> None:
    a = world.stream("a", [0.0, 10.0, 20.0, 30.0, 40.0, 50.0])
    b = world.stream("b", [5.0, 15.0])
    assert [o.id for o in world.store.list_overviews("a", scope="stretch")] == [
        overview_id("a", 0.0), overview_id("a", 20.0), overview_id("a", 40.0)]
    def said(o) -> str:
        return o.text + json.dumps(o.facets)

    assert any("secret0" in said(o) for o in world.store.list_overviews("a"))
    report = world.forgetter().forget("a", 0.0, 17.0, key_id="k1")
    assert (report.stream_id, report.whole_stream, report.t_min, report.t_max) == ("a", False, 0.0, 17.0)
    # 0 s and 10 s overlap [0, 17]; 20 s starts after it
    assert report.counts == {"memories": 2, "events": 2, "vectors": 6, "frames": 4, "overviews": 1, "streams": 0}
    assert report.snippet_files == 2 and report.overviews_recomposed >= 3  # the stream's, stretches 20 and 40
    assert [m.t_start for m in world.store.list_memories("a")] == [20.0, 30.0, 40.0, 50.0]
    assert world.files("a") == sorted(f"{m.id}.mp4" for m in a[2:])
    assert world.files("b") == sorted(f"{m.id}.mp4" for m in b)
    # the stretch that held only forgotten memories is gone; the stream's overview is recomposed
    assert [o.id for o in world.store.list_overviews("a", scope="stretch")] == [overview_id("a", 20.0), overview_id("a", 40.0)]
    whole = world.store.list_overviews("a", scope="stream")[0]
    assert whole.t_start == 20.0
    # no overview of any kind (stream, stretch, summary window) still says what was forgotten
    left = world.store.list_overviews("a")
    assert not any("secret0" in said(o) or "secret10" in said(o) for o in left)
    assert any("secret20" in said(o) for o in left)
    info = world.store.get_stream("a")
    assert (info.memories, info.events) == (4, 4) and info.metadata["checkpoint"]["seq"] == 3
    assert world.store.counts("b")["memories"] == 2
    # idempotent: the same forget again finds nothing
    again = world.forgetter().forget("a", 0.0, 17.0)
    assert again.records == 0 and again.snippet_files == 0


def test_a_whole_stream_forget_leaves_nothing_of_it(world: World) -> None:
    world.stream("a", [0.0, 10.0, 20.0])
    world.stream("b", [5.0])
    orphan = world.snippets.root / "a" / "orphan-from-a-crash.mp4"
    orphan.write_bytes(b"x")
    overviews = len(world.store.list_overviews("a"))
    report = world.forgetter().forget("a", key_id="k2")
    assert report.whole_stream and report.counts == {
        "memories": 3, "events": 3, "vectors": 9, "frames": 6, "overviews": overviews, "streams": 1}
    assert report.snippet_files == 4  # three named by memories and the orphan
    assert all(v == 0 for v in world.store.counts("a").values())
    assert world.store.get_stream("a") is None and not (world.snippets.root / "a").exists()
    assert world.store.counts("b")["memories"] == 1 and world.files("b")
    with pytest.raises(StreamNotFound, match="no stream 'a'"):
        world.forgetter().forget("a")
    with pytest.raises(StreamNotFound):
        world.forgetter().forget("never-was", 0.0, 5.0)


def test_the_audit_log_says_what_when_and_by_whom_never_the_content(world: World) -> None:
    world.stream("a", [0.0, 10.0])
    world.now = NOW + 5
    world.forgetter().forget("a", 9.0, 12.0, key_id="3f2a9c")
    text = world.books.audit.path.read_text()
    lines = [json.loads(x) for x in text.splitlines()]
    assert [x["state"] for x in lines] == ["pending", "done"]
    assert lines[0]["key_id"] == "3f2a9c" and lines[0]["at"] == NOW + 5 and lines[0]["t_max"] == 12.0
    assert "secret" not in text and "said" not in text and ".mp4" not in text
    (rec,) = world.forgetter().audit("a")
    assert rec["state"] == "done" and rec["counts"]["memories"] == 1 and rec["snippet_files"] == 1
    assert rec["reason"] == "request" and rec["finished_at"] == NOW + 5
    assert world.forgetter().audit("other") == []


def test_a_forget_interrupted_after_its_snippets_is_finished_by_the_next_one(world: World, monkeypatch) -> None:
    world.stream("a", [0.0, 10.0, 20.0])
    world.stream("b", [0.0])
    real = world.store.delete_range

    def dies(*args, **kwargs):
        raise RuntimeError("killed")

    monkeypatch.setattr(world.store, "delete_range", dies)
    with pytest.raises(RuntimeError):
        world.forgetter().forget("a", 0.0, 12.0)
    assert world.files("a") == [f"{m.id}.mp4" for m in world.store.list_memories("a")[2:]]  # files went first
    assert len(world.store.list_memories("a")) == 3 and len(world.books.audit.pending()) == 1
    monkeypatch.setattr(world.store, "delete_range", real)
    # any later forget (here of another stream) finishes it first
    world.forgetter().forget("b", 0.0, 0.5)
    assert [m.t_start for m in world.store.list_memories("a")] == [20.0]
    assert world.books.audit.pending() == []
    rec = world.forgetter().audit("a")[0]
    assert rec["state"] == "done" and rec["recovered"] and rec["counts"]["memories"] == 2


def test_bad_ranges_are_refused() -> None:
    for lo, hi in ((10.0, 5.0), (float("nan"), 5.0), (0.0, float("inf")), (-1.0, 5.0), (True, 5.0), ("1", 2.0)):
        with pytest.raises(InputError):
            check_forget_range(lo, hi)
    assert check_forget_range(None, 5) == (None, 5.0) and check_forget_range(None, None) == (None, None)


def test_retention_sweep_forgets_what_has_expired_by_the_injected_clock(world: World) -> None:
    old, young = NOW - 40 * DAY_S, NOW - 1 * DAY_S
    world.stream("stale", [0.0, 10.0], [old, old], updated_at=old)
    world.stream("live", [0.0, 10.0, 20.0, 30.0], [old, old, young, young], updated_at=NOW)
    world.stream("archive", [0.0], [old], updated_at=old)
    world.stream("long", [0.0], [old], updated_at=old)
    world.books.ensure()
    world.books.retention.set("archive", 0)  # kept until forgotten on purpose
    world.books.retention.set("long", 100)
    report = world.forgetter(retention_days=30).sweep()
    assert report.streams_checked == 4
    got = {r.stream_id: r for r in report.forgotten}
    assert set(got) == {"stale", "live"}
    assert got["stale"].whole_stream and world.store.get_stream("stale") is None and not world.files("stale")
    # the live stream loses its expired stretch only: memories starting at or before 10 s
    assert not got["live"].whole_stream and got["live"].t_max == 10.0
    assert [m.t_start for m in world.store.list_memories("live")] == [20.0, 30.0]
    assert world.store.get_stream("archive") and world.store.get_stream("long")
    assert {r["reason"] for r in world.forgetter().audit()} == {"retention"}
    # a second sweep at the same time has nothing to do; 70 days later "long" is still kept
    assert world.forgetter(retention_days=30).sweep().forgotten == []
    world.now = NOW + 61 * DAY_S
    later = world.forgetter(retention_days=30).sweep()
    assert {r.stream_id for r in later.forgotten} == {"live", "long"} and world.store.get_stream("archive")


def test_retention_tombstones_are_compacted(world: World) -> None:
    world.stream("live", [0.0, 10.0, 20.0, 30.0])
    f = world.forgetter()
    f.forget("live", None, 5.0, reason="retention")
    f.forget("live", None, 15.0, reason="retention")
    tombs = world.books.tombstones.for_stream("live")
    assert [(t.t_min, t.t_max, t.seq) for t in tombs] == [(0.0, 15.0, 2)]


def test_a_guarded_write_cannot_bring_a_forgotten_stretch_back(world: World) -> None:
    ms = world.stream("a", [0.0, 10.0, 20.0])
    guard = GuardedStore(world.store, world.snippets, world.books, "a", since_seq=world.books.tombstones.latest_seq())
    world.forgetter().forget("a", 0.0, 15.0)
    # a runner that held the forgotten stretch writes it again, with a new segment after it
    late = world.memory("a", 30.0)
    resurrect = world.memory("a", 10.0)
    guard.upsert_memories([resurrect, late])
    guard.upsert_events([make_event(world.rng, resurrect), make_event(world.rng, late)])
    assert [m.t_start for m in world.store.list_memories("a")] == [20.0, 30.0]
    assert [e.t_start for e in world.store.list_events("a")] == [20.0, 30.0]
    assert f"{resurrect.id}.mp4" not in world.files("a") and guard.dropped == 2
    guard.upsert_overviews(world.store.list_overviews("a", with_vectors=True))  # not written
    guard.upsert_stream(replace(world.store.get_stream("a"), memories=99))  # a range keeps the listing
    assert world.store.get_stream("a").memories == 99
    # after a whole-stream forget the listing (and its checkpoint) is not written back
    world.forgetter().forget("a")
    guard.upsert_stream(StreamInfo("a", "a.mp4", 40.0, 3, 3, NOW, {"checkpoint": {"seq": 9, "t_s": 30.0}}))
    assert world.store.get_stream("a") is None
    # a runner started after the forget writes freely
    fresh = GuardedStore(world.store, world.snippets, world.books, "a", since_seq=world.books.tombstones.latest_seq())
    fresh.upsert_memories([ms[0]])
    assert len(world.store.list_memories("a")) == 1


def test_a_whole_stream_forget_reaches_what_was_stored_and_no_further(world: World) -> None:
    """The next chunk after a whole-stream forget starts where the last stored memory ended; a
    memory starting exactly there, written by a runner started after the forget, is new (never
    stored) and must pass, one reaching into the stored stretch must not. The writer that was
    at work when the stream was forgotten keeps nothing: what it held was in hand then (a
    segment waiting to be heard lies past the stored end, and its snippet files went with the
    stream's). A range forget's end stays closed, as the user gave it."""
    world.stream("a", [0.0, 10.0])
    guard = GuardedStore(world.store, world.snippets, world.books, "a", since_seq=world.books.tombstones.latest_seq())
    reach = max(m.t_end for m in world.store.list_memories("a"))
    world.forgetter().forget("a")
    (tomb,) = world.books.tombstones.for_stream("a")
    assert tomb.whole and tomb.t_max == reach
    assert not tomb.covers(reach, reach + 5) and tomb.covers(reach - 0.5, reach + 5)
    new, old = world.memory("a", reach), world.memory("a", 10.0)
    guard.upsert_memories([new, old])
    assert world.store.list_memories("a") == [] and guard.dropped == 2
    fresh = GuardedStore(world.store, world.snippets, world.books, "a", since_seq=world.books.tombstones.latest_seq())
    fresh.upsert_memories([new])  # (its chunks inside the stretch are skipped before they are decoded)
    assert [m.t_start for m in world.store.list_memories("a")] == [reach] and fresh.dropped == 0
    world.stream("b", [0.0, 10.0])
    world.forgetter().forget("b", 0.0, 10.0)
    (ranged,) = world.books.tombstones.for_stream("b")
    assert ranged.covers(10.0, 15.0)


def test_a_guarded_write_waits_for_a_forget_in_progress(world: World) -> None:
    world.stream("a", [0.0])
    world.books.ensure()
    guard = GuardedStore(world.store, world.snippets, world.books, "a", since_seq=0)
    done = threading.Event()
    m = world.memory("a", 50.0)

    def write() -> None:
        guard.upsert_memories([m])
        done.set()

    with world.books.lock.exclusive():
        t = threading.Thread(target=write)
        t.start()
        time.sleep(0.3)
        assert not done.is_set()  # held back while the forget holds the lock
    t.join(5)
    assert done.is_set() and world.store.get_memory(m.id) is not None


def test_a_torn_audit_line_does_not_swallow_the_next(world: World) -> None:
    world.books.ensure()
    world.books.audit.path.write_text('{"audit_id": "x", "state": "pen')
    world.books.audit.append({"audit_id": "y", "state": "pending", "stream_id": "a"})
    assert [e["audit_id"] for e in world.books.audit.entries()] == ["y"]


def test_storage_per_stream(world: World) -> None:
    world.stream("a", [0.0, 10.0])
    usage = world.forgetter().storage()
    overviews = len(world.store.list_overviews("a"))
    assert usage["a"].counts == {"memories": 2, "events": 2, "vectors": 6, "frames": 4, "overviews": overviews, "streams": 1}
    assert usage["a"].records == 15 + overviews and usage["a"].snippet_bytes == 2000
