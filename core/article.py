"""Records of multi-video article synthesis (MARQUIS): what a request carries in, the
evidence it gathers, and the cited article it returns.

They mirror the gRPC messages of the ``Article`` RPC (proto/episodic/v1/episodic.proto)
field for field, so ``episodic article --json``, the in-process API and the server speak the
same shape. Times are stream seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from episodic.core.query import Modality, Scope


class ArticleStyle(str, Enum):
    """How the article is written from the calibrated claims (MARQUIS §5)."""

    BULLET = "bullet"  # the claims themselves as a cited list
    CAG = "cag"  # one synthesis pass over all claims
    GINGER = "ginger"  # cluster by facet → rank clusters → summarise the top ones → fluency


class Fusion(str, Enum):
    """How the per-sub-query ranked lists are fused (MARQUIS §3, eqs. 1–5)."""

    RRF = "rrf"
    WEIGHTED_RRF = "wrrf"
    MAX = "max"
    MEAN = "mean"
    SUM = "sum"


@dataclass(frozen=True)
class ArticleRequest:
    request: str  # what the user wants a report about
    style: ArticleStyle = ArticleStyle.GINGER
    scope: Scope = Scope()
    fusion: Fusion | None = None  # None: the configured article_fusion (rrf)
    max_sub_queries: int | None = None  # None: the configured article_max_sub_queries
    deadline_s: float | None = None  # seconds from now; None = no deadline


@dataclass
class Citation:
    """A moment an article sentence rests on; ``n`` is the inline marker ``[n]``."""

    n: int
    stream_id: str
    segment_id: str  # the ShortTermMemory id: always a stored segment
    t_start: float
    t_end: float
    snippet_uri: str = ""


@dataclass
class Claim:
    """One atomic piece of evidence, extracted from one segment.

    ``kind`` is "note" (query-agnostic: an observation of the segment, MARQUIS §4.1),
    "claim" (query-conditioned: a note that answers a sub-query, §4.2) or "qa" (the note an
    Ask answer rests on, for a question made from a sub-query, §4.3; ``sub_query`` is then
    the sub-query the question was asked for). ``support`` is the
    calibrated probability that the segment supports the text (§4.4); ``relevance`` how well
    it answers the request (fused over sub-queries).
    """

    id: str
    text: str
    modality: Modality
    stream_id: str
    segment_id: str
    t_start: float
    t_end: float
    kind: str = "claim"
    sub_query: str = ""  # the sub-query it answers best
    relevance: float = 0.0
    support: float = 0.0
    snippet_uri: str = ""


@dataclass
class Sentence:
    """One sentence of the article and the citations (their ``n``) it rests on."""

    text: str
    citations: list[int] = field(default_factory=list)


@dataclass
class Section:
    heading: str  # "" for an article without sections
    sentences: list[Sentence] = field(default_factory=list)


@dataclass
class Grounding:
    """⟨stream, start, end⟩: where a step of a grounded answer can be checked."""

    stream_id: str
    t_start: float
    t_end: float


@dataclass
class Step:
    """One step of a grounded multi-step answer (the AVHaystacks answer form)."""

    text: str
    groundings: list[Grounding] = field(default_factory=list)


@dataclass
class Article:
    request: str
    style: ArticleStyle
    title: str
    sections: list[Section] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)  # the calibrated claims it was written from
    dropped_claims: int = 0  # claims calibration removed (support under the threshold)
    sub_queries: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    thin_evidence: bool = False  # the memory held too little: the article says so
    timings_ms: dict[str, float] = field(default_factory=dict)

    def markdown(self) -> str:
        """The article as Markdown with inline ``[n]`` citations and a list of sources."""
        lines = [f"# {self.title}", ""]
        for sec in self.sections:
            if sec.heading:
                lines += [f"## {sec.heading}", ""]
            if self.style is ArticleStyle.BULLET:
                lines += [f"- {cited(s.text, s.citations)}" for s in sec.sentences]
            else:
                lines.append(" ".join(cited(s.text, s.citations) for s in sec.sentences))
            lines.append("")
        if self.citations:
            lines += ["## Sources", ""]
            for c in self.citations:
                where = f"{c.stream_id}, {c.t_start:.1f}–{c.t_end:.1f} s (segment {c.segment_id})"
                lines.append(f"- [{c.n}] {where}")
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"


def cited(text: str, ns: list[int]) -> str:
    """``text`` with its markers before the closing punctuation: "It was red [1][3]."."""
    if not ns:
        return text
    marks = "".join(f"[{n}]" for n in ns)
    body = text.rstrip()
    end = ""
    while body and body[-1] in ".!?":
        body, end = body[:-1], body[-1] + end
    return f"{body} {marks}{end}"


@dataclass
class ArticleProgress:
    """A progress update of the streamed Article call: ``stage`` and how far it is."""

    stage: str  # "decompose" | "retrieve" | "rerank" | "extract" | "calibrate" | "qa" | "write"
    done: int
    total: int
    message: str = ""
