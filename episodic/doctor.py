"""``episodic doctor``: check every configured backend and say plainly what is wrong.

A deployment has many moving parts (a Milvus server, Kafka, a vLLM endpoint, model folders on
shared volumes); when one is misconfigured the symptom usually shows far from the cause (a
worker that dead-letters everything, a server whose searches find nothing). Each check here
exercises one backend the way the service will, with short timeouts, and reports ``ok``,
``warn`` (works, but something will bite later), ``fail`` (the service cannot run) or ``skip``
(not configured / not asked for), with the detail a person needs to fix it.

Checks, in order: configuration, store (reachable, version, schema and dimensions versus the
configured models), snippets (directory writable; with snippet_uri = s3://… the bucket
reachable and writable and the local cache writable), embedder, asr, describer, llm (loaded and
answering; for an OpenAI-compatible server also that it serves ``openai_model`` and reads
images when the describer uses it), kafka (reachable, topics and partitions) and, when given
one, a running gRPC server (health).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from episodic.config import Settings
from episodic.core.errors import EpisodicError

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
CHECKS = ("config", "store", "snippets", "embedder", "asr", "describer", "llm", "kafka", "server")
MIN_MILVUS = (2, 3)  # one vector field per collection and the JSON fields we use


@dataclass
class CheckResult:
    name: str
    status: str
    detail: str
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["seconds"] = round(self.seconds, 3)
        return d


class Doctor:
    """Runs the checks against one configuration (``components`` built from it lazily)."""

    def __init__(self, settings: Settings, components: Any = None, server: str | None = None,
                 api_key: str | None = None, ca_cert: Path | None = None,
                 kafka_timeout_s: float = 5.0) -> None:
        self.s = settings
        if components is None:
            from episodic.components import Components

            components = Components(settings)
        self.c = components
        self.server = server
        self.api_key = api_key
        self.ca_cert = ca_cert
        self.kafka_timeout_s = kafka_timeout_s

    # -- driver ------------------------------------------------------------------------------
    def run(self, only: Iterable[str] | None = None, skip: Iterable[str] = (),
            on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
        wanted = list(only) if only else list(CHECKS)
        skipped = set(skip)
        for name in list(wanted) + list(skipped):
            if name not in CHECKS:
                raise ValueError(f"unknown check {name!r}; checks are: {', '.join(CHECKS)}")
        results = []
        for name in CHECKS:
            if name not in wanted:
                continue
            if name in skipped:
                result = CheckResult(name, SKIP, "skipped (--skip)")
            else:
                t0 = time.perf_counter()
                try:
                    status, detail = getattr(self, f"check_{name}")()
                except EpisodicError as exc:
                    status, detail = FAIL, str(exc)
                except Exception as exc:  # a check must report, never crash the doctor
                    status, detail = FAIL, f"{type(exc).__name__}: {exc}"
                result = CheckResult(name, status, detail, time.perf_counter() - t0)
            results.append(result)
            if on_result is not None:
                on_result(result)
        return results

    # -- the checks --------------------------------------------------------------------------
    def check_config(self) -> tuple[str, str]:
        s = self.s
        store = "in memory (nothing kept)" if s.store == "memory" else (s.milvus_uri or f"Milvus Lite at {s.resolved_milvus_uri}")
        llm = f"openai {s.openai_model} at {s.openai_base_url}" if s.llm == "openai" else "local"
        detail = (f"store {store}; embedder {s.embedder}; asr {s.whisper_model}; describer "
                  f"{s.describer}; llm {llm}; device {s.device}")
        if s.describer == "openai" and s.llm != "openai":
            return WARN, detail + "; describer=openai sends frames to openai_base_url while " \
                "answers use the local model: intended?"
        return OK, detail

    def check_store(self) -> tuple[str, str]:
        from episodic.memory.milvus_store import MilvusStore

        store = self.c.store
        info = store.schema_info()
        counts = store.counts()
        where = store.describe()
        if isinstance(store, MilvusStore) and not store.is_lite:
            m = _version_tuple(store.server_version)
            if m is not None and m < MIN_MILVUS:
                return FAIL, f"{where}: Milvus {store.server_version} is older than 2.3, which episodic needs"
        if not info:
            return OK, f"{where}: reachable, empty (collections are created on first ingest)"
        problems = []
        want_text = int(self.c.embedder.dim)
        want_feat = int(self.c.describer.feature_dim)
        if info.get("text_dim") != want_text:
            problems.append(f"store vectors are {info.get('text_dim')}-d but the embedder "
                            f"({self.s.embedder}) gives {want_text}-d")
        if info.get("feature_dim") not in (None, want_feat):
            problems.append(f"frame features are {info.get('feature_dim')}-d but the describer "
                            f"gives {want_feat}-d")
        built = info.get("models") or {}
        old = built.get("embedder")
        new = getattr(self.c.embedder, "model_id", None)
        if old and new and old != new:
            problems.append(f"store was built with embedder {old}, configured is {new}")
        summary = ", ".join(f"{k} {v}" for k, v in counts.items() if k in ("events", "memories", "streams"))
        if problems:
            return FAIL, f"{where}: " + "; ".join(problems) + \
                " (use another data directory / collection_prefix, or the original models)"
        return OK, f"{where}: schema v{info.get('schema_version')}, {want_text}-d, {summary}"

    def check_snippets(self) -> tuple[str, str]:
        if self.s.snippet_uri:
            return self._check_s3_snippets()
        folder = self.s.resolved_snippet_dir
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-", delete=True) as f:
                f.write(b"ok")
                f.flush()
        except OSError as exc:
            return FAIL, f"snippet directory {folder} is not writable: {exc}"
        free = _free_gib(folder)
        detail = f"{folder} writable, {free:.1f} GiB free"
        if free < 1.0:
            return WARN, detail + " (snippets of a day of video take several GiB)"
        return OK, detail

    def _check_s3_snippets(self) -> tuple[str, str]:
        """snippet_uri = s3://…: the bucket exists, these credentials may write and delete there,
        and the local cache (copies for decoding) is writable."""
        try:
            detail = self.c.snippets.check(write=True)
        except EpisodicError as exc:
            return FAIL, str(exc)
        folder = self.s.resolved_snippet_cache_dir
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-", delete=True) as f:
                f.write(b"ok")
                f.flush()
        except OSError as exc:
            return FAIL, f"{detail}; snippet cache {folder} is not writable: {exc}"
        free = _free_gib(folder)
        detail += f"; cache {folder} (up to {self.s.snippet_cache_mib} MiB), {free:.1f} GiB free"
        if free * 1024 < self.s.snippet_cache_mib:
            return WARN, detail + " (less free space than snippet_cache_mib)"
        return OK, detail

    def check_embedder(self) -> tuple[str, str]:
        emb = self.c.embedder
        vec = emb.embed_texts(["a person opens the door"])
        if vec.shape != (1, emb.dim):
            return FAIL, f"{emb.model_id} returned shape {vec.shape}, expected (1, {emb.dim})"
        norm = float(np.linalg.norm(vec[0]))
        if not 0.99 < norm < 1.01:
            return FAIL, f"{emb.model_id} vectors are not unit length (norm {norm:.3f})"
        return OK, f"{emb.model_id}, {emb.dim}-d"

    def check_asr(self) -> tuple[str, str]:
        asr = self.c.asr
        if hasattr(asr, "prepare"):
            asr.prepare()
        pieces = asr.transcribe(np.zeros(16000, dtype=np.float32), 16000, 0.0)
        if pieces:
            return WARN, f"{asr.model_id} heard words in one second of silence: {pieces[0].text!r}"
        return OK, f"{asr.model_id} loaded on {self.s.device}"

    def check_describer(self) -> tuple[str, str]:
        d = self.c.describer
        frame = np.zeros((120, 160, 3), dtype=np.uint8)
        frame[:, :80] = (200, 30, 30)
        observations, features = d.describe([frame], [0.0], [False])
        if features.shape != (1, d.feature_dim):
            return FAIL, f"{d.model_id} features have shape {features.shape}, expected (1, {d.feature_dim})"
        text = observations[0].description if observations else ""
        if not text:
            return WARN, f"{d.model_id}: empty description of a test frame"
        people = getattr(d, "people_detector", "")
        return OK, f"{d.model_id}{f' (people: {people})' if people else ''}: {text[:80]!r}"

    def check_llm(self) -> tuple[str, str]:
        from episodic.core.llm import ChatMessage

        notes = []
        if self.s.llm == "openai" or self.s.describer == "openai":
            served = self._served_models()
            if served is not None and self.s.openai_model not in served:
                return FAIL, (f"{self.s.openai_base_url} serves {', '.join(served) or 'no models'}, "
                              f"not openai_model {self.s.openai_model!r}")
            if served is not None:
                notes.append(f"serves {self.s.openai_model}")
        llm = self.c.llm
        if hasattr(llm, "prepare"):
            llm.prepare()
        t0 = time.perf_counter()
        reply = llm.generate([ChatMessage("user", "Reply with the single word: ready")], max_tokens=8)
        ms = (time.perf_counter() - t0) * 1000
        if not reply.strip():
            return WARN, f"{llm.model_id} answered with an empty reply"
        notes.append(f"answered in {ms:.0f} ms")
        if not self.s.asks_answer_model:
            notes.append(f"Ask does not ask it (answer_model = {self.s.answer_model})")
        return OK, f"{llm.model_id}: " + ", ".join(notes)

    def _served_models(self) -> list[str] | None:
        """``GET /models`` of the OpenAI-compatible server (vLLM lists what it serves)."""
        url = self.s.openai_base_url.rstrip("/") + "/models"
        headers = {"Accept": "application/json"}
        if self.s.openai_api_key:
            headers["Authorization"] = f"Bearer {self.s.openai_api_key}"
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                        timeout=min(10.0, self.s.openai_timeout_s)) as r:
                data = json.loads(r.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None  # some compatible servers do not list models
            raise EpisodicError(f"{url} answered HTTP {exc.code}: check openai_base_url / openai_api_key") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EpisodicError(f"cannot reach the LLM server at {url}: {reason}") from None
        rows = data.get("data") if isinstance(data, dict) else None
        return [str(r.get("id")) for r in rows if isinstance(r, dict)] if isinstance(rows, list) else None

    def check_kafka(self) -> tuple[str, str]:
        from episodic.stream.kafka_io import topic_partitions

        try:
            topics = topic_partitions(self.s.kafka, timeout_s=self.kafka_timeout_s)
        except EpisodicError as exc:
            # the embedded default never needs Kafka; only push/worker/replay do
            return WARN, f"{exc} (needed by push, replay and worker only)"
        media = topics.get(self.s.kafka_topic)
        where = f"Kafka at {self.s.kafka_bootstrap_servers}"
        if media is None:
            return WARN, f"{where}: topic {self.s.kafka_topic} does not exist yet (push/worker create it)"
        return OK, (f"{where}: {self.s.kafka_topic} has {media} partitions "
                    f"(run at most {media} workers in group {self.s.kafka_group_id})")

    def check_server(self) -> tuple[str, str]:
        if not self.server:
            return SKIP, "no --server given"
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        from episodic.server import SERVICE_NAME

        if self.ca_cert is not None:
            creds = grpc.ssl_channel_credentials(self.ca_cert.read_bytes())
            channel = grpc.secure_channel(self.server, creds)
        else:
            channel = grpc.insecure_channel(self.server)
        try:
            stub = health_pb2_grpc.HealthStub(channel)
            meta = (("authorization", f"Bearer {self.api_key}"),) if self.api_key else None
            reply = stub.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=5.0,
                               metadata=meta)
        except grpc.RpcError as exc:
            return FAIL, f"{self.server}: {exc.code().name}: {exc.details()}"
        finally:
            channel.close()
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        return (OK if status == "SERVING" else FAIL), f"{self.server}: {SERVICE_NAME} {status}"


def _version_tuple(version: str) -> tuple[int, int] | None:
    import re

    m = re.match(r"v?(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _free_gib(folder: Path) -> float:
    st = os.statvfs(folder)
    return st.f_bavail * st.f_frsize / 2**30
