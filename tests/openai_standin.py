"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1 that plays scripted replies:
the stand-in for vLLM in tests (the real client code, reasoning/openai_llm.py, talks to it).

Each request takes the next entry of ``script``: ``(status, body)`` or
``(status, body, headers)`` (e.g. ``{"Retry-After": "1"}``); with the script empty,
``responder(request_body)`` answers if set, else 200 "ok". ``delay_s`` makes every answer
wait that long (simulated model latency), and ``max_in_flight`` records the most requests
that were being served at once.
"""

from __future__ import annotations

import base64
import http.server
import json
import threading
import time
from collections.abc import Callable

Responder = Callable[[dict], tuple]  # request body -> (status, body) or (status, body, headers)


class _Server(http.server.ThreadingHTTPServer):
    request_queue_size = 64  # many clients connect at once in the concurrency tests


class ChatStandIn:
    """A tiny chat-completions stand-in on 127.0.0.1 that plays scripted answers."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.script: list[tuple[int, bytes] | tuple[int, bytes, dict[str, str]]] = []
        self.requests: list[tuple[str, dict[str, str], dict]] = []
        self.arrivals: list[float] = []  # time.monotonic() of each request, same order
        self.responder: Responder | None = None
        self.delay_s = delay_s
        self.models: list[str] = ["test-model"]  # what GET /v1/models lists
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = json.loads(body)
                with outer._lock:
                    outer.requests.append((self.path, dict(self.headers), request))
                    outer.arrivals.append(time.monotonic())
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                    entry = outer.script.pop(0) if outer.script else None
                counted = True
                try:
                    if entry is None:
                        entry = outer.responder(request) if outer.responder else (200, chat_reply("ok"))
                    status, payload = entry[0], entry[1]
                    extra = entry[2] if len(entry) > 2 else {}
                    if outer.delay_s > 0:
                        time.sleep(outer.delay_s)
                    # the "model" is done: count it out before the reply goes, or a client that
                    # reads the reply and sends its next request can be counted twice (a race
                    # that showed 4 in flight under a limit of 3 on a loaded machine)
                    with outer._lock:
                        outer.in_flight -= 1
                        counted = False
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in extra.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nobody to answer
                finally:
                    if counted:
                        with outer._lock:
                            outer.in_flight -= 1

            def do_GET(self) -> None:  # noqa: N802
                """``GET /v1/models``: the served model names (``models``), as vLLM lists them."""
                if self.path.rstrip("/") != "/v1/models":
                    self.send_error(404)
                    return
                payload = json.dumps(
                    {"object": "list", "data": [{"id": m, "object": "model"} for m in outer.models]}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def reset(self) -> None:
        """Forget recorded requests and the in-flight peak (the script stays)."""
        with self._lock:
            self.requests.clear()
            self.arrivals.clear()
            self.max_in_flight = self.in_flight

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_reply(text: str) -> bytes:
    return json.dumps(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
    ).encode()


def error_reply(message: str) -> bytes:
    """An OpenAI-style error body."""
    return json.dumps({"error": {"message": message}}).encode()


def last_user_text(request: dict) -> str:
    """The text of the last user message of a chat-completions request body."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return " ".join(p.get("text", "") for p in content if p.get("type") == "text")
    return ""


def sent_images(request: dict) -> list[tuple[str, bytes]]:
    """Every image_url part of a request body as (MIME type, decoded bytes), in order.

    Raises AssertionError for an image_url that is not a base64 ``data:`` URI.
    """
    images = []
    for message in request.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if part.get("type") != "image_url":
                continue
            url = part["image_url"]["url"]
            assert url.startswith("data:") and ";base64," in url, url[:60]
            header, data = url[len("data:") :].split(";base64,", 1)
            images.append((header, base64.b64decode(data, validate=True)))
    return images
