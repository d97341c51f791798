"""Synthetic non-speech sounds (music, engines, applause, noise) for tests and benchmarks.

Generated recordings (episodic/samples.py) only hold speech over faint noise; to test and
measure that the memory hears *other* sounds too we need music, engine rumble, applause
and coloured noise with known positions. Everything here is plain numpy/scipy and seeded,
so a sound is reproducible, and the seed changes much more than the random phase: tempo,
key, mode, instrument timbre, percussion, number of cylinders, crowd size, talker count.
That variety matters because a sound classifier is judged on seeds it was never tuned on.

All generators return float32 mono at ``rate_hz`` with a peak of about 0.5 (≈ −6 dBFS),
loud enough to be clearly above the −40 dBFS silence rule and leave headroom for mixing.
"""

from __future__ import annotations

import numpy as np
from scipy import signal as sps

PEAK = 0.5  # every generator normalises its output to this peak

_NOISE_COLOURS = ("white", "pink", "brown", "babble")


def _normalise(x: np.ndarray, peak: float = PEAK) -> np.ndarray:
    m = float(np.abs(x).max()) if x.size else 0.0
    if m > 0:
        x = x * (peak / m)
    return x.astype(np.float32)


def _n(duration_s: float, rate_hz: int) -> int:
    if duration_s < 0:
        raise ValueError("duration_s must not be negative")
    if rate_hz <= 0:
        raise ValueError("rate_hz must be positive")
    return int(round(duration_s * rate_hz))


def _smooth_walk(rng: np.random.Generator, n: int, rate_hz: int, corner_hz: float) -> np.ndarray:
    """A slowly wandering curve with unit standard deviation (low-passed random walk)."""
    if n == 0:
        return np.zeros(0)
    # generate at a coarse rate and interpolate: cheap and smooth
    step = max(1, int(rate_hz / (corner_hz * 8)))
    coarse = np.cumsum(rng.normal(0.0, 1.0, n // step + 3))
    coarse -= np.linspace(coarse[0], coarse[-1], coarse.size)  # no long drift
    coarse = sps.savgol_filter(coarse, min(coarse.size - (1 - coarse.size % 2), 7), 2) if coarse.size >= 7 else coarse
    sd = float(coarse.std()) or 1.0
    return np.interp(np.arange(n) / step, np.arange(coarse.size), coarse / sd)


# ---------------------------------------------------------------------------------------
# music

# intervals (semitones above the root) of the scale degrees used for chords and melody
_MAJOR = (0, 2, 4, 5, 7, 9, 11)
_MINOR = (0, 2, 3, 5, 7, 8, 10)
_PROGRESSIONS = ((0, 4, 5, 3), (0, 5, 3, 4), (0, 3, 4, 4), (5, 3, 0, 4), (0, 0, 3, 4), (0, 6, 5, 4))
# (harmonic amplitudes, attack s, decay time constant s, sustain share, vibrato cents)
_INSTRUMENTS = {
    "piano": ((1.0, 0.5, 0.3, 0.2, 0.12, 0.08, 0.05), 0.005, 0.6, 0.0, 0.0),
    "organ": ((1.0, 0.8, 0.0, 0.5, 0.0, 0.3, 0.0, 0.2), 0.03, 9.9, 1.0, 0.0),
    "strings": ((1.0, 0.6, 0.45, 0.35, 0.28, 0.22, 0.18, 0.14, 0.1), 0.15, 9.9, 1.0, 12.0),
    "pluck": ((1.0, 0.7, 0.5, 0.35, 0.25, 0.15, 0.1), 0.002, 0.25, 0.0, 0.0),
    "synth": ((1.0, 0.0, 0.33, 0.0, 0.2, 0.0, 0.14, 0.0, 0.11), 0.01, 9.9, 0.8, 5.0),
    "flute": ((1.0, 0.25, 0.08, 0.03), 0.06, 9.9, 1.0, 18.0),
}


def _midi_hz(note: float) -> float:
    return 440.0 * 2.0 ** ((note - 69) / 12)


def _tone(
    freq_hz: float,
    length: int,
    rate_hz: int,
    instrument: str,
    rng: np.random.Generator,
) -> np.ndarray:
    """One note: additive harmonics under an attack/decay/release envelope."""
    harmonics, attack_s, decay_s, sustain, vibrato_cents = _INSTRUMENTS[instrument]
    t = np.arange(length) / rate_hz
    if vibrato_cents:
        rate = rng.uniform(4.5, 6.5)
        dev = 2.0 ** (vibrato_cents / 1200 * np.sin(2 * np.pi * rate * t)) - 1.0
        phase_mod = 2 * np.pi * freq_hz * np.cumsum(dev) / rate_hz
    else:
        phase_mod = 0.0
    nyquist = rate_hz / 2
    out = np.zeros(length)
    for k, a in enumerate(harmonics, start=1):
        if a == 0 or k * freq_hz >= nyquist * 0.95:
            continue
        # higher harmonics die away faster on struck/plucked strings
        env_k = np.exp(-t * k / (decay_s * 4)) if sustain < 1 else 1.0
        out += a * env_k * np.sin(2 * np.pi * k * freq_hz * t + k * phase_mod + rng.uniform(0, 2 * np.pi))
    attack = np.clip(t / max(attack_s, 1e-4), 0.0, 1.0)
    decay = sustain + (1 - sustain) * np.exp(-t / decay_s)
    release_n = min(length, int(0.04 * rate_hz))
    release = np.ones(length)
    if release_n:
        release[-release_n:] = np.linspace(1.0, 0.0, release_n)
    return out * attack * decay * release


def _drums(n: int, rate_hz: int, beat_s: float, rng: np.random.Generator) -> np.ndarray:
    """Kick on beats 1 and 3, snare on 2 and 4, hi-hat on every half (or quarter) beat."""
    out = np.zeros(n)
    kick_n = int(0.18 * rate_hz)
    tk = np.arange(kick_n) / rate_hz
    kick_f = 50 + 90 * np.exp(-tk / 0.03)  # the pitch falls quickly, as a drum skin does
    kick = np.sin(2 * np.pi * np.cumsum(kick_f) / rate_hz) * np.exp(-tk / 0.06)
    snare_n = int(0.15 * rate_hz)
    ts = np.arange(snare_n) / rate_hz
    b, a = sps.butter(2, [1200 / (rate_hz / 2), min(0.95, 6000 / (rate_hz / 2))], "band")
    snare = (sps.lfilter(b, a, rng.normal(0, 1, snare_n)) * 1.5 + 0.4 * np.sin(2 * np.pi * 190 * ts)) * np.exp(-ts / 0.04)
    hat_n = int(0.04 * rate_hz)
    th = np.arange(hat_n) / rate_hz
    bh, ah = sps.butter(2, min(0.95, 6000 / (rate_hz / 2)), "high")
    hat = sps.lfilter(bh, ah, rng.normal(0, 1, hat_n)) * np.exp(-th / 0.01)
    hat_div = int(rng.choice([2, 4]))
    swing = rng.uniform(0.0, 0.12)
    beat = 0
    t = 0.0
    while t * rate_hz < n:
        s = int(t * rate_hz)
        parts = [(hat, 0.25)]
        parts.append((kick, 0.9) if beat % 2 == 0 else (snare, 0.55))
        for wave, gain in parts:
            e = min(n, s + wave.size)
            out[s:e] += gain * wave[: e - s]
        for j in range(1, hat_div):
            sh = int((t + beat_s * (j / hat_div + (swing if j % 2 else 0))) * rate_hz)
            e = min(n, sh + hat.size)
            if sh < n:
                out[sh:e] += 0.15 * hat[: e - sh]
        beat += 1
        t += beat_s
    return out


def music(duration_s: float, rate_hz: int = 16000, seed: int = 0) -> np.ndarray:
    """A few bars of tonal music: chords, a bass line, a melody and (sometimes) drums.

    The seed picks tempo (60–160 bpm), key and mode, chord progression, the chord and
    melody instruments, whether chords are held or arpeggiated, whether there is a melody
    and whether there are drums, so different seeds sound like different pieces.
    """
    n = _n(duration_s, rate_hz)
    rng = np.random.default_rng(seed)
    if n == 0:
        return np.zeros(0, np.float32)
    bpm = rng.uniform(60, 160)
    beat_s = 60.0 / bpm
    root = int(rng.integers(45, 58))  # A2..A#3
    scale = _MAJOR if rng.random() < 0.6 else _MINOR
    progression = _PROGRESSIONS[int(rng.integers(len(_PROGRESSIONS)))]
    names = list(_INSTRUMENTS)
    chord_inst = names[int(rng.integers(len(names)))]
    melody_inst = names[int(rng.integers(len(names)))]
    arpeggio = rng.random() < 0.4
    has_melody = rng.random() < 0.8
    has_drums = rng.random() < 0.45
    has_bass = rng.random() < 0.75
    beats_per_chord = int(rng.choice([2, 4]))

    def degree_note(deg: int, octave: int = 0) -> int:
        return root + 12 * (octave + deg // 7) + scale[deg % 7]

    out = np.zeros(n)
    chord_len = int(beats_per_chord * beat_s * rate_hz)
    idx = 0
    pos = 0
    while pos < n:
        deg = progression[idx % len(progression)]
        notes = [degree_note(deg + i, 1) for i in (0, 2, 4)]
        length = min(chord_len, n - pos)
        if arpeggio:
            step = max(1, int(beat_s / 2 * rate_hz))
            for j, s in enumerate(range(0, length, step)):
                note = notes[j % 3] + (12 if (j // 3) % 2 else 0)
                ln = min(step * 2, n - pos - s)
                if ln > 0:
                    out[pos + s : pos + s + ln] += 0.35 * _tone(_midi_hz(note), ln, rate_hz, chord_inst, rng)
        else:
            for note in notes:
                out[pos : pos + length] += 0.25 * _tone(_midi_hz(note), length, rate_hz, chord_inst, rng)
        if has_bass:
            for b in range(beats_per_chord):
                s = pos + int(b * beat_s * rate_hz)
                ln = min(int(beat_s * rate_hz), n - s)
                if ln > 0:
                    bass_note = degree_note(deg) - 12 + (7 if b % 2 and rng.random() < 0.5 else 0)
                    out[s : s + ln] += 0.4 * _tone(_midi_hz(bass_note), ln, rate_hz, "pluck", rng)
        pos += chord_len
        idx += 1
    if has_melody:
        pos = 0
        deg = int(rng.integers(0, 7))
        while pos < n:
            dur_beats = float(rng.choice([0.5, 0.5, 1.0, 1.0, 1.5, 2.0]))
            ln = min(int(dur_beats * beat_s * rate_hz), n - pos)
            deg = int(np.clip(deg + rng.choice([-2, -1, -1, 0, 1, 1, 2, 3, -3]), 0, 13))
            if rng.random() > 0.1:  # an occasional rest
                note = degree_note(deg, 2)
                out[pos : pos + ln] += 0.45 * _tone(_midi_hz(note), ln, rate_hz, melody_inst, rng)
            pos += ln
    if has_drums:
        out += _drums(n, rate_hz, beat_s, rng) * float(np.abs(out).max() or 1.0) * rng.uniform(0.4, 0.9)
    return _normalise(out)


# ---------------------------------------------------------------------------------------
# engine


def engine(duration_s: float, rate_hz: int = 16000, seed: int = 0) -> np.ndarray:
    """Engine rumble: a low firing frequency with harmonics, wandering RPM and noise.

    The seed picks the idle frequency (25–60 Hz), the number of cylinders (which sets which
    harmonics are strong), how much the RPM wanders and how fast, the amount of amplitude
    modulation ("chug"), the share of broadband noise, and sometimes a gear/turbo whine.
    """
    n = _n(duration_s, rate_hz)
    rng = np.random.default_rng(seed)
    if n == 0:
        return np.zeros(0, np.float32)
    f0 = rng.uniform(25, 60)
    wander = rng.uniform(0.03, 0.2)  # relative RPM excursion
    f_inst = f0 * (1 + wander * _smooth_walk(rng, n, rate_hz, rng.uniform(0.1, 0.6)))
    f_inst = np.clip(f_inst, 15.0, 120.0)
    phase = 2 * np.pi * np.cumsum(f_inst) / rate_hz
    cylinders = int(rng.choice([2, 3, 4, 6, 8]))
    firing = cylinders / 2  # firings per crankshaft revolution (four-stroke)
    out = np.zeros(n)
    n_harm = int(rng.integers(10, 24))
    tilt = rng.uniform(0.6, 1.3)
    for k in range(1, n_harm + 1):
        if k * f0 * 1.3 > rate_hz / 2 * 0.9:
            break
        a = k ** (-tilt)
        if abs(k / firing - round(k / firing)) < 1e-6:
            a *= 3.0  # firing-order harmonics dominate
        out += a * rng.uniform(0.5, 1.0) * np.sin(k * phase + rng.uniform(0, 2 * np.pi))
    # chug: the level pulses with each firing, more for rough engines
    depth = rng.uniform(0.1, 0.6)
    out *= 1 + depth * np.sin(phase + rng.uniform(0, 2 * np.pi))
    # broadband mechanical/exhaust noise, low-passed, pulsing with the firing
    cutoff = rng.uniform(300, 2000)
    b, a = sps.butter(2, cutoff / (rate_hz / 2), "low")
    noise = sps.lfilter(b, a, rng.normal(0, 1, n))
    noise *= 1 + 0.5 * np.sin(phase * firing)
    out = out / (np.abs(out).max() or 1.0) + rng.uniform(0.15, 0.6) * noise / (np.abs(noise).max() or 1.0)
    if rng.random() < 0.3:  # a gear or turbo whine that follows the RPM
        ratio = rng.uniform(15, 40)
        out += rng.uniform(0.02, 0.08) * np.sin(ratio * phase)
    # a slow swell, as when the engine revs or passes by
    out *= 1 + rng.uniform(0.0, 0.3) * _smooth_walk(rng, n, rate_hz, 0.2).clip(-1.5, 1.5) / 1.5
    return _normalise(out)


# ---------------------------------------------------------------------------------------
# applause


def applause(duration_s: float, rate_hz: int = 16000, seed: int = 0) -> np.ndarray:
    """Clapping crowd: many overlapping short band-passed noise bursts.

    Each clapper has its own clap rate (2.5–6 per second), jitter, loudness and hand shape
    (the band a clap's energy sits in); the seed picks the crowd size (5–120) and how much
    room reverberation there is, from a few sharp claps to a dense roar.
    """
    n = _n(duration_s, rate_hz)
    rng = np.random.default_rng(seed)
    if n == 0:
        return np.zeros(0, np.float32)
    crowd = int(rng.integers(5, 120))
    n_shapes = 6
    # claps from clappers of one "hand shape" share a band; few shapes keep this cheap
    out = np.zeros(n)
    nyq = rate_hz / 2
    for shape in range(n_shapes):
        lo = rng.uniform(500, 1800)
        hi = min(nyq * 0.9, lo * rng.uniform(1.8, 4.0))
        b, a = sps.butter(2, [lo / nyq, hi / nyq], "band")
        impulses = np.zeros(n)
        members = rng.binomial(crowd, 1 / n_shapes) + (1 if shape == 0 else 0)
        for _ in range(members):
            rate = rng.uniform(2.5, 6.0)
            jitter = rng.uniform(0.02, 0.12)
            gain = rng.uniform(0.3, 1.0)
            t = rng.uniform(0, 1 / rate)
            # an individual may start late or stop early
            start = rng.uniform(0, 0.3) * duration_s if rng.random() < 0.2 else 0.0
            stop = duration_s * (1 - rng.uniform(0, 0.3)) if rng.random() < 0.2 else duration_s
            while t < duration_s:
                if start <= t <= stop:
                    impulses[min(n - 1, int(t * rate_hz))] += gain * rng.uniform(0.6, 1.0)
                t += (1 / rate) * (1 + rng.normal(0, jitter))
        burst_n = int(rng.uniform(0.006, 0.02) * rate_hz)
        burst = rng.normal(0, 1, burst_n) * np.exp(-np.arange(burst_n) / (burst_n / 4))
        out += sps.lfilter(b, a, sps.fftconvolve(impulses, burst)[:n])
    if rng.random() < 0.7:  # room reverberation: a short decaying noise tail
        tail_n = int(rng.uniform(0.1, 0.6) * rate_hz)
        tail = rng.normal(0, 1, tail_n) * np.exp(-np.arange(tail_n) / (tail_n / 5))
        tail[0] = 1.0 / rng.uniform(0.05, 0.3)
        out = sps.fftconvolve(out, tail / np.abs(tail).sum() * 8)[:n]
    # crowds swell in and die away at the edges
    fade = min(n // 4, int(rng.uniform(0.1, 0.8) * rate_hz))
    if fade:
        out[:fade] *= np.linspace(0.2, 1.0, fade)
        out[-fade:] *= np.linspace(1.0, 0.3, fade)
    return _normalise(out)


# ---------------------------------------------------------------------------------------
# noise


def _coloured(n: int, rng: np.random.Generator, exponent: float) -> np.ndarray:
    """Noise whose power falls as 1/f**exponent (0 white, 1 pink, 2 brown)."""
    spec = np.fft.rfft(rng.normal(0, 1, n))
    f = np.arange(spec.size, dtype=float)
    f[0] = 1.0
    spec *= f ** (-exponent / 2)
    spec[0] = 0.0
    return np.fft.irfft(spec, n)


# rough (F1, F2, F3) formant centres of vowels, Hz
_VOWELS = ((730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240), (530, 1840, 2480),
           (660, 1720, 2410), (570, 840, 2410), (440, 1020, 2240), (490, 1350, 1690))


def _talker(n: int, rate_hz: int, rng: np.random.Generator) -> np.ndarray:
    """Speech-like sound without words: voiced syllables through changing vowel formants.

    A glottal pulse train (pitch 90–260 Hz, gliding) or, for some syllables, hiss, passes
    through three formant resonators whose centres jump per syllable (3–6 per second),
    under a syllable envelope; the result has speech's spectrum and 4 Hz rhythm.
    """
    out = np.zeros(n)
    pitch = rng.uniform(90, 260)
    syl_rate = rng.uniform(3.0, 6.0)
    pos = int(rng.uniform(0, 0.3) * rate_hz)
    nyq = rate_hz / 2
    while pos < n:
        ln = int(rng.uniform(0.6, 1.4) / syl_rate * rate_hz)
        ln = min(ln, n - pos)
        if ln <= 8:
            break
        if rng.random() < 0.15:  # a pause between phrases
            pos += ln
            continue
        t = np.arange(ln) / rate_hz
        if rng.random() < 0.8:
            f = pitch * (1 + rng.uniform(-0.15, 0.15) + rng.uniform(-0.1, 0.1) * t / (t[-1] + 1e-9))
            ph = np.cumsum(f) / rate_hz
            src = np.diff(np.floor(ph), prepend=0.0)  # one impulse per period
            src += 0.02 * rng.normal(0, 1, ln)
        else:
            src = rng.normal(0, 0.3, ln)
        vowel = _VOWELS[int(rng.integers(len(_VOWELS)))]
        y = np.zeros(ln)
        for k, fc in enumerate(vowel):
            fc = fc * rng.uniform(0.9, 1.15)
            if fc >= nyq * 0.9:
                continue
            bw = 80 + 40 * k
            b, a = sps.iirpeak(fc / nyq, fc / bw)
            y += sps.lfilter(b, a, src) / (k + 1)
        env = np.sin(np.pi * np.linspace(0, 1, ln)) ** rng.uniform(0.5, 1.5)
        out[pos : pos + ln] += y * env
        pos += ln
    return out


def noise(duration_s: float, rate_hz: int = 16000, seed: int = 0, colour: str = "white") -> np.ndarray:
    """Stationary noise: ``white``, ``pink`` (1/f), ``brown`` (1/f²) or ``babble``.

    Babble is a crowd of talkers without words: 4–9 formant-synthesised speech-like voices
    whose pieces are cut up, partly reversed and shuffled, then overlapped, so it has
    speech's spectrum but no intelligible (or transcribable) content.
    """
    if colour not in _NOISE_COLOURS:
        raise ValueError(f"colour must be one of {', '.join(_NOISE_COLOURS)}; got {colour!r}")
    n = _n(duration_s, rate_hz)
    rng = np.random.default_rng(seed)
    if n == 0:
        return np.zeros(0, np.float32)
    if colour == "white":
        out = rng.normal(0, 1, n)
    elif colour == "pink":
        out = _coloured(n, rng, 1.0)
    elif colour == "brown":
        out = _coloured(n, rng, 2.0)
    else:
        out = np.zeros(n)
        for _ in range(int(rng.integers(4, 10))):
            voice = _talker(n, rate_hz, rng)
            piece = int(rng.uniform(0.2, 0.6) * rate_hz)
            chunks = [voice[i : i + piece] for i in range(0, n, piece)]
            chunks = [c[::-1] if rng.random() < 0.5 else c for c in chunks]
            order = rng.permutation(len(chunks))
            voice = np.concatenate([chunks[i] for i in order])[:n]
            out += rng.uniform(0.4, 1.0) * voice / (voice.std() or 1.0)
    return _normalise(out)


def mix_at_snr(signal: np.ndarray, background: np.ndarray, snr_db: float) -> np.ndarray:
    """``signal`` plus ``background`` scaled to ``snr_db`` (power ratio), clipped to ±1.

    The background is tiled or trimmed to the signal's length; silent inputs are returned
    unchanged rather than dividing by zero.
    """
    sig = np.asarray(signal, dtype=np.float64)
    bg = np.asarray(background, dtype=np.float64)
    if sig.size == 0:
        return sig.astype(np.float32)
    if bg.size == 0:
        return np.clip(sig, -1.0, 1.0).astype(np.float32)
    if bg.size < sig.size:
        bg = np.tile(bg, int(np.ceil(sig.size / bg.size)))
    bg = bg[: sig.size]
    p_sig = float(np.mean(sig**2))
    p_bg = float(np.mean(bg**2))
    if p_sig == 0 or p_bg == 0:
        return np.clip(sig + bg * 0.0, -1.0, 1.0).astype(np.float32)
    gain = np.sqrt(p_sig / (p_bg * 10 ** (snr_db / 10)))
    return np.clip(sig + gain * bg, -1.0, 1.0).astype(np.float32)
