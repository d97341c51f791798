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

Requests: a leading "(can/could/would you) tell/show/give/remind me", "I('d like/want/need) to
know", "do you (happen to) know/remember", "any idea", "I wonder", "I was wondering", "I'm trying
to remember", "I can't remember", "I forgot", "remind me" is dropped when a question word follows
it (a preposition may come first: "… at what time"); the question word then opens the question
("where Tom left the bag?", in the statement's word order, which the rules for a place, a time or
a person read as well), and a statement's full stop becomes a question mark. Followed by a kind
of fact instead ("I'd like to know the time of the show."), it asks "What is the time of …?".

Lower case: a question typed with no capital at all ("where did omar leave the spade") has the
known given names in it capitalised, as the rules for names expect, except those that are also
common English words or follow "the", "a", "my" … ("the bill", "mark").

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

from episodic.retrieval.text_match import uncommon_given_name, word_rank

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


# how a request opens: "can you tell me", "do you happen to know", "I'm trying to remember",
# "I can't recall", "I forgot", "I was wondering"
_ASKING_LEAD = (
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:tell|show|give|remind)\s+(?:me|us)"
    r"|(?:please\s+)?(?:tell|show|give|remind)\s+(?:me|us)(?:\s+(?:please|again))?"
    r"|i(?:\s+would|'d|’d)?\s+(?:like|want|need|wish)\s+to\s+(?:know|find\s+out|check)"
    r"|i\s+(?:am|was)\s+trying\s+to\s+(?:remember|recall|work\s+out|figure\s+out|find\s+out)"
    r"|i\s+(?:do|did|can|could)\s*not\s+(?:remember|recall|quite\s+remember)|i\s+(?:have\s+)?forg[eo]t(?:ten)?"
    r"|(?:do|did)\s+you\s+(?:happen\s+to\s+)?(?:know|remember|recall)|(?:have\s+you\s+(?:got\s+)?)?any\s+idea"
    r"|i\s+(?:wonder|am\s+wondering|was\s+wondering)|remind\s+me)"
)
_REQUEST = re.compile(
    r"^\s*(?:(?:please|so|ok|okay|and|hey|hi)\W+)*" + _ASKING_LEAD + r"\s*,?\s+"
    # "… at what time Tom sees the baker": a preposition may open the question
    r"(?=(?:(?:at|in|on|by|from|for|to|with|until|till)\s+)?(?:where|when|who|whom|whose|what|which|how|why)\b)",
    re.I,
)


_LOWER_WORD = re.compile(r"\b[a-z]{3,}\b")
# in a question typed in lower case, a given name that is also an English word this common is
# taken for the word ("bill", "mark", "page"; "grace", "tom", "rose" are names)
_LOWER_NAME_MIN_RANK = 2500
_DETERMINERS = frozenset(("the", "a", "an", "this", "that", "these", "those", "my", "your", "his", "her", "its", "our",
                          "their", "some", "any", "no", "every", "each"))
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
    r"|(?:give|tell)\s+(?:me|us)|what\s+about|" + _ASKING_LEAD + r")\s+"
    r"(?=(?:the\s+)?(?:[a-z]+\s+){0,2}?(?:" + _KIND_NOUNS + r")\s+\w)",
    re.I,
)
_FRAGMENT = re.compile(
    rf"^(?P<the>the\s+)?(?:[a-z]+\s+){{0,2}}?(?:{_KIND_NOUNS})\s+(?:of|for|on|in|at|to)\b", re.I
)


def asked_plainly(question: str) -> str:
    """``question`` with its contractions spelled out, a request around it dropped and its
    loose spoken build put in the order the rules read (see the module doc); a plain question
    is returned unchanged."""
    written = question = names_capitalised(spelled_out(question))
    asking = question.rstrip().endswith("?") or bool(_PLEASE_AT_END.search(question))
    question = _PLEASE_AT_END.sub(lambda m: m.group(1) or "?", _LEAD_IN.sub("", question, count=1))
    m = _REQUEST.match(question)
    if m:  # "I'm trying to remember when Tom left." asks "When Tom left?"
        question, asking = _as_question(question[m.end():]), True
    elif m := _NOUN_REQUEST.match(question):  # "Tell me the colour Tom painted the door."
        rest = question[m.end():]
        question, asking = _as_question(f"What is {rest[:1].lower()}{rest[1:]}"), True
    if asking:  # a moment query ("the price of the novel") is a phrase to find, not a question
        question = _fragment_asked(_fronted_put_back(question))
    return written if question == written else question[:1].upper() + question[1:]


def _as_question(asked: str) -> str:
    """A request's question with the question mark a statement around it left off."""
    asked = asked.rstrip()
    return asked if asked.endswith("?") else asked.rstrip(".!") + "?"


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


def names_capitalised(question: str) -> str:
    """A question typed all in lower case ("where did omar leave the spade") with the known
    given names that are no everyday word capitalised ("Omar"; never "will", "may", "bill"):
    the rules take a capital after the first word for a name, and a name is the question's
    surest term. A question with any capital letter is left as written."""
    if any(ch.isupper() for ch in question):
        return question

    def named(m: re.Match[str]) -> str:
        word = m.group(0)
        rank = word_rank(word)
        if not uncommon_given_name(word) or (rank is not None and rank <= _LOWER_NAME_MIN_RANK):
            return word
        before = question[: m.start()].split()
        # "the bill", "a rose": a determiner opens a noun phrase, not a name
        return word if before and before[-1] in _DETERMINERS else word.capitalize()

    return _LOWER_WORD.sub(named, question)


def spelled_out(question: str) -> str:
    """``question`` with its contractions written in full (see the module doc); a question
    without any is returned unchanged."""
    if "'" not in question and "’" not in question and "til" not in question.lower():
        return question
    for pattern, replacement in _RULES:
        question = pattern.sub(replacement, question)
    return question
