"""Stream overviews: what a whole recording (and each long stretch of it) is about.

Fuzzy recall (issue 16) verifies a half-remembered *global impression* ("a cooking vlog,
cheerful, someone's birthday") against something that describes a recording as a whole; the
events describe 5–10 s each. An overview is composed, like the composed event summaries
(:mod:`memory.summary_composer`), only from what the memory holds, so it can be wrong only
where the memory is:

    About: cake, kitchen, birthday, oven. Opens with: "welcome back to my kitchen, today we
    bake". People named: Maria. Seen: two people, a cat. On screen: "HAPPY BIRTHDAY".
    Heard: music at the start, applause at the end; speech throughout. Tone: cheerful (happy).

The parts are also kept apart in ``facets`` (topics, people, objects, text, sounds, tone,
opening) so a verifier can score each. Every long stream gets one overview per
``overview_stretch_s`` (a stretch) and one for all of it (the stream); a live stream's
current stretch and its stream overview are recomposed at every checkpoint, and ids depend
only on the stream and the stretch start, so each recomposition replaces the last.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Sequence

from episodic.core.interfaces import MemoryStore, TextEmbedder
from episodic.core.records import ShortTermMemory, StreamOverview, overview_id
from episodic.memory.summary_composer import _STOP, key_sentence

TOPIC_WORDS = 8
PEOPLE_NAMES = 6
OBJECTS = 6
TEXTS = 6
TEXT_MAX_CHARS = 60
OPENING_WORDS = 14
# a sound is worth naming when it lasts this long or this share of the span
SOUND_MIN_S = 3.0
SOUND_MIN_SHARE = 0.1
THROUGHOUT_SHARE = 0.6  # ... and is "throughout" above this share
SILENCE_MIN_SHARE = 0.3  # silence is named only when it is this much of the span
STREAM_MEMORIES_MAX = 20000  # memories read to compose one stream-wide overview

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)([A-Z][a-z]+)")
# Words whose presence in what was said gives the recording a tone. Small and general: the
# tone is only ever a quote of the memory's own words, never inferred from pictures.
TONE_WORDS: dict[str, frozenset[str]] = {
    "cheerful": frozenset(
        ["happy", "glad", "great", "wonderful", "fantastic", "amazing", "love", "lovely", "fun", "excited", "exciting", "celebrate", "celebrating", "celebration", "party", "birthday", "congratulations", "delicious", "beautiful", "enjoy", "enjoying", "awesome", "cheers", "hooray", "yay", "laugh", "laughing", "smile"]
    ),
    "tense": frozenset(
        ["urgent", "emergency", "warning", "danger", "dangerous", "alarm", "careful", "hurry", "quickly", "problem", "broken", "accident", "fire", "help", "worried", "afraid", "scared", "late", "delayed", "delay"]
    ),
    "sad": frozenset(["sad", "sorry", "unfortunately", "miss", "missed", "lost", "crying", "cry", "tired", "bad"]),
    "calm": frozenset(["calm", "quiet", "relax", "relaxing", "peaceful", "slowly", "gently", "gentle", "rest"]),
}
_SOUND_NAMES = {"music": "music", "engine": "an engine", "applause": "applause",
                "noise": "loud noise", "silence": "silence"}


def _position(t0: float, t1: float, span0: float, span1: float) -> str:
    """Where [t0, t1] lies in the span, in the words a person remembers it by."""
    length = max(span1 - span0, 1e-6)
    middle = ((t0 + t1) / 2 - span0) / length
    if middle < 1 / 3:
        return "at the start"
    if middle > 2 / 3:
        return "at the end"
    return "in the middle"


def _names(memories: Sequence[ShortTermMemory]) -> list[str]:
    """Capitalised words inside sentences (not their first word): the recogniser capitalises
    names and places; a word it also writes in lower case is an ordinary word, and one only
    ever seen opening a sentence ("Good morning") says nothing."""
    pieces = [p.text for m in memories for p in m.transcript if p.text.strip()]
    text = " ".join(pieces)
    lower = {w.lower() for w in _WORD.findall(text) if w.islower()}
    starts: Counter[str] = Counter()
    for piece in pieces:
        starts.update(_SENTENCE_START.findall(piece))
    counts: Counter[str] = Counter()
    for w in _WORD.findall(text):
        if (w[:1].isupper() and len(w) > 2 and "'" not in w and w.lower() not in _STOP
                and w.lower() not in lower):
            counts[w] += 1
    for w, n in starts.items():
        if counts.get(w, 0) <= n:
            counts.pop(w, None)
    return [w for w, _ in counts.most_common(PEOPLE_NAMES)]


# everyday words that fill talk about anything: never what a recording is about
_EVERYDAY = frozenset(
    ["good", "morning", "evening", "hello", "today", "tonight", "look", "looks", "really", "welcome", "everyone", "back", "going", "already", "another", "little", "just", "time", "thing", "things", "know", "want", "like", "make", "making", "also", "much", "very", "well", "right", "here", "there", "come", "first", "next", "still", "thank", "thanks", "please", "let", "lets", "okay", "yeah", "great", "nice", "went", "said", "says", "think", "maybe", "something", "around"]
)


def _topics(memories: Sequence[ShortTermMemory], names: set[str]) -> list[str]:
    """The words said or shown in most memories (each memory counts a word once)."""
    df: Counter[str] = Counter()
    first: dict[str, int] = {}
    for m in memories:
        words = {w.lower() for w in _WORD.findall(f"{m.transcript_text} {m.ocr_text}")}
        for w in words:
            if len(w) >= 4 and w not in _STOP and w not in _EVERYDAY and w.capitalize() not in names:
                df[w] += 1
                first.setdefault(w, len(first))
    ranked = sorted(df, key=lambda w: (-df[w], first[w]))
    return ranked[:TOPIC_WORDS]


def _objects(memories: Sequence[ShortTermMemory]) -> list[str]:
    weight: Counter[str] = Counter()
    people = 0
    for m in memories:
        for f in m.frames:
            if f.quality:
                continue
            people = max(people, f.people, f.faces)
            for label, prob in f.labels:
                weight[label] += float(prob)
    items = [label for label, _ in weight.most_common(OBJECTS)]
    if people:
        items.insert(0, "one person" if people == 1 else f"{people} people")
    return items


def _texts(memories: Sequence[ShortTermMemory]) -> list[str]:
    out: list[str] = []
    for m in memories:
        for f in m.frames:
            t = " ".join(f.ocr_text.split())[:TEXT_MAX_CHARS]
            if t and t.lower() not in {o.lower() for o in out}:
                out.append(t)
    return out[:TEXTS]


def _sounds(memories: Sequence[ShortTermMemory], t0: float, t1: float) -> list[str]:
    """Non-speech sounds with where they were heard, and how much of the span was speech."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for m in memories:
        for o in m.sounds:
            spans.setdefault(o.kind, []).append((o.t_start, o.t_end))
    length = max(t1 - t0, 1e-6)
    out: list[str] = []
    for kind, name in _SOUND_NAMES.items():
        pieces = spans.get(kind, [])
        total = sum(b - a for a, b in pieces)
        if not pieces or (total < SOUND_MIN_S and total / length < SOUND_MIN_SHARE):
            continue
        if kind == "silence" and total / length < SILENCE_MIN_SHARE:
            continue  # the pauses between sentences are not what a recording sounded like
        if total / length >= THROUGHOUT_SHARE:
            out.append(f"{name} throughout")
            continue
        where = sorted({_position(a, b, t0, t1) for a, b in pieces},
                       key=("at the start", "in the middle", "at the end").index)
        out.append(f"{name} {' and '.join(where)}")
    speech = sum(p.t_end - p.t_start for m in memories for p in m.transcript if p.text.strip())
    if speech / length >= THROUGHOUT_SHARE:
        out.append("speech throughout")
    elif speech / length >= SOUND_MIN_SHARE:
        out.append("some speech")
    elif memories:
        out.append("hardly any speech")
    return out


def _tone(memories: Sequence[ShortTermMemory]) -> list[str]:
    """Tones whose words were said, each with the words that gave it ("cheerful (happy)")."""
    said = Counter(w.lower() for m in memories for w in _WORD.findall(m.transcript_text))
    out: list[str] = []
    for tone, words in TONE_WORDS.items():
        found = [w for w in sorted(words, key=lambda w: -said[w]) if said[w]][:3]
        if found:
            out.append(f"{tone} ({', '.join(found)})")
    return out


def _opening(memories: Sequence[ShortTermMemory]) -> str:
    for m in memories:
        if m.transcript_text.strip():
            return key_sentence(m.transcript_text, OPENING_WORDS)
    return ""


def compose_facets(memories: Sequence[ShortTermMemory], t0: float, t1: float) -> dict[str, list[str]]:
    """The overview's parts from memories in time order (lists, most telling first)."""
    names = _names(memories)
    opening = _opening(memories)
    return {
        "topics": _topics(memories, set(names)),
        "people": names,
        "objects": _objects(memories),
        "text": _texts(memories),
        "sounds": _sounds(memories, t0, t1),
        "tone": _tone(memories),
        "opening": [opening] if opening else [],
    }


def overview_text(facets: dict[str, list[str]]) -> str:
    """The facets as one paragraph for people and the text embedder."""
    parts: list[str] = []
    if facets.get("topics"):
        parts.append("About: " + ", ".join(facets["topics"]) + ".")
    if facets.get("opening"):
        parts.append(f'Opens with: "{facets["opening"][0]}".')
    if facets.get("people"):
        parts.append("People named: " + ", ".join(facets["people"]) + ".")
    if facets.get("objects"):
        parts.append("Seen: " + ", ".join(facets["objects"]) + ".")
    if facets.get("text"):
        parts.append("On screen: " + " / ".join(f'"{t}"' for t in facets["text"]) + ".")
    if facets.get("sounds"):
        parts.append("Heard: " + ", ".join(facets["sounds"]) + ".")
    if facets.get("tone"):
        parts.append("Tone: " + ", ".join(facets["tone"]) + ".")
    return " ".join(parts) or "A recording with nothing said, read or recognised in it."


def compose_overview(stream_id: str, memories: Sequence[ShortTermMemory], embedder: TextEmbedder,
                     stretch_start: float | None = None, events: int | None = None) -> StreamOverview:
    """The overview of ``memories`` (one stretch starting at ``stretch_start``, or the whole
    stream when it is None), embedded with the query side's text embedder."""
    ms = sorted(memories, key=lambda m: m.t_start)
    t0 = ms[0].t_start if ms else (stretch_start or 0.0)
    t1 = max((m.t_end for m in ms), default=t0)
    if stretch_start is not None:
        t0 = min(t0, stretch_start)
    facets = compose_facets(ms, t0, t1)
    text = overview_text(facets)
    vector = embedder.embed_texts([text])[0]
    return StreamOverview(
        id=overview_id(stream_id, stretch_start), stream_id=stream_id, t_start=t0, t_end=t1,
        scope="stream" if stretch_start is None else "stretch", text=text, vector=vector,
        facets=facets, events=len(ms) if events is None else events, updated_at=time.time(),
    )


def stretch_starts(t0: float, t1: float, stretch_s: float) -> list[float]:
    """Starts of the stretches (multiples of ``stretch_s``) that [t0, t1] overlaps."""
    first = math.floor(max(t0, 0.0) / stretch_s)
    last = math.floor(max(t1 - 1e-6, t0, 0.0) / stretch_s)
    return [k * stretch_s for k in range(first, last + 1)]


def refresh_overviews(store: MemoryStore, embedder: TextEmbedder, stream_id: str,
                      stretch_s: float, since_s: float = 0.0) -> list[StreamOverview]:
    """Recompose the stream's overview and those of its stretches from ``since_s`` to its
    end (a live stream: the stretch that grew), store them and drop overviews of stretches
    that hold no memory any more. Returns what was written."""
    memories = store.list_memories(stream_id, limit=STREAM_MEMORIES_MAX)
    if not memories:
        store.delete_overviews(stream_id)
        return []
    end = max(m.t_end for m in memories)
    written: list[StreamOverview] = []
    keep = {overview_id(stream_id)}
    for start in stretch_starts(0.0, end, stretch_s):
        inside = [m for m in memories if start <= m.t_start < start + stretch_s]
        if not inside:
            continue
        keep.add(overview_id(stream_id, start))
        if start + stretch_s > since_s:
            written.append(compose_overview(stream_id, inside, embedder, stretch_start=start))
    written.append(compose_overview(stream_id, memories, embedder))
    store.upsert_overviews(written)
    store.delete_overviews(stream_id, keep_ids=keep)
    return written
