"""Which of a stream's classifier guesses are its background: guessed again and again.

An ImageNet classifier always answers. On the walls, textures and clothes a camera sees all
day it answers as confidently as on a picture ("Windsor tie" 0.77, "shower curtain" 0.63),
and looking at parts of a frame (memory/vision.py's grid crops, for a picture shown in one
part of a busy frame) makes that worse: a texture's crop is guessed as surely as a photo's.
What tells them apart is *where* a guess occurs. The background's guesses come back through
the whole stream; a thing shown for a while is guessed in one stretch. So a guess is
background in a stream when the key frames carrying it (at ``GUESS_MIN`` or more) fall in
more than one stretch (a gap over ``SPAN_GAP_S``) or cover more than ``MAX_SHARE`` of the
stream's key frames.

Measured on the dev recordings' beat frames (6 seeds, 618 frames, 40 of them photos; the
held-out recordings were not looked at): guesses at ≥ 0.3 named the photo on 16 of 40
photo frames and put a wrong word on 238 frames; with the grid crops 28 and 491; with the
crops and recurring guesses dropped, 28 and 22. The price: a thing shown in two separate
stretches of one stream loses its *guesses* there (a word the describer was sure of, a
label, is never dropped).

The whole frames' guesses and their parts' (``Unit.part_guesses``) are judged apart: crops
of a wall carry many names now and then, and pooled with the whole frames' they made the
names a picture stands out by look recurring (dev "a picture of coins", a thing ImageNet
cannot name, fell out of Search's top 5 on 1 of 6 recordings and lower on 3 more).
"""

from __future__ import annotations

from collections.abc import Sequence

from episodic.retrieval.detailed import Unit

GUESS_MIN = 0.05  # a guess below this on a frame does not count as carried by it
# A background name can still stand out on one stretch: guessed at least STANDS_OUT_MIN there
# and STANDS_OUT times surer than anywhere else in the stream ("a dog" 0.76 on a horse's
# silhouette, 0.05–0.07 on the walls)
STANDS_OUT = 3.0
STANDS_OUT_MIN = 0.3
SPAN_GAP_S = 10.0  # frames carrying a guess further apart than this are two stretches
MAX_SHARE = 0.3  # a guess on more of the stream's key frames than this is background


def stretches(units: Sequence[Unit]) -> int:
    """How many stretches (runs without a gap over ``SPAN_GAP_S``) time-ordered units form."""
    count, last_end = 0, None
    for u in units:
        if last_end is None or u.t_start - last_end > SPAN_GAP_S:
            count += 1
        last_end = u.t_end if last_end is None else max(last_end, u.t_end)
    return count


def carriers(frames: Sequence[Unit], kind: str = "guesses") -> dict[str, list[tuple[Unit, float]]]:
    """Per guess name, the key frames carrying it at ``GUESS_MIN`` or more (with the
    probability), in the frames' order; ``kind``: the whole frames' guesses, or
    "part_guesses", those of their parts."""
    out: dict[str, list[tuple[Unit, float]]] = {}
    for f in frames:
        for name, p in getattr(f, kind):
            if p >= GUESS_MIN:
                out.setdefault(name, []).append((f, float(p)))
    return out


def recurring(frames: Sequence[Unit], by_name: dict[str, list[tuple[Unit, float]]] | None = None,
              kind: str = "guesses") -> set[str]:
    """The guess names that are background in ``frames`` (one stream's key-frame units), among
    the whole frames' guesses or (``kind`` "part_guesses") among their parts', each judged on
    its own: a name a wall's crops carry all through says nothing of the whole frames."""
    ordered = sorted((u for u in frames if u.modality == "visual"), key=lambda u: u.t_start)
    hits = carriers(ordered, kind) if by_name is None else by_name
    limit = max(1, MAX_SHARE * len(ordered))
    return {name for name, on in hits.items()
            if stretches([u for u, _ in on]) != 1 or len(on) > limit}


# where a background name was guessed, and how surely: (start, end, probability) per key frame
Levels = dict[str, list[tuple[float, float, float]]]


def background_levels(frames: Sequence[Unit], kind: str = "guesses") -> Levels:
    """The background names of ``frames`` (one stream's key-frame units, see :func:`recurring`)
    with every key frame carrying each, for :func:`stands_out`."""
    hits = carriers(sorted((u for u in frames if u.modality == "visual"), key=lambda u: u.t_start), kind)
    return {name: [(u.t_start, u.t_end, p) for u, p in hits[name]] for name in recurring(frames, hits, kind)}


def stands_out(name: str, p: float, unit: Unit, levels: Levels) -> bool:
    """Whether background name ``name``, guessed at ``p`` on ``unit``, stands out there: at least
    ``STANDS_OUT_MIN`` and ``STANDS_OUT`` times its best on the stream's key frames more than
    ``SPAN_GAP_S`` away (a picture held over several key frames is one stretch)."""
    if p < STANDS_OUT_MIN:
        return False
    elsewhere = [q for a, b, q in levels.get(name, ())
                 if not (a < unit.t_end + SPAN_GAP_S and unit.t_start - SPAN_GAP_S < b)]
    return p >= STANDS_OUT * max(elsewhere, default=0.0)
