"""Query analysis (HippoMM C.2, Table 6): which modality a question needs, and the lexical view
of the question that the later stages share.

The paper asks GPT-4o to classify. The offline model here (SmolLM2-135M) cannot do that
reliably, so the type comes from two signals that do not depend on it:

* **nearest labelled examples** – the question's MiniLM cosine to a handful of example
  questions per type (mean of the three closest), which generalises to wordings no keyword
  list anticipates;
* **keyword cues** – words that plainly name a modality ("said", "heard" → audio; "wearing",
  "on screen" → visual; "overall", "summarise" → gist) and temporal connectors ("while",
  "when") that tie a heard thing to a seen one (cross-modal).

Each cue adds a fixed bonus to its type's example score; the highest total wins, and
``QueryAnalysis.why`` says which cues and examples decided it.

The module also holds the small lexical toolkit (tokens, light stemming, number words, content
terms, expected answer kinds) used by retrieval, moment search and answer checking, so that
every stage agrees on what "the question's words" are.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

from episodic.core.interfaces import TextEmbedder
from episodic.core.query import QueryType
from episodic.retrieval.plain_wording import asked_plainly
from episodic.retrieval.question_shape import QuestionShape, question_shape
from episodic.retrieval.shape_examples import (
    FOCUS_EXAMPLES,
    FOCUS_KINDS,
    FOCUS_MARGIN,
    FOCUS_NEAREST,
)
from episodic.retrieval.text_match import (
    alternative_keys,
    canonical_tokens,
    name_like,
    name_words,
    spoken_zero_keys,
    uncommon_given_name,
)

# -- lexical toolkit -------------------------------------------------------------------------


def _wordset(text: str) -> frozenset[str]:
    """Word lists are written as running text: easier to read and extend than list literals."""
    return frozenset(text.split())


_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*|\d+(?:[.,:]\d+)*")

NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17",
    "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40",
    "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
    "hundred": "100", "thousand": "1000",
}

COLOUR_WORDS = _wordset(
    "red orange yellow green blue purple violet pink brown black white grey gray cyan magenta "
    "beige gold golden silver navy maroon turquoise teal"
)

# the length of the shortest names ("Tom", "Eva"), below what may be matched tolerantly
SHORT_NAME_CHARS = 3
# Function words, question words and words that name no fact ("video", "someone").
STOPWORDS = _wordset(
    """
    a an the and or but if of to in on at by for with from into onto over under about as is
    are was were be been being am do does did done doing have has had having can could will
    would shall should may might must it its it's this that these those there here their they
    them he him his she her hers we us our you your i me my mine what which who whom whose
    when where why how whether not no yes any some all each every both either neither than
    then so too very just also only even up down out off again once more most other such own
    same few many much anything something nothing everything anyone someone somebody everyone
    one ones thing things kind sort way get gets got make makes made go goes went going come
    comes came let lets please tell me give say video recording clip footage film stream camera
    moment time part person people man woman men women guy lady speaker character main like
    according describe describes described short brief himself herself themselves itself
    myself yourself ourselves
    """
)

AUDIO_CUES = _wordset(
    """
    say says said saying mention mentions mentioned mentioning speak speaks spoke spoken
    speaking speech talk talks talked talking hear hears heard hearing sound sounds sounded
    noise noises voice voices announce announces announced announcing announcement tell tells
    told telling ask asks asked asking reply replies replied shout shouts shouted whisper
    whispered sing sings sang singing song songs music audio pronounce pronounced quote
    quoted conversation loudspeaker call calls called explain explains explained explaining
    bark barks barked barking ring rings rang ringing beep beeps beeping buzz buzzing knock
    knocks knocked laugh laughs laughed laughing clap claps clapping applause siren
    discuss discusses discussed discussing discussion chat chats chatted chatting audible
    """
)

# Words that ask about what was heard besides words (memory/sound.py): such questions prefer
# the "sound" evidence units ("music playing", "an engine running") alongside speech.
SOUND_CUES = _wordset(
    """
    hear hears heard hearing sound sounds sounded noise noises noisy loud music musical song
    songs melody tune engine engines motor motors applause applaud applauds applauded applauding
    clap claps clapped clapping cheer cheers cheered cheering barking barked ringing siren sirens
    quiet silent silence audible
    """
)

VISUAL_CUES = _wordset(
    """
    see sees saw seen look looks looked looking show shows showed shown showing display displays
    displayed appear appears appeared visible colour color colours colors coloured colored
    wear wears wearing wore worn dressed hold holds holding held carry carries carrying
    carried screen onscreen sign signs written printed caption captions subtitle subtitles
    logo banner picture pictures pictured image images photo photos photograph photographs
    photographed frame shape slide poster label point points
    pointing pointed standing sitting lying walking running writing typing blacked blackout darkened
    """
)

# Actions: visual when they are what a cross-modal question asks for ("doing while saying").
ACTION_CUES = _wordset(
    "doing holding wearing standing sitting walking running pointing carrying writing typing "
    "cooking eating drinking opening closing pressing"
)

SUMMARY_CUES = _wordset(
    """
    overall summary summarise summarize summarised summarized gist overview general generally
    theme topic purpose mood atmosphere whole entire throughout happen happens happened
    happening events
    """
)

TEMPORAL_CONNECTORS = _wordset("while whilst when during as before after meanwhile")

# Words that name a modality or a question's shape but no fact: they steer the type, and are
# left out of the content terms that must be found in the evidence.
CUE_WORDS = (AUDIO_CUES | VISUAL_CUES | SUMMARY_CUES | TEMPORAL_CONNECTORS | _wordset(
    "word words text written write read reads name named called"
)) - ACTION_CUES


def tokens(text: str) -> list[str]:
    """Lower-case words and numbers, with number, time and ordinal phrases folded into one key
    (:func:`retrieval.text_match.canonical_tokens`): "platform seven" and "Platform 7", "Eight
    fifteen" and "8.15", "twenty past eleven" and "20 past 11" share a token."""
    return canonical_tokens(text)


_UNTIL = _wordset("until till til by since from")


def _asks_when(words: Sequence[str], i: int) -> bool:
    """Whether ``words[i]`` is a "when" that closes the question asking for a time ("open until
    when?", "The show starts when?"), not one joining two moments ("what was said when the
    screen went dark?"). (An opening "when" is left a connector: "When X was discussed, which
    image was on screen?" opens with one.)"""
    return words[i] == "when" and (i == len(words) - 1 or (i > 0 and words[i - 1] in _UNTIL))


_DETERMINERS = _wordset("the a an this that each every their our his her its")
_DO_VERBS = _wordset("do does did")
# what an event does ("the flower show starts at two"), never what a picture shows
_EVENT_VERBS = _wordset("begin begins began start starts started end ends ended open opens opened "
                        "close closes closed finish finishes finished happen happens happened "
                        "last lasts lasted cost costs")


def _names_a_show(words: Sequence[str], i: int) -> bool:
    """Whether ``words[i]`` is "show" the noun, an event ("the flower show", "a show"), not
    the verb that makes a question visual ("what did the camera show?"): a "show" followed by
    what an event does ("does the flower show begin"), a singular "show" after a determiner,
    or after a word that follows one and names neither a recording nor something seen, in a
    question with no "do"/"did" to make it a verb."""
    if words[i] != "show" or i == 0:
        return False
    if i + 1 < len(words) and words[i + 1] in _EVENT_VERBS:
        return True  # "when does the flower show begin?": a show that begins is an event
    before = words[i - 1]
    if before in _DETERMINERS:
        return True
    return (i >= 2 and words[i - 2] in _DETERMINERS and before not in VISUAL_CUES
            and stem(before) not in SOURCE_NOUNS and not _DO_VERBS & set(words[:i]))


# Past forms of everyday verbs that no suffix rule reaches: "Where is the watering can kept?"
# is answered by "… keeps it at the tool shed", "Where did Tom leave the laptop?" by "Tom left
# the laptop …". (Cue verbs such as said/heard/seen/made stay as written: they mark modalities.)
_IRREGULAR_PAST = {
    "kept": "keep", "left": "leave", "bought": "buy", "sold": "sell", "paid": "pay", "told": "tell",
    "met": "meet", "took": "take", "taken": "take", "gave": "give", "given": "give",
    "brought": "bring", "wrote": "write", "spoke": "speak", "spoken": "speak", "found": "find",
    "lost": "lose", "sent": "send", "spent": "spend", "built": "build", "held": "hold",
    "ate": "eat", "eaten": "eat", "ran": "run", "drove": "drive", "driven": "drive",
    "broke": "break", "broken": "break", "forgot": "forget", "forgotten": "forget",
    "chose": "choose", "chosen": "choose", "hid": "hide", "hidden": "hide", "lent": "lend",
    "fed": "feed", "won": "win", "hung": "hang", "sat": "sit", "stood": "stand", "threw": "throw",
    "thrown": "throw", "dug": "dig", "swept": "sweep", "fell": "fall", "fallen": "fall",
    "began": "begin", "begun": "begin", "sang": "sing", "sung": "sing", "taught": "teach",
    "caught": "catch", "thought": "think", "fought": "fight", "sought": "seek", "flew": "fly",
    "flown": "fly", "grew": "grow", "grown": "grow", "knew": "know", "known": "know",
}


def stem(word: str) -> str:
    """A deliberately light stemmer: enough to match "apples"/"apple", "leaves"/"leave",
    "departing"/"depart", "kept"/"keeps"; digits are kept as they are."""
    if not word or word[0].isdigit():
        return word
    w = _IRREGULAR_PAST.get(word, word)
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and (w.endswith("ed") or (w.endswith("es") and w[-3] in "sxz")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w[:8]


def content_terms(text: str, drop: Iterable[str] = ()) -> list[str]:
    """Stems of the words that carry facts (no function words, no modality cues), in order,
    without repeats; ``drop`` removes more (e.g. the question's own words from an answer)."""
    dropped = set(drop)
    out: list[str] = []
    for tok in tokens(text):
        if tok in STOPWORDS or tok in CUE_WORDS or (len(tok) < 2 and not tok.isdigit()):
            continue
        s = stem(tok)
        if s not in dropped and s not in out:
            out.append(s)
    return out


def term_set(text: str) -> set[str]:
    """Every stem of ``text`` (function words included: used as the haystack), with the other
    readings of its numbers ("815" may be "8:15"). A fresh set each call (callers add to it)."""
    return set(_term_set(text))


@lru_cache(maxsize=32768)
def _term_set(text: str) -> frozenset[str]:
    # cached: the same texts recur (key-frame descriptions such as "a scene; colours: blue",
    # a stream's sentences met by every question), and folding numbers costs ≈ 0.1 ms a text
    out = set()
    toks = tokens(text)
    for t in toks:
        out.add(stem(t))
        if t[:1].isdigit():
            out.update(alternative_keys(t))
    out.update(spoken_zero_keys(toks))
    return frozenset(out)


def overlap(terms: Sequence[str], haystack: set[str]) -> float:
    """The fraction of ``terms`` found in ``haystack``; 1.0 when there are no terms."""
    if not terms:
        return 1.0
    return sum(1 for t in terms if t in haystack) / len(terms)


def matched_words(query_terms: Sequence[str], text: str) -> list[str]:
    """The words of ``text`` (as written) whose stems are among ``query_terms``."""
    wanted = set(query_terms)
    seen: list[str] = []
    for raw in _WORD.findall(text or ""):
        keys = canonical_tokens(raw)
        if keys and stem(keys[0]) in wanted and raw not in seen:
            seen.append(raw)
    return seen


_EXPECTS_NUMBER = re.compile(
    r"\b(how (many|much|long|old|far|often|late|early)|what (time|year|date|number|price|age)|"
    r"which (number|year))\b",
    re.I,
)
_EXPECTS_COLOUR = re.compile(r"\b(what|which) colou?r", re.I)


# A question that opens with an auxiliary (perhaps after a leading phrase: "In cam2, did …")
# asks whether, not what: "Was there a picture of a guitar?", "Did anyone mention snow?" (a
# yes, with its moment, or nothing found)
_YES_OR_NO = re.compile(
    r"^\s*(?:[^,?]{0,60},\s*)?(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)(?:n['’]t)?\b", re.I
)


def asks_yes_or_no(question: str) -> bool:
    """Whether ``question`` asks whether something happened rather than what happened."""
    return bool(_YES_OR_NO.match(question))


def expected_answer_kind(question: str) -> str:
    """"number", "colour" or "any": what the answer must at least contain."""
    if _EXPECTS_NUMBER.search(question):
        return "number"
    if _EXPECTS_COLOUR.search(question):
        return "colour"
    return "any"


def satisfies_kind(answer: str, kind: str) -> bool:
    """Whether ``answer`` holds the kind of thing the question asks for."""
    if kind == "number":
        return any(t[0].isdigit() for t in tokens(answer))
    if kind == "colour":
        return any(t in COLOUR_WORDS for t in tokens(answer))
    return True


# -- labelled examples (written for this project) ------------------------------------------

EXAMPLES: dict[QueryType, tuple[str, ...]] = {
    QueryType.VIDEO: (
        "What is the woman holding in her hand?",
        "What colour is the car parked outside?",
        "What text is written on the sign?",
        "What is shown on the screen at the start?",
        "What is the man wearing?",
        "How many people can be seen in the room?",
        "What does the building look like?",
        "Which logo appears on the banner?",
        "What object is on the table?",
    ),
    QueryType.AUDIO: (
        "What does the presenter say about the weather?",
        "What did the woman mention about her trip?",
        "What number is announced over the loudspeaker?",
        "What music is playing in the background?",
        "Who does the speaker thank at the end of the talk?",
        "What sound is heard after the bell?",
        "What name did he call out?",
        "What reason does the caller give for being late?",
        "According to the narrator, how old is the bridge?",
    ),
    QueryType.VIDEO_AUDIO: (
        "What is the man doing while he talks about the budget?",
        "What was on the screen when the speaker mentioned the deadline?",
        "Who is visible in the frame when the alarm sounds?",
        "What colour is the shirt of the person who says hello?",
        "What does the woman point at while explaining the route?",
        "Where is the speaker standing when he announces the winner?",
        "What is displayed on the slide while she describes the results?",
    ),
    QueryType.SUMMARY: (
        "What is this video about?",
        "Summarize what happens in the recording.",
        "What is the main topic of the conversation?",
        "What is the person doing in the video?",
        "Give an overview of the events.",
        "What happened during the meeting?",
        "What is the overall mood of the scene?",
        "What is going on in this clip?",
    ),
}

# Cues that a visual question asks for written text (signs, captions, slides, screens): the
# on-screen text (OCR) is then the evidence to look at first.
TEXT_CUES = _wordset(
    "written write writes wrote text texts sign signs caption captions subtitle subtitles read "
    "reads word words logo banner poster label labels slide slides screen onscreen title headline"
)

# text cues that only ever mean text shown ("what was written on screen?", "what did the sign
# say?"); "read", "word", "name", "title" also mean other things unless something is seen
SCREEN_TEXT_CUES = _wordset(
    "written sign signs caption captions subtitle subtitles logo banner poster slide slides onscreen headline"
)

# "what is said at the end", "the first slide": where in the stream to look, not a fact to
# find in the text. The words are left out of the content terms.
# Not a position: "begin" the verb ("when does the flower show begin?" asks when something
# said begins), "opening/closing time" (a time said or written), "how long did it last?".
_POSITION_START = re.compile(
    r"\b(first|opening(?! (?:time|hours?|date|day))|initial(ly)?|earliest|beginning|intro(duction)?|"
    r"(at|in|near|towards?) the (very )?start)\b", re.I
)
_POSITION_END = re.compile(
    r"\b(last|final(ly)?|latest|closing(?! (?:time|hours?|date|day))|"
    r"(at|in|near|towards?) the (very )?end(ing)?)\b", re.I
)
_LAST_THE_VERB = re.compile(r"\bhow long\b.*\blast(?:s|ed)?\b", re.I)
POSITION_WORDS = _wordset(
    "first opening initial initially earliest beginning begin start intro introduction last "
    "final finally latest closing end ending"
)


def temporal_position(question: str) -> str | None:
    """"start" or "end" when the question locates its answer at one end of the recording."""
    start = bool(_POSITION_START.search(question))
    end = bool(_POSITION_END.search(question)) and not _LAST_THE_VERB.search(question)
    if start != end:
        return "start" if start else "end"
    return None


# "What does the sign say?" asks for written text, not speech: these verbs count as audio
# cues only when the question also ties them to a moment ("…when he said …").
SAY_VERBS = _wordset("say says said saying read reads")

CUE_BONUS = 0.25  # one clear modality cue outweighs a typical gap between example scores
CROSS_BONUS = 0.4  # both modalities named, or a heard thing tied to an action by "while"/"when"


@dataclass
class QueryAnalysis:
    """Everything the retrieval stages need to know about one question."""

    question: str
    query_type: QueryType
    scores: dict[QueryType, float]
    why: str
    terms: list[str]  # content-word stems (see content_terms)
    expects: str  # "number" | "colour" | "any"
    asks_text: bool = False  # the question is about written text on screen
    position: str | None = None  # "start" | "end": where in the recording to look
    cue_modality: str | None = None  # cross-modal: the modality the question gives ("speech")
    target_modality: str | None = None  # …and the one it asks about ("visual")
    cues: dict[str, list[str]] = field(default_factory=dict)
    shape: QuestionShape = field(default_factory=QuestionShape)  # order, count, stream, focus
    # names and rare words of the question (stem → the word; capitalised when it is a name):
    # evidence must hold them (exactly or, misheard, tolerantly) to be about the same thing
    key_terms: dict[str, str] = field(default_factory=dict)
    asks_sound: bool = False  # names a sound or hearing ("music", "heard"): sound units count
    # the things it is about ("umbrella", "snow"): evidence holding none of one is about
    # something else, so the answer is refused (see object_terms_of)
    object_terms: list[str] = field(default_factory=list)

    @property
    def preferred_modalities(self) -> tuple[str, ...]:
        """Evidence modalities this question is about, best first."""
        if self.asks_text and self.query_type in (QueryType.VIDEO, QueryType.VIDEO_AUDIO):
            return ("ocr",)
        preferred = {
            QueryType.AUDIO: ("speech",),
            QueryType.VIDEO: ("ocr", "visual"),
            QueryType.VIDEO_AUDIO: ("speech", "ocr", "visual"),
            QueryType.SUMMARY: ("summary", "speech", "ocr", "visual"),
        }[self.query_type]
        if self.query_type is QueryType.VIDEO and self.names_someone:
            # "Which colour is the watering can that Priya painted?": no describer knows who
            # Priya is, so what is known about her was said (or written), not seen
            preferred += ("speech",)
        elif self.query_type is QueryType.VIDEO and self.shape.focus == "time" and "visual" not in self.cues:
            # "At what time does the flower show begin?": typed visual only by its resemblance
            # to questions about pictures, with no word of seeing; a time is said or written
            preferred += ("speech",)
        return preferred + ("sound",) if self.asks_sound else preferred

    @property
    def kind_terms(self) -> frozenset[str]:
        """The stem of the generic noun that names the kind of answer wanted ("place" in "At
        what place is the watering can kept?", "colour" in "Which colour …"): evidence that
        answers need not say it (see :func:`answer_kind_terms`)."""
        return answer_kind_terms(self.question)

    @property
    def names_someone(self) -> bool:
        """The question names a person or place (a capitalised word after its first). Every
        name of three letters counts here; only known given names ("Tom", "Mia") are also
        ``key_terms`` (see :func:`short_given_name`): a short word has no sound-alike of its
        own, so another one would have to be found as written."""
        return any(word[:1].isupper() for word in self.key_terms.values()) or any(
            capital and i > 0 and len(word) == SHORT_NAME_CHARS and word not in STOPWORDS
            for i, (word, capital) in enumerate(name_words(self.question))
        )


# a question rather than a phrase to find: a question mark, or a question word or request first
_ASKS = re.compile(r"\?\s*$|^\s*(?:what|which|who|whom|whose|where|when|how|why|is|was|are|were|did|does|do|can|could|"
                   r"will|would|should|has|have|had|tell|name|give|list|describe|show)\b", re.I)
_WH_NOUN = re.compile(r"\b(?:what|which)\s+([a-z]+)", re.I)


@lru_cache(maxsize=4096)
def answer_kind_terms(question: str) -> frozenset[str]:
    """Stems of the generic nouns right after "what"/"which" in ``question`` (GENERIC_QUESTION_WORDS:
    place, colour, time, number, price, room…): they say what kind of answer is wanted, not
    what it is about."""
    return frozenset(s for s in (stem(w.lower()) for w in _WH_NOUN.findall(question))
                     if s in GENERIC_QUESTION_WORDS)


def key_terms_of(text: str, terms: Sequence[str]) -> dict[str, str]:
    """The names and rare words among ``terms`` (stem → the word as written): capitalised
    after the first word, or rare in English. A question about "the train to Oxford" is about
    Oxford; evidence about another train does not answer it."""
    wanted = set(terms)
    out: dict[str, str] = {}
    for i, (word, capital) in enumerate(name_words(text)):
        s = stem(word)
        named = capital and i > 0
        if s in wanted and s not in out and (name_like(word, named) or (named and short_given_name(word))):
            out[s] = word.capitalize() if named else word
    return out


def short_given_name(word: str) -> bool:
    """A three-letter given name ("Tom", "Mia", "Ali"): a key term although too short for a
    sound-alike of its own (it is found as written, or inside a misheard phrase with the
    question's next word: "Tim ordered" for "Tom order"), so "Where did Tom put the lamp?" is
    not answered from "Sofia put the lamp …". Not one that is also an everyday word ("See",
    "Son", "Sun")."""
    return (len(word) == SHORT_NAME_CHARS and word.isalpha() and word.lower() not in STOPWORDS
            and uncommon_given_name(word))


# Words a question uses to say what kind of fact it wants, not what the fact is about: a
# memory need not hold "price" or "room" to answer "what is the price of the rope?".
GENERIC_QUESTION_WORDS = frozenset(stem(w) for w in _wordset(
    """
    price prices cost costs amount number numbers colour color colours colors time times day days
    date year week hour hours minute minutes today tomorrow yesterday tonight morning afternoon
    evening night room name names person people place places recording recordings camera cam
    cameras video videos picture pictures photo photos image images screen screens sign signs
    frame frames scene clip stream footage mentioned said heard shown seen thing things stuff
    someone something somebody anyone everyone type kind sort way lot bit subject topic theme
    main mostly mainly background nobody noone location locations spot whereabouts position count
    total quantity start new old next last right correct exact current latest usual same final actual
    expensive cheap pricey costly dear money
    """
))
# What a camera or a recording does to what it holds ("which camera picked up the engine?")
CAPTURE_VERBS = frozenset(stem(w) for w in _wordset(
    "pick picks picked picking record records recorded capture captures captured capturing catch "
    "catches caught film films filmed filming register registered detect detects detected get got"
))
# what a recording is called: "on which of the cameras …" names no fact
SOURCE_NOUNS = frozenset(stem(w) for w in _wordset(
    "camera cameras cam cams stream streams feed feeds recording recordings video videos clip clips "
    "channel channels source sources footage"
))
TALK_TOPIC_WORDS = _wordset("topic topics subject subjects")
# words that place a question in the present day, not facts of it ("… today?", "… right now?")
PLACING_WORDS = frozenset(stem(w) for w in _wordset("today tonight now currently presently nowadays"))
COUNT_WORDS = frozenset(stem(w) for w in _wordset("occasion occasions instance instances mention mentions time times often"))
RAISED_VERBS = _wordset("came come comes coming brought bring brings bringing")
# how an order question frames its anchor ("right after", "which topic followed", "just prior to")
SEQUENCE_WORDS = frozenset(stem(w) for w in _wordset(
    "right just directly immediately straight next follow follows followed following precede precedes "
    "preceded preceding prior previous previously earlier later first last second "
    "mention mentioned said talked discussed came come ahead bring brings bringing brought"
) | TALK_TOPIC_WORDS)
# Noun phrases open after these: "the umbrella", "about snow", "how many novels"
_NP_OPENERS = _wordset(
    "the a an this that these those his her their its my your our some any about of many much"
)
_AUXILIARIES = _wordset("do does did will would can could should")
# Past forms that end a noun phrase without "-ed": "where was the suitcase left?"
_IRREGULAR_VERBS = _wordset(
    """
    left put kept found lost bought sold brought taken took given gave made seen told held set
    sent built hung hidden hid stolen broken broke fed ate eaten drove driven wrote written
    thrown threw won paid laid led lent meant met read ran rang sang sat slept spent stood
    struck swept taught thought understood woke wore worn
    """
)
# Present forms that end a noun phrase in a question with no auxiliary before it: "what
# number of seed packets remain?", "how many tickets cost ten pounds?"
_PRESENT_VERBS = _wordset(
    """
    remain remains cost costs need needs want wants stay stays belong belongs happen happens
    arrive arrives begin begins start starts open opens close closes end ends last lasts
    weigh weighs grow grows live lives sit sits stand stands lie lies hang hangs fit fits
    sell sells kick kicks go goes take takes get gets
    """
)
# Words of time and place that end a noun phrase without being its head ("where is the
# umbrella now?", "who takes care of the anchor these days?")
_PHRASE_ENDS = _wordset("now today tonight tomorrow yesterday here there later earlier again still currently")
# what names a kind of time: "the closing time", "the opening hours", "the departure time"
_TIME_KIND_WORDS = _wordset("opening closing starting finishing departure arrival leaving boarding")
_TIME_NOUNS = _wordset("time times hour hours")
# Words that measure or hold a thing rather than being it: in "a bottle of shampoo" the question
# is about the shampoo, and "The shampoo is 25 euros" (or "… a mortal on shampoo …", the
# container misheard) answers it
_MEASURE_NOUNS = frozenset(stem(w) for w in _wordset(
    """
    bottle bottles bag bags box boxes cup cups crate crates packet packets pack packs jar jars
    can cans tin tins glass glasses piece pieces pair pairs loaf loaves slice slices bowl bowls
    pot pots sack sacks carton cartons roll rolls bunch bunches bar bars plate plates bucket
    buckets basket baskets tray trays barrel barrels tub tubs tube tubes kilo kilos dozen
    """
))


_POSSESSIVE = re.compile(r"\b(\w+)['’]s\s+([A-Za-z]+)")
# what someone "has" that a sentence says with a verb: "Felix's appointment with the
# fisherman" is "Felix will see the fisherman", with no appointment in it
_DONE_NOT_OWNED = _wordset(
    "meeting meetings appointment appointments visit visits get date session plan plans turn job task "
    "order orders purchase purchases shopping"
)


def _owner_opens(m: re.Match[str]) -> str:
    """ "Leila's car jack" → "the car jack": the thing owned is what the question is about,
    and the owner is not (a name is a key term, checked on its own; "the hotel's swimming
    pool" is about the pool). Not "Felix's appointment" (see ``_DONE_NOT_OWNED``), not "the
    coffee's price" (a word saying what kind of fact is wanted), not "it's"."""
    owner, word = m.group(1).lower(), m.group(2).lower()
    # a function word is no owner: "it's closed", "what's the price", "there's a sign"
    if owner in STOPWORDS or word in _DONE_NOT_OWNED or stem(word) in GENERIC_QUESTION_WORDS:
        return m.group(0)  # "the coffee's price" is about the coffee: the owner is the thing
    return f"the {m.group(2)}"


# what a number before a word counts that is no thing: "at 5 sharp", "2 dollars"
_NOT_COUNTED = _wordset(
    """
    am pm oclock sharp dollar dollars euro euros pound pounds cent cents penny pence percent
    times people persons of or and to
    """
)


def _participle(word: str) -> bool:
    """A past participle ("painted", "bought"): after an adverb, it describes the thing."""
    return word.endswith("ed") or word in _IRREGULAR_VERBS


def _counts_a_thing(words: Sequence[str], i: int) -> bool:
    """Whether ``words[i]`` is a whole number counting the thing after it, which it then
    opens like "a" does: "how much do they charge for one spark plug?" is about the spark
    plug. A time ("1:15") is not a count, nor a number before a unit ("5 pm", "2 dollars")."""
    if not words[i].isdigit() or i + 1 >= len(words):
        return False
    after = words[i + 1]
    return after.isalpha() and after not in _NOT_COUNTED and after not in STOPWORDS and after not in _NP_OPENERS


def object_terms_of(text: str) -> list[str]:
    """The things a question is about: the head word of each noun phrase ("the weather
    forecast" → forecast, "about snow" → snow, "the dog in the garden" → dog, garden), as
    stems, without generic question words (price, room, picture …), numbers and modality cues.
    Evidence that holds none of them is about something else: "Who is repairing the umbrella?"
    is not answered by "Tom is repairing the fishing net"."""
    # an owner opens the phrase of the thing owned: "Leila's car jack" is about the car jack
    words = tokens(_POSSESSIVE.sub(_owner_opens, text.replace("-", " ")))
    # names are the key terms' to check (tolerantly: a misheard name still counts)
    names = {w for k, (w, capital) in enumerate(name_words(text)) if capital and k > 0}
    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i] not in _NP_OPENERS and not _counts_a_thing(words, i):
            i += 1
            continue
        # "when does the festival begin?": the subject right after an auxiliary ends in a verb
        subject = i > 0 and words[i - 1] in _AUXILIARIES
        run: list[str] = []
        verb_seen = False
        j = i + 1
        while j < len(words):
            w = words[j]
            if (w in STOPWORDS or w in CUE_WORDS or w in _NP_OPENERS or w in _PHRASE_ENDS
                    or w[:1].isdigit() or len(w) < 3):
                break
            if not run and w.endswith("ly") and j + 1 < len(words) and _participle(words[j + 1]):
                j += 2  # "the freshly painted fishing net": a participle after an adverb describes
                continue
            if run and (w in _IRREGULAR_VERBS or w in _PRESENT_VERBS or w.endswith("ed")
                        or (w.endswith("ing") and len(w) > 5)):
                verb_seen = True
                break  # "the suitcase left", "the lamp painted": the verb after the phrase
            run.append(w)
            j += 1
        if subject and len(run) >= 2 and not verb_seen:
            run = run[:-1]
        if run and (run[-1] in _TIME_NOUNS or (j < len(words) and words[j] in _TIME_NOUNS)):
            # "the closing time", "the opening hours": the kind of time asked for, not a thing
            run = [w for w in run if w not in _TIME_KIND_WORDS]
        heads = [stem(w) for w in run if stem(w) not in GENERIC_QUESTION_WORDS and w not in names]
        if heads and heads[-1] in _MEASURE_NOUNS and j < len(words) and words[j] == "of":
            heads = heads[:-1]  # "a bottle of shampoo": the shampoo is the thing
        if heads and heads[-1] not in out:
            out.append(heads[-1])
        i = max(j, i + 1)
    return out


def _clause_modality(words: Sequence[str]) -> str | None:
    audio = any(w in AUDIO_CUES for w in words)
    visual = any(w in VISUAL_CUES or w in ACTION_CUES for w in words)
    if audio and not visual:
        return "speech"
    if visual and not audio:
        return "visual"
    return None


def _names_seeing_outside(question: str, shape: QuestionShape) -> bool:
    """Whether ``question`` names seeing (a visual cue or a colour) outside the moments its
    order places ("the colour of Ruth's anchor" in "What followed the colour of Ruth's
    anchor?" is a topic that was talked about, not something to look at)."""
    rest = question
    for moment in (shape.anchor, *shape.compared):
        if moment:
            rest = re.sub(re.escape(moment), " ", rest, flags=re.I)
    words = tokens(rest.replace("on-screen", "onscreen"))
    return bool(_visual_cues(words)) or any(w in COLOUR_WORDS for w in words)


def _visual_cues(words: Sequence[str]) -> list[str]:
    """The words of seeing in ``words`` ("shown", "picture"), not "show" naming a show."""
    return [w for i, w in enumerate(words) if w in VISUAL_CUES and not _names_a_show(words, i)]


class QueryAnalyzer:
    """Classifies questions by modality (Table 6's four types) without the language model."""

    def __init__(self, embedder: TextEmbedder) -> None:
        self.embedder = embedder
        self._example_vectors: dict[QueryType, np.ndarray] | None = None
        self._focus_vectors: dict[str, np.ndarray] | None = None
        self._lock = threading.Lock()

    def _examples(self) -> dict[QueryType, np.ndarray]:
        with self._lock:
            if self._example_vectors is None:
                order = [(t, q) for t, qs in EXAMPLES.items() for q in qs]
                vecs = self.embedder.embed_texts([q for _, q in order])
                grouped: dict[QueryType, list[np.ndarray]] = {t: [] for t in EXAMPLES}
                for (t, _), v in zip(order, vecs, strict=True):
                    grouped[t].append(v)
                self._example_vectors = {t: np.stack(v) for t, v in grouped.items()}
            return self._example_vectors

    def _focus_examples(self) -> dict[str, np.ndarray]:
        with self._lock:
            if self._focus_vectors is None:
                order = [(k, q) for k, qs in FOCUS_EXAMPLES.items() for q in qs]
                vecs = np.asarray(self.embedder.embed_texts([q for _, q in order]), dtype=np.float32)
                self._focus_vectors = {k: vecs[[i for i, (kk, _) in enumerate(order) if kk == k]] for k in FOCUS_EXAMPLES}
            return self._focus_vectors

    def focus_by_examples(self, vector: np.ndarray) -> tuple[str, float]:
        """The kind of fact whose example questions (retrieval/shape_examples.py) are nearest
        to the question's embedding, and by how much nearer than the next kind."""
        q = np.asarray(vector, dtype=np.float32)
        near = {k: float(np.mean(np.sort(v @ q)[::-1][:FOCUS_NEAREST])) for k, v in self._focus_examples().items()}
        ranked = sorted(near, key=near.__getitem__, reverse=True)
        return ranked[0], near[ranked[0]] - near[ranked[1]]

    def shape_of(self, question: str, vector: np.ndarray, n_options: int = 0) -> QuestionShape:
        """The shape of ``question`` (in its plain wording) by the wording rules; where they
        read no focus and the question asks for nothing else, the focus its nearest example
        questions share (retrieval/shape_examples.py)."""
        return self._example_focus(question, question_shape(question, n_options), vector)

    def _example_focus(self, question: str, shape: QuestionShape, vector: np.ndarray) -> QuestionShape:
        # a moment query ("the time of the ferry crossing") is a phrase to find: no kind of fact
        if not _ASKS.search(question):
            return shape
        if (shape.focus != "any" or shape.order or shape.counts or shape.asks_stream or shape.gist or shape.sound
                or shape.said_while_dark or shape.pictured_while or shape.said_while_pictured
                or shape.said_while_sound):
            return shape
        kind, margin = self.focus_by_examples(vector)
        return replace(shape, focus=kind) if kind in FOCUS_KINDS and margin >= FOCUS_MARGIN else shape

    def classify(self, question: str, vector: np.ndarray | None = None) -> QueryType:
        return self.analyze(question, vector).query_type

    def analyze(self, question: str, vector: np.ndarray | None = None) -> QueryAnalysis:
        """Type, per-type scores and the reasons. ``vector`` is the question's embedding when
        the caller already has it (saves one embedder call). Every rule reads the question
        with its contractions spelled out and a request around it dropped ("When's …" as "When
        is …", "Tell me where …" as "Where …": retrieval/plain_wording.py)."""
        q = vector if vector is not None else self.embedder.embed_texts([question])[0]
        question = asked_plainly(question)
        q = np.asarray(q, dtype=np.float32)
        example_scores: dict[QueryType, float] = {}
        for t, vecs in self._examples().items():
            sims = np.sort(vecs @ q)[::-1]
            example_scores[t] = float(np.mean(sims[:3]))

        words = tokens(question.replace("on-screen", "onscreen"))
        connectors = [w for i, w in enumerate(words) if w in TEMPORAL_CONNECTORS and not _asks_when(words, i)]
        text_cues = [w for w in words if w in TEXT_CUES]
        audio = [w for w in words if w in AUDIO_CUES]
        # "what came up next?", "which was brought up first?": raised in conversation
        audio += [f"{a} up" for a, b in zip(words, words[1:], strict=False) if b == "up" and a in RAISED_VERBS]
        by_rules = question_shape(question)
        shape = self._example_focus(question, by_rules, q)
        if shape.order:
            # "which topic followed X?": a topic in a sequence is something talked about
            audio += [w for w in words if w in TALK_TOPIC_WORDS]
        if text_cues and not connectors:
            audio = [w for w in audio if w not in SAY_VERBS]
        visual = _visual_cues(words)
        colours = [w for w in words if w in COLOUR_WORDS]
        actions = [w for w in words if w in ACTION_CUES]
        gist = [w for w in words if w in SUMMARY_CUES]
        if words and words[-1] == "about" and words[0] in ("what", "whats"):
            gist.append("about")

        bonus = dict.fromkeys(EXAMPLES, 0.0)
        if audio:
            bonus[QueryType.AUDIO] += CUE_BONUS
        if visual:
            bonus[QueryType.VIDEO] += CUE_BONUS
        elif colours:
            bonus[QueryType.VIDEO] += CUE_BONUS / 2
        if gist and not (audio or visual):
            bonus[QueryType.SUMMARY] += CUE_BONUS
        if audio and (visual or (connectors and actions)):
            bonus[QueryType.VIDEO_AUDIO] += CROSS_BONUS

        scores = {t: round(example_scores[t] + bonus[t], 4) for t in EXAMPLES}
        if not (audio or visual or actions or colours):
            # Association needs a cue in one modality to look for the other: a question that
            # names neither ("is the machine working?") is not cross-modal, whatever it resembles.
            scores[QueryType.VIDEO_AUDIO] = round(min(scores.values()) - 0.01, 4)
        best = max(scores, key=lambda t: scores[t])
        if best is QueryType.VIDEO and shape.order and not _names_seeing_outside(question, shape):
            # "What followed the price of the tomato plant?": an order question that names no
            # seeing outside the moments it places is about what was said or written next,
            # whatever questions about pictures it resembles
            best = max((t for t in scores if t is not QueryType.VIDEO), key=lambda t: scores[t])

        cue_modality = target_modality = None
        if shape.pictured_while or shape.said_while_pictured:
            # "what was shown as X was said?" / "what was said during the coins picture?": the
            # shape names the moment's modality and the asked one, whatever words it used
            best = QueryType.VIDEO_AUDIO
            cue_modality, target_modality = ("speech", "visual") if shape.pictured_while else ("visual", "speech")
        elif best is QueryType.VIDEO_AUDIO:
            cue_modality, target_modality = self._cue_and_target(words)

        position = temporal_position(question)
        cues = {
            k: v
            for k, v in {
                "audio": audio, "visual": visual + colours, "action": actions,
                "summary": gist, "temporal": connectors, "text": text_cues,
            }.items()
            if v
        }
        nearest = ", ".join(
            f"{t.value} {example_scores[t]:.2f}"
            for t in sorted(example_scores, key=lambda t: -example_scores[t])
        )
        cue_text = "; ".join(f"{k}({', '.join(dict.fromkeys(v))})" for k, v in cues.items())
        why = (
            f"{best.value}: examples [{nearest}]"
            + (f"; looks at the {position}" if position else "")
            + (f"; cues {cue_text}" if cue_text else "; no cue words")
            + f"; totals [{', '.join(f'{t.value} {s:.2f}' for t, s in scores.items())}]"
            + (f"; asks for a {shape.focus} (nearest example questions)" if shape.focus != by_rules.focus else "")
        )
        # "how long/many/old …" asks for a quantity: "long" is not a fact to look for
        after_how = {stem(words[i + 1]) for i, w in enumerate(words[:-1]) if w == "how"}
        if position:
            after_how |= {stem(w) for w in POSITION_WORDS}
        if shape.asks_stream:  # "which camera picked up / recorded …": the camera and its verb, not facts
            after_how |= CAPTURE_VERBS | SOURCE_NOUNS
        if shape.order:  # "directly after X, which topic followed?": X is looked for, not the framing
            after_how |= SEQUENCE_WORDS
        if shape.counts:  # "on how many occasions did X come up?"
            after_how |= COUNT_WORDS
        # "Which camera had coins on it today?": "today" places the question, it is not a fact
        # to look for (every sentence that says "today" would otherwise match it)
        after_how |= PLACING_WORDS
        terms = [t for t in content_terms(question) if t not in after_how]
        return QueryAnalysis(
            question=question,
            query_type=best,
            scores=scores,
            why=why,
            terms=terms,
            expects=expected_answer_kind(question),
            asks_text=bool(text_cues) and (bool(visual) or any(w in SCREEN_TEXT_CUES for w in text_cues)),
            position=position,
            cue_modality=cue_modality,
            target_modality=target_modality,
            cues=cues,
            shape=shape,
            key_terms=key_terms_of(question, terms),
            asks_sound=any(w in SOUND_CUES for w in words),
            object_terms=[t for t in object_terms_of(question) if t in terms],
        )

    @staticmethod
    def _cue_and_target(words: Sequence[str]) -> tuple[str | None, str | None]:
        """Split "<target clause> when/while <cue clause>": the clause after the connector
        names what is given (the cue), the one before it what is asked (the target)."""
        for i, w in enumerate(words):
            if w in TEMPORAL_CONNECTORS and 0 < i < len(words) - 1:
                target = _clause_modality(words[:i])
                cue = _clause_modality(words[i + 1 :])
                if cue and target and cue != target:
                    return cue, target
                if cue:
                    return cue, "visual" if cue == "speech" else "speech"
                if target:
                    return ("visual" if target == "speech" else "speech"), target
        # "the person who says hello": the audio names the cue, the rest is to be seen
        return "speech", "visual"
