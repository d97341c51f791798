"""In this process or through a server: the one choice every read command makes the same way.

``streams``, ``events``, ``segments``, ``ask``, ``search``, ``article`` (and ``locate``,
``recall``, ``summaries``) read the memory

* through the `episodic serve` at ``--server HOST:PORT`` (or ``EPISODIC_SERVER``), with
  :class:`episodic.client.Client`;
* else in this process from ``--data`` — unless another process holds that Milvus Lite store
  (one process per data directory). When the holder is an `episodic serve`, which says so in
  ``<data>/serve.json`` (:func:`write_marker`), the command asks it instead and says so on
  stderr; otherwise the error says how to reach a server.

Both ways print the same: a command builds one document (the same names as the gRPC messages)
from either source and prints its table or ``--json`` from that document.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from episodic.cli_app import _quiet_libraries, _settings, err
from episodic.config import Settings
from episodic.core.errors import StoreLockedError

ServerOpt = Annotated[
    str | None,
    typer.Option(
        "--server",
        help="host:port of an `episodic serve` to ask. Without it the memory is read in-process from --data "
             "(or through the `episodic serve` that holds --data's store, if one does).",
        envvar="EPISODIC_SERVER",
    ),
]
ApiKeyOpt = Annotated[
    str | None,
    typer.Option("--api-key", help="API key for --server (sent as `authorization: Bearer`). Env: EPISODIC_API_KEY", envvar="EPISODIC_API_KEY"),
]
CaCertOpt = Annotated[
    Path | None,
    typer.Option("--ca-cert", help="PEM CA certificate that signed the server's TLS certificate: talk TLS to --server."),
]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", help="Give up after this many seconds (the call's deadline).", min=0.001)
]

MARKER_NAME = "serve.json"


# -- the marker `episodic serve` leaves in its data directory ----------------------------------
def marker_path(data_dir: str | Path) -> Path:
    return Path(data_dir) / MARKER_NAME


def write_marker(data_dir: str | Path, address: str, tls: bool, tls_cert: str = "") -> Path:
    """Say in ``<data_dir>/serve.json`` that this process serves the store at ``address``
    (written whole or not at all: a reader never sees half a file)."""
    path = marker_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"address": address, "pid": os.getpid(), "tls": tls, "started_at": time.time()}
    if tls and tls_cert:
        doc["tls_cert"] = str(Path(tls_cert).expanduser().resolve())
    fd, tmp = tempfile.mkstemp(prefix=".serve.", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def publish_marker(settings: Settings, handle: Any) -> None:
    """Once a server listens: read commands on its data directory (streams, ask …) come to it
    while it runs (`serve` and `console` both). A read-only data directory only warns."""
    try:
        write_marker(settings.data_dir, handle.address, handle.tls, settings.tls_cert_path)
    except OSError as exc:
        err.print(f"[yellow]warning[/yellow]: cannot write {MARKER_NAME}: {exc}", highlight=False)


def remove_marker(data_dir: str | Path) -> None:
    """Remove the marker if this process wrote it (another server may have written its own)."""
    path = marker_path(data_dir)
    doc = read_marker(path)
    if doc is not None and doc.get("pid") == os.getpid():
        with contextlib.suppress(OSError):
            path.unlink()


def read_marker(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("address"), str) or not isinstance(doc.get("pid"), int):
        return None
    return doc


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def live_marker(data_dir: str | Path) -> dict[str, Any] | None:
    """The marker of an `episodic serve` still running on ``data_dir``; None when there is
    none, or it is stale (its process is gone: a server killed without a chance to clean up)."""
    doc = read_marker(marker_path(data_dir))
    return doc if doc is not None and _alive(doc["pid"]) else None


def connect_address(address: str) -> str:
    """Where a client on this machine reaches a server bound to ``address`` (a wildcard
    bind is reached on loopback)."""
    host, _, port = address.rpartition(":")
    if host in ("0.0.0.0", ""):
        return f"127.0.0.1:{port}"
    if host in ("[::]", "::"):
        return f"[::1]:{port}"
    return address


# -- choosing the way ---------------------------------------------------------------------------
def store_locked(settings: Settings) -> bool:
    """Whether another process holds this Milvus Lite store (a Milvus server has no lock)."""
    uri = settings.resolved_milvus_uri
    path = os.path.abspath(Path(uri).expanduser())
    if not os.path.exists(os.path.join(path, "LOCK")):  # nothing imported for the usual case
        return False
    from episodic.memory.milvus_lite import _lite_dir_locked, _lite_served_here
    from episodic.memory.milvus_store import _SERVER_SCHEMES

    return not uri.startswith(_SERVER_SCHEMES) and not _lite_served_here(path) and _lite_dir_locked(path)


def _locked_without_server(settings: Settings) -> StoreLockedError:
    return StoreLockedError(
        f"the store at {settings.resolved_milvus_uri} is in use by another episodic process "
        "(Milvus Lite allows one process per data directory), and no `episodic serve` says it "
        f"holds it ({marker_path(settings.data_dir)}): wait for that process to finish, or, if "
        "it is a server, run this command with --server HOST:PORT (the address it printed as "
        "`listening on HOST:PORT`)"
    )


def serving_client(settings: Settings, api_key: str | None, ca_cert: Path | None, timeout: float) -> Any:
    """A Client of the `episodic serve` that holds this locked store, announced on stderr;
    StoreLockedError (saying how to go on) when no running server says it holds it."""
    from episodic.client import Client

    doc = live_marker(settings.data_dir)
    if doc is None:
        raise _locked_without_server(settings)
    address = connect_address(doc["address"])
    if ca_cert is None and doc.get("tls") and doc.get("tls_cert"):
        ca_cert = Path(doc["tls_cert"])  # the server's own certificate: right when self-signed
    err.print(f"the store is in use by episodic serve (pid {doc['pid']}); asking it at {address}",
              highlight=False, soft_wrap=True)
    return Client(address, api_key, ca_cert, timeout_s=timeout)


def client_for(
    server: str | None, api_key: str | None, ca_cert: Path | None, timeout: float, settings: Settings | None,
) -> Any:
    """The Client to read through: ``--server``'s, or the serving process's when the store
    is locked; None to read in this process."""
    if server:
        from episodic.client import Client

        return Client(server, api_key, ca_cert, timeout_s=timeout)
    if settings is not None and store_locked(settings):
        return serving_client(settings, api_key, ca_cert, timeout)
    return None


def local_memory_service(data: Path | None, config: Path | None) -> Any:
    """The memory answered in this process over ``--data`` (models loaded here)."""
    settings = _settings(data, config)
    _quiet_libraries()
    from episodic.components import Components
    from episodic.services.local import LocalMemoryService

    return LocalMemoryService(Components(settings))


def memory_service(
    server: str | None, api_key: str | None, ca_cert: Path | None, timeout: float,
    data: Path | None, config: Path | None,
) -> Any:
    """The memory as a MemoryService: an `episodic serve` (``--server``, or the one that holds
    the store), or this process over ``--data``. Both take the same requests and give the same
    results."""
    client = client_for(server, api_key, ca_cert, timeout, None if server else _settings(data, config))
    return client if client is not None else local_memory_service(data, config)


def waiting_note(memory: Any, local: str) -> str:
    """What a command's status line says while its call runs: the server it waits for (named
    with --server or found holding the store), else ``local`` (what this process is doing)."""
    where = getattr(memory, "server", None)
    return f"waiting for {where} …" if where else local


def read_document(
    server: str | None, api_key: str | None, ca_cert: Path | None, timeout: float,
    data: Path | None, config: Path | None,
    local: Callable[[Settings], dict[str, Any]], remote: Callable[[Any], dict[str, Any]],
) -> dict[str, Any]:
    """A listing's document: ``remote(client)`` through a server (see :func:`client_for`), else
    ``local(settings)``; a store found locked while opening it goes to its server too."""
    settings = None if server else _settings(data, config)
    client = client_for(server, api_key, ca_cert, timeout, settings)
    if client is None:
        assert settings is not None
        try:
            return local(settings)
        except StoreLockedError:  # taken between the check and the opening
            client = serving_client(settings, api_key, ca_cert, timeout)
    with client:
        return remote(client)
