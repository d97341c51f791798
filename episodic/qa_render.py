"""A stream's script rendered to a real recording: scenes, photos and slides as video frames,
speech, sounds, a music bed and noise as its soundtrack (see :mod:`episodic.qa_generator`)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageDraw

from episodic import sample_sounds, samples
from episodic.qa_content import FPS, HEIGHT, MUSIC_BED_SNR_DB, RATE_HZ, WIDTH, Photo
from episodic.qa_script import Beat, StreamScript, _speech


# -- rendering -------------------------------------------------------------------------------------
def _photo_array(photo: Photo) -> np.ndarray:
    if photo.name.startswith("sklearn:"):  # scikit-learn's sample photos ("sklearn:china.jpg")
        from sklearn.datasets import load_sample_image

        return np.asarray(load_sample_image(photo.name.split(":", 1)[1]))[..., :3].astype(np.uint8)
    import skimage.data

    img = getattr(skimage.data, photo.name)()
    if isinstance(img, tuple):
        img = img[0]
    img = np.asarray(img)
    if img.dtype == bool:  # a silhouette (skimage's horse): white on black
        img = img.astype(np.uint8) * 255
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    return img[..., :3].astype(np.uint8)


def _slide(text: str, seed: int) -> np.ndarray:
    """A presentation slide: light background, a coloured header bar, the text large."""
    rng = np.random.default_rng(seed)
    bg = tuple(int(v) for v in rng.integers(225, 256, 3))
    bar = tuple(int(v) for v in rng.integers(20, 120, 3))
    pil = Image.new("RGB", (WIDTH, HEIGHT), bg)
    draw = ImageDraw.Draw(pil)
    draw.rectangle((0, 0, WIDTH, HEIGHT // 8), fill=bar)
    font = samples._font(max(36, HEIGHT // 7))
    lines = text.split(" ", 1) if len(text) > 14 else [text]
    y = HEIGHT // 3
    for line in lines:
        w = draw.textlength(line, font=font)
        draw.text(((WIDTH - w) / 2, y), line, font=font, fill=(20, 20, 30))
        y += int(HEIGHT / 5.5)
    return np.asarray(pil)


class _BeatRenderer:
    """Frames for one beat, composed on the sample renderer's textured scenes."""

    def __init__(self, beat: Beat, seed: int) -> None:
        self.beat = beat
        rng = np.random.default_rng(seed)
        tint = tuple(int(v) for v in rng.integers(40, 220, 3))
        caption = beat.sign if beat.visual == "sign" else ""
        scene = samples.Scene(beat.duration_s, seed=seed, tint=tint, text=caption,
                              motion=float(rng.uniform(0.5, 1.5)), pan_px_s=float(rng.choice([0.0, 0.0, 12.0])))
        # the sample recordings' textured, moving scene; we compose photos, slides and darkness on it
        self.scene = samples._SceneRenderer(scene, WIDTH, HEIGHT)
        self.still: np.ndarray | None = None
        self.dark: list[np.ndarray] = []
        self.photo: tuple[np.ndarray, int, int] | None = None
        if beat.visual == "slide":
            self.still = _slide(beat.sign, seed)
        elif beat.visual == "dark":
            base = (self.scene.base.astype(np.float32) * 0.04 + 6).clip(0, 255)
            self.dark = [(base + rng.normal(0, 2.5, base.shape)).clip(0, 255).astype(np.uint8) for _ in range(4)]
        elif beat.visual == "photo" and beat.photo is not None:
            img = Image.fromarray(_photo_array(beat.photo))
            h = int(HEIGHT * rng.uniform(0.65, 0.9))
            w = min(WIDTH - 20, int(img.width * h / img.height))
            img = img.resize((w, h), Image.BILINEAR)
            x = int(rng.integers(10, max(11, WIDTH - w - 10)))
            y = int(rng.integers(5, max(6, HEIGHT - h - 5)))
            self.photo = (np.asarray(img), x, y)

    def frame(self, t: float, i: int) -> np.ndarray:
        if self.still is not None:
            return self.still
        if self.dark:
            return self.dark[i % len(self.dark)]
        img = self.scene.frame(t)
        if self.photo is not None:
            pic, x, y = self.photo
            img = img.copy()
            img[y : y + pic.shape[0], x : x + pic.shape[1]] = pic
        return img


def _soundtrack(script: StreamScript, split: str, seed: int, harsher_db: float = 0.0) -> np.ndarray:
    n = int(round(script.duration_s * RATE_HZ))
    speech = np.zeros(n, np.float32)
    other = np.zeros(n, np.float32)
    script.sounds = []
    for k, b in enumerate(script.beats):
        if b.said and b.speech_t is not None:
            x = _speech(b.said, b.voice, b.wpm)
            s0 = int(round(b.speech_t[0] * RATE_HZ))
            speech[s0 : s0 + len(x)] += x[: max(0, n - s0)]
        if b.sound:
            kind = "music" if b.sound == "bed" else b.sound
            t0 = b.t_start + (0.0 if b.sound == "bed" else 1.0)
            t1 = b.t_start + b.duration_s - (0.0 if b.sound == "bed" else 1.0)
            gen = {"music": sample_sounds.music, "engine": sample_sounds.engine, "applause": sample_sounds.applause}[kind]
            x = gen(t1 - t0, RATE_HZ, seed=seed * 31 + k)
            fade = min(len(x) // 4, int(0.3 * RATE_HZ))
            if fade:
                ramp = np.linspace(0, 1, fade, dtype=np.float32)
                x[:fade] *= ramp
                x[-fade:] *= ramp[::-1]
            if b.sound == "bed" and b.speech_t is not None:
                s = _speech(b.said, b.voice, b.wpm)
                p_speech = float(np.mean(s**2)) or 1e-9
                p_bed = float(np.mean(x**2)) or 1e-9
                x = x * np.float32(np.sqrt(p_speech / p_bed / 10 ** ((MUSIC_BED_SNR_DB[split] - harsher_db) / 10)))
            else:
                x = x * np.float32(0.7)
            s0 = int(round(t0 * RATE_HZ))
            other[s0 : s0 + len(x)] += x[: max(0, n - s0)]
            script.sounds.append((kind, round(t0, 2), round(t1, 2)))
    # Background noise at the stream's SNR against the power of speech while someone speaks
    # (not the whole track's, whose pauses would make the noise look quieter than it is).
    colour, snr = script.noise
    bg = sample_sounds.noise(min(script.duration_s, 30.0), RATE_HZ, seed=seed, colour=colour)
    bg = np.resize(bg, n).astype(np.float32)
    active = np.abs(speech) > 1e-3
    p_speech = float(np.mean(speech[active] ** 2)) if active.any() else 1e-4
    p_bg = float(np.mean(bg**2)) or 1e-12
    bg *= np.float32(np.sqrt(p_speech / p_bg / 10 ** (snr / 10)))
    return np.clip(speech + bg + other, -1.0, 1.0).astype(np.float32)


def render_stream(script: StreamScript, path: Path, split: str, seed: int, harsher_db: float = 0.0) -> None:
    """Write the stream's video (H.264) and sound (AAC) to ``path`` (the music bed
    ``harsher_db`` louder against speech than the split's own; the noise is in the script)."""
    track = _soundtrack(script, split, seed, harsher_db)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = av.open(str(path), mode="w")
    try:
        rate = Fraction(FPS)
        vs = out.add_stream("libx264", rate=rate, options={"preset": "veryfast", "crf": "23", "g": "50"})
        vs.width, vs.height, vs.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        vs.codec_context.time_base = 1 / rate
        aus = out.add_stream("aac", rate=RATE_HZ, layout="mono")
        aus.codec_context.time_base = Fraction(1, RATE_HZ)
        a_pos = 0

        def audio_until(sample: int) -> None:
            nonlocal a_pos
            sample = min(sample, len(track))
            while a_pos < sample:
                chunk = track[a_pos : min(sample, a_pos + 1024)]
                frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format="flt", layout="mono")
                frame.sample_rate, frame.pts, frame.time_base = RATE_HZ, a_pos, Fraction(1, RATE_HZ)
                out.mux(aus.encode(frame))
                a_pos += len(chunk)

        frame_i = 0
        for k, beat in enumerate(script.beats):
            renderer = _BeatRenderer(beat, seed * 1000 + k)
            end_frame = int(round((beat.t_start + beat.duration_s) * FPS))
            while frame_i < end_frame:
                t = frame_i / FPS
                audio_until(int((t + 0.1) * RATE_HZ))
                vf = av.VideoFrame.from_ndarray(renderer.frame(t - beat.t_start, frame_i), format="rgb24")
                vf.pts = frame_i
                out.mux(vs.encode(vf))
                frame_i += 1
        out.mux(vs.encode(None))
        audio_until(len(track))
        out.mux(aus.encode(None))
    finally:
        out.close()


