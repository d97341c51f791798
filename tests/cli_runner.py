"""Run the real `episodic` CLI in a fresh process, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def cli_env(data: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI child: ours, the data directory, and ``env`` on top."""
    return {**os.environ, "EPISODIC_DATA": str(data), **(env or {})}


def run_cli(
    *args: str,
    data: Path,
    check: bool = True,
    timeout: float = 900,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "episodic.cli", *args],
        capture_output=True,
        text=True,
        env=cli_env(data, env),
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"episodic {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


# A shell runs a background command (``pytest … &``, as CI runners may) with SIGINT ignored,
# every process started from it inherits that, and Python then keeps ignoring SIGINT: a test
# that interrupts a child would wait for nothing. Children that a test will interrupt start
# through this line, which gives them Python's own Ctrl-C handling first (no preexec_fn: code
# run between fork and exec in a threaded parent can crash the child before it starts).
CTRL_C_WORKS = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "


def start_cli(
    *args: str, data: Path, env: Mapping[str, str] | None = None, ctrl_c: bool = False
) -> subprocess.Popen[str]:
    """Start `episodic ARGS` in the background; stderr is a pipe (read it line by line).
    ``ctrl_c``: the test will interrupt it (see :data:`CTRL_C_WORKS`)."""
    command = (
        ["-c", CTRL_C_WORKS + "import runpy, sys; sys.argv[0] = 'episodic'; runpy.run_module('episodic.cli', run_name='__main__')"]
        if ctrl_c
        else ["-m", "episodic.cli"]
    )
    return subprocess.Popen(
        [sys.executable, *command, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(data, env),
    )
