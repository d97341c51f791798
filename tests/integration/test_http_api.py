"""The REST/JSON API (``episodic serve --http-port``) against a real server on loopback: the gRPC
server and uvicorn in this process, the REST handlers calling gRPC over the private unix socket.

One module-scoped server over an in-process store (``store = "memory"``) holding hand-made
records of two streams with real snippet and thumbnail files on disk, three API keys (one per
stream, one for all), and a stand-in for the question-answering service (no model loads: what
is under test is the HTTP layer, which must give exactly what gRPC gives). Checked: REST equals
gRPC for streams, events, segments, search and ask; the OpenAPI document validates; statuses
per code; keys and scopes; range requests; signed media URLs; path traversal; CORS; limits and
malformed bodies; the key-in-URL refusal; security headers; `episodic serve --http-port` and
`episodic console` as commands.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
import numpy as np
import pytest

from episodic import api_article, api_convert, api_records
from episodic import server as server_mod
from episodic.config import load_settings
from episodic.core.query import AskResult, Evidence, Moment, Pathway, QueryType
from episodic.core.records import SnippetRef, StreamInfo
from episodic.http_errors import HTTP_STATUS, ApiFailure, from_rpc_error
from episodic.http_links import Signer, snippet_path
from episodic.http_media import parse_range
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from episodic.server_auth import _digest
from tests.cli_runner import cli_env
from tests.store_fixtures import FEATURE_DIM, MODELS, TEXT_DIM, make_event, make_memory

KEY_A = "kitchen-key-0123456789abcdef"  # sees "kitchen"
KEY_B = "station-key-0123456789abcdef"  # sees "station"
KEY_ALL = "admin-key-0123456789abcdef01"  # sees everything
SEG_K0, SEG_K1, SEG_S0 = "kitchen@000000000000", "kitchen@000000008000", "station@000000000000"
SEG_EVIL = "kitchen@000000020000"  # its record points outside the snippet directory
SNIPPET = bytes(range(256)) * 1200  # 307,200 bytes, each offset's byte known
JPEG = b"\xff\xd8\xff\xe0" + b"thumbnail" * 20 + b"\xff\xd9"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def kid(key: str) -> str:
    return _digest(key).hex()[:12]


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def error(self) -> dict[str, str]:
        return self.json()["error"]


class Http:
    """A tiny HTTP client (the standard library's), one connection per request."""

    def __init__(self, base: str) -> None:
        self.base = base
        u = urlsplit(base)
        self.host, self.port = u.hostname, u.port

    def __call__(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
                 key: str | None = None, chunked: bool = False) -> Reply:
        if path.startswith("http"):
            u = urlsplit(path)
            path = u.path + (f"?{u.query}" if u.query else "")
        h = dict(headers or {})
        if key is not None:
            h.update(bearer(key))
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=h, encode_chunked=chunked)
            r = conn.getresponse()
            return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
        finally:
            conn.close()


class StandInQA:
    """Search and Ask over the store's records, deterministically (no model)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def _memories(self, scope: Any) -> list[Any]:
        sids = scope.stream_ids or sorted(s.stream_id for s in self.store.list_streams())
        return [m for sid in sids for m in self.store.list_memories(sid, with_vectors=False)]

    def search(self, query: str, scope: Any, top_k: int, deadline_s: float | None = None, image: Any = None,
               like_segment_id: Any = None) -> list[Moment]:
        mems = self._memories(scope)[:top_k]
        why = f"looks like the picture ({len(image)} bytes)" if image else f"matched {query!r}"
        return [Moment(m.stream_id, m.t_start, m.t_end, round(0.9 - 0.1 * i, 3), why, m.id,
                       m.snippets[0].uri if m.snippets else "") for i, m in enumerate(mems)]

    def ask(self, req: Any) -> AskResult:
        mems = self._memories(req.scope)
        evidence = [Evidence(m.stream_id, m.id, m.t_start, m.t_end, "speech", "hello there",
                             m.snippets[0].uri if m.snippets else "", 0.5) for m in mems[:2]]
        return AskResult(answer=f"answer to {req.question}", confidence=0.61, pathway=Pathway.FAST,
                         query_type=QueryType.AUDIO, choice_index=1 if req.options else None,
                         evidence=evidence, fast_answer="fast", fast_confidence=0.61, timings_ms={"fast": 1.25})


@dataclass
class Env:
    http: Http
    stub: pb_grpc.EpisodicMemoryStub
    handle: server_mod.ServerHandle
    settings: Any
    components: Any


# -- the module's server ---------------------------------------------------------------------------
def _records(components: Any) -> None:
    store, settings = components.store, components.settings
    store.ensure_schema(TEXT_DIM, FEATURE_DIM, MODELS)
    root = settings.resolved_snippet_dir
    rng = np.random.default_rng(7)
    memories = []
    for sid, t0, thumb in (("kitchen", 0.0, True), ("kitchen", 8.0, False), ("station", 0.0, True),
                           ("scratch", 0.0, False)):
        m = make_memory(rng, sid, t0)
        (root / sid).mkdir(parents=True, exist_ok=True)
        snippet = root / sid / f"{m.id}.mp4"
        snippet.write_bytes(SNIPPET)
        thumbnail = ""
        if thumb:
            (root / sid / f"{m.id}.jpg").write_bytes(JPEG)
            thumbnail = (root / sid / f"{m.id}.jpg").as_uri()
        memories.append(dataclasses.replace(m, snippets=[SnippetRef(snippet.as_uri(), t0, t0 + 7.25)],
                                            thumbnail_uri=thumbnail))
    evil = make_memory(rng, "kitchen", 20.0)
    memories.append(dataclasses.replace(evil, snippets=[SnippetRef("file:///etc/passwd", 20.0, 27.0)],
                                        thumbnail_uri="file:///etc/hostname"))
    store.upsert_memories(memories)
    store.upsert_events([make_event(rng, m) for m in memories])
    for sid in ("kitchen", "station", "scratch"):
        mine = [m for m in memories if m.stream_id == sid]
        store.upsert_stream(StreamInfo(sid, source=f"{sid}.mp4", t_end=max(m.t_end for m in mine),
                                       memories=len(mine), events=len(mine), updated_at=1.0))


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Iterator[Env]:
    from episodic.components import Components

    tmp = tmp_path_factory.mktemp("http-api")
    keys_file = tmp / "api-keys.toml"
    keys_file.write_text(f'"{KEY_A}" = ["kitchen"]\n"{KEY_B}" = ["station"]\n"{KEY_ALL}" = ["*"]\n')
    keys_file.chmod(0o600)
    settings = load_settings(data_dir=tmp / "data", env={}, store="memory", grpc_port=0, http_port=0,
                             serve_warm_up=False, api_keys_file=str(keys_file), http_max_upload_bytes=65536)
    components = Components(settings)
    _records(components)
    handle = server_mod.create_server(settings, components)
    handle.servicer._qa = StandInQA(components.store)
    handle.server.start()
    handle.http.start(handle)
    channel = grpc.insecure_channel(handle.address)
    try:
        yield Env(Http(handle.http.url), pb_grpc.EpisodicMemoryStub(channel), handle, settings, components)
    finally:
        channel.close()
        handle.stop(0)
        components.close()
    assert not handle.http.socket_dir.exists()  # the private socket went with the server


def md(key: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {key}"),)


def _no_urls(doc: Any) -> Any:
    """A document without its signed URLs (their expiry may differ between two calls)."""
    if isinstance(doc, dict):
        return {k: _no_urls(v) for k, v in doc.items() if not k.endswith("url")}
    if isinstance(doc, list):
        return [_no_urls(v) for v in doc]
    return doc


# -- REST = gRPC -------------------------------------------------------------------------------------
def test_rest_documents_equal_grpc_and_cli_documents(env: Env) -> None:
    h, stub = env.http, env.stub
    streams = h("GET", "/v1/streams?with_storage=true", key=KEY_ALL)
    assert streams.status == 200
    reply = stub.ListStreams(pb.ListStreamsRequest(with_storage=True), metadata=md(KEY_ALL), timeout=10)
    assert streams.json() == {"streams": [api_records.stream_to_dict(s) for s in reply.streams]}
    assert [s["stream_id"] for s in streams.json()["streams"]] == ["kitchen", "scratch", "station"]
    assert "storage" in streams.json()["streams"][0]

    page = h("GET", "/v1/streams/kitchen/events?page_size=2", key=KEY_ALL).json()
    reply = stub.ListEvents(pb.ListEventsRequest(stream_ids=["kitchen"], page_size=2), metadata=md(KEY_ALL), timeout=10)
    assert page == {"events": [api_records.event_to_dict(e) for e in reply.events],
                    "next_page_token": reply.next_page_token}
    assert len(page["events"]) == 2 and page["next_page_token"]
    rest = h("GET", f"/v1/streams/kitchen/events?page_size=2&page_token={page['next_page_token']}", key=KEY_ALL).json()
    assert [e["segment_id"] for e in rest["events"]] == [SEG_EVIL] and rest["next_page_token"] == ""

    seg = h("GET", f"/v1/segments/{SEG_K0}", key=KEY_A)
    assert seg.status == 200
    reply = stub.GetSegment(pb.GetSegmentRequest(id=SEG_K0), metadata=md(KEY_A), timeout=10)
    assert _no_urls(seg.json()) == _no_urls(api_records.segment_to_dict(reply))
    doc = seg.json()
    assert doc["thumbnail_uri"].endswith(".jpg") and doc["thumbnail_url"].startswith(env.handle.http.url)
    assert urlsplit(doc["snippets"][0]["url"]).path == f"/v1/segments/{SEG_K0}/snippets/0"
    # gRPC callers get the same signed URLs (made for their key)
    assert urlsplit(reply.snippets[0].url).path == f"/v1/segments/{SEG_K0}/snippets/0"
    assert f"kid={kid(KEY_A)}" in reply.snippets[0].url
    # an event id stands for its segment, as in GetSegment
    assert h("GET", f"/v1/segments/{SEG_K0}.e", key=KEY_A).json()["id"] == SEG_K0

    found = h("POST", "/v1/search", {"query": "apples", "stream_ids": ["kitchen"], "top_k": 2}, key=KEY_ALL)
    assert found.status == 200
    reply = stub.Search(pb.SearchRequest(query="apples", stream_ids=["kitchen"], top_k=2), metadata=md(KEY_ALL), timeout=10)
    moments = [api_convert.moment_from_proto(m) for m in reply.moments]
    assert _no_urls(found.json()) == _no_urls(api_convert.search_result_to_dict(moments))
    first = found.json()["moments"][0]
    assert first["segment_id"] == SEG_K0 and "/snippets/0?" in first["snippet_url"] and "/thumbnail?" in first["thumbnail_url"]
    assert found.json()["moments"][1]["thumbnail_url"] == ""  # kitchen@8000 has no thumbnail

    body = {"question": "What is in the bowl?", "choices": ["apples", "keys"], "stream_ids": ["kitchen"], "top_k": 3}
    answered = h("POST", "/v1/ask", body, key=KEY_A)
    assert answered.status == 200
    reply = stub.Ask(pb.AskRequest(question=body["question"], options=body["choices"], stream_ids=["kitchen"], top_k=3),
                     metadata=md(KEY_A), timeout=10)
    assert answered.json() == api_convert.ask_result_to_dict(api_convert.ask_result_from_proto(reply))
    assert answered.json()["choice_index"] == 1 and answered.json()["evidence"][0]["segment_id"] == SEG_K0


def test_openapi_document_validates(env: Env) -> None:
    from openapi_spec_validator import validate

    doc = env.http("GET", "/openapi.json").json()
    validate(doc)
    for path in ("/v1/streams", "/v1/streams/{stream_id}/events", "/v1/segments/{segment_id}",
                 "/v1/segments/{segment_id}/snippets/{index}", "/v1/segments/{segment_id}/thumbnail",
                 "/v1/search", "/v1/search/image", "/v1/ask", "/v1/locate", "/v1/recall", "/v1/articles",
                 "/v1/streams/{stream_id}/summaries", "/v1/watches", "/v1/watches/{watch_id}", "/v1/alerts",
                 "/v1/streams/{stream_id}", "/healthz"):
        assert path in doc["paths"], path
    assert "AskBody" in doc["components"]["schemas"] and "ErrorBody" in doc["components"]["schemas"]
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


# -- errors and keys ---------------------------------------------------------------------------------
def test_statuses_follow_grpc_codes_and_keys_and_scopes_hold(env: Env) -> None:
    h = env.http
    r = h("GET", "/v1/streams")
    assert (r.status, r.error["code"]) == (401, "UNAUTHENTICATED") and "API key" in r.error["message"]
    r = h("GET", "/v1/streams", key="not-a-key-0123456789abcdef")
    assert (r.status, r.error["code"]) == (401, "UNAUTHENTICATED")
    r = h("GET", "/v1/streams", headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert r.status == 401
    assert [s["stream_id"] for s in h("GET", "/v1/streams", key=KEY_A).json()["streams"]] == ["kitchen"]
    # another tenant's segment: NOT_FOUND with the same message as a missing one
    other = h("GET", f"/v1/segments/{SEG_S0}", key=KEY_A)
    missing = h("GET", "/v1/segments/kitchen@000000999000", key=KEY_A)
    assert other.status == missing.status == 404 and other.error["code"] == "NOT_FOUND"
    assert other.error["message"] == f"no segment {SEG_S0!r}"
    r = h("POST", "/v1/search", {"query": "x", "stream_ids": ["station"]}, key=KEY_A)
    assert (r.status, r.error["code"]) == (403, "PERMISSION_DENIED")
    assert h("GET", "/v1/streams/station/events", key=KEY_A).status == 403
    r = h("POST", "/v1/search", {"query": "x", "top_k": 1000}, key=KEY_A)
    assert (r.status, r.error["code"]) == (400, "INVALID_ARGUMENT") and "top_k" in r.error["message"]
    r = h("POST", "/v1/ask", {"question": "   "}, key=KEY_A)
    assert r.status == 400
    r = h("GET", "/v1/streams/kitchen/events?t_min=5&t_max=1", key=KEY_A)
    assert r.status == 400 and "t_min" in r.error["message"]
    r = h("DELETE", "/v1/streams/station", key=KEY_A)  # forget: outside the key is NOT_FOUND
    assert r.status == 404
    r = h("POST", "/v1/ask", {"question": "x", "bogus": 1}, key=KEY_A)  # unknown field: FastAPI's check
    assert (r.status, r.error["code"]) == (422, "INVALID_ARGUMENT") and "bogus" in r.error["message"]
    # a lone surrogate cannot be sent in a message: refused, not a 500
    r = h("POST", "/v1/search", b'{"query": "\\ud800"}', headers={"Content-Type": "application/json"}, key=KEY_A)
    assert r.status == 400


class _FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, trailing: tuple = ()) -> None:
        self._code, self._trailing = code, trailing

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return "said by the server"

    def trailing_metadata(self) -> tuple:
        return self._trailing


@pytest.mark.parametrize("code,status", [
    ("INVALID_ARGUMENT", 400), ("UNAUTHENTICATED", 401), ("PERMISSION_DENIED", 403), ("NOT_FOUND", 404),
    ("RESOURCE_EXHAUSTED", 429), ("FAILED_PRECONDITION", 400), ("DEADLINE_EXCEEDED", 504),
    ("UNAVAILABLE", 503), ("UNIMPLEMENTED", 501), ("INTERNAL", 500), ("UNKNOWN", 500), ("DATA_LOSS", 500),
])
def test_grpc_codes_map_to_http_statuses(code: str, status: int) -> None:
    trailing = (("retry-after-ms", "2300"),) if code == "RESOURCE_EXHAUSTED" else ()
    failure = from_rpc_error(_FakeRpcError(grpc.StatusCode[code], trailing))
    assert (failure.code, failure.status, failure.message) == (code, status, "said by the server")
    assert HTTP_STATUS.get(code, 500) == status
    if trailing:
        assert failure.headers["Retry-After"] == "3"


def test_busy_server_is_429_with_retry_after(env: Env) -> None:
    handle = env.handle
    turns = handle.servicer._asks
    saved = turns.__dict__.copy()
    try:  # no turn free and no place in line: the next Ask is refused at once
        from episodic.server_admission import ModelTurns

        busy = ModelTurns(1, 0)
        assert busy.acquire(None, lambda: True)
        handle.servicer._asks = busy
        r = env.http("POST", "/v1/ask", {"question": "anyone there?"}, key=KEY_A)
        assert (r.status, r.error["code"]) == (429, "RESOURCE_EXHAUSTED") and "busy" in r.error["message"]
        assert int(r.headers["retry-after"]) >= 1
    finally:
        handle.servicer._asks = turns
        turns.__dict__.update(saved)


def test_listings_stay_fast_while_asks_wait_for_the_model(env: Env) -> None:
    """REST keeps gRPC's admission: Asks waiting in the model's line hold no HTTP thread, so a
    listing is answered at once; beyond the line an Ask is 429 at once."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    release = threading.Event()
    entered = threading.Event()
    qa = env.handle.servicer._qa

    class Held(StandInQA):
        def ask(self, req: Any) -> AskResult:
            entered.set()
            release.wait(20)
            return super().ask(req)

    env.handle.servicer._qa = Held(env.components.store)
    try:
        with ThreadPoolExecutor(24) as pool:
            asks = [pool.submit(env.http, "POST", "/v1/ask", {"question": f"bowl {i}?"}, key=KEY_A)
                    for i in range(24)]
            assert entered.wait(10)
            time.sleep(0.5)  # the rest reach the line, or are refused
            t0 = time.perf_counter()
            assert env.http("GET", "/v1/streams", key=KEY_A).status == 200
            assert env.http("GET", f"/v1/segments/{SEG_K0}", key=KEY_A).status == 200
            assert time.perf_counter() - t0 < 2.0
            release.set()
            statuses = sorted(f.result().status for f in asks)
        turns = env.settings.grpc_max_concurrent_asks + env.settings.grpc_max_queued_asks
        assert statuses.count(200) >= turns and set(statuses) <= {200, 429}
    finally:
        release.set()
        env.handle.servicer._qa = qa


def test_articles_as_json_and_as_server_sent_events(env: Env) -> None:
    from episodic.core.article import (
        Article,
        ArticleProgress,
        ArticleStyle,
        Citation,
        Section,
        Sentence,
    )

    class Articles:
        def write(self, req: Any, progress: Any = None) -> Article:
            progress(ArticleProgress("retrieve", 1, 2, "kitchen"))
            return Article(request=req.request, style=ArticleStyle(req.style), title="Apples",
                           sections=[Section("", [Sentence("Tom put apples in the bowl.", [1])])],
                           citations=[Citation(1, "kitchen", SEG_K0, 0.0, 7.25, "")], sub_queries=["apples"])

    saved = env.handle.servicer._articles
    env.handle.servicer._articles = Articles()
    try:
        body = {"request": "What happened to the apples?", "style": "bullet", "stream_ids": ["kitchen"]}
        r = env.http("POST", "/v1/articles", body, key=KEY_A)
        assert r.status == 200, r.body
        updates = list(env.stub.Article(pb.ArticleRequest(request=body["request"], style=pb.ARTICLE_STYLE_BULLET,
                                                          stream_ids=["kitchen"]), metadata=md(KEY_A), timeout=10))
        want = api_article.article_to_dict(api_article.article_from_proto(updates[-1].article))
        assert r.json() == want and r.json()["markdown"].startswith("# Apples")
        sse = env.http("POST", "/v1/articles", body, key=KEY_A, headers={"Accept": "text/event-stream"})
        assert sse.status == 200 and sse.headers["content-type"].startswith("text/event-stream")
        events = [(e.split("\n")[0], json.loads(e.split("\n")[1].removeprefix("data: ")))
                  for e in sse.body.decode().strip().split("\n\n")]
        assert events[0] == ("event: progress", {"stage": "retrieve", "done": 1, "total": 2, "message": "kitchen"})
        assert events[-1] == ("event: article", want)
        r = env.http("POST", "/v1/articles", {**body, "style": "poem"}, key=KEY_A)
        assert r.status == 400 and "style" in r.error["message"]
        r = env.http("POST", "/v1/articles", {**body, "stream_ids": ["station"]}, key=KEY_A,
                     headers={"Accept": "text/event-stream"})
        assert r.status == 200 and b"event: error" in r.body and b"PERMISSION_DENIED" in r.body
    finally:
        env.handle.servicer._articles = saved


# -- media -------------------------------------------------------------------------------------------
def test_snippets_answer_range_requests(env: Env) -> None:
    h, path = env.http, f"/v1/segments/{SEG_K0}/snippets/0"
    whole = h("GET", path, key=KEY_A)
    assert whole.status == 200 and whole.body == SNIPPET and whole.headers["content-type"] == "video/mp4"
    assert whole.headers["accept-ranges"] == "bytes" and whole.headers["content-length"] == str(len(SNIPPET))
    part = h("GET", path, key=KEY_A, headers={"Range": "bytes=1000-1999"})
    assert part.status == 206 and part.body == SNIPPET[1000:2000]
    assert part.headers["content-range"] == f"bytes 1000-1999/{len(SNIPPET)}"
    tail = h("GET", path, key=KEY_A, headers={"Range": "bytes=-10"})
    assert tail.status == 206 and tail.body == SNIPPET[-10:]
    open_ended = h("GET", path, key=KEY_A, headers={"Range": "bytes=307000-"})
    assert open_ended.status == 206 and open_ended.body == SNIPPET[307000:]
    for bad in ("bytes=400000-", "bytes=5-2", "bytes=abc", "pages=1-2", "bytes=-0"):
        r = h("GET", path, key=KEY_A, headers={"Range": bad})
        assert r.status == 416, bad
        assert r.headers["content-range"] == f"bytes */{len(SNIPPET)}"
    assert h("GET", path, key=KEY_A, headers={"Range": "bytes=0-1,5-6"}).status == 200  # several: the whole file
    assert h("GET", path).status == 401
    # HEAD: a player's first question (size, ranges), the same rules, no bytes
    head = h("HEAD", path, key=KEY_A)
    assert (head.status, head.body, head.headers["content-length"]) == (200, b"", str(len(SNIPPET)))
    assert head.headers["accept-ranges"] == "bytes"
    assert h("HEAD", path, key=KEY_A, headers={"Range": "bytes=0-9"}).headers["content-range"] == f"bytes 0-9/{len(SNIPPET)}"
    assert h("HEAD", path).status == 401
    assert h("GET", f"/v1/segments/{SEG_S0}/snippets/0", key=KEY_A).status == 404
    assert h("GET", f"/v1/segments/{SEG_K0}/snippets/1", key=KEY_A).status == 404
    thumb = h("GET", f"/v1/segments/{SEG_K0}/thumbnail", key=KEY_A)
    assert thumb.status == 200 and thumb.body == JPEG and thumb.headers["content-type"] == "image/jpeg"
    r = h("GET", f"/v1/segments/{SEG_K1}/thumbnail", key=KEY_A)
    assert r.status == 404 and "no thumbnail" in r.error["message"]


def test_parse_range() -> None:
    assert parse_range("bytes=0-0", 10) == (0, 0)
    assert parse_range("bytes=5-100", 10) == (5, 9)
    assert parse_range("bytes=-100", 10) == (0, 9)
    assert parse_range("bytes=1-2, 4-5", 10) is None
    with pytest.raises(ApiFailure) as info:
        parse_range("bytes=0-0", 0)
    assert info.value.status == 416


def test_signed_urls_work_without_a_header_and_only_as_made(env: Env) -> None:
    h = env.http
    seg = h("GET", f"/v1/segments/{SEG_K0}", key=KEY_A).json()
    url, thumb = seg["snippets"][0]["url"], seg["thumbnail_url"]
    assert re.search(r"\?exp=\d+&kid=[0-9a-f]{12}&sig=[A-Za-z0-9_-]{43}$", url)
    r = h("GET", url)
    assert r.status == 200 and r.body == SNIPPET
    r = h("GET", url, headers={"Range": "bytes=10-19"})
    assert r.status == 206 and r.body == SNIPPET[10:20]
    assert h("GET", thumb).body == JPEG
    # tampered: another signature, another expiry, another key id, another path
    sig = url.rsplit("=", 1)[1]
    forged = url[: -len(sig)] + ("A" if sig[0] != "A" else "B") + sig[1:]
    for bad in (forged, re.sub(r"exp=\d+", lambda m: f"exp={int(m.group(0)[4:]) + 300}", url),
                url.replace(f"kid={kid(KEY_A)}", f"kid={kid(KEY_ALL)}"),
                url.replace(f"{SEG_K0}/snippets", f"{SEG_K1}/snippets")):
        r = h("GET", bad)
        assert (r.status, r.error["code"]) == (403, "PERMISSION_DENIED"), bad
    # expired: signed with the server's secret two hours ago
    signer = env.handle.http.links.signer
    old = Signer(signer._secret, clock=lambda: signer._clock() - 7200)
    path = snippet_path(SEG_K0, 0)
    assert h("GET", f"{path}?{old.sign(path, kid(KEY_A))}").status == 403
    # a valid signature is still limited to what its key may see
    other = snippet_path(SEG_S0, 0)
    r = h("GET", f"{other}?{signer.sign(other, kid(KEY_A))}")
    assert (r.status, r.error["code"]) == (404, "NOT_FOUND")
    assert h("GET", f"{other}?{signer.sign(other, kid(KEY_B))}").status == 200
    # a key id no configured key has (a removed key): its URLs stop working
    assert h("GET", f"{path}?{signer.sign(path, 'abcdefabcdef')}").status == 403
    # URLs are given as the request reached the server (a browser that opened localhost gets
    # same-origin URLs, which the console's CSP allows); the signature does not change
    port = env.handle.http.port
    local = h("GET", f"/v1/segments/{SEG_K0}", key=KEY_A, headers={"Host": f"localhost:{port}"}).json()
    assert local["snippets"][0]["url"] == url.replace(env.handle.http.url, f"http://localhost:{port}")
    moment = h("POST", "/v1/search", {"query": "x", "top_k": 1}, key=KEY_A, headers={"Host": f"localhost:{port}"})
    assert moment.json()["moments"][0]["thumbnail_url"].startswith(f"http://localhost:{port}/v1/segments/")
    # the secret is kept 0600 in the data directory
    secret = Path(env.settings.data_dir) / "http_media_secret"
    assert secret.is_file() and (secret.stat().st_mode & 0o777) == 0o600


def test_path_traversal_finds_nothing(env: Env) -> None:
    h = env.http
    for path in ("/v1/segments/..%2F..%2Fetc%2Fpasswd/snippets/0", "/v1/segments/%2e%2e/snippets/0",
                 "/v1/segments/kitchen@000000000000/snippets/..%2F1", "/v1/segments/../../etc/passwd",
                 "/v1/segments/kitchen@000000000000/snippets/-1", "/v1/segments/kitchen@000000000000/snippets/1e3",
                 "/v1/segments/%2Fetc%2Fpasswd/thumbnail", "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                 "/v1/segments/kitchen'%20or%201==1/snippets/0"):
        r = h("GET", path, key=KEY_ALL)
        assert r.status in (400, 404), (path, r.status)
        assert b"root:" not in r.body
    # a record pointing outside the snippet directory is not served either
    assert h("GET", f"/v1/segments/{SEG_EVIL}/snippets/0", key=KEY_ALL).status == 404
    assert h("GET", f"/v1/segments/{SEG_EVIL}/thumbnail", key=KEY_ALL).status == 404


# -- guards ------------------------------------------------------------------------------------------
def test_bad_requests_are_refused_early(env: Env) -> None:
    h = env.http
    for query in ("api_key=" + KEY_ALL, "key=" + KEY_ALL, "with_storage=1&API_KEY=x"):
        r = h("GET", f"/v1/streams?{query}")
        assert r.status == 400 and "Authorization: Bearer" in r.error["message"]
    r = h("POST", "/v1/search", b'{"query": ', headers={"Content-Type": "application/json"}, key=KEY_A)
    assert (r.status, r.error["code"]) == (400, "INVALID_ARGUMENT") and "JSON" in r.error["message"]
    r = h("POST", "/v1/search", b"query=x", headers={"Content-Type": "application/x-www-form-urlencoded"}, key=KEY_A)
    assert r.status == 415
    r = h("POST", "/v1/search/image", {"query": "x"}, key=KEY_A)
    assert r.status == 415
    big = b"{" + b" " * 70000 + b"}"
    r = h("POST", "/v1/search/image", big, headers={"Content-Type": "multipart/form-data; boundary=x"}, key=KEY_A)
    assert (r.status, r.error["code"]) == (413, "RESOURCE_EXHAUSTED")
    # no Content-Length (chunked): refused once the bytes read pass the limit
    head = (b'--x\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n'
            b"Content-Type: application/octet-stream\r\n\r\n")  # a well-formed part, so only the size can fail
    chunks = (head if i == 0 else b"a" * 8192 for i in range(12))
    r = h("POST", "/v1/search/image", chunks, headers={"Content-Type": "multipart/form-data; boundary=x"},
          key=KEY_A, chunked=True)
    assert r.status == 413


def _multipart(fields: dict[str, str], image: bytes, name: str = "pic.png") -> tuple[bytes, str]:
    boundary = "episodic-test-boundary"
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="image"; filename="{name}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + image + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def test_search_by_image_upload(env: Env) -> None:
    body, ctype = _multipart({"query": "", "stream_ids": "kitchen", "top_k": "1"}, b"GIF89a not an image")
    r = env.http("POST", "/v1/search/image", body, headers={"Content-Type": ctype}, key=KEY_A)
    assert r.status == 400 and "not a JPEG, PNG or WebP" in r.error["message"]
    body, ctype = _multipart({"stream_ids": "station"}, PNG)
    assert env.http("POST", "/v1/search/image", body, headers={"Content-Type": ctype}, key=KEY_A).status == 403
    body, ctype = _multipart({"query": "a bowl", "stream_ids": "kitchen", "top_k": "1"}, PNG)
    r = env.http("POST", "/v1/search/image", body, headers={"Content-Type": ctype}, key=KEY_A)
    # the picture reached the service (the stand-in says so); a server that cannot search by
    # picture answers with its own status instead
    assert r.status == 200, r.body
    assert r.json()["moments"][0]["why"] == f"looks like the picture ({len(PNG)} bytes)"


def test_security_headers_and_closed_cors(env: Env) -> None:
    h = env.http
    page = h("GET", "/")
    assert page.status == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "media-src 'self' blob:" in csp
    api = h("GET", "/v1/streams", key=KEY_A)
    for r in (page, api):
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["referrer-policy"] == "no-referrer"
        assert "set-cookie" not in r.headers
    assert api.headers["content-security-policy"].startswith("default-src 'none'")
    pre = h("OPTIONS", "/v1/streams", headers={"Origin": "https://evil.example",
                                               "Access-Control-Request-Method": "GET",
                                               "Access-Control-Request-Headers": "authorization"})
    assert pre.status >= 400 and "access-control-allow-origin" not in pre.headers
    r = h("GET", "/v1/streams", key=KEY_A, headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers
    assert h("GET", "/healthz").json() == {"status": "SERVING"}


def test_cors_opens_only_to_configured_origins() -> None:
    from starlette.middleware.cors import CORSMiddleware

    from episodic.http_api import create_app

    settings = load_settings(env={}, http_cors_origins="https://ops.example.com")

    class Servicer:
        keys: Any = None

    app = create_app(settings, "unix:/nonexistent", Servicer(), None)
    cors = [m for m in app.user_middleware if m.cls is CORSMiddleware]
    assert cors and cors[0].kwargs["allow_origins"] == ["https://ops.example.com"]
    assert cors[0].kwargs["allow_credentials"] is False
    app.state.episodic.close()


def test_watches_alerts_summaries_and_forget(env: Env) -> None:
    h = env.http
    added = h("POST", "/v1/watches", {"query": "a delivery van arrives", "stream_ids": ["kitchen"]}, key=KEY_A)
    assert added.status == 201, added.body
    watch = added.json()["watch"]
    assert watch["kind"] == "match" and watch["key_id"] == kid(KEY_A) and added.json()["webhook_secret"] == ""
    assert [w["id"] for w in h("GET", "/v1/watches", key=KEY_A).json()["watches"]] == [watch["id"]]
    assert h("GET", "/v1/watches", key=KEY_B).json()["watches"] == []
    assert h("POST", "/v1/watches", {"query": "x", "stream_ids": ["station"]}, key=KEY_A).status == 403
    assert h("GET", "/v1/alerts?after_seq=0", key=KEY_A).json() == {"alerts": []}
    assert h("DELETE", f"/v1/watches/{watch['id']}", key=KEY_B).status == 404
    assert h("DELETE", f"/v1/watches/{watch['id']}", key=KEY_A).json() == {"removed": True}
    summaries = h("GET", "/v1/streams/kitchen/summaries", key=KEY_A)
    assert summaries.status == 200 and summaries.json()["stream_id"] == "kitchen"
    assert h("GET", "/v1/streams/station/summaries", key=KEY_A).status == 403
    forgot = h("DELETE", "/v1/streams/scratch", key=KEY_ALL)
    assert forgot.status == 200, forgot.body
    assert forgot.json()["stream_id"] == "scratch" and forgot.json()["whole_stream"] is True
    assert h("GET", "/v1/segments/scratch@000000000000", key=KEY_ALL).status == 404


# -- the commands --------------------------------------------------------------------------------------
def _read_until(proc: subprocess.Popen, prefix: str, lines: list[str]) -> str:
    while True:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"exited ({proc.wait()}) before {prefix!r}; stdout {lines}; stderr {proc.stderr.read()}")
        lines.append(line)
        if line.startswith(prefix):
            return line.strip()


@pytest.mark.parametrize("command", [("serve", "--port", "0", "--http-port", "0"), ("console", "--port", "0", "--no-browser")])
def test_serve_and_console_commands(tmp_path: Path, command: tuple[str, ...]) -> None:
    env = cli_env(tmp_path / "data", {"EPISODIC_STORE": "memory", "EPISODIC_SERVE_WARM_UP": "false",
                                      "BROWSER": "true"})
    env.pop("EPISODIC_API_KEYS_FILE", None)
    proc = subprocess.Popen([sys.executable, "-m", "episodic.cli", *command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        lines: list[str] = []
        if command[0] == "serve":
            assert _read_until(proc, "listening on ", lines)
            url = _read_until(proc, "http on ", lines).removeprefix("http on ")
        else:
            url = _read_until(proc, "console at ", lines).removeprefix("console at ").rstrip("/")
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
        h = Http(url)
        assert h("GET", "/healthz").json() == {"status": "SERVING"}
        assert h("GET", "/v1/streams").json() == {"streams": []}
        assert h("GET", "/").status == 200
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert os.path.exists(tmp_path / "data" / "http_media_secret")
