"""Ingest speed, memory and storage on the embedded default.

Generates a 640×360 recording (default 120 s: textured scenes of 6–20 s, a spoken sentence
every ~10 s, or as often as ``--speech-every`` says), ingests it in-process and prints:
  - real-time factor overall (stream seconds per wall second, model loading excluded and
    reported separately) and seconds per stage (decode, segmentation, snippets, key frames,
    vision, asr, embed, replay, store);
  - peak resident memory of the process;
  - stored bytes per stream minute (Milvus Lite directory + snippets);
  - summary grounding: the share of summary content words found in the memory's own
    transcript, on-screen text, visual words and sounds (memory/summary_composer.py).

    .venv/bin/python benchmarks/bench_ingest.py [--seconds 120] [--keep DIR]
        [--summariser composed|model]   # model = the bundled 135M LLM writes summaries (before)
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic import samples  # noqa: E402
from episodic.components import Components
from episodic.config import load_settings  # noqa: E402
from episodic.memory.replay import summariser_mode  # noqa: E402
from episodic.memory.summary_composer import grounded_share  # noqa: E402
from episodic.pipeline import ingest_file  # noqa: E402

SENTENCES = [
    "The red bicycle is parked next to the bakery on the corner.",
    "Please remember that the meeting starts at nine tomorrow morning.",
    "I am putting the blue notebook into the top drawer of the desk.",
    "The delivery van arrived late because of the traffic on the bridge.",
    "We bought apples, bread and cheese at the market this afternoon.",
    "The train to the airport leaves from platform four.",
    "My sister is painting the kitchen wall a bright yellow colour.",
    "Turn left after the post office and walk to the old church.",
    "The dog was sleeping under the table the whole evening.",
    "There is a small crack in the window of the living room.",
    "Our neighbour fixed the broken fence on Saturday.",
    "The library closes early on Sundays during the summer.",
]


def build_recording(path: Path, seconds: float, speech_every_s: float = 10.0) -> samples.Truth:
    scenes, speech, t, i = [], [], 0.0, 0
    lengths = [6, 12, 8, 20, 7, 15, 9, 11, 18, 14]
    while t < seconds:
        d = min(lengths[i % len(lengths)], seconds - t)
        scenes.append(samples.Scene(duration_s=d, seed=100 + i, text=f"GATE {i + 1}" if i % 3 == 0 else ""))
        t += d
        i += 1
    k, t0 = 0, 1.0
    while t0 < seconds - 6:
        speech.append(samples.Speech(t=t0, text=SENTENCES[k % len(SENTENCES)]))
        k, t0 = k + 1, t0 + speech_every_s
    return samples.make_recording(path, scenes, speech)


def dir_bytes(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.exists() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--keep", type=Path, help="keep the data directory here")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--speech-every", type=float, default=10.0,
                    help="seconds from one sentence's start to the next (4: someone talking all the time)")
    ap.add_argument("--summariser", choices=("auto", "composed", "model"), default="auto")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="episodic-bench-"))
    rec = work / "bench.mp4"
    t0 = time.perf_counter()
    build_recording(rec, args.seconds, args.speech_every)
    gen_s = time.perf_counter() - t0
    data = args.keep or work / "data"
    settings = load_settings(data_dir=data, summariser=args.summariser)
    c = Components(settings)
    uses_llm = summariser_mode(settings) == "model"

    t0 = time.perf_counter()
    c.ensure_schema()
    models = [c.embedder, c.describer, c.asr] + ([c.llm] if uses_llm else [])
    for m in models:  # load every model ingest uses before timing it
        if hasattr(m, "prepare"):
            m.prepare()
    load_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    report = ingest_file(rec, "bench", c)
    wall = time.perf_counter() - t0
    memories = {m.id: m for m in c.store.list_memories("bench")}
    shares = [grounded_share(e.summary, memories[e.memory_id]) for e in c.store.list_events("bench")]
    c.close()

    stream_s = report.progress.stream_s
    milvus_b = dir_bytes(Path(settings.resolved_milvus_uri))
    snippet_b = dir_bytes(settings.resolved_snippet_dir)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures = {
        "recording_s": round(stream_s, 1),
        "generate_s": round(gen_s, 1),
        "model_load_s": round(load_s, 1),
        "ingest_wall_s": round(wall, 1),
        "realtime_factor": round(stream_s / wall, 2),
        "summariser": c.llm.model_id if uses_llm else "composed",
        "summary_grounding_mean": round(sum(shares) / max(1, len(shares)), 3),
        "summaries_fully_grounded": f"{sum(x == 1.0 for x in shares)}/{len(shares)}",
        "segments": report.progress.segments,
        "memories": report.progress.memories,
        "stage_seconds": {k: round(v, 2) for k, v in sorted(report.stage_seconds.items())},
        "stage_realtime_factor": {
            k: round(stream_s / v, 1) for k, v in sorted(report.stage_seconds.items()) if v > 0
        },
        "peak_rss_mb": round(peak_mb),
        "milvus_bytes_per_stream_min": round(milvus_b / (stream_s / 60)),
        "snippet_bytes_per_stream_min": round(snippet_b / (stream_s / 60)),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for k, v in figures.items():
            print(f"{k:32s} {v}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
