"""Imports point one way (issue 14), and everything installs under one name.

Layers, lowest first:

0. ``episodic.proto`` – generated messages;
1. ``episodic.core`` – the kernel: errors, records, request types, Protocols, validation;
2. ``episodic.config`` – configuration;
3. ``episodic.stream`` | ``episodic.memory`` – siblings: neither imports the other;
4. ``episodic.retrieval``;
5. ``episodic.reasoning``;
6. ``episodic.services`` – where retrieval and reasoning meet (question answering, articles);
7. the composition root – everything else in ``episodic``: CLI, server, worker, wiring.

A module may import its own layer (its own sibling group) and the layers below. Nothing imports
the composition root. The test fails on any import that points up, so keep it green by moving
a shared piece down rather than by adding an exception.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# repository folder -> the installed package it maps to (pyproject's package-dir)
FOLDERS = {
    "proto": "episodic.proto",
    "core": "episodic.core",
    "episodic": "episodic",
    "stream": "episodic.stream",
    "memory": "episodic.memory",
    "retrieval": "episodic.retrieval",
    "reasoning": "episodic.reasoning",
    "services": "episodic.services",
}
_RANKS = {"proto": 0, "core": 1, "config": 2, "stream": 3, "memory": 3, "retrieval": 4, "reasoning": 5, "services": 6}
_ROOT_RANK = 7  # everything else in `episodic`: the composition root


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [FOLDERS[rel.parts[0]], *rel.parts[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> tuple[int, str]:
    """(rank, sibling group) of a module named ``episodic.…``."""
    parts = module.split(".")
    group = parts[1] if len(parts) > 1 and parts[1] in _RANKS else "episodic"
    return _RANKS.get(group, _ROOT_RANK), group


def _imported_names(path: Path) -> set[str]:
    """Every absolute import in ``path``, at any depth in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _modules() -> list[tuple[str, Path]]:
    return [
        (_module_name(path), path)
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not path.name.endswith(("_pb2.py", "_pb2_grpc.py"))
    ]


def wrong_way_imports() -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for importer, path in _modules():
        rank, group = _layer(importer)
        for imported in _imported_names(path):
            if imported.split(".")[0] != "episodic":
                continue
            their_rank, their_group = _layer(imported)
            if their_rank > rank or (their_rank == rank and their_group != group):
                out.add((importer, imported))
    return out


def test_no_import_points_up_the_layers() -> None:
    wrong = wrong_way_imports()
    assert not wrong, (
        "imports that point up the layers (see this test's docstring); depend on a lower "
        f"layer instead, or move the shared piece down: {sorted(wrong)}"
    )


def test_the_rule_itself() -> None:
    """The ranking says what the docstring says, and an upward import would be caught."""
    assert _layer("episodic.core.errors")[0] < _layer("episodic.config")[0] < _layer("episodic.stream.decode")[0]
    assert _layer("episodic.stream.decode")[0] == _layer("episodic.memory.encoder")[0]
    assert _layer("episodic.stream.x")[1] != _layer("episodic.memory.x")[1]
    assert _layer("episodic.retrieval.fast")[0] < _layer("episodic.reasoning.answer")[0]
    assert _layer("episodic.reasoning.answer")[0] < _layer("episodic.services.qa")[0] < _layer("episodic.cli")[0]
    assert _layer("episodic.pipeline")[0] == _ROOT_RANK


def test_the_kernel_has_no_import_time_side_effects() -> None:
    """Importing the kernel (or the root package) changes no environment variable."""
    import os
    import subprocess
    import sys

    code = (
        "import os; before = dict(os.environ); "
        "import episodic, episodic.core.errors, episodic.core.records, episodic.core.validation, "
        "episodic.config, episodic.stream.decode, episodic.pipeline, episodic.components, episodic.cli; "
        "assert dict(os.environ) == before, set(os.environ.items()) ^ set(before.items())"
    )
    set_here = ("GRPC_VERBOSITY", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM")
    env = {k: v for k, v in os.environ.items() if k not in set_here}  # this process set them once
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=env)


def test_everything_is_imported_under_one_name() -> None:
    """The folders install as ``episodic.*`` only (pyproject's package-dir); an import of a bare
    ``stream`` or ``proto`` would load a second copy of a module, or a stranger's package."""
    bare = {
        (name, imported)
        for name, path in _modules()
        for imported in _imported_names(path)
        if imported.split(".")[0] in FOLDERS and imported.split(".")[0] != "episodic"
    }
    assert not bare, f"import these as episodic.<folder>…: {sorted(bare)}"


def test_every_name_imported_from_the_project_exists() -> None:
    """An import inside a function runs only when the function does: after code moves between
    modules, ``from episodic.x import moved_name`` there would fail in front of a user. Every
    ``from episodic… import name`` in the project must name something the module has."""
    import importlib

    missing = []
    for importer, path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("episodic")):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                if alias.name == "*" or hasattr(module, alias.name):
                    continue
                try:
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    missing.append((importer, node.module, alias.name))
    assert not missing, f"imports of names that do not exist: {missing}"
