"""Perceptual encoding (HippoMM C.1): one closed segment → one unconsolidated ShortTermMemory,
in three steps: :meth:`PerceptualEncoder.see` (key frames, as soon as the segment closes),
:meth:`~PerceptualEncoder.hear` or :meth:`~PerceptualEncoder.hear_together` (its words, alone
or with the segments around it) and :meth:`~PerceptualEncoder.form` (the memory).

What the offline default can and cannot see: no image–text model ships with its weights on
PyPI, so vision is *bridged* into the text space: each key frame becomes a short description
(ImageNet labels, dominant colours, on-screen text) that the same text embedder used for
queries and transcripts turns into a vector. With a cross-modal embedder (ImageBind) key
frames and audio windows are embedded directly instead, and the descriptions remain as T_i.

What is heard besides words (music, an engine, applause, silence: memory/sound.py) becomes
``memory.sounds`` and, like transcripts, text entries of modality "sound" in E_i, so "when
was there music?" finds them by vector search. (Modality "audio" is ImageBind's raw-sound
vectors; the two are kept apart.)
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from episodic.config import Settings
from episodic.core.interfaces import (
    CrossModalEmbedder,
    SpeechActivity,
    SpeechRecognizer,
    TextEmbedder,
    VisualDescriber,
)
from episodic.core.media import SampledFrame, Segment
from episodic.core.records import (
    EmbeddingEntry,
    FrameObservation,
    ShortTermMemory,
    SoundObservation,
    TranscriptPiece,
    memory_id,
    normalise,
    representative_of,
)
from episodic.memory.keyframes import ocr_mask, select_keyframes
from episodic.memory.motion import describe_motion
from episodic.memory.sound import FeatureSoundDescriber, SoundDescriber, searchable
from episodic.memory.speech_context import RecentAudio, hear, hear_joined

# What stands in for a segment with neither picture nor speech, so it still has a vector
# (and consecutive empty stretches consolidate into one memory).
EMPTY_SEGMENT_TEXT = "nothing visible and no speech"
AUDIO_WINDOW_S = 2.0


@dataclass
class StageTimer:
    """Wall seconds per named stage, for the progress display and the benchmarks."""

    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, stage: str, started: float) -> None:
        self.seconds[stage] += time.perf_counter() - started


@dataclass
class Seen:
    """What one segment's key frames showed (:meth:`PerceptualEncoder.see`)."""

    keys: list[SampledFrame]
    observations: list[FrameObservation]
    features: np.ndarray
    motion: str
    motion_confidence: float
    sampled_frames: int


class PerceptualEncoder:
    def __init__(
        self,
        settings: Settings,
        embedder: TextEmbedder,
        asr: SpeechRecognizer,
        describer: VisualDescriber,
        timer: StageTimer | None = None,
        sounds: SoundDescriber | None = None,
        speech_activity: SpeechActivity | None = None,
    ) -> None:
        self.settings = settings
        # where someone speaks (the segmenter's voice-activity detector): a segment heard in a
        # joined pass with no word but with speech in it is heard again on its own
        self.speech_activity = speech_activity
        self.embedder = embedder
        self.asr = asr
        self.describer = describer
        self.timer = timer or StageTimer()
        if sounds is None and settings.sound_describer == "features":
            sounds = FeatureSoundDescriber(settings.sound_window_s, settings.sound_min_run_s)
        self.sounds = sounds
        # the stream's audio just before the next segment, heard with it (memory/speech_context)
        self.recent_audio = RecentAudio(settings.asr_context_s, settings.asr_context_speech_s)
        self.cross_modal = isinstance(embedder, CrossModalEmbedder) and hasattr(
            embedder, "embed_images"
        )

    @property
    def model_ids(self) -> dict[str, str]:
        ids = {
            "embedder": self.embedder.model_id,
            "asr": self.asr.model_id,
            "describer": self.describer.model_id,
        }
        if self.sounds is not None:
            ids["sound"] = self.sounds.model_id
        return ids

    def see(self, seg: Segment) -> Seen:
        """The visual part: key frames, motion and what the describer read in the key frames.
        Kept apart from the rest so that a segment waiting for its words to be heard (see
        :meth:`hear_together`) holds its key frames only, not every sampled frame."""
        s = self.settings
        started = time.perf_counter()
        motion, motion_conf = describe_motion(seg.frames)
        # a part of a still shot that changes is a new sign or slide; in a moving one it is the
        # movement (memory/keyframes.py)
        local = s.keyframe_local_change if motion == "still" else 1.0
        keys = select_keyframes(seg.frames, s.keyframe_ssim_redundancy, s.keyframes_max_per_segment, local)
        self.timer.add("keyframes", started)
        observations, features = [], np.zeros((0, self.describer.feature_dim), np.float32)
        if keys:
            started = time.perf_counter()
            observations, features = self.describer.describe(
                [k.rgb for k in keys],
                [k.t for k in keys],
                ocr_mask(len(keys), s.ocr_max_frames_per_segment),
            )
            self.timer.add("vision", started)
        return Seen(keys, observations, features, motion, motion_conf, len(seg.frames))

    def hear(self, seg: Segment, keep_audio: bool = True) -> list[TranscriptPiece]:
        """The segment's words, heard after the stream's recent audio (and before the audio
        after it, when the segmenter gave some); ``keep_audio`` False leaves the recent audio
        as it was (a provisional hearing that the segment's window will repeat)."""
        if not seg.audio.size:
            return []
        started = time.perf_counter()
        transcript = hear(self.asr, seg.audio, seg.sample_rate_hz, seg.audio_t_start, self.recent_audio,
                          seg.audio_after, keep=keep_audio)
        self.timer.add("asr", started)
        return transcript

    def hear_together(self, segs: Sequence[Segment]) -> list[list[TranscriptPiece]]:
        """Each segment's words, the segments heard together: one pass over their joined
        audio (after the recent audio), split by word times (``asr_window_s``)."""
        started = time.perf_counter()
        parts = [(seg.audio_t_start, seg.audio) for seg in segs]
        after = segs[-1].audio_after if segs else None
        out = hear_joined(self.asr, parts, segs[0].sample_rate_hz if segs else 16000, self.recent_audio, after,
                          self.speech_activity)
        if any(seg.audio.size for seg in segs):
            self.timer.add("asr", started)
        return out

    def form(self, stream_id: str, seg: Segment, seen: Seen, transcript: list[TranscriptPiece]) -> ShortTermMemory:
        """The memory of a segment seen and heard (its sampled frames are not needed here)."""
        s = self.settings
        entries: list[EmbeddingEntry] = []
        keys, observations, features = seen.keys, seen.observations, seen.features

        # -- audio: what is heard besides words ------------------------------------------
        sounds = self._sounds(seg, transcript)
        heard = searchable(sounds)

        # -- E_i: one vector per key frame and per audio window ---------------------------
        started = time.perf_counter()
        frame_ends = [k.t for k in keys[1:]] + [seg.t_end]
        if self.cross_modal:
            entries += self._cross_modal_entries(seg, keys, observations, frame_ends)
            if heard:  # descriptions in the joint space's text tower, beside the raw sound
                vecs = self.embedder.embed_texts([o.description for o in heard])
                for o, v in zip(heard, vecs, strict=True):
                    entries.append(EmbeddingEntry(o.t_start, o.t_end, "sound", o.description, v))
        else:
            texts = [o.description for o in observations] + [p.text for p in transcript]
            texts += [o.description for o in heard]
            vectors = self.embedder.embed_texts(texts) if texts else np.zeros((0, 1))
            for i, obs in enumerate(observations):
                entries.append(
                    EmbeddingEntry(obs.t, frame_ends[i], "visual", obs.description, vectors[i])
                )
            for j, piece in enumerate(transcript):
                entries.append(
                    EmbeddingEntry(
                        piece.t_start, piece.t_end, "speech", piece.text,
                        vectors[len(observations) + j],
                    )
                )
            base = len(observations) + len(transcript)
            for j, o in enumerate(heard):
                entries.append(EmbeddingEntry(o.t_start, o.t_end, "sound", o.description, vectors[base + j]))
        if entries:
            vector = representative_of(entries)
        else:
            vector = normalise(self.embedder.embed_texts([EMPTY_SEGMENT_TEXT])[0])
        self.timer.add("embed", started)

        memory = ShortTermMemory(
            id=memory_id(stream_id, seg.t_start),
            stream_id=stream_id,
            t_start=seg.t_start,
            t_end=seg.t_end,
            vector=vector,
            embeddings=entries,
            transcript=transcript,
            frames=observations,
            frame_features=[(o.t, features[i]) for i, o in enumerate(observations)],
            sounds=sounds,
            metadata={
                "segments": [[round(seg.t_start, 3), round(seg.t_end, 3)]],
                "boundary": seg.boundary_kind,
                "sampled_frames": seen.sampled_frames,
                "motion": seen.motion,  # still | moving | camera panning ("" under two frames)
                "motion_confidence": seen.motion_confidence,
                "models": self.model_ids,
            },
        )
        if keys and s.llm == "openai" and s.replay_max_images > 0:
            # the summariser is a vision-language model: let it see the key frames too
            from episodic.memory.vlm_describer import encode_jpeg

            memory.keyframe_images = [encode_jpeg(k.rgb, s.openai_image_max_side) for k in keys]
        return memory

    def _sounds(self, seg: Segment, transcript: list[TranscriptPiece]) -> list[SoundObservation]:
        """Sound observations of the segment's audio, clipped to the segment's span."""
        if self.sounds is None or not seg.audio.size:
            return []
        started = time.perf_counter()
        found = self.sounds.describe(seg.audio, seg.sample_rate_hz, seg.audio_t_start, transcript)
        self.timer.add("sound", started)
        out = []
        for o in found:
            o.t_start, o.t_end = max(o.t_start, seg.t_start), min(o.t_end, seg.t_end)
            if o.t_end > o.t_start:
                out.append(o)
        return out

    def _cross_modal_entries(self, seg, keys, observations, frame_ends) -> list[EmbeddingEntry]:
        """ImageBind path: embed pixels and 2 s audio windows directly (HippoMM's E_i)."""
        emb: CrossModalEmbedder = self.embedder  # type: ignore[assignment]
        out: list[EmbeddingEntry] = []
        if keys:
            vecs = emb.embed_images([k.rgb for k in keys])
            for i, k in enumerate(keys):
                text = observations[i].description if i < len(observations) else ""
                out.append(EmbeddingEntry(k.t, frame_ends[i], "visual", text, vecs[i]))
        if seg.audio.size:
            step = int(AUDIO_WINDOW_S * seg.sample_rate_hz)
            clips = [seg.audio[i : i + step] for i in range(0, seg.audio.size, step)]
            clips = [c for c in clips if c.size >= seg.sample_rate_hz // 2]
            if clips:
                vecs = emb.embed_audio(clips, seg.sample_rate_hz)
                for i, _ in enumerate(clips):
                    t0 = seg.audio_t_start + i * AUDIO_WINDOW_S
                    out.append(
                        EmbeddingEntry(t0, min(t0 + AUDIO_WINDOW_S, seg.t_end), "audio", "", vecs[i])
                    )
        return out
