"""The commented settings file ``episodic init`` writes: every key, its default, what it does.

It is generated from the section dataclasses themselves: their fields, defaults, docstrings
and the comments written beside the fields, laid out as in the source (a comment block stays
above the keys it explains, a trailing comment stays on its key's line). A new setting appears
here with nothing else to keep up to date; ``tests/unit/episodic/test_init_config.py`` fails
when one has no comment.

Keys are written commented out, ``#key = default`` (the convention of sshd_config and
friends): the file loads as the defaults, and removing the ``#`` of a line sets that key.
Explanations are ``# text``, with a space, so the two never look alike.
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import json
import math
import sys
import textwrap
import tokenize
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from pathlib import Path, PurePath
from typing import Any


@dataclass(frozen=True)
class FieldDoc:
    """What the source says about one field: the comment block directly above it (one entry
    per line) and the comment at the end of its line ("" when none)."""

    above: tuple[str, ...] = ()
    trailing: str = ""

    @property
    def text(self) -> str:
        """The whole explanation on one line (empty when the field has no comment)."""
        return " ".join([*self.above, self.trailing]).strip()


def field_docs(cls: type) -> dict[str, FieldDoc]:
    """The comments of every field of a dataclass, read from its source code."""
    lines, node = _class_source(cls)
    names = {f.name for f in fields(cls)}
    docs: dict[str, FieldDoc] = {}
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        if item.target.id not in names:
            continue
        above: list[str] = []
        i = item.lineno - 2  # the line above, 0-based
        while i >= 0 and lines[i].lstrip().startswith("#"):
            above.insert(0, _comment_text(lines[i].strip()))
            i -= 1
        end = item.end_lineno or item.lineno
        docs[item.target.id] = FieldDoc(tuple(above), _trailing_comment(lines[item.lineno - 1 : end]))
    return docs


def _class_source(cls: type) -> tuple[list[str], ast.ClassDef]:
    """The lines of the file that defines ``cls`` and its class statement (each file is
    parsed once, not once per class)."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if path:
        lines, tree = _parsed(path)
        found = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
        if len(found) == 1:
            return lines, found[0]
    # a class made elsewhere (or two of that name in one file): its own source
    source = textwrap.dedent(inspect.getsource(cls))
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    return source.splitlines(), node


@functools.lru_cache(maxsize=32)
def _parsed(path: str) -> tuple[list[str], ast.Module]:
    source = Path(path).read_text(encoding="utf-8")
    return source.splitlines(), ast.parse(source)


def _trailing_comment(statement: list[str]) -> str:
    """The comment after the code on a statement's last line ("" when none)."""
    text = "\n".join(line.strip() for line in statement) + "\n"
    comment = ""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and tok.line[: tok.start[1]].strip():
                comment = _comment_text(tok.string)
    except (tokenize.TokenError, SyntaxError):
        return ""
    return comment


def _comment_text(comment: str) -> str:
    return comment.lstrip("#").strip()


def toml_value(value: Any) -> str | None:
    """``value`` as a TOML literal; None for None (TOML has no null: such a key is left unset)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return repr(value)
    if isinstance(value, PurePath):
        text = value.as_posix()
        if not value.is_absolute() and not text.startswith("."):
            text = "./" + text  # relative to where episodic runs, as the default says
        return json.dumps(text, ensure_ascii=False)  # JSON's escapes are TOML basic-string escapes
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        items = [toml_value(v) for v in value]
        if any(i is None for i in items):
            raise TypeError(f"no TOML form for a list holding None: {value!r}")
        return "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    raise TypeError(f"no TOML form for {type(value).__name__} {value!r}")


def _default(f: Any) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None


def _section_lines(name: str, cls: type) -> list[str]:
    doc = inspect.getdoc(cls) or ""
    if doc.startswith(cls.__name__ + "("):  # the signature dataclasses put in when there is none
        doc = ""
    out = [f"[{name}]"]
    out += [f"# {line}".rstrip() for line in doc.splitlines()]
    docs = field_docs(cls)
    for n, f in enumerate(fields(cls)):
        d = docs.get(f.name, FieldDoc())
        if d.above or n == 0:  # a comment block starts a paragraph, as in the source
            out.append("")
            out += [f"# {line}".rstrip() for line in d.above]
        literal = toml_value(_default(f))
        tail = f"  # {d.trailing}" if d.trailing else ""
        if literal is None:
            # no default: a line that stays a comment when "#key = " lines are uncommented
            out.append(f"# {f.name}: unset by default (write {f.name} = <value> to set it){tail}")
        else:
            out.append(f"#{f.name} = {literal}{tail}")
    return out


def render_settings_template(
    sections: Mapping[str, type] | None = None, version: str = "", config_file_name: str = "episodic.toml"
) -> str:
    """The whole commented file: a header, then one table per section with all its keys."""
    if sections is None:
        from episodic.config import SECTIONS

        sections = SECTIONS
    made_by = f"episodic init (episodic {version})" if version else "episodic init"
    header = [
        f"# episodic settings: every key with its default value, written by {made_by}.",
        "#",
        "# Each `#key = value` line holds the default: remove its `#` to change that key; an",
        "# explanation is a `# text` line above the key or a comment at the end of its line.",
        "# Tables only group the keys: every key is unique, `[segmentation] segment_min_s = 6`",
        "# and a bare `segment_min_s = 6` at the top mean the same.",
        "#",
        "# This file is read when given as `--config FILE` or EPISODIC_CONFIG=FILE, or when it",
        f"# is `<data dir>/{config_file_name}`. Precedence, later wins: built-in defaults -> this",
        "# file -> EPISODIC_<KEY> environment variables (EPISODIC_SEGMENT_MIN_S=6) -> command-line",
        "# flags. Keep secrets (openai_api_key, milvus_token, s3_secret_access_key,",
        "# kafka_sasl_password) in the environment rather than here.",
    ]
    out = list(header)
    for name, cls in sections.items():
        out.append("")
        out += _section_lines(name, cls)
    return "\n".join(out) + "\n"


def write_settings_template(path: Path, text: str, force: bool = False) -> None:
    """Write ``text`` to ``path`` (parents made), never over an existing file unless ``force``;
    FileExistsError otherwise. The file appears whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not force:
        raise FileExistsError(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
