from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Pathway(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PATHWAY_UNSPECIFIED: _ClassVar[Pathway]
    PATHWAY_FAST: _ClassVar[Pathway]
    PATHWAY_DETAILED: _ClassVar[Pathway]
    PATHWAY_INSPECT: _ClassVar[Pathway]

class QueryType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    QUERY_TYPE_UNSPECIFIED: _ClassVar[QueryType]
    QUERY_TYPE_VIDEO: _ClassVar[QueryType]
    QUERY_TYPE_AUDIO: _ClassVar[QueryType]
    QUERY_TYPE_VIDEO_AUDIO: _ClassVar[QueryType]
    QUERY_TYPE_SUMMARY: _ClassVar[QueryType]

class ArticleStyle(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ARTICLE_STYLE_UNSPECIFIED: _ClassVar[ArticleStyle]
    ARTICLE_STYLE_BULLET: _ClassVar[ArticleStyle]
    ARTICLE_STYLE_CAG: _ClassVar[ArticleStyle]
    ARTICLE_STYLE_GINGER: _ClassVar[ArticleStyle]

class FusionMethod(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FUSION_METHOD_UNSPECIFIED: _ClassVar[FusionMethod]
    FUSION_METHOD_RRF: _ClassVar[FusionMethod]
    FUSION_METHOD_WEIGHTED_RRF: _ClassVar[FusionMethod]
    FUSION_METHOD_MAX: _ClassVar[FusionMethod]
    FUSION_METHOD_MEAN: _ClassVar[FusionMethod]
    FUSION_METHOD_SUM: _ClassVar[FusionMethod]
PATHWAY_UNSPECIFIED: Pathway
PATHWAY_FAST: Pathway
PATHWAY_DETAILED: Pathway
PATHWAY_INSPECT: Pathway
QUERY_TYPE_UNSPECIFIED: QueryType
QUERY_TYPE_VIDEO: QueryType
QUERY_TYPE_AUDIO: QueryType
QUERY_TYPE_VIDEO_AUDIO: QueryType
QUERY_TYPE_SUMMARY: QueryType
ARTICLE_STYLE_UNSPECIFIED: ArticleStyle
ARTICLE_STYLE_BULLET: ArticleStyle
ARTICLE_STYLE_CAG: ArticleStyle
ARTICLE_STYLE_GINGER: ArticleStyle
FUSION_METHOD_UNSPECIFIED: FusionMethod
FUSION_METHOD_RRF: FusionMethod
FUSION_METHOD_WEIGHTED_RRF: FusionMethod
FUSION_METHOD_MAX: FusionMethod
FUSION_METHOD_MEAN: FusionMethod
FUSION_METHOD_SUM: FusionMethod

class AskRequest(_message.Message):
    __slots__ = ("question", "options", "stream_ids", "t_min", "t_max", "top_k", "inspect")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    STREAM_IDS_FIELD_NUMBER: _ClassVar[int]
    T_MIN_FIELD_NUMBER: _ClassVar[int]
    T_MAX_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    INSPECT_FIELD_NUMBER: _ClassVar[int]
    question: str
    options: _containers.RepeatedScalarFieldContainer[str]
    stream_ids: _containers.RepeatedScalarFieldContainer[str]
    t_min: float
    t_max: float
    top_k: int
    inspect: bool
    def __init__(self, question: _Optional[str] = ..., options: _Optional[_Iterable[str]] = ..., stream_ids: _Optional[_Iterable[str]] = ..., t_min: _Optional[float] = ..., t_max: _Optional[float] = ..., top_k: _Optional[int] = ..., inspect: _Optional[bool] = ...) -> None: ...

class Evidence(_message.Message):
    __slots__ = ("stream_id", "segment_id", "t_start", "t_end", "modality", "text", "snippet_uri", "score")
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    MODALITY_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_URI_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    segment_id: str
    t_start: float
    t_end: float
    modality: str
    text: str
    snippet_uri: str
    score: float
    def __init__(self, stream_id: _Optional[str] = ..., segment_id: _Optional[str] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., modality: _Optional[str] = ..., text: _Optional[str] = ..., snippet_uri: _Optional[str] = ..., score: _Optional[float] = ...) -> None: ...

class AskResponse(_message.Message):
    __slots__ = ("answer", "choice_index", "confidence", "pathway", "query_type", "evidence", "fast_answer", "fast_confidence", "timings_ms")
    class TimingsMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    CHOICE_INDEX_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    PATHWAY_FIELD_NUMBER: _ClassVar[int]
    QUERY_TYPE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    FAST_ANSWER_FIELD_NUMBER: _ClassVar[int]
    FAST_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_MS_FIELD_NUMBER: _ClassVar[int]
    answer: str
    choice_index: int
    confidence: float
    pathway: Pathway
    query_type: QueryType
    evidence: _containers.RepeatedCompositeFieldContainer[Evidence]
    fast_answer: str
    fast_confidence: float
    timings_ms: _containers.ScalarMap[str, float]
    def __init__(self, answer: _Optional[str] = ..., choice_index: _Optional[int] = ..., confidence: _Optional[float] = ..., pathway: _Optional[_Union[Pathway, str]] = ..., query_type: _Optional[_Union[QueryType, str]] = ..., evidence: _Optional[_Iterable[_Union[Evidence, _Mapping]]] = ..., fast_answer: _Optional[str] = ..., fast_confidence: _Optional[float] = ..., timings_ms: _Optional[_Mapping[str, float]] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("query", "stream_ids", "t_min", "t_max", "top_k", "image", "like_segment_id")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    STREAM_IDS_FIELD_NUMBER: _ClassVar[int]
    T_MIN_FIELD_NUMBER: _ClassVar[int]
    T_MAX_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    LIKE_SEGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    query: str
    stream_ids: _containers.RepeatedScalarFieldContainer[str]
    t_min: float
    t_max: float
    top_k: int
    image: bytes
    like_segment_id: str
    def __init__(self, query: _Optional[str] = ..., stream_ids: _Optional[_Iterable[str]] = ..., t_min: _Optional[float] = ..., t_max: _Optional[float] = ..., top_k: _Optional[int] = ..., image: _Optional[bytes] = ..., like_segment_id: _Optional[str] = ...) -> None: ...

class Moment(_message.Message):
    __slots__ = ("stream_id", "t_start", "t_end", "score", "why", "segment_id", "snippet_uri", "snippet_url", "thumbnail_url")
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_URI_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_URL_FIELD_NUMBER: _ClassVar[int]
    THUMBNAIL_URL_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    t_start: float
    t_end: float
    score: float
    why: str
    segment_id: str
    snippet_uri: str
    snippet_url: str
    thumbnail_url: str
    def __init__(self, stream_id: _Optional[str] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., score: _Optional[float] = ..., why: _Optional[str] = ..., segment_id: _Optional[str] = ..., snippet_uri: _Optional[str] = ..., snippet_url: _Optional[str] = ..., thumbnail_url: _Optional[str] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("moments",)
    MOMENTS_FIELD_NUMBER: _ClassVar[int]
    moments: _containers.RepeatedCompositeFieldContainer[Moment]
    def __init__(self, moments: _Optional[_Iterable[_Union[Moment, _Mapping]]] = ...) -> None: ...

class LocateRequest(_message.Message):
    __slots__ = ("query", "stream_ids", "t_min", "t_max", "max_frames", "top_k")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    STREAM_IDS_FIELD_NUMBER: _ClassVar[int]
    T_MIN_FIELD_NUMBER: _ClassVar[int]
    T_MAX_FIELD_NUMBER: _ClassVar[int]
    MAX_FRAMES_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    query: str
    stream_ids: _containers.RepeatedScalarFieldContainer[str]
    t_min: float
    t_max: float
    max_frames: int
    top_k: int
    def __init__(self, query: _Optional[str] = ..., stream_ids: _Optional[_Iterable[str]] = ..., t_min: _Optional[float] = ..., t_max: _Optional[float] = ..., max_frames: _Optional[int] = ..., top_k: _Optional[int] = ...) -> None: ...

class LocatedMoment(_message.Message):
    __slots__ = ("stream_id", "t", "t_start", "t_end", "confidence", "why", "depth")
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    T_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    t: float
    t_start: float
    t_end: float
    confidence: float
    why: str
    depth: int
    def __init__(self, stream_id: _Optional[str] = ..., t: _Optional[float] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., confidence: _Optional[float] = ..., why: _Optional[str] = ..., depth: _Optional[int] = ...) -> None: ...

class LocateResponse(_message.Message):
    __slots__ = ("moments", "frames_examined", "depth", "elapsed_s", "stopped", "streams_looked", "not_seen")
    MOMENTS_FIELD_NUMBER: _ClassVar[int]
    FRAMES_EXAMINED_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_S_FIELD_NUMBER: _ClassVar[int]
    STOPPED_FIELD_NUMBER: _ClassVar[int]
    STREAMS_LOOKED_FIELD_NUMBER: _ClassVar[int]
    NOT_SEEN_FIELD_NUMBER: _ClassVar[int]
    moments: _containers.RepeatedCompositeFieldContainer[LocatedMoment]
    frames_examined: int
    depth: int
    elapsed_s: float
    stopped: str
    streams_looked: _containers.RepeatedScalarFieldContainer[str]
    not_seen: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, moments: _Optional[_Iterable[_Union[LocatedMoment, _Mapping]]] = ..., frames_examined: _Optional[int] = ..., depth: _Optional[int] = ..., elapsed_s: _Optional[float] = ..., stopped: _Optional[str] = ..., streams_looked: _Optional[_Iterable[str]] = ..., not_seen: _Optional[_Iterable[str]] = ...) -> None: ...

class RecallRequest(_message.Message):
    __slots__ = ("description", "global_impression", "key_moment", "temporal", "audio", "stream_ids", "t_min", "t_max", "top_k")
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_IMPRESSION_FIELD_NUMBER: _ClassVar[int]
    KEY_MOMENT_FIELD_NUMBER: _ClassVar[int]
    TEMPORAL_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    STREAM_IDS_FIELD_NUMBER: _ClassVar[int]
    T_MIN_FIELD_NUMBER: _ClassVar[int]
    T_MAX_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    description: str
    global_impression: str
    key_moment: str
    temporal: str
    audio: str
    stream_ids: _containers.RepeatedScalarFieldContainer[str]
    t_min: float
    t_max: float
    top_k: int
    def __init__(self, description: _Optional[str] = ..., global_impression: _Optional[str] = ..., key_moment: _Optional[str] = ..., temporal: _Optional[str] = ..., audio: _Optional[str] = ..., stream_ids: _Optional[_Iterable[str]] = ..., t_min: _Optional[float] = ..., t_max: _Optional[float] = ..., top_k: _Optional[int] = ...) -> None: ...

class RecalledStream(_message.Message):
    __slots__ = ("stream_id", "t", "t_start", "t_end", "confidence", "facets", "why", "segment_id")
    class FacetsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    T_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    FACETS_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    t: float
    t_start: float
    t_end: float
    confidence: float
    facets: _containers.ScalarMap[str, float]
    why: str
    segment_id: str
    def __init__(self, stream_id: _Optional[str] = ..., t: _Optional[float] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., confidence: _Optional[float] = ..., facets: _Optional[_Mapping[str, float]] = ..., why: _Optional[str] = ..., segment_id: _Optional[str] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("results", "facets", "rejected", "elapsed_s")
    class FacetsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    FACETS_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_S_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[RecalledStream]
    facets: _containers.ScalarMap[str, str]
    rejected: _containers.RepeatedScalarFieldContainer[str]
    elapsed_s: float
    def __init__(self, results: _Optional[_Iterable[_Union[RecalledStream, _Mapping]]] = ..., facets: _Optional[_Mapping[str, str]] = ..., rejected: _Optional[_Iterable[str]] = ..., elapsed_s: _Optional[float] = ...) -> None: ...

class ListEventsRequest(_message.Message):
    __slots__ = ("stream_ids", "t_min", "t_max", "page_size", "page_token")
    STREAM_IDS_FIELD_NUMBER: _ClassVar[int]
    T_MIN_FIELD_NUMBER: _ClassVar[int]
    T_MAX_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    stream_ids: _containers.RepeatedScalarFieldContainer[str]
    t_min: float
    t_max: float
    page_size: int
    page_token: str
    def __init__(self, stream_ids: _Optional[_Iterable[str]] = ..., t_min: _Optional[float] = ..., t_max: _Optional[float] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("id", "stream_id", "segment_id", "t_start", "t_end", "summary", "provisional", "thumbnail_url")
    ID_FIELD_NUMBER: _ClassVar[int]
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    PROVISIONAL_FIELD_NUMBER: _ClassVar[int]
    THUMBNAIL_URL_FIELD_NUMBER: _ClassVar[int]
    id: str
    stream_id: str
    segment_id: str
    t_start: float
    t_end: float
    summary: str
    provisional: bool
    thumbnail_url: str
    def __init__(self, id: _Optional[str] = ..., stream_id: _Optional[str] = ..., segment_id: _Optional[str] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., summary: _Optional[str] = ..., provisional: _Optional[bool] = ..., thumbnail_url: _Optional[str] = ...) -> None: ...

class ListEventsResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListSummariesRequest(_message.Message):
    __slots__ = ("stream_id", "window", "t_min", "t_max")
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    T_MIN_FIELD_NUMBER: _ClassVar[int]
    T_MAX_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    window: str
    t_min: float
    t_max: float
    def __init__(self, stream_id: _Optional[str] = ..., window: _Optional[str] = ..., t_min: _Optional[float] = ..., t_max: _Optional[float] = ...) -> None: ...

class Tally(_message.Message):
    __slots__ = ("item", "count")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    item: str
    count: float
    def __init__(self, item: _Optional[str] = ..., count: _Optional[float] = ...) -> None: ...

class Quote(_message.Message):
    __slots__ = ("t", "text")
    T_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    t: float
    text: str
    def __init__(self, t: _Optional[float] = ..., text: _Optional[str] = ...) -> None: ...

class WindowSummary(_message.Message):
    __slots__ = ("stream_id", "window", "window_s", "t_start", "t_end", "covered_start", "covered_end", "memories", "events", "said", "topics", "people", "seen", "on_screen", "heard", "tone", "people_seen", "text", "wall_start", "wall_end", "id", "updated_at")
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    WINDOW_FIELD_NUMBER: _ClassVar[int]
    WINDOW_S_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    COVERED_START_FIELD_NUMBER: _ClassVar[int]
    COVERED_END_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    SAID_FIELD_NUMBER: _ClassVar[int]
    TOPICS_FIELD_NUMBER: _ClassVar[int]
    PEOPLE_FIELD_NUMBER: _ClassVar[int]
    SEEN_FIELD_NUMBER: _ClassVar[int]
    ON_SCREEN_FIELD_NUMBER: _ClassVar[int]
    HEARD_FIELD_NUMBER: _ClassVar[int]
    TONE_FIELD_NUMBER: _ClassVar[int]
    PEOPLE_SEEN_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    WALL_START_FIELD_NUMBER: _ClassVar[int]
    WALL_END_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    window: str
    window_s: float
    t_start: float
    t_end: float
    covered_start: float
    covered_end: float
    memories: int
    events: int
    said: _containers.RepeatedCompositeFieldContainer[Quote]
    topics: _containers.RepeatedCompositeFieldContainer[Tally]
    people: _containers.RepeatedCompositeFieldContainer[Tally]
    seen: _containers.RepeatedCompositeFieldContainer[Tally]
    on_screen: _containers.RepeatedCompositeFieldContainer[Tally]
    heard: _containers.RepeatedCompositeFieldContainer[Tally]
    tone: _containers.RepeatedScalarFieldContainer[str]
    people_seen: int
    text: str
    wall_start: str
    wall_end: str
    id: str
    updated_at: float
    def __init__(self, stream_id: _Optional[str] = ..., window: _Optional[str] = ..., window_s: _Optional[float] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., covered_start: _Optional[float] = ..., covered_end: _Optional[float] = ..., memories: _Optional[int] = ..., events: _Optional[int] = ..., said: _Optional[_Iterable[_Union[Quote, _Mapping]]] = ..., topics: _Optional[_Iterable[_Union[Tally, _Mapping]]] = ..., people: _Optional[_Iterable[_Union[Tally, _Mapping]]] = ..., seen: _Optional[_Iterable[_Union[Tally, _Mapping]]] = ..., on_screen: _Optional[_Iterable[_Union[Tally, _Mapping]]] = ..., heard: _Optional[_Iterable[_Union[Tally, _Mapping]]] = ..., tone: _Optional[_Iterable[str]] = ..., people_seen: _Optional[int] = ..., text: _Optional[str] = ..., wall_start: _Optional[str] = ..., wall_end: _Optional[str] = ..., id: _Optional[str] = ..., updated_at: _Optional[float] = ...) -> None: ...

class ListSummariesResponse(_message.Message):
    __slots__ = ("stream_id", "summaries", "wall_clock_start", "windows")
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    WALL_CLOCK_START_FIELD_NUMBER: _ClassVar[int]
    WINDOWS_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    summaries: _containers.RepeatedCompositeFieldContainer[WindowSummary]
    wall_clock_start: str
    windows: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, stream_id: _Optional[str] = ..., summaries: _Optional[_Iterable[_Union[WindowSummary, _Mapping]]] = ..., wall_clock_start: _Optional[str] = ..., windows: _Optional[_Iterable[str]] = ...) -> None: ...

class GetSegmentRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class Snippet(_message.Message):
    __slots__ = ("index", "uri", "t_start", "t_end", "content_type", "url")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    URI_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    index: int
    uri: str
    t_start: float
    t_end: float
    content_type: str
    url: str
    def __init__(self, index: _Optional[int] = ..., uri: _Optional[str] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., content_type: _Optional[str] = ..., url: _Optional[str] = ...) -> None: ...

class TranscriptPiece(_message.Message):
    __slots__ = ("t_start", "t_end", "text")
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    t_start: float
    t_end: float
    text: str
    def __init__(self, t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., text: _Optional[str] = ...) -> None: ...

class Segment(_message.Message):
    __slots__ = ("id", "stream_id", "t_start", "t_end", "transcript", "transcript_pieces", "visual_text", "ocr_text", "snippets", "keyframe_times", "models", "thumbnail_uri", "thumbnail_url")
    class ModelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_PIECES_FIELD_NUMBER: _ClassVar[int]
    VISUAL_TEXT_FIELD_NUMBER: _ClassVar[int]
    OCR_TEXT_FIELD_NUMBER: _ClassVar[int]
    SNIPPETS_FIELD_NUMBER: _ClassVar[int]
    KEYFRAME_TIMES_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    THUMBNAIL_URI_FIELD_NUMBER: _ClassVar[int]
    THUMBNAIL_URL_FIELD_NUMBER: _ClassVar[int]
    id: str
    stream_id: str
    t_start: float
    t_end: float
    transcript: str
    transcript_pieces: _containers.RepeatedCompositeFieldContainer[TranscriptPiece]
    visual_text: str
    ocr_text: str
    snippets: _containers.RepeatedCompositeFieldContainer[Snippet]
    keyframe_times: _containers.RepeatedScalarFieldContainer[float]
    models: _containers.ScalarMap[str, str]
    thumbnail_uri: str
    thumbnail_url: str
    def __init__(self, id: _Optional[str] = ..., stream_id: _Optional[str] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., transcript: _Optional[str] = ..., transcript_pieces: _Optional[_Iterable[_Union[TranscriptPiece, _Mapping]]] = ..., visual_text: _Optional[str] = ..., ocr_text: _Optional[str] = ..., snippets: _Optional[_Iterable[_Union[Snippet, _Mapping]]] = ..., keyframe_times: _Optional[_Iterable[float]] = ..., models: _Optional[_Mapping[str, str]] = ..., thumbnail_uri: _Optional[str] = ..., thumbnail_url: _Optional[str] = ...) -> None: ...

class DownloadSnippetRequest(_message.Message):
    __slots__ = ("segment_id", "index")
    SEGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    segment_id: str
    index: int
    def __init__(self, segment_id: _Optional[str] = ..., index: _Optional[int] = ...) -> None: ...

class SnippetChunk(_message.Message):
    __slots__ = ("data", "content_type", "offset", "total_size")
    DATA_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    content_type: str
    offset: int
    total_size: int
    def __init__(self, data: _Optional[bytes] = ..., content_type: _Optional[str] = ..., offset: _Optional[int] = ..., total_size: _Optional[int] = ...) -> None: ...

class ListStreamsRequest(_message.Message):
    __slots__ = ("with_storage",)
    WITH_STORAGE_FIELD_NUMBER: _ClassVar[int]
    with_storage: bool
    def __init__(self, with_storage: _Optional[bool] = ...) -> None: ...

class Stream(_message.Message):
    __slots__ = ("stream_id", "source", "t_end", "segments", "events", "updated_at", "complete", "gaps", "storage")
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    SEGMENTS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    GAPS_FIELD_NUMBER: _ClassVar[int]
    STORAGE_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    source: str
    t_end: float
    segments: int
    events: int
    updated_at: float
    complete: bool
    gaps: _containers.RepeatedCompositeFieldContainer[Gap]
    storage: StreamStorage
    def __init__(self, stream_id: _Optional[str] = ..., source: _Optional[str] = ..., t_end: _Optional[float] = ..., segments: _Optional[int] = ..., events: _Optional[int] = ..., updated_at: _Optional[float] = ..., complete: _Optional[bool] = ..., gaps: _Optional[_Iterable[_Union[Gap, _Mapping]]] = ..., storage: _Optional[_Union[StreamStorage, _Mapping]] = ...) -> None: ...

class StreamStorage(_message.Message):
    __slots__ = ("memories", "events", "vectors", "frames", "overviews", "streams", "records", "snippet_bytes")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    VECTORS_FIELD_NUMBER: _ClassVar[int]
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    OVERVIEWS_FIELD_NUMBER: _ClassVar[int]
    STREAMS_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_BYTES_FIELD_NUMBER: _ClassVar[int]
    memories: int
    events: int
    vectors: int
    frames: int
    overviews: int
    streams: int
    records: int
    snippet_bytes: int
    def __init__(self, memories: _Optional[int] = ..., events: _Optional[int] = ..., vectors: _Optional[int] = ..., frames: _Optional[int] = ..., overviews: _Optional[int] = ..., streams: _Optional[int] = ..., records: _Optional[int] = ..., snippet_bytes: _Optional[int] = ...) -> None: ...

class Gap(_message.Message):
    __slots__ = ("t_start", "t_end")
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    t_start: float
    t_end: float
    def __init__(self, t_start: _Optional[float] = ..., t_end: _Optional[float] = ...) -> None: ...

class ListStreamsResponse(_message.Message):
    __slots__ = ("streams",)
    STREAMS_FIELD_NUMBER: _ClassVar[int]
    streams: _containers.RepeatedCompositeFieldContainer[Stream]
    def __init__(self, streams: _Optional[_Iterable[_Union[Stream, _Mapping]]] = ...) -> None: ...

class ForgetRequest(_message.Message):
    __slots__ = ("stream_id", "t_min", "t_max")
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    T_MIN_FIELD_NUMBER: _ClassVar[int]
    T_MAX_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    t_min: float
    t_max: float
    def __init__(self, stream_id: _Optional[str] = ..., t_min: _Optional[float] = ..., t_max: _Optional[float] = ...) -> None: ...

class ForgetResponse(_message.Message):
    __slots__ = ("audit_id", "stream_id", "whole_stream", "t_min", "t_max", "forgotten", "snippet_files", "overviews_recomposed", "at", "finished_at", "recovered")
    AUDIT_ID_FIELD_NUMBER: _ClassVar[int]
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    WHOLE_STREAM_FIELD_NUMBER: _ClassVar[int]
    T_MIN_FIELD_NUMBER: _ClassVar[int]
    T_MAX_FIELD_NUMBER: _ClassVar[int]
    FORGOTTEN_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FILES_FIELD_NUMBER: _ClassVar[int]
    OVERVIEWS_RECOMPOSED_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    RECOVERED_FIELD_NUMBER: _ClassVar[int]
    audit_id: str
    stream_id: str
    whole_stream: bool
    t_min: float
    t_max: float
    forgotten: StreamStorage
    snippet_files: int
    overviews_recomposed: int
    at: float
    finished_at: float
    recovered: bool
    def __init__(self, audit_id: _Optional[str] = ..., stream_id: _Optional[str] = ..., whole_stream: _Optional[bool] = ..., t_min: _Optional[float] = ..., t_max: _Optional[float] = ..., forgotten: _Optional[_Union[StreamStorage, _Mapping]] = ..., snippet_files: _Optional[int] = ..., overviews_recomposed: _Optional[int] = ..., at: _Optional[float] = ..., finished_at: _Optional[float] = ..., recovered: _Optional[bool] = ...) -> None: ...

class ArticleRequest(_message.Message):
    __slots__ = ("request", "style", "stream_ids", "t_min", "t_max", "fusion", "max_sub_queries")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    STYLE_FIELD_NUMBER: _ClassVar[int]
    STREAM_IDS_FIELD_NUMBER: _ClassVar[int]
    T_MIN_FIELD_NUMBER: _ClassVar[int]
    T_MAX_FIELD_NUMBER: _ClassVar[int]
    FUSION_FIELD_NUMBER: _ClassVar[int]
    MAX_SUB_QUERIES_FIELD_NUMBER: _ClassVar[int]
    request: str
    style: ArticleStyle
    stream_ids: _containers.RepeatedScalarFieldContainer[str]
    t_min: float
    t_max: float
    fusion: FusionMethod
    max_sub_queries: int
    def __init__(self, request: _Optional[str] = ..., style: _Optional[_Union[ArticleStyle, str]] = ..., stream_ids: _Optional[_Iterable[str]] = ..., t_min: _Optional[float] = ..., t_max: _Optional[float] = ..., fusion: _Optional[_Union[FusionMethod, str]] = ..., max_sub_queries: _Optional[int] = ...) -> None: ...

class ArticleUpdate(_message.Message):
    __slots__ = ("progress", "article")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    ARTICLE_FIELD_NUMBER: _ClassVar[int]
    progress: ArticleProgress
    article: ArticleResult
    def __init__(self, progress: _Optional[_Union[ArticleProgress, _Mapping]] = ..., article: _Optional[_Union[ArticleResult, _Mapping]] = ...) -> None: ...

class ArticleProgress(_message.Message):
    __slots__ = ("stage", "done", "total", "message")
    STAGE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    stage: str
    done: int
    total: int
    message: str
    def __init__(self, stage: _Optional[str] = ..., done: _Optional[int] = ..., total: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class Sentence(_message.Message):
    __slots__ = ("text", "citations")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    text: str
    citations: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, text: _Optional[str] = ..., citations: _Optional[_Iterable[int]] = ...) -> None: ...

class Section(_message.Message):
    __slots__ = ("heading", "sentences")
    HEADING_FIELD_NUMBER: _ClassVar[int]
    SENTENCES_FIELD_NUMBER: _ClassVar[int]
    heading: str
    sentences: _containers.RepeatedCompositeFieldContainer[Sentence]
    def __init__(self, heading: _Optional[str] = ..., sentences: _Optional[_Iterable[_Union[Sentence, _Mapping]]] = ...) -> None: ...

class Citation(_message.Message):
    __slots__ = ("n", "stream_id", "segment_id", "t_start", "t_end", "snippet_uri")
    N_FIELD_NUMBER: _ClassVar[int]
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_URI_FIELD_NUMBER: _ClassVar[int]
    n: int
    stream_id: str
    segment_id: str
    t_start: float
    t_end: float
    snippet_uri: str
    def __init__(self, n: _Optional[int] = ..., stream_id: _Optional[str] = ..., segment_id: _Optional[str] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., snippet_uri: _Optional[str] = ...) -> None: ...

class Claim(_message.Message):
    __slots__ = ("id", "text", "modality", "stream_id", "segment_id", "t_start", "t_end", "kind", "sub_query", "relevance", "support", "snippet_uri")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    MODALITY_FIELD_NUMBER: _ClassVar[int]
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUB_QUERY_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_URI_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    modality: str
    stream_id: str
    segment_id: str
    t_start: float
    t_end: float
    kind: str
    sub_query: str
    relevance: float
    support: float
    snippet_uri: str
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., modality: _Optional[str] = ..., stream_id: _Optional[str] = ..., segment_id: _Optional[str] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., kind: _Optional[str] = ..., sub_query: _Optional[str] = ..., relevance: _Optional[float] = ..., support: _Optional[float] = ..., snippet_uri: _Optional[str] = ...) -> None: ...

class Grounding(_message.Message):
    __slots__ = ("stream_id", "t_start", "t_end")
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    stream_id: str
    t_start: float
    t_end: float
    def __init__(self, stream_id: _Optional[str] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ...) -> None: ...

class Step(_message.Message):
    __slots__ = ("text", "groundings")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    GROUNDINGS_FIELD_NUMBER: _ClassVar[int]
    text: str
    groundings: _containers.RepeatedCompositeFieldContainer[Grounding]
    def __init__(self, text: _Optional[str] = ..., groundings: _Optional[_Iterable[_Union[Grounding, _Mapping]]] = ...) -> None: ...

class ArticleResult(_message.Message):
    __slots__ = ("request", "style", "title", "sections", "citations", "claims", "dropped_claims", "sub_queries", "steps", "thin_evidence", "timings_ms", "markdown")
    class TimingsMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    STYLE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SECTIONS_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    DROPPED_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    SUB_QUERIES_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    THIN_EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_MS_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    request: str
    style: ArticleStyle
    title: str
    sections: _containers.RepeatedCompositeFieldContainer[Section]
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    claims: _containers.RepeatedCompositeFieldContainer[Claim]
    dropped_claims: int
    sub_queries: _containers.RepeatedScalarFieldContainer[str]
    steps: _containers.RepeatedCompositeFieldContainer[Step]
    thin_evidence: bool
    timings_ms: _containers.ScalarMap[str, float]
    markdown: str
    def __init__(self, request: _Optional[str] = ..., style: _Optional[_Union[ArticleStyle, str]] = ..., title: _Optional[str] = ..., sections: _Optional[_Iterable[_Union[Section, _Mapping]]] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., claims: _Optional[_Iterable[_Union[Claim, _Mapping]]] = ..., dropped_claims: _Optional[int] = ..., sub_queries: _Optional[_Iterable[str]] = ..., steps: _Optional[_Iterable[_Union[Step, _Mapping]]] = ..., thin_evidence: _Optional[bool] = ..., timings_ms: _Optional[_Mapping[str, float]] = ..., markdown: _Optional[str] = ...) -> None: ...

class Watch(_message.Message):
    __slots__ = ("id", "query", "kind", "stream_ids", "within_s", "by_time", "then", "period", "cooldown_s", "webhook_url", "key_id", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STREAM_IDS_FIELD_NUMBER: _ClassVar[int]
    WITHIN_S_FIELD_NUMBER: _ClassVar[int]
    BY_TIME_FIELD_NUMBER: _ClassVar[int]
    THEN_FIELD_NUMBER: _ClassVar[int]
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    COOLDOWN_S_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_URL_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    query: str
    kind: str
    stream_ids: _containers.RepeatedScalarFieldContainer[str]
    within_s: float
    by_time: str
    then: str
    period: str
    cooldown_s: float
    webhook_url: str
    key_id: str
    created_at: float
    def __init__(self, id: _Optional[str] = ..., query: _Optional[str] = ..., kind: _Optional[str] = ..., stream_ids: _Optional[_Iterable[str]] = ..., within_s: _Optional[float] = ..., by_time: _Optional[str] = ..., then: _Optional[str] = ..., period: _Optional[str] = ..., cooldown_s: _Optional[float] = ..., webhook_url: _Optional[str] = ..., key_id: _Optional[str] = ..., created_at: _Optional[float] = ...) -> None: ...

class AddWatchRequest(_message.Message):
    __slots__ = ("watch",)
    WATCH_FIELD_NUMBER: _ClassVar[int]
    watch: Watch
    def __init__(self, watch: _Optional[_Union[Watch, _Mapping]] = ...) -> None: ...

class AddWatchResponse(_message.Message):
    __slots__ = ("watch", "webhook_secret")
    WATCH_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_SECRET_FIELD_NUMBER: _ClassVar[int]
    watch: Watch
    webhook_secret: str
    def __init__(self, watch: _Optional[_Union[Watch, _Mapping]] = ..., webhook_secret: _Optional[str] = ...) -> None: ...

class ListWatchesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListWatchesResponse(_message.Message):
    __slots__ = ("watches",)
    WATCHES_FIELD_NUMBER: _ClassVar[int]
    watches: _containers.RepeatedCompositeFieldContainer[Watch]
    def __init__(self, watches: _Optional[_Iterable[_Union[Watch, _Mapping]]] = ...) -> None: ...

class RemoveWatchRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class RemoveWatchResponse(_message.Message):
    __slots__ = ("removed",)
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    removed: bool
    def __init__(self, removed: _Optional[bool] = ...) -> None: ...

class WatchAlertsRequest(_message.Message):
    __slots__ = ("after_seq", "follow", "watch_ids")
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    FOLLOW_FIELD_NUMBER: _ClassVar[int]
    WATCH_IDS_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    follow: bool
    watch_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, after_seq: _Optional[int] = ..., follow: _Optional[bool] = ..., watch_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class Alert(_message.Message):
    __slots__ = ("id", "seq", "watch_id", "kind", "query", "stream_id", "t_start", "t_end", "confidence", "message", "count", "event_ids", "segment_ids", "snippet_uris", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    WATCH_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    STREAM_ID_FIELD_NUMBER: _ClassVar[int]
    T_START_FIELD_NUMBER: _ClassVar[int]
    T_END_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    EVENT_IDS_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_URIS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    seq: int
    watch_id: str
    kind: str
    query: str
    stream_id: str
    t_start: float
    t_end: float
    confidence: float
    message: str
    count: int
    event_ids: _containers.RepeatedScalarFieldContainer[str]
    segment_ids: _containers.RepeatedScalarFieldContainer[str]
    snippet_uris: _containers.RepeatedScalarFieldContainer[str]
    created_at: float
    def __init__(self, id: _Optional[str] = ..., seq: _Optional[int] = ..., watch_id: _Optional[str] = ..., kind: _Optional[str] = ..., query: _Optional[str] = ..., stream_id: _Optional[str] = ..., t_start: _Optional[float] = ..., t_end: _Optional[float] = ..., confidence: _Optional[float] = ..., message: _Optional[str] = ..., count: _Optional[int] = ..., event_ids: _Optional[_Iterable[str]] = ..., segment_ids: _Optional[_Iterable[str]] = ..., snippet_uris: _Optional[_Iterable[str]] = ..., created_at: _Optional[float] = ...) -> None: ...
