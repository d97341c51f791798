"""Decoding any source PyAV can open into timed video frames and 16 kHz mono audio.

One :class:`MediaDecoder` demuxes the chosen video and audio streams together (so memory
stays flat and the two media advance side by side, as they would from a live source) and
yields ``("video", t, av.VideoFrame)`` and ``("audio", t_start, float32 samples)`` in
approximately presentation order. Times are *stream time*: seconds since the earliest
start among the chosen streams, so every source starts at 0 whatever its container's
timestamps say.

Failure policy, because real recordings are messy:

* cannot open at all (missing, empty, not media, no audio/video, absurd frame size) →
  :class:`~episodic.core.errors.InputError` / :class:`~episodic.core.errors.MediaError` with a
  one-line message; PyAV exceptions never escape;
* one bad packet → skipped and counted (a glitch should not lose a recording);
* the demuxer gives up mid-way (truncated or corrupt file, dropped connection) or too
  many bad packets in a row → stop cleanly, keep everything decoded so far, and say so in
  :attr:`MediaDecoder.warnings`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import av
import numpy as np

from episodic.config import Settings
from episodic.core.errors import InputError, MediaError
from episodic.core.media import MediaInfo

DecodedItem = tuple[str, float, Any]  # ("video", t, av.VideoFrame) | ("audio", t, ndarray)

# After this many undecodable packets in a row the stream is treated as broken.
MAX_CONSECUTIVE_BAD_PACKETS = 50
# Audio whose timestamps jump by more than this from the running sample clock is
# re-anchored (a gap or overlap in the source); smaller jitter is absorbed by the clock.
AUDIO_RESYNC_S = 0.25
# A video timestamp that moves by more than this from the previous frame is checked
# against the next frame before it is believed (corrupt files carry lone garbage pts).
TIMESTAMP_JUMP_S = 2.0


# Demuxers that accept plain text files; their "video" is rendered text.
_TEXT_DEMUXERS = {"tty", "ansi"}


def is_url(source: str) -> bool:
    """Whether ``source`` names a network source (rtsp://, http(s)://, srt://, udp: …), not a file."""
    return "://" in source or source.startswith(("rtsp:", "rtmp:", "udp:", "tcp:"))


def codec_name(stream: Any) -> str:
    """The codec a stream holds ("av1", "h264", "opus"), not the decoder FFmpeg picked for it
    ("libdav1d"): what users, containers and records mean by a codec."""
    cc = stream.codec_context
    codec = getattr(cc, "codec", None)
    return str(getattr(codec, "canonical_name", "") or cc.name or "")


def redact(source: str) -> str:
    """A source as it may be logged and stored: no user:password in URLs."""
    try:
        parts = urlsplit(source)
    except ValueError:
        return source
    if parts.scheme and "@" in parts.netloc:
        host = parts.netloc.rsplit("@", 1)[1]
        return urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))
    return source


def _one_line(exc: BaseException) -> str:
    """A short human reason from an av / OS exception."""
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())


def _open_hint(source: str) -> str:
    """Why a local file might not open, in words a person can act on."""
    if is_url(source):
        return ""
    try:
        with open(source, "rb") as fh:
            head = fh.read(12)
    except OSError:
        return ""
    if head[4:8] == b"ftyp":
        return (
            " (an MP4/MOV whose index, the 'moov' atom, is missing: the recording was "
            "probably cut off before it was finalised)"
        )
    return " (not a media file, or a format FFmpeg cannot read)"


def _rate(value: Fraction | None) -> float:
    try:
        return float(value) if value else 0.0
    except (TypeError, ZeroDivisionError):
        return 0.0


def _attached_picture(stream: Any) -> bool:
    """Cover art in audio files is a one-frame "video" stream; it is not video."""
    try:
        return bool(stream.disposition & av.stream.Disposition.attached_pic)
    except (AttributeError, TypeError):
        return False


def _has_decoder(stream: Any) -> bool:
    try:
        return stream.codec_context is not None and bool(stream.codec_context.name)
    except (av.FFmpegError, ValueError, AttributeError):
        return False


class MediaDecoder:
    """Open ``source`` (path, URL or device) and iterate its decoded video and audio.

    ``format`` forces a demuxer (``"v4l2"`` for ``/dev/video0``, ``"lavfi"``, ...) and
    ``options`` are passed to it (``{"rtsp_transport": "tcp"}``, ``{"framerate": "30"}``).
    ``timeout`` (seconds) bounds open and read waits on network sources.

    ``info`` is filled at construction; ``warnings`` collects human messages about damage
    found while decoding. Iterate once; use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        source: str | os.PathLike[str],
        settings: Settings | None = None,
        *,
        format: str | None = None,
        options: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.source = os.fspath(source)
        self.warnings: list[str] = []
        self.bad_packets = 0
        self._container: Any = None
        self._consumed = False
        self.stop_reason = ""  # why demuxing ended early ("" when it reached the end)
        self._open(format, options, timeout)

    # -- opening ----------------------------------------------------------------------

    def _open(self, fmt: str | None, options: dict[str, str] | None, timeout: float | None) -> None:
        src = self.source
        if fmt is None and not is_url(src):
            path = Path(src)
            if not path.exists():
                raise InputError(f"file not found: {src}")
            if path.is_dir():
                raise InputError(f"not a file: {src} is a directory")
            if path.is_file() and path.stat().st_size == 0:
                raise MediaError(f"cannot open {src}: the file is empty (0 bytes)")
        try:
            self._container = av.open(
                src,
                mode="r",
                format=fmt,
                options={str(k): str(v) for k, v in (options or {}).items()},
                timeout=timeout,
            )
        except av.FFmpegError as exc:
            raise MediaError(f"cannot open {src}: {_one_line(exc)}{_open_hint(src)}") from None
        except (OSError, ValueError, UnicodeError) as exc:
            raise MediaError(f"cannot open {src}: {_one_line(exc)}") from None
        try:
            self._select_streams()
        except BaseException:
            self.close()
            raise

    def _select_streams(self) -> None:
        c = self._container
        fmt_name = str(getattr(c.format, "name", "") or "")
        if fmt_name in _TEXT_DEMUXERS:
            # FFmpeg renders any text file as "ANSI art" video; that is never a recording.
            raise MediaError(f"cannot use {self.source}: it is a text file, not audio or video")
        videos = [s for s in c.streams.video if not _attached_picture(s) and _has_decoder(s)]
        audios = [s for s in c.streams.audio if _has_decoder(s)]
        undecodable = [
            s for s in list(c.streams.video) + list(c.streams.audio) if not _has_decoder(s)
        ]
        if not videos and not audios:
            if undecodable:
                raise MediaError(
                    f"cannot decode {self.source}: no decoder for its streams "
                    f"({', '.join(sorted({str(getattr(s.codec_context, 'name', '?') or '?') for s in undecodable}))})"
                )
            raise MediaError(f"cannot use {self.source}: it has no audio or video stream")
        # Prefer the stream FFmpeg itself would pick (highest resolution / most channels).
        self._video = self._best(videos, "video")
        self._audio = self._best(audios, "audio")

        info = MediaInfo(source=self.source, container=str(getattr(c.format, "name", "") or ""))
        if c.duration is not None and c.duration > 0:
            info.duration_s = c.duration / 1_000_000
        v, a = self._video, self._audio
        if v is not None:
            cc = v.codec_context
            info.has_video = True
            info.video_codec = codec_name(v)
            info.width, info.height = int(cc.width or 0), int(cc.height or 0)
            info.fps = _rate(v.average_rate) or _rate(v.guessed_rate) or _rate(v.base_rate)
            if info.width * info.height > self.settings.max_frame_pixels:
                raise MediaError(
                    f"refusing {self.source}: {info.width}x{info.height} frames exceed "
                    f"max_frame_pixels={self.settings.max_frame_pixels}"
                )
            cc.thread_type = "AUTO"  # frame + slice threads: several times faster
        if a is not None:
            info.has_audio = True
            info.audio_codec = codec_name(a)
            a.codec_context.thread_type = "AUTO"
        if info.duration_s is None:
            spans = [
                float(s.duration * s.time_base)
                for s in (v, a)
                if s is not None and s.duration and s.time_base
            ]
            info.duration_s = max(spans) if spans else None
        self.info = info

        # Stream time origin: the earliest declared start among the streams we decode.
        starts = [
            float(s.start_time * s.time_base)
            for s in (v, a)
            if s is not None and s.start_time is not None and s.time_base
        ]
        self._origin: float | None = min(starts) if starts else None

    def _best(self, streams: list[Any], kind: str) -> Any:
        if not streams:
            return None
        try:
            best = self._container.streams.best(kind)
        except (AttributeError, av.FFmpegError, ValueError):
            best = None
        return best if best in streams else streams[0]

    # -- lifecycle --------------------------------------------------------------------

    def close(self) -> None:
        """Release the container (idempotent)."""
        if self._container is not None:
            with contextlib.suppress(av.FFmpegError, OSError):
                self._container.close()
            self._container = None

    def __enter__(self) -> MediaDecoder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten decoder should not leak a file handle
        with contextlib.suppress(Exception):
            self.close()

    # -- decoding ---------------------------------------------------------------------

    def __iter__(self) -> Iterator[DecodedItem]:
        if self._consumed:
            raise RuntimeError("a MediaDecoder can be iterated only once")
        if self._container is None:
            raise RuntimeError("the MediaDecoder is closed")
        self._consumed = True
        return self._generate()

    # -- the chosen streams, for code that works on packets (stream.chunks) ------------

    @property
    def video_stream(self) -> Any:
        """The av video stream being decoded, or None."""
        return self._video

    @property
    def audio_stream(self) -> Any:
        """The av audio stream being decoded, or None."""
        return self._audio

    @property
    def origin_s(self) -> float | None:
        """Container time of stream time 0 (None: the first timestamp seen, for live sources)."""
        return self._origin

    def packets(self) -> Iterator[Any]:
        """Demuxed packets of the chosen streams, in file order. A demuxer that gives up
        mid-way (truncated file, dropped connection) ends the iteration and leaves its reason
        in :attr:`stop_reason`; nothing is raised. Iterate once, instead of decoding."""
        if self._consumed:
            raise RuntimeError("a MediaDecoder can be iterated only once")
        if self._container is None:
            raise RuntimeError("the MediaDecoder is closed")
        self._consumed = True
        return self._packets()

    def _packets(self) -> Iterator[Any]:
        streams = [s for s in (self._video, self._audio) if s is not None]
        self.stop_reason = ""
        packets = self._container.demux(streams)
        while True:
            try:
                packet = next(packets)
            except StopIteration:
                return
            except (av.FFmpegError, OSError, EOFError, ValueError) as exc:
                self.stop_reason = f"the source ended abruptly ({_one_line(exc)})"
                return
            yield packet

    def _generate(self) -> Iterator[DecodedItem]:
        streams = [s for s in (self._video, self._audio) if s is not None]
        state = _DecodeState(self.settings, self._origin, self.info.fps)
        max_t = self.settings.max_stream_duration_s
        packets = self._packets()
        consecutive_bad = 0
        stop_reason = ""
        for packet in packets:
            try:
                frames = packet.decode()
            except (av.FFmpegError, ValueError) as exc:
                self.bad_packets += 1
                consecutive_bad += 1
                if consecutive_bad >= MAX_CONSECUTIVE_BAD_PACKETS:
                    stop_reason = (
                        f"{consecutive_bad} undecodable packets in a row ({_one_line(exc)})"
                    )
                    break
                continue
            consecutive_bad = 0
            try:
                for frame in frames:
                    yield from state.convert(frame, packet.stream is self._audio)
            except _Refused as exc:
                raise MediaError(f"refusing {self.source}: {exc}") from None
            except (av.FFmpegError, ValueError):
                self.bad_packets += 1  # a frame the converters could not take: skip it
            if state.last_t > max_t:
                stop_reason = f"it is longer than max_stream_duration_s={max_t:g}"
                break
        stop_reason = stop_reason or self.stop_reason

        if stop_reason:
            # The demuxer loop ended early; frames still buffered in the (threaded)
            # decoders are valid, so drain them before giving up.
            for s in streams:
                try:
                    for frame in s.codec_context.decode(None):
                        yield from state.convert(frame, s is self._audio)
                except (av.FFmpegError, ValueError, _Refused):
                    pass
            self.warnings.append(
                f"decoding of {self.source} stopped at t={state.last_t:.2f} s because "
                f"{stop_reason}; kept what was decoded before"
            )
        yield from state.flush_video()
        yield from state.flush_audio()
        if state.retimed_frames or state.clock_resets:
            self.warnings.append(
                f"{self.source}: repaired {state.retimed_frames} corrupt video timestamp(s)"
                + (f" and {state.clock_resets} clock reset(s)" if state.clock_resets else "")
            )
        declared = self.info.duration_s
        if (
            not stop_reason
            and declared
            and not is_url(self.source)
            and state.last_t < declared - max(1.0, 0.01 * declared)
        ):
            self.warnings.append(
                f"{self.source} ended at t={state.last_t:.2f} s although its header says "
                f"{declared:.2f} s: the file looks truncated"
            )
        if self.bad_packets:
            self.warnings.append(
                f"skipped {self.bad_packets} undecodable packet(s) in {self.source}"
            )


def working_side_px(settings: Settings) -> int:
    """The longer side decoded frames are brought down to: the widest anything downstream
    keeps (analysis and snippets)."""
    return max(settings.analysis_max_width, settings.snippet_max_width)


def fit_within(width: int, height: int, longer_side: int) -> tuple[int, int]:
    """``width`` x ``height`` scaled, aspect kept, so the longer side is at most
    ``longer_side`` (even numbers, for 4:2:0); a picture that fits (or ``longer_side`` <= 0)
    keeps its size."""
    longer = max(width, height)
    if longer <= longer_side or longer_side <= 0:
        return width, height
    scale = longer_side / longer
    return max(2, round(width * scale / 2) * 2), max(2, round(height * scale / 2) * 2)


class _Refused(Exception):
    """A frame the settings forbid (too many pixels)."""


class _DecodeState:
    """Timestamp normalisation and audio resampling for one pass over a source."""

    def __init__(self, settings: Settings, origin: float | None, fps: float, keep_fps: float = 0.0) -> None:
        self.settings = settings
        # ``keep_fps`` > 0: frames closer than 1/keep_fps to the last one kept are dropped
        # before they are scaled (half a source frame of slack, so exactly keep_fps survive)
        self.min_frame_gap_s = (1.0 / keep_fps - 0.5 / fps) if keep_fps > 0 and fps > keep_fps else 0.0
        self.origin = origin
        self.rate = settings.audio_sample_rate_hz
        self.frame_step = 1.0 / fps if fps > 0 else 1.0 / 25
        self.last_video_t: float | None = None
        self.held: tuple[float, Any] | None = None  # a frame whose timestamp jumped
        self.retimed_frames = 0
        self.clock_resets = 0
        self.audio_suspect: float | None = None  # offset of a not-yet-confirmed audio jump
        self.last_t = 0.0
        self.resampler: Any = None
        self.resampler_key: tuple[Any, ...] | None = None
        self.audio_anchor: float | None = None  # stream time of resampled sample 0
        self.audio_emitted = 0  # samples yielded since the anchor
        self.bad_audio_frames = 0  # dropped: decoded from damaged data
        # frames are brought down to the widest size anything downstream keeps (analysis
        # and snippets), right after decoding: a 1080p60 chunk of full frames is ~1 GB
        self.working_width = working_side_px(settings)
        self._scaler: Any = None

    def _time(self, frame: Any) -> float | None:
        if frame.pts is None or frame.time_base is None:
            return None
        t = float(frame.pts * frame.time_base)
        if self.origin is None:
            self.origin = t  # live sources: the first timestamp we see is time 0
        return t - self.origin

    def _working_size(self, frame: Any) -> Any:
        """``frame`` scaled (aspect kept, display rotation kept as side data) so that its
        longer side is at most ``working_width`` (a landscape frame's width; a portrait phone
        video's height, so it costs no more than landscape); smaller frames pass untouched."""
        w, h = int(frame.width), int(frame.height)
        nw, nh = fit_within(w, h, self.working_width)
        if (nw, nh) == (w, h):
            return frame
        if self._scaler is None:
            from av.video.reformatter import VideoReformatter

            self._scaler = VideoReformatter()
        out = self._scaler.reformat(frame, width=nw, height=nh, format="yuv420p", interpolation="AREA")
        out.pts = frame.pts
        if frame.time_base is not None:
            out.time_base = frame.time_base
        return out

    def convert(self, frame: Any, is_audio: bool) -> Iterator[DecodedItem]:
        if is_audio:
            yield from self._audio(frame)
            return
        if frame.width * frame.height > self.settings.max_frame_pixels:
            raise _Refused(
                f"a {frame.width}x{frame.height} frame exceeds "
                f"max_frame_pixels={self.settings.max_frame_pixels}"
            )
        t = self._time(frame)
        if (
            t is not None
            and self.held is None
            and self.last_video_t is not None
            and 0.0 <= t - self.last_video_t < self.min_frame_gap_s
        ):
            return  # nothing downstream looks at frames this close: do not even scale it
        frame = self._working_size(frame)
        if t is None:
            t = 0.0 if self.last_video_t is None else self.last_video_t + self.frame_step
        if self.held is not None:
            # The previous frame's timestamp jumped; this frame tells us whether the jump
            # was real (a gap, or a live source restarting its clock) or one corrupt pts.
            held_t, held_frame = self.held
            self.held = None
            last = self.last_video_t if self.last_video_t is not None else 0.0
            if abs(t - held_t) > TIMESTAMP_JUMP_S and abs(t - last) < abs(held_t - last):
                held_t = min(t, last + self.frame_step)  # a lone outlier: re-time it
                self.retimed_frames += 1
            elif abs(t - held_t) <= TIMESTAMP_JUMP_S and held_t < last:
                # The clock went back and stayed back: shift the origin so stream time
                # carries on from where it was (audio follows, it shares the origin).
                shift = last + self.frame_step - held_t
                self.origin = (self.origin or 0.0) - shift
                held_t += shift
                t += shift
                self.clock_resets += 1
            yield self._video_item(held_t, held_frame)
        if self.last_video_t is not None and abs(t - self.last_video_t) > TIMESTAMP_JUMP_S:
            self.held = (t, frame)
            return
        yield self._video_item(t, frame)

    def _video_item(self, t: float, frame: Any) -> DecodedItem:
        t = max(0.0, t)
        if self.last_video_t is not None and t < self.last_video_t:
            t = self.last_video_t  # small reorderings: keep video time monotonic
        self.last_video_t = t
        self.last_t = max(self.last_t, t)
        return ("video", t, frame)

    def flush_video(self) -> Iterator[DecodedItem]:
        if self.held is not None:
            # No later frame can confirm the jump; audio can (it has its own clock).
            # Without that witness trust the picture, not its pts.
            held_t, held_frame = self.held
            self.held = None
            if abs(held_t - self.last_t) > TIMESTAMP_JUMP_S:
                last = self.last_video_t if self.last_video_t is not None else 0.0
                held_t = last + self.frame_step
                self.retimed_frames += 1
            yield self._video_item(held_t, held_frame)

    # -- audio ------------------------------------------------------------------------

    def _new_resampler(self) -> Any:
        return av.AudioResampler(format="flt", layout="mono", rate=self.rate)

    def _audio(self, frame: Any) -> Iterator[DecodedItem]:
        try:
            yield from self._audio_frame(frame)
        except (av.FFmpegError, ValueError):
            # a frame decoded from damaged data (an impossible layout or rate): drop it and
            # start the resampler afresh on the next good one
            self.bad_audio_frames += 1
            self.resampler = self.resampler_key = None

    def _audio_frame(self, frame: Any) -> Iterator[DecodedItem]:
        if not frame.sample_rate or frame.sample_rate <= 0 or not frame.samples:
            raise ValueError("an audio frame without samples or rate")
        key = (frame.format.name, frame.layout.name, frame.sample_rate)
        t = self._time(frame)
        if self.resampler is None or key != self.resampler_key:
            # First frame, or the source changed its audio format mid-stream: the
            # resampler is fixed to its first input, so finish it and start a new one.
            yield from self.flush_audio()
            self.resampler = self._new_resampler()
            self.resampler_key = key
        expected = (
            None
            if self.audio_anchor is None
            else self.audio_anchor + self.audio_emitted / self.rate
        )
        if t is not None and expected is not None and abs(t - expected) > AUDIO_RESYNC_S:
            # The timestamps disagree with the sample clock. Believe them only when two
            # frames in a row agree (a real gap or overlap), not for one corrupt pts.
            offset = t - expected
            if self.audio_suspect is not None and abs(offset - self.audio_suspect) < AUDIO_RESYNC_S:
                self.audio_suspect = None
                yield from self.flush_audio()
                self.resampler = self._new_resampler()
                self.resampler_key = key
                # this frame starts the new clock; the previous one stayed on the old
                self.audio_anchor = t
            else:
                self.audio_suspect = offset
        else:
            self.audio_suspect = None
        if self.audio_anchor is None:
            self.audio_anchor = t if t is not None else (self.last_t if self.last_t else 0.0)
            self.audio_emitted = 0
        yield from self._emit(self.resampler.resample(frame))

    def _emit(self, frames: list[Any]) -> Iterator[DecodedItem]:
        for out in frames:
            samples = np.asarray(out.to_ndarray(), dtype=np.float32).reshape(-1)
            if samples.size == 0:
                continue
            anchor = self.audio_anchor if self.audio_anchor is not None else 0.0
            t0 = anchor + self.audio_emitted / self.rate
            self.audio_emitted += samples.size
            if t0 < 0:  # encoder priming before the stream origin
                skip = min(samples.size, int(round(-t0 * self.rate)))
                samples = samples[skip:]
                t0 += skip / self.rate
                if samples.size == 0:
                    continue
            self.last_t = max(self.last_t, t0 + samples.size / self.rate)
            yield ("audio", t0, samples.copy())

    def flush_audio(self) -> Iterator[DecodedItem]:
        if self.resampler is not None:
            try:
                frames = self.resampler.resample(None)
            except (av.FFmpegError, ValueError):
                frames = []
            yield from self._emit(frames)
        self.resampler = None
        self.resampler_key = None
        self.audio_anchor = None
        self.audio_emitted = 0


def probe(
    source: str | os.PathLike[str],
    settings: Settings | None = None,
    *,
    format: str | None = None,
    options: dict[str, str] | None = None,
    timeout: float | None = None,
) -> MediaInfo:
    """What ``source`` contains, without decoding it (same errors as :class:`MediaDecoder`)."""
    with MediaDecoder(source, settings, format=format, options=options, timeout=timeout) as dec:
        return dec.info
