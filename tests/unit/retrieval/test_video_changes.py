"""Brief changes read from the compressed video: predicted frames far larger than usual and
keyframes sooner than the encoder's rhythm are changes; two close together are a brief change;
the look-again search looks there first, with no memory to seed it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from episodic.config import ConfigError, Settings, validate
from episodic.retrieval.grid_search import locate
from episodic.retrieval.video_changes import (
    Change,
    MediaFile,
    brief_shots,
    brief_shots_of,
    changes_in,
    packet_table,
)
from episodic.retrieval.video_grid import FileFrames, VideoGrid
from episodic.samples import _texture

from .test_grid_search import RedLooker

W, H = 160, 96
RED = (230, 0, 0)


def _table(fps: float, seconds: float, size_at, key_at) -> np.ndarray:
    rows = []
    for i in range(round(fps * seconds)):
        t = i / fps
        rows.append((t, size_at(i, t), 1 if key_at(i, t) else 0))
    return np.asarray(rows, dtype=float)


def test_a_frame_far_larger_than_usual_is_a_change_and_a_b_frame_pattern_is_not():
    # x264 with B-frames: three small frames, one large, over and over; one huge frame at 30 s
    table = _table(5, 60, lambda i, t: 30000 if t == 30.0 else (4000 if i % 4 == 0 else 700),
                   lambda i, t: i == 0)
    assert [c.t for c in changes_in(table)] == [30.0]
    # a median baseline would call every fourth frame a change
    table = _table(5, 60, lambda i, t: 4000 if i % 4 == 0 else 700, lambda i, t: i == 0)
    assert changes_in(table) == []


def test_keyframes_on_the_encoders_rhythm_are_not_changes_an_early_one_is():
    # a keyframe every 2 s; the encoder cut to a new scene at 31.0 s and restarted its rhythm there
    keys = {round(2.0 * n, 1) for n in range(16)} | {31.0} | {round(31.0 + 2.0 * n, 1) for n in range(15)}
    table = _table(5, 60, lambda i, t: 25000 if round(t, 1) in keys else 2500, lambda i, t: round(t, 1) in keys)
    assert [c.t for c in changes_in(table)] == [31.0]


def test_what_was_on_screen_between_two_close_changes_is_a_brief_shot():
    changes = [Change(10.0, 2.0), Change(50.0, 2.0), Change(52.0, 3.0), Change(100.0, 4.0)]
    # the shot between 50 and 52 s first; then each lone change as the second before it and the
    # second after it, at 0.6 of its strength
    assert [(b.t_start, b.t_end, round(b.strength, 2)) for b in brief_shots(changes)] == [
        (50.0, 52.0, 2.5), (99.0, 100.0, 2.4), (100.0, 101.0, 2.4), (9.0, 10.0, 1.2), (10.0, 11.0, 1.2)]
    # an encoder that marks every frame of a brief scene as new: its shots all lie inside it
    run = [Change(200.0 + 0.2 * i, 1.1) for i in range(11)]
    shots = [b for b in brief_shots([*changes, *run]) if b.t_start >= 150]
    assert len(shots) == 10 and all(200.0 - 1e-6 <= b.t_start < b.t_end <= 202.0 + 1e-6 for b in shots)
    assert brief_shots([]) == []


def _encode(path: Path, seconds: float, fps: int, flash: tuple[float, float] | None, camera_like: bool) -> None:
    """Textured scenes changing every 10 s, panning, with sensor noise; red during ``flash``."""
    import av

    rng = np.random.default_rng(5)
    noise = [rng.integers(-4, 5, (H, W, 3), dtype=np.int16) for _ in range(4)]
    options = {"preset": "veryfast", "crf": "23"} | ({"g": str(2 * fps), "bf": "0"} if camera_like else {})
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        stream.options = options
        scenes: dict[int, np.ndarray] = {}
        for i in range(round(seconds * fps)):
            t = i / fps
            if flash and flash[0] <= t < flash[1]:
                img = np.zeros((H, W, 3), np.int16) + np.asarray(RED, np.int16)
            else:
                scene = int(t // 10)
                if scene not in scenes:
                    scenes[scene] = _texture(scene, (90 + scene * 13 % 120, 120, 150), W, H).astype(np.int16)
                    scenes[scene][..., 0] //= 3  # nothing red but the flash
                img = np.roll(scenes[scene], abs(i % 16 - 8), axis=1)
            frame = av.VideoFrame.from_ndarray(np.clip(img + noise[i % 4], 0, 255).astype(np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


@pytest.mark.parametrize("camera_like", [True, False], ids=["keyframe-every-2s", "x264-defaults"])
def test_a_red_flash_in_a_real_file_is_the_strongest_brief_change(tmp_path: Path, camera_like: bool):
    flash = (95.3, 97.3)
    path = tmp_path / "flash.mp4"
    _encode(path, 180.0, 5, flash, camera_like)
    table = packet_table(path)
    assert len(table) == 900 and packet_table(path) is table  # read once, then kept
    def flashed(shots: list, offset: float = 0.0) -> list[float]:
        """The middles of the shots whose middle frame is the flash."""
        middles = [round((b.t_start + b.t_end) / 2 - offset, 1) for b in shots]
        return sorted(m for m in middles if flash[0] <= m < flash[1])

    shots = brief_shots_of([MediaFile(path)])
    # among the three strongest brief shots, at least one shows the flash (the others are the
    # seconds around it, e.g. the shot after it until the next cut)
    assert flashed(shots[:3])
    # the same file as two stored snippets of one stream: found at each one's stream time
    both = brief_shots_of([MediaFile(path, 0.0, 0.0, 150.0), MediaFile(path, 1000.0, 1000.0, 1180.0)])
    assert flashed(both) == flashed(both, 1000.0) == flashed(shots)
    assert brief_shots_of([MediaFile(path)], budget_s=0.0) == []  # out of time: no file opened


def test_a_stored_snippet_is_read_at_its_stream_time(tmp_path: Path):
    import av

    from episodic.core.media import SnippetFrame
    from episodic.memory.snippet_store import FileSnippetStore
    from episodic.retrieval.video_grid import SnippetFrames

    def frame(t: float) -> SnippetFrame:
        scene = _texture(1 if 3.0 <= t - 100.0 < 5.0 else 0, (90, 120, 150), W, H)
        return SnippetFrame(t=t, frame=av.VideoFrame.from_ndarray(scene, format="rgb24").reformat(format="yuv420p"))

    store = FileSnippetStore(Settings(data_dir=tmp_path))
    ref = store.put("cam", "cam@a", 100.0, 110.0, [frame(100.0 + i / 5) for i in range(50)], None, 16000, 5.0)
    brief = brief_shots_of(SnippetFrames([ref], store.path_for).media_files())
    assert brief and brief[0].t_start == pytest.approx(103.0, abs=0.25) and brief[0].t_end == pytest.approx(105.0, abs=0.25)


def test_unreadable_files_have_no_changes(tmp_path: Path):
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    assert len(packet_table(junk)) == 0
    assert brief_shots_of([MediaFile(junk), MediaFile(tmp_path / "missing.mp4")]) == []


def test_a_file_never_ingested_is_searched_where_it_changed_first(tmp_path: Path):
    # 10 minutes; the root's frames fall every 9.375 s (at 4.7 s + 9.375 k) and the first look
    # between them at 9.375 k: a 2 s flash from 9.375 × 30 + 1.5 s is seen by neither
    span, fps = 600.0, 5
    flash = (9.375 * 30 + 1.5, 9.375 * 30 + 3.5)
    path = tmp_path / "walk.mp4"
    _encode(path, span, fps, flash, camera_like=True)
    source = FileFrames(path)
    try:
        blind = locate("red?", VideoGrid(source), RedLooker(), max_frames=128, brief_shots=0)
        looker = RedLooker()
        seen = locate("red?", VideoGrid(source), looker, max_frames=128, brief_shots=64)
    finally:
        source.close()
    assert not blind.moments  # the control: sampling alone misses it at this budget
    first = looker.views[0]  # one look at the brief shots, one frame each: one of them is the flash
    assert first.spans and len(first.cells) <= 64
    assert any(flash[0] <= c.t_mid < flash[1] for c in first.cells)
    assert seen.moments and flash[0] - 1.0 <= seen.moments[0].t <= flash[1] + 1.0
    assert seen.frames_examined <= 128


def test_brief_shots_are_a_setting_with_a_range():
    assert Settings().look_brief_shots == 64
    with pytest.raises(ConfigError, match="look_brief_shots"):
        validate(Settings(look_brief_shots=-1))


def test_out_of_time_the_files_read_are_spread_over_the_span(monkeypatch):
    from types import SimpleNamespace

    from episodic.retrieval import video_changes

    read: list[str] = []
    clock = iter(range(1000))
    monkeypatch.setattr(video_changes, "time", SimpleNamespace(perf_counter=lambda: float(next(clock))))
    monkeypatch.setattr(video_changes, "packet_table",
                        lambda path, budget_s=None: read.append(path.name) or np.zeros((0, 3)))
    files = [MediaFile(Path(f"s{i}.mp4"), 8.0 * i, 8.0 * i, 8.0 * i + 8) for i in range(24)]
    assert brief_shots_of(files, budget_s=3.5) == []
    assert read == ["s0.mp4", "s8.mp4", "s16.mp4"]  # every 8th first: the whole span, thinly


def test_a_long_file_read_out_of_time_gives_what_was_read_and_is_not_kept(tmp_path: Path):
    import av

    path = tmp_path / "long.mp4"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(1500):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), i % 255, np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    partial = packet_table(path, budget_s=0.0)
    assert len(partial) == 1024  # checked every 1024 packets
    whole = packet_table(path)
    assert len(whole) == 1500 and packet_table(path, budget_s=0.0) is whole  # the whole one is kept
