"""Commands that ask the memory: serve, ask, search, article, locate (in-process or through a server)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperCommand

from episodic.cli_app import (
    ConfigOpt,
    DataOpt,
    JsonOpt,
    _fmt_t,
    _print_json,
    _quiet_libraries,
    _settings,
    err,
)
from episodic.cli_remote import (
    ApiKeyOpt,
    CaCertOpt,
    ServerOpt,
    TimeoutOpt,
    memory_service,
    waiting_note,
)
from episodic.config import load_settings
from episodic.core.errors import InputError

commands = typer.Typer()  # merged into the app by episodic.cli


# -- query: serve, ask, search ----------------------------------------------------------------
StreamsOpt = Annotated[
    list[str] | None,
    typer.Option("--stream-id", help="Only this stream; repeat for several. Default: every stream (the API key may see)."),
]
TMinOpt = Annotated[float | None, typer.Option("--t-min", help="Only memories ending at or after this stream time (s).")]
TMaxOpt = Annotated[float | None, typer.Option("--t-max", help="Only memories starting at or before this stream time (s).")]
TopKOpt = Annotated[int, typer.Option("--top-k", help="How many pieces of evidence / moments (1-100).")]
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


# the memory as a MemoryService: --server's, the `episodic serve` holding --data, or in-process
_service = memory_service


@commands.command()
def serve(
    host: Annotated[str | None, typer.Option("--host", help="Address to listen on. Default: grpc_host (127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port. Default: grpc_port (50051); 0 picks a free one.")] = None,
    http_port: Annotated[
        int | None,
        typer.Option("--http-port", help="Also serve the REST/JSON API and the web console on this port (0 picks a free one). Default: http_port (-1 = off)."),
    ] = None,
    http_host: Annotated[str | None, typer.Option("--http-host", help="Address for --http-port. Default: http_host, else --host.")] = None,
    data: DataOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Serve the memory over gRPC (episodic.v1.EpisodicMemory, health, reflection) until Ctrl-C or SIGTERM.

    Prints `listening on HOST:PORT` on stdout once it accepts calls, and with --http-port `http on http://HOST:PORT` once the REST API and the console do. Without api_keys_file it listens on loopback only; with tls_cert_path/tls_key_path it speaks TLS (HTTPS too).

    While it runs, <data>/serve.json names it, and read commands on the same --data (streams, events, segments, ask, search …) ask it instead of opening the store it holds.
    """
    import logging

    settings = load_settings(config_file=config, data_dir=data, grpc_host=host, grpc_port=port,
                             http_port=http_port, http_host=http_host)
    _quiet_libraries()
    # the server's own notes at INFO; libraries only when something is wrong
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("episodic").setLevel(logging.INFO)
    from episodic import cli_remote
    from episodic.server import serve as run_server

    def ready(handle: Any) -> None:
        cli_remote.publish_marker(settings, handle)
        sys.stdout.write(f"listening on {handle.address}\n")
        if handle.http is not None:
            sys.stdout.write(f"http on {handle.http.url}\n")
        sys.stdout.flush()
        n = len(handle.servicer.keys)
        access = f"{n} API key(s)" if n else "no API keys: open to anyone on this machine"
        err.print(f"{'TLS' if handle.tls else 'plaintext'}, {access}; Ctrl-C or SIGTERM stops", highlight=False)

    try:
        run_server(settings, on_ready=ready)
    finally:
        cli_remote.remove_marker(settings.data_dir)


@commands.command(cls=_GreedyChoices)
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
    inspect: Annotated[
        bool,
        typer.Option("--inspect", help="Look again at the stored video whatever the memory's confidence (slower; the inspect path when the frames answer)."),
    ] = False,
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

    req = api_convert.ask_request(question, choices or (), stream_id or (), t_min, t_max, top_k, timeout,
                                  inspect=inspect)
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


def _example_image(path: Path) -> bytes:
    """The bytes of ``--image``, checked here (a readable JPEG, PNG or WebP of at most 8 MiB)
    so a bad file is one line and exit 2 before any model loads or a server is called."""
    from episodic.retrieval.by_example import MAX_IMAGE_BYTES, decode_image

    try:
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            raise InputError(f"--image {path}: {size / 2**20:.1f} MiB; at most {MAX_IMAGE_BYTES // 2**20} MiB are allowed")
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"--image {path}: {exc.strerror or exc}") from None
    try:
        decode_image(data)
    except InputError as exc:
        raise InputError(f"--image {path}: {exc}") from None
    return data


@commands.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in words (may be left out with --image or --like).")] = "",
    image: Annotated[
        Path | None,
        typer.Option("--image", help="Search by example: moments whose key frames look like this picture (JPEG, PNG or WebP, at most 8 MiB); with QUERY too, words and picture are rank-fused."),
    ] = None,
    like: Annotated[
        str | None,
        typer.Option("--like", help="Search by example: moments that look like this stored segment's key frame (a segment or event id, as `episodic segments` lists)."),
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
    """Find the moments (stream, start, end) that match a description, or look like a picture (--image) or a stored segment (--like), best first."""
    from episodic import api_convert

    if image is not None and like:
        raise InputError("search by --image or by --like, not both")
    picture = _example_image(image) if image is not None else None
    text, scope, k = api_convert.search_args(query, stream_id or (), t_min, t_max, top_k,
                                             by_example=picture is not None or bool(like))
    with _service(server, api_key, ca_cert, timeout, data, config) as memory:
        if picture is not None or like:
            moments = memory.search(text, scope, k, deadline_s=timeout, image=picture, like_segment_id=like)
        else:
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


@commands.command(help=ARTICLE_HELP)
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
    from episodic import api_article

    if json_out and markdown_out:
        raise InputError("--json and --markdown both choose the output: give one of them")
    req = api_article.article_request(request, style, stream_id or (), t_min, t_max, fusion, max_sub_queries, timeout)
    started = time.monotonic()
    with _service(server, api_key, ca_cert, timeout, data, config) as memory, \
            _ArticleProgressView(err, enabled=err.is_terminal or not json_out,
                                 waiting=waiting_note(memory, "loading the models …")) as view:
        # DeadlineExceeded, InputError and a failed call are EpisodicErrors: one line, their exit code
        result = memory.write_article(req, progress=view.update)
    if json_out:
        _print_json(api_article.article_to_dict(result))
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


# -- look again: locate -------------------------------------------------------------------------
LOCATE_HELP = """Find the second something was on screen by looking at the stored video itself (issue 15): each stream's span becomes an 8×8 grid of frames, the looker reads what each cell shows, and the best cells are expanded down to cells under a second, the memory's own hits looked at first, then the moments the video's packets show something on screen for a few seconds only (brief shots, read without decoding; look_brief_shots).

With one or more --stream-id, those streams are looked at (at most 4, those the memory points at first); with none, the streams the memory points at, or the most recently updated ones when it points nowhere (through --server with a key scoped to streams: those streams). --file looks at a recording that was never ingested, in this process.

The configured looker decides what can be found: the offline one (the default) reads on-screen text and names colours; "openai" asks a vision-language model. Says so when nothing was found (never a guess); streams that could not be looked at (audio only, snippets missing) are listed on stderr.

--json prints one document: the LocateResponse fields (moments with stream_id, t, t_start, t_end, confidence, why, depth; frames_examined, depth, elapsed_s, stopped, streams_looked, not_seen), plus "file" for --file; the same in-process and through --server.
"""


@commands.command(help=LOCATE_HELP)
def locate(
    query: Annotated[str, typer.Argument(help="What was shown, in words (on-screen text, a colour).", show_default=False)],
    stream_id: Annotated[
        list[str] | None,
        typer.Option("--stream-id", help="Look at this stream's stored snippets; repeat for several. Default: the streams the memory points at."),
    ] = None,
    file: Annotated[Path | None, typer.Option("--file", help="Look at a recording that was never ingested (in this process).")] = None,
    t_min: Annotated[float | None, typer.Option("--t-min", help="Look from this stream time (s).")] = None,
    t_max: Annotated[float | None, typer.Option("--t-max", help="Look up to this stream time (s).")] = None,
    max_frames: Annotated[int, typer.Option("--max-frames", help="Frames the search may decode, all streams together (64 per grid).", min=64, max=100000)] = 1024,
    top_k: Annotated[int, typer.Option("--top-k", help="How many moments (1-100).")] = 3,
    server: ServerOpt = None,
    api_key: ApiKeyOpt = None,
    ca_cert: CaCertOpt = None,
    timeout: TimeoutOpt = 300.0,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    from contextlib import nullcontext

    from episodic import api_convert

    if file is not None and stream_id:
        raise InputError("give either --stream-id (stored streams) or --file (a recording), not both")
    if file is not None and server:
        raise InputError("--file is looked at in this process: the server cannot read it (leave out --server and EPISODIC_SERVER)")
    if file is not None and (t_min is not None or t_max is not None):
        raise InputError("--t-min/--t-max apply to --stream-id; cut the recording instead")
    # checked before anything loads, the same way in-process and for --server
    req = None if file is not None else api_convert.locate_request(
        query, stream_id or (), t_min, t_max, max_frames, top_k, timeout)
    waiting = f"waiting for {server} …" if server else "loading the models …"
    with err.status(waiting) if err.is_terminal or not json_out else nullcontext() as status:

        def progress(where: str, r: Any) -> None:
            """After each grid looked at: where the search is (the local path only)."""
            if status is not None:
                status.update(f"looking at {where}: {r.grids_looked} grids, {r.frames_examined} frames, depth {r.depth}")

        if req is None:
            result = _locate_file(query, file, max_frames, top_k, timeout, data, config, progress)
        else:
            with _service(server, api_key, ca_cert, timeout, data, config) as memory:
                # a failed call is an EpisodicError: one line and its exit code
                result = memory.locate(req) if server else memory.locate(req, on_progress=progress)
    if req is not None and not result.streams_looked and result.not_seen:  # a typo, only audio
        raise InputError("nothing could be looked at: " + "; ".join(result.not_seen))
    doc = api_convert.locate_result_to_dict(result)
    if file is not None:
        doc["file"] = str(file)
    if json_out:
        _print_json(doc)
        return
    for line in result.not_seen:
        err.print(f"[yellow]not looked at[/yellow]: {line}", highlight=False, soft_wrap=True)
    looked = str(file) if file is not None else ", ".join(result.streams_looked) or "no stream"
    err.print(f"{looked}: {result.frames_examined} frames, depth {result.depth}, "
              f"{result.elapsed_s:.1f} s ({result.stopped})", highlight=False, soft_wrap=True)
    if not result.moments:
        err.print("not found: no frame looked at shows it")
        return
    by_stream = file is None  # a recording's moments all carry its path: no column for it
    table = Table(*(["stream"] if by_stream else []), "at", "from", "to", "confidence", "seen")
    for m in result.moments:
        cells = [_fmt_t(m.t), _fmt_t(m.t_start), _fmt_t(m.t_end), f"{m.confidence:.2f}", m.why]
        table.add_row(*([m.stream_id] if by_stream else []), *cells)
    Console().print(table)


def _locate_file(
    query: str, file: Path, max_frames: int, top_k: int, timeout: float,
    data: Path | None, config: Path | None, progress: Any,
) -> Any:
    """``episodic locate --file``: LookAgain over a recording with no memory to seed it (so no
    MemoryQA and no store search, only the looker's models)."""
    from episodic.components import Components
    from episodic.services.look_again import LookAgain

    components = Components(_settings(data, config))
    _quiet_libraries()
    try:
        look = LookAgain(components, lambda *_: [])  # never ingested: nothing to search
        return look.locate_file(query, file, max_frames=max_frames, top_k=top_k, deadline_s=timeout,
                                on_progress=progress)
    finally:
        components.close()
