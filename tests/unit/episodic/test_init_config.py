"""`episodic init`: a commented settings file with every key, its default and what it does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path

import pytest
import tomllib

from episodic.config import FIELD_SECTION, SECTIONS, Settings, load_settings
from episodic.config.template import field_docs, render_settings_template, toml_value

SETTING_LINE = re.compile(r"^#([a-z][a-z0-9_]*) = ")


def _uncomment_all(text: str) -> str:
    return "\n".join(
        line[1:] if (m := SETTING_LINE.match(line)) and m.group(1) in FIELD_SECTION else line
        for line in text.splitlines()
    )


def _episodic(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPISODIC_")}
    return subprocess.run([sys.executable, "-m", "episodic.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_every_setting_has_a_comment_in_its_section() -> None:
    # the file is generated from these comments: a new setting needs one
    missing = []
    for name, cls in SECTIONS.items():
        docs = field_docs(cls)
        missing += [f"{name}.{f.name}" for f in fields(cls) if f.name not in docs or not docs[f.name].text]
    assert missing == []


def test_the_file_holds_every_key_once_commented_out_with_its_default() -> None:
    text = render_settings_template(version="9.9.9")
    written = [m.group(1) for line in text.splitlines() if (m := SETTING_LINE.match(line))]
    assert sorted(written) == sorted(FIELD_SECTION)
    assert len(written) == len(set(written))
    assert "episodic 9.9.9" in text.splitlines()[0]
    # every key sits in its own section's table
    table = ""
    for line in text.splitlines():
        if line.startswith("["):
            table = line.strip("[]")
        elif m := SETTING_LINE.match(line):
            assert FIELD_SECTION[m.group(1)] == table, line
    # as written (all commented out) the tables are empty
    assert all(v == {} for v in tomllib.loads(text).values())


def test_the_written_file_loads_to_exactly_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "episodic.toml"
    path.write_text(render_settings_template())
    assert load_settings(config_file=path, env={}) == Settings()


def test_with_every_key_uncommented_it_still_loads_to_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "episodic.toml"
    path.write_text(_uncomment_all(render_settings_template()))
    parsed = tomllib.loads(path.read_text())
    assert sum(len(table) for table in parsed.values()) == len(FIELD_SECTION)
    assert load_settings(config_file=path, env={}) == Settings()


def test_a_key_changed_in_the_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "episodic.toml"
    text = render_settings_template().replace("#segment_min_s = 5.0", "segment_min_s = 6.0")
    path.write_text(text)
    assert load_settings(config_file=path, env={}).segment_min_s == 6.0


def test_a_setting_without_default_stays_a_valid_comment(tmp_path: Path) -> None:
    @dataclass(frozen=True)
    class Odd:
        """A section for the test."""

        nothing: str | None = None  # unset unless given
        ratio: float = 1e-05  # a small float
        name: str = 'say "hi"\\ →'  # quotes, a backslash and non-ASCII

    text = render_settings_template({"odd": Odd})
    assert "# nothing: unset by default" in text
    assert not any(line.startswith("#nothing =") for line in text.splitlines())
    uncommented = "\n".join(line[1:] if SETTING_LINE.match(line) else line for line in text.splitlines())
    assert tomllib.loads(uncommented) == {"odd": {"ratio": 1e-05, "name": 'say "hi"\\ →'}}


def test_toml_values() -> None:
    assert toml_value(True) == "true"
    assert toml_value(3) == "3"
    assert toml_value(0.5) == "0.5"
    assert toml_value(Path("episodic-data")) == '"./episodic-data"'
    assert toml_value(None) is None
    with pytest.raises(TypeError):
        toml_value(object())


def test_init_writes_refuses_to_overwrite_and_forces(tmp_path: Path) -> None:
    done = _episodic("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "episodic.toml"
    assert load_settings(config_file=path, env={}) == Settings()
    assert "wrote episodic.toml" in done.stderr

    path.write_text("# mine\n")
    again = _episodic("init", cwd=tmp_path)
    assert again.returncode == 2
    assert "--force" in again.stderr
    assert path.read_text() == "# mine\n"  # untouched

    forced = _episodic("init", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert path.read_text() == render_settings_template(version=_version(tmp_path))

    (tmp_path / "data").mkdir()
    into_dir = _episodic("init", "data", cwd=tmp_path)
    assert into_dir.returncode == 0, into_dir.stderr
    assert (tmp_path / "data" / "episodic.toml").is_file()

    to_stdout = _episodic("init", "-", cwd=tmp_path)
    assert to_stdout.returncode == 0
    assert to_stdout.stdout == path.read_text()


def _version(cwd: Path) -> str:
    return _episodic("--version", cwd=cwd).stdout.split()[1]
