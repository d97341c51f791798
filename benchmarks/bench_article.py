"""Article latency by style and by number of segments, and retrieval nDCG@10 / Recall@10 with
and without query decomposition + fusion (issue 5, "Measure").

The store: the labelled set the tests build (``episodic.labelled_set.build_article_set``: two
cameras, four spoken facts) plus ``--distractors`` generated streams whose speech is about
neighbouring things (another bridge, other shops, other music), so that retrieval has
something to get wrong. Built once under ``--cache-dir`` and reused.

Printed:
  - article latency p50/p95 per style (BULLET, CAG, GINGER) over the labelled requests, and
    the stage split (decompose / retrieve / extract / calibrate / write);
  - GINGER latency as ``article_max_segments`` (segments read for evidence) grows;
  - the evaluation means (``episodic.evaluation``): nDCG@10 and Recall@10 for the fused
    ranking and for the request alone, MTGS, STEM rates, citation precision and validity,
    fact recall; per fusion method.

    .venv/bin/python benchmarks/bench_article.py [--distractors 4] [--repeats 3]
        [--segments 4,8,12,24] [--cache-dir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from episodic import samples  # noqa: E402
from episodic.components import Components
from episodic.config import load_settings  # noqa: E402
from episodic.core.article import ArticleRequest, ArticleStyle, Fusion  # noqa: E402
from episodic.evaluation import evaluate  # noqa: E402
from episodic.labelled_set import ARTICLE_QUERIES, LabelledSet, build_article_set  # noqa: E402
from episodic.pipeline import ingest_file  # noqa: E402
from episodic.services.articles import ArticleService  # noqa: E402

DISTRACTORS = [
    ("south-bridge-cam", "A bus waited at the south bridge for ten minutes.", "Children walked across the old bridge to school."),
    ("station-cam", "The train to Leeds is delayed by twenty minutes.", "A porter carried three suitcases to platform two."),
    ("harbour-cam", "Fishing boats came back to the harbour at dawn.", "A crane lifted containers onto the cargo ship."),
    ("square-cam", "A flower seller opened her stall in the square.", "Tourists took photos of the clock tower."),
    ("park-cam", "A jogger ran past the pond with his dog.", "A brass band practised near the park gate."),
    ("cafe-cam", "The cafe served coffee and fresh croissants.", "Two friends argued about the football match."),
]
VERSION = 1


def build(root: Path, distractors: int, console: Console) -> tuple[Components, LabelledSet]:
    data = root / f"v{VERSION}-d{distractors}"
    ready = data / "READY"
    components = Components(load_settings(data_dir=data / "data"))
    if ready.exists():
        return components, LabelledSet(list(ARTICLE_QUERIES))
    t = time.perf_counter()
    labels = build_article_set(data, components)
    for i, (sid, first, second) in enumerate(DISTRACTORS[:distractors]):
        path = data / f"{sid}.mp4"
        scenes = [samples.Scene(duration_s=8, seed=40 + 2 * i, tint=(90, 90, 90)),
                  samples.Scene(duration_s=8, seed=41 + 2 * i, tint=(50, 120, 160))]
        speech = [samples.Speech(t=1.5, text=first), samples.Speech(t=9.5, text=second)]
        samples.make_recording(path, scenes, speech)
        ingest_file(path, sid, components)
    ready.write_text("ok")
    console.print(f"store built in {time.perf_counter() - t:.1f} s ({2 + distractors} streams)")
    return components, labels


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--distractors", type=int, default=4, help=f"extra streams, 0..{len(DISTRACTORS)}")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--segments", default="4,8,12,24", help="article_max_segments values for GINGER")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache/episodic/bench-article")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    console = Console(stderr=True)
    components, labels = build(args.cache_dir, max(0, min(args.distractors, len(DISTRACTORS))), console)
    service = ArticleService(components)
    service.write(ArticleRequest("warm up the models"))  # loads the embedder and the caches
    out: dict = {"styles": {}, "segments": {}, "evaluation": {}}

    for style in ArticleStyle:
        totals: list[float] = []
        stages: dict[str, list[float]] = {}
        for _ in range(args.repeats):
            for q in labels.queries:
                a = service.write(ArticleRequest(q.request, style=style))
                totals.append(a.timings_ms["total"])
                for k, v in a.timings_ms.items():
                    stages.setdefault(k, []).append(v)
        out["styles"][style.value] = {
            "p50_ms": round(statistics.median(totals), 1),
            "p95_ms": round(pct(totals, 0.95), 1),
            "stages_p50_ms": {k: round(statistics.median(v), 1) for k, v in stages.items() if k != "total"},
        }

    for n in [int(x) for x in args.segments.split(",") if x.strip()]:
        svc = ArticleService(components, qa=service.qa, settings=components.settings.replace(article_max_segments=n))
        totals, claims = [], []
        for _ in range(args.repeats):
            for q in labels.queries:
                a = svc.write(ArticleRequest(q.request, style=ArticleStyle.GINGER))
                totals.append(a.timings_ms["total"])
                claims.append(len(a.claims))
        out["segments"][n] = {"p50_ms": round(statistics.median(totals), 1), "p95_ms": round(pct(totals, 0.95), 1),
                              "claims_mean": round(statistics.mean(claims), 1)}

    for fusion in Fusion:
        report = evaluate(service, labels, style=ArticleStyle.GINGER, fusion=fusion)
        out["evaluation"][fusion.value] = report.means()

    if args.json:
        print(json.dumps(out, indent=2))
        return
    con = Console()
    t = Table(title="Article latency by style (ms)")
    for col in ("style", "p50", "p95", "stage p50s"):
        t.add_column(col)
    for style, r in out["styles"].items():
        t.add_row(style, str(r["p50_ms"]), str(r["p95_ms"]), ", ".join(f"{k} {v}" for k, v in r["stages_p50_ms"].items()))
    con.print(t)
    t = Table(title="GINGER latency by segments read (article_max_segments)")
    for col in ("segments", "p50 ms", "p95 ms", "claims"):
        t.add_column(col)
    for n, r in out["segments"].items():
        t.add_row(str(n), str(r["p50_ms"]), str(r["p95_ms"]), str(r["claims_mean"]))
    con.print(t)
    t = Table(title="Evaluation (GINGER) by fusion: decomposition+fusion vs the request alone")
    cols = ["ndcg", "ndcg_single", "recall", "recall_single", "mtgs", "stem_missing", "stem_hallucinated",
            "citation_precision", "citation_validity", "fact_recall"]
    t.add_column("fusion")
    for col in cols:
        t.add_column(col.replace("_", " "))
    for fusion, means in out["evaluation"].items():
        t.add_row(fusion, *[f"{means[c]:.3f}" for c in cols])
    con.print(t)


if __name__ == "__main__":
    main()
