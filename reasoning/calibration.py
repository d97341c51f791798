"""Calibration (MARQUIS §4.4): how likely is it that a source supports a piece of text?

MARQUIS scores every extracted claim against its source video with a trained uncertain-
inference model (CLUE) and drops claims under 0.5. No entailment model ships offline here,
so :class:`EvidenceSupport` estimates the support probability from what the memory holds
as text (transcript sentences, on-screen text, key-frame descriptions), with the same
embedder the rest of the system uses:

    z = A·(½·cos + ½·coverage) − B − N·[a number of the text is missing from the source]
          − G·[the text negates and the source does not, or the reverse]
    support = σ(z)

* ``cos`` – the best cosine between the text and one source piece (or all of them joined);
* ``coverage`` – the share of the text's content words (stems; number words as digits)
  found in the source;
* a number the source does not contain ("twelve apples" against "three apples") and a flipped
  negation are the two ways a near-copy goes wrong, so each costs a fixed penalty.

With A = 7, B = 3.8: a verbatim note scores ≈ 0.96; a faithful paraphrase (cos ≈ 0.7, all
content words present) ≈ 0.9; a claim about something else (cos ≈ 0.15, coverage ≈ 0.1)
≈ 0.06; the 0.5 line sits at ½·cos + ½·coverage ≈ 0.54. The constants were set by hand on
the project's generated recordings, not learned; they are module constants so a learned
calibrator (or an entailment model behind an OpenAI-compatible endpoint) can replace this
class behind the :class:`SupportScorer` interface.

It is used twice: on the claims before writing (a summary written by a small model may say
more than the segment does), and on every sentence a language model writes, against the
claims it cites (a sentence its citations do not support is dropped).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from episodic.retrieval.query_analysis import content_terms, term_set, tokens

SCALE = 7.0  # A
OFFSET = 3.8  # B
NUMBER_PENALTY = 2.5  # N
NEGATION_PENALTY = 2.0  # G
_NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"})


class SupportScorer(Protocol):
    def support(self, texts: Sequence[str], sources: Sequence[Sequence[str]]) -> list[float]:
        """For each text, the probability that its sources (a list of texts) support it."""
        ...


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def _negates(words: Sequence[str]) -> bool:
    return any(w in _NEGATIONS or w.endswith("n't") for w in words)


class EvidenceSupport:
    """Support from embedding similarity and word coverage (see the module docstring)."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray]) -> None:
        self._embed = embed

    def features(self, text: str, source: Sequence[str]) -> dict[str, float]:
        """The inputs of the score, for explanation and tests."""
        pieces = [p for p in source if p and p.strip()]
        if not text.strip() or not pieces:
            return {"cos": 0.0, "coverage": 0.0, "missing_number": 0.0, "negation_flip": 0.0}
        candidates = pieces + ([" ".join(pieces)] if len(pieces) > 1 else [])
        vecs = np.asarray(self._embed([text, *candidates]), dtype=np.float32)
        sims = vecs[1:] @ vecs[0]
        cos = float(np.max(sims))
        closest = pieces[int(np.argmax(sims[: len(pieces)]))]  # negation is judged against it
        haystack: set[str] = set()
        src_words: list[str] = []
        for p in pieces:
            haystack |= term_set(p)
            src_words += tokens(p)
        terms = content_terms(text)
        coverage = sum(1 for t in terms if t in haystack) / len(terms) if terms else 1.0
        numbers = {t for t in tokens(text) if t[:1].isdigit()}
        missing_number = 1.0 if numbers - set(src_words) else 0.0
        flip = 1.0 if _negates(tokens(text)) != _negates(tokens(closest)) else 0.0
        return {
            "cos": max(0.0, min(1.0, cos)) if math.isfinite(cos) else 0.0,
            "coverage": coverage,
            "missing_number": missing_number,
            "negation_flip": flip,
        }

    def score(self, text: str, source: Sequence[str]) -> float:
        f = self.features(text, source)
        if not source or not any(s.strip() for s in source):
            return 0.0
        z = (
            SCALE * (0.5 * f["cos"] + 0.5 * f["coverage"])
            - OFFSET
            - NUMBER_PENALTY * f["missing_number"]
            - NEGATION_PENALTY * f["negation_flip"]
        )
        return round(_sigmoid(z), 4)

    def support(self, texts: Sequence[str], sources: Sequence[Sequence[str]]) -> list[float]:
        return [self.score(t, s) for t, s in zip(texts, sources, strict=True)]
