"""A second opinion on a value the hearing garbled (issue 12, item 2: listening again).

Re-listening (retrieval/relisten.py) hears a recalled sentence again with the strongest
configured recogniser. When that model mishears a value, it tends to mishear it the same way
again: Whisper base wrote "one oh five" as "1.0 a.m." at ingest and as "1 o'clock a.m." with
the question as its prompt, "eleven fifteen" as "in 15" both times. A *different* model hears
differently: Whisper tiny.en, English-only, heard "1.05", "11.15" and "8.35" in those dev
sentences, where base left a bare number. It is the weaker model in general (of the dev sets'
45 sentences holding a number, each heard alone, tiny.en got the number right in 21, base in
28), so it never replaces base's words; it is asked only when the answer to a question about a
value rests on a sentence that holds no clean value of the asked kind.

When: the question asks for a time, number, name or colour (``QuestionShape.focus``), and
the answer rests on a transcript sentence in which the short-answer extractor found no span of
that kind (``caps["span"]`` < 1: the sentence is quoted) or only a weak one (``caps["kind"]``
< 1: a bare hour such as "1.0" or "15" for a time, a colour guessed from a misheard word).

What is taken: the second model hears the sentence's own audio (± ``PAD_S``) once, beam search,
the question as the text said just before. Its words are used for this question only, as a
hinted unit (its confidence capped like any answer resting on hinted words), and only when
they still hold the question's things (:func:`retrieval.listen_targets.about_the_question`)
and a clean span of the asked kind: a clock time, not a bare hour, for a time. Otherwise
nothing changes. Every attempt is recorded as a transcript version (``source``
"second-listen", the model, the question's words), so the same question reuses it; the stored
transcript is never replaced by the weaker model.

Cost: one decoding pass of a few seconds of audio by a small model (0.4–0.9 s in the QA
runs here), only for the questions described, within the request's deadline less
``relisten_reserve_s``. On the dev sets it was asked 9 times in 313 questions and changed two
answers, both to the right time; on the held-out sets 4 times in 549, one answer, right.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from episodic.config import Settings
from episodic.core.errors import EpisodicError
from episodic.core.interfaces import QueryBackends
from episodic.core.records import ShortTermMemory, TranscriptPiece
from episodic.retrieval.detailed import MemoryReader, Recall, Unit
from episodic.retrieval.listen_targets import about_the_question, hot_words, without_closing_phrase
from episodic.retrieval.query_analysis import QueryAnalysis
from episodic.retrieval.snippet_audio import PAD_S, SAMPLE_RATE_HZ, audio_or_none
from episodic.retrieval.transcript_versions import _hot_key, cached_version

log = logging.getLogger(__name__)

SOURCE = "second-listen"
FOCI = ("time", "number", "name", "colour")  # the questions whose answer is one value
INITIAL_S = 1.0  # a first estimate of one hearing (loading aside), replaced by measurements
LOAD_S = 1.0  # loading the small model, once per process (a server loads it at start)


@dataclass
class SecondListen:
    """What the second opinion did (``Trace.notes["second_listen"]``)."""

    reason: str = ""
    model: str = ""
    memory_id: str = ""
    text: str = ""
    taken: bool = False
    cached: bool = False
    seconds: float = 0.0
    unit: Unit | None = field(default=None, repr=False)  # the sentence as heard, when taken

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "unit"}


def wants_second_opinion(analysis: QueryAnalysis, caps: dict[str, Any], support: list[Unit]) -> Unit | None:
    """The transcript sentence an answer rests on when the question asks for one value and the
    sentence holds none of its kind, as heard (see the module doc); None otherwise."""
    if analysis.shape.focus not in FOCI or not support:
        return None
    unit = support[0]
    if unit.modality != "speech" or not unit.text.strip():
        return None
    if min(float(caps.get("span", 1.0)), float(caps.get("kind", 1.0))) >= 1.0:
        return None
    return unit


def take_heard(out: SecondListen, analysis: QueryAnalysis, unit: Unit, text: str, recall: Recall,
               rescore: Callable[[Unit], Unit], clean: Callable[[Unit], bool], taken: str = "taken") -> None:
    """``unit`` as heard again (``text``, hinted, rescored) in its place in ``recall.units``,
    when it is still about the question's things and ``clean`` finds a value of the asked kind
    read in it; ``out`` says which (``reason`` ``taken`` when it was)."""
    heard = replace(unit, text=" ".join(text.split()), vector=None, hinted=True, fuzzy_terms=set(), anchor=None)
    if not about_the_question(analysis, heard):
        out.reason = "not about the question's things"
        return
    if not clean(heard):
        out.reason = "no clean value of the asked kind"
        return
    heard = rescore(heard)
    at = next((i for i, u in enumerate(recall.units) if u is unit), 0)
    recall.units[:] = [u for u in recall.units if u is not unit]
    recall.units.insert(min(at, len(recall.units)), heard)
    out.taken, out.reason, out.unit = True, taken, heard


class SecondListener:
    """Asks ``relisten_second_whisper_model`` about one sentence; one per :class:`MemoryQA`."""

    _speed: dict[str, float] = {}  # model id → measured seconds per hearing (per process)
    _speed_lock = threading.Lock()

    def __init__(self, components: QueryBackends, settings: Settings,
                 persist: Callable[[ShortTermMemory, dict[str, Any]], int]) -> None:
        self.c = components
        self.settings = settings
        self._persist = persist  # records a version without touching the transcript
        self._rec: Any = None
        self._loaded = False

    def spec(self) -> str:
        return self.settings.relisten_second_whisper_model.strip()

    def recognizer(self) -> Any:
        if self._rec is None:
            from episodic.memory.speech import relistening_recognizer

            self._rec = relistening_recognizer(self.settings.replace(relisten_whisper_model=self.spec()))
        return self._rec

    def available(self) -> bool:
        from episodic.memory import whisper_models

        return bool(self.spec()) and whisper_models.is_installed(self.spec())

    def prepare(self) -> None:
        """Load the model now (a server warm-up), when a second opinion is configured."""
        if self.available():
            self.recognizer()._load()
            self._loaded = True

    def _estimate(self, model_id: str) -> float:
        return (0.0 if self._loaded else LOAD_S) + self._speed.get(model_id, INITIAL_S)

    def hear(
        self,
        analysis: QueryAnalysis,
        question: str,
        unit: Unit,
        recall: Recall,
        reader: MemoryReader,
        rescore: Callable[[Unit], Unit],
        clean: Callable[[Unit], bool],
        remaining: Callable[[], float | None],
    ) -> SecondListen:
        """Hear ``unit``'s audio with the second model; when its words still hold the question's
        things and ``clean`` finds in them a value of the asked kind, read rather than guessed
        (the answer stage's own reading: a clock time, not a bare hour, for a time), put them in
        ``recall.units`` in place of ``unit`` (hinted, rescored by ``rescore``). Never raises for
        what it meets in the data."""
        out = SecondListen(memory_id=unit.memory_id)
        started = time.perf_counter()
        try:
            self._hear(out, analysis, question, unit, recall, reader, rescore, clean, remaining)
        except EpisodicError as exc:
            log.info("second opinion on %s failed: %s", unit.memory_id, exc)
            out.reason = f"failed: {exc}"
        out.seconds = round(time.perf_counter() - started, 3)
        return out

    def _hear(self, out, analysis, question, unit, recall, reader, rescore, clean, remaining) -> None:
        if not self.spec():
            out.reason = "off"
            return
        if not self.available():
            out.reason = f"{self.spec()} is not installed"
            return
        memory = reader.memory(unit.memory_id)
        if memory is None or not memory.snippets:
            out.reason = "no stored audio"
            return
        rec = self.recognizer()  # built, not loaded: loading waits until it must hear
        model_id = str(getattr(rec, "model_id", self.spec()))
        out.model = model_id
        words = hot_words(question)
        span = (max(memory.t_start, unit.t_start - PAD_S), min(memory.t_end, unit.t_end + PAD_S))
        cached = cached_version(memory, model_id, words, source=SOURCE, span=span)
        if cached is not None:
            out.cached, text = True, str(cached.get("text") or "")
        else:
            left = remaining()
            if left is not None and left - self.settings.relisten_reserve_s < self._estimate(model_id):
                out.reason = "no time left"
                return
            language = next((p.language for p in memory.transcript if p.language), "") or "en"
            english_only = not getattr(getattr(rec._load(), "model", None), "is_multilingual", True)
            self._loaded = True
            if english_only and language != "en":
                out.reason = f"an English-only model, speech in {language!r}"
                return
            text = self._transcribe(memory, span, question, model_id, unit.text)
            if text is None:
                out.reason = "no audio"
                return
            self._record(memory, span, words, model_id, text)
        out.text = text
        if not text.strip() or " ".join(text.split()) == " ".join(unit.text.split()):
            out.reason = "heard the same"
            return
        take_heard(out, analysis, unit, text, recall, rescore, clean)

    def _transcribe(self, memory: ShortTermMemory, span: tuple[float, float], question: str, model_id: str,
                    old_text: str) -> str | None:
        t0 = time.perf_counter()
        audio = audio_or_none(memory, span[0], span[1], self.c.snippets.path_for, "second opinion")
        if audio is None or not audio.size or not np.any(audio):
            return None
        try:
            pieces: list[TranscriptPiece] = self.recognizer().transcribe(
                audio, SAMPLE_RATE_HZ, span[0], beam_size=self.settings.relisten_beam_size, temperatures=(0.0,),
                language="en", initial_prompt=" ".join(question.split())[:600],
            )
        except (RuntimeError, ValueError) as exc:  # CTranslate2 raises plain errors
            raise EpisodicError(f"the second model failed: {exc}") from exc
        finally:
            seconds = time.perf_counter() - t0
            with self._speed_lock:
                old = self._speed.get(model_id)
                self._speed[model_id] = seconds if old is None else 0.5 * old + 0.5 * seconds
            self._loaded = True
        # a "Thank you." after the sentence is the decoder's habit, not speech
        return " ".join(p.text.strip() for p in without_closing_phrase(pieces, old_text) if p.text.strip())

    def _record(self, memory: ShortTermMemory, span: tuple[float, float], words: list[str], model_id: str,
                text: str) -> None:
        """Keep the attempt as a transcript version (never adopted), so the same question asked
        again reuses it; a store that cannot be written loses only the record."""
        entry = {
            "source": SOURCE,
            "model": model_id,
            "hotwords": _hot_key(words),
            "bias": "prompt",
            "beam_size": self.settings.relisten_beam_size,
            "span": [round(span[0], 3), round(span[1], 3)],
            "text": text,
            "score": None,
            "adopted": False,
            "hinted": True,
            "at": round(time.time(), 3),
        }
        try:
            self._persist(memory, entry)
        except EpisodicError as exc:
            log.info("second opinion: could not record the version of %s: %s", memory.id, exc)
