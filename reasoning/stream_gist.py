"""A stream's gist from its own words: who is named in it, and what it is mostly about (the
words it says or shows more than the other streams do)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from episodic.reasoning.answer import Draft
from episodic.retrieval.detailed import (
    Unit,
)
from episodic.retrieval.given_names import is_given_name, name_share, usual_spelling
from episodic.retrieval.query_analysis import COLOUR_WORDS, content_terms, stem
from episodic.retrieval.text_match import COMMON_RANK, loosely_alike, not_everyday, word_rank
from episodic.retrieval.value_kinds import CURRENCY_WORDS

STOP_NAMES = frozenset({"i", "the", "this", "that", "it", "we", "you", "they", "he", "she", "and", "but",
                        "oh", "okay", "ok", "yes", "no", "so", "well", "now", "then", "there", "here",
                        "what", "let", "lets", "please", "thank", "thanks", "hello", "hi", "welcome"})
TOPIC_WORDS = 4  # "what is it mostly about?": this many characteristic words
SETTING_WORDS = 10  # … and this many tell which of the SETTINGS it is (four alone were often noise)
_WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"})
# (April, May, June and August are given names too)
_MONTHS = frozenset({"january", "february", "march", "july", "september", "october", "november", "december"})
# Words that say when, what colour or what price, or how a sign reads ("CLOSED ON TUESDAYS",
# "OPEN UNTIL 4 PM"), never what a recording is about, however often only one stream says them
NOT_A_TOPIC = COLOUR_WORDS | CURRENCY_WORDS | _WEEKDAYS | frozenset({
    "mondays", "tuesdays", "wednesdays", "thursdays", "fridays", "saturdays", "sundays",
    "today", "tonight", "tomorrow", "yesterday", "morning", "afternoon", "evening", "weekend",
    "open", "opens", "opening", "closed", "closes", "closing", "until", "begin", "begins", "start", "starts",
})
# Where a recording may be, or what it may show being done: "what is it mostly about?" is
# answered with the one nearest the stream's own words when it is clearly nearest (a few
# characteristic words, "timer, baker, apron, tasting", leave the listener to guess "a kitchen").
# Common places and activities of everyday and working life, not those of any test set.
SETTINGS = (
    "a kitchen, cooking", "a restaurant", "a cafe", "a bakery", "a supermarket", "a market",
    "a shop", "a shopping centre", "an office, work", "a meeting", "a school classroom",
    "a university lecture", "a library, books", "a hospital", "a doctor's surgery", "a pharmacy",
    "a dentist", "a hotel", "an airport, flights", "a train station, trains", "a bus journey",
    "a car journey, driving", "a street, traffic", "a harbour, boats", "a beach, the sea",
    "a river", "a lake", "a park", "a garden, plants", "a farm, animals", "a forest walk",
    "mountains, hiking", "a camping trip", "a zoo", "a museum", "an art gallery", "a theatre",
    "a cinema, a film", "a concert, music", "a sports match", "a gym, exercise",
    "a swimming pool", "a football game", "a construction site, building", "a factory",
    "a warehouse, deliveries", "a workshop, repairs", "a garage, cars", "a laboratory, science",
    "a church", "a wedding", "a birthday party", "a family home", "a living room",
    "a bedroom", "a news report", "a weather report", "a cooking show", "a travel vlog",
    "a fire station", "a police station", "a bank, money", "a post office", "a hair salon",
    "a veterinary clinic, pets", "a playground, children", "a parking lot", "a city tour",
)
# capitalised, yet no one: a currency ("You can get a madman in 442 Euro here."), a day, a month
NOT_A_NAME = CURRENCY_WORDS | _WEEKDAYS | _MONTHS
# a number just before a capitalised word makes it a unit or a thing counted ("442 Euro", "3 Tickets");
# not a number a comma or stop ends ("At 2.40, Omar has an appointment")
_AFTER_NUMBER = re.compile(r"\d(?:[\d.,:]*\d)?\s*$")
TOPIC_CONFIDENCE = 0.5
PEOPLE_CONFIDENCE = 0.6
GIVEN_NAME_WEIGHT = 2.0  # a known given name (retrieval/given_names.py) against a rare word
NAME_MIN_VOTES = 0.5  # below this the best "name" is an everyday word at a sentence's start
# a capitalised word that is not part of a hyphenated one: "O-Mark hinted the map up green." is
# "Omar painted the backpack green." misheard, its "Mark" a fragment, not someone named Mark
_CAPITALISED = re.compile(r"(?<![-'’])\b([A-Z][a-z]+)\b(?![-'’])")
# "Maria painted": a capitalised word followed by its verb; not by a preposition, article or
# conjunction ("Restaint at the Regan Lump", a misheard sentence, is no one doing anything)
_SUBJECT = re.compile(
    r" (?!(?:at|in|on|of|to|for|from|with|by|into|onto|about|over|under|near|the|a|an|and|or|but|as)\b)[a-z]"
)
# a name's verb right after it: an auxiliary or a past tense ("Grace ordered", "Mark has",
# "Will put"): what makes an everyday word that opens a sentence somebody doing something
_DOES = re.compile(
    r" (?:is|was|has|had|will|would|can|could|did|does|says|said|put|took|bought|left|made|got|gave|"
    r"told|went|came|saw|sent|brought|paid|sold|found|kept|lost|met|wrote|drove|ran|[a-z]{2,}ed)\b"
)
# a determiner just before (perhaps with one word between): a noun, not a person's name
_DETERMINED = re.compile(r"\b(?:the|a|an|this|that|these|those|my|our|your|his|her|their|its)\s+(?:[a-z]+\s+)?$", re.I)


def _opens_sentence(text: str, at: int) -> bool:
    """Whether the word at ``at`` is the first of its sentence (where any word has a capital)."""
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?"


def _rarity(word: str) -> float:
    """1 for a word outside the common-word list, less the more frequent it is."""
    rank = word_rank(word)
    return 1.0 if rank is None else min(1.0, rank / (COMMON_RANK / 2))


def topic_words(stream_id: str, own: Sequence[Unit], texts: dict[str, list[Unit]],
                 n_words: int) -> tuple[list[str], list[Unit]]:
    """The stream's ``n_words`` most characteristic words and up to three units holding them."""
    def counts(units: Sequence[Unit]) -> dict[str, int]:
        c: dict[str, int] = {}
        for u in units:
            for t in content_terms(u.text):
                if not t[:1].isdigit() and len(t) >= 3:
                    c[t] = c.get(t, 0) + 1
        return c

    mine = counts(own)
    others = [counts(v) for sid, v in texts.items() if sid != stream_id]
    surface: dict[str, str] = {}
    for u in own:
        for w in re.findall(r"[A-Za-z]+", u.text):
            surface.setdefault(stem(w.lower()), w.lower())
    names = spoken_names(own)
    scored = []
    for t, n in mine.items():
        elsewhere = sum(1 for o in others if t in o)
        word = surface.get(t, t)
        if len(word) < 4 or t in names or word in NOT_A_TOPIC:
            continue
        # an everyday word ("long") says little, a word no dictionary knows is often a
        # misrecognition: the middle of the frequency range carries a topic
        rank = word_rank(word)
        weight = 0.5 if rank is None else math.log(rank + 2) / math.log(COMMON_RANK)
        scored.append((n * weight / (1.0 + elsewhere), n, t))
    scored.sort(key=lambda x: (-x[0], -x[1], x[2]))
    words = [surface.get(t, t) for _, _, t in scored[:n_words]]
    return words, holding(own, words)


def holding(units: Sequence[Unit], words: Sequence[str]) -> list[Unit]:
    """Up to three of ``units`` that hold one of ``words`` (topic words, by their stems)."""
    stems = {stem(w) for w in words}
    return [u for u in units if stems & u.terms][:3]


def spoken_names(units: Sequence[Unit]) -> set[str]:
    """Stems of the words that look like names in what was said: capitalised wherever they
    occur and not everyday words ("Felix", "Omar"; not "Look" at a sentence's start, nor
    "tomato" said once as "Tomato plants again"). People are not what a stream is about:
    "Felix, Maria, euros" reads as a market, "packets, watering, tomato" as a garden."""
    capital: dict[str, bool] = {}
    surface: dict[str, str] = {}
    for u in units:
        if u.modality != "speech":
            continue
        for w in re.findall(r"[A-Za-z]+", u.text):
            t = stem(w.lower())
            capital[t] = capital.get(t, True) and w[0].isupper()
            surface.setdefault(t, w.lower())
    out = set()
    for t, always in capital.items():
        if always and not_everyday(surface[t]):
            out.add(t)
    return out


def topic_answer(stream_id: str, own: Sequence[Unit], texts: dict[str, list[Unit]],
                 setting: Callable[[list[str]], Sequence[str]] | None = None) -> Draft | None:
    """The stream's characteristic words, after the setting they point to when ``setting``
    (given its SETTING_WORDS most characteristic words) names one ("a kitchen: timer, baker,
    apron, tasting") or two it cannot tell apart ("a kitchen or a restaurant: …")."""
    ranked, _ = topic_words(stream_id, own, texts, max(SETTING_WORDS, TOPIC_WORDS))
    words = ranked[:TOPIC_WORDS]
    if not words:
        return None
    support = holding(own, words)
    places = setting(ranked[:SETTING_WORDS]) if setting is not None else ()
    lead = f"probably {' or '.join(p.split(',')[0] for p in places)}: " if places else ""
    return Draft(answer=f"{lead}{', '.join(words)} (most said or shown in {stream_id})",
                 confidence=TOPIC_CONFIDENCE, support=support or list(own[:1]), source="gist",
                 caps={"route": 6.0, "span": 1.0})


# "name one person …", "who is one of the people …": one name; "who was mentioned?", "which
# people were mentioned?", "how many people were mentioned?": all of them
_ONE_PERSON = re.compile(r"\b(?:one|a|any|single|some)\s+(?:person|people|persons|name)\b|\bone\s+of\b", re.I)
_HOW_MANY = re.compile(r"\bhow\s+many\b", re.I)
NAMES_LISTED = 6  # at most this many names when all are asked for


def asks_for_everyone(question: str) -> bool:
    """Whether a question about who was mentioned asks for all of them, not one."""
    return not _ONE_PERSON.search(question)


def people_answer(stream_id: str, units: Sequence[Unit], question: str = "") -> Draft | None:
    """The capitalised word most likely to be a name: a known given name, or rare in English
    (a capital at a sentence's start proves nothing for an everyday word), not part of a
    hyphenated word, better still the subject of its clause ("Maria painted …"). When the
    ``question`` asks for everyone ("Who was mentioned?", "How many people were mentioned?"),
    every such name, most voted first (with their count for "how many")."""
    votes: dict[str, float] = {}
    where: dict[str, Unit] = {}
    for u in units:
        if u.modality != "speech":
            continue
        for m in _CAPITALISED.finditer(u.text):
            w = m.group(1).lower()
            if len(w) < 3 or w in STOP_NAMES or _DETERMINED.search(u.text, 0, m.start()):
                continue  # "the Robin", "the book Trolley": a thing the recogniser capitalised
            if w in NOT_A_NAME or _AFTER_NUMBER.search(u.text, 0, m.start()):
                continue
            weight = _rarity(w)
            # a known given name counts double; one that is also an everyday word ("Grace",
            # "Mark") only where a capital proves something: inside a sentence, or opening
            # one as the subject of a verb ("Grace ordered six tickets"; not "Grace period")
            if is_given_name(w) and (not_everyday(w) or not _opens_sentence(u.text, m.start())
                                     or _DOES.match(u.text, m.end())):
                weight = max(weight, 1.0) * GIVEN_NAME_WEIGHT
            if _SUBJECT.match(u.text, m.end()):
                weight *= 1.5
            votes[w] = votes.get(w, 0.0) + weight
            where.setdefault(w, u)
    # equal votes: the commoner name ("Maria" over "Oma", likelier "Omar" misheard)
    best = max(votes, key=lambda w: (votes[w], name_share(w), w)) if votes else ""
    if not best or votes[best] < NAME_MIN_VOTES:
        # only everyday words were capitalised: no name was heard, say so
        return Draft(answer="", confidence=0.0, source="none", caps={"route": 5.0, "names": 0.0})
    unit = where[best]
    if question and asks_for_everyone(question):
        # beside the best, only words that are names wherever they are said (a known given
        # name, or capitalised every time): "Tomato plants again" opens with no one
        always = spoken_names(units)
        named = sorted((w for w in votes if votes[w] >= NAME_MIN_VOTES
                        and (w == best or is_given_name(w) or stem(w) in always)),
                       key=lambda w: (-votes[w], -name_share(w), w))
        kept: list[str] = []
        for w in named:  # one name heard two ways ("Omar", "Oma") is one person
            if not any(loosely_alike(w, k) for k in kept):
                kept.append(w)
        named = kept[:NAMES_LISTED]
        names = ", ".join(usual_spelling(w.capitalize()) for w in named)
        lead = f"{len(named)}: {names}" if _HOW_MANY.search(question) else names
        return Draft(answer=f'{lead} (heard: "{unit.text.strip()}", {unit.cite()})',
                     confidence=PEOPLE_CONFIDENCE, support=[where[w] for w in named], source="gist",
                     caps={"route": 5.0, "span": 1.0, "votes": round(votes[best], 2), "names": float(len(named))})
    return Draft(answer=f'{usual_spelling(best.capitalize())} (heard: "{unit.text.strip()}", {unit.cite()})',
                 confidence=PEOPLE_CONFIDENCE, support=[unit], source="gist",
                 caps={"route": 5.0, "span": 1.0, "votes": round(votes[best], 2)})
