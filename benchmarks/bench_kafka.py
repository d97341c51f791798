"""Live ingest through Kafka: end-to-end lag, live streams per worker, replay throughput.

Starts a local Kafka-protocol broker (Tansu, in memory), generates 640×360 recordings like
bench_ingest.py, and runs one `episodic worker` (in this process, models loaded before
timing) against:

  1. live-paced streams: N copies pushed at once with `episodic push --realtime` (separate
     processes, as cameras would be), for N in --streams (default 1 2 3). Lag of a memory =
     the wall time it was stored (queryable) minus the wall time the chunk holding its last
     frame was produced. A worker keeps up when the lag does not grow over the run (the
     slope of lag against stream time stays near 0) and it drains within a few seconds after
     the last chunk.
  2. replay: `episodic replay` of a folder of recordings (not paced), the worker draining it:
     stream-minutes stored per wall minute.

    .venv/bin/python benchmarks/bench_kafka.py [--seconds 60] [--streams 1 2 3] [--replay-files 3]
        [--provisional auto never]

With fresh memories (issue 17) a memory is stored provisionally as soon as its segment closes;
``--provisional never`` measures the lag without them. Two standing queries with a webhook to a
receiver on loopback measure alert latency: the store write that made the memory match → the
alert's POST received.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_ingest import build_recording  # noqa: E402

from episodic.config import Settings, load_settings  # noqa: E402
from episodic.dev_broker import LocalBroker  # noqa: E402
from episodic.pipeline import Components  # noqa: E402
from episodic.worker import Worker  # noqa: E402


class Probe:
    """Records, per stream, when each chunk was produced and when each event was stored."""

    def __init__(self) -> None:
        self.chunks: dict[str, list[tuple[float, float, int]]] = {}  # (t_start, t_end, produced_ms)
        self.stored: list[tuple[str, float, float]] = []  # (stream, event t_end, wall s)
        self.writes: dict[str, list[float]] = {}  # event id → wall s of each write
        self.lock = threading.Lock()

    def on_chunk(self, chunk: Any, stats: Any) -> None:
        with self.lock:
            self.chunks.setdefault(chunk.stream_id, []).append((chunk.t_start, chunk.t_end, chunk.produced_at_ms))

    def wrap(self, store: Any) -> None:
        original = store.upsert_events

        def upsert_events(events: Any) -> None:
            original(events)
            now = time.time()
            with self.lock:
                self.stored += [(e.stream_id, e.t_end, now) for e in events]
                for e in events:
                    self.writes.setdefault(e.id, []).append(now)

        store.upsert_events = upsert_events

    def lags(self) -> list[tuple[float, float]]:
        """(event t_end, lag s) for every stored event whose chunk had a production time.

        A moment is answerable from the first write that covers it: a provisional event
        rewritten as it grows, and then finally, counts at its first write per end time."""
        out = []
        first: dict[tuple[str, float], float] = {}
        for sid, t_end, wall in self.stored:
            key = (sid, round(t_end, 3))
            first[key] = min(first.get(key, wall), wall)
        for (sid, t_end), wall in first.items():
            chunks = self.chunks.get(sid, [])
            holding = [c for c in chunks if c[0] <= t_end - 1e-3 < c[1]] or chunks[-1:]
            if holding and holding[0][2] > 0:
                out.append((t_end, wall - holding[0][2] / 1000))
        return out


def _env(s: Settings, data: Path) -> dict[str, str]:
    keys = [f for f in s.flat() if f.startswith("kafka_")]
    return {**os.environ, "EPISODIC_DATA": str(data), **{f"EPISODIC_{k.upper()}": str(getattr(s, k)) for k in keys}}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "episodic.cli", *args]


def run_worker_until(worker: Worker, done: threading.Event) -> threading.Thread:
    def loop() -> None:
        worker.run()

    t = threading.Thread(target=loop, daemon=True)
    t.start()

    def stopper() -> None:
        done.wait()
        worker.stop()

    threading.Thread(target=stopper, daemon=True).start()
    return t


class Hooks:
    """A webhook receiver on loopback: when each alert arrived."""

    def __init__(self) -> None:
        import http.server

        self.got: list[tuple[float, dict[str, Any]]] = []
        hooks = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hooks.got.append((time.time(), json.loads(body)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/alerts"


WATCH_QUERIES = ("the delivery van arrived late", "the train to the airport")


def live(settings: Settings, c: Components, rec: Path, n: int, seconds: float, work: Path,
         provisional: str = "auto") -> dict[str, Any]:
    s = settings.replace(kafka_topic=f"bench.live{n}{provisional}", kafka_dlq_topic=f"bench.live{n}{provisional}.dlq",
                         kafka_group_id=f"bench-live{n}{provisional}", provisional_memories=provisional)
    c.settings = s  # the worker takes its topic and group from its components (models stay loaded)
    probe = Probe()
    probe.wrap(c.store)
    hooks = Hooks()
    from episodic.core.watches import Watch

    for i, q in enumerate(WATCH_QUERIES):  # alert latency: event stored → webhook received
        c.watch_store.add_watch(Watch(id=f"bench-{n}-{provisional}-{i}", query=q, key_id="bench",
                                      webhook_url=hooks.url, webhook_secret="bench", created_at=time.time()))
    worker = Worker(c, on_chunk=probe.on_chunk)
    done = threading.Event()
    from episodic.stream import kafka_io

    kafka_io.ensure_topics(s)
    thread = run_worker_until(worker, done)
    time.sleep(3.0)  # let it join the group
    sids = [f"live{n}{provisional[0]}-{i}" for i in range(n)]  # an ended stream ignores re-pushes
    env = _env(s, work / "push-data")
    started = time.time()
    pushes = [subprocess.Popen(_cli("push", str(rec), "--stream-id", sid, "--realtime", "--json"), env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for sid in sids]
    for p in pushes:
        p.wait()
    pushed_at = time.time()
    deadline = pushed_at + 10 * seconds
    while time.time() < deadline and worker.stats.streams_ended < n:
        time.sleep(0.2)
    drained_at = time.time()
    done.set()
    thread.join(timeout=60)
    worker.close()
    del c.store.upsert_events  # unwrap the probe
    time.sleep(2.0)  # the last webhooks
    for w in c.watch_store.list_watches():
        c.watch_store.remove_watch(w.id)
    hooks.server.shutdown()
    # from the write that made the memory match (the last one of its event before the POST; a
    # provisional memory may match only once it has grown) to the POST received
    alert_lat = []
    for at, a in hooks.got:
        before = [w for w in probe.writes.get(a["event_ids"][-1], []) if w <= at]
        if before:
            alert_lat.append(at - max(before))
    lags = probe.lags()
    t = np.array([x for x, _ in lags]) if lags else np.zeros(0)
    lag = np.array([y for _, y in lags]) if lags else np.zeros(0)
    slope = float(np.polyfit(t, lag, 1)[0]) if len(lags) >= 3 else float("nan")
    return {
        "streams": n,
        "provisional_memories": provisional,
        "stream_s_each": seconds,
        "ended": worker.stats.streams_ended,
        "events": len(lags),
        "lag_p50_s": round(float(np.percentile(lag, 50)), 2) if lag.size else None,
        "lag_p95_s": round(float(np.percentile(lag, 95)), 2) if lag.size else None,
        "lag_max_s": round(float(lag.max()), 2) if lag.size else None,
        "lag_growth_s_per_stream_s": round(slope, 3),
        "drain_after_last_chunk_s": round(drained_at - pushed_at, 1),
        "alerts": len(hooks.got),
        "alert_latency_p50_s": round(float(np.percentile(alert_lat, 50)), 3) if alert_lat else None,
        "alert_latency_max_s": round(float(max(alert_lat)), 3) if alert_lat else None,
        "wall_s": round(drained_at - started, 1),
        "keeps_up": bool(worker.stats.streams_ended == n and slope < 0.1 and drained_at - pushed_at < 20),
    }


def replay(settings: Settings, c: Components, recs: list[Path], work: Path) -> dict[str, Any]:
    s = settings.replace(kafka_topic="bench.replay", kafka_dlq_topic="bench.replay.dlq", kafka_group_id="bench-replay")
    folder = work / "archive"
    folder.mkdir()
    for i, r in enumerate(recs):
        shutil.copy(r, folder / f"archive-{i}.mp4")
    from episodic.stream import kafka_io

    kafka_io.ensure_topics(s)
    c.settings = s
    worker = Worker(c)
    done = threading.Event()
    thread = run_worker_until(worker, done)
    time.sleep(3.0)
    started = time.time()
    out = subprocess.run(_cli("replay", str(folder), "--json"), env=_env(s, work / "push-data"),
                         capture_output=True, text=True, check=True)
    pushed = json.loads(out.stdout)
    pushed_at = time.time()
    while worker.stats.streams_ended < len(recs) and time.time() < started + 3600:
        time.sleep(0.2)
    wall = time.time() - started
    done.set()
    thread.join(timeout=60)
    worker.close()
    minutes = pushed["stream_minutes"]
    return {
        "recordings": len(recs),
        "stream_minutes": minutes,
        "push_wall_s": round(pushed_at - started, 1),
        "wall_s": round(wall, 1),
        "stream_minutes_per_minute": round(minutes / (wall / 60), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0, help="length of each live-paced stream")
    ap.add_argument("--streams", type=int, nargs="+", default=[1, 2, 3],
                    help="numbers of live-paced streams to run at once (0: replay only)")
    ap.add_argument("--replay-files", type=int, default=3)
    ap.add_argument("--replay-seconds", type=float, default=60.0)
    ap.add_argument("--provisional", nargs="+", default=["auto"], choices=("auto", "never"),
                    help="provisional_memories values to run the live streams with (never = before issue 17)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="episodic-bench-kafka-"))
    rec = work / "live.mp4"
    build_recording(rec, args.seconds)
    replay_rec = work / "replay.mp4"
    build_recording(replay_rec, args.replay_seconds)
    results: dict[str, Any] = {}
    with LocalBroker() as broker:
        settings = load_settings(data_dir=work / "data", kafka_bootstrap_servers=broker.bootstrap,
                                 kafka_partitions=6)
        c = Components(settings)
        c.ensure_schema()
        for m in (c.embedder, c.describer, c.asr, c.llm):
            if hasattr(m, "prepare"):
                m.prepare()
        results["live"] = []
        for provisional in args.provisional:
            for n in (n for n in args.streams if n > 0):
                r = live(settings, c, rec, n, args.seconds, work, provisional)
                results["live"].append(r)
                print(json.dumps(r), flush=True)
        if args.replay_files:
            results["replay"] = replay(settings, c, [replay_rec] * args.replay_files, work)
            print(json.dumps(results["replay"]), flush=True)
        c.close()
    sustained = [r["streams"] for r in results["live"] if r["keeps_up"] and r["provisional_memories"] == "auto"]
    results["live_streams_sustained"] = max(sustained) if sustained else 0
    print(json.dumps(results, indent=2))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
