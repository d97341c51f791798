"""Reading a language model's reply: the answer, the option letter it chose, a confidence it
stated, and whether it abstained (small models hedge in many wordings)."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from episodic.retrieval.query_analysis import (
    content_terms,
    overlap,
    stem,
    term_set,
)

log = logging.getLogger(__name__)

_ABSTAIN = re.compile(
    r"\b(not stated|not mentioned|not given|not provided|not specified|not clear|no information|"
    r"unknown|cannot (be )?(determined|answered|tell)|can't tell|do not know|don't know|"
    r"does not (say|mention|contain|tell)|do not (say|mention|contain|tell)|none)\b",
    re.I,
)
# words a model wraps around "I can't tell" ("the notes do not say"): no content of their own
_ABSTAIN_FILLER = {
    stem(w)
    for w in (
        "note", "notes", "entry", "entries", "log", "logs", "text", "context", "information",
        "info", "answer", "question", "provided", "given", "summary", "summaries", "recording",
        "sorry",
    )
}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONFIDENCE = re.compile(r"confidence\s*[:=]?\s*(\d+(?:\.\d+)?|\.\d+)\s*(%?)", re.I)
_PREFIX = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:(?:short\s+)?answer|final answer|the answer is|answer is|reply)\s*[:\-]?\s*",
    re.I,
)

LETTERS = "ABCDEFGHIJ"
HEDGED_CAP = 0.5


@dataclass
class ParsedReply:
    answer: str  # cleaned; "" when the model abstained or said nothing usable
    confidence: float | None  # what it reported, in [0, 1]; None when it reported none
    abstained: bool
    letter: int | None  # the option it picked (0-based), when options were given


def parse_reply(text: str, n_options: int = 0, options: Sequence[str] = ()) -> ParsedReply:
    """Read a model reply; never raises. Malformed or empty replies come back as abstentions
    so the caller falls back to extractive answers and retrieval evidence."""
    raw = text if isinstance(text, str) else ""
    raw = _CONTROL.sub("", raw)
    confidence: float | None = None
    m = _CONFIDENCE.search(raw)
    if m:
        try:
            value = float(m.group(1))
            if m.group(2) == "%" or value > 1.0:
                value /= 100.0
            if math.isfinite(value):
                confidence = min(1.0, max(0.0, value))
        except ValueError:
            confidence = None
        raw = raw[: m.start()] + raw[m.end() :]
    lines = [ln.strip() for ln in raw.splitlines() if ln.strip()]
    # "The answer is: X" on a later line is the model's own conclusion: prefer it.
    chosen = next((ln for ln in reversed(lines) if re.match(r"^\s*the answer is\b", ln, re.I)), None)
    answer = chosen or (lines[0] if lines else "")
    answer = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", answer)
    answer = _PREFIX.sub("", answer)
    answer = answer.strip().strip("\"'“”‘’").strip()
    answer = re.sub(r"\s+", " ", answer)[:500]

    letter = _parse_letter(raw, answer, n_options, options) if n_options else None
    hedged = bool(_ABSTAIN.search(answer))
    leftover = set(content_terms(_ABSTAIN.sub("", answer))) - _ABSTAIN_FILLER
    abstained = not re.search(r"\w", answer) or (hedged and not leftover)
    if abstained:
        answer = ""
    elif hedged:
        confidence = min(confidence if confidence is not None else 1.0, HEDGED_CAP)
    return ParsedReply(answer=answer, confidence=confidence, abstained=abstained, letter=letter)


def _parse_letter(raw: str, answer: str, n: int, options: Sequence[str]) -> int | None:
    letters = LETTERS[:n]
    patterns = (
        rf"^\s*\(?([{letters}])\)?\s*(?:[.):]|$)",
        rf"\b(?:answer|option|choice)\s*(?:is\s*)?[:\-]?\s*\(?([{letters}])\b",
        rf"^\s*\(?([{letters}])\)?\s",
    )
    for pat in patterns:
        m = re.search(pat, answer) or re.search(pat, raw, re.M)
        if m:
            return letters.index(m.group(1))
    # no letter: maybe it wrote an option out
    if options and answer:
        said = term_set(answer)
        best, best_share = None, 0.0
        for i, o in enumerate(options):
            share = overlap(content_terms(o), said) if content_terms(o) else 0.0
            if share > best_share:
                best, best_share = i, share
        if best is not None and best_share >= 0.99:
            return best
    return None


