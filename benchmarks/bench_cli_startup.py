"""Start-up time of the `episodic` command for commands that need no model (issue 18).

Each command runs as a whole new process, as a user's shell (or a Tab completion) runs it:
one warm-up run, then ``--runs`` timed runs; the median, minimum and maximum wall time are
printed per command. "streams"/"events" list an empty data directory (no store file: nothing
is opened), "init -" prints the commented settings file, "complete str" is what bash asks
for when Tab is pressed after `episodic str`. Nothing is asserted: timings depend on the
machine (the README's figures are from this project's 2-core machine).

To see where the time goes: ``python -X importtime -m episodic.cli --version 2>&1 |
sort -t'|' -k2 -n | tail -30``.

    .venv/bin/python benchmarks/bench_cli_startup.py [--runs 9] [--episodic PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS: dict[str, list[str]] = {
    "--version": ["--version"],
    "--help": ["--help"],
    "streams --help": ["streams", "--help"],
    "doctor --help": ["doctor", "--help"],
    "streams (empty data dir)": ["streams", "--data", "{data}"],
    "events (empty data dir)": ["events", "--data", "{data}"],
    "config": ["config", "--data", "{data}"],
    "init": ["init", "{tmp}/episodic.toml", "--force"],
    "completion bash": ["completion", "bash"],
    "complete `episodic str`": [],  # the completion request itself, through the environment
}


def _episodic() -> list[str]:
    here = Path(sys.executable).parent / "episodic"
    if here.exists():
        return [str(here)]
    found = shutil.which("episodic")
    return [found] if found else [sys.executable, "-m", "episodic.cli"]


def time_command(argv: list[str], env: dict[str, str], runs: int) -> list[float]:
    """Wall seconds of ``runs`` runs after one warm-up."""
    out: list[float] = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
        if i:
            out.append(elapsed)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=9, help="timed runs per command (after one warm-up)")
    ap.add_argument("--episodic", default="", help="the command to time (default: this venv's episodic)")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args()
    base = args.episodic.split() if args.episodic else _episodic()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EPISODIC_", "_EPISODIC"))}
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        for name, tail in COMMANDS.items():
            run_env = dict(env)
            if not tail:
                run_env.update(_EPISODIC_COMPLETE="complete_bash", COMP_WORDS="episodic str", COMP_CWORD="1")
            argv = base + [a.format(data=data, tmp=tmp) for a in tail]
            t = time_command(argv, run_env, args.runs)
            results[name] = {"median_s": statistics.median(t), "min_s": min(t), "max_s": max(t)}
            if not args.json:
                print(f"{name:<28} median {results[name]['median_s']:.3f} s  "
                      f"(min {min(t):.3f}, max {max(t):.3f}, {args.runs} runs)", flush=True)
    if args.json:
        print(json.dumps({"command": base, "runs": args.runs, "results": results}, indent=2))


if __name__ == "__main__":
    main()
