"""The joint re-listening pass against its time limit (``relisten_pass_max_s``).

Re-listening joins the audio of up to five recalled memories and decodes it in one Whisper pass
(retrieval/joint_hearing.py). faster-whisper decodes a 30 s window and only then hands out its
segments, all at once. This script joins groups of consecutive memories of an ingested store as
re-listening does, decodes each group with the re-listening options (beam search, word times,
one temperature, the limit), and records when each segment arrived. Per group and in total:

- the pass's seconds, the windows it decoded, whether the limit stopped it;
- *late windows*: passes whose window was still decoding when the limit passed;
- *lost before*: the segments a check made between segments (the rule before session 54)
  would have thrown away: everything of a late window after its first segment. The window
  gate (memory/speech._ModelGate) keeps them: it only stops a new window from starting.

The figures depend on the machine: a slower one has more late windows.

    .venv/bin/python benchmarks/bench_qa.py --split dev --seed 4     # makes /tmp/qa/.../data-dev
    .venv/bin/python benchmarks/bench_joint_pass.py --data /tmp/qa/v1-s4-n3-m2.5/data-dev --groups 12
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic.config import load_settings  # noqa: E402
from episodic.pipeline import Components  # noqa: E402
from episodic.retrieval.joint_hearing import Clip, join_clips  # noqa: E402
from episodic.retrieval.relisten import Relistener  # noqa: E402
from episodic.retrieval.snippet_audio import audio_or_none  # noqa: E402

RATE_HZ = 16000


def timed_segments(model: Any, arrivals: list[tuple[float, int]]) -> None:
    """Record (time, window) for each segment the model hands out (benchmark instrumentation:
    the loaded faster-whisper model's ``transcribe`` is wrapped on this instance only)."""
    real = model.transcribe

    def transcribe(*args: Any, **kwargs: Any) -> Any:
        segments, info = real(*args, **kwargs)

        def handed_out() -> Any:
            for seg in segments:
                arrivals.append((time.perf_counter(), int(seg.seek)))
                yield seg

        return handed_out(), info

    model.transcribe = transcribe


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="data directory of an ingested store")
    ap.add_argument("--groups", type=int, default=12, help="groups of memories to decode")
    ap.add_argument("--clips", type=int, default=4, help="memories joined per group")
    ap.add_argument("--limit-s", type=float, default=None, help="the limit (default: relisten_pass_max_s)")
    args = ap.parse_args()
    if not args.data.is_dir():
        ap.error(f"{args.data} is not a directory (ingest a store first, e.g. with bench_qa.py)")
    settings = load_settings(data_dir=args.data)
    limit = settings.relisten_pass_max_s if args.limit_s is None else args.limit_s
    components = Components(settings)
    try:
        listener = Relistener(components, settings)
        recognizer = listener.recognizer()
        arrivals: list[tuple[float, int]] = []
        timed_segments(recognizer._load(), arrivals)
        memories = [m for m in components.store.list_memories() if m.transcript and m.snippets]
        if len(memories) < args.clips:
            ap.error(f"{args.data} holds {len(memories)} memories with speech; need {args.clips}")
        step = max(1, (len(memories) - args.clips) // max(1, args.groups - 1))
        rows = []
        print(f"limit {limit:.2f} s; group: audio s, pass s, windows, segments, late window, lost before, stopped")
        for g in range(args.groups):
            group = memories[g * step : g * step + args.clips]
            if len(group) < args.clips:
                break
            parts = []
            for m in group:
                audio = audio_or_none(m, m.t_start, m.t_end, components.snippets.path_for, "bench")
                if audio is not None and audio.size:
                    parts.append(Clip(m.id, m.t_start, audio))
            if not parts:
                continue
            joined = join_clips(parts, RATE_HZ)
            arrivals.clear()
            t0 = time.perf_counter()
            heard = recognizer.hear(
                joined.audio, RATE_HZ, 0.0, beam_size=settings.relisten_beam_size, temperatures=(0.0,),
                word_timestamps=True, time_limit_s=limit, keep_before_loop=True,
                initial_prompt=group[0].transcript[0].text,
            )
            seconds = time.perf_counter() - t0
            late = next((k for k, (t, _) in enumerate(arrivals) if t - t0 >= limit), None)
            lost = 0 if late is None else sum(1 for _, w in arrivals[late + 1 :] if w == arrivals[late][1])
            windows = len({w for _, w in arrivals})
            rows.append((seconds, late is not None, lost, heard.stopped_at_s is not None))
            print(f"  {g:2d}: {joined.audio.size / RATE_HZ:5.1f} {seconds:5.2f} {windows} {len(arrivals):2d} "
                  f"{'yes' if late is not None else 'no':3s} {lost} {'yes' if heard.stopped_at_s is not None else 'no'}")
        if not rows:
            print("no group decoded")
            return 1
        times = sorted(r[0] for r in rows)
        print(f"passes {len(rows)}: median {statistics.median(times):.2f} s, max {times[-1]:.2f} s; "
              f"late windows {sum(r[1] for r in rows)}; segments a between-segments check would have lost "
              f"{sum(r[2] for r in rows)} (in {sum(r[2] > 0 for r in rows)} passes); stopped by the gate "
              f"{sum(r[3] for r in rows)}")
        return 0
    finally:
        components.close()


if __name__ == "__main__":
    raise SystemExit(main())
