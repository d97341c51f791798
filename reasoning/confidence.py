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


def calibrate(raw: float, signals: Mapping[str, object] | None = None) -> float:
    """The calibrated confidence for a raw confidence and its signals (identity for now)."""
    del signals  # a fitted calibrator uses them
    if not isinstance(raw, (int, float)) or not math.isfinite(raw):
        return 0.0
    return min(1.0, max(0.0, float(raw)))
