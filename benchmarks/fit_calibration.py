"""Fit the answer-confidence calibrator on a *dev* QA evaluation (never on held-out).

Reads the JSON that ``benchmarks/bench_qa.py --split dev --json`` (or ``episodic evaluate --qa
FILE --json``) prints, whose per-item records carry each answer's raw confidence and the
signals behind it, fits a small L2-regularised logistic regression

    p(right) = σ(w · features(raw, signals) + b)          (features: reasoning/confidence.py)

and prints the coefficients to paste into ``reasoning/confidence.py`` (``COEFFICIENTS``), with
the reliability table and expected calibration error before and after, in-sample and under
5-fold cross-validation (the honest figure for a set this small). Abstentions are not claims and
are left out, as the evaluation does.

    .venv/bin/python benchmarks/fit_calibration.py /tmp/qa-dev.json [--l2 1.0]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic.qa_evaluation import CONFIDENT, reliability  # noqa: E402
from episodic.reasoning.confidence import FEATURES, features  # noqa: E402


def _design(items: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows, y, raw = [], [], []
    for it in items:
        sig = dict(it.get("signals") or {})
        r = float(sig.get("raw", it["confidence"]))
        rows.append(features(r, sig))
        y.append(1.0 if it["correct"] else 0.0)
        raw.append(r)
    return np.asarray(rows, np.float64), np.asarray(y), np.asarray(raw)


def fit(x: np.ndarray, y: np.ndarray, l2: float, steps: int = 50) -> np.ndarray:
    """Newton's method on the penalised log-likelihood; the bias (last) is not penalised."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) + reg * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(reg) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(np.hstack([x, np.ones((len(x), 1))]) @ w)))


def _report(name: str, conf: np.ndarray, y: np.ndarray) -> None:
    bins, ece = reliability(list(conf), list(y.astype(bool)))
    confident = conf >= CONFIDENT
    acc = f"{y[confident].mean():.2f} of {int(confident.sum())}" if confident.any() else "none"
    print(f"{name:28s} ECE {ece if ece is None else round(ece, 3)}; right at ≥ {CONFIDENT}: {acc}")
    for b in bins:
        print(f"    {b.lo:.1f}-{b.hi:.1f}: n={b.n:3d} accuracy={b.accuracy} mean confidence={b.mean_confidence}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report", type=Path, help="JSON from bench_qa.py --json (dev split)")
    ap.add_argument("--l2", type=float, default=1.0)
    args = ap.parse_args()
    doc = json.loads(args.report.read_text())
    reports = doc if isinstance(doc, list) else doc.get("reports", [doc])
    items = [it for rep in reports for it in rep["items"] if not it["abstained"]]
    if any(it.get("split") == "heldout" for it in items):
        sys.exit("refusing to fit on held-out items: fit on the dev split only")
    x, y, raw = _design(items)
    w = fit(x, y, args.l2)
    _report("raw (identity)", raw, y)
    _report("fitted, in-sample", predict(w, x), y)
    folds = np.arange(len(y)) % 5
    cv = np.zeros(len(y))
    for k in range(5):
        tr, te = folds != k, folds == k
        cv[te] = predict(fit(x[tr], y[tr], args.l2), x[te])
    _report("fitted, 5-fold cross-val", cv, y)
    print("\nCOEFFICIENTS = {")
    for name, value in zip([*FEATURES, "bias"], w, strict=True):
        print(f'    "{name}": {value:.4f},')
    print("}")


if __name__ == "__main__":
    main()
