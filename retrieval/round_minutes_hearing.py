"""The "five" a time written with round minutes may have lost, heard from the audio (issue 12,
items 2 and 6).

Whisper base writes "seven thirty-five" as "7.30", "five twenty-five" as "5.20 a.m." and "four
thirty-five" as "4.30pm" often enough that a time question answered with round minutes in
digits is worth a second hearing (``reasoning.short_answer.round_minutes_heard``). Whisper
tiny.en, the second opinion, mostly hears the same round time again. But what may have been
dropped is one word, so the question brings its own two options: the time as heard, and the
same time five minutes later (the "five" after "thirty" said), each put in the time's place
(with the word after it that may be that "five" misheard: "a.m.", "pm", "times") and scored
against the sentence's audio by forced alignment (retrieval/word_set_hearing.py, the options'
``MARGIN``). The later time answers only when the audio carries it clearly better; as a hinted
answer, for this question only (nothing is written to the store).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from episodic.retrieval.detailed import MemoryReader, Recall, Unit
from episodic.retrieval.option_audio import words_of
from episodic.retrieval.query_analysis import QueryAnalysis
from episodic.retrieval.second_listen import SecondListen
from episodic.retrieval.word_set_hearing import Slots, WordSetListener

SOURCE = "the minutes' dropped five scored against the audio"
# what a dropped "five" is written as, right after the time ("5.20 a .m.", "9.30 times")
_AFTER_TIME = frozenset({"a", ".m.", "a.m.", "am", "pm", "p.m.", "times", "time"})
_ROUND = re.compile(r"(\d{1,2})([.:])([1-5]0)(?:[ap]\.?m\.?)?[.,;:!?]*", re.I)


def _after_time(word: str) -> bool:
    """Whether ``word`` may be a dropped "five" misheard ("a", ".m.", "pm", "times."), the
    sentence's closing stop aside."""
    w = word.lower().strip(",;:!?")
    return w in _AFTER_TIME or w.rstrip(".") in _AFTER_TIME


def round_time_window(words: Sequence[str], hour: int, minutes: int) -> tuple[int, int] | None:
    """(start, length) of the words that write ``hour``:``minutes`` in digits ("7.30", "4.30pm")
    with what follows it that may be a dropped "five" misheard ("a", ".m.", "times"); None when
    the sentence does not write that time."""
    for i, w in enumerate(words):
        m = _ROUND.fullmatch(w)
        if m and int(m.group(1)) == hour and int(m.group(3)) == minutes:
            n = 1
            while i + n < len(words) and n < 3 and _after_time(words[i + n]):
                n += 1
            return i, n
    return None


def five_later(words: Sequence[str], window: tuple[int, int]) -> str:
    """The time in ``window`` five minutes later, written as heard ("7.30" → "7.35",
    "4.30pm" → "4.35")."""
    m = _ROUND.fullmatch(words[window[0]])
    if m is None:
        return ""
    return f"{m.group(1)}{m.group(2)}{int(m.group(3)) + 5}"


def as_heard(words: Sequence[str], window: tuple[int, int]) -> str:
    """The window's words as transcribed, without the sentence's closing stop."""
    i, n = window
    return " ".join(words[i : i + n]).rstrip(".,;:!?") or " ".join(words[i : i + n])


def fixed_slot(window: tuple[int, int]) -> Slots:
    """A slots function that always offers ``window`` (the time and what follows it)."""
    return lambda _words, _question, _options: [window]


class RoundMinutesListener(WordSetListener):
    """Hears whether a recalled sentence's audio says the round time as heard or five minutes
    later; the set is given per call (:meth:`listen`). One per :class:`MemoryQA`."""

    kind = "minutes"
    source = SOURCE

    def listen(self, heard: tuple[int, int], analysis: QueryAnalysis, question: str, unit: Unit, recall: Recall,
               reader: MemoryReader, rescore: Callable[[Unit], Unit], clean: Callable[[Unit], bool],
               remaining: Callable[[], float | None]) -> SecondListen | None:
        """:meth:`hear` with the time as heard and five minutes later as the set, in the
        time's place; None when the sentence does not write the time ``heard`` (hour, minutes)."""
        words = words_of(unit.text)
        window = round_time_window(words, *heard)
        if window is None:
            return None
        later = five_later(words, window)
        if not later:
            return None
        return self.hear(analysis, question, unit, recall, reader, rescore, clean, remaining,
                         words=[later], slots=fixed_slot(window), as_heard=as_heard(words, window))
