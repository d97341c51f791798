"""Imports point one way (issue 14): a ratchet until the layering lands.

Layers, lowest first: ``proto`` (generated messages) ← the kernel (``episodic.errors``) ←
configuration (``episodic.config``) ← ``stream`` | ``memory`` (siblings: neither imports the
other) ← ``retrieval`` ← ``reasoning`` ← the composition root (everything else in
``episodic``: CLI, server, worker, wiring). An import from a lower layer to a higher one, or
between siblings, points the wrong way.

``episodic.errors`` and ``episodic.config`` are ranked where they belong, although they still
live in the composition root's package (moving them out is part of the layering work). The
code does not obey the rest yet either. :data:`KNOWN` lists every wrong-way import (importing
module → imported module) that exists today. The test fails on any wrong-way import that is
not listed, so the graph cannot get worse, and on any listed one that is gone, so the list
shrinks as the layering work removes them. When it is empty, it stays empty.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# repository folder -> the installed package it maps to (pyproject's package-dir)
FOLDERS = {
    "proto": "episodic.proto",
    "episodic": "episodic",
    "stream": "episodic.stream",
    "memory": "episodic.memory",
    "retrieval": "episodic.retrieval",
    "reasoning": "episodic.reasoning",
}
# (rank, sibling group): a module may import lower ranks, and its own group at its own rank
_KERNEL = {"episodic.errors": 1, "episodic.config": 2}
_RANKS = {"proto": 0, "stream": 3, "memory": 3, "retrieval": 4, "reasoning": 5}
_ROOT_RANK = 6  # everything else in `episodic`: the composition root

KNOWN: frozenset[tuple[str, str]] = frozenset({
    ("episodic.memory.encoder", "episodic.stream.media"),
    ("episodic.memory.keyframes", "episodic.stream.media"),
    ("episodic.memory.replay", "episodic.reasoning.llm"),
    ("episodic.memory.replay", "episodic.reasoning.prompts"),
    ("episodic.memory.vlm_describer", "episodic.reasoning.llm"),
    ("episodic.retrieval.decomposition", "episodic.reasoning.llm"),
    ("episodic.retrieval.decomposition", "episodic.reasoning.prompts"),
    ("episodic.retrieval.fast", "episodic.reasoning.answer"),
    ("episodic.retrieval.fusion", "episodic.reasoning.article_types"),
    ("episodic.retrieval.service", "episodic.reasoning.answer"),
    ("episodic.retrieval.service", "episodic.reasoning.confidence"),
    ("episodic.retrieval.service", "episodic.reasoning.structured"),
    ("episodic.stream.chunks", "episodic.memory.records"),
})


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [FOLDERS[rel.parts[0]], *rel.parts[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> tuple[int, str]:
    for name, rank in _KERNEL.items():
        if module == name or module.startswith(name + "."):
            return rank, name
    parts = module.split(".")
    group = parts[1] if len(parts) > 1 and parts[1] in _RANKS else "episodic"
    return _RANKS.get(group, _ROOT_RANK), group


def _imports(path: Path) -> set[str]:
    """Project modules ``path`` imports (absolute imports, at any depth in the file)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        found |= {n for n in names if n.split(".")[0] == "episodic"}
    return found


def wrong_way_imports() -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                continue
            importer = _module_name(path)
            rank, group = _layer(importer)
            for imported in _imports(path):
                their_rank, their_group = _layer(imported)
                if their_rank > rank or (their_rank == rank and their_group != group):
                    out.add((importer, imported))
    return out


def test_no_new_wrong_way_imports() -> None:
    new = wrong_way_imports() - KNOWN
    assert not new, (
        "imports that point up the layers (see this test's docstring); depend on a lower "
        f"layer instead, or move the shared piece down: {sorted(new)}"
    )


def test_the_list_of_known_wrong_way_imports_only_shrinks() -> None:
    gone = KNOWN - wrong_way_imports()
    assert not gone, f"these wrong-way imports are gone: remove them from KNOWN: {sorted(gone)}"


def test_the_rule_itself() -> None:
    """The ranking says what the docstring says (a check on the checker)."""
    assert _layer("episodic.errors")[0] < _layer("episodic.config")[0] < _layer("episodic.stream.decode")[0]
    assert _layer("episodic.stream.decode")[0] == _layer("episodic.memory.records")[0] and _layer("episodic.stream.x")[1] != _layer("episodic.memory.x")[1]
    assert _layer("episodic.retrieval.fast")[0] < _layer("episodic.reasoning.answer")[0] < _layer("episodic.cli")[0]


def test_everything_is_imported_under_one_name() -> None:
    """The folders install as ``episodic.*`` only (pyproject's package-dir); an import of a bare
    ``stream`` or ``proto`` would load a second copy of a module, or a stranger's package."""
    bare = set()
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                bare |= {(str(path.relative_to(ROOT)), n) for n in names if n.split(".")[0] in FOLDERS and n.split(".")[0] != "episodic"}
    assert not bare, f"import these as episodic.<folder>…: {sorted(bare)}"
