"""Given names: whether a capitalised word is one people are called by.

A transcript capitalises misheard words as readily as names ("Brace all the six tickets", for
"Grace bought six tickets"), so a word that is a known given name is better evidence of a
person than a rare word is. Two lists are joined: the US Census 1990 first names (5,163 after
joining the male and female lists, with how common each is), which the ``names`` package ships,
and the first names Faker's person providers hold for some seventy locales (about 12,000 in
Latin script that are no English word: "Kofi", "Tariq", "Priya", "Yusuf", "Noor", which the US
lists lack; no shares). Neither holds every name ("Chen" is in neither), so a word missing
from them is never taken for proof that it is no name."""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache
from importlib import resources

_LISTS = ("dist.male.first", "dist.female.first")
# the attributes in which Faker's person providers keep first names (tuples, or dicts of name → weight)
_FAKER_LISTS = ("first_names", "first_names_male", "first_names_female", "first_names_nonbinary")
_PLAIN_NAME = re.compile(r"[a-z]{2,}")  # Latin letters only: what a transcript can spell


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
def _world_names() -> frozenset[str]:
    """The Latin-script first names of Faker's person providers, every locale (lower case),
    less every word of the English frequency list: those lists also hold "Floor", "Price",
    "River", "Lemon", which a capital at a sentence's start must not turn into people (the US
    lists keep the English-word names that are common names, "Grace", "Mark", with their
    shares). Empty without Faker; a locale that fails to load is skipped, not fatal."""
    try:
        providers = importlib.import_module("faker.providers.person")
    except ModuleNotFoundError:
        return frozenset()
    # imported here: text_match asks this module whether a word is a given name
    from episodic.retrieval.text_match import common_words
    out: set[str] = set()
    for info in pkgutil.iter_modules(providers.__path__):
        try:
            module = importlib.import_module(f"{providers.__name__}.{info.name}")
        except Exception:  # noqa: BLE001 - one broken locale costs its names only
            continue
        own = vars(getattr(module, "Provider", object))
        for attr in _FAKER_LISTS:
            names = own.get(attr)
            if isinstance(names, (dict, tuple, list, set, frozenset)):
                out.update(low for n in names if isinstance(n, str) and _PLAIN_NAME.fullmatch(low := n.lower()))
    return frozenset(out - common_words())


@lru_cache(maxsize=1)
def given_names() -> frozenset[str]:
    """The known given names, lower case (both lists); empty when neither package is installed."""
    return frozenset(_name_shares()) | _world_names()


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
