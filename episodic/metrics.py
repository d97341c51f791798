"""Prometheus metrics for query servers and ingest workers.

What an operator needs to size and watch a deployment, and nothing with unbounded labels (no
stream ids, no question text):

* ingest: ``episodic_ingest_lag_seconds`` (a chunk's production time → the run it belongs
  to stored, the latency a live camera sees), ``episodic_segments_stored_total`` (rate() of it
  is segments/s), ``episodic_chunks_total{outcome}``, ``episodic_open_streams``,
  ``episodic_worker_heartbeat_seconds`` (the last poll of Kafka: liveness);
* queries: ``episodic_rpc_latency_seconds{method,code}``, ``episodic_ask_total{pathway}``,
  ``episodic_model_calls{state}`` (model-bound calls running and queued) and
  ``episodic_malformed_requests_total{method}`` (bodies that do not parse);
* storage and forgetting: ``episodic_stream_records{stream_id}`` and
  ``episodic_stream_snippet_bytes{stream_id}`` (the one exception to "no stream ids": at most
  ``metrics_storage_streams`` streams, the largest, refreshed by every retention sweep and
  forget, not at scrape time), ``episodic_storage_streams``, ``episodic_forgotten_records_total{reason}``;
* models: ``episodic_model_latency_seconds{role,operation}`` around every call into the
  embedder, speech recogniser, visual describer and language model (in-process or remote),
  so the share of time spent in models is ``sum(model) / sum(rpc)``.

The metrics live in prometheus_client's default registry and are always recorded (a counter
increment costs well under a microsecond); ``start_metrics_server`` exposes them over HTTP
only when ``metrics_port`` is set, which deployments do and a laptop need not.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import Counter, Gauge, Histogram, start_http_server

from episodic.config import MetricsSettings
from episodic.core.errors import ConfigError

log = logging.getLogger(__name__)

# Query latencies span 10 ms (a search) to a minute (a long article on a CPU).
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10, 30, 60, 120)
# Ingest lag: a live stream's chunks wait for their segment (5–10 s) and the run's checkpoint.
_LAG_BUCKETS = (0.5, 1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 300, 600, 1800)

RPC_LATENCY = Histogram(
    "episodic_rpc_latency_seconds",
    "Wall time of a gRPC call on the query server, by method and status code.",
    ("method", "code"),
    buckets=_LATENCY_BUCKETS,
)
ASKS = Counter("episodic_ask_total", "Answered questions, by the pathway that answered.", ("pathway",))
MALFORMED_REQUESTS = Counter(
    "episodic_malformed_requests_total",
    "Calls whose request body did not parse as the method's request message, by method.",
    ("method",),
)
MODEL_CALLS = Gauge(
    "episodic_model_calls",
    "Model-bound calls (Ask, Article, Locate; Recall with a model parser) holding a turn "
    "(state=running) or waiting for one (state=waiting); more than grpc_max_queued_asks "
    "waiting are refused with RESOURCE_EXHAUSTED.",
    ("state",),
)
MODEL_LATENCY = Histogram(
    "episodic_model_latency_seconds",
    "Wall time of one call into a model backend (role: embedder, asr, describer, llm).",
    ("role", "operation"),
    buckets=_LATENCY_BUCKETS,
)
MODEL_ERRORS = Counter(
    "episodic_model_errors_total", "Calls into a model backend that raised.", ("role", "operation")
)
INGEST_LAG = Histogram(
    "episodic_ingest_lag_seconds",
    "From a chunk's production (push/replay) to the stored checkpoint or end it belongs to.",
    buckets=_LAG_BUCKETS,
)
INGEST_LAG_LAST = Gauge("episodic_ingest_lag_last_seconds", "The most recent ingest lag sample.")
SEGMENTS = Counter(
    "episodic_segments_stored_total", "ShortTermMemories (with their ThetaEvents) stored."
)
ALERTS = Counter("episodic_alerts_total", "Alerts raised by standing queries (watches).")
PROVISIONAL_WRITES = Counter(
    "episodic_provisional_writes_total",
    "Open (provisional) memories stored on a live source before consolidation closed them.",
)
STREAM_SECONDS = Counter("episodic_stream_seconds_total", "Seconds of stream time ingested.")
CHUNKS = Counter(
    "episodic_chunks_total",
    "Media chunks a worker consumed, by outcome (used, skipped as already stored, dead_letter).",
    ("outcome",),
)
OPEN_STREAMS = Gauge("episodic_open_streams", "Streams a worker is currently assembling.")
WORKER_HEARTBEAT = Gauge(
    "episodic_worker_heartbeat_seconds",
    "Unix time of the worker's last poll of Kafka: alert when time() minus it grows (a stuck "
    "consume loop; one poll's chunks may take up to kafka_max_poll_interval_ms).",
)

# The methods each model role exposes; only these are timed, everything else passes through.
MODEL_METHODS = {
    "embedder": ("embed_texts", "embed_images", "embed_audio"),
    "asr": ("transcribe",),
    "describer": ("describe", "frame_features"),
    "llm": ("generate", "generate_many"),
}


def instrument(backend: Any, role: str) -> Any:
    """Time ``backend``'s model calls (``MODEL_METHODS[role]``) and return it.

    The timed methods are set on the instance itself, so the object keeps its type (protocol
    ``isinstance`` checks, ``hasattr`` probes and concrete-type checks all still hold).
    Instrumenting twice is harmless.
    """
    if getattr(backend, "_episodic_timed", False):
        return backend
    for name in MODEL_METHODS.get(role, ()):
        fn = getattr(backend, name, None)
        if callable(fn):
            setattr(backend, name, _timed(fn, role, name))
    with contextlib.suppress(AttributeError, TypeError):
        backend._episodic_timed = True
    return backend


def _timed(fn: Callable[..., Any], role: str, operation: str) -> Callable[..., Any]:
    latency = MODEL_LATENCY.labels(role, operation)
    errors = MODEL_ERRORS.labels(role, operation)

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        except Exception:
            errors.inc()
            raise
        finally:
            latency.observe(time.perf_counter() - t0)

    return call


STREAM_RECORDS = Gauge(
    "episodic_stream_records",
    "Records one stream holds (memories, events, E_i, frames, overviews, its listing); the "
    "largest metrics_storage_streams streams, as of the last retention sweep or forget.",
    ("stream_id",),
)
STREAM_SNIPPET_BYTES = Gauge(
    "episodic_stream_snippet_bytes",
    "Bytes of one stream's snippet files (the same streams as episodic_stream_records).",
    ("stream_id",),
)
STORAGE_STREAMS = Gauge("episodic_storage_streams", "Streams stored, as of the last retention sweep or forget.")
FORGOTTEN = Counter(
    "episodic_forgotten_records_total",
    "Records forgotten on purpose, by reason (request: Forget or `episodic forget`; retention).",
    ("reason",),
)


_storage_published: set[str] = set()


def set_stream_storage(usage: dict[str, tuple[int, int]], max_streams: int) -> None:
    """Publish each stream's (records, snippet bytes), for the ``max_streams`` largest by
    bytes then records; streams no longer present disappear from the gauges."""
    STREAM_RECORDS.clear()
    STREAM_SNIPPET_BYTES.clear()
    _storage_published.clear()
    STORAGE_STREAMS.set(len(usage))
    ranked = sorted(usage.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))[: max(0, max_streams)]
    for sid, (records, nbytes) in ranked:
        STREAM_RECORDS.labels(sid).set(records)
        STREAM_SNIPPET_BYTES.labels(sid).set(nbytes)
        _storage_published.add(sid)


def update_stream_storage(stream_id: str, records: int, snippet_bytes: int) -> None:
    """One stream's figures after a forget, if it has gauges (a stream left with nothing loses
    them); the ranking is redone by the next sweep."""
    if stream_id not in _storage_published:
        return
    if records == 0 and snippet_bytes == 0:
        STREAM_RECORDS.remove(stream_id)
        STREAM_SNIPPET_BYTES.remove(stream_id)
        _storage_published.discard(stream_id)
        STORAGE_STREAMS.dec()
        return
    STREAM_RECORDS.labels(stream_id).set(records)
    STREAM_SNIPPET_BYTES.labels(stream_id).set(snippet_bytes)


def observe_rpc(method: str, code: str, seconds: float) -> None:
    RPC_LATENCY.labels(method, code).observe(seconds)


def observe_ingest_lag(seconds: float) -> None:
    INGEST_LAG.observe(max(0.0, seconds))
    INGEST_LAG_LAST.set(seconds)


class MetricsEndpoint:
    """The running HTTP exposition server (``/metrics``)."""

    def __init__(self, server: Any, thread: Any, address: str) -> None:
        self.server, self.thread, self.address = server, thread, address

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def start_metrics_server(settings: MetricsSettings) -> MetricsEndpoint | None:
    """Serve ``/metrics`` on ``metrics_host:metrics_port``; None when the port is 0 (off)."""
    if not settings.metrics_port:
        return None
    try:
        server, thread = start_http_server(settings.metrics_port, addr=settings.metrics_host)
    except OSError as exc:
        raise ConfigError(
            f"cannot serve metrics on {settings.metrics_host}:{settings.metrics_port}: {exc}"
        ) from None
    host, port = server.server_address[:2]
    address = f"{host}:{port}"
    log.info("Prometheus metrics on http://%s/metrics", address)
    return MetricsEndpoint(server, thread, address)
