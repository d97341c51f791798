"""The minutes of a time told as "… past one" or "… to six", misheard, heard from the audio
(issue 12, items 2 and 6).

"When does Henrik meet the pastry chef?" recalls "Henry is leaving the pastry chef at Florida
past one.": the hour is there, the minutes are a word that is no number. Re-listening with the
question as a prompt kept "Florida"; Whisper tiny.en, the second opinion, heard "Closure Past
One". But minutes told that way are one of six words (quarter, half, five, ten, twenty,
twenty-five), so the question brings its own options, scored in that word's place against the
sentence's audio (retrieval/word_set_hearing.py): on that dev sentence "quarter" led every other
by 10.8 (log-probability), "twenty" came next.

The slot: the word, or the two words, just before "past", "to" or "after" when an hour (1–12,
in digits or words) follows, and none of them is already a number, "quarter" or "half", a
function word or one of the question's words ("at Florida past one" → "Florida"; "ten past
one" → none), and the hour is no count ("talk to one of them"). Asked only as the second
opinion's first step, for a time question whose answer rests on a sentence holding no clock
time read as such (``second_listen.wants_second_opinion``).
"""

from __future__ import annotations

from collections.abc import Sequence

from episodic.retrieval.query_analysis import STOPWORDS, term_set
from episodic.retrieval.text_match import canonical_tokens
from episodic.retrieval.word_set_hearing import WordSetListener

# how minutes are said before "past" and "to" ("half" only before "past"; before "to" it is
# scored too, and simply loses)
MINUTE_WORDS = ("quarter", "half", "five", "ten", "twenty", "twenty-five")
SOURCE = "minutes scored against the audio"
SLOTS_TRIED = 3
_LINKS = frozenset({"past", "to", "after"})
_HOUR_WORDS = frozenset({"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                         "eleven", "twelve"})


def _bare(word: str) -> str:
    return word.lower().strip(".,;:!?\"'")


def _an_hour(word: str) -> bool:
    w = _bare(word)
    return w in _HOUR_WORDS or (w.isdigit() and 1 <= int(w) <= 12)


def _already_minutes(word: str) -> bool:
    """A number (digits or words), "quarter" or "half": minutes heard, nothing to look for."""
    w = _bare(word)
    return w in ("quarter", "half") or any(t[:1].isdigit() for t in canonical_tokens(w))


def minute_slots(words: Sequence[str], question: str, _options: Sequence[str] = ()) -> list[tuple[int, int]]:
    """(start, length) of the windows of ``words`` where minutes told before "past"/"to" may
    have been misheard, nearest the link first (see the module doc); empty when there is none."""
    asked = term_set(question)
    out: list[tuple[int, int]] = []
    for j in range(1, len(words) - 1):
        if _bare(words[j]) not in _LINKS or not _an_hour(words[j + 1]):
            continue
        if j + 2 < len(words) and _bare(words[j + 2]) == "of" and words[j + 1][-1:] not in ".,;:!?":
            continue  # "talk to one of them": a count, not an hour
        for n in (1, 2):
            window = words[j - n : j]
            if len(window) < n or any(
                _already_minutes(w) or _bare(w) in STOPWORDS or term_set(w) & asked for w in window
            ):
                break
            out.append((j - n, n))
    return out[:SLOTS_TRIED]


class ClockListener(WordSetListener):
    """Hears the minutes a recalled sentence's audio carries before "past" or "to"; one per
    :class:`MemoryQA`."""

    words = MINUTE_WORDS
    slots = staticmethod(minute_slots)
    kind = "minutes"
    source = SOURCE
