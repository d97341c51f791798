""""What was said / shown / heard at 0:50 in garden-cam?": a question that names a moment of
stream time (retrieval/time_anchor.py) and nothing else to look for is answered by what the
memory holds at that moment: the units of the kinds asked about (speech for "said", on-screen
text and key frames for "shown", sounds then speech for "heard") that cover the asked second,
at most MOMENT_PARTS of them, else the one nearest it within the window looked at. A key frame
the classifier could not name says so, with its unsure guesses ("a scene …; perhaps a rocket,
not sure"), as a guess is all the offline eyes have."""

from __future__ import annotations

import re
from collections.abc import Sequence

from episodic.reasoning.answer import Draft
from episodic.retrieval.detailed import Unit

AT_MOMENT_CONFIDENCE = 0.7  # the units cover the asked second: they are what was there then
NEAR_MOMENT_CONFIDENCE = 0.55  # …only near it (the window holds nothing at the second itself)
MOMENT_PARTS = 2  # kinds of evidence an answer names at most ("heard: music; said: …")
GUESSES_SHOWN = 2
# a unit this near the asked second still counts as there then (sound windows are 2 s; a
# time read off a player is rounded to the second)
AT_TOLERANCE_S = 1.5
_LEAD = {"speech": "said", "ocr": "on screen", "visual": "seen", "sound": "heard", "summary": "summary"}
_HEARD = re.compile(r"\b(?:hear|heard|hearing|sound|sounds|listen|audible)\b", re.I)
_SHOWN = re.compile(r"\b(?:shown|show|showing|screen|seen|see|visible|look|looked|picture|image)\b", re.I)
# a key frame description that names nothing ("a scene; colours: blue", "a dark frame")
_NAMES_NOTHING = re.compile(r"^(?:a scene|a picture|a dark frame)\b", re.I)


def moment_modalities(question: str, preferred: Sequence[str], asks_text: bool = False) -> tuple[str, ...]:
    """The kinds of evidence a question about a moment asks for, best first: what it says
    ("written" → on-screen text alone; "heard" → sounds, then speech; "shown" → on-screen
    text, then key frames), then what its type prefers; whole-memory summaries last."""
    if asks_text:
        return ("ocr",)
    lead: tuple[str, ...] = ()
    if _HEARD.search(question):
        lead += ("sound", "speech")
    if _SHOWN.search(question):
        lead += ("ocr", "visual")
    order = list(dict.fromkeys(lead + tuple(preferred) + ("summary",)))
    order.remove("summary")
    return (*order, "summary")


def _distance(u: Unit, t: float) -> float:
    return 0.0 if u.t_start <= t <= u.t_end else min(abs(u.t_start - t), abs(u.t_end - t))


_ON_SCREEN = re.compile(r'^on-screen text: "[^"]*"; ')


def _part(u: Unit) -> str:
    text = " ".join(u.text.split())
    if u.modality == "visual":
        text = _ON_SCREEN.sub("", text)  # the sign is its own part
    if u.modality in ("speech", "ocr"):
        return f'{_LEAD[u.modality]}: "{text}"'
    if u.modality == "visual" and u.guesses and _NAMES_NOTHING.match(text):
        guesses = ", ".join(name for name, _ in u.guesses[:GUESSES_SHOWN])
        return f"{_LEAD[u.modality]}: {text}; perhaps {guesses}, not sure"
    return f"{_LEAD[u.modality]}: {text}"


def moment_answer(units: Sequence[Unit], t: float, modalities: Sequence[str]) -> Draft | None:
    """What ``units`` (those of the window around second ``t``) hold at ``t``, of the kinds
    ``modalities`` names (best first); None when the window holds none of those kinds."""
    usable = [u for u in units if u.text.strip()]
    covering: list[Unit] = []
    for modality in modalities:
        here = sorted((u for u in usable if u.modality == modality and _distance(u, t) <= AT_TOLERANCE_S),
                      key=lambda u: (_distance(u, t), u.t_end - u.t_start, u.t_start))
        if here and (modality != "summary" or not covering):
            covering.append(here[0])
        if len(covering) == MOMENT_PARTS:
            break
    if covering:
        parts, confidence = covering, AT_MOMENT_CONFIDENCE
    else:
        near = sorted((u for u in usable if u.modality in modalities),
                      key=lambda u: (_distance(u, t), list(modalities).index(u.modality), u.t_start))
        if not near:
            return None
        parts, confidence = near[:1], NEAR_MOMENT_CONFIDENCE
    first = parts[0]
    answer = "; ".join(_part(u) for u in parts) + f" ({first.cite()})"
    return Draft(answer=answer, confidence=confidence, support=list(parts), source="extract",
                 caps={"route": 13.0, "span": 1.0, "covers": 1.0 if covering else 0.0})
