"""The vision-language looker (issue 15, item 2) through the real OpenAI-compatible client,
against a stand-in model on loopback that reads the grid image it is sent: one look names the
cell with a red screen, the best-first search finds the red moment, and bad replies (prose,
broken JSON, wrong types, cells that do not exist) are retried once, dropped or reported."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest

from episodic.core.errors import ModelError
from episodic.reasoning.grid_vlm_looker import VLMLooker
from episodic.reasoning.openai_llm import OpenAICompatibleLLM
from episodic.retrieval.grid_search import locate
from episodic.retrieval.video_grid import VideoGrid
from episodic.samples import _texture
from tests.openai_standin import ChatStandIn, chat_reply, error_reply
from tests.vision_standin import RedScreenVision, vision_settings

W, H = 640, 360
RED = (416.0, 418.0)  # holds the root grid's midpoint of F5 (600 s / 64 cells: 417.19 s)
QUESTION = "When was the screen red?"


@functools.cache
def _scene(seed: int) -> np.ndarray:
    return _texture(seed, (100, 100, 200), W, H)


class TenMinutes:
    """Ten minutes of bluish textured frames (a new scene every 10 s) with a red screen in ``RED``."""

    t_start, t_end = 0.0, 600.0

    def frame_at(self, t: float) -> np.ndarray:
        if RED[0] <= t < RED[1]:
            return np.full((H, W, 3), (210, 20, 20), np.uint8)
        return _scene(int(t) // 10)


def _looker(standin: ChatStandIn, **changes: object) -> VLMLooker:
    return VLMLooker(OpenAICompatibleLLM(vision_settings(standin.url, llm="openai", **changes).models))


def test_one_look_names_the_red_cell_first(standin: ChatStandIn, vision: RedScreenVision) -> None:
    grid = VideoGrid(TenMinutes())
    root = grid.root()
    looker = _looker(standin)
    seen = looker.look(QUESTION, grid, root)
    red = root.cell_at(sum(RED) / 2).label
    assert red == "F5" and seen.expand[0] == red, seen.expand
    assert seen.best() is not None and seen.best().label == red and seen.best().relevance == 1.0
    assert [c.label for c in seen.looks if c.relevance > 0] == [red]  # the texture is not "red"
    assert seen.answer == "a red screen" and seen.confidence > 0.9
    assert seen.looker == "vlm" and seen.ceiling == 1.0 and looker.last_problem == ""
    # one look per cell, in grid order, each with the cell's own span and frame time
    assert len(seen.looks) == 64
    for look, cell in zip(seen.looks, root.cells, strict=True):
        assert (look.label, look.t_start, look.t_end, look.t) == (cell.label, cell.t_start, cell.t_end, cell.t_mid)
    assert len(standin.requests) == 1


def test_the_search_with_the_vlm_looker_finds_the_red_moment(standin: ChatStandIn) -> None:
    grid = VideoGrid(TenMinutes())
    report = locate(QUESTION, grid, _looker(standin), max_frames=400)
    assert report.stopped == "found" and report.moments, report.to_dict()
    best = report.moments[0]
    assert RED[0] <= best.t < RED[1] and best.depth == 1
    assert RED[0] - 1 <= best.t_start and best.t_end <= RED[1] + 1  # within a second
    assert report.grids_looked == 2 and report.frames_examined <= 128
    assert len(standin.requests) == 2


def test_prose_twice_gives_nothing_relevant_and_says_why(
    standin: ChatStandIn, vision: RedScreenVision, caplog: pytest.LogCaptureFixture
) -> None:
    vision.bad_replies = 2
    grid = VideoGrid(TenMinutes())
    looker = _looker(standin)
    seen = looker.look(QUESTION, grid, grid.root())
    assert len(standin.requests) == 2
    assert all(c.relevance == 0 for c in seen.looks) and len(seen.looks) == 64
    assert seen.expand == [] and seen.answer == "" and seen.confidence == 0.0 and seen.best() is None
    assert "could not be read" in looker.last_problem and "no JSON object" in looker.last_problem
    assert any("could not be read" in r.getMessage() for r in caplog.records)
    # the retry told the model what was wrong, and kept the picture in the conversation
    retry = standin.requests[1][2]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert "no JSON object" in retry[-1]["content"] and "JSON" in vision.seen[1].text
    assert vision.seen[1].mime == "image/jpeg"


def test_a_broken_first_reply_is_retried_once_and_the_good_one_used(
    standin: ChatStandIn, vision: RedScreenVision
) -> None:
    vision.bad_replies = 1
    vision.bad_reply = '{"cells": [{"label": "F5", "relevance": 0.9'  # cut off mid-object
    vision.fenced = True  # and the good one comes wrapped in prose and a code fence
    grid = VideoGrid(TenMinutes())
    looker = _looker(standin)
    seen = looker.look(QUESTION, grid, grid.root())
    assert len(standin.requests) == 2 and looker.last_problem == ""
    assert seen.expand[0] == "F5" and seen.best() is not None and seen.best().relevance == 1.0
    assert seen.answer == "a red screen"


def test_wrong_types_are_retried_and_numbers_clamped(standin: ChatStandIn) -> None:
    grid = VideoGrid(TenMinutes())
    looker = _looker(standin)
    standin.script[:] = [
        (200, chat_reply('{"cells": [{"label": "F5", "relevance": "high"}], "confidence": 0.5}')),
        (200, chat_reply(json.dumps({"cells": [{"label": "f5", "relevance": 3, "seen": "red"},
                                               {"label": "A1", "relevance": -2}],
                                     "answer": None, "confidence": 7}))),
    ]
    seen = looker.look(QUESTION, grid, grid.root())
    assert len(standin.requests) == 2
    assert "relevance" in str(standin.requests[1][2]["messages"][-1]["content"])
    by_label = {c.label: c for c in seen.looks}
    assert by_label["F5"].relevance == 1.0 and by_label["F5"].seen == "red"
    assert by_label["A1"].relevance == 0.0
    assert seen.expand == ["F5"]  # none named: the relevant cells, best first
    assert seen.confidence == 1.0 and seen.answer == ""


def test_cells_the_grid_does_not_have_are_ignored(standin: ChatStandIn, vision: RedScreenVision) -> None:
    vision.invent_labels = ("Z9", "A0")
    grid = VideoGrid(TenMinutes())
    looker = _looker(standin)
    seen = looker.look(QUESTION, grid, grid.root())
    assert len(standin.requests) == 1  # a made-up cell is dropped, not a reason to ask again
    assert seen.expand == ["F5"] and {c.label for c in seen.looks} >= {"F5"}
    assert "Z9" not in {c.label for c in seen.looks} and seen.best().label == "F5"
    assert looker.last_ignored == ("Z9", "A0") and looker.last_problem == ""


def test_the_request_carries_the_grid_image_and_its_size(standin: ChatStandIn, vision: RedScreenVision) -> None:
    grid = VideoGrid(TenMinutes(), k=4)
    root = grid.root()
    seen = _looker(standin).look(QUESTION, grid, root)
    assert len(seen.looks) == 16 and seen.looks[-1].label == "D4"
    saw = vision.seen[0]
    tw, th = grid.tile_size
    assert saw.mime == "image/jpeg" and saw.k == 4 and saw.size == (4 * tw, 4 * th)
    assert QUESTION in saw.text and "4×4 grid" in saw.text and "D4" in saw.text
    user = standin.requests[0][2]["messages"][1]["content"]
    urls = [p["image_url"]["url"] for p in user if p.get("type") == "image_url"]
    assert len(urls) == 1 and urls[0].startswith("data:image/jpeg;base64,")


def test_a_server_failure_is_the_callers_to_handle(standin: ChatStandIn) -> None:
    standin.script[:] = [(400, error_reply("model does not accept images"))]
    grid = VideoGrid(TenMinutes())
    with pytest.raises(ModelError, match="does not accept images"):
        _looker(standin, openai_max_retries=0).look(QUESTION, grid, grid.root())
