"""Run the real `episodic` CLI in a fresh process, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(*args: str, data: Path, check: bool = True, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "EPISODIC_DATA": str(data)}
    proc = subprocess.run(
        [sys.executable, "-m", "episodic.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"episodic {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc
