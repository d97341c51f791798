"""Small interfaces for every model and store, so a backend is a configuration choice.

Each model reports ``model_id`` (recorded in the memories it helps make) and is safe to
call from one thread at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: importing the Protocols does not load numpy (CLI start-up)
    import numpy as np

from episodic.core.article import Article, ArticleProgress, ArticleRequest
from episodic.core.llm import LanguageModel
from episodic.core.query import (
    AskRequest,
    AskResult,
    LocateRequest,
    LocateResult,
    Moment,
    RecallRequest,
    RecallResult,
    Scope,
)
from episodic.core.records import (
    FrameObservation,
    ShortTermMemory,
    SnippetRef,
    StreamInfo,
    StreamOverview,
    ThetaEvent,
    TranscriptPiece,
)
from episodic.core.summaries import SummariesRequest, SummaryList
from episodic.core.watches import Alert, Watch


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


class SpeechActivity(Protocol):
    """Speech intervals in ``audio`` (mono float32 at ``rate_hz``), in stream time (a
    voice-activity detector: stream/speech_activity.py)."""

    def intervals(self, audio: np.ndarray, rate_hz: int, t_offset: float) -> list[tuple[float, float]]: ...


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


# -- the memory store ----------------------------------------------------------------------
# Three roles, so a component can say which one it needs: ingest writes, the query side reads
# and searches. ``MemoryStore`` is all three plus the lifecycle; Milvus (Lite or server) and the
# in-memory store implement it, and tests/integration/test_store_conformance.py holds both to it.
#
# Common rules: stream times are seconds; a time filter [t_min, t_max] keeps records that
# overlap it; ``stream_ids`` is one id, several, or None for every stream (an empty list matches
# nothing); scores are cosine similarities, best first; bad input raises InputError and an
# unreachable backend StoreError.


@runtime_checkable
class RecordWriter(Protocol):
    """What ingest (the pipeline, the Kafka worker, re-listening) writes."""

    def ensure_schema(self, text_dim: int, feature_dim: int, models: dict[str, str] | None = None) -> None:
        """Create the collections, or check that existing ones were made with the same
        dimensions and models (a mismatch raises StoreError saying how to fix it)."""
        ...

    def upsert_memories(self, memories: Sequence[ShortTermMemory]) -> None:
        """Write memories with their E_i and frame features; a re-upsert replaces them exactly."""
        ...

    def upsert_events(self, events: Sequence[ThetaEvent]) -> None: ...

    def upsert_stream(self, info: StreamInfo) -> None: ...

    def upsert_overviews(self, overviews: Sequence[StreamOverview]) -> None:
        """Write stream and stretch overviews; a re-upsert (same id) replaces the old version."""
        ...

    def delete_overviews(self, stream_id: str, keep_ids: set[str] | None = None) -> int:
        """Delete the stream's overviews whose id is not in ``keep_ids`` (all when None);
        returns how many were deleted. ``delete_stream`` removes them too."""
        ...

    def delete_stream_records_except(self, stream_id: str, keep_memory_ids: set[str]) -> int:
        """Delete the stream's memories (with their events, E_i and frames) not in
        ``keep_memory_ids``; returns the number of records deleted."""
        ...

    def delete_stream(self, stream_id: str) -> int:
        """Remove every record of a stream, its StreamInfo included."""
        ...

    def delete_range(
        self, stream_id: str, t_min: float | None = None, t_max: float | None = None
    ) -> dict[str, int]:
        """Forget a stretch of a stream: delete its memories that overlap [t_min, t_max]
        (closed, either end open when None; exactly those ``list_memories`` returns for the
        range) with their events, E_i and frame rows, and the stream's event, E_i and frame
        rows in the range whose memory is not stored (orphans). Overviews and the StreamInfo
        are left to the caller (recompose or delete them). Returns rows deleted per
        collection: {"memories", "events", "vectors", "frames"}; a repeat deletes nothing."""
        ...


@runtime_checkable
class RecordReader(Protocol):
    """Keyed reads and listings."""

    def list_events(
        self, stream_id: str | Iterable[str] | None = None, t_min: float | None = None,
        t_max: float | None = None, limit: int = 10000, with_vectors: bool = True,
    ) -> list[ThetaEvent]:
        """Events overlapping [t_min, t_max], sorted by (stream_id, t_start)."""
        ...

    def list_memories(
        self, stream_id: str | Iterable[str] | None = None, t_min: float | None = None,
        t_max: float | None = None, limit: int = 10000, with_vectors: bool = False,
    ) -> list[ShortTermMemory]:
        """Memories overlapping [t_min, t_max], sorted by (stream_id, t_start); with
        ``with_vectors`` also their E_i and frame features."""
        ...

    def get_memory(self, memory_id: str, with_vectors: bool = True) -> ShortTermMemory | None: ...

    def get_memories(self, memory_ids: Iterable[str], with_vectors: bool = True) -> dict[str, ShortTermMemory]:
        """By id in one read; ids not stored are absent from the result."""
        ...

    def get_event(self, event_id: str) -> ThetaEvent | None: ...

    def get_events(self, event_ids: Iterable[str]) -> dict[str, ThetaEvent]: ...

    def get_stream(self, stream_id: str) -> StreamInfo | None: ...

    def list_overviews(
        self, stream_id: str | Iterable[str] | None = None, scope: str | None = None,
        limit: int = 10000, with_vectors: bool = False,
    ) -> list[StreamOverview]:
        """Overviews sorted by (stream_id, scope "stream" first, t_start); ``scope`` "stream"
        or "stretch" keeps one kind."""
        ...

    def list_streams(self) -> list[StreamInfo]:
        """Every stream, sorted by id."""
        ...

    def counts(self, stream_id: str | None = None) -> dict[str, int]:
        """Records per kind: memories, events, vectors (E_i), frames, streams, overviews; of
        one stream when ``stream_id`` is given (its storage use; "streams" is 0 or 1)."""
        ...


@runtime_checkable
class RecordSearch(Protocol):
    """Nearest-neighbour search (cosine, best first) with stream and time filters."""

    def search_events(
        self, vector: Any, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None, t_max: float | None = None,
    ) -> list[tuple[ThetaEvent, float]]:
        """Events by their summary embedding."""
        ...

    def search_memories(
        self, vector: Any, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None, t_max: float | None = None, with_vectors: bool = False,
    ) -> list[tuple[ShortTermMemory, float]]:
        """Memories by their v_i."""
        ...

    def search_vectors(
        self, vector: Any, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None, t_max: float | None = None, modality: str | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        """E_i rows as dicts: id, memory_id, stream_id, t_start, t_end, modality, text, vector."""
        ...

    def search_memory_ids(
        self, vector: Any, source: str, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None, t_max: float | None = None, modality: str | None = None,
    ) -> list[tuple[str, float]]:
        """(memory id, score) of the nearest rows of ``source`` ("events", "memories",
        "vectors"), without reading the records."""
        ...

    def search_overviews(
        self, vector: Any, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        scope: str | None = None,
    ) -> list[tuple[StreamOverview, float]]:
        """Overviews by their text embedding (``scope`` as in list_overviews)."""
        ...

    def search_frames(
        self, vector: Any, top_k: int = 10, stream_ids: str | Iterable[str] | None = None,
        t_min: float | None = None, t_max: float | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        """Frame features (query by example): dicts with id, memory_id, stream_id, t, vector."""
        ...


@runtime_checkable
class QueryStore(RecordReader, RecordSearch, Protocol):
    """What the query side needs: reads and searches, never writes."""


@runtime_checkable
class MemoryStore(RecordWriter, RecordReader, RecordSearch, Protocol):
    """The whole store, with its lifecycle."""

    def describe(self) -> str:
        """What and where the store is, for people ("Milvus Lite 2.5 at /data/milvus.db")."""
        ...

    def schema_info(self) -> dict[str, Any] | None:
        """The dimensions and model ids the store was built with; None before ensure_schema."""
        ...

    def enable_vector_cache(self, background: bool = False) -> bool:
        """Keep search vectors in process memory where the backend profits (Milvus Lite);
        False where it does not apply."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class WatchStore(Protocol):
    """Standing queries, their per-stream state and the alert log (core/watches.py). Shared
    by every process that forms memories or serves alerts on one data directory."""

    def add_watch(self, watch: Watch) -> None: ...

    def remove_watch(self, watch_id: str) -> bool: ...

    def list_watches(self) -> list[Watch]: ...

    def watches_version(self) -> int:
        """Changes whenever a watch is added or removed (evaluators reload on a change)."""
        ...

    def get_state(self, watch_id: str, stream_id: str) -> dict[str, Any]: ...

    def put_state(self, watch_id: str, stream_id: str, state: dict[str, Any]) -> None: ...

    def add_alert(self, alert: Alert, webhook: bool) -> bool:
        """Store a new alert (setting ``alert.seq``); False when its id is stored already."""
        ...

    def alerts_since(self, seq: int, limit: int = 100) -> list[Alert]: ...

    def due_webhooks(self, now: float, limit: int = 20) -> list[tuple[Alert, int]]:
        """Alerts whose webhook delivery is due: (alert, attempts so far)."""
        ...

    def webhook_result(self, alert_id: str, delivered: bool, next_attempt_at: float | None) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class SnippetStore(Protocol):
    def put(self, stream_id: str, segment_id: str, t_start: float, t_end: float,
            video_frames: Sequence[object], audio: np.ndarray | None, sample_rate_hz: int,
            fps: float, audio_t_start: float | None = None) -> SnippetRef: ...

    def put_thumbnail(self, stream_id: str, segment_id: str, jpeg: bytes) -> str:
        """Keep a segment's thumbnail (JPEG bytes) beside its snippet; returns its URI, which
        ``open``, ``delete_uris`` and ``delete_stream`` treat like a snippet's."""
        ...

    def open(self, uri: str): ...

    def path_for(self, uri: str) -> Any: ...

    def delete_stream(self, stream_id: str, keep_uris: set[str]) -> int: ...

    def delete_uris(self, uris: Iterable[str]) -> int:
        """Delete exactly the snippets these URIs name; how many were removed. Idempotent:
        one already gone is no error; a URI the store does not hold is left alone."""
        ...

    def bytes_used(self, stream_id: str | None = None) -> int:
        """Bytes the snippets of one stream (or of the whole store) take."""
        ...


# -- what the query services are given ---------------------------------------------------------
class QueryBackends(Protocol):
    """The collaborators of the query services (services.qa.MemoryQA, services.articles,
    retrieval.relisten): the store, the text embedder, the language model and the snippets,
    each built on first use, plus the settings. ``episodic.components.Components`` is the
    configured implementation; tests and embedding programs may pass anything that has these.
    """

    @property
    def settings(self) -> Any: ...

    @property
    def store(self) -> MemoryStore: ...

    @property
    def embedder(self) -> TextEmbedder: ...

    @property
    def llm(self) -> LanguageModel: ...

    @property
    def snippets(self) -> SnippetStore: ...

    @property
    def describer(self) -> VisualDescriber: ...

    def loaded_asr(self) -> SpeechRecognizer | None:
        """The ingest recogniser if this process has built it already (never builds it)."""
        ...


# -- the memory as a service -----------------------------------------------------------------
@runtime_checkable
class MemoryService(Protocol):
    """Questions, moment search, locating by looking again at the video, fuzzy recall, and
    articles, answered in this process (services.local.LocalMemoryService) or by a server
    (episodic.client.Client): the same requests, the same typed results, the same errors
    (InputError, DeadlineExceeded …)."""

    def ask(self, req: AskRequest) -> AskResult: ...

    def search(
        self, query: str, scope: Scope | None = None, top_k: int = 5, deadline_s: float | None = None,
        image: bytes | None = None, like_segment_id: str | None = None,
    ) -> list[Moment]:
        """Moments matching ``query``, best first; search by example with ``image`` (JPEG, PNG
        or WebP bytes, at most 8 MiB) or ``like_segment_id`` (a stored segment's key frame),
        where ``query`` may be empty (words and picture together are rank-fused)."""
        ...

    def locate(self, req: LocateRequest) -> LocateResult:
        """The moments in scope that the stored video itself shows ``req.query`` at, best
        first (looking again at the frames, not at what the memory wrote about them)."""
        ...

    def recall(self, req: RecallRequest) -> RecallResult:
        """The streams in scope that match a half-remembered description, best first, each with
        its key moment and how every facet given held (issue 16). A stream that fails a facet
        is named in ``rejected`` instead; only when no stream holds every facet are the closest
        offered, at half confidence and saying which facet failed, and a result whose evidence
        is poor says so ("weak")."""
        ...

    def list_summaries(self, req: SummariesRequest) -> SummaryList:
        """The day at a glance (issue 17): one stream's summaries per window of stream time
        (10 minutes, an hour, a day), composed only from what its memory holds."""
        ...

    def write_article(
        self, req: ArticleRequest, progress: Callable[[ArticleProgress], None] | None = None
    ) -> Article: ...

    def close(self) -> None: ...
