"""Query decomposition (MARQUIS §3): a long, many-sided request → short atomic sub-queries.

A request such as "what happened on the north bridge this morning, which trains were
announced and what did people cook, from all cameras" is many information needs in one; one
embedding of it lands between them all. Decomposed into search phrases ("north bridge this
morning", "trains announced", "people cook"), each need is retrieved on its own and the
ranked lists are fused (:mod:`retrieval.fusion`). As in MARQUIS the original request is
always retrieved too.

Two decomposers behind one call:

* **rules** (the default with the local model): sentences and clauses are split at
  punctuation and coordinating words; report-writing instructions ("write a report about",
  "from all cameras") are stripped; each clause becomes a search phrase, and long clauses
  also give their content-word phrases. Deterministic, instant, and never invents facets.
* **llm** (chosen by ``article_decomposer = "auto"`` when a capable model is configured,
  ``llm = "openai"``): the model is asked for a JSON list of sub-queries. Its reply is
  validated (a list of 1–200-character strings); a reply that is not valid JSON is retried
  once, then the rules take over, so a bad model never fails a request. A 135M local model
  does not decompose reliably (it explains the task back instead), hence the rule default.

Sub-query count: the paper's long requests gave 10–25 (mean 22.6); here a request gives as
many as it has distinct facets, capped at ``article_max_sub_queries``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from episodic.core.errors import EpisodicError
from episodic.core.llm import ChatMessage, LanguageModel, json_in_reply
from episodic.retrieval.query_analysis import CUE_WORDS, STOPWORDS, stem, tokens

log = logging.getLogger(__name__)

MAX_SUB_QUERY_CHARS = 200


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The decomposition prompt (MARQUIS, seed 000), for a capable model only; its reply is validated.
DECOMPOSE_SYSTEM = (
    "You turn a request for a report about recorded video into short search phrases. Each "
    "phrase asks for one thing that could be seen, heard or read in the recordings, in a few "
    "words, without instructions about the report itself. Reply with a JSON list of strings "
    "and nothing else."
)


def decompose_user(request: str, limit: int) -> str:
    return (
        f"Request: {request}\n\n"
        f"Give between 1 and {limit} search phrases, fewer for a simple request. JSON list:"
    )


# Clauses with at least this many content-word runs also yield the runs as phrases.
MIN_RUNS_FOR_PHRASES = 2
# Words that end a content-word run besides function words (places and times are facets'
# boundaries: "bakery near the market" → "bakery", "market"); times are never a facet alone.
_RUN_BREAKS = _words(
    "near outside inside behind beside between around across along next towards toward through "
    "during while before after since until via against among beyond within without"
)
_TIME_WORDS = _words(
    "morning afternoon evening night today yesterday tonight noon midnight week day hour minute "
    "minutes hours early late earlier later"
)
DUPLICATE_JACCARD = 0.8  # sub-queries sharing this much of their content words are one

# Report-writing instructions and coverage phrases: they say how to write, not what to find.
_INSTRUCTION = re.compile(
    r"""^\s*(?:please\s+|kindly\s+|can\s+you\s+|could\s+you\s+|i\s+(?:would|'d)\s+like\s+(?:you\s+)?(?:to\s+)?|
        i\s+want\s+(?:you\s+)?(?:to\s+)?|i\s+need\s+(?:you\s+)?(?:to\s+)?)*
        (?:(?:write|give|create|produce|compose|prepare|draft|make|generate|provide)\s+(?:me\s+|us\s+)?
           (?:an?\s+|the\s+|some\s+)?(?:short\s+|brief\s+|full\s+|detailed\s+|complete\s+)?
           (?:report|article|summary|overview|account|write-?up|briefing|digest|story|timeline)s?
           (?:\s+(?:about|on|of|covering|describing|for|that\s+covers))?
         |(?:tell\s+me|explain|describe|summari[sz]e|report\s+on|find\s+out|i\s+want\s+to\s+know|
            i(?:'d|\s+would)\s+like\s+to\s+know|show\s+me)(?:\s+(?:about|on))?
        )\s*""",
    re.I | re.X,
)
_COVERAGE = re.compile(
    r"""[,;]?\s*\b(?:from|across|on|in|using|over)\s+(?:all|every|each|the|both|any)\s+
        (?:of\s+the\s+)?(?:available\s+)?(?:cameras?|streams?|videos?|recordings?|feeds?|sources?|footage)\b""",
    re.I | re.X,
)
_PERSONA = re.compile(r"^\s*(?:i\s+am|i'm|as)\s+(?:an?|the)\s+[^,.;]*?(?:[,.;]|\band\b)\s*", re.I)
_SENTENCES = re.compile(r"(?<=[.?!;])\s+|\n+")
# Coordination that separates information needs ("…, which trains were announced and what
# did people cook"): commas, "and"/"as well as"/"also" before a new question word or clause.
_CLAUSES = re.compile(
    r"\s*(?:,|:|\bas\s+well\s+as\b|\band\s+also\b|\balso\b|\bincluding\b|"
    r"\band\s+(?=(?:what|which|who|whom|whose|where|when|why|how|whether|if|did|does|do|is|are|was|were)\b))\s*",
    re.I,
)
_TRIM = " \t,.;:!?-–—\"'()[]"


@dataclass(frozen=True)
class Decomposition:
    """The sub-queries of one request (the request itself first) and how they were made."""

    sub_queries: list[str]
    method: str  # "rules" | "llm" | "rules (llm reply unusable)"


def _content_key(text: str) -> frozenset[str]:
    """What a sub-query asks for, for de-duplication: its words without function words (cue
    words such as "screen" or "said" stay: "signs shown on screen" is a facet)."""
    return frozenset(stem(t) for t in tokens(text) if t not in STOPWORDS and (len(t) > 1 or t.isdigit()))


def _is_duplicate(key: frozenset[str], seen: list[frozenset[str]]) -> bool:
    for other in seen:
        if not key and not other:
            return True
        union = key | other
        if union and len(key & other) / len(union) >= DUPLICATE_JACCARD:
            return True
    return False


_LEADING = re.compile(r"^(?:(?:and|or|but|also|then|plus|any|all|some|the)\s+)+", re.I)


def _clean(text: str) -> str:
    """One line, no surrounding punctuation, no leading "and any …"."""
    text = " ".join(text.split()).strip(_TRIM)
    text = _LEADING.sub("", text) or text
    return text[:MAX_SUB_QUERY_CHARS].strip(_TRIM)


def strip_instructions(text: str) -> str:
    """The information need of one sentence, without persona, writing instructions or
    "from all cameras"."""
    text = _PERSONA.sub("", text, count=1)
    text = _COVERAGE.sub("", text)
    prev = None
    while prev != text:  # "Please write a report about …", "Can you tell me about …"
        prev = text
        text = _INSTRUCTION.sub("", text, count=1)
    return _clean(text)


def _phrases(clause: str) -> list[str]:
    """Content-word runs of a clause ("north bridge", "old market square"): finer facets.
    Modality cue words ("said", "screen") and time words alone are not facets."""
    runs: list[list[str]] = [[]]
    for tok in tokens(clause):
        if tok in STOPWORDS or tok in _RUN_BREAKS or tok in CUE_WORDS or (len(tok) < 2 and not tok.isdigit()):
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append(tok)
    runs = [r for r in runs if r and not all(t in _TIME_WORDS for t in r)]
    return [" ".join(r) for r in runs] if len(runs) >= MIN_RUNS_FOR_PHRASES else []


def rule_sub_queries(request: str, limit: int) -> list[str]:
    """Deterministic decomposition: the request, its clauses, then phrases of long clauses."""
    request = _clean(request)
    out: list[str] = []
    keys: list[frozenset[str]] = []

    def add(text: str) -> None:
        text = _clean(text)
        key = _content_key(text)
        if not text or not key or len(out) >= limit or _is_duplicate(key, keys):
            return
        if out and key <= {stem(t) for t in _TIME_WORDS}:  # "the morning" is no facet
            return
        out.append(text)
        keys.append(key)

    need = " ".join(strip_instructions(s) for s in _SENTENCES.split(request) if s.strip())
    add(need or request)
    clauses: list[str] = []
    for sentence in _SENTENCES.split(request):
        sentence = strip_instructions(sentence)
        for clause in _CLAUSES.split(sentence):
            clause = strip_instructions(clause)
            if clause:
                clauses.append(clause)
    for clause in clauses:
        add(clause)
    for clause in clauses:
        for phrase in _phrases(clause):
            add(phrase)
    if not out:  # only stop words ("what happened?"): search for the request as written
        out.append(request[:MAX_SUB_QUERY_CHARS])
    return out


def parse_sub_queries(reply: str) -> list[str] | None:
    """The sub-queries in a model reply, or None when it is not a JSON list of strings
    (a ```json fence and prose around the list are tolerated)."""
    items = json_in_reply(reply, list)
    if items is None:
        return None
    out = [_clean(x) for x in items if isinstance(x, str)]
    out = [x for x in out if x]
    return out or None


class QueryDecomposer:
    """Sub-queries for a request, from the model when it is capable, else from the rules."""

    def __init__(self, llm: Callable[[], LanguageModel], settings) -> None:
        self._llm = llm
        self.settings = settings

    @property
    def uses_llm(self) -> bool:
        mode = self.settings.article_decomposer
        return mode == "llm" or (mode == "auto" and self.settings.llm == "openai")

    def decompose(self, request: str, limit: int | None = None) -> Decomposition:
        limit = max(1, int(limit or self.settings.article_max_sub_queries))
        if not self.uses_llm:
            return Decomposition(rule_sub_queries(request, limit), "rules")
        for attempt in range(2):
            try:
                reply = self._llm().generate(
                    [ChatMessage("system", DECOMPOSE_SYSTEM), ChatMessage("user", decompose_user(request, limit))],
                    max_tokens=40 * limit,
                    temperature=0.0,
                    seed=attempt,
                )
            except EpisodicError as exc:
                log.warning("query decomposition: the model failed (%s); using the rules", exc)
                break
            parsed = parse_sub_queries(reply)
            if parsed:
                return Decomposition(self._merge(request, parsed, limit), "llm")
            log.warning("query decomposition: reply %d was not a JSON list of strings", attempt + 1)
        return Decomposition(rule_sub_queries(request, limit), "rules (llm reply unusable)")

    @staticmethod
    def _merge(request: str, parsed: list[str], limit: int) -> list[str]:
        """The request's own need first (MARQUIS retrieves the original query too), then the
        model's sub-queries without near-duplicates."""
        out: list[str] = []
        keys: list[frozenset[str]] = []
        for text in [rule_sub_queries(request, 1)[0], *parsed]:
            key = _content_key(text)
            if key and not _is_duplicate(key, keys) and len(out) < limit:
                out.append(text)
                keys.append(key)
        return out
