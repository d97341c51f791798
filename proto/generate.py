"""Regenerate the Python code for the gRPC API: ``python -m episodic.proto.generate``.

The generated modules are committed (so installing the package needs no protoc), and
``tests/unit/episodic/test_server.py`` regenerates them into a temporary directory and checks that the
result is byte-identical: an edit of a ``.proto`` file without regenerating fails the suite.

protoc runs with ``-I proto`` so the descriptors are registered under their canonical names
(``episodic/v1/episodic.proto``), which is what reflection shows and what other ``.proto``
files would import. protoc then writes ``from episodic.v1 import episodic_pb2`` into the
``_grpc`` module, an absolute import that would resolve to this project's ``episodic``
package; it is rewritten to a package-relative ``from . import episodic_pb2``, so the code
imports as ``from proto.episodic.v1 import episodic_pb2, episodic_pb2_grpc`` from anywhere.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

PROTO_ROOT = Path(__file__).resolve().parent
PROTO_FILES = ("episodic/v1/episodic.proto", "episodic/v1/media.proto")

# `from episodic.v1 import episodic_pb2 as episodic_dot_v1_dot_episodic__pb2`
_ABSOLUTE_IMPORT = re.compile(r"^from ((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*) import (\w+_pb2)( as \w+)?$", re.M)


def _relative_imports(text: str, package: str) -> str:
    """Rewrite imports of sibling generated modules (same proto package) as relative ones."""

    def fix(m: re.Match[str]) -> str:
        if m.group(1) != package:
            return m.group(0)  # e.g. google.protobuf: installed, absolute is right
        return f"from . import {m.group(2)}{m.group(3) or ''}"

    return _ABSOLUTE_IMPORT.sub(fix, text)


def generate(out_root: Path = PROTO_ROOT) -> list[Path]:
    """Run protoc on every file in PROTO_FILES, writing under ``out_root`` (which mirrors
    ``proto/``); returns the generated files, sorted."""
    out_root = Path(out_root)
    out_root.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        *(str(PROTO_ROOT / f) for f in PROTO_FILES),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"protoc failed ({proc.returncode}):\n{proc.stderr}")
    written: list[Path] = []
    for rel in PROTO_FILES:
        package = str(Path(rel).parent).replace("/", ".")
        stem = Path(rel).stem
        for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py"):
            path = out_root / Path(rel).parent / f"{stem}{suffix}"
            path.write_text(_relative_imports(path.read_text(), package))
            written.append(path)
    return sorted(written)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=PROTO_ROOT, help="output root (default: the proto/ directory)"
    )
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path)


if __name__ == "__main__":
    main()
