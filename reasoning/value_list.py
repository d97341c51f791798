"""Questions that ask for every value of a kind that was said: "What times were mentioned in
harbour-cam?", "Which rooms were mentioned?", "What prices were given?", "What colours were
mentioned?".

The ordinary answer path gives one answer, from the text most like the question: "What times
were mentioned in harbour-cam?" got "sailing race" (the words of its best sentence the
question does not have), "What colours were mentioned?" the colours of a key frame. The
answer is in every sentence heard there: each value of the asked kind, in the order said,
each with where it was heard.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from episodic.reasoning.answer import Draft
from episodic.reasoning.short_answer import values_of_kind
from episodic.retrieval.detailed import Unit

VALUES_CONFIDENCE = 0.7  # each value as heard: the recogniser may have misheard some
VALUES_LISTED = 8  # at most this many values are named

_KINDS = {"time": "time", "times": "time", "room": "room", "rooms": "room", "price": "price", "prices": "price",
          "amount": "price", "amounts": "price", "cost": "price", "costs": "price", "colour": "colour",
          "colours": "colour", "color": "colour", "colors": "colour"}
_ASK = re.compile(
    r"^\s*(?:what|which|list(?:\s+all)?(?:\s+of)?(?:\s+the)?|name(?:\s+all)?(?:\s+the)?)\s+(?:different\s+|other\s+)?"
    r"(times|rooms|prices|amounts|costs|colou?rs)\b(?:\s+(?:were|was|are|is|have\s+been|got))?\s+"
    r"(?:mentioned|said|given|named|talked\s+about|spoken\s+of|heard|announced|stated|quoted)\b",
    re.I,
)


def asks_for_values(question: str) -> str | None:
    """The kind of value ``question`` asks to have listed ("time", "room", "price", "colour"),
    or None."""
    m = _ASK.search(" ".join(question.split()))
    return _KINDS[m.group(1).lower()] if m else None


def values_answer(kind: str, units: Sequence[Unit]) -> Draft:
    """Every value of ``kind`` in the sentences ``units`` (speech), in time order within each
    stream, once each: "8.35 (harbour-cam, 48.8 s), quarter to 7 (harbour-cam, 62.9 s)"; that
    none was heard when none was."""
    seen: dict[str, Unit] = {}
    for u in sorted((u for u in units if u.modality == "speech"), key=lambda u: (u.stream_id, u.t_start)):
        for value in values_of_kind(u.text, kind):
            seen.setdefault(value.lower(), u)
    plural = {"time": "times", "room": "rooms", "price": "prices", "colour": "colours"}[kind]
    if not seen:
        return Draft(answer=f"No {plural} were heard in what was said", confidence=VALUES_CONFIDENCE / 2,
                     source="count", caps={"route": 16.0, "span": 1.0, "values": 0.0})
    listed = list(seen.items())[:VALUES_LISTED]
    more = f" and {len(seen) - len(listed)} more" if len(seen) > len(listed) else ""
    answer = ", ".join(f"{value} ({u.stream_id}, {u.t_start:.1f} s)" for value, u in listed) + more
    return Draft(answer=answer, confidence=VALUES_CONFIDENCE, support=[u for _, u in listed], source="count",
                 caps={"route": 16.0, "span": 1.0, "values": float(len(seen))})
