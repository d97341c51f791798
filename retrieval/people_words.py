"""Whether an option names a person, and whether key frames showed anyone.

An ImageNet classifier has no word for people, nor for many things ("coins"), so a question
such as "what picture was on screen while X was said: an astronaut, coins, a cup of coffee?"
can leave two options nothing could have named. The people detectors that ship with OpenCV
(memory/people.py) still tell a picture of someone from a picture of no one: the describer
writes what they found into the frame's description ("one person, a face"). This module
holds the words for people that options use and reads that phrase back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from episodic.retrieval.detailed import Unit

# nouns that name a person or people (singular and plural); not animals, statues or robots
_NOUNS = """
person people man men woman women child children kid kids boy boys girl girls baby babies
toddler teenager adult adults lady ladies gentleman gentlemen guy guys family crowd couple
face faces portrait selfie human humans player players athlete athletes runner runners
cyclist cyclists rider riders skier skiers surfer surfers swimmer swimmers diver divers
dancer dancers singer singers musician musicians actor actress worker workers farmer farmers
fisherman fishermen sailor sailors soldier soldiers pilot pilots astronaut astronauts
doctor doctors nurse nurses teacher teachers student students chef chefs cook cooks baker
bakers waiter waitress police policeman policewoman officer officers firefighter firefighters
photographer photographers cameraman cameramen driver drivers passenger passengers tourist
tourists shopkeeper customer customers clown bride groom
"""
PERSON_NOUNS = frozenset(_NOUNS.split())
# people by what they do, as a sentence names someone met or asked ("Sofia is meeting the
# fisherman", "ask the caretaker"): the nouns above and everyday roles at work and around town
_ROLES = """
conductor caretaker gardener volunteer inspector master keeper beekeeper manager guard
librarian archivist captain mechanic plumber cashier clerk cleaner porter receptionist
assistant owner neighbour neighbor friend boss colleague director engineer electrician courier
postman postwoman butcher florist pharmacist dentist vet lawyer judge guide ranger lifeguard
coach referee host hostess landlord landlady tenant visitor guest organiser organizer
"""
ROLE_NOUNS = PERSON_NOUNS | frozenset(_ROLES.split())
_DETERMINERS = frozenset({"the", "a", "an", "our", "my", "your", "their", "his", "her"})


def role_phrase(text: str, asked: Iterable[str] = ()) -> str:
    """The first "the <role>" (one word before it allowed: "the ticket inspector") in ``text``
    whose role word is not among ``asked`` (stems or words of the question): "Sofia is meeting
    the fisherman at …" → "the fisherman"; "" when none."""
    skip = {w.lower() for w in asked}
    words = re.findall(r"[A-Za-z]+", text)
    for i, w in enumerate(words[:-1]):
        if w.lower() not in _DETERMINERS:
            continue
        for j in (i + 1, i + 2):
            noun = words[j].lower() if j < len(words) else ""
            if noun in ROLE_NOUNS and noun not in skip and noun[:8] not in skip:
                return " ".join(words[i:j + 1])
            if noun in _DETERMINERS:
                break
    return ""
_WORD = re.compile(r"[a-z]+")
_QUOTED = re.compile(r'"[^"]*"')  # on-screen text is quoted in a description: not the describer's words
_PEOPLE_PHRASE = re.compile(
    r"\b(?:one person|(?:two|three|four|five|\d+) people|a face|(?:two|three|four|five|\d+) faces)\b")


def names_a_person(option: str) -> bool:
    """"an astronaut", "a man with a camera", "two children" → True; "coins", "a cat" → False."""
    return any(w in PERSON_NOUNS for w in _WORD.findall(option.lower()))


def shows_people(units: Iterable[Unit]) -> bool:
    """Whether the detectors found a person or a face on any of these key-frame units."""
    return any(u.modality == "visual" and _PEOPLE_PHRASE.search(_QUOTED.sub("", u.text)) for u in units)
