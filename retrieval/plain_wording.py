"""A question read in the plain wording the analysis rules expect: contractions spelled out and a
request around it dropped ("When's the show?" → "When is the show?", "Can you tell me where
Tom left the bag?" → "where Tom left the bag?").

The question's shape (retrieval/question_shape.py) and its analysis read the words people
write when they ask carefully ("when is", "what is", "where did …"); people typing a question
write "when's", "what's" and "doesn't" as often, and wrap it in a request as often ("Tell me
when …", "Do you know where …", "I'd like to know how many …"). Reading both ways once, where
the analysis starts, lets every rule read either.

Contractions: a possessive is left alone ("Tom's bag", "the cat's name"): only a question word,
a pronoun or "there"/"here"/"that" takes "'s" as "is", and "n't", "'re", "'ve", "'ll", "'m" are
spelled out wherever they stand. "'d" after a question word is "did" ("Where'd she go?");
elsewhere it is left as written (would or had). "Till", "til" and "'til" are "until" ("open
till when?"), except a shop's till ("the till").

Requests: a leading "(can/could/would you) tell/show/give me", "I('d like/want/need) to know",
"do you know/remember", "any idea", "I wonder", "remind me" is dropped when a question word
follows it; the question word then opens the question ("where Tom left the bag", in the
statement's word order, which the rules for a place, a time or a person read as well).
"""

from __future__ import annotations

import re
from collections.abc import Callable

# words whose "'s" is "is" (never a possessive); "let's" is "let us"
_IS_AFTER = r"what|when|where|who|how|why|which|that|there|here|it|he|she|this"
_APOSTROPHE = "['’]"
_RULES: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (re.compile(rf"\b(can){_APOSTROPHE}t\b", re.I), r"\1not"),
    (re.compile(rf"\b(w)on{_APOSTROPHE}t\b", re.I), r"\1ill not"),
    (re.compile(rf"\b(sh)an{_APOSTROPHE}t\b", re.I), r"\1all not"),
    (re.compile(rf"\b(\w+)n{_APOSTROPHE}t\b", re.I), r"\1 not"),
    (re.compile(rf"\b(let){_APOSTROPHE}s\b", re.I), r"\1 us"),
    (re.compile(rf"\b({_IS_AFTER}){_APOSTROPHE}s\b", re.I), r"\1 is"),
    (re.compile(rf"\b(what|when|where|who|how|why){_APOSTROPHE}d\b", re.I), r"\1 did"),
    (re.compile(rf"\b(\w+){_APOSTROPHE}re\b", re.I), r"\1 are"),
    (re.compile(rf"\b(\w+){_APOSTROPHE}ve\b", re.I), r"\1 have"),
    (re.compile(rf"\b(\w+){_APOSTROPHE}ll\b", re.I), r"\1 will"),
    (re.compile(rf"\b(i){_APOSTROPHE}m\b", re.I), r"\1 am"),
    # "open till when?", "'til 8": until (not the till of a shop: "the till", "a till")
    (re.compile(rf"(?<![\w'’])(?:{_APOSTROPHE}til|til|till)\b(?<!\bthe till)(?<!\ba till)", re.I),
     lambda m: "Until" if m.group(0).lstrip("'’")[:1].isupper() else "until"),
)


_REQUEST = re.compile(
    r"^\s*(?:(?:please|so|ok|okay|and|hey|hi)\W+)*"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:tell|show|give)\s+(?:me|us)"
    r"|(?:please\s+)?(?:tell|show|give)\s+(?:me|us)(?:\s+please)?"
    r"|i(?:\s+would|'d|’d)?\s+(?:like|want|need|wish)\s+to\s+know"
    r"|do\s+you\s+(?:know|remember|recall)|(?:have\s+you\s+)?any\s+idea|i\s+wonder|i\s+am\s+wondering"
    r"|remind\s+me)\s*,?\s+"
    r"(?=(?:where|when|who|whom|whose|what|which|how|why)\b)",
    re.I,
)


def asked_plainly(question: str) -> str:
    """``question`` with its contractions spelled out and a request around it dropped (see
    the module doc); a plain question is returned unchanged."""
    question = spelled_out(question)
    m = _REQUEST.match(question)
    if not m:
        return question
    rest = question[m.end():]
    return rest[:1].upper() + rest[1:]


def spelled_out(question: str) -> str:
    """``question`` with its contractions written in full (see the module doc); a question
    without any is returned unchanged."""
    if "'" not in question and "’" not in question and "til" not in question.lower():
        return question
    for pattern, replacement in _RULES:
        question = pattern.sub(replacement, question)
    return question
