"""A live stream's wall-clock start (what "this morning" in a SUMMARY question is placed by):
taken from the first chunk's production time, only for sources without a duration."""

from __future__ import annotations

from datetime import datetime

from episodic.core.summaries import parse_wall_clock
from episodic.pipeline import live_wall_clock_start
from episodic.stream.media_chunk import MediaChunk


def chunk(**kw) -> MediaChunk:
    base = dict(stream_id="cam", seq=0, t_start=0.0, t_end=2.0, container="mpegts", video_codec="h264",
                audio_codec="aac", payload=b"x", payload_t0=0.0, keyframe=True)
    return MediaChunk(**{**base, **kw})


def test_a_live_chunk_places_stream_time_zero_on_the_wall_clock():
    produced = datetime(2026, 11, 26, 7, 30, 2).timestamp()  # local 07:30:02, end of 0-2 s
    start = live_wall_clock_start(chunk(produced_at_ms=int(produced * 1000)))
    assert start is not None and start.endswith("+00:00")
    assert parse_wall_clock(start).timestamp() == produced - 2.0


def test_recordings_and_chunks_without_a_time_have_none():
    assert live_wall_clock_start(chunk(produced_at_ms=1_800_000_000_000, duration_s=60.0)) is None
    assert live_wall_clock_start(chunk(produced_at_ms=0)) is None


def test_a_chunk_is_live_when_marked_or_of_unknown_length():
    """What the worker keeps provisional memories for: a chunk sent as it was captured. A
    producer from before the ``live`` field is read by the duration it gives."""
    assert chunk(live=True, duration_s=60.0).is_live  # a file pushed with --realtime
    assert chunk(duration_s=0.0).is_live  # an old producer's camera
    assert not chunk(duration_s=60.0).is_live  # a recording pushed as fast as it reads
    again = MediaChunk.from_bytes(chunk(live=True, duration_s=60.0).to_bytes())
    assert again.live and again.is_live
    assert not MediaChunk.from_bytes(chunk(duration_s=60.0).to_bytes()).live
