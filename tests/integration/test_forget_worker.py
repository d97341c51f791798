"""A forget racing a Kafka worker that writes the same stream (issue 17): the worker must not
bring the forgotten stretch back, neither while it goes on with the stream nor when it is
restarted and reads the stream's chunks again from an old offset.

The worker here is the real ``episodic.worker.Worker`` with the real pipeline and models over
Milvus Lite; its records come from the real chunks of a generated recording, handed to it as
Kafka records would be (no broker: the forgetting side is what is under test; test_worker.py
covers Kafka itself). The forget runs in another thread while the worker is busy, as the
retention sweep of `episodic worker` or a forget through the server would.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from kafka import TopicPartition

from episodic import samples
from episodic.components import Components
from episodic.config import load_settings
from episodic.services.forgetting import Forgetter
from episodic.stream.chunks import Chunker
from episodic.worker import Worker

pytestmark = pytest.mark.slow

SID = "live"


@dataclass
class Record:
    value: bytes
    key: bytes
    offset: int


class NoProducer:
    def close(self) -> None:
        pass


def _records(chunks: list[Any]) -> list[Record]:
    return [Record(c.to_bytes(), SID.encode(), i) for i, c in enumerate(chunks)]


def test_a_worker_writing_the_stream_does_not_bring_a_forget_back(tmp_path: Path) -> None:
    recording = tmp_path / "live.mp4"
    samples.make_recording(
        recording,
        [samples.Scene(8, seed=i, tint=(40 * i, 200 - 30 * i, 90)) for i in range(1, 5)],
        [samples.Speech(1.0, "Maria parked the red bicycle."),
         samples.Speech(12.0, "The train to Oxford leaves from platform seven."),
         samples.Speech(24.0, "The library closes at six.")],
    )
    settings = load_settings(data_dir=tmp_path / "data", checkpoint_interval_s=10.0)
    made = int(time.time() * 1000)  # every chunk was produced before the forget
    chunks = [replace(c, produced_at_ms=made) for c in Chunker(str(recording), SID, settings)]
    assert chunks[-1].t_end > 30
    components = Components(settings)
    tp = TopicPartition("episodic-chunks", 0)
    try:
        components.ensure_schema()
        worker = Worker(components, consumer=object(), producer=NoProducer())
        forgetter = Forgetter.for_backends(components)
        forgot: list[Any] = []

        def forget_when_two_memories_are_stored() -> None:
            deadline = time.monotonic() + 600
            while len(components.store.list_memories(SID)) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            forgot.append(forgetter.forget(SID))  # the whole stream, mid-chunk or between chunks

        racer = threading.Thread(target=forget_when_two_memories_are_stored)
        racer.start()
        records = _records(chunks)
        for r in records:
            worker._handle(tp, r)
            if forgot and r.offset > 0 and chunks[r.offset].t_start > 24:
                break  # the rest after a restart, below
        racer.join(600)
        (report,) = forgot
        assert report.whole_stream and report.counts["memories"] >= 2
        (tomb,) = forgetter.books.tombstones.for_stream(SID)
        cut = tomb.t_max
        assert cut > 0
        # the runner that held the forgotten stretch was dropped; the one writing now knows the forget
        assert worker.streams[SID].runner.c.store.since_seq == tomb.seq

        def check() -> list[Any]:
            store = components.store
            kept = store.list_memories(SID, with_vectors=True)
            # nothing overlapping the forgotten stretch in any collection, no orphan rows (a
            # whole-stream forget reaches what was stored: a memory may start exactly at its end)
            assert [m.id for m in kept if m.t_start < cut] == []
            assert [e.id for e in store.list_events(SID, t_max=cut) if e.t_start < cut] == []
            counts = store.counts(SID)
            assert counts["memories"] == len(kept) and counts["events"] == len(kept)
            assert counts["vectors"] == sum(len(m.embeddings) for m in kept)
            assert counts["frames"] == sum(len(m.frame_features) for m in kept)
            # and no snippet file but those of the memories kept
            d = settings.resolved_snippet_dir / SID
            on_disk = {p.name for p in d.iterdir()} if d.is_dir() else set()
            assert on_disk == {u.rsplit("/", 1)[-1] for m in kept for u in m.file_uris}  # snippets, thumbnails
            return kept

        check()
        # a worker restarted from an old offset reads every chunk again, then the stream ends
        restarted = Worker(components, consumer=object(), producer=NoProducer())
        for r in records:
            restarted._handle(tp, r)
        assert restarted.stats.skipped >= sum(1 for c in chunks if c.t_start < cut)
        kept = check()
        # what came after the forget is remembered as usual
        assert kept and min(m.t_start for m in kept) >= cut and max(m.t_end for m in kept) > 28
        assert any("library" in m.transcript_text.lower() for m in kept)
        assert components.store.get_stream(SID) is not None
    finally:
        components.close()
