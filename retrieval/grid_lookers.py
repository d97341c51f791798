"""Eyes for the look-again grid (issue 15, item 2): what each cell of a grid shows, and how much
it bears on a question.

Every looker returns the same :class:`GridObservation`: one :class:`CellLook` per cell (its
time span, a relevance in [0, 1] and what was made of it, in words) and the cells worth a
closer look, best first. The navigation (what to expand next) only reads that.

:class:`OfflineLooker` is the embedded default's: no model that understands questions about
pictures ships offline, so it looks for what the offline describer can read and name. The
grid's tiles are laid out without labels and read by OCR **once** (one pass over a 1280×720
mosaic costs about what one frame does, and each line is given to the tile its box sits in),
and each tile's everyday colour names are taken. A cell's relevance is the share of what the
question names that the cell shows: each content word found in its text counts 1 (a line
written without spaces, "EASTDOCK", still holds "east dock"), each colour word among its
colours ``COLOUR_WEIGHT`` (in full where it is the frame's main colour, less where it is a
minor one); "a purple elephant" on a purple frame is 0.4, not a find.
Things the classifier might name are not looked for: ImageNet's guesses in a thumbnail are too
unsure to steer a search (see the README, "Seeing honestly").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from episodic.core.records import FRAME_COLOURS
from episodic.memory.vision import OfflineVisualDescriber, colour_names
from episodic.retrieval.query_analysis import COLOUR_WORDS, content_terms, stem
from episodic.retrieval.video_grid import Cell, GridView, VideoGrid

COLOUR_WEIGHT = 0.8  # a colour match alone is weaker evidence than the asked words in writing
COLOUR_RANK_WEIGHT = (1.0, 0.5, 0.3)  # the frame's main colour, its second, its third
_WORD = re.compile(r"[a-z0-9]+")

# (x, y, text) of each line read in an image: memory.vision.OfflineVisualDescriber.read_text_boxes
ReadBoxes = Callable[[np.ndarray], Sequence[tuple[float, float, str]]]
NameColours = Callable[[np.ndarray], Sequence[str]]


@dataclass(frozen=True)
class CellLook:
    label: str
    t_start: float
    t_end: float
    t: float  # the time of the frame that was looked at
    relevance: float  # 0 (nothing to do with the question) … 1 (shows what it asks about)
    seen: str  # what the looker made of the cell, in words


@dataclass
class GridObservation:
    looks: list[CellLook]  # one per cell, in grid order
    expand: list[str] = field(default_factory=list)  # labels worth a closer look, best first
    answer: str = ""  # what the looker can already say (a model looker); "" when nothing
    confidence: float = 0.0
    looker: str = ""
    ceiling: float = 1.0  # the most relevance any cell could reach for this question


    def best(self) -> CellLook | None:
        ranked = sorted(self.looks, key=lambda c: -c.relevance)
        return ranked[0] if ranked and ranked[0].relevance > 0 else None


class GridLooker(Protocol):
    name: str

    def look(self, question: str, grid: VideoGrid, view: GridView) -> GridObservation: ...


class OfflineLooker:
    """Reads the on-screen text and names the colours of every cell (see the module docstring)."""

    name = "offline"

    def __init__(self, read_boxes: ReadBoxes, name_colours: NameColours) -> None:
        self.read_boxes = read_boxes
        self.name_colours = name_colours

    @classmethod
    def from_describer(cls, describer: OfflineVisualDescriber) -> OfflineLooker:
        """From the offline describer's OCR engine and its colour names."""
        return cls(describer.read_text_boxes, colour_names)

    def look(self, question: str, grid: VideoGrid, view: GridView) -> GridObservation:
        asked = _asked(question)
        colours = {w for w in _words(question) if w in COLOUR_WORDS}
        mosaic = grid.render(view, labels=False)
        tw, th = grid.tile_size
        texts: dict[str, list[str]] = {}
        key = ("ocr", *view.key)
        boxes = grid.memo.get(key)
        if boxes is None:
            boxes = grid.memo[key] = list(self.read_boxes(mosaic))
        for x, y, line in boxes:  # type: ignore[union-attr]
            col, row = int(x // tw), int(y // th)
            if 0 <= row < view.k and 0 <= col < view.k:
                texts.setdefault(view.cells[row * view.k + col].label, []).append(line)
        looks = []
        for cell in view.cells:
            tile = mosaic[cell.row * th : (cell.row + 1) * th, cell.col * tw : (cell.col + 1) * tw]
            looks.append(self._judge(cell, texts.get(cell.label, []), tile, asked, colours))
        ranked = sorted((c for c in looks if c.relevance > 0), key=lambda c: -c.relevance)
        aspects = len(asked) + len(colours)
        ceiling = (len(asked) + COLOUR_WEIGHT * len(colours)) / aspects if aspects else 0.0
        return GridObservation(looks=looks, expand=[c.label for c in ranked], looker=self.name,
                               ceiling=round(ceiling, 4))

    def _judge(
        self, cell: Cell, lines: list[str], tile: np.ndarray, asked: set[str], colours: set[str]
    ) -> CellLook:
        text = " ".join(lines)
        named = list(self.name_colours(tile)) if tile.size else []
        aspects = len(asked) + len(colours)
        # a colour counts fully where it is the frame's main colour, less where it is a minor one
        shown = sum(COLOUR_RANK_WEIGHT[min(named.index(c), 2)] for c in colours if c in named)
        found = found_share(asked, text) * len(asked) + COLOUR_WEIGHT * shown
        relevance = found / aspects if aspects else 0.0
        seen = "; ".join(p for p in (f'on-screen text: "{text}"' if text else "",
                                     f"{FRAME_COLOURS} {', '.join(named)}" if named else "") if p)
        return CellLook(cell.label, cell.t_start, cell.t_end, cell.t_mid, round(relevance, 4), seen)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _asked(question: str) -> set[str]:
    """The question's content words (stems) that writing could show; colours are matched apart."""
    colour_stems = {stem(c) for c in COLOUR_WORDS}
    return {t for t in content_terms(question) if t not in colour_stems}


def found_share(asked: set[str], text: str) -> float:
    """Share of ``asked`` stems in ``text``, also inside words run together ("EASTDOCK")."""
    if not asked or not text:
        return 0.0
    stems = {stem(w) for w in _words(text)}
    squashed = "".join(_words(text))
    hits = sum(1 for a in asked if a in stems or (len(a) >= 3 and a in squashed))
    return hits / len(asked)
