"""How well evidence fits a question: key names and objects covered, on-screen text matched,
the modality asked about, homophones of an option's words (signals the answerer's confidence
rests on)."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence

from episodic.core.query import QueryType
from episodic.core.records import FRAME_COLOURS
from episodic.reasoning.short_answer import SUMMARY_LABELS
from episodic.retrieval.detailed import Unit, fuzzy_found
from episodic.retrieval.query_analysis import (
    GENERIC_QUESTION_WORDS,
    QueryAnalysis,
    overlap,
    stem,
    term_set,
)
from episodic.retrieval.text_match import (
    homophone_hits,
    loosely_alike,
    may_be_name_at_start,
    name_words,
    onset_misheard,
    sounds_alike,
    teen_ty_twin,
)

KEY_NAME_MISSING = 0.0  # a name the question asks about ("Oxford") is nowhere in the evidence
KEY_RARE_MISSING = 0.3  # …a rare word is missing (it may be paraphrased)
# …a name is missing, but the sentence the answer comes from holds everything else asked about
# and no other name: the name was probably misheard ("Hannah put …" heard as "And put …")
KEY_NAME_MISHEARD = 0.35
LABEL_FOR_SPEECH_CAP = 0.1  # an ImageNet label string is never what someone said
OBJECT_ELSEWHERE = 0.2  # …it is in the evidence, but not where the answer comes from
OBJECT_MISSING = 0.0  # a thing the question is about ("the umbrella") is nowhere in the evidence
OCR_CONTEXT_WEIGHT = 0.75
OCR_NO_TERMS_SUPPORT = 0.5
OFF_MODALITY_CAP = 0.6  # "what was said" answered from a picture description or a summary

log = logging.getLogger(__name__)

def _ramp(x: float, lo: float, hi: float) -> float:
    if not math.isfinite(x):
        return 0.0
    return min(1.0, max(0.0, (x - lo) / (hi - lo)))


def ocr_similarity(unit: Unit, analysis: QueryAnalysis) -> float:
    """A bare "PLATFORM 7" resembles no question. When on-screen text is what is asked for,
    the question's words around it ("…at the station") stand in for the cosine, at 3/4
    weight; a question with no content words at all ("what does the first slide say?") gives
    any on-screen text half support (position cues have already ranked them)."""
    if not analysis.terms:
        return OCR_NO_TERMS_SUPPORT
    return OCR_CONTEXT_WEIGHT * unit.lex_context


def key_coverage(analysis: QueryAnalysis, units: Sequence[Unit]) -> float:
    """How far the question's names and rare words are found anywhere in ``units`` (exactly
    or tolerantly): 1 when all are, KEY_NAME_MISSING when a name is missing, else
    KEY_RARE_MISSING when a rare word is."""
    if not analysis.key_terms:
        return 1.0
    found: set[str] = set()
    for u in units:
        found |= u.support_terms
        if u.text:
            found |= fuzzy_found(analysis.question, analysis.key_terms, u.text, found)
    missing = [w for t, w in analysis.key_terms.items() if t not in found]
    if not missing:
        return 1.0
    return KEY_NAME_MISSING if any(w[:1].isupper() for w in missing) else KEY_RARE_MISSING


def key_coverage_at(analysis: QueryAnalysis, support: Unit, pool: Sequence[Unit]) -> float:
    """:func:`key_coverage` of the whole ``pool``, except that a name the question asks about
    must be where the answer comes from (``support``, its memory, its cue): "Where did Omar put
    the watering can?" is not answered from "Maria put the watering can by the compost heap."
    because Omar is named in another memory. A name missing there may still be misheard there
    (see :func:`name_maybe_misheard`)."""
    here = key_coverage(analysis, [support])
    if here in (1.0, KEY_NAME_MISSING):  # all found there (so in the pool), or a name missing there
        return here
    return key_coverage(analysis, pool)


def name_maybe_misheard(analysis: QueryAnalysis, unit: Unit | None) -> bool:
    """Whether a name the question asks about may be in ``unit`` misheard: a sentence of
    speech (or a summary quoting one) with no name of its own, or only one that sounds
    loosely like the asked name. "Where is the wheelbarrow Hannah put down?" / "And put the
    wheelbarrow by the tool shed.": yes; "When is Felix's appointment with the fisherman?" /
    "At quarter past 8, Philip's turn an appointment with the fisherman.": yes; "When does the
    train to Oxford leave?" / "The train to London leaves at 11": no, it is about London."""
    if unit is None or unit.modality not in ("speech", "summary"):
        return False
    names = {t for t, w in analysis.key_terms.items() if w[:1].isupper()}
    # the words that say what kind of fact is wanted ("what number of …", "this morning")
    # need not be in the sentence: "You can pause 15 magazines" holds what "What number of
    # magazines did Lucas buy?" asks, with "Lucas bought" misheard
    rest = [t for t in analysis.terms if t not in names and t not in GENERIC_QUESTION_WORDS]
    if rest and overlap(rest, unit.support_terms) < MISHEARD_NAME_COVERAGE:
        return False  # "Where did Grace leave the cutting board?" / "Can't board the element …"
    asked = {stem(w.lower()) for w, _ in name_words(analysis.question)}
    asked_names = [w for t, w in analysis.key_terms.items() if w[:1].isupper()]
    for sentence in _SENTENCES.split(SUMMARY_LABELS.sub(" ", unit.text)):
        # "Don't forget, Putima has …": a contraction opens the sentence, no one named Don
        sentence = _CONTRACTION.sub(" ", sentence)
        for i, (word, capital) in enumerate(name_words(sentence)):
            if not capital or stem(word.lower()) in asked or word.lower() in _NOT_NAMES:
                continue
            if any(loosely_alike(word, name) or onset_misheard(word, name) for name in asked_names):
                continue  # "Felix" heard as "Philip's", "Ines" as "Denise": the asked name, misheard
            # "Daniel put …", "Grace put …" (a given name rarer than everyday words), not "And put …"
            if i > 0 or may_be_name_at_start(word):
                return False
    return True


_SENTENCES = re.compile(r"(?<=[.!?\"])\s+")
_CONTRACTION = re.compile(r"\b[A-Za-z]+(?:n['’]t|['’](?:ll|re|ve|m|d))\b")
_NOT_NAMES = frozenset({"i", "ok"})  # name_words gives words lower-cased
MISHEARD_NAME_COVERAGE = 1 / 2  # of the question's other content words, in the sentence itself


# What an option word found only as a homophone in the evidence ("blue" written "blew") counts
# for, against 1 for the word itself: enough to choose between options nothing else separates.


def homophone_stems(option: str, distinct: Sequence[str], text: str, found: set[str]) -> set[str]:
    """The ``distinct`` stems of ``option`` not in ``found`` whose word ``text`` holds as a
    homophone."""
    missing = {t for t in distinct if t not in found}
    if not missing:
        return set()
    words = [w for w, _ in name_words(option) if stem(w) in missing]
    # a number heard with the other ending ("15" written "50") is as good as a homophone
    numbers = {t for t in missing if teen_ty_twin(t) in found}
    return {stem(w) for w in homophone_hits(words, text)} | numbers


def holds_loosely(term: str, haystack: set[str]) -> bool:
    """``term`` (a stem) is in ``haystack`` exactly or as a word a recogniser could have
    misheard it as ("caretak" heard as "caremak"). Looser than key-term matching on purpose:
    here a match only keeps an answer from being refused."""
    return term in haystack or any(sounds_alike(term, h) for h in haystack if h[:1] == term[:1])


def object_coverage(analysis: QueryAnalysis, support: Unit | None, pool: Sequence[Unit]) -> float:
    """Whether the things the question is about (``analysis.object_terms``: "umbrella",
    "snow") are where the answer comes from: 1 when every one is in ``support``, its memory or
    its stream name; OBJECT_ELSEWHERE when one is only elsewhere in ``pool``; OBJECT_MISSING
    when one is in none of the evidence (the memory holds nothing about it)."""
    wanted = getattr(analysis, "object_terms", None) or []
    if not wanted:
        return 1.0
    here = support.support_terms if support is not None else set()
    missing = [t for t in wanted if not holds_loosely(t, here)]
    if not missing:
        return 1.0
    everywhere: set[str] = set()
    for u in pool:
        everywhere |= u.support_terms
    if all(holds_loosely(t, everywhere) for t in missing):
        return OBJECT_ELSEWHERE
    return OBJECT_MISSING


def about_something_else(analysis: QueryAnalysis, units: Sequence[Unit], found: Sequence[float]) -> list[bool]:
    """Per unit: whether it is about another thing than the question. A unit that holds none
    of the things the question is about (``analysis.object_terms``, exactly or misheard) is so
    when another unit holds all of them *and* more of the question's words (``found``: each
    unit's share of them). "Which room has the flower show moved to?" with "The poetry reading has
    moved to room 1 or 4." and "The flower shop has moved to room 16.": the first one's room
    is the poetry reading's, not an answer; option "104" is another thing's value there."""
    wanted = getattr(analysis, "object_terms", None) or []
    if not wanted or len(units) < 2:
        return [False] * len(units)
    held = [[holds_loosely(t, u.support_terms | (u.anchor.terms if u.anchor is not None else set()))
             for t in wanted] for u in units]
    holds_all = [all(h) for h in held]
    holds_none = [not any(h) for h in held]
    best_on_topic = max((f for f, h in zip(found, holds_all, strict=True) if h), default=None)
    if best_on_topic is None:
        return [False] * len(units)
    return [none and f < best_on_topic for none, f in zip(holds_none, found, strict=True)]


def colours_of_the_scene(analysis: QueryAnalysis, unit: Unit) -> bool:
    """Whether ``unit`` is a key frame whose colours say nothing about the thing a colour
    question asks about: the describer lists a frame's main colours ("a scene; colours: green,
    grey"), and unless the description names the thing ("a car; colours: red" for "what colour
    was the car?") those are the colours of whatever filled the frame. "What colour did Omar
    paint the spade?" is not answered "green" by a green wall while the painting sentence
    itself was misheard."""
    wanted = getattr(analysis, "object_terms", None) or []
    if unit.modality != "visual" or FRAME_COLOURS not in unit.text or not wanted:
        return False
    named = term_set(unit.text.split(FRAME_COLOURS, 1)[0])
    return not any(holds_loosely(t, named) for t in wanted)


def modality_fit(analysis: QueryAnalysis, unit: Unit) -> float:
    """1 when ``unit`` is evidence of the kind the question asks about; an ImageNet label
    for a question about speech scores almost nothing, a summary or other modality less."""
    if analysis.query_type is not QueryType.AUDIO:
        return 1.0
    if unit.modality in ("speech", "sound"):
        return 1.0
    if unit.modality == "visual":
        return LABEL_FOR_SPEECH_CAP
    return OFF_MODALITY_CAP


