"""Which part of which stream a summary question is about (issue 17): "the last hour",
"between minute 10 and 20", "the first 5 minutes", "this morning", "from 9 to 11 am",
"on camera 2", "of stream cam1".

Stream-time phrases resolve against the stream's end; wall-clock ones ("this morning",
"yesterday evening", "from 9 to 11 am") need the stream's wall-clock start
(``wall_clock_start`` in its metadata) and are reported as not placeable without one, never
guessed. "This"/"today" is the wall-clock day the stream's memory ends on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta

_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60, "ninety": 90,
    "few": 3, "couple of": 2,
}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
             "eighth": 8, "ninth": 9, "tenth": 10}
_UNIT_S = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0,
           "h": 3600.0, "hr": 3600.0, "hour": 3600.0, "d": 86400.0, "day": 86400.0}
_NUM = r"(\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty-five|forty|fifty|sixty|ninety|few|couple of)"
_UNIT = r"(seconds?|secs?|minutes?|mins?|hours?|hrs?|days?)"
_TO = r"(?:and|to|until|till|through|-|–)"
_LAST = re.compile(rf"\b(?:the\s+)?(?:last|past|final|previous|latest)\s+(?:(half)\s+(?:an\s+)?hour|(?:{_NUM}\s+)?{_UNIT})\b", re.I)
_FIRST = re.compile(rf"\b(?:the\s+)?(?:first|opening|initial)\s+(?:(half)\s+(?:an\s+)?hour|(?:{_NUM}\s+)?{_UNIT})\b", re.I)
_MINUTE_RANGE = re.compile(rf"\b(?:(?:between|from)\s+)?(?:minutes?|min)\s+(\d+(?:\.\d+)?)\s*{_TO}\s*(?:minutes?\s+|min\s+)?(\d+(?:\.\d+)?)\b", re.I)
_UNIT_RANGE = re.compile(rf"\b(?:between|from)\s+(\d+(?:\.\d+)?)\s*{_TO}\s*(\d+(?:\.\d+)?)\s+(minutes?|mins?|hours?|hrs?|seconds?)\b", re.I)
_STAMP_RANGE = re.compile(rf"\b(?:between|from)\s+(\d+:\d{{2}}:\d{{2}})\s*{_TO}\s*(\d+:\d{{2}}:\d{{2}})\b", re.I)
_NTH_HOUR = re.compile(r"\b(?:(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+)(?:st|nd|rd|th)?\s+hour|hour\s+(\d+))\b", re.I)
_AMPM = r"(am|pm|a\.m\.|p\.m\.)"
_CLOCK_RANGE = re.compile(rf"\b(?:between|from)\s+(\d{{1,2}})(?::(\d{{2}}))?\s*{_AMPM}?\s*{_TO}\s*(\d{{1,2}})(?::(\d{{2}}))?\s*{_AMPM}", re.I)
_DAYPART = re.compile(
    r"\b(?:(this|yesterday|in\s+the|during\s+the|early\s+this|late\s+this|last)\s+)(morning|afternoon|evening|night)\b"
    r"|\b(tonight|today|yesterday)\b", re.I)
_PARTS = {"morning": (6.0, 12.0), "afternoon": (12.0, 18.0), "evening": (18.0, 24.0), "night": (0.0, 6.0),
          "tonight": (18.0, 24.0), "today": (0.0, 24.0), "yesterday": (0.0, 24.0)}
# what asks for a summary in so many words ("what happened", "summarise", "recap")
_SUMMARY = re.compile(
    r"\b(summar(?:y|ies|i[sz]e[sd]?|i[sz]ing)|recap|overview|at a glance|rundown|the gist"
    r"|what\s+(?:has\s+|had\s+)?happen(?:ed|s)|what\s+went\s+on|what\s+was\s+going\s+on)\b", re.I)
_CAMERA = re.compile(r"\b(?:camera|cam)\s*[-#_ ]?\s*(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\b", re.I)


def asks_for_summary(question: str) -> bool:
    """Whether the question asks in so many words what happened, or for a summary."""
    return bool(_SUMMARY.search(question))


@dataclass(frozen=True)
class AskedTime:
    """A time phrase of a question. ``kind``: "last"/"first" (``a`` seconds), "range" (stream
    seconds ``a``-``b``), "wall" (hours of the day ``a``-``b``, ``day`` days from the stream's
    last day: 0 today, -1 yesterday)."""

    phrase: str
    kind: str
    a: float
    b: float = 0.0
    day: int = 0


@dataclass(frozen=True)
class Resolved:
    """An asked time in stream seconds (None: unbounded); ``empty`` when it lies outside the
    stream; ``note`` says what could not be placed or was clipped."""

    t_min: float | None
    t_max: float | None
    note: str = ""
    empty: bool = False


def _number(text: str | None) -> float:
    if not text:
        return 1.0
    text = text.lower()
    return float(text) if text[0].isdigit() else float(_NUMBERS.get(text, 1))


def _unit(text: str) -> float:
    word = text.lower().rstrip("s") or "s"
    return _UNIT_S.get(word, _UNIT_S.get(word[:3], 60.0))


def _stamp(text: str) -> float:
    h, m, s = (int(x) for x in text.split(":"))
    return h * 3600.0 + m * 60.0 + s


def _hour(h: str, m: str | None, ampm: str | None) -> float:
    hour = int(h) % 12 if ampm else int(h)
    if ampm and ampm.lower().startswith("p"):
        hour += 12
    return hour + (int(m) / 60.0 if m else 0.0)


def asked_time(question: str) -> AskedTime | None:
    """The first time phrase the question uses, or None."""
    m = _DAYPART.search(question)
    if m:
        qualifier, part, alone = (m.group(1) or "").lower(), (m.group(2) or "").lower(), (m.group(3) or "").lower()
        if alone:
            a, b = _PARTS[alone]
            return AskedTime(m.group(0), "wall", a, b, -1 if alone == "yesterday" else 0)
        if qualifier == "last" and part in ("night", "evening"):
            a, b = (18.0, 30.0) if part == "night" else _PARTS[part]
            return AskedTime(m.group(0), "wall", a, b, -1)
        if qualifier != "last":
            a, b = _PARTS[part]
            return AskedTime(m.group(0), "wall", a, b, -1 if qualifier == "yesterday" else 0)
    m = _CLOCK_RANGE.search(question)
    if m:
        a = _hour(m.group(1), m.group(2), m.group(3) or m.group(6))
        b = _hour(m.group(4), m.group(5), m.group(6))
        if b > a:
            return AskedTime(m.group(0), "wall", a, b)
    for pattern, kind in ((_LAST, "last"), (_FIRST, "first")):
        m = pattern.search(question)
        if m:
            seconds = 1800.0 if m.group(1) else _number(m.group(2)) * _unit(m.group(3))
            return AskedTime(m.group(0), kind, seconds)
    m = _STAMP_RANGE.search(question)
    if m:
        return AskedTime(m.group(0), "range", _stamp(m.group(1)), _stamp(m.group(2)))
    m = _MINUTE_RANGE.search(question)
    if m:
        return AskedTime(m.group(0), "range", float(m.group(1)) * 60.0, float(m.group(2)) * 60.0)
    m = _UNIT_RANGE.search(question)
    if m:
        unit = _unit(m.group(3))
        return AskedTime(m.group(0), "range", float(m.group(1)) * unit, float(m.group(2)) * unit)
    m = _NTH_HOUR.search(question)
    if m:
        n = m.group(1) or m.group(2)
        k = _ORDINALS.get(n.lower(), 0) if not n.isdigit() else int(n)
        if k >= 1:
            return AskedTime(m.group(0), "range", (k - 1) * 3600.0, k * 3600.0)
    return None


def _clock_words(t: datetime) -> str:
    return f"{t:%H:%M} on {t:%Y-%m-%d}"


def resolve(asked: AskedTime, stream_end: float, wall: datetime | None, stream_id: str = "the stream",
            stream_start: float = 0.0) -> Resolved:
    """The asked time in this stream's seconds (its memory ends at ``stream_end``)."""
    end = max(stream_end, 0.0)
    if asked.kind == "last":
        return Resolved(max(end - asked.a, 0.0), end)
    if asked.kind == "first":
        return Resolved(stream_start, stream_start + asked.a)
    if asked.kind == "range":
        lo, hi = sorted((asked.a, asked.b))
        if lo >= end:
            return Resolved(lo, hi, f"{stream_id}'s memory ends at {_hms(end)}", empty=True)
        return Resolved(lo, hi)
    if wall is None:
        return Resolved(None, None, f"{stream_id} has no wall-clock start in its metadata, so "
                                    f"\"{asked.phrase}\" cannot be placed in it; this is all of it")
    last = wall + timedelta(seconds=end)
    day = datetime.combine(last.date() + timedelta(days=asked.day), time(0), tzinfo=wall.tzinfo)
    a, b = day + timedelta(hours=asked.a), day + timedelta(hours=asked.b)
    lo, hi = (a - wall).total_seconds(), (b - wall).total_seconds()
    if hi <= stream_start or lo >= end:
        return Resolved(lo, hi, f"{stream_id}'s memory covers {_clock_words(wall + timedelta(seconds=stream_start))} "
                                f"to {_clock_words(last)}: nothing {asked.phrase}", empty=True)
    return Resolved(max(lo, 0.0), min(hi, end))


def _hms(t: float) -> str:
    s = int(round(max(t, 0.0)))
    return f"{s // 3600:d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def mentioned_streams(question: str, stream_ids: list[str]) -> list[str]:
    """The streams the question names: by id ("cam-2", "kitchen cam") or as a camera number
    ("camera 2" is cam2, camera2, cam-2, camera_02 …)."""
    words = " " + re.sub(r"[^a-z0-9]+", " ", question.lower()) + " "
    found: list[str] = []
    numbers = {str(int(n)) if n.isdigit() else str(_NUMBERS[n.lower()]) for n in _CAMERA.findall(question)}
    for sid in stream_ids:
        spaced = " " + re.sub(r"[^a-z0-9]+", " ", sid.lower()).strip() + " "
        key = _alnum(sid)
        by_camera = any(re.fullmatch(rf"(?:.*?)(?:cam|camera)0*{n}", key) for n in numbers)
        if (spaced.strip() and spaced in words) or by_camera:
            found.append(sid)
    return found
