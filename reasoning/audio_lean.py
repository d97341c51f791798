"""Leaning on the audio when the sentence about the question was found but its answer misheard.

"How much does the seed packet cost? 34 dollars, 45 dollars, 12 dollars, 55 pounds": the
memory holds "The seed packet cost sport if I've not learned to make." (the thing asked about
is there, its price is not) and "Lidonium cost 55 pounds today." (a price, of something
else). Matching the written words picks "55 pounds", the one option the memory holds, and
it is the wrong one: that price belongs to the onion, and the seed packet's own price is in
the garbled words. Two things are known here that the written match ignores:

* **Where the answer must be.** The sentence about the question (it holds every thing the
  question is about, :func:`retrieval.listen_targets.about_the_question`) is the one the
  option scorer (retrieval/option_audio.py) put each option into and scored against its
  audio. When that sentence holds none of the options as written, the written evidence for
  any option comes from some other sentence.
* **Whose value an option is.** An option written in full in a sentence about something
  else ("55 pounds" in the onion's sentence) is that thing's value: ruled out, as an option
  said clearly elsewhere is in the order answers (reasoning/time_answers.py).

Of the options left, the one whose sentence the audio carried best is chosen, even by less
than the option scorer's margin for calling it heard: a weak lead from the right sentence's
audio is still evidence about the answer, the written match is none. It stays a guess, at a
guess's support (:data:`LEAN_SUPPORT`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from episodic.reasoning.short_answer import clock_of_bare_number
from episodic.retrieval.detailed import Unit
from episodic.retrieval.listen_targets import about_the_question
from episodic.retrieval.option_audio import OptionHearing
from episodic.retrieval.query_analysis import STOPWORDS, QueryAnalysis, stem
from episodic.retrieval.text_match import canonical_tokens

LEAN_SUPPORT = 0.3  # an option chosen by a lead too small to call heard: a guess


@dataclass
class AudioLean:
    """The option the audio leans to (``index``), by how much it leads the next option left
    (``lead``, total log-probability), and which options were ruled out as another thing's
    value (``claimed``)."""

    index: int
    lead: float
    claimed: list[bool]


def _value_words(text: str) -> set[str]:
    """The words of an option or sentence that carry its value, numbers folded into one key
    ("forty-five dollars" → {"45", "dollar"})."""
    return {stem(t) for t in canonical_tokens(text) if t not in STOPWORDS}


def holds_option(option: str, text: str) -> bool:
    """Whether ``text`` says ``option`` in full (every value word of it)."""
    wanted = _value_words(option)
    return bool(wanted) and wanted <= _value_words(text)


def says_option(option: str, text: str) -> bool:
    """:func:`holds_option`, also for a clock-time option that ``text`` writes as one bare
    number ("… we've been at 425." says "four twenty-five", which Whisper writes "425" about as
    often as "4.25"). Only for the sentences about the question: elsewhere "425" is as often
    a room."""
    if holds_option(option, text):
        return True
    wanted = _value_words(option)
    if len(wanted) != 1 or not re.fullmatch(r"\d{1,2}:\d{2}", next(iter(wanted))):
        return False
    return any(clock_of_bare_number(t) in wanted for t in canonical_tokens(text) if t.isdigit())


def written_over_heard(options: Sequence[str], hearing: OptionHearing | None) -> bool:
    """Whether the sentence the options were scored in says one of them as written and the
    audio's pick is another: then the words stand and the pick is dropped. The recogniser
    wrote that option itself, often on hearing the sentence again with every option as a hot
    word ("At 20 to 11, Grace's an appointment …" for "10:40"), and the slot's scoring leans
    on how a few words align in noise. Over the dev sets' option hearings whose sentence said
    exactly one option (53), that option was right 52 times; the audio picked another twice,
    wrong both times (session 72)."""
    if hearing is None or hearing.heard is None or not hearing.heard_in:
        return False
    held = [i for i, o in enumerate(options) if says_option(o, hearing.heard_in)]
    return len(held) == 1 and held[0] != hearing.heard


def audio_lean(analysis: QueryAnalysis, options: Sequence[str], units: Sequence[Unit],
               hearing: OptionHearing | None) -> AudioLean | None:
    """The option to choose by the audio of the sentence about the question, or None when
    that does not apply: no options scored, an option clearly heard already, no scored
    sentence, or a scored sentence (or any other sentence about the question) that says one
    of the options as written (then the words answer)."""
    if hearing is None or hearing.heard is not None or not hearing.heard_in:
        return None
    if len(hearing.scores) != len(options) or sum(s is not None for s in hearing.scores) < 2:
        return None
    said = [u for u in units if u.modality == "speech" and u.text.strip()]
    is_about = [about_the_question(analysis, u) for u in said]
    about = [u.text for u, yes in zip(said, is_about, strict=True) if yes]
    if any(says_option(o, text) for o in options for text in [hearing.heard_in, *about]):
        return None
    others = [u.text for u, yes in zip(said, is_about, strict=True) if not yes]
    claimed = [any(holds_option(o, text) for text in others) for o in options]
    left = sorted(((s, i) for i, s in enumerate(hearing.scores) if s is not None and not claimed[i]), reverse=True)
    if not left:
        return None
    lead = left[0][0] - left[1][0] if len(left) > 1 else 0.0
    return AudioLean(index=left[0][1], lead=round(float(lead), 4), claimed=claimed)
