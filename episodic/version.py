"""The installed version of episodic (``episodic --version``), without importing anything heavy."""

from __future__ import annotations

from pathlib import Path

DISTRIBUTION = "episodic"


def package_version() -> str:
    """The installed distribution's version; from a source tree that was never installed, the
    version in its ``pyproject.toml``; "unknown" when neither says."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        import tomllib

        found = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("version")
    except (OSError, ValueError):
        return "unknown"
    return str(found) if found else "unknown"
