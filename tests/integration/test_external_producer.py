"""The example producer in deploy/examples (issue 13, item 6): written from media.proto alone,
with FFmpeg's segment muxer, ffprobe and a plain Kafka client, importing nothing of episodic.
Its chunks must be stored as embedded ingest stores the same recording, with no warning about
their timestamps and nothing dead-lettered."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from episodic import samples
from episodic.components import Components
from episodic.pipeline import ingest_file
from episodic.worker import Worker

PRODUCER = Path(__file__).resolve().parents[2] / "deploy" / "examples" / "ffmpeg_producer.py"

pytestmark = pytest.mark.slow


def _spans(components: Components, stream_id: str) -> list[tuple[float, float, str, str]]:
    memories = sorted(components.store.list_memories(stream_id=stream_id), key=lambda m: m.t_start)
    return [(round(m.t_start, 1), round(m.t_end, 1), m.transcript_text, m.ocr_text) for m in memories]


def test_an_ffmpeg_segment_producer_is_stored_like_ingest(tmp_path, kafka_settings, caplog):
    assert shutil.which("ffmpeg") and shutil.which("ffprobe"), "deploy/setup.sh installs ffmpeg"
    clip = tmp_path / "porch.mp4"
    samples.make_recording(
        clip, [samples.Scene(7, seed=1), samples.Scene(7, seed=2, text="PORCH LIGHT")],
        [samples.Speech(1.0, "Maria parked the red bicycle by the gate.")],
    )
    s = kafka_settings.replace(data_dir=tmp_path / "pushed")
    out = subprocess.run(
        [sys.executable, str(PRODUCER), str(clip), "--stream-id", "porch",
         "--bootstrap", s.kafka_bootstrap_servers, "--topic", s.kafka_topic],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    sent = json.loads(out.stdout)
    assert sent["chunks"] >= 5 and abs(sent["stream_s"] - 14.0) < 0.2

    components = Components(s)
    try:
        stats = Worker(components).run(idle_exit_s=3.0)
        assert stats.streams_ended == 1 and stats.dead_lettered == 0
        pushed = _spans(components, "porch")
    finally:
        components.close()
    assert "payload_t0" not in caplog.text  # the producer's times agree with its payloads

    reference = Components(s.replace(data_dir=tmp_path / "ingested"))
    try:
        ingest_file(clip, "porch", reference)
        expected = _spans(reference, "porch")
    finally:
        reference.close()
    assert [(a, b, ocr) for a, b, _, ocr in pushed] == [(a, b, ocr) for a, b, _, ocr in expected]
    assert "bicycle" in " ".join(t for _, _, t, _ in pushed).lower(), pushed
