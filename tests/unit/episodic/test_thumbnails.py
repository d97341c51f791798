"""Thumbnails at ingest (issue 18) and search by example over the in-memory store, in seconds:
a real ingest of small generated recordings (real decoding, segmentation and snippet files)
with fake models (a hashing embedder, a describer whose frame features are a coarse colour
grid, no speech recogniser), so what is checked is the bookkeeping: a JPEG per memory with
video, none for audio only, one per merged memory with no orphan, gone with forgetting (a
range, the whole stream, the worker's guard), persisted by both stores' row mappings; and the
query side: decoding of uploaded pictures, like_segment_id, words and picture fused."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from episodic import samples
from episodic.components import Components
from episodic.config import Settings
from episodic.core.errors import InputError
from episodic.core.query import Moment, Scope
from episodic.core.records import FrameObservation, normalise
from episodic.memory.in_memory_store import InMemoryStore
from episodic.memory.thumbnails import make_thumbnail
from episodic.retrieval.by_example import MAX_IMAGE_BYTES, decode_image, fuse_moments
from episodic.services.forget_books import ForgetBooks
from episodic.services.forget_guard import GuardedStore
from episodic.services.forgetting import Forgetter
from episodic.services.qa import MemoryQA
from tests.fakes import HashEmbedder, ScriptedLLM

GRID = 4  # the fake features: a 4×4 colour grid


class GridDescriber:
    """Frame features from a coarse colour grid (what a picture looks like, roughly); every
    key frame described as "a scene", so consolidation tells shots apart by features alone."""

    model_id = "colour-grid-test"
    feature_dim = GRID * GRID * 3

    def frame_features(self, frames_rgb: Any) -> np.ndarray:
        out = []
        for f in frames_rgb:
            small = Image.fromarray(np.asarray(f, dtype=np.uint8)).resize((GRID, GRID), Image.Resampling.BOX)
            out.append(normalise(np.asarray(small, dtype=np.float32).reshape(-1) - 100.0))
        return np.stack(out) if out else np.zeros((0, self.feature_dim), np.float32)

    def describe(self, frames_rgb: Any, times: Any, ocr_mask: Any) -> tuple[list[FrameObservation], np.ndarray]:
        return [FrameObservation(t=float(t), description="a scene") for t in times], self.frame_features(frames_rgb)


class NoSpeech:
    model_id = "no-speech-test"

    def transcribe(self, audio: Any, sample_rate_hz: int, t_offset: float) -> list[Any]:
        return []


def _components(tmp: Path, **settings_: Any) -> Components:
    settings = Settings(data_dir=tmp / "data", store="memory", segment_speech_bend_s=0.0, relisten_max_memories=0,
                        **settings_)
    c = Components(settings)
    c.embedder = HashEmbedder()  # cached properties: the fakes stand in for the models
    c.asr = NoSpeech()
    c.describer = GridDescriber()
    c.llm = ScriptedLLM()
    return c


RED, BLUE, GREEN = (220, 40, 40), (40, 60, 220), (40, 200, 60)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Components, Path]:
    """Stream "cam": a red, a blue and a green shot (6 s each, three memories), then one grey
    still shot of 16 s that segmentation splits in two and consolidation merges back."""
    from episodic.pipeline import ingest_file

    tmp = tmp_path_factory.mktemp("thumbs")
    rec = tmp / "cam.mp4"
    samples.make_recording(rec, [samples.Scene(6, seed=1, tint=RED), samples.Scene(6, seed=2, tint=BLUE),
                                 samples.Scene(6, seed=3, tint=GREEN),
                                 samples.Scene(16, seed=4, tint=(128, 128, 128), static=True)],
                           width=320, height=180, fps=10)
    c = _components(tmp)
    ingest_file(rec, "cam", c)
    return c, rec


def _jpgs(c: Components, sid: str) -> set[str]:
    d = Path(c.settings.resolved_snippet_dir) / sid
    return {p.name for p in d.glob("*.jpg")} if d.is_dir() else set()


def _named(uri: str) -> str:
    return uri.rsplit("/", 1)[-1]


def test_make_thumbnail_is_a_small_jpeg() -> None:
    frame = np.zeros((360, 640, 3), np.uint8)
    frame[:, :320] = RED
    jpeg = make_thumbnail(frame, 320, 80)
    img = Image.open(io.BytesIO(jpeg))
    assert img.format == "JPEG" and img.size == (320, 180)
    assert img.getpixel((40, 90))[0] > 180  # the left half is still red
    assert Image.open(io.BytesIO(make_thumbnail(frame[:100, :100], 320))).size == (100, 100)  # never upscaled


def test_every_memory_with_video_has_one_thumbnail_and_no_file_is_orphaned(ingested) -> None:
    c, _ = ingested
    memories = c.store.list_memories("cam")
    assert len(memories) >= 4
    assert all(m.thumbnail_uri.endswith(".s.jpg") for m in memories)
    # the merged still shot kept one thumbnail (its first segment's); the other was deleted
    merged = [m for m in memories if m.metadata.get("merged_segments")]
    assert merged and all(_named(m.thumbnail_uri) == _named(m.snippets[0].uri).replace(".mp4", ".jpg") for m in merged)
    assert _jpgs(c, "cam") == {_named(m.thumbnail_uri) for m in memories}
    for m in memories:
        with c.snippets.open(m.thumbnail_uri) as f:
            img = Image.open(f)
            assert img.format == "JPEG" and max(img.size) == 320
    # the thumbnail shows the memory's own shot: the red one is red
    with c.snippets.open(memories[0].thumbnail_uri) as f:
        r, g, b = np.asarray(Image.open(f).convert("RGB"), np.float32).reshape(-1, 3).mean(axis=0)
    assert r > g + 40 and r > b + 40
    assert memories[0].file_uris == [memories[0].snippets[0].uri, memories[0].thumbnail_uri]


def test_audio_only_segments_get_no_thumbnail(tmp_path: Path) -> None:
    from episodic.pipeline import ingest_file

    rec = tmp_path / "radio.m4a"
    samples.make_recording(rec, [samples.Scene(8, seed=1)], [samples.Speech(1.0, "Hello there.")], video=False)
    c = _components(tmp_path)
    ingest_file(rec, "radio", c)
    memories = c.store.list_memories("radio")
    assert memories and all(m.thumbnail_uri == "" and m.file_uris == [s.uri for s in m.snippets] for m in memories)
    assert _jpgs(c, "radio") == set()


def test_thumbnails_off(tmp_path: Path) -> None:
    from episodic.pipeline import ingest_file

    rec = tmp_path / "cam.mp4"
    samples.make_recording(rec, [samples.Scene(6, seed=1)], width=320, height=180, fps=10)
    c = _components(tmp_path, thumbnail_max_side=0)
    ingest_file(rec, "cam", c)
    assert all(m.thumbnail_uri == "" for m in c.store.list_memories("cam")) and _jpgs(c, "cam") == set()


def _copy_world(c: Components, tmp: Path) -> tuple[InMemoryStore, Any]:
    """A fresh store holding copies of the ingested memories whose files are copies too (each
    test deletes its own)."""
    import shutil

    from episodic.memory.snippet_store import FileSnippetStore

    settings = Settings(data_dir=tmp / "data")
    snippets = FileSnippetStore(settings)
    shutil.copytree(c.settings.resolved_snippet_dir, settings.resolved_snippet_dir)
    store = InMemoryStore()
    schema = c.store.schema_info()
    store.ensure_schema(schema["text_dim"], schema["feature_dim"], schema["models"])
    old, new = str(c.settings.resolved_snippet_dir), str(settings.resolved_snippet_dir)
    memories = c.store.list_memories("cam", with_vectors=True)
    for m in memories:
        for s in m.snippets:
            s.uri = s.uri.replace(old, new)
        m.thumbnail_uri = m.thumbnail_uri.replace(old, new)
    store.upsert_memories(memories)
    return store, snippets


def test_forgetting_deletes_thumbnails_with_the_snippets(ingested, tmp_path: Path) -> None:
    c, _ = ingested
    store, snippets = _copy_world(c, tmp_path)
    books = ForgetBooks(tmp_path / "forgetting")
    first, *rest = store.list_memories("cam")
    d = Path(snippets.root) / "cam"
    assert (d / _named(first.thumbnail_uri)).is_file()
    report = Forgetter(store, snippets, books).forget("cam", 0.0, 0.5)
    assert report.snippet_files == 2  # the snippet and the thumbnail
    assert not (d / _named(first.thumbnail_uri)).exists()
    assert {p.name for p in d.glob("*.jpg")} == {_named(m.thumbnail_uri) for m in rest}
    Forgetter(store, snippets, books).forget("cam")
    assert not d.exists()


def test_the_workers_guard_drops_thumbnails_of_a_forgotten_stretch(ingested, tmp_path: Path) -> None:
    c, _ = ingested
    store, snippets = _copy_world(c, tmp_path)
    books = ForgetBooks(tmp_path / "forgetting")
    memories = store.list_memories("cam")
    Forgetter(store, snippets, books).forget("cam", 0.0, 0.5)  # a tombstone newer than the runner
    guard = GuardedStore(store, snippets, books, "cam", since_seq=0)
    # a runner that held the first memory writes it back: dropped, with its files
    path = Path(snippets.root) / "cam" / _named(memories[0].thumbnail_uri)
    path.write_bytes(b"\xff\xd8 stale")
    guard.upsert_memories([memories[0]])
    assert guard.dropped == 1 and not path.exists()


def test_milvus_rows_keep_the_thumbnail(ingested) -> None:
    from episodic.memory.milvus_rows import MilvusRows

    c, _ = ingested
    m = c.store.list_memories("cam")[0]
    rows = MilvusRows()
    rows._text_dim = int(np.asarray(m.vector).size)  # type: ignore[attr-defined]
    row = rows._memory_row(m)
    back = MilvusRows._memory_from_row({**row, "vector": np.asarray(m.vector).tolist()})
    assert back.thumbnail_uri == m.thumbnail_uri and back.snippets == m.snippets
    row["snippets"] = {"items": row["snippets"]["items"]}  # a row written before thumbnails
    assert MilvusRows._memory_from_row({**row, "vector": []}).thumbnail_uri == ""


# -- search by example ---------------------------------------------------------------------------
def _jpeg(rgb: tuple[int, int, int], size: tuple[int, int] = (320, 180), fmt: str = "JPEG") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, rgb).save(buf, format=fmt)
    return buf.getvalue()


def _frame_at(rec: Path, t: float) -> np.ndarray:
    import av

    with av.open(str(rec)) as f:
        for frame in f.decode(video=0):
            if frame.time is not None and frame.time >= t:
                return frame.to_ndarray(format="rgb24")
    raise AssertionError(f"no frame at {t}")


def test_decoding_an_uploaded_picture() -> None:
    for fmt in ("JPEG", "PNG", "WEBP"):
        rgb = decode_image(_jpeg(RED, (1280, 720), fmt))
        assert rgb.shape == (360, 640, 3) and rgb.dtype == np.uint8
    with pytest.raises(InputError, match="not a readable image"):
        decode_image(b"GIF89a not really a picture" * 10)
    with pytest.raises(InputError, match="not a readable image"):
        decode_image(_jpeg(RED)[:200])  # truncated
    gif = io.BytesIO()
    Image.new("RGB", (8, 8)).save(gif, format="GIF")
    with pytest.raises(InputError, match="JPEG, PNG or WebP"):
        decode_image(gif.getvalue())
    with pytest.raises(InputError, match="at most 8 MiB"):
        decode_image(b"\xff" * (MAX_IMAGE_BYTES + 1))
    with pytest.raises(InputError, match="empty"):
        decode_image(b"")
    bomb = io.BytesIO()
    Image.new("1", (10_000, 10_000)).save(bomb, format="PNG")  # 100 Mpx in a few kB
    assert len(bomb.getvalue()) < 100_000
    with pytest.raises(InputError, match="megapixels"):
        decode_image(bomb.getvalue())


def test_search_by_example_finds_the_segment_that_looks_like_it(ingested) -> None:
    c, rec = ingested
    qa = MemoryQA(c, warm_after_request=False)
    memories = c.store.list_memories("cam")
    blue = next(m for m in memories if m.t_start <= 8.0 < m.t_end)
    # a stored segment's key frame
    hits = qa.search("", Scope(), 3, like_segment_id=blue.id)
    assert hits[0].segment_id == blue.id and hits[0].score > 0.99
    assert hits[0].why.startswith("looks like the example (frame at ")
    assert (hits[0].t_start, hits[0].t_end) == (round(blue.t_start, 3), round(blue.t_end, 3))
    # its event id stands for it too
    assert qa.search("", Scope(), 1, like_segment_id=blue.id + ".e")[0].segment_id == blue.id
    # a picture taken from the recording inside it, sent as a JPEG
    buf = io.BytesIO()
    Image.fromarray(_frame_at(rec, 8.5)).save(buf, format="JPEG", quality=85)
    hits = qa.search("", Scope(), 3, image=buf.getvalue())
    assert hits[0].segment_id == blue.id
    assert hits[0].snippet_uri == blue.snippets[0].uri
    # scope applies
    assert qa.search("", Scope(t_min=20.0), 3, like_segment_id=blue.id)[0].segment_id != blue.id
    assert qa.search("", Scope(stream_ids=("nowhere",)), 3, like_segment_id=blue.id) == []
    # errors
    with pytest.raises(InputError, match="not a readable image"):
        qa.search("", Scope(), 3, image=b"plain text, not a picture")
    with pytest.raises(InputError, match="no segment"):
        qa.search("", Scope(), 3, like_segment_id="cam@000000999999")
    with pytest.raises(InputError, match="not both"):
        qa.search("", Scope(), 3, image=_jpeg(RED), like_segment_id=blue.id)
    with pytest.raises(InputError, match="query is empty"):
        qa.search("", Scope(), 3)


def test_words_and_picture_together_are_rank_fused() -> None:
    def m(seg: str, score: float, why: str) -> Moment:
        return Moment("cam", 0.0, 1.0, score, why, segment_id=seg)

    words = [m("a", 0.9, "speech: a"), m("b", 0.8, "speech: b")]
    picture = [m("c", 0.95, "looks like c"), m("b", 0.9, "looks like b")]
    fused = fuse_moments(words, picture, 3)
    assert [x.segment_id for x in fused] == ["b", "a", "c"]
    assert fused[0].why == "speech: b; looks like b"
    assert fuse_moments(words, [], 5) == [m("a", round(1 / 11, 4), "speech: a"), m("b", round(1 / 12, 4), "speech: b")]


# -- the Search RPC and GetSegment, without the network -----------------------------------------------
KEY_CAM = "cam-key-0123456789abcdef0123"
KEY_OTHER = "other-key-0123456789abcdef012"


class _Context:
    """Just enough of grpc.ServicerContext to call a servicer method directly."""

    class Aborted(Exception):
        pass

    def __init__(self, key: str) -> None:
        self.metadata = (("authorization", f"Bearer {key}"),)
        self.code: Any = None
        self.details = ""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    def time_remaining(self) -> float:
        return 30.0

    def is_active(self) -> bool:
        return True

    def abort(self, code: Any, details: str) -> None:
        self.code, self.details = code, details
        raise self.Aborted()


def test_the_search_rpc_searches_by_example_within_the_keys_streams(ingested) -> None:
    import grpc

    from episodic import server_auth
    from episodic import servicer as servicer_mod
    from episodic.proto.episodic.v1 import episodic_pb2 as pb

    c, _ = ingested
    servicer = servicer_mod.EpisodicServicer(c, server_auth.ApiKeys({KEY_CAM: ["cam"], KEY_OTHER: ["other"]}))
    servicer._qa = MemoryQA(c, warm_after_request=False)
    memories = c.store.list_memories("cam")
    red = memories[0]

    def search(key: str, **fields: Any) -> Any:
        ctx = _Context(key)
        try:
            return servicer.Search(pb.SearchRequest(top_k=3, **fields), ctx), ctx
        except _Context.Aborted:
            return None, ctx

    reply, _ = search(KEY_CAM, like_segment_id=red.id)
    assert reply.moments[0].segment_id == red.id and "looks like the example" in reply.moments[0].why
    reply, _ = search(KEY_CAM, image=_jpeg(RED))
    assert reply.moments[0].segment_id == red.id
    # words and picture together
    reply, _ = search(KEY_CAM, query="a scene", image=_jpeg(RED))
    assert reply.moments and reply.moments[0].segment_id == red.id
    # a segment outside the key answers as a missing one
    _, ctx = search(KEY_OTHER, like_segment_id=red.id)
    assert ctx.code == grpc.StatusCode.NOT_FOUND and ctx.details == f"no segment {red.id!r}"
    _, ctx = search(KEY_CAM, like_segment_id="cam@000000999999")
    assert ctx.code == grpc.StatusCode.NOT_FOUND
    # nothing to search by, or not a picture
    _, ctx = search(KEY_CAM)
    assert ctx.code == grpc.StatusCode.INVALID_ARGUMENT and "query is empty" in ctx.details
    _, ctx = search(KEY_CAM, image=b"%PDF-1.4 not a picture")
    assert ctx.code == grpc.StatusCode.INVALID_ARGUMENT and "not a readable image" in ctx.details
    # GetSegment says where the thumbnail is
    seg = servicer.GetSegment(pb.GetSegmentRequest(id=red.id), _Context(KEY_CAM))
    assert seg.thumbnail_uri == red.thumbnail_uri


def test_segments_json_has_the_thumbnail(ingested) -> None:
    from episodic import api_records

    c, _ = ingested
    memories = c.store.list_memories("cam")
    doc = api_records.segments_document(memories)
    assert [s["thumbnail_uri"] for s in doc["segments"]] == [m.thumbnail_uri for m in memories]
    assert api_records.snippet_content_type(memories[0].thumbnail_uri) == "image/jpeg"
