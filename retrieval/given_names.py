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
