"""Commands of the live path through Kafka: push, replay, worker, broker."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from episodic.cli_app import ConfigOpt, DataOpt, JsonOpt, _print_json, _quiet_libraries, err
from episodic.config import Settings, load_settings
from episodic.core.errors import EpisodicError, InputError

commands = typer.Typer()  # merged into the app by episodic.cli


# -- Kafka: push, replay, worker, a local broker ----------------------------------------------------
BootstrapOpt = Annotated[
    str | None,
    typer.Option("--bootstrap", help="Kafka bootstrap servers host:port[,host:port]. Default: kafka_bootstrap_servers."),
]


def _kafka_settings(data: Path | None, config: Path | None, bootstrap: str | None) -> Settings:
    return load_settings(config_file=config, data_dir=data, kafka_bootstrap_servers=bootstrap)


def _parse_options(pairs: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--option takes KEY=VALUE, got {pair!r}")
        out[key] = value
    return out


def _lazy_bar(bar: Any, name: str, counts: Callable[[Any], str]) -> Callable[[Any], None]:
    """A progress callback whose bar appears with the first progress, so a source that
    cannot be opened gives its one-line error and no empty bar."""
    task = None

    def show(p: Any) -> None:
        nonlocal task
        if task is None:
            task = bar.start(name)
        bar.show(task, p, counts(p))

    return show


def _push_summary(progress: Any) -> dict[str, Any]:
    return {
        "stream_id": progress.stream_id,
        "stream_s": round(progress.stream_s, 3),
        "chunks": progress.chunks,
        "bytes": progress.bytes,
        "wall_s": round(progress.wall_s, 3),
        "warnings": progress.warnings,
        "outages": [
            {"at_s": round(o.at_s, 3), "gap_s": o.gap_s, "attempts": o.attempts, "reason": o.reason}
            for o in progress.outages
        ],
    }


@commands.command()
def push(
    source: Annotated[str, typer.Argument(help="A recording, an rtsp://, http(s):// or srt:// URL, or a capture device (/dev/video0 with --format v4l2).")],
    stream_id: Annotated[str, typer.Option("--stream-id", help="The stream's id (A-Z a-z 0-9 . _ -, up to 128).")],
    realtime: Annotated[bool, typer.Option("--realtime", help="Pace a file like a live camera: send each chunk when it would have been recorded.")] = False,
    format: Annotated[str | None, typer.Option("--format", help="Force an FFmpeg demuxer (v4l2, avfoundation, dshow, lavfi...).")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", help="Demuxer option KEY=VALUE (repeat), e.g. rtsp_transport=tcp.")] = None,
    append: Annotated[bool, typer.Option("--append", help="Continue a stream that has ended: this source is placed after its end (without it, an ended stream ignores new pushes).")] = False,
    bootstrap: BootstrapOpt = None,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Send a source to Kafka as media chunks (1-2 s, keyframe-aligned), for `episodic worker` to turn into memories.

    Producer with acks=all and retries; each chunk is numbered, so pushing the same recording again stores nothing twice. A push restarted under the id of a stream that is still open continues it; a push under the id of a stream that has ended and is stored is refused (exit 2) unless --append, which continues it. A live source (RTSP, live HLS, HTTP stream, device) that drops is opened again with backoff (reconnect_* settings) and the gap is recorded; the push gives up, closes the stream and exits 3 when it stays away. Exits non-zero when a chunk is not acknowledged.
    """
    from episodic.core.records import validate_stream_id

    validate_stream_id(stream_id)
    settings = _kafka_settings(data, config, bootstrap)
    _quiet_libraries()
    from episodic.progress import IngestProgress
    from episodic.push import push_source, refuse_ended_stream
    from episodic.stream.reconnect import SourceLost

    options = _parse_options(option)
    if not append:
        refuse_ended_stream(stream_id, settings)
    with IngestProgress(err, enabled=err.is_terminal or not json_out) as bar:
        try:
            progress = push_source(
                source, stream_id, settings, realtime=realtime, format=format, options=options, append=append,
                on_progress=_lazy_bar(bar, f"push {stream_id}", lambda p: f"{p.chunks} chunks · {p.bytes / 1e6:.1f} MB"),
                on_note=lambda note: err.print(f"[yellow]warning[/yellow]: {note}"),
            )
        except SourceLost as exc:
            lost = getattr(exc, "progress", None)
            if lost is not None:
                err.print(f"pushed {lost.chunks} chunks ({lost.stream_s:.1f} s of media) as {stream_id!r} before giving up")
                if json_out:
                    _print_json(_push_summary(lost))
            raise
    for w in progress.warnings:
        err.print(f"[yellow]warning[/yellow]: {w}")
    if json_out:
        _print_json(_push_summary(progress))
    else:
        err.print(f"pushed {progress.chunks} chunks ({progress.stream_s:.1f} s of media) as {stream_id!r} to {settings.kafka_topic}")


@commands.command()
def replay(
    recordings: Annotated[str, typer.Argument(help="A folder (searched recursively for media files) or a glob such as 'archive/**/*.mp4'.")],
    stream_id_from: Annotated[str, typer.Option("--stream-id-from", help="Stream ids from each file's name (filename) or folder + name (parent).")] = "filename",
    realtime: Annotated[bool, typer.Option("--realtime", help="Pace each file like a live camera.")] = False,
    bootstrap: BootstrapOpt = None,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Replay archived recordings through Kafka (the same producer → topic → worker path live streams take).

    A recording that cannot be read is reported and skipped; the others go on. Exits non-zero if any failed.
    """
    from episodic.push import replay_sources, stream_id_for

    files = replay_sources(recordings)
    jobs = [(f, stream_id_for(f, stream_id_from)) for f in files]
    seen: dict[str, Path] = {}
    for f, sid in jobs:
        if sid in seen:
            raise InputError(f"{seen[sid]} and {f} would both be stream {sid!r}: use --stream-id-from parent or rename one")
        seen[sid] = f
    settings = _kafka_settings(data, config, bootstrap)
    _quiet_libraries()
    from episodic.progress import IngestProgress
    from episodic.push import ChunkSender, push_source

    done, failures = [], []
    with ChunkSender(settings) as sender, IngestProgress(err, enabled=err.is_terminal or not json_out) as bar:
        for f, sid in jobs:
            try:
                progress = push_source(
                    str(f), sid, settings, realtime=realtime, sender=sender,
                    on_progress=_lazy_bar(bar, sid, lambda p: f"{p.chunks} chunks"),
                )
            except EpisodicError as exc:
                failures.append({"file": str(f), "stream_id": sid, "error": str(exc)})
                err.print(f"[red]error[/red]: {f}: {exc}", soft_wrap=True)
                continue
            done.append({"file": str(f), **_push_summary(progress)})
    minutes = sum(d["stream_s"] for d in done) / 60
    wall = sum(d["wall_s"] for d in done)
    if json_out:
        _print_json({"replayed": done, "failed": failures, "stream_minutes": round(minutes, 3), "wall_s": round(wall, 3)})
    else:
        err.print(f"replayed {len(done)} recording(s), {minutes:.1f} stream-minutes, into {settings.kafka_topic}")
    if failures:
        raise typer.Exit(3)


@commands.command()
def worker(
    exit_when_idle: Annotated[float | None, typer.Option("--exit-when-idle", help="Return after this many seconds without chunks once no stream is open (batch replays, tests).", min=0.1)] = None,
    group: Annotated[str | None, typer.Option("--group", help="Consumer group. Default: kafka_group_id (episodic-workers).")] = None,
    bootstrap: BootstrapOpt = None,
    data: DataOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Consume media chunks from Kafka and store their memories (the records `episodic ingest` writes), until Ctrl-C or SIGTERM.

    Run several in one group to share partitions. Offsets are committed only behind stored checkpoints: a killed or rebalanced worker's streams resume elsewhere with nothing lost or doubled. Undecodable chunks go to the dead-letter topic.
    """
    import logging

    settings = load_settings(config_file=config, data_dir=data, kafka_bootstrap_servers=bootstrap, kafka_group_id=group)
    _quiet_libraries()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("episodic").setLevel(logging.INFO)
    from episodic.stream import kafka_io
    from episodic.worker import run_worker

    kafka_io.ensure_topics(settings.kafka)
    err.print(f"worker in group {settings.kafka_group_id!r} on {settings.kafka_bootstrap_servers} topic {settings.kafka_topic}; Ctrl-C or SIGTERM stops", highlight=False)
    stats = run_worker(settings, idle_exit_s=exit_when_idle)
    err.print(
        f"worker stopped: {stats.chunks} chunks, {stats.streams_ended} streams ended, "
        f"{stats.skipped} skipped, {stats.dead_lettered} dead-lettered",
        highlight=False,
    )


@commands.command()
def broker(
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1.")] = 9092,
) -> None:
    """Run a local Kafka-protocol broker for trying things out (Tansu, in memory: its data is gone when it stops). Needs the dev extra."""
    from episodic.dev_broker import run_broker

    run_broker(port)


