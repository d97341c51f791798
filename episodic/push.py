"""``episodic push`` and ``episodic replay``: sources → media chunks → Kafka.

A source (file, RTSP/HTTP URL, capture device) is cut into chunks by
:class:`stream.chunks.Chunker` and each chunk is produced to ``kafka_topic``, keyed by the
stream id, with acks from all in-sync replicas and retries (``stream/kafka_io.py``). With
``realtime`` a file is paced like a live camera: a chunk is sent when its media would have
been recorded. Archived recordings replay through exactly this path.

A chunk that the brokers do not acknowledge within ``kafka_delivery_timeout_ms`` (retries
included) stops the push with a clear error naming the chunk; chunk numbers make a second
push of the same recording harmless (the worker drops numbers it has already processed).
"""

from __future__ import annotations

import glob
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from episodic.config import Settings
from episodic.core.errors import EpisodicError, InputError
from episodic.core.records import validate_stream_id
from episodic.stream.chunks import Chunker
from episodic.stream.decode import redact
from episodic.stream.media_chunk import MediaChunk
from episodic.stream.reconnect import LiveChunks, Outage

log = logging.getLogger(__name__)

MEDIA_SUFFIXES = frozenset(
    [".mp4", ".m4v", ".mov", ".mkv", ".webm", ".ts", ".m2ts", ".mts", ".avi", ".flv", ".mpg", ".mpeg", ".wmv", ".3gp", ".ogv", ".m4a", ".mp3", ".wav", ".flac", ".ogg", ".opus", ".aac"]
)


@dataclass
class PushProgress:
    stream_id: str
    stream_s: float = 0.0
    duration_s: float | None = None
    chunks: int = 0
    bytes: int = 0
    wall_s: float = 0.0
    warnings: list[str] = field(default_factory=list)
    outages: list[Outage] = field(default_factory=list)  # drops of a live source, in order

    @property
    def realtime_factor(self) -> float:
        return self.stream_s / self.wall_s if self.wall_s > 0 else 0.0




def display_source(source: str) -> str:
    """What records say a stream came from: a local file's absolute path (as embedded
    ingest writes it), a URL without its credentials, a device as given."""
    if not _is_live(source) and Path(source).is_file():
        return str(Path(source).resolve())
    return redact(source)


def push_source(
    source: str,
    stream_id: str,
    settings: Settings,
    *,
    realtime: bool = False,
    sender: ChunkSender | None = None,
    format: str | None = None,
    options: dict[str, str] | None = None,
    on_progress: Callable[[PushProgress], None] | None = None,
    append: bool = False,
    on_note: Callable[[str], None] | None = None,
) -> PushProgress:
    """Produce every chunk of ``source`` as ``stream_id``; returns once all are acknowledged.
    ``append``: continue ``stream_id`` after its end even if it has ended.

    A live source (no known duration: RTSP, live HLS, HTTP streams, devices) that drops is
    opened again with backoff and continues the same session across the gap
    (:mod:`stream.reconnect`); when it stays away the stream is closed with what was pushed
    and :class:`~stream.reconnect.SourceLost` is raised after everything sent is acknowledged
    (its ``progress`` attribute says what was pushed). ``on_note`` hears of drops and
    reconnections as they happen."""
    validate_stream_id(stream_id)
    timeout = 15.0 if _is_live(source) else None

    def open_chunker(**continuation: Any) -> Chunker:
        return Chunker(
            source, stream_id, settings, format=format, options=options, timeout=timeout,
            display_source=display_source(source), append=append, **continuation,
        )

    progress = PushProgress(stream_id)

    def outage(o: Outage) -> None:
        if not any(seen is o for seen in progress.outages):  # first call: the drop
            progress.outages.append(o)
            note = f"{display_source(source)} dropped at t={o.at_s:.1f} s ({o.reason}); reconnecting"
        else:
            note = f"{display_source(source)} is back after {o.gap_s:.1f} s ({o.attempts} attempt(s))"
        if on_note is not None:
            on_note(note)

    chunks = LiveChunks(open_chunker, settings.reconnect, on_outage=outage)
    chunks.open()  # the source first: a missing or unreadable one fails before anything talks to Kafka
    own = sender is None
    try:
        if sender is None:
            sender = ChunkSender(settings)
        started = time.monotonic()
        progress.duration_s = chunks.chunker.info.duration_s if chunks.chunker else None
        for chunk in chunks:
            if realtime:
                delay = started + chunk.t_end - time.monotonic()
                if delay > 0:
                    time.sleep(delay)  # the camera has not recorded this yet
                chunk.produced_at_ms = int(time.time() * 1000)
                chunk.live = True
            progress.bytes += sender.send(chunk)
            progress.chunks += 1
            progress.stream_s = chunk.t_end
            progress.wall_s = time.monotonic() - started
            if on_progress is not None:
                on_progress(progress)
        progress.warnings = list(chunks.warnings)
        sender.flush()
    finally:
        chunks.close()
        if own and sender is not None:
            sender.close()
    progress.wall_s = time.monotonic() - started
    if on_progress is not None:
        on_progress(progress)
    if chunks.gave_up is not None:
        chunks.gave_up.progress = progress  # type: ignore[attr-defined]
        raise chunks.gave_up
    return progress


# Errors after which a producer cannot go on, though the brokers may be fine: the broker
# forgot this producer's id or sequence (a restarted broker without durable state, an
# expired producer id) or another producer took it over.
_REBUILD_ERRORS = frozenset(
    ["UnknownProducerIdError", "OutOfOrderSequenceNumberError", "InvalidProducerEpochError",
     "InvalidProducerIdMappingError", "ProducerFencedError"]
)


@dataclass
class _Sent:
    chunk: MediaChunk
    value: bytes
    future: Any


class ChunkSender:
    """Sends chunks in order and checks their acknowledgements in order.

    When the producer hits an error it cannot continue after (``_REBUILD_ERRORS``), the
    sender builds a new producer and sends every chunk not yet acknowledged again, in order,
    for up to ``kafka_delivery_timeout_ms``; chunk numbers make the repeats harmless (the
    worker drops numbers it already has). Any other failure, or running out of time, stops
    with a one-line :class:`~episodic.core.errors.KafkaError` naming the chunk.
    """

    def __init__(self, settings: Settings) -> None:
        from episodic.stream import kafka_io

        self.settings = settings
        kafka_io.ensure_topics(settings.kafka)
        self.producer = kafka_io.ChunkProducer(settings.kafka)
        self.pending: list[_Sent] = []
        self.rebuilds = 0

    def send(self, chunk: MediaChunk) -> int:
        """Queue one chunk; returns its size in bytes."""
        value = chunk.to_bytes()
        self.pending.append(_Sent(chunk, value, self._produce(chunk, value)))
        self._settle(block=False)
        return len(value)

    def _produce(self, chunk: MediaChunk, value: bytes) -> Any:
        headers = [("episodic-schema", b"episodic.v1.MediaChunk"), ("episodic-seq", str(chunk.seq).encode())]
        return self.producer.send(chunk.stream_id, value, headers)

    def flush(self) -> None:
        """Wait until every chunk sent so far is acknowledged (or fail)."""
        self.producer.flush()
        self._settle(block=True)

    def close(self) -> None:
        self.producer.close()

    def __enter__(self) -> ChunkSender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _settle(self, block: bool) -> None:
        from episodic.core.errors import KafkaError
        from episodic.stream.kafka_io import delivery_result

        give_up_at: float | None = None
        while self.pending and (block or self.pending[0].future.is_done):
            sent = self.pending[0]
            what = f"chunk {sent.chunk.seq} of {sent.chunk.stream_id}"
            try:
                delivery_result(sent.future, what, self.settings.kafka)
            except KafkaError:
                cause = type(getattr(sent.future, "exception", None)).__name__
                if cause not in _REBUILD_ERRORS:
                    raise
                if give_up_at is None:
                    give_up_at = time.monotonic() + self.settings.kafka_delivery_timeout_ms / 1000
                if time.monotonic() >= give_up_at:
                    raise
                self._rebuild(cause)
                continue
            self.pending.pop(0)

    def _rebuild(self, cause: str) -> None:
        from episodic.stream import kafka_io

        self.rebuilds += 1
        first = self.pending[0].chunk
        log.warning(
            "Kafka refused the producer (%s) at chunk %d of %s; sending the %d unacknowledged "
            "chunk(s) again with a new producer", cause, first.seq, first.stream_id, len(self.pending),
        )
        self.producer.close(timeout=0)
        # both wait up to kafka_request_timeout_ms for a broker that is still coming back
        kafka_io.ensure_topics(self.settings.kafka)  # a broker without durable state lost them too
        self.producer = kafka_io.ChunkProducer(self.settings.kafka)
        for sent in self.pending:
            sent.future = self._produce(sent.chunk, sent.value)
        self.producer.flush()


def refuse_ended_stream(stream_id: str, settings: Settings) -> None:
    """Refuse, before anything is sent, a push under the id of a stream that has ended and is
    stored: the worker would ignore every chunk of it (nothing is stored twice), so the
    producer is told now instead of "pushed N chunks" for nothing. ``push --append`` skips
    this. Best effort: when the store cannot be read from here (a worker holds the Milvus Lite
    file, no store yet, a server out of reach) the push goes on and the worker's warning stands."""
    from episodic.memory.milvus_store import MilvusStore
    from episodic.pipeline import Checkpoint

    if not settings.milvus_uri and not Path(settings.resolved_milvus_uri).exists():
        return
    try:
        with MilvusStore(settings) as store:
            info = store.get_stream(stream_id)
    except EpisodicError as exc:
        log.info("cannot tell whether %s has ended (%s); the worker will", stream_id, exc)
        return
    checkpoint = Checkpoint.of(info)
    if info is not None and checkpoint is not None and checkpoint.ended:
        raise InputError(
            f"stream {stream_id!r} has ended and is stored ({info.t_end:.1f} s, {info.memories} "
            "memories): the worker would ignore this push. Use --append to continue it after its "
            "end, or another --stream-id"
        )


def _is_live(source: str) -> bool:
    return "://" in source or source.startswith("/dev/")


# -- replay -------------------------------------------------------------------------------------
def stream_id_for(path: Path, how: str) -> str:
    """A stream id from a file's name (``filename``: the stem; ``parent``: the folder and
    the stem), with characters outside [A-Za-z0-9._-] replaced by '-'."""
    if how == "filename":
        raw = path.stem
    elif how == "parent":
        raw = f"{path.parent.name}.{path.stem}"
    else:
        raise InputError(f"--stream-id-from must be filename or parent, got {how!r}")
    sid = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.") or "stream"
    return validate_stream_id(sid[:128])


def replay_sources(pattern: str) -> list[Path]:
    """The recordings a DIR (recursively, by media suffix) or GLOB names, sorted."""
    p = Path(pattern)
    if p.is_dir():
        files = [f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in MEDIA_SUFFIXES]
    else:
        files = [Path(f) for f in glob.glob(os.path.expanduser(pattern), recursive=True) if Path(f).is_file()]
    if not files:
        raise InputError(f"no recordings found for {pattern!r}")
    return sorted(files)
