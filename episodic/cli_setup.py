"""Getting started: ``episodic init`` (a commented settings file) and ``episodic completion``
(the shell completion script). Neither loads a model or opens a store."""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from episodic.cli_app import err
from episodic.core.errors import InputError

commands = typer.Typer()  # merged into the app by episodic.cli

PROG = "episodic"
COMPLETE_VAR = "_EPISODIC_COMPLETE"


class Shell(str, Enum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"


@commands.command()
def init(
    path: Annotated[
        Path,
        typer.Argument(help="File to write ('-' for stdout); a directory gets an episodic.toml inside (e.g. your --data directory, where it is read without --config)."),
    ] = Path("episodic.toml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a settings file listing every setting with its default and what it does, all commented out.

    The file loads as the defaults; remove the '#' of a `#key = value` line to change that key. Use it with --config FILE or EPISODIC_CONFIG=FILE, or put it in the data directory as episodic.toml.
    """
    from episodic.config import CONFIG_FILE_NAME, FIELD_SECTION
    from episodic.config.template import render_settings_template, write_settings_template
    from episodic.version import package_version

    text = render_settings_template(version=package_version(), config_file_name=CONFIG_FILE_NAME)
    if str(path) == "-":
        sys.stdout.write(text)
        return
    if path.is_dir():
        path = path / CONFIG_FILE_NAME
    try:
        write_settings_template(path, text, force=force)
    except FileExistsError:
        raise InputError(f"{path} already exists: give --force to overwrite it") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory") from None
    err.print(f"wrote {path}: {len(FIELD_SECTION)} settings at their defaults, commented out; use it "
              f"with --config {path} (or EPISODIC_CONFIG), or as <data dir>/{CONFIG_FILE_NAME}, read "
              "without either", highlight=False, soft_wrap=True)


@commands.command()
def completion(
    shell: Annotated[Shell, typer.Argument(help="The shell to complete in.")],
) -> None:
    """Print the shell completion script (works offline; no shell detection).

    bash: episodic completion bash > ~/.local/share/bash-completion/completions/episodic  ·  zsh: episodic completion zsh > "${fpath[1]}/_episodic"  ·  fish: episodic completion fish > ~/.config/fish/completions/episodic.fish. Each Tab then runs episodic, which answers without loading models.
    """
    from typer.completion import get_completion_script

    sys.stdout.write(get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell.value) + "\n")


def accept_click_completion_instruction(environ: MutableMapping[str, str] = os.environ) -> None:
    """Typer's scripts ask for completions with ``_EPISODIC_COMPLETE=complete_bash``; click's
    own protocol says ``bash_complete`` (``bash_source`` for the script). Accept both, so a
    script written for plain click works too."""
    value = environ.get(COMPLETE_VAR, "")
    shell, _, instruction = value.partition("_")
    if shell in {s.value for s in Shell} and instruction in ("complete", "source"):
        environ[COMPLETE_VAR] = f"{instruction}_{shell}"
