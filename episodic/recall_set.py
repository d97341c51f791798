"""A labelled fuzzy-recall set: half-remembered descriptions and the recording each one means.

Issue 16 measures whether the memory can find a recording, and the moment in it, from what a
person half remembers (RVMS-Bench's facets: **G** global impression, **K** key moment, **T**
temporal context, **A** auditory memory). The set names its recordings and, for every query,
the right stream, the key moment's true interval, and optionally a *distractor*: another
stream that matches some facet (usually the key moment itself) but violates another, so a
service that only matches the key moment is caught. One JSON object::

    {"format": "episodic-recall/1", "name": "generated dev (seed 0)", "split": "dev",
     "recordings": [{"path": "dev-01.mp4", "stream_id": "dev-01", "duration_s": 61.2}],
     "queries": [
       {"id": "d001", "task": "GKT",
        "description": "I'm looking for a cheerful baking vlog. I remember a cat on the
                        counter. Then they talked about the icing.",
        "facets": {"global": "a cheerful baking vlog", "key_moment": "a cat on the counter",
                   "temporal": "then they talked about the icing"},
        "stream_id": "dev-01", "moment": {"t_start": 16.2, "t_end": 24.9},
        "distractor": "dev-02", "split": "dev"}]}

Fields: ``task`` is one of :data:`TASKS`, and its letters name exactly the facets given
(G → ``global``, K → ``key_moment``, T → ``temporal``, A → ``audio``); ``moment`` is null only
for a G-only query (a whole recording is meant); ``recordings[].path`` is relative to the JSON
file's folder (or absolute). An :class:`InputError` names the first problem and where it is.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from episodic.core.errors import InputError
from episodic.qa_set import Recording, number_field, split_field, text_field, write_json

FORMAT = "episodic-recall/1"
TASKS = ("G", "K", "KT", "GK", "KA", "KTA", "GKA", "GKT", "GKTA")
FACET_LETTERS = {"G": "global", "K": "key_moment", "T": "temporal", "A": "audio"}
FACETS = tuple(FACET_LETTERS.values())


@dataclass
class Span:
    """The key moment's true interval (stream seconds)."""

    t_start: float
    t_end: float


@dataclass
class RecallQuery:
    id: str
    task: str
    description: str
    facets: dict[str, str]  # the same description split by facet (keys from FACETS)
    stream_id: str
    moment: Span | None = None
    distractor: str | None = None
    split: str = "heldout"


@dataclass
class RecallSet:
    recordings: list[Recording]
    queries: list[RecallQuery]
    split: str = "heldout"
    name: str = ""
    root: Path = field(default_factory=Path)  # folder the recordings' relative paths start from

    def recording_path(self, rec: Recording) -> Path:
        p = Path(rec.path)
        return p if p.is_absolute() else self.root / p

    def by_task(self) -> dict[str, list[RecallQuery]]:
        """Queries grouped by task type, in :data:`TASKS` order."""
        return {t: [q for q in self.queries if q.task == t] for t in TASKS if any(q.task == t for q in self.queries)}

    def to_dict(self) -> dict[str, Any]:
        def rec(r: Recording) -> dict[str, Any]:
            return {k: v for k, v in asdict(r).items() if v is not None}

        return {"format": FORMAT, "name": self.name, "split": self.split,
                "recordings": [rec(r) for r in self.recordings],
                "queries": [asdict(q) for q in self.queries]}

    def save(self, path: str | Path) -> Path:
        return write_json(path, self.to_dict())


# -- loading -----------------------------------------------------------------------------------
def _facets(value: Any, task: str, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise InputError(f"{where}.facets must be an object with some of {', '.join(FACETS)}")
    unknown = set(value) - set(FACETS)
    if unknown:
        raise InputError(f"{where}.facets: unknown facet(s) {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(FACETS)})")
    facets = {k: text_field(v, f"{where}.facets.{k}") for k, v in value.items() if v is not None}
    wanted = {FACET_LETTERS[c] for c in task}
    if set(facets) != wanted:
        raise InputError(f"{where}: task {task} needs exactly the facets {', '.join(sorted(wanted))}, "
                         f"got {', '.join(sorted(facets)) or 'none'}")
    return facets


def _moment(value: Any, task: str, duration: float | None, where: str) -> Span | None:
    if value is None:
        if "K" in task:
            raise InputError(f"{where}: a {task} query needs the key moment's interval (moment)")
        return None
    if not isinstance(value, dict):
        raise InputError(f"{where}.moment must be an object with t_start and t_end, or null")
    t0 = number_field(value.get("t_start"), f"{where}.moment.t_start")
    t1 = number_field(value.get("t_end"), f"{where}.moment.t_end")
    if t0 < 0 or t1 < t0:
        raise InputError(f"{where}.moment: need 0 <= t_start <= t_end, got {t0}..{t1}")
    if duration is not None and t0 > duration + 0.5:
        raise InputError(f"{where}.moment starts at {t0} s, after the recording ends ({duration} s)")
    return Span(t0, t1)


def _query(raw: Any, n: int, streams: dict[str, float | None], default_split: str, seen: set[str]) -> RecallQuery:
    where = f"query {n}"
    if not isinstance(raw, dict):
        raise InputError(f"{where} must be an object")
    qid = str(raw.get("id", f"q{n}"))
    where = f"query {n} ({qid})"
    if qid in seen:
        raise InputError(f"{where}: duplicate id")
    seen.add(qid)
    task = raw.get("task")
    if task not in TASKS:
        raise InputError(f"{where}: task must be one of {', '.join(TASKS)}, got {task!r}")
    description = text_field(raw.get("description"), f"{where}.description")
    facets = _facets(raw.get("facets"), task, where)
    sid = text_field(raw.get("stream_id"), f"{where}.stream_id")
    if sid not in streams:
        raise InputError(f"{where}: stream_id {sid!r} is not one of the recordings")
    distractor = raw.get("distractor")
    if distractor is not None:
        distractor = text_field(distractor, f"{where}.distractor")
        if distractor not in streams:
            raise InputError(f"{where}: distractor {distractor!r} is not one of the recordings")
        if distractor == sid:
            raise InputError(f"{where}: the distractor is the right stream itself")
    return RecallQuery(qid, task, description, facets, sid, _moment(raw.get("moment"), task, streams[sid], where),
                       distractor, split_field(raw.get("split"), default_split, where))


def parse_recall_set(doc: Any, root: Path, source: str = "the recall set") -> RecallSet:
    """Check a decoded document; an InputError names the first problem and where it is."""
    if not isinstance(doc, dict):
        raise InputError(f"{source}: expected a JSON object with recordings and queries")
    fmt = doc.get("format", FORMAT)
    if fmt != FORMAT:
        raise InputError(f"{source}: format {fmt!r} is not {FORMAT!r}")
    split = split_field(doc.get("split", "heldout"), "heldout", source)
    recs_raw = doc.get("recordings")
    if not isinstance(recs_raw, list) or not recs_raw:
        raise InputError(f"{source}: \"recordings\" must be a non-empty list of {{path, stream_id, duration_s}}")
    recordings: list[Recording] = []
    for n, r in enumerate(recs_raw, 1):
        where = f"{source}: recording {n}"
        if not isinstance(r, dict):
            raise InputError(f"{where} must be an object with path and stream_id")
        dur = r.get("duration_s")
        if dur is not None and number_field(dur, f"{where}.duration_s") <= 0:
            raise InputError(f"{where}.duration_s must be positive, got {dur!r}")
        recordings.append(Recording(text_field(r.get("path"), f"{where}.path"), text_field(r.get("stream_id"), f"{where}.stream_id"),
                                    None if dur is None else float(dur)))
    streams = {r.stream_id: r.duration_s for r in recordings}
    if len(streams) != len(recordings):
        raise InputError(f"{source}: two recordings share a stream_id")
    queries_raw = doc.get("queries")
    if not isinstance(queries_raw, list) or not queries_raw:
        raise InputError(f"{source}: \"queries\" must be a non-empty list")
    seen: set[str] = set()
    try:
        queries = [_query(q, n, streams, split, seen) for n, q in enumerate(queries_raw, 1)]
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    return RecallSet(recordings, queries, split, str(doc.get("name", "")), root)


def load_recall_set(path: str | Path) -> RecallSet:
    """Read and check a recall set file (or the ``recall.json`` in a folder)."""
    path = Path(path)
    if path.is_dir():
        path = path / "recall.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"no recall set at {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read the recall set {path}: {exc}") from None
    return parse_recall_set(doc, path.parent, str(path))
