"""Where ``bench_qa.py`` keeps a generated set and its stores, for the scripts that read them
afterwards (``relisten_versions.py``, ``bench_near_miss.py``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

from bench_qa import DEFAULT_ROOT, VERSION


def add_set_arguments(ap: argparse.ArgumentParser) -> None:
    """The options that name the sets: as ``bench_qa.py`` was run, several seeds at once."""
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--split", default="dev",
                    help="dev (these scripts read what was said: tune on dev; read held-out as totals only)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[4])
    ap.add_argument("--streams", type=int, default=3)
    ap.add_argument("--minutes", type=float, default=2.5)


def set_folders(args: argparse.Namespace) -> Iterator[Path]:
    """Each seed's folder (``<root>/v<version>-s<seed>-n<streams>-m<minutes>``)."""
    for seed in args.seeds:
        yield args.root / f"v{VERSION}-s{seed}-n{args.streams}-m{args.minutes:g}"
