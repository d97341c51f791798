"""A name heard as no name, heard again from the audio among the names the same recording
says elsewhere (issue 12, items 2 and 6).

People named in a recording are usually named more than once, and a recogniser that mishears
a name in one sentence often hears it right in another. "Whom should you ask about the
backpack?" recalled "Ask Priyot if you need the backpack." while the same recording says "The
ticket inspector and Priya are getting together at ten to one.". A word that is no known given
name (retrieval/given_names.py) is a poor answer to "who?", and the names said near it in the
same stream that a recogniser may have written as that word (:func:`heard_as`: the same first
sound and half the sounds or nearer, or one sound shorter) are few: each is put in that word's
place and scored against the sentence's audio (retrieval/word_set_hearing.py), with the word as
transcribed competing too. A name that leads both by ``NAME_MARGIN`` (1 in total
log-probability, below the options' 3 because it must also sound like the word heard) answers,
for this question only, as a hinted answer (confidence capped like any answer resting on words
the audio was asked about); when the audio carries the word as heard, or no name leads, nothing
changes. "Ramen" for "Ravi" ("Ramen is repairing the feeding bucket.") is left as heard: the two
do not sound alike enough to be tried.

When: a question asking for a name (``QuestionShape.focus`` "name"), answered from a transcript
sentence whose name is no known given name, in a stream that names, within ten minutes of it,
someone who sounds like it and is not the question's own (at most ``MAX_NAMES``, most said
first).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from episodic.retrieval.detailed import Unit
from episodic.retrieval.given_names import is_given_name
from episodic.retrieval.option_audio import words_of
from episodic.retrieval.text_match import (
    clipped_name,
    loosely_alike,
    not_everyday,
    sounds_alike,
    uncommon_given_name,
)
from episodic.retrieval.word_set_hearing import Slots, WordSetListener

MAX_NAMES = 6  # names said elsewhere tried in the word's place
NAME_MARGIN = 1.0  # lead in total log-probability over the word as heard and every other name
SOURCE = "names said elsewhere scored against the audio"
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")


def no_known_name(name: str) -> bool:
    """Whether none of the words of an answer's name is a known given name ("Priyot",
    "Ramen"; not "Priya", "Sophie")."""
    words = re.findall(r"[A-Za-z]+", name)
    return bool(words) and not any(is_given_name(w) for w in words)


def names_said(units: Sequence[Unit], not_these: Collection[str] = (), like: str = "") -> list[str]:
    """The known given names said in ``units`` (speech), most said first: capitalised, and
    either no everyday English word or one that is a name nonetheless ("Grace", "Mark"), never
    one of ``not_these`` or a name that sounds like one of them (the question's own people);
    with ``like``, only those a recogniser may have written as that word ("Priya" for
    "Priyot": the same first sound and half the sounds, or nearer)."""
    counts: dict[str, int] = {}
    for u in units:
        if u.modality != "speech":
            continue
        for w in _CAPITALISED.findall(u.text):
            if is_given_name(w) and (not_everyday(w) or uncommon_given_name(w)):
                counts[w] = counts.get(w, 0) + 1
    out = [w for w in sorted(counts, key=lambda w: (-counts[w], w))
           if not any(w.lower() == n.lower() or sounds_alike(w, n) or loosely_alike(w, n) for n in not_these)
           and (not like or (w.lower() != like.lower() and heard_as(w, like)))]
    return out[:MAX_NAMES]


def heard_as(name: str, word: str) -> bool:
    """Whether a recogniser may have written ``name`` as ``word`` (each a single word, or the
    first word of ``word``)."""
    first = (re.findall(r"[A-Za-z]+", word) or [""])[0]
    return bool(first) and (sounds_alike(name, first) or loosely_alike(name, first) or clipped_name(name, first))


def slots_of(heard: str) -> Slots:
    """The window of a sentence's words that holds ``heard`` (one or more words), as a slot
    function for :class:`NameListener`."""
    wanted = [w.lower() for w in words_of(heard)]

    def slots(words: Sequence[str], _question: str, _options: Sequence[str]) -> list[tuple[int, int]]:
        plain = [w.lower().strip(".,;:!?'\"") for w in words]
        n = len(wanted)
        return [(i, n) for i in range(len(plain) - n + 1) if n and plain[i : i + n] == wanted][:1]

    return slots


class NameListener(WordSetListener):
    """Hears which of the names a stream says elsewhere a misheard name was; one per
    :class:`MemoryQA` (its set is given per question)."""

    kind = "name"
    source = SOURCE
    # the name must also sound like the word heard, evidence the audio alone need not repeat:
    # "Priya" led "Priyot" by 1.7 in "Ask … if you need the backpack." (a likelihood ratio of 5)
    margin = NAME_MARGIN

    @staticmethod
    def slots(words: Sequence[str], question: str, options: Sequence[str]) -> list[tuple[int, int]]:
        return []  # no set of its own: each question gives its names and slot
