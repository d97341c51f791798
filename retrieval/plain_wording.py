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

Spoken questions are built more loosely than written ones, in ways that do not depend on what
is asked about (session 83, after a set of wordings the rules were not written from lost about
a quarter of its answers):
- a leading "and", "so", "okay", "oh" or "right," and a trailing ", please" are dropped ("And
  after the bell, what came next?" → "After the bell, what came next?");
- a thing put first and asked about after a comma or colon goes back where the question
  points at it ("The umbrella Priya painted, what colour is it?" → "What colour is the
  umbrella Priya painted?"), or after the question when nothing points at it ("The bell or the
  song: which came first?" → "Which came first, the bell or the song?");
- a bare noun phrase asking for a kind of fact is a "what is" question ("Price of the novel?"
  → "What is the price of the novel?", "Closing time on the sign?").
A phrase that opens with a preposition, a connective or a question word ("In garden-cam, what
…", "While the screen was dark, what …", "Ignoring the voices, what …") is a frame, not a thing
put first, and stays where it is.
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


_QUESTION_WORDS = r"what|which|who|whom|whose|where|when|how|why"
_AUX = r"is|was|are|were|did|does|do|has|have|had|can|could|will|would|should|may|might|must|shall"
# "And …", "So …", "Okay, …", "Right, …": said before a question, asking nothing
_LEAD_IN = re.compile(r"^\s*(?:(?:(?:and|so|ok|okay|oh|um|uh|also|hmm|please)\b\s*,?|(?:right|well|now|alright)\s*,)\s*)+", re.I)
_PLEASE_AT_END = re.compile(r"\s*,?\s*\bplease\s*([?.!]*)\s*$", re.I)
# a frame, not a thing put first: a preposition, a connective, an adverb of time or order, a
# participle that sets something aside, a pronoun subject or a question word opens it
_FRAME_WORDS = frozenset((
    f"{_QUESTION_WORDS}|{_AUX}|in|on|at|after|before|during|while|whilst|when|as|with|without|according|"
    "besides|beside|apart|aside|other|except|excluding|ignoring|leaving|setting|not|between|among|of|from|"
    "for|to|since|until|by|once|if|given|near|next|behind|under|over|inside|outside|around|through|"
    "throughout|across|into|onto|upon|within|along|right|just|immediately|directly|straight|shortly|soon|"
    "earlier|later|first|then|also|now|today|yesterday|this|that|there|here|i|you|we|they|he|she|it|"
    "someone|somebody|people|yes|no|tell|give|show|name|list|count|describe|say"
).split("|"))
_FRONTED = re.compile(
    rf"^(?P<front>[^,:;?!]+?)\s*(?P<sep>,|:|;|\s[-\u2013\u2014]\s)\s*"
    rf"(?P<question>(?:{_QUESTION_WORDS}|{_AUX})\b[^,:;]*?)\s*(?P<end>[?.!]*)\s*$",
    re.I,
)
# words that make a phrase a clause of its own ("can", "may", "will" and "must" are left out: a
# watering can, a will)
_CLAUSE_VERBS = (frozenset(_AUX.split("|")) - {"can", "may", "will", "must"}) | {
    "been", "being", "be", "am", "said", "says", "mentioned"}
_POINTER = re.compile(r"\b(?:it|that|this|they|them)\b", re.I)
# "Price of the novel?", "Room number for the flower show", "Closing time on the sign in X?"
_KIND_NOUNS = (r"price|cost|time|name|number|colou?r|room|location|place|date|day|count|amount|age|address|"
               r"platform|gate|spot")
# "I need the time of Mei's appointment.": a request for a kind of fact, asked as a fragment
_NOUN_REQUEST = re.compile(
    r"^\s*(?:i\s+(?:need|want|would\s+like|'d\s+like|am\s+after)|(?:can|could|would)\s+(?:you\s+)?(?:give|tell)\s+(?:me|us)"
    r"|(?:give|tell)\s+(?:me|us)|what\s+about)\s+(?=(?:the\s+)?(?:[a-z]+\s+){0,2}?(?:" + _KIND_NOUNS + r")\s+\w)",
    re.I,
)
_FRAGMENT = re.compile(
    rf"^(?P<the>the\s+)?(?:[a-z]+\s+){{0,2}}?(?:{_KIND_NOUNS})\s+(?:of|for|on|in|at|to)\b", re.I
)


def asked_plainly(question: str) -> str:
    """``question`` with its contractions spelled out, a request around it dropped and its
    loose spoken build put in the order the rules read (see the module doc); a plain question
    is returned unchanged."""
    written = question = spelled_out(question)
    asking = question.rstrip().endswith("?") or bool(_PLEASE_AT_END.search(question))
    question = _PLEASE_AT_END.sub(lambda m: m.group(1) or "?", _LEAD_IN.sub("", question, count=1))
    m = _REQUEST.match(question)
    if m:
        question, asking = question[m.end():], True
    elif m := _NOUN_REQUEST.match(question):  # "Tell me the colour Tom painted the door."
        rest = question[m.end():]
        question, asking = f"What is {rest[:1].lower()}{rest[1:]}", True
    if asking:  # a moment query ("the price of the novel") is a phrase to find, not a question
        question = _fragment_asked(_fronted_put_back(question))
    return written if question == written else question[:1].upper() + question[1:]


def _fronted_put_back(question: str) -> str:
    """"The umbrella Tom painted, what colour is it?" → "what colour is the umbrella Tom
    painted?"; "A or B: which came first?" → "which came first, A or B?" (module doc)."""
    m = _FRONTED.match(question)
    if not m or m.group("sep") == ";":
        return question
    front, asked, end = m.group("front").strip(), m.group("question").strip(), m.group("end") or "?"
    words = re.findall(r"[a-z']+", front.lower())
    # choices offered first ("where Tom left the bag or who fixed the lamp: which came up first?")
    offered = m.group("sep") == ":" and "or" in words
    # a frame ("In garden-cam, …", "Overall, …"), or a clause of its own ("the bell was rung, …")
    if not offered and (len(words) < 2 or words[0] in _FRAME_WORDS or _CLAUSE_VERBS.intersection(words)):
        return question
    pointers = list(_POINTER.finditer(asked))
    # "The sign named a room: which number?": a clause with a verb of its own, nothing points at it
    if not pointers and not offered and any(w.endswith("ed") for w in words[1:]):
        return question
    if words[0] in ("the", "a", "an"):
        front = front[:1].lower() + front[1:]
    if pointers:
        p = pointers[-1]
        return f"{asked[: p.start()]}{front}{asked[p.end():]}{end}"
    return f"{asked}, {front}{end}"


def _fragment_asked(question: str) -> str:
    """"Price of the novel?" → "What is the price of the novel?" (module doc)."""
    m = _FRAGMENT.match(question)
    words = re.findall(r"[a-z']+", question.lower())
    # "the price of the rope was mentioned; what came next?" is a sentence, not a fragment
    if not m or words[0] in _FRAME_WORDS or _CLAUSE_VERBS.intersection(words):
        return question
    return f"What is {question[:1].lower() + question[1:]}" if m.group("the") else f"What is the {question[:1].lower() + question[1:]}"


def spelled_out(question: str) -> str:
    """``question`` with its contractions written in full (see the module doc); a question
    without any is returned unchanged."""
    if "'" not in question and "’" not in question and "til" not in question.lower():
        return question
    for pattern, replacement in _RULES:
        question = pattern.sub(replacement, question)
    return question
