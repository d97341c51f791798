"""The one validator of incoming requests, and its limits.

Every door into the query side (the in-process ``MemoryQA`` and ``ArticleService``, the gRPC
server, the CLI) checks requests here, so a bad field gets the same message whichever way it
came in. Each function returns a clean value or raises :class:`InputError` naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from enum import Enum
from typing import Any, TypeVar

from episodic.core.article import ArticleRequest, ArticleStyle, Fusion
from episodic.core.errors import InputError, shown
from episodic.core.query import AskRequest, LocateRequest, RecallRequest, Scope
from episodic.core.records import validate_stream_id

MAX_QUESTION_CHARS = 4000
MAX_OPTIONS = 10
MAX_OPTION_CHARS = 500
MAX_TOP_K = 100
MAX_STREAM_IDS = 1000
MAX_SUB_QUERIES = 50
MIN_LOCATE_FRAMES = 64  # one 8×8 grid
MAX_LOCATE_FRAMES = 100_000

E = TypeVar("E", bound=Enum)


def finite_number(value: Any, what: str) -> float:
    """A real, finite number (bools and NaN are refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not _numpy_number(value):
        raise InputError(f"{what} must be a number, got {value!r}")
    f = float(value)
    if not math.isfinite(f):
        raise InputError(f"{what} must be finite, got {value!r}")
    return f


def _numpy_number(value: Any) -> bool:
    """numpy scalars, without importing numpy here."""
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    return kind in ("i", "u", "f") and getattr(value, "ndim", 1) == 0


def text(value: Any, what: str = "question", max_chars: int = MAX_QUESTION_CHARS) -> str:
    """A question, query or option: text with something in it, not a novel, no NUL; runs of
    whitespace become one space."""
    name = what if what[-1:].isdigit() else f"the {what}"  # "option 2", "the question"
    if not isinstance(value, str):
        raise InputError(f"{name} must be text, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"{name} is empty")
    if len(value) > max_chars:
        raise InputError(f"{name} is {len(value)} characters long; at most {max_chars} are allowed")
    if "\x00" in value:
        raise InputError(f"{name} contains a NUL character")
    return " ".join(value.split())


def top_k(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) and not _numpy_number(value):
        raise InputError(f"top_k must be an integer from 1 to {MAX_TOP_K}, got {value!r}")
    if int(value) != value or not 1 <= value <= MAX_TOP_K:
        raise InputError(f"top_k must be an integer from 1 to {MAX_TOP_K}, got {value!r}")
    return int(value)


def stream_ids(ids: Any) -> tuple[str, ...] | None:
    """Valid, de-duplicated stream ids in the order given; None (every stream) for none."""
    if ids is None:
        return None
    if isinstance(ids, str) or not isinstance(ids, Iterable):
        raise InputError("stream ids must be a list of stream ids (or none for all)")
    ids = list(ids)
    if len(ids) > MAX_STREAM_IDS:
        raise InputError(f"{len(ids)} stream ids; at most {MAX_STREAM_IDS} are allowed")
    if not ids:
        return None
    return tuple(dict.fromkeys(validate_stream_id(s) for s in ids))


def time_range(t_min: Any, t_max: Any) -> tuple[float | None, float | None]:
    """Finite stream times in seconds with t_min <= t_max (either may be unbounded)."""
    lo = None if t_min is None else finite_number(t_min, "t_min")
    hi = None if t_max is None else finite_number(t_max, "t_max")
    if lo is not None and hi is not None and lo > hi:
        raise InputError(f"the time range is reversed: t_min ({lo:g}) is after t_max ({hi:g})")
    return lo, hi


def scope(value: Any) -> Scope:
    if value is None:
        return Scope()
    if not isinstance(value, Scope):
        raise InputError(f"scope must be a Scope, got {type(value).__name__}")
    lo, hi = time_range(value.t_min, value.t_max)
    return Scope(stream_ids=stream_ids(value.stream_ids), t_min=lo, t_max=hi)


def options(value: Any) -> tuple[str, ...]:
    """None or () for an open question, else 2 to MAX_OPTIONS non-empty options."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (tuple, list)):
        raise InputError("options must be a list of texts")
    if len(value) == 1 or len(value) > MAX_OPTIONS:
        raise InputError(f"a multiple-choice question needs 2 to {MAX_OPTIONS} options, got {len(value)}")
    return tuple(text(o, f"option {i + 1}", MAX_OPTION_CHARS) for i, o in enumerate(value))


def deadline(value: Any) -> float | None:
    return None if value is None else finite_number(value, "deadline_s")


def choice(value: Any, enum: type[E], what: str) -> E:
    """An enum member, or its value or name in any case ("weighted-rrf" = "weighted_rrf")."""
    if isinstance(value, enum):
        return value
    if isinstance(value, str):
        name = value.strip().lower().replace("-", "_")
        for member in enum:
            if name in (member.value, member.name.lower()):
                return member
    raise InputError(f"{what} must be one of {', '.join(m.value for m in enum)}, got {shown(value)}")


def max_sub_queries(n: Any) -> int | None:
    """None (the configured default) or 1..MAX_SUB_QUERIES."""
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SUB_QUERIES:
        raise InputError(f"max_sub_queries must be an integer from 1 to {MAX_SUB_QUERIES}, got {n!r}")
    return n


def ask_request(req: Any) -> AskRequest:
    """A clean copy of an AskRequest, or an InputError saying exactly what is wrong."""
    if not isinstance(req, AskRequest):
        raise InputError(f"expected an AskRequest, got {type(req).__name__}")
    return AskRequest(
        question=text(req.question),
        options=options(req.options),
        scope=scope(req.scope),
        top_k=top_k(req.top_k),
        deadline_s=deadline(req.deadline_s),
        inspect=flag(req.inspect, "inspect"),
    )


def locate_request(req: Any) -> LocateRequest:
    """A clean copy of a LocateRequest, or an InputError saying exactly what is wrong."""
    if not isinstance(req, LocateRequest):
        raise InputError(f"expected a LocateRequest, got {type(req).__name__}")
    frames = req.max_frames
    if isinstance(frames, bool) or not isinstance(frames, int) or not MIN_LOCATE_FRAMES <= frames <= MAX_LOCATE_FRAMES:
        raise InputError(f"max_frames must be an integer from {MIN_LOCATE_FRAMES} to {MAX_LOCATE_FRAMES}, got {frames!r}")
    return LocateRequest(
        query=text(req.query, "query"),
        scope=scope(req.scope),
        max_frames=frames,
        top_k=top_k(req.top_k),
        deadline_s=deadline(req.deadline_s),
    )


MAX_DESCRIPTION_CHARS = 2000


def recall_request(req: Any) -> RecallRequest:
    """A clean copy of a RecallRequest, or an InputError saying exactly what is wrong: every
    text field is optional, but at least one must hold something."""
    if not isinstance(req, RecallRequest):
        raise InputError(f"expected a RecallRequest, got {type(req).__name__}")
    names = {"description": "description", "global_impression": "global impression",
             "key_moment": "key moment", "temporal": "temporal clue", "audio": "audio clue"}
    clean: dict[str, str] = {}
    for field_name, what in names.items():
        value = getattr(req, field_name)
        if value is None or (isinstance(value, str) and not value.strip()):
            clean[field_name] = ""
        else:
            clean[field_name] = text(value, what, MAX_DESCRIPTION_CHARS)
    if not any(clean.values()):
        raise InputError(
            "the description is empty: say what you remember (free text), or give at least one "
            "of the global impression, key moment, temporal or audio clues"
        )
    return RecallRequest(
        **clean, scope=scope(req.scope), top_k=top_k(req.top_k), deadline_s=deadline(req.deadline_s),
    )


def flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{name} must be true or false, got {value!r}")
    return value


def article_request(req: Any) -> ArticleRequest:
    """A clean copy of an ArticleRequest, or an InputError saying exactly what is wrong."""
    if not isinstance(req, ArticleRequest):
        raise InputError(f"expected an ArticleRequest, got {type(req).__name__}")
    return ArticleRequest(
        request=text(req.request, "request"),
        style=choice(req.style, ArticleStyle, "style"),
        scope=scope(req.scope),
        fusion=None if req.fusion in (None, "") else choice(req.fusion, Fusion, "fusion"),
        max_sub_queries=max_sub_queries(req.max_sub_queries),
        deadline_s=deadline(req.deadline_s),
    )
