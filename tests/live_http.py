"""A live source on loopback that drops and comes back, for reconnection tests.

It serves MPEG-TS over HTTP the way a camera's HTTP stream does: no Content-Length, no
ranges, so FFmpeg sees a source without a duration. Each connection plays the next *act* of a
script: ``(recording, fraction)`` sends that share of the recording (cut on a TS packet
boundary) and then drops the connection, closes the listening socket and stays away for the
act's ``away_s`` before listening again on the same port; after the last act the server stays
down for good. Nothing is faked: the client sees real resets and refused connections.
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from episodic.dev_broker import free_port

TS_PACKET = 188


@dataclass
class Act:
    recording: Path
    fraction: float = 1.0  # share of the recording sent before the drop
    away_s: float = 0.0  # how long the server is unreachable after this act
    pace_bytes_per_s: float = 0.0  # 0: as fast as the client reads
    reset: bool = False  # drop with a TCP reset (a killed server) rather than a clean close


class DroppingServer:
    def __init__(self, acts: list[Act]) -> None:
        self.acts = list(acts)
        self.port = free_port()
        self.connections = 0
        self.served: list[int] = []  # bytes per connection
        self.down_since: list[float] = []
        self.up_since: list[float] = []
        self._server: http.server.ThreadingHTTPServer | None = None
        self._lock = threading.Lock()
        self._done = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/live.ts"

    def start(self) -> DroppingServer:
        self._listen()
        return self

    def stop(self) -> None:
        self._done.set()
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> DroppingServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _listen(self) -> None:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                with owner._lock:
                    if not owner.acts:
                        self.send_error(503)
                        return
                    act = owner.acts.pop(0)
                    owner.connections += 1
                data = act.recording.read_bytes()
                n = int(len(data) * act.fraction) // TS_PACKET * TS_PACKET
                self.send_response(200)
                self.send_header("Content-Type", "video/mp2t")
                self.send_header("Connection", "close")
                self.end_headers()
                sent = 0
                started = time.monotonic()
                try:
                    while sent < n:
                        piece = data[sent : min(n, sent + 64 * TS_PACKET)]
                        self.wfile.write(piece)
                        sent += len(piece)
                        if act.pace_bytes_per_s:
                            ahead = started + sent / act.pace_bytes_per_s - time.monotonic()
                            if ahead > 0:
                                time.sleep(ahead)
                    self.wfile.flush()
                except OSError:
                    pass
                owner.served.append(sent)
                # the drop: reset this connection, stop listening, come back later (or never)
                if act.reset:  # unsent data is discarded and the client sees ECONNRESET
                    with contextlib.suppress(OSError):
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                threading.Thread(target=owner._go_away, args=(act.away_s,), daemon=True).start()

        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        with self._lock:
            self._server = server
        self.up_since.append(time.monotonic())
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def _go_away(self, away_s: float) -> None:
        with self._lock:
            server, self._server = self._server, None
            last = not self.acts
        if server is None:
            return
        self.down_since.append(time.monotonic())
        server.shutdown()
        server.server_close()
        if last or self._done.wait(away_s):
            return
        self._listen()

