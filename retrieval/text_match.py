"""Words as both sides of a match should see them: numbers, times and quantities in one
canonical form, and tolerant matching of misheard names.

Whisper writes "8.15", "20 past 11" and "180"; people write options as "Eight fifteen",
"twenty past eleven" and "one hundred eighty". Every stage that compares a question, an
option or an answer with evidence tokenises through :func:`canonical_tokens`, which folds
each such phrase into one key, so both sides meet:

* cardinals: "one hundred and eighty", "a hundred eighty", "180", "1,000" → "180", "1000";
  "three and a half" → "3.5";
* times: "8.15", "8:15", "eight fifteen", "quarter past eight", "8:15 pm", "20:15" → "8:15"
  (twelve-hour keys: a transcript rarely says which half of the day); "half past two" →
  "2:30", "ten to six" → "5:50", "eight o'clock", "8:00", "8 am" → "8"; Whisper's "20-11" and
  "20.11" for "twenty to eleven" → "10:40" (see :func:`spell_out_written_to`);
* ordinals: "3rd" → "third", "twenty-first", "21st" → "21th" (one key per number).

A price "£8.15" also becomes "8:15": the key is only ever compared with another key, so what
matters is that "eight fifteen" gets the same one.

Names are matched tolerantly (:func:`sounds_alike`, :func:`fuzzy_hits`): the same Metaphone
key with similar spelling, or nearly the same spelling ("Milo" ~ "Mylo"), and words joined or
split ("North wind" = "Northwind"). Only *name-like* words take part — capitalised in their
text, or rare in English by a word-frequency list — because common words that sound alike
("bake"/"bike", "mile"/"Milo") are different words, not mishearings.

This module imports nothing of the project's, so retrieval and reasoning can both use it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache

import jellyfish

from episodic.retrieval.given_names import is_given_name

_WORD = re.compile(r"\d+(?:st|nd|rd|th)\b|[A-Za-z]+(?:['’][A-Za-z]+)*|\d+(?:[.,:]\d+)*", re.I)

UNITS = {
    "zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}
TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}
SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}
_ORDINAL_WORD = {v: k for k, v in ORDINALS.items() if v <= 10}
_TO_MINUTES = {5, 10, 15, 20, 25}  # "ten to six"; other numbers before "to" are rarely times


def ordinal_key(n: int) -> str:
    """One key per ordinal: the word up to ten ("third"), digits beyond ("21th")."""
    return _ORDINAL_WORD.get(n, f"{n}th")


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def time_key(hour: int, minute: int) -> str:
    """Twelve-hour "h:mm", or "h" on the hour."""
    if 12 < hour <= 24:
        hour -= 12
    return str(hour) if minute == 0 else f"{hour}:{minute:02d}"


def _digit_token(tok: str) -> str:
    """"8.15"/"8:15" → "8:15" when it reads as a time; "1,000" → "1000"; else as written."""
    m = re.fullmatch(r"(\d{1,2})[.:](\d{2})", tok)
    if m and int(m.group(1)) <= 24 and int(m.group(2)) < 60:
        return time_key(int(m.group(1)), int(m.group(2)))
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", tok):
        return tok.replace(",", "")
    m = re.fullmatch(r"(\d+)(st|nd|rd|th)", tok)
    if m:
        return ordinal_key(int(m.group(1)))
    return tok


def _small(words: Sequence[str], i: int) -> tuple[int, int] | None:
    """A number below 100 in words at ``i`` ("forty five", "twenty-one" split, "seven"):
    (value, next index)."""
    if i >= len(words):
        return None
    w = words[i]
    if w in TENS:
        if i + 1 < len(words) and words[i + 1] in UNITS and 0 < UNITS[words[i + 1]] < 10 and words[i + 1] != "oh":
            return TENS[w] + UNITS[words[i + 1]], i + 2
        return TENS[w], i + 1
    if w in UNITS and w != "oh":
        return UNITS[w], i + 1
    return None


def _cardinal(words: Sequence[str], i: int) -> tuple[float, int, bool] | None:
    """A cardinal at ``i`` in words or digits: (value, next index, written in words).
    Handles "a hundred and eighty", "two thousand five hundred", "three and a half"."""
    if i >= len(words):
        return None
    w = words[i]
    if re.fullmatch(r"\d+(?:\.\d+)?", w):
        value, j = float(w), i + 1
        if j < len(words) and words[j] in SCALES:  # "2 thousand"
            value, j = value * SCALES[words[j]], j + 1
        return value, j, False
    total, current, j, seen = 0, 0, i, False
    while j < len(words):
        small = _small(words, j)
        if small is not None:
            if current % 100 or (current and current < 100):
                break  # "eight fifteen": two numbers, not one
            current += small[0]
            j, seen = small[1], True
            continue
        word = words[j]
        if word in SCALES and (seen or (j == i + 1 and words[i] == "a")):
            scale = SCALES[word]
            current = max(current, 1) * scale if scale == 100 else max(current, 1)
            if scale > 100:
                total += current * scale
                current = 0
            j, seen = j + 1, True
            # "a hundred and eighty": "and" continues the number only before a smaller part
            if j + 1 < len(words) and words[j] == "and" and _small(words, j + 1) is not None:
                j += 1
            continue
        if word == "a" and j == i and j + 1 < len(words) and words[j + 1] in SCALES:
            j += 1
            continue
        break
    if not seen:
        return None
    value = float(total + current)
    if words[j : j + 3] == ["and", "a", "half"]:
        value, j = value + 0.5, j + 3
    return value, j, True


def _minutes_phrase(words: Sequence[str], i: int) -> tuple[int, int] | None:
    """"quarter", "a quarter", "half", "twenty", "twenty five", "10" (+ "minutes")."""
    j = i + 1 if i < len(words) and words[i] == "a" else i
    if j < len(words) and words[j] == "quarter":
        return 15, j + 1
    if j == i and i < len(words) and words[i] == "half":
        return 30, i + 1
    if j != i:
        return None
    if i < len(words) and words[i].isdigit():
        value, k = int(words[i]), i + 1
    else:
        small = _small(words, i)
        if small is None:
            return None
        value, k = small
    if k < len(words) and words[k] in ("minute", "minutes"):
        k += 1
    return (value, k) if 0 < value <= 30 else None


def _hour(words: Sequence[str], i: int) -> tuple[int, int] | None:
    if i >= len(words):
        return None
    w = words[i]
    if w.isdigit() and 1 <= int(w) <= 12:
        return int(w), i + 1
    if w in UNITS and 1 <= UNITS[w] <= 12:
        return UNITS[w], i + 1
    if w in ("noon", "midday", "midnight"):
        return 12, i + 1
    return None


def _relative_time(words: Sequence[str], i: int) -> tuple[str, int] | None:
    """"quarter past eight", "twenty past eleven", "ten to six", "half past two"."""
    minutes = _minutes_phrase(words, i)
    if minutes is None:
        return None
    value, k = minutes
    if k >= len(words) or words[k] not in ("past", "to"):
        return None
    hour = _hour(words, k + 1)
    if hour is None:
        return None
    h, end = hour
    if words[k] == "past":
        return time_key(h, value), end
    if value not in _TO_MINUTES:
        return None
    return time_key(12 if h == 1 else h - 1, 60 - value), end


# Whisper writes "twenty to eleven" as "20-11", "20 -11" or "20.11": the "to" heard as a dash
# or a point.
# Only twenty and twenty-five before an hour are read so: "10-6" is as often opening hours, and
# a clock's minutes 01-12 after 20 or 25 are rare in speech ("eight eleven p.m." is "8.11 p.m.");
# a date ("20-11-2024", "2024-20-11") is left alone.
_WRITTEN_TO = re.compile(r"(?<![\d$£€.,:/-])\b(20|25)(?: ?-([1-9]|1[0-2])|\.(1[0-2]))\b(?![-/.,:]?\d)")


# Whisper writes "at nine thirty-five" as "at I-35", "at I -35", "at I .30" or "at I'm 35": the
# "nine" heard as "I" (every such time in the transcripts of the twenty-one dev stores was nine:
# "at I-05", "at I-50", "at I'm 35", …). Read so only right after a word that puts a time next
# ("at", "until", "before", "after", "by", "from", "till"), with minutes 00–59 joined by a dash
# or a point ("I'm" needs neither), never "I 35" or a road ("I-95").
_NINE_AS_I = re.compile(r"\b(at|until|till|before|after|by|from) I(?:'m ?[-.]? ?| ?[-.] ?)([0-5]\d)\b(?![-.:]?\d)",
                        re.I)


def spell_out_written_to(text: str) -> str:
    """``text`` with "20-11" and "20.11" written as "20 to 11" (and "25-3" as "25 to 3"), so
    that they read as the times "twenty to eleven" and "twenty-five to three" were, and "at
    I-35" as "at 9:35" (see ``_NINE_AS_I``)."""
    text = _NINE_AS_I.sub(lambda m: f"{m.group(1)} 9:{m.group(2)}", text or "")
    return _WRITTEN_TO.sub(lambda m: f"{m.group(1)} to {m.group(2) or m.group(3)}", text)


def _spoken_minutes(words: Sequence[str], i: int) -> tuple[int, int] | None:
    """The minutes of "eight fifteen", "two thirty", "eight oh five", "eleven forty five"."""
    if i < len(words) and words[i] == "oh":
        small = _small(words, i + 1)
        if small is not None and small[0] < 10:
            return small
        return None
    small = _small(words, i)
    if small is not None and 10 <= small[0] < 60:
        return small
    return None


def canonical_tokens(text: str) -> list[str]:
    """Lower-case words with every number, time and ordinal phrase folded into its key (see
    the module doc). "'s" is dropped ("Tom's" → "tom")."""
    words = []
    for raw in _WORD.findall(spell_out_written_to(text)):
        low = raw.lower().replace("’", "'")
        if low.endswith("'s"):
            low = low[:-2]
        words.append(low)
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        rel = _relative_time(words, i)
        if rel is not None:
            out.append(rel[0])
            i = rel[1]
            continue
        if w[0].isdigit() and not w.isdigit() and not re.fullmatch(r"\d+\.\d", w):
            out.append(_digit_token(w))
            i += 1
            if i < len(words) and words[i] in ("am", "pm"):
                i += 1
            continue
        if w in ORDINALS:
            out.append(ordinal_key(ORDINALS[w]))
            i += 1
            continue
        if w in TENS and i + 1 < len(words) and words[i + 1] in ORDINALS and ORDINALS[words[i + 1]] < 10:
            out.append(ordinal_key(TENS[w] + ORDINALS[words[i + 1]]))
            i += 2
            continue
        card = _cardinal(words, i)
        if card is None:
            out.append(w)
            i += 1
            continue
        value, j, in_words = card
        nxt = words[j] if j < len(words) else ""
        if value.is_integer() and 1 <= value <= 12:
            if nxt in ("o'clock", "oclock", "am", "pm"):
                out.append(time_key(int(value), 0))
                i = j + 1
                continue
            minutes = _spoken_minutes(words, j) if in_words else None
            if minutes is not None:
                out.append(time_key(int(value), minutes[0]))
                i = minutes[1]
                continue
        if in_words and value.is_integer() and 11 <= value <= 99 and j - i == 1:
            later = _small(words, j)  # "nineteen eighty four": a year
            if later is not None and 10 <= later[0] <= 99:
                out.append(str(int(value) * 100 + later[0]))
                i = later[1]
                continue
        out.append(_fmt(value))
        i = j
    return out


def alternative_keys(token: str) -> list[str]:
    """Other readings of a key, for the evidence side of a match only: Whisper writes "eight
    fifteen" as "815" and "eleven twenty" as "1120", so a three- or four-digit number whose
    last two digits can be minutes may also be that time; and a number said in pairs of
    digits ("three twenty-five", "four oh one") is folded into a clock time, which may also
    be that number (a room, a platform, a code). "For" sounds like "four", so "for forty-two
    euros" is written "442 euros" as often as "for 42 euros": a 4 before a two-digit number may
    be that number (and the time 4:42)."""
    out: list[str] = []
    m = re.fullmatch(r"4([1-9]\d)", token)
    if m:
        out.append(m.group(1))
    m = re.fullmatch(r"(\d{1,2})(\d{2})", token)
    if m and 1 <= int(m.group(1)) <= 24 and int(m.group(2)) < 60:
        return [time_key(int(m.group(1)), int(m.group(2))), *out]
    m = re.fullmatch(r"(\d+)\.0{1,2}", token)
    if m:  # "fifty-four dollars" is written "$54.00"
        return [m.group(1)]
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", token)
    if m:  # and the other way: "room three twenty-five" (read as 3:25) may be room 325
        return [m.group(1) + m.group(2)]
    return out


# Whisper writes a spoken "oh" between digits as "or": "room four oh six" → "room 4 or 6".
_OH = frozenset({"or", "oh", "o"})


def spoken_zero_keys(tokens: Sequence[str]) -> list[str]:
    """Numbers a run of tokens may be with its "oh" read as a zero, for the evidence side of a
    match only ("4 or 6" may be 406, or the time 4:06). The tokens themselves stay: "4 or 6
    people" also still means four or six."""
    out: list[str] = []
    for a, oh, b in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if oh in _OH and a.isdigit() and len(a) <= 2 and b.isdigit() and len(b) == 1:
            joined = f"{a}0{b}"
            out += [joined, *alternative_keys(joined)]
    return out


def teen_ty_twin(token: str) -> str | None:
    """The number that sounds almost the same: "fifteen" and "fifty" (15 and 50), "thirteen"
    and "thirty". Listeners and recognisers confuse the two endings, accented speech most."""
    if not token.isdigit():
        return None
    n = int(token)
    if 13 <= n <= 19:
        return str((n - 10) * 10)
    if 30 <= n <= 90 and n % 10 == 0:
        return str(n // 10 + 10)
    return None


def number_keys(text: str) -> set[str]:
    """The numbers and times a text mentions, as keys ("8:15", "180", "third")."""
    return {t for t in canonical_tokens(text) if t[0].isdigit() or t in ORDINALS}


# -- tolerant name matching ------------------------------------------------------------------

COMMON_RANK = 20000  # words among the 20 000 most frequent English words are "common"
EVERYDAY_RANK = 3000  # a capitalised word this frequent ("And", "Look", "Please") is no name
MIN_NAME_CHARS = 4
_freq_lock = threading.Lock()
_common: frozenset[str] | None = None
_ranks: dict[str, int] = {}


def common_words() -> frozenset[str]:
    """The most frequent English words (pyspellchecker's frequency list, loaded once, about
    0.15 s). Empty when the package is missing: then only capitalised words count as names."""
    global _common
    with _freq_lock:
        if _common is None:
            try:
                from spellchecker import SpellChecker

                counts = SpellChecker(language="en", distance=1).word_frequency.dictionary
                ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:COMMON_RANK]
                _common = frozenset(w for w, _ in ranked)
                _ranks.update((w, i) for i, (w, _) in enumerate(ranked))
            except (ImportError, OSError, ValueError):  # pragma: no cover - optional data
                _common = frozenset()
        return _common


def word_rank(word: str) -> int | None:
    """The word's rank among the most frequent English words (0 = "the"), or None when it is
    not among them (rare, a name, or a misrecognition)."""
    common_words()
    return _ranks.get(word.lower())


def not_everyday(word: str) -> bool:
    """Whether a capitalised word may be a name wherever it stands: rarer than the
    ``EVERYDAY_RANK`` most frequent English words ("Tom", "Priya"; not "Look", "Please")."""
    rank = word_rank(word)
    return rank is None or rank > EVERYDAY_RANK


# a given name that is also an English word starts a sentence as a name only when the word is
# rarer than this frequency rank ("Grace" 2803, "Mark" 1648 are; "Hope" 277, "See" 58 are not)
NAME_START_MIN_RANK = 1000


def uncommon_given_name(word: str) -> bool:
    """A known given name that is no very common English word ("Grace", "Mark", "Tom"; not
    "See", "Hope", "Son")."""
    rank = word_rank(word)
    return is_given_name(word) and (rank is None or rank > NAME_START_MIN_RANK)


def may_be_name_at_start(word: str) -> bool:
    """A sentence's first word that may be a name: alphabetic, and not among the everyday
    English words (a capital there says nothing), or a given name that is no very common word
    ("Grace will clean the library card", "Mark took the keys"; never "See", "Hope", "Soon")."""
    if not (word.isalpha() and len(word) >= 3):
        return False
    return not_everyday(word) or uncommon_given_name(word)


def is_common(word: str) -> bool:
    return word.lower() in common_words()


def name_like(word: str, capitalised: bool = False) -> bool:
    """Whether a word may be matched tolerantly: long enough, alphabetic, and a name
    (capitalised where it was written) or a rare word."""
    w = word.lower()
    if len(w) < MIN_NAME_CHARS or not w.isalpha():
        return False
    return capitalised or not is_common(w)


# "-ng" where no vowel follows is said, and heard, as a plain "n" as often as not ("lawn" heard
# as "long", "robin" as "rubbing"); Metaphone spells it "NK", which puts a slip of one sound at
# two letters of the key. The key of a word with it folded to "n" keeps such slips one letter.
_NG_BEFORE_CONSONANT = re.compile(r"ng(?![aeiouy])")


@lru_cache(maxsize=65536)
def sound_key(word: str) -> str:
    """The Metaphone key of ``word`` (lower case letters, or several written together) with
    "ng" before a consonant or at the end folded to "n": "longmore" LNMR, as "lawn more"."""
    return jellyfish.metaphone(_NG_BEFORE_CONSONANT.sub("n", word.lower()))


@lru_cache(maxsize=65536)
def sounds_alike(a: str, b: str) -> bool:
    """Two words a listener could confuse: the same Metaphone key with similar spelling
    (Jaro–Winkler ≥ 0.75: "Stephen"/"Steven", "Milo"/"Mylo"), or nearly the same spelling
    (≥ 0.9 and one edit: "Priya"/"Pria"). Case-insensitive; short words never match."""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    if min(len(a), len(b)) < MIN_NAME_CHARS or not (a.isalpha() and b.isalpha()):
        return False
    jw = jellyfish.jaro_winkler_similarity(a, b)
    if sound_key(a) == sound_key(b) and jw >= 0.75:
        return True
    return jw >= 0.9 and jellyfish.levenshtein_distance(a, b) <= 1


@lru_cache(maxsize=65536)
def clipped_name(a: str, b: str) -> bool:
    """Two given names, one heard as the other cut short: "Henrik" written "Henry" (HNRK /
    HNR), "Marcus" as "Mark". Both must be known given names (retrieval/given_names.py), start
    with the same three letters, and one's Metaphone key (three sounds at least) must be the
    other's less its last sound. "Dan"/"Daniel" (TN / TNL) say too little; "Chris"/"Christopher"
    differ by more than a sound."""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    if a[:3] != b[:3] or not (is_given_name(a) and is_given_name(b)):
        return False
    short, long = sorted((sound_key(a), sound_key(b)), key=len)
    return len(short) >= CLIPPED_MIN_KEY and len(long) == len(short) + 1 and long.startswith(short)


CLIPPED_MIN_KEY = 3
LOOSE_KEY_SIM = 0.5  # 1 − edits / longer Metaphone key, for a name heard as another name


@lru_cache(maxsize=65536)
def loosely_alike(a: str, b: str) -> bool:
    """A name a recogniser may have written as another name: the same first sound and at
    least half of the Metaphone key in common ("Felix" heard as "Philip's": FLKS / FLPS;
    "Maria" as "Mark"), while "Hannah"/"Daniel" and "Oxford"/"London" stay apart. Too loose to
    match words by; only used to tell "another name" from "this name misheard"."""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    if min(len(a), len(b)) < 3 or not (a.isalpha() and b.isalpha()):
        return False
    ka, kb = sound_key(a), sound_key(b)
    if not ka or not kb or ka[0] != kb[0] or max(len(ka), len(kb)) < 3:
        return False  # two-sound keys say too little ("Tom"/"Diego": TM / TK)
    return 1.0 - jellyfish.levenshtein_distance(ka, kb) / max(len(ka), len(kb)) >= LOOSE_KEY_SIM


@lru_cache(maxsize=65536)
def onset_misheard(a: str, b: str) -> bool:
    """A name heard with another first sound and the rest alike: Metaphone keys of three
    sounds or more, of one length, equal after the first ("Ines" as "Denise": INS / TNS,
    "Fatima" as "Putima": FTM / PTM, "Greta" as "Brita": KRT / BRT). A recogniser often
    mishears the onset of a name it does not know; :func:`loosely_alike` keeps the first sound
    and so misses these. Like it, too loose to match words by: only used to tell "another
    name" from "this name misheard" where everything else a question asks is in the sentence."""
    a, b = a.lower(), b.lower()
    if a == b or min(len(a), len(b)) < 3 or not (a.isalpha() and b.isalpha()):
        return a == b
    ka, kb = sound_key(a), sound_key(b)
    return len(ka) == len(kb) >= ONSET_MIN_KEY and ka[1:] == kb[1:]


ONSET_MIN_KEY = 3  # two-sound keys say too little ("Mara"/"Zara": MR / SR, "Tina"/"Nina")


def sound_nearness(words: Iterable[str], text: str) -> float:
    """How near ``text`` comes to sounding like each of ``words``, on average: for each word
    the best Jaro–Winkler similarity of Metaphone keys with a word of ``text`` or two words
    joined ("printer" in "Look, that minter in here": PRNTR / MNTR, 0.78; in "the reading
    lamp": 0.63; "backpack" in "the mark part": BKPK / MRKPRT, 0.61). Too loose to match by
    (it cannot tell "minter" from "painted"); it only ranks sentences that may hold a word
    misheard, for listening again."""
    heard = [k for k in (sound_key(w) for w, _ in words_and_pairs(name_words(text)) if len(w) >= 3) if k]
    keys = [k for k in (sound_key(w) for w in words if len(w) >= 3) if k]
    if not heard or not keys:
        return 0.0
    return sum(max(jellyfish.jaro_winkler_similarity(k, h) for h in heard) for k in keys) / len(keys)


def phrase_sound_nearness(words: Sequence[str], text: str) -> float:
    """:func:`sound_nearness` of ``words``, or of them said as one word when that comes nearer: a
    thing of two words is often heard split elsewhere ("lawn mower" as "long noise": LNMWR
    against LNS, "longnoise", 0.82 as one word; 0.5 word by word, "mower" matching nothing in
    "There is the long noise again.")."""
    near = sound_nearness(words, text)
    if len(words) > 1:
        near = max(near, sound_nearness(["".join(words)], text))
    return near


# Homophones a recogniser writes for a word it heard right: "blue"/"blew", "meet"/"meat",
# "sale"/"sail", "pair"/"pear". The same Metaphone key, the same first letter and similar
# spelling; at least this many letters ("to"/"two" say too little).
HOMOPHONE_MIN_CHARS = 3
HOMOPHONE_MIN_JW = 0.7


@lru_cache(maxsize=65536)
def homophones(a: str, b: str) -> bool:
    """Two different spellings a listener cannot tell apart (case-insensitive)."""
    a, b = a.lower(), b.lower()
    if a == b or min(len(a), len(b)) < HOMOPHONE_MIN_CHARS or a[0] != b[0]:
        return False
    if not (a.isalpha() and b.isalpha()):
        return False
    return jellyfish.metaphone(a) == jellyfish.metaphone(b) and jellyfish.jaro_winkler_similarity(a, b) >= HOMOPHONE_MIN_JW


def homophone_hits(words: Iterable[str], text: str) -> set[str]:
    """The ``words`` (lower case) that ``text`` holds only as a homophone."""
    heard = {w for w, _ in name_words(text)}
    return {w for w in (x.lower() for x in words) if w not in heard and any(homophones(w, h) for h in heard)}


def name_words(text: str) -> list[tuple[str, bool]]:
    """The alphabetic words of ``text`` in order, each with whether it was capitalised."""
    return [(w.lower(), w[:1].isupper()) for w in re.findall(r"[A-Za-z]+", text or "")]


def words_and_pairs(words: Sequence[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """Single words and adjacent pairs joined ("north wind" → "northwind")."""
    out = list(words)
    for (a, ca), (b, cb) in zip(words, words[1:], strict=False):
        out.append((a + b, ca or cb))
    return out


def fuzzy_hits(query_text: str, evidence_text: str, wanted: Iterable[str] | None = None) -> set[str]:
    """The name-like words of ``query_text`` (lower case; also joined pairs) that some
    name-like word or joined pair of ``evidence_text`` sounds like. ``wanted`` limits the
    query words looked for (e.g. those with no exact match)."""
    want = None if wanted is None else {w.lower() for w in wanted}
    q = _name_like_words(query_text)
    if want is not None:
        q = tuple(w for w in q if w in want)
    if not q:
        return set()
    ev = _name_like_words(evidence_text)
    return {w for w in q if any(sounds_alike(w, e) or clipped_name(w, e) for e in ev)}


@lru_cache(maxsize=16384)
def _name_like_words(text: str) -> tuple[str, ...]:
    """The name-like words and joined pairs of ``text`` (lower case). Cached: a question is
    compared with every sentence in scope, and each stream's sentences with every question."""
    return tuple(w for w, c in words_and_pairs(name_words(text)) if name_like(w, c))


# -- phrases misheard as other words ---------------------------------------------------------------
# A recogniser that mishears an accented or noisy sentence usually keeps its sounds: "seed
# packet" is written "seat pocket", "caretaker" "care maker", "watering" "wandering". Such
# common words are never matched one by one (see name_like), but a *phrase* of the question, or
# one long word, whose Metaphone key nearly equals that of a run of the evidence's words, with
# the same first sound and similar spelling, is the same thing heard badly.
PHRASE_MIN_KEY = 4  # Metaphone letters a phrase (or word) must have to be matched by sound
PHRASE_WORD_MIN_CHARS = 6  # a single word must be this long; shorter ones need a partner
PHRASE_KEY_SIM = 0.8  # 1 − edits / longer key: one slip in five sounds
PHRASE_SPELLING_JW = 0.75  # Jaro–Winkler of the words written together
PHRASE_MAX_WORDS = 3


def _content_runs(text: str, function_words: frozenset[str]) -> list[list[str]]:
    """Runs of adjacent content words (no function word, digit or punctuation between)."""
    runs: list[list[str]] = []
    cur: list[str] = []
    for tok in re.findall(r"[A-Za-z]+|[^A-Za-z\s]+", text or ""):
        w = tok.lower()
        if w.isalpha() and len(w) >= 3 and w not in function_words:
            cur.append(w)
            continue
        if cur:
            runs.append(cur)
        cur = []
    if cur:
        runs.append(cur)
    return runs


@lru_cache(maxsize=4096)
def _query_phrases(query_text: str, function_words: frozenset[str]) -> tuple[tuple[tuple[str, ...], str, str], ...]:
    """The phrases of the question that may be heard as other words, in the order they are
    tried: (words, written together, Metaphone key). Cached: one question meets every
    sentence in scope."""
    out = []
    for run in _content_runs(query_text, function_words):
        for i in range(len(run)):
            for j in range(i + 1, min(len(run), i + PHRASE_MAX_WORDS) + 1):
                phrase = tuple(run[i:j])
                spelled = "".join(phrase)
                if len(phrase) == 1 and len(spelled) < PHRASE_WORD_MIN_CHARS:
                    continue
                key = sound_key(spelled)
                if len(key) >= PHRASE_MIN_KEY:
                    out.append((phrase, spelled, key))
    return tuple(out)


@lru_cache(maxsize=16384)
def _sound_phrase_hits(query_text: str, evidence_text: str, function_words: frozenset[str]) -> frozenset[str]:
    heard_set, grams = _heard_grams(evidence_text)
    hits: set[str] = set()
    for phrase, spelled, key in _query_phrases(query_text, function_words):
        if all(w in heard_set for w in phrase):
            continue
        if any(w in hits for w in phrase):  # the shorter phrase already said it
            continue
        if _heard_as(key, spelled, grams, len(phrase) + 1):
            hits.update(phrase)
    return frozenset(hits)


Grams = tuple[dict[str, tuple[tuple[str, str], ...]], ...]


@lru_cache(maxsize=16384)
def _heard_grams(evidence_text: str) -> tuple[frozenset[str], Grams]:
    """The evidence's words, and its runs of 1 … PHRASE_MAX_WORDS + 1 adjacent words joined,
    with their Metaphone keys, by the key's first letter: ``[n - 1][letter]`` holds the
    n-word runs. Cached per text, as a stream's sentences meet every question."""
    heard = [w for w, _ in name_words(evidence_text)]
    grams: list[dict[str, tuple[tuple[str, str], ...]]] = []
    for n in range(1, PHRASE_MAX_WORDS + 2):
        by_sound: dict[str, list[tuple[str, str]]] = {}
        for k in range(len(heard) - n + 1):
            joined = "".join(heard[k:k + n])
            key = sound_key(joined)
            by_sound.setdefault(key[:1], []).append((joined, key))
        grams.append({first: tuple(v) for first, v in by_sound.items()})
    return frozenset(heard), tuple(grams)


def _heard_as(key: str, spelled: str, grams: Grams, max_words: int) -> bool:
    for n in range(1, max_words + 1):
        for other, other_key in grams[n - 1].get(key[:1], ()):
            if other == spelled or abs(len(other_key) - len(key)) > 2:
                continue
            edits = jellyfish.levenshtein_distance(key, other_key)
            if 1 - edits / max(len(key), len(other_key)) < PHRASE_KEY_SIM:
                continue
            if jellyfish.jaro_winkler_similarity(spelled, other) >= PHRASE_SPELLING_JW:
                return True
    return False


def sound_phrase_hits(query_text: str, evidence_text: str, function_words: Iterable[str]) -> set[str]:
    """The content words of ``query_text`` (lower case) that belong to a phrase, or are one
    long word, that ``evidence_text`` holds only as words sounding and looking nearly the same
    ("seed packet" in "The seat pocket costs 32 pounds", "caretaker" in "the care maker").
    ``function_words`` split the question into phrases and never count themselves."""
    return set(_sound_phrase_hits(query_text or "", evidence_text or "", frozenset(function_words)))
