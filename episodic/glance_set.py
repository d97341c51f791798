"""A generated stretch of stored memory for the day at a glance (issue 17): no media, only the
records an ingest would have stored, so an hour (or a day) takes a second to make.

Each 10-minute window of stream time gets a theme of its own (:data:`episodic.qa_content.THEMES`:
a station, a kitchen, a garden, …), so every fact has exactly one window it belongs to: the
words said there (its places, objects and items), one person named, one numbered sign on screen
("PLATFORM 1"), a sound in some windows (music, applause, an engine), the things the frames
show. :func:`glance_records` returns the memories and events of [start_s, end_s) with the truth
per window; tests and ``benchmarks/bench_summaries.py`` check the summaries against it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from episodic.core.interfaces import TextEmbedder
from episodic.core.records import (
    EmbeddingEntry,
    FrameObservation,
    ShortTermMemory,
    SoundObservation,
    ThetaEvent,
    TranscriptPiece,
    event_id,
    memory_id,
)
from episodic.qa_content import NAMES, THEMES

WINDOW_S = 600.0
SEGMENT_S = 10.0
SOUNDS = {1: "music", 3: "applause", 5: "engine"}  # window index % 6 → a sound heard there
_SOUND_TEXT = {"music": "music playing", "applause": "applause", "engine": "engine running"}
_THEMES = THEMES["dev"] + THEMES["heldout"]
_NAMES = NAMES["dev"] + NAMES["heldout"]


@dataclass(frozen=True)
class GlanceWindow:
    """What one 10-minute window holds, for checking its summary."""

    index: int
    start: float
    theme: str
    name: str  # the one person named there
    sign: str  # the text on screen there
    sound: str  # "" when none besides speech
    words: tuple[str, ...]  # words said only there (place, object and item names)


def glance_window(index: int) -> GlanceWindow:
    t = _THEMES[index % len(_THEMES)]
    words = tuple(w for phrase in (*t.places, *t.objects, *(p for _, p in t.items)) for w in phrase.split())
    return GlanceWindow(index, index * WINDOW_S, t.key, _NAMES[index % len(_NAMES)],
                        f"{t.sign_word} {index + 1}", SOUNDS.get(index % 6, ""), words)


def _sentence(w: GlanceWindow, k: int) -> str:
    t = _THEMES[w.index % len(_THEMES)]
    place, obj = t.places[k % len(t.places)], t.objects[(k // 3) % len(t.objects)]
    item = t.items[k % len(t.items)][1]
    event = t.events[k % len(t.events)]
    templates = (
        f"{w.name} says the {obj} is by the {place}.",
        f"We need more {item} near the {place} before the {event}.",
        f"Please bring the {obj} over to the {place}, {w.name}.",
        f"The {event} starts soon, the {item} are ready.",
    )
    return templates[k % len(templates)]


def glance_records(embedder: TextEmbedder, stream_id: str = "cam2", start_s: float = 0.0,
                   end_s: float = 3600.0) -> tuple[list[ShortTermMemory], list[ThetaEvent], list[GlanceWindow]]:
    """The memories and events of [start_s, end_s) (one per SEGMENT_S seconds) and the
    windows they fall in; the same times always give the same records."""
    memories: list[ShortTermMemory] = []
    events: list[ThetaEvent] = []
    windows: dict[int, GlanceWindow] = {}
    n0, n1 = int(round(start_s / SEGMENT_S)), int(round(end_s / SEGMENT_S))
    for n in range(n0, n1):
        t0 = n * SEGMENT_S
        w = windows.setdefault(int(t0 // WINDOW_S), glance_window(int(t0 // WINDOW_S)))
        k = int((t0 - w.start) // SEGMENT_S)
        theme = _THEMES[w.index % len(_THEMES)]
        said = _sentence(w, k) if k % 5 != 4 else ""  # every fifth memory is quiet
        shown = w.sign if k % 6 == 0 else ""
        sound = w.sound if w.sound and k % 10 < 3 else ""
        seen = theme.objects[k % len(theme.objects)]
        frame = FrameObservation(t0 + 5.0, labels=[(seen, 0.9)], ocr_text=shown, people=1 + (k % 2),
                                 description=f"a {seen}" + (f'; on screen: "{shown}"' if shown else ""))
        texts = [x for x in (said, frame.description, _SOUND_TEXT.get(sound, "")) if x]
        vecs = np.asarray(embedder.embed_texts(texts), dtype=np.float32)
        entries = [EmbeddingEntry(t0, t0 + SEGMENT_S, "speech" if x == said else ("audio" if x == _SOUND_TEXT.get(sound) else "visual"),
                                  x, v) for x, v in zip(texts, vecs, strict=True)]
        vector = vecs.mean(axis=0)
        vector = vector / max(float(np.linalg.norm(vector)), 1e-9)
        m = ShortTermMemory(
            id=memory_id(stream_id, t0), stream_id=stream_id, t_start=t0, t_end=t0 + SEGMENT_S,
            vector=vector, embeddings=entries,
            transcript=[TranscriptPiece(t0 + 0.5, t0 + 8.5, said)] if said else [],
            frames=[frame],
            sounds=[SoundObservation(t0, t0 + SEGMENT_S, sound, 0.9, _SOUND_TEXT[sound])] if sound else [],
        )
        summary = " ".join(texts)
        events.append(ThetaEvent(event_id(stream_id, t0), stream_id, m.id, t0, t0 + SEGMENT_S, summary,
                                 np.asarray(embedder.embed_texts([summary])[0], dtype=np.float32), vector,
                                 visual_context=[frame.description], audio_context=[said] if said else []))
        memories.append(m)
    return memories, events, [windows[i] for i in sorted(windows)]
