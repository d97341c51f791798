"""One stream's media from decoded frames and audio to stored memories: segment, encode,
consolidate, replay, store (``StreamIngestor``); on live sources also the provisional writes
that make a moment answerable as soon as its segment closes. ``episodic.pipeline`` runs it
per run between checkpoints (``StreamRunner``)."""

from __future__ import annotations

import copy
import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from episodic import metrics
from episodic.components import Components
from episodic.core.media import MediaInfo, Segment
from episodic.core.records import (
    FrameObservation,
    ShortTermMemory,
    SnippetRef,
    StreamInfo,
    ThetaEvent,
    TranscriptPiece,
    segment_id,
    validate_stream_id,
)
from episodic.memory.consolidation import Consolidator, merge_into
from episodic.memory.encoder import PerceptualEncoder, Seen, StageTimer
from episodic.memory.replay import SemanticReplay
from episodic.memory.thumbnails import make_thumbnail, middle_keyframe
from episodic.stream.segmentation import StreamSegmenter


def _content_key(seg: Segment) -> tuple[Any, ...]:
    """What a segment's encoding depends on, cheaply: its span and how much media it holds."""
    return (round(seg.t_start, 6), round(seg.t_end, 6), len(seg.frames), len(seg.snippet_frames),
            int(seg.audio.size), None if seg.audio_t_start is None else round(seg.audio_t_start, 6))


@dataclass
class _Unheard:
    """A segment seen and written, waiting to be heard with the next ones."""

    seg: Segment  # without its sampled frames
    seen: Seen
    snippet: SnippetRef
    thumbnail_uri: str
    provenance: dict[str, Any]


@dataclass
class Progress:
    """What a progress display needs after each step."""

    stream_s: float = 0.0
    duration_s: float | None = None
    segments: int = 0
    memories: int = 0
    events: int = 0
    wall_s: float = 0.0

    @property
    def realtime_factor(self) -> float:
        return self.stream_s / self.wall_s if self.wall_s > 0 else 0.0


class StreamIngestor:
    """Per-stream state from decoded media to stored memories."""

    def __init__(
        self,
        stream_id: str,
        components: Components,
        source: str = "",
        media: MediaInfo | None = None,
        timer: StageTimer | None = None,
        start_s: float = 0.0,
        provisional: bool = False,
    ) -> None:
        self.stream_id = validate_stream_id(stream_id)
        # store the memory consolidation holds open after every segment (see _store_open) and
        # the segment the segmenter holds back (see _preview_held)
        self.provisional = provisional
        self.start_s = float(start_s)
        self._previewed: tuple[tuple[Any, ...], _Unheard, ShortTermMemory] | None = None
        # segments seen and waiting to be heard together (asr_window_s); a live stream's
        # provisional memories are heard alone meanwhile, and replaced when the window is heard
        self.hearing_window_s = float(components.settings.asr_window_s)
        self._unheard: list[_Unheard] = []
        self._previewed_span: tuple[float, float] | None = None
        self.c = components
        self.s = components.settings
        self.source = source
        self.media = media
        self.timer = timer or StageTimer()
        self.segmenter = StreamSegmenter(
            self.s,
            has_video=media.has_video if media else None,
            has_audio=media.has_audio if media else None,
            start_s=start_s,
        )
        self.encoder = PerceptualEncoder(
            self.s, components.embedder, components.asr, components.describer, self.timer,
            speech_activity=self.segmenter.vad,
        )
        self.consolidator = Consolidator(
            self.s.consolidation_cos, self.s.consolidation_max_s, self.s.consolidation_frame_cos or None
        )
        self.replay = SemanticReplay(self.s, lambda: components.llm, components.embedder)
        self.progress = Progress(duration_s=media.duration_s if media else None, stream_s=start_s)
        self.skipped_spans: list[tuple[float, float]] = []  # segments with nothing decodable
        self.memory_ids: set[str] = set()
        self.snippet_uris: set[str] = set()
        self.events: list[ThetaEvent] = []
        self._started = time.perf_counter()

    # -- feeding -----------------------------------------------------------------------------
    def push_video_frame(self, t: float, frame: Any) -> None:
        started = time.perf_counter()
        closed = self.segmenter.push_video_frame(t, frame)
        self.timer.add("segmentation", started)
        self._advance(t, closed)

    def push_audio(self, t_start: float, samples: np.ndarray) -> None:
        started = time.perf_counter()
        closed = self.segmenter.push_audio(t_start, samples)
        self.timer.add("segmentation", started)
        self._advance(t_start + samples.size / self.s.audio_sample_rate_hz, closed)

    def finish(self) -> Progress:
        started = time.perf_counter()
        closed = self.segmenter.finish()
        self.timer.add("segmentation", started)
        self._advance(self.progress.stream_s, closed)
        self.hear_waiting()
        for memory in self.consolidator.finish():
            self._store(memory)
        self.progress.wall_s = time.perf_counter() - self._started
        return self.progress

    # -- stages ------------------------------------------------------------------------------
    def _advance(self, t: float, closed: list[Segment]) -> None:
        self.progress.stream_s = max(self.progress.stream_s, t)
        for seg in closed:
            self._process(seg)
        if self.provisional:
            self._preview_held()
        self.progress.wall_s = time.perf_counter() - self._started

    def _process(self, seg: Segment) -> None:
        if not seg.snippet_frames and not seg.audio.size:
            # a stretch where nothing decoded (a damaged region): no memory, and said so
            self.skipped_spans.append((seg.t_start, seg.t_end))
            return
        self.progress.segments += 1
        previewed, self._previewed = self._previewed, None
        # seen (and heard alone) when the segment closed, for its provisional memory: reused
        # unless its span or media changed since (see _preview_held)
        if previewed is not None and previewed[0] != _content_key(seg):
            previewed = None
        if self.hearing_window_s > 0:
            self._unheard.append(previewed[1] if previewed else self._see(seg))
            first, last = self._unheard[0].seg, self._unheard[-1].seg
            if last.t_end - first.t_start >= self.hearing_window_s:
                self.hear_waiting()
            return
        self._consolidate(previewed[2] if previewed else self._encode(seg)[1])

    def hear_waiting(self) -> None:
        """Hear the segments waiting together, then form, consolidate and store their memories
        in order (also what an ingest stopped part-way keeps of them)."""
        waiting, self._unheard = self._unheard, []
        if not waiting:
            return
        transcripts = self.encoder.hear_together([w.seg for w in waiting])
        for w, transcript in zip(waiting, transcripts, strict=True):
            self._consolidate(self._form(w, transcript))

    def _form(self, w: _Unheard, transcript: list[TranscriptPiece]) -> ShortTermMemory:
        memory = self.encoder.form(self.stream_id, w.seg, w.seen, transcript)
        memory.snippets = [w.snippet]
        memory.thumbnail_uri = w.thumbnail_uri
        memory.metadata.update(w.provenance)
        return memory

    def _consolidate(self, memory: ShortTermMemory) -> None:
        for done in self.consolidator.add(memory):
            self._store(done)
        self._drop_merged_thumbnail(memory)
        if self.provisional:
            self._store_open()

    def _preview_held(self) -> None:
        """The segment the segmenter has closed but holds back until the next one closes (a
        short last piece could still join it) is encoded now and stored provisionally: merged
        into a copy of the open memory when consolidation would merge it, else as its own
        memory. Its release then reuses the encoding when span and media are unchanged; when
        they changed (the stream ended with a short piece, late media), it is encoded again
        and :meth:`StreamRunner._drop_orphans` removes a provisional memory nothing replaced."""
        span = self.segmenter.planner.held
        if span is None or self._previewed_span == (span.t_start, span.t_end):
            return  # nothing held, or this one is stored already (checked per pushed block)
        self._previewed_span = (span.t_start, span.t_end)
        seg = self.segmenter.held_preview()
        if seg is None or (not seg.snippet_frames and not seg.audio.size):
            return
        key = _content_key(seg)
        # heard alone for now; with a hearing window its final words come with the window's,
        # so this hearing leaves the stream's recent audio as it was
        unheard, memory = self._encode(seg, keep_audio=self.hearing_window_s <= 0)
        self._previewed = (key, unheard, memory)
        if self.consolidator.would_merge(memory):
            shown = copy.deepcopy(self.consolidator.open_memory)
            merge_into(shown, copy.deepcopy(memory))
        else:
            shown = copy.deepcopy(memory)
        self._store_provisional(shown)

    def _encode(self, seg: Segment, keep_audio: bool = True) -> tuple[_Unheard, ShortTermMemory]:
        """The segment seen (snippet file, thumbnail, key frames) and its ShortTermMemory
        (not consolidated yet), its words heard alone after the recent audio."""
        unheard = self._see(seg)
        return unheard, self._form(unheard, self.encoder.hear(unheard.seg, keep_audio))

    def _see(self, seg: Segment) -> _Unheard:
        """The segment's snippet file, thumbnail and key frames, now; its words wait to be
        heard with the next segments' (the sampled frames are let go here)."""
        ref = self._snippet(seg)
        seen = self.encoder.see(seg)
        thumbnail = self._thumbnail(seg, seen.observations)
        light = dataclasses.replace(seg, frames=[], snippet_frames=[])
        return _Unheard(light, seen, ref, thumbnail, self._provenance())

    def _snippet(self, seg: Segment) -> SnippetRef:
        started = time.perf_counter()
        ref = self.c.snippets.put(
            self.stream_id,
            segment_id(self.stream_id, seg.t_start),
            seg.t_start,
            seg.t_end,
            seg.snippet_frames,
            seg.audio if seg.audio.size else None,
            seg.sample_rate_hz,
            self.s.snippet_fps,
            audio_t_start=seg.audio_t_start,
        )
        self.snippet_uris.add(ref.uri)
        self.timer.add("snippets", started)
        return ref

    def _thumbnail(self, seg: Segment, observations: list[FrameObservation]) -> str:
        """A small JPEG of the segment's middle key frame (the decoded frame the encoder
        used), kept beside its snippet: its URI ("" for audio-only segments)."""
        side = int(self.s.thumbnail_max_side)
        frame = middle_keyframe(seg.frames, observations) if side > 0 else None
        if frame is None:
            return ""
        started = time.perf_counter()
        jpeg = make_thumbnail(frame.rgb, side, int(self.s.thumbnail_quality))
        uri = self.c.snippets.put_thumbnail(self.stream_id, segment_id(self.stream_id, seg.t_start), jpeg)
        self.snippet_uris.add(uri)
        self.timer.add("thumbnails", started)
        return uri

    def _drop_merged_thumbnail(self, memory: ShortTermMemory) -> None:
        """A segment consolidation merged into the open memory keeps no thumbnail of its own
        (the memory keeps its first one): delete the file it would orphan."""
        kept = self.consolidator.open_memory
        uri = memory.thumbnail_uri
        if not uri or kept is None or kept is memory or kept.thumbnail_uri == uri:
            return
        self.c.snippets.delete_uris([uri])
        self.snippet_uris.discard(uri)

    def _provenance(self) -> dict[str, Any]:
        m = self.media
        return {
            "source": self.source,
            "container": m.container if m else "",
            "video_codec": m.video_codec if m else "",
            "audio_codec": m.audio_codec if m else "",
            "ingested_at": time.time(),
        }

    def _store_open(self) -> None:
        """Store the memory consolidation still holds open, marked provisional, so a moment is
        answerable as soon as its segment closes rather than after the next one. Its ids are
        the final ones (stream + start time): a merge or the close upserts it in place, and a
        worker restarted from a checkpoint rebuilds and rewrites exactly the same records."""
        memory = self.consolidator.open_memory
        if memory is not None:
            self._store_provisional(memory)

    def _store_provisional(self, memory: ShortTermMemory) -> None:
        started = time.perf_counter()
        memory.metadata["provisional"] = True
        event = self.replay.replay(memory, provisional=True)
        self.c.store.upsert_memories([memory])
        self.c.store.upsert_events([event])
        metrics.PROVISIONAL_WRITES.inc()
        self.timer.add("provisional", started)
        self._formed(memory, event)

    def _formed(self, memory: ShortTermMemory, event: ThetaEvent) -> None:
        """Standing queries see each memory as soon as it is stored (provisional or final)."""
        started = time.perf_counter()
        self.c.memory_formed(memory, event)
        self.timer.add("watches", started)

    def _store(self, memory: ShortTermMemory) -> None:
        memory.metadata.pop("provisional", None)
        started = time.perf_counter()
        event = self.replay.replay(memory)
        memory.metadata["models"] = {**memory.metadata.get("models", {}), "llm": event.metadata["summariser"]}
        self.timer.add("replay", started)
        started = time.perf_counter()
        self.c.store.upsert_memories([memory])
        self.c.store.upsert_events([event])
        self.timer.add("store", started)
        metrics.SEGMENTS.inc()
        metrics.STREAM_SECONDS.inc(max(0.0, memory.t_end - memory.t_start))
        self.memory_ids.add(memory.id)
        self.events.append(event)
        self._formed(memory, event)
        self.progress.memories += 1
        self.progress.events += 1

    def stream_info(self, previous: StreamInfo | None = None) -> StreamInfo:
        return StreamInfo(
            stream_id=self.stream_id,
            source=self.source,
            t_end=self.progress.stream_s,
            memories=self.progress.memories,
            events=self.progress.events,
            updated_at=time.time(),
            metadata={
                "media": vars(self.media) if self.media else {},
                "models": self.c.model_ids(),
                "ingest_wall_s": round(self.progress.wall_s, 3),
            },
        )
