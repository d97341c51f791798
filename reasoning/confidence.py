"""The last step of every answer's confidence: raw evidence-based confidence → calibrated
probability of being right.

The raw confidence (:mod:`reasoning.answer`) is the smallest of several evidence caps; the
caps themselves are kept as *signals* in the answer's trace (``Trace.notes["signals"]``) so
that a calibrator can be fitted on a labelled evaluation set (answers given at ≥ 0.75 should
be right at least 90 % of the time). Until one is fitted the mapping is the identity; the
fitted one replaces :func:`calibrate`'s body and keeps its signature.

Signals (all in [0, 1] unless said otherwise; absent ones simply were not computed):

* ``similarity`` – cosine support of the evidence the answer rests on (ramped);
* ``coverage`` – share of the question's content words found there (full while ≤ ⅓ missing);
* ``key_terms`` – the question's names and rare words found anywhere in the evidence
  (0 when a name is missing: "Oxford" asked of a memory that never mentions it);
* ``grounding`` – share of the answer's new words found in the evidence;
* ``kind`` – whether the answer holds what the question asks for (a number, a time, a colour);
* ``modality`` – 1 when the evidence is of the kind asked about (speech for "what was said");
* ``span`` – 1 when a short focused phrase was extracted, lower for a whole quote;
* ``support``, ``margin`` – multiple choice: the chosen option's support and its lead;
* ``anchor`` – order questions: how well the anchor moment was found;
* ``route`` – a label, not a number: which answerer produced it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

FEATURES = ("logit_raw", "choice", "margin", "key_terms", "structured")
_STRUCTURED = {"order", "count", "stream", "which_stream"}

# Fitted on the generated *dev* questions (69 answers given, commit 1a9f136) by
#   .venv/bin/python benchmarks/fit_calibration.py DEV.json     (logistic regression, L2 1.0)
# dev ECE 0.151 → 0.096 in-sample, 0.101 under 5-fold cross-validation. ``None`` = not fitted.
COEFFICIENTS: dict[str, float] | None = {
    "logit_raw": 0.6319,
    "choice": 0.6062,
    "margin": 0.2593,
    "key_terms": -0.3694,
    "structured": -0.7409,
    "bias": 0.4378,
}


def _num(signals: Mapping[str, object], key: str, default: float = 0.0) -> float:
    value = signals.get(key, default)
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    return v if math.isfinite(v) else default


def features(raw: float, signals: Mapping[str, object] | None) -> list[float]:
    """The calibrator's inputs, in FEATURES order: the raw confidence on the logit scale
    (clipped to 0.02–0.98), whether it is a multiple-choice answer and the chosen option's
    lead over the runner-up, whether the question's names were all found, and whether rules
    (order, count, stream) rather than retrieval text answered."""
    sig = signals or {}
    r = min(0.98, max(0.02, float(raw)))
    choice = 1.0 if _num(sig, "options") > 0 or sig.get("source") == "choice" else 0.0
    return [
        math.log(r / (1 - r)),
        choice,
        _num(sig, "margin") if choice else 0.0,
        _num(sig, "key_terms", 1.0),
        1.0 if str(sig.get("source", "")) in _STRUCTURED else 0.0,
    ]


def calibrate(raw: float, signals: Mapping[str, object] | None = None) -> float:
    """The calibrated probability that the answer is right (the raw confidence until a
    calibrator is fitted). A refusal's 0 stays 0: it claims nothing."""
    if not isinstance(raw, (int, float)) or not math.isfinite(raw):
        return 0.0
    raw = min(1.0, max(0.0, float(raw)))
    if COEFFICIENTS is None or raw <= 0.0:
        return raw
    x = features(raw, signals)
    z = COEFFICIENTS.get("bias", 0.0) + sum(COEFFICIENTS.get(n, 0.0) * v for n, v in zip(FEATURES, x, strict=True))
    return round(1.0 / (1.0 + math.exp(-z)), 4)
