"""Listening again for what a query names but the memory holds nowhere (retrieval/moments.py
``unheard_subject`` / ``with_heard_again``, services/qa.py ``MemoryQA._listen_for``): the
sentences that sound like it are the ones to hear again, and one that, heard again with the
query as a hint, says it comes first."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from episodic.config import Settings
from episodic.core.query import Moment, Scope
from episodic.core.records import ShortTermMemory, TranscriptPiece
from episodic.retrieval.detailed import MemoryReader, TextScorer, Unit
from episodic.retrieval.moments import MomentSearch, compound_words
from tests.fakes import ListingStore


@pytest.fixture(scope="module")
def scorer() -> TextScorer:
    from episodic.memory.text_embedder import MiniLMEmbedder

    return TextScorer(MiniLMEmbedder(Settings()))


def _said(sid: str, t0: float, text: str, versions: list[dict] | None = None) -> ShortTermMemory:
    memory = ShortTermMemory(id=f"{sid}@{t0}", stream_id=sid, t_start=t0, t_end=t0 + 7.0, vector=np.zeros(4),
                             transcript=[TranscriptPiece(t0 + 1.0, t0 + 3.0, text)])
    if versions:
        memory.metadata["transcripts"] = versions
    return memory


def _spoken(question: str) -> SimpleNamespace:
    return SimpleNamespace(question=question, preferred_modalities=("speech",), asks_text=False, asks_sound=False)


MEMORIES = [
    _said("garden-cam", 0.0, "Tom painted the spade red."),
    _said("garden-cam", 7.0, "I can hear the rubbing outside."),
    _said("garden-cam", 14.0, "Tom will clean the rubber boots after lunch."),
    _said("kitchen-cam", 0.0, "Let me check the list once more."),
]


def test_the_sentences_to_hear_again_sound_like_the_words_heard_nowhere(scorer: TextScorer) -> None:
    """"Tom and the robin": Tom was heard right in other sentences, so only "robin" says where
    to listen ("I can hear the rubbing outside", not Tom's sentences); nothing when a moment
    found already quotes every word, and nothing for a query about writing."""
    store = ListingStore(MEMORIES)
    search = MomentSearch(store, scorer, Settings().retrieval)
    reader = MemoryReader(store)
    words, sounding = search.unheard_subject(_spoken("Tom and the robin"), Scope(), [], 5, reader)
    assert words == ["tom", "robin"]
    assert sounding and sounding[0].memory_id == MEMORIES[1].id, [u.text for u in sounding]
    assert all(u.memory_id not in (MEMORIES[0].id, MEMORIES[3].id) for u in sounding)
    found = [Moment("garden-cam", 30.0, 33.0, 0.5, 'speech: "Tom saw the robin" (matched: Tom, robin)')]
    assert search.unheard_subject(_spoken("Tom and the robin"), Scope(), found, 5, reader) == ([], [])
    # one word quoted is not the subject found
    _, again = search.unheard_subject(_spoken("Tom and the robin"), Scope(),
                                      [Moment("garden-cam", 30.0, 33.0, 0.5, 'speech: "Tom"')], 5, reader)
    assert again and again[0].memory_id == MEMORIES[1].id
    written = SimpleNamespace(**{**vars(_spoken("someone mentions the robin")), "asks_text": True})
    assert search.unheard_subject(written, Scope(), [], 5, reader)[1] == []
    # a moment offered only because it sounds like the query does not count as found
    offered = Moment("garden-cam", 8.0, 10.0, 0.0, 'speech: "x" (sounds like: tom robin; perhaps misheard)')
    _, offered_too = search.unheard_subject(_spoken("Tom and the robin"), Scope(), [offered], 5, reader)
    assert offered_too and offered_too[0].memory_id == MEMORIES[1].id


def _first_to_hear(scorer: TextScorer, said: list[tuple[str, str]], query: str) -> tuple[list[str], str]:
    """The telling words of ``query`` over memories saying ``said`` (stream, sentence), and
    the sentence heard again first."""
    store = ListingStore([_said(sid, 7.0 * k, text) for k, (sid, text) in enumerate(said)])
    search = MomentSearch(store, scorer, Settings().retrieval)
    words, sounding = search.unheard_subject(_spoken(query), Scope(), [], 5, MemoryReader(store))
    return words, sounding[0].text if sounding else ""


def test_an_everyday_word_of_the_subject_sounds_with_the_telling_one(scorer: TextScorer) -> None:
    """"The time of the ferry crossing": "ferry" is the telling word, but alone it sounds most
    like "for" (Metaphone FR); said with "crossing", the word right next to it, it is heard in
    "Eric Rossing", the sentence to hear again. The words a re-hearing must say stay the
    telling ones. Words further off ("takes care") may have been said otherwise: sentences
    saying them do not come first for sounding like them."""
    words, first = _first_to_hear(scorer, [
        ("kitchen-cam", "You can get onions for 21 pounds here."),
        ("harbour-cam", "At 20 past 11 the Eric Rossing gets going."),
        ("harbour-cam", "We should be finished before the afternoon."),
    ], "the time of the ferry crossing")
    assert (words, first) == (["ferry"], "At 20 past 11 the Eric Rossing gets going.")
    words, first = _first_to_hear(scorer, [
        ("school-cam", "Tom takes care of the clipboard these days."),
        ("school-cam", "Grace takes care of the kettle these days."),
        ("school-cam", "Eye shaky scare of the cackle later these days."),
    ], "who takes care of the calculator")
    assert (words, first) == (["calculator"], "Eye shaky scare of the cackle later these days.")
    assert compound_words("who takes care of the calculator", ["calculator"], ["takes", "care", "calculator"]) == []
    assert compound_words("Where is the flower show now?", ["flower"], ["flower", "show"]) == ["show"]


def test_a_sentence_heard_again_saying_the_word_comes_first(scorer: TextScorer) -> None:
    """After re-listening: a memory whose stored words now say it (taken on the audio), or
    whose recorded re-hearing does (the decoder was told the word; said so in ``why``), comes
    first, replacing what was found in that memory; one whose re-hearing did not hear it
    stays out, and with none the moments found stay as they were."""
    taken = _said("harbour-cam", 0.0, "Look, the seagull is here.")
    hinted = _said("harbour-cam", 7.0, "Look, no signal in here.", versions=[
        {"version": 1, "source": "ingest", "text": "Look, no signal in here.", "adopted": True},
        {"version": 2, "source": "relisten", "text": "Look, the seagull is here.", "span": [7.0, 14.0],
         "adopted": False, "hinted": False},
    ])
    missed = _said("harbour-cam", 14.0, "The weather looks fine today.", versions=[
        {"version": 2, "source": "relisten", "text": "The weather looks fine today.", "span": [14.0, 21.0]},
    ])
    from episodic.memory.in_memory_store import InMemoryStore

    store = InMemoryStore()
    store.ensure_schema(4, 4)
    store.upsert_memories([taken, hinted, missed])
    reader = MemoryReader(store)
    search = MomentSearch(store, scorer, Settings().retrieval)
    found = [Moment("kitchen-cam", 0.0, 7.0, 0.3, 'speech: "x"', segment_id="k"),
             Moment("harbour-cam", 7.0, 14.0, 0.2, 'visual: "a scene"', segment_id=hinted.id)]
    units = [Unit("harbour-cam", hinted.id, 8.0, 10.0, "speech", "Look, no signal in here."),
             Unit("harbour-cam", missed.id, 15.0, 17.0, "speech", "The weather looks fine today.")]
    out = search.with_heard_again(units, ["seagull"], found, 5, reader)
    assert [m.segment_id for m in out] == [hinted.id, "k"], out
    assert (out[0].t_start, out[0].t_end) == (7.0, 14.0) and "did not confirm" in out[0].why
    assert out[0].score == 0.3  # ranks with the best found
    # its stored words taken on the audio: said plainly
    as_unit = Unit("harbour-cam", taken.id, 1.0, 3.0, "speech", "…")
    first = search.with_heard_again([as_unit], ["seagull"], found, 5, reader)[0]
    assert first.segment_id == taken.id and first.why.startswith("speech, heard again:") and first.t_start == 1.0
    # stored so at ingest (the ranking left it out): first, and not said to be heard again
    plain = Unit("harbour-cam", taken.id, 1.0, 3.0, "speech", "Look, the seagull is here.")
    first = search.with_heard_again([plain], ["seagull"], found, 5, reader)[0]
    assert first.segment_id == taken.id and first.why.startswith('speech: "Look, the seagull'), first.why
    # nothing heard: the moments found stay
    no_word = Unit("harbour-cam", missed.id, 15.0, 17.0, "speech", "The weather looks fine today.")
    assert search.with_heard_again([no_word], ["seagull"], found, 5, reader) == found


def test_a_sentence_holding_the_kind_of_value_asked_is_heard_again_though_its_names_were_misheard(
    scorer: TextScorer,
) -> None:
    """"The colour of Hannah's anchor", with "Hannah painted the anchor purple" stored as "I
    have entered the bunker purple": it sounds only somewhat like "Hannah anchor" (0.73, below
    the bar of 0.75), but it holds a colour, as the sentence asked for must; it is the one to
    hear again. A colour said about something else (Tom's spade) and a sentence without one
    are not."""
    memories = [
        _said("harbour-cam", 0.0, "Tom painted the spade red."),
        _said("harbour-cam", 7.0, "I have entered the bunker purple."),
        _said("harbour-cam", 14.0, "The weather looks fine today."),
    ]
    store = ListingStore(memories)
    search = MomentSearch(store, scorer, Settings().retrieval)
    words, sounding = search.unheard_subject(_spoken("the colour of Hannah's anchor"), Scope(), [], 5, MemoryReader(store))
    assert words == ["hannah", "anchor"]
    assert [u.memory_id for u in sounding] == [memories[1].id], [u.text for u in sounding]
