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
def given_names() -> frozenset[str]:
    """The known given names, lower case; empty when the ``names`` package is not installed."""
    try:
        root = resources.files("names")
    except ModuleNotFoundError:
        return frozenset()
    out: set[str] = set()
    for name in _LISTS:
        for line in root.joinpath(name).read_text(encoding="ascii", errors="ignore").splitlines():
            if line.strip():
                out.add(line.split()[0].lower())
    return frozenset(out)


def is_given_name(word: str) -> bool:
    """Whether ``word`` is a known given name ("Hannah", "Tom"; not "Brace")."""
    return word.lower() in given_names()
