"""``episodic worker``: a Kafka consumer-group member that turns media chunks into memories.

Per stream it keeps a :class:`~episodic.pipeline.StreamRunner` (the same code embedded
ingest runs), so the records are the ones ``episodic ingest`` writes for the same media.

Nothing lost, nothing doubled:

* **Offsets are committed only behind durable state.** A runner restarts from scratch at a
  checkpoint chunk every ``checkpoint_interval_s`` of stream time, after storing everything
  before it and recording the checkpoint with the stream (in Milvus). The committed offset
  of a partition is the smallest offset any of its open streams still needs: the offset of
  its checkpoint chunk. Streams that ended need nothing.
* **A restarted (or rebalanced) worker rebuilds its open segment by re-reading.** For a
  stream it has no runner for, it reads the checkpoint from the store, skips the chunks
  before it, and starts a fresh runner at it: the same state an uninterrupted worker had
  there, because chunks decode on their own (``stream/chunks.py``). Records written again
  on the way get the same ids and contents (deterministic ids, idempotent upserts).
* **Duplicates and gaps**: a runner drops chunk numbers it has processed (producer retries,
  a re-pushed recording) and notes missing ones.
* **Bad chunks** (malformed messages, payloads that do not decode) go to the dead-letter
  topic with the reason; the stream goes on with its next chunk and other streams are
  untouched. Store or model failures are not the chunk's fault: the worker stops without
  committing, and its replacement resumes from the last commit.
* **Backpressure**: chunks are processed as they are polled, at most
  ``worker_max_buffered_chunks`` per poll, so memory stays bounded whatever the backlog.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from episodic import metrics
from episodic.components import Components
from episodic.config import Settings
from episodic.core.errors import EpisodicError
from episodic.core.records import StreamInfo
from episodic.pipeline import Checkpoint, StreamRunner, in_stream_numbering, sessions_of
from episodic.stream.media_chunk import ChunkError, MediaChunk
from episodic.worker_forget import ForgetWatch

log = logging.getLogger(__name__)


@dataclass
class _Stream:
    """A stream this worker is processing: its runner and the Kafka position it needs."""

    runner: StreamRunner
    partition: Any  # TopicPartition
    run_offset: int  # offset of the chunk that began the runner's current run
    run_seq: int


@dataclass
class WorkerStats:
    chunks: int = 0
    skipped: int = 0  # already stored before a checkpoint, duplicates, ended streams
    dead_lettered: int = 0
    streams_ended: int = 0
    commits: int = 0
    lag_ms: list[float] = field(default_factory=list)  # chunk produced → its run stored (sampled)


class Worker:
    """One consumer-group member. :meth:`run` until :meth:`stop` (or idle, if asked)."""

    def __init__(
        self,
        components: Components,
        *,
        consumer: Any = None,
        producer: Any = None,
        worker_id: str | None = None,
        on_chunk: Callable[[MediaChunk, WorkerStats], None] | None = None,
    ) -> None:
        from episodic.stream import kafka_io

        self.c = components
        self.s: Settings = components.settings
        self.worker_id = worker_id or f"{socket.gethostname()}-{os.getpid()}"
        self.consumer = consumer or kafka_io.make_consumer(self.s.kafka)
        self._own_producer = producer is None
        self.producer = producer or kafka_io.ChunkProducer(self.s.kafka)
        self.dead_letters = kafka_io.DeadLetterWriter(self.producer, self.s.kafka)
        if self.s.kafka_alerts_topic:
            components.alert_listeners.append(self._publish_alerts)
        self.streams: dict[str, _Stream] = {}
        self.next_offsets: dict[Any, int] = {}  # partition → offset after the last handled record
        self.committed: dict[Any, int] = {}
        self.stats = WorkerStats()
        self.forgets = ForgetWatch(components)  # forgets made while we write (issue 17)
        self._ignored_sessions: set[str] = set()
        self._joined_at: float | None = None  # when the group last assigned us partitions
        self._run_thread: threading.Thread | None = None
        self._revoked_pending: set[Any] = set()  # taken from us on kafka-python's IO thread
        self._revoked_lock = threading.Lock()
        self.on_chunk = on_chunk
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def _publish_alerts(self, alerts: list[Any]) -> None:
        """Alerts this worker's watches raised, onto the alerts topic (``episodic.v1.Alert``,
        keyed by stream id). Queued without waiting: a slow broker never holds up ingest."""
        from episodic.api_watch import alert_to_proto

        for alert in alerts:
            try:
                self.producer.send_to(self.s.kafka_alerts_topic, alert.stream_id.encode(),
                                      alert_to_proto(alert).SerializeToString(), what=f"alert {alert.id}")
            except EpisodicError as exc:
                log.warning("alert %s was not published to %s: %s", alert.id, self.s.kafka_alerts_topic, exc)

    # -- lifecycle -------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask :meth:`run` to return after the chunk in hand (safe from a signal handler)."""
        self._stop.set()

    def run(self, idle_exit_s: float | None = None) -> WorkerStats:
        """Consume until stopped; with ``idle_exit_s``, also return once no chunk arrived for
        that long and no stream is open."""
        from kafka import ConsumerRebalanceListener

        worker = self

        class _Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked: Any) -> None:
                if threading.current_thread() is worker._run_thread:
                    worker._release(set(revoked))
                else:
                    # kafka-python calls this from its IO thread when the group put us out
                    # (a poll came too late): no blocking consumer call may be made there and
                    # the run thread may be mid-chunk, so the run thread drops them itself
                    with worker._revoked_lock:  # never _lock: a commit may hold it, waiting on this thread
                        worker._revoked_pending |= set(revoked)

            def on_partitions_assigned(self, assigned: Any) -> None:
                worker._joined_at = time.monotonic()
                log.info("assigned %s", sorted(f"{tp.topic}[{tp.partition}]" for tp in assigned))

        self._run_thread = threading.current_thread()
        self.c.ensure_schema()
        self.consumer.subscribe([self.s.kafka_topic], listener=_Listener())
        last_record = ticked = time.monotonic()
        try:
            while not self._stop.is_set():
                batch = self.consumer.poll(timeout_ms=500, max_records=self.s.worker_max_buffered_chunks)
                polled_at = time.monotonic()
                self._apply_revocations()
                metrics.WORKER_HEARTBEAT.set_to_current_time()
                if batch:
                    last_record = polled_at
                self._handle_batch(batch, polled_at)
                self._commit()
                if polled_at - ticked >= self.s.watch_tick_s:  # absent watches' --by deadlines
                    ticked = polled_at
                    self.c.tick_watches(streams=sorted(self.streams))
                if (
                    idle_exit_s is not None
                    and not batch
                    and not self.streams
                    and self._joined_at is not None  # idle only counts once in the group
                    and time.monotonic() - max(last_record, self._joined_at) >= idle_exit_s
                ):
                    break
        finally:
            self._commit()
        return self.stats

    def _handle_batch(self, batch: dict[Any, list[Any]], polled_at: float) -> None:
        """Handle one poll's records, but only for half of ``kafka_max_poll_interval_ms``.

        A member that does not poll within that interval is put out of the group and its
        partitions go to another member, which re-reads them from the last commit; if each
        member then spends as long on the same backlog, they hand it back and forth for good
        (seen with two workers on a loaded 2-core machine). So once half the interval is
        spent, the records not yet handled are left for the next poll: the consumer is moved
        back to the first of them, and nothing is skipped or handled twice.
        """
        budget_s = self.s.kafka_max_poll_interval_ms / 2000
        pending = [(tp, record) for tp, records in batch.items() for record in records]
        for k, (tp, record) in enumerate(pending):
            if self._stop.is_set():
                return
            lost = self._apply_revocations()
            if lost or time.monotonic() - polled_at > budget_s:
                if not lost:
                    log.info("poll budget of %.0f s spent: %d records left for the next poll",
                             budget_s, len(pending) - k)
                self._unread(pending[k:], lost)
                return
            self._handle(tp, record)

    def _unread(self, records: list[tuple[Any, Any]], lost: set[Any]) -> None:
        """Move the consumer back to the first of ``records`` in each partition still ours
        (the poll moved it past them; the next poll returns them again)."""
        first: dict[Any, int] = {}
        for tp, record in records:
            first.setdefault(tp, record.offset)
        for tp, offset in first.items():
            if tp not in lost:
                self.consumer.seek(tp, offset)

    def close(self) -> None:
        """Leave the group (open streams resume elsewhere from their checkpoints)."""
        try:
            self.consumer.close()
        finally:
            if self._own_producer:
                self.producer.close()

    # -- one record ------------------------------------------------------------------------
    def _handle(self, tp: Any, record: Any) -> None:
        self.next_offsets[tp] = record.offset + 1
        try:
            chunk = MediaChunk.from_bytes(record.value, self.s)
        except ChunkError as exc:
            self._dead_letter(str(exc), tp, record, parsed=False)
            return
        key = record.key.decode("utf-8", "replace") if isinstance(record.key, bytes) else record.key
        if key is not None and key != chunk.stream_id:
            log.warning("chunk %s of %s arrived with key %r", chunk.seq, chunk.stream_id, key)
        if self._forgotten(chunk):
            return
        opened_here = chunk.stream_id not in self.streams
        st = self.streams.get(chunk.stream_id) or self._open(chunk, tp, record.offset)
        if st is None:
            self.stats.skipped += 1
            metrics.CHUNKS.labels("skipped").inc()
            return
        checkpoint_before = st.runner.checkpoint.seq
        try:
            used = st.runner.feed(chunk)
        except ChunkError as exc:
            self._dead_letter(str(exc), tp, record, parsed=True)
            if opened_here:
                # nothing of this stream was taken here: keeping it open would hold its
                # partition's offset at this chunk for good (and an idle worker never exits);
                # its next chunk opens it again from its checkpoint
                del self.streams[chunk.stream_id]
                metrics.OPEN_STREAMS.set(len(self.streams))
            return
        if not used:
            self.stats.skipped += 1
            metrics.CHUNKS.labels("skipped").inc()
            return
        self.stats.chunks += 1
        metrics.CHUNKS.labels("used").inc()
        if st.runner.checkpoint.seq != checkpoint_before and not st.runner.ended:
            # this chunk began a new run: everything before it is stored
            st.run_offset, st.run_seq = record.offset, st.runner.checkpoint.seq
            # the lag is observed before the checkpoint is announced: whoever reads the log line
            # and then scrapes the metrics finds that checkpoint counted
            self._record_lag(chunk)
            log.info(
                "%s: checkpoint at chunk %d (t=%.2f s): everything before it is stored",
                chunk.stream_id, st.run_seq, st.runner.checkpoint.t_s,
            )
        if st.runner.ended:
            self._end(st, chunk)
        if self.on_chunk is not None:
            self.on_chunk(chunk, self.stats)

    def _open(self, chunk: MediaChunk, tp: Any, offset: int) -> _Stream | None:
        """A runner for a stream seen for the first time here, resumed from its checkpoint."""
        since_seq, info = self.forgets.listing(chunk.stream_id)
        cp = Checkpoint.of(info)
        sessions = sessions_of(info)
        seq = in_stream_numbering(chunk, sessions).seq
        if (
            info is not None and cp is not None and cp.ended and chunk.append
            and chunk.session_id and chunk.session_id not in sessions
        ):
            return self._reopen(chunk, tp, offset, info, cp, since_seq)
        if cp is not None and (cp.ended or seq < cp.seq):
            # stored already (a re-delivery, a re-pushed recording)
            if cp.ended and chunk.session_id and chunk.session_id not in self._ignored_sessions:
                self._ignored_sessions.add(chunk.session_id)
                log.warning(
                    "%s has ended and is stored; ignoring push session %s (chunk %d): push with "
                    "--append to continue it, under a new stream id, or delete the stream first",
                    chunk.stream_id, chunk.session_id, chunk.seq,
                )
            return None
        if cp is None and chunk.seq > 0:
            log.warning(
                "%s: no checkpoint stored and the first chunk seen is %d; starting there",
                chunk.stream_id, chunk.seq,
            )
            cp = Checkpoint(chunk.seq, chunk.t_start)
        runner = StreamRunner(
            chunk.stream_id,
            self.forgets.backends_for(chunk.stream_id, since_seq),
            source=chunk.source,
            media=_media_of(chunk),
            resume=cp,
            previous=info,
            live=chunk.is_live,
        )
        if cp is not None and cp.seq > 0:
            log.info("%s: resuming at chunk %d (t=%.2f s)", chunk.stream_id, cp.seq, cp.t_s)
        st = _Stream(runner, tp, offset, runner.checkpoint.seq)
        self.streams[chunk.stream_id] = st
        metrics.OPEN_STREAMS.set(len(self.streams))
        return st

    def _reopen(
        self, chunk: MediaChunk, tp: Any, offset: int, info: StreamInfo, cp: Checkpoint, since_seq: int
    ) -> _Stream:
        """A stream that has ended, continued by an ``--append`` push: a runner that starts
        where the stream ends, with the new session placed there. Deterministic (the same
        stored end gives the same placement), so a worker that dies before the next checkpoint
        places it the same way when it reads the session again."""
        start = Checkpoint(cp.seq, round(float(info.t_end), 6))
        runner = StreamRunner(
            chunk.stream_id, self.forgets.backends_for(chunk.stream_id, since_seq), source=chunk.source,
            media=_media_of(chunk), resume=start, previous=info,
            live=chunk.is_live,
        )
        runner.sessions[chunk.session_id] = (start.seq, start.t_s)
        log.info(
            "%s: push session %s appends to the ended stream at chunk %d, t=%.2f s",
            chunk.stream_id, chunk.session_id, start.seq, start.t_s,
        )
        st = _Stream(runner, tp, offset, runner.checkpoint.seq)
        self.streams[chunk.stream_id] = st
        metrics.OPEN_STREAMS.set(len(self.streams))
        return st

    def _forgotten(self, chunk: MediaChunk) -> bool:
        """Drop the stream's runner when a forget reached what it holds, and skip the chunk
        when it lies in a stretch forgotten after it was produced (see episodic.worker_forget)."""
        st = self.streams.get(chunk.stream_id)
        if st is not None and self.forgets.reached(st.runner):
            self.forgets.drop(st.runner)
            del self.streams[chunk.stream_id]
            metrics.OPEN_STREAMS.set(len(self.streams))
            st = None
        if not self.forgets.forgotten(chunk, st.runner if st is not None else None):
            return False
        log.info("%s: chunk %d (t=%.2f s) lies in a forgotten stretch: skipped", chunk.stream_id, chunk.seq, chunk.t_start)
        self.stats.skipped += 1
        metrics.CHUNKS.labels("skipped").inc()
        return True

    def _end(self, st: _Stream, chunk: MediaChunk) -> None:
        runner = st.runner
        store = runner.c.store  # guarded: a forget meanwhile is not undone
        if not runner.resumed:
            # the whole stream went through this runner: drop records of earlier runs
            store.delete_stream_records_except(runner.stream_id, runner.memory_ids)
            self.c.snippets.delete_stream(runner.stream_id, runner.snippet_uris)
        runner.refresh_overviews(since_s=0.0 if not runner.resumed else runner.checkpoint.t_s)
        store.upsert_stream(runner.stream_info())
        store.flush()
        for w in runner.warnings:
            log.warning("%s", w)
        del self.streams[runner.stream_id]
        metrics.OPEN_STREAMS.set(len(self.streams))
        self.stats.streams_ended += 1
        self._record_lag(chunk)
        log.info(
            "%s ended: %.1f s, %d memories, %d duplicates skipped, %d gaps",
            runner.stream_id, runner.progress.stream_s, runner.progress.memories,
            runner.duplicates, len(runner.gaps),
        )

    def _record_lag(self, chunk: MediaChunk) -> None:
        if chunk.produced_at_ms > 0:
            lag_ms = time.time() * 1000 - chunk.produced_at_ms
            metrics.observe_ingest_lag(lag_ms / 1000)
            self.stats.lag_ms.append(lag_ms)
            del self.stats.lag_ms[:-1000]

    def _dead_letter(self, reason: str, tp: Any, record: Any, parsed: bool) -> None:
        from episodic.stream.kafka_io import delivery_result

        log.warning("dead-lettering %s[%d]@%d: %s", tp.topic, tp.partition, record.offset, reason)
        metrics.CHUNKS.labels("dead_letter").inc()
        future = self.dead_letters.send(
            reason=reason,
            topic=tp.topic,
            partition=tp.partition,
            offset=record.offset,
            value=record.value if isinstance(record.value, (bytes, bytearray)) else b"",
            parsed=parsed,
            worker_id=self.worker_id,
            key=record.key,
        )
        self.dead_letters.flush()
        # the offset is committed past this record only once its dead letter is stored;
        # a KafkaError here stops the worker, and its replacement dead-letters it again
        delivery_result(future, f"the dead letter for {tp.topic}[{tp.partition}]@{record.offset}", self.s.kafka)
        self.stats.dead_lettered += 1

    # -- offsets ---------------------------------------------------------------------------
    def safe_offsets(self) -> dict[Any, int]:
        """Per partition, the offset a replacement worker must start from."""
        out = dict(self.next_offsets)
        for st in self.streams.values():
            if st.partition in out:
                out[st.partition] = min(out[st.partition], st.run_offset)
        return out

    def _commit(self) -> None:
        from episodic.stream import kafka_io

        with self._lock:
            wanted = {tp: off for tp, off in self.safe_offsets().items() if self.committed.get(tp) != off}
            if not wanted:
                return
            self.c.store.flush()  # what the offsets vouch for must be on disk first
            if kafka_io.commit_offsets(self.consumer, wanted):
                self.committed.update(wanted)
                self.stats.commits += 1

    def _apply_revocations(self) -> set[Any]:
        """Drop the partitions the group took from us while we were busy (see :meth:`run`);
        nothing is committed for them: we are no longer a member that may."""
        with self._revoked_lock:
            revoked, self._revoked_pending = self._revoked_pending, set()
        if revoked:
            log.warning("put out of the group (no poll within kafka_max_poll_interval_ms): "
                        "dropping %d partitions; their next owner resumes them", len(revoked))
            self._drop(revoked)
        return revoked

    def _release(self, revoked: set[Any]) -> None:
        """Partitions are moving to another member: commit what is safe, drop their streams
        (the new owner rebuilds them from their checkpoints)."""
        self._commit()
        self._drop(revoked)

    def _drop(self, revoked: set[Any]) -> None:
        self._joined_at = None  # out of the group until the next assignment: not idle yet
        for sid in [sid for sid, st in self.streams.items() if st.partition in revoked]:
            log.info("%s: partition revoked; its new owner resumes it", sid)
            del self.streams[sid]
        metrics.OPEN_STREAMS.set(len(self.streams))
        for tp in revoked:
            self.next_offsets.pop(tp, None)
            self.committed.pop(tp, None)


def _media_of(chunk: MediaChunk) -> Any:
    from episodic.core.media import MediaInfo

    return MediaInfo(
        source=chunk.source,
        container=chunk.container,
        duration_s=chunk.duration_s or None,
        has_video=chunk.has_video,
        has_audio=chunk.has_audio,
        video_codec=chunk.video_codec,
        audio_codec=chunk.audio_codec,
        width=chunk.width,
        height=chunk.height,
    )


def run_worker(settings: Settings, idle_exit_s: float | None = None) -> WorkerStats:
    """The ``episodic worker`` command: run until SIGTERM/SIGINT (or idle), then leave cleanly."""
    import signal

    endpoint = metrics.start_metrics_server(settings.metrics)
    components = Components(settings)
    worker = Worker(components)
    from episodic import forgetting_jobs  # retention and interrupted forgets (issue 17)

    # The first sweep runs at once (it also finishes forgets a crash interrupted). Started
    # while Worker.run was still ensuring the schema, it once met a Milvus collection not yet
    # loaded ("Collection 'episodic_meta' is in state 'released'", in the demo's worker) and
    # the next sweep came an hour later: the store is made ready before the sweeper starts.
    components.ensure_schema()
    sweeper = forgetting_jobs.start_sweeper(forgetting_jobs.forgetter(components), settings)
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

    def on_signal(signum: int, frame: Any) -> None:
        log.info("signal %d: finishing the chunk in hand, committing, leaving the group", signum)
        worker.stop()

    for sig in previous:
        signal.signal(sig, on_signal)
    try:
        return worker.run(idle_exit_s=idle_exit_s)
    except EpisodicError:
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sweeper.stop()
        worker.close()
        components.close()
        if endpoint is not None:
            endpoint.close()
