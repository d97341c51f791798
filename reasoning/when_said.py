"""Questions that ask *when in the recording* something was said or heard: "When was the
suitcase mentioned?", "At what point in the video did someone mention the apron?", "When was
the music heard?".

They ask for the recording's own time, not for a time someone said: "When does the ferry
leave?" wants "at 8:35" as heard, "When was the ferry mentioned?" wants "at 0:46 in
harbour-cam". The ordinary answer path looks for the text most like the question and then for a
phrase of the asked kind (a clock time), so it refused these or quoted whatever stood nearest
("The picture shows an animal" for the apron). Moment search (retrieval/moments.py) already
knows where a thing was surely said or heard; the answer is each of its first moments that
quotes every thing asked about, in the order they happened.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from episodic.core.query import Moment
from episodic.reasoning.answer import Draft
from episodic.reasoning.yes_no import moment_evidence, negates
from episodic.retrieval.moments import surely_holds

WHEN_LOOKED = 5  # the first this many moments are looked at (as for a whether-question)
WHEN_LISTED = 3  # … and at most this many of those holding everything asked are named
WHEN_CONFIDENCE = 0.9  # the moment quotes every thing asked about, as surely as a direct quote

# "when was X mentioned / heard?", "at what point (in the video) did someone mention X?",
# "how far into the recording was X talked about?"; not "when does X leave?", nor "when did
# Grace say she would come?" (a time she said), nor "when was X on screen?" (looked at frame by
# frame elsewhere, to the second)
_WHEN = (r"^\s*(?:when|at\s+what\s+(?:point|moment|second|minute|time)(?:\s+in\s+the\s+(?:video|recording|clip|"
         r"stream|footage))?|how\s+far\s+into\s+the\s+(?:video|recording|clip|stream|footage))\b")
_MENTION = (r"(?:mentioned|said|talked\s+about|spoken\s+about|spoken\s+of|discussed|brought\s+up|heard|named|"
            r"referred\s+to)")
_ACTIVE = (r"(?:mention|talk\s+about|speak\s+about|speak\s+of|discuss|bring\s+up|hear|name|refer\s+to)")
_PASSIVE_ASK = re.compile(rf"{_WHEN}.*\b(?:was|were|is|are|has\s+been|got)\b.*\b{_MENTION}(?:\s+again)?\s*\??\s*$", re.I)
_ACTIVE_ASK = re.compile(rf"{_WHEN}.*\b(?:did|does|do)\s+(?:someone|anyone|somebody|anybody|they|people|you|we|one)\s+"
                         rf"{_ACTIVE}\b", re.I)
_ABOUT_WORDS = re.compile(r"\b(?:mention\w*|said|talk\w*|spoken|speak|discuss\w*|brought|bring|named|name|refer\w*)\b", re.I)


def asks_when_said(question: str) -> bool:
    """Whether ``question`` asks when in the recording something was said or heard."""
    q = " ".join(question.split())
    return bool(_PASSIVE_ASK.search(q) or _ACTIVE_ASK.search(q))


def when_answer(terms: Sequence[str], moments: Sequence[Moment], question: str) -> Draft | None:
    """"At 0:46 in station-cam (speech: "…"); also at …" from the first WHEN_LOOKED of
    ``moments`` (best first) that surely hold every one of ``terms`` (the question's things),
    in time order; a moment saying the thing was not there counts only when the question asks
    about words ("When was the dog mentioned?" is answered by "There is no dog here."). None
    when no moment holds them all."""
    about_words = bool(_ABOUT_WORDS.search(question))
    held = [m for m in moments[:WHEN_LOOKED]
            if surely_holds(m, list(terms)) and (about_words or not negates(m.why, terms))]
    if not terms or not held:
        return None
    # one per stretch of time: a sentence and the summary quoting it are one mention
    distinct: list[Moment] = []
    for m in sorted(held, key=lambda m: (m.stream_id, m.t_start)):
        if distinct and distinct[-1].stream_id == m.stream_id and m.t_start < distinct[-1].t_end:
            continue
        distinct.append(m)
    shown = sorted(distinct, key=lambda m: -m.score)[:WHEN_LISTED]
    shown.sort(key=lambda m: (m.stream_id, m.t_start))
    parts, units = [], []
    for m in shown:
        why, unit = moment_evidence(m)
        parts.append(f"at {_clock(m.t_start)} in {m.stream_id} ({why}, {m.t_start:.1f}–{m.t_end:.1f} s)")
        units.append(unit)
    answer = parts[0][0].upper() + parts[0][1:] + "".join(f"; also {p}" for p in parts[1:])
    return Draft(answer=answer, confidence=WHEN_CONFIDENCE, support=units, source="extract",
                 caps={"route": 15.0, "span": 1.0, "moments": float(len(shown))})


def _clock(t: float) -> str:
    """Stream seconds as m:ss (h:mm:ss from an hour)."""
    s = int(round(max(0.0, t)))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"
