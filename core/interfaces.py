"""Small interfaces for every model and store, so a backend is a configuration choice.

Each model reports ``model_id`` (recorded in the memories it helps make) and is safe to
call from one thread at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from episodic.core.records import (
    FrameObservation,
    ShortTermMemory,
    SnippetRef,
    StreamInfo,
    ThetaEvent,
    TranscriptPiece,
)


@runtime_checkable
class TextEmbedder(Protocol):
    """The shared space: queries, transcripts and visual descriptions land here."""

    model_id: str
    dim: int

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised rows."""
        ...


@runtime_checkable
class CrossModalEmbedder(TextEmbedder, Protocol):
    """A joint space that also embeds pixels and sound directly (ImageBind)."""

    def embed_images(self, frames_rgb: Sequence[np.ndarray]) -> np.ndarray: ...

    def embed_audio(self, clips: Sequence[np.ndarray], sample_rate_hz: int) -> np.ndarray: ...


@runtime_checkable
class SpeechRecognizer(Protocol):
    model_id: str

    def transcribe(self, audio: np.ndarray, sample_rate_hz: int, t_offset: float) -> list[TranscriptPiece]:
        """Time-aligned pieces in stream time (``t_offset`` is the audio's start)."""
        ...


@runtime_checkable
class VisualDescriber(Protocol):
    """Turns key frames into text (labels, colours, on-screen text) and frame features."""

    model_id: str
    feature_dim: int

    def describe(
        self, frames_rgb: Sequence[np.ndarray], times: Sequence[float], ocr_mask: Sequence[bool]
    ) -> tuple[list[FrameObservation], np.ndarray]:
        """Observations per frame and (n, feature_dim) frame features (L2-normalised)."""
        ...


@runtime_checkable
class MemoryStore(Protocol):
    def ensure_schema(self, text_dim: int, feature_dim: int, models: dict[str, str] | None = None) -> None: ...

    def upsert_memories(self, memories: Sequence[ShortTermMemory]) -> None: ...

    def upsert_events(self, events: Sequence[ThetaEvent]) -> None: ...

    def upsert_stream(self, info: StreamInfo) -> None: ...

    def list_events(self, stream_id: str | None = None, limit: int = 10000) -> list[ThetaEvent]: ...

    def list_memories(self, stream_id: str | None = None, limit: int = 10000) -> list[ShortTermMemory]: ...

    def list_streams(self) -> list[StreamInfo]: ...

    def delete_stream_records_except(self, stream_id: str, keep_memory_ids: set[str]) -> int: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class SnippetStore(Protocol):
    def put(self, stream_id: str, segment_id: str, t_start: float, t_end: float,
            video_frames: Sequence[object], audio: np.ndarray | None, sample_rate_hz: int,
            fps: float, audio_t_start: float | None = None) -> SnippetRef: ...

    def open(self, uri: str): ...

    def delete_stream(self, stream_id: str, keep_uris: set[str]) -> int: ...
