"""A language model behind any OpenAI-compatible chat-completions server (vLLM, llama.cpp
server, TGI, the OpenAI API itself), spoken through the official ``openai`` client.

This is the production path (HippoMM uses Qwen2.5-VL served by vLLM). The SDK does the HTTP:
connection pooling, timeouts, the endpoint's paths and error types. Text chat and images
(``ChatMessage.images``, sent as ``image_url`` content parts holding ``data:`` URIs) share
one request shape. The SDK's own retries are off (``max_retries=0``) and retried here
instead, for one reason: a concurrency slot must not be held while a retry waits (the SDK
sleeps inside the call), or one server that answers 503 would block every other caller.

Retries: connection failures, timeouts, HTTP 408/425/429 and 5xx are retried with
exponential backoff (a vLLM server that is still loading weights answers 503 for minutes);
a ``Retry-After`` header on such an answer is honoured, capped at ``MAX_RETRY_AFTER_S``.
Other 4xx answers and unparseable bodies are configuration errors and fail at once with the
server's message. Timeout, retries and backoff come from the settings (``openai_timeout_s``,
``openai_max_retries``, ``openai_backoff_s``).

Concurrency: every client in the process that talks to the same base URL (with the same
``openai_max_concurrency``) shares one semaphore, so however many threads call, at most that
many requests are in flight to the server; a slot is held only while a request is on the
wire, never during a backoff sleep. ``generate_many`` sends a list of chats concurrently
under that limit, which is how a client batches against vLLM's continuous batching.

Latency: ``add_latency_observer(fn)`` registers ``fn(model_id, seconds, outcome)``, called
once per ``generate`` call (queueing and retries included) with ``outcome`` one of
``OUTCOMES``; metrics exporters hook in there.
"""

from __future__ import annotations

import base64
import email.utils
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any, Literal, overload

from episodic.config import ModelSettings
from episodic.core.errors import ModelError
from episodic.core.llm import ChatMessage

MAX_BACKOFF_S = 8.0  # exponential backoff stops growing here
MAX_RETRY_AFTER_S = 30.0  # a server's Retry-After is honoured up to this long
RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
# The SDK insists on a key; servers started without one (vLLM's default) ignore what is sent.
NO_KEY = "EMPTY"

# Outcomes reported to latency observers.
OUTCOME_OK = "ok"
OUTCOME_REFUSED = "refused"  # a 4xx that retrying cannot fix (bad model name, bad request)
OUTCOME_UNAVAILABLE = "unavailable"  # retries exhausted: timeouts, connection errors, 429/5xx
OUTCOME_BAD_REPLY = "bad_reply"  # an answer that is not the chat-completions shape
OUTCOMES = (OUTCOME_OK, OUTCOME_REFUSED, OUTCOME_UNAVAILABLE, OUTCOME_BAD_REPLY)

LatencyObserver = Callable[[str, float, str], None]

log = logging.getLogger(__name__)

# -- process-wide state: latency observers and per-server concurrency limits -----------------

_observers: list[LatencyObserver] = []
_limiters: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_state_lock = threading.Lock()


def add_latency_observer(fn: LatencyObserver) -> LatencyObserver:
    """Call ``fn(model_id, seconds, outcome)`` after every ``generate`` of every client.

    ``outcome`` is one of ``OUTCOMES``. Observers run on the calling thread and must be
    quick; an exception in one is logged and otherwise ignored. Returns ``fn`` (usable as a
    decorator); adding the same function twice registers it once.
    """
    with _state_lock:
        if fn not in _observers:
            _observers.append(fn)
    return fn


def remove_latency_observer(fn: LatencyObserver) -> None:
    """Stop calling ``fn``; a function that was never added is ignored."""
    with _state_lock:
        if fn in _observers:
            _observers.remove(fn)


def _observe(model_id: str, seconds: float, outcome: str) -> None:
    with _state_lock:
        observers = list(_observers)
    for fn in observers:
        try:
            fn(model_id, seconds, outcome)
        except Exception:  # a metrics bug must never fail a model call
            log.warning("latency observer %r failed", fn, exc_info=True)


def concurrency_limiter(base_url: str, limit: int) -> threading.BoundedSemaphore:
    """The semaphore shared by all clients of ``base_url`` that allow ``limit`` in flight."""
    key = (base_url, max(1, int(limit)))
    with _state_lock:
        sem = _limiters.get(key)
        if sem is None:
            sem = _limiters[key] = threading.BoundedSemaphore(key[1])
        return sem


# -- wire format ------------------------------------------------------------------------------

_IMAGE_MAGIC = (
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_mime_type(data: bytes) -> str:
    """The MIME type of encoded image bytes (JPEG, PNG, GIF, WebP); ValueError otherwise."""
    for magic, mime in _IMAGE_MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError(f"not an encoded JPEG/PNG/GIF/WebP image (starts {bytes(data[:8])!r})")


def image_data_uri(data: bytes) -> str:
    """``data:<mime>;base64,...`` for one encoded image, as image_url parts carry it."""
    return f"data:{image_mime_type(data)};base64,{base64.b64encode(data).decode('ascii')}"


def wire_message(message: ChatMessage) -> dict[str, Any]:
    """One chat message as the API wants it: plain text, or text + image_url content parts."""
    if not message.images:
        return {"role": message.role, "content": message.content}
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"type": "text", "text": message.content})
    for image in message.images:
        parts.append({"type": "image_url", "image_url": {"url": image_data_uri(bytes(image))}})
    return {"role": message.role, "content": parts}


def retry_after_s(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date); None if
    absent or unreadable. Not capped here."""
    if not value or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def _failure(message: str, outcome: str) -> ModelError:
    """A ModelError that remembers its outcome (one of ``OUTCOMES``) for the observers."""
    error = ModelError(message)
    error.outcome = outcome  # type: ignore[attr-defined]
    return error


# -- the client ---------------------------------------------------------------------------------


class OpenAICompatibleLLM:
    """POST {openai_base_url}/chat/completions; implements ``LanguageModel``.

    The keyword arguments override the settings (``openai_timeout_s``,
    ``openai_max_retries``, ``openai_backoff_s``, ``openai_max_concurrency``).
    """

    def __init__(
        self,
        settings: ModelSettings,
        *,
        timeout_s: float | None = None,
        retries: int | None = None,
        backoff_s: float | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        base = settings.openai_base_url.strip().rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ModelError(
                f"openai_base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base!r}"
            )
        self.settings = settings
        self.base_url = base
        self.url = base + "/chat/completions"
        self.model = settings.openai_model
        self.model_id = f"openai:{settings.openai_model}"
        self.timeout_s = float(settings.openai_timeout_s if timeout_s is None else timeout_s)
        if not self.timeout_s > 0:
            raise ModelError(f"the OpenAI client timeout must be > 0 s, got {self.timeout_s}")
        self.retries = max(0, int(settings.openai_max_retries if retries is None else retries))
        self.backoff_s = max(
            0.0, float(settings.openai_backoff_s if backoff_s is None else backoff_s)
        )
        limit = settings.openai_max_concurrency if max_concurrency is None else max_concurrency
        self.max_concurrency = max(1, int(limit))
        self._slots = concurrency_limiter(base, self.max_concurrency)
        self._client: Any = None
        self._client_lock = threading.Lock()

    def _sdk(self) -> Any:
        """The official client for this server, built on first use (importing it takes a
        moment, and a process that never calls the server should not pay for it)."""
        with self._client_lock:
            if self._client is None:
                try:
                    import openai
                except ImportError:
                    raise ModelError(
                        "llm or describer = 'openai' needs the openai package: "
                        ".venv/bin/pip install 'openai>=1.30,<4'"
                    ) from None
                self._client = openai.OpenAI(
                    base_url=self.base_url,
                    api_key=self.settings.openai_api_key or NO_KEY,
                    timeout=self.timeout_s,
                    max_retries=0,  # retried in _post, outside the concurrency slot
                )
            return self._client

    def _wait_before(self, attempt: int, server_asks_s: float | None) -> float:
        """Seconds to sleep before retry number ``attempt`` (1-based)."""
        wait = min(MAX_BACKOFF_S, self.backoff_s * (2 ** (attempt - 1)))
        if server_asks_s is not None:
            wait = max(wait, min(MAX_RETRY_AFTER_S, server_asks_s))
        return wait

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One chat-completions request with retries; the parsed response object."""
        import openai

        client = self._sdk()
        last_error = ""
        server_asks_s: float | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self._wait_before(attempt, server_asks_s))
            server_asks_s = None
            try:
                with self._slots:  # a slot is held only while the request is on the wire
                    reply = client.chat.completions.with_raw_response.create(**payload)
                    raw = reply.http_response.content
            except openai.APIStatusError as exc:
                detail = _error_detail(exc.response.content, exc.message)
                if exc.status_code in RETRY_STATUS:
                    last_error = f"HTTP {exc.status_code}: {detail}"
                    server_asks_s = retry_after_s(exc.response.headers.get("Retry-After"))
                    continue
                raise _failure(
                    f"LLM server at {self.url} refused the request (HTTP {exc.status_code}): {detail}",
                    OUTCOME_REFUSED,
                ) from None
            except openai.APIConnectionError as exc:  # refused, reset, timed out
                last_error = f"{type(exc).__name__}: {exc}"
                continue
            try:
                data = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                raise _failure(
                    f"LLM server at {self.url} sent a body that is not JSON: {raw[:200]!r}",
                    OUTCOME_BAD_REPLY,
                ) from None
            if not isinstance(data, dict):
                raise _failure(
                    f"LLM server at {self.url} sent JSON that is not an object", OUTCOME_BAD_REPLY
                )
            return data
        raise _failure(
            f"LLM server at {self.url} unavailable after {self.retries + 1} attempts ({last_error})",
            OUTCOME_UNAVAILABLE,
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
        the server, since batching on a GPU can still change low-order bits. Messages with
        ``images`` need a vision-language model behind the server.
        """
        if not messages:
            raise ValueError("generate needs at least one message")
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [wire_message(m) for m in messages],
            "max_tokens": max(1, int(max_tokens)),
            "temperature": max(0.0, float(temperature)),
        }
        if seed is not None:
            payload["seed"] = int(seed)
        started = time.perf_counter()
        try:
            content = self._reply_text(self._post(payload))
        except ModelError as exc:
            outcome = getattr(exc, "outcome", OUTCOME_BAD_REPLY)
            _observe(self.model_id, time.perf_counter() - started, outcome)
            raise
        _observe(self.model_id, time.perf_counter() - started, OUTCOME_OK)
        return content

    def _reply_text(self, data: dict[str, Any]) -> str:
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise _failure(
                f"LLM server at {self.url} answered without choices[0].message.content: "
                f"{json.dumps(data)[:300]}",
                OUTCOME_BAD_REPLY,
            ) from None
        if content is None:
            return ""
        if not isinstance(content, str):
            raise _failure(
                f"LLM server at {self.url} sent non-text content: {content!r:.200}",
                OUTCOME_BAD_REPLY,
            )
        return content.strip()

    @overload
    def generate_many(
        self,
        chats: Sequence[list[ChatMessage]],
        *,
        max_tokens: int = ...,
        temperature: float = ...,
        seed: int | None = ...,
        return_exceptions: Literal[False] = ...,
    ) -> list[str]: ...

    @overload
    def generate_many(
        self,
        chats: Sequence[list[ChatMessage]],
        *,
        max_tokens: int = ...,
        temperature: float = ...,
        seed: int | None = ...,
        return_exceptions: Literal[True],
    ) -> list[str | ModelError]: ...

    def generate_many(
        self,
        chats: Sequence[list[ChatMessage]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        return_exceptions: bool = False,
    ) -> list[str] | list[str | ModelError]:
        """One reply per chat, in the order given, with the requests sent concurrently.

        At most ``max_concurrency`` are in flight (the limit shared with every other caller
        of this server), so vLLM batches them on the GPU. With ``return_exceptions`` a chat
        whose call failed gets its ``ModelError`` in its place; otherwise the first failure
        (in input order) is raised once the calls already started have finished.
        """
        chats = list(chats)
        for chat in chats:
            if not chat:
                raise ValueError("generate_many needs at least one message per chat")
        kwargs = {"max_tokens": max_tokens, "temperature": temperature, "seed": seed}

        def one(chat: list[ChatMessage]) -> str | ModelError:
            try:
                return self.generate(chat, **kwargs)  # type: ignore[arg-type]
            except ModelError as exc:
                if return_exceptions:
                    return exc
                raise

        if len(chats) <= 1:
            return [one(c) for c in chats]  # type: ignore[return-value]
        workers = min(len(chats), self.max_concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai-llm") as pool:
            futures = [pool.submit(one, c) for c in chats]
            try:
                return [f.result() for f in futures]  # type: ignore[return-value]
            except BaseException:
                for f in futures:
                    f.cancel()  # the ones not started yet
                raise


def _error_detail(raw: bytes, fallback: str) -> str:
    """The server's own error message when it sent one (OpenAI style or plain text)."""
    try:
        data = json.loads(raw.decode("utf-8"))
        if isinstance(data, dict):
            err = data.get("error", data)
            if isinstance(err, dict):
                return str(err.get("message") or err)[:300]
            return str(err)[:300]
    except (UnicodeDecodeError, ValueError):
        pass
    return raw[:300].decode("utf-8", "replace") or fallback
