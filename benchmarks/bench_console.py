"""The web console with a long stream: first paint, and how long until the timeline shows every
event of a ``--events`` (1,000) event stream.

A synthetic store is written directly into Milvus Lite (no models): one stream of ``--events``
memories, 8 s each, with the production shapes (384-d text vectors, 1280-d frame features), an
event each with a one-sentence summary, and a small JPEG thumbnail per segment in the snippet
directory. `episodic console --no-browser --port 0` serves it (no API keys: loopback), and
Debian's headless chromium (/usr/bin/chromium through /usr/bin/chromedriver; nothing is
downloaded) opens the console ``--runs`` times with a cold cache. Measured in the page:

  first paint            performance.getEntriesByType('paint'): first-paint, first-contentful-paint
  timeline rendered      navigation start → every event card in the DOM (the console's
                         ``episodic:timeline-rendered`` mark: all pages of /v1/streams/{id}/events
                         fetched, the cards built in a DocumentFragment, one frame painted)
  zoom                   one click on the zoom-in button: cards shown/hidden, axis redrawn (ms)
  thumbnails             the first card's thumbnail loaded (lazy: only cards near the screen)

    .venv/bin/python benchmarks/bench_console.py [--events 1000] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TEXT_DIM, FEATURE_DIM = 384, 1280
SEGMENT_S = 8.0
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
THINGS = ["a delivery van", "two cyclists", "a man with a ladder", "a red umbrella", "the north gate",
          "a forklift", "a woman with a dog", "a bus", "a street sweeper", "the café's awning"]
SAID = ["the order is late again", "we close at six tonight", "the train leaves from platform seven",
        "put the boxes by the door", "has anyone seen the keys", "the delivery is here"]


def build(data: Path, n: int, stream_id: str = "north-bridge") -> None:
    from PIL import Image, ImageDraw

    from episodic.config import Settings
    from episodic.core.records import (
        EmbeddingEntry,
        FrameObservation,
        ShortTermMemory,
        SnippetRef,
        StreamInfo,
        ThetaEvent,
        TranscriptPiece,
        event_id,
        memory_id,
        normalise,
    )
    from episodic.memory.milvus_store import MilvusStore
    from episodic.memory.snippet_store import FileSnippetStore

    rng = np.random.default_rng(7)
    settings = Settings(data_dir=data)
    snippets = FileSnippetStore(settings)
    memories, events = [], []
    for i in range(n):
        t0 = i * SEGMENT_S
        mid = memory_id(stream_id, t0)
        thing, said = THINGS[i % len(THINGS)], SAID[i % len(SAID)]
        img = Image.new("RGB", (160, 90), tuple(int(c) for c in rng.integers(40, 220, 3)))
        ImageDraw.Draw(img).text((8, 36), f"{stream_id} #{i}", fill=(255, 255, 255))
        jpeg = io.BytesIO()
        img.save(jpeg, "JPEG", quality=70)
        vector = normalise(rng.standard_normal(TEXT_DIM).astype(np.float32))
        m = ShortTermMemory(
            id=mid, stream_id=stream_id, t_start=t0, t_end=t0 + SEGMENT_S, vector=vector,
            embeddings=[EmbeddingEntry(t0 + 1, t0 + 3, "speech", said, vector)],
            transcript=[TranscriptPiece(t0 + 1, t0 + 3, f"Someone says {said}.")],
            frames=[FrameObservation(t0, [], [], "", f"a street; {thing}")],
            frame_features=[(t0, normalise(rng.standard_normal(FEATURE_DIM).astype(np.float32)))],
            snippets=[SnippetRef(snippets.uri_for(snippets.root / stream_id / f"{mid}.s.mp4"), t0, t0 + SEGMENT_S)],
            metadata={"ingested_at": time.time()},
        )
        m.thumbnail_uri = snippets.put_thumbnail(stream_id, mid, jpeg.getvalue())
        memories.append(m)
        events.append(ThetaEvent(
            id=event_id(stream_id, t0), stream_id=stream_id, memory_id=mid, t_start=t0, t_end=t0 + SEGMENT_S,
            summary=f"Someone says \"{said}\". Seen: {thing}.", summary_vector=vector, vector=vector,
            visual_context=[thing], audio_context=[said], metadata={},
        ))
    with MilvusStore(settings) as store:
        store.ensure_schema(TEXT_DIM, FEATURE_DIM, models={})
        for k in range(0, n, 250):
            store.upsert_memories(memories[k:k + 250])
            store.upsert_events(events[k:k + 250])
        store.upsert_stream(StreamInfo(stream_id, "synthetic", n * SEGMENT_S, n, n, time.time(), {"complete": True}))
        store.flush()


def serve(data: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "episodic.cli", "console", "--no-browser", "--port", "0", "--data", str(data)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("console at "):
            return proc, line.split("console at ", 1)[1].strip().rstrip("/")
    proc.kill()
    raise SystemExit(f"episodic console did not start (exit {proc.poll()})")


def browser() -> Any:
    os.environ.setdefault("SE_OFFLINE", "true")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--mute-audio", "--no-first-run",
                "--disable-background-networking", "--disable-application-cache", "--disk-cache-size=1"):
        opts.add_argument(arg)
    d = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=opts)
    d.set_window_size(1400, 1000)
    return d


def measure(d: Any, url: str, n: int) -> dict[str, float]:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    d.execute_cdp_cmd("Network.enable", {})
    d.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    d.get("about:blank")
    d.get(url + "/")
    try:
        WebDriverWait(d, 120, poll_frequency=0.05).until(
            lambda _d: d.execute_script("return performance.getEntriesByName('episodic:timeline-rendered').length > 0"))
    except TimeoutException:
        status = d.execute_script("return [document.getElementById('streams').textContent, "
                                  "document.getElementById('timeline-status').textContent]")
        raise SystemExit(f"the timeline did not render in 120 s: {status}; browser log: {d.get_log('browser')}") from None
    cards = d.execute_script("return document.querySelectorAll('#cards .card').length")
    if cards != n:
        raise SystemExit(f"the timeline shows {cards} cards, expected {n}")
    WebDriverWait(d, 30, poll_frequency=0.05).until(
        lambda _d: d.execute_script("const i = document.querySelector('#cards img'); return i && i.complete && i.naturalWidth > 0"))
    out = d.execute_script("""
        const p = Object.fromEntries(performance.getEntriesByType('paint').map(e => [e.name, e.startTime]));
        const nav = performance.getEntriesByType('navigation')[0];
        const res = performance.getEntriesByType('resource');
        const img = res.filter(r => r.name.includes('/thumbnail'))[0];
        const listed = res.filter(r => r.name.includes('/v1/streams?') || r.name.endsWith('/v1/streams'))[0];
        const pages = res.filter(r => r.name.includes('/events'));
        return {first_paint_ms: p['first-paint'], first_contentful_paint_ms: p['first-contentful-paint'],
                dom_content_loaded_ms: nav.domContentLoadedEventEnd,
                timeline_rendered_ms: performance.getEntriesByName('episodic:timeline-rendered')[0].startTime,
                events_fetch_and_build_ms: window.__episodicTimeline.ms,
                first_thumbnail_ms: img ? img.responseEnd : null,
                streams_listed_ms: listed ? listed.responseEnd : null,
                last_events_page_ms: pages.length ? pages[pages.length - 1].responseEnd : null,
                events_pages: pages.length};
    """)
    out["zoom_click_ms"] = d.execute_script(
        "const t = performance.now(); document.getElementById('zoom-in').click(); return performance.now() - t;")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        raise SystemExit("needs /usr/bin/chromium and /usr/bin/chromedriver (apt-get install chromium chromium-driver)")
    with tempfile.TemporaryDirectory(prefix="bench-console-") as tmp:
        data = Path(tmp) / "data"
        t = time.perf_counter()
        build(data, args.events)
        built_s = time.perf_counter() - t
        proc, url = serve(data)
        d = browser()
        try:
            runs = [measure(d, url, args.events) for _ in range(args.runs)]
        finally:
            d.quit()
            proc.terminate()
            proc.wait(timeout=30)
    keys = list(runs[0])
    median = {k: round(statistics.median(r[k] for r in runs if r[k] is not None), 1) for k in keys
              if any(r[k] is not None for r in runs)}
    report = {"events": args.events, "runs": args.runs, "store_build_s": round(built_s, 1), "median": median,
              "all": [{k: (round(v, 1) if isinstance(v, float) else v) for k, v in r.items()} for r in runs],
              "machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "browser": "chromium --headless=new"}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{args.events} events, {args.runs} cold loads (median), headless chromium, {report['machine']}:")
    labels = {"first_paint_ms": "first paint", "first_contentful_paint_ms": "first contentful paint",
              "dom_content_loaded_ms": "DOMContentLoaded", "timeline_rendered_ms": "timeline rendered (all cards)",
              "events_fetch_and_build_ms": "  of which: events fetched + cards built",
              "streams_listed_ms": "  /v1/streams answered",
              "last_events_page_ms": "  last page of events answered",
              "first_thumbnail_ms": "first thumbnail loaded", "zoom_click_ms": "zoom in (one click)"}
    for k, label in labels.items():
        if k in median:
            print(f"  {label:<42} {median[k]:>8.1f} ms")


if __name__ == "__main__":
    main()
