"""Commands that make and read the memory: ingest, events, segments, streams."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer
from rich.console import Console
from rich.table import Table

from episodic.cli_app import (
    ConfigOpt,
    DataOpt,
    JsonOpt,
    StreamOpt,
    _fmt_t,
    _print_json,
    _quiet_libraries,
    _settings,
    err,
)
from episodic.cli_remote import ApiKeyOpt, CaCertOpt, ServerOpt, TimeoutOpt, read_document
from episodic.core.errors import EpisodicError, InputError

commands = typer.Typer()  # merged into the app by episodic.cli


# -- ingest -----------------------------------------------------------------------------------
class _StopOnCtrlC:
    """The first Ctrl-C (SIGINT) asks a long command to stop at its next safe point (the
    ingest checks after every chunk); a second one interrupts at once. A KeyboardInterrupt
    raised at an arbitrary point can land inside a library that swallows it, and then the
    run just goes on; a flag cannot be lost."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._previous: Any = None

    def is_set(self) -> bool:
        return self._event.is_set()

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self._event.is_set():
            raise KeyboardInterrupt
        self._event.set()

    def __enter__(self) -> _StopOnCtrlC:
        # a shell starts background commands with SIGINT ignored: that choice is kept
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


@commands.command()
def ingest(
    files: Annotated[list[str], typer.Argument(help="Recordings (any container/codec PyAV opens), or URLs (http(s)://, rtsp://, srt:// …) read to their end.")],
    stream_id: Annotated[
        str | None,
        typer.Option("--stream-id", help="Stream id (one FILE only). Default: derived from the file name."),
    ] = None,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Ingest recordings: segment, encode, consolidate, replay and store them.

    Re-ingesting a recording under the same stream id replaces that stream's records with exactly the same ones (deterministic ids): no duplicates. Records are stored as each memory closes, so an interrupted run keeps what it stored.
    """
    from episodic.core.records import stream_id_from_name, validate_stream_id
    from episodic.stream.decode import is_url, redact

    if stream_id is not None and len(files) > 1:
        raise InputError("--stream-id names one stream: give a single FILE (or omit --stream-id)")
    jobs: list[tuple[str | Path, str, str]] = []
    seen: dict[str, str] = {}
    for name in map(os.fspath, files):  # the demo passes Paths
        source: str | Path = name if is_url(name) else Path(name)
        if isinstance(source, Path) and not source.exists():
            raise InputError(f"file not found: {source}")
        derived = source.name if isinstance(source, Path) else (urlsplit(name).path.rstrip("/") or urlsplit(name).hostname or "stream")
        sid = validate_stream_id(stream_id) if stream_id is not None else stream_id_from_name(derived)
        shown = redact(name) if is_url(name) else name
        if sid in seen:
            # one would silently replace the other: a.mp3 and a.wav are both "a"
            raise InputError(
                f"{seen[sid]} and {shown} would both be stream {sid!r}: rename one, or ingest them "
                "one at a time with --stream-id"
            )
        seen[sid] = shown
        jobs.append((source, sid, shown))
    settings = _settings(data, config)
    _quiet_libraries()
    from episodic.components import Components
    from episodic.pipeline import IngestInterrupted, ingest_file
    from episodic.progress import IngestProgress

    components = Components(settings)
    reports = []
    failures = []
    interrupted = ""
    stop = _StopOnCtrlC()
    try:
        with stop, IngestProgress(err, enabled=err.is_terminal or not json_out) as bar:
            for f, sid, shown in jobs:
                task = bar.start(f"{sid}")
                try:
                    report = ingest_file(
                        f, sid, components, on_progress=lambda p, t=task: bar.update(t, p), stop_requested=stop.is_set
                    )
                except IngestInterrupted as exc:
                    interrupted = str(exc)  # typer turns Ctrl-C into a silent exit 130
                    break
                except EpisodicError as exc:
                    if len(jobs) == 1:
                        raise
                    failures.append({"file": shown, "stream_id": sid, "error": str(exc)})
                    err.print(f"[red]error[/red]: {shown}: {exc}", soft_wrap=True)
                    continue
                bar.done(task, report.progress)
                for w in report.warnings:
                    err.print(f"[yellow]warning[/yellow]: {shown}: {w}")
                reports.append(report)
    finally:
        components.close()
    if interrupted:
        done = f"; finished before it: {', '.join(r.stream_id for r in reports)}" if reports else ""
        err.print(f"interrupted: {interrupted}{done}", soft_wrap=True)
        raise typer.Exit(130)
    if json_out:
        _print_json(
            {
                "ingested": [
                    {
                        "stream_id": r.stream_id,
                        "source": r.source,
                        "stream_s": round(r.progress.stream_s, 3),
                        "segments": r.progress.segments,
                        "memories": r.progress.memories,
                        "events": r.progress.events,
                        "wall_s": round(r.progress.wall_s, 3),
                        "realtime_factor": round(r.progress.realtime_factor, 3),
                        "stage_seconds": {k: round(v, 3) for k, v in r.stage_seconds.items()},
                        "warnings": r.warnings,
                    }
                    for r in reports
                ],
                "failed": failures,
            }
        )
    else:
        for r in reports:
            p = r.progress
            err.print(
                f"[green]✓[/green] {r.stream_id}: {p.stream_s:.1f} s of stream → {p.segments} segments, "
                f"{p.memories} memories, {p.events} events in {p.wall_s:.1f} s "
                f"({p.realtime_factor:.1f}× real time)"
            )
    if failures:
        raise typer.Exit(1)


# -- listing ----------------------------------------------------------------------------------
def _open_store(data: Path | None, config: Path | None):
    settings = _settings(data, config)
    if not settings.milvus_uri and not Path(settings.data_dir).is_dir():
        # a mistyped --data is not an empty store
        raise InputError(
            f"no data directory at {settings.data_dir}: check --data / EPISODIC_DATA "
            "(`episodic ingest FILE` creates it)"
        )
    if not settings.milvus_uri and not Path(settings.resolved_milvus_uri).exists():
        return settings, None  # an empty store: answered without importing the store (or numpy)
    from episodic.memory.milvus_store import MilvusStore

    return settings, MilvusStore(settings)


@commands.command()
def events(
    stream_id: StreamOpt = None, server: ServerOpt = None, api_key: ApiKeyOpt = None, ca_cert: CaCertOpt = None,
    timeout: TimeoutOpt = 60.0, data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """List ThetaEvents (one-sentence summaries of consolidated memories), from --data or through --server (ListEvents, every page)."""
    from episodic.core.records import validate_stream_id

    if stream_id is not None:
        validate_stream_id(stream_id)

    def local(settings: Any) -> dict[str, Any]:
        _, store = _open_store(data, config)
        if store is None:
            return {"events": []}  # an empty store: nothing heavy imported
        from episodic import api_records

        try:
            return api_records.events_document(store.list_events(stream_id=stream_id, with_vectors=False))
        finally:
            store.close()

    def remote(client: Any) -> dict[str, Any]:
        return {"events": [e.to_dict() for e in client.list_events(stream_id, timeout_s=timeout)]}

    doc = read_document(server, api_key, ca_cert, timeout, data, config, local, remote)
    if json_out:
        _print_json(doc)
        return
    if not doc["events"]:
        err.print("no events" + (f" for stream {stream_id!r}" if stream_id else "") + " in this store")
        return
    table = Table("stream", "start", "end", "summary", "id", show_lines=False)
    for e in doc["events"]:
        pending = " (provisional)" if e["provisional"] else ""
        table.add_row(e["stream_id"], _fmt_t(e["t_start"]), _fmt_t(e["t_end"]), e["summary"] + pending, e["id"])
    Console().print(table)


def _remote_segments(client: Any, stream_id: str | None, timeout: float) -> list[Any]:
    """Every segment through a server: its events name them (one per segment), GetSegment
    reads each; sorted as the store lists them, by (stream_id, t_start, id)."""
    ids = dict.fromkeys(e.segment_id for e in client.list_events(stream_id, timeout_s=timeout))
    return sorted((client.get_segment(i, timeout_s=timeout) for i in ids), key=lambda s: (s.stream_id, s.t_start, s.id))


@commands.command()
def segments(
    stream_id: StreamOpt = None, server: ServerOpt = None, api_key: ApiKeyOpt = None, ca_cert: CaCertOpt = None,
    timeout: TimeoutOpt = 60.0, data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """List ShortTermMemories with their transcript, visual text and snippet URIs, from --data or through --server (GetSegment for each event's segment)."""
    from episodic.core.records import validate_stream_id

    if stream_id is not None:
        validate_stream_id(stream_id)

    def local(settings: Any) -> dict[str, Any]:
        _, store = _open_store(data, config)
        if store is None:
            return {"segments": []}
        from episodic import api_records

        try:
            return api_records.segments_document(store.list_memories(stream_id=stream_id))
        finally:
            store.close()

    def remote(client: Any) -> dict[str, Any]:
        return {"segments": [s.to_dict() for s in _remote_segments(client, stream_id, timeout)]}

    doc = read_document(server, api_key, ca_cert, timeout, data, config, local, remote)
    if json_out:
        _print_json(doc)
        return
    if not doc["segments"]:
        err.print("no segments" + (f" for stream {stream_id!r}" if stream_id else "") + " in this store")
        return
    table = Table("stream", "start", "end", "transcript", "visual", "snippet", show_lines=True)
    for m in doc["segments"]:
        table.add_row(
            m["stream_id"],
            _fmt_t(m["t_start"]),
            _fmt_t(m["t_end"]),
            m["transcript"] or "—",
            m["visual_text"] or "—",
            "\n".join(sn["uri"] for sn in m["snippets"]),
        )
    Console().print(table)


@commands.command()
def streams(
    server: ServerOpt = None, api_key: ApiKeyOpt = None, ca_cert: CaCertOpt = None, timeout: TimeoutOpt = 60.0,
    data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False,
) -> None:
    """List the streams in the store, with what each takes: its records (memories, events, E_i, frames, overviews, its listing) and the bytes of its snippet files (--json: "storage", as ListStreams with with_storage). From --data, or through --server."""

    def local(settings: Any) -> dict[str, Any]:
        settings, store = _open_store(data, config)
        if store is None:
            return {"streams": []}
        try:
            rows = store.list_streams()
            if not rows:
                return {"streams": []}
            from episodic import api_records
            from episodic.api_forget import storage_of
            from episodic.components import Components
            from episodic.services.forgetting import stream_storage

            usage = stream_storage(store, Components(settings).snippets, [s.stream_id for s in rows])
            return api_records.streams_document(rows, {sid: storage_of(u) for sid, u in usage.items()})
        finally:
            store.close()

    def remote(client: Any) -> dict[str, Any]:
        return {"streams": [s.to_dict() for s in client.list_streams(with_storage=True, timeout_s=timeout)]}

    doc = read_document(server, api_key, ca_cert, timeout, data, config, local, remote)
    if json_out:
        _print_json(doc)
        return
    if not doc["streams"]:
        err.print("no streams in this store yet: run `episodic ingest FILE`")
        return
    from episodic.cli_forget import _human_bytes

    table = Table()
    table.add_column("stream", no_wrap=True)  # "(incomplete)" and gaps stay readable at 80 columns
    for heading in ("duration", "memories", "events", "records", "snippets"):
        table.add_column(heading, no_wrap=True)
    table.add_column("source", overflow="fold")
    for s in doc["streams"]:
        name = s["stream_id"] + (" (incomplete)" if s["complete"] is False else "")
        if s["gaps"]:
            name += f" ({len(s['gaps'])} gap(s))"
        u = s.get("storage")
        table.add_row(name, _fmt_t(s["t_end"]), str(s["segments"]), str(s["events"]),
                      str(u["records"]) if u else "—", _human_bytes(u["snippet_bytes"]) if u else "—", s["source"])
    Console().print(table)
