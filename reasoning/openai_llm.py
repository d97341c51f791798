"""A language model behind any OpenAI-compatible chat-completions server (vLLM, llama.cpp
server, TGI, the OpenAI API itself), spoken with the standard library only.

This is the production path (HippoMM uses Qwen2.5-VL served by vLLM); keeping it on
``urllib`` means the default install needs no HTTP client dependency and the wire format is
visible in one place. Only text chat is implemented: images for captioning arrive in a later
change as ``image_url`` content parts of the same request.

Retries: connection failures, timeouts, HTTP 429 and 5xx are retried with exponential backoff
(a vLLM server that is still loading weights answers 503 for minutes). Other 4xx answers and
unparseable bodies are configuration errors and fail at once with the server's message.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from typing import Any

from episodic.config import Settings
from episodic.errors import ModelError
from reasoning.llm import ChatMessage

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_RETRIES = 4  # attempts after the first
DEFAULT_BACKOFF_S = 0.5  # first wait; doubles each retry, capped below
MAX_BACKOFF_S = 8.0
RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


class OpenAICompatibleLLM:
    """POST {openai_base_url}/chat/completions; implements ``LanguageModel``."""

    def __init__(
        self,
        settings: Settings,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = DEFAULT_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
    ) -> None:
        base = settings.openai_base_url.strip().rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ModelError(
                f"openai_base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base!r}"
            )
        self.settings = settings
        self.url = base + "/chat/completions"
        self.model = settings.openai_model
        self.model_id = f"openai:{settings.openai_model}"
        self.timeout_s = float(timeout_s)
        self.retries = max(0, int(retries))
        self.backoff_s = max(0.0, float(backoff_s))

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.settings.openai_api_key:
            headers["Authorization"] = f"Bearer {self.settings.openai_api_key}"
        return headers

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One JSON POST with retries; the parsed response object."""
        body = json.dumps(payload).encode("utf-8")
        last_error = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(MAX_BACKOFF_S, self.backoff_s * (2 ** (attempt - 1))))
            request = urllib.request.Request(
                self.url, data=body, headers=self._headers(), method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    raw = response.read()
            except urllib.error.HTTPError as exc:
                detail = _error_detail(exc)
                if exc.code in RETRY_STATUS:
                    last_error = f"HTTP {exc.code}: {detail}"
                    continue
                raise ModelError(
                    f"LLM server at {self.url} refused the request (HTTP {exc.code}): {detail}"
                ) from None
            except (
                urllib.error.URLError,
                http.client.HTTPException,
                ConnectionError,
                TimeoutError,
            ) as exc:
                reason = getattr(exc, "reason", exc)
                last_error = f"{type(exc).__name__}: {reason}"
                continue
            try:
                data = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                raise ModelError(
                    f"LLM server at {self.url} sent a body that is not JSON: {raw[:200]!r}"
                ) from None
            if not isinstance(data, dict):
                raise ModelError(f"LLM server at {self.url} sent JSON that is not an object")
            return data
        raise ModelError(
            f"LLM server at {self.url} unavailable after {self.retries + 1} attempts ({last_error})"
        )

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> str:
        """The assistant's reply, stripped.

        ``seed`` is forwarded (vLLM and OpenAI honour it); reproducibility then depends on
        the server, since batching on a GPU can still change low-order bits.
        """
        if not messages:
            raise ValueError("generate needs at least one message")
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max(1, int(max_tokens)),
            "temperature": max(0.0, float(temperature)),
        }
        if seed is not None:
            payload["seed"] = int(seed)
        data = self._post(payload)
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ModelError(
                f"LLM server at {self.url} answered without choices[0].message.content: "
                f"{json.dumps(data)[:300]}"
            ) from None
        if content is None:
            return ""
        if not isinstance(content, str):
            raise ModelError(f"LLM server at {self.url} sent non-text content: {content!r:.200}")
        return content.strip()


def _error_detail(exc: urllib.error.HTTPError) -> str:
    """The server's own error message when it sent one (OpenAI style or plain text)."""
    try:
        raw = exc.read()
    except Exception:
        return exc.reason if isinstance(exc.reason, str) else str(exc)
    try:
        data = json.loads(raw.decode("utf-8"))
        if isinstance(data, dict):
            err = data.get("error", data)
            if isinstance(err, dict):
                return str(err.get("message") or err)[:300]
            return str(err)[:300]
    except (UnicodeDecodeError, ValueError):
        pass
    return raw[:300].decode("utf-8", "replace") or str(exc.reason)
