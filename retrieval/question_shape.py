"""The shape of a question beyond its modality: is it about time order ("what was said right
after X", "which happened first, A or B"), a count ("how many times"), which stream, and what
kind of short phrase answers it (a name, a number, a time, a place, a colour)?

Pure text analysis, no models: the answer stages use it to pick how to answer (from the time
order of the evidence, by counting moments, from stream ids, by extracting a span).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from episodic.core.query import Focus, Order

_CLAUSE_END = re.compile(r"\s*(?:[?.!]|$)")
_TRAILING = re.compile(
    r"\s+(?:was|is|were|got|had been|has been)\s+(?:mentioned|said|announced|shown|heard|seen|"
    r"displayed|talked about|discussed)\s*$|\s+(?:happened|occurred|came|was said)\s*$",
    re.I,
)
_AFTER = re.compile(
    r"\b(?:(?:right|just|immediately|directly|straight|soon)\s+)?(after|following|before|"
    r"prior to|preceding)\s+(.+?)\s*(?:[?!]|$)",
    re.I,
)
_LEADING_AFTER = re.compile(
    r"^\s*(?:(?:right|just|immediately|directly)\s+)?(after|before)\s+(.+?),\s*(.+)$", re.I
)
# "which of these was mentioned first?": the order word closes the question
_FIRST = re.compile(r"\b(first|earlier|earliest|sooner)\s*[?.!]?\s*$", re.I)
_LAST = re.compile(r"\b(last|later|latest)\s*[?.!]?\s*$", re.I)
_WHICH_FIRST = re.compile(
    r"\b(?:which|what)\b.*?\b(first|earlier|earliest|last|later|latest)\b[\s,:;-]*(.+?)\s+or\s+(.+?)\s*[?.!]?\s*$",
    re.I,
)
_COUNT_TIMES = re.compile(r"\bhow many times\b|\bhow often\b|\bnumber of times\b", re.I)
_STREAM_Q = re.compile(
    r"\b(?:which|what|in which|on which|from which)\s+(?:camera|cam|stream|feed|recording|video|"
    r"clip|channel|source)\b",
    re.I,
)
_NAME = re.compile(
    r"\b(?:name|called|named|who)\b|\bwhat(?:'s| is| was) (?:his|her|their|its) name\b", re.I
)
_TIME = re.compile(
    r"\bwhat time\b|\bat what time\b|\bwhen (?:does|do|did|will|is|was|are|were)\b.*\b(?:"
    r"leav(?:e|es|ing)|left|start(?:s|ed|ing)?|open(?:s|ed|ing)?|clos(?:e|es|ed|ing)|"
    r"begin(?:s|ning)?|began|end(?:s|ed|ing)?|arriv(?:e|es|ed|ing)|depart(?:s|ed|ing)?|"
    r"finish(?:es|ed|ing)?|served|due|scheduled|meet(?:s|ing)?|happen(?:s|ing)?|tak(?:e|es|ing) place)\b",
    re.I,
)
_NUMBER = re.compile(
    r"\bhow (?:many|much|long|old|far|tall|big|heavy|fast|often)\b|\bwhat (?:number|year|price|"
    r"age|percentage|amount)\b|\bwhich (?:number|year|platform|gate|room|floor)\b",
    re.I,
)
_COLOUR = re.compile(r"\b(?:what|which) colou?r\b", re.I)
# Non-speech sounds: "besides people talking, what could you hear?", "what sound …",
# "what could be heard while the picture was dark?" (no words of speech asked about)
_BESIDES_SPEECH = re.compile(
    r"\b(?:besides|apart from|aside from|other than|except(?: for)?|beyond)\s+(?:the\s+)?"
    r"(?:speech|talking|voices?|conversation|words|spoken words|(?:people|someone|somebody|anyone) "
    r"(?:talking|speaking|chatting)|what (?:was|is) said)\b",
    re.I,
)
_WHAT_SOUND = re.compile(r"\b(?:what|which)\s+(?:kind of\s+|sort of\s+)?(?:sounds?|noises?|music)\b", re.I)
_COULD_HEAR = re.compile(r"\b(?:could|can|did|was|were)\s+(?:you\s+|one\s+|we\s+|i\s+)?(?:be\s+)?hear[d]?\b", re.I)
_SPEECH_ASKED = re.compile(
    r"\b(?:about|say|says|said|saying|mention\w*|announc\w*|name|number|price|cost|time|word|words|"
    r"talk(?:ed|ing)? about|someone|somebody|who)\b",
    re.I,
)
# "What is the garden-cam recording mostly about?", "main subject of …": the gist of a stream
_TOPIC = re.compile(
    r"\b(?:mostly|mainly|chiefly|largely|generally|primarily)\s+about\b|\bmain\s+(?:subject|topic|theme)\b|"
    r"\bwhat\s+(?:is|was)\s+(?:it|this|that|the\s+[\w-]+(?:\s+[\w-]+)?)\s+about\s*[?.!]?\s*$|"
    r"\b(?:overall|on the whole|in general)\s*[?.!]?\s*$|\bwhat(?:'s| is| was)\s+(?:going on|happening)\b|"
    r"\b(?:which|what)\s+(?:kind of\s+|sort of\s+|type of\s+)?(?:setting|venue|scene)\s+(?:does|is)\b",
    re.I,
)
# "Name one person who was mentioned in …", "who was mentioned in …"
_PEOPLE = re.compile(
    r"\bname\s+(?:one|a|any|some|the)\s+(?:person|people|name)\b"
    r"|\bwho\s+(?:is|was|were|are|gets|got)\s+(?:mentioned|named|talked about|spoken about|discussed)\b"
    r"|\bwhich\s+(?:person|people|names?)\s+(?:is|are|was|were)\s+(?:mentioned|named|talked about|discussed)\b"
    r"|\b(?:one|any|some)\s+of\s+the\s+(?:people|persons)\b"
    r"|\b(?:a|one|any)\s+(?:person|name)\s+(?:who\s+(?:is|was)\s+|that\s+(?:is|was)\s+)?"
    r"(?:mentioned|named|talked about|spoken about|discussed)\b",
    re.I,
)
_PLACE = re.compile(r"^\s*where\b|\bwhat (?:place|city|town|country|station|destination)\b|\bwhere (?:to|does|did|is|was|are|were)\b", re.I)


@dataclass(frozen=True)
class QuestionShape:
    """What a question asks for, beside its words."""

    order: Order | None = None
    anchor: str = ""  # "right after <anchor>": the moment the answer is placed against
    compared: tuple[str, ...] = ()  # "which happened first, <A> or <B>"
    counts: bool = False  # "how many times": count distinct moments
    asks_stream: bool = False  # "which camera showed …"
    focus: Focus = "any"
    sound: bool = False  # asks what could be heard besides speech: answered from sound units
    gist: str = ""  # "topic" ("what is X mostly about?") | "people" ("name one person mentioned")


def _clean(phrase: str) -> str:
    phrase = _CLAUSE_END.sub("", phrase.strip())
    phrase = _TRAILING.sub("", phrase)
    return phrase.strip(" ,;:-\"'“”")


def focus_of(question: str) -> str:
    """The kind of short phrase that answers ``question``."""
    if _COLOUR.search(question):
        return "colour"
    if _TIME.search(question):
        return "time"
    if _NUMBER.search(question):
        return "number"
    if _NAME.search(question):
        return "name"
    if _PLACE.search(question):
        return "place"
    return "any"


def asks_nonspeech_sound(question: str) -> bool:
    """Whether ``question`` asks what could be heard other than words: "besides speech …",
    "what sound …", or "what could be heard …" with nothing said asked about."""
    q = " ".join(question.split())
    if _BESIDES_SPEECH.search(q) or _WHAT_SOUND.search(q):
        return True
    return bool(_COULD_HEAR.search(q)) and not _SPEECH_ASKED.search(q)


def gist_of(question: str) -> str:
    """"topic" or "people" when the question asks for a stream's gist (see QuestionShape)."""
    if _PEOPLE.search(question):
        return "people"
    if _TOPIC.search(question):
        return "topic"
    return ""


def question_shape(question: str, n_options: int = 0) -> QuestionShape:
    """Order, count, stream and focus of ``question`` (see :class:`QuestionShape`)."""
    q = " ".join(question.split())
    extra = {"sound": asks_nonspeech_sound(q), "gist": gist_of(q)}
    counts = bool(_COUNT_TIMES.search(q))
    asks_stream = bool(_STREAM_Q.search(q))
    focus = "number" if counts else focus_of(q)
    m = _WHICH_FIRST.search(q)
    if m:
        which = m.group(1).lower()
        order = "first" if which in ("first", "earlier", "earliest") else "last"
        return QuestionShape(order=order, compared=(_clean(m.group(2)), _clean(m.group(3))),
                             counts=counts, asks_stream=asks_stream, focus=focus, **extra)
    m = _LEADING_AFTER.match(q)
    if m:
        order = "after" if m.group(1).lower() == "after" else "before"
        return QuestionShape(order=order, anchor=_clean(m.group(2)), counts=counts,
                             asks_stream=asks_stream, focus=focus, **extra)
    m = _AFTER.search(q)
    if m and not re.search(r"\b(?:while|when|during)\b", q[: m.start()], re.I):
        word = m.group(1).lower()
        order = "after" if word in ("after", "following") else "before"
        anchor = _clean(m.group(2))
        if anchor:
            return QuestionShape(order=order, anchor=anchor, counts=counts,
                                 asks_stream=asks_stream, focus=focus, **extra)
    if n_options and not counts:
        # "Which of these was mentioned first?": the options are what is compared
        if _FIRST.search(q):
            return QuestionShape(order="first", counts=counts, asks_stream=asks_stream, focus=focus, **extra)
        if _LAST.search(q):
            return QuestionShape(order="last", counts=counts, asks_stream=asks_stream, focus=focus, **extra)
    return QuestionShape(counts=counts, asks_stream=asks_stream, focus=focus, **extra)
