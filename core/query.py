"""The query side's records: what a question carries in, and what an answer carries out.

These mirror the gRPC messages (proto/episodic/v1/episodic.proto) field for field, so the CLI's
``--json`` output, the in-process API and the server all speak the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

# Where a piece of evidence comes from: an event summary, what was said, what was seen (a key
# frame's description), text read on screen, a non-speech sound, a whole memory, or a frame
# looked at again at question time (the inspect pathway).
Modality = Literal["summary", "speech", "visual", "ocr", "sound", "memory", "frame"]
# Which answerer produced an answer (the calibrator's "route" signal depends on it).
AnswerSource = Literal["model", "extract", "choice", "count", "order", "gist", "sound", "look", "none"]
# What a question asks for, beside its words (retrieval/question_shape.py).
Focus = Literal["name", "time", "number", "colour", "place", "any"]
Order = Literal["after", "before", "first", "last"]


class QueryType(str, Enum):
    """HippoMM C.2 query analysis: which modality a question needs."""

    VIDEO = "VIDEO"
    AUDIO = "AUDIO"
    VIDEO_AUDIO = "VIDEO+AUDIO"
    SUMMARY = "SUMMARY"


class Pathway(str, Enum):
    FAST = "fast"  # answered from ThetaEvent summaries
    DETAILED = "detailed"  # escalated to ShortTermMemories (confidence below τ)
    INSPECT = "inspect"  # looked again at the stored video (both stayed below τ, or asked for)


@dataclass(frozen=True)
class Scope:
    """Which part of the memory a request may see and wants to see.

    ``stream_ids`` None means every stream the caller may see; an empty tuple means none.
    Times are stream seconds; None means unbounded.
    """

    stream_ids: tuple[str, ...] | None = None
    t_min: float | None = None
    t_max: float | None = None


@dataclass(frozen=True)
class AskRequest:
    question: str
    options: tuple[str, ...] = ()  # multiple-choice options, in order (A, B, C, …)
    scope: Scope = Scope()
    top_k: int = 5
    deadline_s: float | None = None  # seconds from now; None = no deadline
    inspect: bool = False  # look again at the video whatever the memory's confidence


@dataclass
class Evidence:
    stream_id: str
    segment_id: str  # the ShortTermMemory id
    t_start: float
    t_end: float
    modality: Modality
    text: str
    snippet_uri: str = ""
    score: float = 0.0


@dataclass
class AskResult:
    answer: str
    confidence: float
    pathway: Pathway
    query_type: QueryType
    choice_index: int | None = None  # set when options were given
    evidence: list[Evidence] = field(default_factory=list)
    fast_answer: str = ""  # what the fast path said (also when it was not confident)
    fast_confidence: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)


@dataclass
class Moment:
    """A moment search hit: where in which stream, how well it matches, and why."""

    stream_id: str
    t_start: float
    t_end: float
    score: float
    why: str
    segment_id: str = ""
    snippet_uri: str = ""
    # the snippet and the key-frame thumbnail over a server's HTTP API (signed URLs); "" in
    # process and from a server without one
    snippet_url: str = ""
    thumbnail_url: str = ""


@dataclass(frozen=True)
class LocateRequest:
    """Find the moment something was on screen by looking at the stored video (issue 15)."""

    query: str
    scope: Scope = Scope()  # the streams and stream times to look at
    max_frames: int = 1024  # frames the search may decode, all streams together
    top_k: int = 3
    deadline_s: float | None = None


@dataclass
class LocatedMoment:
    stream_id: str
    t: float  # the frame that showed it
    t_start: float
    t_end: float
    confidence: float
    why: str  # what was seen there
    depth: int = 0  # the grid layer it was seen at (0 = the root)


@dataclass
class LocateResult:
    moments: list[LocatedMoment] = field(default_factory=list)  # best first
    frames_examined: int = 0
    depth: int = 0
    elapsed_s: float = 0.0
    stopped: str = ""  # found | exhausted | budget | deadline | no lead
    streams_looked: list[str] = field(default_factory=list)
    # what could not be looked at, in words ("cam2: no stored video (audio only)")
    not_seen: list[str] = field(default_factory=list)


# -- fuzzy recall (issue 16: RACLO's Recall → Search → Verify over the memory) ---------------
# RVMS-Bench's four kinds of half-remembered detail: the global impression of a recording (G),
# a key moment (K), what came before or after it (T) and what was heard (A).
FacetName = Literal["global", "key_moment", "temporal", "audio"]
FACET_NAMES: tuple[FacetName, ...] = ("global", "key_moment", "temporal", "audio")


@dataclass(frozen=True)
class RecallRequest:
    """A half-remembered description, as free text and/or explicit facets.

    Explicit facets win over what the free text is split into; at least one must be given.
    """

    description: str = ""
    global_impression: str = ""
    key_moment: str = ""
    temporal: str = ""
    audio: str = ""
    scope: Scope = Scope()
    top_k: int = 5
    deadline_s: float | None = None


@dataclass
class RecalledStream:
    """One candidate: a stream, the key moment localised in it, and how each facet held."""

    stream_id: str
    t: float  # the key moment's best second (the middle of its segment without looking again)
    t_start: float
    t_end: float
    confidence: float
    facets: dict[str, float] = field(default_factory=dict)  # facet name → score in [0, 1]
    why: str = ""
    segment_id: str = ""


@dataclass
class RecallResult:
    results: list[RecalledStream] = field(default_factory=list)  # best first
    # the facet queries the description became ({"key_moment": "a cat on the counter", …})
    facets: dict[str, str] = field(default_factory=dict)
    # streams that matched some facet but failed another, in words
    rejected: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
