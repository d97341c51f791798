"""A real Milvus server for tests: the Milvus 2.3.5 standalone binary from the ``milvus``
wheel (embedded etcd, local storage), with authentication on, on free 127.0.0.1 ports.

It is the scale-out path of the store (``milvus_uri = http://host:19530`` plus a token)
exercised against a server process, not Milvus Lite. One server per test session; each test
gets its own ``collection_prefix``, so tests never see each other's collections. The wheel
is in the ``dev`` extra; where it is missing the tests that need it are skipped with the
reason (CI installs it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT_TOKEN = "root:Milvus"  # Milvus' built-in administrator (authorization enabled)
START_TIMEOUT_S = 180.0  # a loaded 2-core machine
_PORTS = ("etcd", "root-coord", "proxy", "proxy-internal", "query-coord", "query-node",
          "index-coord", "index-node", "data-coord", "data-node")
_COMPONENTS = ("rootCoord", "proxy", "queryCoord", "queryNode", "indexCoord", "indexNode",
               "dataCoord", "dataNode")


def _free_port() -> int:
    from episodic.dev_broker import free_port

    return free_port()


def milvus_server_binary() -> str | None:
    here = Path(sys.executable).parent / "milvus-server"
    return str(here) if here.is_file() else shutil.which("milvus-server")


@dataclass
class MilvusServer:
    uri: str
    token: str
    process: subprocess.Popen
    data_dir: Path
    log_path: Path

    def stop(self) -> None:
        """Stop the wrapper and the ``milvus run standalone`` child it leaves behind."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        shutil.rmtree(self.data_dir, ignore_errors=True)


def start_milvus_server() -> MilvusServer:
    binary = milvus_server_binary()
    if binary is None:
        raise FileNotFoundError("milvus-server not installed (pip install milvus==2.3.5)")
    data_dir = Path(tempfile.mkdtemp(prefix="episodic-milvus-server-"))
    ports = {name: _free_port() for name in _PORTS}
    args = [binary, "--data", str(data_dir), "--authorization-enabled", "true"]
    for name, port in ports.items():
        args += [f"--{name}-port", str(port)]
    for component in _COMPONENTS:  # listen on loopback only
        args += ["--extra-config", f"{component}.ip=127.0.0.1"]
    # Milvus' embedded etcd listens on the fixed ports 2379/2380 unless given a config file
    # (read through Milvus' environment overrides): with one, servers of parallel test runs
    # or benchmarks on one machine do not collide.
    peer = _free_port()
    etcd_config = data_dir / "embed-etcd.yaml"
    etcd_config.write_text(
        "name: default\n"
        f"data-dir: {data_dir / 'etcd.data'}\n"
        f"listen-peer-urls: http://127.0.0.1:{peer}\n"
        f"initial-advertise-peer-urls: http://127.0.0.1:{peer}\n"
        f"initial-cluster: default=http://127.0.0.1:{peer}\n"
        f"listen-client-urls: http://127.0.0.1:{ports['etcd']}\n"
        f"advertise-client-urls: http://127.0.0.1:{ports['etcd']}\n"
    )
    env = dict(os.environ, ETCD_CONFIG_PATH=str(etcd_config))
    log_path = data_dir / "server.log"
    process = subprocess.Popen(args, stdout=log_path.open("w"), stderr=subprocess.STDOUT,
                               start_new_session=True, env=env)
    server = MilvusServer(f"http://127.0.0.1:{ports['proxy']}", ROOT_TOKEN, process, data_dir, log_path)
    from pymilvus import MilvusClient

    deadline = time.monotonic() + START_TIMEOUT_S
    last = ""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            client = MilvusClient(uri=server.uri, token=server.token, timeout=3)
            client.get_server_version()
            client.close()
            return server
        except Exception as exc:  # not up yet
            last = str(exc)
            time.sleep(0.5)
    tail = ""
    for log in (log_path, data_dir / "logs" / "milvus-stdout.log", data_dir / "logs" / "milvus-stderr.log"):
        if log.exists():
            errors = [ln for ln in log.read_text(errors="replace").splitlines() if "ERROR" in ln or "rror:" in ln]
            tail += f"--- {log.name}\n" + "\n".join(ln[:400] for ln in errors[-5:]) + "\n"
    server.stop()
    raise RuntimeError(f"Milvus server did not start: {last}\n{tail}")


# one module uses it: a session-wide server would keep spending CPU on later tests
@pytest.fixture(scope="module")
def milvus_server() -> Iterator[MilvusServer]:
    if milvus_server_binary() is None:
        pytest.skip("the Milvus 2.3.5 server binary is not installed (pip install milvus==2.3.5)")
    try:
        server = start_milvus_server()
    except RuntimeError:  # a slow start on a loaded machine: one more try, then fail
        server = start_milvus_server()
    try:
        yield server
    finally:
        server.stop()


def unique_prefix(name: str = "t") -> str:
    """A collection prefix of letters, digits and underscores (Milvus' naming rule)."""
    clean = "".join(ch if ch.isalnum() else "_" for ch in name)[:24]
    return f"{clean}_{uuid.uuid4().hex[:8]}_"
