"""The worker's side of forgetting (episodic/worker_forget.py): a runner about to open reads
the forgets it knows and the checkpoint it resumes from as one, never between a forget's
tombstone and its deletions."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

from episodic.config import Settings
from episodic.core.records import StreamInfo
from episodic.memory.in_memory_store import InMemoryStore
from episodic.worker_forget import ForgetWatch
from tests.store_fixtures import FEATURE_DIM, MODELS, TEXT_DIM


def test_a_runner_opening_during_a_forget_gets_the_listing_as_the_forget_leaves_it(tmp_path: Path) -> None:
    store = InMemoryStore()
    store.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
    store.upsert_stream(StreamInfo("live", t_end=16.0, metadata={"checkpoint": {"seq": 8, "t_s": 16.0}}))
    watch = ForgetWatch(SimpleNamespace(store=store, settings=Settings(data_dir=tmp_path)))
    books = watch.books.ensure()
    seen: list[tuple[int, StreamInfo | None]] = []
    reader = threading.Thread(target=lambda: seen.append(watch.listing("live")))
    with books.lock.exclusive():  # a forget between its tombstone and its deletions
        tomb = books.tombstones.add("live", 0.0, 16.0, time.time(), True, "fg-1")
        reader.start()
        time.sleep(0.3)  # the reader would read the doomed listing here
        store.delete_stream("live")
    reader.join(10)
    # the runner knows this forget, so it must not resume from the checkpoint the forget deletes
    assert seen == [(tomb.seq, None)]


def test_with_nothing_forgotten_the_listing_is_read_without_a_lock(tmp_path: Path) -> None:
    store = InMemoryStore()
    store.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
    store.upsert_stream(StreamInfo("live", t_end=4.0))
    watch = ForgetWatch(SimpleNamespace(store=store, settings=Settings(data_dir=tmp_path)))
    seq, info = watch.listing("live")
    assert seq == 0 and info is not None and info.t_end == 4.0
    assert not watch.books.dir.exists()  # reading never creates the forgetting books
