"""Evidence extraction (MARQUIS §4.1–4.2): retrieved segments → atomic, located claims.

**Notes** (query-agnostic) are the observations a segment holds, one atomic piece each: every
transcript sentence (speech), each distinct on-screen text (ocr), each key-frame description
(visual) and the segment's one-sentence ThetaEvent summary (summary), with the stream and the
[t_start, t_end] they cover. They are taken from the stored record, not re-generated: what a
note says is what was transcribed, read or described, so it cannot drift from its source.

**Claims** (query-conditioned) are the notes that answer the request: each note is scored
against every sub-query, relevance = (0.55·cos + 0.45·lex) × modality weight, where cos is
the embedding cosine, lex the share of the sub-query's content words *in the note itself*
(not in its surroundings, as moment search counts them: a note is a claim for what it says,
not for the stream it is in), and the weight trusts what was said or written (1.0) over a
small model's summary (0.85) and over a key-frame description from ImageNet labels (0.5).
A sub-query word that names the note's stream counts as found ("what happened in the
kitchen" is answered by everything on the kitchen stream).
A note's relevance is its best over the sub-queries, ``sub_query`` the one that gave it.
Notes that bear on no sub-query, or score under ``article_claim_min_score``, are not claims.
A key-frame description loses its ``on-screen text: "…"`` part, which is a note of its own;
a summary is dropped where the segment's speech or on-screen text already gave a claim.

Repeats are merged: the same text in the same stream within ``association_window_s`` (a
caption on screen across a cut) is one claim, cited once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from episodic.config import Settings
from episodic.core.article import Claim
from episodic.core.query import Scope
from episodic.retrieval.detailed import (
    MemoryReader,
    TextScorer,
    Unit,
    relevant,
    stream_terms,
    units_of,
)
from episodic.retrieval.query_analysis import QueryAnalysis, overlap

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")
SOURCE_MODALITIES = ("speech", "ocr", "visual")  # what calibration checks claims against
MODALITY_WEIGHT = {"speech": 1.0, "ocr": 1.0, "summary": 0.85, "visual": 0.5}
W_COS, W_LEX = 0.55, 0.45
# the on-screen text part of a key-frame description: leading (offline describer) or trailing
_OCR_SUFFIX = re.compile(r'^\s*on-screen text:\s*".*?";\s*|;?\s*on-screen text:.*$', re.I)


def split_sentences(unit: Unit, boundary: re.Pattern[str] = _SENTENCE_END) -> list[Unit]:
    """A transcript piece with several sentences → one unit per sentence, times shared out
    in proportion to their length (Whisper pieces often hold two sentences). ``boundary``
    says where a sentence ends (by default only before a capital or a digit)."""
    if unit.modality != "speech":
        return [unit]
    parts = [p.strip() for p in boundary.split(unit.text) if p.strip()]
    if len(parts) <= 1:
        return [unit]
    total = sum(len(p) for p in parts)
    span = max(unit.t_end - unit.t_start, 0.0)
    out: list[Unit] = []
    t = unit.t_start
    for p in parts:
        dt = span * len(p) / total
        out.append(
            Unit(
                stream_id=unit.stream_id,
                memory_id=unit.memory_id,
                t_start=t,
                t_end=t + dt,
                modality=unit.modality,
                text=p,
                snippet_uri=unit.snippet_uri,
                context_terms=unit.context_terms,
            )
        )
        t += dt
    return out


def notes_of(segment_ids: Sequence[str], reader: MemoryReader, scope: Scope) -> list[Unit]:
    """Every note of the given segments (in order), inside the scope's time range."""
    reader.prefetch(segment_ids)
    out: list[Unit] = []
    for mid in dict.fromkeys(segment_ids):
        memory = reader.memory(mid)
        if memory is None:
            continue
        for u in units_of(memory, reader.event_of(memory), reuse_visual_vectors=False):
            if u.modality == "visual":
                u.text = _OCR_SUFFIX.sub("", u.text).strip(" ;")
            if u.text and u.overlaps(scope.t_min, scope.t_max):
                out.extend(split_sentences(u))
    return out


def source_texts(segment_id: str, reader: MemoryReader) -> list[str]:
    """What a segment really holds (no summary: a summary is itself a claim to check)."""
    memory = reader.memory(segment_id)
    if memory is None:
        return []
    return [u.text for u in units_of(memory, None, reuse_visual_vectors=False) if u.modality in SOURCE_MODALITIES]


class EvidenceExtractor:
    def __init__(self, scorer: TextScorer, settings: Settings) -> None:
        self.scorer = scorer
        self.settings = settings

    def relevance(
        self,
        notes: list[Unit],
        sub_queries: Sequence[tuple[str, QueryAnalysis, np.ndarray]],
        min_score: float = 0.0,
        stream_words: bool = True,
    ) -> dict[int, tuple[float, str]]:
        """Note index → (its best relevance, the sub-query that gave it), for the notes that
        bear on some sub-query with at least ``min_score``. QA answers are scored here too,
        so that their claims rank among the others on the same scale; ``stream_words=False``
        leaves the stream's name out of the words found (an answer to a question asked of
        one stream proves nothing by naming it)."""
        s = self.settings
        best: dict[int, tuple[float, str]] = {}
        index = {id(u): i for i, u in enumerate(notes)}
        for text, analysis, vec in sub_queries:
            for u in self.scorer.rank(analysis, vec, list(notes)):
                found = u.terms | stream_terms(u.stream_id) if stream_words else u.terms
                lex = overlap(analysis.terms, found) if analysis.terms else 0.0
                score = (W_COS * max(u.cos, 0.0) + W_LEX * lex) * MODALITY_WEIGHT.get(u.modality, 0.6)
                if not relevant(u, s.retrieval, analysis) or score < min_score:
                    continue
                i = index[id(u)]
                if score > best.get(i, (-1.0, ""))[0]:
                    best[i] = (score, text)
        return best

    def claims(
        self,
        notes: list[Unit],
        sub_queries: Sequence[tuple[str, QueryAnalysis, np.ndarray]],
    ) -> list[Claim]:
        """The notes that answer some sub-query, as claims, most relevant first."""
        if not notes or not sub_queries:
            return []
        s = self.settings
        best = self.relevance(notes, sub_queries, s.article_claim_min_score)
        claims: list[Claim] = []
        for i, (score, sub_query) in best.items():
            u = notes[i]
            claims.append(
                Claim(
                    id=f"{u.memory_id}#{u.modality}@{u.t_start:.2f}",
                    text=u.text,
                    modality=u.modality,
                    stream_id=u.stream_id,
                    segment_id=u.memory_id,
                    t_start=round(u.t_start, 3),
                    t_end=round(u.t_end, 3),
                    kind="claim",
                    sub_query=sub_query,
                    relevance=round(float(score), 4),
                    snippet_uri=u.snippet_uri,
                )
            )
        claims = drop_covered_summaries(claims)
        claims = merge_repeats(claims, s.association_window_s)
        claims.sort(key=lambda c: (-c.relevance, c.stream_id, c.t_start))
        return claims


def drop_covered_summaries(claims: list[Claim]) -> list[Claim]:
    """A segment's summary is a claim only where nothing it rests on is: once what was said
    or written there is a claim, the summary (a small model's paraphrase of it, often with a
    key-frame label mixed in) adds no fact and risks a wrong one."""
    direct = {c.segment_id for c in claims if c.modality in ("speech", "ocr")}
    return [c for c in claims if c.modality != "summary" or c.segment_id not in direct]


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def merge_repeats(claims: list[Claim], gap_s: float) -> list[Claim]:
    """One claim per text per stream stretch. A repeat in the same segment extends the first
    (a caption on consecutive key frames); a repeat in a later segment within ``gap_s`` (the
    same caption across a cut) is dropped, so a citation never reaches outside its segment."""
    out: list[Claim] = []
    last: dict[tuple[str, str, str], Claim] = {}
    for c in sorted(claims, key=lambda c: (c.stream_id, c.t_start)):
        key = (c.stream_id, c.modality, _norm(c.text))
        prev = last.get(key)
        if prev is not None and c.t_start <= prev.t_end + gap_s:
            prev.relevance = max(prev.relevance, c.relevance)
            if c.segment_id == prev.segment_id:
                prev.t_end = max(prev.t_end, c.t_end)
            continue
        last[key] = c
        out.append(c)
    return out
