"""The REST API's request bodies (pydantic, so ``/openapi.json`` documents them).

Each body has the fields of its gRPC request message by the same names (``choices`` for Ask's
``options``, as the CLI says it; ``deadline_s`` for the call's gRPC deadline). Only types are
checked here (a wrong type or an unknown field: 422); ranges and meanings are the server's
own validation, so a bad value gets exactly gRPC's INVALID_ARGUMENT message (400).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
Int32 = Field(0, ge=INT32_MIN, le=INT32_MAX)
Deadline = Field(None, gt=0, le=3600, description="The call's deadline, seconds (default 300).")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchBody(_Body):
    """Find the moments that match a description (and/or look like a stored segment)."""

    query: str = Field("", description="What to look for, in words (1-4,000 characters).")
    stream_ids: list[str] = Field(default_factory=list, description="Only these streams; [] = every stream the key may see.")
    t_min: float | None = Field(None, description="Only moments ending at or after this stream time (s).")
    t_max: float | None = Field(None, description="Only moments starting at or before this stream time (s).")
    top_k: int = Field(0, ge=INT32_MIN, le=INT32_MAX, description="1-100; 0 = 5.")
    like_segment_id: str = Field("", description="Search by example: this segment's (or event's) key frame.")
    deadline_s: float | None = Deadline


class AskBody(_Body):
    """Answer a question from the memory, with the evidence it rests on."""

    question: str = Field(description="The question (1-4,000 characters).")
    choices: list[str] = Field(default_factory=list, description="Multiple-choice options, in order (2-10), or [].")
    stream_ids: list[str] = Field(default_factory=list)
    t_min: float | None = None
    t_max: float | None = None
    top_k: int = Field(0, ge=INT32_MIN, le=INT32_MAX, description="Evidence to retrieve, 1-100; 0 = 5.")
    inspect: bool = Field(False, description="Look again at the stored video whatever the memory's confidence.")
    deadline_s: float | None = Deadline


class LocateBody(_Body):
    """Find the second something was on screen by looking again at the stored video."""

    query: str
    stream_ids: list[str] = Field(default_factory=list)
    t_min: float | None = None
    t_max: float | None = None
    max_frames: int = Field(0, ge=INT32_MIN, le=INT32_MAX, description="64-100,000; 0 = 1024.")
    top_k: int = Field(0, ge=INT32_MIN, le=INT32_MAX, description="1-100; 0 = 3.")
    deadline_s: float | None = Deadline


class RecallBody(_Body):
    """Find a half-remembered recording: free text and/or the four facets."""

    description: str = ""
    global_impression: str = ""
    key_moment: str = ""
    temporal: str = ""
    audio: str = ""
    stream_ids: list[str] = Field(default_factory=list)
    t_min: float | None = None
    t_max: float | None = None
    top_k: int = Field(0, ge=INT32_MIN, le=INT32_MAX, description="Streams, 1-100; 0 = 5.")
    deadline_s: float | None = Deadline


class ArticleBody(_Body):
    """Write a cited article from the memory of several streams."""

    request: str = Field(description="What the article should be about (1-4,000 characters).")
    style: str = Field("ginger", description="bullet | cag | ginger")
    stream_ids: list[str] = Field(default_factory=list)
    t_min: float | None = None
    t_max: float | None = None
    fusion: str = Field("", description="rrf | wrrf | max | mean | sum; \"\" = the server's article_fusion.")
    max_sub_queries: int = Field(0, ge=0, le=2**32 - 1, description="1-50; 0 = the server's default.")
    deadline_s: float | None = Field(None, gt=0, le=3600, description="The call's deadline, seconds (default 600).")


class WatchBody(_Body):
    """A standing query (see "Standing queries" in the README)."""

    query: str
    kind: str = Field("match", description="match | first | again | absent | order")
    stream_ids: list[str] = Field(default_factory=list)
    within_s: float | None = Field(None, description="absent/again/order: the window, seconds.")
    by_time: str = Field("", description="absent: a local time of day HH:MM.")
    then: str = Field("", description="order: what must match after query.")
    period: str = Field("day", description="first: day | ever")
    cooldown_s: float = Field(60.0, description="match/again: repeats closer than this are one occurrence.")
    webhook_url: str = Field("", description="POST each alert here (signed).")


class ErrorDetail(BaseModel):
    code: str = Field(description="The gRPC status name: INVALID_ARGUMENT, NOT_FOUND, …")
    message: str


class ErrorBody(BaseModel):
    """Every failure's body."""

    error: ErrorDetail
