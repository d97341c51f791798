"""`episodic ingest` with what users actually give it: several files whose names would make the
same stream id, and URLs (issue 13, item 4). Real CLI processes, a real HTTP server on
loopback (Python's, which answers without range requests)."""

from __future__ import annotations

import functools
import http.server
import json
import threading
from pathlib import Path

import pytest

from episodic import samples
from tests.cli_runner import run_cli


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("clips")
    path = folder / "porch.mp4"
    samples.make_recording(path, [samples.Scene(duration_s=6, seed=3, text="PORCH")], [],
                           container_options={"movflags": "+faststart"})
    # the same with its index (moov) at the end, as cameras write it
    samples.make_recording(folder / "tail.mp4", [samples.Scene(duration_s=6, seed=3)], [])
    return path


def test_names_that_make_one_stream_id_are_refused_before_anything_is_stored(tmp_path, clip):
    a = tmp_path / "one" / "a.mp4"
    b = tmp_path / "two" / "a.mov"
    for p in (a, b):
        p.parent.mkdir()
        p.write_bytes(clip.read_bytes())
    data = tmp_path / "data"
    out = run_cli("ingest", str(a), str(b), data=data, check=False)
    assert out.returncode != 0
    assert "would both be stream 'a'" in out.stderr and "--stream-id" in out.stderr
    assert "Traceback" not in out.stderr
    listed = run_cli("streams", "--json", data=data, check=False)
    assert listed.returncode != 0 or json.loads(listed.stdout)["streams"] == []


@pytest.fixture()
def http_server(clip):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(clip.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_a_url_is_ingested_and_its_credentials_never_shown(tmp_path, http_server):
    data = tmp_path / "data"
    url = f"http://viewer:s3cret-pass@{http_server}/porch.mp4"
    out = run_cli("ingest", url, "--json", data=data)
    (job,) = json.loads(out.stdout)["ingested"]
    assert job["stream_id"] == "porch"
    assert abs(job["stream_s"] - 6.0) < 0.5 and job["memories"] >= 1
    assert job["source"] == f"http://***@{http_server}/porch.mp4"
    assert "s3cret" not in out.stdout + out.stderr
    streams = json.loads(run_cli("streams", "--json", data=data).stdout)["streams"]
    assert [s["stream_id"] for s in streams] == ["porch"]
    assert "s3cret" not in json.dumps(streams)
    # a URL that names nothing: the server's own answer, in one line
    missing = run_cli("ingest", f"http://{http_server}/nothing.mp4", data=data, check=False)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert "404" in missing.stderr or "not found" in missing.stderr.lower(), missing.stderr


# -- what phones and cameras write (issue 13, item 3) ---------------------------------------------
def _encode(path: Path, vcodec: str, size=(320, 240), seconds: float = 2.0, rotation: int = 0) -> None:
    """A clip whose top-left quarter is red (to tell orientation), with a display rotation."""
    import av
    import numpy as np

    w, h = size
    img = np.zeros((h, w, 3), np.uint8)
    img[: h // 2, : w // 2] = (255, 0, 0)
    with av.open(str(path), "w") as out:
        s = out.add_stream(vcodec, rate=25)
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        if rotation:
            s.set_display_rotation(rotation)
        for i in range(int(seconds * 25)):
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = i
            for p in s.encode(frame):
                out.mux(p)
        for p in s.encode():
            out.mux(p)


def _ingest(path: Path, data: Path):
    from episodic.components import Components
    from episodic.config import load_settings
    from episodic.pipeline import ingest_file

    components = Components(load_settings(data_dir=data))
    try:
        report = ingest_file(path, "clip", components)
        memories = components.store.list_memories("clip")
        first = components.snippets.path_for(memories[0].snippets[0].uri)
    finally:
        components.close()
    return report, memories, first


@pytest.mark.slow
def test_a_rotated_phone_clip_is_stored_upright(tmp_path):
    import av

    path = tmp_path / "phone.mp4"
    _encode(path, "libx264", rotation=90)  # stored landscape, shown portrait
    report, memories, snippet = _ingest(path, tmp_path / "data")
    assert abs(report.progress.stream_s - 2.0) < 0.2
    with av.open(str(snippet)) as c:
        frame = next(c.decode(video=0))
        assert (frame.width, frame.height) == (240, 320)  # portrait
        rgb = frame.to_ndarray(format="rgb24").astype(float)
    # a display rotation of 90° turns the picture counter-clockwise (as FFmpeg shows it):
    # the red top-left quarter ends up bottom-left
    red = rgb[..., 0] - rgb[..., 1]
    quarters = {"tl": red[:160, :120].mean(), "bl": red[160:, :120].mean(), "tr": red[:160, 120:].mean()}
    assert quarters["bl"] > 150 and quarters["tl"] < 50 and quarters["tr"] < 50, quarters


@pytest.mark.slow
@pytest.mark.parametrize("size, rotation", [((720, 1280), 0), ((1280, 720), 90)])
def test_a_portrait_video_is_worked_on_at_the_size_of_a_landscape_one(tmp_path, size, rotation):
    """Frames are brought down so their longer side is 640 px: a portrait phone video (stored
    portrait, or landscape with a 90° display matrix) costs what a landscape one does and its
    snippets are 360 × 640 upright."""
    import av

    path = tmp_path / "portrait.mp4"
    _encode(path, "libx264", size=size, rotation=rotation)
    _, _, snippet = _ingest(path, tmp_path / "data")
    with av.open(str(snippet)) as c:
        frame = next(c.decode(video=0))
        assert (frame.width, frame.height) == (360, 640)


@pytest.mark.slow
def test_av1_is_named_by_its_codec_and_ingests(tmp_path):
    from episodic.stream.decode import MediaDecoder

    path = tmp_path / "clip.webm"
    samples.make_recording(path, [samples.Scene(duration_s=3, seed=2)], [], width=320, height=240,
                           vcodec="libsvtav1", acodec="libopus")
    from episodic.config import Settings

    with MediaDecoder(str(path), Settings()) as dec:
        assert (dec.info.video_codec, dec.info.audio_codec) == ("av1", "opus")  # not "libdav1d"
    report, memories, _ = _ingest(path, tmp_path / "data")
    assert abs(report.progress.stream_s - 3.0) < 0.2 and memories


def test_an_mp4_indexed_at_its_end_from_a_server_without_ranges_says_so(tmp_path, http_server):
    out = run_cli("ingest", f"http://{http_server}/tail.mp4", data=tmp_path / "data", check=False)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "range requests" in out.stderr and "faststart" in out.stderr, out.stderr
    assert "holds no decodable" not in out.stderr


# -- an ingest that stops part-way (issue 13, item 4) -----------------------------------------------
@pytest.mark.slow
def test_an_interrupted_ingest_is_listed_incomplete_and_completes_when_run_again(tmp_path):
    import signal
    import time

    from tests.cli_runner import start_cli

    path = tmp_path / "long.mp4"
    # long enough (72 s, about a dozen segments) to be stopped part-way; longer only costs time;
    # bigger than the working size, so a chunk is being encoded on the push thread when it stops
    samples.make_recording(path, [samples.Scene(duration_s=12, seed=i) for i in range(6)], [],
                           width=960, height=540)
    data = tmp_path / "data"
    proc = start_cli("ingest", str(path), data=data, ctrl_c=True)
    snippets = data / "snippets"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if snippets.is_dir() and sum(1 for _ in snippets.rglob("*.mp4")) >= 3:  # of about 12 segments
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the ingest ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "listed as incomplete" in stderr and "run the same ingest again" in stderr, stderr
    (listed,) = json.loads(run_cli("streams", "--json", data=data).stdout)["streams"]
    assert listed["stream_id"] == "long" and listed["complete"] is False
    assert 0 < listed["t_end"] < 70 and listed["segments"] >= 1
    # no snippet file that no stored memory refers to
    segments = json.loads(run_cli("segments", "--json", data=data).stdout)["segments"]
    refs = {sn["uri"].rsplit("/", 1)[-1] for s in segments for sn in s["snippets"]}
    assert {p.name for p in snippets.rglob("*.mp4")} <= refs
    table = run_cli("streams", data=data).stdout
    assert "(incomplete)" in table
    run_cli("ingest", str(path), data=data)
    (listed,) = json.loads(run_cli("streams", "--json", data=data).stdout)["streams"]
    assert listed["complete"] is True and abs(listed["t_end"] - 72) < 1.0


@pytest.mark.slow
def test_a_store_failure_while_a_chunk_is_encoded_ahead_is_reported_and_leaves_no_orphans(tmp_path, monkeypatch):
    """Frames bigger than the working size: ingest encodes one chunk on a thread while the
    next decodes. A store failure on that thread reaches the caller as the same error, saying
    what was kept; the stream is listed incomplete and no snippet file is left unreferenced."""
    import threading

    from episodic.components import Components
    from episodic.config import load_settings
    from episodic.core.errors import StoreError
    from episodic.pipeline import ingest_file

    path = tmp_path / "big.mp4"
    samples.make_recording(path, [samples.Scene(duration_s=8, seed=i) for i in range(5)], [],
                           width=960, height=540)
    # segments heard 10 s at a time, so memories are written while the push thread encodes
    # (with the default 60-s window the first write would come when the 40-s stream ends)
    components = Components(load_settings(data_dir=tmp_path / "data", asr_window_s=10.0))
    writes: list[str] = []  # the thread of each write

    def failing(memories):
        writes.append(threading.current_thread().name)
        raise StoreError("simulated: the store went away")

    monkeypatch.setattr(components.store, "upsert_memories", failing)
    try:
        with pytest.raises(StoreError, match="went away; kept 0 memories .*listed as incomplete"):
            ingest_file(path, "big", components)
        assert writes == ["episodic-push"]  # the failure happened on the encoding thread
        info = components.store.get_stream("big")
        assert info is not None and info.metadata.get("complete") is False
        assert components.store.list_memories("big") == []
        assert not list((tmp_path / "data" / "snippets").rglob("*.mp4"))  # none left unreferenced
    finally:
        components.close()


@pytest.mark.slow
def test_1080p60_with_a_phone_length_gop_ingests_in_bounded_memory(tmp_path):
    """x264's default 250-frame GOP at 1080p60, as phones write it: decoded frames are brought
    down to the working size at once, so peak memory stays well under 2 GB (the CLI process's
    own high-water mark), and snippets are 640 px wide at snippet_fps."""
    import contextlib
    import subprocess
    import sys
    import time

    import av
    import numpy as np

    from tests.cli_runner import cli_env

    path = tmp_path / "phone60.mp4"
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (1080 // 8, 1920 // 8, 3), dtype=np.uint8)
    with av.open(str(path), "w") as out:
        s = out.add_stream("libx264", rate=60, options={"preset": "ultrafast", "g": "250"})
        s.width, s.height, s.pix_fmt = 1920, 1080, "yuv420p"
        for i in range(6 * 60):
            img = np.roll(np.kron(base, np.ones((8, 8, 1), np.uint8)), i * 4, axis=1)
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = i
            for p in s.encode(frame):
                out.mux(p)
        for p in s.encode():
            out.mux(p)
    data = tmp_path / "data"
    log, out = tmp_path / "stderr.txt", tmp_path / "stdout.json"
    with log.open("wb") as err, out.open("wb") as so:  # files, not pipes: nothing can block
        proc = subprocess.Popen([sys.executable, "-m", "episodic.cli", "ingest", str(path), "--json"],
                                stdout=so, stderr=err, env=cli_env(data))
        peak_kb = 0
        status_file = Path(f"/proc/{proc.pid}/status")
        while proc.poll() is None:
            # the CLI process's own high-water mark (VmHWM): not the test's, and not that of
            # the Milvus Lite server it starts (rusage of a child includes its descendants)
            with contextlib.suppress(OSError):
                for line in status_file.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(line.split()[1]))
            time.sleep(0.1)
    assert proc.returncode == 0, log.read_text()[-2000:]
    stdout = out.read_bytes()
    peak_mb = peak_kb / 1024
    assert 0 < peak_mb < 2048, f"peak {peak_mb:.0f} MB"
    (job,) = json.loads(stdout)["ingested"]
    assert abs(job["stream_s"] - 6.0) < 0.2
    segments = json.loads(run_cli("segments", "--json", data=data).stdout)["segments"]
    uri = segments[0]["snippets"][0]["uri"]
    with av.open(uri.removeprefix("file://")) as c:
        v = c.streams.video[0]
        n = sum(1 for _ in c.decode(v))
        assert (v.codec_context.width, v.codec_context.height) == (640, 360)
        seconds = float(c.duration / 1e6)
    assert 12 <= n / seconds <= 16  # snippet_fps 15, although non-reference frames were skipped


def test_listing_a_data_directory_that_does_not_exist_is_an_error_not_an_empty_store(tmp_path):
    out = run_cli("streams", "--data", str(tmp_path / "typo"), data=tmp_path, check=False)
    assert out.returncode == 2 and "no data directory" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "typo").exists()


# -- damaged files keep what decodes (issue 13, item 7) -----------------------------------------------
@pytest.mark.slow
def test_garbage_mid_file_and_a_truncated_faststart_file_keep_everything_decodable(tmp_path):
    import random

    good = tmp_path / "good.mp4"
    samples.make_recording(good, [samples.Scene(duration_s=10, seed=i) for i in range(3)], [],
                           container_options={"movflags": "+faststart"})
    raw = bytearray(good.read_bytes())
    rng = random.Random(1)
    mid = len(raw) // 2
    raw[mid : mid + 200_000] = bytes(rng.getrandbits(8) for _ in range(len(raw[mid : mid + 200_000])))
    corrupt = tmp_path / "corrupt.mp4"
    corrupt.write_bytes(bytes(raw))
    truncated = tmp_path / "truncated.mp4"
    truncated.write_bytes(good.read_bytes()[: int(len(raw) * 0.6)])
    data = tmp_path / "data"
    jobs = json.loads(run_cli("ingest", str(corrupt), str(truncated), "--json", data=data).stdout)["ingested"]
    by_id = {j["stream_id"]: j for j in jobs}
    assert abs(by_id["corrupt"]["stream_s"] - 30.0) < 0.5  # the whole recording, not up to the damage
    assert any("undecodable" in w for w in by_id["corrupt"]["warnings"])
    assert 10.0 < by_id["truncated"]["stream_s"] < 25.0
    assert any("looks truncated" in w for w in by_id["truncated"]["warnings"])
    streams = json.loads(run_cli("streams", "--json", data=data).stdout)["streams"]
    assert {s["stream_id"]: s["complete"] for s in streams} == {"corrupt": True, "truncated": True}


@pytest.mark.parametrize(
    "errno_name, said",
    [("ENOSPC", "no space left"), ("EROFS", "read-only"), ("EACCES", "permission denied")],
)
def test_a_full_disk_or_unwritable_store_is_one_line_with_exit_4(tmp_path, monkeypatch, capsys, clip,
                                                                errno_name, said):
    """Simulated (a real full disk needs a mount the tests cannot make everywhere): the error
    reaches the user as one line and the documented store exit code, not a traceback."""
    import errno
    import sys

    from episodic import cli, pipeline

    def full(*_a, **_k):
        raise OSError(getattr(errno, errno_name), "simulated", str(tmp_path / "data" / "snippets"))

    monkeypatch.setattr(pipeline, "ingest_file", full)
    monkeypatch.setattr(sys, "argv", ["episodic", "ingest", str(clip), "--data", str(tmp_path / "data")])
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == 4
    lines = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert lines and said in " ".join(lines) and "Traceback" not in " ".join(lines)


def _files(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_a_store_mounted_read_only_is_listed_asked_and_left_untouched(tmp_path, clip):
    """Milvus Lite writes a lock file even to read: a store on a read-only mount (an archive,
    a shared snapshot) is read through a temporary copy, and the mount is never written."""
    import subprocess

    src, ro = tmp_path / "src", tmp_path / "ro"
    run_cli("ingest", str(clip), "--stream-id", "cam-ro", data=src)
    ro.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(src), str(ro)], capture_output=True).returncode == 0
    try:
        if not mounted or subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], capture_output=True).returncode:
            pytest.skip("this machine cannot make a read-only bind mount (needs root and mount rights)")
        with pytest.raises(OSError):
            (ro / "probe").write_text("x")  # really read-only, even for root
        before = _files(src)
        listed = run_cli("streams", "--json", data=ro)
        assert [s["stream_id"] for s in json.loads(listed.stdout)["streams"]] == ["cam-ro"]
        assert "read-only: reading a temporary copy" in listed.stderr
        asked = run_cli("ask", "What sign was shown?", "--json", data=ro)
        assert "PORCH" in json.loads(asked.stdout)["answer"].upper()
        assert _files(src) == before
    finally:
        if mounted:
            subprocess.run(["umount", str(ro)], capture_output=True)
