"""Start-up time of the `episodic` command for commands that need no model (issue 18).

Each command runs as a whole new process, as a user's shell (or a Tab completion) runs it:
one warm-up run, then ``--runs`` timed runs; the median, minimum and maximum wall time are
printed per command (with ``--vs``, a second command's too, the two taking turns; a command that
fails is timed all the same and its exit code shown). "streams"/"events" list an empty data directory (no store file: nothing
is opened), "init -" prints the commented settings file, "complete str" is what bash asks
for when Tab is pressed after `episodic str`. Nothing is asserted: timings depend on the
machine (the README's figures are from this project's 2-core machine).

To see where the time goes: ``python -X importtime -m episodic.cli --version 2>&1 |
sort -t'|' -k2 -n | tail -30``.

    .venv/bin/python benchmarks/bench_cli_startup.py [--runs 9] [--episodic CMD] [--vs CMD] [--json]
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


def _once(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, done.returncode


def time_commands(
    argvs: list[list[str]], env: dict[str, str], runs: int, cwd: str
) -> list[tuple[list[float], int]]:
    """Wall seconds of ``runs`` runs of each command after one warm-up, the commands taking
    turns (A B A B …, so a machine that slows down slows both), and each one's last exit code."""
    times: list[list[float]] = [[] for _ in argvs]
    codes = [0 for _ in argvs]
    for i in range(runs + 1):
        for k, argv in enumerate(argvs):
            elapsed, codes[k] = _once(argv, env, cwd)
            if i:
                times[k].append(elapsed)
    return list(zip(times, codes, strict=True))


def _summary(t: list[float], code: int) -> dict[str, float]:
    return {"median_s": statistics.median(t), "min_s": min(t), "max_s": max(t), "exit": code}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=9, help="timed runs per command (after one warm-up)")
    ap.add_argument("--episodic", default="", help="the command to time, split at spaces (default: this venv's episodic)")
    ap.add_argument("--vs", default="", help="a second command to time in turn with it, e.g. an older "
                    "checkout: 'env PYTHONPATH=/old/tree python -m episodic.cli'")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args()
    base = args.episodic.split() if args.episodic else _episodic()
    other = args.vs.split()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EPISODIC_", "_EPISODIC"))}
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        for name, tail in COMMANDS.items():
            run_env = dict(env)
            if not tail:
                run_env.update(_EPISODIC_COMPLETE="complete_bash", COMP_WORDS="episodic str", COMP_CWORD="1")
            argv = [a.format(data=data, tmp=tmp) for a in tail]
            # run in the empty temporary directory: `python -m` puts the working directory first
            # on sys.path, where a checkout would shadow the tree being timed
            timed = time_commands([base + argv] + ([other + argv] if other else []), run_env, args.runs, tmp)
            results[name] = {"a": _summary(*timed[0])}
            line = f"{name:<26} {_shown(results[name]['a'])}"
            if other:
                results[name]["vs"] = _summary(*timed[1])
                line += f"   vs {_shown(results[name]['vs'])}"
            if not args.json:
                print(line, flush=True)
    if args.json:
        print(json.dumps({"command": base, "vs": other, "runs": args.runs, "results": results}, indent=2))


def _shown(r: dict[str, float]) -> str:
    failed = f" [exit {r['exit']:g}]" if r["exit"] else ""
    return f"median {r['median_s']:.3f} s (min {r['min_s']:.3f}, max {r['max_s']:.3f}){failed}"


if __name__ == "__main__":
    main()
