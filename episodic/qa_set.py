"""A labelled question set over recordings: the file ``episodic evaluate --qa FILE.json`` reads.

The memory is judged by what it answers about recordings it has never seen, so the set
names its recordings and what a good answer to each question is, never how the memory
should store them. One JSON object::

    {"format": "episodic-qa/1",
     "name": "generated seed 7",
     "split": "heldout",
     "recordings": [{"path": "station-cam.mp4", "stream_id": "station-cam"}],
     "items": [
       {"id": "a1", "category": "A",
        "question": "At what time is Maria meeting the driver?",
        "options": ["7:40", "8:15", "11:20", "2:30"], "answer_index": 1},
       {"id": "a2", "category": "A",
        "question": "When is Maria meeting the driver?",
        "answers": ["8:15", "quarter past eight"], "keywords": [],
        "wrong_answers": ["7:40", "11:20"],
        "scope": {"stream_ids": ["station-cam"]},
        "evidence": [{"stream_id": "station-cam", "t_start": 41.0, "t_end": 44.5}]},
       {"id": "u1", "category": "unanswerable",
        "question": "Which platform does the train to Oxford leave from?", "answerable": false}],
     "moments": [
       {"id": "m1", "query": "music playing",
        "targets": [{"stream_id": "station-cam", "t_start": 60.0, "t_end": 75.0}]}]}

Fields:

* ``recordings[].path`` is relative to the JSON file's folder (or absolute); ``stream_id`` is
  the id the recording is ingested under. ``duration_s`` is optional.
* ``split`` ("dev" | "heldout"): tune on dev, report on held-out. An item may carry its own
  ``split``; it defaults to the file's.
* ``category``: HippoVlog's ``V`` (visual), ``A`` (audio/speech), ``V+A`` (cross-modal),
  ``S`` (summary/semantic), plus ``ocr`` (on-screen text), ``sound`` (non-speech audio),
  ``order`` (what came first/after), ``which_stream``, ``count`` (how many times) and
  ``unanswerable`` (never recorded: the right reply is to say so).
* A **multiple-choice** item has ``options`` (2–10) and ``answer_index`` (0-based).
  A **free-form** item has ``answers`` (acceptable short answers: the reply is right when it
  contains one of them, numbers and times compared in a normalised form, see
  :mod:`episodic.qa_evaluation`) and/or ``keywords`` (every keyword must appear; ``a|b``
  accepts either). ``wrong_answers`` make a free-form reply wrong even when it also holds a
  right one, so a reply that lists every candidate does not score. An item that has both
  options and answers is asked twice, once each way.
* ``answerable`` (default true; false for ``unanswerable``): the right reply to an
  unanswerable item is an abstention ("I found nothing about that in memory").
* ``scope`` (optional): ``stream_ids``, ``t_min``, ``t_max`` as ``episodic ask --stream-id``
  passes them, for questions about one named recording.
* ``evidence`` (optional): where the answer is in the recordings (for inspection only).
* ``moments``: a search query and its target intervals; a hit is a returned moment of a
  target's stream that overlaps that target's interval. A moment may name its ``category``
  (what it looks for; the generator's are ``speech``, ``mention``, ``picture``, ``sign``,
  ``dark`` and ``sound``): R@1 and R@5 are then reported per category as well.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from episodic.core.errors import InputError

FORMAT = "episodic-qa/1"
SPLITS = ("dev", "heldout")
CATEGORIES = ("V", "A", "V+A", "S", "ocr", "sound", "order", "which_stream", "count", "unanswerable")
MAX_OPTIONS = 10


@dataclass
class Interval:
    """A stretch of one stream (stream seconds)."""

    stream_id: str
    t_start: float
    t_end: float


@dataclass
class Recording:
    path: str  # as written in the file (relative to it, or absolute)
    stream_id: str
    duration_s: float | None = None


@dataclass
class QAScope:
    stream_ids: list[str] | None = None
    t_min: float | None = None
    t_max: float | None = None


@dataclass
class QAItem:
    id: str
    category: str
    question: str
    options: list[str] = field(default_factory=list)
    answer_index: int | None = None
    answers: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    wrong_answers: list[str] = field(default_factory=list)
    answerable: bool = True
    split: str = "heldout"
    scope: QAScope | None = None
    evidence: list[Interval] = field(default_factory=list)

    @property
    def is_multiple_choice(self) -> bool:
        return bool(self.options)

    @property
    def is_free_form(self) -> bool:
        """Asked without options: free-form references, or an unanswerable open question."""
        return bool(self.answers or self.keywords) or (not self.answerable and not self.options)


@dataclass
class MomentQuery:
    id: str
    query: str
    targets: list[Interval]
    split: str = "heldout"
    scope: QAScope | None = None
    category: str = ""  # what the query looks for (reported by it): speech, picture, sign, sound …


@dataclass
class QASet:
    recordings: list[Recording]
    items: list[QAItem]
    moments: list[MomentQuery] = field(default_factory=list)
    split: str = "heldout"
    name: str = ""
    root: Path = field(default_factory=Path)  # folder the recordings' relative paths start from

    def recording_path(self, rec: Recording) -> Path:
        p = Path(rec.path)
        return p if p.is_absolute() else self.root / p

    def only_split(self, split: str) -> QASet:
        """The items and moments of one split (the recordings stay)."""
        return QASet(self.recordings, [i for i in self.items if i.split == split],
                     [m for m in self.moments if m.split == split], split, self.name, self.root)

    def to_dict(self) -> dict[str, Any]:
        def clean(d: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in d.items() if v not in (None, [], "") or k in ("answerable",)}

        return {
            "format": FORMAT,
            "name": self.name,
            "split": self.split,
            "recordings": [clean(asdict(r)) for r in self.recordings],
            "items": [clean(asdict(i)) for i in self.items],
            "moments": [clean(asdict(m)) for m in self.moments],
        }

    def save(self, path: str | Path) -> Path:
        return write_json(path, self.to_dict())


def write_json(path: str | Path, doc: dict[str, Any]) -> Path:
    """A labelled set's JSON document, readable (indented, UTF-8), its folder made."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# -- loading (the field checks are shared with episodic/recall_set.py) ----------------------------
def number_field(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where} must be a number, got {value!r}")
    return float(value)


def text_field(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where} must be a non-empty string, got {value!r}")
    return value.strip()


def _texts(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where} must be a list of strings, got {value!r}")
    return [text_field(v, f"{where}[{n}]") for n, v in enumerate(value)]


def split_field(value: Any, default: str, where: str) -> str:
    if value is None:
        return default
    if value not in SPLITS:
        raise InputError(f"{where}: split must be one of {', '.join(SPLITS)}, got {value!r}")
    return value


def _interval(value: Any, where: str) -> Interval:
    if not isinstance(value, dict):
        raise InputError(f"{where} must be an object with stream_id, t_start, t_end")
    sid = text_field(value.get("stream_id"), f"{where}.stream_id")
    t0, t1 = number_field(value.get("t_start"), f"{where}.t_start"), number_field(value.get("t_end"), f"{where}.t_end")
    if t1 < t0:
        raise InputError(f"{where}: t_end {t1} is before t_start {t0}")
    return Interval(sid, t0, t1)


def _scope(value: Any, where: str) -> QAScope | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InputError(f"{where}.scope must be an object (stream_ids, t_min, t_max)")
    unknown = set(value) - {"stream_ids", "t_min", "t_max"}
    if unknown:
        raise InputError(f"{where}.scope: unknown field(s) {', '.join(sorted(unknown))}")
    sids = value.get("stream_ids")
    t_min = None if value.get("t_min") is None else number_field(value["t_min"], f"{where}.scope.t_min")
    t_max = None if value.get("t_max") is None else number_field(value["t_max"], f"{where}.scope.t_max")
    return QAScope(None if sids is None else _texts(sids, f"{where}.scope.stream_ids"), t_min, t_max)


def _item(raw: Any, n: int, default_split: str, seen: set[str]) -> QAItem:
    where = f"item {n}"
    if not isinstance(raw, dict):
        raise InputError(f"{where} must be an object")
    qid = str(raw.get("id", f"q{n}"))
    where = f"item {n} ({qid})"
    if qid in seen:
        raise InputError(f"{where}: duplicate id")
    seen.add(qid)
    category = raw.get("category")
    if category not in CATEGORIES:
        raise InputError(f"{where}: category must be one of {', '.join(CATEGORIES)}, got {category!r}")
    question = text_field(raw.get("question"), f"{where}.question")
    options = _texts(raw.get("options"), f"{where}.options")
    answerable = raw.get("answerable", category != "unanswerable")
    if not isinstance(answerable, bool):
        raise InputError(f"{where}.answerable must be true or false")
    answer_index = raw.get("answer_index")
    if options:
        if not 2 <= len(options) <= MAX_OPTIONS:
            raise InputError(f"{where}: give 2 to {MAX_OPTIONS} options, not {len(options)}")
        if len({o.lower() for o in options}) != len(options):
            raise InputError(f"{where}: options repeat")
        if answerable:
            if isinstance(answer_index, bool) or not isinstance(answer_index, int):
                raise InputError(f"{where}: a multiple-choice item needs an integer answer_index")
            if not 0 <= answer_index < len(options):
                raise InputError(f"{where}: answer_index {answer_index} is not an option (0..{len(options) - 1})")
        elif answer_index is not None:
            raise InputError(f"{where}: an unanswerable item has no answer_index")
    elif answer_index is not None:
        raise InputError(f"{where}: answer_index without options")
    answers = _texts(raw.get("answers"), f"{where}.answers")
    keywords = _texts(raw.get("keywords"), f"{where}.keywords")
    if answerable and not options and not answers and not keywords:
        raise InputError(f"{where}: needs options + answer_index, or answers / keywords")
    if not answerable and (answers or keywords):
        raise InputError(f"{where}: an unanswerable item has no answers or keywords")
    evidence = [_interval(e, f"{where}.evidence[{k}]") for k, e in enumerate(raw.get("evidence") or [])]
    return QAItem(
        id=qid, category=category, question=question, options=options,
        answer_index=answer_index if options else None, answers=answers, keywords=keywords,
        wrong_answers=_texts(raw.get("wrong_answers"), f"{where}.wrong_answers"),
        answerable=answerable, split=split_field(raw.get("split"), default_split, where),
        scope=_scope(raw.get("scope"), where), evidence=evidence,
    )


def _moment(raw: Any, n: int, default_split: str, seen: set[str]) -> MomentQuery:
    where = f"moment {n}"
    if not isinstance(raw, dict):
        raise InputError(f"{where} must be an object")
    mid = str(raw.get("id", f"m{n}"))
    where = f"moment {n} ({mid})"
    if mid in seen:
        raise InputError(f"{where}: duplicate id")
    seen.add(mid)
    query = text_field(raw.get("query"), f"{where}.query")
    if "targets" in raw:
        if not isinstance(raw["targets"], list) or not raw["targets"]:
            raise InputError(f"{where}.targets must be a non-empty list")
        targets = [_interval(t, f"{where}.targets[{k}]") for k, t in enumerate(raw["targets"])]
    else:  # the one-target shorthand: stream_id, t_start, t_end on the moment itself
        targets = [_interval(raw, where)]
    category = raw.get("category", "")
    if not isinstance(category, str):
        raise InputError(f"{where}.category must be a string")
    return MomentQuery(mid, query, targets, split_field(raw.get("split"), default_split, where),
                       _scope(raw.get("scope"), where), category.strip())


def parse_qa_set(doc: Any, root: Path, source: str = "the QA set") -> QASet:
    """Check a decoded document; an InputError names the first problem and where it is."""
    if not isinstance(doc, dict):
        raise InputError(f"{source}: expected a JSON object with recordings and items")
    fmt = doc.get("format", FORMAT)
    if fmt != FORMAT:
        raise InputError(f"{source}: format {fmt!r} is not {FORMAT!r}")
    split = split_field(doc.get("split", "heldout"), "heldout", source)
    recs_raw = doc.get("recordings")
    if not isinstance(recs_raw, list):
        raise InputError(f"{source}: \"recordings\" must be a list of {{path, stream_id}}")
    recordings: list[Recording] = []
    for n, r in enumerate(recs_raw, 1):
        where = f"{source}: recording {n}"
        if not isinstance(r, dict):
            raise InputError(f"{where} must be an object with path and stream_id")
        dur = r.get("duration_s")
        recordings.append(Recording(text_field(r.get("path"), f"{where}.path"), text_field(r.get("stream_id"), f"{where}.stream_id"),
                                    None if dur is None else number_field(dur, f"{where}.duration_s")))
    if len({r.stream_id for r in recordings}) != len(recordings):
        raise InputError(f"{source}: two recordings share a stream_id")
    items_raw = doc.get("items", [])
    moments_raw = doc.get("moments", [])
    if not isinstance(items_raw, list) or not isinstance(moments_raw, list):
        raise InputError(f"{source}: \"items\" and \"moments\" must be lists")
    if not items_raw and not moments_raw:
        raise InputError(f"{source}: no items and no moments to evaluate")
    seen: set[str] = set()
    try:
        items = [_item(it, n, split, seen) for n, it in enumerate(items_raw, 1)]
        moments = [_moment(m, n, split, seen) for n, m in enumerate(moments_raw, 1)]
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    return QASet(recordings, items, moments, split, str(doc.get("name", "")), root)


def load_qa_set(path: str | Path) -> QASet:
    """Read and check a QA set file; an InputError names the first problem."""
    path = Path(path)
    if path.is_dir():
        path = path / "qa.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"no QA set at {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read the QA set {path}: {exc}") from None
    return parse_qa_set(doc, path.parent, str(path))
