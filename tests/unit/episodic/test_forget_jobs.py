"""The forgetting wired into serve/worker (episodic/forgetting_jobs.py): the background sweep
finishes interrupted forgets, applies retention and publishes the per-stream storage gauges;
a forget refreshes its stream's gauges."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from prometheus_client import REGISTRY

from episodic import forgetting_jobs
from episodic.config import Settings
from episodic.core.records import SnippetRef, StreamInfo
from episodic.memory.in_memory_store import InMemoryStore
from episodic.memory.snippet_store import FileSnippetStore
from episodic.services.forgetting import DAY_S
from tests.fakes import HashEmbedder
from tests.store_fixtures import FEATURE_DIM, MODELS, TEXT_DIM, make_event, make_memory


def _gauge(name: str, sid: str) -> float | None:
    return REGISTRY.get_sample_value(name, {"stream_id": sid})


def test_the_sweeper_forgets_by_retention_and_publishes_storage(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, metrics_port=9464, retention_days=30, retention_sweep_interval_s=1)
    store = InMemoryStore()
    store.ensure_schema(TEXT_DIM, FEATURE_DIM, models=MODELS)
    snippets = FileSnippetStore(settings)
    rng = np.random.default_rng(1)
    now = time.time()
    for sid, age in (("fresh", 1), ("stale", 40)):
        ms = [make_memory(rng, sid, 10.0 * i) for i in range(3)]
        for m in ms:
            path = snippets.root / sid / f"{m.id}.mp4"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"\0" * 100)
            m.snippets = [SnippetRef(snippets.uri_for(path), m.t_start, m.t_end)]
            m.metadata = {"ingested_at": now - age * DAY_S}
        store.upsert_memories(ms)
        store.upsert_events([make_event(rng, m) for m in ms])
        store.upsert_stream(StreamInfo(sid, "", 30.0, 3, 3, now - age * DAY_S))
    backends = SimpleNamespace(settings=settings, store=store, snippets=snippets, embedder=HashEmbedder(TEXT_DIM))
    f = forgetting_jobs.forgetter(backends)
    sweeper = forgetting_jobs.start_sweeper(f, settings)
    try:
        deadline = time.monotonic() + 20
        while sweeper.sweeps < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        sweeper.stop()
    assert sweeper.sweeps >= 1
    assert store.get_stream("stale") is None and len(store.list_memories("fresh")) == 3
    assert _gauge("episodic_stream_records", "fresh") == sum(store.counts("fresh").values())
    assert _gauge("episodic_stream_snippet_bytes", "fresh") == 300
    assert _gauge("episodic_stream_records", "stale") is None
    assert REGISTRY.get_sample_value("episodic_forgotten_records_total", {"reason": "retention"}) >= 3 * 7

    # a forget through the server refreshes that stream's gauges (here: it has none left)
    f.forget("fresh")
    forgetting_jobs.refresh_stream(f, settings, "fresh")
    assert _gauge("episodic_stream_records", "fresh") is None


def test_the_worker_readies_the_store_before_its_first_sweep(monkeypatch, tmp_path: Path) -> None:
    """The first sweep runs as soon as the sweeper starts; the worker makes its store ready
    (schema ensured, collections loaded) before that, not concurrently with it: a sweep that
    met a Milvus collection still released failed and waited an hour for the next."""
    from episodic import worker as worker_mod

    calls: list[str] = []

    class FakeComponents:
        def __init__(self, settings: Settings) -> None:
            self.settings = settings

        def ensure_schema(self) -> None:
            calls.append("ensure_schema")

        def close(self) -> None:
            calls.append("store closed")

    class FakeWorker:
        def __init__(self, components: FakeComponents) -> None:
            self.c = components

        def run(self, idle_exit_s: float | None = None) -> str:
            calls.append("run")
            return "stats"

        def stop(self) -> None:
            pass

        def close(self) -> None:
            calls.append("worker closed")

    def fake_start(f: object, settings: Settings) -> SimpleNamespace:
        calls.append("sweeper")
        return SimpleNamespace(stop=lambda: calls.append("sweeper stopped"))

    monkeypatch.setattr(worker_mod, "Components", FakeComponents)
    monkeypatch.setattr(worker_mod, "Worker", FakeWorker)
    monkeypatch.setattr(forgetting_jobs, "forgetter", lambda components: object())
    monkeypatch.setattr(forgetting_jobs, "start_sweeper", fake_start)
    assert worker_mod.run_worker(Settings(data_dir=tmp_path)) == "stats"
    assert calls[:3] == ["ensure_schema", "sweeper", "run"], calls
    assert calls[3:] == ["sweeper stopped", "worker closed", "store closed"], calls
