"""Composed ThetaEvent summaries: what was heard, read and seen, and nothing else.

Semantic replay (HippoMM Eq. 6–7) asks a language model for a one-sentence summary of each
memory. A 135M model on a CPU cannot do that faithfully: it wrote "The fish market failed by
a dollar in salmon." for a memory about salmon prices, and it took 43 % of ingest time. On the
embedded default the summary is therefore *composed* from the memory's own observations, in a
fixed shape that a reader and the text embedder both handle well:

    Someone says "the fire alarm test is at half past two". On screen: "EXIT 12".
    Seen: two people, a cat, camera panning. Heard: music playing.

Every content word comes from the transcript, the on-screen text, the kept visual words or
the sound observations, so the summary can only be as wrong as those are. The key sentence
is the transcript sentence that carries most information (content words, names, numbers),
because a summary that keeps one sentence should keep the one a question is likely to be
about. Composition is deterministic and takes microseconds.

:func:`grounded_share` measures the claim: the share of a summary's content words (template
words excluded) that occur in the memory's transcript, on-screen text, visual text or sounds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from episodic.core.records import ShortTermMemory

KEY_SENTENCE_MAX_WORDS = 30  # the quote's budget: the best sentences that fit
EXTRA_SENTENCE_MIN_INFORMATION = 2.0
ON_SCREEN_MAX_CHARS = 120
SEEN_MAX_ITEMS = 4
NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

# Words the composer itself writes; they carry no claim about the recording.
TEMPLATE_WORDS = frozenset(
    ["someone", "says", "said", "on", "screen", "seen", "heard", "and", "a", "an", "the", "of", "person", "people", "face", "faces", "camera", "panning", "moving", "still", "nothing", "visible", "no", "speech", "stretch", "recording", "with", "picture", "playing", "running", "in", "recognisable", "dark", "blurred"]
) | frozenset(NUMBER_WORDS)

# Sound kinds that say something a person would search for; speech is already the quote
# and silence is the absence of everything.
_SOUND_SKIP = {"speech", "silence", ""}
# a sentence ends at ".", "!" or "?" followed by a space or the end: "At 3.20, Tom …" is one
# sentence (split at the point, the quote became "At 3. 20", which reads as three o'clock)
_SENTENCE = re.compile(r"(?:[^.!?]|[.!?]+(?=[^\s.!?]))+[.!?]*")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:[.:,]\d+)*")
_STOP = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "then", "so", "to", "of", "in", "on", "at", "by", "for", "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "there", "here", "i", "you", "he", "she", "we", "they", "me", "him", "her", "us", "them", "my", "your", "his", "our", "their", "what", "which", "who", "whom", "when", "where", "why", "how", "not", "no", "yes", "do", "does", "did", "have", "has", "had", "will", "would", "can", "could", "shall", "should", "may", "might", "must", "just", "very", "too", "also", "about", "into", "over", "under", "up", "down", "out", "off", "again", "all", "any", "some", "each", "few", "more", "most", "other", "such", "only", "own", "same", "than", "s", "t", "don", "now", "oh", "um", "uh", "okay", "ok", "well", "right"]
)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def _information(sentence: str) -> float:
    """How much a sentence tells: content words, with names and numbers counting double."""
    score = 0.0
    for i, tok in enumerate(_WORD.findall(sentence)):
        low = tok.lower()
        if low in _STOP:
            continue
        score += 1.0
        if tok[0].isdigit() or (i > 0 and tok[0].isupper()):
            score += 1.0
    return score


def key_sentence(transcript: str, max_words: int = KEY_SENTENCE_MAX_WORDS) -> str:
    """The most informative transcript sentences, verbatim and in spoken order, within
    ``max_words`` (the best one alone is shortened to fit when it is longer)."""
    candidates = _sentences(transcript)
    if not candidates:
        return ""
    ranked = sorted(range(len(candidates)), key=lambda i: (-_information(candidates[i]), i))
    chosen: list[int] = []
    used = 0
    for i in ranked:
        n = len(candidates[i].split())
        if chosen and _information(candidates[i]) < EXTRA_SENTENCE_MIN_INFORMATION:
            break  # fillers ("Thanks.", "Okay so.") do not earn a place
        if used + n <= max_words or not chosen:
            chosen.append(i)
            used += n
    text = " ".join(candidates[i].strip() for i in sorted(chosen))
    words = text.split()
    if len(words) > max_words:
        text = " ".join(words[:max_words]) + " …"
    return text.rstrip(" .")


def _count_phrase(n: int, one: str, many: str) -> str:
    if n <= 0:
        return ""
    word = NUMBER_WORDS[n] if n < len(NUMBER_WORDS) else str(n)
    return f"{word} {one if n == 1 else many}"


def _unique(items: Iterable[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        item = " ".join(item.split())
        if item and item.lower() not in {o.lower() for o in out}:
            out.append(item)
    return out


def _with_article(label: str) -> str:
    """"cat" → "a cat", "egg" → "an egg"; plain words that already carry one, plurals the
    describer wrote ("clothes", "food") and capitalised names stay as they are."""
    if re.match(r"(a|an|the|some)\s", label) or label[:1].isupper() or label in _MASS_WORDS:
        return label
    return ("an " if label[:1].lower() in "aeiou" else "a ") + label


_MASS_WORDS = frozenset({"clothes", "food", "furniture", "text", "water", "people"})


def seen_items(memory: ShortTermMemory) -> list[str]:
    """People, then the visual words the describer kept (most frequent first)."""
    frames = [f for f in memory.frames if not f.quality]
    items: list[str] = []
    people = max((f.people for f in frames), default=0)
    faces = max((f.faces for f in frames), default=0)
    if people:
        items.append(_count_phrase(people, "person", "people"))
    elif faces:
        items.append(_count_phrase(faces, "face", "faces"))
    counts: dict[str, float] = {}
    for f in frames:
        for label, prob in f.labels:
            counts[label] = counts.get(label, 0.0) + float(prob)
    for label, _ in sorted(counts.items(), key=lambda kv: -kv[1]):
        items.append(_with_article(label))
    return _unique(items)[:SEEN_MAX_ITEMS]


def heard_items(memory: ShortTermMemory) -> list[str]:
    return _unique(o.description for o in memory.sounds if o.kind not in _SOUND_SKIP)


def compose_summary(memory: ShortTermMemory) -> str:
    """One faithful line for a memory (see the module docstring for the shape)."""
    parts: list[str] = []
    quote = key_sentence(memory.transcript_text)
    if quote:
        parts.append(f'Someone says "{quote}".')
    screen = memory.ocr_text.replace(" | ", " / ")
    if screen:
        if len(screen) > ON_SCREEN_MAX_CHARS:
            screen = screen[:ON_SCREEN_MAX_CHARS].rsplit(" ", 1)[0] + " …"
        parts.append(f'On screen: "{screen}".')
    seen = seen_items(memory)
    if not seen and not screen:
        colours = _unique(c for f in memory.frames if not f.quality for c in f.colours)
        if colours:  # a picture with nothing nameable in it is still a picture
            seen.append("a picture in " + ", ".join(colours[:3]))
    motion = str(memory.metadata.get("motion", ""))
    if motion and (motion != "still" or seen):
        seen.append(motion)
    if seen:
        parts.append("Seen: " + ", ".join(seen) + ".")
    heard = heard_items(memory)
    if heard:
        parts.append("Heard: " + ", ".join(heard) + ".")
    if not parts:
        if memory.frames:  # only frames the quality gate rejected (dark, flat, blurred)
            return "A stretch of the recording with no speech and nothing recognisable in a dark or blurred picture."
        return "A stretch of the recording with nothing visible and no speech."
    return " ".join(parts)


def source_text(memory: ShortTermMemory) -> str:
    """Everything the memory holds in words: what a faithful summary may draw on."""
    labels = " ".join(lbl for f in memory.frames for lbl, _ in f.labels)
    return " ".join(
        [
            memory.transcript_text,
            memory.ocr_text,
            memory.visual_text,
            labels,
            memory.sound_text,
            str(memory.metadata.get("motion", "")),
        ]
    )


def content_words(text: str) -> list[str]:
    return [
        w.lower()
        for w in _WORD.findall(text)
        if w.lower() not in _STOP and w.lower() not in TEMPLATE_WORDS
    ]


def grounded_share(summary: str, memory: ShortTermMemory) -> float:
    """Share of the summary's content words that occur in the memory's own text (1.0 when
    the summary has no content words of its own)."""
    words = content_words(summary)
    if not words:
        return 1.0
    source = {w.lower() for w in _WORD.findall(source_text(memory))}
    return sum(w in source for w in words) / len(words)
