"""Fuzzy recall (issue 16): find the recording, and the moment, from a half-remembered description.

Builds (once, cached under ``--root``) the labelled recall set of :mod:`episodic.recall_generator`
(twins that share a key moment, queries of RVMS-Bench's nine task types G, K, KT, GK, KA, KTA,
GKA, GKT, GKTA), ingests its recordings into a store of their own (``ROOT/…/data-<split>``,
skipped when already there), then runs every query two ways:

* **baseline**, plain moment Search: ``MemoryQA.search(description)``; the stream of the first
  moment is the predicted stream;
* **recall**, the fuzzy-recall service ``FuzzyRecall(components).recall(RecallRequest(...))``
  (:mod:`episodic.services.recall`; left out, with a note, when it cannot be imported).
  ``--facets`` hands it the explicit facets instead of the free text.

For both, the key moment counts as **localised** when the first result is in the right stream
and its time (a Search moment's middle, a recall result's ``t``) lies within the true interval
± 2 s.

Per task type: right stream at rank 1, localisation, distractor rejected (the right stream is
ranked above the twin that shares the key moment but violates another facet, or the twin is not
returned at all), mean and p95 latency. ``--json`` prints every query's record as well.

Also: the other split's G and K descriptions, about recordings this memory does not hold,
should be refused (nothing offered, or only at confidence < 0.3).

Report on ``--split heldout``; tune on ``--split dev`` only.

    .venv/bin/python benchmarks/bench_recall.py [--split heldout|dev|both] [--root DIR]
        [--seed 0] [--streams 8] [--seconds 60] [--series] [--facets | --baseline-only] [--reingest] [--json]

``--series`` builds the harder set: each pair of twins is two episodes of one show (the same
opening and closing lines, title slide and impressions), so a global impression fits both and
only the temporal and auditory clues tell them apart (:func:`episodic.recall_generator.as_series`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_qa import _commit  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import Progress  # noqa: E402
from rich.table import Table  # noqa: E402

from episodic.config import load_settings  # noqa: E402
from episodic.core.errors import EpisodicError  # noqa: E402
from episodic.core.query import RecallRequest  # noqa: E402
from episodic.pipeline import Components  # noqa: E402
from episodic.qa_evaluation import ingest_recordings, overlaps, percentile  # noqa: E402
from episodic.qa_set import QASet  # noqa: E402
from episodic.recall_generator import build_recall_set  # noqa: E402
from episodic.recall_set import TASKS, RecallQuery, RecallSet, load_recall_set  # noqa: E402

VERSION = 1  # bump when the generator changes what it writes
TOP_K = 10
SLACK_S = 2.0  # a recalled t this close to the true interval counts as localised
METHODS = ("baseline", "recall")
MULTI_FACET = "multi"  # the seven types with two facets or more (KT … GKTA), pooled


def ensure_set(root: Path, split: str, seed: int, streams: int, seconds: float, console: Console,
               series: bool = False) -> Path:
    """The split's recall.json, generated unless a set with the same parameters is there."""
    folder = root / f"v{VERSION}-s{seed}-n{streams}-t{seconds:g}{'-series' if series else ''}" / split
    path = folder / "recall.json"
    if path.is_file():
        return path
    started = time.perf_counter()
    build_recall_set(folder, split, seed, streams, seconds, on_note=lambda m: console.print(m, highlight=False),
                     series=series)
    console.print(f"built {path} in {time.perf_counter() - started:.0f} s", highlight=False)
    return path


def recall_service(components: Any, qa: Any, console: Console) -> Any | None:
    """The fuzzy-recall service, or None (with the reason on stderr) where it is not there yet."""
    try:
        from episodic.services.recall import FuzzyRecall
    except ImportError as exc:
        console.print(f"[yellow]no recall service ({exc}): baseline only[/yellow]")
        return None
    try:
        return FuzzyRecall(components, qa=qa)
    except TypeError:  # a service that builds its own MemoryQA
        return FuzzyRecall(components)


# -- one query, each way -------------------------------------------------------------------------
def _judge(q: RecallQuery, hits: list[tuple[str, float, float, float]], latency: float) -> dict[str, Any]:
    """Score ranked hits (stream_id, t, t_start, t_end) against the query's truth."""
    ranked = list(dict.fromkeys(h[0] for h in hits))
    rank = ranked.index(q.stream_id) + 1 if q.stream_id in ranked else None
    rec: dict[str, Any] = {"stream_at_1": rank == 1, "rank": rank, "latency_s": round(latency, 4),
                           "streams": ranked[:5],
                           "top": [{"stream_id": s, "t": round(t, 2), "t_start": round(a, 2), "t_end": round(b, 2)}
                                   for s, t, a, b in hits[:5]]}
    if q.moment is not None:
        first = next((h for h in hits if h[0] == q.stream_id), None)
        lo, hi = q.moment.t_start, q.moment.t_end
        rec["overlaps"] = first is not None and overlaps(first[2], first[3], lo, hi)
        rec["t_within"] = first is not None and lo - SLACK_S <= first[1] <= hi + SLACK_S
        # one rule for both methods: the answer a user gets (the first result) is the right
        # stream, and its moment's time lies within the true interval (± SLACK_S)
        rec["localised"] = rank == 1 and hits[0][0] == q.stream_id and rec["t_within"]
    if q.distractor:
        d_rank = ranked.index(q.distractor) + 1 if q.distractor in ranked else None
        rec["distractor_rank"] = d_rank
        rec["distractor_rejected"] = rank is not None and (d_rank is None or rank < d_rank)
    return rec


def run_baseline(qa: Any, q: RecallQuery) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        moments = qa.search(q.description, top_k=TOP_K)
    except EpisodicError as exc:
        return {"error": str(exc), "stream_at_1": False, "latency_s": round(time.perf_counter() - started, 4)}
    hits = [(m.stream_id, (m.t_start + m.t_end) / 2, m.t_start, m.t_end) for m in moments]
    return _judge(q, hits, time.perf_counter() - started)


def run_recall(service: Any, q: RecallQuery, use_facets: bool) -> dict[str, Any]:
    f = q.facets
    req = (RecallRequest(global_impression=f.get("global", ""), key_moment=f.get("key_moment", ""),
                         temporal=f.get("temporal", ""), audio=f.get("audio", ""), top_k=TOP_K)
           if use_facets else RecallRequest(description=q.description, top_k=TOP_K))
    started = time.perf_counter()
    try:
        result = service.recall(req)
    except EpisodicError as exc:
        return {"error": str(exc), "stream_at_1": False, "latency_s": round(time.perf_counter() - started, 4)}
    latency = time.perf_counter() - started
    rec = _judge(q, [(r.stream_id, r.t, r.t_start, r.t_end) for r in result.results], latency)
    rec["facets"] = dict(result.facets)
    rec["rejected"] = list(result.rejected)
    if q.distractor:
        rec["distractor_named_rejected"] = any(q.distractor in r for r in result.rejected)
    if result.results:
        rec["why"] = result.results[0].why
    return rec


# -- figures -------------------------------------------------------------------------------------
def _rate(records: list[dict[str, Any]], key: str) -> dict[str, Any]:
    vals = [r[key] for r in records if r.get(key) is not None]
    return {"rate": round(sum(vals) / len(vals), 4) if vals else None, "n": len(vals)}


def summarise(rows: list[dict[str, Any]], method: str) -> dict[str, Any]:
    """Per task type, the multi-facet types together (the issue's target is on those) and
    overall: stream@1, localisation, distractor rejection, latency."""
    out: dict[str, Any] = {}
    groups = {t: [r for r in rows if r["task"] == t] for t in TASKS}
    groups[MULTI_FACET] = [r for r in rows if len(r["task"]) > 1]
    groups["all"] = rows
    for name, group in groups.items():
        recs = [r[method] for r in group if method in r]
        if not recs:
            continue
        lat = [r["latency_s"] for r in recs]
        out[name] = {"n": len(recs), "stream_at_1": _rate(recs, "stream_at_1"),
                     "localised": _rate(recs, "localised"), "distractor_rejected": _rate(recs, "distractor_rejected"),
                     "latency_mean_s": round(sum(lat) / len(lat), 4), "latency_p95_s": percentile(lat, 95),
                     "errors": sum(1 for r in recs if r.get("error"))}
    return out


def table(split: str, summary: dict[str, dict[str, Any]], mode: str) -> Table:
    """One row per task type and method (search = the plain Search baseline)."""
    methods = [m for m in METHODS if summary.get(m)]
    given = f" (recall given the {mode})" if "recall" in methods else " (plain Search only)"
    t = Table(title=f"fuzzy recall, {split}{given}")
    for col in ("task", "n", "method", "stream@1", "localised", "rejects twin", "ms mean/p95"):
        t.add_column(col, justify="left" if col in ("task", "method") else "right")

    def pct(cell: dict[str, Any]) -> str:
        return "–" if cell["rate"] is None else f"{100 * cell['rate']:.0f} %"

    for task in [*TASKS, MULTI_FACET, "all"]:
        first = True
        for m in methods:
            c = summary[m].get(task)
            if not c:
                continue
            t.add_row(task if first else "", str(c["n"]) if first else "", "search" if m == "baseline" else m,
                      pct(c["stream_at_1"]), pct(c["localised"]), pct(c["distractor_rejected"]),
                      f"{1000 * c['latency_mean_s']:.0f}/{1000 * c['latency_p95_s']:.0f}",
                      style="bold" if task in ("all", MULTI_FACET) else None, end_section=m == methods[-1])
            first = False
    return t


def evaluate(rs: RecallSet, components: Any, console: Console, use_facets: bool, reingest: bool,
             on_note: Callable[[str], None], with_recall: bool = True) -> dict[str, Any]:
    """Ingest (unless there), warm up, run every query both ways; the split's JSON document."""
    from episodic.services.qa import MemoryQA

    holder = QASet(rs.recordings, [], split=rs.split, name=rs.name, root=rs.root)
    ingested = ingest_recordings(holder, components, reingest, on_note)
    qa = MemoryQA(components, warm_after_request=False)
    on_note("warming up the models")
    qa.prepare()
    service = recall_service(components, qa, console) if with_recall else None
    if service is not None:  # latency as a running server sees it, not model loading
        if hasattr(service, "prepare"):
            service.prepare()
        else:
            with contextlib.suppress(EpisodicError):
                service.recall(RecallRequest(description="warm up: a short video with music"))
    rows: list[dict[str, Any]] = []
    with Progress(console=console, transient=True) as progress:
        job = progress.add_task(f"{rs.split} queries", total=len(rs.queries))
        for q in rs.queries:
            row: dict[str, Any] = {"id": q.id, "task": q.task, "description": q.description, "facets": q.facets,
                                   "stream_id": q.stream_id, "distractor": q.distractor,
                                   "moment": None if q.moment is None else [q.moment.t_start, q.moment.t_end],
                                   "baseline": run_baseline(qa, q)}
            if service is not None:
                row["recall"] = run_recall(service, q, use_facets)
            rows.append(row)
            progress.advance(job)
    doc = {"name": rs.name, "mode": "facets" if use_facets else "description", "ingest": ingested,
           "models": components.model_ids(),
           "summary": {m: summarise(rows, m) for m in METHODS if any(m in r for r in rows)}, "queries": rows}
    if service is not None:
        doc["absent"] = run_absent(service, rs.split)
    return doc


ABSENT_CONFIDENT = 0.3  # a description of something never recorded should get nothing, or less


def run_absent(service: Any, split: str) -> dict[str, Any]:
    """Descriptions of recordings that are not in this memory: the other split's G and K
    descriptions (other themes, sentences, signs and photos). Refused = nothing offered, or
    only at a confidence below ABSENT_CONFIDENT."""
    from episodic.recall_generator import estimated_seconds, plan_recall_set

    other = "heldout" if split == "dev" else "dev"
    plan = plan_recall_set(other, seed=0, streams=8, seconds=45.0, speech_s=estimated_seconds)
    rows = []
    for qp in plan.queries:
        if qp.query.task not in ("G", "K"):
            continue
        result = service.recall(RecallRequest(description=qp.query.description))
        top = result.results[0].confidence if result.results else None
        rows.append({"description": qp.query.description, "top_confidence": top,
                     "refused": top is None or top < ABSENT_CONFIDENT})
    refused = sum(r["refused"] for r in rows)
    return {"n": len(rows), "refused": refused, "rate": round(refused / max(1, len(rows)), 3), "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("heldout", "dev", "both"), default="heldout")
    ap.add_argument("--root", type=Path, default=Path("/tmp/episodic-bench-recall"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--streams", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--series", action="store_true",
                    help="the harder set: twins are two episodes of one show (same opening, closing and "
                         "impressions), so only what came before/after the shared moment and what was heard "
                         "tell them apart")
    ap.add_argument("--facets", action="store_true", help="give the recall service the explicit facets, not the free text")
    ap.add_argument("--baseline-only", action="store_true", help="run plain Search only, not the recall service")
    ap.add_argument("--reingest", action="store_true", help="ingest again even when the store holds the recordings")
    ap.add_argument("--json", action="store_true", help="print one JSON document (summaries and per-query records)")
    args = ap.parse_args()
    console = Console(stderr=True)
    splits = ("dev", "heldout") if args.split == "both" else (args.split,)
    out: dict[str, Any] = {"commit": _commit()}
    for split in splits:
        path = ensure_set(args.root, split, args.seed, args.streams, args.seconds, console, args.series)
        rs = load_recall_set(path)
        components = Components(load_settings(data_dir=path.parent.parent / f"data-{split}"))
        started = time.perf_counter()
        try:
            doc = evaluate(rs, components, console, args.facets, args.reingest,
                           lambda m: console.print(m, highlight=False), not args.baseline_only)
        finally:
            components.close()
        doc["wall_s"] = round(time.perf_counter() - started, 1)
        out[split] = doc
        if not args.json:
            console.print(f"[bold]{split}[/bold]: {len(rs.queries)} queries over {len(rs.recordings)} recordings, "
                          f"{doc['wall_s']:.0f} s", highlight=False)
            Console().print(table(split, doc["summary"], doc["mode"]))
            if "absent" in doc:
                a = doc["absent"]
                Console().print(f"never recorded (the other split's G and K descriptions): "
                                f"refused {a['refused']}/{a['n']} ({a['rate']:.0%}; nothing offered, "
                                f"or only below confidence {ABSENT_CONFIDENT})", highlight=False)
    if args.json:
        sys.stdout.write(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    else:
        Console().print(f"measured at commit {out['commit']}")


if __name__ == "__main__":
    main()
