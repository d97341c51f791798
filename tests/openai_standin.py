"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1 that plays scripted replies:
the stand-in for vLLM in tests (the real client code, reasoning/openai_llm.py, talks to it)."""

from __future__ import annotations

import http.server
import json
import threading


class ChatStandIn:
    """A tiny chat-completions stand-in on 127.0.0.1 that plays scripted answers."""

    def __init__(self) -> None:
        self.script: list[tuple[int, bytes]] = []
        self.requests: list[tuple[str, dict[str, str], dict]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests.append((self.path, dict(self.headers), json.loads(body)))
                status, payload = outer.script.pop(0) if outer.script else (200, chat_reply("ok"))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_reply(text: str) -> bytes:
    return json.dumps(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
    ).encode()
