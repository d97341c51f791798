"""Versions of a memory's transcript kept in its metadata: the model, hot words, text and score
of every attempt, so a hinted version is reused and the ingest one always stays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from episodic.core.records import (
    ShortTermMemory,
)

HISTORY_MAX = 8  # transcript versions kept per memory (the ingest one always stays)


# -- versions in the memory's metadata -------------------------------------------------------
def _hot_key(words: Sequence[str]) -> list[str]:
    return sorted({w.lower() for w in words})


def cached_version(memory: ShortTermMemory, model: str, words: Sequence[str], source: str = "relisten",
                   span: tuple[float, float] | None = None) -> dict[str, Any] | None:
    """A version already made by ``model`` with (at least) these hot words, if any (of
    ``source``: "relisten", or "second-listen" for retrieval/second_listen.py, which also
    names the ``span`` it heard: one memory holds several sentences)."""
    wanted = set(_hot_key(words))
    for v in memory.metadata.get("transcripts") or []:
        if span is not None and [round(float(x), 3) for x in v.get("span") or ()] != [round(x, 3) for x in span]:
            continue
        if v.get("source") == source and v.get("model") == model and wanted <= set(v.get("hotwords") or []):
            return v
    return None


def ingest_version(memory: ShortTermMemory, score: float | None = None) -> dict[str, Any]:
    """The ingest transcript as a version (version 1 of a memory's history)."""
    return {
        "source": "ingest",
        "model": str((memory.metadata.get("models") or {}).get("asr", "")),
        "hotwords": [],
        "text": memory.transcript_text,
        "score": score,
        "adopted": True,
    }


def record_version(memory: ShortTermMemory, entry: dict[str, Any], ingest: dict[str, Any]) -> int:
    """Append ``entry`` to ``memory.metadata["transcripts"]`` (with the ingest transcript as
    version 1 the first time) and return its version number; the oldest re-listened versions
    are dropped beyond HISTORY_MAX."""
    history: list[dict[str, Any]] = list(memory.metadata.get("transcripts") or [])
    if not history:
        history.append({"version": 1, **ingest})
    version = max(int(v.get("version", 0)) for v in history) + 1
    history.append({"version": version, **entry})
    if len(history) > HISTORY_MAX:
        history = history[:1] + history[-(HISTORY_MAX - 1):]
    memory.metadata["transcripts"] = history
    if entry.get("adopted"):
        memory.metadata["transcript_version"] = version
    return version


def hearings_since_ingest(memory: ShortTermMemory) -> list[dict[str, Any]]:
    """The memory's re-listened versions with text, latest first (whatever model or question
    made them, taken or not)."""
    return [v for v in reversed(memory.metadata.get("transcripts") or [])
            if v.get("source") == "relisten" and str(v.get("text") or "").strip()]
