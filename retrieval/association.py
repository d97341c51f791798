"""Cross-modal association (HippoMM C.2, Eq. 9–11): answer "what was on screen when X was
said" by temporal co-occurrence rather than by similarity.

1. **Seeds (Eq. 9)** – the top-k memories whose representative vector v_k is nearest to the
   question (k = ``recall_top_k``, 5).
2. **Windows (Eq. 10)** – around each seed a window widened by δ = ``association_window_s``
   (2 s) on both sides. The window is centred on the seed's best-matching *cue* unit (the
   transcript piece that says X) when the seed has one, which localises "when X was said"
   more tightly than the whole seed memory; otherwise on the seed memory itself.
3. **Gather (Eq. 11)** – from every memory overlapping a window (neighbours included, since a
   cut may fall between the words and the picture), the units of the *target* modality that
   overlap the window.

A target's score = cue score × (0.5 + 0.5 × share of the cue's span it covers) + 0.25 × its own
relevance to the question, so what was on screen *while* the words were said outranks what
was on screen 2 s later, and a target that also matches the question wins ties.
"""

from __future__ import annotations

import numpy as np

from episodic.config import RetrievalSettings
from episodic.core.interfaces import QueryStore
from episodic.core.query import Scope
from episodic.retrieval.detailed import MemoryReader, Recall, TextScorer, Unit, units_of
from episodic.retrieval.query_analysis import QueryAnalysis

MODALITY_GROUPS = {"speech": ("speech",), "visual": ("ocr", "visual")}
W_OWN = 0.25  # weight of the target's own relevance beside its co-occurrence with the cue


def _span_share(unit: Unit, t0: float, t1: float) -> float:
    """The share of [t0, t1] that ``unit`` covers (1.0 for a zero-length cue inside it)."""
    inter = min(unit.t_end, t1) - max(unit.t_start, t0)
    if t1 - t0 <= 1e-6:
        return 1.0 if unit.t_start <= t0 <= unit.t_end else 0.0
    return max(0.0, inter) / (t1 - t0)


class CrossModalAssociation:
    """Ψ_detailed for VIDEO+AUDIO questions."""

    def __init__(self, store: QueryStore, scorer: TextScorer, settings: RetrievalSettings) -> None:
        self.store = store
        self.scorer = scorer
        self.settings = settings

    def associate(
        self, analysis: QueryAnalysis, q_vec: np.ndarray, scope: Scope, reader: MemoryReader
    ) -> Recall:
        s = self.settings
        delta = s.association_window_s
        cue_mod = analysis.cue_modality or "speech"
        target_mod = analysis.target_modality or ("visual" if cue_mod == "speech" else "speech")
        cue_set = MODALITY_GROUPS.get(cue_mod, ("speech",))
        target_set = MODALITY_GROUPS.get(target_mod, ("ocr", "visual"))

        seeds = self.store.search_memories(
            q_vec, top_k=s.recall_top_k, stream_ids=scope.stream_ids, t_min=scope.t_min, t_max=scope.t_max
        )
        seed_ids = [m.id for m, _ in seeds]
        seed_units = self.scorer.rank(
            analysis, q_vec, reader.units(seed_ids, self.scorer.reuse_visual_vectors, scope), prefer=cue_set
        )

        # Eq. 10: one window per seed, around its best cue unit (else the seed memory)
        cues: list[Unit] = []
        for mid in seed_ids:
            mine = [u for u in seed_units if u.memory_id == mid]
            cue = next((u for u in mine if u.modality in cue_set), None)
            if cue is None:
                m = reader.memory(mid)
                if m is None:
                    continue
                best = mine[0].score if mine else 0.0
                cue = Unit(m.stream_id, m.id, m.t_start, m.t_end, "memory", "", score=best,
                           cos=max((u.cos for u in mine), default=0.0))
            cues.append(cue)

        targets: dict[tuple, Unit] = {}
        windows: list[tuple[str, float, float]] = []
        for cue in cues:
            w0, w1 = cue.t_start - delta, cue.t_end + delta
            if scope.t_min is not None:
                w0 = max(w0, scope.t_min)
            if scope.t_max is not None:
                w1 = min(w1, scope.t_max)
            if w1 < w0:
                continue
            windows.append((cue.stream_id, round(w0, 3), round(w1, 3)))
            # Eq. 11: every memory overlapping the window, the seed's neighbours included
            for m in self.store.list_memories(cue.stream_id, t_min=w0, t_max=w1, with_vectors=True):
                reader.add(m)
                found = [
                    u
                    for u in units_of(m, reader.event_of(m), self.scorer.reuse_visual_vectors)
                    if u.modality in target_set and u.overlaps(w0, w1)
                ]
                if not found:
                    continue
                self.scorer.rank(
                    analysis, q_vec, found, prefer=("ocr",) if analysis.asks_text else target_set
                )
                for u in found:
                    share = _span_share(u, cue.t_start, cue.t_end)
                    u.score = cue.score * (0.5 + 0.5 * share) + W_OWN * u.score
                    u.anchor = cue if cue.modality != "memory" else None
                    old = targets.get(u.key)
                    if old is None or u.score > old.score:
                        targets[u.key] = u

        ranked_targets = sorted(targets.values(), key=lambda u: (-u.score, u.stream_id, u.t_start))
        real_cues = [c for c in cues if c.modality != "memory"]
        return Recall(
            units=ranked_targets + real_cues,
            route="association",
            best_feature_sim=float(seeds[0][1]) if seeds else None,
            notes={
                "cue_modality": cue_mod,
                "target_modality": target_mod,
                "windows": windows,
                "targets": len(ranked_targets),
            },
        )
