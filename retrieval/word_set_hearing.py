"""A misheard value that is one of a few words, heard from the audio itself (issue 12, items 2
and 6).

Some answers can only be one of a handful of words: a colour is almost always a basic colour
term (retrieval/colour_hearing.py), and the minutes of a time told as "… past one" or "… to
six" are "quarter", "half", "five", "ten", "twenty" or "twenty-five" (retrieval/clock_hearing.py).
When the recogniser garbled that word ("Omar wants the anchor to be right." for "white",
"… the pastry chef at Florida past one." for "quarter past one"), re-listening with the
question as a prompt and another model's opinion often mishear it the same way again. So the
question brings its own options: each word of the set is put into the sentence's likely slots
(words that may be it misheard, chosen per set) and scored against that sentence's audio by
forced alignment, as a multiple-choice question's options are (retrieval/option_audio.py, the
same ``MARGIN`` unless a set has a reason for its own, see retrieval/name_hearing.py). One that
leads every other by that margin is taken as heard; the answer then rests on the sentence with
it in place, marked as hinted (its confidence capped like any answer resting on words the audio
was asked about rather than transcribed), for this question only: nothing is written to the
store.

Cost: one encoder pass over the sentence's audio at its own length and up to three slots ×
the set's words × their written forms in alignments (about 1 s on a fast 2-core machine),
within the request's deadline less ``relisten_reserve_s``; nothing at all when the sentence
has no slot.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from episodic.config import Settings
from episodic.retrieval.detailed import MemoryReader, Recall, Unit
from episodic.retrieval.option_audio import MARGIN, OptionHearing, words_of
from episodic.retrieval.query_analysis import QueryAnalysis
from episodic.retrieval.second_listen import SecondListen, take_heard

HEARING_S = 1.2  # about what scoring a set against one sentence's audio takes here

ScoreIn = Callable[..., OptionHearing]  # (memory, sentence, question, options, slots=…)
Slots = Callable[[Sequence[str], str, Sequence[str]], list[tuple[int, int]]]


class WordSetListener:
    """Hears which word of ``words`` a recalled sentence's audio carries in one of ``slots``;
    subclasses name the set. ``score_in`` is
    :meth:`retrieval.relisten.Relistener.hear_in_sentence` (the re-listening model, loaded once)."""

    words: Sequence[str] = ()
    slots: Slots
    kind = "word"  # what the set holds, for the record ("no colour heard clearly")
    source = "words scored against the audio"
    margin = MARGIN  # lead in total log-probability over every other word to be taken

    def __init__(self, score_in: ScoreIn, settings: Settings, model_id: Callable[[], str]) -> None:
        self.score_in = score_in
        self.settings = settings
        self.model_id = model_id

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
        words: Sequence[str] | None = None,
        slots: Slots | None = None,
        as_heard: str = "",
    ) -> SecondListen:
        """When the audio of ``unit`` carries one word of the set clearly best, ``unit`` with
        that word in its slot (hinted, rescored by ``rescore``) takes its place in
        ``recall.units``; ``clean`` must find a value of the asked kind read in it, and it
        must still be about the question's things. The record says what was done (``taken``
        when it was). ``words`` and ``slots`` replace the class's set for this call (a set
        drawn from the memory itself); ``as_heard``, the slot's words as transcribed, competes
        too, and nothing changes when the audio carries them best."""
        out = SecondListen(memory_id=unit.memory_id, model=f"{self.model_id()} ({self.source})")
        started = time.perf_counter()
        words = list(self.words if words is None else words) + ([as_heard] if as_heard else [])
        try:
            self._hear(out, analysis, question, unit, recall, reader, rescore, clean, remaining,
                       words, slots or self.slots, as_heard)
        finally:
            out.seconds = round(time.perf_counter() - started, 3)
        return out

    def _hear(self, out, analysis, question, unit, recall, reader, rescore, clean, remaining,
              words, slots, as_heard) -> None:
        if not self.settings.relisten_score_options:
            out.reason = "off"
            return
        if not slots(words_of(unit.text), question, words):
            out.reason = "no slot"  # nothing where the word could have been: the audio is not read
            return
        left = remaining()
        if left is not None and left - self.settings.relisten_reserve_s < HEARING_S:
            out.reason = "no time left"
            return
        memory = reader.memory(unit.memory_id)
        if memory is None or not memory.snippets:
            out.reason = "no stored audio"
            return
        hearing = self.score_in(memory, unit, question, words, slots=slots)
        best = self._leader(hearing)
        if best is None:
            out.reason = f"no {self.kind} heard clearly ({hearing.reason})"
            return
        if as_heard and best == len(words) - 1:
            out.reason = "the audio carries the words as heard"
            return
        out.text = hearing.filled[best]
        take_heard(out, analysis, unit, out.text, recall, rescore, clean, taken=f"heard {words[best]}")

    def _leader(self, hearing: OptionHearing) -> int | None:
        """The word whose sentence the audio carries best by at least ``margin``; None if none."""
        scored = sorted((s, k) for k, s in enumerate(hearing.scores) if s is not None)
        if len(scored) < 2 or scored[-1][0] - scored[-2][0] < self.margin:
            return None
        return scored[-1][1]
