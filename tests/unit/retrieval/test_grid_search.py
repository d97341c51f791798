"""Best-first search over the look-again grid: it follows leads down to the deepest layer,
looks between the root's frames when the root has no lead, keeps to its frame budget and
deadline, and says when it found nothing."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from episodic.core.deadline import Deadline
from episodic.retrieval.grid_lookers import CellLook, GridObservation
from episodic.retrieval.grid_search import Lead, Master, locate, shifts, strategy_for
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
    # the root and shifted looks (½, ¼, ¾, ⅛ … of a cell) until the frame budget is spent
    assert report.grids_looked == 1024 // 64 and report.frames_examined <= 1024
    assert shifts(4) == [0.5, 0.25, 0.75, 0.125]


def test_budget_and_deadline_stop_the_search():
    grid = VideoGrid(Flash(3600.0, (1994.0, 1996.0), glow_s=40.0))
    report = locate("when?", grid, RedLooker(), max_frames=64)
    assert report.stopped == "budget" and report.frames_examined == 64
    assert report.moments and report.moments[0].confidence == 0.5  # the lead it had, as it was
    clock = Deadline(0.0)
    report = locate("when?", VideoGrid(Flash(3600.0, (1994.0, 1996.0), glow_s=40.0)), RedLooker(), deadline=clock)
    assert report.stopped == "deadline"
    doc = report.to_dict()
    assert set(doc) == {"moments", "frames_examined", "depth", "grids_looked", "elapsed_s", "stopped",
                        "cache_hit_rate", "workers", "strategy"}


def test_a_look_is_not_started_when_it_would_end_past_the_deadline():
    """The eyes take a while (OCR over a grid: 0.3–2 s here): a look started with less time
    left than a look takes ends past the deadline, so it is not started."""
    import time

    class SlowLooker(RedLooker):
        def look(self, question, grid, view):
            time.sleep(0.25)
            return super().look(question, grid, view)

    looker = SlowLooker()
    report = locate("when?", VideoGrid(Flash(600.0, (-5.0, -4.0))), looker, deadline=Deadline(1.1))
    assert report.stopped == "deadline"
    # the first at 1.1 s left (more than FIRST_LOOK_S), then at 0.85, 0.6 and 0.35 s left, each
    # more than the 0.25 s a look had taken; at 1.0 s only 0.1 s was left
    assert report.grids_looked == 4, report
    # before any look has been timed, one is expected to take FIRST_LOOK_S: with less left,
    # none is started (an Ask's inspect begun with 0.4 s left had taken 2.2 s)
    report = locate("when?", VideoGrid(Flash(600.0, (-5.0, -4.0))), SlowLooker(), deadline=Deadline(0.6))
    assert report.stopped == "deadline" and report.grids_looked == 0, report


@pytest.mark.parametrize("span_s", [60.0, 600.0, 3600.0])
def test_frames_examined_grow_slowly_with_the_span(span_s):
    a = span_s * 0.61
    report = locate("red?", VideoGrid(Flash(span_s, (a, a + 2.0), glow_s=span_s / 20)), RedLooker())
    # within a frame step (0.05 s) of the 2-second flash
    assert report.moments and a - 0.05 <= report.moments[0].t < a + 2.0
    # a few grids, whatever the span; uniform sampling needs span / 2 frames to be sure of it
    assert report.frames_examined <= 6 * 64


# -- Video-RLM: the Master and its Workers ---------------------------------------------------------
class TwoFlashes(Flash):
    """Red during two events far apart, each with a glow a looker half-recognises."""

    def __init__(self, t_end: float, events: list[tuple[float, float]], glow_s: float) -> None:
        super().__init__(t_end, events[0], glow_s)
        self.events = events

    def frame_at(self, t: float) -> np.ndarray:
        frames = [Flash(self.t_end, e, self.glow_s).frame_at(t) for e in self.events]
        return max(frames, key=lambda f: int(f[0, 0, 0]) - int(f[0, 0, 1]))


class SlowLooker(RedLooker):
    """RedLooker taking ``delay_s`` per look, counting how many looks ran at once."""

    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s, self.now, self.most = delay_s, 0, 0
        self.lock = threading.Lock()

    def look(self, question: str, grid: VideoGrid, view: GridView) -> GridObservation:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(self.delay_s)
            return super().look(question, grid, view)
        finally:
            with self.lock:
                self.now -= 1


def test_breadth_first_workers_gather_every_occurrence_in_parallel():
    events = [(700.0, 702.0), (2900.0, 2902.0)]
    grid = VideoGrid(TwoFlashes(3600.0, events, glow_s=40.0))
    looker = SlowLooker(0.05)
    question = "how many times was the screen red?"
    assert strategy_for(question) == "bfs" and strategy_for("when was the screen red?") == "dfs"
    report = locate(question, grid, looker, workers=2, top_k=5)
    assert report.strategy == "bfs" and report.workers == 2
    sure = [m for m in report.moments if m.confidence == 1.0]
    for a, b in events:  # both flashes, each to the second
        assert any(a - 0.05 <= m.t < b for m in sure), report.to_dict()
    assert looker.most == 2  # two workers looked at the same time
    workers = {n.worker for n in report.scratchpad.notes}
    assert {1, 2} <= workers  # both workers wrote on the scratchpad
    assert 0 < report.cache_hit_rate < 1 or grid.frame_hits == 0


def _lead(relevance: float, order: int, span: tuple[float, float], siblings: tuple[float, float]) -> Lead:
    view = GridView(span[0], span[1], 8, 1)
    cell = CellLook("A1", span[0], span[1], sum(span) / 2, relevance, "")
    return Lead(relevance, order, view, cell, 0, siblings)


@pytest.mark.parametrize("virtual_loss, second", [(0.25, "elsewhere"), (0.0, "sibling")])
def test_virtual_loss_sends_a_free_worker_elsewhere(virtual_loss, second):
    grid = VideoGrid(Flash(3600.0, (0.0, 0.0)))
    master = Master("red?", grid, RedLooker(), max_frames=1024, deadline=None, workers=2,
                    virtual_loss=virtual_loss, strategy="dfs", on_progress=None)
    best = _lead(1.0, 1, (0.0, 56.25), siblings=(0.0, 3600.0))
    sibling = _lead(0.9, 2, (56.25, 112.5), siblings=(0.0, 3600.0))
    elsewhere = _lead(0.8, 3, (1000.0, 1001.0), siblings=(990.0, 1046.25))
    master.frontier = [best, sibling, elsewhere]
    assert master.claim(1) is best  # the best lead first
    assert master.claim(2) is {"elsewhere": elsewhere, "sibling": sibling}[second]


def test_a_lead_that_shows_nothing_is_a_dead_zone_and_gaps_between_anchors_are_looked_at():
    root = VideoGrid(Flash(3600.0, (0.0, 0.0))).root()
    mid = root.cells[20].t_mid  # a flash of a tenth of a second, right at one root frame
    grid = VideoGrid(Flash(3600.0, (mid - 0.05, mid + 0.05)))
    report = locate("when was the red flash?", grid, RedLooker(), workers=1)
    # the cell's own grid showed nothing: a dead zone, and the root cell stays the answer
    assert report.scratchpad.dead == [(root.cells[20].t_start, root.cells[20].t_end)]
    assert report.moments[0].t == mid and report.moments[0].depth == 0
    master = Master("red?", grid, RedLooker(), max_frames=1024, deadline=None, workers=1,
                    virtual_loss=0.25, strategy="dfs", on_progress=None)
    root = grid.root()
    c = root.cells
    anchors = [CellLook(x.label, x.t_start, x.t_end, x.t_mid, 1.0, "") for x in (c[10], c[13])]
    master._interpolate(root, anchors)  # two anchors, two cells apart: the gap is a lead
    assert len(master.frontier) == 1
    gap = master.frontier[0]
    assert (gap.view.t_start, gap.view.t_end) == (c[10].t_end, c[13].t_start)
    assert gap.relevance == 0.5 and gap.parent is None


def test_seeds_from_the_memory_are_looked_at_first_and_save_frames():
    flash = (2300.0, 2302.0)  # no glow: nothing at the root would lead there
    plain = locate("red?", VideoGrid(Flash(3600.0, flash)), RedLooker())
    looker = RedLooker()
    seeded = locate("red?", VideoGrid(Flash(3600.0, flash)), looker, seeds=[(2270.0, 2330.0)])
    assert (looker.views[0].t_start, looker.views[0].t_end) == (2270.0, 2330.0)
    assert seeded.moments and flash[0] - 0.05 <= seeded.moments[0].t < flash[1]
    assert seeded.frames_examined < 3 * 64
    assert not plain.moments or plain.frames_examined > seeded.frames_examined
