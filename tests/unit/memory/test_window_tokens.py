"""A decoding window may write no more tokens than its own audio can hold (memory/speech.py).

faster-whisper gives every 30 s window of a call the same ``max_new_tokens``; a window that is
only the last tenth of a second of a joint re-listening pass (the first window's decoding ended
at its last word and sought there) was allowed 227 tokens, and a prompted decoder wrote
"I'm sorry, I'm sorry, …" up to them (2 s of a 4.3 s pass). The model gate reads the window's
audio length from its features and caps ``max_length`` per window.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from episodic.memory import speech
from episodic.memory.speech import TOKENS_MAX, TOKENS_SLACK, window_content_s, window_tokens

pytestmark = pytest.mark.unit


def _features(audio_s: float, batch: bool = True) -> np.ndarray:
    """Log-mel features of a 30 s window holding ``audio_s`` seconds of audio, zero-padded as
    faster-whisper pads them (``pad_or_trim``)."""
    rng = np.random.default_rng(3)
    f = np.zeros((80, 3000), np.float32)
    n = int(round(audio_s * 100))
    f[:, :n] = rng.uniform(-1.0, 1.5, size=(80, n)).astype(np.float32)
    f[:40, max(0, n - 1)] = 0.0  # a frame is audio when any of its bins is not zero
    return f[None] if batch else f


@pytest.mark.parametrize("audio_s", [0.1, 4.0, 14.3, 30.0])
def test_the_window_s_audio_ends_at_its_last_frame_that_is_not_padding(audio_s: float) -> None:
    assert window_content_s(_features(audio_s)) == pytest.approx(audio_s)
    assert window_content_s(_features(audio_s, batch=False)) == pytest.approx(audio_s)


def test_a_window_of_padding_only_holds_no_audio_and_unreadable_features_say_so() -> None:
    assert window_content_s(np.zeros((1, 80, 3000), np.float32)) == 0.0
    assert window_content_s(7) is None  # not features
    assert window_content_s(np.zeros((1, 80, 0), np.float32)) is None


def test_tokens_grow_with_the_audio_from_a_sentence_s_worth_up_to_the_cap() -> None:
    assert window_tokens(0.0) == TOKENS_SLACK
    assert window_tokens(0.1) == TOKENS_SLACK + 1
    assert window_tokens(4.0) == TOKENS_SLACK + 40
    assert window_tokens(29.9) == window_tokens(60.0) == TOKENS_MAX
    assert window_tokens(-1.0) == TOKENS_SLACK


def test_the_gate_caps_each_window_s_tokens_by_that_window_s_audio() -> None:
    asked: list[int] = []
    inner = SimpleNamespace(
        encode=lambda features, **kw: "encoded",
        generate=lambda enc, prompts, **kw: asked.append(kw["max_length"]) or ["result"],
        is_multilingual=False,
    )
    gate = speech._ModelGate(inner, lambda probs: "en")
    prompt = [50258, 50259, 50359, 50363]  # four prompt tokens
    gate.start(None)
    # the first window: 14.3 s of audio, and a whole call's cap (227) above what it can hold
    gate.encode(_features(14.3), to_cpu=False)
    assert gate.generate("encoded", [prompt], beam_size=5, max_length=227) == ["result"]
    # the second: a tenth of a second left after the first one's last word
    gate.encode(_features(0.1), to_cpu=False)
    gate.generate("encoded", [prompt], beam_size=5, max_length=227)
    # a call's own smaller cap is never raised
    gate.encode(_features(29.0), to_cpu=False)
    gate.generate("encoded", [prompt], beam_size=5, max_length=60)
    assert asked == [4 + window_tokens(14.3), 4 + window_tokens(0.1), 60]
    assert asked[1] == 4 + TOKENS_SLACK + 1


def test_without_readable_features_or_a_cap_the_gate_passes_the_call_on_unchanged() -> None:
    asked: list[dict] = []
    inner = SimpleNamespace(encode=lambda features, **kw: None,
                            generate=lambda enc, prompts, **kw: asked.append(kw), is_multilingual=False)
    gate = speech._ModelGate(inner, lambda probs: "en")
    gate.start(None)
    gate.generate("enc", [[1, 2]], max_length=227)  # no window encoded in this call yet
    gate.encode(object())  # features it cannot read
    gate.generate("enc", [[1, 2]], max_length=227)
    gate.encode(_features(0.1))
    gate.generate("enc", [[1, 2]], beam_size=5)  # no max_length given: the model's own
    assert asked == [{"max_length": 227}, {"max_length": 227}, {"beam_size": 5}]


@pytest.mark.parametrize(("said", "loop"), [
    ("I'm sorry I'm sorry I'm sorry I'm sorry I", True),  # a capped music-bed window
    ("you you you you", True),
    ("I don't know. I don't know. I don't know.", True),
    ("No, no, no, that is not the room.", False),  # people say "no" three times
    ("The fire alarm test is at half past two.", False),
    ("go to go to", False),  # too short to tell
    ("Leila will see the head teacher at 1.40. I'm sorry, I'm sorry, I'm sorry", False),  # mostly words
])
def test_a_segment_that_is_mostly_the_repeats_of_a_loop_is_a_loop_however_short(said: str, loop: bool) -> None:
    """Whisper's gzip test needs a long text; a loop cut short by the token cap is still a loop."""
    from episodic.memory.speech import mostly_loop

    assert mostly_loop(said.split()) is loop
