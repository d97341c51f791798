"""Durations as people type them ("90s", "10m", "1.5h", "7d", "1w"), read one way for every
command and setting that takes one (watch windows and cooldowns, summary windows)."""

from __future__ import annotations

import math
import re

from episodic.core.errors import InputError

_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?|w|weeks?)?\s*$", re.I
)
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str | float | int, what: str = "duration", unit_required: bool = False) -> float:
    """``"90"``, ``"90s"``, ``"10m"``, ``"1.5h"``, ``"7d"``, ``"1w"`` → seconds (a bare number is
    seconds unless ``unit_required``); InputError naming ``what`` otherwise."""
    if isinstance(text, bool) or (unit_required and not isinstance(text, str)):
        raise InputError(f"{what} must be a duration such as 90s, 10m, 2h or 7d, got {text!r}")
    if isinstance(text, int | float):
        value = float(text)
    else:
        m = _DURATION.match(str(text)[:40])
        if not m or (unit_required and not m.group(2)):
            shown = str(text)[:40]
            raise InputError(f"{what} must be a duration such as 90s, 10m, 2h or 7d, got {shown!r}")
        unit = (m.group(2) or "s")[0].lower()
        value = float(m.group(1)) * _UNIT_S[unit]
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{what} must be a finite, non-negative duration")
    return value
