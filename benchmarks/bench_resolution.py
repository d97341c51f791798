"""Ingest speed and peak memory by resolution (issue 13, item 2).

Generates one clip per resolution with PyAV (x264, the encoder's default 250-frame GOP as
phones and cameras write it, moving textured content with a tone), ingests each with the real
CLI in a fresh process into a fresh store, and prints the real-time factor (stream seconds /
wall seconds, models loaded included) and the process's peak resident memory (``wait4``).

    .venv/bin/python benchmarks/bench_resolution.py [--seconds 60] [--only 1080p60,4k30] [--json]
    .venv/bin/python benchmarks/bench_resolution.py --push 262144   # push's chunking, long GOPs re-encoded

Timings are medians of ``--runs`` runs; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import av
import numpy as np

SIZES = {
    "360p30": (640, 360, 30),
    "720p30": (1280, 720, 30),
    "1080p60": (1920, 1080, 60),
    "portrait1080p30": (1080, 1920, 30),
    "4k30": (3840, 2160, 30),
    "4k60": (3840, 2160, 60),
}


def make_clip(path: Path, width: int, height: int, fps: int, seconds: float) -> None:
    rng = np.random.default_rng(0)
    tile = rng.integers(0, 255, (height // 16 + 1, width // 16 + 1, 3), dtype=np.uint8)
    base = np.kron(tile, np.ones((16, 16, 1), np.uint8))[:height, :width]
    with av.open(str(path), "w") as out:
        v = out.add_stream("libx264", rate=fps, options={"preset": "veryfast"})
        v.width, v.height, v.pix_fmt = width, height, "yuv420p"
        a = out.add_stream("aac", rate=48000)
        n = int(seconds * fps)
        for i in range(n):
            img = np.roll(base, i * 3, axis=1)
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            frame.pts = i
            for p in v.encode(frame):
                out.mux(p)
        t = np.arange(int(seconds * 48000)) / 48000.0
        tone = (0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32)
        for k in range(0, tone.size, 1024):
            chunk = tone[k : k + 1024]
            af = av.AudioFrame.from_ndarray(chunk[None, :], format="flt", layout="mono")
            af.sample_rate, af.pts = 48000, k
            for p in a.encode(af):
                out.mux(p)
        for s in (v, a):
            for p in s.encode():
                out.mux(p)


def ingest_once(path: Path) -> tuple[float, float, float]:
    """(stream seconds, wall seconds, peak MB) of one `episodic ingest` in a fresh store."""
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "EPISODIC_DATA": data}
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "episodic.cli", "ingest", str(path), "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        out = proc.stdout.read() if proc.stdout else b""
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"ingest of {path} failed")
        (job,) = json.loads(out)["ingested"]
        return float(job["stream_s"]), wall, usage.ru_maxrss / 1024


def chunk_once(path: Path, chunk_max_bytes: int) -> tuple[float, float, int, bool]:
    """(stream seconds, wall seconds, chunks, re-encoded) of what `episodic push` does before
    Kafka: cutting the clip into chunks of at most ``chunk_max_bytes`` (re-encoding the video
    when a keyframe-to-keyframe stretch is bigger)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from episodic.config import Settings
    from episodic.stream.chunks import Chunker

    settings = Settings(chunk_max_bytes=chunk_max_bytes)
    started = time.perf_counter()
    with Chunker(str(path), "bench", settings) as chunker:
        chunks = list(chunker)
        reencoded = any("re-encoding" in w for w in chunker.warnings)
    return chunks[-1].t_end, time.perf_counter() - started, len(chunks), reencoded


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0, help="clip length (models load once per ingest: short clips measure start-up)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated subset of " + ", ".join(SIZES))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--push", type=int, default=0, metavar="CHUNK_MAX_BYTES",
                    help="measure push's chunking (re-encoding a long GOP over this many bytes) instead of ingest")
    args = ap.parse_args()
    wanted = [k for k in SIZES if not args.only or k in args.only.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in wanted:
            w, h, fps = SIZES[name]
            clip = Path(tmp) / f"{name}.mp4"
            make_clip(clip, w, h, fps, args.seconds)
            if args.push:
                stream_s, wall, n, reencoded = min((chunk_once(clip, args.push) for _ in range(max(1, args.runs))),
                                                   key=lambda r: r[1])
                rows.append({"clip": name, "stream_s": round(stream_s, 1), "wall_s": round(wall, 1),
                             "realtime_factor": round(stream_s / wall, 2), "chunks": n, "reencoded": reencoded})
                if not args.json:
                    print(f"{name:>16} {w}x{h}@{fps}: push chunking {stream_s:.1f} s in {wall:.1f} s = "
                          f"{stream_s / wall:.2f}x real time, {n} chunks"
                          + (", video re-encoded" if reencoded else ""), flush=True)
                continue
            runs = [ingest_once(clip) for _ in range(max(1, args.runs))]
            stream_s = runs[0][0]
            wall = statistics.median(r[1] for r in runs)
            peak = max(r[2] for r in runs)
            rows.append({"clip": name, "size": f"{w}x{h}", "fps": fps, "stream_s": round(stream_s, 1),
                         "wall_s": round(wall, 1), "realtime_factor": round(stream_s / wall, 2),
                         "peak_mb": round(peak)})
            if not args.json:
                print(f"{name:>16} {w}x{h}@{fps}: {stream_s:.1f} s in {wall:.1f} s "
                      f"= {stream_s / wall:.2f}x real time, peak {peak:.0f} MB", flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
