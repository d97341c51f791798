"""Looking again at the pixels: a stretch of video as a hierarchical K×K grid (issue 15, item 1).

VideoAtlas / Video-RLM (seed 002) let a model navigate a video instead of reading a fixed set of
frames: the root grid covers the whole span with K×K cells (K = 8 by default), each cell an
interval shown by the frame at its midpoint; EXPAND replaces the view by the grid of one cell,
so at depth d a cell lasts T / K^(2(d+1)) and reaching any second of an hour takes a handful of
steps (logarithmic in T). BACKTRACK goes up again, INVESTIGATE shows the span of the same length
just before or after the current view, ZOOM returns one cell's frame at full resolution.
Expanding stops at the first layer whose cells last less than ``min_cell_s`` (1 s): below that a
grid would show the same frame 64 times.

What the grid looks at is a :class:`FrameSource`: the stored snippets of a stream
(:class:`SnippetFrames`, frames found by seeking in the one snippet file that covers a time,
never by decoding whole files) or a recording on disk (:class:`FileFrames`). Frames are decoded
once per request (a per-grid cache keyed by the time rounded to ``frame_step_s``) and a rendered
grid image is kept by its span, so backtracking never decodes again.

The grid image burns each cell's label ("A1" … "H8", rows A.. top to bottom) and the time of
its frame into the tile, so a vision-language model can name the cell it wants next.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from episodic.core.errors import InputError, MediaError
from episodic.core.interfaces import RecordReader, SnippetStore
from episodic.core.records import SnippetRef, validate_stream_id
from episodic.memory.vision import as_rgb_uint8
from episodic.retrieval.video_changes import MediaFile

DEFAULT_K = 8
MIN_CELL_S = 1.0  # the first layer with shorter cells is the deepest one
TILE_WIDTH = 160  # pixels per cell in a rendered grid (16:9 tiles)
MAX_SPAN_S = 7 * 24 * 3600.0  # a week: anything longer is a mistake, not a recording
OPEN_FILES = 4  # snippet files kept open between lookups


class FrameSource(Protocol):
    """Frames of one time span: ``frame_at(t)`` is an RGB uint8 array of the frame shown at
    stream time ``t`` (None where nothing can be decoded, e.g. audio-only stretches)."""

    t_start: float
    t_end: float

    def frame_at(self, t: float) -> np.ndarray | None: ...


# -- the grid ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    row: int
    col: int
    t_start: float
    t_end: float

    @property
    def label(self) -> str:
        return f"{chr(ord('A') + self.row)}{self.col + 1}"

    @property
    def t_mid(self) -> float:
        return (self.t_start + self.t_end) / 2.0


@dataclass(frozen=True)
class GridView:
    """One grid: its span, its depth (0 = root) and the labels of the cells expanded to get here.

    ``spans``: the cells' own stretches, in time order, for a look at chosen moments (at most
    K×K of them, e.g. the brief shots of ``video_changes``) instead of K×K equal cells; a
    cell still shows the frame from its middle and expands to the grid of its stretch."""

    t_start: float
    t_end: float
    k: int
    depth: int
    path: tuple[str, ...] = ()
    spans: tuple[tuple[float, float], ...] = ()

    @classmethod
    def of_moments(cls, spans: Sequence[tuple[float, float]], k: int, depth: int = 0) -> GridView:
        """A grid of chosen stretches (the first K×K given), shown in time order."""
        chosen = tuple(sorted((float(a), float(b)) for a, b in list(spans)[: k * k]))
        if not chosen:
            raise InputError("a grid of moments needs at least one moment")
        return cls(chosen[0][0], max(b for _, b in chosen), k, depth, (), chosen)

    @property
    def key(self) -> tuple[object, ...]:
        """What identifies the pixels of this view (for caches)."""
        return (round(self.t_start, 6), round(self.t_end, 6), self.spans)

    @property
    def cell_s(self) -> float:
        """How long a cell lasts (the longest one, for a grid of moments)."""
        if self.spans:
            return max(b - a for a, b in self.spans)
        return (self.t_end - self.t_start) / (self.k * self.k)

    @property
    def cells(self) -> tuple[Cell, ...]:
        k, step = self.k, self.cell_s
        if self.spans:
            return tuple(Cell(i // k, i % k, a, b) for i, (a, b) in enumerate(self.spans))
        return tuple(
            Cell(i // k, i % k, self.t_start + i * step, self.t_start + (i + 1) * step)
            for i in range(k * k)
        )

    def cell(self, label: str) -> Cell:
        """The cell named ``label`` ("C5"); InputError for a name this grid does not have."""
        text = str(label).strip().upper()
        for c in self.cells:
            if c.label == text:
                return c
        last = Cell(self.k - 1, self.k - 1, 0.0, 0.0).label
        raise InputError(f"no cell {label!r} in a {self.k}×{self.k} grid (A1 … {last})")

    def cell_at(self, t: float) -> Cell:
        """The cell whose interval holds ``t`` (clamped to the grid; the nearest one for a grid
        of moments)."""
        if self.spans:
            return min(self.cells, key=lambda c: 0.0 if c.t_start <= t < c.t_end else min(abs(t - c.t_start), abs(t - c.t_end)))
        i = int((t - self.t_start) // self.cell_s) if self.cell_s > 0 else 0
        return self.cells[min(max(i, 0), self.k * self.k - 1)]


class VideoGrid:
    """The navigation environment over one :class:`FrameSource`."""

    def __init__(
        self,
        source: FrameSource,
        k: int = DEFAULT_K,
        min_cell_s: float = MIN_CELL_S,
        tile_width: int = TILE_WIDTH,
    ) -> None:
        if not 2 <= int(k) <= 16:
            raise InputError(f"grid size k must be in 2..16, got {k}")
        span = float(source.t_end) - float(source.t_start)
        if not math.isfinite(span) or span <= 0:
            raise InputError(f"nothing to look at: the span {source.t_start}–{source.t_end} s is empty")
        if span > MAX_SPAN_S:
            raise InputError(f"a span of {span / 3600:.0f} h is more than one grid may cover (a week)")
        if min_cell_s <= 0:
            raise InputError("min_cell_s must be > 0")
        self.source = source
        self.k = int(k)
        self.min_cell_s = float(min_cell_s)
        self.tile_width = max(32, int(tile_width))
        self.frame_step_s = min(0.05, self.min_cell_s / 10)  # frames closer than this are one
        self._frames: dict[int, np.ndarray | None] = {}
        self._images: dict[tuple[object, ...], np.ndarray] = {}
        self.frames_decoded = 0
        self.frame_hits = 0
        self.image_hits = 0
        # workers share one grid: decoders and caches are used under this lock (looking at a
        # rendered image, e.g. OCR or a model call, happens outside it)
        self._lock = threading.RLock()
        # what lookers made of this grid's images (e.g. OCR lines per mosaic), so a second
        # question about the same request's grids reads nothing twice
        self.memo: dict[tuple[object, ...], object] = {}

    # -- moves ---------------------------------------------------------------------------
    def root(self) -> GridView:
        return GridView(float(self.source.t_start), float(self.source.t_end), self.k, 0)

    def can_expand(self, view: GridView) -> bool:
        """Whether the cells of ``view`` may still be expanded (the layer below would be the
        first one with cells under ``min_cell_s``, or a longer one)."""
        return view.cell_s >= self.min_cell_s

    def expand(self, view: GridView, label: str) -> GridView:
        """The grid of one cell of ``view``."""
        cell = view.cell(label)
        if not self.can_expand(view):
            raise InputError(
                f"cell {cell.label} lasts {view.cell_s:.2f} s: the grid goes no deeper than the "
                f"first layer under {self.min_cell_s:g} s"
            )
        return GridView(cell.t_start, cell.t_end, self.k, view.depth + 1, (*view.path, cell.label))

    def backtrack(self, view: GridView) -> GridView:
        """The grid ``view`` was expanded from (the root stays the root)."""
        if not view.path:
            return self.root()
        parent = self.root()
        for label in view.path[:-1]:
            parent = self.expand(parent, label)
        return parent

    def investigate(self, view: GridView, direction: Literal["before", "after"]) -> GridView:
        """The span of the same length just before or after ``view``, at the same depth, kept
        inside the source (so at an edge it overlaps ``view``)."""
        if direction not in ("before", "after"):
            raise InputError(f"investigate looks 'before' or 'after', not {direction!r}")
        length = view.t_end - view.t_start
        lo, hi = float(self.source.t_start), float(self.source.t_end)
        start = view.t_start - length if direction == "before" else view.t_end
        start = min(max(start, lo), max(lo, hi - length))
        return GridView(start, min(hi, start + length), self.k, view.depth, view.path)

    def zoom(self, view: GridView, label: str) -> np.ndarray | None:
        """One cell's frame at the source's own resolution."""
        return self.frame(view.cell(label).t_mid)

    # -- pixels --------------------------------------------------------------------------
    def frame(self, t: float) -> np.ndarray | None:
        """The frame at ``t``, decoded at most once per grid (None outside the source)."""
        if not float(self.source.t_start) <= t < float(self.source.t_end):
            return None
        key = int(round(t / self.frame_step_s))
        with self._lock:
            if key in self._frames:
                self.frame_hits += 1
                return self._frames[key]
            frame = self.source.frame_at(key * self.frame_step_s)
            self.frames_decoded += 1
            self._frames[key] = frame
            return frame

    @property
    def tile_size(self) -> tuple[int, int]:
        """(width, height) of one cell in a rendered grid."""
        return self.tile_width, max(18, self.tile_width * 9 // 16)

    def render(self, view: GridView, labels: bool = True) -> np.ndarray:
        """The grid image: K×K tiles with each cell's label and frame time burned in (for a
        model to name cells; ``labels=False`` for reading the pictures themselves, e.g. OCR);
        a tile with nothing decodable is dark grey and says so."""
        with self._lock:
            return self._render(view, labels)

    @property
    def cache_hit_rate(self) -> float:
        """Share of frame requests answered from the cache (a grid image asked for again is
        counted apart, in ``image_hits``)."""
        asked = self.frames_decoded + self.frame_hits
        return self.frame_hits / asked if asked else 0.0

    def _render(self, view: GridView, labels: bool) -> np.ndarray:
        key = (*view.key, labels)
        cached = self._images.get(key)
        if cached is not None:
            self.image_hits += 1
            return cached
        tw, th = self.tile_size
        canvas = Image.new("RGB", (tw * view.k, th * view.k), (40, 40, 40))
        draw = ImageDraw.Draw(canvas)
        font = _font(max(10, th // 6))
        for cell in view.cells:
            x, y = cell.col * tw, cell.row * th
            frame = self.frame(cell.t_mid)
            if frame is not None:
                canvas.paste(Image.fromarray(as_rgb_uint8(frame)).resize((tw, th), Image.Resampling.BILINEAR), (x, y))
            elif labels:
                draw.text((x + 4, y + th // 2), "no video", fill=(200, 200, 200), font=font)
            if not labels:
                continue
            caption = f"{cell.label} {format_time(cell.t_mid)}"
            box = draw.textbbox((x + 2, y + 2), caption, font=font)
            draw.rectangle((box[0] - 2, box[1] - 1, box[2] + 2, box[3] + 1), fill=(0, 0, 0))
            draw.text((x + 2, y + 2), caption, fill=(255, 255, 0), font=font)
            draw.rectangle((x, y, x + tw - 1, y + th - 1), outline=(255, 255, 255))
        image = np.asarray(canvas)
        self._images[key] = image
        return image


def format_time(t: float) -> str:
    """Stream seconds as h:mm:ss.s (m:ss.s under an hour)."""
    t = max(0.0, float(t))
    h, rest = divmod(t, 3600)
    m, s = divmod(rest, 60)
    return f"{int(h)}:{int(m):02d}:{s:04.1f}" if h else f"{int(m)}:{s:04.1f}"


def _font(size: int) -> Any:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has one bitmap size
        return ImageFont.load_default()


# -- frame sources ------------------------------------------------------------------------------
class _SeekingReader:
    """Frames of one media file by time: seek to the keyframe before ``t`` and decode forward;
    a later time in the same file continues from where the last one stopped."""

    def __init__(self, path: Path, offset_s: float = 0.0) -> None:
        import av

        try:
            self.container = av.open(str(path))
        except (av.FFmpegError, OSError) as exc:
            raise MediaError(f"cannot open {path}: {exc}") from None
        self.stream = self.container.streams.video[0] if self.container.streams.video else None
        self.offset_s = offset_s  # stream time of the file's t = 0
        self._frames: Any = None  # the running decode iterator
        self._shown: tuple[float, Any] | None = None  # the frame on screen at the last lookup
        self._next: tuple[float, Any] | None = None  # decoded already, shown from its time on

    def close(self) -> None:
        self.container.close()

    def frame_at(self, t: float) -> np.ndarray | None:
        if self.stream is None:
            return None
        local = max(0.0, t - self.offset_s)
        if self._shown is None or local < self._shown[0] - 1e-6 or local - self._shown[0] > 2.0:
            self.container.seek(int(local / float(self.stream.time_base)), stream=self.stream, backward=True)
            self._frames = self.container.decode(self.stream)
            self._shown = self._next = None
        while True:
            item, self._next = self._next, None
            if item is None:
                frame = next(self._frames, None)
                if frame is None:
                    break
                item = (float(frame.time) if frame.time is not None else 0.0, frame)
            if item[0] > local + 1e-6 and self._shown is not None:
                self._next = item  # not on screen yet at ``t``
                break
            self._shown = item
        return self._shown[1].to_ndarray(format="rgb24") if self._shown is not None else None


def _safe_frame(reader: _SeekingReader, t: float) -> np.ndarray | None:
    """A damaged stretch of a file is a frame nobody can see, not a failed request."""
    import av

    try:
        return reader.frame_at(t)
    except (av.FFmpegError, ValueError):
        reader._shown = reader._next = None  # seek afresh next time
        return None


class SnippetFrames:
    """A stream's stored snippets as a :class:`FrameSource` over ``[t_start, t_end]``."""

    def __init__(
        self,
        refs: Sequence[SnippetRef],
        path_for: Callable[[str], Path],
        t_start: float | None = None,
        t_end: float | None = None,
    ) -> None:
        video = sorted((r for r in refs if str(r.uri).endswith(".mp4")), key=lambda r: r.t_start)
        if not video:
            raise InputError("no stored video for this span (an audio-only stream has nothing to look at)")
        self.refs = video
        self.path_for = path_for
        self.t_start = float(video[0].t_start if t_start is None else t_start)
        self.t_end = float(video[-1].t_end if t_end is None else t_end)
        self._starts = [r.t_start for r in video]
        self._open: OrderedDict[str, _SeekingReader] = OrderedDict()
        self.missing: list[str] = []  # snippet files named by the memory but not on disk

    def frame_at(self, t: float) -> np.ndarray | None:
        i = bisect.bisect_right(self._starts, t) - 1
        if i < 0 or t > self.refs[i].t_end + 1e-6:
            return None  # before the first snippet or in a gap between them
        ref = self.refs[i]
        reader = self._reader(ref)
        return _safe_frame(reader, t) if reader is not None else None

    def _reader(self, ref: SnippetRef) -> _SeekingReader | None:
        reader = self._open.get(ref.uri)
        if reader is not None:
            self._open.move_to_end(ref.uri)
            return reader
        try:
            path = self.path_for(ref.uri)
            reader = _SeekingReader(path, ref.t_start)
        except (InputError, MediaError, OSError):
            self.missing.append(ref.uri)
            return None
        self._open[ref.uri] = reader
        while len(self._open) > OPEN_FILES:
            self._open.popitem(last=False)[1].close()
        return reader

    def media_files(self) -> list[MediaFile]:
        """The snippet files of the span (those on disk), each placed at its stream time, for
        reading where the picture changes without decoding (``video_changes``)."""
        out = []
        for ref in self.refs:
            if ref.t_end <= self.t_start or ref.t_start >= self.t_end:
                continue
            try:
                path = self.path_for(ref.uri)
            except (InputError, OSError):
                continue
            out.append(MediaFile(Path(path), ref.t_start, max(ref.t_start, self.t_start), min(ref.t_end, self.t_end)))
        return out

    def close(self) -> None:
        for reader in self._open.values():
            reader.close()
        self._open.clear()


def stream_frames(
    store: RecordReader,
    snippets: SnippetStore,
    stream_id: str,
    t_min: float | None = None,
    t_max: float | None = None,
) -> SnippetFrames:
    """The stored snippets of ``stream_id`` (within [t_min, t_max] when given) as a frame source."""
    validate_stream_id(stream_id)
    memories = store.list_memories(stream_id=stream_id, t_min=t_min, t_max=t_max, with_vectors=False)
    if not memories:
        raise InputError(f"no memories of stream {stream_id!r}" + (" in that time window" if t_min or t_max else ""))
    refs = [r for m in memories for r in m.snippets]
    lo = max(t_min, min(r.t_start for r in refs)) if t_min is not None and refs else None
    hi = min(t_max, max(r.t_end for r in refs)) if t_max is not None and refs else None
    return SnippetFrames(refs, snippets.path_for, lo, hi)


class FileFrames:
    """A recording on disk (never ingested) as a :class:`FrameSource`."""

    def __init__(self, path: str | Path) -> None:
        p = Path(path)
        if not p.is_file():
            raise InputError(f"file not found: {p}")
        self._reader = _SeekingReader(p)
        if self._reader.stream is None:
            self._reader.close()
            raise MediaError(f"{p} holds no video to look at")
        c = self._reader.container
        duration = float(c.duration) / 1e6 if c.duration else float(self._reader.stream.duration or 0) * float(
            self._reader.stream.time_base
        )
        if duration <= 0:
            self._reader.close()
            raise MediaError(f"{p} does not say how long it is; cannot lay a grid over it")
        self.t_start, self.t_end = 0.0, duration
        self.path = p

    def media_files(self) -> list[MediaFile]:
        """The recording itself (see :meth:`SnippetFrames.media_files`)."""
        return [MediaFile(self.path)]

    def frame_at(self, t: float) -> np.ndarray | None:
        return _safe_frame(self._reader, t)

    def close(self) -> None:
        self._reader.close()
