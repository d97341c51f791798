"""The gRPC query server: ``episodic.v1.EpisodicMemory`` plus standard health and reflection.

What it promises, and where each promise is kept:

* **Access control** (:class:`ApiKeys`, :class:`Caller`): keys come from ``api_keys_file``,
  each scoped to stream ids or to all (``["*"]``). A call's scope is the intersection of what
  it asks for and what its key may see; naming a stream outside the key is PERMISSION_DENIED,
  and an id (segment, event, snippet) outside it is NOT_FOUND with the same message as an id
  that does not exist, so a key cannot probe for other tenants' records (nor time them: an
  id's stream is checked before the store is read). Keys are compared by
  their SHA-256 digests, so the lookup time does not depend on how much of a key is right.
  With no keys configured anyone may call, so the server then refuses to bind anything but
  loopback.
* **Typed errors** (:func:`_status_for`): InputError → INVALID_ARGUMENT with its message;
  StoreError/ModelError → UNAVAILABLE and anything unexpected → INTERNAL, both with generic
  messages (their details, which can hold paths and URIs, go to the server log only).
* **Deadlines**: the gRPC deadline is checked before work starts and handed to
  ``MemoryQA.ask``, ``MemoryQA.search``, ``LookAgain.locate``, ``FuzzyRecall.recall`` and
  ``ArticleService.write`` as
  ``deadline_s``; ``DeadlineExceeded`` becomes DEADLINE_EXCEEDED.
* **Bad input never takes the server down**: every field is validated before it reaches the
  store (which renders filters from validated values only), request messages are capped at
  ``grpc_max_receive_bytes``, and a failing call is answered and logged, not raised further.
  Status messages quote at most about 100 characters of a value and are cut at 400, so a
  20 kB id is INVALID_ARGUMENT, never a trailer over gRPC's metadata limit. A body that does
  not parse is INVALID_ARGUMENT, counted (``episodic_malformed_requests_total``) and logged
  in one line, not a traceback per call.
* **Load**: model-bound calls wait in a bounded line and are refused beyond it (below), so
  health checks, listings and searches stay fast whatever Asks are queued; every call leaves
  one line on the ``episodic.access`` logger (method, key id, status, milliseconds).

Calls run on a thread pool; the store and snippet store are opened before the server starts,
so threads never race to create them. Ask, Article and Locate (and Recall with a model parser)
hold a model, so at most ``grpc_max_concurrent_asks`` of them run at once, at most
``grpc_max_queued_asks`` more wait within their deadlines, and any beyond that are refused at
once with RESOURCE_EXHAUSTED and trailing metadata ``retry-after-ms``. The pool has
``grpc_max_workers`` threads plus one for each turn and place in that line (and one per
following WatchAlerts stream), so waiting model calls can never take the threads everything
else needs. Article runs the writing in a thread of its
own and streams its progress from there, so a cancelled call stops the work at the next
progress report instead of holding the model for nothing.
"""

from __future__ import annotations

import ipaddress
import logging
import signal
import threading
import time
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from episodic import metrics
from episodic.config import Settings
from episodic.core.errors import ConfigError
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from episodic.server_auth import load_api_keys
from episodic.server_reflection import enable_server_reflection
from episodic.servicer import ALERT_FOLLOWERS_MAX, EpisodicServicer, MalformedRequests

log = logging.getLogger(__name__)

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["EpisodicMemory"].full_name
MAX_SEND_BYTES = 16 * 1024 * 1024  # a 500-event page of 4 KiB summaries stays far below this


# -- building and running ----------------------------------------------------------------------
def _is_loopback(host: str) -> bool:
    h = host.strip("[]")
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def format_address(host: str, port: int) -> str:
    """``host:port``, with IPv6 literals in brackets as gRPC targets need them."""
    h = host.strip("[]")
    return f"[{h}]:{port}" if ":" in h else f"{h}:{port}"


def _server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    if not settings.tls_cert_path:
        return None
    try:
        cert = Path(settings.tls_cert_path).expanduser().read_bytes()
        key = Path(settings.tls_key_path).expanduser().read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the TLS certificate or key: {exc}") from None
    return grpc.ssl_server_credentials([(key, cert)])


@dataclass
class ServerHandle:
    """A built, bound (not yet started) server and what callers need to know about it."""

    server: grpc.Server
    address: str  # host:port actually bound (the port is real even when 0 was asked for)
    servicer: EpisodicServicer
    health: health.HealthServicer
    tls: bool
    http: Any = None  # the REST API's HttpEndpoint (episodic/http_server.py) when http_port >= 0

    def stop(self, grace_s: float | None = None) -> None:
        """Stop taking calls, give the ones in flight ``grace_s`` seconds, and wait (the HTTP
        API first: its requests are calls to this server)."""
        self.health.enter_graceful_shutdown()
        if self.http is not None:
            self.http.stop(grace_s)
        self.server.stop(grace_s).wait()
        if self.http is not None:
            self.http.cleanup()


def pool_size(settings: Settings) -> int:
    """Threads serving calls: ``grpc_max_workers`` that long-held calls can never take, plus
    one per model turn and per place in the line for one (waiting calls hold their thread) and
    one per following WatchAlerts stream (``ALERT_FOLLOWERS_MAX``, each open until cancelled)."""
    return (settings.grpc_max_workers + settings.grpc_max_concurrent_asks + settings.grpc_max_queued_asks
            + ALERT_FOLLOWERS_MAX)


def create_server(settings: Settings, components: Any = None) -> ServerHandle:
    """Build and bind the server (see :func:`build_server`); the handle also carries the bound
    address, the servicer and the health servicer."""
    keys = load_api_keys(settings)
    host = settings.grpc_host
    if not keys and not _is_loopback(host):
        raise ConfigError(
            f"refusing to serve on {host!r} without API keys: anyone who can reach it could read "
            "every stream. Set api_keys_file (key → stream ids), or bind 127.0.0.1"
        )
    credentials = _server_credentials(settings)
    if components is None:
        from episodic.components import Components

        components = Components(settings)
    # Open the stores now: a locked or unreachable store fails here, at start, with its own
    # message, and worker threads never race to create them.
    _ = components.store, components.snippets

    servicer = EpisodicServicer(components, keys, settings.grpc_max_concurrent_asks,
                                settings.grpc_max_queued_asks)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=pool_size(settings), thread_name_prefix="episodic-grpc"),
        interceptors=(MalformedRequests(SERVICE_NAME),),
        maximum_concurrent_rpcs=settings.grpc_max_concurrent_rpcs,
        options=[
            ("grpc.max_receive_message_length", settings.grpc_max_receive_bytes),
            ("grpc.max_send_message_length", MAX_SEND_BYTES),
            ("grpc.so_reuseport", 0),  # a second server on a busy port must fail, not share it
        ],
    )
    pb_grpc.add_EpisodicMemoryServicer_to_server(servicer, server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in ("", SERVICE_NAME):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    enable_server_reflection(  # grpc.reflection.v1 and v1alpha
        (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name), server,
    )
    target = format_address(host, settings.grpc_port)
    http = None
    try:
        if credentials is not None:
            port = server.add_secure_port(target, credentials)
        else:
            port = server.add_insecure_port(target)
        if port and settings.http_port >= 0:
            # the REST API calls this server over a private unix socket (http_server.py)
            from episodic.http_server import bind_http

            http = bind_http(settings, keys)
            if not server.add_insecure_port(http.grpc_target):
                raise ConfigError(f"cannot listen on {http.grpc_target}")
            servicer.links = http.links
    except RuntimeError as exc:
        if http is not None:
            http.stop()
            http.cleanup()
        raise ConfigError(f"cannot listen on {target}: {exc} (is another server using the port?)") from None
    except ConfigError:
        if http is not None:
            http.stop()
            http.cleanup()
        raise
    if not port:
        raise ConfigError(f"cannot listen on {target} (is another server using the port?)")
    return ServerHandle(
        server=server,
        address=format_address(host, port),
        servicer=servicer,
        health=health_servicer,
        tls=credentials is not None,
        http=http,
    )


def build_server(settings: Settings, components: Any = None) -> grpc.Server:
    """A bound, not yet started gRPC server for ``episodic.v1.EpisodicMemory``, health and
    reflection, on ``grpc_host:grpc_port`` (TLS when ``tls_cert_path``/``tls_key_path`` are
    set). ``components`` defaults to ``Components(settings)``. Raises ConfigError for a
    non-loopback host without API keys, unreadable keys or certificates, or a busy port."""
    return create_server(settings, components).server


WARM_UP_JOIN_S = 120.0  # the longest a stop waits for a warm-up still loading models


def _warm_up(handle: ServerHandle) -> None:
    """Load the embedder, the language model and the store's vector cache, then report
    ``episodic.v1.EpisodicMemory`` SERVING. Calls are answered meanwhile (they load what
    they need); a failed warm-up is logged and the server still reports SERVING, because
    listing and search work without the model that failed."""
    t0 = time.perf_counter()
    try:
        handle.servicer.qa().prepare()
        log.info("warmed up in %.1f s: serving", time.perf_counter() - t0)
    except Exception as exc:
        log.error("warm-up failed after %.1f s (%s); serving anyway, calls that need the "
                  "failed part will report it", time.perf_counter() - t0, exc)
    handle.health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)


def _tend_watches(components: Any) -> None:
    """Watch deadlines (absent ``--by HH:MM``) and webhooks other processes left pending:
    the server is the one process that runs all day even when no memory forms."""
    if components.tick_watches() is not None and "watch_store" in components.__dict__:
        components.webhooks().wake()


def serve(
    settings: Settings,
    components: Any = None,
    on_ready: Callable[[ServerHandle], None] | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Run the server until SIGTERM or SIGINT (or until ``stop`` is set), then stop
    gracefully: health turns NOT_SERVING, new calls are refused, and calls in flight get
    ``grpc_grace_s`` seconds to finish. Signal handlers are installed only when called from
    the main thread (Python delivers signals there); elsewhere pass ``stop``."""
    own_components = components is None
    if own_components:
        from episodic.components import Components

        components = Components(settings)
    try:
        handle = create_server(settings, components)
        stop = stop or threading.Event()

        def on_signal(signum: int, frame: Any) -> None:
            log.info("signal %d: stopping (grace %.1f s)", signum, settings.grpc_grace_s)
            stop.set()

        previous = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, on_signal)
        endpoint = None
        warming: threading.Thread | None = None
        sweeper: Any = None
        try:
            endpoint = metrics.start_metrics_server(settings.metrics)
            if settings.serve_warm_up:
                # ready (for load balancers) only once the models and caches are loaded
                handle.health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.NOT_SERVING)
            handle.server.start()
            if handle.http is not None:
                handle.http.start(handle)  # the REST API and the console (http_server.py)
            if settings.serve_warm_up:
                warming = threading.Thread(target=_warm_up, args=(handle,), daemon=True,
                                           name="episodic-warm-up")
                warming.start()
            if on_ready is not None:
                on_ready(handle)
            from episodic import forgetting_jobs  # retention and interrupted forgets (issue 17)

            sweeper = forgetting_jobs.start_sweeper(handle.servicer.forgetter(), settings)
            ticked = time.monotonic()
            while not stop.wait(0.5):
                if time.monotonic() - ticked >= settings.watch_tick_s:
                    ticked = time.monotonic()
                    _tend_watches(components)
        finally:
            if sweeper is not None:
                sweeper.stop()
            handle.stop(settings.grpc_grace_s)
            if warming is not None and warming.is_alive():
                # a process that exits while a model loads in native code aborts (SIGABRT):
                # a stop during warm-up waits for the load to finish
                log.info("waiting for the warm-up to finish before exiting")
                warming.join(WARM_UP_JOIN_S)
            if endpoint is not None:
                endpoint.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    finally:
        if own_components:
            components.close()
