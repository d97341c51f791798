"""``episodic mcp``: the memory as tools for agents over the Model Context Protocol (stdio, or
streamable HTTP with ``--http``), answered in-process from ``--data`` or by an `episodic serve`
(``--server``); see :mod:`episodic.mcp_server`."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer

from episodic.cli_app import ConfigOpt, DataOpt, _quiet_libraries, _settings, err
from episodic.cli_query import ApiKeyOpt, CaCertOpt, ServerOpt
from episodic.core.errors import InputError

commands = typer.Typer()  # merged into the app by episodic.cli

DEFAULT_HTTP_PORT = 8765

MCP_HELP = """Serve the memory as tools for agents over the Model Context Protocol: ask, search, locate, recall, list_streams, list_events, get_segment and write_article, each with typed input and output schemas; results are the JSON documents of the CLI's --json, times in stream seconds.

Transport: stdio by default (an MCP client starts `episodic mcp` and talks on its stdin/stdout; nothing else is written to stdout), or streamable HTTP at http://HOST:PORT/mcp with --http (prints `listening on URL` on stdout once it accepts calls).

Backend: without --server, in this process from --data (models load on the first call that needs them); with --server, through that `episodic serve`, with --api-key's scope exactly as on gRPC (streams outside it are never listed or answered from).

Access over HTTP: loopback only (127.0.0.1) unless --allow-remote, which needs --server and --api-key. Callers must send `Authorization: Bearer KEY` when there is a key to check: --api-key itself (through --server), or in-process one of api_keys_file's keys, whose streams then bound that caller's calls.
"""


@commands.command(help=MCP_HELP)
def mcp(
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")] = False,
    host: Annotated[str | None, typer.Option("--host", help="With --http: the address to listen on. Default 127.0.0.1.")] = None,
    port: Annotated[int | None, typer.Option("--port", help=f"With --http: the port. Default {DEFAULT_HTTP_PORT}; 0 picks a free one.", min=0, max=65535)] = None,
    allow_remote: Annotated[bool, typer.Option("--allow-remote", help="With --http: allow a non-loopback --host (needs --server and --api-key; callers must send the key).")] = False,
    server: ServerOpt = None,
    api_key: ApiKeyOpt = None,
    ca_cert: CaCertOpt = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Every call's deadline in seconds. Default 300 (600 for write_article).", min=0.001)] = None,
    data: DataOpt = None,
    config: ConfigOpt = None,
) -> None:
    if not http and (host is not None or port is not None or allow_remote):
        raise InputError("--host, --port and --allow-remote apply to --http (stdio has no address)")
    given_key = api_key is not None and api_key != os.environ.get("EPISODIC_API_KEY")
    if not server and (given_key or ca_cert is not None):
        # an HTTP endpoint the user believes guarded by --api-key must not be open instead
        raise InputError("--api-key and --ca-cert are for --server; in-process over --http, "
                         "api_keys_file's keys guard the endpoint")
    from episodic.mcp_server import is_loopback

    host = host or "127.0.0.1"
    if http and not is_loopback(host):
        if not allow_remote:
            raise InputError(
                f"refusing to serve MCP on {host!r}: anyone who can reach it could read the memory. "
                "Bind 127.0.0.1, or give --allow-remote with --server and --api-key (callers then "
                "send that key)")
        if not server or not api_key:
            raise InputError("--allow-remote needs --server and --api-key: a remote caller is then "
                             "held to that key's streams and must send the key")
    memory = _memory(server, api_key, ca_cert, timeout, data, config, http)
    from episodic import mcp_server

    app = mcp_server.build_app(memory, timeout)
    try:
        if not http:
            err.print(f"episodic mcp: MCP on stdio, {memory.where}", highlight=False, soft_wrap=True)
            mcp_server.serve_stdio(app)
            return

        def ready(url: str) -> None:
            sys.stdout.write(f"listening on {url}\n")
            sys.stdout.flush()
            access = "callers must send an API key" if memory.needs_key else "no API key: open to anyone on this machine"
            err.print(f"MCP over streamable HTTP, {memory.where}; {access}; Ctrl-C or SIGTERM stops",
                      highlight=False, soft_wrap=True)

        mcp_server.serve_http(app, memory, host, DEFAULT_HTTP_PORT if port is None else port, ready)
    finally:
        memory.close()


def _memory(server: str | None, api_key: str | None, ca_cert: Any, timeout: float | None,
            data: Any, config: Any, http: bool) -> Any:
    """Where the tools' calls go: the `episodic serve` at ``server``, or this process."""
    from pathlib import Path

    from episodic import mcp_server

    list_s = min(timeout, mcp_server.LIST_TIMEOUT_S) if timeout else mcp_server.LIST_TIMEOUT_S
    if server:
        return mcp_server.RemoteMemory(server, api_key, ca_cert, timeout_s=list_s)
    settings = _settings(data, config)
    if not settings.milvus_uri and not Path(settings.data_dir).is_dir():
        # a mistyped --data is not an empty memory
        raise InputError(f"no data directory at {settings.data_dir}: check --data / EPISODIC_DATA "
                         "(`episodic ingest FILE` creates it)")
    _quiet_libraries()
    from episodic.server_auth import ApiKeys, load_api_keys

    # over stdio the caller is whoever started this process: it reads --data as they could;
    # over HTTP api_keys_file's keys decide who may call and see what, as on gRPC
    keys = load_api_keys(settings) if http else ApiKeys({})
    return mcp_server.LocalMemory(settings, keys, timeout_s=list_s)
