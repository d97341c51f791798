"""Live sources that drop and come back (stream/reconnect.py, issue 13 item 5).

The source is a real HTTP server on loopback streaming MPEG-TS without a length, the way a
camera's HTTP stream looks to FFmpeg (tests/live_http.py): it drops the connection, stops
listening for a while (connections are refused), and comes back with other content.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from episodic import samples
from episodic.components import Components
from episodic.config import Settings
from episodic.stream.chunks import Chunker
from episodic.stream.reconnect import LiveChunks
from episodic.worker import Worker
from tests.cli_runner import run_cli
from tests.live_http import Act, DroppingServer

QUICK = {"reconnect_attempts": 3, "reconnect_first_delay_s": 0.2, "reconnect_max_delay_s": 1.0, "reconnect_max_s": 20.0}


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("live")
    first, second = root / "first.ts", root / "second.ts"
    samples.make_recording(
        first, [samples.Scene(6, seed=1, tint=(200, 60, 60)), samples.Scene(6, seed=2, text="HARBOUR")],
        [samples.Speech(1.0, "Maria parked the red bicycle by the gate.")],
    )
    samples.make_recording(
        second, [samples.Scene(7, seed=7, text="MARKET", tint=(40, 160, 220))],
        [samples.Speech(1.5, "Fresh bread is sold at the market today.")],
    )
    return first, second


def _read(url: str, settings: Settings) -> LiveChunks:
    live = LiveChunks(lambda **k: Chunker(url, "cam-live", settings, timeout=5.0, **k), settings)
    live.chunks = list(live)  # type: ignore[attr-defined]
    return live


def test_a_live_source_that_drops_continues_one_session_across_the_gap_then_gives_up(recordings):
    first, second = recordings
    s = Settings().replace(**QUICK)
    with DroppingServer([Act(first, 0.6, away_s=1.0), Act(second, 1.0)]) as server:
        live = _read(server.url, s)
    chunks = live.chunks
    assert server.connections == 2
    assert [c.seq for c in chunks] == list(range(len(chunks)))  # nothing lost or renumbered
    assert len({c.session_id for c in chunks}) == 1
    assert [c.end_of_stream for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert not chunks[-1].payload  # the closing marker carries no media
    gapped = [i for i, c in enumerate(chunks) if c.gap_before_s > 0]
    assert len(gapped) == 1, [(c.seq, c.gap_before_s) for c in chunks]
    i = gapped[0]
    before, after = chunks[i - 1], chunks[i]
    # stream time went on by the wall clock: the server was away 1 s, plus the backoff
    assert 1.0 <= after.gap_before_s < 6.0
    assert after.t_start == pytest.approx(before.t_end + after.gap_before_s, abs=0.01)
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert b.t_start == pytest.approx(a.t_end + b.gap_before_s, abs=0.01)
    # both recordings arrived: ~60 % of the first (12 s) and all of the second (7 s)
    assert 5.0 <= before.t_end <= 9.0
    assert chunks[-1].t_end - after.t_start == pytest.approx(7.0, abs=0.5)
    # the second drop never came back: closed, with why and what to do
    assert [o.gap_s > 0 for o in live.outages] == [True, False]
    assert live.outages[1].attempts == QUICK["reconnect_attempts"]
    assert live.gave_up is not None
    assert "did not come back" in str(live.gave_up) and "Connection refused" in str(live.gave_up)
    assert "push --append" in str(live.gave_up)
    assert any("was away" in w and "reconnected after" in w for w in live.warnings), live.warnings


def test_a_source_that_never_returns_is_given_up_within_the_time_allowed(recordings):
    first, _ = recordings
    s = Settings().replace(reconnect_attempts=50, reconnect_first_delay_s=0.2, reconnect_max_delay_s=0.4, reconnect_max_s=1.5)
    with DroppingServer([Act(first, 0.3, reset=True)]) as server:  # a killed server: TCP reset
        live = _read(server.url, s)
    assert live.gave_up is not None and live.chunks[-1].end_of_stream
    assert 2 <= live.outages[0].attempts < 10  # stopped by reconnect_max_s, not by the attempts


def test_files_and_reconnection_off_end_where_the_source_ends(recordings):
    first, _ = recordings
    s = Settings().replace(**QUICK)
    file_chunks = _read(str(first), s)  # a file has a duration: never reopened
    assert not file_chunks.outages and file_chunks.gave_up is None
    assert file_chunks.chunks[-1].end_of_stream and file_chunks.chunks[-1].payload
    with DroppingServer([Act(first, 1.0), Act(first, 1.0)]) as server:
        live = _read(server.url, s.replace(reconnect_attempts=0))
    assert server.connections == 1 and not live.outages and live.gave_up is None
    assert live.chunks[-1].end_of_stream and live.chunks[-1].t_end == pytest.approx(12.0, abs=0.5)


@pytest.mark.slow
def test_push_of_a_dropping_source_stores_one_stream_with_the_gap_and_exits_3_when_it_gives_up(
    recordings, kafka_settings, tmp_path, caplog
):
    """The issue's scenario end to end: `episodic push` of a live source whose server goes
    away mid-stream and comes back with other content, then goes away for good; a worker
    stores one stream with both recordings in order, the gap listed, and no memory across it."""
    first, second = recordings
    s = kafka_settings.replace(data_dir=tmp_path / "data", **QUICK)
    env = {f"EPISODIC_{k.upper()}": str(getattr(s, k)) for k in s.flat() if k.startswith(("kafka_", "reconnect_"))}
    with DroppingServer([Act(first, 0.6, away_s=1.0), Act(second, 1.0)]) as server:
        out = run_cli("push", server.url, "--stream-id", "cam-live", "--json", data=s.data_dir, env=env, check=False)
    assert out.returncode == 3, out.stderr
    assert "did not come back" in out.stderr and "push --append" in out.stderr
    assert "dropped at t=" in out.stderr and "is back after" in out.stderr
    summary = json.loads(out.stdout)
    assert [o["gap_s"] > 0 for o in summary["outages"]] == [True, False]
    gap_s = summary["outages"][0]["gap_s"]

    components = Components(s)
    try:
        Worker(components).run(idle_exit_s=3.0)
        info = components.store.get_stream("cam-live")
        assert info is not None and info.metadata.get("checkpoint", {}).get("ended")
        gaps = info.metadata["gaps"]
        assert len(gaps) == 1 and gaps[0][1] - gaps[0][0] == pytest.approx(gap_s, abs=0.01)
        g0, g1 = gaps[0]
        memories = sorted(components.store.list_memories(stream_id="cam-live"), key=lambda m: m.t_start)
        assert all(m.t_end <= g0 + 0.01 or m.t_start >= g1 - 0.01 for m in memories), [
            (m.t_start, m.t_end) for m in memories
        ]
        said_before = " ".join(m.transcript_text for m in memories if m.t_end <= g0 + 0.01).lower()
        said_after = " ".join(m.transcript_text for m in memories if m.t_start >= g1 - 0.01).lower()
        assert "bicycle" in said_before and "market" in said_after, (said_before, said_after)
        assert info.t_end == pytest.approx(g1 + 7.0, abs=0.6)
        assert "payload_t0" not in caplog.text  # a reconnection is no producer's timing error
    finally:
        components.close()
    listed = json.loads(run_cli("streams", "--json", data=s.data_dir).stdout)["streams"]
    assert [[[g["t_start"], g["t_end"]] for g in x["gaps"]] for x in listed if x["stream_id"] == "cam-live"] == [
        [[round(a, 3), round(b, 3)] for a, b in gaps]
    ]


# -- a real RTSP camera (GStreamer's RTSP server, from Debian) --------------------------------
SYSTEM_PYTHON = "/usr/bin/python3"
RTSP_SERVER = Path(__file__).resolve().parents[1] / "rtsp_server.py"


def _has_rtsp_server() -> bool:
    import subprocess

    probe = "import gi; gi.require_version('GstRtspServer', '1.0'); from gi.repository import GstRtspServer"
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", probe], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class _Camera:
    """The RTSP server process: started, killed (SIGKILL, a camera losing power), started again."""

    def __init__(self) -> None:
        from episodic.dev_broker import free_port

        self.port = free_port()
        self.proc = None

    @property
    def url(self) -> str:
        return f"rtsp://127.0.0.1:{self.port}/live"

    def start(self) -> None:
        import subprocess

        self.proc = subprocess.Popen([SYSTEM_PYTHON, str(RTSP_SERVER), str(self.port)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        line = self.proc.stdout.readline().strip()
        assert line == "ready", self.proc.stderr.read()[-2000:]

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.mark.slow
@pytest.mark.skipif(not _has_rtsp_server(), reason="needs GStreamer's RTSP server (deploy/setup.sh installs it)")
def test_an_rtsp_camera_killed_and_restarted_is_one_stream_with_a_recorded_gap():
    import threading

    s = Settings().replace(**{**QUICK, "reconnect_attempts": 8})  # 0.2 + 0.4 + 0.8 + 1 + 1 …: ~6 s
    camera = _Camera()
    camera.start()
    power_lost, restarted = threading.Event(), threading.Event()
    chunks = []

    def power_back() -> None:
        try:
            camera.start()
        finally:
            restarted.set()

    try:
        live = LiveChunks(
            lambda **k: Chunker(camera.url, "cam-rtsp", s, options={"rtsp_transport": "tcp"}, timeout=5.0, **k), s
        )
        for chunk in live:
            chunks.append(chunk)
            if chunk.t_end >= 3.0 and not power_lost.is_set():
                power_lost.set()
                camera.kill()  # power lost mid-stream; back 1.5 s later on the same port
                threading.Timer(1.5, power_back).start()
            gapped = [c for c in chunks if c.gap_before_s > 0]
            if gapped and chunk.t_end >= gapped[0].t_start + 3.0:
                camera.kill()  # and now for good: the push gives up
    finally:
        restarted.wait(30)
        camera.kill()
    assert [c.seq for c in chunks] == list(range(len(chunks))) and len({c.session_id for c in chunks}) == 1
    gapped = [c for c in chunks if c.gap_before_s > 0]
    assert len(gapped) == 1, [(c.seq, c.t_start, c.gap_before_s) for c in chunks]
    before = chunks[chunks.index(gapped[0]) - 1]
    assert before.t_end >= 3.0 and gapped[0].gap_before_s >= 1.5
    assert gapped[0].t_start == pytest.approx(before.t_end + gapped[0].gap_before_s, abs=0.01)
    assert chunks[-1].end_of_stream and chunks[-1].t_end >= gapped[0].t_start + 3.0
    assert live.gave_up is not None and [o.gap_s > 0 for o in live.outages] == [True, False]
    assert live.outages[1].attempts == 8
    assert chunks[0].video_codec == "mjpeg" and chunks[0].audio_codec == "pcm_s16be"
