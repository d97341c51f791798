"""The HTTP side of ``episodic serve --http-port``: the REST/JSON API and the console, served by
uvicorn in a thread beside the gRPC server and stopped with it.

The REST handlers (:mod:`episodic.http_api`) are a gRPC client of the server in the same
process: the gRPC server also listens, without TLS, on a unix socket in a private temporary
directory (0700; the socket 0600), and the handlers call it, forwarding the caller's
``Authorization`` header. So API keys, their scopes, validation, admission (the model line)
and errors are exactly gRPC's. Only media (snippets with range requests, thumbnails) are read
here, after the same key and segment checks the servicer makes (:mod:`episodic.http_media`).

The HTTP socket is bound when the server is built (:func:`bind_http`), so a busy port fails at
start like gRPC's and the address, hence the signed media URLs, is known before any call.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from episodic.config import Settings
from episodic.core.errors import ConfigError
from episodic.http_links import MediaLinks, Signer, load_secret
from episodic.server import _is_loopback

log = logging.getLogger(__name__)

START_TIMEOUT_S = 15.0


def _url_host(host: str) -> str:
    """The host as it is written in a URL: brackets for IPv6, this machine's name for a
    wildcard address (which no client can connect to)."""
    h = host.strip("[]")
    if h in ("0.0.0.0", "::", ""):
        return socket.gethostname()
    return f"[{h}]" if ":" in h else h


def _bind(host: str, port: int) -> socket.socket:
    h = host.strip("[]")
    try:
        infos = socket.getaddrinfo(h, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}:{port} (HTTP): {exc.strerror or exc}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # not SO_REUSEPORT: a busy port fails
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if h == "::" else 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port} (HTTP): {exc.strerror or exc} (is another server using the port?)"
        ) from None
    sock.set_inheritable(False)
    return sock


def media_signer(settings: Settings) -> Signer:
    """The media URL signer, its secret in ``http_media_secret_file`` or
    ``<data_dir>/http_media_secret``; on a read-only data directory without a secret file an
    ephemeral secret (URLs then die with the process), said once in the log."""
    try:
        return Signer(load_secret(Path(settings.data_dir), settings.http_media_secret_file))
    except ConfigError as exc:
        import secrets

        if settings.http_media_secret_file:
            raise  # a secret the replicas share must not be swapped for one of this process's
        log.warning("%s; signed media URLs will use a secret that lasts until this server stops", exc)
        return Signer(secrets.token_hex(32).encode())


@dataclass
class HttpEndpoint:
    """The bound HTTP socket, the private gRPC socket the REST handlers call, and (once
    started) the uvicorn server in its thread."""

    host: str
    port: int
    url: str  # http(s)://host:port, where this process listens
    base_url: str  # what media URLs start with (http_public_url, else url)
    grpc_target: str  # "unix:/…/grpc.sock": the gRPC server's private listening port
    socket_dir: Path
    links: MediaLinks
    settings: Settings
    tls: bool
    sock: socket.socket | None = None
    _server: Any = None
    _thread: threading.Thread | None = None
    _app: Any = None
    _closed: bool = field(default=False)

    def secure_socket(self) -> None:
        """Make the private gRPC socket 0600 (its directory is 0700 already)."""
        path = self.socket_dir / "grpc.sock"
        if path.exists():
            os.chmod(path, 0o600)

    def start(self, handle: Any) -> None:
        """Build the app over ``handle`` (a started gRPC ServerHandle) and serve it in a
        thread; returns once uvicorn accepts connections."""
        import uvicorn

        from episodic.http_api import create_app

        self.secure_socket()
        self._app = create_app(self.settings, self.grpc_target, handle.servicer, self.links.signer)
        s = self.settings
        config = uvicorn.Config(
            self._app,
            log_config=None,  # the process's logging, not uvicorn's
            access_log=False,  # its lines carry query strings; episodic.access logs without them
            lifespan="off",
            ws="none",
            server_header=False,
            proxy_headers=False,
            timeout_graceful_shutdown=max(1, int(round(s.grpc_grace_s))),
            timeout_keep_alive=5,
            ssl_certfile=s.tls_cert_path or None,
            ssl_keyfile=s.tls_key_path or None,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self.sock]},
                                        name="episodic-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise ConfigError(f"the HTTP API did not start on {self.url} (see the log above)")
            time.sleep(0.02)

    def stop(self, grace_s: float | None = None) -> None:
        """Stop accepting, let requests in flight finish (uvicorn's graceful timeout), close
        the private channel and remove the private socket's directory."""
        if self._closed:
            return
        self._closed = True
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join((grace_s or 0) + 10)
        elif self.sock is not None:
            self.sock.close()
        if self._app is not None:
            self._app.state.episodic.close()

    def cleanup(self) -> None:
        """Remove the private socket's directory (after the gRPC server has stopped)."""
        shutil.rmtree(self.socket_dir, ignore_errors=True)


def bind_http(settings: Settings, keys: Any) -> HttpEndpoint:
    """Bind the HTTP socket and choose the private gRPC socket (not yet listened on: the gRPC
    server adds it as a port). ConfigError for a busy port, or for a non-loopback address
    without API keys (the same rule as gRPC's)."""
    host = settings.http_host or settings.grpc_host
    if not len(keys) and not _is_loopback(host):
        raise ConfigError(
            f"refusing to serve HTTP on {host!r} without API keys: anyone who can reach it could "
            "read every stream. Set api_keys_file (key → stream ids), or bind 127.0.0.1"
        )
    sock = _bind(host, settings.http_port)
    port = sock.getsockname()[1]
    tls = bool(settings.tls_cert_path)
    url = f"{'https' if tls else 'http'}://{_url_host(host)}:{port}"
    base_url = settings.http_public_url.rstrip("/") or url
    socket_dir = Path(tempfile.mkdtemp(prefix="episodic-grpc-"))  # 0700
    return HttpEndpoint(
        host=host, port=port, url=url, base_url=base_url,
        grpc_target=f"unix:{socket_dir / 'grpc.sock'}", socket_dir=socket_dir,
        links=MediaLinks(base_url, media_signer(settings)), settings=settings, tls=tls, sock=sock,
    )
