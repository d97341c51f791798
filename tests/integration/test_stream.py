"""Ingest without models: decoding, sampling, boundaries, segmentation, sample recordings."""

from __future__ import annotations

import random
from itertools import pairwise
from pathlib import Path

import av
import numpy as np
import pytest

from episodic.config import Settings
from episodic.core.errors import InputError, MediaError
from episodic.core.media import Boundary, SampledFrame, Segment
from episodic.samples import Scene, Speech, demo_scenes, make_recording, synthesize
from episodic.stream.boundaries import AudioPauseDetector, VisualBoundaryDetector, energy_db
from episodic.stream.decode import MediaDecoder, probe
from episodic.stream.sampling import FrameSampler, SnippetDecimator
from episodic.stream.segmentation import BoundaryPlanner, Span, StreamSegmenter

SETTINGS = Settings()
RATE = SETTINGS.audio_sample_rate_hz
W, H = 320, 180  # small recordings keep the suite fast; SSIM runs at 160 wide anyway

SCENE_LENGTHS = [7.0, 12.0, 6.0, 15.0, 8.0]
SCENES = [
    Scene(d, seed=11 * (i + 1), tint=tint, text=text)
    for i, (d, tint, text) in enumerate(
        zip(
            SCENE_LENGTHS,
            [(90, 110, 160), (200, 160, 90), (120, 120, 120), (80, 170, 80), (150, 90, 60)],
            ["NORTH BRIDGE", "KITCHEN", "", "PARK", "LIBRARY"],
            strict=True,
        )
    )
]
SPEECH = [
    Speech(1.0, "Anna bought two red apples."),
    Speech(9.0, "The bus leaves at nine."),
    Speech(27.0, "Ben lost his blue umbrella."),
    Speech(41.0, "Room twelve is closed."),
]


# ---------------------------------------------------------------------------------------
# helpers


def run_segmenter(path: Path, settings: Settings = SETTINGS) -> tuple[list[Segment], MediaDecoder]:
    with MediaDecoder(path, settings) as dec:
        seg = StreamSegmenter(settings, has_video=dec.info.has_video, has_audio=dec.info.has_audio)
        out: list[Segment] = []
        for kind, t, item in dec:
            out += seg.push(kind, t, item)
        out += seg.finish()
    return out, dec


def assert_well_formed(segments: list[Segment], duration: float, tol: float = 0.15) -> None:
    assert segments, "no segments"
    assert segments[0].t_start == 0.0
    for a, b in pairwise(segments):
        assert a.t_end == pytest.approx(b.t_start, abs=1e-9), "segments must be contiguous"
    assert [s.index for s in segments] == list(range(len(segments)))
    assert segments[-1].t_end == pytest.approx(duration, abs=tol)
    for s in segments:
        for f in s.frames:
            assert s.t_start - 1e-6 <= f.t < s.t_end
        for f in s.snippet_frames:
            assert s.t_start - 1e-6 <= f.t < s.t_end


def assert_lengths(segments: list[Segment], lo: float = 5.0, hi: float = 10.0) -> None:
    for s in segments:
        assert lo - 1e-6 <= s.duration_s <= hi + 1e-6, (s.t_start, s.t_end)


def texture(seed: int, w: int = 320, h: int = 180) -> np.ndarray:
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, size=(h // 10, w // 10, 3), dtype=np.uint8)
    return np.ascontiguousarray(np.kron(small, np.ones((10, 10, 1), dtype=np.uint8)))


def vframe(img: np.ndarray) -> av.VideoFrame:
    return av.VideoFrame.from_ndarray(img, format="rgb24")


def quiet_noise(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 1e-3, n).astype(np.float32)  # ≈ −60 dBFS


def loud_noise(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 0.1, n).astype(np.float32)  # ≈ −20 dBFS


def push_in_blocks(det: AudioPauseDetector, x: np.ndarray, seed: int) -> list[Boundary]:
    rng = random.Random(seed)
    out: list[Boundary] = []
    i = 0
    while i < len(x):
        n = rng.randint(1, 5000)
        out += det.push(i / RATE, x[i : i + n])
        i += n
    return out + det.finish()


# ---------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def media_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
def scenes_mp4(media_dir: Path):
    truth = make_recording(media_dir / "scenes.mp4", SCENES, SPEECH, width=W, height=H)
    segments, dec = run_segmenter(truth.path)
    return truth, segments, dec


@pytest.fixture(scope="module")
def short_webm(media_dir: Path):
    scenes = [Scene(6.0, 1, (200, 60, 60), "RED"), Scene(5.0, 2, (60, 60, 200), "BLUE")]
    return make_recording(
        media_dir / "short.webm", scenes, [Speech(0.5, "Hello there.")], width=W, height=H
    )


# ---------------------------------------------------------------------------------------
# end to end: cuts become boundaries, segments are 5–10 s and tile the stream


def test_cuts_are_segment_boundaries(scenes_mp4) -> None:
    truth, segments, dec = scenes_mp4
    assert truth.cuts == [7.0, 19.0, 25.0, 40.0]
    edges = [s.t_start for s in segments[1:]]
    for cut in truth.cuts:
        assert min(abs(cut - e) for e in edges) <= 1.0, (cut, edges)
    assert dec.warnings == []


def test_segments_tile_the_recording(scenes_mp4) -> None:
    truth, segments, _ = scenes_mp4
    assert_well_formed(segments, truth.duration_s)
    assert_lengths(segments)
    for s in segments:
        assert s.frames, "every segment of a video has sampled frames"
        assert s.snippet_frames
        assert s.sample_rate_hz == RATE
        assert s.audio.dtype == np.float32
        assert s.audio_t_start == pytest.approx(s.t_start, abs=1e-3)
        assert len(s.audio) / RATE == pytest.approx(s.duration_s, abs=0.05)
        assert s.boundary_kind in {"visual", "pause", "max", "end"}
    assert segments[-1].boundary_kind == "end"
    total_audio = sum(len(s.audio) for s in segments) / RATE
    assert total_audio == pytest.approx(truth.duration_s, abs=0.1)


def test_static_scenes_sample_about_once_per_second(scenes_mp4) -> None:
    truth, segments, _ = scenes_mp4
    n = sum(len(s.frames) for s in segments)
    # gentle motion: about 1 fps, plus one extra sample at each cut
    assert truth.duration_s * 0.9 <= n <= truth.duration_s * 1.6


def test_speech_is_in_the_right_segment(scenes_mp4) -> None:
    truth, segments, _ = scenes_mp4
    for start, end, _text in truth.speech:
        mid = (start + end) / 2
        seg = next(s for s in segments if s.t_start <= mid < s.t_end)
        i = round((mid - seg.audio_t_start) * RATE)
        window = seg.audio[max(0, i - 800) : i + 800]
        assert energy_db(window) > -35, "speech should be loud in its segment's audio"


def test_video_only_segmentation(media_dir: Path) -> None:
    scenes = [
        Scene(9.0, 5, (100, 100, 200)),
        Scene(6.0, 6, (200, 100, 100)),
        Scene(13.0, 7, (90, 200, 90)),
    ]
    truth = make_recording(media_dir / "video_only.mp4", scenes, audio=False, width=W, height=H)
    segments, dec = run_segmenter(truth.path)
    assert not dec.info.has_audio
    assert_well_formed(segments, truth.duration_s)
    assert_lengths(segments)
    edges = [s.t_start for s in segments[1:]]
    for cut in truth.cuts:
        assert min(abs(cut - e) for e in edges) <= 1.0
    assert all(s.audio.size == 0 for s in segments)


def test_audio_only_segmentation_splits_at_pauses(media_dir: Path) -> None:
    speech = [
        Speech(0.5, "The red kettle is on the shelf next to the window."),
        Speech(6.0, "Seven people came to the meeting on Tuesday."),
        Speech(12.5, "The parcel arrived at four in the afternoon."),
        Speech(19.0, "Her phone number ends in three three nine."),
    ]
    truth = make_recording(media_dir / "speech.wav", [Scene(25.0, 1)], speech, video=False)
    segments, dec = run_segmenter(truth.path)
    assert dec.info.has_audio and not dec.info.has_video
    assert_well_formed(segments, truth.duration_s, tol=0.01)
    assert_lengths(segments)
    # every internal edge falls in a pause, never inside a sentence
    for s in segments[1:]:
        for start, end, _ in truth.speech:
            assert not (start + 0.05 < s.t_start < end - 0.05), (s.t_start, start, end)
    assert all(s.frames == [] for s in segments)


def test_short_recording_is_one_segment(media_dir: Path) -> None:
    truth = make_recording(
        media_dir / "short.mp4", [Scene(3.0, 9, (50, 50, 50))], width=W, height=H
    )
    segments, _ = run_segmenter(truth.path)
    assert len(segments) == 1
    assert segments[0].t_start == 0.0
    assert segments[0].t_end == pytest.approx(3.0, abs=0.1)
    assert segments[0].boundary_kind == "end"


def test_segmenter_block_sizes_do_not_matter() -> None:
    rng = np.random.default_rng(3)
    parts = []
    for _ in range(8):  # talk 2–4 s, pause 0.3–1.2 s
        parts.append(loud_noise(int(rng.uniform(2, 4) * RATE), seed=int(rng.integers(1000))))
        parts.append(quiet_noise(int(rng.uniform(0.3, 1.2) * RATE)))
    audio = np.concatenate(parts)

    settings = Settings(asr_context_after_s=3.0)  # off by default

    def spans(block: int | None) -> list[tuple[float, float, int]]:
        seg = StreamSegmenter(settings)
        out: list[Segment] = []
        r = random.Random(block)
        i = 0
        while i < len(audio):
            n = block or r.randint(1, 20000)
            out += seg.push_audio(i / RATE, audio[i : i + n])
            i += n
        out += seg.finish()
        for s in out:  # the audio after a segment is the stream's own, from where it ends
            a = round(s.audio_t_start * RATE) + s.audio.size
            assert np.array_equal(s.audio_after, audio[a : a + s.audio_after.size])
        return [(round(s.t_start, 4), round(s.t_end, 4), s.audio_after.size) for s in out]

    reference = spans(1600)
    assert spans(None) == reference
    assert spans(48000) == reference
    assert reference[-1][1] == pytest.approx(len(audio) / RATE, abs=1e-3)
    # every segment but the last hears what follows it, up to asr_context_after_s
    after = [n for *_, n in reference]
    assert after[-1] == 0 and all(0 < n <= 3.0 * RATE for n in after[:-1]), after
    assert max(after) == round(3.0 * RATE)
    # off: no audio after (the default)
    seg = StreamSegmenter(SETTINGS)
    assert all(s.audio_after.size == 0 for s in seg.push_audio(0.0, audio) + seg.finish())


def test_segmenter_interleaved_streams_and_bounded_memory() -> None:
    seg = StreamSegmenter(SETTINGS)
    frames = [vframe(texture(1)), vframe(texture(2))]
    block = loud_noise(4096)
    out: list[Segment] = []
    max_buffered = 0.0
    fps = 25
    duration = 120.0
    audio_block = 4096
    a_pos = 0
    for i in range(int(duration * fps)):
        t = i / fps
        scene = int(t // 17) % 2  # a cut every 17 s
        out += seg.push_video_frame(t, frames[scene])
        while a_pos / RATE < t + 0.3:  # audio runs slightly ahead, in odd blocks
            out += seg.push_audio(a_pos / RATE, block[:audio_block])
            a_pos += audio_block
        buffered = sum(x.size for _, x in seg._audio) / RATE
        max_buffered = max(max_buffered, buffered, t - seg.open_since)
    out += seg.finish()
    assert_well_formed(out, max(duration, a_pos / RATE), tol=0.05)
    assert_lengths(out)
    assert seg.segments_emitted == len(out)
    # held segment + open segment + lookahead: never more than max + max + min
    assert max_buffered <= 2 * SETTINGS.segment_max_s + SETTINGS.segment_min_s + 1
    edges = [s.t_start for s in out]
    for cut in (17.0, 34.0, 51.0, 68.0, 85.0, 102.0):
        assert min(abs(cut - e) for e in edges) <= 0.2


def test_zero_duration_stream_yields_nothing() -> None:
    seg = StreamSegmenter(SETTINGS)
    assert seg.finish() == []
    assert seg.finish() == []
    with pytest.raises(RuntimeError):
        seg.push_audio(0.0, np.zeros(10, np.float32))


# ---------------------------------------------------------------------------------------
# BoundaryPlanner: the decisions alone


def plan(cuts=(), pauses=(), end: float = 0.0, now_steps=None) -> list[Span]:
    p = BoundaryPlanner(SETTINGS)
    for c in cuts:
        p.add(Boundary(c, "visual", 0.9))
    for pz in pauses:
        p.add(pz)
    out: list[Span] = []
    for now in now_steps or []:
        out += p.advance(now)
    return out + p.finish(end)


def pause(t: float, length: float) -> Boundary:
    return Boundary(t, "pause", length, start=t - length / 2, end=t + length / 2)


def spans_of(result: list[Span]) -> list[tuple[float, float, str]]:
    return [(round(s.t_start, 3), round(s.t_end, 3), s.kind) for s in result]


def test_planner_drops_cut_before_min() -> None:
    assert spans_of(plan(cuts=[4.9], end=9.0)) == [(0.0, 9.0, "end")]


def test_planner_visual_cut_closes_immediately_but_is_held_back() -> None:
    p = BoundaryPlanner(SETTINGS)
    p.add(Boundary(6.0, "visual", 0.8))
    assert p.advance(6.0) == []  # closed, but held in case the stream ends right after
    assert p.pending_start == 0.0 and p.t0 == 6.0
    p.add(Boundary(13.0, "visual", 0.8))
    assert spans_of(p.advance(13.0)) == [(0.0, 6.0, "visual")]
    assert spans_of(p.finish(20.0)) == [(6.0, 13.0, "visual"), (13.0, 20.0, "end")]


def test_a_cut_waiting_for_the_audio_after_it_is_already_the_last_edge() -> None:
    """A visual cut is decided only once the audio after it shows it is not inside a sentence;
    until then the segment a close would end with starts at the cut, not at the open
    segment's start (a checkpoint placed from the open segment's start cut off a 2 s tail
    and re-split the memory before it, off the cut)."""
    p = BoundaryPlanner(SETTINGS, speech=lambda a, b: [])
    p.add(Boundary(8.0, "visual", 0.9))
    assert p.advance(8.5) == [] and p.t0 == 0.0  # undecided: no audio after the cut yet
    assert p.last_edge == 8.0
    assert spans_of(p.finish(13.0)) == [(0.0, 8.0, "visual"), (8.0, 13.0, "end")]
    q = BoundaryPlanner(SETTINGS)
    assert q.last_edge == 0.0


def test_planner_long_span_split_at_longest_pause() -> None:
    pauses = [pause(7.0, 0.4), pause(8.5, 0.8), pause(11.5, 2.0)]  # the last is out of range
    p = BoundaryPlanner(SETTINGS)
    for pz in pauses:
        p.add(pz)
    assert p.advance(14.9) == []  # waits for lookahead up to t0 + max + min
    p.advance(15.0)
    assert p.t0 == pytest.approx(8.5)
    assert spans_of(p.finish(30.0))[0] == (0.0, 8.5, "pause")


def test_planner_pause_ties_go_later_and_no_pause_means_max() -> None:
    assert spans_of(plan(pauses=[pause(6.0, 0.5), pause(9.0, 0.5)], end=30.0))[0] == (
        0.0,
        9.0,
        "pause",
    )
    assert spans_of(plan(end=30.0)) == [
        (0.0, 10.0, "max"),
        (10.0, 20.0, "max"),
        (20.0, 30.0, "end"),
    ]


def test_planner_lookahead_split_near_cut() -> None:
    # A cut at 13 s: splitting at 10 would leave 3 s; split [0, 13) into two legal parts.
    assert spans_of(plan(cuts=[13.0], end=20.0)) == [
        (0.0, 6.5, "max"),
        (6.5, 13.0, "visual"),
        (13.0, 20.0, "end"),
    ]
    # A pause inside the allowed range [5, 8] wins over the midpoint...
    assert spans_of(plan(cuts=[13.0], pauses=[pause(7.5, 0.3)], end=20.0))[0] == (0.0, 7.5, "pause")
    # ...but one that would leave the second part too short is ignored.
    assert spans_of(plan(cuts=[13.0], pauses=[pause(9.0, 1.0)], end=20.0))[0] == (0.0, 6.5, "max")


def test_planner_tail_merges_into_previous_segment() -> None:
    assert spans_of(plan(cuts=[7.0], end=9.0)) == [(0.0, 9.0, "end")]
    # merged span too long (12 s): split again into equal halves
    assert spans_of(plan(cuts=[9.5], end=12.0)) == [(0.0, 6.0, "max"), (6.0, 12.0, "end")]
    # a tail of 5 s or more stays its own segment
    assert spans_of(plan(cuts=[8.0], end=13.0)) == [(0.0, 8.0, "visual"), (8.0, 13.0, "end")]


def test_planner_short_and_empty_streams() -> None:
    assert spans_of(plan(end=3.0)) == [(0.0, 3.0, "end")]
    assert plan(end=0.0) == []


def test_planner_splits_inside_a_long_silence() -> None:
    p = BoundaryPlanner(SETTINGS)
    ongoing = Boundary(19.0, "pause", 22.0, start=8.0, end=30.0)  # still in progress
    released = p.advance(30.0, provisional=[ongoing])
    # first split inside the silence as late as allowed (10), the next at its centre (19)
    assert spans_of(released) == [(0.0, 10.0, "pause")]
    assert p.t0 == pytest.approx(19.0)
    # the run is over by then; the last 11 s are split in halves, both legal
    assert spans_of(p.finish(30.0)) == [
        (10.0, 19.0, "pause"),
        (19.0, 24.5, "max"),
        (24.5, 30.0, "end"),
    ]


def test_planner_random_candidates_respect_the_rules() -> None:
    rng = random.Random(7)
    for _ in range(300):
        end = rng.uniform(0.0, 90.0)
        cuts = sorted(rng.uniform(0, end) for _ in range(rng.randint(0, 12)))
        pauses = [
            pause(t, rng.uniform(0.2, 2.0))
            for t in (rng.uniform(0, end) for _ in range(rng.randint(0, 15)))
        ]
        p = BoundaryPlanner(SETTINGS)
        for pz in pauses:
            p.add(pz)
        out: list[Span] = []
        now = 0.0
        ci = 0
        while now < end:  # cuts arrive as time passes
            now = min(end, now + rng.uniform(0.05, 3.0))
            while ci < len(cuts) and cuts[ci] <= now:
                p.add(Boundary(cuts[ci], "visual", 0.9))
                ci += 1
            out += p.advance(now)
        out += p.finish(end)
        if end < 1e-6:
            assert out == []
            continue
        assert out[0].t_start == 0.0 and out[-1].t_end == pytest.approx(end)
        for a, b in pairwise(out):
            assert a.t_end == b.t_start
        if end >= 5.0:
            for s in out:
                assert 5.0 - 1e-6 <= s.duration_s <= 10.0 + 1e-6, (s, cuts, end)
        else:
            assert len(out) == 1
        # cuts spaced >= min apart (and from both ends) must all become edges
        spaced = [c for c in cuts if c >= 5.0 and end - c >= 5.0]
        if all(b - a >= 5.0 for a, b in pairwise(spaced)) and spaced == [
            c for c in cuts if 0 < c < end
        ]:
            edges = {round(s.t_start, 9) for s in out}
            assert all(round(c, 9) in edges for c in spaced)


# ---------------------------------------------------------------------------------------
# sampling


def test_sampler_static_scene_about_one_fps() -> None:
    sampler = FrameSampler(SETTINGS)
    frame = vframe(texture(5))
    picked = [s for i in range(250) if (s := sampler.offer(i / 25, frame)) is not None]
    assert 9 <= len(picked) <= 11
    f = picked[0]
    assert f.rgb.dtype == np.uint8 and f.rgb.shape == (180, 320, 3)
    assert f.grey.dtype == np.float32 and f.grey.shape == (90, SETTINGS.ssim_width)
    assert float(f.grey.min()) >= 0.0 and float(f.grey.max()) <= 1.0


def test_sampler_moving_scene_samples_faster() -> None:
    sampler = FrameSampler(SETTINGS)
    base = texture(6, w=640)
    n = 0
    for i in range(250):  # a pan of 100 px/s at 25 fps
        img = np.ascontiguousarray(base[:, i * 4 % 320 : i * 4 % 320 + 320])
        if sampler.offer(i / 25, vframe(img)) is not None:
            n += 1
    assert n >= 50  # ≥ 5 fps (the 10 fps cap on a 25 fps source gives ~8)
    assert n <= 10 * 10 + 1


def test_sampler_frame_sizes_are_even_and_bounded() -> None:
    s = Settings(analysis_max_width=320)
    sampler = FrameSampler(s)
    big = vframe(np.zeros((723, 1281, 3), np.uint8))
    f = sampler.offer(0.0, big)
    assert f is not None
    h, w = f.rgb.shape[:2]
    assert w == 320 and h % 2 == 0 and abs(h - 320 * 723 / 1281) <= 2


def test_snippet_decimator_rate_and_format() -> None:
    dec = SnippetDecimator(Settings(snippet_max_width=160))
    frame = vframe(texture(3))
    kept = [k for i in range(250) if (k := dec.offer(i / 25, frame)) is not None]
    assert 140 <= len(kept) <= 151  # 10 s at ≤ 15 fps
    f = kept[0].frame
    assert f.format.name == "yuv420p" and f.width == 160 and f.height == 90
    ts = [k.t for k in kept]
    assert min(b - a for a, b in pairwise(ts)) >= 0.04 - 1e-9


# ---------------------------------------------------------------------------------------
# boundary detectors


def _sample(t: float, img: np.ndarray) -> SampledFrame:
    return FrameSampler(SETTINGS).make_sample(t, vframe(img))


def test_visual_detector_cut_and_no_cut() -> None:
    det = VisualBoundaryDetector(SETTINGS)
    a, b = texture(1), texture(2)
    assert det.update(_sample(0.0, a)) is None
    assert det.update(_sample(0.1, a)) is None
    cut = det.update(_sample(0.2, b))
    assert cut is not None and cut.kind == "visual" and cut.t == 0.2 and cut.score > 0.65


def test_visual_detector_ignores_a_pan() -> None:
    det = VisualBoundaryDetector(SETTINGS)
    base = texture(4, w=640)
    for i in range(20):  # 12 px per sample on a 320-wide picture of fine blocks
        img = np.ascontiguousarray(base[:, i * 12 : i * 12 + 320])
        assert det.update(_sample(i * 0.1, img)) is None


def test_pause_detector_finds_planted_silence() -> None:
    x = np.concatenate([loud_noise(3 * RATE), quiet_noise(RATE), loud_noise(2 * RATE, seed=2)])
    for seed in (1, 2, 3):
        found = push_in_blocks(AudioPauseDetector(SETTINGS), x, seed)
        assert len(found) == 1
        p = found[0]
        assert p.kind == "pause"
        assert p.t == pytest.approx(3.5, abs=0.1)
        assert p.score == pytest.approx(1.0, abs=0.15)
        assert p.start == pytest.approx(3.0, abs=0.1) and p.end == pytest.approx(4.0, abs=0.1)


def test_pause_detector_edges_and_short_gaps() -> None:
    x = np.concatenate(
        [
            quiet_noise(RATE),
            loud_noise(RATE),
            quiet_noise(RATE // 20),
            loud_noise(RATE),
            quiet_noise(RATE // 2),
        ]
    )
    found = push_in_blocks(AudioPauseDetector(SETTINGS), x, 4)
    # silence from the start, no 50 ms blip, and the trailing silence at finish()
    assert [round(p.t, 1) for p in found] == [0.5, 3.3]
    assert found[0].start == 0.0


def test_pause_detector_reports_open_run() -> None:
    det = AudioPauseDetector(SETTINGS)
    assert det.push(0.0, loud_noise(RATE)) == []
    assert det.push(1.0, quiet_noise(2 * RATE)) == []
    run = det.open_run()
    assert run is not None and run.start == pytest.approx(1.0) and run.score == pytest.approx(2.0)


def test_energy_db() -> None:
    t = np.arange(RATE) / RATE
    assert energy_db(np.sin(2 * np.pi * 440 * t).astype(np.float32)) == pytest.approx(
        -3.01, abs=0.05
    )
    assert energy_db(np.zeros(100, np.float32)) == -120.0
    assert energy_db(np.zeros(0, np.float32)) == -120.0


# ---------------------------------------------------------------------------------------
# decoder


def collect(path: Path | str, settings: Settings = SETTINGS):
    with MediaDecoder(path, settings) as dec:
        items = list(dec)
    return dec, items


def test_decoder_mp4_h264_aac(scenes_mp4) -> None:
    truth = scenes_mp4[0]
    dec, items = collect(truth.path)
    info = dec.info
    assert info.has_video and info.has_audio
    assert (info.video_codec, info.audio_codec) == ("h264", "aac")
    assert (info.width, info.height) == (W, H) and info.fps == pytest.approx(25)
    assert info.duration_s == pytest.approx(truth.duration_s, abs=0.1)
    video = [t for k, t, _ in items if k == "video"]
    audio = [(t, x) for k, t, x in items if k == "audio"]
    assert video[0] == pytest.approx(0.0, abs=0.05) and audio[0][0] == pytest.approx(0.0, abs=0.05)
    assert len(video) == round(truth.duration_s * 25)
    assert all(b >= a for a, b in pairwise(video))
    assert all(x.dtype == np.float32 and x.ndim == 1 for _, x in audio)
    assert sum(x.size for _, x in audio) / RATE == pytest.approx(truth.duration_s, abs=0.1)
    # audio blocks are contiguous on the 16 kHz clock
    for (t0, x0), (t1, _) in pairwise(audio):
        assert t1 == pytest.approx(t0 + x0.size / RATE, abs=2e-3)


def test_decoder_webm_vp9_opus(short_webm) -> None:
    dec, items = collect(short_webm.path)
    assert (dec.info.video_codec, dec.info.audio_codec) == ("vp9", "opus")
    assert "webm" in dec.info.container
    kinds = {k for k, _, _ in items}
    assert kinds == {"video", "audio"}
    segments, _ = run_segmenter(short_webm.path)
    assert_well_formed(segments, short_webm.duration_s)
    assert [round(s.t_start) for s in segments] == [0, 6]


def test_decoder_audio_only_m4a_and_wav(media_dir: Path) -> None:
    for name in ("voice.m4a", "voice.wav"):
        truth = make_recording(
            media_dir / name, [Scene(4.0, 1)], [Speech(0.5, "Yes.")], video=False
        )
        info = probe(truth.path)
        assert info.has_audio and not info.has_video
        dec, items = collect(truth.path)
        assert {k for k, _, _ in items} == {"audio"}
        assert sum(x.size for _, _, x in items) / RATE == pytest.approx(4.0, abs=0.1)


def test_decoder_video_only(media_dir: Path) -> None:
    truth = make_recording(
        media_dir / "silent.mkv", [Scene(2.0, 3)], audio=False, width=W, height=H
    )
    dec, items = collect(truth.path)
    assert dec.info.has_video and not dec.info.has_audio
    assert {k for k, _, _ in items} == {"video"}
    assert len(items) == 50


def test_decoder_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        MediaDecoder(tmp_path / "nope.mp4", SETTINGS)
    with pytest.raises(InputError):
        probe(tmp_path)


def test_decoder_empty_and_garbage_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(MediaError, match="empty"):
        MediaDecoder(empty, SETTINGS)
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(np.random.default_rng(0).integers(0, 256, 50_000, dtype=np.uint8).tobytes())
    with pytest.raises(MediaError) as err:
        MediaDecoder(junk, SETTINGS)
    assert "\n" not in str(err.value)
    text = tmp_path / "notes.txt"
    text.write_text("just some words, not a video\n" * 20)
    with pytest.raises(MediaError):
        MediaDecoder(text, SETTINGS)


def test_decoder_truncated_files(scenes_mp4, short_webm, tmp_path: Path) -> None:
    for src in (scenes_mp4[0].path, short_webm.path):
        data = src.read_bytes()
        for frac in (0.5, 0.8):
            cut = tmp_path / f"cut{frac}{src.suffix}"
            cut.write_bytes(data[: int(len(data) * frac)])
            try:
                dec, items = collect(cut)
            except MediaError as exc:  # e.g. an MP4 whose index is at the end
                assert "\n" not in str(exc)
                continue
            assert items, "a truncated file should yield the decodable prefix"
            assert dec.warnings, "a truncated file should say so"
            segments, _ = run_segmenter(cut)
            assert_well_formed(segments, max(t for _, t, _ in items), tol=0.5)


def test_decoder_survives_corrupt_bytes(short_webm, tmp_path: Path) -> None:
    data = bytearray(short_webm.path.read_bytes())
    rng = np.random.default_rng(5)
    for i in rng.integers(len(data) // 4, len(data), 60):
        data[int(i)] = int(rng.integers(0, 256))
    bad = tmp_path / "corrupt.webm"
    bad.write_bytes(bytes(data))
    try:
        dec, items = collect(bad)
    except MediaError:
        return
    ts = [t for k, t, _ in items if k == "video"]
    assert ts and max(ts) <= short_webm.duration_s + 1.0
    assert all(b >= a for a, b in pairwise(ts))


def test_decoder_refuses_absurd_frames(short_webm) -> None:
    with pytest.raises(MediaError, match="max_frame_pixels"):
        MediaDecoder(short_webm.path, Settings(max_frame_pixels=100 * 100))


def test_decoder_lifecycle(short_webm) -> None:
    dec = MediaDecoder(short_webm.path, SETTINGS)
    it = iter(dec)
    next(it)
    with pytest.raises(RuntimeError):
        iter(dec)
    dec.close()
    dec.close()


# ---------------------------------------------------------------------------------------
# sample recordings


def test_recording_truth(short_webm) -> None:
    assert short_webm.cuts == [6.0]
    assert short_webm.duration_s == 11.0
    ((start, end, text),) = short_webm.speech
    assert start == pytest.approx(0.5) and 0.6 < end < 3.0 and text == "Hello there."


def test_demo_scenario_is_consistent() -> None:
    scenes, speech = demo_scenes()
    assert 6 <= len(scenes) <= 8
    assert sum(s.duration_s for s in scenes) == pytest.approx(60.0, abs=5)
    assert 4 <= len(speech) <= 6 and len({s.text for s in speech}) == len(speech)
    edges = np.cumsum([0.0] + [s.duration_s for s in scenes])
    for item in speech:
        scene_end = edges[np.searchsorted(edges, item.t, side="right")]
        spoken = synthesize(item.text, item.voice, item.wpm).size / RATE
        assert item.t + spoken < scene_end, f"{item.text!r} runs past its scene"
    with pytest.raises(ValueError):
        make_recording(Path("/tmp/never.wav"), scenes, video=True)
