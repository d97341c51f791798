"""``episodic recall``: fuzzy recall (issue 16) in-process or through a server, with the
conventions of ``episodic search`` and ``episodic locate`` (same scope, server and key options,
one JSON document with ``--json``, the request checked before anything loads)."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from episodic.cli_app import ConfigOpt, DataOpt, JsonOpt, _print_json, err
from episodic.cli_query import (
    ApiKeyOpt,
    CaCertOpt,
    ServerOpt,
    StreamsOpt,
    TimeoutOpt,
    TMaxOpt,
    TMinOpt,
    _service,
)
from episodic.cli_remote import waiting_note
from episodic.core.query import RecalledStream, RecallResult

commands = typer.Typer()  # merged into the app by episodic.cli

RECALL_HELP = """Find the recording, and the moment in it, from a half-remembered description: the description becomes up to four facet queries, each is searched for in the memory, and every candidate stream is checked against every facet given. A stream that fails a facet is rejected and listed; only when no stream holds every facet are the closest shown, at half confidence, marked "partial match", and a result resting on poor evidence is marked "weak".

The four facets. Say them in the free-text DESCRIPTION (it is split into them), or give them explicitly (an explicit facet wins over what the text would be split into); DESCRIPTION may be left out when a facet option is given:

--global, the global impression of the whole recording: --global "a cheerful cooking vlog in a small kitchen".

--key-moment, one moment in it: --key-moment "a cat jumps onto the kitchen counter".

--temporal, what came before or after the key moment, or at the recording's start or end: --temporal "after that they talk about the oven".

--audio, what was heard, words said or sounds: --audio "someone says forty minutes" or --audio "music at the start".

All in one: episodic recall "a cooking video; a cat jumped on the counter, then they talked about the oven; music at the end".

Output: one block per recording found, best first (the stream, the key moment's time as m:ss and in seconds, the confidence, each facet's score, why it matched), then on stderr what the description was searched as and the streams rejected. --json prints one document: {"results": [{"stream_id", "t", "t_start", "t_end", "confidence", "facets", "why", "segment_id"}], "facets", "rejected", "elapsed_s"}, the same in-process and through --server. Finding nothing is not an error (exit 0).
"""


def _m_ss(t: float) -> str:
    """Stream time as people say it: m:ss (h:mm:ss past an hour)."""
    s = int(round(max(t, 0.0)))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h:d}:{m:02d}:{sec:02d}" if h else f"{m:d}:{sec:02d}"


def _facet_label(name: str) -> str:
    return name.replace("_", " ")


def _block(rank: int, r: RecalledStream) -> str:
    """One result as a few lines of text (rich markup, user text escaped)."""
    lines = [
        f"[bold]{rank}. {escape(r.stream_id)}[/bold]  at {_m_ss(r.t)} ({r.t:.1f} s)  "
        f"confidence {r.confidence:.2f}",
    ]
    if r.segment_id:
        lines.append(
            f"   moment: {_m_ss(r.t_start)}–{_m_ss(r.t_end)} "
            f"({r.t_start:.1f}–{r.t_end:.1f} s), segment {escape(r.segment_id)}"
        )
    if r.facets:
        scores = " · ".join(f"{_facet_label(k)} {v:.2f}" for k, v in r.facets.items())
        lines.append(f"   facets: {scores}")
    if r.why:
        lines.append(f"   why: {escape(r.why)}")
    return "\n".join(lines)


def _print_human(result: RecallResult) -> None:
    if result.results:
        out = Console()
        for i, r in enumerate(result.results, 1):
            out.print(_block(i, r), highlight=False, soft_wrap=True)
    else:
        err.print("no recording matches the description", highlight=False)
    if result.facets:
        err.print("searched for:", highlight=False)
        for name, text in result.facets.items():
            err.print(f"  {_facet_label(name)}: {escape(text)}", highlight=False, soft_wrap=True)
    if result.rejected:
        err.print("rejected:", highlight=False)
        for line in result.rejected:
            err.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    err.print(f"{result.elapsed_s:.2f} s", highlight=False)


@commands.command(help=RECALL_HELP)
def recall(
    description: Annotated[
        str,
        typer.Argument(
            help="What you remember, in words (optional when a facet option is given).",
            show_default=False,
            metavar="DESCRIPTION",
        ),
    ] = "",
    global_impression: Annotated[
        str,
        typer.Option(
            "--global", help="The global impression of the whole recording.", show_default=False
        ),
    ] = "",
    key_moment: Annotated[
        str, typer.Option("--key-moment", help="A key moment in it.", show_default=False)
    ] = "",
    temporal: Annotated[
        str,
        typer.Option(
            "--temporal", help="What came before/after it, or at the start/end.", show_default=False
        ),
    ] = "",
    audio: Annotated[
        str,
        typer.Option("--audio", help="What was heard: words said or sounds.", show_default=False),
    ] = "",
    stream_id: StreamsOpt = None,
    t_min: TMinOpt = None,
    t_max: TMaxOpt = None,
    top_k: Annotated[int, typer.Option("--top-k", help="How many recordings at most (1-100).")] = 5,
    server: ServerOpt = None,
    api_key: ApiKeyOpt = None,
    ca_cert: CaCertOpt = None,
    timeout: TimeoutOpt = 300.0,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    from episodic import api_recall

    # checked before anything loads, the same way in-process and for --server
    req = api_recall.recall_request(
        description,
        global_impression,
        key_moment,
        temporal,
        audio,
        stream_id or (),
        t_min,
        t_max,
        top_k,
        timeout,
    )
    with (
        _service(server, api_key, ca_cert, timeout, data, config) as memory,
        err.status(waiting_note(memory, "loading the models …")) if err.is_terminal else nullcontext(),
    ):
        # a failed call is an EpisodicError: one line and its exit code
        result = memory.recall(req)
    if json_out:
        _print_json(api_recall.recall_result_to_dict(result))
        return
    _print_human(result)
