"""Semantic replay (HippoMM Eq. 6–7): a consolidated memory → a ThetaEvent with a summary.

Two ways to write the summary, chosen by ``summariser``:

* **composed** (the default with the local model): built from what was heard, read and seen
  (memory/summary_composer.py). The bundled 135M model invented facts in summaries and was
  43 % of ingest time; a composed summary says nothing the memory does not hold and costs
  microseconds.
* **model** (the default with ``llm = "openai"``, a capable backend): the model writes one
  sentence, and it is still checked against its inputs: numbers and capitalised words must
  occur in what was seen or heard. A sampled summary that fails is retried greedily; if that
  fails too, the composed summary is used. The event records which path produced it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from episodic.config import Settings
from episodic.core.interfaces import TextEmbedder
from episodic.core.llm import LanguageModel
from episodic.core.records import ShortTermMemory, ThetaEvent, event_id
from episodic.memory.replay_prompt import replay_messages
from episodic.memory.summary_composer import compose_summary

MAX_SUMMARY_CHARS = 600
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:[.:,]\d+)*")
_COMMON_CAPS = {
    "a", "an", "the", "this", "that", "these", "there", "it", "in", "on", "at", "while", "as",
    "someone", "somebody", "person", "people", "speaker", "he", "she", "they", "we", "i", "you",
    "during", "after", "before", "when", "with", "and", "but", "one", "two", "video", "scene",
    "moment", "recording", "footage", "camera", "image", "picture", "text", "screen",
}


def _unsupported_terms(summary: str, source: str) -> list[str]:
    """Numbers and capitalised words in ``summary`` that never occur in ``source``."""
    src = source.lower()
    src_tokens = {t.lower() for t in _TOKEN.findall(source)}
    out = []
    for i, tok in enumerate(_TOKEN.findall(summary)):
        low = tok.lower()
        is_number = tok[0].isdigit()
        is_name = tok[0].isupper() and i > 0 and low not in _COMMON_CAPS
        if (is_number or is_name) and low not in src_tokens and low not in src:
            out.append(tok)
    return out


_STOP = {
    "about", "above", "after", "again", "also", "been", "being", "from", "have", "having", "here",
    "into", "just", "like", "more", "most", "only", "other", "over", "said", "says", "saying",
    "some", "someone", "somebody", "such", "than", "that", "their", "them", "then", "there",
    "these", "they", "this", "those", "through", "very", "were", "what", "when", "where", "which",
    "while", "will", "with", "would", "your", "scene", "shows", "showing", "picture", "moment",
    "person", "people", "speaker", "text", "screen", "colours", "colors", "colour", "color",
}


def _stems(text: str) -> set[str]:
    """Content-word stems (first five letters of words of four letters or more)."""
    return {w[:5] for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in _STOP}


def is_faithful(summary: str, source: str, speech: str) -> bool:
    """A summary is kept only if it is grounded in its inputs: no invented numbers or names,
    at most a third of its content words new, and, when something was said, at least one
    content word of the speech in it (the summary must carry what was heard)."""
    if len(summary) < 12 or _unsupported_terms(summary, source):
        return False
    words = _stems(summary)
    if not words:
        return False
    novel = len(words - _stems(source)) / len(words)
    if novel > 1 / 3:
        return False
    return not _stems(speech) or bool(words & _stems(speech))


def clean_summary(text: str) -> str:
    """First sentence, no labels or quotes around it, bounded length."""
    text = re.sub(r"^\s*(summary|log entry|answer|sentence|heard|seen)\s*:\s*", "", text, flags=re.I)
    text = text.strip().strip('"\u201c\u201d').strip()
    text = " ".join(text.split())
    m = re.search(r"^(.+?[.!?])(\s|$)", text)
    if m and len(m.group(1)) >= 20:
        text = m.group(1)
    return text[:MAX_SUMMARY_CHARS].strip().strip('"\u201c\u201d').strip()


COMPOSED = "composed"


def summariser_mode(settings: Settings) -> str:
    """"composed" or "model": ``summariser = auto`` writes with the model only when the
    language model is a capable server (``llm = "openai"``)."""
    mode = settings.summariser
    if mode == "auto":
        return "model" if settings.llm == "openai" else COMPOSED
    return mode


class SemanticReplay:
    """``llm`` may be the model or a zero-argument factory for it: composed summaries never
    load the model, so ingest on the embedded default does not pay for it."""

    def __init__(
        self,
        settings: Settings,
        llm: LanguageModel | Callable[[], LanguageModel],
        embedder: TextEmbedder,
    ) -> None:
        self.settings = settings
        self._llm = llm
        self.embedder = embedder
        self.mode = summariser_mode(settings)

    @property
    def llm(self) -> LanguageModel:
        if callable(self._llm) and not hasattr(self._llm, "generate"):
            self._llm = self._llm()
        return self._llm  # type: ignore[return-value]

    def context(self, memory: ShortTermMemory) -> tuple[list[str], str]:
        """Key visual context I_θ (distinct descriptions) and auditory context A_θ."""
        visual: list[str] = []
        for f in memory.frames:
            if f.description and f.description not in visual:
                visual.append(f.description)
        return visual[:6], memory.transcript_text[:2000]

    def images(self, memory: ShortTermMemory) -> list[bytes]:
        """Up to ``replay_max_images`` key frames spread over the memory (first, last and
        evenly between), for a vision-language summariser."""
        frames, k = memory.keyframe_images, self.settings.replay_max_images
        if k <= 0 or not frames:
            return []
        if len(frames) <= k:
            return list(frames)
        step = (len(frames) - 1) / max(1, k - 1)
        return [frames[round(i * step)] for i in range(k)] if k > 1 else [frames[0]]

    def summarise(self, memory: ShortTermMemory) -> tuple[str, str]:
        """(summary, how) where how is "composed", the model id, "…+greedy" or
        "composed-fallback" (the model's summaries failed the faithfulness check)."""
        if self.mode == COMPOSED:
            return compose_summary(memory), COMPOSED
        visual, speech = self.context(memory)
        source = " ".join(visual) + " " + speech
        messages = replay_messages(visual, speech, self.images(memory))
        attempts = [(self.settings.replay_temperature, self.llm.model_id)]
        if self.settings.replay_temperature > 0:
            attempts.append((0.0, self.llm.model_id + "+greedy"))
        seed = self.settings.replay_seed + (hash_text(memory.id) % 100_000)
        for temperature, how in attempts:
            raw = self.llm.generate(
                messages,
                max_tokens=self.settings.replay_max_tokens,
                temperature=temperature,
                seed=seed,
            )
            summary = clean_summary(raw)
            if is_faithful(summary, source, speech):
                return summary, how
        return compose_summary(memory), COMPOSED + "-fallback"

    def replay(self, memory: ShortTermMemory, provisional: bool = False) -> ThetaEvent:
        """The memory's event. ``provisional``: the memory is still open (consolidation may
        merge the next segment into it), so the summary is composed (microseconds) whatever
        ``summariser`` says; the final event replaces it under the same id."""
        if provisional:
            summary, how = compose_summary(memory), COMPOSED
        else:
            summary, how = self.summarise(memory)
        visual, speech = self.context(memory)
        vec = self.embedder.embed_texts([summary])[0]
        return ThetaEvent(
            id=event_id(memory.stream_id, memory.t_start),
            stream_id=memory.stream_id,
            memory_id=memory.id,
            t_start=memory.t_start,
            t_end=memory.t_end,
            summary=summary,
            summary_vector=vec,
            vector=memory.vector,
            visual_context=visual,
            audio_context=[speech] if speech else [],
            metadata={"summariser": how, "embedder": self.embedder.model_id}
            | ({"provisional": True} if provisional else {}),
        )


def hash_text(text: str) -> int:
    """A stable (process-independent) hash: Python's hash() is salted per process."""
    import zlib

    return zlib.crc32(text.encode())
