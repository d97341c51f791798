"""Search and Ask latency over synthetic stores of growing size (issue 3, "Measure").

For each store size N (ThetaEvents; default 1k, 10k and 100k) the script builds a store in a
data directory with the real MilvusStore (Milvus Lite, the normal Components/Settings), then
prints per size:
  - build time and the rows per collection;
  - Search (``MemoryQA.search``) latency p50/p95 over ``--queries`` distinct text queries;
  - Ask latency p50/p95 on the fast path and on the detailed path separately, the pathway
    each Ask really took, its stage timings (``AskResult.timings_ms``) and the share of the
    time spent inside the language model (every ``generate`` call is timed);
  - growth: p50 at N / p50 at the smallest N, next to the growth in rows.
Before timing, the store is warmed as a query server is (``MemoryQA.warm_store``: the
in-process vector cache, whose load time is reported as ``vector_cache_load_s``; the very
first search, straight on Milvus Lite, as ``first_search_ms``). ``--no-vector-cache``
measures searches straight on Milvus Lite instead. Search latency is split into the query
embedding (MiniLM on the CPU, sensitive to other load) and the rest (store + ranking).

Synthetic records. Each store holds N ShortTermMemories and their N ThetaEvents, 200 memories
(≈ 25 min) per stream over many streams ("lobby-cam-003", "station-017", …): 1–2 transcript
pieces (most memories), two key-frame descriptions ("a scene with …; colours: …"), on-screen
text in some frames, a one-sentence summary, E_i rows for every transcript piece and key frame,
v_i as their normalised mean, and a snippet pointer (no snippet files are written). The texts
come from varied template sentences (people, objects, places, cities, times, signs). Vectors
are real all-MiniLM-L6-v2 embeddings of a *pool* of a few thousand distinct sentences,
embedded once; records reuse those texts and carry their vector plus a small random
perturbation (cos ≈ 0.98 to the original), so no two stored vectors are equal. Embedding 100k+
distinct texts would take far too long on 2 CPU cores. Key-frame *features* (the frames
collection, used only by query-by-example) are not generated. Generation is deterministic:
the first 1,000 memories are the same in every store, so the Ask questions (built from them)
have answers at every size.

Built stores are kept under ``--cache-dir`` (default ``~/.cache/episodic/bench-query``), so a
re-run only measures. Timings on a shared 2-core machine are noisy: run twice, or read p50.

    .venv/bin/python benchmarks/bench_query.py [--sizes 1000,10000,100000] [--queries 40]
        [--asks 10] [--skip-ask] [--cache-dir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.progress import (  # noqa: E402
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table  # noqa: E402

from episodic.config import load_settings  # noqa: E402
from episodic.core.query import AskRequest, Pathway  # noqa: E402
from episodic.core.records import (  # noqa: E402
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
from episodic.pipeline import Components  # noqa: E402
from episodic.services.qa import MemoryQA  # noqa: E402

DATASET_VERSION = 1  # bump when the generated records change (invalidates cached stores)
SEED = 20240603
MEMORIES_PER_STREAM = 200
GEN_BATCH = 1000  # memories generated (and written) per batch; batch b is seeded by b
NOISE_SIGMA = 0.01  # per dimension: ‖noise‖ ≈ 0.2 on 384-d, cos ≈ 0.98 to the pool vector
POOL_PAIRS = 2500  # speech sentences (each with its summary) in the embedded pool
POOL_VISUAL = 800  # key-frame descriptions in the pool

# -- vocabulary ------------------------------------------------------------------------------
PEOPLE = [
    "Tom", "Anna", "Maria", "Priya", "Jonas", "Keiko", "Omar", "Lucia", "Mr Okafor", "Mrs Chen",
    "the driver", "the guard", "the chef", "the nurse", "the teacher", "the courier",
]
OBJECTS = [
    "apples", "keys", "boxes", "letters", "bottles", "tickets", "batteries", "plates",
    "umbrellas", "helmets", "notebooks", "parcels", "lamps", "cables", "gloves", "oranges",
]
COLOURS = ["red", "green", "blue", "yellow", "black", "white", "orange", "purple", "grey", "brown"]
CONTAINERS = ["bowl", "drawer", "basket", "van", "cupboard", "crate", "bag", "locker"]
CITIES = [
    "Oxford", "Leeds", "Bristol", "York", "Glasgow", "Cardiff", "Dover", "Bath", "Brighton",
    "Norwich", "Exeter", "Durham", "Chester", "Lincoln",
]
ROOMS = ["kitchen", "office", "garage", "lobby", "workshop", "cellar", "studio", "canteen"]
CAUSES = ["traffic on the bridge", "snow", "a broken signal", "roadworks", "a flat tyre", "the strike"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
NUMBERS = ["two", "three", "four", "five", "six", "seven", "eight", "ten", "twelve", "twenty"]
HOURS = ["seven", "eight", "nine", "ten", "eleven", "noon", "two", "three", "four", "five"]
EVENTS = ["inspection", "concert", "delivery", "match", "party", "audit", "market", "lecture"]
LABELS = [
    "bicycle", "street sign", "traffic light", "shopping cart", "laptop", "coffee mug",
    "umbrella", "bus", "passenger car", "television", "desk", "bookcase", "dining table",
    "refrigerator", "park bench", "backpack", "mobile phone", "wall clock", "forklift",
    "trolleybus", "moving van", "barrow", "grocery store", "restaurant", "library",
]
SIGNS = [
    "PLATFORM {n}", "EXIT {L}", "GATE {n}", "SALE {n}0%", "{CITY} {h}:{m}0", "OPEN", "CLOSED",
    "NO ENTRY", "ROOM {n}0{n}", "CAUTION WET FLOOR", "LOADING BAY {L}", "TICKETS",
]
PLACES = [
    "lobby-cam", "station", "kitchen", "north-bridge", "warehouse-dock", "parking-east",
    "vlog-anna", "canteen", "school-gate", "harbour", "market-square", "office-3f",
]

# (transcript template, summary template): the summary paraphrases what was said
PAIRS = [
    ("{P} put {N} {C} {O} in the {B}.", "{P} places {N} {C} {O} into the {B}."),
    ("The train to {CITY} leaves from platform {n}.", "An announcement says the {CITY} train departs from platform {n}."),
    ("Please remember that the meeting starts at {H} tomorrow.", "A reminder that tomorrow's meeting begins at {H}."),
    ("The delivery van for {P} arrived late because of {CAUSE}.", "{P}'s delivery was delayed by {CAUSE}."),
    ("I left the {C} {O} next to the {R} door.", "Someone left {C} {O} beside the {R} door."),
    ("{P} says the {O} in the {R} are broken again.", "{P} reports broken {O} in the {R}."),
    ("The {R} closes early on {D} during the summer.", "The {R} has shorter hours on {D} in summer."),
    ("We need {N} more {O} before the {E}.", "They need {N} additional {O} ahead of the {E}."),
    ("{P} is painting the {R} wall a bright {C}.", "{P} paints a wall of the {R} {C}."),
    ("Turn left after the {R} and ask {P} for the {O}.", "Directions: left after the {R}, then ask {P} about the {O}."),
    ("The {E} was moved to {D} because of {CAUSE}.", "The {E} is rescheduled to {D} due to {CAUSE}."),
    ("{P} lost {N} {O} somewhere between the {R} and the car park.", "{P} misplaced {N} {O} between the {R} and the car park."),
]


def _fill(template: str, rng: np.random.Generator) -> tuple[str, dict[str, str]]:
    slots = {
        "P": str(rng.choice(PEOPLE)), "O": str(rng.choice(OBJECTS)), "C": str(rng.choice(COLOURS)),
        "B": str(rng.choice(CONTAINERS)), "CITY": str(rng.choice(CITIES)), "R": str(rng.choice(ROOMS)),
        "CAUSE": str(rng.choice(CAUSES)), "D": str(rng.choice(DAYS)), "N": str(rng.choice(NUMBERS)),
        "H": str(rng.choice(HOURS)), "E": str(rng.choice(EVENTS)), "n": str(int(rng.integers(1, 10))),
        "L": "ABCDEFGH"[int(rng.integers(0, 8))], "h": str(int(rng.integers(6, 23))),
        "m": str(int(rng.integers(0, 6))),
    }
    text = template.format(**slots)
    return text[0].upper() + text[1:], slots


@dataclass
class Pool:
    """Distinct texts with their real embeddings; records reuse and perturb them."""

    speech: list[str]  # transcript sentences
    summaries: list[str]  # summary of speech[i]
    slots: list[dict[str, str]]  # the slot values of speech[i] (questions are built from them)
    visual: list[str]  # key-frame descriptions without on-screen text
    visual_labels: list[list[str]]
    speech_vecs: np.ndarray
    summary_vecs: np.ndarray
    visual_vecs: np.ndarray
    visual_summary_vecs: np.ndarray  # "The picture shows …" summaries of picture-only memories

    def visual_summary(self, i: int) -> str:
        return f"The picture shows {self.visual[i]}."


def build_pool(cache_dir: Path, embedder, console: Console) -> tuple[Pool, float]:
    """The sentence pool and its embeddings (cached in ``cache_dir``); returns (pool, seconds
    spent embedding, 0 when cached)."""
    rng = np.random.default_rng(SEED)
    speech, summaries, slots = [], [], []
    seen: set[str] = set()
    while len(speech) < POOL_PAIRS:
        t_tpl, s_tpl = PAIRS[int(rng.integers(0, len(PAIRS)))]
        text, sl = _fill(t_tpl, rng)
        if text in seen:
            continue
        seen.add(text)
        summary = s_tpl.format(**sl)
        speech.append(text)
        summaries.append(summary[0].upper() + summary[1:])
        slots.append(sl)
    visual, labels = [], []
    while len(visual) < POOL_VISUAL:
        names = [str(x) for x in rng.choice(LABELS, size=int(rng.integers(1, 4)), replace=False)]
        cols = [str(x) for x in rng.choice(COLOURS, size=int(rng.integers(1, 3)), replace=False)]
        d = "a scene with " + ", ".join(names) + "; colours: " + ", ".join(cols)
        if d in seen:
            continue
        seen.add(d)
        visual.append(d)
        labels.append(names)
    pool_file = cache_dir / f"pool-v{DATASET_VERSION}.npz"
    texts = speech + summaries + visual + [f"The picture shows {v}." for v in visual]
    took = 0.0
    if pool_file.is_file():
        data = np.load(pool_file, allow_pickle=False)
        if list(data["texts"]) == texts:
            vecs = data["vecs"]
        else:
            pool_file.unlink()
    if not pool_file.is_file():
        console.print(f"embedding the sentence pool: {len(texts)} texts with {embedder.model_id} …")
        t0 = time.perf_counter()
        vecs = embedder.embed_texts(texts)
        took = time.perf_counter() - t0
        cache_dir.mkdir(parents=True, exist_ok=True)
        np.savez(pool_file, texts=np.array(texts), vecs=vecs)
    a, b, c = POOL_PAIRS, 2 * POOL_PAIRS, 2 * POOL_PAIRS + POOL_VISUAL
    pool = Pool(speech, summaries, slots, visual, labels, vecs[:a], vecs[a:b], vecs[b:c], vecs[c:])
    return pool, took


def _sign(rng: np.random.Generator) -> str:
    tpl = SIGNS[int(rng.integers(0, len(SIGNS)))]
    return tpl.format(
        n=int(rng.integers(1, 10)), L="ABCDEFGH"[int(rng.integers(0, 8))],
        CITY=str(rng.choice(CITIES)).upper(), h=int(rng.integers(6, 23)), m=int(rng.integers(0, 6)),
    )


def _perturb(rng: np.random.Generator, v: np.ndarray) -> np.ndarray:
    return normalise(v + rng.normal(0.0, NOISE_SIGMA, v.shape).astype(np.float32))


def stream_name(k: int) -> str:
    return f"{PLACES[k % len(PLACES)]}-{k // len(PLACES):03d}"


def generate_batch(b: int, pool: Pool) -> tuple[list[ShortTermMemory], list[ThetaEvent]]:
    """Memories b·GEN_BATCH … (b+1)·GEN_BATCH−1 and their events (deterministic in b)."""
    rng = np.random.default_rng([SEED, b])
    memories, events = [], []
    for g in range(b * GEN_BATCH, (b + 1) * GEN_BATCH):
        sid = stream_name(g // MEMORIES_PER_STREAM)
        j = g % MEMORIES_PER_STREAM
        t0 = j * 8.0 + float(rng.uniform(0.0, 1.5))
        t1 = t0 + float(rng.uniform(5.0, 6.5))
        mid = memory_id(sid, t0)
        has_speech = rng.random() < 0.75
        transcript: list[TranscriptPiece] = []
        entries: list[EmbeddingEntry] = []
        p = int(rng.integers(0, POOL_PAIRS))
        if has_speech:
            pieces = [p] + ([int(rng.integers(0, POOL_PAIRS))] if rng.random() < 0.3 else [])
            for k, q in enumerate(pieces):
                a0 = t0 + 0.3 + k * 2.6
                a1 = min(t1, a0 + 2.4)
                transcript.append(TranscriptPiece(a0, a1, pool.speech[q]))
                entries.append(EmbeddingEntry(a0, a1, "speech", pool.speech[q], _perturb(rng, pool.speech_vecs[q])))
        frames: list[FrameObservation] = []
        v = int(rng.integers(0, POOL_VISUAL))
        for k, ft in enumerate((t0, (t0 + t1) / 2)):
            vi = v if k == 0 else int(rng.integers(0, POOL_VISUAL))
            desc = pool.visual[vi]
            # on-screen text only where something is said: the summary (a paraphrase of the
            # speech) then does not carry it, so "what was written" needs detailed recall
            ocr = _sign(rng) if has_speech and rng.random() < 0.3 else ""
            full = f'{desc}; on-screen text: "{ocr}"' if ocr else desc
            frames.append(
                FrameObservation(
                    t=ft,
                    labels=[(lbl, 0.5) for lbl in pool.visual_labels[vi]],
                    colours=desc.split("colours: ", 1)[1].split(", "),
                    ocr_text=ocr,
                    description=full,
                )
            )
            entries.append(EmbeddingEntry(ft, t1 if k else (t0 + t1) / 2, "visual", full, _perturb(rng, pool.visual_vecs[vi])))
        vec = normalise(np.mean([e.vector for e in entries], axis=0))
        memories.append(
            ShortTermMemory(
                id=mid,
                stream_id=sid,
                t_start=t0,
                t_end=t1,
                vector=vec,
                embeddings=entries,
                transcript=transcript,
                frames=frames,
                snippets=[SnippetRef(f"file:///synthetic/{sid}/{mid}.s.mp4", t0, t1)],
                metadata={"synthetic": True, "models": {"embedder": "all-MiniLM-L6-v2"}},
            )
        )
        if has_speech:
            summary, svec = pool.summaries[p], pool.summary_vecs[p]
        else:
            summary, svec = pool.visual_summary(v), pool.visual_summary_vecs[v]
        events.append(
            ThetaEvent(
                id=event_id(sid, t0),
                stream_id=sid,
                memory_id=mid,
                t_start=t0,
                t_end=t1,
                summary=summary,
                summary_vector=_perturb(rng, svec),
                vector=vec,
                visual_context=[f.description for f in frames],
                audio_context=[m.text for m in transcript],
                metadata={"summariser": "synthetic", "embedder": "all-MiniLM-L6-v2"},
            )
        )
    return memories, events


# -- stores ----------------------------------------------------------------------------------
def store_dir(cache_dir: Path, size: int) -> Path:
    return cache_dir / f"store-{size}-v{DATASET_VERSION}"


def build_store(size: int, cache_dir: Path, pool: Pool, console: Console) -> dict[str, Any]:
    """The data directory holding ``size`` events (built unless cached); returns its info."""
    data = store_dir(cache_dir, size)
    done = data / "bench-complete.json"
    if done.is_file():
        info = json.loads(done.read_text())
        info["cached"] = True
        return info
    shutil.rmtree(data, ignore_errors=True)
    c = Components(load_settings(data_dir=data))
    c.ensure_schema()
    store = c.store
    batches = (size + GEN_BATCH - 1) // GEN_BATCH
    t0 = time.perf_counter()
    ends: dict[str, float] = {}
    per_stream: dict[str, int] = {}
    with Progress(
        TextColumn(f"[bold]building {size:,} events"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    ) as bar:
        task = bar.add_task("build", total=size, rate="")
        written = 0
        for b in range(batches):
            memories, events = generate_batch(b, pool)
            keep = min(GEN_BATCH, size - written)
            memories, events = memories[:keep], events[:keep]
            store.upsert_memories(memories)
            store.upsert_events(events)
            for m in memories:
                ends[m.stream_id] = max(ends.get(m.stream_id, 0.0), m.t_end)
                per_stream[m.stream_id] = per_stream.get(m.stream_id, 0) + 1
            written += keep
            el = time.perf_counter() - t0
            bar.update(task, completed=written, rate=f"{written / el:,.0f} ev/s")
    for sid, end in ends.items():
        store.upsert_stream(
            StreamInfo(stream_id=sid, source="synthetic", t_end=end, memories=per_stream[sid],
                       events=per_stream[sid], updated_at=time.time())
        )
    store.flush()
    build_s = time.perf_counter() - t0
    counts = store.counts()
    c.close()
    info = {"size": size, "build_s": round(build_s, 1), "counts": counts, "streams": len(ends)}
    done.write_text(json.dumps(info))
    info["cached"] = False
    return info


# -- questions -------------------------------------------------------------------------------
def search_queries(n: int, rng: np.random.Generator) -> list[str]:
    forms = [
        lambda: f"the train to {rng.choice(CITIES)}",
        lambda: f"{rng.choice(PEOPLE)} and the {rng.choice(COLOURS)} {rng.choice(OBJECTS)}",
        lambda: f"sign saying {_sign(rng)}",
        lambda: f"meeting at {rng.choice(HOURS)} tomorrow",
        lambda: f"a {rng.choice(LABELS)} on screen",
        lambda: f"delivery delayed by {rng.choice(CAUSES)}",
        lambda: f"broken {rng.choice(OBJECTS)} in the {rng.choice(ROOMS)}",
        lambda: f"{rng.choice(EVENTS)} moved to {rng.choice(DAYS)}",
        lambda: f"who lost the {rng.choice(OBJECTS)}",
        lambda: f"painting the wall {rng.choice(COLOURS)}",
    ]
    out: list[str] = []
    seen: set[str] = set()
    tries = 0
    while len(out) < n:
        # the forms take turns; one whose variants are used up yields its turn (some have
        # only a handful of variants), so any n the forms can make together is reached
        q = forms[tries % len(forms)]()
        tries += 1
        if q not in seen:
            seen.add(q)
            out.append(q)
        elif tries > 1000 * max(n, 1):
            raise ValueError(f"the query forms cannot make {n} distinct queries")
    return out


def ask_questions(n: int, pool: Pool) -> tuple[list[str], list[str]]:
    """(fast-path questions, detailed-path questions), built from the first memories (present
    in every store). Fast ones restate a summary's facts; detailed ones ask for on-screen text
    or a picture detail, which summaries of speech do not hold."""
    memories, _ = generate_batch(0, pool)
    fast: list[str] = []
    detailed: list[str] = []
    for m in memories:
        if m.transcript and len(fast) < n:
            text = m.transcript[0].text
            sl = pool.slots[pool.speech.index(text)]
            if text.startswith("The train to"):
                fast.append(f"Which platform does the train to {sl['CITY']} leave from?")
            elif " put " in text:
                fast.append(f"Where did {sl['P']} put the {sl['C']} {sl['O']}?")
            elif "meeting starts" in text:
                fast.append("What time does the meeting start tomorrow?")
            elif "arrived late" in text:
                fast.append(f"Why did the delivery van for {sl['P']} arrive late?")
            elif "painting" in text:
                fast.append(f"What colour is {sl['P']} painting the {sl['R']} wall?")
        ocr = next((f.ocr_text for f in m.frames if f.ocr_text), "")
        if ocr and m.transcript and len(detailed) < n:
            place = m.stream_id.rsplit("-", 1)[0].replace("-", " ")
            sl = pool.slots[pool.speech.index(m.transcript[0].text)]
            form = len(detailed) % 3
            if form == 0:
                detailed.append(f"What was written on the sign at the {place} when {sl['P']} spoke?")
            elif form == 1:
                label = m.frames[0].labels[0][0]
                detailed.append(f"What did the screen say when the {label} was shown?")
            else:
                detailed.append(f"What text was on screen while someone talked about the {sl['O']}?")
        if len(fast) >= n and len(detailed) >= n:
            break
    return list(dict.fromkeys(fast))[:n], list(dict.fromkeys(detailed))[:n]


# -- measuring -------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    return round(float(np.percentile(np.asarray(values), q)), 1)


class EmbedTimer:
    """Wraps the embedder's ``embed_texts`` to add up the time spent embedding."""

    def __init__(self, embedder) -> None:
        self.seconds = 0.0
        inner = embedder.embed_texts

        def embed_texts(*args, **kwargs):
            t = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t

        embedder.embed_texts = embed_texts


class ModelTimer:
    """Wraps the language model's ``generate`` to add up the time spent inside it."""

    def __init__(self, llm) -> None:
        self.seconds = 0.0
        self.calls = 0
        inner = llm.generate

        def generate(*args, **kwargs):
            t = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t
                self.calls += 1

        llm.generate = generate


def measure(size: int, cache_dir: Path, queries: list[str], fast_qs: list[str], detailed_qs: list[str],
            skip_ask: bool, console: Console, use_cache: bool = True) -> dict[str, Any]:
    c = Components(load_settings(data_dir=store_dir(cache_dir, size)))
    qa = MemoryQA(c)
    t0 = time.perf_counter()
    c.embedder.prepare()
    qa.analyzer.analyze("warm up", None)
    warm_s = time.perf_counter() - t0
    out: dict[str, Any] = {}
    # the store's first touch (attach, load) is a server start-up cost, reported apart;
    # then the query server's warm-up: the in-process vector cache (MemoryQA.warm_store)
    qa._store_warm = True  # keep the first search from starting the load in the background
    t0 = time.perf_counter()
    qa.search("warm up the store")
    out["first_search_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    if use_cache:
        qa._store_warm = False
        t0 = time.perf_counter()
        qa.warm_store(background=False)
        out["vector_cache_load_s"] = round(time.perf_counter() - t0, 1)
    out["vector_cache"] = getattr(c.store, "vector_cache_state", lambda: "off")()
    embed = EmbedTimer(c.embedder)
    for q in ("red bicycle", "the platform sign", "what Tom said"):  # warm caches a little
        qa.search(q)
    lat: list[float] = []
    emb: list[float] = []  # of which embedding the query (MiniLM on the CPU)
    hits = 0
    with Progress(TextColumn(f"[bold]search @ {size:,}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("search", total=len(queries))
        for q in queries:
            before = embed.seconds
            t = time.perf_counter()
            moments = qa.search(q, top_k=10)
            lat.append((time.perf_counter() - t) * 1000)
            emb.append((embed.seconds - before) * 1000)
            hits += bool(moments)
            bar.advance(task)
    out["search"] = {"n": len(lat), "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95),
                     "mean_ms": round(statistics.fmean(lat), 1), "with_hits": hits,
                     "embed_p50_ms": pct(emb, 50),
                     "store_and_rank_p50_ms": pct([a - b for a, b in zip(lat, emb, strict=True)], 50),
                     "store_and_rank_p95_ms": pct([a - b for a, b in zip(lat, emb, strict=True)], 95)}
    out["model_warmup_s"] = round(warm_s, 1)
    if skip_ask:
        c.close()
        return out

    timer = ModelTimer(c.llm)
    t0 = time.perf_counter()
    qa.prepare()
    out["llm_load_s"] = round(time.perf_counter() - t0, 1)
    qa.ask(AskRequest(question="What did Tom say about the apples?"))  # first call warms llama.cpp
    rows: list[dict[str, Any]] = []
    with Progress(TextColumn(f"[bold]ask @ {size:,}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("ask", total=len(fast_qs) + len(detailed_qs))
        for intent, qs in (("fast", fast_qs), ("detailed", detailed_qs)):
            for q in qs:
                before_s, before_n = timer.seconds, timer.calls
                t = time.perf_counter()
                r = qa.ask(AskRequest(question=q))
                wall = (time.perf_counter() - t) * 1000
                rows.append({
                    "intent": intent, "question": q, "pathway": r.pathway.value,
                    "query_type": r.query_type.value, "wall_ms": round(wall, 1),
                    "model_ms": round((timer.seconds - before_s) * 1000, 1),
                    "model_calls": timer.calls - before_n, "timings_ms": r.timings_ms,
                    "confidence": r.confidence, "answer": r.answer[:120],
                })
                bar.advance(task)
    asks: dict[str, Any] = {}
    for path in (Pathway.FAST.value, Pathway.DETAILED.value):
        sel = [r for r in rows if r["pathway"] == path]
        tot = [r["wall_ms"] for r in sel]
        model = sum(r["model_ms"] for r in sel)
        retrieval_key = "fast_retrieval" if path == "fast" else "detailed_recall"
        asks[path] = {
            "n": len(sel),
            "intended": sum(r["intent"] == path for r in sel),
            "p50_ms": pct(tot, 50), "p95_ms": pct(tot, 95),
            "model_share": round(model / sum(tot), 3) if tot else None,
            "model_calls_per_ask": round(sum(r["model_calls"] for r in sel) / len(sel), 2) if sel else None,
            "non_model_p50_ms": pct([r["wall_ms"] - r["model_ms"] for r in sel], 50),
            f"{retrieval_key}_p50_ms": pct([r["timings_ms"].get(retrieval_key, 0.0) for r in sel], 50),
        }
    # every Ask runs the fast stages; their cost over all Asks (with their model call)
    asks["fast_stages_all"] = {
        "n": len(rows),
        "p50_ms": pct([sum(r["timings_ms"].get(k, 0.0) for k in ("analysis", "fast_retrieval", "fast_answer"))
                       for r in rows], 50),
        "fast_retrieval_p50_ms": pct([r["timings_ms"].get("fast_retrieval", 0.0) for r in rows], 50),
    }
    out["ask"] = asks
    out["ask_rows"] = rows
    c.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000", help="store sizes in events, comma-separated")
    ap.add_argument("--queries", type=int, default=40, help="Search queries per size")
    ap.add_argument("--asks", type=int, default=10, help="Ask questions per pathway and size")
    ap.add_argument("--skip-ask", action="store_true", help="measure Search only (no language model)")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "episodic" / "bench-query")
    ap.add_argument("--rebuild", action="store_true", help="rebuild cached stores")
    ap.add_argument("--no-vector-cache", action="store_true",
                    help="search Milvus Lite directly (no in-process vector cache), for comparison")
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = ap.parse_args()
    try:
        sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        ap.error(f"--sizes must be integers, got {args.sizes!r}")
    if not sizes or min(sizes) < 1 or args.queries < 1 or args.asks < 0:
        ap.error("sizes and --queries must be positive")
    console = Console(stderr=True)
    cache = args.cache_dir.expanduser().resolve()
    cache.mkdir(parents=True, exist_ok=True)
    if args.rebuild:
        for s in sizes:
            shutil.rmtree(store_dir(cache, s), ignore_errors=True)

    probe = Components(load_settings(data_dir=cache / "probe"))
    pool, pool_s = build_pool(cache, probe.embedder, console)
    queries = search_queries(args.queries, np.random.default_rng([SEED, 7]))
    fast_qs, detailed_qs = ask_questions(args.asks, pool)

    results: dict[str, Any] = {"pool_texts": len(pool.speech) * 2 + len(pool.visual) * 2,
                               "pool_embed_s": round(pool_s, 1), "sizes": {}}
    for size in sizes:
        info = build_store(size, cache, pool, console)
        console.print(f"{size:,} events: build {info['build_s']} s{' (cached)' if info['cached'] else ''}, "
                      f"rows {info['counts']}")
        res = measure(size, cache, queries, fast_qs, detailed_qs, args.skip_ask, console,
                      use_cache=not args.no_vector_cache)
        results["sizes"][str(size)] = {"build": info, **res}
        s = res["search"]
        console.print(f"{size:,} events: search p50 {s['p50_ms']} ms, p95 {s['p95_ms']} ms")
    base = results["sizes"][str(sizes[0])]
    for size in sizes:
        r = results["sizes"][str(size)]
        r["growth"] = {
            "rows_x": round(size / sizes[0], 1),
            "search_p50_x": round(r["search"]["p50_ms"] / base["search"]["p50_ms"], 2),
        }
        if "ask" in r and "ask" in base:
            for path in ("fast", "detailed"):
                a, b0 = r["ask"][path]["p50_ms"], base["ask"][path]["p50_ms"]
                r["growth"][f"ask_{path}_p50_x"] = round(a / b0, 2) if a and b0 else None

    if args.json:
        print(json.dumps(results, indent=2))
        return
    out = Console()
    t = Table(title="Search and Ask latency by store size (ms)")
    for col in ("events", "build s", "rows (ev/mem/vec)", "search p50", "search p95",
                "ask fast p50/p95 (n)", "ask detailed p50/p95 (n)", "model share fast/det",
                "search growth (rows×)"):
        t.add_column(col, justify="right")
    for size in sizes:
        r = results["sizes"][str(size)]
        cnt = r["build"]["counts"]
        a = r.get("ask", {})

        def cell(path: str, a=a) -> str:
            x = a.get(path)
            return f"{x['p50_ms']}/{x['p95_ms']} ({x['n']})" if x and x["n"] else "–"

        def share(a=a) -> str:
            if not a:
                return "–"
            return "/".join(f"{a[p]['model_share']:.0%}" if a[p]["model_share"] is not None else "–"
                            for p in ("fast", "detailed"))

        t.add_row(f"{size:,}", f"{r['build']['build_s']}", f"{cnt['events']}/{cnt['memories']}/{cnt['vectors']}",
                  f"{r['search']['p50_ms']}", f"{r['search']['p95_ms']}", cell("fast"), cell("detailed"),
                  share(), f"{r['growth']['search_p50_x']}× ({r['growth']['rows_x']:g}×)")
    out.print(t)
    for size in sizes:
        r = results["sizes"][str(size)]
        if "ask" not in r:
            continue
        a = r["ask"]
        out.print(
            f"{size:>7,}: fast retrieval p50 {a['fast_stages_all']['fast_retrieval_p50_ms']} ms; "
            f"detailed recall p50 {a['detailed'].get('detailed_recall_p50_ms')} ms; "
            f"non-model p50 fast {a['fast']['non_model_p50_ms']} / detailed {a['detailed']['non_model_p50_ms']} ms; "
            f"pathways: intended-fast→fast {a['fast']['intended']}/{len([x for x in r['ask_rows'] if x['intent'] == 'fast'])}, "
            f"intended-detailed→detailed {a['detailed']['intended']}/{len([x for x in r['ask_rows'] if x['intent'] == 'detailed'])}"
        )


if __name__ == "__main__":
    main()
