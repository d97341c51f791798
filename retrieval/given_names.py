"""Given names: whether a capitalised word is one people are called by.

A transcript capitalises misheard words as readily as names ("Brace all the six tickets", for
"Grace bought six tickets"), so a word that is a known given name is better evidence of a
person than a rare word is. The lists are the US Census 1990 first names (5,163 after joining
the male and female lists), which the ``names`` package ships; they are US-centred (no "Priya",
no "Chen"), so a word missing from them is never taken for proof that it is no name."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

_LISTS = ("dist.male.first", "dist.female.first")


@lru_cache(maxsize=1)
def _name_shares() -> dict[str, float]:
    """Each known given name (lower case) with the share of people called so, in per cent
    (the larger of its male and female figures); empty without the ``names`` package."""
    try:
        root = resources.files("names")
    except ModuleNotFoundError:
        return {}
    out: dict[str, float] = {}
    for name in _LISTS:
        for line in root.joinpath(name).read_text(encoding="ascii", errors="ignore").splitlines():
            parts = line.split()
            if not parts:
                continue
            try:
                share = float(parts[1]) if len(parts) > 1 else 0.0
            except ValueError:
                share = 0.0
            key = parts[0].lower()
            out[key] = max(out.get(key, 0.0), share)
    return out


@lru_cache(maxsize=1)
def given_names() -> frozenset[str]:
    """The known given names, lower case; empty when the ``names`` package is not installed."""
    return frozenset(_name_shares())


def name_share(word: str) -> float:
    """How common a given name is (per cent of people in the lists; 0 for an unknown word):
    of two words heard as names equally often, the commoner name is the likelier to be one
    ("Maria", 0.8 %, over "Oma", 0.001 %, which is more likely "Omar" misheard)."""
    return _name_shares().get(word.lower(), 0.0)


def is_given_name(word: str) -> bool:
    """Whether ``word`` is a known given name ("Hannah", "Tom"; not "Brace")."""
    return word.lower() in given_names()


# of two spellings of one name ("Hanna", "Hannah"), the answer names the usual one when it is
# this many times as common: the recogniser spells a name heard one way or another
USUAL_SPELLING_RATIO = 2.0
USUAL_SPELLING_MIN_SHARE = 0.02  # per cent: a spelling this rare is never preferred


def _spellings(word: str) -> set[str]:
    """Other ways of writing the name ``word`` (lower case) as it sounds: a silent final h
    (Hanna/Hannah, Sarah/Sara), a doubled or single letter (Ana/Anna, Phillip/Philip), c or k
    (Markus/Marcus), i or y, a silent final e (Isabel/Isabelle)."""
    out = {word + "h", word + "e"}
    if word.endswith(("h", "e")):
        out.add(word[:-1])
    for i, ch in enumerate(word):
        if i > 0 and ch.isalpha():
            if word[i - 1] == ch:
                out.add(word[:i] + word[i + 1:])
            else:
                out.add(word[:i] + ch + word[i:])
        for a, b in (("c", "k"), ("k", "c"), ("i", "y"), ("y", "i")):
            if ch == a and i > 0:
                out.add(word[:i] + b + word[i + 1:])
    out.discard(word)
    return out


def usual_spelling(word: str) -> str:
    """``word`` (a name as heard) in the spelling most people with that name use, when that
    spelling is clearly commoner (USUAL_SPELLING_RATIO) than the one heard: "Hanna" → "Hannah",
    "Markus" → "Marcus"; "Chen", "Hannah" and any word no spelling of which is a known given
    name stay as they are. Keeps the heard word's capitals."""
    low = word.lower()
    if not low.isalpha() or len(low) < 3:
        return word
    heard = name_share(low)
    best, best_share = low, heard
    for other in _spellings(low):
        share = name_share(other)
        if share > best_share:
            best, best_share = other, share
    if best == low or best_share < USUAL_SPELLING_MIN_SHARE or best_share < USUAL_SPELLING_RATIO * heard:
        return word
    return best.capitalize() if word[:1].isupper() else best
