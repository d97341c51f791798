"""How soon a live source that dropped is read again once it is back (issue 13, item 5).

A real HTTP server on loopback streams MPEG-TS without a length (a camera's HTTP stream as
FFmpeg sees it), drops the connection, refuses connections for AWAY seconds and comes back
(tests/live_http.py). The push's reader (:class:`stream.reconnect.LiveChunks`, the code
`episodic push` runs) reconnects with the configured backoff. Printed per outage length:

- *back → reading*: from the moment the server listens again to the first chunk of the new
  connection (backoff wait + connect + probe): what the policy costs after the source returns;
- the recorded gap (``gap_before_s``) against the real outage;
- attempts.

    .venv/bin/python benchmarks/bench_reconnect.py [--away 1 3 10] [--first-delay 1] [--max-delay 30]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic import samples  # noqa: E402
from episodic.config import Settings  # noqa: E402
from episodic.stream.chunks import Chunker  # noqa: E402
from episodic.stream.reconnect import LiveChunks  # noqa: E402
from tests.live_http import Act, DroppingServer  # noqa: E402


def one(recording: Path, away_s: float, settings: Settings) -> dict[str, float]:
    with DroppingServer([Act(recording, 0.5, away_s=away_s), Act(recording, 1.0)]) as server:
        live = LiveChunks(lambda **k: Chunker(server.url, "bench", settings, timeout=5.0, **k), settings)
        reading_again = None
        gap = 0.0
        chunks = iter(live)
        for chunk in chunks:
            if chunk.gap_before_s > 0:
                reading_again, gap = time.monotonic(), chunk.gap_before_s
                break
        live.close()
        back = server.up_since[1] if len(server.up_since) > 1 else float("nan")
        down = server.down_since[0] if server.down_since else float("nan")
    return {
        "away_s": away_s,
        "outage_s": back - down,
        "back_to_reading_s": (reading_again - back) if reading_again else float("nan"),
        "recorded_gap_s": gap,
        "attempts": live.outages[0].attempts if live.outages else 0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--away", type=float, nargs="+", default=[1.0, 3.0, 10.0])
    ap.add_argument("--first-delay", type=float, default=Settings.reconnect_first_delay_s)
    ap.add_argument("--max-delay", type=float, default=Settings.reconnect_max_delay_s)
    args = ap.parse_args()
    settings = Settings().replace(reconnect_first_delay_s=args.first_delay, reconnect_max_delay_s=args.max_delay)
    with tempfile.TemporaryDirectory() as tmp:
        recording = Path(tmp) / "live.ts"
        samples.make_recording(recording, [samples.Scene(8, seed=1)], [samples.Speech(1.0, "The gate is open.")])
        print(f"backoff: first {args.first_delay:g} s, doubling, at most {args.max_delay:g} s")
        print("| server away (s) | real outage (s) | back → reading (s) | recorded gap (s) | attempts |")
        print("|---:|---:|---:|---:|---:|")
        for away in args.away:
            r = one(recording, away, settings)
            print(f"| {r['away_s']:g} | {r['outage_s']:.2f} | {r['back_to_reading_s']:.2f} | "
                  f"{r['recorded_gap_s']:.2f} | {r['attempts']} |")


if __name__ == "__main__":
    main()
