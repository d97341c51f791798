"""Ask's inspect pathway (issue 15): answers about signs the ingest's key frames never saw.

Generates ``--streams`` recordings of about three minutes (textured scenes, a few spoken lines);
in each, ``--signs`` signs are written over the picture for 2 s without a cut, and ingest runs
with the key-frame rule for a new sign on the same background off (``keyframe_local_change``
1), so no key frame holds them, as no key frame holds a sign too small or too brief for that
rule (the memory does not know them; the script checks and reports it). Every sign gets a
multiple-choice question (its place among two others) and a "when" question. Each question is
asked twice through the in-process service: with the inspect pathway on (the default) and off
(``inspect_enabled = false``). Right = the chosen option; for "when", the first cited piece of
evidence lies within 1 s of the sign. Prints accuracy, the pathway taken, Ask latency (mean,
p95) and the frames examined.

    .venv/bin/python benchmarks/bench_inspect.py [--streams 3] [--signs 2] [--seed 1] [--root DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic import samples  # noqa: E402
from episodic.components import Components  # noqa: E402
from episodic.config import load_settings  # noqa: E402
from episodic.core.query import AskRequest, Pathway, Scope  # noqa: E402
from episodic.pipeline import ingest_file  # noqa: E402
from episodic.services.qa import MemoryQA  # noqa: E402

PLACES = ["EAST DOCK", "NORTH GATE", "FISH MARKET", "WEST PIER", "OLD MILL", "RIVER ROAD", "CAR PARK",
          "BUS STOP", "MAIN HALL", "SOUTH BEACH", "TOWN SQUARE", "BOAT YARD"]
LINES = ["We are walking along the water this morning.", "The weather is a bit grey today.",
         "Let's see what is around the next corner.", "There are a lot of people out already."]


@dataclass(frozen=True)
class Sign:
    stream_id: str
    text: str
    t: float  # on screen from t to t + 2


def make_stream(root: Path, stream_id: str, rng: np.random.Generator, places: list[str]) -> list[Sign]:
    scenes: list[samples.Scene] = []
    signs: list[Sign] = []
    t = 0.0
    for i, place in enumerate(places):
        seed = int(rng.integers(0, 10_000))
        tint = tuple(int(x) for x in rng.integers(40, 220, 3))
        lead = float(rng.uniform(12.0, 40.0))
        scenes += [samples.Scene(duration_s=lead, seed=seed, tint=tint),  # type: ignore[arg-type]
                   samples.Scene(duration_s=2.0, seed=seed, tint=tint, text=place),  # type: ignore[arg-type]
                   samples.Scene(duration_s=float(rng.uniform(15.0, 40.0)), seed=seed, tint=tint)]  # type: ignore[arg-type]
        signs.append(Sign(stream_id, place, t + lead))
        t += lead + 2.0 + scenes[-1].duration_s
        if i == len(places) - 1:
            scenes.append(samples.Scene(duration_s=20.0, seed=seed + 1, tint=tint))  # type: ignore[arg-type]
    speech = [samples.Speech(t=2.0 + 35.0 * j, text=LINES[j % len(LINES)]) for j in range(int(t // 35.0))]
    samples.make_recording(root / f"{stream_id}.mp4", scenes, speech, fps=10)
    return signs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streams", type=int, default=3)
    ap.add_argument("--signs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--root", type=Path, default=Path("/tmp/episodic-bench-inspect"))
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    root = args.root / f"s{args.seed}-n{args.streams}-k{args.signs}"
    root.mkdir(parents=True, exist_ok=True)
    components = Components(load_settings(data_dir=root / "data", keyframe_local_change=1.0))
    places = list(rng.permutation(PLACES))
    signs: list[Sign] = []
    for i in range(args.streams):
        sid = f"walk{i + 1}"
        chosen = [str(p) for p in places[i * args.signs:(i + 1) * args.signs]]
        made = make_stream(root, sid, rng, chosen)
        signs += made
        if not components.store.list_memories(stream_id=sid, with_vectors=False):
            started = time.perf_counter()
            ingest_file(root / f"{sid}.mp4", sid, components)
            print(f"ingested {sid} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    known = sum(any(s.text.split()[0] in m.ocr_text.upper() for m in components.store.list_memories(
        stream_id=s.stream_id, with_vectors=False)) for s in signs)
    print(f"{len(signs)} signs in {args.streams} streams; the memory read {known} of them at ingest")
    base = components.settings
    rows: dict[str, dict[str, list]] = {}
    for mode, enabled in (("inspect on", True), ("inspect off", False)):
        components.settings = base.replace(inspect_enabled=enabled)
        qa = MemoryQA(components, warm_after_request=False)
        qa.prepare()
        stats = rows.setdefault(mode, {"mc": [], "when": [], "latency": [], "inspect": [], "frames": []})
        for s in signs:
            others = [p for p in PLACES if p != s.text]
            picks = [str(x) for x in rng.choice(others, 2, replace=False)]
            options = [s.text.title(), *[p.title() for p in picks]]
            order = list(rng.permutation(3))
            options = [options[j] for j in order]
            right = order.index(0)
            for kind, req in (("mc", AskRequest("Which place was named on the sign?", tuple(options),
                                                Scope((s.stream_id,)))),
                              ("when", AskRequest(f"When was the sign for {s.text.lower()} on screen?",
                                                  scope=Scope((s.stream_id,))))):
                started = time.perf_counter()
                res, trace = qa.ask_traced(replace(req))
                stats["latency"].append(time.perf_counter() - started)
                stats["inspect"].append(res.pathway is Pathway.INSPECT)
                stats["frames"].append(int(trace.notes.get("inspect", {}).get("frames_examined", 0)))
                if kind == "mc":
                    stats["mc"].append(res.choice_index == right)
                else:
                    first = res.evidence[0] if res.evidence else None
                    stats["when"].append(first is not None and s.t - 1.0 <= first.t_start <= s.t + 3.0
                                         and first.t_end - first.t_start <= 4.0)
    print(f"{'':12} {'multiple choice':>15} {'when (±1 s)':>12} {'inspect taken':>13} "
          f"{'Ask mean s':>10} {'Ask p95 s':>9} {'frames med':>10}")
    for mode, st in rows.items():
        lat = sorted(st["latency"])
        p95 = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))]
        looked = [f for f in st["frames"] if f]
        print(f"{mode:12} {sum(st['mc']):>9}/{len(st['mc']):<5} {sum(st['when']):>6}/{len(st['when']):<5} "
              f"{sum(st['inspect']):>7}/{len(st['inspect']):<5} {statistics.mean(lat):>10.2f} {p95:>9.2f} "
              f"{statistics.median(looked) if looked else 0:>10.0f}")
    components.close()


if __name__ == "__main__":
    main()
