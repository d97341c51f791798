"""A colour that was said but misheard, heard from the audio itself (issue 12, items 2 and 6).

"Which colour should Omar's anchor be?" recalls "Omar wants the anchor to be right.": the
transcript holds no colour, yet the audio says "white". Re-listening with the question as a
prompt (retrieval/relisten.py) and another model's opinion (retrieval/second_listen.py) often
mishear it the same way again. But a colour is one of a few words, so a free-form colour
question brings its own options: each basic colour term (Berlin and Kay's eleven) is put into
the recalled sentence's likely slots and scored against that sentence's audio by forced
alignment, as a multiple-choice question's options are (retrieval/option_audio.py, the same
``MARGIN``; the slots are the words that *sound* most like a colour, :func:`colour_slots`).
One that leads every other by that margin is taken as heard; the answer then rests on the
sentence with it in place, marked as hinted (its confidence capped like any answer resting on
words the audio was asked about rather than transcribed), for this question only: nothing is
written to the store.

When: with ``relisten_score_options`` on (the same scoring), as the second opinion, for a
colour question whose answer rests on a transcript sentence holding no colour read as such
(``second_listen.wants_second_opinion``); the second model is still asked when the audio names
no colour clearly. On the dev set it was first measured on (seed 8, with other sentences) the
three recalled sentences of its colour questions ("to be right", "to be propelled", "won't
sleep when to make pink") were heard white, purple and pink, each right, leading by 6.5, 3.0
and 4.6; generated sentences that say no colour ("… to be repaired.", "ready", "golden") gave
none (the best lead 2.4).

Cost: one encoder pass over the sentence's audio at its own length and up to
``SLOTS_TRIED`` × 11 alignments (about 1 s on a fast 2-core machine), within the request's
deadline less ``relisten_reserve_s``.
"""
from __future__ import annotations

from collections.abc import Sequence

from episodic.retrieval.query_analysis import STOPWORDS, term_set
from episodic.retrieval.text_match import sound_nearness
from episodic.retrieval.word_set_hearing import WordSetListener

# the basic colour terms of English (Berlin and Kay, 1969): what a colour said is almost
# always one of; shades ("teal", "maroon") are left to the transcript
BASIC_COLOURS = ("black", "white", "red", "green", "yellow", "blue", "brown", "orange", "pink", "purple", "grey")
SLOTS_TRIED = 3  # the sentence's likeliest slots tried (each with every colour)
SLOT_WORDS = 2  # a colour misheard as two words at most ("yet low" for "yellow")
SOURCE = "colours scored against the audio"


def colour_slots(words: Sequence[str], question: str, colours: Sequence[str]) -> list[tuple[int, int]]:
    """(start, length) of the ``SLOTS_TRIED`` windows of ``words`` most likely to be a colour
    misheard: one or two words (two only when they sound nearer together than either alone),
    none of them the question's, not only function words, ranked by how much they sound like
    some colour (Metaphone keys, ``text_match.sound_nearness``:
    "right" 1.0 for white, "propelled" 0.96 for purple, "wants" 0.85), the later first on a
    tie (a colour asked about usually ends its clause: "… to be purple."). Spelling likeness,
    which ranks a multiple-choice question's slots, put "right" fourth behind "the", "wants
    the" and "wants"."""
    asked = term_set(question)

    def nearness(window: Sequence[str]) -> float:
        return max(sound_nearness([c], " ".join(window)) for c in colours)

    alone = [nearness([w]) for w in words]  # each word's own
    ranked: list[tuple[float, int, int]] = []
    for i in range(len(words)):
        for n in range(1, SLOT_WORDS + 1):
            window = words[i : i + n]
            if len(window) < n or term_set(" ".join(window)) & asked:
                break
            if all(w.lower().strip(".,;:!?") in STOPWORDS for w in window):
                continue
            near = alone[i] if n == 1 else nearness(window)
            if n > 1 and near <= max(alone[i : i + n]):
                continue  # no nearer than a word of it alone ("wants the" as "wants")
            ranked.append((near, i, n))
    ranked.sort(key=lambda r: (-r[0], r[2], -r[1]))
    return [(i, n) for _, i, n in ranked[:SLOTS_TRIED]]


class ColourListener(WordSetListener):
    """Hears which basic colour a recalled sentence's audio carries; one per :class:`MemoryQA`.
    ``score_in`` is :meth:`retrieval.relisten.Relistener.hear_in_sentence` (the re-listening
    model, loaded once)."""

    words = BASIC_COLOURS
    slots = staticmethod(colour_slots)
    kind = "colour"
    source = SOURCE
