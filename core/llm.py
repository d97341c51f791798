"""The language-model interface every backend implements (local SmolLM2, OpenAI-compatible)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class ChatMessage:
    """One chat turn. ``images`` are encoded pictures (JPEG bytes; PNG, GIF and WebP are
    recognised too) shown to the model with this turn's text.

    Only the OpenAI-compatible backend (a vision-language model served by vLLM) sends images;
    the local text-only backends (reasoning/local_llm.py, reasoning/llama_cpp_llm.py) read
    ``role`` and ``content`` alone, so a message with images reaches them as its text.
    """

    role: str  # "system" | "user" | "assistant"
    content: str
    images: tuple[bytes, ...] = ()


@runtime_checkable
class LanguageModel(Protocol):
    model_id: str

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> str:
        """The assistant's reply. ``seed`` makes sampling reproducible (same seed, same text)."""
        ...


def json_in_reply(reply: object, kind: type[list] | type[dict]) -> list | dict | None:
    """The JSON list or object a model's reply holds, or None. Models wrap JSON in a ```json
    fence or in prose ("Here are the phrases: [...]"): the fence's content, else the text from
    the first opening bracket to the last closing one, is parsed; anything else is None."""
    import json
    import re

    text = reply.strip() if isinstance(reply, str) else ""
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    opener, closer = ("[", "]") if kind is list else ("{", "}")
    start, end = text.find(opener), text.rfind(closer)
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, kind) else None
