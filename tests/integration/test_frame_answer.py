"""The per-video frame agent (issue 15; MAGNET §3.3) through the real OpenAI-compatible client,
against a stand-in model on loopback that looks at the frames it is sent: it finds the red one
and the answer carries that frame's stream and time; multiple choice maps to the option; no red
frame, or prose twice, gives no answer; and the salient frame selector skips look-alikes."""

from __future__ import annotations

import functools
import io
import json

import numpy as np
import pytest
from PIL import Image

from episodic.core.errors import ModelError
from episodic.reasoning.frame_answer import Frame, FrameAnswerer, salient_frames
from episodic.reasoning.openai_llm import OpenAICompatibleLLM
from episodic.retrieval.frame_selection import select_salient
from episodic.samples import _texture
from tests.openai_standin import ChatStandIn, chat_reply, error_reply, sent_images
from tests.vision_standin import RedScreenVision, vision_settings

W, H = 640, 360
QUESTION = "What colour is the screen?"
RED_T, RED_STREAM = 413.0, "cam2"


@functools.cache
def _scene(seed: int) -> np.ndarray:
    return _texture(seed, (100, 100, 200), W, H)


def _frames(red_at: int | None = 5) -> list[Frame]:
    """Eight frames of bluish texture from cam1, 60 s apart; the one at ``red_at`` is a red
    screen from cam2 at 413 s (so stream and time must come from the frame the model names)."""
    frames = [Frame("cam1", 60.0 * i + 20.0, _scene(i)) for i in range(8)]
    if red_at is not None:
        frames[red_at] = Frame(RED_STREAM, RED_T, np.full((H, W, 3), (210, 20, 20), np.uint8))
    return frames


def _answerer(standin: ChatStandIn, **changes: object) -> FrameAnswerer:
    return FrameAnswerer(OpenAICompatibleLLM(vision_settings(standin.url, llm="openai", **changes).models))


def test_the_answer_rests_on_the_red_frame(standin: ChatStandIn, vision: RedScreenVision) -> None:
    agent = _answerer(standin)
    got = agent.answer(QUESTION, [], _frames())
    assert got is not None and "red" in got.answer
    assert got.t == RED_T and got.stream_id == RED_STREAM and got.confidence == 0.9
    assert got.choice_index is None and got.frames_shown == 8 and got.problem == ""
    assert agent.last_problem == "" and len(standin.requests) == 1
    images = sent_images(standin.requests[0][2])
    assert len(images) == 8 and vision.seen[0].images == 8
    assert all(mime == "image/jpeg" for mime, _ in images)
    # downscaled so the longer side is at most max_side (512): 640×360 → 512×288
    assert {Image.open(io.BytesIO(data)).size for _, data in images} == {(512, 288)}
    text = vision.seen[0].text
    assert "Frame 1: stream cam1 at 0:20.0" in text and "Frame 6: stream cam2 at 6:53.0" in text
    assert QUESTION in text and "Options:" not in text
    assert [m["role"] for m in standin.requests[0][2]["messages"]] == ["system", "user"]


def test_multiple_choice_maps_the_letter_to_the_option(standin: ChatStandIn, vision: RedScreenVision) -> None:
    vision.fenced = True  # wrapped in prose and a code fence: still read
    got = _answerer(standin).answer(QUESTION, ["blue", "red", "green"], _frames(red_at=2))
    assert got is not None and got.choice_index == 1
    assert got.t == RED_T and got.stream_id == RED_STREAM
    assert "A. blue\nB. red\nC. green" in vision.seen[0].text


def test_no_red_frame_gives_no_answer(standin: ChatStandIn) -> None:
    agent = _answerer(standin)
    assert agent.answer(QUESTION, ["blue", "red"], _frames(red_at=None)) is None
    assert agent.last_problem and len(standin.requests) == 1


def test_prose_twice_gives_none_and_says_why(standin: ChatStandIn, vision: RedScreenVision) -> None:
    vision.bad_replies = 2
    agent = _answerer(standin)
    assert agent.answer(QUESTION, [], _frames()) is None
    assert "could not be read" in agent.last_problem and "no JSON object" in agent.last_problem
    assert len(standin.requests) == 2
    retry = standin.requests[1][2]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert vision.seen[1].images == 8  # the frames stay in the conversation


def test_broken_json_first_is_retried_and_the_good_reply_used(
    standin: ChatStandIn, vision: RedScreenVision
) -> None:
    vision.bad_replies = 1
    vision.bad_reply = '{"answer": "the screen is red", "frame": 6'  # cut off
    agent = _answerer(standin)
    got = agent.answer(QUESTION, [], _frames())
    assert got is not None and got.t == RED_T and agent.last_problem == ""
    assert len(standin.requests) == 2


def test_fields_are_validated_strictly(standin: ChatStandIn) -> None:
    """A frame out of range is sent back; the fixed reply's answer text that spells out an
    option counts as that option, and its confidence is clamped."""
    agent = _answerer(standin)
    standin.script[:] = [
        (200, chat_reply(json.dumps({"answer": "red", "option": None, "frame": 9, "confidence": 0.5}))),
        (200, chat_reply(json.dumps({"answer": "Red.", "option": None, "frame": 3, "confidence": 4}))),
    ]
    got = agent.answer(QUESTION, ["blue", "red"], _frames())
    assert "from 1 to 8" in standin.requests[1][2]["messages"][-1]["content"]
    assert got is not None and got.choice_index == 1 and got.confidence == 1.0
    assert got.t == 140.0 and got.stream_id == "cam1"


def test_an_abstention_is_no_answer(standin: ChatStandIn) -> None:
    standin.script[:] = [(200, chat_reply(json.dumps(
        {"answer": "I cannot see it in these frames", "option": None, "frame": None, "confidence": 0})))]
    agent = _answerer(standin)
    assert agent.answer(QUESTION, [], _frames()) is None and "abstained" in agent.last_problem


def test_a_server_failure_propagates(standin: ChatStandIn) -> None:
    standin.script[:] = [(400, error_reply("model does not accept images"))]
    with pytest.raises(ModelError, match="does not accept images"):
        _answerer(standin, openai_max_retries=0).answer(QUESTION, [], _frames())


def test_salient_frames_skip_the_look_alikes() -> None:
    # 0-2 nearly the same picture; 3-5 distinct (unit vectors 120° apart: cosine -0.5 pairwise),
    # and orthogonal to 0-2. With λ = 0.1, m = 6 the time penalty D is 1/sin(π·gap/10):
    # gap 1 → 3.236, 2 → 1.701, 3 → 1.236. Consecutive-pair costs of the best chains:
    #   3,4,5: (-0.5 + 0.3236) + (-0.5 + 0.3236) = -0.353
    #   0,3,5: ( 0.0 + 0.1236) + (-0.5 + 0.1701) = -0.206
    # and any chain with two of 0-2 pays their cosine of ~1, so 3,4,5 it is.
    c, s = -0.5, np.sqrt(3) / 2
    features = np.array([[0, 0, 1.0], [0.01, 0, 1], [0, 0.01, 1], [1, 0, 0], [c, s, 0], [c, -s, 0]])
    pixels = np.zeros((4, 4, 3), np.uint8)
    candidates = [Frame("cam1", 10.0 * i, pixels) for i in range(6)]
    assert select_salient(features, 3, separation=0.1) == [3, 4, 5]
    picked = salient_frames(candidates, features, 3, separation=0.1)
    assert [f.t for f in picked] == [30.0, 40.0, 50.0]
    # relevance can pull a look-alike back in
    pulled = salient_frames(candidates, features, 3, separation=0.1, relevance=[1, 0, 0, 0, 0, 0])
    assert pulled[0] is candidates[0] and len(pulled) == 3
    with pytest.raises(ValueError, match="5 rows for 6"):
        salient_frames(candidates, features[:5], 3, separation=0.1)
    with pytest.raises(ValueError, match="relevance has 2 values"):
        salient_frames(candidates, features, 3, separation=0.1, relevance=[0.5, 0.5])
    with pytest.raises(ValueError, match="time order"):
        salient_frames(candidates[::-1], features, 3, separation=0.1)
