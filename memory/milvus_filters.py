"""Milvus filter expressions built only from typed, validated values.

Milvus Lite 3.2.2 does not evaluate pymilvus filter templates (``filter_params``): it rejects
``{name}`` with "unexpected character '{'". So filters are written as templates and rendered
here by :func:`render_filter`, which accepts only strings from a small character set with no
quote, backslash, bracket, whitespace or newline (so a value can never close its literal),
finite numbers, and flat lists of those. Anything else is an :class:`InputError`: a user
value never reaches an expression as raw text. Only this function changes when servers with
real template support are the target.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any, get_args

import numpy as np

from episodic.core.errors import InputError, shown
from episodic.core.records import (
    STREAM_ID_PATTERN,
    OverviewScope,
    StreamOverview,
    validate_stream_id,
)

SAFE_VALUE = re.compile(r"^[A-Za-z0-9._@:+-]{1,256}$")
MODALITY = re.compile(r"[a-z][a-z0-9_]{0,31}")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
OVERVIEW_SCOPES: tuple[str, ...] = get_args(OverviewScope)  # ("stream", "stretch")


def _literal(name: str, value: Any) -> str:
    """One filter value as a Milvus literal; only types and characters that cannot escape."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if not math.isfinite(f):
            raise InputError(f"filter value {name!r} must be a finite number, got {value!r}")
        return repr(f)
    if isinstance(value, str):
        if not SAFE_VALUE.fullmatch(value):
            raise InputError(
                f"filter value {name!r}: {value!r} is not a valid id "
                "(1-256 characters from A-Z a-z 0-9 . _ @ : + -)"
            )
        return '"' + value + '"'
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
        if any(isinstance(v, (list, tuple, set, frozenset)) for v in items):
            raise InputError(f"filter value {name!r} must be a flat list")
        return "[" + ", ".join(_literal(name, v) for v in items) + "]"
    raise InputError(f"filter value {name!r} has unsupported type {type(value).__name__}")


def render_filter(template: str, **params: Any) -> str:
    """Fill ``{name}`` placeholders of a code-owned template with validated literals.

    The same template syntax as pymilvus ``filter_params``; the rendering happens here
    because Milvus Lite does not evaluate templates. Templates come from this module only.
    """
    missing = set(_PLACEHOLDER.findall(template)) - set(params)
    if missing:
        raise ValueError(f"filter template {template!r} lacks values for {sorted(missing)}")
    return _PLACEHOLDER.sub(lambda m: _literal(m.group(1), params[m.group(1)]), template)


def check_id(value: Any, what: str = "id") -> str:
    if not isinstance(value, str) or not SAFE_VALUE.fullmatch(value):
        raise InputError(
            f"invalid {what} {shown(value)}: use 1-256 characters from A-Z a-z 0-9 . _ @ : + -"
        )
    return value


def check_time(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{what} must be a number of seconds, got {value!r}")
    f = float(value)
    if not math.isfinite(f):
        raise InputError(f"{what} must be finite, got {value!r}")
    return f


def check_stream(stream_id: Any) -> str:
    """validate_stream_id, and a full match: ``re.match`` with ``$`` lets a trailing newline
    through, which must never reach a filter or a file name."""
    validate_stream_id(stream_id)
    if not STREAM_ID_PATTERN.fullmatch(stream_id):
        raise InputError(f"invalid stream id {shown(stream_id)}")
    return stream_id


def stream_list(stream_ids: str | Iterable[str] | None) -> list[str] | None:
    if stream_ids is None:
        return None
    if isinstance(stream_ids, str):
        stream_ids = [stream_ids]
    return sorted({check_stream(s) for s in stream_ids})


def check_scope(value: Any) -> str:
    """An overview's scope, one of OVERVIEW_SCOPES: it reaches filters, so nothing else may."""
    if not isinstance(value, str) or value not in OVERVIEW_SCOPES:
        raise InputError(f"scope must be one of {', '.join(OVERVIEW_SCOPES)}, got {value!r}")
    return value


def scope_filter(scope: Any) -> str | None:
    """A listing's or search's scope: None keeps both kinds of overview."""
    return None if scope is None else check_scope(scope)


def scope_clause(scope: str | None) -> tuple[str, dict[str, Any]] | None:
    """The extra clause of :func:`build_filter` for a checked scope (None: no clause)."""
    return None if scope is None else ("scope == {scope}", {"scope": scope})


def overview_order(o: StreamOverview) -> tuple[str, bool, float, str]:
    """The listing order of overviews in every store: by stream, the stream-wide overview
    first, then its stretches by start (the id breaks ties so the order is total)."""
    return (o.stream_id, o.scope != "stream", o.t_start, o.id)


def check_range(t_min: Any, t_max: Any) -> tuple[float | None, float | None]:
    """Finite bounds of a time window (either may be open) with t_min <= t_max."""
    lo = None if t_min is None else check_time(t_min, "t_min")
    hi = None if t_max is None else check_time(t_max, "t_max")
    if lo is not None and hi is not None and lo > hi:
        raise InputError(f"t_min ({t_min}) is after t_max ({t_max})")
    return lo, hi


def build_filter(
    stream_ids: list[str] | None,
    t_min: float | None,
    t_max: float | None,
    extra: tuple[str, dict[str, Any]] | None = None,
) -> str:
    """Streams, an overlap with [t_min, t_max] and an optional extra clause, ANDed."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if stream_ids is not None:
        clauses.append("stream_id in {sids}")
        params["sids"] = stream_ids
    lo, hi = check_range(t_min, t_max)
    if lo is not None:
        clauses.append("t_end >= {tmin}")
        params["tmin"] = lo
    if hi is not None:
        clauses.append("t_start <= {tmax}")
        params["tmax"] = hi
    if extra is not None:
        clauses.append(extra[0])
        params.update(extra[1])
    return render_filter(" and ".join(clauses), **params) if clauses else ""
