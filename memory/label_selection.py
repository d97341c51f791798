"""Which words a key frame earns: the classifier's probabilities summed per plain word, gated
by calibrated thresholds and by agreement between similar key frames (labels, said in
descriptions), and the unsure best guesses kept apart (for choosing between given options
only). Thresholds come from the vision settings, chosen on ``benchmarks/bench_vision.py``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from episodic.config import VisionSettings
from episodic.memory.label_hypernyms import PERSON_WORDS, HypernymIndex


def select_labels(
    class_probs: np.ndarray,
    features: np.ndarray,
    usable: Sequence[bool],
    index: HypernymIndex,
    settings: VisionSettings,
    people: Sequence[int] | None = None,
) -> list[list[tuple[str, float]]]:
    """Plain words (and, when confident alone, the fine ImageNet name) per key frame.

    * Class probabilities are summed per plain word first ("a cat" = tabby + tiger cat +
      Persian + Siamese + Egyptian cat), so a picture the network splits between breeds
      still counts, while a texture that nudges a dozen unrelated classes does not. When
      no plain word is sure, a coarse category may be ("an animal", "a vehicle", "food").
    * A lone key frame keeps a word at ``visual_label_min_prob``.
    * Key frames of one segment that look alike (feature cosine ≥ ``visual_label_similar_cos``)
      must agree: a word seen in only one of them needs ``visual_label_strong_prob``; one
      seen in two or more with at least ``visual_label_agree_prob`` each is kept, and its
      confidence is raised by the agreement.
    * Frames the quality gate rejected (``usable`` False) get no words.
    * When ``people`` (detections per frame) is given, "clothes" is said only where someone
      was found: the clothing classes also fire on stripes and textures.
    """
    s = settings
    n = len(class_probs)
    groups = index.group_probs(class_probs)
    sim = features @ features.T if n else np.zeros((0, 0), np.float32)
    person_only = np.array([w in PERSON_WORDS for w in index.words])
    out: list[list[tuple[str, float]]] = []
    for i in range(n):
        if not usable[i]:
            out.append([])
            continue
        g = groups[i]
        peers = [
            j for j in range(n) if j != i and usable[j] and sim[i, j] >= s.visual_label_similar_cos
        ]
        if peers:
            support = groups[peers].max(axis=0)
            agree = (g >= s.visual_label_agree_prob) & (support >= s.visual_label_agree_prob)
            conf = np.where(agree, g + (1.0 - g) * support / 2.0, g)
            keep = agree | (g >= s.visual_label_strong_prob)
        else:
            conf = g
            keep = g >= s.visual_label_min_prob
        if people is not None and not people[i]:
            keep = keep & ~person_only
        ranked = [int(w) for w in np.argsort(-conf) if keep[w]]
        said = {index.words[w] for w in ranked}
        ranked = [  # a category only when none of its plain words is said ("a cat", not "an animal")
            w
            for w in ranked
            if not index.is_category[w]
            or not any(index.category_of.get(o) == index.words[w] for o in said)
        ]
        chosen = ranked[: max(0, s.visual_labels_top_k)]
        labels: list[tuple[str, float]] = []
        top = int(np.argmax(class_probs[i]))
        for w in chosen:
            word = index.words[w]
            labels.append((word, round(float(conf[w]), 4)))
            fine = index.names[top]
            if (
                index.class_word[top] == word
                and float(class_probs[i][top]) >= s.visual_label_specific_prob
                and fine.lower() not in word.lower()
            ):
                labels.append((fine, round(float(class_probs[i][top]), 4)))
        out.append(labels[: max(0, s.visual_labels_top_k)])
    return out


def select_guesses(
    class_probs: np.ndarray,
    usable: Sequence[bool],
    index: HypernymIndex,
    settings: VisionSettings,
) -> list[list[tuple[str, float]]]:
    """The classifier's best guesses per key frame, however unsure (see FrameObservation).

    The top fine ImageNet names ("moped") and plain words ("a motorbike", summed over their
    classes) at ``visual_guess_min_prob`` or more, at most ``visual_guesses_top_k`` of each,
    most probable first. Broad categories ("a vehicle") say too little to tell options apart;
    dark and flat frames get none.
    """
    s = settings
    k = max(0, s.visual_guesses_top_k)
    # class_probs may be each class at its best over several views, the crops of a frame (not
    # a distribution): a plain word's sum is then capped at certainty
    groups = np.minimum(index.group_probs(class_probs), 1.0)
    out: list[list[tuple[str, float]]] = []
    for i in range(len(class_probs)):
        if not usable[i] or k == 0:
            out.append([])
            continue
        fine = [(index.names[c], float(class_probs[i][c])) for c in np.argsort(-class_probs[i])[:k]]
        plain = [
            (index.words[w], float(groups[i][w]))
            for w in np.argsort(-groups[i])
            if not index.is_category[w]
        ][:k]
        seen: set[str] = set()
        kept = []
        for name, p in sorted(fine + plain, key=lambda x: -x[1]):
            if p >= s.visual_guess_min_prob and name.lower() not in seen:
                seen.add(name.lower())
                kept.append((name, round(p, 4)))
        out.append(kept)
    return out
