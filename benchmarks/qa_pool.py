"""Pool saved ``bench_qa.py --json`` runs into one set of figures, with 95 % intervals.

One generated set holds about 80 questions, so its shares move by several points from one set
to the next; the README's figures are pooled over several held-out sets. This prints them the
way ``episodic evaluate`` prints one set (accuracy by category, the headline figures with their
95 % Wilson intervals, the reliability table), the commit each run was measured at, and, with
``--targets``, where issue 12's targets stand (moment R@1/R@5 are also given by category:
a run of a generated set written before its moment queries named one gets the category the
generator's wording tells): **met** (the whole interval at or above the
target), **missed** (the whole interval below it) or **not told apart** (the target inside the
interval: more questions are needed to say).

Held-out runs are read only as totals: this prints no question and no answer.

    .venv/bin/python benchmarks/qa_pool.py RUN.json [RUN.json ...] [--targets] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic.qa_evaluation import (  # noqa: E402
    CONFIDENT,
    MOMENT_K,
    QAReport,
    pooled_report,
    report_tables,
    wilson_interval,
)
from episodic.qa_generator import moment_category  # noqa: E402

# issue 12's targets, on recordings not tuned on
TARGETS = {
    "multiple choice": 0.8,
    "free form": 0.6,
    f"moment R@{MOMENT_K}": 0.9,
    "unanswerable refused": 0.9,
    f"right at confidence ≥ {CONFIDENT}": 0.9,
}


def load_runs(paths: list[Path]) -> list[tuple[str, str, QAReport]]:
    """(file, commit, report) per saved run; a file holding both splits gives two reports."""
    out = []
    for path in paths:
        try:
            doc = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise SystemExit(f"qa_pool: cannot read {path}: {exc}") from None
        if not isinstance(doc, dict):
            raise SystemExit(f"qa_pool: {path} is not a bench_qa.py --json run")
        commit = str(doc.get("commit", "?"))
        reports = [v for k, v in doc.items() if k != "commit" and isinstance(v, dict) and "items" in v]
        if not reports:
            raise SystemExit(f"qa_pool: {path} holds no QA report (run bench_qa.py with --json)")
        for data in reports:
            try:
                report = QAReport.from_dict(data)
            except ValueError as exc:
                raise SystemExit(f"qa_pool: {path}: {exc}") from None
            for m in report.moments:  # a run of a set written before moments named their category
                m.category = m.category or moment_category(m.query)
            out.append((str(path), commit, report))
    return out


def target_rows(summary: dict) -> list[dict]:
    """Each target with the pooled share, its count, its interval and the verdict."""
    mom = summary["moments"]
    cal = summary["calibration"]
    hits = round((mom.get(f"r_at_{MOMENT_K}") or 0.0) * mom["n"])
    confident = cal[f"answers_at_confidence_ge_{CONFIDENT}"]
    right_confident = round((cal[f"accuracy_at_confidence_ge_{CONFIDENT}"] or 0.0) * confident)
    counts = {
        "multiple choice": (summary["multiple_choice"]["correct"], summary["multiple_choice"]["n"]),
        "free form": (summary["free_form"]["correct"], summary["free_form"]["n"]),
        f"moment R@{MOMENT_K}": (hits, mom["n"]),
        "unanswerable refused": (summary["unanswerable"]["abstained"], summary["unanswerable"]["n"]),
        f"right at confidence ≥ {CONFIDENT}": (right_confident, confident),
    }
    rows = []
    for name, target in TARGETS.items():
        k, n = counts[name]
        ci = wilson_interval(k, n)
        if ci is None:
            verdict = "no questions"
        elif ci[0] >= target:
            verdict = "met"
        elif ci[1] < target:
            verdict = "missed"
        else:
            verdict = "not told apart" + (" (share above)" if k / n >= target else " (share below)")
        rows.append({"figure": name, "target": target, "correct": k, "n": n,
                     "share": round(k / n, 4) if n else None, "interval_95": None if ci is None else list(ci),
                     "verdict": verdict})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", type=Path, nargs="+", help="files written by bench_qa.py --json")
    ap.add_argument("--targets", action="store_true", help="say where issue 12's targets stand")
    ap.add_argument("--json", action="store_true", help="one JSON document instead of tables")
    args = ap.parse_args()
    runs = load_runs(args.runs)
    pooled = pooled_report([r for _, _, r in runs], name=f"{len(runs)} sets pooled")
    summary = pooled.summary()
    if args.json:
        doc = {"runs": [{"file": f, "commit": c, "split": r.split, "items": len(r.items)} for f, c, r in runs],
               "summary": summary}
        if args.targets:
            doc["targets"] = target_rows(summary)
        sys.stdout.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for f, c, r in runs:
        console.print(f"{f}: {r.split}, {len(r.items)} questions, commit {c}")
    for table in report_tables(pooled):
        console.print(table)
    if args.targets:
        t = Table(title="issue 12's targets (95 % Wilson intervals)")
        for col in ("figure", "target", "pooled", "95 % interval", "verdict"):
            t.add_column(col, justify="left" if col in ("figure", "verdict") else "right")
        for row in target_rows(summary):
            ci = row["interval_95"]
            t.add_row(row["figure"], f"{100 * row['target']:.0f} %",
                      "–" if row["share"] is None else f"{100 * row['share']:.1f} % ({row['correct']}/{row['n']})",
                      "–" if ci is None else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f} %", row["verdict"])
        console.print(t)


if __name__ == "__main__":
    main()
