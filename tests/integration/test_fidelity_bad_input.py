"""Odd recordings and odd questions through the real in-process pipeline (issue 12, "Bad
input"): silence only, music only, German speech, clipped speech, black video, frozen video,
then multiple-choice questions whose options are all absent from the memory or are numbers
written in another form than the one heard.

Each recording is generated here (≤ 8 s), ingested once with the default models into one
Milvus Lite store, and its records are read back from the store, so what is checked is what a
later question would see. Re-listening under a deadline is covered in tests/unit/retrieval/test_relisten.py.
"""

from __future__ import annotations

import wave
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from episodic import sample_sounds, samples
from episodic.components import Components
from episodic.config import load_settings
from episodic.core.query import AskRequest, Scope
from episodic.core.records import ShortTermMemory, ThetaEvent
from episodic.memory.summary_composer import grounded_share
from episodic.pipeline import ingest_file
from episodic.services.qa import MemoryQA

pytestmark = pytest.mark.slow

RATE = 16000
ROOM_TONE_DBFS = -60.0  # what a quiet microphone hears between words


def _room_tone(duration_s: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 10 ** (ROOM_TONE_DBFS / 20), round(duration_s * RATE)).astype(np.float32)


def _with_speech(duration_s: float, text: str, voice: str, seed: int, t0: float = 1.0) -> np.ndarray:
    track = _room_tone(duration_s, seed)
    spoken = samples.synthesize(text, voice=voice, wpm=150, rate_hz=RATE)
    start = round(t0 * RATE)
    end = min(track.size, start + spoken.size)
    assert end - start == spoken.size, "the sentence must fit in the clip"
    track[start:end] += spoken
    return track


def _write_wav(path: Path, track: np.ndarray) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes((np.clip(track, -1.0, 1.0) * 32767).astype("<i2").tobytes())


def _write_video(path: Path, frames: list[np.ndarray], fps: int = 25) -> None:
    """A video-only .mp4 of the given RGB frames (libx264, as cameras write)."""
    h, w = frames[0].shape[:2]
    with av.open(str(path), mode="w") as out:
        stream = out.add_stream("libx264", rate=fps, options={"preset": "veryfast", "g": "50"})
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.codec_context.time_base = Fraction(1, fps)
        for i, img in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = i
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


GERMAN = "Der Zug nach Hamburg fährt heute um neun Uhr ab."
LOUD = "Please lock the garage door before midnight."
LOUD_KEYS = ("lock", "garage", "door", "midnight")
BUS = "The bus leaves at eight fifteen."


def _make_media(d: Path) -> dict[str, Path]:
    """stream id → file; every file ≤ 8 s."""
    files: dict[str, Path] = {}
    # digital silence: all-zero samples (no room tone either)
    files["silence"] = d / "silence.wav"
    _write_wav(files["silence"], np.zeros(6 * RATE, np.float32))
    # music only: a seed the sound rules were not tuned on (dev seeds 0–23)
    files["music"] = d / "music.wav"
    _write_wav(files["music"], _room_tone(8.0, 1) + sample_sounds.music(8.0, RATE, seed=3117))
    files["german"] = d / "german.wav"
    _write_wav(files["german"], _with_speech(7.0, GERMAN, "de", seed=2))
    # clipped: ×20 gain then hard clipping at full scale (a shouting voice into a cheap mic)
    files["loud"] = d / "loud.wav"
    _write_wav(files["loud"], np.clip(_with_speech(6.0, LOUD, "en-us+m3", seed=3) * 20.0, -1.0, 1.0))
    files["bus"] = d / "bus.wav"
    _write_wav(files["bus"], _with_speech(5.0, BUS, "en-gb-x-rp", seed=4))
    # black video with no audio track: 6 s of all-zero frames
    files["black"] = d / "black.mp4"
    _write_video(files["black"], [np.zeros((240, 320, 3), np.uint8)] * (6 * 25))
    # frozen video: one textured picture repeated for 6 s, no audio
    files["frozen"] = d / "frozen.mp4"
    samples.make_recording(files["frozen"], [samples.Scene(6.0, seed=4242, static=True)], audio=False)
    return files


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """(components, {stream id: (memories with vectors, events)}) after one ingest of all."""
    root = tmp_path_factory.mktemp("fidelity-bad")
    components = Components(load_settings(data_dir=root / "data"))
    records: dict[str, tuple[list[ShortTermMemory], list[ThetaEvent]]] = {}
    try:
        for stream_id, path in _make_media(root).items():
            ingest_file(path, stream_id, components)
            memories = components.store.list_memories(stream_id, with_vectors=True)
            events = components.store.list_events(stream_id)
            assert memories and len(events) == len(memories), stream_id
            records[stream_id] = (memories, events)
        yield components, records
    finally:
        components.close()


@pytest.fixture(scope="module")
def qa(ingested):
    components, _ = ingested
    service = MemoryQA(components)
    service.prepare()
    return service


def _summaries_grounded(memories: list[ShortTermMemory], events: list[ThetaEvent]) -> None:
    by_memory = {m.id: m for m in memories}
    for e in events:
        assert grounded_share(e.summary, by_memory[e.memory_id]) == 1.0, e.summary


def test_silence_only(ingested):
    memories, events = ingested[1]["silence"]
    assert all(m.transcript == [] for m in memories), [m.transcript for m in memories]
    assert {o.kind for m in memories for o in m.sounds} <= {"silence"}
    assert all(not m.frames for m in memories)
    for e in events:
        assert "says" not in e.summary and '"' not in e.summary, e.summary
    _summaries_grounded(memories, events)


def test_music_only(ingested):
    memories, events = ingested[1]["music"]
    assert all(m.transcript_text == "" for m in memories), [m.transcript_text for m in memories]
    music = [o for m in memories for o in m.sounds if o.kind == "music"]
    assert sum(o.t_end - o.t_start for o in music) >= 4.0, [m.sounds for m in memories]
    assert any("music" in e.summary.lower() for e in events), [e.summary for e in events]
    assert all('"' not in e.summary for e in events), [e.summary for e in events]
    _summaries_grounded(memories, events)


def test_german_speech(ingested):
    memories, events = ingested[1]["german"]
    text = " ".join(m.transcript_text for m in memories)
    assert len(text.split()) >= 4, text
    # the place name survives whichever language the recogniser settled on
    assert "hamburg" in text.lower(), text
    languages = {p.language for m in memories for p in m.transcript} | {
        str(lang) for m in memories for lang in m.metadata.get("languages", [])
    }
    languages.discard("")
    assert not languages or "de" in languages, languages
    _summaries_grounded(memories, events)


@pytest.mark.xfail(
    reason="known limitation: Whisper base is unsure of the language of a short espeak-ng German "
    "clip (top guess Mongolian, p≈0.24), so the English fallback decodes it as an invented "
    "English sentence ('Let's go to Hamburg and hear it from the new map.')",
    strict=False,
)
def test_german_speech_is_written_in_german(ingested):
    memories, _ = ingested[1]["german"]
    words = set(" ".join(m.transcript_text for m in memories).lower().replace(".", " ").split())
    assert len(words & {"der", "zug", "nach", "fährt", "heute", "um", "neun", "uhr", "ab"}) >= 3, words


def test_clipped_loud_speech(ingested):
    memories, events = ingested[1]["loud"]
    heard = " ".join(m.transcript_text for m in memories).lower()
    assert sum(k in heard for k in LOUD_KEYS) >= 3, heard
    _summaries_grounded(memories, events)


def test_black_video(ingested):
    memories, events = ingested[1]["black"]
    frames = [f for m in memories for f in m.frames]
    assert frames and all(f.quality == "dark" for f in frames), frames
    assert all(not f.labels and not f.ocr_text and f.people == 0 for f in frames), frames
    assert all(m.transcript == [] and m.sounds == [] for m in memories)
    for e in events:
        assert "Seen:" not in e.summary and "On screen" not in e.summary, e.summary
    _summaries_grounded(memories, events)


def test_frozen_video(ingested):
    memories, events = ingested[1]["frozen"]
    assert len(memories) == 1, [(m.t_start, m.t_end) for m in memories]
    assert 1 <= len(memories[0].frames) <= 2, memories[0].keyframe_times
    assert memories[0].metadata.get("motion") == "still", memories[0].metadata
    _summaries_grounded(memories, events)


def test_options_all_absent_from_memory(qa):
    """The API contract (README "Refusing and confidence"): a multiple-choice question always
    gets exactly one option, at low confidence when nothing supports any."""
    options = ("Paris", "Tokyo", "Lima")
    res = qa.ask(AskRequest("Which city was mentioned?", options=options))
    assert res.choice_index in (0, 1, 2), res
    assert res.confidence < 0.5, res
    # asked without options, the same question is refused or answered without confidence
    res = qa.ask(AskRequest("Which city was mentioned, Paris, Tokyo or Lima?"))
    assert res.confidence < 0.5 or not any(c.lower() in res.answer.lower() for c in options), res
    # only silence and darkness in scope: still one option, and no confidence in it
    res = qa.ask(
        AskRequest(
            "What did the speaker announce?",
            options=("the train is late", "the shop is closed"),
            scope=Scope(stream_ids=("silence", "black", "frozen")),
        )
    )
    assert res.choice_index in (0, 1) and res.confidence < 0.5, res


@pytest.mark.parametrize(
    ("options", "scope"),
    [
        # the form suggested in the issue, across all streams
        (("7:45", "8.15", "nine thirty"), Scope()),
        # all in words: whatever digits the recogniser wrote ("8.15", "8:15", "815"), this
        # set is in another form; restricted to the stream that said it
        (("quarter to eight", "eight fifteen", "half past nine"), Scope(stream_ids=("bus",))),
    ],
)
def test_numbers_in_mixed_forms(ingested, qa, options, scope):
    memories, _ = ingested[1]["bus"]
    heard = " ".join(m.transcript_text for m in memories).lower()
    assert any(form in heard for form in ("8.15", "8:15", "815", "eight fifteen")), heard
    res = qa.ask(AskRequest("When does the bus leave?", options=options, scope=scope))
    assert res.choice_index == 1, res
