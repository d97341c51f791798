"""EfficientNet-Lite0 on ONNX Runtime must see what the PyTorch network sees: the same class
probabilities, pooled features and so the same labels and frame features (search by example
compares pictures encoded by either). The graph is exported once into the model cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from skimage import data

from episodic.config import Settings, validate
from episodic.core.errors import ConfigError, ModelError
from episodic.memory.vision import OfflineVisualDescriber


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    """Known photos (a cat, a coffee cup, a rocket) and noise, at an analysis frame's size."""
    from PIL import Image

    photos = [data.chelsea(), data.coffee(), data.rocket()]
    out = [np.asarray(Image.fromarray(p).resize((640, 360))) for p in photos]
    out.append(np.random.default_rng(0).integers(0, 255, (360, 640, 3), dtype=np.uint8))
    return out


def _describer(cache: Path, engine: str) -> OfflineVisualDescriber:
    return OfflineVisualDescriber(Settings(model_cache_dir=str(cache), visual_classifier_engine=engine))


def test_onnx_and_torch_see_the_same(cache_dir: Path, frames: list[np.ndarray]) -> None:
    onnx = _describer(cache_dir, "onnx")
    torch = _describer(cache_dir, "torch")
    pa, fa = onnx._forward(frames)
    pb, fb = torch._forward(frames)
    assert (onnx.engine, torch.engine) == ("onnx", "torch")
    assert pa.shape == pb.shape == (len(frames), 1000) and fa.shape == fb.shape == (len(frames), 1280)
    np.testing.assert_allclose(pa, pb, atol=1e-5)
    np.testing.assert_allclose(fa, fb, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(onnx.frame_features(frames), torch.frame_features(frames), atol=1e-5)
    # what is stored: the same observations (labels, guesses, crops' guesses) from both
    marks = [True] * len(frames)
    times = [float(i) for i in range(len(frames))]
    seen_a, feats_a = onnx.describe(frames, times, marks)
    seen_b, feats_b = torch.describe(frames, times, marks)
    assert seen_a == seen_b
    assert "cat" in str(seen_a[0].labels), seen_a[0]  # the photo of a cat is named
    np.testing.assert_allclose(feats_a, feats_b, atol=1e-5)


def test_the_graph_is_exported_once_and_reused(cache_dir: Path, frames: list[np.ndarray]) -> None:
    first = _describer(cache_dir, "onnx")
    first._forward(frames[:1])
    graphs = list((cache_dir / "efficientnet-onnx").glob("*.onnx"))
    assert len(graphs) == 1
    stamp = graphs[0].stat().st_mtime_ns
    second = _describer(cache_dir, "auto")
    second._forward(frames[:1])
    assert second.engine == "onnx" and graphs[0].stat().st_mtime_ns == stamp
    assert not list((cache_dir / "efficientnet-onnx").glob(".export-*"))  # no temporary left over


def test_a_corrupt_graph_is_named_and_auto_falls_back(tmp_path: Path, frames: list[np.ndarray]) -> None:
    _describer(tmp_path, "onnx")._forward(frames[:1])
    (graph,) = (tmp_path / "efficientnet-onnx").glob("*.onnx")
    graph.write_bytes(b"not an onnx graph")
    with pytest.raises(ModelError, match=r"delete it to re-export") as exc:
        _describer(tmp_path, "onnx")._forward(frames[:1])
    assert str(graph) in str(exc.value)
    fallback = _describer(tmp_path, "auto")
    probs, _ = fallback._forward(frames[:1])
    assert fallback.engine == "torch" and probs.shape == (1, 1000)


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ConfigError, match="visual_classifier_engine must be auto, onnx or torch"):
        validate(Settings(visual_classifier_engine="tensorflow"))
