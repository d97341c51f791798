"""The offline looker (issue 15, item 2) with the real OCR engine: one read of a grid's mosaic
finds the cell that shows a sign, and colour questions find the cell of that colour."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from episodic.config import Settings
from episodic.memory.vision import OfflineVisualDescriber
from episodic.retrieval.grid_lookers import OfflineLooker
from episodic.retrieval.video_grid import VideoGrid
from episodic.samples import _font, _texture

W, H = 640, 360


def _sign(text: str) -> np.ndarray:
    img = Image.fromarray(_texture(7, (60, 160, 120), W, H))
    d = ImageDraw.Draw(img)
    d.rectangle((120, 110, 520, 230), fill=(0, 110, 60), outline=(255, 255, 255), width=4)
    d.text((150, 140), text, fill=(255, 255, 255), font=_font(56))
    return np.asarray(img)


class TenMinutes:
    """Textured frames; a sign from 300 to 310 s and a red screen from 500 to 510 s."""

    t_start, t_end = 0.0, 640.0

    def frame_at(self, t: float) -> np.ndarray:
        if 300 <= t < 310:
            return _sign("EAST DOCK")
        if 500 <= t < 510:
            return np.full((H, W, 3), (210, 20, 20), np.uint8)
        return _texture(int(t) // 10, (100, 100, 200), W, H)


@pytest.fixture(scope="module")
def looker() -> OfflineLooker:
    return OfflineLooker.from_describer(OfflineVisualDescriber(Settings()))


def test_the_offline_looker_reads_the_sign_and_finds_the_colour(looker: OfflineLooker) -> None:
    grid = VideoGrid(TenMinutes())
    root = grid.root()
    seen = looker.look("Where was the sign for the east dock?", grid, root)
    best = seen.best()
    assert best is not None and best.label == root.cell_at(305.0).label, seen.expand
    assert best.relevance == 1.0 and "EAST" in best.seen.upper()
    assert seen.expand[0] == best.label and len(seen.looks) == 64 and seen.looker == "offline"
    red = looker.look("When was the screen red?", grid, root)
    assert red.best() is not None and red.best().label == root.cell_at(505.0).label
    assert red.best().relevance == pytest.approx(0.8)  # a colour alone: weaker than writing
    none = looker.look("Who fed the cat?", grid, root)
    assert none.best() is None and none.expand == []
    decoded = grid.frames_decoded
    looker.look("Where was the sign for the east dock?", grid, root)
    assert grid.frames_decoded == decoded  # the mosaic is cached: nothing decoded again


def test_locate_finds_a_sign_shown_for_two_seconds_in_a_recording(tmp_path) -> None:
    """`episodic locate --file`: a sign on screen from 29 to 31 s of a minute-long recording
    nobody ingested, found to within a second; bad requests get one clear line."""
    import json

    from episodic import samples
    from tests.cli_runner import run_cli

    path = tmp_path / "sign.mp4"
    scenes = [samples.Scene(29, seed=1), samples.Scene(2, seed=2, text="EAST DOCK"), samples.Scene(29, seed=3)]
    samples.make_recording(path, scenes, [])
    out = run_cli("locate", "the east dock sign", "--file", str(path), "--json", data=tmp_path / "d")
    doc = json.loads(out.stdout)
    best = doc["moments"][0]
    assert 28.5 <= best["t"] <= 31.5 and best["confidence"] == 1.0 and "EAST" in best["why"].upper(), doc
    assert doc["frames_examined"] <= 5 * 64 and doc["stopped"] == "found" and doc["file"] == str(path)
    nothing = json.loads(run_cli("locate", "west harbour", "--file", str(path), "--max-frames", "256", "--json",
                                 data=tmp_path / "d").stdout)
    assert nothing["moments"] == [] and nothing["stopped"] == "no lead"
    both = run_cli("locate", "x", "--file", str(path), "--stream-id", "cam", data=tmp_path / "d", check=False)
    assert both.returncode == 2 and "either --stream-id" in both.stderr
    missing = run_cli("locate", "x", "--file", str(tmp_path / "nope.mp4"), data=tmp_path / "d", check=False)
    assert missing.returncode == 2 and "file not found" in missing.stderr
    unknown = run_cli("locate", "x", "--stream-id", "nobody", data=tmp_path / "d", check=False)
    assert unknown.returncode == 2 and "no memories of stream 'nobody'" in unknown.stderr
