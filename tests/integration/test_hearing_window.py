"""Segments heard together (``asr_window_s``, memory/speech_context.hear_joined): a recording's
segments go to Whisper as one clip per window instead of one clip each, and every sentence
still lands in the memory of the segment it was said in. Real decoding, Whisper base and
Milvus Lite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from episodic import samples
from episodic.components import Components
from episodic.config import load_settings
from episodic.pipeline import ingest_file

pytestmark = pytest.mark.slow

# one sentence per scene; each scene is one segment (cuts at 8, 16 and 24 s)
SPEECH = [
    samples.Speech(t=1.0, text="The red bicycle is parked next to the bakery."),
    samples.Speech(t=9.0, text="Please remember the meeting starts at nine tomorrow."),
    samples.Speech(t=17.0, text="I put the blue notebook in the kitchen drawer."),
    samples.Speech(t=25.0, text="The library closes early on Sundays."),
]
KEYWORDS = ["bakery", "tomorrow", "notebook", "library"]
SCENES = [samples.Scene(duration_s=8, seed=i + 1) for i in range(4)]


class CountingRecogniser:
    """The real recogniser, with the clips it was given counted."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.clips: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def transcribe(self, audio, sample_rate_hz, t_offset, **kwargs):  # noqa: ANN001, ANN201
        self.clips.append(audio.size / sample_rate_hz)
        return self.inner.transcribe(audio, sample_rate_hz, t_offset, **kwargs)


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "four sentences.mp4"
    samples.make_recording(path, SCENES, SPEECH)
    return path


def ingest(recording: Path, data: Path, window_s: float) -> tuple[list[Any], list[float]]:
    components = Components(load_settings(data_dir=data, asr_window_s=window_s))
    try:
        asr = CountingRecogniser(components.asr)
        components.__dict__["asr"] = asr  # what the pipeline's encoder is given
        report = ingest_file(recording, "cam", components)
        assert report.progress.segments >= 4
        return components.store.list_memories("cam"), asr.clips
    finally:
        components.close()


def placed(memories: list[Any]) -> list[str]:
    """The keywords heard in the memory whose span holds the time they were said."""
    out = []
    for speech, word in zip(SPEECH, KEYWORDS, strict=True):
        memory = next(m for m in memories if m.t_start <= speech.t + 1.0 < m.t_end)
        if word in " ".join(p.text for p in memory.transcript).lower().replace(" ", ""):
            out.append(word)
    return out


def test_segments_heard_together_are_one_clip_and_each_keeps_its_own_sentence(recording, tmp_path):
    together, clips = ingest(recording, tmp_path / "window", 60.0)
    assert len(clips) == 1 and clips[0] == pytest.approx(32.0, abs=0.5)  # the whole run at once
    alone, clips_alone = ingest(recording, tmp_path / "alone", 0.0)
    assert len(clips_alone) >= 4  # one clip per segment (each after the audio before it)
    for memories in (together, alone):
        # every word a memory holds was said in its span
        for m in memories:
            for p in m.transcript:
                assert all(m.t_start - 0.05 <= (a + b) / 2 < m.t_end + 0.05 for a, b, _ in p.words), (m.id, p)
        # Whisper base misses a word of this synthetic voice now and then: most, not all
        assert len(placed(memories)) >= 3, [(m.t_start, m.t_end, [p.text for p in m.transcript]) for m in memories]
