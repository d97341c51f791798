"""Minutes told before "past" or "to", misheard, heard from the audio (retrieval/clock_hearing.py).

Unit part: where the slots are (the word or two just before "past"/"to" and an hour, never a
number, a function word or the question's own). End to end (slow): a generated recording says
"quarter past one"; its stored words are overwritten with a hearing that lost the minutes
("… at Florida past one."); the minute words scored against the audio must bring back
"quarter", and the answer's value must then read as a clock time; a sentence whose minutes were
heard ("ten past one") has no slot and its audio is not read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from episodic import samples
from episodic.config import load_settings
from episodic.core.query import QueryType
from episodic.reasoning.short_answer import clean_value, span_in
from episodic.retrieval.clock_hearing import MINUTE_WORDS, ClockListener, minute_slots
from episodic.retrieval.detailed import Recall, Unit
from episodic.retrieval.option_audio import words_of
from episodic.retrieval.query_analysis import (
    QueryAnalysis,
    content_terms,
    key_terms_of,
    object_terms_of,
)
from episodic.retrieval.question_shape import question_shape

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from bench_relisten import overwrite_transcript, speech_memory  # noqa: E402

SENTENCE = "Henrik is meeting the pastry chef at quarter past one."
GARBLED = "Henrik is meeting the pastry chef at Florida past one."
QUESTION = "When does Henrik meet the pastry chef?"


def _analysis(question: str) -> QueryAnalysis:
    terms = content_terms(question)
    return QueryAnalysis(question, QueryType.AUDIO, {}, "", terms, "", key_terms=key_terms_of(question, terms),
                         object_terms=object_terms_of(question), shape=question_shape(question))


@pytest.mark.parametrize(
    ("heard", "slots"),
    [
        (GARBLED, ["Florida"]),  # "at Florida": "at" is a function word
        ("The ferry leaves at closure two past one.", []),  # "two" is minutes heard
        ("The ferry leaves at lovely wee to six.", ["wee", "lovely wee"]),
        ("The ferry leaves at ten past one.", []),  # the minutes were heard
        ("The ferry leaves at half past one.", []),
        ("I will talk to one of them.", []),  # "talk" is no minute, but "to one of them" …
        ("The ferry leaves at Florida past noon.", []),  # no hour after the link
        ("Henrik past one.", []),  # the question's own word
    ],
)
def test_the_minutes_slot_is_just_before_past_or_to_an_hour(heard, slots):
    words = words_of(heard)
    found = [" ".join(words[i : i + n]) for i, n in minute_slots(words, QUESTION)]
    assert found == slots, found


def test_a_time_told_with_minute_words_is_a_clock_time_read():
    unit = Unit("bakery", "bakery@0", 1.0, 4.0, "speech", SENTENCE)
    analysis = _analysis(QUESTION)
    assert clean_value(unit, analysis) and span_in(unit, analysis).text.lower().startswith("quarter past")
    assert not clean_value(Unit("bakery", "bakery@0", 1.0, 4.0, "speech", GARBLED), analysis)


# -- end to end ----------------------------------------------------------------------------
def _recorded(components, root: Path, stream_id: str, said: str, garbled: str):
    """A stream whose one sentence says ``said`` and whose stored words are ``garbled``."""
    from episodic.pipeline import ingest_file

    path = root / f"{stream_id}.mp4"
    samples.make_recording(
        path, [samples.Scene(duration_s=8, seed=5, tint=(150, 120, 90))], [samples.Speech(t=1.0, text=said)],
    )
    ingest_file(path, stream_id, components)
    memory = speech_memory(components.store, stream_id)
    overwrite_transcript(components, memory.id, garbled)
    return components.store.get_memory(memory.id, with_vectors=True)


class _Reader:
    def __init__(self, memory) -> None:
        self.m = memory

    def memory(self, memory_id: str):
        return self.m if memory_id == self.m.id else None


@pytest.fixture(scope="module")
def misheard(tmp_path_factory):
    from episodic.components import Components

    root = tmp_path_factory.mktemp("clock-hearing")
    components = Components(load_settings(data_dir=root / "data"))
    yield components, root
    components.close()


def _hear(components, memory, garbled):
    from episodic.retrieval.relisten import Relistener

    relisten = Relistener(components, components.settings)
    listener = ClockListener(relisten.hear_in_sentence, components.settings, lambda: "base")
    unit = Unit(memory.stream_id, memory.id, memory.transcript[0].t_start, memory.transcript[0].t_end, "speech",
                garbled)
    recall = Recall(units=[unit], route="feature")
    analysis = _analysis(QUESTION)
    out = listener.hear(analysis, QUESTION, unit, recall, _Reader(memory), lambda u: u,
                        lambda u: clean_value(u, analysis), lambda: None)
    return out, recall, unit


@pytest.mark.slow
def test_the_minutes_said_are_heard_where_the_words_lost_them(misheard):
    components, root = misheard
    memory = _recorded(components, root, "bakery", SENTENCE, GARBLED)
    out, recall, _ = _hear(components, memory, GARBLED)
    assert out.taken and out.reason == "heard quarter", out
    assert recall.units[0].text == SENTENCE.rstrip(".") + "." and recall.units[0].hinted
    assert components.store.get_memory(memory.id).transcript_text == GARBLED  # the store is not touched


@pytest.mark.slow
def test_minutes_heard_already_leave_the_audio_unread(misheard):
    components, root = misheard
    said = "Henrik is meeting the pastry chef at ten past one."
    memory = _recorded(components, root, "bakery-2", said, said)
    out, recall, unit = _hear(components, memory, said)
    assert not out.taken and out.reason == "no slot", out
    assert recall.units == [unit]
    assert set(MINUTE_WORDS) >= {"quarter", "half", "twenty-five"}
