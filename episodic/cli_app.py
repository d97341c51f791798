"""What every ``episodic`` command shares: the app, stderr, the common options and helpers."""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from episodic.config import Settings, load_settings

app = typer.Typer(
    name="episodic",
    help=(
        "Streaming episodic memory for audiovisual streams.\n\n"
        "Ingest recordings into ShortTermMemories and ThetaEvents stored in Milvus "
        "(a Milvus Lite file under --data by default), then list them."
    ),
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion; `episodic completion SHELL`
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)


def _print_version(value: bool) -> None:
    if value:
        from episodic.version import package_version

        sys.stdout.write(f"episodic {package_version()}\n")
        raise typer.Exit()


@app.callback()
def _app_options(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True),
    ] = False,
) -> None:
    # no docstring: the app's help above stays its description
    pass

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


