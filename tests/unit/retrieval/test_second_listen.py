"""A second opinion on a value the hearing garbled (retrieval/second_listen.py).

Unit parts: which answers ask for one (a time, number, name or colour question whose answer
rests on a transcript sentence holding no clean value of that kind) and what counts as clean.
End to end (slow): a generated recording is ingested, its stored words overwritten with what a
weak hearing made of them ("… between Matip 35." for "… at eight thirty-five."); the time
question must come back with the time heard by the second model, its attempt recorded as a
version and reused when asked again, the stored words untouched; with the second model off the
answer stays the bare number.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from episodic import samples
from episodic.config import load_settings
from episodic.core.query import AskRequest, QueryType
from episodic.reasoning.short_answer import clean_value
from episodic.retrieval.detailed import Unit
from episodic.retrieval.query_analysis import (
    QueryAnalysis,
    content_terms,
    key_terms_of,
    object_terms_of,
)
from episodic.retrieval.question_shape import question_shape
from episodic.retrieval.second_listen import SOURCE, wants_second_opinion
from episodic.services.qa import HINTED_CONFIDENCE_CAP

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from bench_relisten import holds, overwrite_transcript, speech_memory  # noqa: E402

SENTENCE = "Please remember that the ferry crossing begins at eight thirty-five."
GARBLED = "Please remember not the ferry crossing between Matip 35."
QUESTION = "When is the ferry crossing starting?"


def _analysis(question: str) -> QueryAnalysis:
    terms = content_terms(question)
    return QueryAnalysis(question, QueryType.AUDIO, {}, "", terms, "", key_terms=key_terms_of(question, terms),
                         object_terms=object_terms_of(question), shape=question_shape(question))


def _unit(text: str, modality: str = "speech") -> Unit:
    return Unit("harbour", "harbour@0", 0.0, 4.0, modality, text)


@pytest.mark.parametrize(
    ("question", "caps", "modality", "asked"),
    [
        (QUESTION, {"span": 1.0, "kind": 0.8}, "speech", True),  # "35": a bare number for a time
        ("Which person is fixing the net?", {"span": 0.7, "kind": 1.0}, "speech", True),  # quoted: no name
        ("Which colour is the anchor that Tom painted?", {"span": 0.8, "kind": 0.5}, "speech", True),
        (QUESTION, {"span": 1.0, "kind": 1.0}, "speech", False),  # a clean time: nothing to ask
        (QUESTION, {"span": 0.7, "kind": 0.8}, "summary", False),  # not a sentence with its own audio
        ("Where did Sofia put the lamp?", {"span": 0.7, "kind": 1.0}, "speech", False),  # a place: open-ended
    ],
)
def test_a_second_opinion_is_asked_only_for_a_value_heard_unclean(question, caps, modality, asked):
    unit = _unit("Please remember not the ferry crossing between Matip 35.", modality)
    assert (wants_second_opinion(_analysis(question), caps, [unit]) is unit) is asked
    assert wants_second_opinion(_analysis(question), caps, []) is None


@pytest.mark.parametrize(
    ("question", "heard", "clean"),
    [
        (QUESTION, "Please remember, the ferry crossing begins at 8.35.", True),
        (QUESTION, "The ferry crossing starts at 1.0 am.", False),  # "one oh five" misheard again
        (QUESTION, "The ferry crossing starts at 15.", False),  # a bare hour is a guess
        ("Which colour is the anchor that Tom painted?", "Tom painted the anchor purple.", True),
        ("Which colour is the anchor that Tom painted?", "Tom painted the anchor purble.", False),  # sounds like
        ("Which person is fixing the net?", "Diego is repairing the net.", True),
        ("Which person is fixing the net?", "There you go, it's repairing the net.", False),
    ],
)
def test_a_clean_value_is_read_not_guessed(question, heard, clean):
    assert clean_value(_unit(heard), _analysis(question)) is clean


def test_a_second_opinion_is_reused_only_for_the_same_sentence_model_and_words():
    import numpy as np

    from episodic.core.records import ShortTermMemory, TranscriptPiece
    from episodic.retrieval.transcript_versions import cached_version, record_version

    m = ShortTermMemory("harbour@0", "harbour", 0.0, 12.0, np.zeros(4, np.float32),
                        transcript=[TranscriptPiece(1.0, 4.0, GARBLED), TranscriptPiece(6.0, 9.0, "Another one.")])
    ingest = {"source": "ingest", "model": "base", "hotwords": [], "text": GARBLED, "adopted": True}
    heard = {"source": SOURCE, "model": "tiny", "hotwords": ["crossing", "ferry", "starting"],
             "span": [0.7, 4.3], "text": "… at 8.35", "adopted": False}
    record_version(m, heard, ingest)
    words = ["ferry", "crossing"]
    assert cached_version(m, "tiny", words, source=SOURCE, span=(0.7, 4.3))["text"] == "… at 8.35"
    assert cached_version(m, "tiny", words, source=SOURCE, span=(5.7, 9.3)) is None  # the memory's other sentence
    assert cached_version(m, "tiny", words) is None  # a re-listening cache never takes it
    assert cached_version(m, "base", words, source=SOURCE, span=(0.7, 4.3)) is None  # another model


# -- end to end ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def misheard(tmp_path_factory):
    from episodic.components import Components
    from episodic.pipeline import ingest_file

    root = tmp_path_factory.mktemp("second-listen")
    components = Components(load_settings(data_dir=root / "data"))
    path = root / "harbour.mp4"
    samples.make_recording(
        path, [samples.Scene(duration_s=9, seed=7, tint=(80, 110, 140))],
        [samples.Speech(t=1.0, text=SENTENCE)],
    )
    ingest_file(path, "harbour", components)
    memory = speech_memory(components.store, "harbour")
    yield components, memory
    components.close()


def _ask(components, memory, heard: str = GARBLED, **settings):
    from episodic.services.qa import MemoryQA

    overwrite_transcript(components, memory.id, heard)
    service = MemoryQA(components, warm_after_request=False)
    service.settings = service.settings.replace(**settings)
    service.relisten.settings = service.second_listen.settings = service.settings
    return service, *service.ask_traced(AskRequest(QUESTION))


@pytest.mark.slow
def test_the_second_model_hears_the_time_the_first_left_a_bare_number(misheard):
    components, memory = misheard
    # without the second opinion: the bare number the stored words hold
    _, off, off_trace = _ask(components, memory, relisten_second_whisper_model="")
    assert holds(off.answer, "35") and not holds(off.answer, "8:35"), off.answer
    assert off_trace.notes["second_listen"]["reason"] == "off"

    service, result, trace = _ask(components, memory)
    heard = trace.notes["second_listen"]
    assert heard["taken"] and heard.get("answered"), heard
    assert "tiny.en" in heard["model"] and not heard["cached"]
    assert holds(result.answer, "8:35"), result.answer
    assert "second_listen" in result.timings_ms
    assert result.confidence <= HINTED_CONFIDENCE_CAP  # it rests on words another model offered
    speech = [e.text for e in result.evidence if e.modality == "speech"]
    assert speech and holds(speech[0], "8:35"), result.evidence

    # recorded as a version with the model that made it; the stored words stay the old ones
    stored = components.store.get_memory(memory.id)
    assert stored.transcript_text == GARBLED
    versions = [v for v in stored.metadata["transcripts"] if v.get("source") == SOURCE]
    assert len(versions) == 1 and not versions[0]["adopted"] and versions[0]["model"] == heard["model"]
    assert holds(versions[0]["text"], "8:35")

    # asked again: the recorded version answers, nothing is heard again
    again, trace2 = service.ask_traced(AskRequest(QUESTION))
    assert trace2.notes["second_listen"]["cached"] and holds(again.answer, "8:35"), trace2.notes["second_listen"]
    stored = components.store.get_memory(memory.id)
    assert len([v for v in stored.metadata["transcripts"] if v.get("source") == SOURCE]) == 1


@pytest.mark.slow
def test_a_time_heard_with_round_minutes_is_completed_by_the_second_model(misheard):
    """"eight thirty-five" stored as "8.30" (Whisper base's way with such times): the second
    model hears the sentence again and its "8.35" answers, as a hinted answer; stored as
    "8.50", another time, its hearing completes nothing and the stored time stands."""
    components, memory = misheard
    _, result, trace = _ask(components, memory, "Please remember that the ferry crossing begins at 8.30.")
    heard = trace.notes["second_listen"]
    assert heard["taken"] and heard.get("answered"), heard
    assert holds(result.answer, "8:35") and result.confidence <= HINTED_CONFIDENCE_CAP, result.answer
    _, result, trace = _ask(components, memory, "Please remember that the ferry crossing begins at 8.50.")
    assert not trace.notes["second_listen"]["taken"], trace.notes["second_listen"]
    assert holds(result.answer, "8:50"), result.answer


class _Reader:
    """The one memory a test hands the listener, as MemoryReader would read it."""

    def __init__(self, memory) -> None:
        self.m = memory

    def memory(self, memory_id: str):
        return self.m if memory_id == self.m.id else None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "left_s", "reason"),
    [
        ("snippet gone", None, "no audio"),  # the file is not on disk: nothing heard, nothing lost
        ("no snippets", None, "no stored audio"),  # an audio-less memory
        ("german", None, "an English-only model, speech in 'de'"),
        (None, 0.2, "no time left"),  # the deadline is all but spent
    ],
)
def test_what_cannot_be_heard_again_changes_nothing(misheard, change, left_s, reason):
    from dataclasses import replace as copy

    from episodic.core.records import SnippetRef
    from episodic.retrieval.detailed import Recall
    from episodic.retrieval.second_listen import SecondListener

    components, memory = misheard
    overwrite_transcript(components, memory.id, GARBLED)
    m = components.store.get_memory(memory.id, with_vectors=True)
    if change == "snippet gone":
        m.snippets = [SnippetRef(s.uri.replace(".mp4", "-gone.mp4"), s.t_start, s.t_end) for s in m.snippets]
    elif change == "no snippets":
        m.snippets = []
    elif change == "german":
        m.transcript = [copy(p, language="de") for p in m.transcript]
    unit = Unit(m.stream_id, m.id, m.transcript[0].t_start, m.transcript[0].t_end, "speech", GARBLED)
    recall = Recall(units=[unit], route="feature")
    listener = SecondListener(components, components.settings, lambda *a: pytest.fail("nothing to record"))
    out = listener.hear(_analysis(QUESTION), QUESTION, unit, recall, _Reader(m), lambda u: u,
                        lambda u: True, lambda: left_s)
    assert out.reason == reason and not out.taken, out
    assert recall.units == [unit]
