"""The ingest pipeline, wired once: source → decode → segment → encode → consolidate →
replay → store.

``StreamIngestor`` (``episodic/ingestor.py``) holds the per-stream state and consumes decoded
media as it arrives; ``StreamRunner`` here feeds it chunks and restarts it at checkpoints, so
the embedded ``episodic ingest`` and the Kafka worker run the very same code. Components
(models, stores) are built lazily from the settings: listing events never loads a model.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from episodic.components import Components
from episodic.core.errors import EpisodicError, InputError, MediaError
from episodic.core.media import MediaInfo
from episodic.core.records import (
    StreamInfo,
    validate_stream_id,
)
from episodic.ingestor import Progress, StreamIngestor  # noqa: F401 - callers import them from here
from episodic.memory.encoder import StageTimer
from episodic.memory.overview_windows import refresh_overviews
from episodic.memory.speech_context import speech_spans
from episodic.push_thread import PushThread
from episodic.retrieval.snippet_audio import SAMPLE_RATE_HZ as SNIPPET_AUDIO_RATE_HZ
from episodic.retrieval.snippet_audio import memory_audio

log = logging.getLogger(__name__)

# How much later than ``checkpoint_interval_s`` a checkpoint may come to avoid cutting an
# utterance (a share of the interval: 60 s → at most 90 s between restart points).
CHECKPOINT_SPEECH_DEFER = 0.5



def live_wall_clock_start(chunk: Any) -> str | None:
    """When stream time 0 of a *live* source was on the wall clock: a chunk is produced as soon
    as its media has been captured, so its production time less its end in stream time (ISO
    8601, UTC, to the second). None for recordings (a duration is known: they were filmed
    earlier than they are pushed or ingested) and for chunks without a production time."""
    import datetime as dt

    produced = getattr(chunk, "produced_at_ms", 0) or 0
    if getattr(chunk, "duration_s", 0) or produced <= 0:
        return None
    at = produced / 1000 - float(chunk.t_end)
    return dt.datetime.fromtimestamp(at, dt.timezone.utc).replace(microsecond=0).isoformat()


@dataclass
class Checkpoint:
    """Where a stream's pipeline last restarted from scratch: chunk ``seq`` begins a run
    whose segments start at ``t_s``. Everything before is stored; a worker that (re)starts
    reads the stream from that chunk and rebuilds exactly the state an uninterrupted one had.
    ``ended``: the stream's end-of-stream chunk has been processed."""

    seq: int = 0
    t_s: float = 0.0
    ended: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "t_s": self.t_s, "ended": self.ended}

    @classmethod
    def of(cls, info: StreamInfo | None) -> Checkpoint | None:
        """The checkpoint recorded with a stream, if any."""
        raw = (info.metadata or {}).get("checkpoint") if info is not None else None
        if not isinstance(raw, dict):
            return None
        try:
            return cls(int(raw["seq"]), float(raw["t_s"]), bool(raw.get("ended", False)))
        except (KeyError, TypeError, ValueError):
            return None


def sessions_of(info: StreamInfo | None) -> dict[str, tuple[int, float]]:
    """The push sessions recorded with a stream: session id → (sequence number, stream time)
    at which that session's chunk 0 continues the stream (see :meth:`StreamRunner.feed`)."""
    raw = (info.metadata or {}).get("sessions") if info is not None else None
    out: dict[str, tuple[int, float]] = {}
    if isinstance(raw, dict):
        for sid, base in raw.items():
            try:
                out[str(sid)] = (int(base[0]), float(base[1]))
            except (TypeError, ValueError, IndexError):
                continue
    return out


def source_gaps_of(info: StreamInfo | None) -> list[tuple[float, float]]:
    """The stretches a stream's live source was away, as recorded with the stream."""
    raw = (info.metadata or {}).get("gaps") if info is not None else None
    out: list[tuple[float, float]] = []
    for g in raw if isinstance(raw, list) else ():
        try:
            out.append((float(g[0]), float(g[1])))
        except (TypeError, ValueError, IndexError):
            continue
    return out


def in_stream_numbering(chunk: Any, sessions: dict[str, tuple[int, float]]) -> Any:
    """``chunk`` renumbered into its stream: a session that continues a stream numbers its
    chunks and times from 0, so its base is added (unchanged for a stream's first session)."""
    base = sessions.get(chunk.session_id) if chunk.session_id else None
    if not base or base == (0, 0.0):
        return chunk
    seq, t = base
    return dataclasses.replace(
        chunk, seq=chunk.seq + seq, t_start=chunk.t_start + t, t_end=chunk.t_end + t, payload_t0=chunk.payload_t0 + t
    )


class StreamRunner:
    """The chunks of one stream, in order → stored memories (see :mod:`stream.chunks`).

    Used by embedded ingest and by the Kafka worker alike. Every ``checkpoint_interval_s``
    of stream time, at the first chunk that starts at a keyframe where the open segment (the
    stretch after the last boundary decided or visual cut seen, so that closing it there
    moves no cut) is already a legal length and nobody is mid-sentence (up to
    ``CHECKPOINT_SPEECH_DEFER`` later), the runner closes the open segment, stores
    everything, records a :class:`Checkpoint` with the stream and starts afresh (decoder
    state, segmenter, consolidation): the point a restarted worker resumes from, bit for bit.

    :meth:`feed` drops chunks it has already seen (a duplicate delivery, a producer retry)
    and notes gaps; a :class:`~stream.media_chunk.ChunkError` from a corrupt chunk propagates
    before any of its media is used, so the caller can dead-letter it and go on.

    A push session (``session_id``) is part of a chunk's identity: a producer that restarts
    numbers its chunks and times from 0 again, so a new session of an open stream continues
    it at the stream's next sequence number and time (recorded with the checkpoint, so a
    restarted worker numbers it the same way) instead of having its start dropped as
    duplicates of the first session.
    """

    def __init__(
        self,
        stream_id: str,
        components: Components,
        *,
        source: str = "",
        media: MediaInfo | None = None,
        timer: StageTimer | None = None,
        resume: Checkpoint | None = None,
        previous: StreamInfo | None = None,
        live: bool = False,
        overlap: bool = False,
    ) -> None:
        from episodic.stream.chunk_decoder import ChunkDecoder

        self.stream_id = validate_stream_id(stream_id)
        self.c = components
        self.s = components.settings
        mode = self.s.provisional_memories
        self.provisional = mode == "always" or (mode == "auto" and live)
        self.source = source
        self.media = media
        self.timer = timer or StageTimer()
        self.decoder = ChunkDecoder(self.s)
        start = resume or Checkpoint()
        self.resumed = resume is not None and (resume.seq > 0 or resume.t_s > 0)
        self.checkpoint = Checkpoint(start.seq, start.t_s)
        self.next_seq = start.seq
        self.base_memories = previous.memories if previous is not None and self.resumed else 0
        self.base_events = previous.events if previous is not None and self.resumed else 0
        self.sessions = sessions_of(previous) if self.resumed else {}
        # stretches the live source was away (its chunk's gap_before_s), in stream time
        self.source_gaps: list[tuple[float, float]] = source_gaps_of(previous) if self.resumed else []
        self.fed_until_s = start.t_s  # stream time where the last chunk fed ends
        # when stream time 0 was on the wall clock (ISO 8601, UTC), for a live source only
        self.wall_clock_start: str | None = (previous.metadata or {}).get("wall_clock_start") if previous else None
        self.memory_ids: set[str] = set()
        self.snippet_uris: set[str] = set()
        self.duplicates = 0
        self.gaps: list[tuple[int, int]] = []  # (first missing seq, first seq after the gap)
        self.warnings: list[str] = []
        self.ended = False
        self._segments = self._memories = self._events = 0  # of the runs already closed
        self._started = time.perf_counter()
        self.ingestor = self._new_ingestor(start.t_s)
        if self.resumed:
            self._seed_recent_audio()
        # overlap: the next chunk decodes while this one is encoded (embedded ingest only;
        # see episodic.push_thread for why the worker does not)
        self._pusher: PushThread | None = PushThread(self._push) if overlap else None

    def _new_ingestor(self, start_s: float) -> StreamIngestor:
        return StreamIngestor(
            self.stream_id, self.c, source=self.source, media=self.media, timer=self.timer, start_s=start_s,
            provisional=self.provisional,
        )

    @property
    def progress(self) -> Progress:
        """Totals for the stream: closed runs plus the open one."""
        p = self.ingestor.progress
        open_run = not self.ended
        return Progress(
            stream_s=p.stream_s,
            duration_s=p.duration_s,
            segments=self._segments + (p.segments if open_run else 0),
            memories=self.base_memories + self._memories + (p.memories if open_run else 0),
            events=self.base_events + self._events + (p.events if open_run else 0),
            wall_s=time.perf_counter() - self._started,
        )

    # -- feeding ---------------------------------------------------------------------------
    def feed(self, chunk: Any) -> bool:
        """Process one chunk; False when it was skipped as already seen (or after the end)."""
        if chunk.stream_id != self.stream_id:
            raise InputError(f"chunk of stream {chunk.stream_id!r} fed to the runner of {self.stream_id!r}")
        chunk = in_stream_numbering(chunk, self._session_of(chunk))
        if self.ended or chunk.seq < self.next_seq:
            self.duplicates += 1
            return False
        if chunk.seq > self.next_seq:
            self.gaps.append((self.next_seq, chunk.seq))
            self.warnings.append(
                f"{self.stream_id}: chunks {self.next_seq}..{chunk.seq - 1} are missing; continuing "
                f"from chunk {chunk.seq} at t={chunk.t_start:.2f} s"
            )
        if chunk.gap_before_s > 0 and self._source_gap(chunk) and chunk.seq > self.checkpoint.seq:
            self._restart_at(chunk)  # no memory spans the time the source was away
        elif self._checkpoint_due(chunk):
            self._restart_at(chunk)
        if self.wall_clock_start is None:
            self.wall_clock_start = live_wall_clock_start(chunk)
        started = time.perf_counter()
        items = self.decoder.decode(chunk)  # ChunkError: nothing of the chunk was used
        self.timer.add("decode", started)
        if self._pusher is not None:
            self._pusher.submit(items)
        else:
            self._push(items)
        self.next_seq = chunk.seq + 1
        self.fed_until_s = max(self.fed_until_s, chunk.t_end)
        if chunk.end_of_stream:
            self.finish()
        return True

    def _session_of(self, chunk: Any) -> dict[str, tuple[int, float]]:
        """The session table, with ``chunk``'s session added when it is new: the stream's first
        session starts at (0, 0); a later one continues where the stream has got to."""
        sid = chunk.session_id
        if sid and sid not in self.sessions and not self.ended:
            if not self.sessions or self.next_seq == 0:
                self.sessions[sid] = (0, 0.0)
            else:
                self.sessions[sid] = (self.next_seq, round(self.fed_until_s, 6))
                self.warnings.append(
                    f"{self.stream_id}: push session {sid} continues the stream at chunk "
                    f"{self.next_seq}, t={self.fed_until_s:.2f} s (a restarted producer; its own "
                    f"chunk {chunk.seq} is the stream's chunk {self.next_seq + chunk.seq})"
                )
                log.info("%s", self.warnings[-1])
        return self.sessions

    def _source_gap(self, chunk: Any) -> bool:
        """Record the stretch before ``chunk`` that its live source was away (True when new)."""
        gap = (round(max(chunk.t_start - chunk.gap_before_s, 0.0), 3), round(chunk.t_start, 3))
        if gap in self.source_gaps:
            return False  # a restarted worker reading the chunk again
        self.source_gaps.append(gap)
        self.warnings.append(
            f"{self.stream_id}: the source was away from t={gap[0]:.1f} to {gap[1]:.1f} s "
            f"({chunk.gap_before_s:.1f} s, nothing recorded); the memory before the gap ends there"
        )
        log.info("%s", self.warnings[-1])
        return True

    def _push(self, items: list[Any]) -> None:
        for kind, t, payload in items:
            if kind == "video":
                self.ingestor.push_video_frame(t, payload)
            else:
                self.ingestor.push_audio(t, payload)

    def _checkpoint_due(self, chunk: Any) -> bool:
        s = self.s
        since = chunk.t_start - self.checkpoint.t_s
        if not (
            chunk.seq > self.checkpoint.seq
            and (chunk.keyframe or not chunk.has_video)
            and since >= s.checkpoint_interval_s
        ):
            return False
        self.settle()  # what follows reads the segmenter
        if chunk.t_start - self.ingestor.segmenter.tail_since < s.segment_min_s:
            return False
        # A restart closes the open segment at this chunk's start whatever is being said there;
        # while someone is mid-sentence wait for a later keyframe (bounded, so talk radio or a
        # music bed the detector takes for speech still gets its checkpoints).
        if since < s.checkpoint_interval_s * (1 + CHECKPOINT_SPEECH_DEFER):
            return not self.ingestor.segmenter.speaking_at(chunk.t_start)
        return True

    def _close_run(self) -> float:
        """Store everything of the current run; returns where its last segment ends."""
        self.settle()
        self._push(self.decoder.flush())
        progress = self.ingestor.finish()
        if self.provisional:
            self._drop_orphans()
        self.memory_ids |= self.ingestor.memory_ids
        self.snippet_uris |= self.ingestor.snippet_uris
        for t0, t1 in self.ingestor.skipped_spans:
            self.warnings.append(f"nothing decodable between {t0:.1f} and {t1:.1f} s: no memory there")
        self._segments += progress.segments
        self._memories += progress.memories
        self._events += progress.events
        self.warnings.extend(self.decoder.warnings)
        self.decoder.warnings.clear()
        return self.ingestor.segmenter.emitted_until

    def _drop_orphans(self) -> None:
        """Provisional memories of this run that no final memory replaced: a held segment
        previewed as a memory of its own whose span or media changed before its release (the
        run ended with a short piece merged into it, late media) and was then consolidated
        otherwise. Every final write clears the flag, so whatever still carries it is one
        (also one left by a process killed after such a preview)."""
        ing = self.ingestor
        stale = {m.id for m in self.c.store.list_memories(self.stream_id, t_min=ing.start_s)
                 if m.metadata.get("provisional") and m.id not in ing.memory_ids}
        if not stale:
            return
        keep = {m.id for m in self.c.store.list_memories(self.stream_id, limit=1 << 40)} - stale
        removed = self.c.store.delete_stream_records_except(self.stream_id, keep)
        log.info("%s: %d provisional memories nothing replaced were removed (%d records)",
                 self.stream_id, len(stale), removed)

    def _restart_at(self, chunk: Any) -> None:
        run_start = self.checkpoint.t_s
        end = self._close_run()
        self.checkpoint = Checkpoint(chunk.seq, max(chunk.t_start, end))
        self.ingestor = self._new_ingestor(self.checkpoint.t_s)
        self._seed_recent_audio()
        self.refresh_overviews(since_s=run_start)
        self.c.store.upsert_stream(self.stream_info())

    def _seed_recent_audio(self) -> None:
        """Give the new run the audio of the stored memories just before its start, so its
        first segments are heard in context too (memory/speech_context). It is read back from
        their snippets both when an uninterrupted run passes a checkpoint and when a restarted
        worker resumes from it, so the two hear the same. Nothing stored there, or snippets
        that cannot be read: the run starts without context (logged)."""
        span, t = float(self.s.asr_context_s), self.checkpoint.t_s
        if span <= 0 or t <= 0:
            return
        lo = max(0.0, t - span)
        try:
            before = [m for m in self.c.store.list_memories(self.stream_id, t_min=lo, t_max=t)
                      if m.t_start < t and m.snippets]
            if not before:
                return
            lo = max(lo, min(m.t_start for m in before))
            audio = np.zeros(int(round((t - lo) * SNIPPET_AUDIO_RATE_HZ)), np.float32)
            for m in before:
                part = memory_audio(m, lo, t, self.c.snippets.path_for)
                audio[: part.size] += part  # memories do not overlap: each fills its own span
            speech = speech_spans([p for m in before for p in m.transcript])
        except Exception as exc:  # noqa: BLE001 - context only helps; never stop ingest for it
            log.warning("%s: the audio before t=%.1f s could not be read back (%s); the run "
                        "starts without it", self.stream_id, t, exc)
            return
        self.ingestor.encoder.recent_audio.add(lo, audio, SNIPPET_AUDIO_RATE_HZ, speech)

    def refresh_overviews(self, since_s: float = 0.0) -> None:
        """Recompose the stream's overview and its stretches from ``since_s`` on (fuzzy
        recall's global impressions). They are derived from stored memories and recomposed
        at the next checkpoint anyway, so a failure is a warning, never a lost ingest."""
        started = time.perf_counter()
        try:
            refresh_overviews(self.c.store, self.c.embedder, self.stream_id,
                              self.s.overview_stretch_s, since_s=since_s, windows=self.s.summary_windows)
        except EpisodicError as exc:
            msg = f"the stream overview was not updated ({exc}); recall's global impressions may be stale"
            log.warning("%s: %s", self.stream_id, msg)
            self.warnings.append(msg)
        self.timer.add("overview", started)

    def finish(self) -> Progress:
        """The stream ended (or the caller stops reading it): store the rest."""
        if not self.ended:
            self.ended = True
            self._close_run()
            self.checkpoint = Checkpoint(self.next_seq, self.checkpoint.t_s, ended=True)
            self.stop_pushing()
        return self.progress

    def settle(self) -> None:
        """Wait for the push thread (if any) to hand everything fed so far to the ingestor."""
        if self._pusher is not None:
            self._pusher.drain()

    def keep_what_was_seen(self) -> None:
        """An ingest stopped part-way: hear and store the segments still waiting for their
        hearing window (a few seconds), so their snippets are not thrown away. A failure here
        is logged; the stop goes on."""
        try:
            self.ingestor.hear_waiting()
        except EpisodicError as exc:
            log.warning("%s: the segments waiting to be heard were not stored (%s)", self.stream_id, exc)

    def stop_pushing(self) -> None:
        """End the push thread after it has pushed what it was given (idempotent). Used when
        the stream ends and when an ingest stops early: what was fed before the stop counts,
        as it would without the thread. A failure met while finishing is logged, not raised
        (the caller is already reporting why it stopped)."""
        pusher, self._pusher = self._pusher, None
        if pusher is None:
            return
        try:
            pusher.close()
        except EpisodicError as exc:
            log.warning("%s: %s", self.stream_id, exc)
            self.warnings.append(str(exc))

    def stream_info(self, complete: bool | None = None) -> StreamInfo:
        """The stream's listing; ``complete`` False marks an ingest that stopped part-way
        (True: it read the whole recording; None: a live stream, nothing to say)."""
        p = self.progress
        metadata: dict[str, Any] = {
            "media": vars(self.media) if self.media else {},
            "models": self.c.model_ids(),
            "ingest_wall_s": round(p.wall_s, 3),
            "checkpoint": self.checkpoint.to_dict(),
            "sessions": {sid: [seq, t] for sid, (seq, t) in self.sessions.items()},
        }
        if self.source_gaps:
            metadata["gaps"] = [list(g) for g in self.source_gaps]
        if self.wall_clock_start:
            metadata["wall_clock_start"] = self.wall_clock_start
        if complete is not None:
            metadata["complete"] = complete
        return StreamInfo(
            stream_id=self.stream_id,
            source=self.source,
            t_end=p.stream_s,
            memories=p.memories,
            events=p.events,
            updated_at=time.time(),
            metadata=metadata,
        )


TRUNCATED_SLACK_S = 1.0  # a recording this much shorter than its header says is reported


class IngestInterrupted(KeyboardInterrupt):
    """Ctrl-C during an ingest: ``str()`` says what was kept and how to complete it."""


def _keep_incomplete(runner: StreamRunner, components: Components) -> str:
    """List the stream of an ingest that stopped part-way, marked incomplete, so what it
    stored is neither hidden nor mistaken for the whole recording; return what was kept."""
    try:
        stored = components.store.list_memories(runner.stream_id)
        # snippets of segments no stored memory holds yet would be orphans
        components.snippets.delete_stream(runner.stream_id, {u for m in stored for u in m.file_uris})
        info = runner.stream_info(complete=False)
        info.memories = info.events = len(stored)
        info.t_end = max((m.t_end for m in stored), default=0.0)
        components.store.upsert_stream(info)
        components.store.flush()
    except (EpisodicError, OSError) as store_exc:  # the store itself may be what failed
        return f"what was stored before could not be listed ({store_exc})"
    return f"kept {len(stored)} memories of {runner.stream_id!r} (0–{info.t_end:.1f} s), listed as incomplete"


@dataclass
class IngestReport:
    stream_id: str
    source: str
    progress: Progress
    stage_seconds: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    removed_stale: int = 0


def ingest_file(
    path: str | Path,
    stream_id: str,
    components: Components,
    on_progress: Callable[[Progress], None] | None = None,
    stop_requested: Callable[[], bool] | None = None,
) -> IngestReport:
    """Ingest one recording as ``stream_id``; re-ingesting replaces that stream's records.

    ``stop_requested`` is asked after every chunk; once it says yes the ingest stops there as
    if interrupted (what is stored is kept and listed incomplete, :class:`IngestInterrupted`).
    The CLI's Ctrl-C sets it, so a stop never lands inside a model or a store write.

    The recording is cut into the chunks ``episodic push`` sends through Kafka (but no Kafka
    limit bounds their size here: a camera's long GOP is fine) and run
    through the same :class:`StreamRunner` the worker uses, so both store the same records.
    Records are written as each memory closes, so an interrupted run keeps what it stored;
    a completed run then removes records of earlier runs that this run did not write, which
    makes the final state exactly the same whatever was there before.
    """
    from episodic.stream.chunks import LOCAL_CHUNK_MAX_BYTES, Chunker
    from episodic.stream.decode import is_url, redact, working_side_px

    if is_url(str(path)):
        opened, p, stored_as = str(path), redact(str(path)), redact(str(path))  # never log credentials
    else:
        f = Path(path)
        if not f.exists():
            raise InputError(f"file not found: {f}")
        if f.is_dir():
            raise InputError(f"{f} is a directory, not a recording")
        opened, p, stored_as = str(f), str(f), str(f.resolve())
    s = components.settings
    validate_stream_id(stream_id)
    timer = StageTimer()
    started = time.perf_counter()
    chunker = Chunker(opened, stream_id, s, display_source=p, max_bytes=LOCAL_CHUNK_MAX_BYTES)
    timer.add("decode", started)
    with chunker:
        info = chunker.info
        if info.duration_s is not None and info.duration_s > s.max_stream_duration_s:
            raise InputError(
                f"{p} lasts {info.duration_s:.0f} s, more than max_stream_duration_s="
                f"{s.max_stream_duration_s:.0f}"
            )
        components.ensure_schema()
        # Frames bigger than the working size make decoding (and scaling) about half the work:
        # then the next chunk decodes while this one is encoded (60 s of 4K60: 2.02x -> 2.2x
        # real time). Smaller video gains nothing from it and would hold one more chunk.
        overlap = max(info.width, info.height) > working_side_px(s)
        runner = StreamRunner(
            stream_id, components, source=stored_as, media=info, timer=timer, live=is_url(str(path)), overlap=overlap
        )
        chunks = iter(chunker)
        try:
            while True:
                started = time.perf_counter()
                try:
                    chunk = next(chunks)
                except StopIteration:
                    timer.add("decode", started)
                    break
                timer.add("decode", started)
                runner.feed(chunk)
                if on_progress is not None:
                    on_progress(runner.progress)
                if stop_requested is not None and stop_requested():
                    raise KeyboardInterrupt
            runner.settle()  # a failure encoding the last chunks is reported like any other
        except (KeyboardInterrupt, EpisodicError) as exc:
            runner.stop_pushing()
            if isinstance(exc, KeyboardInterrupt):
                runner.keep_what_was_seen()
            kept = _keep_incomplete(runner, components)
            if isinstance(exc, KeyboardInterrupt):
                raise IngestInterrupted(f"{kept}; run the same ingest again to complete it") from None
            raise type(exc)(f"{exc}; {kept}") from None
        except BaseException:
            runner.stop_pushing()
            raise
        warnings = list(chunker.warnings)
    progress = runner.finish()
    warnings += runner.warnings
    bad = runner.decoder.bad_packets + chunker.bad_packets
    if bad:
        warnings.append(f"skipped {bad} undecodable packet(s) in {p}")
    declared = float(info.duration_s or 0.0)
    if declared and progress.stream_s < declared - TRUNCATED_SLACK_S and not chunker.warnings:
        warnings.append(
            f"{p} ended at t={progress.stream_s:.1f} s although its header says {declared:.1f} s: "
            "the file looks truncated; kept what could be decoded"
        )
    if progress.segments == 0:
        raise MediaError(f"{p} holds no decodable audio or video")
    removed = components.store.delete_stream_records_except(stream_id, runner.memory_ids)
    components.snippets.delete_stream(stream_id, runner.snippet_uris)
    runner.refresh_overviews()
    components.store.upsert_stream(runner.stream_info(complete=True))
    components.store.flush()
    if on_progress is not None:
        on_progress(progress)
    return IngestReport(
        stream_id=stream_id,
        source=p,
        progress=progress,
        stage_seconds=dict(timer.seconds),
        warnings=warnings,
        removed_stale=removed,
    )
