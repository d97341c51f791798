"""Questions that ask *whether*: "Was there a picture of a cat on screen?", "Did anyone
mention the weather?", "Was there music?".

The answer to such a question is a yes with the moment that shows it, or nothing. Moment
search (retrieval/moments.py) already knows where a thing was surely said, shown, written or
heard and where it is only guessed at; the yes rests on its best moment when that moment
quotes every thing the question names. Anything less (a picture only guessed at, a sentence
that only sounds like the words, a moment naming one of two things) is left to the ordinary
answer path, which refuses what it cannot support: the extracted phrase a "what" question
would get ("panning background noise", "Probably a cat …") is no answer to "whether".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from episodic.core.query import Moment
from episodic.reasoning.answer import Draft
from episodic.retrieval.detailed import MODALITY_LABEL, Unit
from episodic.retrieval.moments import holds_all, surely_holds
from episodic.retrieval.query_analysis import overlap, term_set

# what a yes rests on: a moment quoting every thing asked about, as surely as a direct quote;
# on the ten dev stores (benchmarks/bench_yes_no.py) 130 yes answers, all to things that
# happened, 127 citing the right moment, and no yes to 100 things that never happened
YES_CONFIDENCE = 0.9
# the moments looked at: the first of them surely holding every thing asked about answers
# ("Look, the delivery van is here." ranked below two sentences about a delivery man)
YES_LOOKED = 5
# a whether-question the moments could not say yes to keeps the ordinary answer only when what
# it rests on holds more than this share of the things asked about ("Could you hear a siren?"
# is not answered by "music playing", "a sign saying PLATFORM 9" by "PLATFORM 18"; "… OPEN
# UNTIL 10 PM …" still is by the sign read "OPEN UNTIL 1O PM")
KEEP_OVERLAP = 0.5
_MATCHED = re.compile(r"\s*\(matched: [^)]*\)")
# "There is no luggage trolley again.": the thing said not to be there is no yes to "was there …"
_NEGATION = re.compile(r"\b(?:no|not|never|without|none|nobody|nothing)\b|n['’]t\b", re.I)
NEGATION_REACH = 3  # words before the thing asked about that a negation covers


def negates(text: str, terms: Sequence[str]) -> bool:
    """Whether ``text`` says one of ``terms`` (stems) is not there: a negation within
    NEGATION_REACH words before it."""
    words = re.findall(r"[A-Za-z'’]+", text)
    for i, w in enumerate(words):
        if term_set(w) & set(terms):
            before = " ".join(words[max(0, i - NEGATION_REACH):i])
            if _NEGATION.search(before):
                return True
    return False
_LABEL_OF = {label: modality for modality, label in MODALITY_LABEL.items()}


def _modality(why: str) -> str:
    """The modality a moment's ``why`` opens with ("speech: …" → speech; "heard: …" → sound)."""
    head = why.split(":", 1)[0].split(",")[0].strip()
    return _LABEL_OF.get(head, "summary")


# "did anyone mention / say / talk about X?" asks about words: "I can't hear the printer" is a mention
_ABOUT_SAYING = re.compile(r"\b(?:mention\w*|said|say|says|saying|talk\w*|spoke|speak\w*|discuss\w*)\b", re.I)


def asks_about_words(question: str) -> bool:
    """Whether a whether-question asks if something was said (a negated mention still is one)."""
    return bool(_ABOUT_SAYING.search(question))


def yes_answer(terms: Sequence[str], moments: Sequence[Moment], about_words: bool = False) -> Draft | None:
    """"Yes: speech: "…" (cam, 97.4–100.3 s)" from the first of ``moments`` (best first) that
    surely holds every one of ``terms`` (the question's content stems) and, unless the question
    is ``about_words``, does not say it was not there; ``None`` when none does."""
    best = next((m for m in moments[:YES_LOOKED]
                 if surely_holds(m, list(terms)) and (about_words or not negates(m.why, terms))), None)
    if best is None:
        return None
    why, unit = moment_evidence(best)
    return _yes(f"Yes: {why}", unit, {"moment": round(float(best.score), 4)})


def moment_evidence(moment: Moment) -> tuple[str, Unit]:
    """A moment's reason as shown ("speech: "…"", its match notes left out) and as evidence."""
    why = _MATCHED.sub("", moment.why).strip()
    unit = Unit(moment.stream_id, moment.segment_id, moment.t_start, moment.t_end, _modality(moment.why),
                why.split(": ", 1)[-1].strip('"'), snippet_uri=moment.snippet_uri, score=moment.score)
    return why, unit


def yes_from_evidence(terms: Sequence[str], draft: Draft, about_words: bool = False) -> Draft | None:
    """The ordinary answer to a whether-question, as a yes, when the evidence it rests on
    (said, written, seen or heard; not a summary) holds every one of ``terms``: "Look, the
    lawn mower is here." is a yes to "Did anyone mention the lawn mower?", not "Look"."""
    if not draft.found or not draft.support:
        return None
    unit = draft.support[0]
    if (unit.modality not in _LABEL_OF.values() or unit.modality == "summary" or not holds_all(unit.text, list(terms))
            or (not about_words and negates(unit.text, terms))):
        return None
    return _yes(f'Yes: {MODALITY_LABEL[unit.modality]}: "{unit.text.strip()}"', unit, {})


def _yes(answer: str, unit: Unit, caps: dict[str, float]) -> Draft:
    return Draft(answer=f"{answer} ({unit.stream_id}, {unit.t_start:.1f}–{unit.t_end:.1f} s)",
                 confidence=YES_CONFIDENCE, support=[unit], source="extract",
                 caps={"route": 12.0, "span": 1.0, **caps})


def beside_the_question(terms: Sequence[str], draft: Draft) -> bool:
    """Whether an ordinary answer to a whether-question rests on evidence holding too few of
    ``terms`` (KEEP_OVERLAP or less) to tell whether it happened."""
    if not terms or not draft.support:
        return False
    return overlap(list(terms), term_set(draft.support[0].text)) <= KEEP_OVERLAP
