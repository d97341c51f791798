"""Consolidation, replay guards, key frames and ids: the model-free logic of memory/."""

import cv2
import numpy as np
import pytest

from episodic.core.errors import InputError
from episodic.core.media import SampledFrame
from episodic.core.records import (
    EmbeddingEntry,
    ShortTermMemory,
    TranscriptPiece,
    memory_id,
    normalise,
    stream_id_from_name,
    validate_stream_id,
)
from episodic.memory.consolidation import Consolidator, cosine
from episodic.memory.keyframes import changes, ocr_mask, select_keyframes
from episodic.memory.replay import _unsupported_terms, clean_summary, is_faithful


def _mem(t0: float, t1: float, vec, text: str = "") -> ShortTermMemory:
    v = normalise(np.asarray(vec, dtype=np.float32))
    return ShortTermMemory(
        id=memory_id("cam", t0),
        stream_id="cam",
        t_start=t0,
        t_end=t1,
        vector=v,
        embeddings=[EmbeddingEntry(t0, t1, "visual", text, v)],
        transcript=[TranscriptPiece(t0, t1, text)] if text else [],
    )


def test_consolidation_merges_similar_and_keeps_different():
    c = Consolidator(gamma=0.85, max_span_s=60)
    out = []
    out += c.add(_mem(0, 8, [1, 0, 0], "hello"))
    out += c.add(_mem(8, 16, [0.99, 0.05, 0], "still here"))  # cos > 0.85 → merged
    out += c.add(_mem(16, 24, [0, 1, 0], "new scene"))  # different → closes the first
    out += c.finish()
    assert [(m.t_start, m.t_end) for m in out] == [(0, 16), (16, 24)]
    first = out[0]
    assert first.transcript_text == "hello still here"  # nothing lost in the merge
    assert len(first.embeddings) == 2 and first.metadata["merged_segments"] == [[8, 16]]
    assert c.kept == 2 and c.merged == 1


def test_consolidation_threshold_is_strict_and_span_bounded():
    c = Consolidator(gamma=0.85, max_span_s=20)
    a = _mem(0, 10, [1, 0])
    b = _mem(10, 20, [np.cos(0.6), np.sin(0.6)])  # cos ≈ 0.825 < 0.85 → kept separately
    assert cosine(a.vector, b.vector) < 0.85
    assert c.add(a) == [] and c.add(b) == [a]
    c = Consolidator(gamma=0.85, max_span_s=20)
    out = c.add(_mem(0, 10, [1, 0])) + c.add(_mem(10, 20, [1, 0])) + c.add(_mem(20, 30, [1, 0]))
    out += c.finish()
    assert [(m.t_start, m.t_end) for m in out] == [(0, 20), (20, 30)]


def test_replay_guards():
    src = 'a street sign; on-screen text: "NORTH BRIDGE" the truck arrives at 7:45'
    assert _unsupported_terms("A truck arrives at the North Bridge at 7:45.", src) == []
    assert _unsupported_terms("A truck arrives in Boston at 9:30.", src) == ["Boston", "9:30"]
    assert clean_summary('Summary: "A truck arrives at the bridge. Then more text."') == (
        "A truck arrives at the bridge."
    )
    speech = "the truck arrives at 7:45"
    assert is_faithful("The truck arrives at the North Bridge at 7:45.", src, speech)
    assert not is_faithful("The story is set at a restaurant.", src, speech)  # invented, ignores speech
    assert not is_faithful("A truck.", src, speech)  # too short to be a summary


def test_keyframes_skip_redundant_frames():
    rng = np.random.default_rng(0)
    a = rng.random((90, 160), dtype=np.float32)
    b = rng.random((90, 160), dtype=np.float32)
    frames = [SampledFrame(t, np.zeros((4, 4, 3), np.uint8), g) for t, g in [(0, a), (1, a), (2, b), (3, b)]]
    kept = select_keyframes(frames, redundancy=0.3, max_frames=4)
    assert [f.t for f in kept] == [0, 2]
    assert len(select_keyframes(frames * 5, 0.3, 3)) <= 3
    assert ocr_mask(4, 2) == [True, False, False, True] and ocr_mask(0, 2) == []



def _slide(words: str, seed: int) -> np.ndarray:
    """A white slide with large black words, 640 × 360 with a little sensor grain, as the sampler's
    160 px grey copy."""
    img = np.full((360, 640), 235, np.uint8)
    cv2.putText(img, words, (40, 200), cv2.FONT_HERSHEY_SIMPLEX, 3.0, 20, 8, cv2.LINE_AA)
    grain = np.random.default_rng(seed).normal(0, 3, img.shape)
    img = np.clip(img + grain, 0, 255).astype(np.uint8)
    return cv2.resize(img, (160, 90), interpolation=cv2.INTER_AREA).astype(np.float32) / 255


def test_a_new_sign_on_the_same_background_is_a_key_frame():
    closed, closed_again, gate = _slide("CLOSED ON MONDAYS", 1), _slide("CLOSED ON MONDAYS", 2), _slide("GATE 13", 3)
    whole, part = changes(closed, gate)
    assert whole < 0.3 < 0.55 < part  # too alike as a whole for the old rule; one part is not
    frames = [SampledFrame(float(t), np.zeros((4, 4, 3), np.uint8), g)
              for t, g in enumerate([closed, closed_again, gate, gate])]
    assert [f.t for f in select_keyframes(frames, 0.3, 4, local_change=0.55)] == [0.0, 2.0]
    assert [f.t for f in select_keyframes(frames, 0.3, 4)] == [0.0]  # the rule off: one slide read

def test_ids_are_deterministic_and_stream_ids_validated():
    assert memory_id("cam-1", 12.3456) == memory_id("cam-1", 12.3456) == "cam-1@000000012346"
    assert stream_id_from_name("My Clip (1).mp4") == "My-Clip-1"
    assert stream_id_from_name("???.mp4").startswith("stream-")
    for bad in ["", "a b", "a\n", 'x" or 1==1', "../etc", "a" * 129, "-lead"]:
        with pytest.raises(InputError):
            validate_stream_id(bad)


def test_consolidation_needs_alike_key_frames_when_both_have_them():
    """Alike text vectors (frames with nothing nameable read "a scene; colours: grey") but
    different pixels: two shots stay two memories; the same shot merges."""
    shot_a, shot_b = np.eye(8, dtype=np.float32)[0], np.eye(8, dtype=np.float32)[1]
    first, other, same = _mem(0, 10, [1, 0]), _mem(10, 20, [1, 0]), _mem(20, 30, [1, 0])
    first.frame_features = [(1.0, shot_a)]
    other.frame_features = [(11.0, shot_b)]
    same.frame_features = [(21.0, shot_b * 3)]
    c = Consolidator(gamma=0.85, max_span_s=60, frame_cos=0.88)
    out = c.add(first) + c.add(other) + c.add(same) + c.finish()
    assert [(m.t_start, m.t_end) for m in out] == [(0, 10), (10, 30)]
    # without the frame rule (or without key frames) text alone decides, as before
    plain = Consolidator(gamma=0.85, max_span_s=60)
    out = plain.add(_mem(0, 10, [1, 0])) + plain.add(_mem(10, 20, [1, 0])) + plain.finish()
    assert len(out) == 1


def test_representative_vector_gives_each_modality_an_equal_say():
    from episodic.core.records import representative_of

    frames = [EmbeddingEntry(0, 1, "visual", "a scene", np.array([1.0, 0.0], np.float32))] * 6
    speech = [EmbeddingEntry(0, 1, "speech", "hello", np.array([0.0, 1.0], np.float32))]
    v = representative_of(frames + speech)
    assert v[0] == pytest.approx(v[1])  # six frames do not outvote one sentence
    assert representative_of([]) is None
