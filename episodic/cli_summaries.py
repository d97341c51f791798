"""``episodic summaries``: the day at a glance (issue 17), in-process or through a server, with
the conventions of ``episodic recall`` (same server and key options, one JSON document with
``--json``, the request checked before anything loads)."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from episodic.cli_app import ConfigOpt, DataOpt, JsonOpt, _print_json, err
from episodic.cli_query import ApiKeyOpt, CaCertOpt, ServerOpt, TimeoutOpt, _service
from episodic.cli_remote import waiting_note
from episodic.core.summaries import SummaryList, summaries_request, window_words

commands = typer.Typer()  # merged into the app by episodic.cli

SUMMARIES_HELP = """The day at a glance: what one stream held in each window of its stream time (every 10 minutes, every hour, every day by default; overview_stretch_s and summary_windows), composed only from its memories as the stream grew: the span, the main things said (short quotes and the words most memories mention), the names said, what was seen, read on screen and heard, with how many memories (or seconds) each rests on.

Windows are aligned to stream time 0; when the stream's metadata has a wall-clock start (wall_clock_start) each window also says when that was, otherwise stream time only.

Examples: episodic summaries --stream-id cam2 --window 1h; episodic summaries --stream-id cam2 --window 10m --t-min 3600 --t-max 7200.

--json prints one document: {"stream_id", "summaries": [{"window", "t_start", "t_end", "covered_start", "covered_end", "memories", "events", "said", "topics", "people", "seen", "on_screen", "heard", "tone", "text", "wall_start", …}], "wall_clock_start", "windows"}, the same in-process and through --server. A stream with no summaries is not an error (exit 0).
"""


def _print_human(result: SummaryList) -> None:
    from episodic.memory.window_summaries import summary_header, summary_lines

    if not result.summaries:
        err.print(f"no summaries for stream {result.stream_id!r} (nothing stored in that window, "
                  "or no such stream)", highlight=False)
        return
    out = Console()
    clock = (f"stream time 0 is {result.wall_clock_start} on the wall clock" if result.wall_clock_start
             else "stream time only (no wall-clock start in the stream's metadata)")
    out.print(f"[bold]{escape(result.stream_id)}[/bold]: {clock}", highlight=False, soft_wrap=True)
    size = ""
    for ws in result.summaries:
        if ws.window != size:
            size = ws.window
            out.print(f"\n[bold]{window_words(ws.window_s)} windows ({ws.window})[/bold]", highlight=False)
        out.print(escape(summary_header(ws)), highlight=False, soft_wrap=True)
        for line in summary_lines(ws):
            out.print("    " + escape(line), highlight=False, soft_wrap=True)


@commands.command(help=SUMMARIES_HELP)
def summaries(
    stream_id: Annotated[str, typer.Option("--stream-id", help="The stream.", show_default=False)],
    window: Annotated[
        str, typer.Option("--window", help="Only this window size: 10m, 1h or 1d (default: every size).",
                          show_default=False)
    ] = "",
    t_min: Annotated[float | None, typer.Option("--t-min", help="Only windows ending after this stream time (s).")] = None,
    t_max: Annotated[float | None, typer.Option("--t-max", help="Only windows starting at or before this stream time (s).")] = None,
    server: ServerOpt = None,
    api_key: ApiKeyOpt = None,
    ca_cert: CaCertOpt = None,
    timeout: TimeoutOpt = 60.0,
    data: DataOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    from episodic import api_summaries

    # checked before anything loads, the same way in-process and for --server
    req = summaries_request(stream_id, window, t_min, t_max)
    with (
        _service(server, api_key, ca_cert, timeout, data, config) as memory,
        err.status(waiting_note(memory, "reading the memory …")) if err.is_terminal else nullcontext(),
    ):
        result = memory.list_summaries(req)
    if json_out:
        _print_json(api_summaries.summary_list_to_dict(result))
        return
    _print_human(result)
