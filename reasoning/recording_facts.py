"""Questions about the recordings themselves rather than what was said in them: how long a
recording is, how long (and when) the screen was dark or a sound went on, how many recordings
or signs there were and which signs, how many people were on screen at once.

These are answered from the memory's structure (stream ends, the quality gate's dark key
frames, the sound windows, the on-screen text, the people detectors' counts), never from a
number that happens to stand in the nearest text: before, "How long was the screen dark in
garden-cam?" was answered "35" from the sign "PLOT 35", "How many people were on screen?" "4"
from "PLATFORM 4"."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from episodic.reasoning.answer import Draft
from episodic.reasoning.time_answers import SOUND_KINDS, dark_spans, sound_spans
from episodic.retrieval.detailed import Unit
from episodic.retrieval.question_shape import DARK_WORDS

EXACT_CONFIDENCE = 0.9  # a stream's length, the number of streams: the store knows them
MEASURED_CONFIDENCE = 0.7  # dark stretches and sound windows, as the gates and rules found them
DETECTED_CONFIDENCE = 0.5  # signs read and people detected: readers and detectors miss some
_RECORDING = r"(?:recording|video|stream|clip|footage|camera)"
_LENGTH = re.compile(
    rf"\b(?:how\s+long\s+(?:is|was|does)\s+(?:the\s+|this\s+)?(?:[\w-]+\s+)?{_RECORDING}|"
    rf"(?:length|duration)\s+of\s+(?:the\s+|this\s+)?(?:[\w-]+\s+)?{_RECORDING})\b",
    re.I,
)
_HOW_LONG = re.compile(r"\b(?:how\s+long|for\s+how\s+many\s+(?:seconds|minutes)|how\s+many\s+(?:seconds|minutes))\b", re.I)
_DARK = re.compile(DARK_WORDS, re.I)
_HOW_MANY_RECORDINGS = re.compile(rf"\bhow\s+many\s+(?:different\s+)?{_RECORDING}s\b", re.I)
_HOW_MANY_SIGNS = re.compile(r"\bhow\s+many\s+(?:different\s+)?(?:signs|notices|captions|slides)\b", re.I)
_WHICH_SIGNS = re.compile(r"\b(?:which|what)\s+(?:different\s+)?(?:signs|notices|captions|slides)\b", re.I)
# "When was the screen dark?" asks for a time; "When the screen was dark, what was said?" places
# a moment (reasoning/time_answers.py answers it)
_WHEN = re.compile(r"^\s*(?:when|at\s+what\s+(?:times?|points?|moments?))\s+(?:was|were|did|does|is|are|has|had)\b"
                   r"[^,]*$", re.I)
# on screen, not named: "how many people were mentioned?" is about names (reasoning/stream_gist.py)
_HOW_MANY_PEOPLE = re.compile(r"\bhow\s+many\s+(?:people|persons|faces|men|women|children|kids)\b"
                              r"(?!\s+(?:is|are|was|were|got)\s+(?:mentioned|named|talked|discussed|spoken))", re.I)


def asks_about_the_recording(question: str) -> bool:
    """Whether ``question`` is one :func:`recording_fact` answers."""
    if _LENGTH.search(question) or _HOW_MANY_RECORDINGS.search(question):
        return True
    if _HOW_MANY_SIGNS.search(question) or _WHICH_SIGNS.search(question) or _HOW_MANY_PEOPLE.search(question):
        return True
    if _WHEN.search(question) and _DARK.search(question):
        return True  # "When was the screen dark?"
    return bool(_HOW_LONG.search(question)) and (bool(_DARK.search(question)) or _sound_kind(question) is not None)


def _sound_kind(question: str) -> str | None:
    return next((kind for kind, words in SOUND_KINDS.items() if words.search(question)), None)


def duration(seconds: float) -> str:
    """"2 min 34 s", "45 s", "1 h 2 min"."""
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 60} min {s % 60} s" if s >= 60 else f"{s} s"


def _spans(spans: Sequence[tuple[str, float, float]], limit: int = 3) -> str:
    shown = "; ".join(f"{sid}, {a:.1f}–{b:.1f} s" for sid, a, b in spans[:limit])
    return shown + (f"; and {len(spans) - limit} more" if len(spans) > limit else "")


def _unit(sid: str, a: float, b: float, modality: str, text: str, memory_id: str = "") -> Unit:
    return Unit(sid, memory_id or f"{sid}@{a:g}", a, b, modality, text)  # type: ignore[arg-type]


def recording_fact(question: str, streams: Sequence[str], memories: Sequence, ends: Mapping[str, float | None]
                   ) -> Draft | None:
    """The answer to a question about the recordings ``streams`` (their ``memories`` in the
    asked scope, ``ends`` their lengths), or None when it is not such a question."""
    if _HOW_MANY_RECORDINGS.search(question):
        return Draft(answer=f"{len(streams)} ({', '.join(streams)})" if streams else "none",
                     confidence=EXACT_CONFIDENCE, source="count", caps={"route": 14.0, "span": 1.0},
                     support=[_unit(sid, 0.0, float(ends.get(sid) or 0.0), "summary", f"recording {sid}") for sid in streams])
    if _LENGTH.search(question):
        known = [(sid, float(ends[sid])) for sid in streams if ends.get(sid)]
        if not known:
            return None
        answer = "; ".join(f"{duration(t)} ({sid})" for sid, t in known)
        return Draft(answer=answer, confidence=EXACT_CONFIDENCE, source="count", caps={"route": 14.0, "span": 1.0},
                     support=[_unit(sid, 0.0, t, "summary", f"recording {sid}, {duration(t)} long") for sid, t in known])
    if _HOW_MANY_PEOPLE.search(question):
        return _people(memories)
    if _HOW_MANY_SIGNS.search(question) or _WHICH_SIGNS.search(question):
        return _signs(memories)
    if _WHEN.search(question) and _DARK.search(question):
        return _when(dark_spans(memories), "the screen was dark", "no dark stretch was seen", "visual")
    if not _HOW_LONG.search(question):
        return None
    if _DARK.search(question):
        return _lasted(dark_spans(memories), "the screen was dark", "no dark stretch was seen", "visual")
    kind = _sound_kind(question)
    if kind is None:
        return None
    joined = sound_spans(memories, lambda o: o.kind == kind)  # sound windows that touch make one stretch
    return _lasted(joined, f"{kind} could be heard", f"no {kind} was heard", "sound")


def _lasted(spans: Sequence[tuple[str, float, float]], what: str, none: str, modality: str) -> Draft:
    if not spans:
        return Draft(answer=f"0 s: {none}", confidence=DETECTED_CONFIDENCE, source="count",
                     caps={"route": 14.0, "span": 1.0})
    total = sum(b - a for _, a, b in spans)
    n = len(spans)
    answer = f"about {duration(total)} in all ({what} {n} time{'s' if n != 1 else ''}: {_spans(spans)})"
    return Draft(answer=answer, confidence=MEASURED_CONFIDENCE, source="count", caps={"route": 14.0, "span": 1.0},
                 support=[_unit(sid, a, b, modality, what) for sid, a, b in spans[:5]])


def _when(spans: Sequence[tuple[str, float, float]], what: str, none: str, modality: str) -> Draft:
    """"When was the screen dark?": each stretch, in stream time."""
    if not spans:
        return Draft(answer=f"never: {none}", confidence=DETECTED_CONFIDENCE, source="count",
                     caps={"route": 14.0, "span": 1.0})
    return Draft(answer=f"{_spans(spans, limit=6)} ({what})", confidence=MEASURED_CONFIDENCE, source="count",
                 caps={"route": 14.0, "span": 1.0}, support=[_unit(sid, a, b, modality, what) for sid, a, b in spans[:5]])


def _people(memories: Sequence) -> Draft:
    best = (0, "", 0.0, "")
    for m in memories:
        for f in m.frames:
            k = max(int(getattr(f, "people", 0) or 0), int(getattr(f, "faces", 0) or 0))
            if k > best[0]:
                best = (k, m.stream_id, float(f.t), m.id)
    k, sid, t, mid = best
    if k == 0:
        return Draft(answer="none: the people detectors found no one on screen", confidence=DETECTED_CONFIDENCE,
                     source="count", caps={"route": 14.0, "span": 1.0})
    who = "one person" if k == 1 else f"{k} people"
    return Draft(answer=f"{k} at most at once ({who} seen at {sid}, {t:.1f} s)", confidence=DETECTED_CONFIDENCE,
                 source="count", caps={"route": 14.0, "span": 1.0},
                 support=[_unit(sid, t, t, "visual", f"{who} on screen", mid)])


def _signs(memories: Sequence) -> Draft:
    seen: dict[str, tuple[str, float, str]] = {}
    keys: set[str] = set()
    for m in sorted(memories, key=lambda m: (m.stream_id, m.t_start)):
        for f in m.frames:
            text = " ".join(str(f.ocr_text or "").split()).upper()
            key = re.sub(r"[^A-Z0-9]", "", text)  # "CLOSED ONTHURSDAYS" is the same sign read again
            if len(key) >= 2 and key not in keys:
                keys.add(key)
                seen[text] = (m.stream_id, float(f.t), m.id)
    if not seen:
        return Draft(answer="none: no writing was read on screen", confidence=DETECTED_CONFIDENCE, source="count",
                     caps={"route": 14.0, "span": 1.0})
    listed = ", ".join(f'"{t}"' for t in list(seen)[:6]) + (" …" if len(seen) > 6 else "")
    return Draft(answer=f"{len(seen)} ({listed})", confidence=DETECTED_CONFIDENCE, source="count",
                 caps={"route": 14.0, "span": 1.0},
                 support=[_unit(sid, t, t, "ocr", text, mid) for text, (sid, t, mid) in list(seen.items())[:5]])
