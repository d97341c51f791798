"""A question about one moment of a recording's own time: "What was on screen at 0:50 in
garden-cam?", "What was said 1 minute 40 seconds into the recording?", "What could be heard at
the 90-second mark?" → the stream second it names, so the answer is looked for around it
(ANCHOR_HALF_WIDTH_S either side) rather than anywhere.

A clock-like "at 8:15" is far more often a time someone said ("Who meets the baker at 8:15?")
than a place in the recording, so a bare m:ss counts only where nothing else can be meant: with
a word that says it is the recording's time ("mark", "timestamp", "into the video", "seconds
in"), written with hours or a leading zero ("0:50", "1:02:10"), or when the question asks what
was shown, said, heard or happening in a recording it names and the time lies within that
recording (:func:`anchored_to`). Wall-clock times of live streams are left to the summary
windows (retrieval/window_scope.py), which place them only where a stream's start is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ANCHOR_HALF_WIDTH_S = 5.0  # looked at either side of the asked second: a sentence or a key frame
_RECORDING = r"(?:recording|video|clip|stream|footage)"

_STAMP = re.compile(
    r"\b(?:at|around|about|near|by)\s+(?:the\s+)?(\d{1,2}):(\d{2})(?::(\d{2}))?(?!\s*(?:am|pm|a\.m|p\.m|o'clock))\b"
    r"(?:\s+(?:mark|timestamp))?",
    re.I,
)
_UNITS_IN = re.compile(
    r"\b(?:(\d+)\s*(?:minutes?|mins?)\s*(?:and\s+)?)?(?:(\d+)\s*(?:seconds?|secs?))?\s+(?:in|into)\b"
    rf"(?:\s+(?:the|this)\s+{_RECORDING})?",
    re.I,
)
_MARK = re.compile(r"\b(?:at\s+)?the\s+(\d+)[- ](second|minute)\s+mark\b", re.I)
# words that say a time is the recording's own
_RECORDING_TIME = re.compile(
    rf"\b(?:mark|timestamp|time\s*code|(?:into|of)\s+(?:the|this)\s+{_RECORDING}|seconds?\s+in|minutes?\s+in)\b",
    re.I,
)
# what a question about a moment asks: what was there then
_ABOUT_A_MOMENT = re.compile(
    r"\b(?:on\s+screen|shown|showing|visible|seen|said|saying|say|says|heard|hear|playing|happen(?:ed|ing|s)?|"
    r"going\s+on|written|talk(?:ed|ing)?|mention(?:ed)?)\b",
    re.I,
)


@dataclass(frozen=True)
class TimeAnchor:
    """The asked second of stream time, the phrase that said it, and whether the question
    says in so many words that it is the recording's time."""

    seconds: float
    phrase: str
    explicit: bool

    def window(self) -> tuple[float, float]:
        return max(0.0, self.seconds - ANCHOR_HALF_WIDTH_S), self.seconds + ANCHOR_HALF_WIDTH_S


def time_anchor(question: str) -> TimeAnchor | None:
    """The moment of stream time ``question`` names, or None (see the module doc)."""
    m = _MARK.search(question)
    if m:
        n = float(m.group(1)) * (60.0 if m.group(2).lower() == "minute" else 1.0)
        return TimeAnchor(n, m.group(0), True)
    for m in _UNITS_IN.finditer(question):
        if m.group(1) or m.group(2):
            seconds = float(m.group(1) or 0) * 60.0 + float(m.group(2) or 0)
            return TimeAnchor(seconds, m.group(0), True)
    m = _STAMP.search(question)
    if m:
        a, b, c = m.group(1), m.group(2), m.group(3)
        if int(b) >= 60 or (c is not None and int(c) >= 60):
            return None
        seconds = int(a) * 3600 + int(b) * 60 + int(c) if c is not None else int(a) * 60 + int(b)
        explicit = c is not None or a.startswith("0") or bool(_RECORDING_TIME.search(question))
        return TimeAnchor(float(seconds), m.group(0), explicit)
    return None


def anchored_to(question: str, anchor: TimeAnchor | None, names_a_recording: bool, recording_s: float | None) -> bool:
    """Whether ``anchor`` is taken as the recording's time: said so, or a question about what was
    there then in a named recording at least that long (an "at 8:15" about a 3-minute clip is
    a time someone said)."""
    if anchor is None:
        return False
    if recording_s is not None and anchor.seconds > recording_s + ANCHOR_HALF_WIDTH_S:
        return False
    if anchor.explicit:
        return True
    return names_a_recording and recording_s is not None and bool(_ABOUT_A_MOMENT.search(question))


def without_anchor(question: str, anchor: TimeAnchor) -> str:
    """``question`` without its time phrase, so its words are what it asks about."""
    out = question.replace(anchor.phrase, " ", 1)
    out = re.sub(rf"\s+(?:into|in|of)\s+(?:the|this)\s+{_RECORDING}\b", " ", out,
                 count=1, flags=re.I) if anchor.explicit else out
    out = re.sub(r"\s+([?.!,])", r"\1", " ".join(out.split())).strip(" ,;:")
    return out[:1].upper() + out[1:]


# "what was said last?", "the first sign shown", "at the end of the recording": an end of the
# recording itself (not "closing time" or "when does it begin?", which name things said)
_EDGE_END = re.compile(r"\b(?:last|final|latest|(?:at|in|near|towards?)\s+the\s+(?:very\s+)?end)\b", re.I)
_EDGE_START = re.compile(
    r"\b(?:first|earliest|(?:at|in|near|towards?)\s+the\s+(?:very\s+)?(?:start|beginning))\b", re.I)


def recording_edge(question: str) -> str | None:
    """"end" or "start" when ``question`` asks for what came last (first) in a recording."""
    end, start = bool(_EDGE_END.search(question)), bool(_EDGE_START.search(question))
    return ("end" if end else "start") if end != start else None
