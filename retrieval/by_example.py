"""Search by example: the moments whose key frames look like a picture.

The example is either a picture someone sends (JPEG, PNG or WebP, at most
:data:`MAX_IMAGE_BYTES`) or a stored segment's key frame (``like_segment_id``). A picture is
decoded with Pillow (formats limited to those three, the pixel count checked from the header
before anything is decoded: no decompression bomb) and encoded by the describer's frame
feature extractor, the same network that made the stored ``frame_features`` at ingest
(EfficientNet-Lite0's pooled features, also under ImageBind, which embeds key frames into E_i
but not into the frame collection); a stored segment's middle key frame is used as stored, with
no decoding. :meth:`ExampleSearch.search` asks the store's frame collection
(``search_frames``), keeps each memory's best frame and returns one :class:`Moment` per memory,
the memory's span, scored by that frame's cosine similarity, with ``why`` naming the frame:
``looks like the example (frame at 12.3 s)``.

Words and picture together (:func:`fuse_moments`): the text search's moments and the picture's
are fused by reciprocal rank fusion (retrieval/fusion.py), so a moment both find ranks first
and either alone still counts; the fused moment keeps the text hit's span and quotes both.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from episodic.core.errors import InputError
from episodic.core.interfaces import QueryStore
from episodic.core.query import Moment, Scope
from episodic.core.records import ShortTermMemory, SnippetRef
from episodic.memory.milvus_filters import check_id
from episodic.retrieval.fusion import fuse

MAX_IMAGE_BYTES = 8 * 1024 * 1024  # the proto's limit on SearchRequest.image
MAX_IMAGE_PIXELS = 50_000_000  # larger pictures are refused from their header (8K is 33 Mpx)
IMAGE_FORMATS = ("JPEG", "PNG", "WEBP")
FRAMES_PER_MEMORY = 8  # frame hits asked for per moment wanted (memories hold several key frames)
MIN_FRAME_HITS = 64
MAX_FRAME_HITS = 2048
FUSION_K = 10.0


@dataclass(frozen=True)
class Example:
    """What a search by example looks for: a frame feature vector, and the segment it came from
    when it is a stored one ("" for a picture sent)."""

    vector: np.ndarray
    segment_id: str = ""
    t: float | None = None  # the stored key frame's time


def decode_image(data: bytes, max_width: int = 640) -> np.ndarray:
    """An uploaded picture as (H, W, 3) uint8 RGB, at most ``max_width`` wide (as the key
    frames ingest analysed). InputError for anything that is not a readable JPEG, PNG or WebP
    of sensible size."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputError(f"the example image must be bytes, got {type(data).__name__}")
    size = len(data)
    if size == 0:
        raise InputError("the example image is empty")
    if size > MAX_IMAGE_BYTES:
        raise InputError(
            f"the example image is {size / 2**20:.1f} MiB; at most {MAX_IMAGE_BYTES // 2**20} MiB are allowed"
        )
    unreadable = InputError("the example is not a readable image: send a JPEG, PNG or WebP picture")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(bytes(data)), formats=IMAGE_FORMATS)
            w, h = img.size
            if w < 1 or h < 1 or w * h > MAX_IMAGE_PIXELS:
                raise InputError(
                    f"the example image is {w}×{h} pixels; at most {MAX_IMAGE_PIXELS // 1_000_000} megapixels"
                )
            img.draft("RGB", (max_width, max_width))  # JPEG: decode at a reduced scale already
            img = ImageOps.exif_transpose(img)  # a phone's portrait photo, upright
            img = img.convert("RGB")
            if img.width > max_width:
                img = img.resize((max_width, max(1, round(img.height * max_width / img.width))),
                                 Image.Resampling.BILINEAR, reducing_gap=2.0)
            return np.asarray(img, dtype=np.uint8)
    except InputError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(
            f"the example image has too many pixels; at most {MAX_IMAGE_PIXELS // 1_000_000} megapixels"
        ) from None
    except UnidentifiedImageError:
        raise unreadable from None
    except Exception:  # noqa: BLE001 - whatever a malformed file makes a decoder raise
        raise unreadable from None


def image_example(data: bytes, features: Callable[[Sequence[np.ndarray]], np.ndarray], max_width: int = 640) -> Example:
    """The example an uploaded picture stands for, encoded by ``features`` (the describer's
    frame feature extractor)."""
    rgb = decode_image(data, max_width)
    vec = np.asarray(features([rgb]), dtype=np.float32).reshape(1, -1)[0]
    return Example(vector=vec)


def segment_example(store: QueryStore, ident: str) -> Example:
    """The example a stored segment stands for (a memory id, or an event id ending in ".e"):
    its middle key frame's stored features, used as they are. InputError when there is no such
    segment or it has no key frame (audio only)."""
    mid = ident = check_id(ident, "segment id")
    if ident.endswith(".e"):
        event = store.get_event(ident)
        if event is None:
            raise InputError(f"no segment {ident!r}")
        mid = event.memory_id
    memory = store.get_memory(mid, with_vectors=True)
    if memory is None:
        raise InputError(f"no segment {ident!r}")
    if not memory.frame_features:
        raise InputError(f"segment {ident!r} has no key frames (audio only): nothing to search by")
    t, vec = memory.frame_features[len(memory.frame_features) // 2]
    return Example(vector=np.asarray(vec, dtype=np.float32), segment_id=memory.id, t=float(t))


def _snippet_at(memory: ShortTermMemory, t: float) -> str:
    refs: list[SnippetRef] = sorted(memory.snippets, key=lambda r: r.t_start)
    for r in refs:
        if r.t_start <= t <= r.t_end:
            return r.uri
    return refs[0].uri if refs else ""


class ExampleSearch:
    """Moments whose key frames look like an example (see the module docstring)."""

    def __init__(self, store: QueryStore) -> None:
        self.store = store

    def search(self, example: Example, scope: Scope, top_k: int) -> list[Moment]:
        sids = None if scope.stream_ids is None else list(scope.stream_ids)
        if sids == []:
            return []
        wanted = min(MAX_FRAME_HITS, max(MIN_FRAME_HITS, FRAMES_PER_MEMORY * top_k))
        hits = self.store.search_frames(example.vector, wanted, sids, scope.t_min, scope.t_max)
        best: dict[str, tuple[float, float]] = {}  # memory id → (cosine, frame time), best first
        for row, score in hits:
            mid = str(row["memory_id"])
            if mid not in best:
                best[mid] = (float(score), float(row["t"]))
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:top_k]
        memories = self.store.get_memories([mid for mid, _ in ranked], with_vectors=False)
        out: list[Moment] = []
        for mid, (score, t) in ranked:
            m = memories.get(mid)
            if m is None:  # forgotten between the two reads
                continue
            out.append(Moment(
                stream_id=m.stream_id,
                t_start=round(m.t_start, 3),
                t_end=round(m.t_end, 3),
                score=round(score, 4),
                why=f"looks like the example (frame at {t:.1f} s)",
                segment_id=m.id,
                snippet_uri=_snippet_at(m, t),
            ))
        return out


def _key(m: Moment) -> str:
    return m.segment_id or f"{m.stream_id}@{m.t_start:.3f}"


def fuse_moments(by_words: list[Moment], by_picture: list[Moment], top_k: int) -> list[Moment]:
    """Words and picture together: one ranking by reciprocal rank fusion (score = the fused
    score); a moment both found keeps the text hit's span and says why for both."""
    words = {_key(m): m for m in by_words}
    picture = {_key(m): m for m in by_picture}
    fused = fuse([[(k, m.score) for k, m in words.items()], [(k, m.score) for k, m in picture.items()]],
                 "rrf", FUSION_K)
    out: list[Moment] = []
    for key, score in fused[:top_k]:
        w, p = words.get(key), picture.get(key)
        base = w or p
        assert base is not None
        why = f"{w.why}; {p.why}" if w is not None and p is not None else base.why
        out.append(Moment(
            stream_id=base.stream_id, t_start=base.t_start, t_end=base.t_end, score=round(score, 4),
            why=why, segment_id=base.segment_id, snippet_uri=base.snippet_uri,
        ))
    return out
