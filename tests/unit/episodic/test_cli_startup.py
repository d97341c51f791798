"""Start-up of the `episodic` command: --version, shell completion, and no heavy imports for
commands that need no model (timings are in benchmarks/bench_cli_startup.py, never asserted)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from episodic.version import package_version

# what only a model, a store or a server needs; none of it may load for --version
HEAVY = ("torch", "pymilvus", "milvus_lite", "grpc", "fastapi", "uvicorn", "numpy", "kafka",
         "transformers", "onnxruntime", "av", "cv2", "mcp")


def _env(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith(("EPISODIC_", "_EPISODIC"))}, **extra}


def _run(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=_env(**env),
                          cwd=cwd, timeout=120)


def _imported(*cli_args: str, cwd: Path | None = None) -> set[str]:
    done = _run("-X", "importtime", "-m", "episodic.cli", *cli_args, cwd=cwd)
    assert done.returncode == 0, done.stderr[-2000:]
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", done.stderr, re.M)
    assert names, "no -X importtime output"
    return {n.split(".")[0] for n in names}


def test_version_prints_the_package_version() -> None:
    done = _run("-m", "episodic.cli", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"episodic {package_version()}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", package_version())


def test_version_falls_back_to_pyproject(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata as md

    import tomllib

    def not_installed(name: str) -> str:
        raise md.PackageNotFoundError(name)

    monkeypatch.setattr(md, "version", not_installed)
    root = Path(__file__).resolve().parents[3]
    assert package_version() == tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("init", "-"), ("streams", "--help"),
                                  ("doctor", "--help"), ("completion", "bash")])
def test_commands_without_models_import_nothing_heavy(args: tuple[str, ...], tmp_path: Path) -> None:
    assert _imported(*args, cwd=tmp_path) & set(HEAVY) == set()


@pytest.mark.parametrize("command", ["streams", "events", "segments", "config"])
def test_an_empty_store_is_listed_without_the_store_or_models(command: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    assert _imported(command, "--data", str(data), cwd=tmp_path) & set(HEAVY) == set()


def test_completion_scripts_are_printed() -> None:
    for shell in ("bash", "zsh", "fish", "powershell"):
        done = _run("-m", "episodic.cli", "completion", shell)
        assert done.returncode == 0, done.stderr
        assert "_EPISODIC_COMPLETE=complete_" + shell[:4] in done.stdout or shell == "powershell"
    bash = _run("-m", "episodic.cli", "completion", "bash").stdout
    assert "complete -o default -F _episodic_completion episodic" in bash
    assert _run("-m", "episodic.cli", "completion", "tcsh").returncode == 2


@pytest.mark.parametrize("instruction", ["bash_complete", "complete_bash"])  # click's and typer's
def test_completing_a_command_name(instruction: str) -> None:
    done = _run("-m", "episodic.cli", _EPISODIC_COMPLETE=instruction, COMP_WORDS="episodic str",
                COMP_CWORD="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["streams"]
    opts = _run("-m", "episodic.cli", _EPISODIC_COMPLETE=instruction, COMP_WORDS="episodic init --f",
                COMP_CWORD="2")
    assert opts.stdout.split() == ["--force"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_bash_script_completes_in_bash(tmp_path: Path) -> None:
    # the script calls `episodic`: put this interpreter's entry point first on PATH
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "episodic").write_text(f"#!/bin/sh\nexec {sys.executable} -m episodic.cli \"$@\"\n")
    (bin_dir / "episodic").chmod(0o755)
    script = ('source <(episodic completion bash); COMP_WORDS=(episodic str); COMP_CWORD=1; '
              '_episodic_completion episodic; echo "${COMPREPLY[@]}"')
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120,
                          env=_env(PATH=f"{bin_dir}:{os.environ.get('PATH', '')}"))
    assert done.stdout.strip() == "streams", done.stderr
