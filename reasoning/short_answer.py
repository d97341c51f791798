"""Short answers: the phrase in the evidence that answers the question, said first.

"What is the name of the cat?" over "This is Milo." is answered "Milo", not by quoting the
evidence that looks most like the question ("a scene with Egyptian cat, tiger cat"). The
extractor looks at the best few evidence units for a span of the kind the question's focus
asks for (:mod:`retrieval.question_shape`):

* ``name`` – a capitalised word run that is not the sentence's first word nor in the
  question, or the words after "called", "named", "name is", "this is", "I'm";
* ``time`` – a time or number key ("8:15", "11:20", "8") with its words as written;
* ``number`` – a number with the noun after it ("20 minutes", "three green apples");
* ``colour`` – a colour word with the noun after it;
* ``place`` – "to/from/at/in/by/on/under… (the) X" after the question's words;
* ``any`` – the longest run of words the question does not already hold (for "What did
  Tom put in the bowl?" over "Tom put three green apples in the blue bowl." → "three green
  apples").

Names come only from what was said or written (speech, on-screen text, and summaries, which
on the default quote what was said): an ImageNet label ("Egyptian cat") is not a name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from episodic.retrieval.detailed import Unit
from episodic.retrieval.given_names import usual_spelling
from episodic.retrieval.listen_targets import said_of_someone
from episodic.retrieval.people_words import role_phrase
from episodic.retrieval.query_analysis import (
    COLOUR_WORDS,
    NUMBER_WORDS,
    STOPWORDS,
    QueryAnalysis,
    stem,
    term_set,
)
from episodic.retrieval.question_shape import asks_for_account, place_preposition
from episodic.retrieval.text_match import (
    canonical_tokens,
    loosely_alike,
    may_be_name_at_start,
    name_like,
    name_words,
    sounds_alike,
    spell_out_written_to,
    words_and_pairs,
)
from episodic.retrieval.value_kinds import (
    CURRENCY_WORDS,
    PRICE,
    asked_kinds,
    counts_things,
    currency_signs_spelt,
)

MAX_WORDS = 8
# a span guessed rather than read (the words the question lacks; a colour a misheard word
# sounds like) counts less than one of the asked kind written in the evidence
GUESSED_SPAN_QUALITY = 0.8
_COLOURS = tuple(sorted(COLOUR_WORDS))  # looked through in a fixed order
RELEVANT_SHARE = 0.5  # of the best unit's rank score: below it a unit is about something else
# the composed summary's own labels (memory/summary_composer.py): never an answer themselves
SUMMARY_LABELS = re.compile(r"\b(?:Someone says|On screen|Seen|Heard)\s*:?\s*")
# a composed summary's "Seen: …" part (memory/summary_composer.py): the key frames' colours,
# labels and movement, never what anyone said
SEEN_PART = re.compile(r"\bSeen: [^.]*\.?")


def asks_what_was_said(analysis: QueryAnalysis) -> bool:
    """Whether the answer can only be in what was said or written, never in a summary's
    "Seen" part: a question not about pictures, or one about a thing of someone the question
    names ("Which colour should Lucas's library card be?"; the describer's frame colours know
    nothing of Lucas)."""
    return "visual" not in analysis.preferred_modalities or said_of_someone(analysis)


_WORD = re.compile(r"[A-Za-z0-9]+(?:['’.:,][A-Za-z0-9]+)*")
_INTRO = re.compile(
    r"\b(?:called|named|name is|name's|this is|meet|i am|i'm|it's|here is|here's)\s+"
    r"((?:[A-Z][\w'-]+)(?:\s+[A-Z][\w'-]+)*)"
)
_PLACE_PHRASE = r"((?:the\s+)?[A-Za-z][\w'-]*(?:\s+[A-Za-z0-9][\w'-]*){0,3})"
_PREPOSITIONS = (r"(?:to|from|at|in|near|into|towards|for|by|on|onto|under|behind|beside|inside|outside|"
                 r"next to|across|along|above|below|beneath|over)")
# a lookahead, so that every preposition starts a match, also one inside the phrase after
# another ("keeps it in at the newspaper kiosk": "in" would take "at the newspaper" and cut
# the kiosk off; the phrase after "at" is the place)
_PLACE = re.compile(r"(?=\b" + _PREPOSITIONS + r"\s+" + _PLACE_PHRASE + ")")
_LEADING_PREPOSITION = re.compile(r"^" + _PREPOSITIONS + r"\b", re.I)
_COPULA = re.compile(r"\s+(?:is|are|was|were|will|has|had|have)\b.*$", re.I)
_GLUE = {"of", "and", "the", "a", "an", "in", "on", "at", "to", "for", "with"}
_SPAN_MODALITIES = {
    "name": ("speech", "ocr", "summary"),  # summaries on the default quote what was said
    "time": ("speech", "ocr", "summary"),
    "number": ("speech", "ocr", "summary"),
    "colour": ("speech", "ocr", "visual", "summary"),
    "place": ("speech", "ocr", "summary"),
    "any": ("speech", "ocr", "summary", "visual", "sound"),
}


@dataclass
class Span:
    text: str  # the short answer, as written in the evidence
    unit: Unit  # where it was found
    quality: float  # 1.0 a span of the asked kind; lower for a weaker guess


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _novel_run(text: str, asked: set[str]) -> str:
    """The longest run of words not in the question (function words may sit inside it)."""
    words = _words(text)
    best: list[str] = []
    run: list[str] = []
    for w in words + [""]:
        key = stem(canonical_tokens(w)[0]) if w and canonical_tokens(w) else ""
        fresh = bool(w) and key not in asked and w.lower() not in STOPWORDS
        glue = bool(w) and w.lower() in _GLUE and bool(run)
        if fresh or glue:
            run.append(w)
            continue
        while run and run[-1].lower() in _GLUE:
            run.pop()
        if sum(1 for x in run if x.lower() not in _GLUE) > sum(1 for x in best if x.lower() not in _GLUE):
            best = run
        run = []
    return " ".join(best[:MAX_WORDS])


def _name(text: str, asked: set[str], asked_names: Sequence[str] = ()) -> str:
    """The name in ``text`` (not one the question names, nor one that sounds like it: "Sophie"
    is "Sofia" misheard in an answer to "Who is Sofia meeting?"), in its usual spelling ("Ask
    Hanna …" → Hannah; retrieval/given_names.usual_spelling): the quote that follows shows it
    as heard."""
    found = _name_as_heard(text, asked, asked_names)
    return " ".join(usual_spelling(w) for w in found.split())


def _name_as_heard(text: str, asked: set[str], asked_names: Sequence[str] = ()) -> str:
    def is_asked(word: str) -> bool:
        return stem(word.lower()) in asked or any(
            loosely_alike(word, n) or sounds_alike(word.lower(), n.lower()) for n in asked_names)

    m = _INTRO.search(text)
    if m and not is_asked(m.group(1).split()[0]):
        return m.group(1)
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        words = _words(sentence)
        run: list[str] = []
        for i, w in enumerate(words + [""]):
            # every sentence starts with a capital: there only a word rarer than everyday
            # English counts ("Tom will clean…", never "Look, …"); a word in capitals is
            # writing read on screen ("OPEN UNTIL 10 PM"), not a name
            capital = (bool(w) and w[:1].isupper() and not (len(w) > 1 and w.isupper())
                       and w.lower() not in STOPWORDS and (i > 0 or may_be_name_at_start(w)))
            if capital and not is_asked(w) and w != "I":
                run.append(w)
            elif run:
                return " ".join(run)
    return ""


_AT = {"at", "by", "until", "till", "from", "around", "about", "before", "after"}
def _money(words: Sequence[str], j: int) -> bool:
    """Whether the number ending before ``words[j]`` is an amount of money (a currency word
    after it: "45 dollars", "£7" once read as "7 pounds")."""
    return j < len(words) and words[j].lower().strip(".,;:!?") in CURRENCY_WORDS


# what makes a number a time of day rather than an amount: "at 1.30 a.m.", "at 7", "20 past 11"
_CLOCK_BEFORE = _AT - {"about", "before", "after"}  # "about 30" may be a price
_CLOCK_AFTER = re.compile(r"^(?:[ap]\.?m\.?|o['’]?clock|sharp)$", re.I)
_CLOCK_INSIDE = {"past", "half", "quarter"}


def _said_as_a_clock_time(words: Sequence[str], i: int, j: int) -> bool:
    """Whether the number phrase ``words[i:j]`` is said as a time of day, not an amount of
    money: "We will start the concert at 1.30 a.m." holds no price of concert tickets."""
    if _money(words, j):
        return False
    after = words[j].strip(",;:!?") if j < len(words) else ""
    before = words[i - 1].lower() if i > 0 else ""
    return (bool(_CLOCK_AFTER.match(after)) or before in _CLOCK_BEFORE
            or any(w.lower() in _CLOCK_INSIDE for w in words[i:j]))


def _number(text: str, focus: str, asked: set[str] | frozenset[str] = frozenset(), counted: bool = False,
            priced: bool = False) -> str:
    """The number ``focus`` asks for in ``text`` (a clock time for "time"), as said; for a
    ``counted`` question ("how many ropes …?") never an amount of money, for a ``priced`` one
    ("how much did the tickets cost?") never a time of day."""
    text = currency_signs_spelt(spell_out_written_to(text))
    words = _words(text)
    order = list(range(len(words)))
    if focus == "time":  # "room 312 opens at 920": the number after "at" is the time
        order.sort(key=lambda i: not (i > 0 and words[i - 1].lower() in _AT))
    clock: set[int] = set()  # the words of times of day passed over for a price
    for i in order:
        if i in clock:
            continue
        code = _spoken_code(words, i, focus) or (
            _first_digit_heard_as_word(words, i, asked) if focus == "number" and not counted else "")
        if code:
            return code
        keys = canonical_tokens(" ".join(words[i : i + 4]))
        if not keys or not keys[0][:1].isdigit() or words[i].lower().strip(".,") in asked:
            continue  # not a number, or the question's own ("How many chairs are in room 312?")
        # take the whole spoken number phrase ("twenty past eleven", "one hundred eighty")
        j = next((e for e in range(min(len(words), i + 5), i, -1)
                  if len(canonical_tokens(" ".join(words[i:e]))) == 1), i + 1)
        phrase = words[i:j]
        if counted and _money(words, j):
            continue  # "The seed packet is 45 dollars" holds no count of seed packets
        if priced and _said_as_a_clock_time(words, i, j):
            clock.update(range(i, j))
            continue
        if focus == "time" and len(phrase) == 1:
            nxt = words[j] if j < len(words) else ""
            if re.fullmatch(r"\d{1,2}", phrase[0]) and re.fullmatch(r"\d{2}", nxt) and int(phrase[0]) <= 23 and int(nxt) < 60:
                return f"{int(phrase[0])}:{nxt}"  # "at 12. 20": the recogniser broke "12:20" in two
            return clock_of_bare_number(phrase[0])
        if focus == "number" and j < len(words) and words[j].lower() not in STOPWORDS:
            phrase.append(words[j])  # "20 minutes", "3 apples"
        return " ".join(phrase)
    if focus == "number":
        for i, w in enumerate(words):
            if w.lower() in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten") \
                    and not (counted and _money(words, i + 1)) and i not in clock:
                return " ".join(words[i : i + 2])
    return ""


# What a number written as "4 or 6" labels when it is a code said with an "oh" ("room four oh
# six"): Whisper writes the "oh" as "or". Elsewhere "4 or 6" keeps its plain meaning.
_LABELS = {"room", "gate", "platform", "flight", "bus", "apartment", "flat", "suite", "unit", "track",
           "bay", "pier", "aisle", "table", "desk", "locker", "seat", "row", "channel", "number",
           "extension", "line", "route", "stand", "counter", "door", "office", "ward", "cabin", "lab"}
_OH_WORDS = {"or", "oh", "o"}


# A code said digit by digit ("room four oh one") comes back as the words those digits sound
# like: "room for all one". What a recogniser writes for a digit when it hears another word
# ("free" for "three" where an accent says "th" as "f": "The sailing race in the room free 26."):
_DIGIT_SOUND_ALIKES = {**dict.fromkeys(_OH_WORDS | {"all"}, "0"), "won": "1", "to": "2", "too": "2",
                       "free": "3", "for": "4", "fore": "4", "ate": "8"}
_DIGIT_WORDS = {w: d for w, d in NUMBER_WORDS.items() if len(d) == 1}  # "zero" … "nine"


def _code_heard_as_words(words: Sequence[str], i: int) -> str:
    """ "room for all one" → "401": three or four words after a label word that each sound
    like one digit, at least one a real digit word and one only a sound-alike (otherwise
    the plain number reading already has it), or "" when the words at ``i`` are not that.
    "a room for two people" is two such words, a size and not a code: never read so."""
    if i == 0 or words[i - 1].lower() not in _LABELS:
        return ""
    run: list[str] = []
    for w in words[i : i + 4]:
        key = w.lower().strip(".,;:!?")
        if key not in _DIGIT_WORDS and key not in _DIGIT_SOUND_ALIKES and not re.fullmatch(r"\d", key):
            break
        run.append(key)
        if w[-1:] in ".,;:!?":
            break
    while run and run[-1] in _DIGIT_SOUND_ALIKES:  # "… five for the fair": the code ends on a digit
        run.pop()
    alike = sum(w in _DIGIT_SOUND_ALIKES for w in run)
    if not 3 <= len(run) <= 4 or not 0 < alike < len(run) or run[0] in _OH_WORDS:
        return ""
    return "".join(_DIGIT_WORDS.get(w) or _DIGIT_SOUND_ALIKES.get(w) or w for w in run)


def _first_digit_heard_as_word(words: Sequence[str], i: int, asked: set[str] | frozenset[str]) -> str:
    """ "room for 22" → "422" for "Which room …?": a code said "four twenty-two" after a
    label word the question asks about, its first digit written as the word it sounds like
    ("for", "to", "free"), the rest as a two-digit number that ends the clause or is followed by a
    function word ("Go to room for 22 for the review."). "A room for 22 people" is a size,
    never read so; nor is "room 22" alone, nor "a table for 12" when no table is asked about."""
    label = words[i - 1].lower() if 0 < i < len(words) - 1 else ""
    if label not in _LABELS or not ({label, stem(label)} & set(asked)):
        return ""
    digit = _DIGIT_SOUND_ALIKES.get(words[i].lower(), "")
    if digit not in ("2", "3", "4", "8") or not re.fullmatch(r"[1-9]\d", words[i + 1]):
        return ""
    after = words[i + 2].lower() if i + 2 < len(words) else ""
    if after and after not in _AFTER_A_CODE:
        return ""
    return digit + words[i + 1]


# what may follow a room or gate number in the same clause ("room 422 for the review", "gate 422
# at noon"); a noun after it ("room for 22 people") makes the number a size
_AFTER_A_CODE = frozenset({"for", "at", "on", "in", "and", "with", "from", "by", "near", "next", "is", "was",
                           "will", "today", "now", "this", "please", "then", "so", "but"})


def _spoken_code(words: Sequence[str], i: int, focus: str) -> str:
    """ "room 4 or 6" → "406" and "at 1 or 5" → "1:05" (the "oh" of a spoken code or time),
    "room for all one" → "401" (:func:`_code_heard_as_words`), or "" when the words at ``i``
    are not such a code."""
    if focus == "number":
        heard = _code_heard_as_words(words, i)
        if heard:
            return heard
    if i == 0 or i + 2 >= len(words) or words[i + 1].lower() not in _OH_WORDS:
        return ""
    a, b, before = words[i], words[i + 2], words[i - 1].lower()
    if not (re.fullmatch(r"\d{1,2}", a) and re.fullmatch(r"\d", b)):
        return ""
    if focus == "number" and before in _LABELS:
        return f"{a}0{b}"
    if focus == "time" and before in _AT and 1 <= int(a) <= 12:
        return f"{int(a)}:0{b}"
    return ""


def clock_of_bare_number(token: str) -> str:
    """A time written as one bare number ("920", "1145": how a recogniser often writes "nine
    twenty", "eleven forty-five") as a clock time ("9:20"); anything else as it is."""
    m = re.fullmatch(r"(\d{1,2})(\d{2})", token.strip(".,"))
    if m and int(m.group(1)) <= 23 and int(m.group(2)) < 60:
        return f"{int(m.group(1))}:{m.group(2)}"
    return token


def only_a_bare_hour(text: str) -> bool:
    """Whether the clock time ``text`` gives is only a bare number ("The flower show started
    at 22.", "… at eleven", "And with one send the poet …") with no "a.m.", "p.m." or
    "o'clock" after it: what a recogniser leaves of "twenty to two" or "eleven fifteen" as
    often as a real hour, so a guess rather than a time read."""
    found = _number(text, "time")
    if re.fullmatch(r"\d{1,2}\.\d(?:\s*[ap]\.?\s?m\.?)?", found, re.IGNORECASE):
        # "at 1.0 a.m." for "one oh five", "8.8" for "eight forty": no clock writes one digit
        # of minutes
        return True
    # "at eleven", "with one": the same bare number in words ("with one" is also just a phrase)
    spoken = not re.search(r"\d|[ap]\.?\s?m\b|o'?clock", found, re.IGNORECASE) and re.fullmatch(
        r"\d{1,2}", "".join(canonical_tokens(found)) or "x")
    if not (re.fullmatch(r"\d{1,2}", found) or spoken):
        return False
    return not re.search(rf"\b{re.escape(found)}\s*(?:[ap]\.?\s?m\b|o'?clock)", text, re.IGNORECASE)


_ROUND_TIME = re.compile(r"(\d{1,2}):([1-5])0")
# the minutes written in digits, as Whisper writes them ("7.30", "4.30pm")
_ROUND_DIGITS = re.compile(r"\d[.:][1-5]0(?!\d)")


def round_minutes_heard(unit: Unit, analysis: QueryAnalysis) -> tuple[int, int] | None:
    """(hour, minutes) when the time ``unit`` answers a time question with is written with round
    minutes in digits ("7.30", "9:20"; not "half past two"): Whisper base writes "seven
    thirty-five" as "7.30" and "five twenty-five" as "5.20" often enough (five such times in
    the dev sets' 160 free-form questions, each answered at 0.93) that such a time is worth a
    second model's hearing (services/qa.py); None for any other answer."""
    if analysis.shape.focus != "time" or unit.modality != "speech":
        return None
    span = span_in(unit, analysis)
    if span is None or span.quality < 1.0:
        return None
    if not _ROUND_DIGITS.search(span.text):
        return None  # "half past two", "seven thirty": said in words, nothing was cut short
    m = _ROUND_TIME.fullmatch(_clock_key(span.text))
    return (int(m.group(1)), int(m.group(2)) * 10) if m and int(m.group(1)) <= 23 else None


def _clock_key(text: str) -> str:
    """The clock time a span says, as "h:mm" ("7.30", "seven thirty" → "7:30"), else ""."""
    keys = canonical_tokens(text)
    return keys[0] if keys and re.fullmatch(r"\d{1,2}:\d{2}", keys[0]) else ""


def refines_round_minutes(heard: tuple[int, int], unit: Unit, analysis: QueryAnalysis) -> bool:
    """Whether ``unit`` (another model's words) reads the round time ``heard`` with the last
    word of its minutes that the first model dropped: "7.35" refines "7.30"; "7.30" again,
    "8.35" or "7.45" do not (another hour, or other tens, is a different hearing, not a more
    complete one)."""
    span = span_in(unit, analysis)
    if span is None or span.quality < 1.0:
        return False
    m = re.fullmatch(r"(\d{1,2}):(\d)(\d)", _clock_key(span.text))
    return bool(m) and int(m.group(1)) == heard[0] and int(m.group(2)) * 10 == heard[1] and m.group(3) != "0"


_ROOM = re.compile(r"\broom\b", re.I)
_AMOUNT = re.compile(r"\b(\d[\d.,]*\d|\d)\s*(" + "|".join(sorted(CURRENCY_WORDS, key=len, reverse=True)) + r")\b", re.I)


def values_of_kind(text: str, kind: str) -> list[str]:
    """Every value of ``kind`` said in ``text``, as said: "time" (clock times, not a bare
    hour), "room" (the number after "room", "room 4 or 7" as 407), "price" (an amount with its
    currency), "colour" (colour words). For "what times (rooms, prices, colours) were
    mentioned?" (reasoning/value_list.py)."""
    if kind == "time":
        found = _told_time(text)
        return [found] if found else []
    if kind == "colour":
        return [w.lower() for w in _words(text) if w.lower() in COLOUR_WORDS]
    if kind == "room":
        out = []
        for m in _ROOM.finditer(text):
            found = _number(text[m.start():], "number")
            if found[:1].isdigit():
                out.append(f"room {found.split()[0]}")
        return out
    if kind == "price":
        return [f"{a} {c.lower()}" for a, c in _AMOUNT.findall(currency_signs_spelt(text))]
    raise ValueError(f"no values of kind {kind!r}")


_TIME_WORDS = re.compile(r"\b(?:past|to|half|quarter|o'?clock|noon|midnight)\b", re.I)
_HOUR_MARK = r"\s*(?:[ap]\.?\s?m\b\.?|o\s?'?\s?clock\b)"


_NAMED_TIME = re.compile(r"\b(?:(?:twelve|12)\s+)?(?:noon|midday|midnight)\b", re.I)


def _named_time(text: str) -> str:
    """A time of day said by its name and no number ("at noon", "by midnight"), or ""."""
    m = _NAMED_TIME.search(text)
    return m.group(0) if m else ""


def _told_time(text: str) -> str:
    """The clock time ``text`` tells, as said, or "": "6.25", "7:30" (from "730"), "quarter
    past 12", "3 p.m."; never a count ("six onions"), a room or gate number read as a time
    ("Room 101" is not 1:01), or a bare hour with nothing saying it is one ("at 22")."""
    found = _number(text, "time")
    if not found:
        return _named_time(text)
    words = _words(text)
    for i, w in enumerate(words):  # the number a label names ("room 101", "gate 12") is no time
        if i and words[i - 1].lower() in _LABELS and clock_of_bare_number(w) == found:
            return ""
    if re.fullmatch(rf"\d{{1,2}}[:.]\d{{2}}(?:{_HOUR_MARK})?", found, re.I):
        return found
    if _TIME_WORDS.search(found):
        return found
    bare = re.fullmatch(r"\d{1,2}", found)
    marked = re.search(rf"\b{re.escape(found)}({_HOUR_MARK})", text, re.I) if bare else None
    if marked:
        mark = marked.group(1).strip().lower().replace(" ", "")
        return f"{found} o'clock" if "clock" in mark else f"{found} {mark}"
    return ""


def _colour(text: str) -> str:
    words = _words(text)
    for i, w in enumerate(words):
        if w.lower() in COLOUR_WORDS:
            nxt = words[i + 1] if i + 1 < len(words) and words[i + 1].lower() not in STOPWORDS else ""
            return f"{w} {nxt}".strip()
    return ""


def _misheard_colour(text: str) -> str:
    """A colour word a recogniser split or misspelt ("painted the wheelbarrow yet low" →
    yellow, "purble" → purple): a word, or two adjacent words joined, that is no English word
    itself and sounds like a colour. Real words are left alone ("blank" is not black)."""
    for heard, _ in words_and_pairs(name_words(text)):
        if not name_like(heard):  # a common word was heard as said
            continue
        colour = next((c for c in _COLOURS if sounds_alike(heard, c)), "")
        if colour:
            return colour
    return ""


# "to" after these starts a verb ("how to lift", "wants to leave"), not a place
_BEFORE_INFINITIVE = {"how", "want", "wants", "wanted", "need", "needs", "needed", "have", "has",
                      "had", "able", "try", "tries", "tried", "like", "likes", "used", "ought", "about",
                      "where", "what", "when", "asked", "told", "remember", "forget", "forgot", "plan", "plans"}


def _infinitive(text: str, at: int) -> bool:
    """Whether the preposition at ``at`` is the "to" of a verb ("Ask him how to lift it")."""
    before = text[:at].split()
    return text[at : at + 3].lower() == "to " and bool(before) and before[-1].lower().strip(",;:") in _BEFORE_INFINITIVE


def _place(text: str, asked: set[str], preposition: str = "", things: Sequence[str] = ()) -> str:
    """The place a sentence names after a preposition of place (words the question did not
    ask). ``preposition``: the one the question asked with ("beside" of "Beside what is the
    ladder?"), looked for first: "the lamp in the hall is near the window" is near the window.
    ``things``: the stems of what the question asks the place of; a phrase ending in one names
    that thing, not where it is ("Where did Greta leave the axe?" / "Near in the whistle axe.":
    no place; "… the door key at the stage door": the stage door)."""
    found = [m.group(1) for m in _PLACE.finditer(text) if not _infinitive(text, m.start())]
    if preposition:  # its own matches first (they may overlap a match before: "in the hall is near …")
        own = re.compile(r"\b" + r"\s+".join(map(re.escape, preposition.split())) + r"\s+" + _PLACE_PHRASE, re.I)
        found = [m.group(1) for m in own.finditer(text)] + found
    for phrase in found:
        if _LEADING_PREPOSITION.match(phrase):
            continue  # the phrase after that preposition is found from it
        phrase = _COPULA.sub("", phrase)  # "the hall is near the": the place ends where a verb starts
        words = [w for w in phrase.split() if w.lower() not in STOPWORDS]
        if all(w.lower() in COLOUR_WORDS for w in words):
            continue  # "a picture in green" says a colour, not where anything is
        if words and stem(words[-1].lower()) in things:
            continue
        if words and any(stem(w.lower()) not in asked for w in words):
            return phrase.split(",")[0].strip()
    return ""


def span_in(unit: Unit, analysis: QueryAnalysis) -> Span | None:
    """The short answer inside one unit, or None when it holds none of the asked kind."""
    focus = analysis.shape.focus
    if unit.modality not in _SPAN_MODALITIES.get(focus, _SPAN_MODALITIES["any"]):
        return None
    asked = term_set(analysis.question)
    text = unit.text
    if unit.modality == "summary":
        if asks_what_was_said(analysis):
            # asked what was said ("Which colour should Lucas's library card be?"), the colours
            # of the frames beside a misheard sentence are no answer ("green blue" at 0.93)
            text = SEEN_PART.sub(" ", text)
        text = SUMMARY_LABELS.sub(" ", text)
    if focus == "name":
        found = _name(text, asked, [w for w in analysis.key_terms.values() if w[:1].isupper()])
        if not found and unit.modality == "speech":
            # no name, but someone named by what they do: "Who is Sofia meeting?" / "Sofia is
            # meeting the fisherman at quarter to seven." → "the fisherman" (a guess's quality)
            role = role_phrase(text, asked)
            if role:
                return Span(role, unit, GUESSED_SPAN_QUALITY)
    elif focus in ("time", "number"):
        counted = focus == "number" and counts_things(analysis.question)
        priced = focus == "number" and not counted and PRICE in asked_kinds(analysis.question)
        found = _number(text, focus, asked, counted=counted, priced=priced)
        if not found and focus == "time":
            found = _named_time(text)  # "The pool opens at noon."
    elif focus == "colour":
        found = _colour(text)
        if not found and unit.modality == "speech":
            misheard = _misheard_colour(text)
            if misheard:
                return Span(misheard, unit, GUESSED_SPAN_QUALITY)
    elif focus == "place":
        found = _place(text, asked, place_preposition(analysis.question), analysis.object_terms)
    else:
        found = ""
    if found:
        return Span(found, unit, 1.0)
    if focus == "any" and asks_for_account(analysis.question):
        return None  # "Tell me about the lawn mower.": the sentence, not a phrase of it
    novel = _novel_run(text, asked)
    if novel and unit.modality != "visual" and focus == "any":
        return Span(novel, unit, GUESSED_SPAN_QUALITY)
    return None


def clean_value(unit: Unit, analysis: QueryAnalysis) -> bool:
    """Whether ``unit`` holds a span of the asked kind read rather than guessed: for a time, a
    clock time and not a bare hour ("1.05", not "1.0 a.m." or "15"); for a colour, a colour
    word and not one a misheard word sounds like (retrieval/second_listen.py asks this of
    another model's words)."""
    span = span_in(unit, analysis)
    if span is None or span.quality < 1.0:
        return False
    return not (analysis.shape.focus == "time" and only_a_bare_hour(unit.text))


def best_span(units: Sequence[Unit], analysis: QueryAnalysis, look: int = 6) -> Span | None:
    """The short answer from the best ``look`` units: the first (in rank order) holding a span
    of the asked kind; a unit of the modality the question is about goes first. Units scored
    below ``RELEVANT_SHARE`` of the best are not looked in ("Where did Lucas put the anchor?"
    is not answered "room 316" from a sentence about a ferry)."""
    pool = list(units[:look])
    top = max((u.score for u in pool), default=0.0)
    if top > 0:  # a phrase of the asked kind in a sentence about something else is no answer
        pool = [u for u in pool if u.score >= top * RELEVANT_SHARE]
    preferred = set(analysis.preferred_modalities)
    pool.sort(key=lambda u: u.modality not in preferred)  # stable: rank order within each
    for unit in pool:
        span = span_in(unit, analysis)
        if span is not None:
            return span
    return None
