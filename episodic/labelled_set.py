"""A labelled evaluation set for articles and retrieval, and the file format for your own.

``episodic evaluate LABELS.json`` scores the memory against a labelled set (see
:mod:`episodic.evaluation`). The format, one JSON object::

    {"queries": [
      {"id": "q1",
       "request": "Write a report about the north bridge …",
       "relevant": [{"stream_id": "bridge-cam", "t_start": 1.0, "t_end": 6.0, "grade": 1}],
       "facts": [{"text": "A delivery truck stopped on the north bridge.",
                  "stream_id": "bridge-cam", "t_start": 1.0, "t_end": 6.0,
                  "keywords": ["truck"]}]}
    ]}

* ``relevant``: the moments a good retrieval finds (graded; a retrieved segment is as
  relevant as the best labelled moment of its stream it overlaps). Segment ids depend on
  segmentation, so labels are times, never ids.
* ``facts``: what a good article reports, in order; each one is also a ground-truth step
  (text + grounding) for MTGS and STEM, and counts as covered when all of its ``keywords``
  appear in the article (case-insensitive; ``a|b`` accepts either spelling).

:func:`build_article_set` generates two recordings with known spoken facts (streams
"bridge-cam" and "market-cam"), ingests them, and returns the labels: the tests and
``benchmarks/bench_article.py`` use it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from episodic import samples
from episodic.core.errors import InputError


@dataclass
class Moment:
    stream_id: str
    t_start: float
    t_end: float
    grade: float = 1.0


@dataclass
class Fact:
    text: str
    stream_id: str
    t_start: float
    t_end: float
    keywords: list[str] = field(default_factory=list)


@dataclass
class LabelledQuery:
    id: str
    request: str
    relevant: list[Moment] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)


@dataclass
class LabelledSet:
    queries: list[LabelledQuery]

    def to_json(self) -> str:
        return json.dumps({"queries": [asdict(q) for q in self.queries]}, indent=2)


def _num(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where} must be a number, got {value!r}")
    return float(value)


def load_labelled_set(path: str | Path) -> LabelledSet:
    """Read and check a labelled set; an InputError names the first problem."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"no labelled set at {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read the labelled set {path}: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("queries"), list) or not doc["queries"]:
        raise InputError(f"{path}: expected {{\"queries\": [ … ]}} with at least one query")
    queries: list[LabelledQuery] = []
    for n, q in enumerate(doc["queries"], 1):
        where = f"{path}: query {n}"
        if not isinstance(q, dict) or not isinstance(q.get("request"), str) or not q["request"].strip():
            raise InputError(f"{where}: needs a non-empty \"request\"")
        moments = []
        for m in q.get("relevant", []) or []:
            if not isinstance(m, dict) or not isinstance(m.get("stream_id"), str):
                raise InputError(f"{where}: each relevant moment needs stream_id, t_start, t_end")
            t0, t1 = _num(m.get("t_start"), f"{where} t_start"), _num(m.get("t_end"), f"{where} t_end")
            if t1 < t0:
                raise InputError(f"{where}: a relevant moment ends before it starts")
            moments.append(Moment(m["stream_id"], t0, t1, _num(m.get("grade", 1.0), f"{where} grade")))
        facts = []
        for f in q.get("facts", []) or []:
            if not isinstance(f, dict) or not isinstance(f.get("text"), str) or not isinstance(f.get("stream_id"), str):
                raise InputError(f"{where}: each fact needs text, stream_id, t_start, t_end")
            kws = f.get("keywords", [])
            if not isinstance(kws, list) or not all(isinstance(k, str) for k in kws):
                raise InputError(f"{where}: keywords must be a list of strings")
            facts.append(
                Fact(f["text"], f["stream_id"], _num(f.get("t_start"), f"{where} t_start"),
                     _num(f.get("t_end"), f"{where} t_end"), kws)
            )
        queries.append(LabelledQuery(str(q.get("id", f"q{n}")), q["request"], moments, facts))
    return LabelledSet(queries)


# -- the generated set -----------------------------------------------------------------------
# Two cameras, known speech. Times: speech starts at t and lasts ≈ 3–4 s at 140 wpm.
ARTICLE_RECORDINGS: dict[str, tuple[list[samples.Scene], list[samples.Speech]]] = {
    "bridge-cam": (
        [
            samples.Scene(duration_s=8, seed=11, tint=(70, 90, 140), text="NORTH BRIDGE"),
            samples.Scene(duration_s=8, seed=12, tint=(150, 110, 60)),
        ],
        [
            samples.Speech(t=1.5, text="A delivery truck stopped on the north bridge."),
            samples.Speech(t=9.5, text="Two cyclists crossed the bridge towards the harbour."),
        ],
    ),
    "market-cam": (
        [
            samples.Scene(duration_s=8, seed=13, tint=(160, 70, 70), text="MARKET"),
            samples.Scene(duration_s=8, seed=14, tint=(60, 150, 90)),
        ],
        [
            samples.Speech(t=1.5, text="The cake shop sold out of chocolate cakes."),
            samples.Speech(t=9.5, text="A street musician played the violin by the fountain."),
        ],
    ),
}

_FACTS = {
    "truck": Fact("A delivery truck stopped on the north bridge.", "bridge-cam", 1.0, 6.0, ["truck"]),
    "cyclists": Fact("Two cyclists crossed the bridge towards the harbour.", "bridge-cam", 9.0, 14.5, ["cyclist"]),
    "cakes": Fact("The cake shop sold out of chocolate cakes.", "market-cam", 1.0, 6.0, ["cake"]),
    "violin": Fact("A street musician played the violin by the fountain.", "market-cam", 9.0, 14.5, ["violin|musician"]),
}


def _query(qid: str, request: str, facts: list[str]) -> LabelledQuery:
    chosen = [_FACTS[f] for f in facts]
    return LabelledQuery(qid, request, [Moment(f.stream_id, f.t_start, f.t_end) for f in chosen], chosen)


ARTICLE_QUERIES = [
    _query(
        "both-cameras",
        "Write a report from all cameras about the morning: traffic on the north bridge, the "
        "cyclists, what the shops sold, and any music at the market.",
        ["truck", "cyclists", "cakes", "violin"],
    ),
    _query("bridge", "What happened on the bridge: vehicles and people crossing it?", ["truck", "cyclists"]),
    _query("market", "Report on the market: what the shops sold and the street music.", ["cakes", "violin"]),
]


def build_article_set(root: Path, components) -> LabelledSet:
    """Generate and ingest the two recordings under ``root``; return the labels."""
    from episodic.pipeline import ingest_file

    root.mkdir(parents=True, exist_ok=True)
    for stream_id, (scenes, speech) in ARTICLE_RECORDINGS.items():
        path = root / f"{stream_id}.mp4"
        samples.make_recording(path, scenes, speech)
        ingest_file(path, stream_id, components)
    return LabelledSet(list(ARTICLE_QUERIES))
