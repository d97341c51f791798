"""Generate labelled evaluation recordings and questions (:mod:`episodic.qa_set`) from a script.

Each stream is a few minutes of scenes around one theme (a train station, a clinic, …). The
script says what is spoken when (names, times, prices, places, counts, in varied wordings,
voices, accents and speeds), what is shown when (textured scenes, signs and slides with text,
scikit-image photos pasted in that nobody mentions, dark stretches), and what can be heard
besides speech (music, engine, applause from :mod:`episodic.sample_sounds`, a music bed under
some speech, background noise at a per-stream SNR). Because we wrote the script, the questions
and their answers come from the truth: what was said, shown and heard, in which order, in
which stream, how many times, and questions about things never recorded.

**Dev and held-out differ** in everything a tuner could latch onto: seed, themes (so places,
objects, roles, events and sign words), people's names, pictures, espeak-ng voices and
accents, speaking speeds, noise colours and SNRs, sentence templates and question wordings
(each template list below is split in two). The question *categories* and answer *forms*
(times, counts, prices, colours, stream names) are shared: they are what is being measured.

``build_qa_sets(root)`` writes ``root/dev/`` and ``root/heldout/`` (recordings + ``qa.json``).
"""

from __future__ import annotations

import json
import string
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image, ImageDraw

from episodic import sample_sounds, samples
from episodic.qa_set import Interval, MomentQuery, QAItem, QAScope, QASet, Recording

RATE_HZ = 16000
WIDTH, HEIGHT, FPS = 640, 360, 25
SPLIT_SEED_OFFSET = {"dev": 0, "heldout": 7919}

# -- what the two splits draw from ---------------------------------------------------------------
VOICES = {
    "dev": ("en-us+f3", "en-gb+m3", "en-gb-scotland+f2", "en-029+m1", "en-us+m2"),
    "heldout": ("en-us-nyc+f4", "en-gb-x-rp+m4", "en-gb-x-gbclan+f1", "en-gb-x-gbcwmd+m7", "en-us+f5"),
}
WPM = {"dev": (130, 165), "heldout": (120, 175)}
NOISE = {"dev": (("pink", 25.0), ("white", 18.0), ("pink", 12.0)),
         "heldout": (("brown", 22.0), ("babble", 15.0), ("white", 10.0))}
MUSIC_BED_SNR_DB = {"dev": 14.0, "heldout": 10.0}
NAMES = {
    "dev": ("Maria", "Tom", "Priya", "Daniel", "Sofia", "Lucas", "Hannah", "Omar", "Grace", "Felix",
            "Chen", "Amara", "Ruth", "Diego"),
    "heldout": ("Elena", "Marcus", "Aisha", "Victor", "Nora", "Samuel", "Ingrid", "Rafael", "Keiko",
                "Jonas", "Leila", "Patrick", "Olga", "Bruno"),
}
COLOURS = ("red", "blue", "green", "yellow", "orange", "purple", "white", "black", "grey", "pink")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SOUND_ANSWERS = {
    "music": ("music", ["music", "song", "melody", "tune"]),
    "engine": ("an engine", ["engine", "motor", "rumble"]),
    "applause": ("applause", ["applause", "clapping", "clap"]),
}
SOUND_DISTRACTORS = ("birdsong", "a dog barking", "rain", "a telephone ringing")


@dataclass(frozen=True)
class Photo:
    name: str  # skimage.data function
    label: str  # option text
    answers: tuple[str, ...]


PHOTOS = {
    "dev": (Photo("chelsea", "a cat", ("cat", "kitten")),
            Photo("coffee", "a cup of coffee", ("coffee", "cup", "mug")),
            Photo("rocket", "a rocket", ("rocket", "space shuttle", "missile")),
            Photo("coins", "coins", ("coin", "money"))),
    "heldout": (Photo("astronaut", "an astronaut", ("astronaut", "space suit|spacesuit", "woman", "person")),
                Photo("stereo_motorcycle", "a motorcycle", ("motorcycle", "motorbike", "moped", "scooter")),
                Photo("camera", "a man with a camera", ("camera", "photographer", "cameraman", "tripod")),
                Photo("clock", "a clock", ("clock",))),
}


@dataclass(frozen=True)
class Theme:
    key: str
    stream_id: str
    topic: str  # the S option
    keywords: str  # S free-form: any of these words
    roles: tuple[str, ...]
    objects: tuple[str, ...]
    places: tuple[str, ...]
    items: tuple[tuple[str, str], ...]  # (singular, plural)
    events: tuple[str, ...]
    recurring: tuple[str, ...]  # things mentioned several times (count questions)
    sign_word: str  # numbered sign: "PLATFORM 7"


THEMES = {
    "dev": (
        Theme("station", "station-cam", "a train station", "train|station|platform|ticket",
              ("conductor", "ticket inspector", "driver"), ("suitcase", "umbrella", "backpack"),
              ("ticket machine", "waiting room", "newspaper kiosk"), (("ticket", "tickets"), ("sandwich", "sandwiches")),
              ("night train", "safety announcement"), ("cleaning cart", "luggage trolley"), "PLATFORM"),
        Theme("kitchen", "kitchen-cam", "cooking in a kitchen", "kitchen|cook|cooking|soup|recipe|oven",
              ("chef", "baker", "waiter"), ("ladle", "cutting board", "apron"),
              ("fridge", "oven", "sink"), (("onion", "onions"), ("egg", "eggs")),
              ("soup tasting", "dinner service"), ("delivery van", "timer"), "TABLE"),
        Theme("garden", "garden-cam", "a community garden", "garden|plant|plants|tomato|gardening|flower",
              ("gardener", "beekeeper", "volunteer"), ("watering can", "spade", "wheelbarrow"),
              ("greenhouse", "compost heap", "tool shed"), (("tomato plant", "tomato plants"), ("seed packet", "seed packets")),
              ("flower show", "harvest festival"), ("lawn mower", "robin"), "PLOT"),
        Theme("harbour", "harbour-cam", "boats in a harbour", "harbour|harbor|boat|boats|ferry|sea|fishing",
              ("captain", "harbour master", "fisherman"), ("life jacket", "anchor", "fishing net"),
              ("lighthouse", "fuel dock", "slipway"), (("crate of fish", "crates of fish"), ("rope", "ropes")),
              ("ferry crossing", "sailing race"), ("ferry horn", "seagull"), "PIER"),
        Theme("library", "library-cam", "a public library", "library|book|books|reading",
              ("librarian", "archivist", "caretaker"), ("laptop", "reading lamp", "library card"),
              ("front desk", "photocopier", "map shelf"), (("novel", "novels"), ("magazine", "magazines")),
              ("poetry reading", "story hour"), ("book trolley", "printer"), "AISLE"),
    ),
    "heldout": (
        Theme("office", "office-cam", "an office meeting", "office|meeting|budget|report|work",
              ("accountant", "manager", "receptionist"), ("projector", "stapler", "notebook"),
              ("coffee machine", "printer room", "meeting table"), (("folder", "folders"), ("chair", "chairs")),
              ("budget review", "team lunch"), ("fire drill", "courier"), "ROOM"),
        Theme("workshop", "workshop-cam", "repairing cars in a workshop", "workshop|garage|car|cars|repair|mechanic",
              ("mechanic", "welder", "apprentice"), ("wrench", "car jack", "toolbox"),
              ("workbench", "tyre rack", "paint booth"), (("spark plug", "spark plugs"), ("tyre", "tyres")),
              ("brake inspection", "oil change"), ("tow truck", "air compressor"), "BAY"),
        Theme("market", "market-cam", "a street market", "market|stall|stalls|vegetables|fruit|selling",
              ("fishmonger", "baker", "flower seller"), ("scale", "basket", "cash box"),
              ("fruit stall", "fountain", "cheese counter"), (("lemon", "lemons"), ("loaf of bread", "loaves of bread")),
              ("cheese tasting", "closing bell"), ("street musician", "pigeon"), "STALL"),
        Theme("clinic", "clinic-cam", "a medical clinic", "clinic|doctor|patient|patients|medical|hospital|nurse",
              ("nurse", "doctor", "pharmacist"), ("wheelchair", "clipboard", "thermometer"),
              ("reception desk", "x-ray room", "vending machine"), (("bandage", "bandages"), ("mask", "masks")),
              ("flu vaccination", "staff briefing"), ("ambulance", "pager"), "WARD"),
        Theme("school", "school-cam", "a school classroom", "school|class|classroom|lesson|students|teacher",
              ("teacher", "head teacher", "coach"), ("whiteboard marker", "globe", "calculator"),
              ("blackboard", "bookcase", "gym door"), (("pencil", "pencils"), ("exercise book", "exercise books")),
              ("science fair", "parents evening"), ("school bell", "football"), "CLASSROOM"),
    ),
}


# -- sentences and questions ------------------------------------------------------------------------
@dataclass(frozen=True)
class Template:
    sentence: str
    questions: tuple[str, ...]


# Slots: name, role, time, object, place, n, item (plural), thing (singular), price, event,
# number, colour. Every sentence template has its own paraphrased questions.
TEMPLATES: dict[str, dict[str, tuple[Template, ...]]] = {
    "meet_time": {
        "dev": (Template("{name} is meeting the {role} at {time}.",
                         ("At what time is {name} meeting the {role}?", "When does {name} meet the {role}?")),
                Template("At {time}, {name} has an appointment with the {role}.",
                         ("When is {name}'s appointment with the {role}?", "What time does {name} see the {role}?"))),
        "heldout": (Template("{name} will see the {role} at {time} today.",
                             ("What time will {name} see the {role}?", "When is {name} seeing the {role} today?")),
                    Template("The {role} is expecting {name} at {time}.",
                             ("At what time is the {role} expecting {name}?", "When does the {role} expect {name}?"))),
    },
    "event_time": {
        "dev": (Template("The {event} starts at {time}.", ("When does the {event} start?", "At what time does the {event} begin?")),
                Template("Please remember that the {event} begins at {time}.",
                         ("What time does the {event} begin?", "When is the {event} starting?"))),
        "heldout": (Template("The {event} is scheduled for {time}.", ("What time is the {event} scheduled for?", "When is the {event}?")),
                    Template("We will start the {event} at {time}, so be ready.",
                             ("At what time will the {event} start?", "When are they starting the {event}?"))),
    },
    "left_place": {
        "dev": (Template("{name} left the {object} next to the {place}.", ("Where did {name} leave the {object}?", "Where was the {object} left by {name}?")),
                Template("{name} put the {object} by the {place}.", ("Where did {name} put the {object}?", "Where is the {object} that {name} put down?"))),
        "heldout": (Template("The {object} that {name} brought is beside the {place}.",
                             ("Where is the {object} that {name} brought?", "Beside what is {name}'s {object}?")),
                    Template("{name} says the {object} is near the {place}.",
                             ("Where is the {object}, according to {name}?", "Near what is the {object} that {name} mentioned?"))),
    },
    "count": {
        "dev": (Template("{name} bought {n} {item} this morning.", ("How many {item} did {name} buy?", "What number of {item} did {name} buy this morning?")),
                Template("{name} ordered {n} {item} for the team.", ("How many {item} did {name} order?", "How many {item} were ordered by {name}?"))),
        "heldout": (Template("We need {n} {item}, and {name} will get them.", ("How many {item} are needed?", "How many {item} will {name} get?")),
                    Template("{name} counted {n} {item} on the shelf.", ("How many {item} did {name} count?", "What number of {item} were on the shelf?"))),
    },
    "price": {
        "dev": (Template("The {thing} costs {price} today.", ("How much does the {thing} cost?", "What is the price of the {thing} today?")),
                Template("A {thing} is {price} at the counter.", ("What does a {thing} cost at the counter?", "How much is a {thing}?"))),
        "heldout": (Template("They charge {price} for one {thing}.", ("How much do they charge for one {thing}?", "What is the price of one {thing}?")),
                    Template("{name} paid {price} for the {thing}.", ("How much did {name} pay for the {thing}?", "What did the {thing} cost {name}?"))),
    },
    "who": {
        "dev": (Template("{name} is repairing the {object}.", ("Who is repairing the {object}?", "Which person is fixing the {object}?")),
                Template("{name} will clean the {object} after lunch.", ("Who will clean the {object}?", "Who is cleaning the {object} after lunch?"))),
        "heldout": (Template("The {object} is being fixed by {name}.", ("Who is fixing the {object}?", "Which person is working on the {object}?")),
                    Template("{name} is in charge of the {object} today.", ("Who is in charge of the {object} today?", "Who is responsible for the {object}?"))),
    },
    "room": {
        "dev": (Template("The {event} is in room {number}.", ("Which room is the {event} in?", "In what room is the {event}?")),),
        "heldout": (Template("Go to room {number} for the {event}.", ("Which room should you go to for the {event}?", "What is the room number for the {event}?")),),
    },
    "colour": {
        "dev": (Template("{name} painted the {object} {colour}.", ("What colour did {name} paint the {object}?", "Which colour is the {object} that {name} painted?")),),
        "heldout": (Template("{name}'s {object} is the {colour} one.", ("What colour is {name}'s {object}?", "Which colour is the {object} that belongs to {name}?")),),
    },
}
TOPICS = {  # a short phrase naming a fact, for order / which-stream options and moment queries
    "meet_time": "{name}'s appointment with the {role}",
    "event_time": "the time of the {event}",
    "left_place": "where {name} left the {object}",
    "count": "{name} and the {item}",
    "price": "the price of the {thing}",
    "who": "who takes care of the {object}",
    "room": "the room for the {event}",
    "colour": "the colour of {name}'s {object}",
}
KEY_SLOT = {"meet_time": "role", "event_time": "event", "left_place": "object", "count": "item",
            "price": "thing", "who": "object", "room": "event", "colour": "object"}
ANSWER_SLOT = {"meet_time": "time", "event_time": "time", "left_place": "place", "count": "n",
               "price": "price", "who": "name", "room": "number", "colour": "colour"}
RECURRING = {
    "dev": ("Look, the {thing} is here.", "There is the {thing} again.", "I can hear the {thing} outside."),
    "heldout": ("Oh, the {thing} just came past.", "That was the {thing} once more.", "Here comes the {thing}."),
}
FILLER = {
    "dev": ("It is quite busy here this morning.", "Let me check the list once more.", "The weather looks fine today.",
            "We should be finished before the afternoon.", "Everyone seems to be in a good mood."),
    "heldout": ("Things are a little slow right now.", "I will have a look at the notes later.", "It might rain later on.",
                "Nobody has complained so far.", "We are almost done with the first part."),
}
QUESTIONS = {  # category question wordings per split; {stream} is the stream id
    "photo_mc": {"dev": ("Which of these appeared in a picture in the {stream} recording?", "What could be seen in a photo on screen in {stream}?"),
                 "heldout": ("Which of these was shown on screen in {stream}, without anyone mentioning it?", "In {stream}, what did the picture on screen show?")},
    "photo_free": {"dev": ("In the {stream} recording a picture was shown that nobody talked about. What did it show?",),
                   "heldout": ("What did the photo that appeared in {stream} show?",)},
    "photo_while": {"dev": ("What picture was on screen while someone talked about {topic}?",),
                    "heldout": ("While {topic} was being discussed, what was shown on screen?",)},
    "said_while_photo": {"dev": ("What was mentioned while a picture of {photo} was on screen?",),
                         "heldout": ("While a picture of {photo} was visible, what was talked about?",)},
    "dark_sound": {"dev": ("What could be heard while the picture was dark in {stream}?",),
                   "heldout": ("When the screen went dark in {stream}, what sound was there?",)},
    "dark_said": {"dev": ("What was talked about while the screen was dark in {stream}?",),
                  "heldout": ("While the picture in {stream} was dark, what was mentioned?",)},
    "sound_mc": {"dev": ("Besides speech, what could be heard in the {stream} recording?", "Apart from people talking, which sound was in {stream}?"),
                 "heldout": ("Other than voices, what sound could be heard in {stream}?", "Which non-speech sound occurred in {stream}?")},
    "sound_free": {"dev": ("Besides people talking, what could you hear in {stream}?",),
                   "heldout": ("Apart from speech, what sound was there in {stream}?",)},
    "sound_stream": {"dev": ("In which recording could {sound} be heard?",), "heldout": ("Which camera picked up {sound}?",)},
    "after": {"dev": ("What was mentioned right after {topic}?", "What came up next after {topic}?"),
              "heldout": ("Right after {topic}, what was talked about?", "What was the next thing mentioned after {topic}?")},
    "first": {"dev": ("Which was mentioned first: {a} or {b}?",), "heldout": ("What came earlier, {a} or {b}?",)},
    "before": {"dev": ("What was mentioned just before {topic}?",), "heldout": ("What was talked about immediately before {topic}?",)},
    "fact_stream": {"dev": ("In which recording was {topic} mentioned?", "Which camera recorded the talk about {topic}?"),
                    "heldout": ("Which stream mentions {topic}?", "Where was {topic} discussed: which recording?")},
    "photo_stream": {"dev": ("Which camera showed {photo}?",), "heldout": ("In which recording did {photo} appear on screen?",)},
    "sign_stream": {"dev": ("On which camera was the sign \"{sign}\" visible?",), "heldout": ("Which recording showed the sign \"{sign}\"?",)},
    "count": {"dev": ("How many times was the {thing} mentioned in {stream}?",),
              "heldout": ("In {stream}, how often did someone mention the {thing}?",)},
    "topic": {"dev": ("What is the {stream} recording mostly about?", "What is the main subject of {stream}?"),
              "heldout": ("What is going on in the {stream} recording, overall?", "Which setting does {stream} show?")},
    "person": {"dev": ("Name one person who was mentioned in the {stream} recording.",),
               "heldout": ("Who is one of the people talked about in {stream}?",)},
    "sign_number": {"dev": ("Which {word} number was shown on a sign in {stream}?", "What number did the {word} sign in {stream} show?"),
                    "heldout": ("What {word} number could be read on screen in {stream}?", "The sign in {stream} named a {word}: which number?")},
    "sign_day": {"dev": ("According to the sign in {stream}, on which day is it closed?",),
                 "heldout": ("Which day does the sign in {stream} say it is closed?",)},
    "sign_time": {"dev": ("Until what time is it open, according to the sign in {stream}?",),
                  "heldout": ("What closing time was written on the sign in {stream}?",)},
}


# -- values in their spoken and written forms --------------------------------------------------------
_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS_W = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def number_words(n: int) -> str:
    """0..9999 in words ("one hundred and eighty")."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS_W[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " and " + number_words(rest))
    rest = n % 1000
    return number_words(n // 1000) + " thousand" + ("" if rest == 0 else " " + number_words(rest))


def time_forms(h: int, m: int, rng: np.random.Generator) -> tuple[str, str, list[str]]:
    """(spoken, option text, acceptable answers) for a clock time on a 12-hour clock."""
    nxt = h % 12 + 1
    words = {0: f"{_ONES[h]} o'clock", 15: f"quarter past {_ONES[h]}", 30: f"half past {_ONES[h]}",
             45: f"quarter to {_ONES[nxt]}", 20: f"twenty past {_ONES[h]}", 10: f"ten past {_ONES[h]}",
             40: f"twenty to {_ONES[nxt]}", 50: f"ten to {_ONES[nxt]}"}
    plain = f"{_ONES[h]} o'clock" if m == 0 else f"{_ONES[h]} {number_words(m) if m >= 10 else 'oh ' + _ONES[m]}"
    spoken_choices = [plain] + ([words[m]] if m in words and m != 0 else [])
    spoken = spoken_choices[int(rng.integers(len(spoken_choices)))]
    digits = f"{h}:{m:02d}"
    option = digits if rng.random() < 0.6 else (words.get(m, plain))
    return spoken, option, list(dict.fromkeys([digits, plain, words.get(m, plain)]))


def random_time(rng: np.random.Generator) -> tuple[int, int]:
    return int(rng.integers(1, 13)), int(rng.choice([0, 10, 15, 20, 30, 40, 45, 50, 5, 25, 35]))


# -- the script --------------------------------------------------------------------------------------
@dataclass
class Fact:
    kind: str
    slots: dict[str, str]  # spoken slot values
    sentence: str
    questions: tuple[str, ...]
    option: str  # the MC option text of the answer
    answers: list[str]  # acceptable free-form answers
    pool: str  # values of this pool are distractors for each other
    stream_id: str = ""
    t_start: float = 0.0
    t_end: float = 0.0

    @property
    def topic(self) -> str:
        return TOPICS[self.kind].format(**self.slots)

    @property
    def key(self) -> str:
        return self.slots[KEY_SLOT[self.kind]]


@dataclass
class Beat:
    """One scene of the script: what is shown, said and heard during it."""

    visual: str = "texture"  # texture | sign | slide | photo | dark
    sign: str = ""
    photo: Photo | None = None
    said: str = ""
    fact: Fact | None = None
    recurring: bool = False
    sound: str = ""  # music | engine | applause (no speech) or "bed" (music under speech)
    voice: str = ""
    wpm: int = 140
    duration_s: float = 0.0
    t_start: float = 0.0
    speech_t: tuple[float, float] | None = None


@dataclass
class StreamScript:
    theme: Theme
    beats: list[Beat]
    facts: list[Fact]
    names: list[str]
    signs: list[dict[str, Any]]  # {text, kind, value, option, answers, pool}
    photos: list[Photo]
    sounds: list[tuple[str, float, float]] = field(default_factory=list)
    noise: tuple[str, float] = ("pink", 20.0)
    path: str = ""

    @property
    def stream_id(self) -> str:
        return self.theme.stream_id

    @property
    def duration_s(self) -> float:
        return sum(b.duration_s for b in self.beats)


def _pick(rng: np.random.Generator, seq: Sequence[Any]) -> Any:
    return seq[int(rng.integers(len(seq)))]


def _make_fact(kind: str, theme: Theme, name: str, split: str, rng: np.random.Generator,
               used: dict[str, set[str]]) -> Fact | None:
    """One spoken fact of ``kind`` with fresh slot values (none reused within the set)."""

    def fresh(pool_key: str, choices: Sequence[str]) -> str | None:
        free = [c for c in choices if c not in used.setdefault(pool_key, set())]
        if not free:
            return None
        value = _pick(rng, free)
        used[pool_key].add(value)
        return value

    tmpl: Template = _pick(rng, TEMPLATES[kind][split])
    slots: dict[str, str] = {"name": name}
    option = ""
    answers: list[str] = []
    pool = ANSWER_SLOT[kind]
    if kind in ("meet_time", "event_time"):
        h, m = random_time(rng)
        while f"{h}:{m}" in used.setdefault("time", set()):
            h, m = random_time(rng)
        used["time"].add(f"{h}:{m}")
        slots["time"], option, answers = time_forms(h, m, rng)
        if kind == "meet_time":
            role = fresh("role", theme.roles)
            if role is None:
                return None
            slots["role"] = role
        else:
            event = fresh("event", theme.events)
            if event is None:
                return None
            slots["event"] = event
    elif kind in ("left_place", "who", "colour"):
        obj = fresh("object", theme.objects)
        if obj is None:
            return None
        slots["object"] = obj
        if kind == "left_place":
            place = fresh("place", theme.places)
            if place is None:
                return None
            slots["place"] = place
            option, answers = place, [place]
        elif kind == "who":
            option, answers = name, [name]
        else:
            colour = fresh("colour", COLOURS)
            slots["colour"] = colour or "red"
            option, answers = slots["colour"], [slots["colour"]]
    elif kind in ("count", "price"):
        item = fresh("item", [s for s, _ in theme.items])
        if item is None:
            return None
        plural = dict(theme.items)[item]
        slots["thing"], slots["item"] = item, plural
        if kind == "count":
            n = int(rng.integers(2, 20))
            slots["n"] = number_words(n) if rng.random() < 0.7 else str(n)
            option = str(n) if rng.random() < 0.6 else number_words(n)
            answers = [str(n), number_words(n)]
        else:
            d = int(rng.integers(3, 60))
            currency = _pick(rng, ("dollars", "pounds", "euros"))
            slots["price"] = f"{number_words(d)} {currency}"
            option = f"{d} {currency}"
            answers = [str(d)]
    elif kind == "room":
        event = fresh("event", theme.events)
        if event is None:
            return None
        slots["event"] = event
        number = int(rng.integers(1, 5)) * 100 + int(rng.integers(1, 30))
        slots["number"] = f"{_ONES[number // 100]} {number_words(number % 100) if number % 100 >= 10 else 'oh ' + _ONES[number % 100]}"
        option, answers = str(number), [str(number), f"{number // 100} {number % 100:02d}"]
    needed = {f for _, f, _, _ in string.Formatter().parse(tmpl.sentence) if f}
    if not needed <= set(slots):
        return None
    slots = {k: v for k, v in slots.items() if k in needed}  # a name the sentence never says is no fact
    sentence = tmpl.sentence.format(**slots)
    sentence = sentence[0].upper() + sentence[1:]
    return Fact(kind, slots, sentence, tmpl.questions, option, answers, pool)


def _signs(theme: Theme, rng: np.random.Generator, used: dict[str, set[str]]) -> list[dict[str, Any]]:
    n = int(rng.integers(2, 40))
    while str(n) in used.setdefault("sign_n", set()):
        n = int(rng.integers(2, 40))
    used["sign_n"].add(str(n))
    signs = [{"text": f"{theme.sign_word} {n}", "kind": "sign_number", "option": str(n), "answers": [str(n)],
              "pool": "sign_n", "word": theme.sign_word.lower()}]
    if rng.random() < 0.5:
        day = _pick(rng, [d for d in DAYS if d not in used.setdefault("day", set())])
        used["day"].add(day)
        signs.append({"text": f"CLOSED ON {day.upper()}S", "kind": "sign_day", "option": day, "answers": [day],
                      "pool": "day"})
    else:
        h = int(rng.integers(4, 11))
        while str(h) in used.setdefault("sign_h", set()):
            h = int(rng.integers(4, 11))
        used["sign_h"].add(str(h))
        signs.append({"text": f"OPEN UNTIL {h} PM", "kind": "sign_time", "option": f"{h} pm",
                      "answers": [f"{h} pm", f"{h}:00", number_words(h)], "pool": "sign_h"})
    return signs


def script_stream(theme: Theme, split: str, rng: np.random.Generator, minutes: float, names: list[str],
                  photos: list[Photo], sounds: list[str], dark: bool, noise: tuple[str, float],
                  used: dict[str, set[str]]) -> StreamScript:
    """Lay out one stream: facts, signs, photos, sounds, a dark stretch, fillers, ≈ ``minutes`` long."""
    kinds = list(TEMPLATES)
    rng.shuffle(kinds)
    n_facts = max(3, round(minutes * 2.3))
    facts: list[Fact] = []
    for i in range(n_facts * 3):
        if len(facts) >= n_facts:
            break
        fact = _make_fact(kinds[i % len(kinds)], theme, names[len(facts) % len(names)], split, rng, used)
        if fact is not None:
            fact.stream_id = theme.stream_id
            facts.append(fact)
    voices = VOICES[split]
    lo, hi = WPM[split]

    def spoken(text: str, fact: Fact | None = None, recurring: bool = False) -> Beat:
        return Beat(said=text, fact=fact, recurring=recurring, voice=_pick(rng, voices), wpm=int(rng.integers(lo, hi + 1)))

    beats = [spoken(f.sentence, f) for f in facts]
    recurring_thing = _pick(rng, theme.recurring)
    n_mentions = int(rng.integers(1, 4))
    for k in range(n_mentions):
        beats.append(spoken(RECURRING[split][k % len(RECURRING[split])].format(thing=recurring_thing), recurring=True))
    signs = _signs(theme, rng, used)
    quiet: list[Beat] = []
    for s in signs:
        quiet.append(Beat(visual=_pick(rng, ("sign", "slide")), sign=s["text"]))
    for p in photos:
        quiet.append(Beat(visual="photo", photo=p))
    for snd in sounds:
        quiet.append(Beat(sound=snd))
    if dark:
        quiet.append(Beat(visual="dark"))
    # Some quiet beats are shown while a fact is spoken (V+A); the rest stay without speech.
    rng.shuffle(beats)
    for q in quiet:
        host = [b for b in beats if b.fact is not None and b.visual == "texture" and not b.sound]
        if q.sound or not host or rng.random() < 0.4:
            beats.insert(int(rng.integers(0, len(beats) + 1)), q)
        else:
            b = _pick(rng, host)
            b.visual, b.sign, b.photo = q.visual, q.sign, q.photo
    if rng.random() < 0.7:  # a music bed under one spoken fact
        host = [b for b in beats if b.fact is not None and not b.sound]
        if host:
            _pick(rng, host).sound = "bed"
    filler_lines = list(FILLER[split])
    rng.shuffle(filler_lines)
    target = minutes * 60.0
    script = StreamScript(theme, beats, facts, sorted({f.slots["name"] for f in facts if "name" in f.slots}),
                          signs, photos, noise=noise)
    _time_beats(script, rng)
    while script.duration_s < target - 6 and filler_lines:
        beat = spoken(filler_lines.pop()) if rng.random() < 0.6 else Beat()
        beats.insert(int(rng.integers(1, len(beats) + 1)), beat)
        _time_beats(script, rng)
    _separate_recurring(beats)
    _time_beats(script, rng)
    return script


def _separate_recurring(beats: list[Beat]) -> None:
    """Keep the repeated mentions apart (two in a row would read as one moment)."""
    for _ in range(len(beats)):
        moved = False
        for i in range(1, len(beats)):
            if beats[i].recurring and beats[i - 1].recurring:
                beats.append(beats.pop(i))
                moved = True
                break
        if not moved:
            return


_SPEECH_CACHE: dict[tuple[str, str, int], np.ndarray] = {}


def _speech(text: str, voice: str, wpm: int) -> np.ndarray:
    key = (text, voice, wpm)
    if key not in _SPEECH_CACHE:
        _SPEECH_CACHE[key] = samples.synthesize(text, voice, wpm, RATE_HZ)
    return _SPEECH_CACHE[key]


def _time_beats(script: StreamScript, rng: np.random.Generator) -> None:
    """Durations and start times: a spoken beat lasts its speech plus a pause, at least 7 s."""
    t = 0.0
    for b in script.beats:
        if not b.duration_s:
            if b.said:
                speech_s = len(_speech(b.said, b.voice, b.wpm)) / RATE_HZ
                b.duration_s = round(max(7.0, speech_s + float(rng.uniform(2.5, 5.0))), 2)
            else:
                b.duration_s = round(float(rng.uniform(8.0, 14.0)), 2)
        b.t_start = round(t, 2)
        if b.said:
            offset = 1.0 + 0.5 * (zlib.crc32(b.said.encode()) % 3)  # 1–2 s in, reproducibly
            speech_s = len(_speech(b.said, b.voice, b.wpm)) / RATE_HZ
            b.speech_t = (round(t + offset, 2), round(t + offset + speech_s, 2))
            if b.fact is not None:
                b.fact.t_start, b.fact.t_end = b.speech_t
        t += b.duration_s


# -- rendering -------------------------------------------------------------------------------------
def _photo_array(photo: Photo) -> np.ndarray:
    import skimage.data

    img = getattr(skimage.data, photo.name)()
    if isinstance(img, tuple):
        img = img[0]
    img = np.asarray(img)
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    return img[..., :3].astype(np.uint8)


def _slide(text: str, seed: int) -> np.ndarray:
    """A presentation slide: light background, a coloured header bar, the text large."""
    rng = np.random.default_rng(seed)
    bg = tuple(int(v) for v in rng.integers(225, 256, 3))
    bar = tuple(int(v) for v in rng.integers(20, 120, 3))
    pil = Image.new("RGB", (WIDTH, HEIGHT), bg)
    draw = ImageDraw.Draw(pil)
    draw.rectangle((0, 0, WIDTH, HEIGHT // 8), fill=bar)
    font = samples._font(max(36, HEIGHT // 7))
    lines = text.split(" ", 1) if len(text) > 14 else [text]
    y = HEIGHT // 3
    for line in lines:
        w = draw.textlength(line, font=font)
        draw.text(((WIDTH - w) / 2, y), line, font=font, fill=(20, 20, 30))
        y += int(HEIGHT / 5.5)
    return np.asarray(pil)


class _BeatRenderer:
    """Frames for one beat, composed on the sample renderer's textured scenes."""

    def __init__(self, beat: Beat, seed: int) -> None:
        self.beat = beat
        rng = np.random.default_rng(seed)
        tint = tuple(int(v) for v in rng.integers(40, 220, 3))
        caption = beat.sign if beat.visual == "sign" else ""
        scene = samples.Scene(beat.duration_s, seed=seed, tint=tint, text=caption,
                              motion=float(rng.uniform(0.5, 1.5)), pan_px_s=float(rng.choice([0.0, 0.0, 12.0])))
        # the sample recordings' textured, moving scene; we compose photos, slides and darkness on it
        self.scene = samples._SceneRenderer(scene, WIDTH, HEIGHT)
        self.still: np.ndarray | None = None
        self.dark: list[np.ndarray] = []
        self.photo: tuple[np.ndarray, int, int] | None = None
        if beat.visual == "slide":
            self.still = _slide(beat.sign, seed)
        elif beat.visual == "dark":
            base = (self.scene.base.astype(np.float32) * 0.04 + 6).clip(0, 255)
            self.dark = [(base + rng.normal(0, 2.5, base.shape)).clip(0, 255).astype(np.uint8) for _ in range(4)]
        elif beat.visual == "photo" and beat.photo is not None:
            img = Image.fromarray(_photo_array(beat.photo))
            h = int(HEIGHT * rng.uniform(0.65, 0.9))
            w = min(WIDTH - 20, int(img.width * h / img.height))
            img = img.resize((w, h), Image.BILINEAR)
            x = int(rng.integers(10, max(11, WIDTH - w - 10)))
            y = int(rng.integers(5, max(6, HEIGHT - h - 5)))
            self.photo = (np.asarray(img), x, y)

    def frame(self, t: float, i: int) -> np.ndarray:
        if self.still is not None:
            return self.still
        if self.dark:
            return self.dark[i % len(self.dark)]
        img = self.scene.frame(t)
        if self.photo is not None:
            pic, x, y = self.photo
            img = img.copy()
            img[y : y + pic.shape[0], x : x + pic.shape[1]] = pic
        return img


def _soundtrack(script: StreamScript, split: str, seed: int) -> np.ndarray:
    n = int(round(script.duration_s * RATE_HZ))
    speech = np.zeros(n, np.float32)
    other = np.zeros(n, np.float32)
    script.sounds = []
    for k, b in enumerate(script.beats):
        if b.said and b.speech_t is not None:
            x = _speech(b.said, b.voice, b.wpm)
            s0 = int(round(b.speech_t[0] * RATE_HZ))
            speech[s0 : s0 + len(x)] += x[: max(0, n - s0)]
        if b.sound:
            kind = "music" if b.sound == "bed" else b.sound
            t0 = b.t_start + (0.0 if b.sound == "bed" else 1.0)
            t1 = b.t_start + b.duration_s - (0.0 if b.sound == "bed" else 1.0)
            gen = {"music": sample_sounds.music, "engine": sample_sounds.engine, "applause": sample_sounds.applause}[kind]
            x = gen(t1 - t0, RATE_HZ, seed=seed * 31 + k)
            fade = min(len(x) // 4, int(0.3 * RATE_HZ))
            if fade:
                ramp = np.linspace(0, 1, fade, dtype=np.float32)
                x[:fade] *= ramp
                x[-fade:] *= ramp[::-1]
            if b.sound == "bed" and b.speech_t is not None:
                s = _speech(b.said, b.voice, b.wpm)
                p_speech = float(np.mean(s**2)) or 1e-9
                p_bed = float(np.mean(x**2)) or 1e-9
                x = x * np.float32(np.sqrt(p_speech / p_bed / 10 ** (MUSIC_BED_SNR_DB[split] / 10)))
            else:
                x = x * np.float32(0.7)
            s0 = int(round(t0 * RATE_HZ))
            other[s0 : s0 + len(x)] += x[: max(0, n - s0)]
            script.sounds.append((kind, round(t0, 2), round(t1, 2)))
    # Background noise at the stream's SNR against the power of speech while someone speaks
    # (not the whole track's, whose pauses would make the noise look quieter than it is).
    colour, snr = script.noise
    bg = sample_sounds.noise(min(script.duration_s, 30.0), RATE_HZ, seed=seed, colour=colour)
    bg = np.resize(bg, n).astype(np.float32)
    active = np.abs(speech) > 1e-3
    p_speech = float(np.mean(speech[active] ** 2)) if active.any() else 1e-4
    p_bg = float(np.mean(bg**2)) or 1e-12
    bg *= np.float32(np.sqrt(p_speech / p_bg / 10 ** (snr / 10)))
    return np.clip(speech + bg + other, -1.0, 1.0).astype(np.float32)


def render_stream(script: StreamScript, path: Path, split: str, seed: int) -> None:
    """Write the stream's video (H.264) and sound (AAC) to ``path``."""
    track = _soundtrack(script, split, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = av.open(str(path), mode="w")
    try:
        rate = Fraction(FPS)
        vs = out.add_stream("libx264", rate=rate, options={"preset": "veryfast", "crf": "23", "g": "50"})
        vs.width, vs.height, vs.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        vs.codec_context.time_base = 1 / rate
        aus = out.add_stream("aac", rate=RATE_HZ, layout="mono")
        aus.codec_context.time_base = Fraction(1, RATE_HZ)
        a_pos = 0

        def audio_until(sample: int) -> None:
            nonlocal a_pos
            sample = min(sample, len(track))
            while a_pos < sample:
                chunk = track[a_pos : min(sample, a_pos + 1024)]
                frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format="flt", layout="mono")
                frame.sample_rate, frame.pts, frame.time_base = RATE_HZ, a_pos, Fraction(1, RATE_HZ)
                out.mux(aus.encode(frame))
                a_pos += len(chunk)

        frame_i = 0
        for k, beat in enumerate(script.beats):
            renderer = _BeatRenderer(beat, seed * 1000 + k)
            end_frame = int(round((beat.t_start + beat.duration_s) * FPS))
            while frame_i < end_frame:
                t = frame_i / FPS
                audio_until(int((t + 0.1) * RATE_HZ))
                vf = av.VideoFrame.from_ndarray(renderer.frame(t - beat.t_start, frame_i), format="rgb24")
                vf.pts = frame_i
                out.mux(vs.encode(vf))
                frame_i += 1
        out.mux(vs.encode(None))
        audio_until(len(track))
        out.mux(aus.encode(None))
    finally:
        out.close()


# -- questions ---------------------------------------------------------------------------------------
def _span(sid: str, t0: float, t1: float) -> Interval:
    return Interval(sid, round(t0, 2), round(t1, 2))


class _Questions:
    """Builds the items and moment queries of one split from the scripts."""

    def __init__(self, scripts: list[StreamScript], split: str, rng: np.random.Generator,
                 unused_names: list[str], unused_themes: list[Theme]) -> None:
        self.scripts, self.split, self.rng = scripts, split, rng
        self.unused_names, self.unused_themes = unused_names, unused_themes
        self.items: list[QAItem] = []
        self.moments: list[MomentQuery] = []
        self.facts = [f for s in scripts for f in s.facts]
        self.stream_ids = [s.stream_id for s in scripts]

    def _q(self, key: str, **kw: str) -> str:
        return _pick(self.rng, QUESTIONS[key][self.split]).format(**kw)

    def _options(self, right: str, pool: Sequence[str], n: int = 4) -> tuple[list[str], int]:
        others = [p for p in dict.fromkeys(pool) if p.lower() != right.lower()]
        self.rng.shuffle(others)
        options = [right] + others[: n - 1]
        self.rng.shuffle(options)
        return options, options.index(right)

    def add(self, category: str, question: str, *, right: str = "", pool: Sequence[str] = (),
            answers: Sequence[str] = (), keywords: Sequence[str] = (), wrong: Sequence[str] = (),
            stream: str | None = None, evidence: Sequence[Interval] = (), mc: bool | None = None,
            answerable: bool = True) -> None:
        qid = f"{self.split[0]}{len(self.items) + 1:03d}"
        scope = QAScope(stream_ids=[stream]) if stream else None
        if not answerable:
            self.items.append(QAItem(qid, category, question, answerable=False, split=self.split, scope=scope))
            return
        mc = (self.rng.random() < 0.5) if mc is None else mc
        if mc and right and len([p for p in dict.fromkeys(pool) if p.lower() != right.lower()]) >= 1:
            options, idx = self._options(right, pool)
            self.items.append(QAItem(qid, category, question, options=options, answer_index=idx, split=self.split,
                                     scope=scope, evidence=list(evidence)))
        else:
            wrong_l = [w for w in dict.fromkeys(wrong) if w.lower() not in {a.lower() for a in answers}]
            self.items.append(QAItem(qid, category, question, answers=list(answers), keywords=list(keywords),
                                     wrong_answers=wrong_l, split=self.split, scope=scope, evidence=list(evidence)))

    def moment(self, query: str, targets: list[Interval]) -> None:
        self.moments.append(MomentQuery(f"{self.split[0]}m{len(self.moments) + 1:02d}", query, targets, self.split))

    # the categories ---------------------------------------------------------------------------------
    def build(self) -> None:
        for script in self.scripts:
            self.speech_facts(script)
            self.visual(script)
            self.ocr(script)
            self.sound(script)
            self.order(script)
            self.count(script)
            self.summary(script)
            self.unanswerable(script)
        self.which_stream()
        self.unanswerable_global()

    def _pool(self, fact: Fact) -> list[str]:
        same = [f.option for f in self.facts if f.pool == fact.pool and f is not fact]
        rng = self.rng
        extra: list[str] = []
        for _ in range(6):
            if fact.pool == "time":
                h, m = random_time(rng)
                extra.append(f"{h}:{m:02d}")
            elif fact.pool == "n":
                extra.append(str(int(rng.integers(2, 20))))
            elif fact.pool == "price":
                extra.append(f"{int(rng.integers(3, 60))} {fact.option.split()[-1]}")
            elif fact.pool == "number":
                extra.append(str(int(rng.integers(1, 5)) * 100 + int(rng.integers(1, 30))))
            elif fact.pool == "colour":
                extra.append(_pick(rng, COLOURS))
            elif fact.pool == "name":
                extra.append(_pick(rng, NAMES[self.split]))
            elif fact.pool == "place":
                extra.append(_pick(rng, _pick(rng, THEMES[self.split]).places))
        right_norm = set(fact.answers)
        return [p for p in same + extra if p not in right_norm]

    def speech_facts(self, script: StreamScript) -> None:
        for f in script.facts:
            q = _pick(self.rng, f.questions).format(**f.slots)
            q = q[0].upper() + q[1:]
            ev = [Interval(f.stream_id, f.t_start, f.t_end)]
            pool = self._pool(f)
            self.add("A", q, right=f.option, pool=pool, answers=f.answers, wrong=pool[:4], evidence=ev)
        for f in script.facts[:2]:
            self.moment(f.topic, [_span(f.stream_id, max(0.0, f.t_start - 1.0), f.t_end + 1.0)])

    def visual(self, script: StreamScript) -> None:
        sid = script.stream_id
        all_labels = [p.label for split in PHOTOS.values() for p in split]
        here = {p.label for p in script.photos}
        for photo in script.photos:
            beats = [b for b in script.beats if b.photo is photo]
            ev = [_span(sid, b.t_start, b.t_start + b.duration_s) for b in beats]
            self.add("V", self._q("photo_mc", stream=sid), right=photo.label,
                     pool=[label for label in all_labels if label not in here], mc=True, stream=sid, evidence=ev)
            self.moment(f"a picture of {photo.label}", ev)
            for b in beats:
                if b.fact is not None:  # shown while a fact was spoken: cross-modal both ways
                    self.add("V+A", self._q("photo_while", topic=b.fact.topic), right=photo.label,
                             pool=[label for label in all_labels if label != photo.label], mc=True, evidence=ev)
                    others = [f.topic for f in self.facts if f is not b.fact]
                    self.add("V+A", self._q("said_while_photo", photo=photo.label), right=b.fact.topic,
                             pool=others, mc=True, evidence=ev)
        if len(script.photos) == 1:
            p = script.photos[0]
            wrong = [a for q in PHOTOS[self.split] if q is not p for a in q.answers[:1]]
            self.add("V", self._q("photo_free", stream=sid), answers=p.answers, wrong=wrong, mc=False, stream=sid)
        for b in script.beats:
            if b.visual != "dark":
                continue
            ev = [_span(sid, b.t_start, b.t_start + b.duration_s)]
            self.moment("the screen goes dark", ev)
            if b.sound and b.sound != "bed":
                label, answers = SOUND_ANSWERS[b.sound]
                pool = [SOUND_ANSWERS[k][0] for k in SOUND_ANSWERS if k != b.sound] + list(SOUND_DISTRACTORS)
                self.add("V+A", self._q("dark_sound", stream=sid), right=label, pool=pool, answers=answers, stream=sid, evidence=ev)
            elif b.fact is not None:
                others = [f.topic for f in script.facts if f is not b.fact]
                self.add("V+A", self._q("dark_said", stream=sid), right=b.fact.topic, pool=others, mc=True, stream=sid, evidence=ev)

    def ocr(self, script: StreamScript) -> None:
        sid = script.stream_id
        for s in script.signs:
            beats = [b for b in script.beats if b.sign == s["text"]]
            ev = [_span(sid, b.t_start, b.t_start + b.duration_s) for b in beats]
            q = self._q(s["kind"], stream=sid, word=s.get("word", ""))
            if s["kind"] == "sign_number":
                pool = [str(v) for v in self.rng.choice(np.arange(2, 40), 8, replace=False) if str(v) != s["option"]]
            elif s["kind"] == "sign_day":
                pool = [d for d in DAYS if d != s["option"]]
            else:
                pool = [f"{h} pm" for h in range(4, 11) if f"{h} pm" != s["option"]]
            self.add("ocr", q, right=s["option"], pool=pool, answers=s["answers"], wrong=pool[:3], stream=sid, evidence=ev)
            self.moment(f"the sign saying {s['text']}", ev)

    def sound(self, script: StreamScript) -> None:
        sid = script.stream_id
        kinds = sorted({k for k, _, _ in script.sounds})
        if not kinds:
            return
        kind = _pick(self.rng, kinds)
        label, answers = SOUND_ANSWERS[kind]
        ev = [Interval(sid, a, b) for k, a, b in script.sounds if k == kind]
        pool = [SOUND_ANSWERS[k][0] for k in SOUND_ANSWERS if k not in kinds] + list(SOUND_DISTRACTORS)
        self.add("sound", self._q("sound_mc", stream=sid), right=label, pool=pool, mc=True, stream=sid, evidence=ev)
        if len(kinds) == 1:
            wrong = [SOUND_ANSWERS[k][1][0] for k in SOUND_ANSWERS if k not in kinds]
            self.add("sound", self._q("sound_free", stream=sid), answers=answers, wrong=wrong, mc=False, stream=sid, evidence=ev)

    def order(self, script: StreamScript) -> None:
        spoken = [b for b in script.beats if b.said]
        pairs = [(a.fact, b.fact) for a, b in zip(spoken, spoken[1:], strict=False) if a.fact and b.fact]
        topics = [f.topic for f in script.facts]
        if pairs:
            a, b = _pick(self.rng, pairs)
            self.add("order", self._q("after", topic=a.topic), right=b.topic,
                     pool=[t for t in topics if t not in (a.topic, b.topic)], mc=True,
                     evidence=[Interval(b.stream_id, b.t_start, b.t_end)])
            a, b = _pick(self.rng, pairs)
            self.add("order", self._q("before", topic=b.topic), answers=[a.key],
                     wrong=[f.key for f in script.facts if f not in (a, b) and f.key != a.key], mc=False,
                     evidence=[Interval(a.stream_id, a.t_start, a.t_end)])
        if len(script.facts) >= 2:
            idx = self.rng.choice(len(script.facts), 2, replace=False)
            x, y = (script.facts[int(i)] for i in idx)
            first = x if x.t_start < y.t_start else y
            self.add("order", self._q("first", a=x.topic, b=y.topic), right=first.topic,
                     pool=[x.topic, y.topic], mc=True, evidence=[Interval(first.stream_id, first.t_start, first.t_end)])

    def count(self, script: StreamScript) -> None:
        sid = script.stream_id
        mentions = [b for b in script.beats if b.recurring]
        if not mentions:
            return
        thing = next(t for t in script.theme.recurring if t in mentions[0].said)
        n = len(mentions)
        words = {1: "once", 2: "twice", 3: "three times", 4: "four times"}
        ev = [Interval(sid, *b.speech_t) for b in mentions if b.speech_t]
        self.add("count", self._q("count", thing=thing, stream=sid), right=words[n],
                 pool=[w for k, w in words.items() if k != n], answers=[str(n), words[n]],
                 wrong=[words[k] for k in words if k != n], stream=sid, evidence=ev)
        self.moment(f"someone mentions the {thing}", ev)

    def summary(self, script: StreamScript) -> None:
        sid = script.stream_id
        topics = [t.topic for split in THEMES.values() for t in split]
        self.add("S", self._q("topic", stream=sid), right=script.theme.topic,
                 pool=[t for t in topics if t != script.theme.topic], keywords=[script.theme.keywords], stream=sid)
        others = [n for s in self.scripts if s is not script for n in s.names if n not in script.names]
        self.add("S", self._q("person", stream=sid), answers=script.names, wrong=others, mc=False, stream=sid)

    def which_stream(self) -> None:
        if len(self.scripts) < 2:
            return
        for script in self.scripts:
            sid = script.stream_id
            wrong = [s for s in self.stream_ids if s != sid]
            fact = _pick(self.rng, script.facts)
            self.add("which_stream", self._q("fact_stream", topic=fact.topic), right=sid, pool=self.stream_ids,
                     answers=[sid], wrong=wrong, evidence=[Interval(sid, fact.t_start, fact.t_end)])
            shown = [s for s in self.scripts if script.photos and script.photos[0] in s.photos]
            if script.photos and len(shown) == 1:
                p = script.photos[0]
                self.add("which_stream", self._q("photo_stream", photo=p.label), right=sid, pool=self.stream_ids, mc=True)
            sign = script.signs[0]["text"]
            self.add("which_stream", self._q("sign_stream", sign=sign), right=sid, pool=self.stream_ids, mc=True)
        by_kind: dict[str, set[str]] = {}
        for s in self.scripts:
            for k, _, _ in s.sounds:
                by_kind.setdefault(k, set()).add(s.stream_id)
        for kind, sids in sorted(by_kind.items()):
            if len(sids) == 1:
                sid = next(iter(sids))
                self.add("which_stream", self._q("sound_stream", sound=SOUND_ANSWERS[kind][0]), right=sid,
                         pool=self.stream_ids, mc=True)
        for kind in sorted(by_kind):
            targets = [Interval(s.stream_id, a, b) for s in self.scripts for k, a, b in s.sounds if k == kind]
            query = {"music": "music playing", "engine": "an engine running", "applause": "people applauding"}[kind]
            self.moment(query, targets)

    def unanswerable(self, script: StreamScript) -> None:
        """Questions in the set's own wording about people and things never recorded."""
        rng = self.rng
        name = self.unused_names.pop() if self.unused_names else "Quentin"
        other = _pick(rng, self.unused_themes) if self.unused_themes else script.theme
        kind = _pick(rng, ["meet_time", "left_place", "who", "price", "colour"])
        slots = {"name": name, "role": _pick(rng, other.roles), "object": _pick(rng, other.objects),
                 "thing": other.items[0][0], "item": other.items[0][1], "event": _pick(rng, other.events),
                 "place": other.places[0]}
        q = _pick(rng, _pick(rng, TEMPLATES[kind][self.split]).questions).format(**slots)
        self.add("unanswerable", q[0].upper() + q[1:], answerable=False)
        # a near miss: someone who is in the recordings, with something that is not
        known = _pick(rng, script.names) if script.names else name
        q = _pick(rng, TEMPLATES["left_place"][self.split][0].questions).format(name=known, object=_pick(rng, other.objects))
        self.add("unanswerable", q, answerable=False)

    def unanswerable_global(self) -> None:
        spoken = " ".join(b.said for s in self.scripts for b in s.beats).lower()
        generic = [("Which platform does the train to Oxford leave from?", "oxford"),
                   ("What did the weather forecast say about snow?", "snow"),
                   ("How much did the concert tickets in Vienna cost?", "vienna"),
                   ("What is the name of the dog in the garden?", "dog")]
        for q, word in generic:
            if word not in spoken and not any(word in p.label for s in self.scripts for p in s.photos):
                self.add("unanswerable", q, answerable=False)


# -- the whole set -------------------------------------------------------------------------------
def build_qa_set(out_dir: str | Path, split: str = "heldout", seed: int = 0, streams: int = 3,
                 minutes: float = 2.5, on_note: Callable[[str], None] | None = None) -> QASet:
    """Script, render and label ``streams`` recordings of ≈ ``minutes`` each under ``out_dir``."""
    if split not in THEMES:
        raise ValueError(f"split must be dev or heldout, not {split!r}")
    if not 1 <= streams <= len(THEMES[split]):
        raise ValueError(f"streams must be 1..{len(THEMES[split])}")
    if minutes <= 0:
        raise ValueError("minutes must be positive")
    out_dir = Path(out_dir)
    base = seed + SPLIT_SEED_OFFSET[split]
    rng = np.random.default_rng(base)
    themes = list(THEMES[split])
    rng.shuffle(themes)
    chosen, unused_themes = themes[:streams], themes[streams:]
    names = list(NAMES[split])
    rng.shuffle(names)
    per_stream = 3
    photos = list(PHOTOS[split])
    rng.shuffle(photos)
    # every stream shows its own picture(s); a picture is reused only when there are more streams
    photo_sets = [[photos[i % len(photos)]] for i in range(streams)]
    for extra in photos[streams:]:
        if rng.random() < 0.5:
            photo_sets[int(rng.integers(streams))].append(extra)
    sound_kinds = ["music", "engine", "applause"]
    used: dict[str, set[str]] = {}
    scripts: list[StreamScript] = []
    noise_choices = list(NOISE[split])
    for i, theme in enumerate(chosen):
        stream_names = names[i * per_stream : (i + 1) * per_stream]
        stream_photos = photo_sets[i]
        sounds = [sound_kinds[i % 3]] + (["music"] if i % 3 != 0 and rng.random() < 0.4 else [])
        script = script_stream(theme, split, rng, minutes, stream_names, stream_photos, sounds,
                               dark=bool(rng.random() < 0.7), noise=noise_choices[i % len(noise_choices)], used=used)
        if any(b.visual == "dark" and not b.sound and b.fact is None for b in script.beats):
            for b in script.beats:  # a dark beat with nothing in it asks nothing: give it a sound
                if b.visual == "dark" and not b.sound and b.fact is None:
                    b.sound = _pick(rng, sound_kinds)
        scripts.append(script)
    for i, script in enumerate(scripts):
        script.path = f"{script.stream_id}.mp4"
        if on_note is not None:
            on_note(f"rendering {split}/{script.path} ({script.duration_s / 60:.1f} min)")
        render_stream(script, out_dir / script.path, split, base * 10 + i)
    unused_names = [n for n in names[streams * per_stream :]]
    questions = _Questions(scripts, split, rng, unused_names, unused_themes or [t for t in THEMES["dev" if split == "heldout" else "heldout"]])
    questions.build()
    qa = QASet(
        recordings=[Recording(s.path, s.stream_id, round(s.duration_s, 2)) for s in scripts],
        items=questions.items, moments=questions.moments, split=split,
        name=f"generated {split} (seed {seed}, {streams} streams × {minutes:g} min)", root=out_dir,
    )
    qa.save(out_dir / "qa.json")
    (out_dir / "script.json").write_text(json.dumps([_script_doc(s) for s in scripts], indent=1) + "\n", encoding="utf-8")
    return qa


def _script_doc(s: StreamScript) -> dict[str, Any]:
    """What was really in each recording (for people reading the results)."""
    return {
        "stream_id": s.stream_id, "path": s.path, "duration_s": round(s.duration_s, 2), "noise": list(s.noise),
        "sounds": s.sounds,
        "beats": [{"t_start": b.t_start, "duration_s": b.duration_s, "visual": b.visual, "sign": b.sign,
                   "photo": b.photo.label if b.photo else "", "said": b.said, "voice": b.voice, "wpm": b.wpm,
                   "speech_t": list(b.speech_t) if b.speech_t else None, "sound": b.sound} for b in s.beats],
    }


def build_qa_sets(root: str | Path, seed: int = 0, streams: int = 3, minutes: float = 2.5,
                  splits: Sequence[str] = ("dev", "heldout"), on_note: Callable[[str], None] | None = None) -> dict[str, Path]:
    """Build each split under ``root/<split>/``; returns the qa.json path of each."""
    root = Path(root)
    out: dict[str, Path] = {}
    for split in splits:
        build_qa_set(root / split, split, seed, streams, minutes, on_note)
        out[split] = root / split / "qa.json"
    return out
