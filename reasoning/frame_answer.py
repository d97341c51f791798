"""One agent per video answers from a few salient frames (issue 15; MAGNET, seed 003, §3.3).

MAGNET's grounded question answering gives each video its own audio-visual agent: the agent
looks at a handful of salient frames of that video and predicts an answer together with the
moment it rests on, so that the answers of several agents can be compared and cited. This
module is that agent's visual half:

* :func:`salient_frames` picks the ``k`` frames worth showing out of evenly spaced candidates
  with the Salient Frame Selector (``retrieval.frame_selection.select_salient``), so a small
  frame budget is not spent on near-duplicates.
* :class:`FrameAnswerer` shows those frames to a vision-language model in ONE request (one call
  per agent, whatever the number of frames), each numbered and labelled with its stream and
  time, and asks for a JSON object naming the answer, the option letter for multiple choice, the
  frame the answer rests on and a confidence. Naming a frame by its number, not by a time the
  model would have to read off a caption, is what lets the answer carry an exact time.

Replies are read as strictly as the grid looker's (``reasoning.grid_vlm_looker``), whose JSON
extraction, ``ReplyError`` and JPEG encoding are reused: every field is type-checked, a frame
or letter that was not offered is an error rather than something to guess around, and an
unreadable reply is retried once with the problem quoted back. After a second bad reply, or
when the model says it cannot see the answer, there is no answer (``None``) — never a made-up
one — and ``last_problem`` says why. A failing server (``ModelError``) propagates: the caller
decides whether another agent or modality covers for it.
"""

from __future__ import annotations

import logging
import math
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from episodic.core.errors import InputError
from episodic.core.llm import ChatMessage, LanguageModel
from episodic.reasoning.grid_vlm_looker import (
    QUOTED_REPLY_CHARS,
    ReplyError,
    encode_grid,
    extract_json_object,
)
from episodic.retrieval.frame_selection import select_salient
from episodic.retrieval.video_grid import format_time

__all__ = ["Frame", "FrameAnswer", "FrameAnswerer", "read_frame_reply", "salient_frames"]

log = logging.getLogger(__name__)

JPEG_QUALITY = 85  # frames are photographs, not labelled mosaics: 85 keeps detail at a third the bytes
LETTERS = string.ascii_uppercase  # option letters; more than 26 options is refused

ANSWER_SYSTEM = (
    "You answer questions about a video by looking at a few frames taken from it. You rely "
    "only on what the frames actually show, you say so when they do not show the answer, and "
    "you always reply with a single JSON object and nothing else."
)

REPLY_SHAPE = '{"answer": "a short answer", "option": "B", "frame": 3, "confidence": 0.8}'

# "I cannot see it" and its cousins: an answer that only says the frames do not tell
_ABSTAIN = re.compile(
    r"\b(?:cannot|can ?not|can't|could not|couldn't|unable to|impossible to)\s+"
    r"(?:be\s+)?(?:see|seen|tell|told|determine|determined|say|answer|answered|identify|find)\b"
    r"|\bnot\s+(?:visible|shown|clear|determinable|answerable)\b"
    r"|\b(?:do not|don't|does not|doesn't)\s+(?:know|show|see)\b"
    r"|\bno\s+(?:frame|image|picture)s?\s+shows?\b"
    r"|\b(?:unknown|unclear|none|n/?a)\b",
    re.I,
)


@dataclass(frozen=True)
class Frame:
    """One decoded frame the agent may show: its stream, its time (s) and its pixels (RGB uint8
    H×W×3). The stream and time travel with the pixels so the answer can cite them."""

    stream_id: str
    t: float
    rgb: np.ndarray


@dataclass
class FrameAnswer:
    """What the model answered from the frames, and the frame it says the answer rests on."""

    answer: str
    confidence: float  # in [0, 1], as the model stated it (clamped)
    choice_index: int | None  # 0-based option chosen, for multiple choice; None otherwise
    stream_id: str  # the named frame's stream; with no frame named, the frames' common stream or ""
    t: float | None  # the frame it rests on; None when the model named no frame
    frames_shown: int
    problem: str = ""  # something odd but not fatal about the reply (e.g. no frame named)


@dataclass
class _Read:
    """A validated reply, before it is mapped onto the frames and options."""

    answer: str
    option: int | None  # 0-based
    frame: int | None  # 0-based
    confidence: float


def _clean(text: str) -> str:
    return " ".join(text.split())


def _same_text(a: str, b: str) -> bool:
    """Whether an answer writes out an option: equal up to case, spacing and a final period."""
    return _clean(a).rstrip(".").casefold() == _clean(b).rstrip(".").casefold()


def _confidence(value: object) -> float:
    """A finite real number clamped to [0, 1]; booleans and numeric strings are not numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ReplyError(f'"confidence" must be a number from 0 to 1, got {value!r}')
    return min(1.0, max(0.0, float(value)))


def _option(value: object, n_options: int) -> int | None:
    """The 0-based option a letter names. "b", " B ", "(B)" and "B." are read as B; an empty
    string counts as null. A letter that was not offered is an error, not a guess."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ReplyError(f'"option" must be a letter or null, got {value!r}')
    letter = value.strip().strip("().").strip().upper()
    if not letter:
        return None
    offered = LETTERS[:n_options]
    if len(letter) != 1 or letter not in offered:
        allowed = f"one of {', '.join(offered)} or null" if offered else "null (no options were given)"
        raise ReplyError(f'"option" must be {allowed}, got {value!r}')
    return offered.index(letter)


def _frame(value: object, n_frames: int) -> int | None:
    """The 0-based index of a 1-based frame number (an integral float like 3.0 is accepted)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ReplyError(f'"frame" must be a frame number from 1 to {n_frames} or null, got {value!r}')
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ReplyError(f'"frame" must be a whole frame number, got {value!r}')
    number = int(value)
    if not 1 <= number <= n_frames:
        raise ReplyError(f'"frame" must be from 1 to {n_frames} or null, got {number}')
    return number - 1


def read_frame_reply(text: str, n_options: int, n_frames: int) -> _Read:
    """Validate a model's reply to a frames question; ReplyError says what is wrong with it.

    ``answer`` must be a string (null is read as an empty answer, the way models abstain),
    ``option`` a letter among the options or null, ``frame`` a frame number in range or null,
    ``confidence`` a real number (clamped to [0, 1]). All four keys must be present, so a reply
    that forgot the frame is sent back instead of silently losing the time.
    """
    data = extract_json_object(text)
    missing = [key for key in ("answer", "option", "frame", "confidence") if key not in data]
    if missing:
        raise ReplyError(f"the JSON object lacks {', '.join(repr(k) for k in missing)}")
    answer = data["answer"]
    if answer is None:
        answer = ""
    if not isinstance(answer, str):
        raise ReplyError(f'"answer" must be a string, got {answer!r}')
    return _Read(
        answer=_clean(answer),
        option=_option(data["option"], n_options),
        frame=_frame(data["frame"], n_frames),
        confidence=_confidence(data["confidence"]),
    )


def frames_prompt(question: str, options: Sequence[str], frames: Sequence[Frame]) -> str:
    """The user turn that goes with the frame images: which picture is which (stream and time),
    the question, the lettered options, and the exact reply shape."""
    lines = [
        f"The {len(frames)} pictures that follow are frames of a video, in this order:",
        *(f"Frame {i}: stream {f.stream_id} at {format_time(f.t)}" for i, f in enumerate(frames, 1)),
        "",
        f"Question: {question.strip()}",
    ]
    if options:
        lines += ["", "Options:", *(f"{LETTERS[i]}. {_clean(o)}" for i, o in enumerate(options))]
    choice = (
        f'Under "option" put the letter of the option the frames support ({LETTERS[0]} to '
        f'{LETTERS[len(options) - 1]}), or null if none of them fits.'
        if options
        else 'There are no options: put null under "option".'
    )
    lines += [
        "",
        "Reply with ONLY a JSON object of this shape:",
        REPLY_SHAPE,
        'Put under "answer" a short answer to the question, as the frames show it, or an empty '
        "string if the frames do not show it. " + choice + ' Under "frame" put the number of '
        "the frame the answer rests on most (1 is the first picture), or null if there is none. "
        'Under "confidence" put how sure you are, from 0 (a guess) to 1 (plainly visible); '
        "use 0 when the frames do not show the answer.",
    ]
    return "\n".join(lines)


class FrameAnswerer:
    """A video's agent for grounded answers from frames (see the module docstring).

    ``last_problem`` describes the latest ``answer`` only: why it gave None, or "" when it did
    not. It is for diagnostics; a shared answerer sees it overwritten by other threads.
    """

    def __init__(self, llm: LanguageModel, *, max_tokens: int = 300, max_side: int = 512) -> None:
        self.llm = llm
        self.max_tokens = max(16, int(max_tokens))
        self.max_side = max(16, int(max_side))
        self.last_problem = ""

    def encode(self, frame: Frame) -> bytes:
        """JPEG bytes of a frame, scaled down so its longer side is at most ``max_side``: a
        vision model's cost grows with pixels, and a few hundred per side show a scene."""
        rgb = np.asarray(frame.rgb)
        if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3 or min(rgb.shape[:2]) < 1:
            raise InputError(
                f"frame of {frame.stream_id} at {frame.t} must be RGB uint8 H×W×3, "
                f"got {rgb.dtype} {rgb.shape}"
            )
        h, w = rgb.shape[:2]
        scale = self.max_side / max(h, w)
        if scale < 1.0:
            size = (max(1, round(w * scale)), max(1, round(h * scale)))
            rgb = np.asarray(Image.fromarray(rgb).resize(size, Image.Resampling.BILINEAR))
        return encode_grid(rgb, JPEG_QUALITY)

    def messages(self, question: str, options: Sequence[str], frames: Sequence[Frame]) -> list[ChatMessage]:
        """The chat for one answer: instructions, then every frame with the question."""
        images = tuple(self.encode(f) for f in frames)
        return [
            ChatMessage("system", ANSWER_SYSTEM),
            ChatMessage("user", frames_prompt(question, options, frames), images=images),
        ]

    def answer(self, question: str, options: Sequence[str], frames: Sequence[Frame]) -> FrameAnswer | None:
        """The model's answer from ``frames``, or None when it cannot be had (see the class)."""
        if not isinstance(question, str) or not question.strip():
            raise InputError("the question is empty")
        if isinstance(options, str):
            raise InputError("options must be a sequence of strings, not one string")
        options = [str(o) for o in options]
        if len(options) > len(LETTERS):
            raise InputError(f"at most {len(LETTERS)} options can be lettered, got {len(options)}")
        frames = list(frames)
        if not frames:
            raise InputError("no frames to answer from")
        self.last_problem = ""
        chat = self.messages(question, options, frames)
        read = self._ask(chat, len(options), len(frames))
        if read is None:
            return None
        return self._result(read, options, frames)

    def _ask(self, chat: list[ChatMessage], n_options: int, n_frames: int) -> _Read | None:
        """Ask, and once more with the problem named if the reply cannot be read."""
        reply = self.llm.generate(chat, max_tokens=self.max_tokens, temperature=0.0, seed=0)
        try:
            return read_frame_reply(reply, n_options, n_frames)
        except ReplyError as first:
            # models usually fix a format slip once they are told what it was
            chat = [*chat,
                    ChatMessage("assistant", reply[:2000]),
                    ChatMessage("user", f"That reply could not be used: {first}. Answer again with "
                                        f"ONLY the JSON object, shaped like {REPLY_SHAPE}")]
        reply = self.llm.generate(chat, max_tokens=self.max_tokens, temperature=0.0, seed=0)
        try:
            return read_frame_reply(reply, n_options, n_frames)
        except ReplyError as second:
            quoted = _clean(reply)[:QUOTED_REPLY_CHARS]
            self.last_problem = (
                f"the model's reply could not be read, also after one retry ({second}); "
                f"it said: {quoted!r}"
            )
            log.warning("frame answerer: %s", self.last_problem)
            return None

    def _result(self, read: _Read, options: list[str], frames: list[Frame]) -> FrameAnswer | None:
        """Map a valid reply onto the options and frames; None for an abstention."""
        choice = read.option
        if choice is None and read.answer:
            choice = next((i for i, o in enumerate(options) if _same_text(read.answer, o)), None)
        text = read.answer or (_clean(options[choice]) if choice is not None else "")
        if not text:
            self.last_problem = "the model gave no answer: the frames do not show it"
            return None
        if read.confidence == 0.0 and _ABSTAIN.search(text) and choice is None:
            self.last_problem = f"the model abstained: {text[:QUOTED_REPLY_CHARS]!r}"
            return None
        problems = []
        if read.frame is None:
            streams = {f.stream_id for f in frames}
            stream_id, t = (next(iter(streams)) if len(streams) == 1 else ""), None
            problems.append("the model named no frame the answer rests on")
        else:
            stream_id, t = frames[read.frame].stream_id, float(frames[read.frame].t)
        if (
            read.option is not None
            and not _same_text(read.answer, options[read.option])
            and any(_same_text(read.answer, o) for o in options)
        ):
            problems.append(f"the answer text {read.answer!r} names another option than the "
                            f"letter {LETTERS[read.option]}; the letter is used")
        return FrameAnswer(
            answer=text,
            confidence=read.confidence,
            choice_index=choice,
            stream_id=stream_id,
            t=t,
            frames_shown=len(frames),
            problem="; ".join(problems),
        )


def salient_frames(
    candidates: Sequence[Frame],
    features: np.ndarray,
    k: int,
    *,
    separation: float,
    relevance: Sequence[float] | None = None,
    relevance_weight: float = 1.0,
) -> list[Frame]:
    """The ``k`` candidates the Salient Frame Selector keeps, in time order.

    ``features`` holds one embedding row per candidate, in the candidates' order; the selector
    reads index distance as time distance, so the candidates must be in time order (checked).
    ``separation`` is the selector's λ; ``relevance`` (one value in [0, 1] per candidate) and
    ``relevance_weight`` steer it toward frames that bear on the question.
    """
    frames = list(candidates)
    z = np.asarray(features, dtype=float)
    if not frames:
        raise ValueError("no candidate frames to select from")
    if z.ndim != 2:
        raise ValueError(f"features must be 2-D (one row per candidate), got shape {z.shape}")
    if z.shape[0] != len(frames):
        raise ValueError(f"features has {z.shape[0]} rows for {len(frames)} candidate frames")
    if relevance is not None and len(relevance) != len(frames):
        raise ValueError(f"relevance has {len(relevance)} values for {len(frames)} candidate frames")
    times = [f.t for f in frames]
    if any(b < a for a, b in zip(times[:-1], times[1:], strict=True)):
        raise ValueError("candidate frames must be in time order (the selector reads order as time)")
    chosen = select_salient(
        z,
        k,
        separation=separation,
        relevance=None if relevance is None else np.asarray(relevance, dtype=float),
        relevance_weight=relevance_weight,
    )
    return [frames[i] for i in sorted(chosen)]
