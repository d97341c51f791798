"""Standing-query match watches on recordings the memory has never seen: how well they fire,
so ``watch_min_score`` is measured rather than guessed (issue 17).

Uses the QA sets of :mod:`episodic.qa_generator` as benchmarks/bench_qa.py builds them (once,
cached under ``--root``; recordings ingested into ``data-<split>`` next to the set, or under
``--data-root``, skipped when already there). Every labelled moment query ("this query happens
here") becomes a match watch over all streams (moments with the same query text, such as
"the screen goes dark" on two streams, are one watch with all their targets); every stored memory, with its ThetaEvent, is
scored against it by ``WatchEvaluator.score`` (services/watching.py), exactly the score a live
match watch compares with ``watch_min_score``. A memory is a true match when it overlaps a
target interval of the same stream.

For thresholds ``--lo``..``--hi`` step ``--step``, per split (:mod:`episodic.watch_evaluation`):
per-query recall (fires on at least one true memory), alert precision (fired memories that are
true / all fired), F1, false alarms per watch and stream-hour (fired false memories / (queries ×
stream hours); memory level, the live ``cooldown_s`` merging is left out). The threshold with
the best F1 on **dev** is chosen (a plateau of equal F1: its middle); the held-out split is
reported at the configured ``watch_min_score`` and at the dev-chosen threshold, as a
measurement only (never chosen on).

    .venv/bin/python benchmarks/bench_watch.py [--split both|dev|heldout] [--root DIR]
        [--data-root DIR] [--no-ingest] [--seed 0] [--streams 3] [--minutes 2.5]
        [--lo 0.20] [--hi 0.60] [--step 0.02] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_qa import _commit, ensure_set  # noqa: E402
from rich import box  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import Progress  # noqa: E402
from rich.table import Table  # noqa: E402

from episodic.config import load_settings  # noqa: E402
from episodic.pipeline import Components  # noqa: E402
from episodic.qa_evaluation import ingest_recordings  # noqa: E402
from episodic.qa_set import MomentQuery, QASet, load_qa_set  # noqa: E402
from episodic.watch_evaluation import (  # noqa: E402
    Figures,
    Scored,
    best_threshold,
    figures_at,
    is_true_match,
    one_watch_per_query,
    per_query,
    sweep,
    thresholds,
)

NEAR_F1 = 0.02  # the verdict names the thresholds whose dev F1 is this close to the best


def stream_hours(qa_set: QASet, components: Any) -> float:
    """Hours of footage the watches looked at: the recordings' lengths (the stored stream's
    end where the set does not say)."""
    total = 0.0
    for rec in qa_set.recordings:
        seconds = rec.duration_s
        if seconds is None:
            info = components.store.get_stream(rec.stream_id)
            seconds = info.t_end if info is not None else 0.0
        total += float(seconds)
    return total / 3600.0


def score_store(qa_set: QASet, watches: list[MomentQuery], components: Any, console: Console,
                on_note: Callable[[str], None]) -> list[Scored]:
    """Every watch (a moment query) against every stored memory (with its event), scored as a
    live match watch scores it."""
    from episodic.retrieval.detailed import units_of
    from episodic.services.watching import WatchEvaluator

    w = components.settings.watches
    # score() never touches the watch store: nothing is written to the copied data directory
    evaluator = WatchEvaluator(None, components.embedder, min_score=w.watch_min_score,  # type: ignore[arg-type]
                               full_score=w.watch_full_score)
    store = components.store
    memories = store.list_memories(with_vectors=True)
    events = {e.memory_id: e for e in store.list_events(with_vectors=True)}
    streams = {rec.stream_id for rec in qa_set.recordings}
    held = {m.stream_id for m in memories}
    for sid in sorted(streams - held):
        on_note(f"[yellow]stream {sid} of the set has no memories in the store[/yellow]")
    missing_events = sum(1 for m in memories if m.id not in events)
    if missing_events:
        on_note(f"[yellow]{missing_events} memories without an event (scored without the summary)[/yellow]")
    on_note(f"{len(memories)} memories, {len(events)} events, {len(watches)} watches "
            f"({len(qa_set.moments)} moment queries)")
    scored: list[Scored] = []
    with Progress(console=console, transient=True) as progress:
        job = progress.add_task(f"{qa_set.split} memories", total=len(memories))
        for m in memories:
            units = units_of(m, events.get(m.id), evaluator.scorer.reuse_visual_vectors)
            for mq in watches:
                hit = evaluator.score(mq.query, units)
                scored.append(Scored(mq.id, m.id, m.stream_id, hit.score if hit.unit is not None else None,
                                     is_true_match(m.stream_id, m.t_start, m.t_end, mq.targets)))
            progress.advance(job)
    return scored


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}"


def _pct1(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _fa(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def table(docs: dict[str, dict[str, Any]], default: float, chosen: float | None) -> Table:
    """One row per threshold; per split: fired, precision, recall, F1 (%), false alarms per
    watch and stream-hour."""
    splits = [s for s in ("dev", "heldout") if s in docs]
    t = Table(title="match watches: a memory fires at score ≥ thr", box=box.SIMPLE_HEAD,
              caption="n fired memories; P precision, R per-query recall, F1 (%); FA false alarms per "
                      "watch and stream-hour; * the configured watch_min_score, † the dev pick")
    t.add_column("thr", justify="right")
    for s in splits:
        for col in ("n", "P", "R", "F1", "FA"):
            t.add_column(f"{s[:4]}\n{col}", justify="right")
    t.add_column("")
    taus = [r["threshold"] for r in docs[splits[0]]["sweep"]]
    for i, tau in enumerate(taus):
        cells = [f"{tau:.2f}"]
        for s in splits:
            r = docs[s]["sweep"][i]
            cells += [str(r["fired"]), _pct(r["precision"]), _pct(r["recall"]), _pct(r["f1"]),
                      _fa(r["false_per_watch_hour"])]
        marks = []
        if abs(tau - default) < 1e-9:
            marks.append("*")
        if chosen is not None and abs(tau - chosen) < 1e-9:
            marks.append("†")
        t.add_row(*cells, "".join(marks), style="bold" if marks else None,
                  end_section=i == len(taus) - 1)
    return t


def evaluate_split(split: str, args: argparse.Namespace, console: Console) -> dict[str, Any]:
    note = lambda m: console.print(m, highlight=False)  # noqa: E731
    qa_json = ensure_set(args.root, split, args.seed, args.streams, args.minutes, console)
    qa_set = load_qa_set(qa_json)
    data_dir = (args.data_root or qa_json.parent.parent) / f"data-{split}"
    components = Components(load_settings(data_dir=data_dir))
    watches = one_watch_per_query(qa_set.moments)
    started = time.perf_counter()
    try:
        ingested = [] if args.no_ingest else ingest_recordings(qa_set, components, on_note=note)
        scored = score_store(qa_set, watches, components, console, note)
        hours = stream_hours(qa_set, components)
        default = components.settings.watches.watch_min_score
        full = components.settings.watches.watch_full_score
    finally:
        components.close()
    ids = [mq.id for mq in watches]
    # the grid, and the configured threshold so its row is in the table
    rows = sweep(scored, sorted({*thresholds(args.lo, args.hi, args.step), round(default, 6)}), hours, ids)
    queries = per_query(scored, default)
    for mq in watches:
        queries.setdefault(mq.id, {})["query"] = mq.query
    return {
        "qa_set": str(qa_json), "data_dir": str(data_dir), "ingest": ingested,
        "memories": len({s.memory_id for s in scored}), "queries": len(ids), "stream_hours": round(hours, 4),
        "watch_min_score": default, "watch_full_score": full,
        "sweep": [r.to_dict() for r in rows], "at_default": figures_at(scored, default, hours, ids).to_dict(),
        "per_query": queries, "wall_s": round(time.perf_counter() - started, 1),
        "_scored": scored, "_ids": ids, "_rows": rows,
    }


def _line(f: Figures | dict[str, Any]) -> str:
    d = f.to_dict() if isinstance(f, Figures) else f
    return (f"P {_pct(d['precision'])} %, R {_pct(d['recall'])} % ({d['recalled']}/{d['reachable']}), "
            f"F1 {_pct1(d['f1'])} %, {d['false_fired']} false of {d['fired']} fired "
            f"({_fa(d['false_per_watch_hour'])}/watch·h)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("heldout", "dev", "both"), default="both")
    ap.add_argument("--root", type=Path, default=Path("/tmp/episodic-bench-qa"),
                    help="where bench_qa keeps (or builds) the QA sets")
    ap.add_argument("--data-root", type=Path, default=None,
                    help="folder holding the stores data-dev and data-heldout (default: next to the sets)")
    ap.add_argument("--no-ingest", action="store_true",
                    help="score the stores as they are (e.g. a copy whose recordings' paths moved)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--streams", type=int, default=3)
    ap.add_argument("--minutes", type=float, default=2.5)
    ap.add_argument("--lo", type=float, default=0.20)
    ap.add_argument("--hi", type=float, default=0.60)
    ap.add_argument("--step", type=float, default=0.02)
    ap.add_argument("--json", action="store_true", help="print one JSON document (sweeps and per-query scores)")
    args = ap.parse_args()
    console = Console(stderr=True)
    splits = ("dev", "heldout") if args.split == "both" else (args.split,)
    out: dict[str, Any] = {"commit": _commit()}
    for split in splits:
        out[split] = evaluate_split(split, args, console)
        d = out[split]
        console.print(f"[bold]{split}[/bold]: {d['queries']} watches × {d['memories']} memories, "
                      f"{60 * d['stream_hours']:.1f} stream-minutes, {d['wall_s']:.0f} s", highlight=False)
    default = out[splits[0]]["watch_min_score"]
    chosen_row = best_threshold(out["dev"]["_rows"]) if "dev" in out else None
    chosen = chosen_row.threshold if chosen_row is not None else None
    verdict = ""
    if chosen_row is not None:
        out["dev"]["chosen"] = chosen_row.to_dict()
        near = [r.threshold for r in out["dev"]["_rows"] if (r.f1 or 0.0) >= (chosen_row.f1 or 0.0) - NEAR_F1]
        out["dev"]["near_best"] = [min(near), max(near)]
        verdict = (f"dev picks {chosen:.2f} (F1 {_pct1(chosen_row.f1)} %; at the default {default:.2f}: "
                   f"{_pct1(out['dev']['at_default']['f1'])} %; within {100 * NEAR_F1:.0f} points of the best "
                   f"from {min(near):.2f} to {max(near):.2f})")
    if "heldout" in out:
        h = out["heldout"]
        if chosen is not None:
            h["at_chosen"] = figures_at(h["_scored"], chosen, h["stream_hours"], h["_ids"]).to_dict()
            a, c = h["at_default"], h["at_chosen"]
            better = (c["f1"] or 0) - (a["f1"] or 0)
            verdict += (f"; held-out F1 {_pct1(c['f1'])} % at {chosen:.2f} vs {_pct1(a['f1'])} % at the default "
                        f"({'+' if better >= 0 else ''}{100 * better:.1f} points)")
        else:
            verdict = f"held-out at the default {default:.2f}: {_line(h['at_default'])} (run dev to choose)"
    for d in out.values():
        if isinstance(d, dict):
            for key in ("_scored", "_ids", "_rows"):
                d.pop(key, None)
    out["verdict"] = verdict
    if args.json:
        sys.stdout.write(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
        return
    con = Console()
    con.print(table({s: out[s] for s in splits}, default, chosen))
    for s in splits:
        con.print(f"{s} at the default {default:.2f}: {_line(out[s]['at_default'])}", highlight=False)
        if s == "heldout" and "at_chosen" in out[s]:
            con.print(f"{s} at the dev-chosen {chosen:.2f}: {_line(out[s]['at_chosen'])}", highlight=False)
    con.print(f"verdict: {verdict}", highlight=False)
    con.print(f"measured at commit {out['commit']}")


if __name__ == "__main__":
    main()
