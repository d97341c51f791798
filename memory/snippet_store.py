"""C_i on disk: one playable MP4 (H.264 + AAC) per raw segment, under ``snippet_dir``.

Layout: ``<snippet_dir>/<stream_id>/<segment_id>.mp4`` (``.m4a`` when the segment has no
video), and beside it the segment's thumbnail ``<segment_id>.jpg`` (memory/thumbnails.py). The
URI handed to the memory records is ``file://<absolute path>``. Every rule below for snippets
(deleting, moving a data directory, refusing paths outside it) holds for thumbnails too.

The encoding (:func:`prepare_snippet` checks the input, :class:`SnippetEncoder` writes the MP4)
is shared with :mod:`.s3_snippet_store`, which keeps the same bytes in an S3-API bucket.

Why the encoding choices:
* H.264 yuv420p in MP4 plays in every browser and player. B-frames are off: with B-frames
  and irregular frame times the MP4 muxer derives a track duration from decode timestamps
  that is seconds shorter than what is shown; without them the duration is exact.
* Frames keep their stream times (pts relative to ``t_start``, 1/90000 s), so a segment
  sampled irregularly still plays in real time; the first frame is shown from ``t_start`` and
  the last is held until ``t_end`` so the file covers the whole segment.
* Audio is AAC mono at the given rate when the encoder accepts it (16 kHz is accepted),
  padded with silence or trimmed to exactly ``t_end - t_start``.
* Files are written to a temporary name in the same directory and renamed with
  ``os.replace``: a re-run overwrites atomically and a crash never leaves half a file under
  the final name.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import urllib.parse
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import IO, Any

import numpy as np

from episodic.config import Settings
from episodic.core.errors import InputError, MediaError
from episodic.core.records import STREAM_ID_PATTERN, SnippetRef, validate_stream_id

VIDEO_TIME_BASE = Fraction(1, 90000)
AUDIO_BITRATE = 48_000  # mono speech/ambience; about 21 MB per hour
AUDIO_CHUNK = 1024  # AAC frame size
SNIPPET_SUFFIXES = (".mp4", ".m4a")
THUMBNAIL_SUFFIX = ".jpg"
FILE_SUFFIXES = (*SNIPPET_SUFFIXES, THUMBNAIL_SUFFIX)  # every file a snippet store keeps
TMP_SUFFIX = ".tmp"
STALE_TMP_S = 600.0  # a temporary file this old belongs to a crashed writer

_SEGMENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,200}$")


def validate_segment_id(segment_id: str) -> str:
    """Segment ids become file names: letters, digits, ``. _ @ -``, no ``..``."""
    if not isinstance(segment_id, str) or not _SEGMENT_ID.fullmatch(segment_id) or ".." in segment_id:
        raise InputError(
            f"invalid segment id {segment_id!r}: use 1-201 characters from A-Z a-z 0-9 . _ @ -, "
            "starting with a letter or digit, without '..'"
        )
    return segment_id


def _finite(value: Any, what: str) -> float:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, got {value!r}") from None
    if not np.isfinite(f):
        raise InputError(f"{what} must be finite, got {value!r}")
    return f


def _fsync_dir(directory: Path) -> None:
    """Make a rename durable across a power cut (best effort; not every OS allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _even(n: int) -> int:
    return max(2, n - n % 2)


@dataclass(frozen=True)
class SnippetInput:
    """One segment's checked snippet content: frames sorted by time, mono audio shifted to
    begin at ``t_start`` (``None`` when there is none)."""

    t_start: float
    t_end: float
    frames: list[Any]
    audio: np.ndarray | None
    sample_rate_hz: int
    fps: float

    @property
    def suffix(self) -> str:
        """``.mp4`` with video, ``.m4a`` for audio only."""
        return ".mp4" if self.frames else ".m4a"


def prepare_snippet(
    segment_id: str,
    t_start: float,
    t_end: float,
    video_frames: Sequence[Any],
    audio: np.ndarray | None,
    sample_rate_hz: int,
    fps: float,
    audio_t_start: float | None = None,
) -> SnippetInput:
    """Check and normalise what ``SnippetStore.put`` is given (every store encodes this)."""
    validate_segment_id(segment_id)
    t0 = _finite(t_start, "t_start")
    t1 = _finite(t_end, "t_end")
    if t1 <= t0:
        raise InputError(f"segment {segment_id}: t_end ({t1}) must be after t_start ({t0})")
    fps = _finite(fps, "fps")
    if fps <= 0:
        raise InputError(f"fps must be positive, got {fps}")
    frames = sorted(
        (f for f in video_frames if getattr(f, "frame", None) is not None),
        key=lambda f: float(f.t),
    )
    samples = None
    if audio is not None:
        samples = np.asarray(audio, dtype=np.float32)
        if samples.ndim == 2:  # tolerate (channels, n) or (n, channels): mix down
            axis = 0 if samples.shape[0] <= 8 and samples.shape[0] < samples.shape[1] else 1
            samples = samples.mean(axis=axis)
        samples = samples.reshape(-1)
    if samples is not None and audio_t_start is not None and samples.size:
        shift = round((_finite(audio_t_start, "audio_t_start") - t0) * int(sample_rate_hz))
        if shift > 0:  # audio begins after t_start: silence before it
            samples = np.concatenate([np.zeros(shift, dtype=np.float32), samples])
        elif shift < 0:  # audio begins before t_start: drop the part before
            samples = samples[-shift:]
    if samples is not None and samples.size == 0:
        samples = None
    if samples is not None and (
        isinstance(sample_rate_hz, bool) or int(sample_rate_hz) <= 0 or int(sample_rate_hz) != sample_rate_hz
    ):
        raise InputError(f"sample_rate_hz must be a positive integer, got {sample_rate_hz!r}")
    if not frames and samples is None:
        raise InputError(f"segment {segment_id}: no video frames and no audio to store")
    return SnippetInput(t0, t1, frames, samples, int(sample_rate_hz or 0) if samples is not None else 0, fps)


class SnippetEncoder:
    """The one MP4 writer every snippet store uses (see the module docstring for the format);
    ``settings`` needs ``snippet_max_width`` and ``snippet_crf``."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    def encode(self, path: Path, snippet: SnippetInput) -> None:
        """Write ``snippet`` as an MP4 file at ``path`` (replacing whatever is there)."""
        import av

        t0, t1, frames, audio = snippet.t_start, snippet.t_end, snippet.frames, snippet.audio
        sample_rate_hz, fps = snippet.sample_rate_hz, snippet.fps

        span = t1 - t0
        try:
            out = av.open(str(path), "w", format="mp4", options={"movflags": "+faststart"})
        except (av.FFmpegError, OSError) as exc:
            raise MediaError(f"cannot write snippet {path}: {exc}") from None
        try:
            events: list[tuple[float, int, Any]] = []  # (time, order, item) muxed in time order
            video = self._video_plan(out, frames, t0, t1, fps) if frames else None
            if video is not None:
                stream, plan, durations = video
                events.extend((pts * float(VIDEO_TIME_BASE), 0, (stream, frame, pts)) for pts, frame in plan)
            audio_stream = None
            if audio is not None:
                audio_stream, chunks = self._audio_plan(out, audio, sample_rate_hz, span)
                events.extend((off / audio_stream.codec_context.sample_rate, 1, chunk) for off, chunk in chunks)
            events.sort(key=lambda e: (e[0], e[1]))

            def mux_video(packets: list[Any]) -> None:
                for p in packets:
                    if p.pts is not None and p.pts in durations:
                        p.duration = durations[p.pts]
                    out.mux(p)

            for _, kind, item in events:
                if kind == 0:
                    stream, frame, pts = item
                    frame.pts = pts
                    frame.time_base = VIDEO_TIME_BASE
                    mux_video(stream.encode(frame))
                else:
                    out.mux(audio_stream.encode(item))
            if video is not None:
                mux_video(video[0].encode(None))
            if audio_stream is not None:
                out.mux(audio_stream.encode(None))
        except (av.FFmpegError, ValueError) as exc:
            raise MediaError(f"encoding snippet {path.name} failed: {exc}") from None
        finally:
            out.close()

    def _video_plan(
        self, out: Any, frames: list[Any], t0: float, t1: float, fps: float
    ) -> tuple[Any, list[tuple[int, Any]], dict[int, int]]:
        """The H.264 stream, (pts, frame) in display order, and each pts's duration."""
        first = frames[0].frame
        w, h = int(first.width), int(first.height)
        max_w = max(2, int(self.settings.snippet_max_width))
        if w > max_w:
            h = round(h * max_w / w)
            w = max_w
        w, h = _even(w), _even(h)
        stream = out.add_stream("libx264", rate=Fraction(fps).limit_denominator(1001))
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.codec_context.time_base = VIDEO_TIME_BASE
        stream.options = {"preset": "veryfast", "crf": str(int(self.settings.snippet_crf)), "bf": "0"}

        end = round((t1 - t0) / VIDEO_TIME_BASE)
        frame_ticks = max(1, round(1.0 / fps / VIDEO_TIME_BASE))
        plan: list[tuple[int, Any]] = []
        for f in frames:
            pts = round((float(f.t) - t0) / VIDEO_TIME_BASE)
            if pts >= end:
                break
            pts = max(pts, 0)  # a frame from just before t_start stands for the start
            if plan and pts <= plan[-1][0]:
                if pts == 0:  # several frames before t_start: the latest one wins
                    plan[-1] = (0, f.frame)
                continue
            plan.append((pts, f.frame))
        if not plan:  # every frame at or after t_end: show the first one for the segment
            plan.append((0, frames[0].frame))
        plan[0] = (0, plan[0][1])  # hold the first frame back to t_start
        # Hold the last frame until t_end: one more copy a frame before the end.
        if end - frame_ticks > plan[-1][0] + frame_ticks // 2:
            plan.append((end - frame_ticks, plan[-1][1]))
        prepared = []
        for pts, frame in plan:
            if frame.width != w or frame.height != h or frame.format.name != "yuv420p":
                frame = frame.reformat(width=w, height=h, format="yuv420p")
            # The same frame object may be sent twice (the held last frame): the encoder
            # copies each frame when it is sent, so re-stamping its pts afterwards is safe.
            prepared.append((pts, frame))
        durations = {
            pts: (prepared[i + 1][0] if i + 1 < len(prepared) else max(end, pts + 1)) - pts
            for i, (pts, _) in enumerate(prepared)
        }
        return stream, prepared, durations

    def _audio_plan(
        self, out: Any, audio: np.ndarray, sample_rate_hz: int, span: float
    ) -> tuple[Any, list[tuple[int, Any]]]:
        """The AAC stream and 1024-sample frames covering exactly ``span`` seconds."""
        import av

        audio = np.nan_to_num(audio.astype(np.float32, copy=False), nan=0.0, posinf=0.0, neginf=0.0)
        audio = np.clip(audio, -1.0, 1.0)
        rates = list(av.codec.Codec("aac", "w").audio_rates or [])
        rate = sample_rate_hz
        if rates and rate not in rates:
            # Resample to the nearest accepted rate at or above (linear; rates off the
            # standard list are rare and this is a playback copy, not the ASR input).
            higher = [r for r in rates if r >= rate]
            target = min(higher) if higher else max(rates)
            n_out = max(1, round(audio.size * target / rate))
            audio = np.interp(
                np.arange(n_out) * (rate / target), np.arange(audio.size), audio
            ).astype(np.float32)
            rate = target
        n = max(1, round(span * rate))
        if audio.size < n:
            audio = np.concatenate([audio, np.zeros(n - audio.size, dtype=np.float32)])
        audio = np.ascontiguousarray(audio[:n])
        stream = out.add_stream("aac", rate=rate, layout="mono")
        stream.codec_context.bit_rate = AUDIO_BITRATE
        chunks = []
        for off in range(0, n, AUDIO_CHUNK):
            frame = av.AudioFrame.from_ndarray(
                audio[off : off + AUDIO_CHUNK].reshape(1, -1), format="fltp", layout="mono"
            )
            frame.sample_rate = rate
            frame.pts = off
            frame.time_base = Fraction(1, rate)
            chunks.append((off, frame))
        return stream, chunks


class FileSnippetStore:
    """SnippetStore on the local file system (see the module docstring for the format)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = Path(settings.resolved_snippet_dir).expanduser().absolute()
        self.encoder = SnippetEncoder(settings)

    # -- paths -----------------------------------------------------------------------------
    def _stream_dir(self, stream_id: str) -> Path:
        validate_stream_id(stream_id)
        if not STREAM_ID_PATTERN.fullmatch(stream_id):  # re.match + $ lets "a\n" through
            raise InputError(f"invalid stream id {stream_id!r}")
        d = self.root / stream_id
        # validate_stream_id already excludes '/', '..' and a leading '.'; check anyway.
        if d.parent != self.root:
            raise InputError(f"invalid stream id {stream_id!r}")
        return d

    def path_for(self, uri: str) -> Path:
        """The file a snippet URI names, refusing anything outside the snippet directory
        (other schemes, hosts, ``..``, symlinks that lead out) with InputError."""
        if not isinstance(uri, str) or not uri:
            raise InputError(f"not a snippet URI: {uri!r}")
        try:
            parts = urllib.parse.urlsplit(uri)
            if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
                raise InputError(f"not a file:// snippet URI: {uri!r}")
            if parts.query or parts.fragment:
                raise InputError(f"a snippet URI has no query or fragment: {uri!r}")
            raw = urllib.parse.unquote(parts.path)
            if "\x00" in raw or not raw.startswith("/"):
                raise InputError(f"not an absolute snippet path: {uri!r}")
            if any(part in ("..", ".") for part in raw.split("/")):
                raise InputError(f"snippet URI may not contain '.' or '..' segments: {uri!r}")
            resolved = Path(raw).resolve(strict=False)
            root = self.root.resolve(strict=False)
        except (ValueError, OSError) as exc:
            raise InputError(f"not a valid snippet URI {uri!r}: {exc}") from None
        if resolved == root or not resolved.is_relative_to(root):
            moved = self._relocated(raw, root)
            if moved is not None:
                return moved
            raise InputError(f"snippet URI {uri!r} is outside the snippet directory {root}")
        return resolved

    def _relocated(self, raw: str, root: Path) -> Path | None:
        """A record written before the data directory was moved, copied or mounted elsewhere
        names the old place (``/old/data/snippets/<stream>/<segment>.mp4``): the same
        ``<stream>/<segment>`` under this snippet directory, when it is there. Never a path
        outside this directory."""
        parts = [p for p in raw.split("/") if p]
        if len(parts) < 2:
            return None
        stream, name = parts[-2], parts[-1]
        if not STREAM_ID_PATTERN.fullmatch(stream) or Path(name).suffix not in FILE_SUFFIXES:
            return None
        candidate = (root / stream / name).resolve(strict=False)
        if candidate.parent.parent != root or not candidate.is_file():
            return None
        return candidate

    def uri_for(self, path: Path) -> str:
        """``file://`` + the absolute path; only characters a URI path cannot hold are
        %-escaped (``@`` and ``:`` stay readable, unlike ``Path.as_uri``)."""
        return "file://" + urllib.parse.quote(str(Path(path).absolute()), safe="/@:+,=._~-")

    # -- writing ---------------------------------------------------------------------------
    def put(
        self,
        stream_id: str,
        segment_id: str,
        t_start: float,
        t_end: float,
        video_frames: Sequence[Any],
        audio: np.ndarray | None,
        sample_rate_hz: int,
        fps: float,
        audio_t_start: float | None = None,
    ) -> SnippetRef:
        """Encode one segment. ``audio`` is mono float32 in [-1, 1] whose first sample is at
        ``audio_t_start`` (default ``t_start``; pass ``Segment.audio_t_start`` when the
        segment's audio does not begin exactly at its start: it is shifted into place).

        ``video_frames`` are SnippetFrames (``.t`` stream seconds, ``.frame`` an
        av.VideoFrame). Re-putting the same segment replaces the file atomically.
        """
        validate_segment_id(segment_id)
        directory = self._stream_dir(stream_id)
        snippet = prepare_snippet(segment_id, t_start, t_end, video_frames, audio, sample_rate_hz, fps,
                                  audio_t_start)
        suffix = snippet.suffix
        final = directory / f"{segment_id}{suffix}"
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / f".{segment_id}{suffix}.{os.getpid()}.{uuid.uuid4().hex[:8]}{TMP_SUFFIX}"
        try:
            self.encoder.encode(tmp, snippet)
            with open(tmp, "rb") as fh:  # the rename must not publish unwritten data
                os.fsync(fh.fileno())
            os.replace(tmp, final)
            _fsync_dir(directory)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        # A segment that changed kind (video ↔ audio-only) must not leave the old file.
        other = final.with_suffix(".m4a" if suffix == ".mp4" else ".mp4")
        with contextlib.suppress(FileNotFoundError):
            other.unlink()
        return SnippetRef(uri=self.uri_for(final), t_start=snippet.t_start, t_end=snippet.t_end)

    def put_thumbnail(self, stream_id: str, segment_id: str, jpeg: bytes) -> str:
        """Keep a segment's thumbnail (JPEG bytes) beside its snippet; returns its URI.
        Re-putting replaces it atomically."""
        validate_segment_id(segment_id)
        directory = self._stream_dir(stream_id)
        final = directory / f"{segment_id}{THUMBNAIL_SUFFIX}"
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / f".{segment_id}{THUMBNAIL_SUFFIX}.{os.getpid()}.{uuid.uuid4().hex[:8]}{TMP_SUFFIX}"
        try:
            with open(tmp, "wb") as fh:
                fh.write(jpeg)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        return self.uri_for(final)

    # -- reading ---------------------------------------------------------------------------
    def open(self, uri: str) -> IO[bytes]:
        """The snippet's (or thumbnail's) bytes, read-only; URIs outside the snippet
        directory are refused."""
        path = self.path_for(uri)
        if path.suffix not in FILE_SUFFIXES or not path.is_file():
            raise InputError(f"no snippet at {uri}")
        try:
            return open(path, "rb")  # noqa: SIM115 - the caller owns and closes it
        except OSError as exc:
            raise InputError(f"cannot open snippet {uri}: {exc}") from None

    # -- housekeeping ----------------------------------------------------------------------
    def delete_stream(self, stream_id: str, keep_uris: set[str]) -> int:
        """Delete the stream's snippet and thumbnail files not named in ``keep_uris`` (and
        temporary files that crashed writers left behind); returns the number of files removed."""
        directory = self._stream_dir(stream_id)
        if not directory.is_dir():
            return 0
        keep: set[Path] = set()
        for uri in keep_uris:
            with contextlib.suppress(InputError):
                keep.add(self.path_for(uri))
        removed = 0
        now = time.time()
        for entry in directory.iterdir():
            if not entry.is_file() or entry.is_symlink():
                continue
            name = entry.name
            if name.startswith(".") and name.endswith(TMP_SUFFIX):
                try:
                    stale = now - entry.stat().st_mtime > STALE_TMP_S
                except FileNotFoundError:
                    continue
                if not stale:  # possibly a writer at work right now
                    continue
            elif entry.suffix not in FILE_SUFFIXES or entry.resolve() in keep:
                continue
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
                removed += 1
        with contextlib.suppress(OSError):
            directory.rmdir()  # only succeeds when empty
        return removed

    def delete_uris(self, uris: Iterable[str]) -> int:
        """Delete exactly the snippets (and thumbnails) these URIs name; returns how many
        files were removed.
        Idempotent: a snippet already gone is no error, and a URI this store does not hold
        (another scheme, outside the snippet directory) is left alone, never followed."""
        removed = 0
        for uri in uris:
            try:
                path = self.path_for(uri)
            except InputError:
                continue
            if path.suffix not in FILE_SUFFIXES or path.parent.parent != self.root.resolve():
                continue
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                path.unlink()
                removed += 1
            except FileNotFoundError:
                continue
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # the stream's last snippet: only succeeds when empty
        return removed

    def bytes_used(self, stream_id: str | None = None) -> int:
        """Bytes of snippet files for one stream, or under the whole snippet directory."""
        base = self._stream_dir(stream_id) if stream_id is not None else self.root
        if not base.is_dir():
            return 0
        total = 0
        for dirpath, _, files in os.walk(base):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, name)).st_size
        return total
