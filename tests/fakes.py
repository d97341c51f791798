"""Test doubles for the model Protocols, so the query side has unit tests that run in seconds.

They stand in for models (the store is normally the real in-memory store): a bag-of-words
hashing embedder, which puts texts that share words close together, and a language model that
replies from a script. Neither is good at anything but being fast and deterministic. Besides,
``ListingStore``: the two reads the structured answers and key-frame scans make of a store
(streams and memory listings) over a list of records, counting the listings.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from episodic.core.llm import ChatMessage

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """TextEmbedder: each word (and its first five letters, so "leaves" meets "leave") adds
    to one of ``dim`` hashed coordinates; rows are L2-normalised."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.model_id = f"hash-bow-{dim}"

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                for token in {word, word[:5]}:
                    out[row, zlib.crc32(token.encode()) % self.dim] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm == 0:
                out[row, 0] = 1.0
            else:
                out[row] /= norm
        return out


@dataclass
class ScriptedLLM:
    """LanguageModel: replies with ``reply(messages)`` (default: "not stated") and records
    every call."""

    reply: Callable[[list[ChatMessage]], str] = lambda _messages: "not stated"
    model_id: str = "scripted"
    calls: list[list[ChatMessage]] = field(default_factory=list)

    def generate(self, messages: list[ChatMessage], *, max_tokens: int = 256, temperature: float = 0.0,
                 seed: int | None = None) -> str:
        self.calls.append(list(messages))
        return self.reply(messages)


class ListingStore:
    """Streams and memory listings over ``memories`` (ShortTermMemory records), as a store
    answers them; ``listings`` counts the memory listings read."""

    def __init__(self, memories: list[Any]) -> None:
        self.memories = memories
        self.listings = 0

    def list_streams(self) -> list[SimpleNamespace]:
        ids = dict.fromkeys(m.stream_id for m in self.memories)
        return [SimpleNamespace(stream_id=s, memories=sum(m.stream_id == s for m in self.memories),
                                updated_at=0.0, t_end=max(m.t_end for m in self.memories if m.stream_id == s))
                for s in ids]

    def list_memories(self, stream_id: str | Iterable[str] | None = None, t_min: float | None = None,
                      t_max: float | None = None, limit: int = 10000, with_vectors: bool = False) -> list[Any]:
        self.listings += 1
        wanted = None if stream_id is None else {stream_id} if isinstance(stream_id, str) else set(stream_id)
        return [m for m in self.memories if (wanted is None or m.stream_id in wanted)
                and (t_min is None or m.t_end >= t_min) and (t_max is None or m.t_start <= t_max)][:limit]
