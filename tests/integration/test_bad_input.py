"""Bad input through the real CLI: one clear line on stderr, a non-zero exit, no traceback,
and a store that still reads afterwards. Odd-but-valid recordings give sensible results."""

from __future__ import annotations

import json
import shutil

import pytest

from episodic import samples
from tests.cli_runner import run_cli

pytestmark = pytest.mark.slow


def assert_clean_failure(proc, code: int, needle: str) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert needle.lower() in proc.stderr.lower(), proc.stderr
    assert proc.stderr.strip().count("\n") <= 2, proc.stderr


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    good = d / "good.mp4"
    samples.make_recording(
        good,
        [samples.Scene(duration_s=6, seed=7), samples.Scene(duration_s=6, seed=8)],
        [samples.Speech(t=1.0, text="The green kettle is on the stove.")],
    )
    (d / "empty.mp4").write_bytes(b"")
    (d / "noise.mp4").write_bytes(bytes(range(256)) * 400)
    raw = good.read_bytes()
    (d / "truncated.mp4").write_bytes(raw[: len(raw) // 2])
    samples.make_recording(d / "video only.mp4", [samples.Scene(duration_s=7, seed=9)], [], audio=False)
    samples.make_recording(
        d / "audio-only.m4a",
        [samples.Scene(duration_s=7, seed=10)],
        [samples.Speech(t=1.0, text="Please close the window in the kitchen.")],
        video=False,
    )
    samples.make_recording(d / "short.mp4", [samples.Scene(duration_s=3, seed=11)], [])
    return d


def test_missing_file_and_directory(media, tmp_path):
    assert_clean_failure(run_cli("ingest", str(media / "nope.mp4"), data=tmp_path, check=False), 2, "not found")
    assert_clean_failure(run_cli("ingest", str(media), data=tmp_path, check=False), 2, "directory")


@pytest.mark.parametrize("name", ["empty.mp4", "noise.mp4"])
def test_unreadable_media(media, tmp_path, name):
    proc = run_cli("ingest", str(media / name), data=tmp_path, check=False)
    assert_clean_failure(proc, 3, name)
    assert json.loads(run_cli("streams", "--json", data=tmp_path).stdout) == {"streams": []}


def test_odd_stream_ids_and_arguments(media, tmp_path):
    good = str(media / "good.mp4")
    for bad in ['x" or 1==1', "../../etc", "a b"]:
        assert_clean_failure(
            run_cli("ingest", good, "--stream-id", bad, data=tmp_path, check=False), 2, "invalid stream id"
        )
        assert_clean_failure(
            run_cli("events", "--stream-id", bad, "--json", data=tmp_path, check=False), 2, "invalid stream id"
        )
    assert_clean_failure(
        run_cli("ingest", good, good, "--stream-id", "x", data=tmp_path, check=False), 2, "single FILE"
    )
    assert json.loads(run_cli("events", "--json", data=tmp_path).stdout) == {"events": []}


def test_truncated_then_odd_recordings_give_sensible_results(media, tmp_path):
    # A truncated file keeps what could be decoded (with a warning) or fails cleanly.
    proc = run_cli("ingest", str(media / "truncated.mp4"), "--json", data=tmp_path, check=False)
    assert "Traceback" not in proc.stderr
    if proc.returncode == 0:
        (job,) = json.loads(proc.stdout)["ingested"]
        assert job["memories"] >= 1
    else:
        assert_clean_failure(proc, 3, "truncated")
    # Video-only, audio-only and a recording shorter than one segment, in one run.
    files = [str(media / n) for n in ("video only.mp4", "audio-only.m4a", "short.mp4")]
    report = json.loads(run_cli("ingest", *files, "--json", data=tmp_path).stdout)
    got = {j["stream_id"]: j for j in report["ingested"]}
    assert set(got) == {"video-only", "audio-only", "short"} and report["failed"] == []
    assert all(j["memories"] >= 1 for j in got.values())
    assert abs(got["short"]["stream_s"] - 3.0) < 0.5
    segs = json.loads(run_cli("segments", "--json", data=tmp_path).stdout)["segments"]
    audio = [m for m in segs if m["stream_id"] == "audio-only"]
    heard = " ".join(m["transcript"] for m in audio).lower()
    assert "window" in heard and "kitchen" in heard, heard
    assert all(m["visual_text"] == "" for m in audio)
    assert all(m["transcript"] == "" for m in segs if m["stream_id"] == "video-only")
    # the store reads fine after everything above
    streams = {s["stream_id"] for s in json.loads(run_cli("streams", "--json", data=tmp_path).stdout)["streams"]}
    assert {"video-only", "audio-only", "short"} <= streams


def test_locked_store_is_a_clear_error(media, tmp_path):
    """Two embedded processes on one data directory: the second gets a clear message."""
    import subprocess
    import sys
    import time

    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys,time; from episodic.config import load_settings; from memory.milvus_store import MilvusStore;"
         f"s=MilvusStore(load_settings(data_dir={str(tmp_path)!r})); s.ensure_schema(384, 1280); print('ready', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        proc = run_cli("events", "--json", data=tmp_path, check=False)
        assert_clean_failure(proc, 4, "in use")
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.5)
    shutil.rmtree(tmp_path, ignore_errors=True)
