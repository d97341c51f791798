"""The console entry point caps glibc's malloc arenas (resident memory of threaded decoding)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from episodic.process import limit_malloc_arenas

glibc = platform.libc_ver()[0] == "glibc"


def _in_child(code: str, **env: str) -> str:
    full = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not glibc, reason="mallopt is glibc's")
def test_arenas_are_capped_on_glibc() -> None:
    assert _in_child("from episodic.process import limit_malloc_arenas as f; print(f())") == "True"


def test_a_users_malloc_arena_max_wins() -> None:
    code = "from episodic.process import limit_malloc_arenas as f; print(f())"
    assert _in_child(code, MALLOC_ARENA_MAX="4") == "False"


def test_entry_point_applies_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from episodic import cli

    calls: list[int] = []
    monkeypatch.setattr(cli, "limit_malloc_arenas", lambda: calls.append(1) or True)
    monkeypatch.setattr(sys, "argv", ["episodic", "--help"])
    with pytest.raises(SystemExit):
        cli.main()
    assert calls == [1]
    assert limit_malloc_arenas.__module__ == "episodic.process"


def test_grpc_logging_is_quiet_unless_the_user_asked(monkeypatch):
    from episodic.process import quiet_grpc_logging

    monkeypatch.delenv("GRPC_VERBOSITY", raising=False)
    quiet_grpc_logging()
    assert os.environ["GRPC_VERBOSITY"] == "NONE"
    monkeypatch.setenv("GRPC_VERBOSITY", "DEBUG")
    quiet_grpc_logging()
    assert os.environ["GRPC_VERBOSITY"] == "DEBUG"
