"""Scoring each given option against the audio itself (issue 12, item 2: "scoring each option
against the audio itself is welcome").

A multiple-choice question about speech gives the candidates: "In what room is the flower
show? 312, 316, 213, 131". The transcript may hold the sentence garbled ("The flow ashore is
in room pre-tweil."), so no option matches its words, yet the audio still says "three
twelve". So each option is put into the transcript sentence where its answer must have been
(the *slot*), and the re-listening model scores each resulting sentence against the same audio
by forced alignment (mean token log-probability, `TranscriptScorer`): "… in room 312" −1.42,
"… in room 316" −2.09. The option whose sentence the audio carries clearly best is heard.

The slot: windows of one to three words of the sentence that hold none of the question's
words ("flower", "show", "room" are the question's, the answer is elsewhere), ranked by how
much they look like some option, written or spoken ("pre-tweil" ~ "three twelve", "blew" ~
"blue"); the best few are tried, every option in each, and an option keeps its best sentence.
Only short options (a name, a number, a time, a colour: at most ``MAX_OPTION_WORDS`` words)
are scored: a long option ("who takes care of the clipboard") is a topic, not a slot filler.

Cost: one encoder pass and ``windows × options`` alignments (≈ 40 ms each for Whisper base on
this CPU), so it runs only within the request's time and is skipped when the deadline is near.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from episodic.retrieval.query_analysis import term_set

MAX_OPTION_WORDS = 4
MAX_WINDOW_WORDS = 3
WINDOWS_TRIED = 4  # slot candidates scored per question (they may overlap: "2", "2 door team")
MARGIN = 0.3  # mean log-probability lead of the best option's sentence to call it heard

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
         "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD = re.compile(r"[\w'’:.$£€%-]+")


def number_words(n: int) -> str:
    """0..9999 in words ("three hundred twelve")."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10 - 2] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + number_words(rest))
    rest = n % 1000
    return number_words(n // 1000) + " thousand" + ("" if rest == 0 else " " + number_words(rest))


def spoken_forms(option: str) -> list[str]:
    """How an option may sound: as written, and numbers said the usual ways ("312" → "three
    hundred twelve", "three twelve"; "9:35" → "nine thirty five")."""
    text = " ".join(option.lower().split())
    forms = [text]
    m = re.fullmatch(r"(\d{1,2})[:.](\d{2})", text)
    if m:
        h, mi = int(m.group(1)), int(m.group(2))
        forms.append(number_words(h) + (" o'clock" if mi == 0 else " oh " + _ONES[mi] if mi < 10 else " " + number_words(mi)))
        return forms
    digits = re.findall(r"\d+", text)
    if digits:
        said = text
        for d in digits:
            n = int(d)
            if n >= 10000:
                continue
            said = said.replace(d, number_words(n), 1)
        forms.append(said)
        for d in digits:  # "312" is said "three twelve" as often as "three hundred twelve"
            n = int(d)
            if 100 <= n < 10000 and n % 100:
                forms.append(text.replace(d, f"{number_words(n // 100)} {number_words(n % 100)}", 1))
    return list(dict.fromkeys(forms))


def words_of(text: str) -> list[str]:
    return _WORD.findall(text)


def slot_windows(words: Sequence[str], question: str, options: Sequence[str],
                 limit: int = WINDOWS_TRIED) -> list[tuple[int, int]]:
    """(start, length) of the windows most likely to hold the answer, best first."""
    asked = term_set(question)
    forms = [f for o in options for f in spoken_forms(o)]
    ranked: list[tuple[float, int, int]] = []
    for i in range(len(words)):
        for n in range(1, MAX_WINDOW_WORDS + 1):
            if i + n > len(words):
                break
            window = " ".join(words[i : i + n])
            if term_set(window) & asked:
                break  # a question word is an anchor, not the answer: longer windows hold it too
            low = window.lower().strip(".,;:!?")
            sim = max((SequenceMatcher(None, low, f).ratio() for f in forms), default=0.0)
            ranked.append((sim, i, n))
    ranked.sort(key=lambda r: (-r[0], r[2], r[1]))
    return [(i, n) for _, i, n in ranked[:limit]]


@dataclass
class OptionHearing:
    """What the audio said about each option (``Trace.notes["options_heard"]``)."""

    scores: list[float | None] = field(default_factory=list)  # best sentence per option
    sentences: list[str] = field(default_factory=list)
    heard: int | None = None  # the option the audio carries clearly best, if any
    margin: float = 0.0
    reason: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"scores": self.scores, "sentences": self.sentences, "heard": self.heard,
                "margin": round(self.margin, 4), "reason": self.reason}


def scoreable(options: Sequence[str]) -> bool:
    """Options short enough to fill a slot in a sentence."""
    return len(options) >= 2 and all(0 < len(o.split()) <= MAX_OPTION_WORDS for o in options)


def hear_options(score, encoded, sentence: str, question: str, options: Sequence[str],
                 language: str = "en", before: str = "", after: str = "") -> OptionHearing:
    """Score every option in the likely slots of ``sentence`` against the audio.

    ``score(encoded, texts, language)`` is :meth:`retrieval.transcript_scorer.TranscriptScorer.score`;
    ``encoded`` the audio's encoder output. ``before``/``after``: what the audio says around
    the sentence (the neighbouring transcript pieces it also holds), so the whole audio is
    aligned to a whole text and the sentence's own estimated times cannot cut the answer off."""
    out = OptionHearing(scores=[None] * len(options), sentences=[""] * len(options))
    words = words_of(sentence)
    windows = slot_windows(words, question, options)
    if not words or not windows:
        out.reason = "no slot"
        return out
    for i, n in windows:
        texts = [" ".join(filter(None, [before, *words[:i], o, *words[i + n :], after])) for o in options]
        for k, (text, s) in enumerate(zip(texts, score(encoded, texts, language), strict=True)):
            if s is not None and (out.scores[k] is None or s > out.scores[k]):
                out.scores[k], out.sentences[k] = round(float(s), 4), text
    scored = sorted((s, k) for k, s in enumerate(out.scores) if s is not None)
    if len(scored) < 2:
        out.reason = "nothing scored"
        return out
    (second, _), (best, k) = scored[-2], scored[-1]
    out.margin = best - second
    if out.margin >= MARGIN:
        out.heard, out.reason = k, "heard"
    else:
        out.reason = "too close"
    return out
