"""ImageBind (huge, 1024-d): the production cross-modal embedder of the design.

ImageBind puts text, images and audio into one space, so key frames and audio windows are
embedded directly rather than through their text descriptions. Its weights
(``imagebind_huge.pth``, 4.5 GB) are not on any package registry, so this backend loads them
from ``settings.imagebind_weights_path``; the model code comes from the
``imagebind-unofficial`` package (``pip install episodic[imagebind]``).

Preprocessing is reimplemented here with plain torch ops, as pure functions, because the
package's own ``imagebind.data`` reads files and needs torchvision, torchaudio and
pytorchvideo at import time; these functions take the decoded frames and PCM the pipeline
already holds. They follow ``imagebind/data.py`` step by step:

* vision: shorter side → 224 (bicubic, antialiased like PIL), centre crop 224×224, scale to
  [0, 1], CLIP mean/std;
* audio: 16 kHz mono; three 2 s clips spread evenly over the input (pytorchvideo's
  ``ConstantClipsPerVideoSampler``), each → DC removed → Kaldi fbank (128 mel bins, 25 ms
  Hann windows every 10 ms, pre-emphasis 0.97, power spectrum, log) → padded or cut to 204
  frames → ``(x + 4.268) / 9.138``. ``torchaudio.compliance.kaldi.fbank`` is used when
  torchaudio imports; otherwise the same computation written out below.

What is and is not verified: the preprocessing functions are unit-tested for shapes, dtypes
and normalisation, and the fbank against values from torchaudio's Kaldi fbank (and against
torchaudio itself where it imports). The embedder class was run once, outside the test suite,
against the real ``imagebind-unofficial`` 0.1.1 model code with a *small randomly initialised*
``ImageBindModel`` saved and loaded through ``imagebind_weights_path`` (text, image and audio
paths, unit-norm 1024-d outputs). It has never been run with the real 4.5 GB weights (not
obtainable here), so embedding *quality* is unverified.

Installing: ``imagebind`` 0.1.1 imports torchvision, torchaudio, pytorchvideo and
``pkg_resources`` as soon as any of its modules is imported; ``pkg_resources`` left setuptools
in 82.0, so that environment needs ``setuptools<82``.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from episodic.config import ModelSettings
from episodic.core.errors import ModelError

IMAGEBIND_DIM = 1024
INSTALL_HINT = (
    "ImageBind backend needs `pip install episodic[imagebind]` and "
    "settings.imagebind_weights_path pointing at imagebind_huge.pth"
)

# vision (imagebind/data.py: load_and_transform_vision_data)
VISION_SIZE = 224
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)

# audio (imagebind/data.py: load_and_transform_audio_data, waveform2melspec)
AUDIO_SAMPLE_RATE_HZ = 16000
AUDIO_NUM_MEL_BINS = 128
AUDIO_TARGET_LENGTH = 204
AUDIO_CLIP_DURATION_S = 2.0
AUDIO_CLIPS_PER_INPUT = 3
AUDIO_MEAN = -4.268
AUDIO_STD = 9.138
FRAME_LENGTH_MS = 25.0
FRAME_SHIFT_MS = 10.0
PREEMPHASIS = 0.97
LOW_FREQ_HZ = 20.0
_EPS = float(torch.finfo(torch.float32).eps)  # Kaldi's log floor (torchaudio uses the same)


# -- vision preprocessing -------------------------------------------------------------------


def imagebind_vision_input(
    frames_rgb: Sequence[np.ndarray], size: int = VISION_SIZE
) -> torch.Tensor:
    """(n, 3, size, size) float32 ready for ImageBind's vision trunk.

    Frames are RGB uint8 (H, W, 3) of any size. Matches torchvision's
    ``Resize(224, BICUBIC) → CenterCrop(224) → ToTensor → Normalize(CLIP)`` on PIL images:
    the long side becomes ``int(224 · long / short)`` and the crop offsets are rounded halves.
    """
    mean = torch.tensor(CLIP_MEAN, dtype=torch.float32).view(3, 1, 1)
    std = torch.tensor(CLIP_STD, dtype=torch.float32).view(3, 1, 1)
    out = torch.empty((len(frames_rgb), 3, size, size), dtype=torch.float32)
    for i, frame in enumerate(frames_rgb):
        a = np.asarray(frame)
        if a.ndim != 3 or a.shape[2] != 3:
            raise ValueError(f"expected an RGB frame (H, W, 3), got shape {a.shape}")
        h, w = a.shape[:2]
        x = torch.from_numpy(np.ascontiguousarray(a)).permute(2, 0, 1).unsqueeze(0).float()
        if h <= w:
            new_h, new_w = size, int(size * w / h)
        else:
            new_h, new_w = int(size * h / w), size
        if (new_h, new_w) != (h, w):
            x = F.interpolate(
                x, size=(new_h, new_w), mode="bicubic", align_corners=False, antialias=True
            )
            x = x.clamp_(0.0, 255.0)  # PIL clamps bicubic overshoot into the 8-bit range
        top = int(round((new_h - size) / 2.0))
        left = int(round((new_w - size) / 2.0))
        x = x[0, :, top : top + size, left : left + size] / 255.0
        out[i] = (x - mean) / std
    return out


# -- audio preprocessing --------------------------------------------------------------------


def _mel(freq: torch.Tensor | float) -> torch.Tensor:
    return 1127.0 * torch.log(1.0 + torch.as_tensor(freq, dtype=torch.float64) / 700.0)


@lru_cache(maxsize=8)
def kaldi_mel_banks(
    num_bins: int,
    padded_window_size: int,
    sample_rate_hz: float,
    low_freq_hz: float = LOW_FREQ_HZ,
    high_freq_hz: float = 0.0,
) -> torch.Tensor:
    """(num_bins, padded_window_size // 2 + 1) triangular mel filters, as Kaldi builds them
    (``high_freq_hz <= 0`` is an offset from Nyquist; the last FFT bin gets weight 0)."""
    num_fft_bins = padded_window_size // 2
    nyquist = 0.5 * sample_rate_hz
    high = high_freq_hz + nyquist if high_freq_hz <= 0.0 else high_freq_hz
    fft_bin_width = sample_rate_hz / padded_window_size
    mel_low, mel_high = _mel(low_freq_hz), _mel(high)
    delta = (mel_high - mel_low) / (num_bins + 1)
    b = torch.arange(num_bins, dtype=torch.float64).unsqueeze(1)
    left = mel_low + b * delta
    center = mel_low + (b + 1.0) * delta
    right = mel_low + (b + 2.0) * delta
    mel = _mel(fft_bin_width * torch.arange(num_fft_bins, dtype=torch.float64)).unsqueeze(0)
    up = (mel - left) / (center - left)
    down = (right - mel) / (right - center)
    banks = torch.clamp(torch.minimum(up, down), min=0.0)
    return F.pad(banks, (0, 1)).to(torch.float32)


def kaldi_fbank(
    waveform: torch.Tensor,
    sample_rate_hz: int = AUDIO_SAMPLE_RATE_HZ,
    num_mel_bins: int = AUDIO_NUM_MEL_BINS,
) -> torch.Tensor:
    """(num_frames, num_mel_bins) log mel energies of a 1-D waveform.

    Same result as ``torchaudio.compliance.kaldi.fbank(w[None], htk_compat=True,
    sample_frequency=sr, use_energy=False, window_type="hanning", num_mel_bins=n,
    dither=0.0, frame_length=25, frame_shift=10)``, which is what ImageBind calls.
    """
    x = waveform.reshape(-1).to(torch.float32)
    window_size = int(sample_rate_hz * FRAME_LENGTH_MS / 1000.0)
    window_shift = int(sample_rate_hz * FRAME_SHIFT_MS / 1000.0)
    padded = 1 << (window_size - 1).bit_length()  # round_to_power_of_two
    if x.numel() < window_size:  # snip_edges: no complete window, no frame
        return torch.zeros((0, num_mel_bins), dtype=torch.float32)
    frames = x.unfold(0, window_size, window_shift)  # (F, window_size)
    frames = frames - frames.mean(dim=1, keepdim=True)  # remove_dc_offset
    previous = torch.cat([frames[:, :1], frames[:, :-1]], dim=1)  # replicate-padded shift
    frames = frames - PREEMPHASIS * previous
    frames = frames * torch.hann_window(window_size, periodic=False, dtype=torch.float32)
    frames = F.pad(frames, (0, padded - window_size))
    power = torch.fft.rfft(frames).abs().pow(2.0)  # (F, padded // 2 + 1)
    banks = kaldi_mel_banks(num_mel_bins, padded, float(sample_rate_hz))
    energies = power @ banks.T
    return torch.clamp(energies, min=_EPS).log()


def _fbank(waveform: torch.Tensor, sample_rate_hz: int, num_mel_bins: int) -> torch.Tensor:
    try:
        import torchaudio.compliance.kaldi as ta_kaldi
    except Exception:  # absent, or present but built for another torch: use our own
        return kaldi_fbank(waveform, sample_rate_hz, num_mel_bins)
    if waveform.numel() < int(sample_rate_hz * FRAME_LENGTH_MS / 1000.0):
        return torch.zeros((0, num_mel_bins), dtype=torch.float32)
    return ta_kaldi.fbank(
        waveform.reshape(1, -1),
        htk_compat=True,
        sample_frequency=sample_rate_hz,
        use_energy=False,
        window_type="hanning",
        num_mel_bins=num_mel_bins,
        dither=0.0,
        frame_length=FRAME_LENGTH_MS,
        frame_shift=FRAME_SHIFT_MS,
    )


def audio_clip_bounds(
    num_samples: int,
    sample_rate_hz: int = AUDIO_SAMPLE_RATE_HZ,
    clip_duration_s: float = AUDIO_CLIP_DURATION_S,
    clips_per_input: int = AUDIO_CLIPS_PER_INPUT,
) -> list[tuple[int, int]]:
    """Sample ranges of the clips pytorchvideo's ConstantClipsPerVideoSampler picks: evenly
    spaced starts over ``duration − clip_duration`` (all at 0 when the input is short)."""
    duration = num_samples / sample_rate_hz
    max_start = max(duration - clip_duration_s, 0.0)
    step = max_start / max(clips_per_input - 1, 1)
    bounds = []
    for i in range(clips_per_input):
        start = step * i
        bounds.append(
            (int(start * sample_rate_hz), int((start + clip_duration_s) * sample_rate_hz))
        )
    return bounds


def waveform_to_melspec(
    clip: torch.Tensor,
    sample_rate_hz: int = AUDIO_SAMPLE_RATE_HZ,
    num_mel_bins: int = AUDIO_NUM_MEL_BINS,
    target_length: int = AUDIO_TARGET_LENGTH,
) -> torch.Tensor:
    """(1, num_mel_bins, target_length) un-normalised log-mel image of one clip."""
    w = clip.reshape(-1).to(torch.float32)
    w = w - w.mean() if w.numel() else w
    fbank = _fbank(w, sample_rate_hz, num_mel_bins).transpose(0, 1)  # (bins, frames)
    n_frames = fbank.shape[1]
    if n_frames < target_length:
        fbank = F.pad(fbank, (0, target_length - n_frames), value=0.0)
    elif n_frames > target_length:
        fbank = fbank[:, :target_length]
    return fbank.unsqueeze(0)


def imagebind_audio_input(
    clips: Sequence[np.ndarray], sample_rate_hz: int, clips_per_input: int = AUDIO_CLIPS_PER_INPUT
) -> torch.Tensor:
    """(n, clips_per_input, 1, 128, 204) float32 normalised log-mel clips.

    Each input is mono PCM (float in [-1, 1] or integer); it is resampled to 16 kHz first.
    """
    from episodic.memory.speech import resample, to_mono_float32

    out = torch.empty(
        (len(clips), clips_per_input, 1, AUDIO_NUM_MEL_BINS, AUDIO_TARGET_LENGTH),
        dtype=torch.float32,
    )
    for i, pcm in enumerate(clips):
        wave = resample(to_mono_float32(pcm), sample_rate_hz, AUDIO_SAMPLE_RATE_HZ)
        w = torch.from_numpy(np.ascontiguousarray(wave))
        for j, (a, b) in enumerate(audio_clip_bounds(w.numel(), clips_per_input=clips_per_input)):
            out[i, j] = waveform_to_melspec(w[a:b])
    return (out - AUDIO_MEAN) / AUDIO_STD


# -- the embedder ----------------------------------------------------------------------------


def _l2(x: torch.Tensor) -> np.ndarray:
    return F.normalize(x.float(), dim=-1).cpu().numpy().astype(np.float32)


class ImageBindEmbedder:
    """ImageBind-huge text / image / audio embeddings (1024-d, L2-normalised rows).

    Implements ``CrossModalEmbedder``. Construction checks that the package is installed and
    the weights file exists (so a misconfiguration fails before a stream is read); the 4.5 GB
    model is loaded on first use.
    """

    model_id = "imagebind_huge"
    dim = IMAGEBIND_DIM

    def __init__(self, settings: ModelSettings, batch_size: int = 16) -> None:
        self.settings = settings
        self.batch_size = max(1, batch_size)
        if importlib.util.find_spec("imagebind") is None:
            raise ModelError(INSTALL_HINT + " (the imagebind package is not installed)")
        path = settings.imagebind_weights_path.strip()
        if not path:
            raise ModelError(INSTALL_HINT + " (imagebind_weights_path is empty)")
        self.weights_path = Path(path).expanduser()
        if not self.weights_path.is_file():
            raise ModelError(INSTALL_HINT + f" (no file at {self.weights_path})")
        self.device = settings.device or "cpu"
        self._model: Any = None
        self._tokenizer: Any = None
        self._modality: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                try:
                    from imagebind.models import imagebind_model
                    from imagebind.models.imagebind_model import ModalityType
                    from imagebind.models.multimodal_preprocessors import SimpleTokenizer
                except Exception as exc:  # ImportError, or torchvision/torch mismatches
                    extra = (
                        "; imagebind needs pkg_resources: pip install 'setuptools<82'"
                        if "pkg_resources" in str(exc)
                        else ""
                    )
                    raise ModelError(
                        f"{INSTALL_HINT} (importing imagebind failed: {exc}{extra})"
                    ) from exc
                if self.device.startswith("cuda") and not torch.cuda.is_available():
                    raise ModelError(f"settings.device is {self.device!r} but CUDA is unavailable")
                if self.device == "cpu":
                    torch.set_num_threads(max(1, self.settings.cpu_threads))
                spec = importlib.util.find_spec("imagebind")
                assert spec is not None and spec.submodule_search_locations
                bpe = (
                    Path(next(iter(spec.submodule_search_locations)))
                    / "bpe"
                    / "bpe_simple_vocab_16e6.txt.gz"
                )
                if not bpe.is_file():
                    raise ModelError(f"ImageBind's BPE vocabulary is missing: {bpe}")
                try:
                    model = imagebind_model.imagebind_huge(pretrained=False)
                    state = torch.load(
                        str(self.weights_path), map_location="cpu", weights_only=True
                    )
                    model.load_state_dict(state, strict=True)
                except Exception as exc:
                    raise ModelError(
                        f"cannot load ImageBind weights from {self.weights_path}: {exc}"
                    ) from exc
                model.eval().to(self.device)
                self._tokenizer = SimpleTokenizer(bpe_path=str(bpe))
                self._modality = ModalityType
                self._model = model
        return self._model

    def prepare(self) -> None:
        """Load the model now (a CLI warm-up) instead of on the first segment."""
        self._load()

    def _run(self, key: str, batch: torch.Tensor) -> np.ndarray:
        model = self._load()
        parts = []
        with torch.inference_mode():
            for start in range(0, batch.shape[0], self.batch_size):
                chunk = batch[start : start + self.batch_size].to(self.device)
                parts.append(_l2(model({key: chunk})[key]))
        return np.concatenate(parts, axis=0)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._load()
        return self._run(self._modality.TEXT, self._tokenize(texts))

    def _tokenize(self, texts: Sequence[str]) -> torch.Tensor:
        """(n, 77) CLIP BPE ids. Upstream truncation can cut off the end-of-text token, which
        the text head locates by argmax; a long text keeps it here as its last token."""
        eot = int(self._tokenizer.encoder["<|endoftext|>"])
        rows = []
        for t in texts:
            ids = self._tokenizer(str(t)).reshape(-1).long()
            if int(ids[-1]) not in (0, eot):
                ids[-1] = eot
            rows.append(ids)
        return torch.stack(rows)

    def embed_images(self, frames_rgb: Sequence[np.ndarray]) -> np.ndarray:
        if not frames_rgb:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._load()
        return self._run(self._modality.VISION, imagebind_vision_input(frames_rgb))

    def embed_audio(self, clips: Sequence[np.ndarray], sample_rate_hz: int) -> np.ndarray:
        """One vector per input clip (the mean of its three 2 s sub-clips, as ImageBind does).

        When every input is at most 2 s long its three sub-clips are identical, so one is
        computed instead of three: the average is the same and it costs a third.
        """
        if not clips:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._load()
        from episodic.memory.speech import to_mono_float32

        mono = [to_mono_float32(c) for c in clips]
        longest_s = max(m.size for m in mono) / float(sample_rate_hz)
        per_input = 1 if longest_s <= AUDIO_CLIP_DURATION_S else AUDIO_CLIPS_PER_INPUT
        return self._run(
            self._modality.AUDIO, imagebind_audio_input(mono, sample_rate_hz, per_input)
        )


def imagebind_available() -> bool:
    """Whether the optional package is importable (cheap: nothing is imported)."""
    return importlib.util.find_spec("imagebind") is not None


__all__ = [
    "IMAGEBIND_DIM",
    "INSTALL_HINT",
    "ImageBindEmbedder",
    "audio_clip_bounds",
    "imagebind_audio_input",
    "imagebind_available",
    "imagebind_vision_input",
    "kaldi_fbank",
    "kaldi_mel_banks",
    "waveform_to_melspec",
]
