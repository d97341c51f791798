"""Do an article's citations hold up? Validity, precision and recall of its ``[n]`` markers.

An article (``core.article.Article``) is a list of sentences, each citing markers
``n``, and a list of ``Citation`` records that resolve a marker to a stored segment. Three
checks, each returned as a ``CitationScore(value, hits, total)`` so a mean over articles can be
weighted by ``total`` and an empty article is visible as ``total == 0``:

- **validity**: share of citations whose segment exists in the memory (``exists(segment_id)``).
  A citation to a segment that is gone, or was never stored, cannot be checked by a reader.
  When sentences are given, every marker they use without a ``Citation`` record (a dangling
  ``[n]``) counts as one more invalid citation.
- **precision**: share of (sentence, cited marker) pairs where the cited moment supports the
  sentence (``supports(sentence_text, citation)``, e.g. an NLI judge); a marker cited twice in
  one sentence is one pair, and a dangling marker is an unsupported pair. Existence is the
  judge's business: ``supports`` sees the whole ``Citation`` and may check it.
- **recall** (ALCE-style): share of sentences with at least one supporting citation; a sentence
  without citations is unsupported.

With nothing to check (``total == 0``) the value is 1.0: no citation was wrong. That keeps a
mean over articles from being dragged down by an empty one; ``total`` tells the two apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from episodic.core.article import Citation, Sentence


@dataclass(frozen=True)
class CitationScore:
    """A share and its parts: ``value == hits / total``, or 1.0 when ``total == 0``."""

    value: float
    hits: int  # valid citations (validity), supported pairs (precision) or sentences (recall)
    total: int


def _score(hits: int, total: int) -> CitationScore:
    """The score for ``hits`` out of ``total``; vacuously perfect when there is nothing."""
    return CitationScore(value=hits / total if total else 1.0, hits=hits, total=total)


def _by_n(citations: Mapping[int, Citation] | Iterable[Citation]) -> dict[int, Citation]:
    """Citations keyed by marker; from a list, the first record of each ``n`` wins."""
    if isinstance(citations, Mapping):
        return dict(citations)
    out: dict[int, Citation] = {}
    for c in citations:
        out.setdefault(c.n, c)
    return out


def _markers(sentence: Sentence) -> list[int]:
    """The distinct markers of a sentence, in order."""
    return list(dict.fromkeys(sentence.citations))


def citation_validity(
    citations: Iterable[Citation],
    exists: Callable[[str], bool],
    sentences: Iterable[Sentence] | None = None,
) -> CitationScore:
    """Share of citations whose segment exists; dangling markers of ``sentences`` count invalid."""
    cites = list(citations)
    hits = sum(1 for c in cites if exists(c.segment_id))
    total = len(cites)
    if sentences is not None:
        known = {c.n for c in cites}
        dangling = {n for s in sentences for n in s.citations if n not in known}
        total += len(dangling)
    return _score(hits, total)


def citation_precision(
    sentences: Iterable[Sentence],
    citations_by_n: Mapping[int, Citation] | Iterable[Citation],
    supports: Callable[[str, Citation], bool],
) -> CitationScore:
    """Share of (sentence, cited marker) pairs whose citation supports the sentence."""
    by_n = _by_n(citations_by_n)
    hits = total = 0
    for s in sentences:
        for n in _markers(s):
            total += 1
            c = by_n.get(n)
            if c is not None and supports(s.text, c):
                hits += 1
    return _score(hits, total)


def citation_recall(
    sentences: Iterable[Sentence],
    citations_by_n: Mapping[int, Citation] | Iterable[Citation],
    supports: Callable[[str, Citation], bool],
) -> CitationScore:
    """Share of sentences with at least one citation that supports them."""
    by_n = _by_n(citations_by_n)
    hits = total = 0
    for s in sentences:
        total += 1
        cited = (by_n.get(n) for n in _markers(s))
        if any(c is not None and supports(s.text, c) for c in cited):
            hits += 1
    return _score(hits, total)
