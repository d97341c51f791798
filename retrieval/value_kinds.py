"""A sentence described by the kind of fact it holds: "the colour of Tom's spade", "the price
of the tomato plant", "the time of the flower show".

Questions about order and moments name sentences by what they were about rather than by their
words, and the fact itself is what a recogniser most often gets right when it mishears the
rest: "Tom painted the spade red" heard as "on painted a stained red" still holds a colour,
"A tomato plant is thirty-four euros" heard as "At a motto planted in 34 Euro…" still a
price. A description that asks for a kind of value therefore partly matches a sentence that
carries a value of that kind; its other words (whose spade, which plant) still have to tell
such sentences apart.
"""

from __future__ import annotations

import re

from episodic.retrieval.query_analysis import COLOUR_WORDS, stem, tokens
from episodic.retrieval.text_match import alternative_keys, canonical_tokens

# kind markers are not words, so they can never be found as words of a sentence
COLOUR, PRICE, CLOCK = "~colour", "~price", "~time"
# a value of the kind asked counts half a word: any price is a price, so "the price of the
# magazine" is not placed at "the seed packet costs 32 pounds" by the price alone
KIND_WEIGHT = 0.5

_DESCRIBES = {
    COLOUR: frozenset({"colour", "color", "colours", "colors", "hue", "shade"}),
    PRICE: frozenset({"price", "prices", "cost", "costs", "costing", "priced", "fee", "charge"}),
    CLOCK: frozenset({"time", "o'clock"}),
}
# words for a thing that is said with a value of a kind, though they do not name the kind:
# an appointment or a meeting is told with its time ("The baker and Luca are getting together
# at 4.35" is "Luca's appointment with the baker"); the words stay words to find as well
_IMPLIES = {
    CLOCK: frozenset({"appointment", "appointments", "meeting", "meetings", "rendezvous"}),
}
_HOW_MUCH = re.compile(r"\bhow\s+much\b", re.I)
_WHEN_FIRST = re.compile(r"^\s*when\b", re.I)  # "when the soup tasting begins"

CURRENCY_WORDS = frozenset({
    "dollar", "dollars", "euro", "euros", "pound", "pounds", "cent", "cents", "pence", "penny",
    "quid", "bucks", "yen", "franc", "francs", "rupees", "rupee",
})
_CURRENCY_SIGN = re.compile(r"[$€£¥]\s?\d")
_SIGN_WORDS = {"$": "dollars", "€": "euros", "£": "pounds", "¥": "yen"}
_SIGNED_AMOUNT = re.compile(r"([$€£¥])\s?(\d+(?:[.,]\d+)?)")
_HOW_MANY = re.compile(r"\bhow many\s+([A-Za-z]+)", re.I)
_PRICE_VERB = frozenset({"cost", "costs", "price", "priced", "sells", "sold"})
_CLOCK_TOKEN = re.compile(r"^\d{1,2}:\d{2}$")
_CLOCK_WORDS = frozenset({"o'clock", "oclock", "noon", "midnight"})
_AM_PM = re.compile(r"\d\s*[ap]\.?\s?m\b", re.I)


def asked_kinds(description: str) -> frozenset[str]:
    """The kinds of value a description of a sentence asks about: "the colour of X" → colour,
    "the price of X" / "how much X costs" → price, "the time of X" / "when X starts" → time."""
    words = set(tokens(description))
    kinds = {kind for kind, names in _DESCRIBES.items() if words & names}
    kinds |= {kind for kind, names in _IMPLIES.items() if words & names}
    if _HOW_MUCH.search(description):
        kinds.add(PRICE)
    if _WHEN_FIRST.search(description):
        kinds.add(CLOCK)
    return frozenset(kinds)


def with_kinds(terms: list[str], description: str) -> tuple[list[str], frozenset[str]]:
    """``terms`` (stems of ``description``) with the words that name a kind of value replaced
    by the kind itself, and the kinds asked: the price of a plant is found in "34 euros" as
    well as in "the price"."""
    kinds = asked_kinds(description)
    if not kinds:
        return terms, kinds
    naming = {stem(w) for kind in kinds for w in _DESCRIBES.get(kind, ())}
    return [t for t in terms if t not in naming] + sorted(kinds), kinds


def kind_overlap(terms: list[str], found: set[str] | frozenset[str]) -> float:
    """The share of ``terms`` found, a kind of value counting :data:`KIND_WEIGHT` of a word."""
    if not terms:
        return 1.0
    return sum((KIND_WEIGHT if t.startswith("~") else 1.0) for t in terms if t in found) / len(terms)


def carried_kinds(text: str) -> frozenset[str]:
    """The kinds of value a sentence holds: a colour word, an amount of money (a currency
    word or sign, or a number after "costs"), a clock time ("9:45", "quarter to two")."""
    have = set(tokens(text))
    canon = canonical_tokens(text)  # "thirty-four" is a number too
    kinds: set[str] = set()
    if have & COLOUR_WORDS:
        kinds.add(COLOUR)
    numbers = any(w[:1].isdigit() for w in have) or any(w[:1].isdigit() for w in canon)
    if _CURRENCY_SIGN.search(text) or (numbers and (have & CURRENCY_WORDS or have & _PRICE_VERB)):
        kinds.add(PRICE)
    at_time = any(  # "at 410": Whisper's way of writing "at four ten"
        a == "at" and alternative_keys(b) for a, b in zip(canon, canon[1:], strict=False)
    )
    if have & _CLOCK_WORDS or _AM_PM.search(text) or at_time or any(_CLOCK_TOKEN.match(t) for t in canon):
        kinds.add(CLOCK)
    return frozenset(kinds)


def currency_signs_spelt(text: str) -> str:
    """``text`` with an amount written with a sign read as said ("£7" → "7 pounds"), so that
    the word after a number tells it is money."""
    return _SIGNED_AMOUNT.sub(lambda m: f"{m.group(2)} {_SIGN_WORDS[m.group(1)]}", text)


def counts_things(question: str) -> bool:
    """Whether ``question`` asks how many of some thing there are ("How many ropes does Tom
    have?"), which an amount of money never answers ("45 dollars" is a price); "how many
    euros …" asks for money, and is not such a question."""
    m = _HOW_MANY.search(question)
    return bool(m) and m.group(1).lower() not in CURRENCY_WORDS
