"""Looking again (issue 15): frames examined and time to find a sign shown for 2 seconds.

Generated streams of 1, 10 and 60 minutes of changing textured pictures; somewhere in each a
sign ("EAST DOCK", "PLATFORM 7", …) is on screen for 2 s, and sometimes a red screen for 2 s.
The offline looker (real OCR, real colour names) and the best-first grid search
(``retrieval/grid_search.py``) are asked for it; a trial is a hit when the moment returned
first was seen within 1 s of the event (or inside it). Against: uniform sampling with the same
number of frames, read by the same OCR one frame at a time, a hit when one of its frames falls
inside the event. Frames are drawn in memory (no encoding or decoding): this measures the
search and the looking, not the video decoder.

"seeded" runs the same search with one seed, as Ask's inspect pathway and Locate get from the
memory: a 2-minute window (a memory hit widened by a minute each side) that holds the event at
a random place. It measures what looking costs once the memory points roughly at the moment;
it does not measure how often the memory does.

    .venv/bin/python benchmarks/bench_locate.py [--trials 10] [--minutes 1 10 60] [--seed 0] [--workers 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic.config import Settings  # noqa: E402
from episodic.memory.vision import OfflineVisualDescriber  # noqa: E402
from episodic.retrieval.grid_lookers import OfflineLooker  # noqa: E402
from episodic.retrieval.grid_search import locate  # noqa: E402
from episodic.retrieval.video_grid import VideoGrid  # noqa: E402
from episodic.samples import _font, _texture  # noqa: E402

W, H = 640, 360
SIGNS = ["EAST DOCK", "PLATFORM 7", "NORTH GATE", "ROOM 214", "FISH MARKET", "EXIT B"]
EVENT_S = 2.0


class Planted:
    """Textured scenes changing every 10 s, a sign (or a red screen) during [a, a + 2)."""

    def __init__(self, minutes: float, a: float, sign: str | None, seed: int) -> None:
        self.t_start, self.t_end = 0.0, minutes * 60.0
        self.a, self.sign, self.seed = a, sign, seed
        self.frames = 0

    def frame_at(self, t: float) -> np.ndarray:
        self.frames += 1
        if self.a <= t < self.a + EVENT_S:
            if self.sign is None:
                return np.full((H, W, 3), (210, 25, 25), np.uint8)
            img = Image.fromarray(_texture(self.seed + 99, (60, 150, 110), W, H))
            d = ImageDraw.Draw(img)
            d.rectangle((100, 110, 540, 230), fill=(0, 90, 50), outline=(255, 255, 255), width=4)
            d.text((130, 140), self.sign, fill=(255, 255, 255), font=_font(52))
            return np.asarray(img)
        scene = int(t // 10)
        return _texture(self.seed * 1000 + scene, ((scene * 37) % 200 + 30, 120, 160), W, H)


def question_for(sign: str | None) -> str:
    return f"When was the sign for {sign.lower()} on screen?" if sign else "When was the screen red?"


def uniform(source: Planted, frames: int, read: OfflineVisualDescriber, sign: str | None) -> tuple[bool, float]:
    """Uniform sampling at the same budget: does any sampled frame show the event (and can
    the same OCR read it)?"""
    started = time.perf_counter()
    step = (source.t_end - source.t_start) / max(1, frames)
    inside = [source.t_start + (i + 0.5) * step for i in range(frames)]
    inside = [t for t in inside if source.a <= t < source.a + EVENT_S]
    hit = False
    for t in inside:
        if sign is None or sign.split()[0] in read.read_text(source.frame_at(t)).upper():
            hit = True
            break
    return hit, time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--minutes", type=float, nargs="+", default=[1.0, 10.0, 60.0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="Video-RLM workers exploring leads in parallel")
    args = ap.parse_args()
    describer = OfflineVisualDescriber(Settings())
    describer.prepare(ocr=True)
    looker = OfflineLooker.from_describer(describer)
    rng = np.random.default_rng(args.seed)
    print(f"{'minutes':>7} {'kind':>5} {'hit':>6} {'frames med/max':>15} {'wall med s':>10} "
          f"{'uniform hit':>11} {'depth':>5} {'cache hit':>9} {'seeded hit':>10} {'seeded frames':>13} "
          f"{'seeded wall':>11}")
    for minutes in args.minutes:
        for kind in ("text", "colour"):
            hits, frames, walls, depths, uniform_hits = 0, [], [], [], 0
            cache, s_hits, s_frames, s_walls = [], 0, [], []
            for trial in range(args.trials):
                span = minutes * 60.0
                a = float(rng.uniform(0.05 * span, 0.95 * span - EVENT_S))
                sign = SIGNS[trial % len(SIGNS)] if kind == "text" else None
                source = Planted(minutes, a, sign, args.seed * 100 + trial)
                grid = VideoGrid(source)
                started = time.perf_counter()
                report = locate(question_for(sign), grid, looker, workers=args.workers)
                walls.append(time.perf_counter() - started)
                cache.append(report.cache_hit_rate)
                frames.append(report.frames_examined)
                depths.append(report.depth)
                best = report.moments[0] if report.moments else None
                if best is not None and a - 1.0 <= best.t <= a + EVENT_S + 1.0:
                    hits += 1
                hit, _ = uniform(Planted(minutes, a, sign, args.seed * 100 + trial), report.frames_examined,
                                 describer, sign)
                uniform_hits += hit
                lo = max(0.0, min(span - 120.0, a - float(rng.uniform(0.0, 118.0))))
                seeded_grid = VideoGrid(Planted(minutes, a, sign, args.seed * 100 + trial))
                started = time.perf_counter()
                seeded = locate(question_for(sign), seeded_grid, looker, workers=args.workers,
                                seeds=[(lo, min(span, lo + 120.0))])
                s_walls.append(time.perf_counter() - started)
                s_frames.append(seeded.frames_examined)
                first = seeded.moments[0] if seeded.moments else None
                s_hits += first is not None and a - 1.0 <= first.t <= a + EVENT_S + 1.0
            print(f"{minutes:7g} {kind:>5} {hits:>3}/{args.trials:<2} "
                  f"{statistics.median(frames):>7.0f}/{max(frames):<7d} {statistics.median(walls):>10.2f} "
                  f"{uniform_hits:>8}/{args.trials:<2} {max(depths):>5} {statistics.mean(cache):>9.2f} "
                  f"{s_hits:>7}/{args.trials:<2} {statistics.median(s_frames):>13.0f} "
                  f"{statistics.median(s_walls):>11.2f}", flush=True)


if __name__ == "__main__":
    main()
