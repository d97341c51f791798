"""``episodic mcp``: the memory as tools for agents, over the Model Context Protocol.

Eight tools (ask, search, locate, recall, list_streams, list_events, get_segment,
write_article) whose results are the JSON documents of the CLI's ``--json`` (made by the
``*_to_dict`` functions only; their schemas are in :mod:`episodic.mcp_schemas`). Every tool
goes through :class:`episodic.client.Client`, so there is one set of rules whoever answers:

* :class:`RemoteMemory`: an `episodic serve` at ``--server``; the API key's scope applies
  exactly as on gRPC (a stream outside it is never listed, searched or answered from);
* :class:`LocalMemory`: this process over ``--data``, by the very servicer `episodic serve`
  runs, called without a socket (:class:`InProcessClient`): the same validation, scoping,
  model turns and error messages. Nothing loads before the first tool call, so ``tools/list``
  answers at once.

A failed call (a bad argument, an unknown id, a deadline, a key that may not read a stream)
is a tool error whose text is one line, ``CODE: message`` as gRPC reports it; the server goes
on serving.

Transports: stdio (what an MCP client spawns), or streamable HTTP at ``http://HOST:PORT/mcp``
(:func:`serve_http`). Over HTTP a caller must send ``Authorization: Bearer KEY`` whenever there
is a key to check: ``--api-key`` (the only one accepted, for a remote memory) or, in-process,
one of ``api_keys_file``'s keys, whose scope then applies to that caller's calls.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import hmac
import json
import threading
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from episodic import api_article, api_convert, api_recall
from episodic.client import Client, RemoteCallError
from episodic.client_inprocess import InProcessClient
from episodic.core.errors import EpisodicError, InputError
from episodic.mcp_schemas import (
    ArticleDoc,
    AskDoc,
    EventsDoc,
    LocateDoc,
    RecallDoc,
    SearchDoc,
    SegmentDoc,
    StreamsDoc,
)

ASK_TIMEOUT_S = 300.0  # the CLI's defaults: a question, and an article (many model calls)
ARTICLE_TIMEOUT_S = 600.0
LIST_TIMEOUT_S = 60.0
EVENTS_LIMIT_MAX = 500  # ListEvents' largest page
MCP_PATH = "/mcp"

INSTRUCTIONS = """\
Episodic memory of recorded video and audio streams (cameras, recordings, live feeds): what was \
seen, said, shown on screen and heard. Every time is in stream seconds: seconds from the start \
of that stream's recording. Start with list_streams to learn the stream ids; search finds \
moments quickly; ask answers a question with the evidence it rests on; get_segment reads a \
moment in full (by a segment_id from any result); recall finds a recording from a vague \
description; locate looks again at the stored video for the exact second something was on \
screen; write_article writes a cited report. A confidence near 0 or an empty result means the \
memory does not hold it: say so rather than guess."""


# -- where calls go ----------------------------------------------------------------------------------
def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


class RemoteMemory:
    """The tools answered by an `episodic serve` through :class:`Client` (one channel, shared
    by every call), with ``api_key``'s scope; over HTTP, callers must then send that same key.
    Without ``api_key``, each HTTP caller's own key goes to the server."""

    def __init__(self, server: str, api_key: str | None = None, ca_cert: Path | None = None,
                 timeout_s: float = LIST_TIMEOUT_S) -> None:
        self._client = Client(server, api_key, ca_cert, timeout_s=timeout_s)
        self._key = _digest(api_key) if api_key else None
        self._opened = False
        self._lock = threading.Lock()
        self.where = f"through {server}"

    @property
    def needs_key(self) -> bool:
        return self._key is not None

    def accepts(self, token: str) -> bool:
        return self._key is not None and hmac.compare_digest(_digest(token), self._key)

    def client(self, authorization: str | None = None) -> Client:
        """The shared client; without ``--api-key``, an HTTP caller's own ``Authorization``
        header is passed on, so the server applies that caller's key and scope (one MCP
        endpoint for several users, each seeing what their key may see)."""
        with self._lock:  # the channel is made on first use: once, not by two calls at once
            if not self._opened:
                self._client._stub()
                self._opened = True
        if self._key is not None or not authorization:
            return self._client
        caller = copy.copy(self._client)  # the same channel, this caller's metadata
        caller._metadata = (("authorization", authorization),)
        return caller

    def close(self) -> None:
        self._client.close()


class LocalMemory:
    """The tools answered in this process over ``settings``' data directory, by the servicer
    `episodic serve` runs (built on the first call: its models load when a call needs them).

    ``keys``: who may call and see what (``server_auth.ApiKeys``); with none, every call sees
    every stream. Each call is made as the caller whose ``Authorization`` header it carries."""

    def __init__(self, settings: Any, keys: Any = None, components: Any = None,
                 timeout_s: float = LIST_TIMEOUT_S) -> None:
        from episodic.server_auth import ApiKeys

        self.settings = settings
        self.keys = keys if keys is not None else ApiKeys({})
        self.timeout_s = timeout_s
        self._components = components
        self._owns_components = components is None
        self._servicer: Any = None
        self._lock = threading.Lock()
        self.where = f"in-process from {settings.data_dir}"

    @property
    def needs_key(self) -> bool:
        return len(self.keys) > 0

    def accepts(self, token: str) -> bool:
        from episodic.server_auth import ApiError

        try:
            self.keys.authenticate((("authorization", f"Bearer {token}"),))
        except ApiError:
            return False
        return True

    def servicer(self) -> Any:
        with self._lock:
            if self._servicer is None:
                from episodic.servicer import EpisodicServicer

                if self._components is None:
                    from episodic.components import Components

                    self._components = Components(self.settings)
                self._servicer = EpisodicServicer(
                    self._components, self.keys, self.settings.grpc_max_concurrent_asks,
                    self.settings.grpc_max_queued_asks)
            return self._servicer

    def client(self, authorization: str | None = None) -> Client:
        return InProcessClient(self.servicer(), authorization, timeout_s=self.timeout_s)

    def close(self) -> None:
        with self._lock:
            components, self._components = self._components, None
            self._servicer = None
        if components is not None and self._owns_components:
            components.close()


# -- the tools -----------------------------------------------------------------------------------------
StreamIds = Annotated[
    list[str] | None,
    Field(description="Only these streams (ids from list_streams). Omit for every stream you may see."),
]
TMin = Annotated[
    float | None,
    Field(description="Only memory that ends at or after this time, in stream seconds (from the start of the stream's recording)."),
]
TMax = Annotated[
    float | None,
    Field(description="Only memory that starts at or before this time, in stream seconds."),
]


def _top_k(what: str, default: int) -> Any:
    return Annotated[int, Field(description=f"How many {what} at most (1-100; default {default}).",
                                json_schema_extra={"minimum": 1, "maximum": 100})]


Count5 = _top_k("moments", 5)
Count3 = _top_k("moments", 3)
Recordings5 = _top_k("recordings", 5)


def _count(top_k: int) -> int:
    """top_k as the schema says (1-100): 0 is no request for the default here, as in proto3."""
    from episodic.core import validation

    return validation.top_k(top_k)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _call(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A tool's work: its document (a dict, which the SDK checks against the tool's declared
    output model and sends both as structured content and as JSON text). A failure a caller
    can act on becomes a one-line tool error
    (``CODE: message``, as gRPC reports it). Anything else is the SDK's to report as a crash
    (a generic message; the traceback stays in the server's log)."""
    try:
        return run()
    except RemoteCallError as exc:
        # "<server>: CODE: details"; the server's address is no news to the agent
        raise ToolError(_one_line(str(exc).partition(": ")[2] or str(exc))) from None
    except InputError as exc:
        raise ToolError(_one_line(f"INVALID_ARGUMENT: {exc}")) from None
    except EpisodicError as exc:
        raise ToolError(_one_line(str(exc))) from None


def _authorization(ctx: Context | None) -> str | None:
    """The HTTP request's Authorization header (None over stdio)."""
    try:
        headers = ctx.headers if ctx is not None else None
    except ValueError:  # not inside a request
        return None
    return headers.get("authorization") if headers else None


ASK_HELP = """Answer a question from the memory: what was seen, said, shown on screen or heard in the recorded streams.

Returns the answer (short, then its source quoted: `Milo (heard: "This is Milo, our cat.", garden-cam, 3.0-5.1 s)`), confidence 0-1 (calibrated; under about 0.3 treat it as unsure; 0 with "I found nothing about that in memory" means the memory does not hold it), pathway, query_type, and evidence: each piece with stream_id, segment_id (get_segment reads it), t_start/t_end in stream seconds, modality and the text used. With choices, exactly one option is picked: choice_index (0-based). Narrow with stream_ids and t_min/t_max. Takes seconds (the first call also loads the models); use search when you only need where/when."""

SEARCH_HELP = """Find the moments that match a description, best first, without composing an answer (fast: well under a second; a search for something said that no moment quotes listens again to the sentences that sound like it, 1-3 s).

Returns moments: stream_id, t_start/t_end in stream seconds, score (similarity, higher is better), why (what matched, quoted from the memory; "heard again" when a sentence was re-transcribed with the query as a hint), segment_id (get_segment reads the moment in full) and snippet_uri (the stored clip). An empty list means nothing matched."""

LOCATE_HELP = """Find the exact second something was on screen by looking again at the stored video frames (not at what the memory wrote). With the default offline looker it can find written text (signs, slides, captions) and whole-frame colours; with a vision model, anything visible.

Returns moments: stream_id, t (the second it was seen, stream seconds), t_start/t_end, confidence, why (what was seen); plus frames_examined, streams_looked, not_seen (streams that could not be looked at, with the reason, e.g. audio only) and stopped (why the search ended). No moments means it was not seen in the frames looked at. Slow (seconds to a minute): give stream_ids and t_min/t_max (from search) when you can."""

RECALL_HELP = """Find a recording, and the moment in it, from a half-remembered description.

Give a free-text description (it is split into facets), or the facets themselves: global_impression (what the whole recording was like: "a cheerful cooking vlog"), key_moment (one moment: "a cat jumps onto the counter"), temporal (what came before/after it, or at the start/end: "then they talk about the oven"), audio (words said or sounds: "someone says forty minutes", "music at the start"). Every candidate stream is checked against every facet given.

Returns results, best first: stream_id, t (the key moment, stream seconds), t_start/t_end, confidence (a result marked "weak" in why rests on poor evidence; "partial match" means no stream held every facet), facets (each facet's score), why, segment_id; also facets (what each was searched as) and rejected (streams that failed a facet, and which). No results is not an error."""

LIST_STREAMS_HELP = """List the recorded streams in the memory (those you may see).

Returns streams: stream_id (use it in stream_ids), source, t_end (how far its memory reaches: its length in stream seconds), segments and events (counts), updated_at (Unix time), complete (false while a live stream is still being recorded; null when not known) and gaps (stretches with no recording, stream seconds)."""

LIST_EVENTS_HELP = """List the memory's events in (stream, time) order: one sentence summarising each stored segment. Good for an overview of what happened when.

Returns events: id, stream_id, segment_id (get_segment reads it), t_start/t_end in stream seconds, summary and provisional (true while a live stream's memory of it may still change); truncated is true when more events match than limit (narrow t_min/t_max or raise limit)."""

GET_SEGMENT_HELP = """Read one stored segment (a few seconds of a stream) in full, by its segment id ("<stream>@<milliseconds>", as in segment_id of any result) or an event id (ending ".e").

Returns id, stream_id, t_start/t_end (stream seconds), transcript and transcript_pieces (what was said, with times), visual_text (what the key frames showed, as described), ocr_text (text read on screen), keyframe_times, snippets (the stored clips: uri, t_start/t_end, content_type) and the models that made it. An unknown id (or one outside your streams) is an error NOT_FOUND."""

ARTICLE_HELP = """Write a cited article (Markdown) about a topic from the memory of one or more streams: the topic is split into sub-queries, moments are retrieved and fused, claims are extracted and checked against the evidence (unsupported ones dropped), and every sentence cites the moments [n] it rests on.

style: ginger (default: claims clustered, ranked, summarised into prose), cag (one synthesis pass) or bullet (the checked claims as a cited list; fastest). Returns markdown (the article), title, sections (sentences with their citation numbers), citations (n: stream_id, segment_id, t_start/t_end stream seconds, snippet_uri), claims, sub_queries and thin_evidence (true: the memory holds little about it, and the article says so). Slow: often a minute or more."""


def build_app(memory: Any, timeout_s: float | None = None) -> MCPServer:
    """The MCP server of ``memory`` (a :class:`RemoteMemory` or :class:`LocalMemory`);
    ``timeout_s`` is every call's deadline (default: 300 s, 600 s for an article)."""
    ask_s = timeout_s or ASK_TIMEOUT_S
    article_s = timeout_s or ARTICLE_TIMEOUT_S
    app = MCPServer("episodic", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING")
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    def client(ctx: Context | None) -> Client:
        return memory.client(_authorization(ctx))

    @app.tool(description=ASK_HELP, annotations=reads, structured_output=True)
    def ask(
        ctx: Context,
        question: Annotated[str, Field(description="The question, in words.")],
        choices: Annotated[list[str] | None, Field(description="Multiple-choice options, in order: the answer is exactly one of them.")] = None,
        stream_ids: StreamIds = None,
        t_min: TMin = None,
        t_max: TMax = None,
    ) -> AskDoc:
        def run() -> dict[str, Any]:
            req = api_convert.ask_request(question, choices or (), stream_ids or (), t_min, t_max, 0, ask_s)
            return api_convert.ask_result_to_dict(client(ctx).ask(req))

        return _call(run)

    @app.tool(description=SEARCH_HELP, annotations=reads, structured_output=True)
    def search(
        ctx: Context,
        query: Annotated[str, Field(description="What to look for, in words.")],
        stream_ids: StreamIds = None,
        t_min: TMin = None,
        t_max: TMax = None,
        top_k: Count5 = 5,
    ) -> SearchDoc:
        def run() -> dict[str, Any]:
            text, scope, k = api_convert.search_args(query, stream_ids or (), t_min, t_max, _count(top_k))
            return api_convert.search_result_to_dict(client(ctx).search(text, scope, k, deadline_s=ask_s))

        return _call(run)

    @app.tool(description=LOCATE_HELP, annotations=reads, structured_output=True)
    def locate(
        ctx: Context,
        query: Annotated[str, Field(description="What was shown, in words (on-screen text, a colour, a thing).")],
        stream_ids: Annotated[list[str] | None, Field(description="Look at these streams (at most 4 are looked at). Omit: the streams the memory points at.")] = None,
        t_min: TMin = None,
        t_max: TMax = None,
        top_k: Count3 = 3,
    ) -> LocateDoc:
        def run() -> dict[str, Any]:
            req = api_convert.locate_request(query, stream_ids or (), t_min, t_max, 0, _count(top_k), ask_s)
            return api_convert.locate_result_to_dict(client(ctx).locate(req))

        return _call(run)

    @app.tool(description=RECALL_HELP, annotations=reads, structured_output=True)
    def recall(
        ctx: Context,
        description: Annotated[str, Field(description="What you remember, in words (may be empty when a facet is given).")] = "",
        global_impression: Annotated[str, Field(description="What the whole recording was like.")] = "",
        key_moment: Annotated[str, Field(description="One moment in it.")] = "",
        temporal: Annotated[str, Field(description="What came before or after the key moment, or at the start/end.")] = "",
        audio: Annotated[str, Field(description="What was heard: words said, or sounds.")] = "",
        stream_ids: StreamIds = None,
        t_min: TMin = None,
        t_max: TMax = None,
        top_k: Recordings5 = 5,
    ) -> RecallDoc:
        def run() -> dict[str, Any]:
            req = api_recall.recall_request(description, global_impression, key_moment, temporal, audio,
                                            stream_ids or (), t_min, t_max, _count(top_k), ask_s)
            return api_recall.recall_result_to_dict(client(ctx).recall(req))

        return _call(run)

    @app.tool(description=LIST_STREAMS_HELP, annotations=reads, structured_output=True)
    def list_streams(ctx: Context) -> StreamsDoc:
        def run() -> dict[str, Any]:
            return {"streams": [s.to_dict() for s in client(ctx).list_streams()]}

        return _call(run)

    @app.tool(description=LIST_EVENTS_HELP, annotations=reads, structured_output=True)
    def list_events(
        ctx: Context,
        stream_id: Annotated[str | None, Field(description="Only this stream. Omit for every stream you may see.")] = None,
        t_min: TMin = None,
        t_max: TMax = None,
        limit: Annotated[int, Field(description=f"At most this many events (1-{EVENTS_LIMIT_MAX}; default 100).",
                                    json_schema_extra={"minimum": 1, "maximum": EVENTS_LIMIT_MAX})] = 100,
    ) -> EventsDoc:
        def run() -> dict[str, Any]:
            if isinstance(limit, bool) or not 1 <= limit <= EVENTS_LIMIT_MAX:
                raise InputError(f"limit must be an integer from 1 to {EVENTS_LIMIT_MAX}, got {limit!r}")
            pages = client(ctx).list_events(stream_id, t_min, t_max,
                                            page_size=min(limit + 1, EVENTS_LIMIT_MAX))
            events = list(islice(pages, limit + 1))  # one more than asked for: were there more?
            return {"events": [e.to_dict() for e in events[:limit]], "truncated": len(events) > limit}

        return _call(run)

    @app.tool(description=GET_SEGMENT_HELP, annotations=reads, structured_output=True)
    def get_segment(
        ctx: Context,
        segment_id: Annotated[str, Field(description='A segment id ("<stream>@<milliseconds>") or an event id (ending ".e").')],
    ) -> SegmentDoc:
        def run() -> dict[str, Any]:
            return client(ctx).get_segment(segment_id).to_dict()

        return _call(run)

    @app.tool(description=ARTICLE_HELP, annotations=reads, structured_output=True)
    def write_article(
        ctx: Context,
        topic: Annotated[str, Field(description="What the article should be about, in words.")],
        style: Annotated[Literal["ginger", "cag", "bullet"], Field(description="ginger (prose, default), cag or bullet (fastest).")] = "ginger",
        stream_ids: StreamIds = None,
        t_min: TMin = None,
        t_max: TMax = None,
    ) -> ArticleDoc:
        def run() -> dict[str, Any]:
            req = api_article.article_request(topic, style, stream_ids or (), t_min, t_max, None, 0, article_s)
            return api_article.article_to_dict(client(ctx).write_article(req))

        return _call(run)

    return app


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("episodic")
    except PackageNotFoundError:
        return ""


# -- transports ----------------------------------------------------------------------------------------
def serve_stdio(app: MCPServer) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin (or Ctrl-C). While it runs, the
    SDK points file descriptor 1 at stderr, so nothing a library prints can corrupt the protocol."""
    with contextlib.suppress(KeyboardInterrupt):  # a person at a terminal ended it: nothing to say
        app.run("stdio")


def _bearer(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers") or ():
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            if scheme.lower() != "bearer":
                return None
            return token.strip() or None
    return None


class BearerGate:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer KEY`` that ``accepts``
    is refused with 401 before MCP sees it (lifespan events pass through)."""

    def __init__(self, app: Any, accepts: Callable[[str], bool]) -> None:
        self.app, self.accepts = app, accepts

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        if token is not None and self.accepts(token):
            await self.app(scope, receive, send)
            return
        said = "invalid API key" if token is not None else "missing API key: send `Authorization: Bearer <key>`"
        body = json.dumps({"error": said}).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="episodic"')]})
        await send({"type": "http.response.body", "body": body})


def is_loopback(host: str) -> bool:
    from episodic.server import _is_loopback

    return _is_loopback(host)


def _listen(host: str, port: int) -> Any:
    import socket

    try:
        found = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise InputError(f"cannot listen on {host!r}: {exc.strerror or exc}") from None
    # "localhost": IPv4 first, where most clients try it first
    family, *_, address = min(found, key=lambda info: info[0] != socket.AF_INET)
    try:
        return socket.create_server(address, family=family)
    except OSError as exc:
        raise EpisodicError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def http_server(app: MCPServer, memory: Any, host: str, port: int) -> tuple[Any, Any, str]:
    """A uvicorn server of MCP over streamable HTTP, its listening socket and its URL
    (``http://HOST:PORT/mcp``); ``server.run(sockets=[sock])`` serves until ``should_exit``
    (or SIGINT/SIGTERM in the main thread). On loopback the Host and Origin headers must be
    local too (no DNS rebinding from a web page); when ``memory`` has a key to check, every
    request must carry one it accepts."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    shown = f"[{host.strip('[]')}]" if ":" in host else host
    security = None
    if is_loopback(host):
        names = ["127.0.0.1", "localhost", "[::1]"]
        if shown not in names:
            names.append(shown)
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{n}:*" for n in names],
            allowed_origins=[f"http://{n}:*" for n in names],
        )
    asgi: Any = app.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security, host=host)
    if memory.needs_key:
        asgi = BearerGate(asgi, memory.accepts)
    sock = _listen(host, port)
    server = uvicorn.Server(uvicorn.Config(asgi, log_level="warning", access_log=False, lifespan="on"))
    return server, sock, f"http://{shown}:{sock.getsockname()[1]}{MCP_PATH}"


def serve_http(app: MCPServer, memory: Any, host: str, port: int,
               on_ready: Callable[[str], None] | None = None) -> None:
    """Serve MCP over streamable HTTP (:func:`http_server`) until SIGINT or SIGTERM;
    ``on_ready(url)`` once it listens."""
    server, sock, url = http_server(app, memory, host, port)
    if on_ready is not None:
        on_ready(url)
    server.run(sockets=[sock])
