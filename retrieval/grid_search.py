"""Finding a moment by looking: Video-RLM's Master and Workers over the look-again grid (seed 002).

The **Master** keeps the global view: it looks at the root grid (or, when the memory already
points somewhere, at the windows around those anchors first), keeps a frontier of leads (cells
a looker found relevant, with their grid still to look at), hands the best lead to a free
worker, and stops when the evidence is sufficient (a cell of the deepest layer as relevant as
the question allows, and no open lead that could beat it), when the frame budget or the
deadline is spent, or when nothing is left to explore.

**Workers** explore the leads they are handed, in parallel threads: depth-first to localise one
detail (follow the best child down to the first sub-second layer, handing its siblings back as
leads) or breadth-first to gather evidence spread over time (every relevant child goes back to
the frontier). While a worker explores a lead, the other leads of the same grid count
``virtual_loss`` less, so free workers spread over other regions instead of piling onto one.

What they learn goes on a shared **scratchpad**: notes (the frame's time, its cell's span,
what was seen, how relevant, at what depth, by which worker) and **dead zones** (spans whose
grid showed nothing relevant: never looked at again, and masked from the frontier). Two
anchors of one layer close together (at most ``INTERPOLATE_CELLS`` cells apart) make the gap
between them a lead of its own (temporal interpolation: an event seen at 100 s and at 130 s is
likely on screen in between).

Budgets: frames per call (``max_frames``, all workers together), per worker (an equal share,
at least ``MIN_WORKER_GRIDS`` grids), grids per depth (``DEPTH_GRIDS``), and the deadline.
When the leads of the root are spent without a sufficient find (or the root showed none), the
Master looks at the same span again with the grid shifted by ½, ¼, ¾, ⅛ … of a cell, each look
halving the largest gap between frames seen, until the budget is spent; a moment not seen is
said not to be found, never guessed.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from episodic.core.deadline import Deadline
from episodic.retrieval.grid_lookers import CellLook, GridLooker
from episodic.retrieval.video_changes import brief_shots_of
from episodic.retrieval.video_grid import GridView, VideoGrid

DEFAULT_MAX_FRAMES = 1024
ACCEPT = 0.99  # a deepest-layer cell this relevant (× what the question allows) is sufficient
PARTIAL = 0.5  # a find this relevant (× the same) limits the looks between the root's frames …
PARTIAL_SHIFTS = 3  # … to this many (½, ¼ and ¾ of a cell)
DEPTH_GRIDS = 16  # grids looked at per depth below the root, per call
MIN_WORKER_GRIDS = 3  # a worker's frame budget allows at least this many grids
INTERPOLATE_CELLS = 3  # two anchors of a layer at most this many cells apart: look in between
INTERPOLATED_SHARE = 0.5  # a gap lead's priority, as a share of its weaker anchor's relevance
# what a grid look is expected to take before one has been timed: decoding a grid's frames and
# reading them took 1-4 s here; with 0 the first look always started, and an Ask's look with
# 0.4 s left took 2.2 s
FIRST_LOOK_S = 1.0
CHANGE_SCAN_S = 2.0  # reading where the picture changed (packet sizes) takes at most this …
CHANGE_SCAN_SHARE = 0.2  # … or this share of the time left before the deadline

Strategy = Literal["dfs", "bfs"]
# "every time", "how many times", "all the …": evidence spread over time is gathered breadth-first
_SPREAD = re.compile(r"\b(how (many|often)|every (time|moment)|each time|all (the )?(times|moments)|"
                     r"whenever|times? (was|were|did))\b", re.I)


def strategy_for(question: str) -> Strategy:
    """Depth-first to localise one detail; breadth-first when the question asks for all of them."""
    return "bfs" if _SPREAD.search(question) else "dfs"


@dataclass(frozen=True)
class Located:
    t: float  # the frame that showed it
    t_start: float
    t_end: float
    confidence: float
    why: str
    depth: int


@dataclass(frozen=True)
class Note:
    """One entry of the scratchpad: what a worker saw in one cell."""

    t: float
    t_start: float
    t_end: float
    relevance: float
    seen: str
    depth: int
    worker: int  # 0 = the Master


@dataclass
class Scratchpad:
    notes: list[Note] = field(default_factory=list)
    dead: list[tuple[float, float]] = field(default_factory=list)  # explored, nothing relevant

    def is_dead(self, t_start: float, t_end: float) -> bool:
        """Whether [t_start, t_end] lies inside a span already explored without a find."""
        return any(a - 1e-6 <= t_start and t_end <= b + 1e-6 for a, b in self.dead)

    def to_dict(self) -> dict[str, object]:
        return {
            "notes": [{"t": round(n.t, 3), "t_start": round(n.t_start, 3), "t_end": round(n.t_end, 3),
                       "relevance": n.relevance, "seen": n.seen, "depth": n.depth, "worker": n.worker}
                      for n in self.notes],
            "dead_zones": [[round(a, 3), round(b, 3)] for a, b in self.dead],
        }


@dataclass
class LocateReport:
    moments: list[Located] = field(default_factory=list)  # best first
    frames_examined: int = 0
    depth: int = 0  # the deepest layer looked at
    grids_looked: int = 0
    elapsed_s: float = 0.0
    stopped: str = ""  # found | exhausted | budget | deadline | no lead
    cache_hit_rate: float = 0.0
    workers: int = 1
    strategy: str = "dfs"
    scratchpad: Scratchpad = field(default_factory=Scratchpad)

    def to_dict(self, notes: bool = False) -> dict[str, object]:
        doc: dict[str, object] = {
            "moments": [
                {"t": round(m.t, 3), "t_start": round(m.t_start, 3), "t_end": round(m.t_end, 3),
                 "confidence": round(m.confidence, 4), "why": m.why, "depth": m.depth}
                for m in self.moments
            ],
            "frames_examined": self.frames_examined,
            "depth": self.depth,
            "grids_looked": self.grids_looked,
            "elapsed_s": round(self.elapsed_s, 3),
            "stopped": self.stopped,
            "cache_hit_rate": round(self.cache_hit_rate, 4),
            "workers": self.workers,
            "strategy": self.strategy,
        }
        if notes:
            doc["scratchpad"] = self.scratchpad.to_dict()
        return doc


@dataclass
class Lead:
    """A grid still to look at: a relevant cell's child grid, or the gap between two anchors."""

    relevance: float
    order: int
    view: GridView  # the grid to look at
    parent: CellLook | None  # the cell it expands (kept as the answer when its grid shows nothing)
    parent_depth: int
    siblings: tuple[float, float]  # the span of the grid the lead was found in (virtual loss)


class Master:
    def __init__(
        self,
        question: str,
        grid: VideoGrid,
        looker: GridLooker,
        *,
        max_frames: int,
        deadline: Deadline | None,
        workers: int,
        virtual_loss: float,
        strategy: Strategy,
        on_progress: Callable[[LocateReport], None] | None,
    ) -> None:
        self.question, self.grid, self.looker = question, grid, looker
        self.max_frames, self.deadline = max_frames, deadline
        self.workers, self.virtual_loss, self.strategy = max(1, workers), virtual_loss, strategy
        self.on_progress = on_progress
        self.report = LocateReport(workers=self.workers, strategy=strategy)
        self.found: dict[tuple[float, float], Located] = {}
        self.frontier: list[Lead] = []
        self.in_flight: list[Lead] = []
        self.ceiling = 1.0  # the most any cell can score for this question (a colour alone: 0.8)
        self.per_depth: dict[int, int] = {}
        self.gaps: set[tuple[float, float]] = set()
        self.order = 0
        self.had_lead = False
        k2 = grid.k * grid.k
        self.worker_frames = max(MIN_WORKER_GRIDS * k2, max_frames // self.workers)
        self.spent = [0] * (self.workers + 1)  # frames decoded for each worker's looks (0 = Master)
        self.look_s = FIRST_LOOK_S  # how long a grid look takes here (running mean after the first)
        self.looked = False
        self.cond = threading.Condition()

    # -- looking ----------------------------------------------------------------------------
    def look(self, view: GridView, worker: int) -> list[CellLook]:
        """Look at one grid; record what it shows; the relevant cells, best first. A lead's
        grid that shows nothing becomes a dead zone (the Master's own overview looks, at the
        root, shifted or at seeds, only sample a span and never rule it out)."""
        before, started = self.grid.frames_decoded, time.perf_counter()
        seen = self.looker.look(self.question, self.grid, view)
        end = float(self.grid.source.t_end)
        relevant = sorted((c for c in seen.looks if c.relevance > 0 and c.t < end), key=lambda c: -c.relevance)
        with self.cond:
            took = time.perf_counter() - started
            self.look_s = 0.5 * (self.look_s + took) if self.looked else took
            self.looked = True
            self.ceiling = seen.ceiling
            self.spent[worker] += max(0, self.grid.frames_decoded - before)
            r = self.report
            r.grids_looked += 1
            r.depth = max(r.depth, view.depth)
            self.had_lead = self.had_lead or bool(relevant)
            r.frames_examined = self.grid.frames_decoded
            for c in relevant:
                r.scratchpad.notes.append(Note(c.t, c.t_start, c.t_end, c.relevance, c.seen, view.depth, worker))
            if not relevant and worker:
                r.scratchpad.dead.append((view.t_start, view.t_end))
            if not self.grid.can_expand(view):
                for c in relevant:
                    self._keep(c, view.depth)
            self._interpolate(view, relevant)
            self.cond.notify_all()
        if self.on_progress is not None:
            self.on_progress(self.report)
        return relevant

    def push(self, view: GridView, cells: Sequence[CellLook]) -> None:
        """The cells of ``view`` worth a closer look become leads (those that can be expanded)."""
        if not self.grid.can_expand(view):
            return
        with self.cond:
            for c in cells:
                child = self.grid.expand(view, c.label)
                if self.report.scratchpad.is_dead(child.t_start, child.t_end):
                    continue
                self.order += 1
                self.frontier.append(Lead(c.relevance, self.order, child, c, view.depth,
                                           (view.t_start, view.t_end)))
            self.cond.notify_all()

    def _interpolate(self, view: GridView, relevant: list[CellLook]) -> None:
        """Between two anchors of this grid that are close but not touching, look closer (not
        in a grid of chosen moments, whose neighbouring cells are not neighbours in time)."""
        if view.spans or not self.grid.can_expand(view):
            return
        anchors = sorted(relevant, key=lambda c: c.t_start)
        for a, b in zip(anchors, anchors[1:], strict=False):
            gap = (a.t_end, b.t_start)
            cells_apart = (gap[1] - gap[0]) / view.cell_s if view.cell_s > 0 else 0
            if not 0.5 <= cells_apart <= INTERPOLATE_CELLS or gap in self.gaps:
                continue
            self.gaps.add(gap)
            self.order += 1
            self.frontier.append(Lead(INTERPOLATED_SHARE * min(a.relevance, b.relevance), self.order,
                                       GridView(gap[0], gap[1], view.k, view.depth + 1, view.path),
                                       None, view.depth, (view.t_start, view.t_end)))

    def _keep(self, cell: CellLook, depth: int) -> None:
        key = (round(cell.t_start, 3), round(cell.t_end, 3))
        if key not in self.found or self.found[key].confidence < cell.relevance:
            self.found[key] = Located(cell.t, cell.t_start, cell.t_end, cell.relevance, cell.seen, depth)

    # -- the Master's bookkeeping -------------------------------------------------------------
    def out_of_budget(self, worker: int = 0) -> str:
        k2 = self.grid.k * self.grid.k
        if self.grid.frames_decoded + k2 > self.max_frames:
            return "budget"
        if worker and self.spent[worker] + k2 > self.worker_frames:
            return "worker budget"
        # a look not started is better than one that ends past the deadline: stop when the
        # time left is less than a look takes here (the inspect pathway overran its 6 s by
        # one to four seconds, two workers' last looks of 0.5–2 s each)
        if self.deadline is not None and (left := self.deadline.remaining()) is not None and left <= self.look_s:
            return "deadline"
        return ""

    def _priority(self, lead: Lead) -> float:
        busy = sum(1 for x in self.in_flight if x.siblings == lead.siblings)
        return lead.relevance - self.virtual_loss * busy

    def _sufficient(self) -> bool:
        best = max(self.found.values(), key=lambda m: m.confidence, default=None)
        if best is None or best.confidence < ACCEPT * self.ceiling:
            return False
        open_best = max((x.relevance for x in self.frontier + self.in_flight), default=0.0)
        return open_best <= best.confidence

    def claim(self, worker: int) -> Lead | None:
        """The best open lead for ``worker`` (None when the search is over for it)."""
        with self.cond:
            while True:
                if self.report.stopped:
                    return None
                if self._sufficient():
                    self._stop("found")
                    return None
                self.frontier = [x for x in self.frontier if not self.report.scratchpad.is_dead(x.view.t_start, x.view.t_end)]
                if self.frontier:
                    stop = self.out_of_budget(worker)
                    if stop == "worker budget":
                        return None  # this worker is done; others may go on
                    if stop:
                        self._stop(stop)
                        return None
                    lead = max(self.frontier, key=lambda x: (self._priority(x), -x.order))
                    if self.per_depth.get(lead.view.depth, 0) >= DEPTH_GRIDS:
                        self.frontier.remove(lead)  # this layer's budget is spent: keep it as a find
                        if lead.parent is not None:
                            self._keep(lead.parent, lead.parent_depth)
                        continue
                    self.frontier.remove(lead)
                    self.in_flight.append(lead)
                    self.per_depth[lead.view.depth] = self.per_depth.get(lead.view.depth, 0) + 1
                    return lead
                if not self.in_flight:
                    return None  # nothing open and nobody exploring: exhausted
                self.cond.wait(timeout=0.5)

    def release(self, lead: Lead) -> None:
        with self.cond:
            if lead in self.in_flight:
                self.in_flight.remove(lead)
            self.cond.notify_all()

    def _stop(self, why: str) -> None:
        with self.cond:  # re-entrant: callers may hold it already
            if not self.report.stopped:
                self.report.stopped = why
            self.cond.notify_all()

    # -- a worker ----------------------------------------------------------------------------
    def work(self, worker: int) -> None:
        while (lead := self.claim(worker)) is not None:
            try:
                self.explore(lead, worker)
            finally:
                self.release(lead)

    def explore(self, lead: Lead, worker: int) -> None:
        """Depth-first: follow the best child down, handing the others back. Breadth-first:
        hand every relevant child back to the Master."""
        view, parent, parent_depth = lead.view, lead.parent, lead.parent_depth
        while True:
            relevant = self.look(view, worker)
            if not relevant:
                if parent is not None:  # nothing there but the parent's one frame: keep the parent
                    with self.cond:
                        self._keep(parent, parent_depth)
                return
            if not self.grid.can_expand(view):
                return
            if self.strategy == "bfs":
                self.push(view, relevant)
                return
            self.push(view, relevant[1:])
            stop = self.out_of_budget(worker)
            with self.cond:
                if self.report.stopped or stop:
                    self._keep(relevant[0], view.depth)  # the lead not followed still says where
                    return
                self.per_depth[view.depth + 1] = self.per_depth.get(view.depth + 1, 0) + 1
            parent, parent_depth = relevant[0], view.depth
            view = self.grid.expand(view, parent.label)

    # -- the whole search ------------------------------------------------------------------------
    def _follow(self) -> None:
        """The workers explore the frontier until it is spent or the search stops."""
        if self.workers == 1:
            self.work(1)
            return
        with ThreadPoolExecutor(self.workers, thread_name_prefix="look-worker") as pool:
            for f in [pool.submit(self.work, i + 1) for i in range(self.workers)]:
                f.result()

    def run(
        self,
        seeds: Sequence[tuple[float, float]],
        moments: Callable[[], Sequence[tuple[float, float]]] = lambda: (),
    ) -> LocateReport:
        """Overviews in turn (the seeds, one look at the chosen ``moments``, the root, then the
        root shifted between its frames), each followed by the workers until its leads are
        spent; the next overview only while nothing sufficient was found and the budget allows.
        ``moments`` is asked for only when the seeds were not enough (reading them costs time)."""
        root = self.grid.root()
        overviews: list[GridView | None] = [
            GridView(a, b, self.grid.k, _depth_of(self.grid, b - a)) for a, b in _clip_seeds(seeds, self.grid)]
        overviews.append(None)  # the grid of moments, made when it is reached
        overviews.append(root)
        first_shift = len(overviews)
        overviews += [GridView(root.t_start + root.cell_s * x, root.t_end + root.cell_s * x, root.k, 0)
                      for x in shifts(self.max_frames // (root.k * root.k))]
        for i, view in enumerate(overviews):
            with self.cond:
                if not self.report.stopped and self._sufficient():
                    self._stop("found")
                if self.report.stopped:
                    break
                best = max((m.confidence for m in self.found.values()), default=0.0)
                if i >= first_shift + PARTIAL_SHIFTS and best >= PARTIAL * self.ceiling:
                    break  # a find, not a sure one: a few looks between the frames, not the whole budget
            if (stop := self.out_of_budget()):
                self._stop(stop)
                break
            if view is None:
                inside = _clip_moments(moments(), self.grid)
                if not inside:
                    continue
                view = GridView.of_moments(inside, self.grid.k)
            self.push(view, self.look(view, 0))
            self._follow()
        with self.cond:
            r = self.report
            if not self.found and not self.had_lead and r.stopped in ("", "budget"):
                r.stopped = "no lead"  # nothing any look showed bore on the question
            elif not r.stopped:
                r.stopped = "found" if self.found else "exhausted"
            for lead in self.frontier:  # leads not followed still say where to look
                if lead.parent is not None:
                    self._keep(lead.parent, lead.parent_depth)
            r.frames_examined = self.grid.frames_decoded
            r.cache_hit_rate = self.grid.cache_hit_rate
        return r


def locate(
    question: str,
    grid: VideoGrid,
    looker: GridLooker,
    *,
    max_frames: int = DEFAULT_MAX_FRAMES,
    deadline: Deadline | None = None,
    top_k: int = 3,
    on_progress: Callable[[LocateReport], None] | None = None,
    seeds: Sequence[tuple[float, float]] = (),
    workers: int = 1,
    virtual_loss: float = 0.25,
    strategy: Strategy | None = None,
    brief_shots: int = 0,
) -> LocateReport:
    """The moments of ``grid``'s source that show what ``question`` asks about, best first.

    ``seeds`` are spans to look at first (the memory's best hits); then one look at up to
    ``brief_shots`` (at most K×K) of the source's brief shots, read from its compressed video
    (``video_changes``; a source with no files to read has none); ``workers`` explore leads
    in parallel; ``strategy`` is chosen from the question when not given."""
    started = time.perf_counter()
    master = Master(question, grid, looker, max_frames=max_frames, deadline=deadline, workers=workers,
                     virtual_loss=virtual_loss, strategy=strategy or strategy_for(question),
                     on_progress=on_progress)
    report = master.run(seeds, lambda: brief_shot_spans(grid, brief_shots, max_frames, deadline))
    if report.stopped == "no lead" and master.found:
        report.stopped = "found"
    report.moments = sorted(_merged(master.found.values()), key=lambda m: (-m.confidence, -m.depth, m.t))[: max(1, top_k)]
    report.scratchpad.notes.sort(key=lambda n: (n.t, n.depth))
    report.elapsed_s = time.perf_counter() - started
    return report


def brief_shot_spans(grid: VideoGrid, limit: int, max_frames: int,
                     deadline: Deadline | None = None) -> list[tuple[float, float]]:
    """The source's brief shots (what was on screen for a few seconds only), strongest first:
    at most ``limit`` and K×K (one look), and none when the frame budget has no room for that
    look and the root's. Reading the files takes at most ``CHANGE_SCAN_S``, or
    ``CHANGE_SCAN_SHARE`` of the time left."""
    files = getattr(grid.source, "media_files", None)
    k2 = grid.k * grid.k
    if limit <= 0 or files is None or max_frames < 2 * k2:
        return []
    left = deadline.remaining() if deadline is not None else None
    budget = CHANGE_SCAN_S if left is None else min(CHANGE_SCAN_S, CHANGE_SCAN_SHARE * max(0.0, left))
    return [(b.t_start, b.t_end) for b in brief_shots_of(files(), budget_s=budget)[: min(limit, k2)]]


def _merged(found: Iterable[Located]) -> list[Located]:
    """Touching cells of one layer that are equally sure are one moment (from the first
    frame that showed it), not three rows of the same thing."""
    out: list[Located] = []
    for m in sorted(found, key=lambda m: (m.depth, m.t_start)):
        last = out[-1] if out else None
        if (last is not None and last.depth == m.depth and abs(last.t_end - m.t_start) < 1e-6
                and last.confidence == m.confidence):
            out[-1] = Located(last.t, last.t_start, m.t_end, last.confidence, last.why, last.depth)
        else:
            out.append(m)
    return out


def shifts(n: int) -> list[float]:
    """Offsets (shares of a root cell) for the next ``n`` overviews between the root's frames:
    ½, ¼, ¾, ⅛, ⅝, ⅜, ⅞, … (the van der Corput sequence), so each new look halves the largest
    gap between frames already seen."""
    out: list[float] = []
    i = 1
    while len(out) < n:
        x, denom, j = 0.0, 1.0, i
        while j:
            denom *= 2
            x += (j % 2) / denom
            j //= 2
        out.append(x)
        i += 1
    return out


def _depth_of(grid: VideoGrid, span_s: float) -> int:
    """The layer whose grids last about ``span_s`` (0 = the root)."""
    total = float(grid.source.t_end) - float(grid.source.t_start)
    if span_s <= 0 or span_s >= total:
        return 0
    return max(0, round(math.log(total / span_s) / math.log(grid.k * grid.k)))


def _clip_moments(moments: Sequence[tuple[float, float]], grid: VideoGrid) -> list[tuple[float, float]]:
    """Moments inside the source (clipped to it), in the order given."""
    lo, hi = float(grid.source.t_start), float(grid.source.t_end)
    out = [(max(lo, float(a)), min(hi, float(b))) for a, b in moments]
    return [(a, b) for a, b in out if b > a]


def _clip_seeds(seeds: Sequence[tuple[float, float]], grid: VideoGrid) -> list[tuple[float, float]]:
    """Seed spans inside the source, overlapping ones joined, in the order given."""
    lo, hi = float(grid.source.t_start), float(grid.source.t_end)
    out: list[tuple[float, float]] = []
    for a, b in seeds:
        a, b = max(lo, float(a)), min(hi, float(b))
        if b - a <= 0:
            continue
        for i, (x, y) in enumerate(out):
            if a < y and x < b:
                out[i] = (min(a, x), max(b, y))
                break
        else:
            out.append((a, b))
    return out
