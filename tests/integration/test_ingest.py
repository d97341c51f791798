"""End to end through the real CLI: generated recordings → `episodic ingest` → Milvus Lite on
disk → `episodic segments/events/streams`, each command a fresh process (so every read is a
restart), with real models, real PyAV decoding and real snippet files."""

from __future__ import annotations

import json
from pathlib import Path

import av
import pytest

from episodic import samples
from tests.cli_runner import run_cli

pytestmark = pytest.mark.slow

SPEECH = [
    samples.Speech(t=1.0, text="The red bicycle is parked next to the bakery."),
    samples.Speech(t=14.0, text="Please remember the meeting starts at nine tomorrow."),
    samples.Speech(t=23.0, text="I put the blue notebook in the kitchen drawer."),
]
SCENES = [
    samples.Scene(duration_s=7, seed=1, text="NORTH BRIDGE"),
    samples.Scene(duration_s=12, seed=2),
    samples.Scene(duration_s=9, seed=3),
    samples.Scene(duration_s=32, seed=4, static=True),  # long, silent, unchanging
]
CUTS = [7.0, 19.0, 28.0]
STATIC = (28.0, 60.0)


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "street cam.mp4"
    samples.make_recording(path, SCENES, SPEECH)
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory, recording):
    """One ingest shared by the read-side tests; returns (data dir, ingest JSON)."""
    data = tmp_path_factory.mktemp("data")
    out = run_cli("ingest", str(recording), "--stream-id", "cam1", "--json", data=data)
    return data, json.loads(out.stdout)


def _segments(data: Path, *extra: str) -> list[dict]:
    return json.loads(run_cli("segments", "--json", *extra, data=data).stdout)["segments"]


def test_ingest_reports_and_lists(store):
    data, report = store
    (job,) = report["ingested"]
    assert job["stream_id"] == "cam1" and abs(job["stream_s"] - 60) < 1.0
    assert job["segments"] >= 6 and job["memories"] == job["events"]
    assert job["realtime_factor"] > 0
    streams = json.loads(run_cli("streams", "--json", data=data).stdout)["streams"]
    assert [s["stream_id"] for s in streams] == ["cam1"]
    assert streams[0]["segments"] == job["memories"]  # the stream listing counts stored segments
    events = json.loads(run_cli("events", "--json", data=data).stdout)["events"]
    assert len(events) == job["events"]
    assert all(e["summary"].strip() and e["stream_id"] == "cam1" for e in events)
    assert events == sorted(events, key=lambda e: e["t_start"])


def test_boundaries_segments_and_consolidation(store):
    data, _ = store
    segs = _segments(data, "--stream-id", "cam1")
    raw = [tuple(s) for m in segs for s in m_segments(m)]
    starts = [a for a, _ in raw]
    # each known cut has a segment boundary within ±1 s
    for cut in CUTS:
        assert min(abs(s - cut) for s in starts) <= 1.0, (cut, starts)
    # raw segments hold to the 5–10 s rule and tile the recording
    for a, b in raw[:-1]:
        assert 5.0 - 1e-3 <= b - a <= 10.0 + 1e-3, raw
    assert raw[0][0] == 0.0 and abs(raw[-1][1] - 60.0) < 1.0
    assert all(abs(raw[i][1] - raw[i + 1][0]) < 1e-6 for i in range(len(raw) - 1))
    # the 32 s static, silent scene consolidates into one memory of several segments
    static = [m for m in segs if m["t_start"] >= STATIC[0] - 1.0]
    assert len(static) == 1 and static[0]["t_end"] - static[0]["t_start"] > 20


def m_segments(memory: dict) -> list[list[float]]:
    """The raw segments a memory was consolidated from (ordered)."""
    return [[sn["t_start"], sn["t_end"]] for sn in memory["snippets"]] if "snippets" in memory else [
        [memory["t_start"], memory["t_end"]]
    ]


def test_transcripts_hold_the_spoken_words(store):
    data, _ = store
    segs = _segments(data)
    text = " ".join(m["transcript"] for m in segs).lower()
    # Whisper base hears this synthetic voice's "kitchen drawer" as "kitchen floor", and with
    # some CTranslate2 builds "the red bicycle" as "the med-buy-shikle" (int8 kernels differ by
    # version and CPU): most of the key words, not every one (WER: benchmarks/bench_asr.py)
    # (a word heard as two, "note book", is the word heard)
    squeezed = text.replace(" ", "").replace("-", "")
    heard = [w for w in ["bicycle", "bakery", "meeting", "tomorrow", "notebook", "drawer"] if w in squeezed]
    assert len(heard) >= 4, (heard, text)
    first = next(m for m in segs if "bakery" in m["transcript"].lower())
    assert first["t_start"] <= 1.5 and first["t_end"] >= 3.0
    ocr = " ".join(m["ocr_text"] for m in segs).upper()
    assert "NORTH BRIDGE" in ocr
    assert all(m["models"].get("asr") and m["models"].get("embedder") for m in segs)


def test_snippets_decode_and_cover_their_segments(store):
    data, _ = store
    for m in _segments(data):
        assert m["snippets"], m
        covered = 0.0
        for uri in (sn["uri"] for sn in m["snippets"]):
            path = Path(uri.removeprefix("file://"))
            assert path.is_file() and data in path.parents
            with av.open(str(path)) as c:
                frames = sum(1 for _ in c.decode(video=0))
                dur = float(c.duration) / av.time_base
            assert frames > 0
            covered += dur
        assert covered >= (m["t_end"] - m["t_start"]) - 0.2, (m, covered)


def test_reingest_is_idempotent(store, recording):
    data, _ = store
    before = _segments(data)
    events_before = json.loads(run_cli("events", "--json", data=data).stdout)["events"]
    run_cli("ingest", str(recording), "--stream-id", "cam1", "--json", data=data)
    after = _segments(data)
    events_after = json.loads(run_cli("events", "--json", data=data).stdout)["events"]
    key = lambda m: (m["id"], m["t_start"], m["t_end"], m["transcript"], m["visual_text"])  # noqa: E731
    assert [key(m) for m in after] == [key(m) for m in before]
    assert [e["id"] for e in events_after] == [e["id"] for e in events_before]
    assert [e["summary"] for e in events_after] == [e["summary"] for e in events_before]
    assert len({m["id"] for m in after}) == len(after)


def test_the_ingest_leaves_an_overview_and_recall_finds_the_moment(store):
    """Issue 16 end to end on a real ingest: the stream overview is stored with the records,
    and a fuzzy description (a key moment and what came after it) finds the stream and the
    sign's segment through `episodic recall`."""
    from episodic.components import Components
    from episodic.config import load_settings

    data, _ = store
    components = Components(load_settings(data_dir=data))
    try:
        overviews = components.store.list_overviews("cam1")
    finally:
        components.store.close()
    assert [o.scope for o in overviews] == ["stream", "stretch"]
    assert "NORTH BRIDGE" in overviews[0].text and overviews[0].t_end > 55
    out = run_cli("recall", "a sign saying north bridge, then someone talked about a meeting",
                  "--json", data=data)
    doc = json.loads(out.stdout)
    assert set(doc["facets"]) == {"key_moment", "temporal"}
    top = doc["results"][0]
    assert top["stream_id"] == "cam1" and top["t_start"] < 7.0, top
    assert top["facets"]["key_moment"] > 0.5 and top["facets"]["temporal"] > 0.25


def test_recall_can_say_the_second_by_looking_again(store):
    """With recall_look_again on, the key moment (a sign) is looked for in its segment's stored
    video and the result says the second it was seen (the sign is up from 0 to 7 s)."""
    data, _ = store
    out = run_cli("recall", "--key-moment", "the sign that said north bridge", "--json", data=data,
                  env={"EPISODIC_RECALL_LOOK_AGAIN": "true"})
    top = json.loads(out.stdout)["results"][0]
    assert top["stream_id"] == "cam1" and "seen at" in top["why"] and 0.0 <= top["t"] <= 7.0, top
