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

The day at a glance (issue 17): a stretch is also the smallest summary window (10 minutes),
and its facets keep what longer windows are merged from without reading a memory again:
tallies ("n_topics": ["12 bread", …], memories per word; names, things seen, on-screen text
alike), seconds and the mean time of each sound (speech included), a few quotes with their
time ("said"), the span its memories cover and how many there are. A window of
``summary_windows`` (an hour, a day), aligned to stream time 0, is merged from its stretches
(scope "window"); so is the stream-wide overview, so a checkpoint reads only the memories of
the stretch that grew instead of the whole stream. A window whose stretches all lie in one
smaller window says what that one says and is not stored (memory/window_summaries.py serves
it as that one); the stream overview of a one-stretch stream is that stretch's. Window ids,
sizes and the checkpoint refresh are in :mod:`memory.overview_windows`.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Sequence

import numpy as np

from episodic.core.interfaces import TextEmbedder
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
# summary windows (issue 17): what a stretch keeps for merging into longer windows
SAID_QUOTES = 5  # quotes per window
QUOTE_WORDS = 16
TALLY_TOPICS = 30
TALLY_NAMES = 12
TALLY_OBJECTS = 20
TALLY_TEXTS = 12
# the facets a stretch adds for merging (the others are the overview's own parts)
STAT_FACETS = ("window_s", "span", "memories", "said", "n_topics", "n_people", "n_objects",
               "people_seen", "n_text", "n_sounds", "n_tone")

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
    return [w for w, _ in _name_counts(memories).most_common(PEOPLE_NAMES)]


def _name_counts(memories: Sequence[ShortTermMemory]) -> Counter[str]:
    """How often each name (see :func:`_names`) was said."""
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
    return counts


# everyday words that fill talk about anything: never what a recording is about
_EVERYDAY = frozenset(
    ["good", "morning", "evening", "hello", "today", "tonight", "look", "looks", "really", "welcome", "everyone", "back", "going", "already", "another", "little", "just", "time", "thing", "things", "know", "want", "like", "make", "making", "also", "much", "very", "well", "right", "here", "there", "come", "first", "next", "still", "thank", "thanks", "please", "let", "lets", "okay", "yeah", "great", "nice", "went", "said", "says", "think", "maybe", "something", "around"]
)


def _topics(memories: Sequence[ShortTermMemory], names: set[str]) -> list[str]:
    """The words said or shown in most memories (each memory counts a word once)."""
    return [w for w, _ in _topic_counts(memories, names)[:TOPIC_WORDS]]


def _topic_counts(memories: Sequence[ShortTermMemory], names: set[str]) -> list[tuple[str, int]]:
    """Every topic word with the number of memories it occurs in, most first."""
    df: Counter[str] = Counter()
    first: dict[str, int] = {}
    for m in memories:
        words = {w.lower() for w in _WORD.findall(f"{m.transcript_text} {m.ocr_text}")}
        for w in words:
            if len(w) >= 4 and w not in _STOP and w not in _EVERYDAY and w.capitalize() not in names:
                df[w] += 1
                first.setdefault(w, len(first))
    ranked = sorted(df, key=lambda w: (-df[w], first[w]))
    return [(w, df[w]) for w in ranked]


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
    speech = sum(p.t_end - p.t_start for m in memories for p in m.transcript if p.text.strip())
    return _sound_phrases(spans, speech, bool(memories), t0, t1)


def _sound_phrases(spans: dict[str, list[tuple[float, float]]], speech: float, heard_any: bool,
                   t0: float, t1: float) -> list[str]:
    """The sounds facet from each kind's pieces and the seconds of speech in [t0, t1]."""
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
    if speech / length >= THROUGHOUT_SHARE:
        out.append("speech throughout")
    elif speech / length >= SOUND_MIN_SHARE:
        out.append("some speech")
    elif heard_any:
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
    """The overview's parts from memories in time order (lists, most telling first), and the
    tallies longer windows are merged from (:data:`STAT_FACETS`)."""
    name_counts = _name_counts(memories)
    names = [w for w, _ in name_counts.most_common(PEOPLE_NAMES)]
    opening = _opening(memories)
    topic_counts = _topic_counts(memories, set(names))
    facets = {
        "topics": [w for w, _ in topic_counts[:TOPIC_WORDS]],
        "people": names,
        "objects": _objects(memories),
        "text": _texts(memories),
        "sounds": _sounds(memories, t0, t1),
        "tone": _tone(memories),
        "opening": [opening] if opening else [],
    }
    objects, people_seen = _object_counts(memories)
    facets.update({
        "span": [_span(min((m.t_start for m in memories), default=t0), max((m.t_end for m in memories), default=t1))],
        "memories": [str(len(memories))],
        "said": [f"{t:.1f} {q}" for t, q in _quotes(memories, facets["topics"], names)],
        "n_topics": _tally(topic_counts[:TALLY_TOPICS]),
        "n_people": _tally(name_counts.most_common(TALLY_NAMES)),
        "n_objects": _tally(objects[:TALLY_OBJECTS]),
        "people_seen": [str(people_seen)] if people_seen else [],
        "n_text": _tally(_text_counts(memories)),
        "n_sounds": [f"{_num(sec)} {kind} {c:.1f}" for kind, sec, c in _sound_stats(memories)],
        "n_tone": _tally(_tone_counts(memories)),
    })
    return facets


# -- the tallies of a summary window ------------------------------------------------------------
def _num(n: float) -> str:
    return f"{n:.0f}" if float(n).is_integer() else f"{n:.1f}"


def _span(t0: float, t1: float) -> str:
    return f"{t0:.3f} {t1:.3f}"


def _tally(items: Sequence[tuple[str, float]]) -> list[str]:
    """(item, count) pairs as facet strings: "12 bread"."""
    return [f"{_num(n)} {item}" for item, n in items]


def read_tally(facets: dict[str, list[str]], key: str) -> list[tuple[str, float]]:
    """A tally facet back as (item, count) pairs, in stored order (malformed entries skipped)."""
    out: list[tuple[str, float]] = []
    for entry in facets.get(key, []):
        n, _, item = entry.partition(" ")
        try:
            out.append((item, float(n)))
        except ValueError:
            continue
    return out


def read_said(facets: dict[str, list[str]]) -> list[tuple[float, str]]:
    """The quotes of a window as (stream time, quote)."""
    return [(t, q) for q, t in read_tally(facets, "said") if q]


def read_sounds(facets: dict[str, list[str]]) -> list[tuple[str, float, float]]:
    """(kind, seconds, mean time) of each sound heard, speech included."""
    out: list[tuple[str, float, float]] = []
    for rest, seconds in read_tally(facets, "n_sounds"):
        kind, _, centre = rest.partition(" ")
        try:
            out.append((kind, seconds, float(centre)))
        except ValueError:
            continue
    return out


def read_span(o: StreamOverview) -> tuple[float, float]:
    """Where the overview's first memory starts and its last ends."""
    for entry in o.facets.get("span", []):
        a, _, b = entry.partition(" ")
        try:
            return float(a), float(b)
        except ValueError:
            break
    return o.t_start, o.t_end


def read_count(facets: dict[str, list[str]], key: str) -> int:
    try:
        return int(float((facets.get(key) or ["0"])[0]))
    except ValueError:
        return 0


def window_of(o: StreamOverview) -> float | None:
    """The summary window an overview covers (None: the stream-wide one or an old record)."""
    try:
        return float(o.facets["window_s"][0])
    except (KeyError, IndexError, ValueError):
        return None


def _object_counts(memories: Sequence[ShortTermMemory]) -> tuple[list[tuple[str, int]], int]:
    """Each thing seen with the number of memories it was recognised in (usable key frames
    only, as for the overview's objects), and the most people one key frame showed."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    people = 0
    for m in memories:
        labels: set[str] = set()
        for f in m.frames:
            if f.quality:
                continue
            people = max(people, f.people, f.faces)
            labels.update(label for label, _ in f.labels)
        for label in sorted(labels):
            counts[label] += 1
            first.setdefault(label, len(first))
    ranked = sorted(counts, key=lambda w: (-counts[w], first[w]))
    return [(w, counts[w]) for w in ranked], people


def _text_counts(memories: Sequence[ShortTermMemory]) -> list[tuple[str, int]]:
    """On-screen text with the number of memories it was read in: the most read
    ``TALLY_TEXTS``, in the order first read."""
    counts: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for m in memories:
        here: set[str] = set()
        for f in m.frames:
            t = " ".join(f.ocr_text.split())[:TEXT_MAX_CHARS]
            if t:
                shown.setdefault(t.lower(), t)
                here.add(t.lower())
        counts.update(here)
    order = list(shown)
    kept = set(sorted(order, key=lambda k: (-counts[k], order.index(k)))[:TALLY_TEXTS])
    return [(shown[k], counts[k]) for k in order if k in kept]


def _sound_stats(memories: Sequence[ShortTermMemory]) -> list[tuple[str, float, float]]:
    """(kind, seconds, mean time) of each sound kind heard and of speech."""
    pieces: dict[str, list[tuple[float, float]]] = {}
    for m in memories:
        for o in m.sounds:
            if o.kind in _SOUND_NAMES:
                pieces.setdefault(o.kind, []).append((o.t_start, o.t_end))
        for p in m.transcript:
            if p.text.strip():
                pieces.setdefault("speech", []).append((p.t_start, p.t_end))
    out: list[tuple[str, float, float]] = []
    for kind in (*_SOUND_NAMES, "speech"):
        spans = [(a, b) for a, b in pieces.get(kind, []) if b > a]
        total = sum(b - a for a, b in spans)
        if total > 0:
            centre = sum((a + b) / 2 * (b - a) for a, b in spans) / total
            out.append((kind, round(total, 1), centre))
    return out


def _tone_counts(memories: Sequence[ShortTermMemory]) -> list[tuple[str, int]]:
    words = {w for ws in TONE_WORDS.values() for w in ws}
    said = Counter(w.lower() for m in memories for w in _WORD.findall(m.transcript_text) if w.lower() in words)
    return sorted(said.items(), key=lambda kv: (-kv[1], kv[0]))


def _tone_phrases(said: Counter[str]) -> list[str]:
    out: list[str] = []
    for tone, words in TONE_WORDS.items():
        found = sorted((w for w in words if said[w]), key=lambda w: (-said[w], w))[:3]
        if found:
            out.append(f"{tone} ({', '.join(found)})")
    return out


def _quote_score(quote: str, keys: set[str]) -> int:
    return len({w.lower() for w in _WORD.findall(quote)} & keys)


def _pick_quotes(candidates: Sequence[tuple[float, str, int]], keys: set[str]) -> list[tuple[float, str]]:
    """Up to SAID_QUOTES distinct quotes (time, quote, source): those that say most of the
    window's topics, one per source (a memory, or a stretch when merging) before a second,
    then in time order."""
    ranked = sorted(candidates, key=lambda c: (-_quote_score(c[1], keys), c[0]))
    chosen: list[tuple[float, str]] = []
    seen: set[str] = set()
    used: set[int] = set()
    for second_round in (False, True):
        for t, q, source in ranked:
            if len(chosen) >= SAID_QUOTES:
                break
            if q.lower() in seen or (source in used and not second_round):
                continue
            seen.add(q.lower())
            used.add(source)
            chosen.append((t, q))
    return sorted(chosen)


def _quotes(memories: Sequence[ShortTermMemory], topics: Sequence[str], names: Sequence[str]) -> list[tuple[float, str]]:
    """The main things said: each memory's key sentence, those with most of the topics."""
    candidates: list[tuple[float, str, int]] = []
    for i, m in enumerate(memories):
        pieces = [p for p in m.transcript if p.text.strip()]
        quote = key_sentence(m.transcript_text, QUOTE_WORDS) if pieces else ""
        if quote:
            candidates.append((pieces[0].t_start, quote, i))
    keys = {w.lower() for w in (*topics, *names)}
    return _pick_quotes(candidates, keys)


def _merged_tally(children: Sequence[StreamOverview], key: str) -> list[tuple[str, float]]:
    """A tally summed over children, most first (ties: first seen)."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for o in children:
        for item, n in read_tally(o.facets, key):
            counts[item] += n
            first.setdefault(item, len(first))
    return [(w, counts[w]) for w in sorted(counts, key=lambda w: (-counts[w], first[w]))]


def merge_facets(children: Sequence[StreamOverview]) -> dict[str, list[str]]:
    """The facets of a window (or the stream) merged from its stretches' facets, without
    reading a memory: tallies summed, quotes chosen among the stretches' quotes, sounds placed
    by where in the span each stretch heard them. One child: its facets as they are."""
    kids = sorted(children, key=lambda o: o.t_start)
    if len(kids) == 1:
        return {k: list(v) for k, v in kids[0].facets.items() if k != "window_s"}
    spans = [read_span(o) for o in kids]
    t0, t1 = min(a for a, _ in spans), max(b for _, b in spans)
    memories = sum(read_count(o.facets, "memories") for o in kids)
    names = _merged_tally(kids, "n_people")
    people = [w for w, _ in names[:PEOPLE_NAMES]]
    topics = [(w, n) for w, n in _merged_tally(kids, "n_topics") if w.capitalize() not in set(people)]
    objects = _merged_tally(kids, "n_objects")
    people_seen = max((read_count(o.facets, "people_seen") for o in kids), default=0)
    seen = [label for label, _ in objects[:OBJECTS]]
    if people_seen:
        seen.insert(0, "one person" if people_seen == 1 else f"{people_seen} people")
    texts: dict[str, tuple[str, float]] = {}
    for o in kids:  # in the order first read, case aside
        for t, n in read_tally(o.facets, "n_text"):
            shown, m = texts.get(t.lower(), (t, 0.0))
            texts[t.lower()] = (shown, m + n)
    order = list(texts)
    kept = set(sorted(order, key=lambda k: (-texts[k][1], order.index(k)))[:TALLY_TEXTS])
    text_tally = [texts[k] for k in order if k in kept]
    pieces: dict[str, list[tuple[float, float]]] = {}
    sound_totals: dict[str, list[float]] = {}
    for o in kids:
        for kind, seconds, centre in read_sounds(o.facets):
            pieces.setdefault(kind, []).append((centre - seconds / 2, centre + seconds / 2))
            acc = sound_totals.setdefault(kind, [0.0, 0.0])
            acc[0] += seconds
            acc[1] += seconds * centre
    speech = sum(b - a for a, b in pieces.pop("speech", []))
    sound_tally = [f"{_num(round(sec, 1))} {kind} {centre_sum / sec:.1f}"
                   for kind in (*_SOUND_NAMES, "speech")
                   for sec, centre_sum in [sound_totals.get(kind, [0.0, 0.0])] if sec > 0]
    tone = Counter({w: int(n) for w, n in _merged_tally(kids, "n_tone")})
    keys = {w.lower() for w, _ in topics[:TOPIC_WORDS]} | {w.lower() for w in people}
    quotes = _pick_quotes([(t, q, i) for i, o in enumerate(kids) for t, q in read_said(o.facets)], keys)
    opening = next((o.facets["opening"] for o in kids if o.facets.get("opening")), [])
    return {
        "topics": [w for w, _ in topics[:TOPIC_WORDS]],
        "people": people,
        "objects": seen,
        "text": [t for t, _ in text_tally[:TEXTS]],
        "sounds": _sound_phrases(pieces, speech, memories > 0, t0, t1),
        "tone": _tone_phrases(tone),
        "opening": list(opening[:1]),
        "span": [_span(t0, t1)],
        "memories": [str(memories)],
        "said": [f"{t:.1f} {q}" for t, q in quotes],
        "n_topics": _tally(topics[:TALLY_TOPICS]),
        "n_people": _tally(names[:TALLY_NAMES]),
        "n_objects": _tally(objects[:TALLY_OBJECTS]),
        "people_seen": [str(people_seen)] if people_seen else [],
        "n_text": _tally(text_tally),
        "n_sounds": sound_tally,
        "n_tone": _tally(sorted(tone.items(), key=lambda kv: (-kv[1], kv[0]))),
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
                     stretch_start: float | None = None, events: int | None = None,
                     window_s: float | None = None) -> StreamOverview:
    """The overview of ``memories`` (one stretch starting at ``stretch_start``, or the whole
    stream when it is None), embedded with the query side's text embedder; ``window_s`` marks
    a stretch as a summary window of that length."""
    o = _overview_of(stream_id, memories, stretch_start, events, window_s)
    o.vector = embedder.embed_texts([o.text])[0]
    return o


def _overview_of(stream_id: str, memories: Sequence[ShortTermMemory], stretch_start: float | None,
                 events: int | None = None, window_s: float | None = None) -> StreamOverview:
    ms = sorted(memories, key=lambda m: m.t_start)
    t0 = ms[0].t_start if ms else (stretch_start or 0.0)
    t1 = max((m.t_end for m in ms), default=t0)
    if stretch_start is not None:
        t0 = min(t0, stretch_start)
    facets = compose_facets(ms, t0, t1)
    if window_s is not None:
        facets["window_s"] = [f"{window_s:g}"]
    return StreamOverview(
        id=overview_id(stream_id, stretch_start), stream_id=stream_id, t_start=t0, t_end=t1,
        scope="stream" if stretch_start is None else "stretch", text=overview_text(facets),
        vector=np.zeros(0, dtype=np.float32), facets=facets,
        events=len(ms) if events is None else events, updated_at=time.time(),
    )
