"""Word error rate of a segment heard alone and heard after the stream's audio before it.

Ingest transcribes one segment at a time (memory/encoder.py). This bench takes recordings of
a generated QA set (`episodic evaluate --build-qa`, or `benchmarks/bench_qa.py`, which leaves
them under /tmp/qa/...) and the segment boundaries its ingest chose, and transcribes every
segment again, with the same recogniser and options as ingest:

* alone (``asr_context_s = 0``, as before session 23);
* after up to N seconds of the audio before it, through memory/speech_context.py exactly as
  ingest does, optionally starting afresh every ``--run-s`` seconds (ingest's checkpoints,
  60 s, which the runner bridges by reading the stored audio back), and before up to
  ``--after`` seconds of the audio after it (from the next segment, as the segmenter gives it;
  none for the last segment of a run);
* consecutive segments heard together (``--window W``: joined until a group spans W seconds,
  never across a run), as ingest does with ``asr_window_s`` (0: each segment alone);
* the whole recording at once (faster-whisper's own long-form pass), for reference.

Each spoken sentence of the script is scored against the words placed in its time (± 0.5 s).

    .venv/bin/python benchmarks/bench_asr_context.py --qa /tmp/qa/v1-s5-n3-m2.5/dev \\
        --data /tmp/qa/v1-s5-n3-m2.5/data-dev --context 0 10 30 [--window 0 30 60]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_asr import word_errors  # noqa: E402

from episodic.components import Components  # noqa: E402
from episodic.config import load_settings  # noqa: E402
from episodic.memory.speech_context import RecentAudio, hear  # noqa: E402

RATE_HZ = 16000


def load_audio(path: Path) -> np.ndarray:
    """The recording's audio, mono float32 at 16 kHz."""
    import av

    with av.open(str(path)) as c:
        resampler = av.AudioResampler(format="flt", layout="mono", rate=RATE_HZ)
        parts = [g.to_ndarray().reshape(-1) for f in c.decode(c.streams.audio[0]) for g in resampler.resample(f)]
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


def score(script: dict, words: list[tuple[float, float, str]]) -> tuple[int, int]:
    errors = total = 0
    for beat in script["beats"]:
        if not beat["said"]:
            continue
        t0, t1 = beat["speech_t"]
        heard = " ".join(w[2] for w in words if t0 - 0.5 <= (w[0] + w[1]) / 2 <= t1 + 0.5)
        e, n = word_errors(beat["said"], heard)
        errors, total = errors + e, total + n
    return errors, total


def grouped(spans: list[tuple[float, float]], window_s: float, run_s: float) -> list[tuple[float, float]]:
    """Consecutive segments joined until a group holds ``window_s`` seconds (never across a run)."""
    out: list[tuple[float, float]] = []
    for a, b in spans:
        if out and out[-1][1] - out[-1][0] < window_s and (not run_s or int(a // run_s) == int(out[-1][0] // run_s)):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qa", type=Path, required=True, help="folder with script.json and the recordings")
    ap.add_argument("--data", type=Path, required=True, help="data directory its ingest wrote (segment boundaries)")
    ap.add_argument("--context", type=float, nargs="+", default=[0.0, 30.0], help="seconds of audio before")
    ap.add_argument("--speech-cap", type=float, default=None,
                    help="at most this much speech in the context (default: asr_context_speech_s)")
    ap.add_argument("--after", type=float, nargs="+", default=None,
                    help="seconds of audio after each segment heard with it (default: asr_context_after_s)")
    ap.add_argument("--run-s", type=float, default=60.0, help="start afresh every this many seconds (0: never)")
    ap.add_argument("--window", type=float, nargs="+", default=None,
                    help="hear consecutive segments together until they span this many seconds "
                         "(default: asr_window_s; 0: each alone)")
    ap.add_argument("--long-form", action="store_true", help="also transcribe each recording whole")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    components = Components(load_settings(data_dir=args.data))
    if args.speech_cap is None:
        args.speech_cap = components.settings.asr_context_speech_s
    if args.after is None:
        args.after = [components.settings.asr_context_after_s]
    if args.window is None:
        args.window = [components.settings.asr_window_s]
    asr = components.asr
    scripts = json.loads((args.qa / "script.json").read_text())
    audio = {s["stream_id"]: load_audio(args.qa / s["path"]) for s in scripts}
    bounds = {
        s["stream_id"]: sorted(
            {(round(a, 3), round(b, 3)) for m in components.store.list_memories(s["stream_id"])
             for a, b in m.metadata.get("segments", [[m.t_start, m.t_end]])}
        )
        for s in scripts
    }
    rows = []
    for context_s, after_s, window_s in [(c, a, w) for c in args.context for a in args.after for w in args.window]:
        errors = total = 0
        spent = 0.0
        for s in scripts:
            x = audio[s["stream_id"]]
            words: list[tuple[float, float, str]] = []
            recent = RecentAudio(context_s, args.speech_cap)
            run = -1
            spans = grouped(bounds[s["stream_id"]], window_s, args.run_s)
            for k, (a, b) in enumerate(spans):
                if args.run_s and int(a // args.run_s) != run:
                    run = int(a // args.run_s)
                    recent = RecentAudio(context_s, args.speech_cap)
                    lo = max(0.0, a - context_s)
                    said = [(w[0], w[1]) for w in words if w[0] >= lo]
                    recent.add(lo, x[int(lo * RATE_HZ) : int(a * RATE_HZ)], RATE_HZ, said)  # the read-back
                last_of_run = k + 1 == len(spans) or (args.run_s and int(spans[k + 1][0] // args.run_s) != run)
                until = b if last_of_run else min(b + after_s, spans[k + 1][1])
                started = time.perf_counter()
                pieces = hear(asr, x[int(a * RATE_HZ) : int(b * RATE_HZ)], RATE_HZ, a, recent,
                              after=x[int(b * RATE_HZ) : int(until * RATE_HZ)])
                spent += time.perf_counter() - started
                words += [w for p in pieces for w in p.words]
            e, n = score(s, words)
            errors, total = errors + e, total + n
        rows.append({"context_s": context_s, "speech_cap_s": args.speech_cap, "after_s": after_s, "window_s": window_s,
                     "wer": round(errors / max(1, total), 3), "words": total, "asr_s": round(spent, 1)})
        print(f"context {context_s:>4.0f} s (speech ≤ {args.speech_cap:g} s), after {after_s:g} s: "
              f"window {window_s:g} s: WER {rows[-1]['wer']:.3f} ({total} words), ASR {spent:.1f} s", file=sys.stderr)
    if args.long_form:
        errors = total = 0
        spent = 0.0
        for s in scripts:
            started = time.perf_counter()
            pieces = asr.transcribe(audio[s["stream_id"]], RATE_HZ, 0.0)
            spent += time.perf_counter() - started
            e, n = score(s, [w for p in pieces for w in p.words])
            errors, total = errors + e, total + n
        rows.append({"context_s": "whole", "wer": round(errors / max(1, total), 3), "words": total,
                     "asr_s": round(spent, 1)})
        print(f"whole recording: WER {rows[-1]['wer']:.3f}, ASR {spent:.1f} s", file=sys.stderr)
    seconds = sum(x.size for x in audio.values()) / RATE_HZ
    print(json.dumps({"recordings_s": round(seconds, 1), "run_s": args.run_s, "rows": rows}) if args.json
          else "\n".join(f"{r['context_s']}\t{r.get('after_s', '')}\t{r['wer']}\t{r['asr_s']}" for r in rows))


if __name__ == "__main__":
    main()
