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
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from episodic.qa_content import (
    COLOURS,
    DAYS,
    NAMES,
    NAMES_OTHER,
    NOISE,
    PHOTOS,
    PICTURE_POOLS,
    QUESTIONS,
    SOUND_ANSWERS,
    SOUND_DISTRACTORS,
    SPLIT_SEED_OFFSET,
    TEMPLATES,
    THEMES,
    THEMES_OTHER,
    VOICES_OTHER,
    Theme,
    random_time,
)
from episodic.qa_render import render_stream
from episodic.qa_script import Fact, StreamScript, _pick, script_stream
from episodic.qa_set import Interval, MomentQuery, QAItem, QAScope, QASet, Recording

# -- questions ---------------------------------------------------------------------------------------
SOUND_QUERIES = {"music": "music playing", "engine": "an engine running", "applause": "people applauding"}
# the moment queries' own wordings, by category (a fact's topic, any other wording, is "speech")
_MOMENT_WORDINGS = (("a picture of ", "picture"), ("the sign saying ", "sign"), ("someone mentions the ", "mention"),
                    ("the screen goes dark", "dark"), *((q, "sound") for q in SOUND_QUERIES.values()))


def moment_category(query: str) -> str:
    """The category this generator gives a moment query it wrote: for runs of sets written
    before moment queries carried one (``benchmarks/qa_pool.py`` reads them so). Only for
    the generator's own queries: any wording it does not use for another category is a
    fact's topic, "speech"."""
    return next((c for start, c in _MOMENT_WORDINGS if query.startswith(start)), "speech")


def _span(sid: str, t0: float, t1: float) -> Interval:
    return Interval(sid, round(t0, 2), round(t1, 2))


class _Questions:
    """Builds the items and moment queries of one split from the scripts."""

    def __init__(self, scripts: list[StreamScript], split: str, rng: np.random.Generator,
                 unused_names: list[str], unused_themes: list[Theme],
                 names: Sequence[str] = (), themes: Sequence[Theme] = (), other_pictures: str = "") -> None:
        self.scripts, self.split, self.rng = scripts, split, rng
        # the pictures this set shows, and every picture an option may name (both splits', and
        # the other pictures when those are shown)
        self.split_photos = PICTURE_POOLS[other_pictures] if other_pictures else PHOTOS[split]
        self.photos = [p for split_photos in PHOTOS.values() for p in split_photos] + (
            list(PICTURE_POOLS[other_pictures]) if other_pictures else [])
        self.unused_names, self.unused_themes = unused_names, unused_themes
        self.names = tuple(names) or NAMES[split]  # the set's people and places (wrong options)
        self.themes = tuple(themes) or THEMES[split]
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

    def moment(self, query: str, targets: list[Interval], category: str) -> None:
        self.moments.append(MomentQuery(f"{self.split[0]}m{len(self.moments) + 1:02d}", query, targets, self.split,
                                        category=category))

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
                extra.append(_pick(rng, self.names))
            elif fact.pool == "place":
                extra.append(_pick(rng, _pick(rng, self.themes).places))
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
            self.moment(f.topic, [_span(f.stream_id, max(0.0, f.t_start - 1.0), f.t_end + 1.0)], "speech")

    def visual(self, script: StreamScript) -> None:
        sid = script.stream_id
        all_labels = [p.label for p in self.photos]
        here = {p.label for p in script.photos}
        for photo in script.photos:
            beats = [b for b in script.beats if b.photo is photo]
            ev = [_span(sid, b.t_start, b.t_start + b.duration_s) for b in beats]
            self.add("V", self._q("photo_mc", stream=sid), right=photo.label,
                     pool=[label for label in all_labels if label not in here], mc=True, stream=sid, evidence=ev)
            self.moment(f"a picture of {photo.label}", ev, "picture")
            for b in beats:
                if b.fact is not None:  # shown while a fact was spoken: cross-modal both ways
                    self.add("V+A", self._q("photo_while", topic=b.fact.topic), right=photo.label,
                             pool=[label for label in all_labels if label != photo.label], mc=True, evidence=ev)
                    others = [f.topic for f in self.facts if f is not b.fact]
                    self.add("V+A", self._q("said_while_photo", photo=photo.label), right=b.fact.topic,
                             pool=others, mc=True, evidence=ev)
        if len(script.photos) == 1:
            p = script.photos[0]
            wrong = [a for q in self.split_photos if q is not p for a in q.answers[:1]]
            self.add("V", self._q("photo_free", stream=sid), answers=p.answers, wrong=wrong, mc=False, stream=sid)
        for b in script.beats:
            if b.visual != "dark":
                continue
            ev = [_span(sid, b.t_start, b.t_start + b.duration_s)]
            self.moment("the screen goes dark", ev, "dark")
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
            self.moment(f"the sign saying {s['text']}", ev, "sign")

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
        recurring = [b for b in script.beats if b.recurring]
        if not recurring:
            return
        thing = next(t for t in script.theme.recurring if t in recurring[0].said)
        # a fact can name the thing too ("Noor painted the hair dryer black"): that is a mention
        mentions = [b for b in script.beats if b.recurring or re.search(rf"\b{re.escape(thing)}\b", b.said)]
        n = len(mentions)
        words = {1: "once", 2: "twice", 3: "three times", 4: "four times"}
        right = words.get(n, f"{n} times")
        ev = [Interval(sid, *b.speech_t) for b in mentions if b.speech_t]
        self.add("count", self._q("count", thing=thing, stream=sid), right=right,
                 pool=[w for k, w in words.items() if k != n], answers=[str(n), right],
                 wrong=[words[k] for k in words if k != n], stream=sid, evidence=ev)
        self.moment(f"someone mentions the {thing}", ev, "mention")

    def summary(self, script: StreamScript) -> None:
        sid = script.stream_id
        # wrong settings from both splits (this set's own themes in place of its split's)
        topics = [t.topic for split, themes in THEMES.items() for t in (self.themes if split == self.split else themes)]
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
            self.moment(SOUND_QUERIES[kind], targets, "sound")

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
                 minutes: float = 2.5, on_note: Callable[[str], None] | None = None,
                 harsher_db: float = 0.0, other_sentences: bool = False, other_people: bool = False,
                 other_pictures: bool | str = False, other_voices: bool = False) -> QASet:
    """Script, render and label ``streams`` recordings of ≈ ``minutes`` each under ``out_dir``.

    ``harsher_db`` lowers the split's own signal-to-noise ratios (background noise and music
    bed) by that many decibels and changes nothing else: the same voices, sentences, pictures
    and questions in worse sound. Dev's set made harsher is somewhere to tune hearing under
    held-out-like conditions without reading the held-out set (whose noise kinds stay its own).

    ``other_sentences`` (dev only) says dev's facts in a third set of sentence shapes and asks
    them with those shapes' own questions (``TEMPLATES[kind]["dev-other"]``): the dev voices,
    names, pictures and sounds, but phrasing the service was not tuned on, so that a dev
    figure can show whether answering copes with sentences it has not seen.

    ``other_people`` (dev only) puts dev's sentences in the mouths of other people in other
    places (``NAMES_OTHER``, ``THEMES_OTHER``: in neither split): names the recogniser may
    never have met, settings the answering was never tuned on.

    ``other_pictures`` (dev only) shows pictures in neither split: ``True`` or ``"other"``
    (``PHOTOS_OTHER``), most of them things the offline describer has no name for, so that
    several options of one question can be such pictures at once; ``"everyday"``
    (``PHOTOS_EVERYDAY``), things it names roughly, wrongly or not at all.

    ``other_voices`` (dev only) has everything said by another synthesiser's voices
    (``VOICES_OTHER``, flite's), at dev's speeds and over dev's noise: every split's speech is
    espeak-ng's, and a recording the service meets is not.
    """
    if not 0 <= harsher_db <= 30:
        raise ValueError("harsher_db must be 0..30 dB")
    if split not in THEMES:
        raise ValueError(f"split must be dev or heldout, not {split!r}")
    if not 1 <= streams <= len(THEMES[split]):
        raise ValueError(f"streams must be 1..{len(THEMES[split])}")
    if minutes <= 0:
        raise ValueError("minutes must be positive")
    if other_sentences and split != "dev":
        raise ValueError("other_sentences is for the dev split only (held-out keeps its own sentences)")
    if other_people and split != "dev":
        raise ValueError("other_people is for the dev split only (held-out keeps its own people)")
    pool = "other" if other_pictures is True else (other_pictures or "")
    if pool and pool not in PICTURE_POOLS:
        raise ValueError(f"other_pictures must be one of {sorted(PICTURE_POOLS)}, not {other_pictures!r}")
    if pool and split != "dev":
        raise ValueError("other_pictures is for the dev split only (held-out keeps its own pictures)")
    if other_voices and split != "dev":
        raise ValueError("other_voices is for the dev split only (held-out keeps its own voices)")
    out_dir = Path(out_dir)
    base = seed + SPLIT_SEED_OFFSET[split]
    rng = np.random.default_rng(base)
    all_themes = THEMES_OTHER if other_people else THEMES[split]
    all_names = NAMES_OTHER if other_people else NAMES[split]
    themes = list(all_themes)
    rng.shuffle(themes)
    chosen, unused_themes = themes[:streams], themes[streams:]
    names = list(all_names)
    rng.shuffle(names)
    per_stream = 3
    photos = list(PICTURE_POOLS[pool] if pool else PHOTOS[split])
    rng.shuffle(photos)
    # every stream shows its own picture(s); a picture is reused only when there are more streams
    photo_sets = [[photos[i % len(photos)]] for i in range(streams)]
    for extra in photos[streams:]:
        if rng.random() < 0.5:
            photo_sets[int(rng.integers(streams))].append(extra)
    sound_kinds = ["music", "engine", "applause"]
    used: dict[str, set[str]] = {}
    scripts: list[StreamScript] = []
    noise_choices = [(colour, snr - harsher_db) for colour, snr in NOISE[split]]
    for i, theme in enumerate(chosen):
        stream_names = names[i * per_stream : (i + 1) * per_stream]
        stream_photos = photo_sets[i]
        sounds = [sound_kinds[i % 3]] + (["music"] if i % 3 != 0 and rng.random() < 0.4 else [])
        script = script_stream(theme, split, rng, minutes, stream_names, stream_photos, sounds,
                               dark=bool(rng.random() < 0.7), noise=noise_choices[i % len(noise_choices)], used=used,
                               sentences="dev-other" if other_sentences else None,
                               voices=VOICES_OTHER if other_voices else ())
        if any(b.visual == "dark" and not b.sound and b.fact is None for b in script.beats):
            for b in script.beats:  # a dark beat with nothing in it asks nothing: give it a sound
                if b.visual == "dark" and not b.sound and b.fact is None:
                    b.sound = _pick(rng, sound_kinds)
        scripts.append(script)
    for i, script in enumerate(scripts):
        script.path = f"{script.stream_id}.mp4"
        if on_note is not None:
            on_note(f"rendering {split}/{script.path} ({script.duration_s / 60:.1f} min)")
        render_stream(script, out_dir / script.path, split, base * 10 + i, harsher_db)
    unused_names = [n for n in names[streams * per_stream :]]
    questions = _Questions(scripts, split, rng, unused_names, unused_themes or [t for t in THEMES["dev" if split == "heldout" else "heldout"]],
                           all_names, all_themes, pool)
    questions.build()
    qa = QASet(
        recordings=[Recording(s.path, s.stream_id, round(s.duration_s, 2)) for s in scripts],
        items=questions.items, moments=questions.moments, split=split,
        name=f"generated {split} (seed {seed}, {streams} streams × {minutes:g} min"
        + (", other sentences" if other_sentences else "")
        + (", other people and places" if other_people else "")
        + (f", {pool} pictures" if pool else "")
        + (", other voices" if other_voices else "")
        + (f", {harsher_db:g} dB harsher)" if harsher_db else ")"), root=out_dir,
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
