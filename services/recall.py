"""Fuzzy recall: the stream and the moment from a half-remembered description (issue 16).

RACLO (seed 001) answers RVMS-Bench's fuzzy descriptions by **Recall → Search → Verify** over
the web; here the corpus is the memory itself:

1. **Recall** – the description becomes facet queries: a global impression (G), a key moment
   (K), what came before or after it (T) and what was heard (A), each with keywords and
   alternatives (:mod:`retrieval.recall_request`; rules on the embedded default
   (:mod:`retrieval.recall_facets`), a capable model's validated JSON otherwise
   (:mod:`retrieval.recall_model`)).
2. **Search** – candidates from every facet: stream overviews for G
   (:mod:`memory.overview`), moment search for K, T and A (transcripts, on-screen text,
   visual words and the audio observations all live there), fused per stream by reciprocal
   rank.
3. **Verify** – each candidate stream is checked against every facet given: G against its
   overviews, K as its best moment, T as an order constraint around that moment ("after":
   within ``recall_temporal_window_s`` behind it, "before": ahead of it, "start"/"end": the
   recording's first or last part), A as speech or a stored sound of the named kind. A facet
   below ``recall_facet_min`` drops the stream, and the result says which facet failed; when
   no stream holds every facet the closest are offered at half confidence.
4. **Localise** – the key moment's segment (the best K moment that also satisfies T), then to
   the second by looking again at the stored video of that segment (issue 15's look-again
   pathway) when ``recall_look_again`` is on and the configured eyes can see what the key
   moment names: writing on screen with the offline looker, anything with a vision-language
   model (``looker = "openai"``). Off by default: on this 2-core CPU one look took 4–5 s,
   against a recall of a quarter of a second.

A facet's score is relative to the best evidence for it anywhere in scope (1 = the best
match in memory) times how strong that best evidence is, so two streams that both show the
key moment score alike on K and are told apart by the other facets. A result's confidence is
then scaled by how well anything in scope matches the description on an absolute scale, so a
description of something never recorded gets its least-bad match only at a confidence that
says so (or nothing, when no evidence rises above the level of unrelated text).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import numpy as np

from episodic.core import validation
from episodic.core.deadline import Deadline
from episodic.core.errors import EpisodicError
from episodic.core.interfaces import QueryBackends
from episodic.core.query import (
    Moment,
    RecalledStream,
    RecallRequest,
    RecallResult,
    Scope,
)
from episodic.core.records import StreamOverview, normalise
from episodic.memory.overview import compose_overview
from episodic.retrieval.detailed import MemoryReader
from episodic.retrieval.recall_facets import FacetQuery, alternatives_of, keywords_of
from episodic.retrieval.recall_request import ParsedDescription, parse_description
from episodic.services.qa import MemoryQA, about_writing

LOOK_BUDGET_S = 6.0  # looking again at the first result's key moment, at most this long
LOOK_MARGIN_S = 2.0  # seconds looked at on each side of the key moment's segment
LOOK_FRAMES = 128
RRF_K = 60.0  # reciprocal-rank fusion constant (Cormack et al.; MARQUIS fuses the same way)
K_MOMENTS = 3  # key-moment candidates per stream tried against the temporal clue
EDGE_SHARE = 1 / 3  # "at the start/end": this share of the recording (at least EDGE_MIN_S)
EDGE_MIN_S = 10.0
# the cosine of a description to an overview that counts as no / full support (MiniLM)
G_COS_MIN, G_COS_FULL = 0.1, 0.5
# the moment-search score (cosine + the query's words) at which a hit is full evidence
MOMENT_FULL = 0.6
# How strong the best evidence for the description is anywhere in scope, on an absolute scale
# (dev recall set: true overviews score cosine 0.41-0.67 against their impression and other
# streams' at most 0.42; an unrelated description's best moment scores about 0.2-0.27): it
# scales every result's confidence (below WEAK_CONFIDENCE a result says it is a guess), and
# when nothing rises above the unrelated level at all, nothing is offered.
EVIDENCE_MOMENT = (0.2, 0.6)
EVIDENCE_COS = (0.2, 0.5)
WEAK_CONFIDENCE = 0.1
FACET_WEIGHT = {"global": 1.0, "key_moment": 1.5, "temporal": 1.0, "audio": 1.0}
# non-speech sounds a clue may name → the sound kinds memory/sound.py stores
SOUND_KINDS: dict[str, tuple[str, ...]] = {
    "music": ("music", "song", "songs", "singing", "melody", "tune", "band", "piano", "guitar"),
    "engine": ("engine", "motor", "car", "cars", "traffic", "truck", "vehicle", "motorbike", "bus"),
    "applause": ("applause", "clapping", "clap", "claps", "cheering", "cheer", "cheers"),
    "silence": ("silence", "silent", "quiet"),
    "noise": ("noise", "noisy", "loud", "banging", "crash", "drilling"),
}


# What the sound classifier takes each kind for when it errs (its confusions on the sound
# benchmark): a clue about applause heard as "loud noise" is half evidence, not none.
CONFUSED_WITH: dict[str, tuple[str, ...]] = {
    "applause": ("noise",), "engine": ("noise",), "noise": ("engine", "applause"),
    "music": ("speech",), "silence": (),
}
CONFUSED_SCORE = 0.5
ABSENT_SCORE = 0.15  # the words may match, but the named sound was not heard there
PARTIAL_PENALTY = 0.5  # confidence kept by a stream that fails a facet, when none holds all


def _sound_kinds(text: str) -> set[str]:
    words = set(re.findall(r"[a-z]+", text.lower()))
    return {kind for kind, cues in SOUND_KINDS.items() if words & set(cues)}


def _clip01(x: float) -> float:
    return float(min(1.0, max(0.0, x)))


@dataclass
class _Facet:
    """One facet's query, prepared once, and its best hits over the whole scope."""

    query: FacetQuery
    prepared: tuple = ()
    hits: list[Moment] = field(default_factory=list)
    best: float = 0.0  # the best score anywhere in scope (the relative scale's 1)
    parts: list[_Facet] = field(default_factory=list)  # clues of one kind, each checked alone


def _parts(q: FacetQuery) -> list[FacetQuery]:
    """Several clues of one facet ("someone said forty minutes; music at the end") as one
    query each: each must hold, and one embedding of both would match neither well."""
    texts = [t.strip() for t in q.text.split("; ") if t.strip()]
    if len(texts) < 2:
        return [q]
    out = [FacetQuery(q.facet, t, keywords_of(t), alternatives_of(t), q.relation) for t in texts]
    return [p for p in out if p.keywords] or [q]


@dataclass
class _Verdict:
    stream_id: str
    scores: dict[str, float] = field(default_factory=dict)
    moment: Moment | None = None
    why: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


class FuzzyRecall:
    """Recall → Search → Verify over one store; safe to share between threads."""

    def __init__(self, backends: QueryBackends, qa: MemoryQA | None = None) -> None:
        self.c = backends
        self.qa = qa or MemoryQA(backends, warm_after_request=False)
        self.s = backends.settings.recall
        self.window_s = float(self.s.recall_temporal_window_s)

    # -- 1. recall ----------------------------------------------------------------------------
    def _parse(self, req: RecallRequest) -> ParsedDescription:
        mode = self.s.recall_parser
        use_model = mode == "model" or (mode == "auto" and self.c.settings.llm == "openai")
        return parse_description(req, llm=self.c.llm if use_model else None, use_model=use_model)

    def _streams(self, scope: Scope) -> dict[str, float]:
        """Stream id → stored end (s) of the streams in scope."""
        infos = {i.stream_id: float(i.t_end) for i in self.c.store.list_streams()}
        if scope.stream_ids is None:
            return infos
        return {sid: infos[sid] for sid in scope.stream_ids if sid in infos}

    # -- 2. search -----------------------------------------------------------------------------
    def _search_facet(self, q: FacetQuery, scope: Scope, reader: MemoryReader) -> _Facet:
        parts = _parts(q) if q.facet in ("audio", "temporal") else [q]
        if len(parts) > 1:
            f = _Facet(q, parts=[self._search_facet(p, scope, reader) for p in parts])
            f.hits = sorted((m for p in f.parts for m in p.hits), key=lambda m: -m.score)
            f.best = max(p.best for p in f.parts)  # how strong the facet's evidence is anywhere
            return f
        f = _Facet(q, self.qa.prepare_query(q.text))
        f.hits = self.qa.search_prepared(f.prepared, scope, self.s.recall_search_k, reader)
        extra = " ".join(dict.fromkeys(q.keywords + q.alternatives))
        if q.alternatives and extra and extra != q.text:
            alt = self.qa.search_prepared(self.qa.prepare_query(extra), scope, self.s.recall_search_k, reader)
            f.hits = sorted(f.hits + [m for m in alt if m.segment_id not in {h.segment_id for h in f.hits}],
                            key=lambda m: -m.score)
        f.best = max((m.score for m in f.hits), default=0.0)
        return f

    def _overviews(self, streams: dict[str, float], g: FacetQuery) -> dict[str, tuple[float, StreamOverview]]:
        """Each stream's best overview cosine to the global impression (composed on the fly
        for streams stored before overviews existed)."""
        q = normalise(self.c.embedder.embed_texts([" ".join([g.text, *g.alternatives])])[0])
        stored = self.c.store.list_overviews(list(streams), with_vectors=True) if streams else []
        by_stream: dict[str, list[StreamOverview]] = {}
        for o in stored:
            by_stream.setdefault(o.stream_id, []).append(o)
        best: dict[str, tuple[float, StreamOverview]] = {}
        for sid in streams:
            overviews = by_stream.get(sid)
            if not overviews:
                memories = self.c.store.list_memories(sid)
                if not memories:
                    continue
                overviews = [compose_overview(sid, memories, self.c.embedder)]
            scored = [(float(np.dot(q, normalise(o.vector))), o) for o in overviews]
            best[sid] = max(scored, key=lambda x: x[0])
        return best

    # -- 3. verify -----------------------------------------------------------------------------
    def _rel(self, score: float, facet: _Facet) -> float:
        """A hit's score relative to the facet's best in scope, times that best's strength."""
        if facet.best <= 0:
            return 0.0
        return _clip01(score / facet.best) * _clip01(facet.best / MOMENT_FULL) ** 0.5

    def _edge(self, relation: str, end_s: float) -> tuple[float | None, float | None]:
        edge = max(EDGE_MIN_S, EDGE_SHARE * end_s)
        if relation == "start":
            return 0.0, edge
        if relation == "end":
            return max(0.0, end_s - edge), None
        return None, None

    def _in_stream(self, facet: _Facet, sid: str, lo: float | None, hi: float | None,
                   reader: MemoryReader) -> Moment | None:
        """The facet's best hit in one stream and window: from the scope-wide hits, else a
        search of just that stream and window."""
        for m in facet.hits:
            if m.stream_id == sid and (lo is None or m.t_end >= lo) and (hi is None or m.t_start <= hi):
                return m
        hits = self.qa.search_prepared(facet.prepared, Scope((sid,), lo, hi), 3, reader)
        return hits[0] if hits else None

    def _temporal(self, t: _Facet, sid: str, anchor: Moment | None, end_s: float,
                  reader: MemoryReader) -> tuple[float, Moment | None]:
        if t.parts:
            found = [self._temporal(p, sid, anchor, end_s, reader) for p in t.parts]
            return sum(sc for sc, _ in found) / len(found), max(found, key=lambda x: x[0])[1]
        rel = t.query.relation
        if rel in ("after", "before") and anchor is not None:
            if rel == "after":
                lo, hi = anchor.t_end - 1.0, anchor.t_end + self.window_s
            else:
                lo, hi = max(0.0, anchor.t_start - self.window_s), anchor.t_start + 1.0
        else:
            lo, hi = self._edge(rel, end_s)
        hit = self._in_stream(t, sid, lo, hi, reader)
        if hit is None or (anchor is not None and hit.segment_id == anchor.segment_id):
            return 0.0, None
        return self._rel(hit.score, t), hit

    def _audio(self, a: _Facet, sid: str, end_s: float, reader: MemoryReader) -> tuple[float, str]:
        if a.parts:
            found = [self._audio(p, sid, end_s, reader) for p in a.parts]
            return sum(sc for sc, _ in found) / len(found), "; ".join(w for _, w in found if w)
        lo, hi = self._edge(a.query.relation, end_s)
        hit = self._in_stream(a, sid, lo, hi, reader)
        score = self._rel(hit.score, a) if hit is not None else 0.0
        why = f"heard: {hit.why}" if hit is not None else ""
        kinds = _sound_kinds(a.query.text)
        if kinds:
            memories = self.c.store.list_memories(sid, t_min=lo, t_max=hi)
            heard = {o.kind for m in memories for o in m.sounds}
            found = kinds & heard
            confused = {k for k in kinds for c in CONFUSED_WITH.get(k, ()) if c in heard}
            where = {"start": " at the start", "end": " at the end"}.get(a.query.relation, "")
            if found:
                why = f"{', '.join(sorted(found))} heard{where}"
                score = 1.0
            elif confused:
                stand_ins = sorted(heard & {c for k in confused for c in CONFUSED_WITH[k]})
                why = (f"{', '.join(sorted(confused))} perhaps, heard as "
                       f"{', '.join(stand_ins)}{where}")
                score = CONFUSED_SCORE
            else:
                score = min(score, ABSENT_SCORE)
        return score, why

    def _verify(self, sid: str, end_s: float, facets: dict[str, _Facet],
                overview: tuple[float, StreamOverview] | None, g_best: float,
                reader: MemoryReader) -> _Verdict:
        v = _Verdict(sid)
        k, t, a = facets.get("key_moment"), facets.get("temporal"), facets.get("audio")
        if "global" in facets:
            cos = overview[0] if overview else 0.0
            strength = _clip01((cos - G_COS_MIN) / (G_COS_FULL - G_COS_MIN))
            v.scores["global"] = _clip01(cos / g_best) * strength ** 0.5 if g_best > 0 else 0.0
            if overview:
                v.why.append(f"overview: {overview[1].text[:120]}")
        if k is not None:
            lo, hi = self._edge(k.query.relation, end_s)  # "it came late in the video"
            anchors = [m for m in k.hits if m.stream_id == sid and (lo is None or m.t_end >= lo)
                       and (hi is None or m.t_start <= hi)][:K_MOMENTS]
            if not anchors:
                anchors = self.qa.search_prepared(k.prepared, Scope((sid,), lo, hi), K_MOMENTS, reader)
            best: tuple[float, float, Moment | None, Moment | None] = (-1.0, 0.0, None, None)
            for m in anchors or [None]:
                ks = self._rel(m.score, k) if m is not None else 0.0
                ts, th = self._temporal(t, sid, m, end_s, reader) if t is not None else (0.0, None)
                if ks + ts > best[0] + best[1]:
                    best = (ks, ts, m, th)
            v.scores["key_moment"], v.moment = best[0], best[2]
            if v.moment is not None:
                v.why.append(f"key moment: {v.moment.why}")
            if t is not None:
                v.scores["temporal"] = best[1]
                if best[3] is not None:
                    v.why.append(f"{t.query.relation or 'around it'}: {best[3].why}")
        elif t is not None:
            v.scores["temporal"], hit = self._temporal(t, sid, None, end_s, reader)
            v.moment = v.moment or hit
        if a is not None:
            v.scores["audio"], why = self._audio(a, sid, end_s, reader)
            if why:
                v.why.append(why)
            if v.moment is None:
                first = a.parts[0] if a.parts else a
                v.moment = self._in_stream(first, sid, *self._edge(first.query.relation, end_s), reader)
        v.failed = [name for name, sc in v.scores.items() if sc < self.s.recall_facet_min]
        return v

    # -- the call --------------------------------------------------------------------------------
    def recall(self, req: RecallRequest) -> RecallResult:
        started = time.perf_counter()
        req = validation.recall_request(req)
        clock = Deadline(req.deadline_s)
        with clock.stage("recall"):
            parsed = self._parse(req)
        streams = self._streams(req.scope)
        result = RecallResult(facets={name: q.text for name, q in parsed.facets.items()})
        if not streams:
            result.elapsed_s = time.perf_counter() - started
            return result
        scope = Scope(tuple(streams), req.scope.t_min, req.scope.t_max)
        reader = MemoryReader(self.c.store)
        facets: dict[str, _Facet] = {}
        with clock.stage("search"):
            for name, q in parsed.facets.items():
                if name != "global":
                    facets[name] = self._search_facet(q, scope, reader)
            overviews = self._overviews(streams, parsed.facets["global"]) if "global" in parsed.facets else {}
        g_best = max((cos for cos, _ in overviews.values()), default=0.0)
        if "global" in parsed.facets:
            facets["global"] = _Facet(parsed.facets["global"])
        candidates = self._fuse(streams, facets, overviews)
        verdicts: list[_Verdict] = []
        budget_end = started + float(self.s.recall_budget_s)
        for i, sid in enumerate(candidates):
            if i >= 2 and time.perf_counter() > budget_end:
                result.rejected.append(f"{sid}: not verified (recall_budget_s={self.s.recall_budget_s:g} s spent)")
                continue
            clock.check(f"verifying {sid}")
            verdicts.append(self._verify(sid, streams[sid], facets, overviews.get(sid), g_best, reader))
        strength = self._strength(facets, g_best, verdicts)
        result.results, result.rejected = self._rank(verdicts, req.top_k, streams, result.rejected,
                                                     strength)
        if result.results and "key_moment" in parsed.facets:
            with clock.stage("look"):
                self._to_the_second(result.results[0], parsed.facets["key_moment"], clock)
        result.elapsed_s = time.perf_counter() - started
        return result

    def _to_the_second(self, top: RecalledStream, k: FacetQuery, clock: Deadline) -> None:
        """Say the second the key moment was on screen, by looking again at its segment's
        stored video, when the eyes can see it; the segment's middle otherwise."""
        look = self.c.settings.look
        if not self.s.recall_look_again or not top.segment_id:
            return
        if look.looker == "offline" and not about_writing(k.text):
            return
        left = clock.remaining()
        budget = LOOK_BUDGET_S if left is None else min(LOOK_BUDGET_S, left - 0.2)
        if budget <= 0.2:
            return
        lo, hi = max(0.0, top.t_start - LOOK_MARGIN_S), top.t_end + LOOK_MARGIN_S
        anchor = {top.stream_id: [Moment(top.stream_id, lo, hi, top.confidence, k.text, top.segment_id)]}
        try:
            found = self.qa.look.look(k.text, [top.stream_id], anchor, Scope(), LOOK_FRAMES, 1,
                                      Deadline(budget), whole_streams=False)
        except EpisodicError:  # no video stored, a snippet gone: the segment stays the answer
            return
        seen = [m for m in found.moments if m.confidence >= 0.5 and lo <= m.t <= hi]
        if seen:
            top.t = round(seen[0].t, 3)
            top.why += f"; seen at {seen[0].t:.1f} s: {seen[0].why}"

    def _fuse(self, streams: dict[str, float], facets: dict[str, _Facet],
              overviews: dict[str, tuple[float, StreamOverview]]) -> list[str]:
        """Candidate streams, best first: reciprocal-rank fusion of each facet's stream ranking."""
        fused: dict[str, float] = {}
        rankings: list[list[str]] = []
        for name, f in facets.items():
            if name == "global":
                rankings.append([sid for sid, _ in sorted(overviews.items(), key=lambda kv: -kv[1][0])])
            else:
                rankings.append(list(dict.fromkeys(m.stream_id for m in f.hits)))
        for ranking in rankings:
            for rank, sid in enumerate(ranking):
                fused[sid] = fused.get(sid, 0.0) + 1.0 / (RRF_K + rank + 1)
        ranked = sorted(fused, key=lambda sid: -fused[sid])
        if len(ranked) < self.s.recall_candidates:  # small memories: verify every stream
            ranked += [sid for sid in streams if sid not in fused]
        return ranked[: self.s.recall_candidates]

    @staticmethod
    def _strength(facets: dict[str, _Facet], g_best: float, verdicts: list[_Verdict]) -> float:
        """How well anything in scope matches the description at all (0–1, the best facet):
        facet scores are relative to the best in scope, so without this a description of
        something never recorded would still crown its least-bad match."""
        def scaled(x: float, lo_hi: tuple[float, float]) -> float:
            return _clip01((x - lo_hi[0]) / (lo_hi[1] - lo_hi[0]))

        best = scaled(g_best, EVIDENCE_COS) if "global" in facets else 0.0
        for name, f in facets.items():
            if name != "global":
                best = max(best, scaled(f.best, EVIDENCE_MOMENT))
        if "audio" in facets and any(v.scores.get("audio", 0.0) >= 1.0 for v in verdicts):
            best = 1.0  # the named sound itself was heard
        return best

    def _rank(self, verdicts: list[_Verdict], top_k: int, streams: dict[str, float],
              rejected: list[str], strength: float = 1.0) -> tuple[list[RecalledStream], list[str]]:
        """Streams that hold every facet, best first. When none does (perception misses
        things: a photo the classifier cannot name, applause heard as noise), the closest are
        offered instead at a penalised confidence, each saying which facet failed."""
        def confidence(v: _Verdict) -> float:
            weights = {n: FACET_WEIGHT[n] for n in v.scores}
            return sum(v.scores[n] * w for n, w in weights.items()) / max(sum(weights.values()), 1e-9)

        kept = [(confidence(v), v) for v in verdicts if not v.failed]
        if not kept:
            kept = [(confidence(v) * PARTIAL_PENALTY, v) for v in verdicts
                    if len(v.failed) < len(v.scores)]
            for _, v in kept:
                v.why.insert(0, f"partial match: not {', '.join(v.failed)}")
        else:
            for v in verdicts:
                held = [n for n in v.scores if n not in v.failed]
                if v.failed and any(v.scores[n] >= 0.5 for n in held):  # a near miss worth explaining
                    rejected.append(f"{v.stream_id}: {', '.join(held) or 'nothing'} held, but not "
                                    f"{', '.join(v.failed)} ({', '.join(f'{v.scores[n]:.2f}' for n in v.failed)})")
        kept = sorted(((conf * strength, v) for conf, v in kept), key=lambda cv: -cv[0])
        if kept and strength <= 0.0:
            rejected.append("nothing in memory matches the description (no evidence above the "
                            "level of unrelated text): no recording offered")
            kept = []
        elif kept and kept[0][0] < WEAK_CONFIDENCE:
            for _, v in kept:  # offered, but said to be a guess
                v.why.insert(0, f"weak: the best evidence in memory is poor ({strength:.2f} of 1)")
        out: list[RecalledStream] = []
        for conf, v in kept[:top_k]:
            m = v.moment
            t0, t1 = (m.t_start, m.t_end) if m is not None else (0.0, streams.get(v.stream_id, 0.0))
            out.append(RecalledStream(
                stream_id=v.stream_id, t=round((t0 + t1) / 2, 3), t_start=t0, t_end=t1,
                confidence=round(conf, 4), facets={n: round(s, 4) for n, s in v.scores.items()},
                why="; ".join(v.why), segment_id=m.segment_id if m is not None else "",
            ))
        return out, rejected
