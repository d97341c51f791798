"""The ``episodic`` command line.

Every command takes ``--data DIR`` (or ``EPISODIC_DATA``) and ``--config FILE``. Progress and
messages go to stderr; with ``--json`` stdout carries exactly one JSON document.
"""

from __future__ import annotations

import sys

from episodic import (
    cli_console,
    cli_forget,
    cli_kafka,
    cli_mcp,
    cli_query,
    cli_recall,
    cli_records,
    cli_setup,
    cli_summaries,
    cli_tools,
    cli_watch,
)
from episodic.cli_app import app, err
from episodic.core.errors import EpisodicError, StoreError
from episodic.process import limit_malloc_arenas, quiet_grpc_logging

# the command groups, in the order --help lists them
for _group in (cli_records, cli_query, cli_console, cli_recall, cli_summaries, cli_mcp, cli_forget,
               cli_kafka, cli_tools, cli_setup):
    app.registered_commands += _group.commands.registered_commands
app.add_typer(cli_watch.app, name="watch")


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
    cli_setup.accept_click_completion_instruction()
    try:
        # standalone: usage errors and --help are handled (and exit) by click; the name is fixed
        # so `python -m episodic.cli` says `episodic` too and reads _EPISODIC_COMPLETE
        app(prog_name="episodic")
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
