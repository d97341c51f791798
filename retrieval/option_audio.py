"""Scoring each given option against the audio itself (issue 12, item 2: "scoring each option
against the audio itself is welcome").

A multiple-choice question about speech gives the candidates: "In what room is the flower
show? 312, 316, 213, 131". The transcript may hold the sentence garbled ("The flow ashore is
in room pre-tweil."), so no option matches its words, yet the audio still says "three
twelve". So each option is put into the transcript sentence where its answer must have been
(the *slot*), and the re-listening model scores each resulting sentence against the same audio
by forced alignment (`TranscriptScorer.loglik`). The option whose sentence the audio carries
clearly best is heard: its total log-probability leads by ``MARGIN`` (a likelihood ratio).
The total, not the mean per token: the sentences share everything but the option, and a mean
divides the option's difference by the length of that shared context ("Daniel be repairing
the wheelbarrow" led the best other name by 0.17 per token, under any usable mean margin, but
by 3.8 in total). On the three dev sets' name, colour, number and time questions (18 with a
recalled sentence) the total heard 12 right and left 3 undecided, the mean 10 and 5; the 3
heard wrong either way came from a recalled sentence about something else, which the caller
now skips (`listen_targets.about_the_question`).

The slot: windows of one to three words of the sentence that hold none of the question's
words, not even misheard ("flower", "show", "room" are the question's, the answer is
elsewhere; "care maker" is its caretaker), ranked by how much they look like some option,
written or spoken ("pre-tweil" ~ "three twelve", "blew" ~ "blue"); the best few are tried,
every option in each, each the ways it is said (``spoken_forms``: "12:10", "twelve ten", "ten
past twelve"), and an option keeps its best sentence. Only short options (a name, a number, a
time, a colour: at most ``MAX_OPTION_WORDS`` words) are scored: a long option ("who takes care
of the clipboard") is a topic, not a slot filler.

Cost: one encoder pass and ``windows × options × forms`` alignments (≈ 40 ms each for Whisper
base on this CPU), so it runs only within the request's time and is skipped when the deadline is near.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from episodic.retrieval.query_analysis import STOPWORDS, term_set
from episodic.retrieval.text_match import canonical_tokens, number_keys

MAX_OPTION_WORDS = 4
ANCHOR_LIKENESS = 0.8  # a window this much like a question word is that word misheard
MAX_FORMS = 3  # ways of writing one option tried ("12:10", "twelve ten", "ten past twelve")
MAX_WINDOW_WORDS = 3
WINDOWS_TRIED = 4  # slot candidates scored per question (they may overlap: "2", "2 door team")
# total log-probability lead of the best option's sentence to call it heard (e^3 ≈ 20× as
# likely); on dev, options in the right sentence led by ≥ 3.8 when right, ≤ 2.1 when wrong
MARGIN = 3.0

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
         "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD = re.compile(r"[\w'’:.$£€%-]+")
_TENS_THEN_ONES = re.compile(r"\b(" + "|".join(_TENS) + r")\s+(" + "|".join(_ONES[1:10]) + r")\b", re.I)


def number_words(n: int) -> str:
    """0..9999 in words, as English writes them ("three hundred twenty-one"): the recogniser
    scores a text, and "thirty nine" is rarer writing than "thirty-nine" (≈ 3 log-probability
    worse in one dev sentence whose audio said it), which hid the option the audio carried
    behind those written in digits."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10 - 2] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + number_words(rest))
    rest = n % 1000
    return number_words(n // 1000) + " thousand" + ("" if rest == 0 else " " + number_words(rest))


def _clock_forms(h: int, m: int) -> list[str]:
    """A time as written and said: "7:50", "seven fifty", "ten to eight"."""
    said = number_words(h) + (" o'clock" if m == 0 else f" oh {_ONES[m]}" if m < 10 else f" {number_words(m)}")
    nxt = number_words(h % 12 + 1)
    if m == 15:
        phrase = f"quarter past {number_words(h)}"
    elif m == 30:
        phrase = f"half past {number_words(h)}"
    elif m == 45:
        phrase = f"quarter to {nxt}"
    elif 0 < m < 30:
        phrase = f"{number_words(m)} past {number_words(h)}"
    elif m > 30:
        phrase = f"{number_words(60 - m)} to {nxt}"
    else:
        phrase = ""
    return [f"{h}:{m:02d}", said, *([phrase] if phrase else [])]


def spoken_forms(option: str) -> list[str]:
    """How an option may sound or be written by the recogniser: as given, a time the ways
    people say it ("12:10" → "twelve ten", "ten past twelve"; "ten to eight" → "7:50"), a
    number in words or digits ("312" → "three hundred twelve", "three twelve"; "207" → "two
    oh seven"; "thirteen" → "13"). The audio carries one of them; the option is scored by its best."""
    given = " ".join(option.split())  # as written: a name keeps its capital, which the model expects
    text = given.lower()
    forms = [given]
    keys = canonical_tokens(text)
    clock = re.fullmatch(r"(\d{1,2})[:.](\d{2})", text) or (
        re.fullmatch(r"(\d{1,2}):(\d{2})", keys[0]) if len(keys) == 1 else None)
    if clock:  # the whole option is a time, however written
        h, mi = int(clock.group(1)), int(clock.group(2))
        forms.extend(_clock_forms(h, mi))
        return list(dict.fromkeys(forms))
    digits = re.findall(r"\d+", text)
    if not digits:
        if any(k.isdigit() for k in keys):  # "thirteen", "twenty three dollars"
            forms.append(" ".join(keys))
            forms.append(_TENS_THEN_ONES.sub(r"\1-\2", given))  # … as written: "twenty-three dollars"
        return list(dict.fromkeys(forms))
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
            # …and "207" "two oh seven", never "two seven"
            tail = number_words(n % 100) if n % 100 >= 10 else f"oh {number_words(n % 100)}"
            forms.append(text.replace(d, f"{number_words(n // 100)} {tail}", 1))
    return list(dict.fromkeys(forms))


def words_of(text: str) -> list[str]:
    """The sentence's words, a hyphenated one as its parts: a recogniser that mishears a value
    often joins it to the word before ("costs forty-five" written "cost-sported Ive"), and the
    slot is then the part after the hyphen, never the question's own word before it."""
    return [p for w in _WORD.findall(text) for p in (w.split("-") if re.search(r"[a-z]-[a-z]", w, re.I) else [w]) if p]


def _digits_said(text: str) -> str:
    """``text`` with each number under 10,000 in words: "2 for salmon" → "two for salmon"."""
    return re.sub(r"\d+", lambda m: number_words(int(m.group())) if len(m.group()) <= 4 else m.group(), text)


def slot_windows(words: Sequence[str], question: str, options: Sequence[str],
                 limit: int = WINDOWS_TRIED) -> list[tuple[int, int]]:
    """(start, length) of the windows most likely to hold the answer, best first; a window of
    length 0 is a place to insert the option (after the last word)."""
    asked = term_set(question)
    # the question's longer words as letters, to know them misheard ("care maker" = caretaker)
    spelled = {w for w in re.findall(r"[a-z]{5,}", question.lower()) if w not in STOPWORDS}
    forms = [f for o in options for f in spoken_forms(o)]
    ranked: list[tuple[float, int, int]] = []
    for i in range(len(words)):
        for n in range(1, MAX_WINDOW_WORDS + 1):
            if i + n > len(words):
                break
            window = " ".join(words[i : i + n])
            low = window.lower().strip(".,;:!?")
            letters = re.sub(r"[^a-z]", "", low)
            if term_set(window) & asked or any(
                SequenceMatcher(None, letters, w).ratio() >= ANCHOR_LIKENESS for w in spelled
            ):
                break  # a question word is an anchor, not the answer: longer windows hold it too
            # as written and with its digits said ("2 for salmon" is "two for salmon", near
            # "two oh seven"; as written it looks like no option)
            said = _digits_said(low)
            sim = max((SequenceMatcher(None, w, f).ratio() for f in forms for w in {low, said}), default=0.0)
            ranked.append((sim, i, n))
    ranked.sort(key=lambda r: (-r[0], r[2], r[1]))
    out = [(i, n) for _, i, n in ranked[:limit]]
    if words and limit > 0 and _all_values(options) and not number_keys(" ".join(words)):
        # a sentence that says no value where every option is one may have lost it at its end
        # (a re-hearing stopped after "The night train is in room"): after its last word,
        # second in line, the likeliest window staying first
        out = [*out[:1], (len(words), 0), *out[1:]][:limit]
    return out


def _all_values(options: Sequence[str]) -> bool:
    """Whether every option (at least two) is a number, a time or a price."""
    return len(options) >= 2 and all(number_keys(o) for o in options)


# the (start, length) windows of a sentence's words to try an option in, likeliest first
Slots = Callable[[Sequence[str], str, Sequence[str]], list[tuple[int, int]]]


@dataclass
class OptionHearing:
    """What the audio said about each option (``Trace.notes["options_heard"]``)."""

    scores: list[float | None] = field(default_factory=list)  # best sentence per option
    sentences: list[str] = field(default_factory=list)
    heard: int | None = None  # the option the audio carries clearly best, if any
    margin: float = 0.0
    reason: str = ""
    heard_in: str = ""  # the recalled sentence (as transcribed) the options were put into
    # per option, the recalled sentence alone with the option in its best slot (no context)
    filled: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"scores": self.scores, "sentences": self.sentences, "heard": self.heard,
                "margin": round(self.margin, 4), "reason": self.reason, "heard_in": self.heard_in}


def scoreable(options: Sequence[str]) -> bool:
    """Options short enough to fill a slot in a sentence."""
    return len(options) >= 2 and all(0 < len(o.split()) <= MAX_OPTION_WORDS for o in options)


def hear_options(score, encoded, sentence: str, question: str, options: Sequence[str],
                 language: str = "en", before: str = "", after: str = "",
                 slots: Slots | None = None) -> OptionHearing:
    """Score every option, each way it may be said, in the likely slots of ``sentence``
    against the audio; an option keeps its best sentence.

    ``score(encoded, texts, language)`` is :meth:`retrieval.transcript_scorer.TranscriptScorer.loglik`;
    ``encoded`` the audio's encoder output. ``before``/``after``: what the audio says around
    the sentence (the neighbouring transcript pieces it also holds), so the whole audio is
    aligned to a whole text and the sentence's own estimated times cannot cut the answer off.
    ``slots(words, question, options)``: the windows tried, likeliest first (:func:`slot_windows`
    unless given)."""
    out = OptionHearing(scores=[None] * len(options), sentences=[""] * len(options), heard_in=sentence,
                        filled=[""] * len(options))
    words = words_of(sentence)
    windows = (slots or slot_windows)(words, question, options)
    if not words or not windows:
        out.reason = "no slot"
        return out
    forms = [(k, form) for k, o in enumerate(options) for form in spoken_forms(o)[:MAX_FORMS]]
    for i, n in windows:
        alone = [" ".join([*words[:i], form, *words[i + n :]]) for _, form in forms]
        texts = [" ".join(filter(None, [before, text, after])) for text in alone]
        for (k, _), text, filled, s in zip(forms, texts, alone, score(encoded, texts, language), strict=True):
            if s is not None and (out.scores[k] is None or s > out.scores[k]):
                out.scores[k], out.sentences[k], out.filled[k] = round(float(s), 4), text, filled
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
