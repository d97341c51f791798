"""Best-first search over the look-again grid: it follows leads down to the deepest layer,
looks between the root's frames when the root has no lead, keeps to its frame budget and
deadline, and says when it found nothing."""

from __future__ import annotations

import numpy as np
import pytest

from episodic.core.deadline import Deadline
from episodic.retrieval.grid_lookers import CellLook, GridObservation
from episodic.retrieval.grid_search import locate
from episodic.retrieval.video_grid import GridView, VideoGrid


class Flash:
    """Grey frames with a red flash during ``event`` (and a pink glow ``glow_s`` around it,
    which a looker half-recognises: a lead that gets better closer in)."""

    def __init__(self, t_end: float, event: tuple[float, float], glow_s: float = 0.0) -> None:
        self.t_start, self.t_end, self.event, self.glow_s = 0.0, t_end, event, glow_s

    def frame_at(self, t: float) -> np.ndarray:
        a, b = self.event
        frame = np.full((9, 16, 3), 128, np.uint8)
        if a <= t < b:
            frame[...] = (230, 0, 0)
        elif a - self.glow_s <= t < b + self.glow_s:
            frame[...] = (230, 120, 120)
        return frame


class RedLooker:
    """A stand-in for a vision model that really looks at the pixels it is given."""

    name = "red"

    def __init__(self) -> None:
        self.views: list[GridView] = []

    def look(self, question: str, grid: VideoGrid, view: GridView) -> GridObservation:
        self.views.append(view)
        looks = []
        for c in view.cells:
            f = grid.frame(c.t_mid)
            r, g = (0, 0) if f is None else (int(f[0, 0, 0]), int(f[0, 0, 1]))
            rel = 1.0 if (r > 200 and g < 50) else 0.5 if (r > 200 and g < 150) else 0.0
            looks.append(CellLook(c.label, c.t_start, c.t_end, c.t_mid, rel, f"r={r} g={g}"))
        return GridObservation(looks, [c.label for c in looks if c.relevance > 0], looker=self.name)


def test_a_lead_is_followed_to_the_second():
    grid = VideoGrid(Flash(3600.0, (1994.0, 1996.0), glow_s=40.0))
    report = locate("when was the red flash?", grid, RedLooker())
    assert report.stopped == "found" and report.depth == 1
    best = report.moments[0]
    assert best.confidence == 1.0 and 1994.0 <= best.t < 1996.0
    # the touching sub-second cells that show it are one moment, as long as the flash
    assert best.t_start >= 1993.5 and best.t_end <= 1996.5
    assert all(m.confidence < 1.0 for m in report.moments[1:])  # the glow around it, half sure
    assert report.frames_examined <= 3 * 64  # the root, and a grid per lead followed


def test_no_lead_at_the_root_looks_between_its_frames():
    flash = (300.0, 302.0)  # between two root midpoints (295.3 s and 304.7 s)
    grid = VideoGrid(Flash(600.0, flash))
    looker = RedLooker()
    report = locate("when was the red flash?", grid, looker)
    assert len(looker.views) >= 2 and looker.views[1].t_start > 0  # a shifted look
    assert report.moments and flash[0] <= report.moments[0].t < flash[1]
    assert report.frames_examined <= 5 * 64


def test_nothing_there_is_said_not_guessed():
    report = locate("when was the red flash?", VideoGrid(Flash(600.0, (-5.0, -4.0))), RedLooker())
    assert report.moments == [] and report.stopped == "no lead"
    assert report.grids_looked == 4  # the root and three shifted looks, then it gives up


def test_budget_and_deadline_stop_the_search():
    grid = VideoGrid(Flash(3600.0, (1994.0, 1996.0), glow_s=40.0))
    report = locate("when?", grid, RedLooker(), max_frames=64)
    assert report.stopped == "budget" and report.frames_examined == 64
    assert report.moments and report.moments[0].confidence == 0.5  # the lead it had, as it was
    clock = Deadline(0.0)
    report = locate("when?", VideoGrid(Flash(3600.0, (1994.0, 1996.0), glow_s=40.0)), RedLooker(), deadline=clock)
    assert report.stopped == "deadline"
    doc = report.to_dict()
    assert set(doc) == {"moments", "frames_examined", "depth", "grids_looked", "elapsed_s", "stopped"}


@pytest.mark.parametrize("span_s", [60.0, 600.0, 3600.0])
def test_frames_examined_grow_slowly_with_the_span(span_s):
    a = span_s * 0.61
    report = locate("red?", VideoGrid(Flash(span_s, (a, a + 2.0), glow_s=span_s / 20)), RedLooker())
    # within a frame step (0.05 s) of the 2-second flash
    assert report.moments and a - 0.05 <= report.moments[0].t < a + 2.0
    # a few grids, whatever the span; uniform sampling needs span / 2 frames to be sure of it
    assert report.frames_examined <= 6 * 64
