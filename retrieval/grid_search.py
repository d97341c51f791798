"""Finding a moment by looking (issue 15, a first navigator): best-first search over the grid.

A simplified single-agent form of Video-RLM's Master (seed 002): the root grid is looked at;
every cell the looker finds relevant goes into a priority queue; the best one is expanded and
its grid looked at, until a cell of the deepest layer (under a second) is reached with full
relevance, the frame budget or the deadline is spent, or nothing is left to expand. A relevant
cell whose expansion shows nothing relevant is a dead zone for that lead (the detail was only
at the one frame the parent showed): its own span stays the answer for that lead.

When the root shows nothing relevant (a sign on screen for two seconds between two cell
midpoints), the search has no lead. It then looks at the same span again with the grid shifted
by a half, a quarter and three quarters of a cell, which halves and quarters the spacing of the
frames seen (64 more frames each) before giving up: the moment is then said not to be found,
never guessed. The parallel Workers, virtual loss and MAGNET's frame selection are not built.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from episodic.core.deadline import Deadline
from episodic.retrieval.grid_lookers import CellLook, GridLooker
from episodic.retrieval.video_grid import GridView, VideoGrid

DEFAULT_MAX_FRAMES = 1024
ACCEPT = 0.99  # a deepest-layer cell this relevant (× what the question allows) ends the search
SHIFTS = (0.5, 0.25, 0.75)  # of a root cell: where the no-lead fallback looks again


@dataclass(frozen=True)
class Located:
    t: float  # the frame that showed it
    t_start: float
    t_end: float
    confidence: float
    why: str
    depth: int


@dataclass
class LocateReport:
    moments: list[Located] = field(default_factory=list)  # best first
    frames_examined: int = 0
    depth: int = 0  # the deepest layer looked at
    grids_looked: int = 0
    elapsed_s: float = 0.0
    stopped: str = ""  # found | exhausted | budget | deadline | no lead

    def to_dict(self) -> dict[str, object]:
        return {
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
        }


def locate(
    question: str,
    grid: VideoGrid,
    looker: GridLooker,
    *,
    max_frames: int = DEFAULT_MAX_FRAMES,
    deadline: Deadline | None = None,
    top_k: int = 3,
    on_progress: Callable[[LocateReport], None] | None = None,
) -> LocateReport:
    """The moments of ``grid``'s source that show what ``question`` asks about, best first."""
    started = time.perf_counter()
    report = LocateReport()
    found: dict[tuple[float, float], Located] = {}
    frontier: list[tuple[float, int, GridView, CellLook]] = []
    order = 0

    ceiling = 1.0  # the most any cell can score for this question (a colour alone: 0.8)

    def look(view: GridView) -> list[CellLook]:
        nonlocal order, ceiling
        seen = looker.look(question, grid, view)
        ceiling = seen.ceiling
        report.grids_looked += 1
        report.depth = max(report.depth, view.depth)
        report.frames_examined = grid.frames_decoded
        end = float(grid.source.t_end)
        relevant = [c for c in seen.looks if c.relevance > 0 and c.t < end]
        for c in relevant:
            if grid.can_expand(view):
                order += 1
                heapq.heappush(frontier, (-c.relevance, order, view, c))
            else:
                _keep(found, c, view.depth)
        if on_progress is not None:
            on_progress(report)
        return relevant

    def out_of_budget() -> str:
        if grid.frames_decoded + view_frames(grid) > max_frames:
            return "budget"
        left = deadline.remaining() if deadline is not None else None
        if left is not None and left <= 0:
            return "deadline"
        return ""

    root = grid.root()
    leads = look(root)
    if not leads:  # nothing at the root's midpoints: look between them before giving up
        for share in SHIFTS:
            if (stop := out_of_budget()):
                report.stopped = stop
                break
            shifted = _shifted(grid, root, share)
            if shifted is not None and look(shifted):
                break
        else:
            report.stopped = "" if (found or frontier) else "no lead"
    while frontier and not report.stopped:
        best = max(found.values(), key=lambda m: m.confidence, default=None)
        if best is not None and best.confidence >= ACCEPT * ceiling and -frontier[0][0] <= best.confidence:
            report.stopped = "found"
            break
        if (stop := out_of_budget()):
            report.stopped = stop
            break
        _, _, view, cell = heapq.heappop(frontier)
        child = grid.expand(view, cell.label)
        if not look(child):  # nothing there but the parent's one frame: keep the parent cell
            _keep(found, cell, view.depth)
    if not report.stopped:
        report.stopped = "found" if found else ("exhausted" if report.grids_looked else "no lead")
    for _, _, view, cell in frontier:  # leads not followed still say where to look
        _keep(found, cell, view.depth)
    report.moments = sorted(_merged(found.values()), key=lambda m: (-m.confidence, -m.depth, m.t))[: max(1, top_k)]
    report.frames_examined = grid.frames_decoded
    report.elapsed_s = time.perf_counter() - started
    return report


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


def view_frames(grid: VideoGrid) -> int:
    return grid.k * grid.k


def _keep(found: dict[tuple[float, float], Located], cell: CellLook, depth: int) -> None:
    key = (round(cell.t_start, 3), round(cell.t_end, 3))
    if key not in found or found[key].confidence < cell.relevance:
        found[key] = Located(cell.t, cell.t_start, cell.t_end, cell.relevance, cell.seen, depth)


def _shifted(grid: VideoGrid, root: GridView, share: float) -> GridView | None:
    """The root grid moved later by ``share`` of a cell: its midpoints fall between the
    root's (the last cell's frame is past the end of the source, and nothing is shown there)."""
    offset = root.cell_s * share
    if offset <= 0:
        return None
    return GridView(root.t_start + offset, root.t_end + offset, root.k, 0)
