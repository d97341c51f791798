"""The language-model interface every backend implements (local SmolLM2, OpenAI-compatible)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


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
