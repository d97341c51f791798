"""``episodic console``: the web console on this machine, in one command.

It runs what ``episodic serve --http-port`` runs, on loopback only: gRPC on a free port, the
REST API and the console's pages on ``--port`` (8080; 0 picks a free one), over ``--data`` with
the configured (by default the embedded) models, and opens a browser at the console.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from episodic.cli_app import ConfigOpt, DataOpt, _quiet_libraries, err
from episodic.config import load_settings

commands = typer.Typer()  # merged into the app by episodic.cli


def _open_browser(url: str) -> None:
    """Open ``url`` in a browser if there is one; never fail when there is none."""
    try:
        import webbrowser

        webbrowser.open(url, new=2)
    except Exception as exc:  # no browser, no display: the printed URL is enough
        err.print(f"(could not open a browser: {exc})", highlight=False)


@commands.command()
def console(
    port: Annotated[int, typer.Option("--port", help="HTTP port of the console (0 picks a free one).", min=0, max=65535)] = 8080,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Do not open a browser; just print the URL.")] = False,
    data: DataOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Open the web console: search, ask and watch the memory in a browser (loopback only).

    Prints `console at http://127.0.0.1:PORT/` once it is ready and serves until Ctrl-C. The same API is `episodic serve --http-port`, for other machines (with API keys).
    """
    import logging

    settings = load_settings(config_file=config, data_dir=data, grpc_host="127.0.0.1", grpc_port=0,
                             http_host="127.0.0.1", http_port=port, http_public_url="")
    _quiet_libraries()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("episodic").setLevel(logging.INFO)
    logging.getLogger("episodic.access").setLevel(logging.WARNING)  # a browser makes many calls
    from episodic import cli_remote
    from episodic.server import serve as run_server

    def ready(handle: Any) -> None:
        cli_remote.publish_marker(settings, handle)  # `episodic streams` etc. ask this server meanwhile
        url = f"{handle.http.url}/"
        sys.stdout.write(f"console at {url}\n")
        sys.stdout.flush()
        n = len(handle.servicer.keys)
        if n:
            err.print(f"{n} API key(s) configured: the console asks for one", highlight=False)
        err.print("Ctrl-C stops", highlight=False)
        if not no_browser:
            _open_browser(url)

    try:
        run_server(settings, on_ready=ready)
    finally:
        cli_remote.remove_marker(settings.data_dir)
