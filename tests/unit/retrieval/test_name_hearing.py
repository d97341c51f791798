"""A name heard as no name, heard again among the names its stream says elsewhere
(retrieval/name_hearing.py).

Unit part: which words are no known name, which names a stream says (never the question's own
people, only those a recogniser may have written as the word heard), where the slot is. End to
end (slow): a generated recording says "Ask Priya if you need the backpack."; its stored words
are overwritten with "Ask Priyot …"; scored against the audio with the names said elsewhere,
"Priya" must be heard, in the sentence's place and hinted, the store untouched; a recording
that really says "Priyot" keeps it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from episodic import samples
from episodic.config import load_settings
from episodic.core.query import QueryType
from episodic.reasoning.short_answer import clean_value
from episodic.retrieval.detailed import Recall, Unit
from episodic.retrieval.name_hearing import (
    NameListener,
    heard_as,
    names_said,
    no_known_name,
    slots_of,
)
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

QUESTION = "Whom should you ask about the backpack?"


def _analysis(question: str) -> QueryAnalysis:
    terms = content_terms(question)
    return QueryAnalysis(question, QueryType.AUDIO, {}, "", terms, "", key_terms=key_terms_of(question, terms),
                         object_terms=object_terms_of(question), shape=question_shape(question))


def _said(*texts: str) -> list[Unit]:
    return [Unit("station", f"station@{i}", float(i), i + 2.0, "speech", t) for i, t in enumerate(texts)]


def test_a_word_that_is_no_given_name_is_no_known_name():
    assert no_known_name("Priyot") and no_known_name("Ramen")
    assert not no_known_name("Priya") and not no_known_name("Sophie") and not no_known_name("Mary Ann")
    assert not no_known_name("")


def test_the_names_a_stream_says_that_the_word_heard_may_be():
    said = _said("The ticket inspector and Priya are getting together at ten to one.",
                 "Omar has six tickets.", "Priya left the umbrella here.", "Look, the platform.",
                 "Ask Priyot if you need the backpack.")
    assert names_said(said) == ["Priya", "Omar"]  # most said first; "Look", "Priyot" are no names
    assert names_said(said, like="Priyot") == ["Priya"]  # Omar sounds nothing like it
    assert names_said(said, not_these=["Priya"], like="Priyot") == []  # the question's own person
    assert heard_as("Henrik", "Henry") and heard_as("Priya", "Priyot") and not heard_as("Ravi", "Ramen")


def test_the_slot_is_where_the_word_heard_stands():
    words = words_of("Ask Priyot if you need the backpack.")
    assert slots_of("Priyot")(words, QUESTION, ()) == [(1, 1)]
    assert slots_of("Nobody")(words, QUESTION, ()) == []


# -- end to end ----------------------------------------------------------------------------
def _recorded(components, root: Path, stream_id: str, said: str, garbled: str):
    from episodic.pipeline import ingest_file

    path = root / f"{stream_id}.mp4"
    samples.make_recording(
        path, [samples.Scene(duration_s=8, seed=7, tint=(120, 150, 90))], [samples.Speech(t=1.0, text=said)],
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
def components(tmp_path_factory):
    from episodic.components import Components

    c = Components(load_settings(data_dir=tmp_path_factory.mktemp("name-hearing") / "data"))
    yield c
    c.close()


def _hear(components, memory, heard_text: str, name: str):
    from episodic.retrieval.relisten import Relistener

    relisten = Relistener(components, components.settings)
    listener = NameListener(relisten.hear_in_sentence, components.settings, lambda: "base")
    unit = Unit(memory.stream_id, memory.id, memory.transcript[0].t_start, memory.transcript[0].t_end, "speech",
                heard_text)
    recall = Recall(units=[unit], route="feature")
    analysis = _analysis(QUESTION)
    out = listener.hear(analysis, QUESTION, unit, recall, _Reader(memory), lambda u: u,
                        lambda u: clean_value(u, analysis), lambda: None,
                        words=["Priya", "Priyanka"], slots=slots_of(name), as_heard=name)
    return out, recall, unit


@pytest.mark.slow
def test_the_name_said_is_heard_among_those_said_elsewhere(components, tmp_path):
    garbled = "Ask Priyot if you need the backpack."
    memory = _recorded(components, tmp_path, "station", "Ask Priya if you need the backpack.", garbled)
    out, recall, _ = _hear(components, memory, garbled, "Priyot")
    assert out.taken and out.reason == "heard Priya", out
    assert recall.units[0].text == "Ask Priya if you need the backpack." and recall.units[0].hinted
    assert components.store.get_memory(memory.id).transcript_text == garbled  # the store is not touched


@pytest.mark.slow
def test_a_word_the_audio_carries_as_heard_stays(components, tmp_path):
    said = "Ask Pirelli if you need the backpack."
    memory = _recorded(components, tmp_path, "station-2", said, said)
    out, recall, unit = _hear(components, memory, said, "Pirelli")
    assert not out.taken, out
    assert recall.units == [unit]
