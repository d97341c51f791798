"""`episodic mcp`'s tools (episodic/mcp_server.py) over the in-memory store and the fake models
(tests/fakes.py), through the MCP SDK's own client: in-process for the tools, their schemas,
their documents and their errors; over streamable HTTP on loopback for the bearer check and a
key's scope in-process (api_keys_file). tests/integration/test_mcp.py runs the real command
over stdio and in front of a real `episodic serve`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from episodic import api_article, api_convert, api_recall, api_records, mcp_schemas
from episodic.components import Components
from episodic.config import Settings
from episodic.core.article import (
    Article,
    ArticleStyle,
    Citation,
    Claim,
    Grounding,
    Section,
    Sentence,
    Step,
)
from episodic.core.errors import InputError
from episodic.core.query import (
    AskResult,
    Evidence,
    LocatedMoment,
    LocateResult,
    Moment,
    Pathway,
    QueryType,
    RecalledStream,
    RecallResult,
)
from episodic.core.records import StreamInfo
from episodic.glance_set import glance_records
from episodic.mcp_server import LocalMemory, RemoteMemory, build_app, http_server
from episodic.server_auth import ApiKeys
from tests.fakes import HashEmbedder, ScriptedLLM

pytestmark = pytest.mark.unit

KEY_1 = "cam1-key-0123456789abcdef0123"  # sees "cam1"
TOOLS = {"ask", "search", "locate", "recall", "list_streams", "list_events", "get_segment", "write_article"}


@pytest.fixture(scope="module")
def components(tmp_path_factory) -> Iterator[Components]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("mcp") / "data", store="memory",
                        relisten_max_memories=0)
    c = Components(settings)
    embedder = HashEmbedder()
    c.embedder = embedder  # cached properties: the fakes stand in for the models
    c.llm = ScriptedLLM()
    c.store.ensure_schema(embedder.dim, 4, models={"embedder": embedder.model_id})
    for sid in ("cam1", "cam2"):
        memories, events, _ = glance_records(embedder, sid, 0.0, 120.0)
        c.store.upsert_memories(memories)
        c.store.upsert_events(events)
        c.store.upsert_stream(StreamInfo(sid, f"{sid}.mp4", 120.0, len(memories), len(events)))
    yield c
    c.close()


def _calls(app: Any, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """The results of ``calls``, in order, through the SDK's client connected in-process."""
    from mcp import Client

    results: list[Any] = []

    async def run() -> None:
        async with Client(app) as client:
            for name, arguments in calls:
                results.append(await client.call_tool(name, arguments))

    anyio.run(run)
    return results


def _text(result: Any) -> str:
    return " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")


# -- listing -------------------------------------------------------------------------------------
def test_tools_are_listed_with_schemas_and_nothing_is_loaded_for_it(tmp_path) -> None:
    from mcp import Client

    memory = LocalMemory(Settings(data_dir=tmp_path, store="memory"))
    tools: dict[str, Any] = {}

    async def run() -> None:
        async with Client(build_app(memory)) as client:
            tools.update({t.name: t for t in (await client.list_tools()).tools})

    anyio.run(run)
    assert set(tools) == TOOLS
    assert memory._servicer is None and memory._components is None  # no store, no model yet
    for tool in tools.values():
        assert tool.output_schema["type"] == "object" and tool.annotations.read_only_hint
        assert "ctx" not in tool.input_schema["properties"]
        assert len(tool.description) > 150  # written for an agent: what it returns, in which units
    assert tools["get_segment"].input_schema["required"] == ["segment_id"]
    assert tools["write_article"].input_schema["properties"]["style"]["enum"] == ["ginger", "cag", "bullet"]
    assert tools["list_events"].input_schema["properties"]["limit"]["maximum"] == 500
    assert "stream seconds" in tools["ask"].description


# -- results: the CLI's documents --------------------------------------------------------------------
def test_results_are_the_cli_json_documents(components) -> None:
    from episodic.services.local import LocalMemoryService

    store = components.store
    segment = store.list_memories("cam2")[1]
    streams, events, by_segment, by_event, found, asked, recalled, article = _calls(
        build_app(LocalMemory(components.settings, components=components)),
        ("list_streams", {}),
        ("list_events", {"stream_id": "cam1", "t_min": 15.0, "limit": 3}),
        ("get_segment", {"segment_id": segment.id}),
        ("get_segment", {"segment_id": segment.id + ".e"}),
        ("search", {"query": "suitcase by the ticket machine", "stream_ids": ["cam1"], "top_k": 2}),
        ("ask", {"question": "Where is the suitcase?", "choices": ["ticket machine", "kiosk"]}),
        ("recall", {"description": "someone says the suitcase is by the ticket machine", "top_k": 2}),
        ("write_article", {"topic": "where the suitcase is", "style": "bullet", "stream_ids": ["cam1"]}),
    )
    assert streams.structured_content == api_records.streams_document(store.list_streams())
    listed = api_records.events_document(store.list_events("cam1", t_min=15.0, with_vectors=False))
    assert events.structured_content == {"events": listed["events"][:3], "truncated": True}
    assert by_segment.structured_content == api_records.segments_document([segment])["segments"][0]
    assert by_event.structured_content == by_segment.structured_content
    local = LocalMemoryService(components)  # not closed: the components are the fixture's
    text, scope, k = api_convert.search_args("suitcase by the ticket machine", ["cam1"], None, None, 2)
    assert found.structured_content == api_convert.search_result_to_dict(local.search(text, scope, k))
    want = api_convert.ask_result_to_dict(local.ask(api_convert.ask_request(
        "Where is the suitcase?", ["ticket machine", "kiosk"])))
    assert {**asked.structured_content, "timings_ms": {}} == {**want, "timings_ms": {}}
    assert asked.structured_content["choice_index"] in (0, 1)
    want = api_recall.recall_result_to_dict(local.recall(api_recall.recall_request(
        "someone says the suitcase is by the ticket machine", top_k=2)))
    assert {**recalled.structured_content, "elapsed_s": 0} == {**want, "elapsed_s": 0}
    want = api_article.article_to_dict(local.write_article(api_article.article_request(
        "where the suitcase is", "bullet", ["cam1"])))
    assert {**article.structured_content, "timings_ms": {}} == {**want, "timings_ms": {}}
    assert article.structured_content["citations"] and "[1]" in article.structured_content["markdown"]


def _same(model: type[BaseModel], doc: dict[str, Any]) -> None:
    assert model.model_validate(doc).model_dump(mode="json") == doc


def test_every_schema_keeps_its_document_whole() -> None:
    """Each output model describes its ``*_to_dict`` document without changing it: a field
    the model does not name (one added to the document later) goes through as it is."""
    ev = Evidence("cam1", "cam1@000000001000", 1.0, 2.5, "speech", "hello", "file:///s.mp4", 0.8)
    _same(mcp_schemas.AskDoc, api_convert.ask_result_to_dict(
        AskResult("hello", 0.7, Pathway.DETAILED, QueryType.AUDIO, 1, [ev], "hi", 0.4, {"fast": 3.0})))
    _same(mcp_schemas.SearchDoc, api_convert.search_result_to_dict(
        [Moment("cam1", 1.0, 2.0, 0.5, "said: hello", "cam1@000000001000", "file:///s.mp4")]))
    _same(mcp_schemas.LocateDoc, api_convert.locate_result_to_dict(LocateResult(
        [LocatedMoment("cam1", 1.5, 1.0, 2.0, 0.9, "on screen: EXIT", 2)], 128, 2, 1.25, "found", ["cam1"],
        ["cam2: no stored video (audio only)"])))
    _same(mcp_schemas.RecallDoc, api_recall.recall_result_to_dict(RecallResult(
        [RecalledStream("cam1", 1.5, 1.0, 2.0, 0.6, {"key_moment": 0.9, "audio": 0.5}, "said", "cam1@000000001000")],
        {"key_moment": "a cat"}, ["cam2: key_moment held, but not audio (0.00)"], 0.2)))
    _same(mcp_schemas.ArticleDoc, api_article.article_to_dict(Article(
        "the day", ArticleStyle.BULLET, "The day",
        [Section("Morning", [Sentence("Tom came [1].", [1])])],
        [Citation(1, "cam1", "cam1@000000001000", 1.0, 2.0, "file:///s.mp4")],
        [Claim("c1", "Tom came.", "speech", "cam1", "cam1@000000001000", 1.0, 2.0, relevance=0.5, support=0.9)],
        2, ["who came"], [Step("Tom came", [Grounding("cam1", 1.0, 2.0)])], False, {"write": 1.0})))
    _same(mcp_schemas.StreamsDoc, {"streams": [{**api_records.streams_document([StreamInfo(
        "cam1", "cam1.mp4", 12.0, 2, 2, metadata={"complete": False, "gaps": [[3.0, 4.0]]})])["streams"][0],
        "storage": {"records": 7}}]})
    doc = {"events": [{"id": "cam1@000000001000.e", "stream_id": "cam1", "segment_id": "cam1@000000001000",
                       "t_start": 1.0, "t_end": 2.0, "summary": "Tom came.", "provisional": False,
                       "thumbnail_url": ""}],
           "truncated": False}
    _same(mcp_schemas.EventsDoc, doc)
    _same(mcp_schemas.SegmentDoc, {**api_records.segment_to_dict(api_records.segment_to_proto(
        _memory())), "something_new": {"a": [1, 2]}})


def _memory() -> Any:
    import numpy as np

    from episodic.core.records import ShortTermMemory, SnippetRef, TranscriptPiece

    return ShortTermMemory("cam1@000000001000", "cam1", 1.0, 9.0, np.ones(4, dtype=np.float32) / 2, [],
                           [TranscriptPiece(1.0, 2.0, "hello")], [],
                           snippets=[SnippetRef("file:///s.mp4", 1.0, 9.0)], metadata={"models": {"asr": "w"}})


# -- errors ----------------------------------------------------------------------------------------
def test_bad_arguments_are_one_line_tool_errors_and_the_server_goes_on(components) -> None:
    results = _calls(
        build_app(LocalMemory(components.settings, components=components)),
        ("search", {"query": "  "}),
        ("search", {"query": "suitcase", "top_k": 0}),
        ("search", {"query": "suitcase", "t_min": 50, "t_max": 10}),
        ("ask", {"question": "x" * 5000}),
        ("ask", {"question": "Where?", "stream_ids": ["cam1 or 1==1"]}),
        ("get_segment", {"segment_id": "cam1@999999999999"}),
        ("get_segment", {"segment_id": "cam1') or ('1'=='1"}),
        ("list_events", {"limit": 0}),
        ("list_events", {"stream_id": "cam 1"}),
        ("list_events", {"t_min": 9, "t_max": 1}),
        ("recall", {}),
        ("locate", {"query": "EXIT", "top_k": 101}),
        ("write_article", {"topic": "the day", "style": "poem"}),
        ("search", {"query": "suitcase", "top_k": "five"}),
        ("list_streams", {}),
    )
    *errors, listed = results
    codes = ["INVALID_ARGUMENT"] * 5 + ["NOT_FOUND"] + ["INVALID_ARGUMENT"] * 6
    for result, code in zip(errors, codes, strict=False):
        assert result.is_error and code in _text(result), (code, _text(result)[:300])
        assert "\n" not in _text(result) and len(_text(result)) < 600
    assert all(r.is_error for r in errors[len(codes):])  # the SDK's own argument check
    assert not listed.is_error and len(listed.structured_content["streams"]) == 2


def test_a_deadline_that_passes_is_a_tool_error(components) -> None:
    (result,) = _calls(build_app(LocalMemory(components.settings, components=components), timeout_s=1e-9),
                       ("ask", {"question": "Where is the suitcase?"}))
    assert result.is_error and "DEADLINE_EXCEEDED" in _text(result), _text(result)


# -- HTTP: the bearer check and a key's scope in-process ------------------------------------------------
@pytest.fixture()
def http_url(components) -> Iterator[str]:
    memory = LocalMemory(components.settings, ApiKeys({KEY_1: ["cam1"]}), components=components)
    server, sock, url = http_server(build_app(memory), memory, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            threading.Event().wait(0.01)
        yield url
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_http_needs_a_key_and_keeps_to_its_streams(http_url, components) -> None:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    cam2 = components.store.list_memories("cam2")[0].id
    out: dict[str, Any] = {}

    async def run() -> None:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        async with httpx2.AsyncClient() as http:
            out["none"] = (await http.post(http_url, json=body)).status_code
            out["wrong"] = (await http.post(http_url, json=body, headers={"Authorization": "Bearer wrong-key-0123456789abcdef"})).status_code
            out["host"] = (await http.post(http_url, json=body, headers={
                "Authorization": f"Bearer {KEY_1}", "Host": "evil.example:80",
                "Accept": "application/json, text/event-stream"})).status_code
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {KEY_1}"}) as http, \
                streamable_http_client(http_url, http_client=http) as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            out["streams"] = await s.call_tool("list_streams", {})
            out["events"] = await s.call_tool("list_events", {"limit": 500})
            out["search"] = await s.call_tool("search", {"query": "backpack by the newspaper kiosk", "top_k": 20})
            out["named"] = await s.call_tool("search", {"query": "backpack", "stream_ids": ["cam2"]})
            out["segment"] = await s.call_tool("get_segment", {"segment_id": cam2})
            out["ask"] = await s.call_tool("ask", {"question": "Where is the backpack?"})

    anyio.run(run)
    assert out["none"] == 401 and out["wrong"] == 401
    assert out["host"] in (400, 403, 421)  # a page's DNS rebinding cannot reach it
    assert [s["stream_id"] for s in out["streams"].structured_content["streams"]] == ["cam1"]
    assert {e["stream_id"] for e in out["events"].structured_content["events"]} == {"cam1"}
    assert {m["stream_id"] for m in out["search"].structured_content["moments"]} == {"cam1"}
    assert out["named"].is_error and "PERMISSION_DENIED" in _text(out["named"])
    assert out["segment"].is_error and f"NOT_FOUND: no segment '{cam2}'" in _text(out["segment"])
    assert {e["stream_id"] for e in out["ask"].structured_content["evidence"]} <= {"cam1"}


def test_remote_memory_accepts_only_its_own_key() -> None:
    open_ = RemoteMemory("127.0.0.1:1")
    keyed = RemoteMemory("127.0.0.1:1", api_key=KEY_1)
    assert not open_.needs_key and keyed.needs_key
    assert keyed.accepts(KEY_1) and not keyed.accepts(KEY_1 + "x") and not keyed.accepts("")
    with pytest.raises(InputError):
        RemoteMemory("no-port")


# -- the command's address rules -------------------------------------------------------------------
@pytest.mark.parametrize("args, said", [
    (["--http", "--host", "0.0.0.0"], "refusing to serve MCP on '0.0.0.0'"),
    (["--http", "--host", "0.0.0.0", "--allow-remote"], "--allow-remote needs --server and --api-key"),
    (["--http", "--host", "0.0.0.0", "--allow-remote", "--server", "127.0.0.1:1"], "--allow-remote needs"),
    (["--port", "9000"], "apply to --http"),
    (["--http", "--api-key", KEY_1], "are for --server"),
])
def test_the_command_refuses_what_would_expose_the_memory(args, said, tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from episodic import cli

    monkeypatch.delenv("EPISODIC_API_KEY", raising=False)
    monkeypatch.delenv("EPISODIC_SERVER", raising=False)
    result = CliRunner().invoke(cli.app, ["mcp", *args, "--data", str(tmp_path)])
    assert isinstance(result.exception, InputError) and said in str(result.exception), result.output
