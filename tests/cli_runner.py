"""Run the real `episodic` CLI in a fresh process, as a user would."""

from __future__ import annotations

import os
import signal
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


def ctrl_c_works() -> None:
    """For ``preexec_fn``: give the child the default Ctrl-C (SIGINT) handling.

    A shell runs a background command (``pytest … &``, as CI runners may) with SIGINT and
    SIGQUIT ignored, every process started from it inherits that, and Python then keeps
    ignoring SIGINT: a test that interrupts a child would wait for nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_cli(*args: str, data: Path, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """Start `episodic ARGS` in the background; stderr is a pipe (read it line by line)."""
    return subprocess.Popen(
        [sys.executable, "-m", "episodic.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(data, env),
        preexec_fn=ctrl_c_works,
    )
