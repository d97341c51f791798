"""The OpenAI-compatible backend against a real local HTTP stand-in for vLLM: settings,
retries, Retry-After, timeouts, the shared concurrency limit, ordered batching, images as
data URIs, and the vision-language describer on real frames (with its offline fallback)."""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

import episodic.reasoning.openai_llm as openai_llm
from episodic.components import Components
from episodic.config import Settings
from episodic.core.errors import ModelError
from episodic.core.interfaces import VisualDescriber
from episodic.core.llm import ChatMessage, LanguageModel
from episodic.memory.vision import OfflineVisualDescriber
from episodic.memory.vlm_describer import (
    CAPTION_SYSTEM,
    VLMVisualDescriber,
    caption_description,
    encode_jpeg,
)
from episodic.reasoning.openai_llm import (
    OpenAICompatibleLLM,
    add_latency_observer,
    remove_latency_observer,
    retry_after_s,
)
from tests.openai_standin import (
    ChatStandIn,
    chat_reply,
    error_reply,
    last_user_text,
    sent_images,
)

BASE = Settings()
QUESTION = [
    ChatMessage("system", "Answer briefly."),
    ChatMessage("user", "Where is the bicycle?"),
]


@pytest.fixture()
def standin() -> Iterator[ChatStandIn]:
    s = ChatStandIn()
    yield s
    s.close()


@pytest.fixture()
def latencies() -> Iterator[list[tuple[str, float, str]]]:
    seen: list[tuple[str, float, str]] = []

    def record(model_id: str, seconds: float, outcome: str) -> None:
        seen.append((model_id, seconds, outcome))

    add_latency_observer(record)
    yield seen
    remove_latency_observer(record)


def _settings(standin: ChatStandIn, **changes: object) -> Settings:
    values: dict[str, object] = {
        "openai_base_url": standin.url,
        "openai_model": "test-vlm",
        "openai_timeout_s": 5.0,
        "openai_max_retries": 3,
        "openai_backoff_s": 0.01,
    }
    values.update(changes)
    return BASE.replace(**values)


# -- settings, retries, timeouts -------------------------------------------------------------


def test_client_reads_its_limits_from_the_settings(standin: ChatStandIn) -> None:
    s = _settings(
        standin,
        openai_timeout_s=7.5,
        openai_max_retries=2,
        openai_backoff_s=0.25,
        openai_max_concurrency=5,
    )
    llm = OpenAICompatibleLLM(s)
    assert isinstance(llm, LanguageModel)
    assert (llm.timeout_s, llm.retries, llm.backoff_s, llm.max_concurrency) == (7.5, 2, 0.25, 5)
    override = OpenAICompatibleLLM(s, timeout_s=1, retries=0, backoff_s=0.0, max_concurrency=2)
    assert (override.timeout_s, override.retries, override.backoff_s) == (1.0, 0, 0.0)
    assert override.max_concurrency == 2
    # the retry count from the settings is the one used
    standin.script[:] = [(503, error_reply("loading"))] * 3
    with pytest.raises(ModelError, match="after 3 attempts"):
        OpenAICompatibleLLM(s, backoff_s=0.0).generate(QUESTION)
    assert len(standin.requests) == 3


def test_503_is_retried_with_growing_backoff_then_succeeds(
    standin: ChatStandIn, latencies: list[tuple[str, float, str]]
) -> None:
    standin.script[:] = [
        (503, error_reply("model is loading")),
        (503, error_reply("model is loading")),
        (200, chat_reply("  It is by the bakery. ")),
    ]
    llm = OpenAICompatibleLLM(_settings(standin, openai_backoff_s=0.15))
    assert llm.generate(QUESTION) == "It is by the bakery."
    assert len(standin.requests) == 3
    gaps = np.diff(standin.arrivals)
    assert gaps[0] >= 0.14 and gaps[1] >= 0.29, gaps  # 0.15 s, then doubled
    mine = [x for x in latencies if x[0] == "openai:test-vlm"]
    assert len(mine) == 1 and mine[0][2] == "ok" and mine[0][1] >= 0.44


def test_retry_after_is_honoured_and_capped(
    standin: ChatStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = OpenAICompatibleLLM(_settings(standin, openai_backoff_s=0.01))
    standin.script[:] = [(429, error_reply("slow down"), {"Retry-After": "1"}), (200, chat_reply("a"))]
    assert llm.generate(QUESTION) == "a"
    assert standin.arrivals[1] - standin.arrivals[0] >= 0.95

    # an absurd Retry-After is capped (the cap shrunk here so the test stays fast)
    monkeypatch.setattr(openai_llm, "MAX_RETRY_AFTER_S", 0.3)
    standin.reset()
    standin.script[:] = [(503, b"{}", {"Retry-After": "3600"}), (200, chat_reply("b"))]
    started = time.monotonic()
    assert llm.generate(QUESTION) == "b"
    assert time.monotonic() - started < 3.0
    assert standin.arrivals[1] - standin.arrivals[0] >= 0.28

    assert retry_after_s("2") == 2.0 and retry_after_s(" 0 ") == 0.0
    assert retry_after_s(None) is None and retry_after_s("soon") is None
    later = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 60))
    assert 55 <= (retry_after_s(later) or 0) <= 61
    past = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() - 60))
    assert retry_after_s(past) == 0.0


def test_a_slow_server_times_out_into_a_model_error_after_the_retries(
    standin: ChatStandIn, latencies: list[tuple[str, float, str]]
) -> None:
    standin.delay_s = 1.5
    llm = OpenAICompatibleLLM(_settings(standin, openai_timeout_s=0.2, openai_max_retries=1))
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"unavailable after 2 attempts .*timed out"):
        llm.generate(QUESTION)
    assert time.monotonic() - started < 1.2  # two 0.2 s attempts, not the server's 1.5 s
    assert len(standin.requests) == 2
    assert [x[2] for x in latencies if x[0] == "openai:test-vlm"] == ["unavailable"]


def test_a_4xx_fails_at_once_with_the_servers_message(
    standin: ChatStandIn, latencies: list[tuple[str, float, str]]
) -> None:
    standin.script[:] = [(404, error_reply("The model `nope` does not exist."))]
    llm = OpenAICompatibleLLM(_settings(standin, openai_backoff_s=1.0))
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"HTTP 404\): The model `nope` does not exist"):
        llm.generate(QUESTION)
    assert time.monotonic() - started < 0.9  # no backoff sleep: it was not retried
    assert len(standin.requests) == 1
    assert [x[2] for x in latencies if x[0] == "openai:test-vlm"] == ["refused"]


# -- concurrency and batching ----------------------------------------------------------------


def _echo(request: dict) -> tuple[int, bytes]:
    text = last_user_text(request)
    if text.startswith("chat "):  # later chats answer sooner: completion order ≠ input order
        time.sleep(max(0, 20 - int(text.split()[1])) * 0.01)
    return 200, chat_reply(f"echo: {text}")


def test_threads_never_exceed_the_shared_limit(standin: ChatStandIn) -> None:
    standin.delay_s = 0.15
    standin.responder = _echo
    settings = _settings(standin, openai_max_concurrency=3)
    results: dict[int, str] = {}
    errors: list[BaseException] = []

    def ask(i: int) -> None:
        try:  # a new client per thread: the limit is per server, not per instance
            llm = OpenAICompatibleLLM(settings)
            results[i] = llm.generate([ChatMessage("user", f"thread {i}")])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    assert results == {i: f"echo: thread {i}" for i in range(20)}
    assert len(standin.requests) == 20
    assert standin.max_in_flight == 3  # reached, never exceeded


def test_generate_many_keeps_order_under_the_limit(standin: ChatStandIn) -> None:
    standin.delay_s = 0.1
    standin.responder = _echo
    llm = OpenAICompatibleLLM(_settings(standin, openai_max_concurrency=3))
    chats = [[ChatMessage("user", f"chat {i}")] for i in range(20)]
    started = time.monotonic()
    out = llm.generate_many(chats, max_tokens=7)
    elapsed = time.monotonic() - started
    assert out == [f"echo: chat {i}" for i in range(20)]
    assert standin.max_in_flight == 3
    assert all(body["max_tokens"] == 7 for _, _, body in standin.requests)
    assert elapsed < 3.0  # one after another would take 4.1 s
    assert llm.generate_many([]) == []

    # a failed chat: in place with return_exceptions, raised otherwise
    def fail_chat_3(request: dict) -> tuple[int, bytes]:
        if last_user_text(request) == "chat 3":
            return 400, error_reply("image too large")
        return 200, chat_reply(last_user_text(request))

    standin.responder = fail_chat_3
    mixed = llm.generate_many(chats[:6], return_exceptions=True)
    assert [type(x) for x in mixed] == [str, str, str, ModelError, str, str]
    assert mixed[5] == "chat 5" and "image too large" in str(mixed[3])
    with pytest.raises(ModelError, match="image too large"):
        llm.generate_many(chats[:6])


# -- images ----------------------------------------------------------------------------------


def _jpeg_size(data: bytes) -> tuple[int, int]:
    img = Image.open(io.BytesIO(data))
    assert img.format == "JPEG"
    return img.size


def test_images_travel_as_jpeg_data_uris(standin: ChatStandIn) -> None:
    wide = np.zeros((720, 1280, 3), np.uint8)
    wide[:, :640] = (200, 30, 30)
    big = encode_jpeg(wide, 768)
    small = encode_jpeg(np.full((180, 320, 3), 90, np.uint8), 768)
    assert _jpeg_size(big) == (768, 432) and _jpeg_size(small) == (320, 180)  # never upscaled
    tall = encode_jpeg(np.zeros((1000, 500, 3), np.uint8), 400)
    assert _jpeg_size(tall) == (200, 400)

    llm = OpenAICompatibleLLM(_settings(standin))
    msgs = [
        ChatMessage("system", "Describe."),
        ChatMessage("user", "What is this?", images=(big, small)),
    ]
    assert llm.generate(msgs) == "ok"
    body = standin.requests[0][2]
    assert body["messages"][0] == {"role": "system", "content": "Describe."}  # text stays a string
    parts = body["messages"][1]["content"]
    assert parts[0] == {"type": "text", "text": "What is this?"}
    assert [p["type"] for p in parts] == ["text", "image_url", "image_url"]
    assert parts[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    images = sent_images(body)
    assert [mime for mime, _ in images] == ["image/jpeg", "image/jpeg"]
    assert images[0][1] == big and _jpeg_size(images[1][1]) == (320, 180)
    left = np.asarray(Image.open(io.BytesIO(images[0][1])))[:, :300].mean(axis=(0, 1))
    assert left[0] > 150 and left[1] < 80  # the red half arrived as red

    with pytest.raises(ValueError, match="not an encoded"):
        llm.generate([ChatMessage("user", "x", images=(b"not an image",))])
    assert ChatMessage("user", "x") == ChatMessage("user", "x", images=())


# -- the vision-language describer -----------------------------------------------------------


@pytest.fixture(scope="module")
def offline() -> OfflineVisualDescriber:
    return OfflineVisualDescriber(BASE)


def _sign_frame() -> np.ndarray:
    rng = np.random.default_rng(3)
    bg = rng.integers(0, 90, (360, 640, 3)).astype(np.uint8)
    bg[:, :, 2] = np.clip(bg[:, :, 2].astype(int) + 70, 0, 255).astype(np.uint8)
    img = Image.fromarray(bg)
    ImageDraw.Draw(img).text(
        (60, 140), "NORTH BRIDGE", fill=(255, 255, 255), font=ImageFont.load_default(size=64)
    )
    return np.asarray(img)


def _red_frame() -> np.ndarray:
    f = np.zeros((360, 640, 3), np.uint8)
    f[..., 0] = 210
    f[250:, 500:] = 255  # a white patch in the corner
    return f


RED_CAPTION = "A red wall with a small white square in the lower right corner."
SIGN_CAPTION = "A dark blue board with large white lettering."


def _caption_by_colour(request: dict) -> tuple[int, bytes]:
    """A VLM stand-in that looks at the picture: red frames and blue frames differ."""
    (_, data), = sent_images(request)
    mean = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).mean(axis=(0, 1))
    return 200, chat_reply(RED_CAPTION if mean[0] > mean[2] else SIGN_CAPTION)


def test_vlm_describer_captions_real_frames(
    standin: ChatStandIn, offline: OfflineVisualDescriber
) -> None:
    standin.responder = _caption_by_colour
    settings = _settings(standin, openai_image_max_side=256, visual_description_max_tokens=60)
    vlm = VLMVisualDescriber(settings, OpenAICompatibleLLM(settings), offline)
    assert isinstance(vlm, VisualDescriber)
    assert vlm.model_id == "vlm:test-vlm+" + offline.model_id and vlm.feature_dim == 1280

    frames = [_sign_frame(), _red_frame()]
    obs, feats = vlm.describe(frames, [1.0, 2.5], [True, False])
    assert [o.t for o in obs] == [1.0, 2.5]
    # the caption stands for the frame; OCR text the caption left out is kept
    assert obs[1].description == RED_CAPTION
    assert obs[0].description.startswith(SIGN_CAPTION.rstrip("."))
    assert 'on-screen text: "NORTH BRIDGE"' in obs[0].description
    # the offline views are still there
    assert "NORTH BRIDGE" in obs[0].ocr_text and obs[1].colours[0] == "red"
    ref_obs, ref_feats = offline.describe(frames, [1.0, 2.5], [True, False])
    assert feats.shape == (2, 1280) and feats.dtype == np.float32
    assert np.allclose(feats, ref_feats, atol=1e-5)
    assert [o.labels for o in obs] == [o.labels for o in ref_obs]

    assert len(standin.requests) == 2
    for _, _, body in standin.requests:
        assert body["model"] == "test-vlm" and body["temperature"] == 0
        assert body["max_tokens"] == 60
        assert body["messages"][0] == {"role": "system", "content": CAPTION_SYSTEM}
        ((mime, data),) = sent_images(body)
        assert mime == "image/jpeg" and _jpeg_size(data) == (256, 144)

    empty_obs, empty_feats = vlm.describe([], [], [])
    assert empty_obs == [] and empty_feats.shape == (0, 1280)
    assert len(standin.requests) == 2  # nothing sent for no frames


def test_vlm_describer_falls_back_to_offline_descriptions(
    standin: ChatStandIn, offline: OfflineVisualDescriber, caplog: pytest.LogCaptureFixture
) -> None:
    frames = [_sign_frame(), _red_frame()]
    ref_obs, _ = offline.describe(frames, [0.0, 1.0], [True, False])
    settings = _settings(standin, openai_max_retries=1)
    vlm = VLMVisualDescriber(settings, OpenAICompatibleLLM(settings), offline)

    def refuse_red(request: dict) -> tuple[int, bytes]:
        status, body = _caption_by_colour(request)
        return (400, error_reply("bad image")) if RED_CAPTION.encode() in body else (status, body)

    standin.responder = refuse_red
    with caplog.at_level(logging.WARNING, logger="episodic.memory.vlm_describer"):
        obs, feats = vlm.describe(frames, [0.0, 1.0], [True, False])
    assert obs[0].description.startswith(SIGN_CAPTION.rstrip("."))
    assert obs[1].description == ref_obs[1].description and obs[1].description.startswith("a scene")
    assert "1 of 2 key frames keep the offline description" in caplog.text
    assert "bad image" in caplog.text and feats.shape == (2, 1280)

    # the server down for good (every attempt a 500) or answering nothing: all offline
    standin.responder = lambda request: (500, error_reply("CUDA out of memory"))
    obs, feats = vlm.describe(frames, [0.0, 1.0], [True, False])
    assert [o.description for o in obs] == [o.description for o in ref_obs]
    assert feats.shape == (2, 1280) and len(standin.requests) == 2 + 2 * 2
    standin.responder = lambda request: (200, chat_reply("   "))
    obs, _ = vlm.describe(frames, [0.0, 1.0], [True, False])
    assert [o.description for o in obs] == [o.description for o in ref_obs]


def test_caption_description_keeps_on_screen_text_within_budget() -> None:
    assert caption_description("A sign reads North Bridge.", "NORTH BRIDGE", 50) == (
        "A sign reads North Bridge."
    )
    d = caption_description("A sign over a road.", "NORTH BRIDGE", 50)
    assert d == 'A sign over a road; on-screen text: "NORTH BRIDGE"'
    long_ocr = " ".join(f"w{i}" for i in range(300))
    d = caption_description("A page of text.", long_ocr, 40)
    assert d.startswith('A page of text; on-screen text: "w0 w1') and d.endswith('…"')
    assert len(d.split()) <= 40
    long_caption = " ".join(["word"] * 100)
    assert len(caption_description(long_caption, "", 30).split()) <= 30


# -- wiring ----------------------------------------------------------------------------------


def test_components_builds_the_vlm_describer(standin: ChatStandIn) -> None:
    local = Components(_settings(standin, describer="openai", llm="local"))
    d = local.describer
    assert isinstance(d, VLMVisualDescriber) and isinstance(d.llm, OpenAICompatibleLLM)
    assert isinstance(d.offline, OfflineVisualDescriber)
    assert d.model_id.startswith("vlm:test-vlm+")

    shared = Components(_settings(standin, describer="openai", llm="openai"))
    # a client of its own (its time counts as describer time), same server, same limit
    assert shared.describer.llm is not shared.llm
    assert shared.describer.llm.base_url == shared.llm.base_url

    plain = Components(_settings(standin))
    assert type(plain.describer) is OfflineVisualDescriber


# -- semantic replay with a vision-language model ---------------------------------------------


def test_ingest_with_a_vlm_sends_key_frames_with_the_summary_request(standin: ChatStandIn, tmp_path) -> None:
    """A real ingest with llm = openai: each ThetaEvent summary request carries the memory's key
    frames (JPEG, downscaled, at most replay_max_images), the replies become the summaries, and
    with replay_max_images = 0 the requests are text only."""
    from episodic import samples
    from episodic.pipeline import ingest_file
    from tests.openai_standin import last_user_text

    video = tmp_path / "two-scenes.mp4"
    samples.make_recording(video, [samples.Scene(6, seed=1, text="NORTH GATE"), samples.Scene(6, seed=2)], [])

    def reply(request: dict) -> tuple:
        text = last_user_text(request)
        if "log entry" in text:  # the replay prompt: answer from what it says was seen
            seen = text.split("Seen:", 1)[1].split("\n", 1)[0].strip()
            return 200, chat_reply(f"The picture shows {seen}.")
        return 200, chat_reply("ok")

    standin.responder = reply
    summaries: dict[int, list[str]] = {}
    for max_images in (2, 0):
        standin.reset()
        settings = _settings(standin, data_dir=tmp_path / f"data-{max_images}", llm="openai",
                             replay_max_images=max_images, openai_image_max_side=160)
        c = Components(settings)
        try:
            report = ingest_file(video, "gate", c)
            events = c.store.list_events("gate")
        finally:
            c.close()
        assert report.progress.memories >= 1 and len(events) == report.progress.memories
        replays = [body for _, _, body in standin.requests if "log entry" in last_user_text(body)]
        assert len(replays) >= len(events)
        counts = [len(sent_images(body)) for body in replays]
        if max_images:
            assert all(1 <= n <= max_images for n in counts), counts
            for mime, data in (img for body in replays for img in sent_images(body)):
                assert mime == "image/jpeg" and max(Image.open(io.BytesIO(data)).size) <= 160
        else:
            assert counts == [0] * len(replays)
        summaries[max_images] = [e.summary for e in events]
        assert all(s.startswith("The picture shows") for s in summaries[max_images])
    assert summaries[2] == summaries[0]  # images change what is sent, not how it is stored
