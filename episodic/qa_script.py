"""The script of a generated stream: which facts are spoken when, what is shown, what is heard
besides speech, laid out in time (see :mod:`episodic.qa_generator`)."""

from __future__ import annotations

import string
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from episodic import samples
from episodic.qa_content import (
    _ONES,
    ANSWER_SLOT,
    COLOURS,
    DAYS,
    FILLER,
    KEY_SLOT,
    RATE_HZ,
    RECURRING,
    TEMPLATES,
    TOPICS,
    VOICES,
    WPM,
    Photo,
    Template,
    Theme,
    number_words,
    random_time,
    time_forms,
)


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


def _make_fact(kind: str, theme: Theme, name: str, sentences: str, rng: np.random.Generator,
               used: dict[str, set[str]]) -> Fact | None:
    """One spoken fact of ``kind`` with fresh slot values (none reused within the set)."""

    def fresh(pool_key: str, choices: Sequence[str]) -> str | None:
        free = [c for c in choices if c not in used.setdefault(pool_key, set())]
        if not free:
            return None
        value = _pick(rng, free)
        used[pool_key].add(value)
        return value

    tmpl: Template = _pick(rng, TEMPLATES[kind][sentences])
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
                  used: dict[str, set[str]], sentences: str | None = None,
                  voices: Sequence[str] = ()) -> StreamScript:
    """Lay out one stream: facts, signs, photos, sounds, a dark stretch, fillers, ≈ ``minutes`` long.

    ``sentences`` picks the facts' sentence templates (``TEMPLATES[kind]`` key; the split's own
    by default), ``voices`` who says them (the split's by default); everything else is the split's."""
    kinds = list(TEMPLATES)
    rng.shuffle(kinds)
    n_facts = max(3, round(minutes * 2.3))
    facts: list[Fact] = []
    for i in range(n_facts * 3):
        if len(facts) >= n_facts:
            break
        fact = _make_fact(kinds[i % len(kinds)], theme, names[len(facts) % len(names)], sentences or split, rng, used)
        if fact is not None:
            fact.stream_id = theme.stream_id
            facts.append(fact)
    voices = tuple(voices) or VOICES[split]
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


