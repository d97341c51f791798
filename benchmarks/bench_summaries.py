"""The day at a glance (issue 17): what the summary windows cost to keep up, and whether a
SUMMARY question about a window is answered with that window's facts.

Everything runs over generated memory (:mod:`episodic.glance_set`: each 10-minute window has its
own theme, person, sign and sound), written straight into the store. The overviews and the
questions use the configured text embedder (MiniLM by default), as at ingest; so do the records
of ``qa`` (the baseline searches them), while ``refresh`` gives its day of records seeded random
vectors (their values do not matter there, and embedding 8640 memories would dominate).

``refresh``  A stream grown to ``--hours`` (1,6,24 by default). At each length one more minute
             arrives and the checkpoint's refresh runs twice: the one in memory/overview.py
             (recompose the stretch that grew from its memories, merge the windows and the
             stream overview from the stretches) and the previous one, reproduced here (read
             every memory of the stream, recompose the stretch and the stream overview from
             them; not written). Reported: memories read and milliseconds per checkpoint, and
             the full refresh at the stream's end (``since_s`` 0).
``qa``       An hour stored a minute at a time with a refresh per checkpoint; questions about
             each 10-minute window, the first 20 minutes, the last 10 minutes and the whole
             hour. An answer is right when it names every person and sign of the windows asked
             about and none of the others, and its first citation is the window (10m, 1h or
             merged) the time covers. ``--baseline`` also asks them with the summary windows
             switched off (the usual top-k events path and the configured model).

    .venv/bin/python benchmarks/bench_summaries.py [--only refresh,qa] [--hours 1,6,24]
        [--store milvus|memory] [--baseline] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic.components import Components  # noqa: E402
from episodic.config import load_settings  # noqa: E402
from episodic.core.query import AskRequest  # noqa: E402
from episodic.core.records import StreamInfo, overview_id  # noqa: E402
from episodic.glance_set import SEGMENT_S, WINDOW_S, glance_records, glance_window  # noqa: E402
from episodic.memory.overview import compose_overview  # noqa: E402
from episodic.memory.overview_windows import (  # noqa: E402
    STREAM_MEMORIES_MAX,
    refresh_overviews,
    stretch_starts,
    window_overview_id,
)

STRETCH_S = 600.0


class SeededEmbedder:
    """Unit vectors seeded by the text: stand-ins for the records' vectors."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.model_id = f"seeded-{dim}"

    def embed_texts(self, texts: list[str]) -> np.ndarray:
        out = np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim) for t in texts])
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


class Counting:
    """Wraps a store, counting the memories its listings return."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.memories_read = 0

    def list_memories(self, *args: Any, **kwargs: Any) -> Any:
        found = self._store.list_memories(*args, **kwargs)
        self.memories_read += len(found)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _components(store: str, root: Path) -> Components:
    settings = load_settings(data_dir=root, store=store)
    c = Components(settings)
    dim = int(c.embedder.embed_texts(["warm up"]).shape[1])
    c.store.ensure_schema(dim, 4, models={"embedder": c.embedder.model_id})
    return c


def _store(c: Components, fake: SeededEmbedder, sid: str, t0: float, t1: float, step_s: float = 3600.0) -> None:
    for a in np.arange(t0, t1, step_s):
        memories, events, _ = glance_records(fake, sid, float(a), float(min(a + step_s, t1)))
        c.store.upsert_memories(memories)
        c.store.upsert_events(events)


def legacy_refresh(store: Any, embedder: Any, sid: str, since_s: float) -> int:
    """The checkpoint refresh before issue 17: every memory of the stream read, the stretches
    from since_s and the stream overview composed from them and written (under another
    stream id, so the stream's own overviews stay as they are)."""
    memories = store.list_memories(sid, limit=STREAM_MEMORIES_MAX)
    end = max(m.t_end for m in memories)
    aside = f"{sid}-legacy"
    made = []
    for start in stretch_starts(0.0, end, STRETCH_S):
        inside = [m for m in memories if start <= m.t_start < start + STRETCH_S]
        if inside and start + STRETCH_S > since_s:
            made.append(compose_overview(aside, inside, embedder, stretch_start=start))
    made.append(compose_overview(aside, memories, embedder))
    store.upsert_overviews(made)
    return len(made)


def bench_refresh(c: Components, hours: list[float], repeat: int) -> list[dict[str, Any]]:
    fake = SeededEmbedder(int(c.embedder.embed_texts(["x"]).shape[1]))
    sid, rows, have = "day-cam", [], 0.0
    counting = Counting(c.store)
    for h in sorted(hours):
        end = h * 3600.0
        _store(c, fake, sid, have, end)
        started = time.perf_counter()
        refresh_overviews(c.store, c.embedder, sid, STRETCH_S)  # the stream's end: everything
        full_s = time.perf_counter() - started
        # one more minute arrives, then its checkpoint
        _store(c, fake, sid, end, end + 60.0, step_s=60.0)
        have = end + 60.0
        new_ms, old_ms = [], []
        for _ in range(repeat):
            counting.memories_read = 0
            started = time.perf_counter()
            refresh_overviews(counting, c.embedder, sid, STRETCH_S, since_s=end)
            new_ms.append((time.perf_counter() - started) * 1000)
            new_read = counting.memories_read
            counting.memories_read = 0
            started = time.perf_counter()
            legacy_refresh(counting, c.embedder, sid, end)
            old_ms.append((time.perf_counter() - started) * 1000)
            old_read = counting.memories_read
        rows.append({"stream_hours": h, "memories": int(have // SEGMENT_S),
                     "checkpoint_new_ms": round(float(np.median(new_ms)), 1), "checkpoint_new_read": new_read,
                     "checkpoint_old_ms": round(float(np.median(old_ms)), 1), "checkpoint_old_read": old_read,
                     "stream_end_full_refresh_s": round(full_s, 2),
                     "overviews_stored": len(c.store.list_overviews(sid))})
        print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def _questions() -> list[tuple[str, list[int], str]]:
    """(question, windows it is about, the id its first citation must have; "" = merged)."""
    sid = "cam2"
    out = [(f"What happened between minute {10 * k} and {10 * k + 10} on camera 2?", [k], overview_id(sid, k * WINDOW_S))
           for k in range(6)]
    out += [
        ("Summarise the first 20 minutes of cam2.", [0, 1], ""),
        ("What happened in the last 10 minutes on cam2?", [5], overview_id(sid, 5 * WINDOW_S)),
        ("Summarise the last hour of stream cam2.", list(range(6)), window_overview_id(sid, 0.0, 3600.0)),
    ]
    return out


def _judge(answer: str, evidence: list[Any], about: list[int], want_id: str) -> dict[str, Any]:
    windows = [glance_window(k) for k in range(6)]
    own = [x for k in about for x in (windows[k].name, windows[k].sign)]
    other = [x for w in windows if w.index not in about for x in (w.name, w.sign)]
    found = sum(x in answer for x in own)
    leaked = [x for x in other if x in answer]
    head = evidence[0].text.split("]")[0] if evidence and evidence[0].text.startswith("[") else ""
    cited_id = head.partition(" window ")[2]  # "[10m window cam2@…]"
    cited = cited_id == want_id if want_id else cited_id.startswith("merged")
    inside = [any(k * WINDOW_S <= e.t_start < (k + 1) * WINDOW_S for k in about) for e in evidence]
    return {"facts_found": found, "facts": len(own), "leaked": leaked, "cited_window": bool(cited),
            "evidence_in_time": sum(inside), "evidence": len(inside),
            "right": found == len(own) and not leaked and bool(cited)}


def bench_qa(c: Components, baseline: bool) -> dict[str, Any]:
    from episodic.services.qa import MemoryQA

    memories, events, _ = glance_records(c.embedder, "cam2", 0.0, 3600.0)  # searched: real vectors
    per = int(60.0 / SEGMENT_S)
    started = time.perf_counter()
    for i in range(0, len(memories), per):
        c.store.upsert_memories(memories[i:i + per])
        c.store.upsert_events(events[i:i + per])
        refresh_overviews(c.store, c.embedder, "cam2", STRETCH_S, since_s=memories[i].t_start)
    refresh_overviews(c.store, c.embedder, "cam2", STRETCH_S)
    build_s = time.perf_counter() - started
    c.store.upsert_stream(StreamInfo("cam2", t_end=3600.0, memories=len(memories), events=len(events)))
    qa = MemoryQA(c, warm_after_request=False)
    runs: dict[str, list[dict[str, Any]]] = {"windows": []}
    if baseline:
        runs["baseline"] = []
    for name in runs:
        if name == "baseline":
            qa.windows.answer = lambda *_a, **_k: None  # type: ignore[method-assign]
        for question, about, want in _questions():
            started = time.perf_counter()
            r = qa.ask(AskRequest(question))
            row = {"question": question, "ms": round((time.perf_counter() - started) * 1000, 1),
                   "pathway": r.pathway.value, **_judge(r.answer, r.evidence, about, want),
                   "answer": r.answer[:160]}
            runs[name].append(row)
            print(json.dumps({name: row}), file=sys.stderr)
    summary = {name: {"right": sum(r["right"] for r in rows), "questions": len(rows),
                      "facts_found": sum(r["facts_found"] for r in rows), "facts": sum(r["facts"] for r in rows),
                      "answers_with_leaks": sum(bool(r["leaked"]) for r in rows),
                      "evidence_in_time": sum(r["evidence_in_time"] for r in rows),
                      "evidence": sum(r["evidence"] for r in rows),
                      "p50_ms": round(float(np.median([r["ms"] for r in rows])), 1)}
               for name, rows in runs.items()}
    return {"hour_built_with_checkpoint_refreshes_s": round(build_s, 2), "summary": summary, "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="refresh,qa")
    ap.add_argument("--hours", default="1,6,24")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--store", default="milvus", choices=["milvus", "memory"])
    ap.add_argument("--baseline", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if "refresh" in args.only:
            c = _components(args.store, Path(tmp) / "refresh")
            try:
                out["refresh"] = bench_refresh(c, [float(h) for h in args.hours.split(",")], args.repeat)
            finally:
                c.close()
        if "qa" in args.only:
            c = _components(args.store, Path(tmp) / "qa")
            try:
                out["qa"] = bench_qa(c, args.baseline)
            finally:
                c.close()
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for row in out.get("refresh", []):
        print(f"{row['stream_hours']:>4g} h ({row['memories']} memories): checkpoint refresh "
              f"{row['checkpoint_new_ms']:.0f} ms reading {row['checkpoint_new_read']} memories "
              f"(before: {row['checkpoint_old_ms']:.0f} ms reading {row['checkpoint_old_read']}); "
              f"full refresh at the end {row['stream_end_full_refresh_s']:.1f} s; {row['overviews_stored']} overviews")
    if "qa" in out:
        for name, s in out["qa"]["summary"].items():
            print(f"qa {name}: {s['right']}/{s['questions']} right, facts {s['facts_found']}/{s['facts']}, "
                  f"answers with another window's facts {s['answers_with_leaks']}, citations in the asked "
                  f"time {s['evidence_in_time']}/{s['evidence']}, p50 {s['p50_ms']:.0f} ms")


if __name__ == "__main__":
    main()
