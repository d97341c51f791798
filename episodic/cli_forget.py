"""Forgetting on purpose (issue 17): ``episodic forget``, ``episodic retention``, ``episodic gc``
(see :mod:`services.forgetting` for what is promised, and README "Forgetting and retention")."""

from __future__ import annotations

import getpass
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from episodic.cli_app import (
    ConfigOpt,
    DataOpt,
    JsonOpt,
    _print_json,
    _quiet_libraries,
    _settings,
    err,
)
from episodic.cli_query import ApiKeyOpt, CaCertOpt, ServerOpt, TimeoutOpt
from episodic.core.errors import InputError

commands = typer.Typer()  # merged into the app by episodic.cli

FORGET_HELP = """Forget a stream, or a stretch of it, for good: its memories, events, E_i, frame features and snippet files go from every collection and from disk.

Without --t-min/--t-max the whole stream goes, with its overviews, its listing and a live stream's checkpoint; that asks first in a terminal, and needs --yes otherwise. With a range, every memory that overlaps the range from --t-min to --t-max (both ends included: a memory ending exactly at --t-min counts) goes whole, with its events and snippets (nothing is cut in two): the rule of every time filter here (--t-min/--t-max of ask, search, recall). One bound alone reaches the stream's start or its end. The stream's overviews are then recomposed from what remains and its listing's counts corrected.

Every forget is recorded in the audit log (<data>/forgetting/audit.jsonl): the stream, the range, when, who (the API key's id through --server, local:<user> here), the counts; never what was forgotten. --audit lists it and forgets nothing.

Idempotent and crash-safe: running it again finds nothing more to forget, and a forget that was killed half-way is finished by the next forget, `episodic gc`, or the sweep of `serve`/`worker`. A worker writing the stream at the same time does not bring the forgotten stretch back (README "Forgetting and retention").

--json prints {"audit_id", "stream_id", "whole_stream", "t_min", "t_max", "counts": {memories, events, vectors, frames, overviews, streams}, "records", "snippet_files", "overviews_recomposed", "at", "finished_at", "recovered"}, the same in-process and through --server. A stream that is not there (or that the API key does not cover) is an error (exit 2)."""

TMinForget = Annotated[float | None, typer.Option("--t-min", help="Forget memories ending at or after this stream time (s).")]
TMaxForget = Annotated[float | None, typer.Option("--t-max", help="Forget memories starting at or before this stream time (s).")]


def _who() -> str:
    try:
        return f"local:{getpass.getuser()}"
    except Exception:  # no user name in this environment (a container without passwd entry)
        return "local"


def _when(t: Any) -> str:
    if not isinstance(t, (int, float)):
        return "—"
    return datetime.fromtimestamp(float(t), tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _range(t_min: Any, t_max: Any, whole: bool) -> str:
    if whole:
        return "whole stream"
    lo = "start" if t_min is None else f"{t_min:g} s"
    hi = "end" if t_max is None else f"{t_max:g} s"
    return f"{lo} – {hi}"


def _human_bytes(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def _components(data: Path | None, config: Path | None) -> Any:
    settings = _settings(data, config)
    if not settings.milvus_uri and not Path(settings.data_dir).is_dir():
        raise InputError(f"no data directory at {settings.data_dir}: check --data / EPISODIC_DATA")
    _quiet_libraries()
    from episodic.components import Components

    return Components(settings)


def _confirm_whole(stream_id: str, yes: bool) -> None:
    if yes:
        return
    if not (sys.stdin.isatty() and err.is_terminal):
        raise InputError(
            f"forgetting the whole stream {stream_id!r} needs --yes when not run in a terminal "
            "(or give --t-min/--t-max to forget a stretch)"
        )
    if not typer.confirm(
        f"Forget every record of stream {stream_id!r}: its memories, events, snippets, listing and checkpoint?",
        default=False, err=True,
    ):
        err.print("nothing forgotten")
        raise typer.Exit(1)


def _print_report(report: Any, json_out: bool) -> None:
    from episodic.api_forget import forget_report_to_dict

    if json_out:
        _print_json(forget_report_to_dict(report))
        return
    c = report.counts
    recomposed = f" ({report.overviews_recomposed} recomposed)" if report.overviews_recomposed else ""
    listing = ", its listing and checkpoint" if c.get("streams") else ""
    again = " (finishing a forget that had been interrupted)" if report.recovered else ""
    err.print(
        f"forgot {report.stream_id} ({_range(report.t_min, report.t_max, report.whole_stream)}){again}: "
        f"{c.get('memories', 0)} memories, {c.get('events', 0)} events, {c.get('vectors', 0)} E_i, "
        f"{c.get('frames', 0)} frames, {c.get('overviews', 0)} overviews{recomposed}{listing}; "
        f"{report.snippet_files} snippet files; audit {report.audit_id}",
        highlight=False, soft_wrap=True,
    )


def _print_audit(records: list[dict[str, Any]], json_out: bool) -> None:
    if json_out:
        _print_json({"forgets": records})
        return
    if not records:
        err.print("nothing has been forgotten here")
        return
    table = Table("when (UTC)", "stream", "range", "reason", "by", "state", "records", "snippets", "audit id")
    for r in records:
        counts = r.get("counts") or {}
        table.add_row(
            _when(r.get("at")), str(r.get("stream_id")), _range(r.get("t_min"), r.get("t_max"), bool(r.get("whole_stream"))),
            str(r.get("reason", "")), str(r.get("key_id", "")), str(r.get("state")),
            str(sum(counts.values())) if counts else "—", str(r.get("snippet_files", "—")), str(r.get("audit_id")),
        )
    Console().print(table)


@commands.command(help=FORGET_HELP)
def forget(
    stream_id: Annotated[str | None, typer.Option("--stream-id", help="The stream to forget (with --audit: only its entries).")] = None,
    t_min: TMinForget = None,
    t_max: TMaxForget = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Forget a whole stream without asking (needed when not run in a terminal).")] = False,
    audit: Annotated[bool, typer.Option("--audit", help="List the audit log (what was forgotten, when, by whom) and forget nothing.")] = False,
    server: ServerOpt = None,
    api_key: ApiKeyOpt = None,
    ca_cert: CaCertOpt = None,
    timeout: TimeoutOpt = 300.0,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    from episodic.core.records import validate_stream_id
    from episodic.services.forgetting import ForgetBooks, check_forget_range

    if audit:
        if server:
            raise InputError("--audit reads the audit log where it is kept: run it with --data on the server's machine")
        if t_min is not None or t_max is not None:
            raise InputError("--audit lists what was forgotten; it takes no --t-min/--t-max")
        sid = validate_stream_id(stream_id) if stream_id is not None else None
        settings = _settings(data, config)
        _print_audit(ForgetBooks(settings.resolved_forget_dir).audit.records(sid), json_out)
        return
    if stream_id is None:
        raise InputError("name the stream to forget: --stream-id S (and --t-min/--t-max for a stretch of it)")
    sid = validate_stream_id(stream_id)
    lo, hi = check_forget_range(t_min, t_max)
    if lo is None and hi is None:
        _confirm_whole(sid, yes)
    if server:
        from episodic.client import Client

        with Client(server, api_key, ca_cert, timeout_s=timeout) as client:
            report = client.forget(sid, lo, hi)
        _print_report(report, json_out)
        return
    from episodic import forgetting_jobs

    components = _components(data, config)
    try:
        report = forgetting_jobs.forgetter(components).forget(sid, lo, hi, key_id=_who(), reason="request")
    finally:
        components.close()
    _print_report(report, json_out)


@commands.command()
def retention(
    stream_id: Annotated[str | None, typer.Option("--stream-id", help="The stream to set.")] = None,
    days: Annotated[float | None, typer.Option("--days", help="Keep its memories this many days after they were ingested (0 = until forgotten on purpose).", min=0)] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Back to the default (retention_days).")] = False,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show, or set per stream, how long memories are kept.

    A memory older than its stream's retention (counted from when it was ingested) is forgotten by the next sweep: `serve` and `worker` sweep every retention_sweep_interval_s, `episodic gc` sweeps now. A stream nobody has written for longer than that goes whole; a live stream loses its oldest stretch. The default is retention_days (0: keep until forgotten on purpose); the per-stream setting is kept in <data>/forgetting/retention.json and outlives the stream's records. Every forget a sweep makes is in the audit log (reason "retention").
    """
    from episodic.core.records import validate_stream_id
    from episodic.services.forgetting import ForgetBooks

    settings = _settings(data, config)
    books = ForgetBooks(settings.resolved_forget_dir)
    if days is not None or clear:
        if stream_id is None:
            raise InputError("--days and --clear set one stream's retention: add --stream-id (the default is the retention_days setting)")
        if days is not None and clear:
            raise InputError("give --days or --clear, not both")
        books.ensure().retention.set(validate_stream_id(stream_id), None if clear else days)
    elif stream_id is not None:
        validate_stream_id(stream_id)
    policies = books.retention.all()
    if stream_id is not None:
        policies = {stream_id: policies[stream_id]} if stream_id in policies else {}
    default = settings.retention_days
    if json_out:
        _print_json({"default_days": default, "streams": policies,
                     **({"stream_id": stream_id, "days": policies.get(stream_id, default)} if stream_id else {})})
        return
    err.print(f"default: {f'{default:g} days' if default else 'keep until forgotten'} (retention_days)", highlight=False)
    for sid, d in sorted(policies.items()):
        err.print(f"{sid}: {f'{d:g} days' if d else 'keep until forgotten'}", highlight=False)
    if stream_id is not None and stream_id not in policies:
        err.print(f"{stream_id}: the default", highlight=False)


@commands.command()
def gc(data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Sweep now: finish forgets a crash interrupted, then forget what each stream's retention says has expired (what `serve` and `worker` do every retention_sweep_interval_s). --json prints {"recovered": [...], "forgotten": [...], "streams_checked", "seconds"}."""
    from episodic import forgetting_jobs

    components = _components(data, config)
    try:
        report = forgetting_jobs.forgetter(components).sweep()
    finally:
        components.close()
    if json_out:
        _print_json(report.to_dict())
        return
    for r in report.recovered:
        _print_report(r, False)
    for r in report.forgotten:
        _print_report(r, False)
    err.print(
        f"checked {report.streams_checked} streams in {report.seconds:.2f} s: {len(report.forgotten)} forgets by "
        f"retention, {len(report.recovered)} interrupted forgets finished",
        highlight=False,
    )
