"""``episodic watch``: standing queries (add, list, remove) and their alerts (tail), on the
local data directory or, with ``--server``, through an ``episodic serve`` (API-key scoped)."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from episodic.cli_app import ConfigOpt, DataOpt, JsonOpt, _print_json, err
from episodic.cli_query import ApiKeyOpt, CaCertOpt, ServerOpt
from episodic.core.watches import WATCH_KINDS, Alert, Watch

WATCH_HELP = """Standing queries: a question asked once and answered every time a memory forms (ingest, worker).

Kinds: match (each new memory that matches), first (the first match on a stream per day, or --period ever), again (it recurs: alerts from the 2nd occurrence within --within, default 7d, with its count), absent (nothing matched for --within of stream time, or by --by HH:MM local time each day), order (QUERY and then --then QUERY2 within --within, default 1h).

A memory matches when its best piece of evidence (what was said, read on screen, seen, heard, its summary) scores at least watch_min_score with the scorer `episodic search` ranks with. Alerts cite the event, segment and snippet, carry a confidence, are kept in the alert log (watches.sqlite3 in the data directory) once each, and go to `episodic watch tail`, the WatchAlerts RPC, the Kafka alerts topic (worker) and the watch's --webhook (POST, JSON, HMAC-SHA256 signed with the secret printed once by `watch add`)."""

app = typer.Typer(help=WATCH_HELP, no_args_is_help=True)

KindOpt = Annotated[str, typer.Option("--kind", help=f"One of: {', '.join(WATCH_KINDS)}.")]
WithinOpt = Annotated[str | None, typer.Option(
    "--within", help="A duration (90s, 10m, 2h, 7d): absent's quiet window, again's counting window, order's largest gap.")]


def _local(data: Any, config: Any) -> Any:
    from episodic.api_watch import Watches
    from episodic.cli_app import _settings
    from episodic.memory.watch_store import SqliteWatchStore

    s = _settings(data, config)
    store = SqliteWatchStore(s.watches.resolved_watch_db(s.data_dir))
    return Watches(lambda: store), store


def _client(server: str, api_key: str | None, ca_cert: Any) -> Any:
    from episodic.client import Client

    return Client(server, api_key=api_key, ca_cert=ca_cert)


def _fail(exc: Exception) -> typer.Exit:
    err.print(f"[red]error:[/red] {escape(str(exc))}")
    return typer.Exit(2)


@app.command("add")
def add(
    query: Annotated[str, typer.Argument(help="What to watch for, in words: \"a delivery van arrives\".")],
    stream_id: Annotated[list[str] | None, typer.Option("--stream-id", help="Only this stream; repeat for several. Default: every stream (the key may see).")] = None,
    kind: KindOpt = "match",
    within: WithinOpt = None,
    by: Annotated[str, typer.Option("--by", help="absent: a local time of day HH:MM by which a match is expected, every day.")] = "",
    then: Annotated[str, typer.Option("--then", help="order: what must happen after QUERY.")] = "",
    period: Annotated[str, typer.Option("--period", help="first: day (default) or ever.")] = "day",
    cooldown: Annotated[str, typer.Option("--cooldown", help="match/again: repeats closer than this (stream time) are one occurrence.")] = "60s",
    webhook: Annotated[str, typer.Option("--webhook", help="POST each alert here (http:// or https://), signed.")] = "",
    server: ServerOpt = None, api_key: ApiKeyOpt = None, ca_cert: CaCertOpt = None,
    data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Register a standing query."""
    from episodic.api_watch import ScopeDenied
    from episodic.core.errors import EpisodicError

    watch = Watch(id="", query=query, kind=kind, stream_ids=list(stream_id or []), within_s=within, by_time=by,
                  then=then, period=period, cooldown_s=cooldown, webhook_url=webhook)
    try:
        if server:
            with _client(server, api_key, ca_cert) as c:
                stored, secret = c.add_watch(_checked(watch))
        else:
            watches, store = _local(data, config)
            try:
                stored, secret = watches.add(watch, "local", None)
            finally:
                store.close()
    except (EpisodicError, ScopeDenied) as exc:
        raise _fail(exc) from None
    doc = {"watch": stored.public(), "webhook_secret": secret}
    if json_out:
        _print_json(doc)
        return
    err.print(f"watch {stored.id} added: {stored.kind} {stored.query!r}")
    if secret:
        err.print(f"webhook signing secret (shown only now): {secret}")


def _checked(watch: Watch) -> Watch:
    """Validate before sending, so a typo fails at once with the same message as on a server."""
    from episodic.core.records import validate_stream_id
    from episodic.core.watches import validate_watch

    return validate_watch(watch, check_stream=validate_stream_id)


@app.command("list")
def list_(
    server: ServerOpt = None, api_key: ApiKeyOpt = None, ca_cert: CaCertOpt = None,
    data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """List the watches (through --server: the API key's own)."""
    from episodic.core.errors import EpisodicError

    try:
        if server:
            with _client(server, api_key, ca_cert) as c:
                rows = c.list_watches()
        else:
            watches, store = _local(data, config)
            try:
                rows = watches.visible("local", None)
            finally:
                store.close()
    except EpisodicError as exc:
        raise _fail(exc) from None
    if json_out:
        _print_json({"watches": [w.public() for w in rows]})
        return
    if not rows:
        err.print("no watches")
        return
    table = Table("id", "kind", "query", "streams", "within", "webhook")
    for w in rows:
        extra = f" → {w.then}" if w.then else ""
        table.add_row(w.id, w.kind, escape(w.query + extra), ", ".join(w.stream_ids) or "all",
                      f"{w.within_s:.0f} s" if w.within_s else (w.by_time or ""), "yes" if w.webhook_url else "")
    Console().print(table)


@app.command("remove")
def remove(
    watch_id: Annotated[str, typer.Argument(help="The watch's id (from `watch list`).")],
    server: ServerOpt = None, api_key: ApiKeyOpt = None, ca_cert: CaCertOpt = None,
    data: DataOpt = None, config: ConfigOpt = None,
) -> None:
    """Remove a watch (its alerts stay in the log)."""
    from episodic.api_watch import WatchNotFound
    from episodic.core.errors import EpisodicError

    try:
        if server:
            with _client(server, api_key, ca_cert) as c:
                c.remove_watch(watch_id)
        else:
            watches, store = _local(data, config)
            try:
                watches.remove(watch_id, "local", None)
            finally:
                store.close()
    except (EpisodicError, WatchNotFound) as exc:
        raise _fail(exc) from None
    err.print(f"watch {watch_id} removed")


def _line(a: Alert) -> str:
    return (f"#{a.seq} {time.strftime('%H:%M:%S', time.localtime(a.created_at))} [{a.kind}] {a.stream_id} "
            f"t={a.t_start:.1f}-{a.t_end:.1f} s conf {a.confidence:.2f}: {a.message}")


@app.command("tail")
def tail(
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing alerts as they are raised (Ctrl-C stops).")] = False,
    after: Annotated[int, typer.Option("--after", help="Only alerts after this log position (#seq).", min=0)] = 0,
    watch_id: Annotated[list[str] | None, typer.Option("--watch-id", help="Only this watch's alerts; repeat for several.")] = None,
    server: ServerOpt = None, api_key: ApiKeyOpt = None, ca_cert: CaCertOpt = None,
    data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """Print alerts, oldest first (with --json: one JSON object per line)."""
    from episodic.core.errors import EpisodicError

    def emit(a: Alert) -> None:
        if json_out:
            print(json.dumps(a.to_dict()), flush=True)
        else:
            print(_line(a), flush=True)

    try:
        if server:
            with _client(server, api_key, ca_cert) as c:
                for a in c.watch_alerts(after, follow=follow, watch_ids=watch_id):
                    emit(a)
            return
        watches, store = _local(data, config)
        try:
            seq = after
            while True:
                batch, read_to = watches.alerts(seq, "local", None, watch_id)
                for a in batch:
                    emit(a)
                if read_to == seq:  # the log has nothing newer
                    if not follow:
                        return
                    time.sleep(0.5)
                seq = read_to
        finally:
            store.close()
    except KeyboardInterrupt:
        return
    except EpisodicError as exc:
        raise _fail(exc) from None
