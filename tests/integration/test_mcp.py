"""`episodic mcp` (issue 18) through the official MCP SDK's client, as an agent's host would
use it: over stdio, spawning `python -m episodic.cli mcp --data DIR` on a memory made by a
real ingest (tools and their schemas listed, list_streams/list_events/search/get_segment/ask
called, bad arguments answered with error results while the server lives on), and over
streamable HTTP in front of a real `episodic serve`, with an API key scoped to one of the two
streams: the other stream is never listed, found, read or answered from.

Two short recordings with different content are ingested once per module, as streams
"kitchen" and "station".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from episodic import samples
from episodic.config import load_settings
from tests.cli_runner import run_cli

pytestmark = pytest.mark.slow  # the module's memory is made by the real models

KEY_KITCHEN = "kitchen-key-0123456789abcdef01"
KEY_STATION = "station-key-0123456789abcdef01"
TOOLS = {"ask", "search", "locate", "recall", "list_streams", "list_events", "get_segment", "write_article"}
APPLES = "Tom put three green apples in the blue bowl."
OXFORD = "The train to Oxford leaves from platform seven."


@pytest.fixture(scope="module")
def memory(tmp_path_factory) -> dict[str, Any]:
    """The data directory, the api keys file and every stream's segment ids."""
    from episodic.components import Components
    from episodic.pipeline import ingest_file

    tmp = tmp_path_factory.mktemp("mcp")
    recordings = {
        "kitchen": ([samples.Scene(8, seed=1, text="KITCHEN")], [samples.Speech(1.0, APPLES)]),
        "station": ([samples.Scene(8, seed=2, text="PLATFORM 7")], [samples.Speech(1.0, OXFORD)]),
    }
    data = tmp / "data"
    components = Components(load_settings(data_dir=data))
    segments: dict[str, list[str]] = {}
    try:
        for sid, (scenes, speech) in recordings.items():
            path = tmp / f"{sid}.mp4"
            samples.make_recording(path, scenes, speech)
            ingest_file(path, sid, components)
            segments[sid] = [m.id for m in components.store.list_memories(sid)]
    finally:
        components.close()
    keys = tmp / "keys.toml"
    keys.write_text(f'"{KEY_KITCHEN}" = ["kitchen"]\n"{KEY_STATION}" = ["station"]\n')
    keys.chmod(0o600)
    assert segments["kitchen"] and segments["station"]
    return {"data": data, "keys": keys, "segments": segments}


def _env(**extra: str) -> dict[str, str]:
    """The children's environment: no EPISODIC_* of ours; no re-listening (slow, and it would
    rewrite the module's memory)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPISODIC_")}
    return {**env, "EPISODIC_RELISTEN_MAX_MEMORIES": "0", **extra}


def _text(result: Any) -> str:
    return " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")


# -- stdio, in-process ---------------------------------------------------------------------------
def test_stdio_lists_typed_tools_answers_and_survives_bad_arguments(memory) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "episodic.cli", "mcp", "--data", str(memory["data"])],
        env=_env(),
    )
    station_segment = memory["segments"]["station"][0]
    out: dict[str, Any] = {}

    async def session() -> None:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                out["tools"] = {t.name: t for t in (await s.list_tools()).tools}
                out["streams"] = await s.call_tool("list_streams", {})
                out["events"] = await s.call_tool("list_events", {"stream_id": "kitchen", "limit": 500})
                out["search"] = await s.call_tool("search", {"query": "the train to Oxford", "top_k": 3})
                out["segment"] = await s.call_tool("get_segment", {"segment_id": station_segment})
                out["event_segment"] = await s.call_tool("get_segment", {"segment_id": station_segment + ".e"})
                # bad arguments: error results, one line each, and the server goes on
                out["empty"] = await s.call_tool("search", {"query": "   "})
                out["top_k"] = await s.call_tool("search", {"query": "apples", "top_k": 1000})
                out["not_a_number"] = await s.call_tool("search", {"query": "apples", "top_k": "many"})
                out["reversed"] = await s.call_tool("list_events", {"t_min": 9, "t_max": 1})
                out["unknown"] = await s.call_tool("get_segment", {"segment_id": "kitchen@999999999999"})
                out["injection"] = await s.call_tool("get_segment", {"segment_id": "x' or 1==1"})
                out["bad_stream"] = await s.call_tool("ask", {"question": "What is in the bowl?", "stream_ids": ["no such/stream"]})
                out["ask"] = await s.call_tool("ask", {"question": "Which platform does the train leave from?"})
                out["after"] = await s.call_tool("list_streams", {})

    anyio.run(session)

    tools = out["tools"]
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.output_schema and tool.input_schema["type"] == "object"
        assert tool.annotations.read_only_hint is True
    assert tools["ask"].input_schema["required"] == ["question"]
    assert set(tools["ask"].input_schema["properties"]) == {"question", "choices", "stream_ids", "t_min", "t_max"}
    assert tools["search"].input_schema["properties"]["top_k"]["maximum"] == 100
    assert set(tools["recall"].input_schema["properties"]) >= {
        "description", "global_impression", "key_moment", "temporal", "audio", "stream_ids", "top_k"}
    assert {"answer", "confidence", "evidence"} <= set(tools["ask"].output_schema["properties"])
    assert "stream seconds" in tools["search"].description

    streams = out["streams"].structured_content["streams"]
    assert [s["stream_id"] for s in streams] == ["kitchen", "station"]
    assert json.loads(_text(out["streams"])) == out["streams"].structured_content  # text = the same JSON

    # list_events is `episodic events --json` (plus whether more matched)
    cli = json.loads(run_cli("events", "--stream-id", "kitchen", "--json", data=memory["data"]).stdout)
    assert out["events"].structured_content == {**cli, "truncated": False}

    moments = out["search"].structured_content["moments"]
    assert moments and moments[0]["stream_id"] == "station", moments
    assert set(moments[0]) >= {"stream_id", "t_start", "t_end", "score", "why", "segment_id"}

    segment = out["segment"].structured_content
    assert segment["id"] == station_segment and "platform" in segment["transcript"].lower()
    assert out["event_segment"].structured_content == segment

    for name, code in [("empty", "INVALID_ARGUMENT"), ("top_k", "INVALID_ARGUMENT"),
                       ("reversed", "INVALID_ARGUMENT"), ("unknown", "NOT_FOUND"),
                       ("injection", "INVALID_ARGUMENT"), ("bad_stream", "INVALID_ARGUMENT")]:
        result = out[name]
        assert result.is_error and code in _text(result), (name, _text(result))
        assert "\n" not in _text(result)
    assert out["not_a_number"].is_error
    assert not out["after"].is_error and out["after"].structured_content == out["streams"].structured_content

    ask = out["ask"].structured_content
    assert not out["ask"].is_error, _text(out["ask"])
    assert "seven" in ask["answer"].lower() or "7" in ask["answer"], ask
    assert {e["stream_id"] for e in ask["evidence"]} >= {"station"}


# -- streamable HTTP, through a server, with a key scoped to one stream -------------------------------
def _started(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """A CLI child and the address on its first stdout line ("listening on ADDRESS")."""
    proc = subprocess.Popen([sys.executable, "-m", "episodic.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        raise AssertionError(f"{args[0]} did not start: {line!r} {proc.stderr.read()[-3000:]}")
    return proc, line.split()[-1]


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return proc.stderr.read()


@pytest.fixture(scope="module")
def mcp_over_http(memory) -> Iterator[tuple[str, str]]:
    """`episodic serve` with the keys file, and `episodic mcp --http` in front of it holding the
    kitchen key; yields the MCP endpoint's URL and the server's address."""
    env = _env(EPISODIC_API_KEYS_FILE=str(memory["keys"]), EPISODIC_GRPC_GRACE_S="1",
               EPISODIC_SERVE_WARM_UP="false")
    serve, address = _started(["serve", "--port", "0", "--data", str(memory["data"])], env)
    try:
        mcp, url = _started(["mcp", "--http", "--port", "0", "--server", address,
                             "--api-key", KEY_KITCHEN], _env())
        try:
            yield url, address
        finally:
            assert "Traceback" not in _stop(mcp)
    finally:
        _stop(serve)


def test_http_through_a_server_keeps_to_the_keys_streams(memory, mcp_over_http) -> None:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    url, _ = mcp_over_http
    station_segment = memory["segments"]["station"][0]
    out: dict[str, Any] = {}

    async def session() -> None:
        headers = {"Authorization": f"Bearer {KEY_KITCHEN}"}
        async with create_mcp_http_client(headers=headers) as http, \
                streamable_http_client(url, http_client=http) as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            out["tools"] = {t.name for t in (await s.list_tools()).tools}
            out["streams"] = await s.call_tool("list_streams", {})
            out["events"] = await s.call_tool("list_events", {})
            out["search"] = await s.call_tool("search", {"query": "the train to Oxford leaves from platform seven", "top_k": 10})
            out["recall"] = await s.call_tool("recall", {"description": "someone says the train to Oxford leaves from platform seven"})
            out["segment"] = await s.call_tool("get_segment", {"segment_id": station_segment})
            out["named"] = await s.call_tool("search", {"query": "Oxford", "stream_ids": ["station"]})
            out["ask"] = await s.call_tool("ask", {"question": "Where does the train to Oxford leave from?"})
        for name, token in (("no_key", None), ("wrong_key", "not-the-key-0123456789abcdef")):
            async with httpx2.AsyncClient() as http:
                reply = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                        headers={"Authorization": f"Bearer {token}"} if token else {})
                out[name] = reply.status_code

    anyio.run(session)

    assert out["tools"] == TOOLS
    assert [s["stream_id"] for s in out["streams"].structured_content["streams"]] == ["kitchen"]
    events = out["events"].structured_content["events"]
    assert events and {e["stream_id"] for e in events} == {"kitchen"}
    assert {m["stream_id"] for m in out["search"].structured_content["moments"]} <= {"kitchen"}
    assert {r["stream_id"] for r in out["recall"].structured_content["results"]} <= {"kitchen"}
    assert not any(line.startswith("station") for line in out["recall"].structured_content["rejected"])
    # another stream's record answers exactly like one that does not exist
    assert out["segment"].is_error and f"NOT_FOUND: no segment '{station_segment}'" in _text(out["segment"])
    assert out["named"].is_error and "PERMISSION_DENIED" in _text(out["named"])
    ask = out["ask"]
    assert not ask.is_error, _text(ask)
    assert {e["stream_id"] for e in ask.structured_content["evidence"]} <= {"kitchen"}
    assert "seven" not in ask.structured_content["answer"].lower(), ask.structured_content
    assert out["no_key"] == 401 and out["wrong_key"] == 401


def test_http_without_its_own_key_passes_each_callers_key_on(mcp_over_http) -> None:
    """`episodic mcp --http --server` without --api-key: one endpoint for several users, each
    call made with the caller's own key, so each sees what that key may see."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    _, address = mcp_over_http
    mcp, url = _started(["mcp", "--http", "--port", "0", "--server", address], _env())
    seen: dict[str, Any] = {}

    async def session(name: str, key: str | None) -> None:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with create_mcp_http_client(headers=headers) as http, \
                streamable_http_client(url, http_client=http) as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            seen[name] = await s.call_tool("list_streams", {})

    try:
        for name, key in (("kitchen", KEY_KITCHEN), ("station", KEY_STATION), ("none", None)):
            anyio.run(session, name, key)
    finally:
        assert "Traceback" not in _stop(mcp)
    for name in ("kitchen", "station"):
        assert [x["stream_id"] for x in seen[name].structured_content["streams"]] == [name]
    assert seen["none"].is_error and "UNAUTHENTICATED" in _text(seen["none"])
