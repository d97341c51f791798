"""A question's contractions spelled out before it is analysed ("When's the show?" → "When is
the show?", "Who's fixing it?" → "Who is fixing it?", "Where'd Tom put it?" → "Where did Tom
put it?").

The question's shape (retrieval/question_shape.py) and its analysis read the words people
write when they ask carefully ("when is", "what is", "does not"); people typing a question
write "when's", "what's" and "doesn't" as often. Spelling those out once, where the analysis
starts, lets every rule read either. A possessive is left alone ("Tom's bag", "the cat's
name"): only a question word, a pronoun or "there"/"here"/"that" takes "'s" as "is", and
"n't", "'re", "'ve", "'ll", "'m" are spelled out wherever they stand. "'d" after a question
word is "did" ("Where'd she go?"); elsewhere it is left as written (would or had). "Till",
"til" and "'til" are "until" ("open till when?"), except a shop's till ("the till").
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


def spelled_out(question: str) -> str:
    """``question`` with its contractions written in full (see the module doc); a question
    without any is returned unchanged."""
    if "'" not in question and "’" not in question and "til" not in question.lower():
        return question
    for pattern, replacement in _RULES:
        question = pattern.sub(replacement, question)
    return question
