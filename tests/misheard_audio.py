"""What the tests of hearing a word again from the audio share (colours, minutes, names):
a generated recording whose one sentence's stored words are overwritten with a hearing that
lost the word, a reader that hands out that one memory, and a question's analysis."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from episodic import samples
from episodic.config import load_settings
from episodic.core.query import QueryType
from episodic.reasoning.short_answer import clean_value
from episodic.retrieval.detailed import Recall, Unit
from episodic.retrieval.query_analysis import (
    QueryAnalysis,
    content_terms,
    key_terms_of,
    object_terms_of,
)
from episodic.retrieval.question_shape import question_shape

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_relisten import overwrite_transcript, speech_memory  # noqa: E402


def analysis_of(question: str) -> QueryAnalysis:
    """A question about speech, analysed as the query analyser would for these tests."""
    terms = content_terms(question)
    return QueryAnalysis(question, QueryType.AUDIO, {}, "", terms, "", key_terms=key_terms_of(question, terms),
                         object_terms=object_terms_of(question), shape=question_shape(question))


@contextmanager
def fresh_components(tmp_path_factory, name: str) -> Iterator[tuple[object, Path]]:
    """Components over a new data folder under a temporary ``name`` folder, and that folder
    (where :func:`misheard_recording` writes its recordings); closed afterwards."""
    from episodic.components import Components

    root = tmp_path_factory.mktemp(name)
    components = Components(load_settings(data_dir=root / "data"))
    try:
        yield components, root
    finally:
        components.close()


def misheard_recording(components, root: Path, stream_id: str, said: str, garbled: str,
                       tint: tuple[int, int, int] = (90, 120, 150)):
    """Ingest a stream whose one sentence says ``said``; store ``garbled`` as its words; return
    the memory as stored (with vectors)."""
    from episodic.pipeline import ingest_file

    path = root / f"{stream_id}.mp4"
    samples.make_recording(
        path, [samples.Scene(duration_s=8, seed=5, tint=tint)], [samples.Speech(t=1.0, text=said)],
    )
    ingest_file(path, stream_id, components)
    memory = speech_memory(components.store, stream_id)
    overwrite_transcript(components, memory.id, garbled)
    return components.store.get_memory(memory.id, with_vectors=True)


class OneMemoryReader:
    """The one memory a test hands a listener, as MemoryReader would read it."""

    def __init__(self, memory) -> None:
        self.m = memory

    def memory(self, memory_id: str):
        return self.m if memory_id == self.m.id else None


def hear_again(listener_type, components, memory, heard: str, question: str, settings=None,
               left_s: float | None = None, before: Sequence[Unit] = (), **given):
    """Ask a word-set listener (``listener_type``, e.g. ColourListener) about ``memory``'s one
    sentence, stored as ``heard``, recalled after ``before``; ``given`` goes to its ``hear``
    (a name listener's words, slots and the word as heard). Returns (record, recall, unit)."""
    from episodic.retrieval.relisten import Relistener

    s = settings or components.settings
    listener = listener_type(Relistener(components, s).hear_in_sentence, s, lambda: "base")
    first = memory.transcript[0]
    unit = Unit(memory.stream_id, memory.id, first.t_start, first.t_end, "speech", heard)
    recall = Recall(units=[*before, unit], route="feature")
    analysis = analysis_of(question)
    out = listener.hear(analysis, question, unit, recall, OneMemoryReader(memory), lambda u: u,
                        lambda u: clean_value(u, analysis), lambda: left_s, **given)
    return out, recall, unit
