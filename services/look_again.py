"""Looking again at the stored video at question time (issue 15): Locate and Ask's inspect pathway.

One **agent per stream** (MAGNET, seed 003): each stream in scope becomes a look-again grid over
its stored snippets, searched by Video-RLM's Master and Workers (:mod:`retrieval.grid_search`)
with the memory's best hits in that stream as the seeds it looks at first (the anchors the
VideoAtlas authors say their navigator lacks). A **meta step** merges the agents' grounded
finds into one ranking and into steps ⟨stream, start, end⟩ in time order, the shape MAGNET's
MTGS/STEM metrics score (:mod:`reasoning.grounding_metrics`).

The eyes are configured by ``looker``: ``offline`` (the embedded default: on-screen text and
colour names, :class:`retrieval.grid_lookers.OfflineLooker`) or ``openai`` (a vision-language
model behind the OpenAI-compatible client, :class:`reasoning.grid_vlm_looker.VLMLooker`).

Streams that cannot be looked at (audio only, snippets gone from disk) are reported in
``not_seen`` instead of failing the whole request; the frame budget is shared by the streams
looked at, and everything stops at the request's deadline.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from episodic.core import validation
from episodic.core.deadline import Deadline
from episodic.core.errors import InputError, MediaError
from episodic.core.interfaces import QueryBackends
from episodic.core.llm import LanguageModel
from episodic.core.query import LocatedMoment, LocateRequest, LocateResult, Moment, Scope
from episodic.reasoning.frame_answer import Frame, FrameAnswer, FrameAnswerer, salient_frames
from episodic.reasoning.grid_vlm_looker import VLMLooker
from episodic.retrieval.frame_selection import uniform_candidates
from episodic.retrieval.grid_lookers import GridLooker, OfflineLooker, found_share
from episodic.retrieval.grid_search import LocateReport, locate
from episodic.retrieval.query_analysis import content_terms
from episodic.retrieval.video_grid import FileFrames, VideoGrid, format_time, stream_frames

log = logging.getLogger(__name__)

SEARCH_HITS = 10  # memory hits asked for to find where to look
THUMB = (16, 9)  # thumbnail size of the salient frame selector's cheap features
MAX_AGENT_STREAMS = 4  # streams looked at per request (the best ones by memory hits)

# the memory's moment search: (query, scope, top_k) -> moments, best first
MomentSearchFn = Callable[[str, Scope, int], list[Moment]]
Progress = Callable[[str, LocateReport], None]


@dataclass
class Inspection:
    """What looking again at the pixels says about a question (Ask's inspect pathway)."""

    answer: str
    confidence: float
    choice_index: int | None
    moments: list[LocatedMoment]  # the frames the answer rests on, best first
    frames_examined: int
    elapsed_s: float
    not_seen: list[str]


@dataclass(frozen=True)
class Step:
    """One grounded step of the meta answer: where in which stream, and what was seen."""

    stream_id: str
    t_start: float
    t_end: float
    confidence: float
    why: str


class LookAgain:
    """Locate (a moment to the second) and inspect (an answer from the pixels) over the memory."""

    def __init__(self, components: QueryBackends, search: MomentSearchFn) -> None:
        self.c = components
        self.settings = components.settings.look
        self.search = search
        self._looker: GridLooker | None = None
        self._vision_model: LanguageModel | None = None
        self._lock = threading.Lock()

    # -- the eyes --------------------------------------------------------------------------
    def looker(self) -> GridLooker:
        with self._lock:
            if self._looker is None:
                self._looker = self._build_looker()
            return self._looker

    def _vlm(self) -> LanguageModel:
        """The vision-language model behind the OpenAI-compatible client (one per service)."""
        if self._vision_model is None:
            from episodic.reasoning.openai_llm import OpenAICompatibleLLM

            self._vision_model = OpenAICompatibleLLM(self.c.settings.models)
        return self._vision_model

    def _build_looker(self) -> GridLooker:
        if self.settings.looker == "openai":
            return VLMLooker(self._vlm())
        describer: Any = self.c.describer
        if not hasattr(describer, "read_text_boxes"):  # a VLM describer at ingest: OCR offline here
            from episodic.memory.vision import OfflineVisualDescriber

            describer = OfflineVisualDescriber(self.c.settings)
        return OfflineLooker.from_describer(describer)

    # -- locate ----------------------------------------------------------------------------
    def locate(self, req: LocateRequest, on_progress: Progress | None = None) -> LocateResult:
        """The moments in scope that show what ``req.query`` describes, best first."""
        req = validation.locate_request(req)
        clock = Deadline(req.deadline_s)
        anchors = self.anchors(req.query, req.scope, window_s=self.settings.inspect_window_s)
        streams = list(req.scope.stream_ids or ())
        for sid in anchors:  # streams the memory points at come first, then the rest named
            if sid not in streams:
                streams.append(sid)
        if not streams:  # nothing named, nothing in memory about it: the newest streams, whole
            known = sorted(self.c.store.list_streams(), key=lambda x: -x.updated_at)
            streams = [x.stream_id for x in known][:MAX_AGENT_STREAMS]
        streams.sort(key=lambda s: -max((m.score for m in anchors.get(s, [])), default=-1.0))
        result = self.look(req.query, streams[:MAX_AGENT_STREAMS], anchors, req.scope, req.max_frames,
                           req.top_k, clock, on_progress)
        result.not_seen += [f"{sid}: not looked at (at most {MAX_AGENT_STREAMS} streams per request; "
                            "name fewer)" for sid in streams[MAX_AGENT_STREAMS:]]
        return result

    def locate_file(
        self, query: str, path: str | Path, *, max_frames: int = 1024, top_k: int = 3,
        deadline_s: float | None = None, on_progress: Progress | None = None,
    ) -> LocateResult:
        """The same search over a recording that was never ingested (no memory to seed it)."""
        query = validation.text(query, "query")
        source = FileFrames(path)
        try:
            report = self._agent(query, source, (), max_frames, top_k, Deadline(deadline_s),
                                 lambda r: on_progress(str(path), r) if on_progress else None)
        finally:
            source.close()
        return meta_result([(str(path), report)], top_k)

    def anchors(self, query: str, scope: Scope, *, window_s: float) -> dict[str, list[Moment]]:
        """The memory's best hits for ``query`` per stream, widened by ``window_s`` each side."""
        out: dict[str, list[Moment]] = {}
        for m in self.search(query, scope, SEARCH_HITS):
            if m.score <= 0:
                continue
            lo, hi = m.t_start - window_s, m.t_end + window_s
            if scope.t_min is not None:
                lo = max(lo, scope.t_min)
            if scope.t_max is not None:
                hi = min(hi, scope.t_max)
            out.setdefault(m.stream_id, []).append(Moment(m.stream_id, lo, hi, m.score, m.why, m.segment_id))
        return out

    def look(
        self,
        query: str,
        streams: Sequence[str],
        anchors: dict[str, list[Moment]],
        scope: Scope,
        max_frames: int,
        top_k: int,
        clock: Deadline,
        on_progress: Progress | None = None,
        whole_streams: bool = True,
    ) -> LocateResult:
        """One agent per stream; the meta step merges what they found.

        ``whole_streams``: a stream is looked at over its whole span in scope, seeds first (a
        locate); False: only around its anchors (the inspect pathway, which must be quick)."""
        done: list[tuple[str, LocateReport]] = []
        not_seen: list[str] = []
        k2 = self.settings.look_grid_k ** 2
        for i, sid in enumerate(streams):
            share = max(k2, (max_frames - sum(r.frames_examined for _, r in done)) // max(1, len(streams) - i))
            seeds = [(m.t_start, m.t_end) for m in anchors.get(sid, [])][: self.settings.inspect_anchors]
            if not whole_streams and not seeds:
                continue
            lo = scope.t_min if whole_streams else min(a for a, _ in seeds)
            hi = scope.t_max if whole_streams else max(b for _, b in seeds)
            left = clock.remaining()
            if left is not None and left <= 0:
                not_seen.append(f"{sid}: not looked at (out of time)")
                continue
            try:
                source = stream_frames(self.c.store, self.c.snippets, sid, lo, hi)
            except (InputError, MediaError) as exc:
                not_seen.append(f"{sid}: {exc}")
                continue
            # each stream left gets a fair share of the time left, as of the frames: the first
            # stream looked at (the best anchor's) must not spend the time of the others
            fair = clock if left is None else Deadline(left / (len(streams) - i))
            try:
                report = self._agent(query, source, seeds, share, top_k, fair,
                                     (lambda r, sid=sid: on_progress(sid, r)) if on_progress else None)
            finally:
                source.close()
            if source.missing:
                not_seen.append(f"{sid}: {len(source.missing)} snippet file(s) missing on disk")
            done.append((sid, report))
        result = meta_result(done, top_k)
        result.not_seen = not_seen
        return result

    # -- inspect ---------------------------------------------------------------------------
    def inspect(
        self,
        question: str,
        options: Sequence[str],
        anchors: Sequence[Moment],
        *,
        asks_time: bool,
        budget_s: float,
        scope: Scope | None = None,
    ) -> Inspection | None:
        """Look around the memory's best hits (``anchors``) for what the question names.

        An open question is answered by where it was seen ("at 5:05 in cam1") when it asks
        for a time, else by what was read there; a multiple-choice question by the one option
        whose words the frames show and no other does. None when nothing relevant was seen."""
        s = self.settings
        scope = scope or Scope()
        by_stream: dict[str, list[Moment]] = {}
        for m in anchors[: s.inspect_anchors]:
            lo, hi = max(0.0, m.t_start - s.inspect_window_s), m.t_end + s.inspect_window_s
            lo = lo if scope.t_min is None else max(lo, scope.t_min)
            hi = hi if scope.t_max is None else min(hi, scope.t_max)
            if hi > lo:
                by_stream.setdefault(m.stream_id, []).append(Moment(m.stream_id, lo, hi, m.score, m.why, m.segment_id))
        if not by_stream:
            return None
        query = " ".join([question, *options])
        clock = Deadline(budget_s)
        found = self.look(query, list(by_stream), by_stream, Scope(), s.inspect_max_frames, 5, clock,
                          whole_streams=False)
        seen = [m for m in found.moments if m.confidence > 0]
        if s.looker == "openai":
            return self._agents_answer(question, options, by_stream, found, clock)
        if not seen:
            return None
        if options:
            choice, share = _option_seen(options, seen)
            if choice is None:
                return None
            best = next(m for m in seen if _shows(options[choice], m.why) == share)
            return Inspection(options[choice], round(0.8 * share, 4), choice, [best, *[m for m in seen if m is not best]],
                              found.frames_examined, found.elapsed_s, found.not_seen)
        best = seen[0]
        if best.confidence < 0.5:
            return None
        where = f"{format_time(best.t)} in {best.stream_id}"
        answer = f"At {where} ({best.why})." if asks_time else f"Seen at {where}: {best.why}."
        return Inspection(answer, round(0.8 * best.confidence, 4), None, seen, found.frames_examined,
                          found.elapsed_s, found.not_seen)

    def _agents_answer(
        self, question: str, options: Sequence[str], by_stream: dict[str, list[Moment]],
        found: LocateResult, clock: Deadline,
    ) -> Inspection | None:
        """MAGNET's grounded answering: per stream, the salient frames of the span around what
        the navigator found (or around the memory's hits) shown to the vision-language model
        at once; the meta step keeps the surest grounded answer."""
        s = self.settings
        answerer = FrameAnswerer(self._vlm())
        answers: list[FrameAnswer] = []
        for sid, hits in by_stream.items():
            if (left := clock.remaining()) is not None and left <= 0:
                break
            finds = [m for m in found.moments if m.stream_id == sid]
            spans = [(m.t_start - s.inspect_window_s / 4, m.t_end + s.inspect_window_s / 4) for m in finds[:1]]
            lo, hi = min(a for a, _ in spans or [(h.t_start, h.t_end) for h in hits]), max(
                b for _, b in spans or [(h.t_start, h.t_end) for h in hits])
            try:
                source = stream_frames(self.c.store, self.c.snippets, sid, max(0.0, lo), hi)
            except (InputError, MediaError):
                continue
            try:
                candidates = [Frame(sid, t, rgb) for t in uniform_candidates(source.t_start, source.t_end, s.sfs_candidates)
                              if (rgb := source.frame_at(t)) is not None]
            finally:
                source.close()
            if not candidates:
                continue
            features = self._features([f.rgb for f in candidates])
            relevance = [max((m.confidence for m in finds if m.t_start - 1.0 <= f.t <= m.t_end + 1.0), default=0.0)
                         for f in candidates]
            chosen = salient_frames(candidates, features, min(s.sfs_frames, len(candidates)),
                                    separation=s.sfs_separation, relevance=relevance)
            got = answerer.answer(question, options, chosen)
            if got is not None:
                answers.append(got)
        if not answers:
            return None
        best = max(answers, key=lambda a: a.confidence)
        t = best.t if best.t is not None else (found.moments[0].t if found.moments else 0.0)
        cited = LocatedMoment(best.stream_id, t, t, t, best.confidence, best.answer)
        return Inspection(best.answer, round(best.confidence, 4), best.choice_index,
                          [cited, *found.moments], found.frames_examined, found.elapsed_s, found.not_seen)

    def _features(self, frames: Sequence[np.ndarray]) -> np.ndarray:
        """Embeddings for the salient frame selector: the joint image space where the embedder
        has one (ImageBind, as MAGNET uses), else small colour thumbnails (16×9, centred and
        normalised), which tell near-duplicate frames from different ones at almost no cost."""
        embed_images = getattr(self.c.embedder, "embed_images", None)
        if callable(embed_images):
            return np.asarray(embed_images(list(frames)), dtype=np.float32)
        thumbs = np.stack([
            np.asarray(Image.fromarray(f).resize(THUMB, Image.Resampling.BILINEAR), dtype=np.float32).ravel()
            for f in frames
        ])
        thumbs -= thumbs.mean(axis=1, keepdims=True)
        return thumbs / np.maximum(np.linalg.norm(thumbs, axis=1, keepdims=True), 1e-6)

    def _agent(
        self, query: str, source: Any, seeds: Sequence[tuple[float, float]], max_frames: int, top_k: int,
        clock: Deadline, on_progress: Callable[[LocateReport], None] | None,
    ) -> LocateReport:
        s = self.settings
        grid = VideoGrid(source, k=s.look_grid_k, min_cell_s=s.look_min_cell_s)
        return locate(query, grid, self.looker(), max_frames=max_frames, deadline=clock, top_k=top_k,
                      on_progress=on_progress, seeds=seeds, workers=s.look_workers,
                      virtual_loss=s.look_virtual_loss, brief_shots=s.look_brief_shots)


def meta_result(done: Sequence[tuple[str, LocateReport]], top_k: int) -> LocateResult:
    """The meta step's ranking: every agent's moments, best first, ties to the deeper look."""
    moments = [
        LocatedMoment(sid, m.t, m.t_start, m.t_end, m.confidence, m.why, m.depth)
        for sid, r in done for m in r.moments
    ]
    moments.sort(key=lambda m: (-m.confidence, -m.depth, m.stream_id, m.t))
    stops = [r.stopped for _, r in done]
    stopped = "found" if "found" in stops else (stops[0] if len(set(stops)) == 1 else ", ".join(sorted(set(stops))))
    return LocateResult(
        moments=moments[: max(1, top_k)],
        frames_examined=sum(r.frames_examined for _, r in done),
        depth=max((r.depth for _, r in done), default=0),
        elapsed_s=round(sum(r.elapsed_s for _, r in done), 3),
        stopped=stopped if done else "no lead",
        streams_looked=[sid for sid, _ in done],
    )


def _shows(option: str, seen: str) -> float:
    """Share of the option's content words that the looker reported seeing."""
    return found_share(set(content_terms(option)), seen)


def _option_seen(options: Sequence[str], seen: Sequence[LocatedMoment]) -> tuple[int | None, float]:
    """The one option the frames show best (at least half its words, and more than any other)."""
    shares = [max((_shows(o, m.why) for m in seen), default=0.0) for o in options]
    best = max(range(len(options)), key=lambda i: shares[i])
    others = [x for i, x in enumerate(shares) if i != best]
    if shares[best] < 0.5 or (others and max(others) >= shares[best]):
        return None, 0.0
    return best, shares[best]


def grounded_steps(moments: Sequence[LocatedMoment], min_confidence: float = 0.5, gap_s: float = 1.0) -> list[Step]:
    """The meta step's answer as steps ⟨stream, start, end⟩: finds at least ``min_confidence``
    sure, overlapping or nearly touching ones of a stream merged, in stream and time order."""
    by_stream: dict[str, list[LocatedMoment]] = {}
    for m in moments:
        if m.confidence >= min_confidence:
            by_stream.setdefault(m.stream_id, []).append(m)
    steps: list[Step] = []
    for sid in sorted(by_stream, key=lambda s: min(m.t_start for m in by_stream[s])):
        for m in sorted(by_stream[sid], key=lambda m: m.t_start):
            last = steps[-1] if steps and steps[-1].stream_id == sid else None
            if last is not None and m.t_start <= last.t_end + gap_s:
                steps[-1] = Step(sid, last.t_start, max(last.t_end, m.t_end), max(last.confidence, m.confidence),
                                 last.why if last.confidence >= m.confidence else m.why)
            else:
                steps.append(Step(sid, m.t_start, m.t_end, m.confidence, m.why))
    return steps
