"""FileSnippetStore with real PyAV encoding and decoding (no mocks)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import av
import numpy as np
import pytest

from episodic.config import Settings
from episodic.core.errors import InputError
from episodic.core.media import SnippetFrame
from episodic.memory.snippet_store import FileSnippetStore

SR = 16000


def make_frames(times: list[float], w: int = 320, h: int = 180) -> list[SnippetFrame]:
    frames = []
    for i, t in enumerate(times):
        rgb = np.zeros((h, w, 3), np.uint8)
        rgb[:, (i * 11) % w] = 255  # a moving bar, so frames differ
        rgb[..., 2] = (i * 17) % 256
        frames.append(SnippetFrame(t, av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")))
    return frames


def tone(seconds: float, hz: float = 440.0) -> np.ndarray:
    n = int(round(seconds * SR))
    return (0.3 * np.sin(2 * np.pi * hz * np.arange(n) / SR)).astype(np.float32)


def probe(path: Path) -> dict:
    """Decode everything; durations from the container and from the decoded frames."""
    with av.open(str(path)) as c:
        info: dict = {"duration": c.duration / 1e6, "streams": sorted(s.type for s in c.streams)}
        if c.streams.video:
            times = []
            for f in c.decode(video=0):
                times.append(f.time)
                info["size"] = (f.width, f.height)
            s = c.streams.video[0]
            info["video_times"] = times
            info["video_duration"] = float(s.duration * s.time_base)
            info["video_codec"] = s.codec_context.name
    with av.open(str(path)) as c:
        if c.streams.audio:
            a = c.streams.audio[0]
            pcm = [f.to_ndarray().reshape(-1) for f in c.decode(audio=0)]
            info["audio"] = np.concatenate(pcm)
            info["audio_rate"] = a.codec_context.sample_rate
            info["audio_duration"] = float(a.duration * a.time_base)
            info["audio_codec"] = a.codec_context.name
    return info


@pytest.fixture()
def store(tmp_path: Path) -> FileSnippetStore:
    return FileSnippetStore(Settings(data_dir=tmp_path / "data"))


def test_video_and_audio_cover_the_segment(store: FileSnippetStore) -> None:
    t0, t1, fps = 100.0, 108.0, 15.0
    # irregular: starts late, a 2 s gap in the middle, ends 1.5 s early
    times = [100.2 + i / fps for i in range(30)] + [104.3 + i / fps for i in range(30)]
    ref = store.put("cam", "cam@000000100000.s", t0, t1, make_frames(times), tone(8.0), SR, fps)
    path = store.path_for(ref.uri)
    assert ref.uri == f"file://{path}" and (ref.t_start, ref.t_end) == (t0, t1)
    assert path == store.root.resolve() / "cam" / "cam@000000100000.s.mp4"
    info = probe(path)
    assert info["streams"] == ["audio", "video"]
    assert (info["video_codec"], info["audio_codec"], info["audio_rate"]) == ("h264", "aac", SR)
    frame = 1.0 / fps
    assert abs(info["duration"] - (t1 - t0)) <= frame
    assert abs(info["video_duration"] - (t1 - t0)) <= frame
    assert abs(info["audio_duration"] - (t1 - t0)) <= frame
    vt = info["video_times"]
    assert vt[0] == 0.0 and vt[-1] + frame >= (t1 - t0) - frame
    # stream timing preserved: the frame after the gap is shown at 104.3 - 100.0
    assert any(abs(t - 4.3) < 0.002 for t in vt)
    assert len(vt) == 61  # 60 frames + the held last frame
    assert info["size"] == (320, 180)
    audio = info["audio"]
    assert audio.size >= 8 * SR - 1024
    assert 0.15 < float(np.sqrt(np.mean(audio[SR : 7 * SR] ** 2))) < 0.3  # the tone came through
    with store.open(ref.uri) as fh:
        assert fh.read(12)[4:8] == b"ftyp"


def test_audio_only_and_video_only(store: FileSnippetStore) -> None:
    short_audio = tone(3.0)  # shorter than the segment: padded with silence
    a = store.put("mic", "mic@000000000000.s", 0.0, 5.5, [], short_audio, SR, 15.0)
    assert a.uri.endswith(".m4a")
    info = probe(store.path_for(a.uri))
    assert info["streams"] == ["audio"]
    assert abs(info["duration"] - 5.5) <= 1 / 15
    assert float(np.abs(info["audio"][int(4.0 * SR) : int(5.0 * SR)]).max()) < 0.01

    v = store.put("cam", "cam@000000002000.s", 2.0, 6.0, make_frames([2.0 + i / 10 for i in range(40)]), None, SR, 10.0)
    assert v.uri.endswith(".mp4")
    info = probe(store.path_for(v.uri))
    assert info["streams"] == ["video"]
    assert abs(info["duration"] - 4.0) <= 0.1
    assert abs(info["video_times"][-1] + 0.1 - 4.0) <= 0.1

    # audio that starts 1 s after the segment is shifted into place (and 1 s before: trimmed)
    late = store.put("mic", "mic@000000020000.s", 20.0, 23.0, [], tone(2.0), SR, 15.0, audio_t_start=21.0)
    pcm = probe(store.path_for(late.uri))["audio"]
    assert float(np.abs(pcm[: int(0.9 * SR)]).max()) < 0.01 < float(np.abs(pcm[int(1.2 * SR) : int(2.8 * SR)]).max())
    early = store.put("mic", "mic@000000030000.s", 30.0, 32.0, [], tone(3.0), SR, 15.0, audio_t_start=29.0)
    info = probe(store.path_for(early.uri))
    assert abs(info["duration"] - 2.0) <= 1 / 15 and float(np.abs(info["audio"][SR : int(1.8 * SR)]).max()) > 0.2

    # a rate the AAC encoder does not take is resampled, not refused
    odd = store.put("mic", "mic@000000010000.s", 10.0, 12.0, [], np.zeros(2 * 15000, np.float32), 15000, 15.0)
    info = probe(store.path_for(odd.uri))
    assert info["audio_rate"] == 16000 and abs(info["duration"] - 2.0) <= 1 / 15

    with pytest.raises(InputError):
        store.put("mic", "empty.s", 0.0, 1.0, [], None, SR, 15.0)
    with pytest.raises(InputError):
        store.put("mic", "backwards.s", 5.0, 4.0, [], tone(1.0), SR, 15.0)


def test_odd_sizes_and_wide_frames_are_fixed(tmp_path: Path) -> None:
    store = FileSnippetStore(Settings(data_dir=tmp_path, snippet_max_width=160))
    frames = make_frames([0.0, 0.5, 1.0], w=321, h=181)
    ref = store.put("cam", "odd.s", 0.0, 1.5, frames, None, SR, 2.0)
    info = probe(store.path_for(ref.uri))
    assert info["size"] == (160, 90)


def test_snippet_dir_with_spaces_and_percent(tmp_path: Path) -> None:
    store = FileSnippetStore(Settings(data_dir=tmp_path, snippet_dir=str(tmp_path / "my snips 100%")))
    ref = store.put("cam", "cam@000000000000.s", 0.0, 1.0, make_frames([0.0]), tone(1.0), SR, 1.0)
    assert ref.uri.startswith("file://") and " " not in ref.uri
    assert store.path_for(ref.uri) == (tmp_path / "my snips 100%" / "cam" / "cam@000000000000.s.mp4").resolve()
    with store.open(ref.uri) as fh:
        assert fh.read(12)[4:8] == b"ftyp"


def test_atomic_overwrite_and_kind_change(store: FileSnippetStore) -> None:
    seg = "cam@000000000000.s"
    first = store.put("cam", seg, 0.0, 2.0, make_frames([0.0, 1.0]), tone(2.0), SR, 1.0)
    path = store.path_for(first.uri)
    before = path.stat().st_ino
    again = store.put("cam", seg, 0.0, 3.0, make_frames([0.0, 1.0, 2.0]), tone(3.0), SR, 1.0)
    assert again.uri == first.uri
    assert path.stat().st_ino != before  # replaced by rename, never rewritten in place
    assert abs(probe(path)["duration"] - 3.0) <= 1.0
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temp files left
    # the same segment re-run as audio-only replaces the .mp4 by an .m4a
    audio_only = store.put("cam", seg, 0.0, 3.0, [], tone(3.0), SR, 1.0)
    assert audio_only.uri.endswith(".m4a")
    assert sorted(p.name for p in path.parent.iterdir()) == [f"{seg}.m4a"]


def test_failed_encode_leaves_nothing(store: FileSnippetStore) -> None:
    class Broken:
        t = 0.0
        frame = "not a frame"

    with pytest.raises(Exception):  # noqa: B017 - whatever PyAV raises, no file may remain
        store.put("cam", "broken.s", 0.0, 1.0, [Broken()], None, SR, 1.0)
    d = store.root / "cam"
    assert not d.exists() or list(d.iterdir()) == []


@pytest.mark.parametrize(
    "uri",
    [
        "file:///etc/passwd",
        "file:///etc/../etc/passwd",
        "http://example.com/x.mp4",
        "/etc/passwd",
        "file://evil.host/x.mp4",
        "",
    ],
)
def test_path_traversal_refused(store: FileSnippetStore, uri: str) -> None:
    with pytest.raises(InputError):
        store.open(uri)


def test_traversal_relative_to_the_snippet_dir(store: FileSnippetStore, tmp_path: Path) -> None:
    ref = store.put("cam", "a.s", 0.0, 1.0, make_frames([0.0]), None, SR, 1.0)
    secret = tmp_path / "data" / "secret.mp4"
    secret.write_bytes(b"secret")
    root = store.root.resolve()
    for uri in (
        f"file://{root}/cam/../../secret.mp4",
        f"file://{root}/cam/%2e%2e/%2e%2e/secret.mp4",
        f"file://{root}",
        f"file://{root}/cam/a.s.mp4?x=1",
    ):
        with pytest.raises(InputError):
            store.open(uri)
    link = root / "cam" / "link.mp4"
    os.symlink(secret, link)
    with pytest.raises(InputError):
        store.open(f"file://{link}")
    with pytest.raises(InputError):
        store.open(f"file://{root}/cam/missing.mp4")
    with store.open(ref.uri) as fh:
        assert len(fh.read()) > 100
    for bad_segment in ("../x", "a/b", ".hidden", "a..b", "x\n"):
        with pytest.raises(InputError):
            store.put("cam", bad_segment, 0.0, 1.0, make_frames([0.0]), None, SR, 1.0)
    for bad_stream in ("..", "../cam", "a/b", "cam\n"):
        with pytest.raises(InputError):
            store.put(bad_stream, "a.s", 0.0, 1.0, make_frames([0.0]), None, SR, 1.0)


def test_delete_stream_and_bytes_used(store: FileSnippetStore) -> None:
    refs = [
        store.put("cam", f"cam@{i:012d}.s", float(i), i + 1.0, make_frames([float(i)]), tone(1.0), SR, 1.0)
        for i in range(4)
    ]
    other = store.put("mic", "mic.s", 0.0, 1.0, [], tone(1.0), SR, 1.0)
    d = store.root / "cam"
    stale_tmp = d / ".cam@x.s.mp4.1.abcd.tmp"
    stale_tmp.write_bytes(b"half")
    os.utime(stale_tmp, (time.time() - 3600, time.time() - 3600))
    fresh_tmp = d / ".cam@y.s.mp4.2.abcd.tmp"
    fresh_tmp.write_bytes(b"being written")
    total = store.bytes_used()
    assert total == store.bytes_used("cam") + store.bytes_used("mic") > 0
    keep = {refs[1].uri, refs[3].uri}
    assert store.delete_stream("cam", keep) == 3  # two snippets and the stale temp file
    assert sorted(p.name for p in d.iterdir()) == sorted(
        [store.path_for(r.uri).name for r in (refs[1], refs[3])] + [fresh_tmp.name]
    )
    assert store.path_for(other.uri).exists()
    assert store.delete_stream("cam", keep) == 0
    fresh_tmp.unlink()
    assert store.delete_stream("cam", set()) == 2
    assert not d.exists()
    assert store.delete_stream("never", set()) == 0
    assert store.bytes_used("never") == 0


def test_delete_uris_is_exact_and_idempotent(store: FileSnippetStore, tmp_path: Path) -> None:
    refs = [store.put("cam", f"cam@{i:012d}.s", float(i), i + 1.0, make_frames([float(i)]), None, SR, 1.0)
            for i in range(3)]
    before = store.bytes_used("cam")
    assert store.delete_uris([refs[0].uri, refs[2].uri]) == 2
    assert [store.path_for(r.uri).exists() for r in refs] == [False, True, False]
    assert 0 < store.bytes_used("cam") < before
    assert store.delete_uris([refs[0].uri, refs[2].uri]) == 0  # already gone: no error
    # never outside the snippet directory, whatever the URI says
    outside = tmp_path / "data" / "keep.mp4"
    outside.write_bytes(b"not ours")
    root = store.root.resolve()
    assert store.delete_uris([f"file://{outside}", f"file://{root}/cam/../../keep.mp4", "s3://b/cam/x.mp4", ""]) == 0
    assert outside.exists()
    assert store.delete_uris([refs[1].uri]) == 1
    assert not (store.root / "cam").exists()  # the stream's last snippet: its folder goes too


def test_a_moved_data_directory_still_serves_its_snippets(tmp_path: Path) -> None:
    import shutil

    old = FileSnippetStore(Settings(data_dir=tmp_path / "old"))
    ref = old.put("cam", "cam@000000000000.s", 0.0, 1.0, make_frames([0.0]), None, SR, 1.0)
    shutil.move(str(tmp_path / "old"), str(tmp_path / "new"))
    moved = FileSnippetStore(Settings(data_dir=tmp_path / "new"))
    path = moved.path_for(ref.uri)  # the record still names /old/…
    assert path == (tmp_path / "new" / "snippets" / "cam" / "cam@000000000000.s.mp4").resolve()
    with moved.open(ref.uri) as fh:
        assert fh.read(12)[4:8] == b"ftyp"
    # only that stream's own file under this directory: nothing else is reachable that way
    for uri in (ref.uri.replace("cam@000000000000.s", "cam@000000009999.s"),
                ref.uri.replace("/cam/", "/other/"), "file:///etc/cam/passwd.mp4"):
        with pytest.raises(InputError):
            moved.path_for(uri)
    assert moved.delete_stream("cam", {ref.uri}) == 0  # kept: the old URI names this file
