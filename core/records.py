"""The memory records (HippoMM Eq. 4 and Eq. 7) and their deterministic identities.

A ShortTermMemory is the detailed layer of one consolidated segment; a ThetaEvent is its
abstract layer (a one-sentence summary). Ids are derived from the stream id and the start
time in milliseconds, so ingesting the same recording again writes the same ids and a store
upsert replaces instead of duplicating.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from episodic.core.errors import InputError, shown

if TYPE_CHECKING:  # numpy is imported where vectors are computed: the CLI starts without it
    import numpy as np

# What an E_i entry was made from: a key frame, a stretch of speech, an audio window.
EntryModality = Literal["visual", "speech", "audio"]

STREAM_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def validate_stream_id(stream_id: str) -> str:
    """Stream ids end up in file names, record ids and filters: keep them boring."""
    if not isinstance(stream_id, str) or not STREAM_ID_PATTERN.fullmatch(stream_id):
        raise InputError(
            f"invalid stream id {shown(stream_id)}: use 1-128 characters from A-Z a-z 0-9 . _ -, "
            "starting with a letter or digit"
        )
    return stream_id


def stream_id_from_name(name: str) -> str:
    """A valid stream id derived from a file name ("My Clip (1).mp4" → "My-Clip-1")."""
    stem = name.rsplit("/", 1)[-1]
    if "." in stem:
        stem = stem.rsplit(".", 1)[0]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")[:128]
    if not slug:
        slug = "stream-" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return validate_stream_id(slug)


def _ms(t: float) -> int:
    return int(round(t * 1000.0))


def memory_id(stream_id: str, t_start: float) -> str:
    return f"{stream_id}@{_ms(t_start):012d}"


def event_id(stream_id: str, t_start: float) -> str:
    return f"{stream_id}@{_ms(t_start):012d}.e"


def vector_id(owner_id: str, kind: str, index: int) -> str:
    return f"{owner_id}.{kind}{index:04d}"


def overview_id(stream_id: str, t_start: float | None = None) -> str:
    """A stream-wide overview (``t_start`` None) or the overview of the stretch starting there."""
    if t_start is None:
        return f"{stream_id}.overview"
    return f"{stream_id}@{_ms(t_start):012d}.o"


def segment_id(stream_id: str, t_start: float) -> str:
    """A raw (pre-consolidation) segment; it names the snippet file of that segment."""
    return f"{stream_id}@{_ms(t_start):012d}.s"


@dataclass
class TranscriptPiece:
    """One time-aligned stretch of recognised speech (stream time, seconds)."""

    t_start: float
    t_end: float
    text: str
    # Not persisted (the store keeps times and text): what the recogniser knew while ingesting.
    # (t_start, t_end, word) in stream time, so a caller can find the pauses between words.
    words: list[tuple[float, float, str]] = field(default_factory=list, compare=False)
    language: str = field(default="", compare=False)  # detected or configured, e.g. "en"


# Where a key frame's description lists the frame's main colours ("a scene; colours: green,
# grey"): written by the describers, read by answering (a frame's colours are not the colour of a
# thing it does not name)
FRAME_COLOURS = "colours:"


@dataclass
class FrameObservation:
    """What the visual describer saw in one key frame."""

    t: float
    labels: list[tuple[str, float]] = field(default_factory=list)  # (label, probability)
    colours: list[str] = field(default_factory=list)
    ocr_text: str = ""
    description: str = ""  # the text that stands for this frame in the text space
    people: int = 0  # people the detectors found (HOG full body / Haar faces), 0 if none
    faces: int = 0
    quality: str = ""  # "" (usable) or why no labels were kept: "dark", "flat", "blurred"
    # The classifier's top ImageNet names with probabilities, however unsure: not evidence
    # that something was there (never said in descriptions or summaries), only a hint for
    # choosing between options a question gives ("a motorcycle" vs "a clock")
    guesses: list[tuple[str, float]] = field(default_factory=list)
    # The same for the parts of the frame (each name at its best over a grid of crops), kept
    # apart: a picture shown in part of a busy frame is clear only there, but a crop of a wall
    # is guessed as surely, so these only choose between options, never make a picture stand out
    part_guesses: list[tuple[str, float]] = field(default_factory=list)


@dataclass
class SoundObservation:
    """What could be heard in one audio window besides words (stream time, seconds).

    ``kind`` is one of speech, music, silence, noise, engine, applause (see memory/sound.py);
    ``description`` is the text that stands for it in the text space ("music playing").
    """

    t_start: float
    t_end: float
    kind: str
    confidence: float = 0.0
    description: str = ""


@dataclass
class EmbeddingEntry:
    """One element of E_i: a vector for a key frame or an audio window, with its text."""

    t_start: float
    t_end: float
    modality: EntryModality
    text: str
    vector: np.ndarray


@dataclass
class SnippetRef:
    """C_i: where the raw audio+video of (part of) a memory is kept."""

    uri: str
    t_start: float
    t_end: float


@dataclass
class ShortTermMemory:
    id: str
    stream_id: str
    t_start: float
    t_end: float
    vector: np.ndarray  # v_i: normalised mean of E_i
    embeddings: list[EmbeddingEntry] = field(default_factory=list)  # E_i
    transcript: list[TranscriptPiece] = field(default_factory=list)
    frames: list[FrameObservation] = field(default_factory=list)
    frame_features: list[tuple[float, np.ndarray]] = field(default_factory=list)
    snippets: list[SnippetRef] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    sounds: list[SoundObservation] = field(default_factory=list)  # non-speech audio windows
    # A small JPEG of the middle key frame, kept by the snippet store beside the snippets
    # ("" for audio-only memories and those stored before thumbnails existed)
    thumbnail_uri: str = ""
    # JPEG key frames, kept only while the memory is formed, for a vision-language summariser
    # (semantic replay with llm = "openai"); never stored, not part of equality
    keyframe_images: list[bytes] = field(default_factory=list, compare=False, repr=False)

    @property
    def file_uris(self) -> list[str]:
        """Every file the snippet store keeps for this memory: its snippets and its thumbnail
        (what forgetting deletes and orphan clean-up keeps)."""
        uris = [s.uri for s in self.snippets]
        if self.thumbnail_uri:
            uris.append(self.thumbnail_uri)
        return uris

    @property
    def transcript_text(self) -> str:
        return " ".join(p.text.strip() for p in self.transcript if p.text.strip())

    @property
    def visual_text(self) -> str:
        return " | ".join(f.description for f in self.frames if f.description)

    @property
    def ocr_text(self) -> str:
        seen: list[str] = []
        for f in self.frames:
            if f.ocr_text and f.ocr_text not in seen:
                seen.append(f.ocr_text)
        return " | ".join(seen)

    @property
    def sound_text(self) -> str:
        """The distinct non-speech sounds in time order ("music playing | engine running")."""
        seen: list[str] = []
        for o in self.sounds:
            if o.description and o.description not in seen:
                seen.append(o.description)
        return " | ".join(seen)

    @property
    def keyframe_times(self) -> list[float]:
        return [f.t for f in self.frames]

    @property
    def duration_s(self) -> float:
        return self.t_end - self.t_start


@dataclass
class ThetaEvent:
    id: str
    stream_id: str
    memory_id: str
    t_start: float
    t_end: float
    summary: str  # S_θ
    summary_vector: np.ndarray  # embedding of S_θ (what fast retrieval searches)
    vector: np.ndarray  # v_k, shared with the ShortTermMemory
    visual_context: list[str] = field(default_factory=list)  # I_θ: descriptions used
    audio_context: list[str] = field(default_factory=list)  # A_θ: transcript used
    metadata: dict[str, Any] = field(default_factory=dict)


# How much of a stream an overview covers: all of it so far, one stretch (overview_stretch_s),
# or one longer summary window (summary_windows: an hour, a day) merged from its stretches.
OverviewScope = Literal["stream", "stretch", "window"]


@dataclass
class StreamOverview:
    """What a whole stream (or one long stretch of it) is about: the record a half-remembered
    "global impression" is verified against (issue 16, RVMS-Bench's G facet).

    Composed from the stream's memories (memory/overview.py), never written by a language
    model, so every word in ``text`` is in the memory. ``facets``
    keeps the parts apart (topics, people, objects, on-screen text, sounds, tone, opening) so
    a verifier can score each; ``text`` is their sentence and ``vector`` its embedding. A
    stretch's facets also hold the tallies its summary window is read from and longer windows
    (scope "window": an hour, a day) and the stream-wide overview are merged from (issue 17).
    Rebuilt as a live stream grows: the id depends only on the stream and the stretch start,
    so an upsert replaces the previous version.
    """

    id: str
    stream_id: str
    t_start: float
    t_end: float
    scope: OverviewScope
    text: str
    vector: np.ndarray
    facets: dict[str, list[str]] = field(default_factory=dict)
    events: int = 0  # ThetaEvents it was composed from
    updated_at: float = 0.0  # unix time


@dataclass
class StreamInfo:
    stream_id: str
    source: str = ""
    t_end: float = 0.0  # stream seconds covered so far
    memories: int = 0
    events: int = 0
    updated_at: float = 0.0  # unix time
    metadata: dict[str, Any] = field(default_factory=dict)


def representative_of(entries: list[EmbeddingEntry]) -> np.ndarray | None:
    """v_i from E_i: the mean of each modality's mean, normalised (None when E_i is empty).

    A plain mean over E_i lets the most numerous kind of entry decide: a segment has many key
    frames and few sentences, and on the offline default frames without anything nameable are
    described alike ("a scene; colours: grey"), so two segments in which different things were
    said looked the same and consolidation merged a whole minute into one memory. Averaging
    per modality first gives what was said, seen and heard an equal say."""
    import numpy as np

    groups: dict[str, list[np.ndarray]] = {}
    for e in entries:
        v = np.asarray(e.vector, dtype=np.float32)
        if v.size:
            groups.setdefault(e.modality, []).append(v)
    if not groups:
        return None
    means = [normalise(np.mean(vs, axis=0)) for vs in groups.values()]
    return normalise(np.mean(means, axis=0))


def normalise(v: np.ndarray) -> np.ndarray:
    import numpy as np

    v = np.asarray(v, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v
