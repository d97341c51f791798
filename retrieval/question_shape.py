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
    r"\b(?:(?:right|just|immediately|directly|straight|soon)\s+)?(after|once(?!\s+(?:or|more|again|and|in|at)\b)|"
    r"(?<!the )following|followed|"
    r"before|prior to|preceding|preceded|ahead of|in advance of)\s+(.+?)\s*(?:[?!]|$)",
    re.I,
)
# An order question asks what was said, shown or happened next to a moment ("What was
# mentioned right after X?", "What came up before X?", "Which topic followed X?"); "Who is
# cleaning the anchor after lunch?" asks a fact whose time is part of it.
_ASKS_EVENT = re.compile(
    r"\b(?:mention\w*|said|say|says|talk\w*|discuss\w*|spoke|spoken|speak\w*|shown|show\w*|"
    r"seen|saw|heard|hear|happen\w*|occur\w*|came|come|comes|follow\w*|preced\w*|rais\w*|brought|bring\w*|"
    r"display\w*|appear\w*|played|announc\w*|next|topic|subject|thing)\b",
    re.I,
)
# "Was the seed packet mentioned before or after the flower show?": the answer is an order word
_BEFORE_OR_AFTER = re.compile(
    r"^\s*(?:was|were|is|did|does|do|has|had)\s+(.+)\s+(?:before|earlier)\s+or\s+"
    r"(?:after|later)(?:\s+than)?\s+(.+?)\s*[?.!]?\s*$",
    re.I,
)
# "The seed packet was mentioned; what came next?": the anchor first, then the question
_ANCHOR_THEN = re.compile(
    r"^\s*(.+?)\s+(?:was|were|had been|has been|got)\s+(?:mentioned|said|talked about|discussed|brought up|announced)"
    r"\s*[;,:.\u2013\u2014-]+\s*(?:and\s+|so\s+)?(?:what|which)\b.*?\b(next|afterwards|after that|after it|then|"
    r"before that|before it|just before|right before)\b",
    re.I,
)
# "Which was talked about after the other: the seed packet or the flower show?"
_OTHER_PAIR = re.compile(
    r"\b(before|after|earlier than|later than)\s+the\s+other(?:\s+one)?\b[\s,:;-]*(.+?)\s+or\s+(.+?)\s*[?.!]?\s*$",
    re.I,
)
_LEADING_AFTER = re.compile(
    r"^\s*(?:(?:right|just|immediately|directly)\s+)?(after|before)\s+(.+?),\s*(.+)$", re.I
)
# "which of these was mentioned first?": the order word closes the question
# (also with a place after it: "… mentioned first in the garden-cam recording?"), or "the first
# of these", "before all the others"
_WHERE_TAIL = r"(?:\s+(?:in|on|from|of|during|within)\s+[^?.!,]*)?\s*[?.!]?\s*$"


def _order_at_end(words: str, superlatives: str, than_others: str) -> re.Pattern[str]:
    return re.compile(
        rf"\b({words})" + _WHERE_TAIL
        + rf"|\bthe\s+(?:very\s+)?(?:{superlatives})\s+(?:one\s+)?of\s+(?:these|them|those|the\s+(?:options|following|choices))\b"
        # "what was the first thing mentioned in garden-cam?"
        + rf"|\bthe\s+(?:very\s+)?(?:{superlatives})\s+(?:thing|topic|subject|item|point|one)\b(?!\s+of\b)"
        rf"|\b{than_others}\s+(?:all\s+)?the\s+(?:others|other\s+ones|rest)\b",
        re.I,
    )


_FIRST = _order_at_end("first|earlier|earliest|sooner", "first|earliest", "before")
_LAST = _order_at_end("last|later|latest", "last|latest|final", "after")
_ORDER_WORD = r"(first|earlier|earliest|sooner|last|later|latest)"
_WHICH_FIRST = re.compile(
    r"\b(?:which|what)\b.*?\b" + _ORDER_WORD + r"\b[\s,:;-]*(.+?)\s+or\s+(.+?)\s*[?.!]?\s*$",
    re.I,
)
# "Did the seed packet or the flower show come up first?": a yes/no question over two choices
_DID_EITHER_FIRST = re.compile(
    r"^\s*(?:did|was|were|is|are|does|do|has|had)\s+(.+?)\s+or\s+(.+?)\s+(?:(?:get|gets|got|been|being)\s+)?"
    r"(?:come up|came up|mentioned|said|discussed|talked about|brought up|raised|shown|heard)\s+"
    + _ORDER_WORD + r"\s*[?.!]?\s*$",
    re.I,
)
# "Was the seed packet mentioned before the flower show, or the other way round?": which of two
# came first, asked as a yes/no question that offers the reverse
_ONE_BEFORE_OTHER = re.compile(
    r"^\s*(?:did|was|were|is|are|does|do|has|had)\s+(.+?)\s+(?:(?:get|gets|got|been|being)\s+)?"
    r"(?:come up|came up|mentioned|said|discussed|talked about|brought up|raised|shown|heard)\s+"
    r"(before|earlier than|sooner than|ahead of|after|later than)\s+(.+?)\s*,?\s+or\s+"
    r"(?:(?:was\s+it\s+|is\s+it\s+)?(?:the\s+other\s+way\s+a?round|vice\s+versa|the\s+reverse|the\s+opposite)"
    r"|(?:after|later|before|earlier|afterwards)(?:\s+(?:it|that|than\s+that))?)\s*[?.!]?\s*$",
    re.I,
)
# "Of the seed packet and the flower show, which one was talked about first?"
_OF_WHICH_FIRST = re.compile(
    r"^\s*(?:of|between|out of)\s+(.+?)\s+and\s+(.+?),\s*(?:which|what)\b.*?\b" + _ORDER_WORD + r"\b",
    re.I,
)
# how an anchor is introduced ("after *someone mentioned* the seed packet", "before *the talk
# about* the show") and where it is placed ("… in garden-cam", "… in the recording"): neither is
# what was said
_ANCHOR_LEAD = re.compile(
    r"^(?:(?:someone|somebody|they|he|she|the speaker|people|we|you)\s+(?:had\s+|has\s+)?"
    r"(?:mentioned|mentions|talked about|talks about|spoke about|speaks about|said|says|brought up|announced)\s+"
    r"|(?:talking|speaking|hearing)\s+about\s+|mentioning\s+"
    # "before they got to X", "after they moved on to X"
    r"|(?:someone|somebody|they|he|she|the speakers?|people|we|you|it|the talk|the conversation)\s+"
    r"(?:got|get|came|come|moved on|move on|turned|turn|reached|reach)\s+(?:on\s+|round\s+|around\s+)?to\s+"
    r"|the\s+(?:talk|part|bit|mention|announcement|remark|sentence|comment)\s+(?:about|of|on)\s+)",
    re.I,
)
_SAID_TAIL = re.compile(
    r"\s+(?:(?:get|gets|got|being|been)\s+)?(?:mentioned|said|talked about|heard|shown|seen|discussed|announced|"
    r"brought up|spoken about|spoken of|come up|came up)\s*$",
    re.I,
)
_OTHERS = re.compile(r"^(?:all\s+)?(?:the\s+)?(?:others|other ones|rest)$", re.I)
_ANCHOR_WHERE = re.compile(
    r"\s+(?:in|on|from)\s+(?:the\s+)?(?:[\w]+-[\w-]+|recording|video|stream|clip|feed)"
    r"(?:\s+(?:recording|video|stream|clip|feed|camera))?\s*$",
    re.I,
)
_COUNT_TIMES = re.compile(
    r"\bhow many (?:separate |different |distinct |individual |more )?(?:times|occasions|mentions|instances)\b"
    r"|\bhow (?:often|frequently)\b|\b(?:number|count) of (?:times|occasions|mentions)\b"
    r"|\bcount (?:the |all the )?(?:times|occasions|mentions)\b",
    re.I,
)
_SOURCES = r"(?:cameras?|cams?|streams?|feeds?|recordings?|videos?|clips?|channels?|sources?)"
_STREAM_Q = re.compile(
    r"\b(?:which|what|in which|on which|from which)\s+" + _SOURCES + r"\b"
    r"|\b(?:which|what)(?:\s+one)?\s+of\s+(?:the|these|those|our|your|all the|all|both)"
    r"(?:\s+(?:two|three|four|five|six|several|different|other|\d+))?\s+" + _SOURCES + r"\b"
    r"|\bname\s+the\s+" + _SOURCES + r"\b"
    # "Where was the price of the magazine mentioned?": where in the memory, i.e. which recording
    r"|^\s*where\s+(?:was|were|is|are|did|does|do|has|had)\s+.+\s+(?:(?:first\s+)?(?:mentioned|said|talked about|"
    r"discussed|brought up|spoken about|spoken of|announced|shown|displayed)|came up|come up)\s*[?.!]?\s*$",
    re.I,
)
_NAME = re.compile(
    r"\b(?:name|called|named|who|whom|whose)\b|\bwhat(?:'s| is| was) (?:his|her|their|its) name\b"
    r"|\b(?:which|what) (?:person|man|woman|child|boy|girl)\b",
    re.I,
)
_TIME = re.compile(
    r"^\s*(?:and\s+)?when\s+(?:is|was|are|were|does|do|did|will|should|would|can|could)\b(?!.*\b(?:while|during)\b)"
    r"|^\s*(?:please\s+)?(?:tell|show|give)\s+(?:me|us)\s+when\b(?!.*\b(?:while|during)\b)"
    # "When the ferry leaves?" (a request's "tell me when …" read plainly): no clause after a
    # comma and no other question word ("When the screen went dark what was said?" places a moment)
    r"|^\s*when\s+(?!.*[,;])(?!.*\b(?:while|during|what|which|who|whom|whose|where|how|why)\b)"
    r"|\b(?:by|until|till|til|from|since) when\b|\b(?:at )?what hour\b|\bis when\s*[?.!]?\s*$|"
    # "Diego sees the librarian when exactly?": a "when" that closes the question asks a time
    r"\b\w+\s+when(?:\s+(?:exactly|precisely|again))?\s*[?.!]?\s*$|"
    # "What is the time of Mei's appointment?" (not "at the time of …", which places a moment)
    r"^\s*what\s+(?:is|was|will be)\s+the\s+(?:exact\s+|precise\s+)?time\s+(?:of|for)\b|"
    # "What's the latest Maria can see the driver?"
    r"\bwhat\s+(?:is|was)\s+the\s+(?:latest|earliest)\s+(?!(?:thing|topic|subject|one|item|news)\b)[\w'-]+(?:\s+[\w'-]+)?\s+"
    r"(?:can|could|should|must|may|might|will|would|is|has|needs?|had)\b|"
    r"\b(?:start|starting|opening|closing|finishing|end|departure|arrival|meeting) time\b|"
    r"\bwhat time\b|\bat what time\b|\bwhen (?:does|do|did|will|is|was|are|were)\b.*\b(?:"
    r"leav(?:e|es|ing)|left|start(?:s|ed|ing)?|open(?:s|ed|ing)?|clos(?:e|es|ed|ing)|"
    r"begin(?:s|ning)?|began|end(?:s|ed|ing)?|arriv(?:e|es|ed|ing)|depart(?:s|ed|ing)?|"
    r"finish(?:es|ed|ing)?|served|due|scheduled|meet(?:s|ing)?|happen(?:s|ing)?|tak(?:e|es|ing) place)\b",
    re.I,
)
_NUMBER = re.compile(
    r"\bhow (?:many|much|long|old|far|tall|big|heavy|fast|often)\b|\bwhat (?:number|year|price|"
    r"age|percentage|amount)\b|\b(?:which|what) (?:number|year|platform|gate|room|floor|track|bus|seat)\b"
    r"|\b(?:price|cost) of\b|\bwhat (?:does|do|did|will) .+ cost\b|\b(?!a\s)\w+ number\b",  # room/aisle/pier number, not "a number of"
    re.I,
)
_COLOUR = re.compile(r"\b(?:what|which) (?:colou?rs?|shades?|hues?)\b|^\s*what\s+(?:is|was)\s+the\s+colou?r\b", re.I)
# Non-speech sounds: "besides people talking, what could you hear?", "what sound …",
# "what could be heard while the picture was dark?" (no words of speech asked about)
_BESIDES_SPEECH = re.compile(
    r"\b(?:besides|apart from|aside from|other than|except(?: for)?|beyond|ignoring|leaving aside|setting aside|"
    r"excluding|not counting|disregarding)\s+(?:the\s+)?"
    r"(?:speech|talking|voices?|conversation|words|spoken words|(?:people|someone|somebody|anyone) "
    r"(?:talking|speaking|chatting)|what (?:was|is) said)\b",
    re.I,
)
_WHAT_SOUND = re.compile(
    r"\b(?:what|which)\s+(?:kind of\s+|sort of\s+|type of\s+)?(?:[a-z]+(?:-[a-z]+)?\s+)?(?:sounds?|noises?|music)\b"
    r"|\b(?:is|was|were|are)\s+there\s+(?:any|some)\s+(?:sounds?|noises?|music)\b",
    re.I,
)
# "What was said while the screen was dark?": speech during dark frames (the memory keeps each
# key frame's quality; a dark frame is described as nothing else)
DARK_WORDS = (r"\b(?:dark|darkness|darkened|black|blackness|blacked(?:\s+out)?|blackout|blank|unlit|nothing (?:was |could be |can be |is )?(?:visible|shown|seen|on screen)"
              r"|(?:could not|couldn't|could n't|can't|cannot) see anything|no picture"
              # "while the camera showed nothing", "when there was nothing to see"
              r"|(?:showed|shows|showing|displayed|displaying)\s+nothing|nothing\s+to\s+(?:see|be\s+seen|look\s+at))\b")
_WHILE_DARK = re.compile(
    r"\b(?:while|when|during|as)\b[^?]*" + DARK_WORDS
    + r"|\b(?:dark|black|blank)\s+(?:screen|picture|image|frames?|stretch|part|scene)\b",
    re.I,
)
# "What picture was on screen while someone talked about X?", "Which image was showing when X
# was mentioned?", "During the talk about X, what was displayed?", and the other way round,
# "What was said while a photo of X was shown?", "Which topic came up as the screen showed X?":
# one clause asks (for a picture, or for what was said), another places the moment (by what was
# said, or by what was shown), joined by while/when/as/during in either order.
_CONNECTIVE = re.compile(r"\b(?:while|when|as|during|whilst)\b", re.I)
# "With a cup of coffee pictured on screen, what was said?": a leading "with" places the moment too
_LEADING_CONNECTIVE = re.compile(r"^\s*(?:while|when|as|during|whilst|with)\s+(.+?),\s*(.+)$", re.I)
_SAID_VERB = (r"mentioned|mentioning|mention|said|saying|say|says|talked|talking|talk|spoke|spoken|speaking|discussed|discussing|"
              r"discussion|brought up|came up|come up|coming up|announced|topic|subject|conversation|"
              r"moved on|move on|moving on|bring up|brings up|bringing up")
_SAID_ASK = re.compile(rf"\b(?:what|which)\b.*\b(?:{_SAID_VERB})\b", re.I)
_SAID_MOMENT = re.compile(rf"\b(?:{_SAID_VERB})\b", re.I)
_SHOWN = (r"pictures?|pictured|photos?|photographs?|images?|shown|showing|show|showed|seen|visible|displayed|displaying|"
          r"on(?:\s+the)?\s+screen|appeared|appear|in view")
_PICTURE_ASK = re.compile(rf"\b(?:what|which)\b.*\b(?:{_SHOWN})\b", re.I)
_PICTURE_MOMENT = re.compile(rf"\b(?:{_SHOWN})\b", re.I)
# asks about writing or a colour: the on-screen text and colour rules answer those
_NOT_A_PICTURE = re.compile(r"\b(?:written|writing|read|text|sign|words?|colou?rs?|say|says|said|heard|hear|sound)\b", re.I)
_NAMED_PICTURE = re.compile(r"\bthe\s+[\w-]+\s+(?:picture|photo|photograph|image)\b", re.I)
# "which picture accompanied the mention of X?"
_ACCOMPANIED = re.compile(
    r"\b(?:what|which)\s+(?:picture|photo|photograph|image)\s+(?:accompanied|went with|came with)\s+(.+?)\s*[?.!]?\s*$",
    re.I,
)
# how a moment clause names what was said or shown: "someone talked about X", "the mention of X",
# "a picture of X was on screen", "the screen showed X", "the X photo"
_MOMENT_LEAD = re.compile(
    r"^(?:(?:someone|somebody|they|he|she|the speakers?|people|we|you|a voice|the voice)\s+(?:was\s+|were\s+)?"
    r"(?:mentioned|mentioning|talked about|talking about|spoke about|speaking about|spoke of|discussed|discussing|said|was saying|brought up|announced)\s+"
    r"|(?:the\s+)?(?:talk|talking|speaking|discussion|mention|mentioning|announcement|conversation|remark)\s+(?:about|of|on)\s+"
    r"|(?:an?\s+|the\s+)?(?:picture|photo|photograph|image)\s+(?:of|showing)\s+"
    r"|the\s+(?:screen|camera|video|picture)\s+(?:showed|shows|was showing|displayed)\s+)",
    re.I,
)
_MOMENT_TAIL = re.compile(
    r"\s+(?:(?:was|were|is|are|had been|has been|got)\s+)?(?:being\s+|been\s+)?"
    r"(?:mentioned|said|talked about|discussed|brought up|announced|spoken about|spoken of|"
    r"(?:shown|showing|seen|visible|displayed|pictured)(?:\s+on(?:\s+the)?\s+screen)?|on(?:\s+the)?\s+screen|in view|on display)\s*$"
    r"|\s+(?:came|comes|come)\s+up\s*$|\s+(?:was|were|is|are)\s+up\s*$|\s+(?:appeared|appears)(?:\s+on(?:\s+the)?\s+screen)?\s*$"
    r"|\s+(?:picture|photo|photograph|image)\s*$",
    re.I,
)
_SAID = re.compile(r"\b(?:said|say|says|saying|talk|talks|talked|talking|spoke|spoken|speak|speaking|mention|mentioned|discuss|discussed|announced|speech|words)\b", re.I)
# "What is playing in the background?": asked with no word of speech in it (see asks_nonspeech_sound)
_BACKGROUND = re.compile(r"\bin the background\b|\bbackground (?:noise|sound|music)\b", re.I)
_COULD_HEAR = re.compile(r"\b(?:could|can|did|was|were)\s+(?:you\s+|one\s+|we\s+|i\s+)?(?:be\s+)?hear[d]?\b|\baudible\b", re.I)
_SPEECH_ASKED = re.compile(
    r"\b(?:about|say|says|said|saying|mention\w*|announc\w*|names?|number|price|cost|time|word|words|"
    r"talk(?:ed|ing)? about|someone|somebody|who)\b",
    re.I,
)
# "What is the garden-cam recording mostly about?", "main subject of …": the gist of a stream
_TOPIC = re.compile(
    r"\b(?:mostly|mainly|chiefly|largely|generally|primarily)\s+about\b|\bmain\s+(?:subject|topic|theme)\b|"
    r"\bwhat\s+(?:is|was)\s+(?:it|this|that|the\s+[\w-]+(?:\s+[\w-]+)?)\s+about\s*[?.!]?\s*$|"
    r"\b(?:overall|on the whole|in general)\s*[?.!]?\s*$|\bwhat(?:'s| is| was)\s+(?:going on|happening)\b|"
    r"\b(?:which|what)\s+(?:kind of\s+|sort of\s+|type of\s+)?(?:setting|venue|scene)\s+(?:does|is)\b"
    r"|\bwhat\s+(?:is|was)\s+[\w]+-[\w-]+\s+about\s*[?.!]?\s*$|\bsummari[sz]e\b|\b(?:the\s+)?gist\s+of\b"
    r"|\b(?:main\s+)?(?:theme|topic|subject)\s+of\b"
    r"|\b(?:what|which)\s+(?:kind|sort|type)\s+of\s+(?:place|location|setting|venue)\b"
    r"|^\s*where\s+(?:was|is|were)\s+[\w-]+(?:\s+(?:recording|video|stream|clip|feed))?\s+(?:recorded|filmed|shot|taken)\b",
    re.I,
)
# "Name one person who was mentioned in …", "who was mentioned in …"
_PEOPLE = re.compile(
    r"\bname\s+(?:one|a|any|some|the)\s+(?:person|people|name)\b"
    r"|\bwho\s+(?:is|was|were|are|gets|got)\s+(?:mentioned|named|talked about|spoken about|discussed)\b"
    r"|\bwho\s+(?:gets|got|get|receives?|received)\s+(?:a\s+)?mention\b"
    r"|\bhow\s+many\s+(?:people|persons|names)\s+(?:is|are|was|were|got)\s+(?:mentioned|named|talked about|discussed)\b"
    r"|\bwhich\s+(?:person|people|names?)\s+(?:is|are|was|were)\s+(?:mentioned|named|talked about|discussed)\b"
    r"|\b(?:one|any|some)\s+of\s+the\s+(?:people|persons)\b"
    r"|\bwhich\s+(?:person|people|names?)\s+(?:come|comes|came)\s+up\b"
    r"|\bwho\s+(?:do|does|did)\s+(?:they|people|the\s+speakers?|you|we|the\s+voices?)\s+(?:talk|speak)\s+about\b"
    r"|\bname\s+of\s+(?:someone|somebody|a\s+person|one\s+person|anyone)\s+(?:who\s+(?:is|was)\s+|that\s+(?:is|was)\s+)?"
    r"(?:mentioned|named|talked about|spoken about)\b"
    r"|\b(?:a|one|any)\s+(?:person|name)\s+(?:who\s+(?:is|was)\s+|that\s+(?:is|was)\s+)?"
    r"(?:mentioned|named|talked about|spoken about|discussed)\b",
    re.I,
)
# "Beside what is the ladder?", "Next to which shelf did she leave it?": a question word after
# a preposition of place asks for the place that preposition names in the answer
_SPATIAL = (r"next to|close to|in front of|on top of|near|beside|behind|underneath|under|beneath|"
            r"below|above|inside|outside|opposite|between|against|alongside")
_LEADING_SPATIAL = re.compile(rf"^\s*({_SPATIAL})\s+(?:what|which)\b", re.I)
_PLACE = re.compile(
    r"^\s*where\b|\b(?:what|which) (?:place|city|town|country|station|destination|location|spot)\b"
    rf"|\bwhere (?:to|does|did|is|was|are|were)\b|{_LEADING_SPATIAL.pattern}"
    # "Tom left the laptop where?": a "where" that closes the question asks a place
    r"|\b\w+\s+where(?:\s+(?:exactly|precisely|again))?\s*[?.!]?\s*$",
    re.I,
)


def place_preposition(question: str) -> str:
    """The preposition of place a question opens with ("beside" of "Beside what is the
    ladder?"), lower case; "" when it opens otherwise."""
    m = _LEADING_SPATIAL.match(question)
    return " ".join(m.group(1).lower().split()) if m else ""


@dataclass(frozen=True)
class QuestionShape:
    """What a question asks for, beside its words."""

    order: Order | None = None
    anchor: str = ""  # "right after <anchor>": the moment the answer is placed against
    compared: tuple[str, ...] = ()  # "which happened first, <A> or <B>"
    # "was <A> mentioned before or after <B>?": the answer is "before" when A came first
    relative: bool = False
    said_while_dark: bool = False  # "what was talked about while the screen was dark?"
    counts: bool = False  # "how many times": count distinct moments
    asks_stream: bool = False  # "which camera showed …"
    focus: Focus = "any"
    sound: bool = False  # asks what could be heard besides speech: answered from sound units
    gist: str = ""  # "topic" ("what is X mostly about?") | "people" ("name one person mentioned")
    # "what picture was on screen while someone talked about <X>?": X, the moment's words
    pictured_while: str = ""
    # "what was mentioned while a picture of <X> was on screen?": X, the picture's subject
    said_while_pictured: str = ""
    # "what was said (what happened) while the engine was running?": the moment clause, a
    # sound going on ("the engine was running"); speech heard during that sound is the answer
    said_while_sound: str = ""
    # "what was *mentioned* just before <anchor>?": what was said next to the anchor, not a
    # sign shown in between ("what was shown just before …" asks for that)
    asks_said: bool = False


# what an order question asks for was said, not shown: "what was mentioned / said / talked
# about just before …" (a clause that also names seeing or writing, "what was shown or said", is not)
_SHOWN_OR_WRITTEN = re.compile(rf"\b(?:{_SHOWN}|saw|see|written|writing|sign)\b", re.I)


def _asks_said(clause: str, anchor: str = "") -> bool:
    """Whether the asking clause of an order question asks what was said: in so many words
    ("what was mentioned just before …"), or in neutral ones ("what came just before …",
    "what followed …") about a moment that was talked about, not seen or heard as a sound
    ("what came just before the price of the tomato plant?" asks for the words before it, not
    a sign shown in between; "what happened right after the screen went dark?" does not)."""
    if _SHOWN_OR_WRITTEN.search(clause):
        return False
    if _SAID_MOMENT.search(clause):
        return True
    return bool(anchor and _NEUTRAL_NEXT.search(clause) and not _SHOWN_OR_WRITTEN.search(anchor)
                and not _PICTURE_MOMENT.search(anchor) and not _SOUND_MOMENT.search(anchor)
                and not _SOUND_MOMENT.search(clause) and not re.search(DARK_WORDS, anchor, re.I))


# what asks for what came next without saying whether it was said, shown or heard
_NEUTRAL_NEXT = re.compile(r"\b(?:came|come|comes|coming|follow\w*|preced\w*|next|happen\w*|occur\w*)\b", re.I)


def _clean(phrase: str) -> str:
    phrase = _CLAUSE_END.sub("", phrase.strip())
    phrase = _ANCHOR_WHERE.sub("", phrase)
    phrase = _TRAILING.sub("", phrase)
    phrase = _SAID_TAIL.sub("", phrase)
    phrase = _ANCHOR_LEAD.sub("", phrase.strip())
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


_ACCOUNT = re.compile(
    r"^\s*(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:tell\s+me\s+(?:about|more\s+about|everything|what\s+you\s+know)|"
    r"what\s+do\s+(?:you|we)\s+know\s+about|describe|what\s+(?:was|is|were)\s+(?:said|mentioned|known)\s+about|"
    r"what\s+did\s+(?:anyone|someone|people|they)\s+say\s+about|anything\s+about)\b",
    re.I,
)


def asks_for_account(question: str) -> bool:
    """Whether ``question`` asks for what was said or known about something ("Tell me about
    the lawn mower.", "What was said about the ferry?") rather than one fact: the answer is
    the sentence itself, not a phrase cut out of it ("Lord" from "Lord, that lawn mower is
    here.")."""
    return bool(_ACCOUNT.search(question))


def asks_nonspeech_sound(question: str) -> bool:
    """Whether ``question`` asks what could be heard other than words: "besides speech …",
    "what sound …", or "what could be heard …" with nothing said asked about."""
    q = " ".join(question.split())
    if _BESIDES_SPEECH.search(q) or _WHAT_SOUND.search(q):
        return True
    if _SPEECH_ASKED.search(q):
        return False
    # "what was heard when nobody was speaking?" asks for sound; "what did the audio say?" not
    return bool(_COULD_HEAR.search(q) or _BACKGROUND.search(q)) or (
        bool(_SOUNDTRACK_ASKED.search(q)) and not _SAID.search(q))


# the sound of a recording as what is asked about: "what did the audio have …", "what was on
# harbour-cam's soundtrack …", "what did its sound contain while the picture was dark?"
_SOUNDTRACK_ASKED = re.compile(
    r"^\s*(?:what|which)\b.*\b(?:audio|soundtrack|sound\s*track|sound)\b", re.I)


def gist_of(question: str) -> str:
    """"topic" or "people" when the question asks for a stream's gist (see QuestionShape)."""
    if _PEOPLE.search(question):
        return "people"
    if _TOPIC.search(question):
        return "topic"
    return _gist_by_words(question)


# A question about a whole recording, however worded: nothing in it but a stream's name, words
# for the recording itself and words that ask for its gist ("Describe the setting of the
# garden-cam recording.", "What's the lobby video about?", "Where was cam-2 made?", "Mention a
# person whose name was said in cam-2."). The patterns above know a few wordings; people word
# the same request many more ways. A single other word (a thing, a person, an action) makes it
# a question about something in the recording, which the ordinary search answers.
_GIST_TOPIC_WORDS = frozenset({
    "about", "describe", "description", "setting", "settings", "theme", "themes", "topic", "topics",
    "subject", "subjects", "summary", "summarise", "summarize", "sum", "gist", "overview", "place",
    "location", "where", "happening", "happen", "happens", "happened", "going", "goes", "go", "went",
    "overall", "general", "generally", "mainly", "mostly", "largely", "chiefly", "kind", "sort", "type",
    "scene", "venue",
    "environment", "context", "situation", "content", "contents", "made", "recorded", "filmed", "shot",
    "taken", "set"
})
_GIST_PEOPLE_WORDS = frozenset({
    "person", "people", "persons", "someone", "somebody", "anyone", "anybody", "who", "whom", "whose",
    "name", "names", "named", "individual", "individuals"
})
# allowed around those: asking words, function words, words for the recording and for being said
_GIST_OTHER_WORDS = frozenset({
    "what", "what's", "whats", "which", "is", "was", "were", "are", "does", "did", "do", "it", "its",
    "it's", "this", "that", "the", "a", "an", "of", "in", "on", "at", "from", "to", "for", "by", "with",
    "and", "or", "any", "some", "one", "all", "whole", "entire", "can", "could", "would", "you", "me", "us",
    "tell", "give", "please", "i", "we", "they", "briefly", "brief", "short", "line", "sentence", "words",
    "general", "there", "been", "be", "being", "have", "has", "had", "main", "primary", "central", "key",
    "big", "mentioned", "mention", "mentions", "said", "say", "says", "talked", "talk", "talks", "spoken",
    "speak", "speaks", "discussed", "discuss", "referred", "come", "came", "comes", "up", "brought", "get",
    "gets", "got", "hear", "heard", "speaker", "speakers", "voice", "voices", "called", "spoke", "recording", "recordings", "video",
    "videos", "stream", "streams", "clip", "clips", "feed", "feeds", "camera", "cameras", "cam", "footage"
})
# what a stream's name looks like when nothing else says so: "garden-cam", "cam_2", "cam2"
_STREAM_LIKE = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)+$|^[a-z]+\d+$|^\d+[a-z]+$")
_MEDIA_NOUN = frozenset({
    "recording", "video", "stream", "clip", "feed", "camera", "cam", "footage"
})
_GIST_TOKEN = re.compile(r"[a-z0-9][a-z0-9_'’-]*")


def _gist_by_words(question: str) -> str:
    """"people"/"topic" for a question made only of a stream's name and gist words (see
    above); "" for any other, and for one naming no stream."""
    words = [w.replace("’", "'").strip("-_'") for w in _GIST_TOKEN.findall(question.lower())]
    words = [w for w in words if w]
    unknown = [i for i, w in enumerate(words)
               if w not in _GIST_TOPIC_WORDS | _GIST_PEOPLE_WORDS | _GIST_OTHER_WORDS]
    if len(unknown) != 1:
        return ""
    i = unknown[0]
    beside = set(words[max(0, i - 1) : i]) | set(words[i + 1 : i + 2])
    if not (_STREAM_LIKE.match(words[i]) or beside & _MEDIA_NOUN):
        return ""  # "Who is the cat?": a thing, not a recording
    people = _GIST_PEOPLE_WORDS.intersection(words)
    # "What do people talk about in cam-2?" asks the topic; "Which people are mentioned?" people
    if people and not (words[0] in ("what", "what's", "whats") and "about" in words and people <= {"people", "persons"}):
        return "people"
    return "topic" if _GIST_TOPIC_WORDS.intersection(words) else ""


def _moment_parts(question: str) -> tuple[str, str] | None:
    """(the asking clause, the clause that places the moment) of a "… while/when …" question."""
    lead = _LEADING_CONNECTIVE.match(question)
    if lead:  # "While a picture of coins was visible, what was mentioned?"
        return lead.group(2), lead.group(1)
    if re.match(r"^\s*when\b", question, re.I):
        return None  # "When was the sign on screen?" asks for a time
    joint = _CONNECTIVE.search(question)
    if not joint or joint.start() == 0:
        return None
    return question[: joint.start()], question[joint.end():]


def _moment_subject(clause: str) -> str:
    """What a moment clause is about: "someone talked about the rope" → "the rope",
    "a photo of coins was shown" → "coins", "the coins picture" → "coins"."""
    phrase = _CLAUSE_END.sub("", clause.strip())
    phrase = _ANCHOR_WHERE.sub("", phrase)
    for _ in range(2):
        phrase = _MOMENT_TAIL.sub("", phrase).strip()
        phrase = _MOMENT_LEAD.sub("", phrase).strip()
    if _NAMED_PICTURE.search(clause):  # "the coins picture": the picture's subject is "coins"
        phrase = re.sub(r"^the\s+", "", phrase, flags=re.I)
    return phrase.strip(" ,;:-\"'“”")


def _pictured_while(question: str) -> str:
    """X in "what picture was on screen while someone talked about X?" ("" otherwise)."""
    accompanied = _ACCOMPANIED.search(question)
    if accompanied and _SAID_MOMENT.search(accompanied.group(1)):
        return _moment_subject(accompanied.group(1))
    parts = _moment_parts(question)
    if parts is None or _WHILE_DARK.search(question):
        return ""
    asked, moment = parts
    if (not _PICTURE_ASK.search(asked) or _SAID_ASK.search(asked) or _NOT_A_PICTURE.search(asked)
            or not _SAID_MOMENT.search(moment)):
        return ""
    return _moment_subject(moment)


def _said_while_pictured(question: str) -> str:
    """X in "what was mentioned while a picture of X was on screen?" ("" otherwise)."""
    parts = _moment_parts(question)
    if parts is None or _WHILE_DARK.search(question):
        return ""
    asked, moment = parts
    if not _SAID_ASK.search(asked) or not _PICTURE_MOMENT.search(moment) or _SAID_MOMENT.search(moment):
        return ""
    return _moment_subject(moment)


# what a moment clause names when it is a sound going on ("while the engine was running",
# "during the music", "as people clapped"), not speech about one
_SOUND_MOMENT = re.compile(
    r"\b(?:music|musical|song|songs|melody|tune|engine|engines|motor|motors|applause|applauding|clap|claps|"
    r"clapped|clapping|cheer|cheering|cheered|barking|ringing|siren|sirens|noise|noises|silence|silent|quiet)\b",
    re.I,
)
_HAPPENED_ASK = re.compile(rf"\b(?:what|which)\b.*\b(?:{_SAID_VERB}|happen|happens|happened|happening|going on|went on)\b", re.I)


def _said_while_sound(question: str) -> str:
    """The moment clause of "what was said (what happened) while the engine was running?" when
    it places the moment by a sound, not by speech about one ("" otherwise)."""
    parts = _moment_parts(question)
    if parts is None or _WHILE_DARK.search(question):
        return ""
    asked, moment = parts
    if not _HAPPENED_ASK.search(asked) or _SAID_MOMENT.search(moment) or _PICTURE_MOMENT.search(moment):
        return ""
    return moment.strip(" ?.,") if _SOUND_MOMENT.search(moment) else ""


def question_shape(question: str, n_options: int = 0) -> QuestionShape:
    """Order, count, stream and focus of ``question`` (see :class:`QuestionShape`)."""
    q = " ".join(question.split())
    sound = asks_nonspeech_sound(q)
    extra = {"sound": sound, "gist": gist_of(q),
             "said_while_dark": not sound and bool(_WHILE_DARK.search(q)) and bool(_SAID.search(q)),
             "pictured_while": _pictured_while(q), "said_while_pictured": _said_while_pictured(q),
             "said_while_sound": _said_while_sound(q)}
    counts = bool(_COUNT_TIMES.search(q))
    asks_stream = bool(_STREAM_Q.search(q))
    focus = "number" if counts else focus_of(q)
    m = _BEFORE_OR_AFTER.match(q)
    if m and _clean(m.group(1)) and _clean(m.group(2)):
        return QuestionShape(order="first", compared=(_clean(m.group(1)), _clean(m.group(2))), relative=True,
                             counts=counts, asks_stream=asks_stream, focus=focus, **extra)
    m = _WHICH_FIRST.search(q)
    pair = (m.group(2), m.group(3), m.group(1)) if m else None
    if pair is None:
        m = _OF_WHICH_FIRST.match(q) or _DID_EITHER_FIRST.match(q)
        pair = (m.group(1), m.group(2), m.group(3)) if m else None
    if pair is not None:
        order = "first" if pair[2].lower() in ("first", "earlier", "earliest", "sooner") else "last"
        return QuestionShape(order=order, compared=(_clean(pair[0]), _clean(pair[1])),
                             counts=counts, asks_stream=asks_stream, focus=focus, **extra)
    m = _ONE_BEFORE_OTHER.match(q)
    if m and _clean(m.group(1)) and _clean(m.group(3)):
        order = "first" if m.group(2).lower() in ("before", "earlier than", "sooner than", "ahead of") else "last"
        return QuestionShape(order=order, compared=(_clean(m.group(1)), _clean(m.group(3))),
                             counts=counts, asks_stream=asks_stream, focus=focus, **extra)
    m = _OTHER_PAIR.search(q)
    if m and _clean(m.group(2)) and _clean(m.group(3)):
        order = "first" if m.group(1).lower() in ("before", "earlier than") else "last"
        return QuestionShape(order=order, compared=(_clean(m.group(2)), _clean(m.group(3))),
                             counts=counts, asks_stream=asks_stream, focus=focus, **extra)
    m = _ANCHOR_THEN.match(q)
    if m and _clean(m.group(1)):
        order = "before" if "before" in m.group(2).lower() else "after"
        return QuestionShape(order=order, anchor=_clean(m.group(1)), counts=counts,
                             asks_stream=asks_stream, focus=focus, **extra)
    m = _LEADING_AFTER.match(q)
    if m:
        order = "after" if m.group(1).lower() == "after" else "before"
        return QuestionShape(order=order, anchor=_clean(m.group(2)), counts=counts,
                             asks_stream=asks_stream, focus=focus, asks_said=_asks_said(m.group(3), m.group(2)),
                             **extra)
    m = _AFTER.search(q)
    if m and not re.search(r"\b(?:while|when|during)\b", q[: m.start()], re.I) and _ASKS_EVENT.search(q):
        word = m.group(1).lower()
        order = "after" if word in ("after", "once", "following", "followed") else "before"
        anchor = _clean(m.group(2))
        if anchor and not _OTHERS.match(anchor):  # "said before all the others" is "first"
            return QuestionShape(order=order, anchor=anchor, counts=counts, asks_stream=asks_stream,
                                 focus=focus, asks_said=_asks_said(q[: m.end(1)], anchor), **extra)
    if n_options and not counts:
        # "Which of these was mentioned first?": the options are what is compared
        if _FIRST.search(q):
            return QuestionShape(order="first", counts=counts, asks_stream=asks_stream, focus=focus, **extra)
        if _LAST.search(q):
            return QuestionShape(order="last", counts=counts, asks_stream=asks_stream, focus=focus, **extra)
    return QuestionShape(counts=counts, asks_stream=asks_stream, focus=focus, **extra)
