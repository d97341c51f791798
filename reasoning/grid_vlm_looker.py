"""A vision-language model as the eyes of the look-again grid (issue 15, item 2).

:class:`VLMLooker` shows a model the whole K×K mosaic of a grid view in one picture (every tile
carries its label, "A1" … "H8", and the time of its frame) and asks which cells bear on the
question. One image per view keeps the cost of a look at one model call, whatever K is, and the
burned-in labels let the model name cells instead of guessing coordinates.

A model's reply is read strictly: a JSON object is pulled out of whatever wraps it (code
fences, a sentence before it), and every field is checked for its type. Cells the grid does
not have ("Z9") are dropped, since steering the search into a cell that does not exist would
fail later and further from the cause. An unreadable reply is retried once with the error
quoted back, because models usually fix a format slip when told what it was; a second bad
reply gives an observation in which nothing is relevant (never a guess), with the reason in
``last_problem`` and in the log. A failing server (``ModelError``) is not hidden: the caller
decides whether to fall back to another looker.

It lives in ``reasoning`` because it needs a language model; ``retrieval`` must not import
``reasoning``, so the offline looker stays in ``retrieval.grid_lookers``.
"""

from __future__ import annotations

import io
import json
import logging
import math
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from episodic.core.errors import InputError
from episodic.core.llm import ChatMessage, LanguageModel
from episodic.retrieval.grid_lookers import CellLook, GridObservation
from episodic.retrieval.video_grid import GridView, VideoGrid, format_time

log = logging.getLogger(__name__)

QUOTED_REPLY_CHARS = 300  # how much of a bad reply is quoted back in the corrective turn

LOOK_SYSTEM = (
    "You help find moments in a video. You are shown a grid of frames taken from one video "
    "and a question. You judge, cell by cell, how much each frame bears on the question, "
    "and you say only what is actually visible. You always answer with a single JSON object "
    "and nothing else."
)

REPLY_SHAPE = (
    '{"cells": [{"label": "C4", "relevance": 0.0, "seen": "what is visible there that bears '
    'on the question"}], "expand": ["C4"], "answer": "what can already be said, or an empty '
    'string", "confidence": 0.0}'
)


class ReplyError(ValueError):
    """A model reply that cannot be read as the JSON object asked for."""


@dataclass
class ReadReply:
    """A validated reply: relevance and words per known label, plus what was dropped."""

    relevance: dict[str, float] = field(default_factory=dict)
    seen: dict[str, str] = field(default_factory=dict)
    expand: list[str] = field(default_factory=list)
    answer: str = ""
    confidence: float = 0.0
    ignored: list[str] = field(default_factory=list)  # labels this grid does not have


def look_prompt(question: str, view: GridView) -> str:
    """The user turn that goes with the grid image. It states the grid size as "an N×N grid"
    so the model (and the test stand-in) can tell how the picture is divided."""
    k = view.k
    last = view.cells[-1].label
    cells = (f"Each cell stands for {view.cell_s:.2f} s of video and shows the frame from the "
             "middle of that stretch." if not view.spans else
             "Each cell is one of the moments, in time order, when the picture changed for a "
             "few seconds only, and shows the frame from its middle.")
    return (
        f"The picture is an {k}×{k} grid of frames from one video, covering "
        f"{format_time(view.t_start)} to {format_time(view.t_end)} "
        f"({view.t_end - view.t_start:.1f} s). {cells} Cells are read left to "
        "right, top to bottom; each is labelled in its top-left corner with its row letter "
        f"(A is the top row) and column number (1 is the left column), from A1 to {last}, "
        "followed by the time of its frame.\n\n"
        f"Question: {question.strip()}\n\n"
        "Reply with ONLY a JSON object of this shape:\n"
        f"{REPLY_SHAPE}\n"
        "List under \"cells\" only the cells that bear on the question, with a relevance from "
        "0 (nothing to do with it) to 1 (shows exactly what is asked); cells you leave out count "
        "as 0. Under \"expand\" name, best first, the cells worth a closer look. Put under "
        "\"answer\" what the frames already show in reply to the question (an empty string if "
        "nothing), and under \"confidence\" how sure you are of that answer, from 0 to 1."
    )


def encode_grid(image: Any, quality: int) -> bytes:
    """JPEG bytes of a rendered grid (full size: the labels must stay legible)."""
    buf = io.BytesIO()
    Image.fromarray(image).convert("RGB").save(buf, format="JPEG", quality=int(quality))
    return buf.getvalue()


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text``: models wrap it in ```json fences or a sentence, so
    the object is searched for rather than expecting the reply to be nothing else."""
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("the reply was empty")
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ReplyError("the reply holds no JSON object")


def _number(value: object, what: str) -> float:
    """A finite number clamped to [0, 1]; booleans and numeric strings are not numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ReplyError(f"{what} must be a number from 0 to 1, got {value!r}")
    return min(1.0, max(0.0, float(value)))


def _label(view: GridView, value: object, ignored: list[str]) -> str | None:
    """The grid's own spelling of ``value``, or None (noted in ``ignored``) for a cell this
    view does not have."""
    if not isinstance(value, str):
        raise ReplyError(f"a cell label must be a string, got {value!r}")
    try:
        return view.cell(value).label
    except InputError:
        ignored.append(value.strip())
        return None


def read_reply(text: str, view: GridView) -> ReadReply:
    """Validate a model's reply against ``view``; ReplyError says what is wrong with it."""
    data = extract_json_object(text)
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise ReplyError('"cells" must be a list of {"label", "relevance", "seen"} objects')
    out = ReadReply()
    for entry in cells:
        if not isinstance(entry, dict):
            raise ReplyError(f'each item of "cells" must be an object, got {entry!r}')
        label = _label(view, entry.get("label"), out.ignored)
        relevance = _number(entry.get("relevance"), f"the relevance of {entry.get('label')!r}")
        seen = entry.get("seen", "")
        if not isinstance(seen, str):
            raise ReplyError(f'"seen" of {entry.get("label")!r} must be a string')
        if label is None or relevance < out.relevance.get(label, -1.0):
            continue  # an unknown cell, or a weaker second mention of one already read
        out.relevance[label] = relevance
        out.seen[label] = " ".join(seen.split())
    expand = data.get("expand", [])
    if not isinstance(expand, list):
        raise ReplyError('"expand" must be a list of cell labels')
    for value in expand:
        label = _label(view, value, out.ignored)
        if label is not None and label not in out.expand:
            out.expand.append(label)
    answer = data.get("answer", "")
    if answer is None:
        answer = ""
    if not isinstance(answer, str):
        raise ReplyError('"answer" must be a string')
    out.answer = " ".join(answer.split())
    out.confidence = _number(data.get("confidence", 0.0), '"confidence"')
    return out


class VLMLooker:
    """Asks a vision-language model about a whole grid view at once (see the module
    docstring); implements ``GridLooker``.

    ``last_problem`` and ``last_ignored`` describe the latest ``look`` only (a looker shared
    by threads sees them overwritten; they are for diagnostics, not for control flow).
    """

    name = "vlm"

    def __init__(self, llm: LanguageModel, *, max_tokens: int = 400, jpeg_quality: int = 85) -> None:
        self.llm = llm
        self.max_tokens = max(16, int(max_tokens))
        self.jpeg_quality = min(95, max(30, int(jpeg_quality)))
        self.last_problem = ""  # why the latest reply could not be used; "" when it could
        self.last_ignored: tuple[str, ...] = ()  # labels the latest reply named but the grid lacks

    def messages(self, question: str, grid: VideoGrid, view: GridView) -> list[ChatMessage]:
        """The chat for one look: instructions, then the grid image with the question."""
        jpeg = encode_grid(grid.render(view, labels=True), self.jpeg_quality)
        return [
            ChatMessage("system", LOOK_SYSTEM),
            ChatMessage("user", look_prompt(question, view), images=(jpeg,)),
        ]

    def look(self, question: str, grid: VideoGrid, view: GridView) -> GridObservation:
        chat = self.messages(question, grid, view)
        self.last_problem, self.last_ignored = "", ()
        reply = self.llm.generate(chat, max_tokens=self.max_tokens, temperature=0.0, seed=0)
        try:
            read = read_reply(reply, view)
        except ReplyError as first:
            # one more chance, told what went wrong: a format slip is usually fixed when named
            chat += [
                ChatMessage("assistant", reply[:2000]),
                ChatMessage("user", f"That reply could not be used: {first}. Answer again with "
                                    f"ONLY the JSON object, shaped like {REPLY_SHAPE}"),
            ]
            reply = self.llm.generate(chat, max_tokens=self.max_tokens, temperature=0.0, seed=0)
            try:
                read = read_reply(reply, view)
            except ReplyError as second:
                quoted = " ".join(reply.split())[:QUOTED_REPLY_CHARS]
                self.last_problem = (
                    f"the model's reply could not be read, also after one retry ({second}); "
                    f"it said: {quoted!r}"
                )
                log.warning("vlm looker, grid %s–%s: %s", format_time(view.t_start),
                            format_time(view.t_end), self.last_problem)
                read = ReadReply()
        if read.ignored:
            self.last_ignored = tuple(dict.fromkeys(read.ignored))
            log.info("vlm looker: ignored cells the %d×%d grid does not have: %s",
                     view.k, view.k, ", ".join(self.last_ignored))
        return self._observation(view, read)

    def _observation(self, view: GridView, read: ReadReply) -> GridObservation:
        looks = [
            CellLook(c.label, c.t_start, c.t_end, c.t_mid, round(read.relevance.get(c.label, 0.0), 4),
                     read.seen.get(c.label, ""))
            for c in view.cells
        ]
        expand = list(read.expand)
        if not expand:  # the model named none: follow its relevances instead
            ranked = sorted((c for c in looks if c.relevance > 0), key=lambda c: -c.relevance)
            expand = [c.label for c in ranked]
        return GridObservation(looks=looks, expand=expand, answer=read.answer,
                               confidence=read.confidence, looker=self.name, ceiling=1.0)
