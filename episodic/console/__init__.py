"""The web console's files (plain HTML, CSS and JavaScript, no build step), served by the HTTP
API at ``/`` (``episodic serve --http-port``, ``episodic console``)."""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"


def static_dir() -> Path:
    """Where the console's files are (inside the installed package)."""
    return STATIC_DIR
