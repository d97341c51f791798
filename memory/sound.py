"""Hearing what is not speech: audio windows → speech, music, silence, noise, engine, applause.

Whisper only writes down words; music, an engine or applause left no trace in the memory, so
"what could be heard?" or "when was there music?" could not be answered. This module labels
short windows of a segment's 16 kHz mono audio from cheap signal features (numpy only, a few
hundred FFTs of 512 samples per second of audio) and merges consecutive windows of the same
kind into one :class:`~core.records.SoundObservation`.

Features, per window, from 32 ms frames (16 ms hop):

* **level** (dBFS) and the same −40 dBFS silence rule as pause detection and ASR gating;
* **low-energy frame ratio**: speech stops between syllables and words, so many of its
  frames are far below the window's mean; music, engines and noise are more continuous;
* **4 Hz modulation**: the share of the energy envelope's modulation at syllable rate
  (2.5–8 Hz), typical of speech;
* **tonal persistence**: music holds partials at fixed frequencies for a note's length, so
  spectral peaks stay in the same bin from frame to frame; speech's partials glide with the
  voice's pitch and noise has no lasting peaks;
* **harmonicity**: the best normalised autocorrelation at a pitch lag (voiced sound);
* **spectral flatness**, **centroid** and **low-band ratio** (energy below 200 Hz; engines
  live there);
* **impulsiveness**: the spread of 4 ms energies; applause is many short claps.
* **floor tonality** and **quiet persistence**, for a music bed wholly under a voice: a voice
  stops between words and its pitch glides, so the quietest fifth of each frequency bin over
  the window (its floor spectrum) is smooth; a bed keeps playing through those gaps with
  notes held at fixed frequencies, so its floor has sharp peaks (how far the eight sharpest
  stand above an 11-bin running median, 150–4000 Hz), and the peaks of the quietest frames
  stay put from one frame to the next. Mains hum (50 Hz and its overtones) and steady noise
  leave the floor smooth or its quiet frames without lasting peaks.

A small set of scores over these features (weights tuned on a generated *dev* split, reported
on a held-out split with other seeds and voices: benchmarks/bench_sound.py) picks the kind.
The recogniser's own transcript, when given, is a cue for speech.

``speech`` observations are kept in ``memory.sounds`` (the record of what could be heard)
but get no search text of their own: the transcript already stands for speech, and a
"speech" entry per segment would match every "what was said" question equally and crowd
out the words themselves (see :func:`searchable`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from episodic.core.records import SoundObservation, TranscriptPiece

KINDS = ("speech", "music", "silence", "noise", "engine", "applause")
SILENCE_DBFS = -40.0  # the rule used by pause detection and ASR gating (memory/speech.py)
LOUD_NOISE_DBFS = -30.0  # noise above this is "loud noise", below it "background noise"

_FRAME = 512  # 32 ms at 16 kHz
_HOP = 256
_EPS = 1e-10


@runtime_checkable
class SoundDescriber(Protocol):
    """Labels the sounds in a stretch of audio; a learned audio tagger can replace the
    feature rules behind this interface."""

    model_id: str

    def describe(
        self,
        audio: np.ndarray,
        rate_hz: int,
        t_offset: float,
        transcript: Sequence[TranscriptPiece] = (),
    ) -> list[SoundObservation]:
        """Observations in stream time (``t_offset`` is audio[0]), merged across windows."""
        ...


@dataclass(frozen=True)
class WindowFeatures:
    """What :func:`window_features` measures on one window (see the module docstring)."""

    level_dbfs: float
    low_energy_ratio: float  # share of frames 10 dB or more below the window's mean power
    modulation_4hz: float  # share of envelope modulation at 2.5–8 Hz
    tonal_persistence: float  # share of spectral peaks that stay put into the next frame
    harmonicity: float  # median best normalised autocorrelation at 2.5–16 ms lags
    flatness: float  # median spectral flatness (geometric / arithmetic mean power)
    centroid_hz: float
    low_band_ratio: float  # energy below 200 Hz / all energy
    impulsiveness: float  # mean log10 ratio of loud (p95) to typical (p50) 4 ms energies
    flux: float  # mean frame-to-frame change of the normalised log spectrum
    band_flux: float  # mean |frame-to-frame change| (dB) of energies in 8 bands above 500 Hz
    floor_tonality: float = 0.0  # dB: how far the floor spectrum's 8 sharpest peaks stand out
    quiet_persistence: float = 0.0  # tonal persistence over the window's quietest frames


def _frames(x: np.ndarray) -> np.ndarray:
    if x.size < _FRAME:
        x = np.pad(x, (0, _FRAME - x.size))
    return np.lib.stride_tricks.sliding_window_view(x, _FRAME)[::_HOP]


_HANN = np.hanning(_FRAME).astype(np.float32)


def window_features(x: np.ndarray, rate_hz: int = 16000) -> WindowFeatures:
    """Measure one window of mono float audio (full scale ±1)."""
    x = np.asarray(x, dtype=np.float32)
    power_mean = float(np.mean(x.astype(np.float64) ** 2)) if x.size else 0.0
    level = 10 * np.log10(power_mean + 1e-12)
    fr = _frames(x)
    spec = np.fft.rfft(fr * _HANN, n=2 * _FRAME, axis=1)  # zero-padded: linear autocorrelation
    pw = (spec.real**2 + spec.imag**2).astype(np.float64)
    pw_half = pw[:, ::2]  # the 512-point spectrum (257 bins, 31.25 Hz each at 16 kHz)
    freqs = np.arange(pw_half.shape[1]) * rate_hz / _FRAME
    frame_pow = pw_half.sum(axis=1) + _EPS

    # low-energy frames
    low_energy = float(np.mean(frame_pow < 0.1 * frame_pow.mean()))

    # syllable-rate modulation of the energy envelope (frame rate = rate/_HOP ≈ 62.5 Hz)
    env = np.sqrt(frame_pow)
    env = env - env.mean()
    if env.size >= 8:
        m = np.abs(np.fft.rfft(env * np.hanning(env.size))) ** 2
        mf = np.fft.rfftfreq(env.size, d=_HOP / rate_hz)
        band = m[(mf >= 2.5) & (mf <= 8.0)].sum()
        total = m[(mf >= 0.5) & (mf <= 30.0)].sum() + _EPS
        mod4 = float(band / total)
    else:
        mod4 = 0.0

    active = frame_pow > max(frame_pow.max() * 1e-3, _EPS * 10)
    sel = pw_half[active] if active.sum() >= 2 else pw_half

    # spectral shape over 60 Hz–7 kHz
    use = (freqs >= 60) & (freqs <= min(7000, rate_hz / 2 - 1))
    p = sel[:, use] + _EPS
    flat = np.exp(np.mean(np.log(p), axis=1)) / np.mean(p, axis=1)
    flatness = float(np.median(flat))
    tot = p.sum(axis=1)
    centroid = float(np.median((p * freqs[use]).sum(axis=1) / tot))
    low_band = float(pw_half[:, (freqs > 0) & (freqs < 200)].sum() / (pw_half[:, freqs > 0].sum() + _EPS))

    # tonal persistence: prominent local peaks in 100–4000 Hz that stay in the same bin
    band_idx = np.flatnonzero((freqs >= 100) & (freqs <= 4000))
    peaks = _prominent_peaks(sel[:, band_idx])
    persistence = _staying(peaks[:-1], peaks[1:]) if peaks.shape[0] >= 2 else 0.0

    # harmonicity: autocorrelation from the zero-padded power spectrum
    ac = np.fft.irfft(pw[active] if active.sum() >= 1 else pw, axis=1)
    lo, hi = int(0.0025 * rate_hz), int(0.016 * rate_hz)
    if ac.shape[0]:
        norm = ac[:, :1] + _EPS
        # unbiased by the overlap of a lagged frame with itself
        bias = (_FRAME - np.arange(lo, hi)) / _FRAME
        r = ac[:, lo:hi] / norm / bias
        harmonicity = float(np.median(r.max(axis=1)))
    else:
        harmonicity = 0.0

    # spectral flux of the normalised log spectrum
    if sel.shape[0] >= 2:
        ls = np.log(sel[:, use] + _EPS)
        ls = ls - ls.mean(axis=1, keepdims=True)
        flux = float(np.mean(np.sqrt(np.mean(np.diff(ls, axis=0) ** 2, axis=1))))
    else:
        flux = 0.0

    # band flux: claps and syllables make band energies jump; steady noise and held notes do
    # not (8 log-spaced bands, 500 Hz–7 kHz, many bins each so noise's own jitter averages out)
    edges = np.geomspace(500, min(7000, rate_hz / 2 - 1), 9)
    band_idx_all = np.searchsorted(freqs, edges)
    be = np.add.reduceat(pw_half, band_idx_all[:-1], axis=1)[:, :8] + _EPS
    if be.shape[0] >= 2:
        band_flux = float(np.mean(np.abs(np.diff(10 * np.log10(be), axis=0))))
    else:
        band_flux = 0.0

    floor_tonality, quiet_persistence = _bed_features(pw_half, freqs)

    # impulsiveness from 4 ms energies
    blk = max(1, int(0.004 * rate_hz))
    d = np.diff(x.astype(np.float64))  # first difference: a cheap high-pass (claps are bright)
    nb = d.size // blk
    if nb >= 10:
        e = np.mean(d[: nb * blk].reshape(nb, blk) ** 2, axis=1) + 1e-20
        impulsive = float(np.log10(np.percentile(e, 95) / np.percentile(e, 50)))
    else:
        impulsive = 0.0

    return WindowFeatures(
        level_dbfs=float(level),
        low_energy_ratio=low_energy,
        modulation_4hz=mod4,
        tonal_persistence=persistence,
        harmonicity=harmonicity,
        flatness=flatness,
        centroid_hz=centroid,
        low_band_ratio=low_band,
        impulsiveness=impulsive,
        flux=flux,
        band_flux=band_flux,
        floor_tonality=floor_tonality,
        quiet_persistence=quiet_persistence,
    )


_FLOOR_PERCENTILE = 20  # a bin's floor: the level it keeps in all but its loudest 80 % of frames
_QUIET_PERCENTILE = 30  # the quiet frames: the gaps between a voice's words


def _bed_features(pw: np.ndarray, freqs: np.ndarray) -> tuple[float, float]:
    """(floor tonality in dB, quiet-frame persistence) of one window's frame spectra (see the
    module docstring): what keeps sounding in the gaps of whatever is loudest."""
    if pw.shape[0] < 4:
        return 0.0, 0.0
    k = (pw.shape[0] - 1) * _FLOOR_PERCENTILE // 100
    floor_db = 10 * np.log10(np.partition(pw, k, axis=0)[k] + _EPS)
    padded = np.pad(floor_db, 5, mode="edge")
    smooth = np.median(np.lib.stride_tricks.sliding_window_view(padded, 11), axis=1)
    band = (freqs >= 150) & (freqs <= 4000)
    prominence = (floor_db - smooth)[band]
    tonality = float(np.sort(prominence)[-8:].mean())

    frame_pow = pw.sum(axis=1)
    quiet = frame_pow <= np.percentile(frame_pow, _QUIET_PERCENTILE)
    pairs = np.flatnonzero(quiet[:-1] & quiet[1:])  # quiet frames followed by a quiet frame
    if pairs.size == 0:
        return tonality, 0.0
    peaks = _prominent_peaks(pw[:, band])
    return tonality, _staying(peaks[pairs], peaks[pairs + 1])


def _prominent_peaks(power: np.ndarray) -> np.ndarray:
    """Per frame (row), the bins (all but the two edge ones) that are local spectral peaks at
    least 10 dB (natural log 2.3) above the frame's median level."""
    lp = np.log(power + _EPS)
    is_peak = (lp[:, 1:-1] > lp[:, :-2]) & (lp[:, 1:-1] > lp[:, 2:])
    return is_peak & (lp[:, 1:-1] > np.median(lp, axis=1, keepdims=True) + 2.3)


def _staying(now: np.ndarray, nxt: np.ndarray) -> float:
    """The share of the peaks in ``now`` that the paired frames of ``nxt`` keep in the same bin
    or a neighbour (tonal persistence); 0 with no peaks."""
    held = int(now.sum())
    if not held:
        return 0.0
    stay = nxt | np.roll(nxt, 1, axis=1) | np.roll(nxt, -1, axis=1)
    return float((now & stay).sum() / held)


# Rules: prototypes of each kind, as conditions (feature, ">" or "<", threshold, softness)
# that a typical window of it meets. A prototype's score is a soft minimum of its
# conditions' sigmoids (see kind_scores); a kind scores its best
# prototype. Thresholds were set from the feature quantiles of the dev split
# (bench_sound.py --split dev --features), with margins on both sides.
# "log_flatness" is log10 of the spectral flatness.
Rule = tuple[str, str, float, float]
PROTOTYPES: dict[str, tuple[str, tuple[Rule, ...]]] = {
    "clean speech": ("speech", (
        ("low_energy_ratio", ">", 0.08, 0.05),
        ("modulation_4hz", ">", 0.42, 0.1),
        ("impulsiveness", ">", 0.8, 0.2),
        ("band_flux", ">", 2.4, 0.4),
        ("log_flatness", "<", -1.3, 0.3),
        ("tonal_persistence", "<", 0.86, 0.03),
    )),
    # speech in steady noise: the pauses fill up and the spectrum flattens, but the voice's
    # harmonics and syllable rhythm remain
    "noisy speech": ("speech", (
        ("modulation_4hz", ">", 0.45, 0.1),
        ("tonal_persistence", ">", 0.72, 0.03),
        ("tonal_persistence", "<", 0.86, 0.03),
        ("harmonicity", ">", 0.4, 0.1),
        ("band_flux", ">", 2.0, 0.2),
        ("log_flatness", "<", -0.4, 0.2),
    )),
    "music": ("music", (
        ("tonal_persistence", ">", 0.85, 0.03),
        ("log_flatness", "<", -2.0, 0.4),
        ("harmonicity", ">", 0.42, 0.1),
        ("low_band_ratio", "<", 0.65, 0.1),
        ("low_energy_ratio", "<", 0.45, 0.05),
    )),
    # music in a noisy place: the noise flattens the spectrum and blurs the harmonics, but
    # the held notes stay put from frame to frame and the band energies change little
    "music in noise": ("music", (
        ("tonal_persistence", ">", 0.845, 0.02),
        ("band_flux", "<", 1.9, 0.15),
        ("harmonicity", ">", 0.42, 0.08),
        ("low_energy_ratio", "<", 0.1, 0.04),
        ("log_flatness", "<", -0.5, 0.15),
        ("low_band_ratio", "<", 0.45, 0.08),
    )),
    # a quiet music bed heard only against a noise floor (the pauses around a voice it
    # accompanies, music at or below the hiss): the hiss flattens the spectrum and hides the
    # harmonics, but held notes keep spectral peaks in place from frame to frame, which no
    # steady noise does (white ≈ 0, pink ≈ 0.4, brown ≈ 0.55, babble ≤ 0.71 with busy bands)
    "music under hiss": ("music", (
        ("tonal_persistence", ">", 0.69, 0.02),
        ("band_flux", "<", 1.6, 0.08),
        ("low_energy_ratio", "<", 0.08, 0.03),
        ("low_band_ratio", "<", 0.38, 0.03),
    )),
    "engine": ("engine", (
        ("low_band_ratio", ">", 0.45, 0.08),
        ("centroid_hz", "<", 450.0, 100.0),
        ("log_flatness", "<", -1.8, 0.3),
        ("harmonicity", "<", 0.8, 0.1),
        ("low_energy_ratio", "<", 0.05, 0.03),
    )),
    # an engine in a noisy place (a street, a windy yard): the noise flattens the spectrum and
    # lifts its centroid, but most of the energy stays below 200 Hz and the firing harmonics
    # stay put; brown noise (all low band, fully "harmonic" by autocorrelation) and pink noise
    # (no lasting peaks) stay out
    "engine in noise": ("engine", (
        ("low_band_ratio", ">", 0.42, 0.05),
        ("low_band_ratio", "<", 0.95, 0.015),
        ("tonal_persistence", ">", 0.6, 0.03),
        ("log_flatness", "<", -0.8, 0.15),
        ("harmonicity", "<", 0.75, 0.08),
        ("low_energy_ratio", "<", 0.05, 0.03),
    )),
    # a rough engine (a diesel, a worn exhaust: much broadband roar of its own): its peaks
    # hold less steadily, but the energy stays low and dark; brown noise (fully "harmonic"
    # by autocorrelation, all low band) and pink noise (bright, half low band) stay out
    "rough engine": ("engine", (
        ("low_band_ratio", ">", 0.6, 0.05),
        ("low_band_ratio", "<", 0.95, 0.015),
        ("tonal_persistence", ">", 0.45, 0.03),
        ("centroid_hz", "<", 600.0, 100.0),
        ("log_flatness", "<", -1.2, 0.15),
        ("harmonicity", "<", 0.75, 0.08),
        ("low_energy_ratio", "<", 0.05, 0.03),
    )),
    "applause": ("applause", (
        ("centroid_hz", ">", 1500.0, 300.0),
        ("harmonicity", "<", 0.35, 0.05),
        ("log_flatness", ">", -1.4, 0.3),
        ("band_flux", ">", 1.75, 0.1),
        ("impulsiveness", ">", 0.2, 0.05),
        ("tonal_persistence", "<", 0.55, 0.08),
        ("low_band_ratio", "<", 0.15, 0.05),
        ("low_energy_ratio", "<", 0.35, 0.07),
    )),
    # applause in a noisy place: the noise fills the gaps between claps (less flux, more low
    # band) but the clapping stays impulsive, bright and without harmonics or held tones
    "applause in noise": ("applause", (
        ("impulsiveness", ">", 0.2, 0.03),
        ("band_flux", ">", 1.68, 0.06),
        ("centroid_hz", ">", 1500.0, 250.0),
        ("harmonicity", "<", 0.5, 0.08),
        ("tonal_persistence", "<", 0.55, 0.08),
        ("low_band_ratio", "<", 0.35, 0.08),
        ("log_flatness", ">", -1.4, 0.3),
        ("low_energy_ratio", "<", 0.35, 0.07),
    )),
    # steady noise (hiss, fans, rain, rumble): flat and unchanging
    "steady noise": ("noise", (
        ("log_flatness", ">", -1.7, 0.3),
        ("band_flux", "<", 1.75, 0.1),
        ("impulsiveness", "<", 0.22, 0.05),
        ("low_energy_ratio", "<", 0.1, 0.05),
        ("tonal_persistence", "<", 0.72, 0.05),
    )),
    # crowd babble: speech's spectrum without its pauses or a single voice's harmonics
    "babble": ("noise", (
        ("log_flatness", ">", -1.6, 0.2),
        ("log_flatness", "<", -0.6, 0.2),
        ("centroid_hz", "<", 2000.0, 300.0),
        ("band_flux", "<", 2.7, 0.2),
        ("low_energy_ratio", "<", 0.08, 0.04),
        ("tonal_persistence", "<", 0.74, 0.03),
        ("low_band_ratio", "<", 0.3, 0.08),  # voices carry little below 200 Hz; an engine most
    )),
}
ALSO_MUSIC = 0.55  # a speech window whose music score reaches this has music under it
DESCRIPTIONS = {
    "speech": "speech",
    "music": "music playing",
    "silence": "silence",
    "engine": "an engine running",
    "applause": "applause, people clapping",
    "noise": "background noise",  # "loud noise" above LOUD_NOISE_DBFS
}
# Whisper writes what it hears but cannot transcribe as bracketed tags or notes
_WHISPER_TAGS = {
    "music": ("music", "♪", "♫", "singing"),
    "applause": ("applause", "clapping", "cheering"),
    "engine": ("engine", "motor", "revving"),
    "noise": ("noise", "static", "wind"),
}


# A music bed wholly under a voice (no pause long enough for a music window of its own):
# thresholds from the dev split's speech windows with and without a bed (bench_sound.py
# --split dev: no clean or noisy speech window passes both; most bed windows do).
BED_FLOOR_TONALITY_DB = 9.0
BED_QUIET_PERSISTENCE = 0.72


def music_bed_score(f: WindowFeatures) -> float:
    """In [0, 1]: how surely music keeps sounding in the gaps of a voice (≥ 0.5: it does)."""
    z = min((f.floor_tonality - BED_FLOOR_TONALITY_DB) / 1.5,
            (f.quiet_persistence - BED_QUIET_PERSISTENCE) / 0.03)
    return float(1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0))))


def _values(f: WindowFeatures) -> dict[str, float]:
    v = dict(vars(f))
    v["log_flatness"] = float(np.log10(max(f.flatness, 1e-8)))
    return v


def kind_scores(f: WindowFeatures) -> dict[str, float]:
    """Scores in [0, 1] for the non-silent kinds: each its best prototype (see PROTOTYPES)."""
    v = _values(f)
    out = dict.fromkeys(k for k in KINDS if k != "silence")
    for kind, rules in PROTOTYPES.values():
        z = np.array([(v[n] - thr) / soft * (1.0 if op == ">" else -1.0) for n, op, thr, soft in rules])
        sig = 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))
        # a soft AND: the power mean with exponent −2 sits near the weakest condition, so
        # one clearly failed condition rules the prototype out while near misses only dent it
        score = float(np.mean(np.maximum(sig, 1e-6) ** -2.0) ** -0.5)
        out[kind] = max(out[kind] or 0.0, score)
    return {k: float(s or 0.0) for k, s in out.items()}


def _tag_kind(text: str) -> str | None:
    """A non-speech kind named by a Whisper tag ("[Music]", "♪", "(applause)"), else None."""
    low = text.lower()
    bracketed = low.strip().startswith(("[", "(", "*", "♪", "♫"))
    if not bracketed:
        return None
    for kind, words in _WHISPER_TAGS.items():
        if any(w in low for w in words):
            return kind
    return None


@dataclass(frozen=True)
class WindowKind:
    """One window's verdict (stream time when produced by ``describe``)."""

    t_start: float
    t_end: float
    kind: str
    confidence: float
    level_dbfs: float
    also: str = ""  # a second kind heard under the first (music under speech)


class FeatureSoundDescriber:
    """:class:`SoundDescriber` from signal features and rules (no model weights).

    ``window_s``: length of the analysed windows; ``min_run_s``: runs of one kind shorter
    than this are absorbed by a neighbour (a one-window blip inside a long stretch is more
    often a misreading than a real change); ``transcript`` pieces overlapping a window are a
    cue for speech, and Whisper's own tags ("[Music]") for the kind they name.
    """

    model_id = "sound-features-v1"

    def __init__(self, window_s: float = 1.0, min_run_s: float = 2.0) -> None:
        if window_s <= 0:
            raise ValueError("window_s must be positive")
        self.window_s = float(window_s)
        self.min_run_s = float(min_run_s)

    def window_kinds(
        self,
        audio: np.ndarray,
        rate_hz: int,
        t_offset: float = 0.0,
        transcript: Sequence[TranscriptPiece] = (),
    ) -> list[WindowKind]:
        """One verdict per window; a last piece shorter than half a window joins the one before."""
        x = np.asarray(audio, dtype=np.float32).reshape(-1)
        w = max(1, int(round(self.window_s * rate_hz)))
        starts = list(range(0, x.size, w))
        if len(starts) > 1 and x.size - starts[-1] < w // 2:
            starts.pop()
        out: list[WindowKind] = []
        for i, s in enumerate(starts):
            e = starts[i + 1] if i + 1 < len(starts) else x.size
            if e - s < min(w // 4, 64):
                continue
            t0, t1 = t_offset + s / rate_hz, t_offset + e / rate_hz
            f = window_features(x[s:e], rate_hz)
            kind, conf, also = self._decide(f, t0, t1, transcript)
            out.append(WindowKind(t0, t1, kind, conf, f.level_dbfs, also))
        return out

    @staticmethod
    def _decide(
        f: WindowFeatures, t0: float, t1: float, transcript: Sequence[TranscriptPiece]
    ) -> tuple[str, float, str]:
        if f.level_dbfs < SILENCE_DBFS:
            return "silence", float(min(1.0, 0.6 + (SILENCE_DBFS - f.level_dbfs) / 25)), ""
        scores = kind_scores(f)
        words = 0
        for p in transcript:
            overlap = min(t1, p.t_end) - max(t0, p.t_start)
            if overlap <= 0.3 * (t1 - t0):
                continue
            tagged = _tag_kind(p.text)
            if tagged:
                scores[tagged] = 0.5 + 0.5 * scores[tagged]
            else:
                words += len(p.text.split())
        if words >= 2:
            scores["speech"] = 0.5 + 0.5 * scores["speech"]
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])
        (best, s1), (_, s2) = ranked[0], ranked[1]
        if s1 < 0.15:  # nothing fits: some loud sound we cannot name
            return "noise", round(0.3 * (1 - s1), 3), ""
        if best in ("speech", "music") and min(scores["speech"], scores["music"]) >= ALSO_MUSIC:
            # both fit: a voice over a music bed. The voice is the foreground (the transcript
            # holds it); the music is kept as a second observation.
            conf = min(scores["speech"], scores["music"])
            return "speech", round(float(conf), 3), "music"
        if best == "speech" and (bed := music_bed_score(f)) >= 0.5:
            # the voice hides the music everywhere but in the gaps between its words
            return "speech", round(float(min(s1, bed)), 3), "music"
        conf = s1 / (s1 + s2 + 1e-9) * min(1.0, s1 / 0.5)
        return best, round(float(conf), 3), ""

    def describe(
        self,
        audio: np.ndarray,
        rate_hz: int,
        t_offset: float,
        transcript: Sequence[TranscriptPiece] = (),
    ) -> list[SoundObservation]:
        """Window verdicts, short blips absorbed, runs of one kind merged into observations."""
        return merge_windows(self.window_kinds(audio, rate_hz, t_offset, transcript), self.min_run_s)


def _description(kind: str, loudest_dbfs: float) -> str:
    if kind == "noise" and loudest_dbfs >= LOUD_NOISE_DBFS:
        return "loud noise"
    return DESCRIPTIONS[kind]


def merge_windows(windows: Sequence[WindowKind], min_run_s: float = 0.0) -> list[SoundObservation]:
    """Runs of one kind → one observation each (confidence: the run's mean).

    A run shorter than ``min_run_s`` between runs at least that long takes the kind of the
    neighbour it is most like (the longer one), so "music, music, noise, music" stays one
    music stretch; a short run with no long neighbour is kept as it is.
    """
    kinds = [w.kind for w in windows]
    if min_run_s > 0 and len(windows) > 2:
        runs: list[list[int]] = []
        for i, k in enumerate(kinds):
            if runs and kinds[runs[-1][0]] == k:
                runs[-1].append(i)
            else:
                runs.append([i])
        for r_i, run in enumerate(runs):
            length = windows[run[-1]].t_end - windows[run[0]].t_start
            if length >= min_run_s:
                continue
            nbrs = [runs[j] for j in (r_i - 1, r_i + 1) if 0 <= j < len(runs)]
            long_nbrs = [
                n for n in nbrs if windows[n[-1]].t_end - windows[n[0]].t_start >= min_run_s
            ]
            if long_nbrs:
                target = max(long_nbrs, key=lambda n: windows[n[-1]].t_end - windows[n[0]].t_start)
                for i in run:
                    kinds[i] = kinds[target[0]]
    out: list[SoundObservation] = []
    group: list[int] = []

    def flush() -> None:
        if not group:
            return
        kind = kinds[group[0]]
        ws = [windows[i] for i in group]
        # windows relabelled by smoothing count with half their confidence
        confs = [w.confidence if w.kind == kind else 0.5 * w.confidence for w in ws]
        out.append(
            SoundObservation(
                t_start=round(ws[0].t_start, 3),
                t_end=round(ws[-1].t_end, 3),
                kind=kind,
                confidence=round(float(np.clip(np.mean(confs), 0.0, 1.0)), 3),
                description=_description(kind, max(w.level_dbfs for w in ws)),
            )
        )

    for i in range(len(windows)):
        if group and (kinds[i] != kinds[group[-1]] or windows[i].t_start > windows[group[-1]].t_end + 1e-6):
            flush()
            group = []
        group.append(i)
    flush()
    return _with_beds(out, windows, min_run_s)


def _with_beds(
    observations: list[SoundObservation], windows: Sequence[WindowKind], min_run_s: float
) -> list[SoundObservation]:
    """Add what was heard *under* the main kind (music under speech) as its own observations,
    joined to a touching observation of that kind, so a song that a voice talks over for a
    while stays one music stretch."""
    beds: list[SoundObservation] = []
    for w in windows:
        if not w.also:
            continue
        last = beds[-1] if beds else None
        if last is not None and last.kind == w.also and w.t_start <= last.t_end + 1e-6:
            last.t_end = round(w.t_end, 3)
            last.confidence = round(max(last.confidence, w.confidence), 3)
        else:
            beds.append(
                SoundObservation(round(w.t_start, 3), round(w.t_end, 3), w.also, w.confidence,
                                 _description(w.also, w.level_dbfs))
            )
    if not beds:
        return observations
    merged = list(observations)
    for bed in beds:
        touching = [
            o for o in merged
            if o.kind == bed.kind and o.t_start <= bed.t_end + 1e-6 and bed.t_start <= o.t_end + 1e-6
        ]
        if touching:
            o = touching[0]
            o.t_start, o.t_end = min(o.t_start, bed.t_start), max(o.t_end, bed.t_end)
        elif bed.t_end - bed.t_start >= min_run_s:
            merged.append(bed)
    merged.sort(key=lambda o: (o.t_start, o.t_end))
    return merged


def searchable(observations: Sequence[SoundObservation]) -> list[SoundObservation]:
    """Observations that get search text (E_i entries, evidence units): every kind but speech,
    which the transcript already stands for."""
    return [o for o in observations if o.kind != "speech" and o.description]
