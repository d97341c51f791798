"""The look-again environment (issue 15, item 1): grid arithmetic, the depth limit, moves,
rendering with a cache, and frames found by seeking in stored snippets or a recording."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from episodic.config import Settings
from episodic.core.errors import InputError
from episodic.core.media import SnippetFrame
from episodic.memory.snippet_store import FileSnippetStore
from episodic.retrieval.video_grid import (
    FileFrames,
    GridView,
    SnippetFrames,
    VideoGrid,
    format_time,
)


class Colours:
    """A source whose frame at ``t`` is a solid colour that encodes ``t`` (R = whole minutes,
    G = seconds within the minute ×4); ``holes`` are stretches with nothing to show."""

    def __init__(self, t_end: float, holes: tuple[tuple[float, float], ...] = ()) -> None:
        self.t_start, self.t_end, self.holes = 0.0, t_end, holes
        self.asked: list[float] = []

    def frame_at(self, t: float) -> np.ndarray | None:
        self.asked.append(t)
        if any(a <= t < b for a, b in self.holes):
            return None
        frame = np.zeros((36, 64, 3), np.uint8)
        frame[..., 0] = int(t // 60) % 256
        frame[..., 1] = int((t % 60) * 4) % 256
        return frame


def test_an_hour_reaches_its_last_layer_in_two_steps():
    grid = VideoGrid(Colours(3600.0))
    root = grid.root()
    assert root.cell_s == pytest.approx(3600 / 64)
    assert [c.label for c in root.cells][:3] == ["A1", "A2", "A3"] and root.cells[-1].label == "H8"
    assert root.cells[-1].t_end == pytest.approx(3600.0)
    c5 = root.cell("c5")  # row C (2), column 5 (4): cell 20
    assert (c5.t_start, c5.t_end) == pytest.approx((20 * 56.25, 21 * 56.25))
    child = grid.expand(root, "C5")
    assert child.depth == 1 and child.path == ("C5",)
    assert (child.t_start, child.t_end) == pytest.approx((c5.t_start, c5.t_end))
    assert child.cell_s == pytest.approx(3600 / 8**4)  # T / K^(2(d+1)) at d = 1: under a second
    assert not grid.can_expand(child)
    with pytest.raises(InputError, match="no deeper"):
        grid.expand(child, "A1")
    assert grid.backtrack(child) == root and grid.backtrack(root) == root
    with pytest.raises(InputError, match=r"no cell 'Z9'.*A1 … H8"):
        root.cell("Z9")


def test_depth_grows_with_the_logarithm_of_the_span():
    def depth_to_last_layer(span_s: float) -> int:
        grid, view = VideoGrid(Colours(span_s)), None
        view = grid.root()
        while grid.can_expand(view):
            view = grid.expand(view, "A1")
        return view.depth

    assert [depth_to_last_layer(s) for s in (30.0, 60.0, 600.0, 3600.0, 36000.0)] == [0, 0, 1, 1, 2]


def test_investigate_moves_by_one_span_and_stays_inside_the_source():
    grid = VideoGrid(Colours(3600.0))
    view = grid.expand(grid.root(), "A3")  # [112.5, 168.75)
    after = grid.investigate(view, "after")
    before = grid.investigate(view, "before")
    assert (after.t_start, after.t_end) == pytest.approx((168.75, 225.0))
    assert (before.t_start, before.t_end) == pytest.approx((56.25, 112.5))
    first = grid.expand(grid.root(), "A1")
    assert grid.investigate(first, "before").t_start == 0.0  # clamped at the start
    last = grid.expand(grid.root(), "H8")
    assert grid.investigate(last, "after").t_end == pytest.approx(3600.0)
    with pytest.raises(InputError):
        grid.investigate(view, "sideways")  # type: ignore[arg-type]


def test_a_grid_renders_labelled_tiles_once():
    source = Colours(600.0, holes=((0.0, 9.0),))
    grid = VideoGrid(source, tile_width=160)
    root = grid.root()
    image = grid.render(root)
    assert image.shape == (8 * 90, 8 * 160, 3) and image.dtype == np.uint8
    assert grid.frames_decoded == 64
    # the centre of tile D4 is the colour of the frame at its midpoint (the label sits top-left)
    cell = root.cell("D4")
    tile = image[cell.row * 90 + 60, cell.col * 160 + 120]
    assert tuple(tile[:2]) == (int(cell.t_mid // 60), int((cell.t_mid % 60) * 4))
    # the label is burned in: the tile's top-left corner is not the frame's colour
    corner = image[cell.row * 90 + 5 : cell.row * 90 + 15, cell.col * 160 + 4 : cell.col * 160 + 30]
    assert (corner != tile).any()
    # A1's frame (t = 4.7 s) is in a hole: a dark tile, no crash
    assert tuple(image[60, 120]) == (40, 40, 40)
    # the same view again, or after going down and back up: nothing decoded twice
    child = grid.expand(root, "D4")
    grid.render(child)
    decoded = grid.frames_decoded
    assert grid.render(grid.backtrack(child)) is image and grid.image_hits == 1
    assert grid.frames_decoded == decoded
    assert grid.zoom(root, "D4") is not None and grid.frames_decoded == decoded  # D4's frame is cached


def test_bad_spans_and_sizes_are_refused():
    with pytest.raises(InputError, match="empty"):
        VideoGrid(Colours(0.0))
    with pytest.raises(InputError, match="week"):
        VideoGrid(Colours(30 * 24 * 3600.0))
    with pytest.raises(InputError, match="2..16"):
        VideoGrid(Colours(60.0), k=1)
    assert format_time(3725.25) == "1:02:05.2" and format_time(65.0) == "1:05.0"
    assert GridView(0.0, 64.0, 8, 0).cell_at(63.9).label == "H8"


# -- frames from media ------------------------------------------------------------------------
def _solid(rgb: tuple[int, int, int], t: float) -> SnippetFrame:
    frame = av.VideoFrame.from_ndarray(np.full((90, 160, 3), rgb, np.uint8), format="rgb24")
    return SnippetFrame(t=t, frame=frame.reformat(format="yuv420p"))


def _colour_at(frame: np.ndarray | None) -> tuple[int, int, int] | None:
    if frame is None:
        return None
    r, g, b = (int(round(float(x))) for x in frame[40:50, 70:90].reshape(-1, 3).mean(axis=0))
    return (r, g, b)


def _close(a: tuple[int, int, int] | None, b: tuple[int, int, int]) -> bool:
    return a is not None and max(abs(x - y) for x, y in zip(a, b, strict=True)) <= 12


def test_snippet_frames_seek_in_the_snippet_that_covers_a_time(tmp_path: Path):
    store = FileSnippetStore(Settings(data_dir=tmp_path))
    red, blue, green = (220, 30, 30), (30, 30, 220), (30, 200, 30)
    # segment 1: red for 4 s then blue for 2 s; segment 2 (after a 1 s gap): green
    frames = [_solid(red, i / 5) for i in range(20)] + [_solid(blue, 4 + i / 5) for i in range(10)]
    a = store.put("cam", "cam@a", 0.0, 6.0, frames, None, 16000, 5.0)
    b = store.put("cam", "cam@b", 7.0, 10.0, [_solid(green, 7 + i / 5) for i in range(15)], None, 16000, 5.0)
    source = SnippetFrames([b, a], store.path_for)
    assert (source.t_start, source.t_end) == (0.0, 10.0)
    assert _close(_colour_at(source.frame_at(1.0)), red)
    assert _close(_colour_at(source.frame_at(4.5)), blue)
    assert _close(_colour_at(source.frame_at(3.5)), red)  # backwards: seeks again
    assert source.frame_at(6.5) is None  # the gap between the snippets
    assert _close(_colour_at(source.frame_at(9.0)), green)
    # the files behind the span, each at its stream time (read for brief changes without decoding)
    assert [(f.path, f.offset_s, f.t_start, f.t_end) for f in source.media_files()] == [
        (store.path_for(a.uri), 0.0, 0.0, 6.0), (store.path_for(b.uri), 7.0, 7.0, 10.0)]
    window = SnippetFrames([a, b], store.path_for, 5.0, 8.0)
    assert [(f.offset_s, f.t_start, f.t_end) for f in window.media_files()] == [(0.0, 5.0, 6.0), (7.0, 7.0, 8.0)]
    assert SnippetFrames([a, b], store.path_for, 7.5, 9.0).media_files()[0].t_start == 7.5
    Path(b.uri.removeprefix("file://")).unlink()
    fresh = SnippetFrames([a, b], store.path_for)
    assert fresh.frame_at(8.0) is None and fresh.missing == [b.uri]  # a lost file, no crash
    grid = VideoGrid(fresh)
    assert grid.render(grid.root()).shape[2] == 3
    with pytest.raises(InputError, match="audio-only"):
        SnippetFrames([], store.path_for)


def test_file_frames_find_a_colour_change_in_a_recording(tmp_path: Path):
    path = tmp_path / "rec.mp4"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = 160, 90, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 10)
        stream.options = {"g": "250"}  # one keyframe: every lookup must seek and decode forward
        for i in range(200):  # 20 s: grey, then a red flash from 12.0 to 14.0 s
            rgb = (220, 30, 30) if 120 <= i < 140 else (128, 128, 128)
            frame = av.VideoFrame.from_ndarray(np.full((90, 160, 3), rgb, np.uint8), format="rgb24")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    source = FileFrames(path)
    assert source.t_end == pytest.approx(20.0, abs=0.2)
    assert _close(_colour_at(source.frame_at(13.0)), (220, 30, 30))
    assert _close(_colour_at(source.frame_at(5.0)), (128, 128, 128))
    grid = VideoGrid(source, k=4)
    red = [c.label for c in grid.root().cells if _close(_colour_at(grid.frame(c.t_mid)), (220, 30, 30))]
    assert red == ["C3"]  # cells of 1.25 s: only C3's midpoint (13.125 s) falls in the flash
    with pytest.raises(InputError, match="not found"):
        FileFrames(tmp_path / "nope.mp4")


def test_a_stream_in_the_store_becomes_a_frame_source(tmp_path: Path):
    from episodic.core.records import ShortTermMemory
    from episodic.memory.in_memory_store import InMemoryStore
    from episodic.retrieval.video_grid import stream_frames

    snippets = FileSnippetStore(Settings(data_dir=tmp_path))
    ref = snippets.put("cam", "cam@a", 10.0, 16.0, [_solid((220, 30, 30), 10 + i / 5) for i in range(30)], None, 16000, 5.0)
    store = InMemoryStore()
    store.ensure_schema(8, 4, models={})
    store.upsert_memories([ShortTermMemory(id="cam@a", stream_id="cam", t_start=10.0, t_end=16.0,
                                           vector=np.ones(8, np.float32), snippets=[ref])])
    source = stream_frames(store, snippets, "cam")
    assert (source.t_start, source.t_end) == (10.0, 16.0)
    assert _close(_colour_at(source.frame_at(12.0)), (220, 30, 30))
    assert stream_frames(store, snippets, "cam", t_min=11.0, t_max=13.0).t_end == 13.0
    with pytest.raises(InputError, match="no memories"):
        stream_frames(store, snippets, "other")


def test_a_grid_of_chosen_moments_shows_one_frame_from_each():
    view = GridView.of_moments([(30.0, 32.0), (5.0, 6.0), (50.0, 51.5)], k=2)
    assert [(c.label, c.t_start, c.t_end) for c in view.cells] == [
        ("A1", 5.0, 6.0), ("A2", 30.0, 32.0), ("B1", 50.0, 51.5)]  # time order; B2 does not exist
    assert (view.t_start, view.t_end, view.cell_s) == (5.0, 51.5, 2.0)
    assert view.cell_at(31.0).label == "A2" and view.cell_at(45.0).label == "B1"
    with pytest.raises(InputError, match="no cell"):
        view.cell("B2")
    # the pixels are not those of the plain grid over the same extent: kept apart in the caches
    plain = GridView(5.0, 51.5, 2, 0)
    assert view.key != plain.key
    grid = VideoGrid(Colours(60.0), k=2)
    tiles = grid.render(view, labels=False)
    tw, th = grid.tile_size
    assert tuple(int(x) for x in tiles[th // 2, tw + tw // 2]) == (0, 124, 0)  # A2: the frame at 31 s
    assert not np.array_equal(tiles, grid.render(plain, labels=False))
    child = grid.expand(view, "A2")  # a relevant moment expands to the grid of its shot
    assert (child.t_start, child.t_end, child.depth, child.spans) == (30.0, 32.0, 1, ())
    assert len(GridView.of_moments([(float(i), i + 0.5) for i in range(100)], k=8).cells) == 64
    with pytest.raises(InputError):
        GridView.of_moments([], k=8)
