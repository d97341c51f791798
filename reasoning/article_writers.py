"""Article writers (MARQUIS §5): calibrated claims → a cited article.

Three styles, as in the paper:

* **BULLET** – the claims themselves, one cited line each, most relevant first: the most
  faithful output and the least readable.
* **CAG** – one synthesis pass over all claims: organised by stream, in time order,
  repeats removed, every sentence cited.
* **GINGER** – claims are clustered into facets (average-linkage clustering of their
  embeddings, cosine ≥ ``article_cluster_cos``), the clusters ranked by relevance to the
  request, the top ``article_top_clusters`` summarised (up to ``article_claims_per_cluster``
  claims each, chosen for relevance and variety), and a fluency pass joins what belongs
  together. Each cluster is headed by the sub-query it answers best.

How the prose is written depends on the model. With a capable one (``llm = "openai"``, or
``article_writer_llm = "always"``) CAG and GINGER's summaries and fluency pass are model
calls; every sentence that comes back must carry ``[n]`` markers of the evidence it was
given and be supported by the claims it cites (:mod:`reasoning.calibration`), or it is
dropped; a reply that keeps nothing falls back to the extractive text. With the local
135M model (which invents facts and drops citations when asked to write prose), the writers
are extractive: sentences are built from the claims with fixed phrasings ("Someone on
kitchen says: …"), so every sentence cites exactly the claims it quotes.

Writers return sections whose sentences cite claims by their index in the claim list; the
caller turns those into numbered citations.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from episodic.core.article import ArticleStyle, Claim, Section, Sentence
from episodic.core.errors import EpisodicError
from episodic.core.llm import ChatMessage, LanguageModel
from episodic.reasoning.calibration import SupportScorer
from episodic.reasoning.prompts import ARTICLE_SYSTEM, article_user, fluency_user
from episodic.retrieval.query_analysis import content_terms

log = logging.getLogger(__name__)

DUPLICATE_COS = 0.92  # claims this similar say the same thing: one sentence cites both
MMR_LAMBDA = 0.7  # cluster summaries: relevance vs. not repeating what is already chosen
HEADING_MIN_COS = 0.3
# Which of several claims saying the same thing is quoted: what was said or written before
# a model's summary of it, before a key-frame description.
MODALITY_RANK = {"speech": 0, "ocr": 1, "summary": 2, "visual": 3}  # a sub-query this close to a cluster names it; else its words do
_MARKERS = re.compile(r"\[(\d{1,3})\]")
_SENTENCES = re.compile(r"(?<=[.!?])\s+(?=\S)")


# -- phrasing a claim --------------------------------------------------------------------
def _quoted(text: str, close: bool = True) -> str:
    """“text” in curly quotes; ``close=False`` drops its final full stop (more follows)."""
    text = " ".join(text.split()).strip().strip('"“”')
    if not close:
        text = text.rstrip(".")
    return f"“{text}”"


# A summary's first word is lower-cased after "On the … stream," when it is one of these.
_LOWER_FIRST = frozenset((
    "a", "an", "the", "someone", "somebody", "there", "it", "this", "that", "people", "by", "in",
    "at", "on", "near", "outside", "inside", "after", "before", "while", "during", "with", "from",
))


def _where(stream_id: str) -> str:
    return f"the {stream_id} stream"


def claim_sentence(c: Claim) -> str:
    """A claim as a sentence of prose that says where it comes from and what kind it is."""
    text = " ".join(c.text.split())
    if c.modality == "speech":
        return f"Someone on {_where(c.stream_id)} says: {_quoted(text)}"
    if c.modality == "ocr":
        return f"The text {_quoted(text)} appears on screen on {_where(c.stream_id)}."
    if c.modality == "visual":
        return f"The picture on {_where(c.stream_id)} shows {text.rstrip('.')}."
    first = text.split(" ", 1)[0]
    body = text[0].lower() + text[1:] if first.lower() in _LOWER_FIRST else text
    return f"On {_where(c.stream_id)}, {body.rstrip('.')}."


def _joined_speech(claims: Sequence[Claim]) -> str:
    """Two things said on one stream in one sentence: "…says: “A”, and later: “B”"."""
    first, *rest = claims
    parts = [f"Someone on {_where(first.stream_id)} says: {_quoted(first.text, close=False)}"]
    parts += [f"and later: {_quoted(c.text, close=False)}" for c in rest]
    return ", ".join(parts)


# -- LLM prose, validated ----------------------------------------------------------------
@dataclass
class ProseCheck:
    kept: list[Sentence]
    dropped: int


def validate_prose(
    reply: str,
    items: Sequence[int],
    claims: Sequence[Claim],
    support: SupportScorer,
    threshold: float,
) -> ProseCheck:
    """Sentences of a model reply that cite evidence they were given and are supported by it.

    ``items[k]`` is the claim index shown to the model as ``[k+1]``. Markers outside that
    range are removed; a sentence left without one, or whose cited claims do not support it
    (calibrated support under ``threshold``), is dropped.
    """
    kept: list[Sentence] = []
    dropped = 0
    texts: list[str] = []
    cites: list[list[int]] = []
    for raw in _SENTENCES.split(" ".join(reply.split())):
        numbers = [int(n) for n in _MARKERS.findall(raw)]
        idx = list(dict.fromkeys(items[n - 1] for n in numbers if 1 <= n <= len(items)))
        text = " ".join(_MARKERS.sub("", raw).split()).replace(" .", ".").replace(" ,", ",").strip()
        if not idx or len(content_terms(text)) == 0:
            dropped += 1 if text else 0
            continue
        texts.append(text)
        cites.append(idx)
    if texts:
        scores = support.support(texts, [[claims[i].text for i in c] for c in cites])
        for text, c, p in zip(texts, cites, scores, strict=True):
            if p >= threshold:
                kept.append(Sentence(text=text, citations=c))
            else:
                dropped += 1
    return ProseCheck(kept, dropped)


class Prose:
    """Model-written prose with its checks, or None where the model is not to be used."""

    def __init__(
        self,
        llm: Callable[[], LanguageModel] | None,
        support: SupportScorer,
        settings,
    ) -> None:
        self._llm = llm
        self.support = support
        self.settings = settings
        self.rejected = 0  # sentences dropped by validation, over the article

    def write(self, request: str, idx: Sequence[int], claims: Sequence[Claim], sentences: str) -> list[Sentence] | None:
        if self._llm is None:
            return None
        items = [claim_sentence(claims[i]) for i in idx]
        try:
            reply = self._llm().generate(
                [ChatMessage("system", ARTICLE_SYSTEM), ChatMessage("user", article_user(request, items, sentences))],
                max_tokens=self.settings.article_max_tokens,
                temperature=0.0,
                seed=0,
            )
        except EpisodicError as exc:
            log.warning("article: the model failed (%s); writing from the claims", exc)
            return None
        check = validate_prose(reply, list(idx), claims, self.support, self.settings.article_support_min)
        self.rejected += check.dropped
        return check.kept or None

    def fluent(self, sentences: list[Sentence], claims: Sequence[Claim]) -> list[Sentence]:
        """GINGER's fluency pass: the model may rephrase; each sentence must keep citing what
        supports it. Anything less and the input is kept as it was."""
        if self._llm is None or not sentences:
            return sentences
        order: list[int] = []
        for s in sentences:
            order += [i for i in s.citations if i not in order]
        pos = {ci: k + 1 for k, ci in enumerate(order)}
        text = " ".join(f"{s.text.rstrip('.')} " + "".join(f"[{pos[i]}]" for i in s.citations) + "." for s in sentences)
        try:
            reply = self._llm().generate(
                [ChatMessage("system", ARTICLE_SYSTEM), ChatMessage("user", fluency_user(text))],
                max_tokens=self.settings.article_max_tokens,
                temperature=0.0,
                seed=0,
            )
        except EpisodicError as exc:
            log.warning("article fluency pass: the model failed (%s); keeping the summaries", exc)
            return sentences
        check = validate_prose(reply, order, claims, self.support, self.settings.article_support_min)
        cited_before = {i for s in sentences for i in s.citations}
        cited_after = {i for s in check.kept for i in s.citations}
        if check.dropped or cited_after != cited_before:
            self.rejected += check.dropped
            return sentences
        return check.kept


# -- the three writers ---------------------------------------------------------------------
class ArticleWriter:
    def __init__(self, embed: Callable[[list[str]], np.ndarray], prose: Prose, settings) -> None:
        self.embed = embed
        self.prose = prose
        self.settings = settings

    def write(self, style: ArticleStyle, request: str, claims: list[Claim], sub_queries: Sequence[str]) -> list[Section]:
        if not claims:
            return []
        if style is ArticleStyle.BULLET:
            return self.bullet(claims)
        if style is ArticleStyle.CAG:
            return self.cag(request, claims)
        return self.ginger(request, claims, sub_queries)

    def _vectors(self, claims: Sequence[Claim]) -> np.ndarray:
        return np.asarray(self.embed([c.text for c in claims]), dtype=np.float32)

    def bullet(self, claims: list[Claim]) -> list[Section]:
        """One cited line per claim, most relevant first."""
        return [Section("", [Sentence(claim_sentence(c), [i]) for i, c in enumerate(claims)])]

    def _narrate(self, idx: Sequence[int], claims: Sequence[Claim], vecs: np.ndarray) -> list[Sentence]:
        """Extractive prose over some claims: stream by stream in time order, repeats cited
        together, consecutive speech of one stream joined into one sentence (two at most)."""
        order = sorted(idx, key=lambda i: (claims[i].stream_id, claims[i].t_start))
        groups: list[list[int]] = []
        for i in order:
            dup = next((g for g in groups if float(vecs[g[0]] @ vecs[i]) >= DUPLICATE_COS), None)
            if dup is not None:
                dup.append(i)
            else:
                groups.append([i])
        for g in groups:  # say it in the words of the most direct source
            g.sort(key=lambda i: (MODALITY_RANK.get(claims[i].modality, 9), claims[i].t_start))
        out: list[Sentence] = []
        k = 0
        while k < len(groups):
            g = groups[k]
            c = claims[g[0]]
            nxt = groups[k + 1] if k + 1 < len(groups) else None
            if (
                nxt is not None
                and c.modality == "speech"
                and claims[nxt[0]].modality == "speech"
                and claims[nxt[0]].stream_id == c.stream_id
            ):
                text = _joined_speech([c, claims[nxt[0]]])
                out.append(Sentence(text + ".", sorted(set(g + nxt), key=lambda i: claims[i].t_start)))
                k += 2
                continue
            text = claim_sentence(c)
            out.append(Sentence(text if text.endswith((".", "”")) else text + ".", g))
            k += 1
        return out

    def cag(self, request: str, claims: list[Claim]) -> list[Section]:
        """One pass over every claim; the model writes it when it may, else the narration,
        one section per stream (streams in order of their most relevant claim)."""
        idx = list(range(len(claims)))
        written = self.prose.write(request, idx, claims, "several")
        if written:
            return [Section("", written)]
        vecs = self._vectors(claims)
        sections: list[Section] = []
        for stream in dict.fromkeys(c.stream_id for c in claims):  # claims are by relevance
            mine = [i for i in idx if claims[i].stream_id == stream]
            sections.append(Section(stream, self._narrate(mine, claims, vecs)))
        return sections

    def clusters(self, claims: Sequence[Claim], vecs: np.ndarray) -> list[list[int]]:
        """Average-linkage clusters of the claims (cosine ≥ article_cluster_cos)."""
        if len(claims) == 1:
            return [[0]]
        from scipy.cluster.hierarchy import fcluster, linkage
        from scipy.spatial.distance import pdist

        dist = np.clip(pdist(vecs, metric="cosine"), 0.0, 2.0)
        labels = fcluster(linkage(dist, method="average"), t=1.0 - self.settings.article_cluster_cos, criterion="distance")
        groups: dict[int, list[int]] = {}
        for i, lab in enumerate(labels):
            groups.setdefault(int(lab), []).append(i)
        return list(groups.values())

    def _pick(self, members: list[int], claims: Sequence[Claim], vecs: np.ndarray) -> list[int]:
        """Up to article_claims_per_cluster claims: relevant, and not repeating each other (MMR)."""
        chosen: list[int] = []
        pool = sorted(members, key=lambda i: -claims[i].relevance)
        while pool and len(chosen) < self.settings.article_claims_per_cluster:
            def gain(i: int) -> float:
                redundancy = max((float(vecs[i] @ vecs[j]) for j in chosen), default=0.0)
                return MMR_LAMBDA * claims[i].relevance - (1 - MMR_LAMBDA) * redundancy

            best = max(pool, key=gain)
            chosen.append(best)
            pool.remove(best)
        return chosen

    def _heading(self, members: list[int], claims: Sequence[Claim], vecs: np.ndarray, sub_queries: Sequence[str]) -> str:
        centroid = vecs[members].mean(axis=0)
        centroid /= float(np.linalg.norm(centroid)) or 1.0
        facets = list(sub_queries[1:]) or list(sub_queries)  # the first is the whole request
        if facets:
            fv = np.asarray(self.embed(facets), dtype=np.float32)
            sims = fv @ centroid
            k = int(np.argmax(sims))
            if float(sims[k]) >= HEADING_MIN_COS:
                return _title(facets[k])
        best = max(members, key=lambda i: claims[i].relevance)
        words = [w for w in re.findall(r"[A-Za-z0-9']+", claims[best].text) if content_terms(w)][:4]
        return _title(" ".join(words)) if words else "Other findings"

    def ginger(self, request: str, claims: list[Claim], sub_queries: Sequence[str]) -> list[Section]:
        vecs = self._vectors(claims)
        clusters = self.clusters(claims, vecs)
        # rank: the best claim's relevance, a little more for facets with more evidence
        def rank(members: list[int]) -> float:
            return max(claims[i].relevance for i in members) * (1.0 + 0.05 * min(len(members) - 1, 4))

        clusters.sort(key=lambda m: (-rank(m), min(m)))
        # clusters that answer the same facet are one section
        facets: dict[str, tuple[str, list[int]]] = {}
        for members in clusters[: self.settings.article_top_clusters]:
            heading = self._heading(members, claims, vecs, sub_queries)
            facets.setdefault(heading.lower(), (heading, []))[1].extend(self._pick(members, claims, vecs))
        sections: list[Section] = []
        for heading, picked in facets.values():
            written = self.prose.write(request, picked, claims, "one to three")
            sections.append(Section(heading, written or self._narrate(picked, claims, vecs)))
        # fluency: the model smooths each section where it may (validated); the extractive
        # narration is already joined per stream
        return [Section(s.heading, self.prose.fluent(s.sentences, claims)) for s in sections]


def _title(text: str) -> str:
    text = " ".join(text.split()).strip(" ?.!")
    return text[:1].upper() + text[1:] if text else text
