"""REST beside gRPC: what the HTTP layer adds to a call (issue 18, item 2).

A real server on loopback (``episodic.server.create_server`` with ``http_port = 0``: the gRPC
server and uvicorn in this process, the REST handlers calling gRPC over the private unix
socket), over a generated memory: one recording ingested as two streams with the default
models, as ``bench_serving.py --embedded`` builds it (about a minute on 2 cores). Then ``--n``
calls of each kind per transport, the transports taking turns call by call (so a load that
comes and goes falls on each alike), from one client each (a kept-alive HTTP connection; one
gRPC channel), after ``--warm`` unmeasured rounds:

- ``Search`` (the real MemoryQA: MiniLM query embedding, store, ranking) through
  ``POST /v1/search`` and through the gRPC stub;
- ``Search`` through gRPC once more without the signed media URLs (``grpc_no_urls``: what a
  server without the HTTP API does; with it, each Search reads its moments' segments, batched,
  to sign their snippet and thumbnail URLs);
- ``GetSegment`` (one store read, no model) through ``GET /v1/segments/{id}`` and gRPC: the
  HTTP layer's overhead on a call that costs little itself.

Printed as JSON: median and p95 milliseconds per kind and transport, and the difference.
``--stand-in`` skips the ingest and answers Search with an instant stand-in over an in-process
store (transport only, seconds to run).

    .venv/bin/python benchmarks/bench_rest.py [--n 200] [--warm 20] [--stand-in]
"""

from __future__ import annotations

import argparse
import dataclasses
import http.client
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grpc  # noqa: E402

from episodic import server as server_mod  # noqa: E402
from episodic.config import load_settings  # noqa: E402
from episodic.proto.episodic.v1 import episodic_pb2 as pb  # noqa: E402
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc  # noqa: E402

KEY = "bench-key-0123456789abcdef0123"
QUERY = "the train to Oxford"
SEGMENT = "kitchen@000000000000"


def _embedded(tmp: Path) -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_serving import _embedded_components

    components, _ = _embedded_components(tmp)
    return components


def _stand_in(tmp: Path) -> Any:
    """An in-process store with one hand-made memory per stream, and an instant Search."""
    import numpy as np

    from episodic.components import Components
    from episodic.core.query import Moment
    from episodic.core.records import SnippetRef, StreamInfo
    from tests.store_fixtures import FEATURE_DIM, MODELS, TEXT_DIM, make_memory

    components = Components(load_settings(data_dir=tmp / "data", env={}, store="memory"))
    store = components.store
    store.ensure_schema(TEXT_DIM, FEATURE_DIM, MODELS)
    rng = np.random.default_rng(0)
    memories = [dataclasses.replace(m, snippets=[SnippetRef(f"file:///nowhere/{m.stream_id}/{m.id}.mp4", 0.0, 7.25)])
                for m in (make_memory(rng, sid, 0.0) for sid in ("kitchen", "station"))]
    store.upsert_memories(memories)
    for sid in ("kitchen", "station"):
        store.upsert_stream(StreamInfo(sid, t_end=7.25, memories=1, events=1))

    class InstantSearch:
        def search(self, query: str, scope: Any, top_k: int, **_: Any) -> list[Moment]:
            return [Moment(m.stream_id, m.t_start, m.t_end, 0.5, "stand-in", m.id, m.snippets[0].uri)
                    for m in memories][:top_k]

        def prepare(self) -> None:
            pass

    components.bench_qa = InstantSearch()
    return components


def _stats(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {"median_ms": round(statistics.median(ms), 2), "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2),
            "n": len(ms)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200, help="measured calls per kind and transport")
    ap.add_argument("--warm", type=int, default=20, help="unmeasured calls first")
    ap.add_argument("--stand-in", action="store_true", help="instant Search over hand-made records (no models)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("episodic.access").setLevel(logging.WARNING)

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        keys_file = tmp / "keys.toml"
        keys_file.write_text(f'"{KEY}" = ["*"]\n')
        keys_file.chmod(0o600)
        t0 = time.perf_counter()
        components = _stand_in(tmp) if args.stand_in else _embedded(tmp)
        built_s = time.perf_counter() - t0
        settings = components.settings.replace(grpc_host="127.0.0.1", grpc_port=0, http_port=0,
                                               api_keys_file=str(keys_file), serve_warm_up=False)
        handle = server_mod.create_server(settings, components)
        if args.stand_in:
            handle.servicer._qa = components.bench_qa
        else:
            handle.servicer.qa().prepare()
        handle.server.start()
        handle.http.start(handle)
        md = (("authorization", f"Bearer {KEY}"),)
        headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
        body = json.dumps({"query": QUERY, "top_k": 3}).encode()
        channel = grpc.insecure_channel(handle.address)
        stub = pb_grpc.EpisodicMemoryStub(channel)
        conn = http.client.HTTPConnection("127.0.0.1", handle.http.port, timeout=60)

        def rest(method: str, path: str, payload: bytes | None = None) -> None:
            try:
                conn.request(method, path, body=payload, headers=headers)
                r = conn.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()  # the server closed the idle connection (keep-alive 5 s): reconnect
                conn.request(method, path, body=payload, headers=headers)
                r = conn.getresponse()
            data = r.read()
            if r.status != 200:
                raise SystemExit(f"{method} {path}: {r.status} {data[:200]!r}")

        calls = {
            ("Search", "rest"): lambda: rest("POST", "/v1/search", body),
            ("Search", "grpc"): lambda: stub.Search(pb.SearchRequest(query=QUERY, top_k=3), metadata=md, timeout=60),
            # the same call without the signed URLs (what a server without HTTP answers)
            ("Search", "grpc_no_urls"): lambda: stub.Search(pb.SearchRequest(query=QUERY, top_k=3), metadata=md,
                                                            timeout=60),
            ("GetSegment", "rest"): lambda: rest("GET", f"/v1/segments/{SEGMENT}"),
            ("GetSegment", "grpc"): lambda: stub.GetSegment(pb.GetSegmentRequest(id=SEGMENT), metadata=md, timeout=60),
        }
        results: dict[str, Any] = {}
        try:
            # round-robin over the transports of a kind, so a load that comes and goes (other
            # processes on shared cores) falls on each alike
            links = handle.servicer.links
            samples: dict[tuple[str, str], list[float]] = {k: [] for k in calls}
            for kind in dict.fromkeys(k for k, _ in calls):
                mine = [(k, c) for k, c in calls.items() if k[0] == kind]
                for i in range(args.warm + args.n):
                    for (_, transport), call in mine:
                        handle.servicer.links = None if transport.endswith("no_urls") else links
                        t = time.perf_counter()
                        call()
                        if i >= args.warm:
                            samples[(kind, transport)].append(1000 * (time.perf_counter() - t))
            handle.servicer.links = links
            for (kind, transport), ms in samples.items():
                results.setdefault(kind, {})[transport] = _stats(ms)
            for r in results.values():
                r["rest_minus_grpc_median_ms"] = round(r["rest"]["median_ms"] - r["grpc"]["median_ms"], 2)
        finally:
            conn.close()
            channel.close()
            handle.stop(1)
            components.close()
        print(json.dumps({"memory": "stand-in" if args.stand_in else "generated (2 streams, real models)",
                          "built_s": round(built_s, 1), **results}, indent=2))


if __name__ == "__main__":
    main()
