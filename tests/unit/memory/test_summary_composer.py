"""Composed summaries (issue 12, faithful summaries): nothing the memory does not hold."""

import numpy as np

from episodic.config import Settings
from episodic.core.records import (
    FrameObservation,
    ShortTermMemory,
    SoundObservation,
    TranscriptPiece,
)
from episodic.memory.replay import SemanticReplay, summariser_mode
from episodic.memory.summary_composer import (
    compose_summary,
    content_words,
    grounded_share,
    key_sentence,
)


def _memory(**kw) -> ShortTermMemory:
    base = dict(id="cam@000000000000", stream_id="cam", t_start=0.0, t_end=8.0, vector=np.ones(4, np.float32))
    base.update(kw)
    return ShortTermMemory(**base)


def test_key_sentence_prefers_names_and_numbers():
    text = "Okay so. Well it is nice. The fire alarm test is at 2:30 in Building North. Thanks."
    assert key_sentence(text, max_words=12) == "The fire alarm test is at 2:30 in Building North"
    # within the budget other informative sentences join, in spoken order; fillers do not
    assert key_sentence(text, max_words=30) == "The fire alarm test is at 2:30 in Building North"
    two = "Meet Anna at noon. Okay. Bring the blue folder."
    assert key_sentence(two) == "Meet Anna at noon. Bring the blue folder"
    long = " ".join(["word"] * 50) + "."
    assert key_sentence(long).endswith("…") and len(key_sentence(long).split()) == 31
    assert key_sentence("") == ""


def test_a_point_inside_a_number_does_not_end_the_quoted_sentence():
    # split at "3.", the quote read "At 3. 20, Tom …": three o'clock to an answerer
    said = "At 3.20, Tom has an appointment with the caretaker. It costs 4.50 euros."
    assert key_sentence(said) == "At 3.20, Tom has an appointment with the caretaker. It costs 4.50 euros"
    assert key_sentence("Hello there Anna. See you at 8.15!") == "Hello there Anna. See you at 8.15!"


def test_composed_summary_is_grounded_in_every_part_of_the_memory():
    m = _memory(
        transcript=[
            TranscriptPiece(0.5, 3.0, "This is Milo."),
            TranscriptPiece(3.2, 6.0, "He sleeps on the kitchen table every afternoon at four."),
        ],
        frames=[
            FrameObservation(t=1.0, labels=[("cat", 0.8)], ocr_text="KITCHEN", people=2),
            FrameObservation(t=4.0, labels=[("cat", 0.7)], quality=""),
            FrameObservation(t=6.0, labels=[("nematode", 0.9)], quality="dark"),  # rejected frame
        ],
        sounds=[
            SoundObservation(0.0, 4.0, "speech", 0.9, "speech"),
            SoundObservation(4.0, 8.0, "music", 0.8, "music playing"),
        ],
        metadata={"motion": "camera panning"},
    )
    s = compose_summary(m)
    assert '"This is Milo. He sleeps on the kitchen table every afternoon at four"' in s
    assert '"KITCHEN"' in s
    assert "two people" in s and "a cat" in s and "camera panning" in s
    assert "music playing" in s
    assert "nematode" not in s  # a label from a frame the quality gate rejected
    assert "speech" not in s.split("Heard:")[-1]
    assert grounded_share(s, m) == 1.0


def test_grounding_share_catches_invented_words():
    m = _memory(transcript=[TranscriptPiece(0, 3, "The salmon costs nine dollars.")])
    assert grounded_share("Someone says salmon costs nine dollars.", m) == 1.0
    # the 135M model's kind of summary: "market", "failed" are not in the memory
    share = grounded_share("The fish market failed by a dollar in salmon.", m)
    assert 0 < share < 0.5
    assert "someone" not in content_words("Someone says hello")


def test_empty_memory_has_a_plain_summary():
    assert compose_summary(_memory()).startswith("A stretch of the recording")


class _ExplodingLLM:
    model_id = "never"

    def generate(self, *a, **k):  # pragma: no cover - must not be called
        raise AssertionError("composed summaries must not call the model")


class _Embedder:
    model_id = "e"
    dim = 4

    def embed_texts(self, texts):
        return np.ones((len(texts), 4), np.float32) / 2


def test_replay_composes_on_the_local_default_without_loading_the_model():
    settings = Settings()
    assert summariser_mode(settings) == "composed"
    assert summariser_mode(Settings(llm="openai")) == "model"
    assert summariser_mode(Settings(llm="openai", summariser="composed")) == "composed"
    factory_calls = []

    def factory():
        factory_calls.append(1)
        return _ExplodingLLM()

    replay = SemanticReplay(settings, factory, _Embedder())
    event = replay.replay(_memory(transcript=[TranscriptPiece(0, 2, "Meet Anna at noon.")]))
    assert event.summary == 'Someone says "Meet Anna at noon".'
    assert event.metadata["summariser"] == "composed"
    assert factory_calls == []
