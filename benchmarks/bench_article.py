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

``--compare-evidence`` prints only the issue-16 comparison instead: fact recall, citation
precision and validity, STEM missing, nDCG@10 of the list the article reads (reranked or
not), claims, QA claims, Ask calls and seconds per article for the baseline, +rerank, +QA
single (SS-QA), +QA iterative (ITER-QA) and +rerank +QA iterative, each at every
``--compare-segments`` value of ``article_max_segments``, in ``--compare-style``. Ask may
store a better transcript of what it re-listened to, so every variant runs on a fresh copy
of the built store (no variant learns from another's questions).

    .venv/bin/python benchmarks/bench_article.py --compare-evidence [--compare-segments 12,4]
        [--compare-style ginger] [--variants baseline,rerank,qa-single,qa-iterative]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from episodic import samples  # noqa: E402
from episodic.components import Components
from episodic.config import load_settings  # noqa: E402
from episodic.core.article import ArticleRequest, ArticleStyle, Fusion  # noqa: E402
from episodic.core.query import Scope  # noqa: E402
from episodic.evaluation import K, all_relevant_segments, evaluate, segment_relevance  # noqa: E402
from episodic.labelled_set import ARTICLE_QUERIES, LabelledSet, build_article_set  # noqa: E402
from episodic.pipeline import ingest_file  # noqa: E402
from episodic.retrieval.detailed import MemoryReader  # noqa: E402
from episodic.retrieval.ranking_metrics import ndcg_at_k  # noqa: E402
from episodic.services.articles import ArticleService, QAReport  # noqa: E402

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


# issue 16 item 7: the evidence variants compared (name → article settings changed)
VARIANTS: dict[str, dict[str, object]] = {
    "baseline": {},
    "rerank": {"article_rerank": True},
    "qa-single": {"article_qa": "single"},
    "qa-iterative": {"article_qa": "iterative"},
    "rerank+qa-iterative": {"article_rerank": True, "article_qa": "iterative"},
}
BASELINE = {"article_rerank": False, "article_qa": "off"}


class _Recording(ArticleService):
    """An ArticleService that keeps each article's QA report and claim count (the evaluation
    reports neither)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.qa_reports: list[QAReport | None] = []
        self.claims: list[int] = []

    def write(self, req, progress=None):
        article = super().write(req, progress)
        self.qa_reports.append(self.last_qa)
        self.claims.append(len(article.claims))
        return article


def read_ndcg(service: ArticleService, labels: LabelledSet) -> float:
    """Mean nDCG@10 of the ranking the article reads from: the fused list, reranked when the
    service reranks (the evaluation's own nDCG is of the fused list only)."""
    s = service.settings
    values = []
    for q in labels.queries:
        reader = MemoryReader(service.c.store)
        subs = service.decomposer.decompose(q.request).sub_queries
        ranking = service.retriever.retrieve(subs, Scope(), reader, fusion=s.article_fusion,
                                             rrf_k=s.article_rrf_k, depth=s.article_per_query_k)
        fused = ranking.segments
        if s.article_rerank:
            queries = [(h.sub_query, h.analysis, h.vector) for h in ranking.per_query]
            fused = service.rerank(q.request, queries, fused, reader, Scope())
        ranked = [sid for sid, _ in fused]
        rel = dict(all_relevant_segments(service, q, reader))
        rel.update(segment_relevance(ranked, q, reader))
        values.append(ndcg_at_k(ranked, rel, K))
    return round(statistics.mean(values), 4) if values else 0.0


def compare_evidence(root: Path, distractors: int, segments: list[int], style: ArticleStyle,
                     variants: list[str], labels: LabelledSet, console: Console) -> dict:
    """Each variant × article_max_segments on a fresh copy of the built store."""
    built = root / f"v{VERSION}-d{distractors}" / "data"
    out: dict = {}
    for n in segments:
        for name in variants:
            with tempfile.TemporaryDirectory(prefix="bench-article-") as tmp:
                data = Path(tmp) / "data"
                shutil.copytree(built, data)
                components = Components(load_settings(data_dir=data))
                try:
                    settings = components.settings.replace(article_max_segments=n, **{**BASELINE, **VARIANTS[name]})
                    service = _Recording(components, settings=settings)
                    ndcg = read_ndcg(service, labels)  # before Ask can re-transcribe anything
                    t = time.perf_counter()
                    report = evaluate(service, labels, style=style)
                    seconds = time.perf_counter() - t
                finally:
                    components.close()
            means = report.means()
            qa = [r for r in service.qa_reports if r is not None]
            row = {
                "fact_recall": means["fact_recall"],
                "citation_precision": means["citation_precision"],
                "citation_validity": means["citation_validity"],
                "stem_missing": means["stem_missing"],
                "ndcg_read": ndcg,
                "claims_mean": round(statistics.mean(service.claims), 1) if service.claims else 0.0,
                "article_s_mean": round(statistics.mean(q.seconds for q in report.queries), 2),
                "asks_mean": round(statistics.mean(r.asked for r in qa), 1) if qa else 0.0,
                "qa_claims_mean": round(statistics.mean(r.answered for r in qa), 1) if qa else 0.0,
                "facts_missed": {q.id: q.facts_missed for q in report.queries if q.facts_missed},
            }
            out.setdefault(str(n), {})[name] = row
            console.print(f"segments {n} {name}: {row} ({seconds:.0f} s)")
    return out



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--distractors", type=int, default=4, help=f"extra streams, 0..{len(DISTRACTORS)}")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--segments", default="4,8,12,24", help="article_max_segments values for GINGER")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache/episodic/bench-article")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--compare-evidence", action="store_true",
                    help="only compare baseline, rerank and QA evidence (see above)")
    ap.add_argument("--compare-segments", default="12,4", help="article_max_segments values compared")
    ap.add_argument("--compare-style", default="ginger", choices=[s.value for s in ArticleStyle])
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"a subset of {', '.join(VARIANTS)}")
    args = ap.parse_args()
    console = Console(stderr=True)
    distractors = max(0, min(args.distractors, len(DISTRACTORS)))
    components, labels = build(args.cache_dir, distractors, console)
    if args.compare_evidence:
        components.close()  # every variant opens its own copy of the store
        variants = [v.strip() for v in args.variants.split(",") if v.strip()]
        unknown = [v for v in variants if v not in VARIANTS]
        if unknown:
            ap.error(f"unknown variants {unknown}: use {', '.join(VARIANTS)}")
        segments = [int(x) for x in args.compare_segments.split(",") if x.strip()]
        result = compare_evidence(args.cache_dir, distractors, segments, ArticleStyle(args.compare_style),
                                  variants, labels, console)
        if args.json:
            print(json.dumps(result, indent=2))
            return
        t = Table(title=f"Evidence variants ({args.compare_style}; {len(labels.queries)} labelled requests)")
        cols = ["fact_recall", "citation_precision", "citation_validity", "stem_missing", "ndcg_read", "claims_mean",
                "qa_claims_mean", "asks_mean", "article_s_mean"]
        for col in ["segments", "variant", *cols]:
            t.add_column(col.replace("_", " "))
        for n, rows in result.items():
            for name, row in rows.items():
                t.add_row(n, name, *[f"{row[c]:.3f}" if isinstance(row[c], float) else str(row[c]) for c in cols])
        Console().print(t)
        return
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
