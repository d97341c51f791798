"""Speech → time-aligned text with faster-whisper (CTranslate2), fully offline.

Two models ship in wheels (memory/whisper_models.py): tiny.en and the multilingual base,
joined once into the model cache; any other CTranslate2 Whisper folder (small, large-v3
converted with ``ct2-transformers-converter``) can be named in ``settings.whisper_model``.
Decoding uses what faster-whisper offers: beam search, Silero VAD, language detection (for
multilingual models; an unsure guess falls back to ``asr_fallback_language``), word
timestamps and temperature fallback. ``transcribe`` also takes hot words and a prompt, which
re-listening at question time uses to bias decoding toward the words a question is about.

Whisper is trained to always emit *some* text, so on silence, hum or music it invents
sentences ("Thank you for watching."). Those would become memories that never happened, so
this wrapper guards in layers: skip audio whose loudest 100 ms is below −40 dBFS, let the
Silero VAD bundled with faster-whisper cut non-speech, never condition on earlier (possibly
invented) text, and drop segments Whisper itself flags as probably-not-speech or that are
repetition loops.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from episodic.config import Settings
from episodic.core.errors import ConfigError, ModelError
from episodic.core.records import TranscriptPiece
from episodic.memory import whisper_models

WHISPER_SAMPLE_RATE_HZ = 16000
BUNDLED_MODEL = whisper_models.TINY_EN  # kept for callers of the old name
SILENCE_DBFS = -40.0  # the loudest 100 ms window must reach this for Whisper to run at all
LOUDNESS_WINDOW_S = 0.1
NO_SPEECH_PROB_MAX = 0.6  # Whisper's own thresholds: a segment that is both probably silent
AVG_LOGPROB_MIN = -1.0  # and decoded with low confidence is dropped
COMPRESSION_RATIO_MAX = 2.4  # gzip ratio above which Whisper's own fallback deems text a loop
LOOP_MIN_WORDS = 3  # a repeat this long or longer is a sentence said again ("go to go to" is not)
WORD_PROB_MIN = 0.2  # over probable non-speech, a segment none of whose words is this sure is dropped
# a number written against the word after it ("Only 13tomato plants are left."): Whisper joins
# them now and then; three or more letters, so "5pm", "3rd" and "1990s" stay as written
_GLUED_NUMBER = re.compile(r"\b(\d+)([A-Za-z]{3,})\b")


def unglued(text: str) -> str:
    """``text`` with a number parted from a word written against it ("13tomato" → "13 tomato"):
    glued, neither the number nor the word is found by what searches and answers read."""
    return _GLUED_NUMBER.sub(r"\1 \2", text)


# Tokens a window may generate: fast speech is about 4–5 tokens a second, so 10 a second (plus a
# sentence's worth) never cuts real words, and a decoder that has lost its way (a clip decoded
# in the wrong language, a loop) stops there instead of at Whisper's 448: one such re-listening
# took 19 s for 7 s of audio. Capped so that a prompt (at most 223 tokens) still fits.
TOKENS_PER_AUDIO_S = 10.0
TOKENS_SLACK = 16
TOKENS_MAX = 224
MEL_FRAMES_PER_S = 100  # Whisper's log-mel features: one frame every 10 ms

log = logging.getLogger(__name__)


def window_tokens(audio_s: float) -> int:
    """New tokens a decoding of ``audio_s`` seconds of audio may write (see TOKENS_PER_AUDIO_S)."""
    return min(TOKENS_MAX, TOKENS_SLACK + math.ceil(TOKENS_PER_AUDIO_S * max(0.0, audio_s)))


def window_content_s(features: Any) -> float | None:
    """Seconds of audio in one 30 s window's log-mel features, or None when they cannot be read.
    faster-whisper pads a window's features with zero frames up to 30 s, and a frame of real
    audio is never zero in all its mel bins, so the last non-zero frame is where the audio ends.

    Why: faster-whisper caps every window of a call at the same ``max_new_tokens``, set from the
    whole call's audio. When the first window's decoding ends before the audio does, it seeks to
    its last word and decodes what is left as a window of its own, often a tenth of a second
    of silence, where a prompted decoder writes "I'm sorry, I'm sorry, …" up to that cap: on
    held-out re-listenings 2.0 s of a 4.3 s joint pass (113 tokens for 0.1 s of audio)."""
    try:
        f = np.asarray(features, dtype=np.float32)
    except (TypeError, ValueError, RuntimeError):  # a GPU-resident StorageView, say
        return None
    if f.ndim < 2 or f.shape[-1] == 0:
        return None
    frames = f.reshape(-1, f.shape[-1])
    voiced = np.flatnonzero(np.any(frames != 0.0, axis=0))
    return 0.0 if voiced.size == 0 else float(voiced[-1] + 1) / MEL_FRAMES_PER_S


def to_mono_float32(audio: np.ndarray) -> np.ndarray:
    """Float32 mono in [-1, 1]: integer PCM is scaled by its full scale, channels are averaged.

    Accepts (n,) or (n, channels); a (channels, n) array with fewer than 9 rows is treated as
    channel-first, which is what PyAV's planar frames give.
    """
    x = np.asarray(audio)
    if np.issubdtype(x.dtype, np.integer):
        info = np.iinfo(x.dtype)
        x = x.astype(np.float32) / float(max(abs(info.min), info.max))
    else:
        x = x.astype(np.float32, copy=False)
    if x.ndim == 2:
        axis = 0 if x.shape[0] <= 8 and x.shape[1] > x.shape[0] else 1
        x = x.mean(axis=axis, dtype=np.float32)
    elif x.ndim != 1:
        raise ValueError(f"audio must be 1-D or 2-D, got shape {x.shape}")
    return np.ascontiguousarray(x, dtype=np.float32)


def resample(
    audio: np.ndarray, sample_rate_hz: int, target_hz: int = WHISPER_SAMPLE_RATE_HZ
) -> np.ndarray:
    """Resample mono float32 audio. Polyphase (anti-aliased) when SciPy is present, else linear.

    SciPy ships with scikit-image, which episodic depends on; the linear fallback only exists so
    a stripped-down install still works (it aliases a little when downsampling, which Whisper
    tolerates).
    """
    if sample_rate_hz <= 0:
        raise ValueError(f"sample rate must be positive, got {sample_rate_hz}")
    if sample_rate_hz == target_hz or audio.size == 0:
        return np.asarray(audio, dtype=np.float32)
    try:
        from scipy.signal import resample_poly
    except ImportError:
        n_out = int(round(audio.size * target_hz / sample_rate_hz))
        src_t = np.arange(audio.size, dtype=np.float64) / sample_rate_hz
        dst_t = np.arange(n_out, dtype=np.float64) / target_hz
        return np.interp(dst_t, src_t, audio).astype(np.float32)
    g = math.gcd(int(sample_rate_hz), int(target_hz))
    out = resample_poly(audio, target_hz // g, int(sample_rate_hz) // g)
    return np.asarray(out, dtype=np.float32)


def loudest_window_dbfs(
    audio: np.ndarray, sample_rate_hz: int, window_s: float = LOUDNESS_WINDOW_S
) -> float:
    """RMS level (dBFS, full scale = 1.0) of the loudest window.

    The loudest window rather than the whole clip: a short quiet utterance inside a long
    silent segment still counts as something worth transcribing.
    """
    if audio.size == 0:
        return -math.inf
    win = max(1, int(round(window_s * sample_rate_hz)))
    n = (audio.size // win) * win
    if n == 0:
        power = float(np.mean(np.square(audio, dtype=np.float64)))
    else:
        frames = audio[:n].reshape(-1, win).astype(np.float64)
        power = float(np.max(np.mean(frames * frames, axis=1)))
        if audio.size > n:  # the tail shorter than a window still counts
            tail = audio[n:].astype(np.float64)
            power = max(power, float(np.mean(tail * tail)))
    return 10.0 * math.log10(power) if power > 0 else -math.inf


def whisper_device(device: str) -> tuple[str, int]:
    """CTranslate2's (device, index) for the ``device`` setting: "cpu", "cuda", "cuda:1"."""
    name, _, index = (device or "cpu").strip().lower().partition(":")
    if name not in ("cpu", "cuda"):
        raise ModelError(f"faster-whisper runs on 'cpu' or 'cuda[:N]', not device {device!r}")
    if index and not index.isdigit():
        raise ModelError(f"device {device!r}: the GPU index must be a number, e.g. cuda:1")
    return name, int(index or 0)


def parse_temperatures(text: str) -> tuple[float, ...]:
    """``"0.0,0.2,0.4"`` → (0.0, 0.2, 0.4): increasing, each in [0, 1]."""
    try:
        temps = tuple(float(t) for t in str(text).replace(";", ",").split(",") if t.strip())
    except ValueError:
        temps = ()
    if not temps or any(not 0.0 <= t <= 1.0 for t in temps) or list(temps) != sorted(temps):
        raise ConfigError(
            f"whisper_temperatures must be increasing numbers in [0, 1] separated by commas, "
            f"e.g. '0.0,0.2,0.4,0.6,0.8,1.0'; got {text!r}"
        )
    return temps


def _language_set(text: str) -> frozenset[str]:
    return frozenset(t.strip().lower() for t in str(text).split(",") if t.strip())


def _mean_logprob(decoded: list[tuple[Any, str]]) -> float:
    """Token-weighted mean log-probability of decoded segments (-inf for none)."""
    n = sum(len(seg.tokens) for seg, _ in decoded)
    if n == 0:
        return -math.inf
    return sum(float(seg.avg_logprob) * len(seg.tokens) for seg, _ in decoded) / n


@dataclass(frozen=True)
class Hearing:
    """What one :meth:`WhisperRecognizer.hear` call heard: pieces in stream time, and where
    (stream time) a time limit stopped decoding; None when the whole audio was decoded. Audio
    after ``stopped_at_s`` was not heard, which is not the same as hearing nothing there."""

    pieces: list[TranscriptPiece]
    stopped_at_s: float | None = None


class WindowRefused(Exception):
    """Raised inside faster-whisper's decoding when a further 30 s window would start after the
    call's deadline (see :class:`_ModelGate`); :meth:`WhisperRecognizer._decode` stops there."""


class _ModelGate:
    """Stands in for the CTranslate2 model so that language detection obeys our rules and a
    deadline stops decoding between windows, never inside one.

    Deadline: faster-whisper decodes a 30 s window, aligns its words, and only then hands out
    that window's segments one by one. Checking the time between segments therefore dropped the
    rest of a window already paid for (a joint re-listening pass whose one window took longer
    than ``relisten_pass_max_s`` kept its first segment and lost the others). The gate is asked
    instead when the next window's audio is encoded: after the thread's deadline it refuses
    (:class:`WindowRefused`), so every window decoded is kept whole and none starts late. The
    first window of a call is always decoded.

    Language: with ``multilingual=True`` faster-whisper detects the language of every 30 s
    window from the encoder output it computes anyway for decoding; its own up-front detection
    (``language=None``) runs the encoder a second time, which on short ingest segments doubled
    the cost of Whisper base (``benchmarks/bench_asr.py``). The gate intercepts that per-window
    detection: the guess is limited to ``asr_languages``, an unsure one (below
    ``asr_language_min_prob``) becomes ``asr_fallback_language``, and the language chosen for
    the window being decoded is kept per thread so each piece can carry it.

    Tokens: each window may write no more than its own audio holds (:func:`window_content_s`,
    :func:`window_tokens`), where faster-whisper gives every window of a call the cap set for
    the whole call's audio.

    The state is per thread, so concurrent calls do not share a deadline or a language.
    Everything else is passed to the real model.
    """

    def __init__(self, inner: Any, choose: Any) -> None:
        self._inner = inner
        self._choose = choose
        self._local = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @property
    def multilingual(self) -> bool:
        return bool(getattr(self._inner, "is_multilingual", False))

    def start(self, until: float | None) -> None:
        """A call begins on this thread: its windows stop starting at ``until`` (None: never)."""
        self._local.language = ""
        self._local.until = until
        self._local.windows = 0
        self._local.content_s = None

    def encode(self, features: Any, *args: Any, **kwargs: Any) -> Any:
        until = getattr(self._local, "until", None)
        if until is not None:
            if self._local.windows > 0 and time.perf_counter() >= until:
                raise WindowRefused
            self._local.windows += 1
        self._local.content_s = window_content_s(features)
        return self._inner.encode(features, *args, **kwargs)

    def generate(self, features: Any, prompts: Any, *args: Any, **kwargs: Any) -> Any:
        """The real model's ``generate``, with no more new tokens than the window's own audio
        can hold (see :func:`window_tokens`)."""
        content_s = getattr(self._local, "content_s", None)
        max_length = kwargs.get("max_length")
        if content_s is not None and max_length is not None and prompts:
            kwargs["max_length"] = min(int(max_length), len(prompts[0]) + window_tokens(content_s))
        return self._inner.generate(features, prompts, *args, **kwargs)

    @property
    def current_language(self) -> str:
        return getattr(self._local, "language", "")

    def detect_language(self, *args: Any, **kwargs: Any) -> Any:
        results = self._inner.detect_language(*args, **kwargs)
        out = []
        for ranked in results:  # one list of (token "<|xx|>", probability) per batch item
            probs = [(str(tok)[2:-2], float(p)) for tok, p in ranked]
            lang = self._choose(probs)
            token = f"<|{lang}|>"
            p_lang = next((p for code, p in probs if code == lang), 0.0)
            out.append([(token, p_lang)] + [(t, p) for t, p in ranked if t != token])
            self._local.language = lang
        return out


class WhisperRecognizer:
    """faster-whisper (CTranslate2) on the CPU or a GPU (``device``); implements
    ``SpeechRecognizer``. Loads on first use (``prepare`` loads, and joins a split bundled
    model into the cache, now). A larger model (``whisper_model`` = a folder holding a converted
    medium or large-v3, ``whisper_compute_type`` = float16 on a GPU) is a configuration change
    only."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.source = whisper_models.find_model(settings.whisper_model)
        self.model_id = f"faster-whisper:{self.source.name}:{settings.whisper_compute_type}"
        self.temperatures = parse_temperatures(settings.whisper_temperatures)
        self.allowed_languages = _language_set(settings.asr_languages)
        self._model_path: Path | None = self.source.folder
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_path(self) -> Path:
        """The CTranslate2 folder loaded (assembled into the model cache first if need be)."""
        if self._model_path is None:
            self._model_path = self.source.materialise(self.settings.resolved_model_cache_dir)
        return self._model_path

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                try:
                    from faster_whisper import WhisperModel
                except ImportError:
                    raise ModelError(
                        "speech recognition needs faster-whisper (pip install faster-whisper==1.2.1)"
                    ) from None
                device, index = whisper_device(self.settings.device)
                path = self.model_path
                try:
                    self._model = WhisperModel(
                        str(path),
                        device=device,
                        device_index=index,
                        compute_type=self.settings.whisper_compute_type,
                        cpu_threads=max(1, self.settings.cpu_threads),
                        num_workers=1,
                        local_files_only=True,
                    )
                except Exception as exc:
                    hint = " (an assembled cache folder: delete it to rebuild)" if self.source.folder is None else ""
                    raise ModelError(f"cannot load Whisper model from {path}{hint}: {exc}") from exc
                self._model.model = _ModelGate(self._model.model, self._choose_language)
        return self._model

    def prepare(self) -> None:
        """Assemble (once) and load the model now (a CLI warm-up) instead of on the first segment."""
        self._load()

    @property
    def multilingual(self) -> bool:
        return bool(getattr(self._load().model, "is_multilingual", False))

    def _choose_language(self, probs: list[tuple[str, float]]) -> str:
        """The language to decode a window in, from Whisper's ranked guesses for it.

        Detection on a few seconds of accented or noisy speech is often unsure; decoding in a
        wrong language gives a confident transcript of nothing that was said (or a
        translation), so an unsure guess, or one outside ``asr_languages``, falls back.
        """
        if self.allowed_languages:
            probs = [lp for lp in probs if lp[0] in self.allowed_languages]
        if probs:
            lang, p = max(probs, key=lambda lp: lp[1])
            if p >= self.settings.asr_language_min_prob:
                return lang
        return self.settings.asr_fallback_language or "en"

    @staticmethod
    def _decode(
        model: Any, x: np.ndarray, language: str, detect: bool, options: dict[str, Any],
        until: float | None = None,
    ) -> tuple[list[tuple[Any, str]], bool]:
        """(segment, language) pairs, and whether ``until`` (a ``time.perf_counter()`` value)
        stopped decoding before the audio's end. faster-whisper decodes lazily, window by
        window; through the model gate no window starts once ``until`` has passed, and the
        windows decoded are read whole (see :class:`_ModelGate`)."""
        gate = model.model if isinstance(model.model, _ModelGate) else None
        if gate is not None:
            gate.start(until)
        out: list[tuple[Any, str]] = []
        stopped = False
        try:
            segments, _info = model.transcribe(x, language=language, multilingual=detect, **options)
            for seg in segments:
                out.append((seg, gate.current_language if gate is not None and detect else language))
        except WindowRefused:
            stopped = True
        finally:
            if gate is not None:
                gate.start(None)
        return out, stopped

    def transcribe(
        self, audio: np.ndarray, sample_rate_hz: int, t_offset: float, **options: Any
    ) -> list[TranscriptPiece]:
        """Pieces in stream time: ``t_offset`` is where ``audio`` starts in the stream.
        ``options`` are :meth:`hear`'s keywords (hot words, prompt, beam size, …)."""
        return self.hear(audio, sample_rate_hz, t_offset, **options).pieces

    def hear(
        self,
        audio: np.ndarray,
        sample_rate_hz: int,
        t_offset: float,
        *,
        hotwords: str | None = None,
        initial_prompt: str | None = None,
        beam_size: int | None = None,
        temperatures: tuple[float, ...] | None = None,
        language: str | None = None,
        word_timestamps: bool | None = None,
        time_limit_s: float | None = None,
        keep_before_loop: bool = False,
    ) -> Hearing:
        """What ``audio`` holds: pieces in stream time (``t_offset`` is where it starts in the
        stream) and, when ``time_limit_s`` stopped decoding early, how far it got.

        ``hotwords`` (words expected in the audio) and ``initial_prompt`` (text as if said just
        before) bias decoding toward a vocabulary, e.g. a question's names and numbers when
        listening again; ``beam_size`` overrides ``whisper_beam_size`` for this call (1 =
        greedy) and ``temperatures`` the fallback ladder (``(0.0,)``: one pass, a bounded
        cost). ``language`` fixes the language for this call (no detection).
        ``word_timestamps`` overrides ``whisper_word_timestamps``: with word times, a segment
        ending before the audio does makes the decoder go on from its last word, and with a
        prompt the few silent tenths left can come out as a long loop ("I'm sorry, I'm sorry,
        …", dropped, but 3.3 s of a 4.4 s re-hearing). Without them the call behaves as
        configured. ``time_limit_s``: no further 30 s window starts once that many seconds have
        passed (the window under way is finished and read whole): a decoder that ends a window
        early and seeks back, or loops, can otherwise take three windows for 25 s of audio; the
        pieces then cover the audio only up to ``stopped_at_s``. ``keep_before_loop``: a
        segment that loops on a whole sentence to the end ("The soup tasting has moved to room
        405 The soup tasting has moved to room 405 …", Whisper primed by a question as its
        prompt) keeps the words up to the first repeat (see :func:`loop_start`) instead of being
        dropped; needs word times.
        """
        until = None if time_limit_s is None else time.perf_counter() + time_limit_s
        x = to_mono_float32(audio)
        if x.size == 0:
            return Hearing([])
        x = resample(x, sample_rate_hz)
        if not np.all(np.isfinite(x)):
            x = np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0)
        duration_s = x.size / WHISPER_SAMPLE_RATE_HZ
        if loudest_window_dbfs(x, WHISPER_SAMPLE_RATE_HZ) < SILENCE_DBFS:
            return Hearing([])
        model = self._load()
        s = self.settings
        options: dict[str, Any] = dict(
            max_new_tokens=window_tokens(duration_s),
            beam_size=max(1, int(beam_size if beam_size is not None else s.whisper_beam_size)),
            vad_filter=s.whisper_vad_filter,
            temperature=list(temperatures or self.temperatures),
            condition_on_previous_text=False,
            no_speech_threshold=NO_SPEECH_PROB_MAX,
            log_prob_threshold=AVG_LOGPROB_MIN,
            compression_ratio_threshold=COMPRESSION_RATIO_MAX,
            word_timestamps=s.whisper_word_timestamps if word_timestamps is None else word_timestamps,
            hotwords=(hotwords or "").strip() or None,
            initial_prompt=(initial_prompt if initial_prompt is not None else s.whisper_initial_prompt).strip() or None,
        )
        multilingual = isinstance(model.model, _ModelGate) and model.model.multilingual
        # English-only checkpoints (*.en) are told "en"; a multilingual one detects the language
        # of each window (through the gate) unless asr_language or the caller (re-listening
        # audio whose language was decided at ingest) fixes it.
        detect = multilingual and not s.asr_language and not language
        if not multilingual:
            language = "en"
        elif detect:
            # a given language skips faster-whisper's up-front detection (a second encoder
            # pass); the gate still decides per window
            language = s.asr_fallback_language or "en"
        else:
            language = language or s.asr_language
        try:
            # temperature fallback samples: the same seed each call makes the same audio give the
            # same transcript (a noisy clip's words varied from run to run)
            _seed_sampling()
            raw, stopped = self._decode(model, x, language, detect, options, until)
            if detect and any(lang != language for _, lang in raw) and (until is None or time.perf_counter() < until):
                # A switch away from the fallback language must be confirmed by the audio:
                # Whisper base sometimes names Latin or Welsh for a few seconds of accented,
                # noisy English and then writes gibberish in that language. Decode once more
                # in the fallback language and keep whichever the model found more likely.
                # Only clips detected as another language pay for this.
                fallback, fallback_stopped = self._decode(model, x, language, False, options, until)
                if _mean_logprob(fallback) >= _mean_logprob(raw):
                    raw, stopped = fallback, fallback_stopped
        except Exception as exc:
            raise ModelError(f"Whisper failed on a {duration_s:.1f} s clip: {exc}") from exc

        def stream_time(t: float, lo: float = 0.0) -> float:
            return t_offset + min(max(float(t), lo), duration_s)

        pieces: list[TranscriptPiece] = []
        for seg, spoken in raw:
            text = unglued(seg.text.strip())
            if not any(ch.isalnum() for ch in text):
                # "." or "…" alone (some CTranslate2 builds write it for a music bed): no words
                continue
            if seg.no_speech_prob > NO_SPEECH_PROB_MAX and seg.avg_logprob < AVG_LOGPROB_MIN:
                log.debug("dropping probable non-speech %r", text)
                continue
            word_probs = [float(w.probability) for w in (seg.words or ())]
            if seg.no_speech_prob > NO_SPEECH_PROB_MAX and word_probs and max(word_probs) < WORD_PROB_MIN:
                # the model thinks it is not speech and is sure of no word: a music bed's
                # "You" (no-speech 0.81, word 0.035, mean log-prob −0.95 just above the cut)
                log.debug("dropping unsure words over probable non-speech %r", text)
                continue
            start = min(max(float(seg.start), 0.0), duration_s)
            end = min(max(float(seg.end), start), duration_s)
            words = [
                (stream_time(w.start), stream_time(w.end, float(w.start)), unglued(w.word.strip()))
                for w in (seg.words or ())
                if w.word.strip()
            ]
            if seg.compression_ratio > COMPRESSION_RATIO_MAX or mostly_loop([w[2] for w in words] or text.split()):
                # even after temperature fallback: a decoder loop ("you you you ..."), not speech;
                # or, asked for, the words said before a whole sentence began to repeat
                cut = loop_start(words) if keep_before_loop and words else None
                if cut is None:
                    log.debug("dropping repetition loop %r", text)
                    continue
                words = words[:cut]
                text = unglued(" ".join(w[2] for w in words))
                end = min(max(words[-1][1] - t_offset, start), duration_s)
            pieces.append(
                TranscriptPiece(
                    t_start=t_offset + start, t_end=t_offset + end, text=text,
                    words=words, language=spoken,
                )
            )
        # how far the decoded windows reached, dropped segments included: they were heard
        stopped_at = stream_time(max((float(seg.end) for seg, _ in raw), default=0.0)) if stopped else None
        return Hearing(pieces, stopped_at)


def loop_mask(words: Sequence[str]) -> list[bool]:
    """For each word, whether it is a repeat inside a loop: a run of one word said four times
    in a row or more, or of a two- or three-word phrase said three times or more ("go to go to
    go to"), marks every repeat after the first. People say "no, no, no"; Whisper, lost in
    noise, says "I don't know" until its window ends. Punctuation and case are ignored."""
    norm = ["".join(ch for ch in w.lower() if ch.isalnum()) for w in words]
    looped = [False] * len(norm)
    for n, times in ((1, 4), (2, 3), (3, 3)):
        i = 0
        while i + n * times <= len(norm):
            gram = norm[i : i + n]
            reps = 1
            while all(gram) and norm[i + reps * n : i + (reps + 1) * n] == gram:
                reps += 1
            if reps >= times:
                for k in range(i + n, i + n * reps):
                    looped[k] = True
                i += n * reps
            else:
                i += 1
    return looped


def mostly_loop(words: Sequence[str]) -> bool:
    """Whether half or more of a segment's ``words`` are the repeats of a loop (:func:`loop_mask`).

    Whisper's own test for a loop, the text's gzip compression ratio, needs a long text: a loop
    of a few tokens ("I'm sorry I'm sorry I'm sorry I'm sorry I", a music bed's window whose
    tokens were capped by its audio, see :func:`window_tokens`) compresses no better than speech.
    Such a segment is a loop whatever its length."""
    return len(words) >= 4 and 2 * sum(loop_mask(words)) >= len(words)


def loop_start(words: Sequence[tuple[float, float, str]], min_words: int = LOOP_MIN_WORDS) -> int | None:
    """How many of a segment's timed ``words`` come before a loop, or None when they hold none:
    a loop is a run of at least ``min_words`` words said again at once and then over and over
    to the segment's end (the last repeat may be cut short), which is how Whisper runs on
    until its window ends, often stopping inside a word ("… room 405 The soup … room 40"). "A B
    C D E F D E F D E" → 6. Punctuation and case are ignored. The first saying is kept: only its
    repeats are the loop."""
    norm = ["".join(ch for ch in w[2].lower() if ch.isalnum()) for w in words]
    n = len(norm)
    for i in range(n):
        for p in range(min_words, (n - i) // 2 + 1):
            if norm[i : i + p] == norm[i + p : i + 2 * p] and all(
                norm[k] == norm[i + (k - i) % p] for k in range(i + 2 * p, n - 1)
            ) and (n - 1 < i + 2 * p or norm[i + (n - 1 - i) % p].startswith(norm[n - 1])):
                return i + p
    return None


def _seed_sampling(seed: int = 0) -> None:
    """Reset CTranslate2's sampling seed (used only by temperature fallback)."""
    try:
        import ctranslate2

        ctranslate2.set_random_seed(seed)
    except (ImportError, AttributeError):  # an old CTranslate2: sampling stays unseeded
        pass


_RELISTENERS: dict[tuple[Any, ...], WhisperRecognizer] = {}
_RELISTENERS_LOCK = threading.Lock()


def relistening_recognizer(
    settings: Settings, current: Any | None = None
) -> WhisperRecognizer:
    """The strongest configured recogniser, for listening again to stored audio at question time.

    ``relisten_whisper_model`` names it ("" → the strongest bundled model installed). When it is
    the model ``current`` already runs, ``current`` is returned (one model in memory); otherwise
    one recogniser per configuration is built and kept for the life of the process, so only the
    first question pays for loading it.
    """
    spec = settings.relisten_whisper_model or whisper_models.strongest_bundled_model()
    if isinstance(current, WhisperRecognizer) and current.settings.whisper_model == spec:
        return current
    chosen = settings.replace(whisper_model=spec)
    key = (spec, chosen.whisper_compute_type, chosen.device, chosen.cpu_threads,
           str(chosen.resolved_model_cache_dir))
    with _RELISTENERS_LOCK:
        rec = _RELISTENERS.get(key)
        if rec is None or rec.settings != chosen:
            rec = WhisperRecognizer(chosen)
            _RELISTENERS[key] = rec
        return rec
