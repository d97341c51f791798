"""The ``episodic`` command line.

Every command takes ``--data DIR`` (or ``EPISODIC_DATA``) and ``--config FILE``. Progress and
messages go to stderr; with ``--json`` stdout carries exactly one JSON document.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperCommand

from episodic.config import Settings, load_settings
from episodic.core.errors import EpisodicError, InputError, StoreError
from episodic.process import limit_malloc_arenas, quiet_grpc_logging

app = typer.Typer(
    name="episodic",
    help=(
        "Streaming episodic memory for audiovisual streams.\n\n"
        "Ingest recordings into ShortTermMemories and ThetaEvents stored in Milvus "
        "(a Milvus Lite file under --data by default), then list them."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)

DataOpt = Annotated[
    Path | None,
    typer.Option("--data", help="Data directory (Milvus Lite file, snippets). Env: EPISODIC_DATA. Default ./episodic-data"),
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="TOML settings file. Env: EPISODIC_CONFIG")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout, nothing else.")]
StreamOpt = Annotated[str | None, typer.Option("--stream-id", help="Only this stream.")]


def _settings(data: Path | None, config: Path | None) -> Settings:
    return load_settings(config_file=config, data_dir=data)


def _quiet_libraries() -> None:
    """Keep third-party chatter (progress bars, deprecation notes) off the user's screen."""
    warnings.filterwarnings("ignore")
    os.environ.setdefault("TQDM_DISABLE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import logging

    for name in ("transformers", "sentence_transformers", "faster_whisper", "pymilvus", "milvus_lite"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _print_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")


def _fmt_t(t: float) -> str:
    m, s = divmod(max(t, 0.0), 60)
    h, m = divmod(int(m), 60)
    return f"{h:d}:{m:02d}:{s:05.2f}" if h else f"{m:d}:{s:05.2f}"


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


@app.command()
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
    from episodic.pipeline import Components, IngestInterrupted, ingest_file
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
    from episodic.memory.milvus_store import MilvusStore

    settings = _settings(data, config)
    if not settings.milvus_uri and not Path(settings.data_dir).is_dir():
        # a mistyped --data is not an empty store
        raise InputError(
            f"no data directory at {settings.data_dir}: check --data / EPISODIC_DATA "
            "(`episodic ingest FILE` creates it)"
        )
    if not settings.milvus_uri and not Path(settings.resolved_milvus_uri).exists():
        return settings, None
    return settings, MilvusStore(settings)


@app.command()
def events(
    stream_id: StreamOpt = None, data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False
) -> None:
    """List ThetaEvents (one-sentence summaries of consolidated memories)."""
    from episodic.core.records import validate_stream_id

    if stream_id is not None:
        validate_stream_id(stream_id)
    _, store = _open_store(data, config)
    rows = []
    if store is not None:
        try:
            rows = store.list_events(stream_id=stream_id, with_vectors=False)
        finally:
            store.close()
    if json_out:
        _print_json(
            {
                "events": [
                    {
                        "id": e.id,
                        "stream_id": e.stream_id,
                        "t_start": round(e.t_start, 3),
                        "t_end": round(e.t_end, 3),
                        "summary": e.summary,
                        "memory_id": e.memory_id,
                    }
                    for e in rows
                ]
            }
        )
        return
    if not rows:
        err.print("no events" + (f" for stream {stream_id!r}" if stream_id else "") + " in this store")
        return
    table = Table("stream", "start", "end", "summary", "id", show_lines=False)
    for e in rows:
        table.add_row(e.stream_id, _fmt_t(e.t_start), _fmt_t(e.t_end), e.summary, e.id)
    Console().print(table)


@app.command()
def segments(
    stream_id: StreamOpt = None, data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False
) -> None:
    """List ShortTermMemories with their transcript, visual text and snippet URIs."""
    from episodic.core.records import validate_stream_id

    if stream_id is not None:
        validate_stream_id(stream_id)
    _, store = _open_store(data, config)
    rows = []
    if store is not None:
        try:
            rows = store.list_memories(stream_id=stream_id)
        finally:
            store.close()
    if json_out:
        _print_json(
            {
                "segments": [
                    {
                        "id": m.id,
                        "stream_id": m.stream_id,
                        "t_start": round(m.t_start, 3),
                        "t_end": round(m.t_end, 3),
                        "transcript": m.transcript_text,
                        "visual_text": m.visual_text,
                        "ocr_text": m.ocr_text,
                        "keyframe_times": [round(t, 3) for t in m.keyframe_times],
                        "snippet_uris": [sn.uri for sn in m.snippets],
                        "snippets": [
                            {"uri": sn.uri, "t_start": round(sn.t_start, 3), "t_end": round(sn.t_end, 3)}
                            for sn in m.snippets
                        ],
                        "models": m.metadata.get("models", {}),
                    }
                    for m in rows
                ]
            }
        )
        return
    if not rows:
        err.print("no segments" + (f" for stream {stream_id!r}" if stream_id else "") + " in this store")
        return
    table = Table("stream", "start", "end", "transcript", "visual", "snippet", show_lines=True)
    for m in rows:
        table.add_row(
            m.stream_id,
            _fmt_t(m.t_start),
            _fmt_t(m.t_end),
            m.transcript_text or "—",
            m.visual_text or "—",
            "\n".join(sn.uri for sn in m.snippets),
        )
    Console().print(table)


@app.command()
def streams(data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """List the streams in the store."""
    _, store = _open_store(data, config)
    rows = []
    if store is not None:
        try:
            rows = store.list_streams()
        finally:
            store.close()
    if json_out:
        _print_json(
            {
                "streams": [
                    {
                        "stream_id": s.stream_id,
                        "source": s.source,
                        "t_end": round(s.t_end, 3),
                        "memories": s.memories,
                        "events": s.events,
                        "updated_at": s.updated_at,
                        "complete": s.metadata.get("complete"),
                        "gaps": s.metadata.get("gaps", []),  # where a live source was away
                    }
                    for s in rows
                ]
            }
        )
        return
    if not rows:
        err.print("no streams in this store yet: run `episodic ingest FILE`")
        return
    table = Table("stream", "duration", "memories", "events", "source")
    for s in rows:
        name = s.stream_id + (" (incomplete)" if s.metadata.get("complete") is False else "")
        if s.metadata.get("gaps"):
            name += f" ({len(s.metadata['gaps'])} gap(s))"
        table.add_row(name, _fmt_t(s.t_end), str(s.memories), str(s.events), s.source)
    Console().print(table)


# -- query: serve, ask, search ----------------------------------------------------------------
ServerOpt = Annotated[
    str | None,
    typer.Option(
        "--server",
        help="host:port of an `episodic serve` to ask. Without it the question is answered in-process from --data.",
        envvar="EPISODIC_SERVER",
    ),
]
ApiKeyOpt = Annotated[
    str | None,
    typer.Option("--api-key", help="API key for --server (sent as `authorization: Bearer`). Env: EPISODIC_API_KEY", envvar="EPISODIC_API_KEY"),
]
CaCertOpt = Annotated[
    Path | None,
    typer.Option("--ca-cert", help="PEM CA certificate that signed the server's TLS certificate: talk TLS to --server."),
]
StreamsOpt = Annotated[
    list[str] | None,
    typer.Option("--stream-id", help="Only this stream; repeat for several. Default: every stream (the API key may see)."),
]
TMinOpt = Annotated[float | None, typer.Option("--t-min", help="Only memories ending at or after this stream time (s).")]
TMaxOpt = Annotated[float | None, typer.Option("--t-max", help="Only memories starting at or before this stream time (s).")]
TopKOpt = Annotated[int, typer.Option("--top-k", help="How many pieces of evidence / moments (1-100).")]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", help="Give up after this many seconds (the call's deadline).", min=0.001)
]

class _GreedyChoices(TyperCommand):
    """Lets ``--choices A B C`` take every following word up to the next option, as people
    write it; click options take a fixed number of values, so the words are rewritten to
    ``--choices A --choices B --choices C`` before click parses them. A choice that starts
    with '-' is written ``--choices=-5``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                out.extend(args[i:])
                break
            if arg == "--choices":
                j = i + 1
                while j < len(args) and not args[j].startswith("-"):
                    out += ["--choices", args[j]]
                    j += 1
                if j == i + 1:
                    out.append(arg)  # no value: let click say so
                i = j
                continue
            out.append(arg)
            i += 1
        return super().parse_args(ctx, out)


def _service(
    server: str | None, api_key: str | None, ca_cert: Path | None, timeout: float,
    data: Path | None, config: Path | None,
) -> Any:
    """The memory as a MemoryService: an `episodic serve` at ``server``, or this process over
    ``--data`` (models loaded here). Both take the same requests and give the same results."""
    if server:
        from episodic.client import Client

        return Client(server, api_key, ca_cert, timeout_s=timeout)
    settings = _settings(data, config)
    _quiet_libraries()
    from episodic.pipeline import Components
    from episodic.services.local import LocalMemoryService

    return LocalMemoryService(Components(settings))


@app.command()
def serve(
    host: Annotated[str | None, typer.Option("--host", help="Address to listen on. Default: grpc_host (127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port. Default: grpc_port (50051); 0 picks a free one.")] = None,
    data: DataOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Serve the memory over gRPC (episodic.v1.EpisodicMemory, health, reflection) until Ctrl-C or SIGTERM.

    Prints `listening on HOST:PORT` on stdout once it accepts calls. Without api_keys_file it listens on loopback only; with tls_cert_path/tls_key_path it speaks TLS.
    """
    import logging

    settings = load_settings(config_file=config, data_dir=data, grpc_host=host, grpc_port=port)
    _quiet_libraries()
    # the server's own notes at INFO; libraries only when something is wrong
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("episodic").setLevel(logging.INFO)
    from episodic.server import serve as run_server

    def ready(handle: Any) -> None:
        sys.stdout.write(f"listening on {handle.address}\n")
        sys.stdout.flush()
        n = len(handle.servicer.keys)
        access = f"{n} API key(s)" if n else "no API keys: open to anyone on this machine"
        err.print(f"{'TLS' if handle.tls else 'plaintext'}, {access}; Ctrl-C or SIGTERM stops", highlight=False)

    run_server(settings, on_ready=ready)


@app.command(cls=_GreedyChoices)
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    choices: Annotated[
        list[str] | None,
        typer.Option("--choices", help="Multiple-choice options in order: --choices A B C (after the question)."),
    ] = None,
    stream_id: StreamsOpt = None,
    t_min: TMinOpt = None,
    t_max: TMaxOpt = None,
    top_k: TopKOpt = 5,
    server: ServerOpt = None,
    api_key: ApiKeyOpt = None,
    ca_cert: CaCertOpt = None,
    timeout: TimeoutOpt = 300.0,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Answer a question from the memory, with its confidence and the evidence it cites."""
    from episodic import api_convert

    req = api_convert.ask_request(question, choices or (), stream_id or (), t_min, t_max, top_k, timeout)
    with _service(server, api_key, ca_cert, timeout, data, config) as memory:
        result = memory.ask(req)  # DeadlineExceeded is an EpisodicError: one line, exit 6
    if json_out:
        _print_json(api_convert.ask_result_to_dict(result))
        return
    Console().print(result.answer, highlight=False, soft_wrap=True)
    facts = [
        f"confidence {result.confidence:.2f}",
        f"{api_convert.Pathway(result.pathway).value} path",
        f"query type {api_convert.QueryType(result.query_type).value}",
    ]
    if result.choice_index is not None:
        facts.append(f"choice {chr(ord('A') + result.choice_index)}" if 0 <= result.choice_index < 26 else f"choice {result.choice_index}")
    err.print(" · ".join(facts), highlight=False)
    if result.evidence:
        table = Table("stream", "start", "end", "kind", "evidence")
        for e in result.evidence:
            table.add_row(e.stream_id, _fmt_t(e.t_start), _fmt_t(e.t_end), e.modality, e.text)
        err.print(table)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in words.")],
    stream_id: StreamsOpt = None,
    t_min: TMinOpt = None,
    t_max: TMaxOpt = None,
    top_k: TopKOpt = 5,
    server: ServerOpt = None,
    api_key: ApiKeyOpt = None,
    ca_cert: CaCertOpt = None,
    timeout: TimeoutOpt = 300.0,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Find the moments (stream, start, end) that match a description, best first."""
    from episodic import api_convert

    text, scope, k = api_convert.search_args(query, stream_id or (), t_min, t_max, top_k)
    with _service(server, api_key, ca_cert, timeout, data, config) as memory:
        moments = memory.search(text, scope, k, deadline_s=timeout)
    if json_out:
        _print_json(api_convert.search_result_to_dict(moments))
        return
    if not moments:
        err.print("no matching moments")
        return
    table = Table("stream", "start", "end", "score", "why")
    for m in moments:
        table.add_row(m.stream_id, _fmt_t(m.t_start), _fmt_t(m.t_end), f"{m.score:.3f}", m.why)
    Console().print(table)


# -- article ------------------------------------------------------------------------------------
ARTICLE_HELP = """Write a cited article about REQUEST from the memory of one or more streams.

The request is broken into sub-queries; each retrieves moments from every stream in scope; the ranked lists are fused; claims are extracted from the moments and calibrated (unsupported ones are dropped); and the article is written from what is left, every sentence citing the moments \\[n] it rests on. The stages show on stderr while they run.

--style: bullet = the calibrated claims themselves as a cited list (fastest) · cag = one synthesis pass over all claims · ginger (default) = claims clustered by facet, clusters ranked, the best summarised, then smoothed into prose.

--fusion, how the sub-queries' ranked lists become one: rrf (default) = reciprocal rank fusion, robust when scores are not comparable · wrrf = reciprocal rank fusion weighted by sub-query · max = the best score a moment got in any list · mean = its mean score over the lists · sum = its summed score (favours moments many sub-queries find).

Output: the article rendered for the terminal (plain Markdown when stdout is not a terminal); --markdown prints the raw Markdown; --json prints one JSON document (the ArticleResult fields, "markdown" among them). Without --server it runs in-process from --data; with --server it calls the Article RPC of an `episodic serve`.
"""


class _ArticleProgressView:
    """The article's stages on stderr, one line each: ✓ when done, a spinner and a count while
    running. Silent when disabled, so ``--json`` to a pipe gets nothing but the document.

    The pipeline reports after each step, and loading its models comes before the first
    report, so on a terminal a "waiting" line fills that gap. Elsewhere the display starts
    with the first report, so a call that fails before any gives its one-line error and no
    empty display.
    """

    def __init__(self, console: Console, enabled: bool = True, waiting: str = "") -> None:
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

        self._bar = Progress(
            SpinnerColumn(finished_text="[green]✓[/green]"),
            TextColumn("[bold]{task.description:<10}"),
            BarColumn(),
            TextColumn("{task.fields[counts]}"),
            TextColumn("{task.fields[message]}"),
            console=console,
            transient=False,
            disable=not enabled,
        )
        self._live = enabled and console.is_terminal
        self._waiting_text = waiting
        self._waiting: Any = None
        self._started = False
        self._tasks: dict[str, Any] = {}
        self._current: str | None = None  # the stage reported last, and its total
        self._total = 0

    def __enter__(self) -> _ArticleProgressView:
        if self._live and self._waiting_text:
            self._start()
            self._waiting = self._bar.add_task("", total=None, counts="", message=self._waiting_text)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._waiting is not None:
            self._bar.remove_task(self._waiting)
            self._waiting = None
        if exc[0] is None and self._current is not None and not self._total:
            self._bar.update(self._tasks[self._current], total=1, completed=1)  # it ended well
        if self._started:
            self._bar.__exit__(*exc)

    def _start(self) -> None:
        if not self._started:
            self._bar.__enter__()
            self._started = True

    def update(self, p: Any) -> None:
        """Show one ArticleProgress; a stage that gave way to the next one is complete."""
        self._start()
        if self._waiting is not None:
            self._bar.remove_task(self._waiting)
            self._waiting = None
        fields = {
            "total": p.total or None,
            "completed": p.done,
            "counts": f"{p.done}/{p.total}" if p.total else "",
            "message": p.message,
        }
        if p.stage in self._tasks:
            self._bar.update(self._tasks[p.stage], **fields)
        else:
            if self._current is not None:
                done = self._total or 1
                self._bar.update(self._tasks[self._current], total=done, completed=done)
            self._tasks[p.stage] = self._bar.add_task(p.stage, **fields)  # with its counts: never "0/?"
            self._bar.update(self._tasks[p.stage], completed=p.done)  # only update() marks it finished
        self._current, self._total = p.stage, p.total


@app.command(help=ARTICLE_HELP)
def article(
    request: Annotated[str, typer.Argument(help="What the article should be about, in words.", show_default=False)],
    style: Annotated[str, typer.Option("--style", help="bullet | cag | ginger (see above).")] = "ginger",
    stream_id: StreamsOpt = None,
    t_min: TMinOpt = None,
    t_max: TMaxOpt = None,
    fusion: Annotated[
        str, typer.Option("--fusion", help="rrf | wrrf | max | mean | sum (see above); default: the configured article_fusion (rrf).")
    ] = "",
    max_sub_queries: Annotated[
        int, typer.Option("--max-sub-queries", help="At most this many sub-queries (1-50); 0: the configured article_max_sub_queries.")
    ] = 0,
    server: ServerOpt = None,
    api_key: ApiKeyOpt = None,
    ca_cert: CaCertOpt = None,
    timeout: TimeoutOpt = 600.0,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
    markdown_out: Annotated[bool, typer.Option("--markdown", help="Print the article as raw Markdown on stdout.")] = False,
) -> None:
    from episodic import api_convert

    if json_out and markdown_out:
        raise InputError("--json and --markdown both choose the output: give one of them")
    req = api_convert.article_request(request, style, stream_id or (), t_min, t_max, fusion, max_sub_queries, timeout)
    started = time.monotonic()
    waiting = f"waiting for {server}" if server else "loading the models"
    with _ArticleProgressView(err, enabled=err.is_terminal or not json_out, waiting=waiting) as view, \
            _service(server, api_key, ca_cert, timeout, data, config) as memory:
        # DeadlineExceeded, InputError and a failed call are EpisodicErrors: one line, their exit code
        result = memory.write_article(req, progress=view.update)
    if json_out:
        _print_json(api_convert.article_to_dict(result))
        return
    text = result.markdown()
    out = Console()
    if markdown_out or not out.is_terminal:
        sys.stdout.write(text)
    else:
        from rich.markdown import Markdown

        out.print(Markdown(text))

    def count(n: int, one: str, many: str) -> str:
        return f"{n} {one if n == 1 else many}"

    facts = [
        f"{result.style.value} style",
        count(len(result.sub_queries), "sub-query", "sub-queries"),
        count(len(result.citations), "source", "sources"),
        count(len(result.claims), "claim", "claims") + f" ({result.dropped_claims} dropped)",
        f"{time.monotonic() - started:.1f} s",
    ]
    err.print(" · ".join(facts), highlight=False)
    if result.thin_evidence:
        err.print("[yellow]warning[/yellow]: the memory holds little about this request; the article says so", highlight=False)


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


@app.command()
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


@app.command()
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


@app.command()
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

    kafka_io.ensure_topics(settings)
    err.print(f"worker in group {settings.kafka_group_id!r} on {settings.kafka_bootstrap_servers} topic {settings.kafka_topic}; Ctrl-C or SIGTERM stops", highlight=False)
    stats = run_worker(settings, idle_exit_s=exit_when_idle)
    err.print(
        f"worker stopped: {stats.chunks} chunks, {stats.streams_ended} streams ended, "
        f"{stats.skipped} skipped, {stats.dead_lettered} dead-lettered",
        highlight=False,
    )


@app.command()
def broker(
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1.")] = 9092,
) -> None:
    """Run a local Kafka-protocol broker for trying things out (Tansu, in memory: its data is gone when it stops). Needs the dev extra."""
    from episodic.dev_broker import run_broker

    run_broker(port)


# -- demo and maintenance ---------------------------------------------------------------------
# (not "the train to Oxford": Whisper base hears the demo voice's "to Oxford" as "talks for",
# and a question about a name the memory does not hold is refused, as it should be)
DEMO_QUESTION = "How much does the fish market charge for salmon?"


def _evaluate_qa(
    qa_file: Path | None, build_qa: Path | None, seed: int, streams: int, minutes: float,
    split: str | None, reingest: bool, data: Path | None, config: Path | None, json_out: bool,
) -> None:
    """`episodic evaluate --build-qa DIR` and/or `--qa FILE` (see episodic/qa_evaluation.py)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from episodic.qa_set import SPLITS, load_qa_set

    if split is not None and split not in SPLITS:
        raise InputError(f"--split must be one of {', '.join(SPLITS)}, got {split!r}")
    built: dict[str, Path] = {}
    if build_qa is not None:
        from episodic.qa_generator import build_qa_sets

        built = build_qa_sets(build_qa, seed=seed, streams=streams, minutes=minutes,
                              splits=(split,) if split else SPLITS, on_note=lambda m: err.print(m, highlight=False))
        if qa_file is None:
            if json_out:
                _print_json({"built": {k: str(v) for k, v in built.items()}})
            else:
                for k, v in built.items():
                    err.print(f"{k}: {v}", highlight=False)
            return
    assert qa_file is not None
    qa_set = load_qa_set(qa_file)
    if split is not None:
        qa_set = qa_set.only_split(split)
    settings = _settings(data, config)
    _quiet_libraries()
    from episodic.pipeline import Components
    from episodic.qa_evaluation import evaluate_qa, report_tables

    components = Components(settings)
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err,
                      disable=json_out and not err.is_terminal) as bar:
            task = bar.add_task("preparing", total=None)

            def on_step(n: int, total: int, qid: str) -> None:
                bar.update(task, total=total, completed=n - 1, description=f"asking {qid}")

            report = evaluate_qa(qa_set, components, reingest=reingest, on_step=on_step,
                                 on_note=lambda m: bar.update(task, description=m))
    finally:
        components.close()
    if json_out:
        _print_json({**report.to_dict(), **({"built": {k: str(v) for k, v in built.items()}} if built else {})})
        return
    console = Console()
    for table in report_tables(report):
        console.print(table)


@app.command()
def evaluate(
    labels: Annotated[
        Path | None,
        typer.Argument(help="A labelled set (JSON; format in episodic/labelled_set.py). Omit with --build-sample.", show_default=False),
    ] = None,
    style: Annotated[str, typer.Option("--style", help="bullet | cag | ginger: the article style scored.")] = "ginger",
    fusion: Annotated[str, typer.Option("--fusion", help="rrf | wrrf | max | mean | sum")] = "rrf",
    build_sample: Annotated[
        bool,
        typer.Option("--build-sample", help="Generate the two-camera sample recordings with known facts, ingest them into --data and score the sample labels."),
    ] = False,
    qa_file: Annotated[
        Path | None,
        typer.Option("--qa", help="Score question answering on a QA set (JSON, format in episodic/qa_set.py; or its folder): ingests its recordings unless already stored, asks every question, runs every moment query."),
    ] = None,
    build_qa: Annotated[
        Path | None,
        typer.Option("--build-qa", help="Generate labelled QA recordings and questions under DIR/dev and DIR/heldout (see episodic/qa_generator.py), then stop unless --qa is given."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="--build-qa: random seed (dev and held-out differ anyway).")] = 0,
    streams: Annotated[int, typer.Option("--streams", help="--build-qa: recordings per split (1-5).", min=1, max=5)] = 3,
    minutes: Annotated[float, typer.Option("--minutes", help="--build-qa: about how long each recording is.", min=0.2, max=30)] = 2.5,
    split: Annotated[str | None, typer.Option("--split", help="dev | heldout: --build-qa builds only this split; --qa scores only its items.")] = None,
    reingest: Annotated[bool, typer.Option("--reingest", help="--qa: ingest the recordings again even when the store holds them.")] = False,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Score retrieval, articles, grounded steps and citations against a labelled set; or, with --qa, question answering.

    Per query: nDCG@10 and Recall@10 of the fused ranking (decomposition + fusion) and of the
    request alone; MTGS and STEM of the article's grounded steps against the labelled facts;
    citation validity (every cited segment exists) and precision (the cited segment supports
    the sentence); and the share of labelled facts the article mentions.

    With --qa: multiple-choice and free-form accuracy by category, abstention on unanswerable questions, moment R@1/R@5, latency, reliability by confidence and ECE; --json adds every answer.
    """
    if build_qa is not None or qa_file is not None:
        _evaluate_qa(qa_file, build_qa, seed, streams, minutes, split, reingest, data, config, json_out)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from episodic.core import validation
    from episodic.core.article import ArticleStyle, Fusion
    from episodic.evaluation import evaluate as run_evaluation
    from episodic.labelled_set import build_article_set, load_labelled_set

    chosen_style = validation.choice(style, ArticleStyle, "style")
    chosen_fusion = None if not fusion else validation.choice(fusion, Fusion, "fusion")
    if labels is None and not build_sample:
        raise InputError("give a labelled set (LABELS.json) or --build-sample; or a QA set with --qa FILE (--build-qa DIR generates one)")
    label_set = load_labelled_set(labels) if labels is not None else None
    from episodic.services.articles import ArticleService

    local = _service(None, None, None, 0.0, data, config)
    components = local.components
    try:
        if build_sample:
            with err.status("generating and ingesting the sample recordings …"):
                sample = build_article_set(Path(components.settings.data_dir) / "sample-recordings", components)
            label_set = label_set or sample
        service = ArticleService(components, qa=local.qa)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err,
                      disable=json_out and not err.is_terminal) as bar:
            task = bar.add_task("evaluating", total=len(label_set.queries))

            def on_query(n: int, total: int, qid: str) -> None:
                bar.update(task, completed=n - 1, description=f"evaluating {qid}")

            report = run_evaluation(service, label_set, style=chosen_style, fusion=chosen_fusion or Fusion.RRF,
                                    on_query=on_query)
            bar.update(task, completed=len(label_set.queries))
    finally:
        local.close()
    if json_out:
        _print_json(report.to_dict())
        return
    table = Table(title=f"evaluation ({report.style}, {report.fusion}, k = {report.k})")
    cols = ["ndcg", "ndcg_single", "recall", "recall_single", "mtgs", "stem_missing", "stem_hallucinated",
            "stem_order", "citation_precision", "citation_validity", "fact_recall"]
    table.add_column("query")
    for col in cols:
        table.add_column(col.replace("_", " "), justify="right")
    for q in report.queries:
        table.add_row(q.id, *[f"{getattr(q, c):.3f}" for c in cols])
    means = report.means()
    table.add_row("mean", *[f"{means[c]:.3f}" for c in cols], style="bold")
    Console().print(table)


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", help="Where to write the sample recording.")] = Path(
        "episodic-demo.mp4"
    ),
    kafka: Annotated[bool, typer.Option("--kafka/--no-kafka", help="Also send the recording through Kafka (a local broker, push, worker) as stream \"demo-live\".")] = True,
    data: DataOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Generate a one-minute sample recording with speech (needs espeak-ng), ingest it as stream "demo", list its events and answer one question from it: the whole embedded pipeline in one command. Then the live path: a local Kafka broker, `push` and a `worker` store the same recording as "demo-live"."""
    from episodic import samples

    err.print(f"generating a sample recording at {out} …")
    samples.make_recording(out, *samples.demo_scenes())
    ingest([out], stream_id="demo", data=data, config=config, json_out=False)
    events(stream_id="demo", data=data, config=config, json_out=False)
    err.print(f"\n[bold]episodic ask[/bold] {DEMO_QUESTION!r}", highlight=False)
    ask(
        DEMO_QUESTION,
        choices=None,
        stream_id=["demo"],
        t_min=None,
        t_max=None,
        top_k=3,
        server=None,
        api_key=None,
        ca_cert=None,
        timeout=300.0,
        data=data,
        config=config,
        json_out=False,
    )
    if kafka:
        _demo_live(out, data, config)


def _ingested_transcript(memory) -> str:
    """The transcript a memory was ingested with (re-listening keeps it as version "ingest")."""
    for version in memory.metadata.get("transcripts", []) or []:
        if isinstance(version, dict) and version.get("source") == "ingest":
            return str(version.get("text", ""))
    return memory.transcript_text


def _demo_live(recording: Path, data: Path | None, config: Path | None) -> None:
    """The demo's live path: a local broker, `episodic push`, an `episodic worker` until the
    topic is drained, and a check that it stored what embedded ingest stored."""
    from episodic.core.errors import ConfigError
    from episodic.dev_broker import LocalBroker, tansu_binary

    try:
        tansu_binary()
    except ConfigError as exc:
        err.print(f"\nskipping the Kafka part of the demo: {exc}", highlight=False)
        return
    err.print("\n[bold]live path[/bold]: a local Kafka broker (Tansu, in memory) → episodic push → episodic worker", highlight=False)
    with LocalBroker() as broker:
        push(str(recording), stream_id="demo-live", realtime=False, format=None, option=None,
             bootstrap=broker.bootstrap, data=data, config=config, json_out=False)
        worker(exit_when_idle=2.0, group=None, bootstrap=broker.bootstrap, data=data, config=config)
    events(stream_id="demo-live", data=data, config=config, json_out=False)
    _, store = _open_store(data, config)
    if store is None:
        raise typer.Exit(1)
    try:
        # as ingested: the demo's question may have re-listened to "demo" since (a newer
        # transcript version), and what is compared here is the ingest path itself
        a, b = (
            [(m.t_start, m.t_end, _ingested_transcript(m)) for m in store.list_memories(stream_id=sid)]
            for sid in ("demo", "demo-live")
        )
    finally:
        store.close()
    same = "the same memories" if a == b else "[red]different memories[/red]"
    err.print(f"demo-live: {len(b)} memories through Kafka, {same} as the embedded ingest of the same file")
    if a != b:
        raise typer.Exit(1)


@app.command()
def doctor(
    check: Annotated[list[str] | None, typer.Option("--check", help="Run only this check; repeat for several. Checks: config, store, snippets, embedder, asr, describer, llm, kafka, server.")] = None,
    skip: Annotated[list[str] | None, typer.Option("--skip", help="Skip this check; repeat for several (e.g. --skip kafka on a laptop).")] = None,
    server: Annotated[str | None, typer.Option("--server", help="host:port of a running `episodic serve` whose health to check.", envvar="EPISODIC_SERVER")] = None,
    api_key: ApiKeyOpt = None,
    ca_cert: CaCertOpt = None,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Check every configured backend (store, models, LLM server, Kafka, a running server) and say what is wrong.

    Each check uses the backend the way the service will, with short timeouts: the Milvus store is reached and its schema and vector dimensions compared with the configured models; each model is loaded and run once; an OpenAI-compatible server must list openai_model; Kafka topics and partitions are read. Exit code 0 when nothing failed (warnings allowed), 1 otherwise.
    """
    settings = _settings(data, config)
    _quiet_libraries()
    from episodic.doctor import CHECKS, FAIL, Doctor

    unknown = sorted({*(check or []), *(skip or [])} - set(CHECKS))
    if unknown:
        raise InputError(f"unknown check(s) {', '.join(unknown)}; checks are: {', '.join(CHECKS)}")
    doc = Doctor(settings, server=server, api_key=api_key, ca_cert=ca_cert)
    colours = {"ok": "green", "warn": "yellow", "fail": "red", "skip": "dim"}

    def show(r: Any) -> None:
        if not json_out:
            c = colours.get(r.status, "white")
            err.print(f"[{c}]{r.status:>4}[/{c}]  {r.name:<9} {r.detail}  [dim]({r.seconds:.1f} s)[/dim]",
                      highlight=False, soft_wrap=True)

    try:
        results = doc.run(only=check, skip=skip or (), on_result=show)
    finally:
        doc.c.close()
    failed = [r.name for r in results if r.status == FAIL]
    if json_out:
        _print_json({"ok": not failed, "checks": [r.to_dict() for r in results]})
    elif failed:
        err.print(f"[red]{len(failed)} check(s) failed[/red]: {', '.join(failed)}", highlight=False)
    else:
        err.print("[green]all configured backends work[/green]", highlight=False)
    if failed:
        raise typer.Exit(1)


@app.command()
def prepare(data: DataOpt = None, config: ConfigOpt = None) -> None:
    """Load every configured model once (and build any model cache), so the first ingest starts at full speed."""
    settings = _settings(data, config)
    _quiet_libraries()
    from episodic.pipeline import Components

    c = Components(settings)
    for name in ("embedder", "asr", "describer", "llm"):
        with err.status(f"loading {name}…"):
            model = getattr(c, name)
            if hasattr(model, "prepare"):
                model.prepare()
        err.print(f"[green]✓[/green] {name}: {model.model_id}")


@app.command("config")
def show_config(data: DataOpt = None, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Show the effective settings (defaults → file → EPISODIC_* environment)."""
    import dataclasses

    settings = _settings(data, config)
    values = {
        f.name: (str(v) if isinstance(v, Path) else v)
        for f in dataclasses.fields(settings)
        if f.name != "extra"
        for v in [getattr(settings, f.name)]
    }
    if "openai_api_key" in values and values["openai_api_key"]:
        values["openai_api_key"] = "***"
    if values.get("milvus_token"):
        values["milvus_token"] = "***"
    if json_out:
        _print_json(values)
        return
    table = Table("setting", "value")
    for k, v in values.items():
        table.add_row(k, str(v))
    Console().print(table)


def _storage_error(exc: OSError) -> str | None:
    """One line for the storage failures a user can fix (a full disk, a read-only or
    unwritable directory); None for anything else (a bug deserves its traceback)."""
    import errno

    where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"no space left on the device{where}: free some space or point --data elsewhere"
    if exc.errno == errno.EROFS:
        return f"the file system is read-only{where}: writing needs a writable --data"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied{where}: check the owner and mode of the data directory"
    return None


def main() -> None:
    """Console entry point: user errors become one line on stderr and a non-zero exit."""
    limit_malloc_arenas()
    quiet_grpc_logging()
    try:
        app()  # standalone: usage errors and --help are handled (and exit) by click
    except EpisodicError as exc:
        err.print(f"[red]error[/red]: {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except OSError as exc:
        said = _storage_error(exc)
        if said is None:
            raise
        err.print(f"[red]error[/red]: {said}", highlight=False, soft_wrap=True)
        sys.exit(StoreError.exit_code)
    except KeyboardInterrupt as exc:
        said = str(exc)
        err.print(f"interrupted: {said}" if said else "interrupted: memories stored so far are kept")
        sys.exit(130)


if __name__ == "__main__":
    main()
