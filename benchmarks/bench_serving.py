"""The query server under a burst of Asks: do health, listings and searches stay fast? (issue 17, item 6)

A real server on a loopback port (``episodic.server.create_server``, the code ``episodic serve``
runs) gets ``--asks`` concurrent Asks (default 100) while ``--probes`` client threads (default
4) call Health/Check, ListStreams, Search and GetSegment in turn, each with a ``--probe-timeout``
deadline (default 5 s, a Kubernetes probe's), until every Ask has its answer or its status.
Printed as JSON per server layout:

- ``bounded``: this server: model-bound calls wait in a line of ``grpc_max_queued_asks`` and
  hold at most turns + queue threads; the pool has ``grpc_max_workers`` threads on top;
- ``legacy`` (for comparison): the layout before issue 17: a pool of ``grpc_max_workers``
  threads and an unbounded line for the model (every waiting Ask holds a thread).

For each: probe latency p50/p95/max in ms (probes count from 0.1 s after the burst is sent
until its last Ask has its status) and how many probes failed (by status), and the Asks
answered, refused (RESOURCE_EXHAUSTED, with the retry-after-ms hints seen) and timed out.

The model is a stand-in by default: its Ask sleeps ``--ask-s`` seconds (the model is not under
test, the server's scheduling is; a sleeping stand-in leaves the CPU to the probes, so a real
model adds CPU contention on top). The store is a stand-in with two segments and Search returns
at once. ``--embedded`` builds a small real store instead (a generated recording ingested with
the default models, about a minute on 2 cores) and Search runs the real MemoryQA (MiniLM query
embedding, store, ranking); Ask stays the stand-in unless ``--real-ask`` (the default language
model answers, and competes with the probes for the CPU).

    .venv/bin/python benchmarks/bench_serving.py [--asks 100] [--ask-s 0.5] [--probes 4]
        [--layouts bounded,legacy] [--embedded [--real-ask]] [--ask-timeout 30]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grpc  # noqa: E402
import numpy as np  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402

from episodic import server as server_mod  # noqa: E402
from episodic.config import Settings, load_settings  # noqa: E402
from episodic.core.query import AskResult, Pathway, QueryType  # noqa: E402
from episodic.core.records import ShortTermMemory, StreamInfo  # noqa: E402
from episodic.proto.episodic.v1 import episodic_pb2 as pb  # noqa: E402
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc  # noqa: E402

KEY = "bench-key-0123456789abcdef0123"
SEGMENT = "kitchen@000000000000"


# -- stand-ins ----------------------------------------------------------------------------------
class StandInStore:
    def __init__(self) -> None:
        self.memories = {
            sid: ShortTermMemory(sid, sid.partition("@")[0], 0.0, 8.0, np.zeros(4, dtype=np.float32))
            for sid in (SEGMENT, "station@000000000000")
        }

    def get_memory(self, ident: str, with_vectors: bool = False) -> ShortTermMemory | None:
        return self.memories.get(ident)

    def get_event(self, ident: str) -> Any:
        return None

    def list_streams(self) -> list[StreamInfo]:
        return [StreamInfo("kitchen", t_end=8.0), StreamInfo("station", t_end=8.0)]


class StandInComponents:
    def __init__(self, settings: Settings) -> None:
        self.settings, self.store, self.snippets = settings, StandInStore(), None

    def close(self) -> None:
        pass


class SlowAsk:
    """Ask sleeps ``ask_s`` (a busy model); Search goes to ``search`` (real or instant)."""

    def __init__(self, ask_s: float, search: Any = None) -> None:
        self.ask_s, self._search = ask_s, search

    def ask(self, req: Any) -> AskResult:
        time.sleep(self.ask_s)
        return AskResult(answer="stand-in", confidence=0.5, pathway=Pathway.FAST,
                         query_type=QueryType.AUDIO, evidence=[])

    def search(self, query: str, scope: Any, top_k: int, deadline_s: float | None = None, **example: Any) -> list[Any]:
        return [] if self._search is None else self._search(query, scope, top_k, deadline_s=deadline_s)


def _embedded_components(tmp: Path) -> tuple[Any, str]:
    from episodic import samples
    from episodic.components import Components
    from episodic.pipeline import ingest_file

    recording = tmp / "kitchen.mp4"
    samples.make_recording(
        recording,
        [samples.Scene(8, seed=1, text="KITCHEN"), samples.Scene(8, seed=2, text="PLATFORM 7")],
        [samples.Speech(1.0, "Tom put three green apples in the blue bowl."),
         samples.Speech(9.5, "The train to Oxford leaves from platform seven.")],
    )
    components = Components(load_settings(data_dir=tmp / "data", env={}))
    ingest_file(recording, "kitchen", components)
    ingest_file(recording, "station", components)
    return components, SEGMENT


# -- measuring ----------------------------------------------------------------------------------
def _summary(latencies_s: list[float], failures: Counter) -> dict[str, Any]:
    ms = sorted(1000 * t for t in latencies_s)
    out: dict[str, Any] = {"n": len(ms) + sum(failures.values()), "ok": len(ms)}
    if ms:
        out.update(p50_ms=round(statistics.median(ms), 1),
                   p95_ms=round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1), max_ms=round(ms[-1], 1))
    if failures:
        out["failed"] = dict(failures)
    return out


def run_layout(layout: str, components: Any, qa: Any, args: argparse.Namespace, keys_file: Path) -> dict[str, Any]:
    settings = components.settings.replace(
        grpc_host="127.0.0.1", grpc_port=0, api_keys_file=str(keys_file),
        grpc_max_workers=args.workers, grpc_max_concurrent_asks=1,
        grpc_max_queued_asks=1000 if layout == "legacy" else args.queue,
    )
    real_pool_size = server_mod.pool_size
    if layout == "legacy":  # the old pool: grpc_max_workers threads for everything
        server_mod.pool_size = lambda s: s.grpc_max_workers  # type: ignore[assignment]
    try:
        handle = server_mod.create_server(settings, components)
    finally:
        server_mod.pool_size = real_pool_size  # type: ignore[assignment]
    handle.servicer._qa = qa
    handle.server.start()
    md = (("authorization", f"Bearer {KEY}"),)
    done = threading.Event()
    measuring = threading.Event()  # set once the burst is sent: only probes from then on count
    probe_lat: dict[str, list[float]] = {k: [] for k in ("health", "ListStreams", "Search", "GetSegment")}
    probe_fail: dict[str, Counter] = {k: Counter() for k in probe_lat}
    lock = threading.Lock()

    def probe(i: int) -> None:
        with grpc.insecure_channel(handle.address) as channel:
            stub, health = pb_grpc.EpisodicMemoryStub(channel), health_pb2_grpc.HealthStub(channel)
            calls = {
                "health": lambda: health.Check(health_pb2.HealthCheckRequest(), timeout=args.probe_timeout),
                "ListStreams": lambda: stub.ListStreams(pb.ListStreamsRequest(), metadata=md,
                                                        timeout=args.probe_timeout),
                "Search": lambda: stub.Search(pb.SearchRequest(query="the train to Oxford", top_k=3),
                                              metadata=md, timeout=args.probe_timeout),
                "GetSegment": lambda: stub.GetSegment(pb.GetSegmentRequest(id=SEGMENT), metadata=md,
                                                      timeout=args.probe_timeout),
            }
            names = list(calls)
            k = i
            while not done.is_set():
                name = names[k % len(names)]
                k += 1
                counts = measuring.is_set()
                t0 = time.perf_counter()
                try:
                    calls[name]()
                    if counts:
                        with lock:
                            probe_lat[name].append(time.perf_counter() - t0)
                except grpc.RpcError as exc:
                    if counts:
                        with lock:
                            probe_fail[name][exc.code().name] += 1
                time.sleep(0.02)

    asks = Counter()
    hints: list[int] = []

    def ask(i: int) -> None:
        with grpc.insecure_channel(handle.address) as channel:
            stub = pb_grpc.EpisodicMemoryStub(channel)
            try:
                stub.Ask(pb.AskRequest(question=f"What is in bowl {i}?"), metadata=md, timeout=args.ask_timeout)
                code = "OK"
            except grpc.RpcError as exc:
                code = exc.code().name
                hint = dict(exc.trailing_metadata() or ()).get("retry-after-ms")
                if hint is not None:
                    with lock:
                        hints.append(int(hint))
        with lock:
            asks[code] += 1

    t0 = time.perf_counter()
    try:
        with ThreadPoolExecutor(args.probes) as probes:
            for i in range(args.probes):
                probes.submit(probe, i)
            time.sleep(0.3)  # the probes' channels connect before the burst
            with ThreadPoolExecutor(args.asks) as burst:
                sent = [burst.submit(ask, i) for i in range(args.asks)]
                time.sleep(0.1)  # the Asks reach the server
                measuring.set()
                for future in sent:
                    future.result()
            done.set()
    finally:
        handle.stop(0)
    result: dict[str, Any] = {
        "pool_threads": args.workers if layout == "legacy" else server_mod.pool_size(settings),
        "grpc_max_queued_asks": "unbounded" if layout == "legacy" else args.queue,
        "wall_s": round(time.perf_counter() - t0, 1),
        "asks": {"sent": args.asks, **dict(asks)},
        "probes": {name: _summary(probe_lat[name], probe_fail[name]) for name in probe_lat},
    }
    if hints:
        result["asks"]["retry_after_ms"] = {"min": min(hints), "max": max(hints)}
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--asks", type=int, default=100, help="concurrent Asks in the burst")
    ap.add_argument("--ask-s", type=float, default=0.5, help="seconds the stand-in model takes per Ask")
    ap.add_argument("--ask-timeout", type=float, default=30.0, help="each Ask's deadline (s)")
    ap.add_argument("--probes", type=int, default=4, help="client threads probing meanwhile")
    ap.add_argument("--probe-timeout", type=float, default=5.0, help="each probe's deadline (s)")
    ap.add_argument("--workers", type=int, default=8, help="grpc_max_workers")
    ap.add_argument("--queue", type=int, default=16, help="grpc_max_queued_asks (bounded layout)")
    ap.add_argument("--layouts", default="bounded,legacy", help="bounded, legacy or both")
    ap.add_argument("--embedded", action="store_true", help="a real store and real Search (ingests first)")
    ap.add_argument("--real-ask", action="store_true", help="with --embedded: Ask runs the real model too")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("episodic.access").setLevel(logging.WARNING)  # a line per call: too many here
    if args.real_ask and not args.embedded:
        ap.error("--real-ask needs --embedded")

    with tempfile.TemporaryDirectory(prefix="bench-serving-") as tmp_dir:
        tmp = Path(tmp_dir)
        keys_file = tmp / "keys.toml"
        keys_file.write_text(f'"{KEY}" = ["*"]\n')
        keys_file.chmod(0o600)
        t0 = time.perf_counter()
        if args.embedded:
            components, _ = _embedded_components(tmp)
            from episodic.services.qa import MemoryQA

            real = MemoryQA(components)
            real.prepare()  # loads the models and the vector cache, as `episodic serve` does
            qa = real if args.real_ask else SlowAsk(args.ask_s, real.search)
        else:
            components = StandInComponents(load_settings(data_dir=tmp / "data", env={}))
            qa = SlowAsk(args.ask_s)
        setup_s = time.perf_counter() - t0
        try:
            results = {layout: run_layout(layout, components, qa, args, keys_file)
                       for layout in args.layouts.split(",")}
        finally:
            components.close()
    print(json.dumps({
        "components": ("embedded (real store, Search and Ask)" if args.real_ask else
                       "embedded (real store and Search; stand-in Ask)") if args.embedded else "stand-ins",
        "setup_s": round(setup_s, 1),
        "asks": args.asks, "ask_s": args.ask_s, "ask_timeout_s": args.ask_timeout,
        "probes": args.probes, "probe_timeout_s": args.probe_timeout,
        "grpc_max_workers": args.workers, "grpc_max_concurrent_asks": 1,
        "layouts": results,
    }, indent=2))


if __name__ == "__main__":
    main()
