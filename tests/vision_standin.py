"""A scripted "vision model" for tests of the grid looker that really looks at the pixels.

:class:`RedScreenVision` is a responder for :class:`tests.openai_standin.ChatStandIn`: it takes
the last image of a chat-completions request (a base64 JPEG in a ``data:`` URI), reads the
grid size from the prompt ("an N×N grid"), cuts the picture into N×N tiles and scores each
tile by its share of strongly red pixels. The burned-in label strip at the top of each tile
and the tile's border are left out, so the score is about the frame, not the caption. The
reply is the JSON object the looker asks for, so a test passes only if the looker's image
and prompt carry what the model needs, and its parser reads what a model sends back.

Misbehaviour for tests: ``bad_replies`` unreadable answers (``bad_reply``) before the real
ones, ``invent_labels`` cells that no grid has ("Z9") put first, ``fenced`` wraps the JSON in
prose and a code fence as chatty models do. ``seen`` records what each request carried.

It also answers a frames request (reasoning/frame_answer.py: a "Frame 1: ..." list and one
picture per frame): every picture is decoded and tested with the same red test as a grid tile,
and the reply names the first mostly red frame and the option that says "red", or abstains
(empty answer, confidence 0) when no frame is red. ``bad_replies`` and ``fenced`` apply there too.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pytest
from PIL import Image

from episodic.config import Settings
from tests.openai_standin import ChatStandIn, chat_reply, last_user_text, sent_images

RED_FACTOR = 1.25  # a tile about 80 % red or more scores 1
SOME_RED = 0.2  # below this share a few red blocks in a picture are not "a red screen"
MOSTLY_RED = 0.5  # above this share the stand-in "recognises" a red screen
_GRID = re.compile(r"\b(\d{1,2})\s*[×x]\s*(\d{1,2})\s+grid\b")
_FRAMES = re.compile(r"^Frame 1:", re.M)
_OPTION = re.compile(r"^([A-Z])\.\s+(.+)$", re.M)


@dataclass
class Seen:
    """What one request carried, as the stand-in understood it."""

    mime: str  # "" when the request had no image
    size: tuple[int, int]  # (width, height) of the decoded image
    k: int  # grid size read from the prompt; 0 when none was stated
    text: str  # the user text of the request
    images: int = 0  # how many images the request carried


def red_share(tile: np.ndarray) -> float:
    """Share of red-dominant pixels in a tile, without its top label strip and border."""
    h, w = tile.shape[:2]
    body = tile[max(2, h // 4) : h - 2, 2 : w - 2].astype(np.int16)
    if body.size == 0:
        return 0.0
    r, g, b = body[..., 0], body[..., 1], body[..., 2]
    # red-dominant: a red screen, also one with texture under the red (as samples.Scene draws it)
    return float(((r > 120) & (r > g + 60) & (r > b + 60)).mean())


def user_texts(request: dict) -> list[str]:
    """Every text of every user message of a request, in order."""
    texts: list[str] = []
    for message in request.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        texts += [content] if isinstance(content, str) else [p.get("text", "") for p in content or []]
    return texts


def frames_prompt_text(request: dict) -> str:
    """The user text that lists the frames ("Frame 1: ..."), or "" when this is no frames request."""
    return next((t for t in user_texts(request) if _FRAMES.search(t)), "")


def grid_size(request: dict) -> int:
    """The N of "an N×N grid" in any user text of the request (0 when absent)."""
    for message in request.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        texts = [content] if isinstance(content, str) else [p.get("text", "") for p in content or []]
        for text in texts:
            m = _GRID.search(text)
            if m and m.group(1) == m.group(2):
                return int(m.group(1))
    return 0


@dataclass
class RedScreenVision:
    """Responder for :class:`ChatStandIn`; see the module docstring."""

    bad_replies: int = 0
    bad_reply: str = "There seems to be a red screen somewhere near the middle of the video."
    invent_labels: tuple[str, ...] = ()
    fenced: bool = False
    seen: list[Seen] = field(default_factory=list)

    def __call__(self, request: dict) -> tuple[int, bytes]:
        images = sent_images(request)
        k = grid_size(request)
        pixels = None
        mime, size = "", (0, 0)
        if images:
            mime, data = images[-1]
            img = Image.open(io.BytesIO(data)).convert("RGB")
            size, pixels = img.size, np.asarray(img)
        self.seen.append(Seen(mime, size, k, last_user_text(request), len(images)))
        if self.bad_replies > 0:
            self.bad_replies -= 1
            return 200, chat_reply(self.bad_reply)
        listing = frames_prompt_text(request)
        if listing and images:
            reply = json.dumps(self.judge_frames([data for _, data in images], listing))
        elif pixels is None or k < 1:
            return 200, chat_reply("I cannot see a grid in this request.")
        else:
            reply = json.dumps(self.judge(pixels, k))
        if self.fenced:
            reply = f"Here is what I found:\n```json\n{reply}\n```\nHope this helps."
        return 200, chat_reply(reply)

    def judge(self, pixels: np.ndarray, k: int) -> dict:
        """The JSON object a model would send for this mosaic."""
        th, tw = pixels.shape[0] // k, pixels.shape[1] // k
        cells = []
        best_share = 0.0
        for row in range(k):
            for col in range(k):
                share = red_share(pixels[row * th : (row + 1) * th, col * tw : (col + 1) * tw])
                best_share = max(best_share, share)
                if share > SOME_RED:
                    label = f"{chr(ord('A') + row)}{col + 1}"
                    cells.append({"label": label, "relevance": round(min(1.0, share * RED_FACTOR), 3),
                                  "seen": f"red covers {share:.0%} of the frame"})
        cells.sort(key=lambda c: -c["relevance"])
        invented = [{"label": x, "relevance": 1.0, "seen": "made up"} for x in self.invent_labels]
        red = best_share > MOSTLY_RED
        return {
            "cells": invented + cells,
            "expand": list(self.invent_labels) + [c["label"] for c in cells],
            "answer": "a red screen" if red else "",
            "confidence": round(min(1.0, best_share * RED_FACTOR), 3) if red else 0.0,
        }

    def judge_frames(self, images: list[bytes], listing: str) -> dict:
        """The JSON object a model would send for a frames request: the first mostly red
        frame (1-based) and the option that says "red", or an abstention when none is red."""
        red = [
            i
            for i, data in enumerate(images, 1)
            if red_share(np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))) > MOSTLY_RED
        ]
        if not red:
            return {"answer": "", "option": None, "frame": None, "confidence": 0.0}
        options = _OPTION.findall(listing)
        letter = next((m for m, text in options if "red" in text.lower()), None)
        return {"answer": "the screen is red", "option": letter, "frame": red[0], "confidence": 0.9}


def start(vision: RedScreenVision) -> ChatStandIn:
    """A running stand-in server that answers with ``vision`` (close it when done)."""
    standin = ChatStandIn()
    standin.responder = vision
    return standin


def vision_settings(url: str, base: Settings | None = None, **changes: object) -> Settings:
    """``base`` (default: the defaults) with its OpenAI-compatible client talking to the
    stand-in at ``url`` (short timeouts, one retry), and ``changes`` on top."""
    values: dict[str, object] = {
        "openai_base_url": url,
        "openai_model": "test-model",
        "openai_timeout_s": 5.0,
        "openai_max_retries": 1,
        "openai_backoff_s": 0.01,
    }
    values.update(changes)
    return (base or Settings()).replace(**values)


# -- fixtures (registered in tests/conftest.py) ----------------------------------------------------
@pytest.fixture()
def vision() -> RedScreenVision:
    """A fresh scripted vision model (its switches set per test)."""
    return RedScreenVision()


@pytest.fixture()
def standin(vision: RedScreenVision) -> Iterator[ChatStandIn]:
    """The stand-in server answering with ``vision``, on loopback for one test."""
    server = start(vision)
    yield server
    server.close()
