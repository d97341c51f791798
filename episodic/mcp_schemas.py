"""The output schemas of ``episodic mcp``'s tools: the JSON documents of the CLI's ``--json``
(made only by the ``*_to_dict`` functions of :mod:`episodic.api_convert`,
:mod:`episodic.api_recall` and :mod:`episodic.api_records`), described as pydantic models so
that ``tools/list`` publishes them and a client can check every result.

The models describe; they never reshape. Every one allows fields it does not name, so a field
added to a ``*_to_dict`` document reaches an agent unchanged before the model names it
(tests/unit/episodic/test_mcp.py holds each model to its document). Times are stream seconds:
seconds from the start of that stream's recording.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Doc(BaseModel):
    model_config = ConfigDict(extra="allow")


# -- answers and moments ---------------------------------------------------------------------------
class EvidenceDoc(_Doc):
    """A piece of memory an answer rests on."""

    stream_id: str
    segment_id: str = Field(description="The stored segment it comes from (get_segment reads it).")
    t_start: float = Field(description="Stream seconds.")
    t_end: float = Field(description="Stream seconds.")
    modality: str = Field(description='What kind of text: "speech", "visual", "ocr", "sound", "summary", "memory" or "frame".')
    text: str = Field(description="The text the answer used.")
    snippet_uri: str = ""
    score: float = 0.0


class AskDoc(_Doc):
    """An answer from the memory."""

    answer: str
    choice_index: int | None = Field(None, description="With choices: the 0-based index of the option picked.")
    confidence: float = Field(description="0–1, calibrated; 0 with a refusal when the memory holds nothing about it.")
    pathway: str = Field(description='"fast", "detailed" or "inspect" (looked again at the video).')
    query_type: str = Field(description='"VIDEO", "AUDIO", "VIDEO+AUDIO" or "SUMMARY": what the question was taken to need.')
    evidence: list[EvidenceDoc] = Field(default_factory=list)
    fast_answer: str = ""
    fast_confidence: float = 0.0
    timings_ms: dict[str, float] = Field(default_factory=dict)


class MomentDoc(_Doc):
    """A moment that matches a description."""

    stream_id: str
    t_start: float = Field(description="Stream seconds.")
    t_end: float = Field(description="Stream seconds.")
    score: float = Field(description="Similarity, higher is better.")
    why: str = Field(description="What matched, quoted from the memory.")
    segment_id: str = Field(description="The stored segment (get_segment reads it).")
    snippet_uri: str = ""


class SearchDoc(_Doc):
    """Matching moments, best first."""

    moments: list[MomentDoc]


class LocatedMomentDoc(_Doc):
    """A moment the stored video itself shows."""

    stream_id: str
    t: float = Field(description="The second it was seen (stream seconds).")
    t_start: float = Field(description="Stream seconds.")
    t_end: float = Field(description="Stream seconds.")
    confidence: float
    why: str = Field(description="What was seen there.")
    depth: int = Field(description="How far the frame search zoomed in.")


class LocateDoc(_Doc):
    """What looking again at the video found."""

    moments: list[LocatedMomentDoc]
    frames_examined: int
    depth: int
    elapsed_s: float
    stopped: str = Field(description='Why the search ended: "found", "exhausted", "budget", "deadline" or "no lead".')
    streams_looked: list[str]
    not_seen: list[str] = Field(description="Streams that could not be looked at, each with the reason.")


class RecalledStreamDoc(_Doc):
    """A recording that matches a half-remembered description."""

    stream_id: str
    t: float = Field(description="The key moment (stream seconds).")
    t_start: float = Field(description="Stream seconds.")
    t_end: float = Field(description="Stream seconds.")
    confidence: float
    facets: dict[str, float] = Field(description="The score of each facet given (global, key_moment, temporal, audio).")
    why: str
    segment_id: str


class RecallDoc(_Doc):
    """Recordings found from a description, best first."""

    results: list[RecalledStreamDoc]
    facets: dict[str, str] = Field(description="What each facet was searched as.")
    rejected: list[str] = Field(description="Streams that failed a facet, with which one.")
    elapsed_s: float


# -- stored records --------------------------------------------------------------------------------
class GapDoc(_Doc):
    t_start: float
    t_end: float


class StreamDoc(_Doc):
    """A recorded stream."""

    stream_id: str
    source: str
    t_end: float = Field(description="How far the stream's memory reaches (stream seconds): its length.")
    segments: int
    events: int
    updated_at: float = Field(description="When it last changed (Unix time).")
    complete: bool | None = Field(None, description="False while a live stream is still recorded; null when not known.")
    gaps: list[GapDoc] = Field(default_factory=list, description="Stretches with no recording (stream seconds).")


class StreamsDoc(_Doc):
    """The streams in the memory."""

    streams: list[StreamDoc]


class EventDoc(_Doc):
    """A one-sentence summary of a stored segment."""

    id: str
    stream_id: str
    segment_id: str
    t_start: float = Field(description="Stream seconds.")
    t_end: float = Field(description="Stream seconds.")
    summary: str
    provisional: bool = Field(description="True while a live stream's memory of it may still change.")
    thumbnail_url: str = Field("", description="A signed HTTP URL of a small JPEG of its key frame; empty without the HTTP API.")


class EventsDoc(_Doc):
    """Events in (stream, time) order and whether more matched."""

    events: list[EventDoc]
    truncated: bool = Field(False, description="More events match: narrow t_min/t_max or raise limit.")


class TranscriptPieceDoc(_Doc):
    t_start: float
    t_end: float
    text: str


class SnippetDoc(_Doc):
    index: int
    uri: str
    t_start: float
    t_end: float
    content_type: str


class SegmentDoc(_Doc):
    """One stored segment in full."""

    id: str
    stream_id: str
    t_start: float = Field(description="Stream seconds.")
    t_end: float = Field(description="Stream seconds.")
    transcript: str
    transcript_pieces: list[TranscriptPieceDoc] = Field(default_factory=list)
    visual_text: str = Field("", description="What the key frames were described as.")
    ocr_text: str = Field("", description="Text read on screen.")
    snippets: list[SnippetDoc] = Field(default_factory=list)
    keyframe_times: list[float] = Field(default_factory=list)
    models: dict[str, str] = Field(default_factory=dict)


# -- articles --------------------------------------------------------------------------------------
class SentenceDoc(_Doc):
    text: str
    citations: list[int] = Field(default_factory=list, description="The citation numbers n it rests on.")


class SectionDoc(_Doc):
    heading: str
    sentences: list[SentenceDoc] = Field(default_factory=list)


class CitationDoc(_Doc):
    n: int
    stream_id: str
    segment_id: str
    t_start: float
    t_end: float
    snippet_uri: str = ""


class ClaimDoc(_Doc):
    id: str
    text: str
    modality: str
    stream_id: str
    segment_id: str
    t_start: float
    t_end: float
    kind: str = "claim"
    sub_query: str = ""
    relevance: float = 0.0
    support: float = 0.0
    snippet_uri: str = ""


class GroundingDoc(_Doc):
    stream_id: str
    t_start: float
    t_end: float


class StepDoc(_Doc):
    text: str
    groundings: list[GroundingDoc] = Field(default_factory=list)


class ArticleDoc(_Doc):
    """A cited article."""

    request: str
    style: str
    title: str
    sections: list[SectionDoc] = Field(default_factory=list)
    citations: list[CitationDoc] = Field(default_factory=list)
    claims: list[ClaimDoc] = Field(default_factory=list)
    dropped_claims: int = 0
    sub_queries: list[str] = Field(default_factory=list)
    steps: list[StepDoc] = Field(default_factory=list)
    thin_evidence: bool = Field(False, description="The memory holds little about the topic; the article says so.")
    timings_ms: dict[str, float] = Field(default_factory=dict)
    markdown: str = Field(description="The whole article as Markdown, with [n] citations.")
