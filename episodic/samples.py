"""Synthetic recordings with known ground truth, for the test suite and ``episodic demo``.

A recording is a sequence of :class:`Scene` s (each a textured, tinted picture with an
optional large caption and a slowly moving shape) and a list of :class:`Speech` items that
are synthesised with ``espeak-ng`` and mixed over very quiet background noise. Because we
write the file ourselves we know exactly where the cuts are and when each sentence is
spoken; :class:`Truth` carries that, so tests can check segmentation and recall against it.

Why textures and not flat colours: the visual boundary detector uses SSIM on small grey
frames, and SSIM between two *flat* pictures is dominated by the luminance term, so two
different flat scenes can look "similar". Random blocks plus stripes give every scene its
own structure, so 1 − SSIM at a cut is close to 1 while frames inside a scene stay alike.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import wave
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import av
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from episodic.core.errors import EpisodicError

# Background noise level: about −60 dBFS RMS, far below the −40 dBFS pause threshold, so
# "silence" in a generated recording is detected as silence while the track is never
# digitally zero (real microphones never are either).
NOISE_DBFS = -60.0
SPEECH_PEAK = 0.6  # speech is normalised to this peak (≈ −4.4 dBFS)

AUDIO_ONLY_SUFFIXES = {".wav", ".m4a", ".ogg", ".opus", ".flac", ".mp3", ".aac"}

_FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/TTF/DejaVuSans-Bold.ttf",
    "/Library/Fonts/DejaVuSans-Bold.ttf",
    "DejaVuSans-Bold.ttf",
)


@dataclass(frozen=True)
class Scene:
    """One shot. ``seed`` picks the texture; ``tint`` (r, g, b 0..255) colours it.

    ``motion`` scales the speed of the moving shape (1.0 ≈ 60 px/s at 640 wide: a gentle
    drift); ``pan_px_s`` slides the whole picture sideways like a panning camera (the
    caption stays put, as a subtitle would); ``static`` freezes the picture completely;
    ``brightness`` scales the picture (0.03 with ``static``: a dark shot, a lens cap).
    """

    duration_s: float
    seed: int
    tint: tuple[int, int, int] = (128, 128, 128)
    text: str = ""
    static: bool = False
    motion: float = 1.0
    pan_px_s: float = 0.0
    brightness: float = 1.0


@dataclass(frozen=True)
class Speech:
    """A sentence spoken starting at stream time ``t`` (seconds)."""

    t: float
    text: str
    voice: str = "en-us+f3"  # the female variant is the one Whisper tiny.en hears best
    wpm: int = 140


@dataclass
class Truth:
    """What is really in a generated recording (stream time in seconds)."""

    path: Path
    duration_s: float
    cuts: list[float] = field(default_factory=list)  # scene changes, excluding 0 and the end
    scenes: list[tuple[float, float, str]] = field(default_factory=list)  # (start, end, text)
    speech: list[tuple[float, float, str]] = field(default_factory=list)  # (start, end, text)
    has_video: bool = True
    has_audio: bool = True


class Scenario(NamedTuple):
    """A ready-made script for :func:`make_recording` (``scenes, speech = demo_scenes()``)."""

    scenes: list[Scene]
    speech: list[Speech]


# ---------------------------------------------------------------------------------------
# pictures


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for candidate in _FONT_CANDIDATES:
        try:
            return ImageFont.truetype(candidate, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def _texture(
    seed: int, tint: tuple[int, int, int], width: int, height: int, view_width: int | None = None
) -> np.ndarray:
    """A picture with plenty of structure at every scale: blocks, rectangles, stripes.

    ``view_width`` is the visible width when the texture is wider (for pans): sizes are
    relative to it, so a panned scene looks like a static one.
    """
    view_w = view_width or width
    rng = np.random.default_rng(seed)
    # Coarse blocks: a random colour grid scaled up with nearest-neighbour.
    cell = view_w / int(rng.integers(8, 16))
    cells_x = max(1, round(width / cell))
    cells_y = max(2, round(height / cell))
    grid = rng.integers(0, 256, size=(cells_y, cells_x, 3)).astype(np.float32)
    ys = (np.arange(height) * cells_y // height).clip(0, cells_y - 1)
    xs = (np.arange(width) * cells_x // width).clip(0, cells_x - 1)
    img = grid[ys][:, xs]
    # Random rectangles of varied size on top.
    for _ in range(round(int(rng.integers(12, 24)) * width / view_w)):
        w = int(rng.integers(view_w // 20, view_w // 4))
        h = int(rng.integers(height // 20, height // 3))
        x = int(rng.integers(0, width - w))
        y = int(rng.integers(0, height - h))
        img[y : y + h, x : x + w] = rng.integers(0, 256, size=3)
    # Oriented stripes blended in, so even large blocks carry fine structure.
    angle = rng.uniform(0, np.pi)
    period = rng.uniform(view_w / 40, view_w / 12)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    stripes = np.sin((xx * np.cos(angle) + yy * np.sin(angle)) * (2 * np.pi / period))
    img = img * 0.7 + (stripes[..., None] * 0.5 + 0.5) * 255 * 0.3
    tint_arr = np.asarray(tint, dtype=np.float32)
    img = img * 0.6 + tint_arr * 0.4
    return img.clip(0, 255).astype(np.uint8)


def _caption_overlay(
    text: str, width: int, height: int, seed: int = 0
) -> tuple[int, np.ndarray, np.ndarray]:
    """Large white caption with a black outline on a dark band in the lower half.

    The band's height on screen depends on ``seed``, so consecutive captioned scenes do
    not share a dark band in the same place (which would make them look more alike to
    SSIM than real shots are). Returns (top row, rgb, alpha) of the band.
    """
    pil = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(pil)
    size = max(40, height // 7)
    font = _font(size)
    # Wrap words so each line fits in 90 % of the width (the font never shrinks below 40).
    lines: list[str] = []
    for word in text.split():
        trial = f"{lines[-1]} {word}" if lines else word
        if lines and draw.textlength(trial, font=font) <= width * 0.9:
            lines[-1] = trial
        else:
            lines.append(word)
    line_h = int(size * 1.2)
    block_h = line_h * len(lines)
    centre = 0.55 + 0.25 * ((seed * 0.6180339887) % 1.0)
    top = min(max(0, int(height * centre) - block_h // 2), max(0, height - block_h))
    band = (max(0, top - size // 5), min(height, top + block_h + size // 5))
    draw.rectangle((0, band[0], width, band[1]), fill=(0, 0, 0, 170))
    for i, line in enumerate(lines):
        tw = draw.textlength(line, font=font)
        draw.text(
            ((width - tw) / 2, top + i * line_h),
            line,
            font=font,
            fill=(255, 255, 255, 255),
            stroke_width=max(2, size // 16),
            stroke_fill=(0, 0, 0, 255),
        )
    rgba = np.asarray(pil)[band[0] : band[1]]
    alpha = rgba[..., 3:4].astype(np.float32) / 255.0
    return band[0], rgba[..., :3].astype(np.float32), alpha


class _SceneRenderer:
    """Renders a scene: (panned) texture, fixed caption, and the moving disc."""

    def __init__(self, scene: Scene, width: int, height: int) -> None:
        self.scene = scene
        self.width, self.height = width, height
        self.pan = 0.0 if scene.static else abs(scene.pan_px_s)
        extra = min(int(np.ceil(self.pan * scene.duration_s)) + 1, 8 * width) if self.pan else 0
        self.texture = _texture(scene.seed, scene.tint, width + extra, height, view_width=width)
        if scene.brightness != 1.0:
            self.texture = np.clip(self.texture * scene.brightness, 0, 255).astype(np.uint8)
        self.caption = (
            _caption_overlay(scene.text, width, height, scene.seed) if scene.text else None
        )
        self.base = self._compose(self.texture[:, :width].copy())
        rng = np.random.default_rng(scene.seed + 7919)
        self.phase = rng.uniform(0, 2 * np.pi, size=2)
        self.colour = np.array([255, 255, 255]) - np.asarray(scene.tint)
        r = max(4, height // 9)
        yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
        self.mask = (xx**2 + yy**2) <= r * r
        self.r = r

    def _compose(self, img: np.ndarray) -> np.ndarray:
        if self.caption is not None:
            top, rgb, alpha = self.caption
            band = img[top : top + rgb.shape[0]].astype(np.float32)
            img[top : top + rgb.shape[0]] = (rgb * alpha + band * (1 - alpha)).astype(np.uint8)
        return img

    def frame(self, t_in_scene: float) -> np.ndarray:
        if self.scene.static:
            return self.base
        if self.pan:
            x = min(int(self.pan * t_in_scene), self.texture.shape[1] - self.width)
            out = self._compose(self.texture[:, x : x + self.width].copy())
        else:
            out = self.base.copy()
        s = self.scene.motion
        cx = self.width * (0.5 + 0.3 * np.sin(2 * np.pi * 0.05 * s * t_in_scene + self.phase[0]))
        # The disc stays in the upper part so it does not hide the caption for long.
        cy = self.height * (0.3 + 0.12 * np.sin(2 * np.pi * 0.07 * s * t_in_scene + self.phase[1]))
        x0, y0 = int(cx) - self.r, int(cy) - self.r
        size = 2 * self.r + 1
        xa, ya = max(0, x0), max(0, y0)
        xb, yb = min(self.width, x0 + size), min(self.height, y0 + size)
        if xb > xa and yb > ya:
            m = self.mask[ya - y0 : yb - y0, xa - x0 : xb - x0]
            region = out[ya:yb, xa:xb]
            region[m] = self.colour
        return out


# ---------------------------------------------------------------------------------------
# sound


FLITE_PREFIX = "flite:"  # a voice named "flite:slt" is spoken by flite's slt voice, not espeak-ng
# flite speaks at about this rate (words per minute) with duration_stretch 1 (measured on its
# built-in voices: ten words in 3.4–3.8 s); a slower rate stretches durations in proportion.
FLITE_WPM = 170.0


def _binary(name: str, package: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        raise EpisodicError(
            f"{name} is not installed; it synthesises the speech in generated recordings "
            f"(Debian/Ubuntu: apt-get install {package})"
        )
    return exe


@lru_cache(maxsize=1)
def _flite_voices() -> tuple[str, ...]:
    listing = subprocess.run([_binary("flite", "flite"), "-lv"], capture_output=True, text=True, check=False)
    return tuple(listing.stdout.split(":", 1)[-1].split())


def _tts_command(text: str, voice: str, wpm: int, wav_path: Path) -> list[str]:
    """The command that speaks ``text`` into ``wav_path``: espeak-ng by default, flite for a
    ``flite:<voice>`` (a second engine, so evaluation speech is not all one synthesiser's)."""
    if voice.startswith(FLITE_PREFIX):
        name = voice[len(FLITE_PREFIX):]
        if name not in _flite_voices():  # flite itself speaks an unknown voice as "kal", silently
            raise EpisodicError(f"flite has no voice {name!r} (it has: {', '.join(_flite_voices())})")
        stretch = FLITE_WPM / max(40, int(wpm))
        return [_binary("flite", "flite"), "-voice", name,
                "--setf", f"duration_stretch={stretch:.3f}", "-t", text, "-o", str(wav_path)]
    return [_binary("espeak-ng", "espeak-ng"), "-w", str(wav_path), "-s", str(int(wpm)), "-v", voice, text]


def synthesize(text: str, voice: str = "en-us+f3", wpm: int = 140, rate_hz: int = 16000) -> np.ndarray:
    """Speak ``text`` with espeak-ng (or flite, for ``flite:<voice>``): float32 mono at
    ``rate_hz``, edge silence trimmed."""
    with tempfile.TemporaryDirectory(prefix="episodic-tts-") as tmp:
        wav_path = Path(tmp) / "speech.wav"
        command = _tts_command(text, voice, wpm, wav_path)
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
        engine = Path(command[0]).name
        if proc.returncode != 0 or not wav_path.is_file() or wav_path.stat().st_size <= 44:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise EpisodicError(
                f"{engine} failed for voice {voice!r}: {detail[-1] if detail else 'no output'}"
            )
        with wave.open(str(wav_path), "rb") as w:
            src_rate = w.getframerate()
            channels = w.getnchannels()
            width = w.getsampwidth()
            raw = w.readframes(w.getnframes())
    if width != 2:
        raise EpisodicError(f"{engine} wrote {8 * width}-bit audio; expected 16-bit")
    x = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    if channels > 1:
        x = x.reshape(-1, channels).mean(axis=1)
    loud = np.flatnonzero(np.abs(x) > 0.01)
    if loud.size == 0:
        return np.zeros(0, dtype=np.float32)
    x = x[loud[0] : loud[-1] + 1]
    if src_rate != rate_hz:
        n_out = max(1, round(len(x) * rate_hz / src_rate))
        x = np.interp(np.arange(n_out) * (src_rate / rate_hz), np.arange(len(x)), x).astype(
            np.float32
        )
    peak = float(np.abs(x).max())
    if peak > 0:
        x = x * (SPEECH_PEAK / peak)
    return x.astype(np.float32)


def _soundtrack(
    duration_s: float, speech: Sequence[Speech], rate_hz: int, seed: int
) -> tuple[np.ndarray, list[tuple[float, float, str]]]:
    n = round(duration_s * rate_hz)
    rng = np.random.default_rng(seed)
    track = rng.normal(0.0, 10 ** (NOISE_DBFS / 20), n).astype(np.float32)
    spans: list[tuple[float, float, str]] = []
    for item in sorted(speech, key=lambda s: s.t):
        if not 0 <= item.t < duration_s:
            raise ValueError(f"speech at t={item.t} s is outside the recording (0..{duration_s} s)")
        voice = synthesize(item.text, item.voice, item.wpm, rate_hz)
        start = round(item.t * rate_hz)
        end = min(n, start + len(voice))
        track[start:end] += voice[: end - start]
        spans.append((start / rate_hz, end / rate_hz, item.text))
    return np.clip(track, -1.0, 1.0), spans


# ---------------------------------------------------------------------------------------
# writing


def _default_codecs(suffix: str) -> tuple[str, str]:
    if suffix == ".webm":
        return "libvpx-vp9", "libopus"
    if suffix in (".ogg", ".opus"):
        return "", "libopus"
    if suffix == ".wav":
        return "", "pcm_s16le"
    if suffix == ".flac":
        return "", "flac"
    return "libx264", "aac"


# Keyframes every 2 s (g=50 at 25 fps), as cameras and streaming encoders emit them: media
# chunks (stream/chunks.py) start at keyframes.
_VIDEO_OPTIONS = {
    "libx264": {"preset": "veryfast", "crf": "23", "g": "50"},
    "libvpx-vp9": {"deadline": "realtime", "cpu-used": "8", "crf": "35", "b": "0", "row-mt": "1", "g": "50"},
    "libvpx": {"deadline": "realtime", "cpu-used": "8", "crf": "20", "b": "1M", "g": "50"},
}


# Encoders that do not take 4:2:0 8-bit: ProRes is 4:2:2 10-bit, MJPEG wants full-range YUV.
_PIXEL_FORMATS = {"prores_ks": "yuv422p10le", "prores": "yuv422p10le", "mjpeg": "yuvj420p"}


def _thread_scheduling() -> tuple[int, int] | None:
    """The calling thread's CPU scheduling policy and priority (None where unknown)."""
    try:
        return os.sched_getscheduler(0), os.sched_getparam(0).sched_priority
    except (AttributeError, OSError):
        return None


def _restore_thread_scheduling(saved: tuple[int, int] | None) -> None:
    """Undo what an encoder did to the calling thread's scheduling.

    SVT-AV1 (``libsvtav1``), run as root, switches the thread that opens it to real-time
    scheduling (SCHED_FIFO, priority 99), and every process started from that thread later
    inherits it. Real-time model workers on a small machine then starve each other: a test
    run's two Kafka workers went from seconds to many minutes per 12 s stream, and CI ran
    out of time."""
    if saved is not None and _thread_scheduling() != saved:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, saved[0], os.sched_param(saved[1]))


def make_recording(
    path: str | Path,
    scenes: Sequence[Scene],
    speech: Sequence[Speech] = (),
    width: int = 640,
    height: int = 360,
    fps: float = 25,
    video: bool = True,
    audio: bool = True,
    vcodec: str | None = None,
    acodec: str | None = None,
    audio_rate_hz: int = 48000,
    container_options: dict[str, str] | None = None,
    noise_seed: int = 0,
    keyframe_interval: int | None = None,
    audio_options: dict[str, str] | None = None,
) -> Truth:
    """Write a recording of ``scenes`` with ``speech`` to ``path`` and return its truth.

    The container comes from the suffix (.mp4, .mkv, .mov, .webm, .m4a, .wav, ...).
    ``vcodec``/``acodec`` default to what the container expects (libx264 + aac, or
    libvpx-vp9 + libopus for .webm, pcm_s16le for .wav). ``container_options`` go to the
    muxer (e.g. ``{"movflags": "faststart"}``). ``keyframe_interval``: frames between video
    keyframes (default 2 s; phones and cameras write 250). ``audio_options`` go to the audio
    encoder (e.g. ``{"aac_pns": "0"}``: FFmpeg's AAC encoder otherwise codes noise-like bands
    as noise that the decoder draws from a generator of its own, so decoding a file in chunks,
    each with a fresh decoder, gives slightly different samples than decoding it whole).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if not scenes:
        raise ValueError("a recording needs at least one scene")
    if not (video or audio):
        raise ValueError("a recording needs video, audio or both")
    if video and suffix in AUDIO_ONLY_SUFFIXES:
        raise ValueError(f"{suffix} holds audio only; pass video=False")
    if width % 2 or height % 2 or width < 16 or height < 16:
        raise ValueError("width and height must be even and at least 16")
    default_v, default_a = _default_codecs(suffix)
    vcodec = vcodec or default_v
    acodec = acodec or default_a
    if acodec in ("libopus", "opus"):
        audio_rate_hz = 48000  # Opus only runs at 48 kHz

    bounds: list[tuple[float, float, str]] = []
    t = 0.0
    for scene in scenes:
        if scene.duration_s <= 0:
            raise ValueError("scene durations must be positive")
        bounds.append((t, t + scene.duration_s, scene.text))
        t += scene.duration_s
    duration = t
    cuts = [b[0] for b in bounds[1:]]

    track, spans = (
        _soundtrack(duration, speech, audio_rate_hz, noise_seed)
        if audio
        else (np.zeros(0, np.float32), [])
    )

    path.parent.mkdir(parents=True, exist_ok=True)
    scheduling = _thread_scheduling()
    out = av.open(str(path), mode="w", options=container_options or {})
    try:
        vstream = astream = None
        if video:
            rate = Fraction(fps).limit_denominator(1001)
            options = dict(_VIDEO_OPTIONS.get(vcodec, {}))
            if keyframe_interval is not None:
                options["g"] = str(keyframe_interval)
            vstream = out.add_stream(vcodec, rate=rate, options=options)
            vstream.width, vstream.height = width, height
            vstream.pix_fmt = _PIXEL_FORMATS.get(vcodec, "yuv420p")
            vstream.codec_context.time_base = 1 / rate
        if audio:
            astream = out.add_stream(acodec, rate=audio_rate_hz, layout="mono", options=audio_options or {})
            astream.codec_context.time_base = Fraction(1, audio_rate_hz)
        a_pos = 0

        def write_audio_until(sample: int) -> None:
            nonlocal a_pos
            if astream is None:
                return
            sample = min(sample, len(track))
            while a_pos < sample:
                chunk = track[a_pos : min(sample, a_pos + 1024)]
                frame = av.AudioFrame.from_ndarray(
                    chunk.reshape(1, -1), format="flt", layout="mono"
                )
                frame.sample_rate = audio_rate_hz
                frame.pts = a_pos
                frame.time_base = Fraction(1, audio_rate_hz)
                out.mux(astream.encode(frame))
                a_pos += len(chunk)

        if vstream is not None:
            renderers = [_SceneRenderer(s, width, height) for s in scenes]
            n_frames = round(duration * float(rate))
            scene_idx = 0
            for i in range(n_frames):
                ft = i / float(rate)
                while scene_idx + 1 < len(bounds) and ft >= bounds[scene_idx][1] - 1e-9:
                    scene_idx += 1
                write_audio_until(round((ft + 0.1) * audio_rate_hz))
                img = renderers[scene_idx].frame(ft - bounds[scene_idx][0])
                vf = av.VideoFrame.from_ndarray(img, format="rgb24")
                vf.pts = i
                out.mux(vstream.encode(vf))
            out.mux(vstream.encode(None))
        write_audio_until(len(track))
        if astream is not None:
            out.mux(astream.encode(None))
    finally:
        out.close()
        _restore_thread_scheduling(scheduling)
    return Truth(
        path=path,
        duration_s=duration,
        cuts=cuts,
        scenes=bounds,
        speech=spans,
        has_video=video,
        has_audio=audio,
    )


def demo_scenes() -> Scenario:
    """A one-minute day in eight places, with six sentences full of concrete facts.

    Scene lengths vary (6–9 s) so segmentation has real decisions to make, one scene is
    completely static, and one is silent, so recall has to rely on pictures and captions.
    """
    scenes = [
        Scene(8.0, seed=101, tint=(90, 110, 160), text="NORTH BRIDGE"),
        Scene(9.0, seed=202, tint=(200, 160, 90), text="KITCHEN"),
        Scene(7.0, seed=303, tint=(120, 120, 120), text="PLATFORM 7"),
        Scene(8.0, seed=404, tint=(170, 190, 210), text="ROOM 214"),
        Scene(9.0, seed=505, tint=(80, 170, 80), text="CITY PARK"),
        Scene(7.0, seed=606, tint=(60, 140, 190), text="FRESH FISH"),
        Scene(6.0, seed=707, tint=(90, 90, 60), text="EXIT B", static=True),
        Scene(6.0, seed=808, tint=(150, 90, 60), text="LIBRARY"),
    ]
    speech = [
        Speech(1.0, "Maria parked the red bicycle next to the North Bridge at nine fifteen."),
        Speech(9.0, "Tom put three green apples in the blue bowl on the kitchen table."),
        Speech(17.5, "The train to Oxford leaves from platform seven."),
        Speech(25.0, "Doctor Chen left her laptop in room two fourteen."),
        Speech(42.5, "The fish market sells salmon for twelve dollars."),
        Speech(55.0, "The library closes at six on Sunday."),
    ]
    return Scenario(scenes, speech)
