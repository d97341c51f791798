"""What to listen for when listening again: the question's words to bias the recogniser with,
whether a question is about speech at all, and which stretch of a memory to hear."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from difflib import SequenceMatcher

from episodic.config import RetrievalSettings
from episodic.core.query import QueryType
from episodic.core.records import (
    ShortTermMemory,
    TranscriptPiece,
)
from episodic.retrieval.detailed import (
    Unit,
    fuzzy_found,
    relevant,
)
from episodic.retrieval.given_names import is_given_name
from episodic.retrieval.query_analysis import (
    CUE_WORDS,
    GENERIC_QUESTION_WORDS,
    STOPWORDS,
    QueryAnalysis,
)
from episodic.retrieval.snippet_audio import PAD_S
from episodic.retrieval.text_match import (
    canonical_tokens,
    may_be_name_at_start,
    name_like,
    sounds_alike,
)

MAX_HOTWORDS = 30  # Whisper's prompt holds ~220 tokens; hot words beyond this add nothing
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]|\d+(?:[:.,]\d+)*")
# What Whisper writes at the end of a window when the speech has stopped (a prompted decoder
# more often: on the dev sets "… at the counter. Thank you very much.", "… next to the oven. You")
CLOSING_PHRASES = frozenset({
    "thank you", "thank you very much", "thanks", "thank you for watching", "thanks for watching",
    "bye", "bye bye", "goodbye", "you", "okay", "ok",
})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


# -- what to listen for ---------------------------------------------------------------------
def hot_words(question: str, options: Sequence[str] = (), limit: int = MAX_HOTWORDS) -> list[str]:
    """The content words of the question and its options, as written, without repeats:
    names, numbers and nouns a recogniser should be ready to hear ("fire", "alarm", "2:30").
    Function words and words about modality ("say", "hear", "screen") are left out."""
    out: list[str] = []
    seen: set[str] = set()
    for text in (question, *options):
        for word in _WORD.findall(text or ""):
            low = word.lower().strip("'")
            if low in seen or low in STOPWORDS or low in CUE_WORDS:
                continue
            if len(low) < 2 and not low.isdigit():
                continue
            seen.add(low)
            out.append(word)
            if len(out) >= limit:
                return out
    return out


def about_speech(analysis: QueryAnalysis, units: Sequence[Unit], settings: RetrievalSettings) -> bool:
    """Whether the question is one that what was said can answer: an audio (or audio+video)
    question that is not about written text or a non-speech sound, a question whose first
    preferred evidence is speech, or one whose best relevant evidence is a transcript. For a
    time or a number asked for, a summary first does not decide: it says what was heard, read
    and seen together, and the best relevant unit of another kind tells which answers ("At
    what time are the baker and Priya getting together?" recalls first the summary quoting the
    misheard sentence, then the sentence itself). A question naming someone is about speech.
    Other questions keep the summary's say:
    "Which camera showed a rocket?" is about a picture even where a sentence names a rocket."""
    if analysis.asks_text and analysis.query_type is not QueryType.AUDIO:
        return False
    if analysis.names_someone and not analysis.asks_sound and not analysis.shape.pictured_while:
        # no describer knows who Lucas is: "where did Lucas leave the wheelbarrow?" (typed a
        # summary question) and "what time does Diego see the gardener?" (typed visual for
        # "see") are answered by what was said, however the recall ranks
        return True
    if analysis.query_type in (QueryType.AUDIO, QueryType.VIDEO_AUDIO):
        top = next((u for u in units if relevant(u, settings, analysis)), None)
        return not (analysis.asks_sound and top is not None and top.modality == "sound")
    if analysis.preferred_modalities[:1] == ("speech",):
        return True
    value = analysis.shape.focus in ("time", "number")
    top = next((u for u in units if (u.modality != "summary" or not value) and relevant(u, settings, analysis)), None)
    return top is not None and top.modality == "speech"


def said_of_someone(analysis: QueryAnalysis) -> bool:
    """A question typed visual that names someone ("Which colour is the basket that belongs
    to Nora?"): what is known of Nora was said, so its options may be heard in the audio. Not
    reason enough to transcribe again (that stays with :func:`about_speech`): every
    re-listening costs seconds, and a kept transcript changes what later questions find."""
    return analysis.query_type is QueryType.VIDEO and analysis.names_someone and not analysis.asks_text


def about_the_question(analysis: QueryAnalysis, unit: Unit) -> bool:
    """Whether a recalled sentence is about what the question asks about: it holds every one
    of the question's things (``object_terms``; else its content words other than names,
    numbers and words like "price" or "room"), exactly or misheard ("water" in "or map into
    the water and camping" for "Omar's watering can"). Options put into a sentence about
    something else are heard as well as that sentence's own answer: "Tom painted the fishing
    net yet low" says yellow, not the colour of Omar's watering can, and "a charge 14 pounds
    for one mask" (heard right: forty-seven) shares "charge" with "how much for one lemon?"
    but not the lemon. Names are not required: they are what a recogniser mishears most. A
    question with no such words takes any sentence."""
    about = list(analysis.object_terms) or [
        t for t in analysis.terms
        if t not in GENERIC_QUESTION_WORDS and t not in analysis.key_terms and not t[:1].isdigit()
    ]
    missing = [t for t in about if t not in unit.terms]
    if not missing:
        return True
    return set(missing) <= fuzzy_found(analysis.question, missing, unit.text, unit.terms)


def _span(memory: ShortTermMemory, units: Sequence[Unit], max_s: float, cut: bool = True
          ) -> tuple[float, float] | None:
    """The stream time range of ``memory`` to re-transcribe: all of it when it is short enough,
    else the transcript pieces the question matched (``units``, best first) padded a little,
    grown piece by piece while it stays within ``max_s``. Where even the best piece is longer,
    its start (``cut``) or None: a window with little room left must not hear half a sentence
    ("… the ferry crossing" of "… the ferry crossing opens at nine thirty-five"), which would be
    kept as this memory's hearing for the question's words and never heard whole again."""
    lo, hi = memory.t_start, memory.t_end
    if hi - lo <= max_s:
        return lo, hi
    chosen = [u for u in units if u.modality == "speech"] or list(units)
    if not chosen:
        return (lo, lo + max_s) if cut else None
    a = max(lo, chosen[0].t_start - PAD_S)
    b = min(hi, chosen[0].t_end + PAD_S)
    if b - a > max_s:  # one very long piece: its start, where the sentence begins
        return (a, a + max_s) if cut else None
    for u in chosen[1:]:
        na, nb = min(a, max(lo, u.t_start - PAD_S)), max(b, min(hi, u.t_end + PAD_S))
        if nb - na <= max_s:
            a, b = na, nb
    return a, b


def _same_words(a: str, b: str) -> bool:
    """The same words, ignoring case and punctuation."""
    return re.findall(r"[a-z0-9']+", a.lower()) == re.findall(r"[a-z0-9']+", b.lower())


def _bare(word: str) -> str:
    """A word without its possessive ending: the question's "Chen's" is heard as "Chen"."""
    low = word.lower()
    return low[:-2] if low.endswith("'s") and len(low) > 3 else low


def _words_added(old_text: str, new_text: str, words: Sequence[str]) -> set[str]:
    """The question's words that the new transcript has and the old one lacks (a possessive
    and its name alike)."""
    old = {_bare(w) for w in _WORD.findall(old_text)}
    new = {_bare(w) for w in _WORD.findall(new_text)}
    return {_bare(w) for w in words} & (new - old)


def names_in(text: str) -> list[str]:
    """The names a transcript writes: capitalised words not at the start of a sentence that
    are names or rare words ("This is Milo, our cat" → Milo)."""
    out: list[str] = []
    for m in re.finditer(r"[A-Za-z]+", text or ""):
        word = m.group(0)
        before = (text[: m.start()].rstrip() or ".")[-1]
        if word[:1].isupper() and before not in ".!?\"" and name_like(word, capitalised=True):
            out.append(word)
    return out


def opening_names(text: str) -> list[str]:
    """Known given names that open a sentence ("Amara put the laptop by the front desk." →
    Amara): there every word has a capital, so only a given name that is no everyday word
    (retrieval/given_names.py; not "Will", "Mark" opening a sentence) is taken for one."""
    return [w for w in _opening_words(text) if may_be_name_at_start(w) and is_given_name(w)]


def _opening_words(text: str) -> list[str]:
    """The capitalised first word of each sentence of ``text``."""
    return [m.group(1) for m in re.finditer(r"(?:^|[.!?]\s+)\W*([A-Za-z]+)", text or "") if m.group(1)[:1].isupper()]


def names_lost(old_text: str, new_text: str, words: Sequence[str] = ()) -> list[str]:
    """Names of the old transcript that the new one no longer writes as a name: neither the
    same word nor a capitalised sound-alike or join ("North Wind" / "Northwind"), unless the
    question's ``words`` name them. "Milo" heard again as "my low" is lost: the sounds are there,
    the name is not. The audio-likelihood comparison favours common words over rare ones (a
    name is a few unlikely tokens), so a re-hearing that drops a name is not better evidence.
    A name heard again as a name the question asks about ("The Eagle ordered 19X" → "Diego
    ordered 19 eggs") is replaced, not lost: each such name the new text adds excuses one."""
    new_words = re.findall(r"[A-Za-z]+", new_text or "")
    # a compound written as its parts keeps every letter ("the Greenhouse" → "the green
    # house"): the same word, not a name lost (unlike "Milo" → "my low")
    plain = {w.lower() for w in new_words} | {(a + b).lower() for a, b in zip(new_words, new_words[1:], strict=False)}
    caps = [w for w in new_words if w[:1].isupper()]
    caps += [a + b for a, b in zip(caps, caps[1:], strict=False)]
    asked = {w.lower() for w in words}
    old = names_in(old_text)
    pairs = {a: a + b for a, b in zip(old, old[1:], strict=False)} | {b: a + b for a, b in zip(old, old[1:], strict=False)}

    def kept(name: str) -> bool:
        forms = [name] + ([pairs[name]] if name in pairs else [])
        return any(f.lower() in plain or any(sounds_alike(f, c) for c in caps) for f in forms)

    lost = [n for n in old if n.lower() not in asked and not kept(n)]
    old_plain = {w.lower() for w in re.findall(r"[A-Za-z]+", old_text or "")}
    replaced = {w.lower() for w in caps if w.lower() in asked and w.lower() not in old_plain}
    heard_as_asked = _heard_as_asked(old_text, new_text, words)  # old word → the asked words in its place
    lost = [n for n in lost if n not in heard_as_asked]
    replaced -= {w for placed in heard_as_asked.values() for w in placed}  # each excuses once
    # A known given name opening a sentence is lost to a hearing that opens with no name at
    # all, even where the question's word now stands in its place ("Amara put the laptop…"
    # heard again as "My umbrella put my laptop…" for a question about an umbrella: a name
    # the recogniser knew, not its guess at an unknown word); one that opens with another
    # given name ("Luke is moved the apron…" → "Lucas moved the apron…") or with a name the
    # question asks about ("Chad is leaving the maker" → "Chen is meeting the baker") heard one.
    asked_bare = {_bare(w) for w in words}  # "Chen's" asks about Chen
    opens_with_name = bool(opening_names(new_text)) or any(_bare(w) in asked_bare for w in _opening_words(new_text))
    opening = [n for n in opening_names(old_text) if _bare(n) not in asked_bare and not kept(n) and not opens_with_name]
    return lost[len(replaced):] + [n for n in opening if n not in lost]


PLACE_WORDS = 3  # at most this many words on each side of a changed place in the sentence


def _heard_as_asked(old_text: str, new_text: str, words: Sequence[str]) -> dict[str, set[str]]:
    """Old words that the new hearing writes, in the same place of the sentence, as a word the
    question asked about and the old text lacked: "… to see the Malinter at 8.50" heard again
    as "… to see the volunteer at 850" for "When does Lucas see the volunteer?". The capital
    was the recogniser's guess at a word it did not know, not a name it heard."""
    old_words = re.findall(r"[A-Za-z]+", old_text or "")
    new_words = re.findall(r"[A-Za-z]+", new_text or "")
    old_low = {w.lower() for w in old_words}
    asked = {_bare(w) for w in words} - old_low
    out: dict[str, set[str]] = {}
    matcher = SequenceMatcher(a=[w.lower() for w in old_words], b=[w.lower() for w in new_words], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace" or i2 - i1 > PLACE_WORDS or j2 - j1 > PLACE_WORDS:
            continue
        placed = {w.lower() for w in new_words[j1:j2]} & asked
        for w in old_words[i1:i2] if placed else ():
            out.setdefault(w, set()).update(placed)
    return out


VALUE_FOCI = ("number", "time")  # questions answered by a number or a clock time


def said_value_focus(analysis: QueryAnalysis) -> str:
    """The question's focus when its answer is a value said in one sentence; "" for a count
    ("how many times …?" is a number, but counted across sentences, not said in one)."""
    return "" if analysis.shape.counts else analysis.shape.focus


def value_lost(old_text: str, new_text: str, focus: str) -> bool:
    """Whether a re-hearing drops every number of the old transcript while the question asks
    for a number or a time: "The night trail is in room two ahead." heard again, prompted with
    the question, as "The night train is in room" (the decoder stopped before the number). The
    new words may name the question's things better, but the answer was in the words lost."""
    if focus not in VALUE_FOCI:
        return False
    return bool(_values(old_text)) and not _values(new_text)


def value_gained(old_text: str, new_text: str, focus: str) -> set[str]:
    """The numbers a re-hearing writes where the old transcript wrote none, when the question
    asks for a number or a time: "What room is the flower show in now?" over "The flower short
    has moved to room breathing.", heard again as "… has moved to room 310." adds none of the
    question's words (it had "flower" and "room" already), but it adds what the question asks
    for. Empty otherwise: a number heard differently is not gained, it is a disagreement."""
    if focus not in VALUE_FOCI or _values(old_text):
        return set()
    return _values(new_text)


def name_gained(old_text: str, new_text: str, focus: str) -> set[str]:
    """The known given names a re-hearing writes where the old transcript named no one, when
    the question asks for a person: "Name one person who was mentioned in library-cam." over
    "Someone's the library card to the purple.", heard again as "Tom wants the library card to
    be purple.", adds none of the question's words but the kind of word it asks for (as
    :func:`value_gained` does for numbers). A word that is no known given name ("Elix will
    clean the library card.") names no one here, so "Felix" there is a gain; empty when the old
    words already wrote a known given name: a name heard differently is a disagreement, not a
    gain."""
    if focus != "name" or _given_names(old_text):
        return set()
    return {w.lower() for w in _given_names(new_text)}


def _given_names(text: str) -> list[str]:
    """The known given names ``text`` writes as names (inside a sentence, or opening one)."""
    return [w for w in names_in(text) if is_given_name(w)] + opening_names(text)


def _values(text: str) -> set[str]:
    """The numbers ``text`` says, digits or number words ("two ahead" → "2")."""
    return {w for w in canonical_tokens(text or "") if w[:1].isdigit()}


def _plain(text: str) -> str:
    return " ".join(re.findall(r"[a-z']+", text.lower()))


def without_closing_phrase(pieces: Sequence[TranscriptPiece], old_text: str) -> list[TranscriptPiece]:
    """``pieces`` without the closing phrases (``CLOSING_PHRASES``) that end them, unless the
    old transcript ends the same way: a "Thank you." after the sentence is not speech, and it
    costs the new transcript its comparison with the old one."""
    out = list(pieces)
    old_end = _plain(_SENTENCE_END.split(old_text.strip())[-1]) if old_text.strip() else ""
    while out:
        sentences = [x for x in _SENTENCE_END.split(out[-1].text.strip()) if x]
        while sentences and _plain(sentences[-1]) in CLOSING_PHRASES and _plain(sentences[-1]) != old_end:
            sentences.pop()
        text = " ".join(sentences)
        if text == out[-1].text.strip():
            break
        if text:
            out[-1] = replace(out[-1], text=text, words=[])
            break
        out.pop()
    return out


CUT_OFF_WORDS_MAX = 2  # words of a next sentence a memory's audio may end on
_SPACED_DECIMAL = re.compile(r"(\d) \.(\d)")


def without_cut_off_sentence(pieces: Sequence[TranscriptPiece], old_text: str) -> list[TranscriptPiece]:
    """``pieces`` without the first word or two of a next sentence that the re-heard audio ends
    on ("… with the conductor. At": the memory's audio stops where that sentence starts, and
    ingest, hearing the stream whole, gave it to the next memory), unless the old transcript
    ends the same way; and with a number Whisper wrote "6 .25" written "6.25". Either costs a
    right re-hearing its comparison with the old words ("At 6 .25, Hannah's appointment with
    the conductor. At" scored -2.25 against the old words' -1.50; tidied, -1.37)."""
    out = [replace(p, text=_SPACED_DECIMAL.sub(r"\1.\2", p.text)) if _SPACED_DECIMAL.search(p.text) else p
           for p in pieces]
    if not out:
        return out
    last = out[-1].text.strip()
    sentences = [x for x in _SENTENCE_END.split(last) if x]
    tail = sentences[-1] if sentences else ""
    cut = (
        tail
        and not tail.rstrip("\"')").endswith((".", "!", "?"))
        and len(tail.split()) <= CUT_OFF_WORDS_MAX
        and (len(sentences) > 1 or len(out) > 1)  # the words follow a sentence heard whole
        and not _plain(old_text).endswith(_plain(tail))
    )
    if not cut:
        return out
    kept = " ".join(sentences[:-1])
    if kept:
        n = len(tail.split())
        out[-1] = replace(out[-1], text=kept, words=out[-1].words[:-n] if len(out[-1].words) > n else out[-1].words)
    else:
        out.pop()
    return out


def _inside(t_start: float, t_end: float, span: tuple[float, float]) -> bool:
    mid = (t_start + t_end) / 2.0
    return span[0] <= mid <= span[1]


