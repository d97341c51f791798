"""Memories found by their words (retrieval/word_candidates.py): a sentence heard too badly for
its vector to be near the question is still found by its words, exact or sounding alike."""

from __future__ import annotations

import numpy as np

from episodic.core.query import QueryType, Scope
from episodic.core.records import FrameObservation, ShortTermMemory, StreamInfo, TranscriptPiece
from episodic.retrieval.query_analysis import QueryAnalysis, content_terms
from episodic.retrieval.word_candidates import WordCandidates, said_values


class _Store:
    """The two reads word search makes of a store, over records in memory; counts reads."""

    def __init__(self, memories: list[ShortTermMemory]) -> None:
        self.memories = memories
        self.reads = 0

    def list_streams(self) -> list[StreamInfo]:
        ids = dict.fromkeys(m.stream_id for m in self.memories)
        return [StreamInfo(s, memories=sum(m.stream_id == s for m in self.memories)) for s in ids]

    def list_memories(self, stream_id=None, t_min=None, t_max=None, limit=10000, with_vectors=False):
        self.reads += 1
        return [m for m in self.memories if stream_id in (None, m.stream_id)]


def _memory(stream_id: str, t0: float, said: str) -> ShortTermMemory:
    return ShortTermMemory(id=f"{stream_id}@{t0}", stream_id=stream_id, t_start=t0, t_end=t0 + 8.0,
                           vector=np.zeros(4, np.float32), transcript=[TranscriptPiece(t0 + 1, t0 + 4, said)])


def _analysis(question: str) -> QueryAnalysis:
    return QueryAnalysis(question, QueryType.AUDIO, {}, "", content_terms(question), "any")


def test_a_misheard_sentence_is_found_by_its_words():
    store = _Store([
        _memory("garden-cam", 0.0, "The flow ashore is in room pre-tweil."),
        _memory("garden-cam", 8.0, "The harvest festival starts at 9.35."),
        _memory("harbour-cam", 0.0, "The fairy crossing is in room 316."),
        _memory("harbour-cam", 8.0, "Everyone seems to be in a good mood."),
    ])
    words = WordCandidates(store)
    found = words.find(_analysis("In what room is the flower show?"), Scope())
    # both hold "room"; only the first also holds the flower show, heard as "flow ashore"
    assert found[0] == "garden-cam@0.0" and "harbour-cam@8.0" not in found
    assert words.find(_analysis("In what room is the flower show?"), Scope(stream_ids=("harbour-cam",))) == [
        "harbour-cam@0.0"]
    # a question sharing no word with any sentence finds nothing; one without content words too
    assert words.find(_analysis("Where did Lucas put the anchor?"), Scope()) == []
    assert words.find(_analysis("What happened?"), Scope()) == []


def test_words_are_read_once_per_stream_until_it_changes():
    store = _Store([_memory("garden-cam", 0.0, "The flow ashore is in room pre-tweil.")])
    words = WordCandidates(store)
    words.find(_analysis("In what room is the flower show?"), Scope())
    words.find(_analysis("When does the harvest festival start?"), Scope())
    assert store.reads == 1
    store.memories.append(_memory("garden-cam", 8.0, "The harvest festival starts at 9.35."))
    assert words.find(_analysis("When does the harvest festival start?"), Scope()) == ["garden-cam@8.0"]
    assert store.reads == 2


def test_a_scope_too_large_to_scan_is_left_to_its_vectors(monkeypatch):
    import episodic.retrieval.word_candidates as wc

    store = _Store([_memory("garden-cam", 0.0, "The flow ashore is in room pre-tweil."),
                    _memory("garden-cam", 8.0, "The harvest festival starts at 9.35.")])
    monkeypatch.setattr(wc, "MAX_SCANNED_MEMORIES", 1)
    assert WordCandidates(store).find(_analysis("In what room is the flower show?"), Scope()) == []
    assert store.reads == 0


def test_a_sentence_that_says_one_of_the_given_values_is_found_by_it():
    """"What time does Omar see the volunteer? 11:15 / ten to five / 9:45": the answer was heard
    as "450 ohmaham and appointment with the Malantiyya." (no word of the question), yet it
    says 4:50 as Whisper writes it. Sentences saying another option's value are found too, those
    holding more of the question's words first; options that are not all values find nothing."""
    store = _Store([
        _memory("garden-cam", 0.0, "After 11.15, Diego has an appointment with the inspector."),
        _memory("garden-cam", 8.0, "450 ohmaham and appointment with the Malantiyya."),
        _memory("garden-cam", 16.0, "The weather looks fine today."),
        _memory("garden-cam", 24.0, "Omar ordered 9 seed packets."),
    ])
    words = WordCandidates(store)
    analysis = _analysis("What time does Omar see the volunteer?")
    found = words.find_values(analysis, ["11:15", "ten to five", "9:45"], Scope())
    assert set(found) == {"garden-cam@0.0", "garden-cam@8.0"}
    # "ohmaham" is not Omar by sound, so neither holds a question word: time order decides
    assert found == ["garden-cam@0.0", "garden-cam@8.0"]
    # "Omar ordered 9 seed packets" holds Omar and the value 9 (as "9:00" is keyed): it leads
    assert words.find_values(analysis, ["9:00", "ten to five"], Scope())[0] == "garden-cam@24.0"
    assert words.find_values(analysis, ["11:15", "the volunteer"], Scope()) == []
    assert words.find_values(analysis, ["11:15", "ten to five"], Scope(stream_ids=("harbour-cam",))) == []


def test_sentences_found_by_a_value_go_in_near_the_top_unless_already_there():
    """The recalled list is long and the value sentence was not in it: it goes in at the fourth
    rank, once (asked again, it is already there), and a sentence of that memory that says no
    value stays out."""
    from episodic.memory.in_memory_store import InMemoryStore
    from episodic.retrieval.detailed import (
        MemoryReader,
        Recall,
        TextScorer,
        Unit,
        with_sentences_of,
    )
    from tests.fakes import HashEmbedder

    store = InMemoryStore()
    store.ensure_schema(4, 4)
    said = _memory("garden-cam", 80.0, "450 ohmaham and appointment with the Malantiyya.")
    said.transcript.append(TranscriptPiece(85.0, 87.0, "The weather looks fine today."))
    store.upsert_memories([said])
    reader = MemoryReader(store)
    recall = Recall(units=[Unit("garden-cam", f"garden-cam@{i}", float(i), i + 1.0, "speech", f"sentence {i}", score=1.0 - i / 20)
                           for i in range(10)], route="feature+text")
    analysis = _analysis("What time does Omar see the volunteer?")
    scorer = TextScorer(HashEmbedder())
    q_vec = HashEmbedder().embed_texts([analysis.question])[0]

    def holds(text: str) -> bool:
        return "4:50" in said_values(text)

    assert with_sentences_of(recall, [said.id], analysis, q_vec, Scope(), reader, scorer, holds) == 1
    assert [u.text for u in recall.units[2:5]] == ["sentence 2", said.transcript[0].text, "sentence 3"]
    assert len(recall.units) == 11
    assert with_sentences_of(recall, [said.id], analysis, q_vec, Scope(), reader, scorer, holds) == 0
    assert len(recall.units) == 11
    # already near the top, it is still marked for hearing again when the caller asks for that
    assert recall.units[3].found_by == ""
    assert with_sentences_of(recall, [said.id], analysis, q_vec, Scope(), reader, scorer, holds,
                             found_by="values") == 0
    assert recall.units[3].text == said.transcript[0].text and recall.units[3].found_by == "values"


def test_sentences_saying_words_of_the_options_are_found_partly_said_first():
    """Nothing said names the anchor ("Emerald move, then go over to the fuel harker here."),
    but the sentence still says "fuel" of the option "fuel dock": it is found, before a sentence
    that says a whole option clearly (most likely about something else); a sentence saying no
    option's word is not found, and options that are values are left to find_values."""
    store = _Store([
        _memory("library-cam", 0.0, "Tom keeps the laptop on the photocopier."),
        _memory("harbour-cam", 8.0, "Emerald move, then go over to the fuel harker here."),
        _memory("harbour-cam", 16.0, "The weather looks fine today."),
    ])
    words = WordCandidates(store)
    analysis = _analysis("Where is the anchor now?")
    options = ["ticket machine", "photocopier", "fuel dock"]
    assert words.find_options(analysis, options, Scope()) == ["harbour-cam@8.0", "library-cam@0.0"]
    assert words.find_options(analysis, options, Scope(stream_ids=("library-cam",))) == ["library-cam@0.0"]
    assert words.find_options(analysis, options, Scope(), limit=1) == ["harbour-cam@8.0"]
    assert words.find_options(analysis, ["11:15", "ten to five"], Scope()) == []
    assert words.find_options(analysis, ["fuel dock"], Scope()) == []  # one option is no choice
    # a sentence holding the question's words comes before either
    store.memories.append(_memory("harbour-cam", 24.0, "The anchor is by the ticket machine."))
    words = WordCandidates(store)
    assert words.find_options(analysis, options, Scope())[0] == "harbour-cam@24.0"


def test_option_words_are_each_options_content_words():
    from episodic.retrieval.word_candidates import option_words, says_option_words

    wanted = option_words(["the fuel dock", "a photocopier"])
    assert wanted == [frozenset(content_terms("fuel dock")), frozenset(content_terms("photocopier"))]
    assert says_option_words("then go over to the fuel harker", wanted)
    assert not says_option_words("the dock of the bay", [frozenset(content_terms("photocopier"))])
    assert option_words(["the", "fuel dock"]) == []  # an option with no content word: no choice by words


def test_a_sentence_about_the_question_that_lost_its_value_to_words_is_found():
    """"The night train is in room two oh eight." heard as "The height really is in room to
    head." keeps "room" and names no number: for a question that gives the numbers, it is found
    (sentences holding more of the question's words first), while sentences that say a value,
    share none of the question's words, or are on-screen text are not; nor is anything for
    options that are not values."""
    from episodic.retrieval.word_candidates import lost_its_value

    store = _Store([
        _memory("station-cam", 0.0, "The Harvest Festival is in room 114."),
        _memory("station-cam", 8.0, "The height really is in room to head."),
        _memory("station-cam", 16.0, "It is quite busy here this morning."),
        _memory("garden-cam", 0.0, "The night bus was in the room earlier."),
    ])
    sign = _memory("garden-cam", 24.0, "")
    sign.frames = [FrameObservation(26.0, ocr_text="ROOM FOR THE NIGHT TRAIN")]
    store.memories.append(sign)
    words = WordCandidates(store)
    analysis = _analysis("Which room is the night train in?")
    options = ["208", "114", "108", "325"]
    assert words.find_values_lost(analysis, options, Scope()) == ["garden-cam@0.0", "station-cam@8.0"]
    assert words.find_values_lost(analysis, options, Scope(), limit=1) == ["garden-cam@0.0"]
    assert words.find_values_lost(analysis, options, Scope(stream_ids=("station-cam",))) == ["station-cam@8.0"]
    assert words.find_values_lost(analysis, ["fuel dock", "sink"], Scope()) == []
    assert lost_its_value(analysis, "The height really is in room to head.")
    assert not lost_its_value(analysis, "The night train is in room 208.")
    assert not lost_its_value(analysis, "It is quite busy here this morning.")
