"""Generate a labelled fuzzy-recall set (:mod:`episodic.recall_set`) with known truth.

Each recording tells one theme of :mod:`episodic.recall_content` in 5–8 scenes of 7–10 s: an
opening that says (and a title slide that shows) the topic and tone, theme moments (a spoken
sentence, sometimes with a sign or a photo), one stretch of music, engine or applause without
speech, and on longer recordings a closing line. Twins share a key moment and are laid out so
that everything else differs: one twin has it early, the other late, their neighbours, topics,
tones and sounds are their own. Because we wrote the script, each query's facets can be checked
against every stream (:func:`holds`), and the generator refuses a query whose target violates
one of its facets or whose distractor violates none.

:func:`plan_recall_set` lays out scripts and queries without rendering (speech lengths come
from espeak-ng, or from an estimate passed in by tests); :func:`build_recall_set` renders the
recordings through the QA generator's renderer (:func:`episodic.qa_render.render_stream`) and
writes ``recall.json`` and ``script.json`` (what really is where, for people reading results).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from episodic.qa_content import RATE_HZ, VOICES, WPM, Theme
from episodic.qa_script import Beat, StreamScript, _pick, _speech
from episodic.qa_set import Recording
from episodic.recall_content import (
    DESCRIBE,
    NOISE,
    PLACE_WORDS,
    SOUND_WORDS,
    SPLIT_SEED,
    THEMES,
    Part,
    RecallTheme,
    Twins,
)
from episodic.recall_set import TASKS, RecallQuery, RecallSet, Span

SpeechSeconds = Callable[[str, str, int], float]
SPEECH_OFFSET_S = 1.0  # speech starts this far into its scene


def espeak_seconds(text: str, voice: str, wpm: int) -> float:
    """How long espeak-ng takes to say ``text`` (the audio is cached for rendering)."""
    return len(_speech(text, voice, wpm)) / RATE_HZ


def estimated_seconds(text: str, voice: str, wpm: int) -> float:
    """A rough speech length without synthesising (for tests of the script logic)."""
    return round(len(text.split()) * 60.0 / wpm * 1.1 + 0.3, 2)


# -- the script --------------------------------------------------------------------------------
@dataclass
class PlannedScene:
    part_id: str  # "<theme>/<n>", "<theme>/intro", "<theme>/outro", "<theme>/sound", "shared/<a>+<b>"
    part: Part | None  # None for the sound stretch
    beat: Beat


@dataclass
class StreamPlan:
    stream_id: str
    theme: RecallTheme
    scenes: list[PlannedScene]
    noise: tuple[str, float]
    twin: str | None = None  # the stream that shares a key moment with this one
    shared_id: str | None = None

    @property
    def duration_s(self) -> float:
        return round(sum(s.beat.duration_s for s in self.scenes), 2)

    def index(self, part_id: str | None) -> int | None:
        return next((i for i, s in enumerate(self.scenes) if s.part_id == part_id), None)

    def span(self, i: int) -> Span:
        b = self.scenes[i].beat
        return Span(round(b.t_start, 2), round(b.t_start + b.duration_s, 2))

    def place(self, i: int) -> str:
        """start | middle | end: where scene ``i``'s middle falls in the recording."""
        b = self.scenes[i].beat
        f = (b.t_start + b.duration_s / 2) / max(self.duration_s, 1e-6)
        return "start" if f < 0.36 else "end" if f > 0.64 else "middle"

    def sound_place(self) -> str:
        i = self.index(f"{self.theme.key}/sound")
        return "" if i is None else self.place(i)

    def said(self) -> str:
        return " ".join(s.beat.said for s in self.scenes).lower()


def _layout(theme: RecallTheme, shared: tuple[str, Part] | None, early: bool, n: int,
            rng: np.random.Generator) -> list[tuple[str, Part | None]]:
    """Which parts, in which order: the remembered phrase's part is always in."""
    outro = n >= 7
    n_unique = min(len(theme.parts), n - 2 - (1 if shared else 0) - (1 if outro else 0))
    clue = theme.said_clue[0]
    others = [i for i in range(len(theme.parts)) if i != clue]
    rng.shuffle(others)
    chosen = sorted([clue] + others[: n_unique - 1])
    body: list[tuple[str, Part | None]] = [(f"{theme.key}/{i}", theme.parts[i]) for i in chosen]
    if shared:
        body = [shared, *body] if early else [*body, shared]
    frame = theme.frame_key
    seq = [(f"{frame}/intro", theme.intro), *body] + ([(f"{frame}/outro", theme.outro)] if outro else [])
    sound = (f"{theme.key}/sound", None)
    at = {"start": 0, "end": len(seq), "middle": len(seq) // 2 + 1}[theme.sound_at]
    seq.insert(at, sound)
    return seq


def _beats(plan: StreamPlan, split: str, rng: np.random.Generator, speech_s: SpeechSeconds) -> None:
    """Voices, speeds, durations (7–10 s unless a sentence needs longer) and start times."""
    voices = list(VOICES[split])
    rng.shuffle(voices)
    narrator, second = voices[0], voices[1]
    lo, hi = WPM[split]
    wpm = int(rng.integers(lo, hi + 1))
    t = 0.0
    for scene in plan.scenes:
        b = scene.beat
        if b.said:
            b.voice = second if rng.random() < 0.25 else narrator
            b.wpm = int(np.clip(wpm + rng.integers(-8, 9), lo, hi))
            s = speech_s(b.said, b.voice, b.wpm)
            b.duration_s = round(min(max(7.0, s + SPEECH_OFFSET_S + float(rng.uniform(1.5, 2.5))),
                                     max(10.0, s + SPEECH_OFFSET_S + 1.0)), 2)
            b.speech_t = (round(t + SPEECH_OFFSET_S, 2), round(t + SPEECH_OFFSET_S + s, 2))
        else:
            b.duration_s = round(float(rng.uniform(7.0, 9.0)), 2)
        b.t_start = round(t, 2)
        t += b.duration_s


def as_series(tw: Twins) -> Twins:
    """The twins as two episodes of one show: the second opens and closes with the first's
    lines and title slide and fits the same impressions, so a global impression no longer
    tells them apart; only what came before or after the shared moment, and what was heard,
    do. (Their middles, sounds and remembered phrases stay their own.)"""
    b = replace(tw.b, impressions=tw.a.impressions, intro=tw.a.intro, outro=tw.a.outro, series=tw.a.key)
    return Twins(tw.a, b, tw.shared)


def _streams(split: str, count: int, seconds: float, rng: np.random.Generator,
             speech_s: SpeechSeconds, series: bool = False) -> list[StreamPlan]:
    groups = [as_series(g) if series and isinstance(g, Twins) else g for g in THEMES[split]]
    twins = [g for g in groups if isinstance(g, Twins)]
    singles = [g for g in groups if isinstance(g, RecallTheme)]
    rng.shuffle(twins)
    rng.shuffle(singles)
    members: list[tuple[RecallTheme, Twins | None, bool]] = []
    for tw in twins:
        a_early = bool(rng.random() < 0.5)
        members += [(tw.a, tw, a_early), (tw.b, tw, not a_early)]
    members += [(s, None, True) for s in singles]
    members = members[:count]
    ids = {m[0].key: f"{split}-{i + 1:02d}" for i, m in enumerate(members)}
    n_scenes = int(np.clip(round(seconds / 7.8), 5, 8))  # real scenes average ≈ 7.8 s
    plans: list[StreamPlan] = []
    for i, (theme, tw, early) in enumerate(members):
        twin_theme = None if tw is None else (tw.b if theme is tw.a else tw.a)
        twin = ids.get(twin_theme.key) if twin_theme is not None else None
        shared = (f"shared/{tw.a.key}+{tw.b.key}", tw.shared) if tw is not None and twin else None
        scenes = [PlannedScene(pid, part, _beat(part, theme)) for pid, part in _layout(theme, shared, early, n_scenes, rng)]
        plan = StreamPlan(ids[theme.key], theme, scenes, NOISE[split][i % len(NOISE[split])], twin,
                          shared[0] if shared else None)
        _beats(plan, split, rng, speech_s)
        plans.append(plan)
    return plans


def _beat(part: Part | None, theme: RecallTheme) -> Beat:
    if part is None:
        return Beat(sound=theme.sound)
    return Beat(visual=part.visual, sign=part.text, photo=part.photo, said=part.said)


# -- the queries -------------------------------------------------------------------------------
@dataclass
class QueryPlan:
    """A query and the structured truth behind its words (what :func:`holds` checks)."""

    query: RecallQuery
    impression: str | None = None
    key: str | None = None  # part id of the key moment
    temporal: tuple[str, str] | None = None  # ("after" | "before", part id) or ("start" | "end", "")
    audio: tuple[str, str, str] | None = None  # ("sound", kind, place or "") or ("said", phrase, "")


def _temporal_true(stream: StreamPlan, key: str | None, rel: str, part_id: str) -> bool:
    """"then …" / "before …" name a part on that side of the key moment; "start" / "end" its place."""
    k, j = stream.index(key), stream.index(part_id)
    if k is None:
        return False
    if rel in ("start", "end"):
        return stream.place(k) == rel
    return j is not None and (j > k if rel == "after" else j < k)


def holds(stream: StreamPlan, qp: QueryPlan) -> dict[str, bool]:
    """Which of the query's facets are true of ``stream`` (temporal: around its key moment)."""
    out: dict[str, bool] = {}
    if qp.impression is not None:
        out["global"] = qp.impression in stream.theme.impressions
    if qp.key is not None:
        out["key_moment"] = stream.index(qp.key) is not None
    if qp.temporal is not None:
        out["temporal"] = _temporal_true(stream, qp.key, *qp.temporal)
    if qp.audio is not None:
        kind, what, where = qp.audio
        if kind == "said":
            out["audio"] = what.lower() in stream.said()
        else:
            out["audio"] = stream.theme.sound == what and where in ("", stream.sound_place())
    return out


def _sentence_facet(sentence: str) -> str:
    """The facet as it reads inside the description, without the sentence's capital and stop."""
    keep = sentence.startswith(("I ", "I'"))
    return (sentence if keep else sentence[0].lower() + sentence[1:]).rstrip(".")


class _Queries:
    def __init__(self, split: str, streams: list[StreamPlan], rng: np.random.Generator, series: bool = False) -> None:
        self.split, self.streams, self.rng, self.series = split, streams, rng, series
        self.words = DESCRIBE[split]
        self.by_id = {s.stream_id: s for s in streams}
        self.plans: list[QueryPlan] = []

    def _say(self, kind: str, **slots: str) -> str:
        return str(_pick(self.rng, self.words[kind])).format(**slots)

    def _temporal(self, s: StreamPlan, k: int, twin: StreamPlan | None) -> tuple[tuple[str, str], str]:
        options: list[tuple[str, str, str]] = []  # (relation, part id, gist)
        spoken = [(i, sc.part) for i, sc in enumerate(s.scenes) if sc.part is not None and sc.beat.said and i != k]
        after, before = [p for p in spoken if p[0] > k], [p for p in spoken if p[0] < k]
        for rel, near in (("after", after[:1]), ("before", before[-1:])):
            options += [(rel, s.scenes[i].part_id, g) for i, part in near for g in part.gists]
        if s.place(k) in ("start", "end"):
            options.append((s.place(k), "", ""))
        if twin is not None:  # a clue the twin satisfies too tells nothing apart
            key = s.scenes[k].part_id
            options = [o for o in options if not _temporal_true(twin, key, o[0], o[1])]
        rel, pid, gist = options[int(self.rng.integers(len(options)))]
        return (rel, pid), self._say(rel, x=gist)

    def _audio(self, s: StreamPlan, said: bool) -> tuple[tuple[str, str, str], str]:
        if said:
            phrase = s.theme.said_clue[1]
            return ("said", phrase, ""), self._say("said", q=phrase)
        place = s.sound_place() if self.rng.random() < 0.6 else ""
        words = _pick(self.rng, SOUND_WORDS[self.split][s.theme.sound])
        where = PLACE_WORDS[self.split][place] if place else ""
        return ("sound", s.theme.sound, place), self._say("sound", s=words, p=where)

    def add(self, s: StreamPlan, task: str) -> None:
        rng = self.rng
        # the twin is the distractor when a facet besides the key moment can tell them apart:
        # any of G, T, A for ordinary twins; for episodes of one show (same impressions) T or A
        separable = ("T" in task or "A" in task) if self.series else task != "K"
        twin = self.by_id.get(s.twin) if (s.twin and "K" in task and separable) else None
        qp = QueryPlan(RecallQuery(f"{self.split[0]}{len(self.plans) + 1:03d}", task, "", {}, s.stream_id,
                                   split=self.split))
        said_clue = "A" in task and rng.random() < 0.4
        facets: dict[str, str] = {}
        sentences: list[str] = []
        a_sentence = ""
        if "A" in task:
            qp.audio, a_sentence = self._audio(s, said_clue)
            facets["audio"] = _sentence_facet(a_sentence)
        if "K" in task:
            if twin is not None:
                k = s.index(s.shared_id)
            else:
                clue_id = f"{s.theme.key}/{s.theme.said_clue[0]}"
                own = [i for i, sc in enumerate(s.scenes) if sc.part is not None and sc.part.keys
                       and sc.part_id != s.shared_id and not (said_clue and sc.part_id == clue_id)]
                k = own[int(rng.integers(len(own)))]
            assert k is not None
            part = s.scenes[k].part
            assert part is not None
            qp.key = s.scenes[k].part_id
            qp.query.moment = s.span(k)
            facets["key_moment"] = str(_pick(rng, part.keys))
        if "G" in task:
            qp.impression = str(_pick(rng, s.theme.impressions))
            facets["global"] = qp.impression
        if "G" in task and "K" in task and rng.random() < 0.4:
            sentences.append(self._say("global_key", g=facets["global"], k=facets["key_moment"]))
        else:
            if "G" in task:
                sentences.append(self._say("global", g=facets["global"]))
            if "K" in task:
                sentences.append(self._say("key", k=facets["key_moment"]))
        if "T" in task:
            qp.temporal, t_sentence = self._temporal(s, k, twin)
            facets["temporal"] = _sentence_facet(t_sentence)
            sentences.append(t_sentence)
        if a_sentence:
            at = len(sentences) if rng.random() < 0.7 else int("G" in task and len(sentences) > 1)
            sentences.insert(at, a_sentence)
        qp.query.description = " ".join(sentences)
        qp.query.facets = {f: facets[f] for f in ("global", "key_moment", "temporal", "audio") if f in facets}
        if twin is not None:
            qp.query.distractor = twin.stream_id
        self._check(qp)
        self.plans.append(qp)

    def _check(self, qp: QueryPlan) -> None:
        """The target must satisfy every facet; a distractor shares the key moment and fails another."""
        truth = holds(self.by_id[qp.query.stream_id], qp)
        if not all(truth.values()):
            raise RuntimeError(f"generated query {qp.query.id} is false of its own stream: {truth}")
        if qp.query.distractor:
            other = holds(self.by_id[qp.query.distractor], qp)
            if not other.get("key_moment") or all(other.values()):
                raise RuntimeError(f"query {qp.query.id}: distractor {qp.query.distractor} is no near miss: {other}")


@dataclass
class RecallPlan:
    split: str
    seed: int
    streams: list[StreamPlan]
    queries: list[QueryPlan] = field(default_factory=list)

    def to_set(self, root: Path, name: str = "") -> RecallSet:
        recs = [Recording(f"{s.stream_id}.mp4", s.stream_id, s.duration_s) for s in self.streams]
        return RecallSet(recs, [q.query for q in self.queries], self.split, name, root)


def plan_recall_set(split: str = "heldout", seed: int = 0, streams: int = 8, seconds: float = 60.0,
                    speech_s: SpeechSeconds | None = None, series: bool = False) -> RecallPlan:
    """Scripts and queries of one split, nothing rendered: every stream asked every task type.
    ``series``: twins are episodes of one show (:func:`as_series`), the harder set."""
    if split not in THEMES:
        raise ValueError(f"split must be dev or heldout, not {split!r}")
    available = sum(2 if isinstance(g, Twins) else 1 for g in THEMES[split])
    if not 2 <= streams <= available:
        raise ValueError(f"streams must be 2..{available}")
    if seconds < 30:
        raise ValueError("seconds must be at least 30 (five scenes of 7–10 s)")
    rng = np.random.default_rng(seed + SPLIT_SEED[split])
    plans = _streams(split, streams, seconds, rng, speech_s or espeak_seconds, series)
    queries = _Queries(split, plans, rng, series)
    for s in plans:
        for task in TASKS:
            queries.add(s, task)
    return RecallPlan(split, seed, plans, queries.plans)


def _script_doc(s: StreamPlan) -> dict[str, Any]:
    return {"stream_id": s.stream_id, "theme": s.theme.key, "series": s.theme.series, "twin": s.twin,
            "duration_s": s.duration_s,
            "noise": list(s.noise),
            "scenes": [{"part": sc.part_id, "t_start": sc.beat.t_start, "duration_s": sc.beat.duration_s,
                        "visual": sc.beat.visual, "text": sc.beat.sign,
                        "photo": sc.beat.photo.label if sc.beat.photo else "", "said": sc.beat.said,
                        "voice": sc.beat.voice, "wpm": sc.beat.wpm, "sound": sc.beat.sound,
                        "speech_t": list(sc.beat.speech_t) if sc.beat.speech_t else None}
                       for sc in s.scenes]}


def build_recall_set(out_dir: str | Path, split: str = "heldout", seed: int = 0, streams: int = 8,
                     seconds: float = 60.0, on_note: Callable[[str], None] | None = None,
                     series: bool = False) -> Path:
    """Plan, render and label one split under ``out_dir``; returns the ``recall.json`` path."""
    out_dir = Path(out_dir)
    plan = plan_recall_set(split, seed, streams, seconds, series=series)
    for i, s in enumerate(plan.streams):
        if on_note is not None:
            on_note(f"rendering {split}/{s.stream_id}.mp4 ({s.duration_s:.0f} s, {s.theme.key})")
        theme = Theme(s.theme.key, s.stream_id, s.theme.impressions[0], "", (), (), (), (), (), (), "")
        script = StreamScript(theme, [sc.beat for sc in s.scenes], [], [], [], [], noise=s.noise,
                              path=f"{s.stream_id}.mp4")
        from episodic.qa_render import render_stream  # PyAV and Pillow only when rendering

        render_stream(script, out_dir / script.path, split, (seed + SPLIT_SEED[split]) * 10 + i)
    kind = "episodes of one show as twins, " if series else ""
    name = f"generated {split} recall ({kind}seed {seed}, {streams} streams × {seconds:g} s)"
    path = plan.to_set(out_dir, name).save(out_dir / "recall.json")
    (out_dir / "script.json").write_text(json.dumps([_script_doc(s) for s in plan.streams], indent=1) + "\n",
                                         encoding="utf-8")
    return path
