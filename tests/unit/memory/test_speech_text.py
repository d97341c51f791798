"""What the recogniser's text becomes before it is stored (memory/speech.py): a number Whisper
writes against the next word is parted from it, so the number and the word are each found."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from episodic.config import Settings
from episodic.memory.speech import WhisperRecognizer, unglued


@pytest.mark.parametrize(
    ("heard", "stored"),
    [
        ("Only 13tomato plants are left.", "Only 13 tomato plants are left."),
        ("We need 4Tickets.", "We need 4 Tickets."),
        ("Meet at 5pm on the 3rd.", "Meet at 5pm on the 3rd."),  # two letters: a time, an ordinal
        ("Music of the 1990s, room 226, at 4:50.", "Music of the 1990s, room 226, at 4:50."),
        ("MP3 players and COVID19", "MP3 players and COVID19"),  # letters before digits stay
    ],
)
def test_a_number_written_against_a_word_is_parted_from_it(heard: str, stored: str) -> None:
    assert unglued(heard) == stored


def test_the_recogniser_stores_the_parted_text() -> None:
    """In the text and in the timed words: re-listening rebuilds a clip's text from its words
    ("13tomato plants" was an answer before they were parted too)."""
    said = [(0.2, 0.5, " Only"), (0.5, 1.1, " 13tomato"), (1.1, 1.5, " plants"), (1.5, 2.0, " are left.")]
    words = [SimpleNamespace(start=a, end=b, word=w, probability=0.9) for a, b, w in said]
    segment = SimpleNamespace(text=" Only 13tomato plants are left.", start=0.2, end=2.0, words=words,
                              no_speech_prob=0.01, avg_logprob=-0.2, compression_ratio=1.1)
    fake = SimpleNamespace(model=object(), transcribe=lambda x, **kw: (iter([segment]), None))
    recognizer = WhisperRecognizer(Settings())
    recognizer._model = fake  # the decoder's output is given; what the recogniser keeps is checked
    t = np.arange(16000 * 2) / 16000.0
    pieces = recognizer.transcribe((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000, 10.0)
    assert [p.text for p in pieces] == ["Only 13 tomato plants are left."]
    assert pieces[0].t_start == pytest.approx(10.2)
    assert [w for _, _, w in pieces[0].words] == ["Only", "13 tomato", "plants", "are left."]


def test_a_sentence_looped_to_the_window_s_end_keeps_its_first_saying():
    """Whisper, primed by a question, wrote "The soup tasting has moved to room 405" and then
    again and again until its window ended (inside "405"); the first saying is what was said."""
    from episodic.memory.speech import loop_start

    def timed(text: str) -> list[tuple[float, float, str]]:
        return [(float(i), float(i) + 0.5, w) for i, w in enumerate(text.split())]

    said = "The soup tasting has moved to room 405"
    assert loop_start(timed(f"{said} {said} {said} The soup tasting has moved to room 40")) == 8
    assert loop_start(timed(f"{said}. {said} The soup")) == 8  # punctuation and case ignored
    assert loop_start(timed("Well then. The soup is hot the soup is hot the soup is")) == 6
    # no loop: short repeats (Whisper's own check and speech_context handle those), a repeat
    # that stops before the end, nothing repeated
    assert loop_start(timed("go to go to go to")) is None
    assert loop_start(timed("The soup is hot the soup is hot and cold")) is None
    assert loop_start(timed(said)) is None
