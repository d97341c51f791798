"""Forgetting on purpose (issue 17): forget throughput, the cost of a retention sweep, and what a
stream takes per hour with and without retention.

A synthetic store is written directly (no models): ``--streams`` streams of ``--memories``
memories each, 7 s apart, with the production shapes (384-d text vectors, 1280-d frame
features, ``--entries`` E_i and ``--frames`` frame rows per memory, an event each, overviews
per ``overview_stretch_s`` stretch composed with a cheap hashing embedder) and one snippet
file of ``--snippet-kb`` per memory under the snippet directory. Then, each timed alone:

  range    ``Forgetter.forget`` of the first half of each of a third of the streams (overviews
           recomposed from what remains, listing corrected): records/s and snippet files/s;
  whole    a whole-stream forget of another third: records/s;
  sweep    ``Forgetter.sweep`` with retention set but nothing expired (the pure cost of
           checking: one listing of each stream's memories), then with the oldest half of each
           remaining stream expired (the clock is injected), per stream and per memory;
  storage  bytes per stream-hour: the store's records (the Milvus Lite directory's growth over
           the synthetic memories, 7 s each) plus snippets (``--snippet-kbps``, or measured on
           a real ingest with ``--real-seconds``), and what a stream keeps at steady state with
           ``--retention-days`` against a year without retention.

    .venv/bin/python benchmarks/bench_forget.py [--store lite|memory] [--streams 30] [--memories 100] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from episodic.config import Settings  # noqa: E402
from episodic.core.records import (  # noqa: E402
    EmbeddingEntry,
    FrameObservation,
    ShortTermMemory,
    SnippetRef,
    StreamInfo,
    ThetaEvent,
    TranscriptPiece,
    event_id,
    memory_id,
    normalise,
)
from episodic.memory.overview_windows import refresh_overviews  # noqa: E402
from episodic.memory.snippet_store import FileSnippetStore  # noqa: E402
from episodic.services.forgetting import DAY_S, ForgetBooks, Forgetter  # noqa: E402

TEXT_DIM, FEATURE_DIM = 384, 1280
MEMORY_S = 7.0
WORDS = ["apples", "train", "platform", "library", "bicycle", "kitchen", "market", "harbour", "river", "bridge", "lamp", "door"]


class HashEmbedder:
    """A cheap deterministic 384-d embedder for the overviews (no model load)."""

    model_id = "bench-hash-384"
    dim = TEXT_DIM

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, zlib.crc32(w.encode()) % self.dim] += 1
            out[i] /= max(float(np.linalg.norm(out[i])), 1e-6)
        return out


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def build(store: Any, snippets: FileSnippetStore, args: argparse.Namespace, now: float) -> dict[str, Any]:
    """Write the synthetic streams; returns sizes and timings."""
    rng = np.random.default_rng(0)
    store.ensure_schema(TEXT_DIM, FEATURE_DIM, models={"embedder": "bench", "describer": "bench"})
    emb = HashEmbedder()
    payload = os.urandom(args.snippet_kb * 1024)
    t0 = time.perf_counter()
    for s in range(args.streams):
        sid = f"cam{s:03d}"
        d = snippets.root / sid
        d.mkdir(parents=True, exist_ok=True)
        memories, events = [], []
        for i in range(args.memories):
            t = i * MEMORY_S
            mid = memory_id(sid, t)
            path = d / f"{mid}.mp4"
            path.write_bytes(payload)
            words = " ".join(rng.choice(WORDS, 6))
            m = ShortTermMemory(
                id=mid, stream_id=sid, t_start=t, t_end=t + MEMORY_S,
                vector=normalise(rng.standard_normal(TEXT_DIM)),
                embeddings=[EmbeddingEntry(t + k, t + k + 1, ("visual", "speech")[k % 2], words,
                                           normalise(rng.standard_normal(TEXT_DIM))) for k in range(args.entries)],
                transcript=[TranscriptPiece(t + 0.5, t + 3.0, f"someone says {words}")],
                frames=[FrameObservation(t + k, [], ["grey"], "", "a scene") for k in range(args.frames)],
                frame_features=[(t + k, normalise(rng.standard_normal(FEATURE_DIM))) for k in range(args.frames)],
                snippets=[SnippetRef(snippets.uri_for(path), t, t + MEMORY_S)],
                # the first half of every stream was ingested 40 days ago, the rest yesterday
                metadata={"ingested_at": now - (40 if i < args.memories // 2 else 1) * DAY_S},
            )
            memories.append(m)
            events.append(ThetaEvent(
                id=event_id(sid, t), stream_id=sid, memory_id=mid, t_start=t, t_end=t + MEMORY_S,
                summary=f"Someone says {words}.", summary_vector=normalise(rng.standard_normal(TEXT_DIM)),
                vector=m.vector, visual_context=["a scene"], audio_context=[words],
            ))
        store.upsert_memories(memories)
        store.upsert_events(events)
        store.upsert_stream(StreamInfo(sid, f"{sid}.mp4", args.memories * MEMORY_S, len(memories), len(events), now - DAY_S))
        refresh_overviews(store, emb, sid, 600.0)
    store.flush()
    return {"write_s": round(time.perf_counter() - t0, 2), "records": sum(store.counts().get(k, 0) for k in
            ("memories", "events", "vectors", "frames", "overviews", "streams"))}


def real_snippet_rate(seconds: float) -> float:
    """Snippet bytes per stream-second from a real ingest of a generated recording."""
    from episodic import samples
    from episodic.components import Components
    from episodic.config import load_settings
    from episodic.pipeline import ingest_file

    tmp = Path(tempfile.mkdtemp(prefix="bench-forget-real-"))
    try:
        rec = tmp / "rec.mp4"
        n = max(1, int(seconds // 8))
        samples.make_recording(rec, [samples.Scene(8, seed=i, tint=(30 * i % 255, 120, 200)) for i in range(n)],
                               [samples.Speech(1.0 + 8 * i, "The train to Oxford leaves from platform seven.") for i in range(n)])
        c = Components(load_settings(data_dir=tmp / "data"))
        try:
            report = ingest_file(rec, "real", c)
        finally:
            c.close()
        return _dir_bytes(tmp / "data" / "snippets") / max(report.progress.stream_s, 1e-6)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", choices=("lite", "memory"), default="lite")
    ap.add_argument("--streams", type=int, default=30)
    ap.add_argument("--memories", type=int, default=100, help="per stream (7 s each)")
    ap.add_argument("--entries", type=int, default=6, help="E_i per memory")
    ap.add_argument("--frames", type=int, default=3, help="frame rows per memory")
    ap.add_argument("--snippet-kb", type=int, default=16, help="size of each synthetic snippet file")
    ap.add_argument("--snippet-kbps", type=float, default=0.0,
                    help="snippet bitrate for the per-hour estimate (kB/s; 0 = the synthetic files')")
    ap.add_argument("--real-seconds", type=float, default=0.0, help="measure the snippet rate on a real ingest this long")
    ap.add_argument("--retention-days", type=float, default=30.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-forget-"))
    now = time.time()
    settings = Settings(data_dir=tmp / "data")
    if args.store == "memory":
        from episodic.memory.in_memory_store import InMemoryStore

        store: Any = InMemoryStore()
    else:
        from episodic.memory.milvus_store import MilvusStore

        store = MilvusStore(settings)
    snippets = FileSnippetStore(settings)
    books = ForgetBooks(settings.resolved_forget_dir)
    emb = HashEmbedder()
    out: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "store": args.store},
        "shape": {"streams": args.streams, "memories_per_stream": args.memories, "entries": args.entries,
                  "frames": args.frames, "snippet_kb": args.snippet_kb},
    }
    try:
        db_before = _dir_bytes(tmp / "data") if args.store == "lite" else 0
        out["build"] = build(store, snippets, args, now)
        db_bytes = (_dir_bytes(tmp / "data" / "milvus.db") if args.store == "lite" else 0) - db_before
        third = max(1, args.streams // 3)
        ids = [f"cam{s:03d}" for s in range(args.streams)]

        f = Forgetter(store, snippets, books, embedder=lambda: emb, clock=lambda: now)
        t0 = time.perf_counter()
        reports = [f.forget(sid, None, (args.memories // 2) * MEMORY_S - 1) for sid in ids[:third]]
        dt = time.perf_counter() - t0
        recs = sum(r.records for r in reports)
        out["range"] = {"forgets": len(reports), "records": recs, "snippet_files": sum(r.snippet_files for r in reports),
                        "seconds": round(dt, 3), "records_per_s": round(recs / dt), "ms_per_forget": round(1000 * dt / len(reports), 1)}

        t0 = time.perf_counter()
        reports = [f.forget(sid) for sid in ids[third:2 * third]]
        dt = time.perf_counter() - t0
        recs = sum(r.records for r in reports)
        out["whole"] = {"forgets": len(reports), "records": recs, "snippet_files": sum(r.snippet_files for r in reports),
                        "seconds": round(dt, 3), "records_per_s": round(recs / dt), "ms_per_forget": round(1000 * dt / len(reports), 1)}

        left = [s.stream_id for s in store.list_streams()]  # the range-forgotten ones are still there
        n_mem = sum(len(store.list_memories(s)) for s in left)
        keep = Forgetter(store, snippets, books, embedder=lambda: emb, retention_days=60, clock=lambda: now)
        t0 = time.perf_counter()
        idle = keep.sweep()
        dt_idle = time.perf_counter() - t0
        expire = Forgetter(store, snippets, books, embedder=lambda: emb, retention_days=30, clock=lambda: now)
        t0 = time.perf_counter()
        swept = expire.sweep()
        dt_swept = time.perf_counter() - t0
        recs = sum(r.records for r in swept.forgotten)
        out["sweep"] = {
            "streams": len(left), "memories": n_mem,
            "nothing_expired_s": round(dt_idle, 3), "ms_per_stream": round(1000 * dt_idle / max(1, idle.streams_checked), 2),
            "us_per_memory": round(1e6 * dt_idle / max(1, n_mem), 1),
            "expired_s": round(dt_swept, 3), "forgets": len(swept.forgotten), "records": recs,
            "records_per_s": round(recs / dt_swept) if dt_swept else None,
        }

        n_all = args.streams * args.memories
        rate = args.snippet_kbps * 1000 if args.snippet_kbps else args.snippet_kb * 1024 / MEMORY_S
        source = "synthetic files"
        if args.real_seconds:
            rate, source = real_snippet_rate(args.real_seconds), f"real ingest of {args.real_seconds:g} s"
        records_per_hour = (db_bytes / n_all) * (3600 / MEMORY_S) if db_bytes else None
        snippets_per_hour = rate * 3600
        per_hour = (records_per_hour or 0) + snippets_per_hour
        out["storage"] = {
            "records_bytes_per_stream_hour": round(records_per_hour) if records_per_hour else None,
            "snippet_bytes_per_stream_hour": round(snippets_per_hour), "snippet_rate_from": source,
            "bytes_per_stream_hour": round(per_hour),
            f"steady_state_bytes_with_{args.retention_days:g}_days": round(per_hour * 24 * args.retention_days),
            "bytes_after_a_year_without_retention": round(per_hour * 24 * 365),
        }
        audit = books.audit.path.stat().st_size
        out["audit_log_bytes_per_forget"] = round(audit / max(1, len(books.audit.records())))
    finally:
        store.close()
        shutil.rmtree(tmp, ignore_errors=True)

    if args.json:
        print(json.dumps(out, indent=2))
        return
    m = out["machine"]
    print(f"{m['cpus']} CPUs, Python {m['python']}, store {m['store']}; {args.streams} streams x {args.memories} memories "
          f"({out['build']['records']} records written in {out['build']['write_s']} s)")
    for k in ("range", "whole"):
        r = out[k]
        print(f"{k:6s} forget: {r['forgets']} forgets, {r['records']} records, {r['snippet_files']} files in "
              f"{r['seconds']} s = {r['records_per_s']} records/s ({r['ms_per_forget']} ms each)")
    s = out["sweep"]
    print(f"sweep, nothing expired: {s['nothing_expired_s']} s for {s['streams']} streams ({s['ms_per_stream']} ms/stream, "
          f"{s['us_per_memory']} us/memory); half expired: {s['expired_s']} s, {s['forgets']} forgets, "
          f"{s['records']} records ({s['records_per_s']} records/s)")
    st = out["storage"]
    print(f"per stream-hour: records {st['records_bytes_per_stream_hour']} B + snippets {st['snippet_bytes_per_stream_hour']} B "
          f"({st['snippet_rate_from']}) = {st['bytes_per_stream_hour'] / 1e6:.1f} MB; with {args.retention_days:g} days' "
          f"retention a stream keeps {st[f'steady_state_bytes_with_{args.retention_days:g}_days'] / 1e9:.2f} GB; a year "
          f"without: {st['bytes_after_a_year_without_retention'] / 1e9:.1f} GB")
    print(f"audit log: {out['audit_log_bytes_per_forget']} bytes per forget")


if __name__ == "__main__":
    main()
