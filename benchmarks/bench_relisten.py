"""Listening again at question time: how long a re-listened Ask takes, and how often it fixes a
garbled transcript.

Each item is a generated recording (one spoken sentence with a fact: a time, a number, a name,
a place) in an espeak-ng voice and speed, over background noise at a given SNR, ingested as
usual (Whisper tiny.en). Its stored transcript is then deliberately garbled the way a weak
recogniser garbles speech (the words that carry the answer always, other content words often:
sound-alike consonants, words run together, words lost), with its speech E_i vectors and its
composed summary made to match, so nothing but the audio still holds the right words. Then the
question is asked twice through the in-process service: without re-listening (before) and
with it (after), and once more (the cached second ask).

Figures: answer right before/after (all answer words present, numbers and times normalised
on both sides), transcript fixed (the stored transcript holds the answer words again),
latency of the re-listened Ask and of the second one, and with ``--bias`` a comparison of how
the recogniser is told what to expect (prompt | hotwords | none), by mean token log-probability
and answer-word recall of the new transcript. Items and voices are split into a dev part (the
bias mode was chosen on it) and a held-out part (reported, never tuned on).

    .venv/bin/python benchmarks/bench_relisten.py                 # held-out, 4 items
    .venv/bin/python benchmarks/bench_relisten.py --split dev --bias
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from episodic import samples  # noqa: E402
from episodic.config import load_settings  # noqa: E402
from episodic.core.records import EmbeddingEntry, TranscriptPiece, event_id  # noqa: E402
from episodic.memory.consolidation import representative_vector  # noqa: E402
from episodic.memory.summary_composer import compose_summary  # noqa: E402
from episodic.retrieval.query_analysis import STOPWORDS  # noqa: E402
from episodic.retrieval.text_match import canonical_tokens  # noqa: E402


@dataclass(frozen=True)
class Item:
    sentence: str
    question: str
    answer: str  # words that must all be in a right answer


DEV_ITEMS = [
    Item("The fire alarm test is scheduled for half past two.", "When is the fire alarm test scheduled?", "half past two"),
    Item("Maria parked the blue van behind the bakery.", "Where did Maria park the van?", "behind the bakery"),
    Item("The meeting with the supplier moved to Thursday morning.", "When is the meeting with the supplier?", "Thursday morning"),
    Item("Please bring forty chairs to the main hall.", "How many chairs should be brought to the hall?", "forty"),
]
HELD_OUT_ITEMS = [
    Item("The ferry to the island leaves at a quarter to six.", "When does the ferry to the island leave?", "quarter to six"),
    Item("Doctor Patel will see the next patient in room twelve.", "In which room will Doctor Patel see the patient?", "twelve"),
    Item("The library closes early on Friday because of the storm.", "Why does the library close early on Friday?", "storm"),
    Item("Our new puppy is called Biscuit and loves the garden.", "What is the new puppy called?", "Biscuit"),
]
DEV_VOICES = [("en-us+f3", 150, 20.0), ("en-gb+m3", 170, 10.0), ("en-gb-scotland+f2", 140, 20.0), ("en-us-nyc+m1", 160, 10.0)]
HELD_OUT_VOICES = [("en-029+m2", 150, 20.0), ("en-gb-x-rp+f4", 165, 10.0), ("en-gb-x-gbcwmd+m7", 140, 20.0), ("en-gb-x-gbclan+f1", 155, 10.0)]

# what a weak recogniser does to consonants and vowels
SOUND_SWAPS = [("f", "th"), ("t", "d"), ("p", "b"), ("s", "z"), ("k", "g"), ("v", "f"), ("m", "n"),
               ("ar", "a"), ("ee", "i"), ("ou", "o"), ("ch", "sh"), ("l", "r"), ("w", "v"), ("i", "e")]
RUN_TOGETHER = 0.25


def words_of(text: str) -> list[str]:
    """Comparable words: lower case, numbers and times normalised ("quarter to six" = "5:45")."""
    return [w for w in canonical_tokens(text) if w not in STOPWORDS]


def holds(text: str, answer: str) -> bool:
    """Whether every answer word is in ``text`` (normalised on both sides)."""
    have = set(canonical_tokens(text))
    return all(w in have for w in words_of(answer))


def _mishear(word: str, rng: random.Random) -> str:
    low = word.lower()
    options = [(a, b) for a, b in SOUND_SWAPS if a in low]
    rng.shuffle(options)
    for a, b in options[:2]:
        low = low.replace(a, b, 1)
    if low == word.lower():
        low = low[:-1] + ("e" if not low.endswith("e") else "a") if len(low) > 2 else low + "h"
    return low


def garble(sentence: str, answer: str, seed: int) -> str:
    """A deterministic mishearing of ``sentence``: every answer word is changed, other content
    words often; some words run together or go missing, as in a weak transcript."""
    rng = random.Random(seed)
    must = {w.lower() for w in re.findall(r"[A-Za-z]+", answer)} - STOPWORDS
    out: list[str] = []
    for word in re.findall(r"[A-Za-z']+", sentence):
        low = word.lower()
        if low in must or (low not in STOPWORDS and rng.random() < 0.5):
            w = _mishear(word, rng)
            if out and rng.random() < RUN_TOGETHER:
                out[-1] = f"{out[-1]}-{w}"
                continue
            out.append(w)
        elif low in STOPWORDS and rng.random() < 0.2:
            continue  # a small word lost
        else:
            out.append(word.lower())
    text = " ".join(out)
    return text[:1].upper() + text[1:]


def overwrite_transcript(components, memory_id: str, text: str) -> None:
    """Replace a stored memory's transcript by ``text`` everywhere the words live: the
    transcript pieces (times kept), the "speech" E_i entries (re-embedded), v_i, and the
    ThetaEvent (composed again from the memory), so only the audio still holds the truth."""
    store, embedder = components.store, components.embedder
    m = store.get_memory(memory_id, with_vectors=True)
    if m.transcript:
        t0, t1 = m.transcript[0].t_start, m.transcript[-1].t_end
    else:
        t0, t1 = m.t_start, m.t_end
    m.transcript = [TranscriptPiece(t0, t1, text)]
    vec = np.asarray(embedder.embed_texts([text])[0], dtype=np.float32)
    m.embeddings = [e for e in m.embeddings if e.modality != "speech"] + [EmbeddingEntry(t0, t1, "speech", text, vec)]
    m.vector = representative_vector(m)
    m.metadata.pop("transcripts", None)
    store.upsert_memories([m])
    event = store.get_event(event_id(m.stream_id, m.t_start))
    if event is not None:
        event.summary = compose_summary(m)
        event.summary_vector = np.asarray(embedder.embed_texts([event.summary])[0], dtype=np.float32)
        event.audio_context = [text]
        event.vector = m.vector
        store.upsert_events([event])


def speech_memory(store, stream_id: str):
    """The stream's memory holding its speech (the longest transcript)."""
    found = [store.get_memory(m.id) for m in store.list_memories(stream_id, limit=50)]
    return max(found, key=lambda m: len(m.transcript_text))


def make_item(root: Path, index: int, item: Item, voice: tuple[str, int, float]) -> Path:
    """A 9 s recording: a still scene, the sentence at 1 s, background noise at the SNR."""
    from episodic.sample_sounds import mix_at_snr, noise

    name, wpm, snr_db = voice
    clean = root / f"item{index}-clean.wav"
    samples.make_recording(clean, [samples.Scene(duration_s=9, seed=10 + index)],
                           [samples.Speech(t=1.0, text=item.sentence, voice=name, wpm=wpm)],
                           video=False, audio_rate_hz=16000)
    import av

    with av.open(str(clean)) as c:
        audio = np.concatenate([f.to_ndarray().reshape(-1) for f in c.decode(audio=0)]).astype(np.float32)
    if audio.dtype != np.float32 or np.abs(audio).max() > 1.5:
        audio = audio / 32768.0
    colour = ("pink", "babble", "brown", "white")[index % 4]
    mixed = mix_at_snr(audio, noise(audio.size / 16000, 16000, seed=index, colour=colour), snr_db)
    path = root / f"item{index}.wav"
    from scipy.io import wavfile

    wavfile.write(path, 16000, (np.clip(mixed, -1, 1) * 32767).astype(np.int16))
    return path


def run(split: str, compare_bias: bool) -> None:
    from episodic.components import Components
    from episodic.core.query import AskRequest
    from episodic.pipeline import ingest_file
    from episodic.services.qa import MemoryQA

    items = DEV_ITEMS if split == "dev" else HELD_OUT_ITEMS
    voices = DEV_VOICES if split == "dev" else HELD_OUT_VOICES
    root = Path(tempfile.mkdtemp(prefix="bench-relisten-"))
    settings = load_settings(data_dir=root / "data")
    c = Components(settings)
    rows = []
    for i, (item, voice) in enumerate(zip(items, voices, strict=True)):
        path = make_item(root, i, item, voice)
        stream = f"item{i}"
        ingest_file(path, stream, c)
        m = speech_memory(c.store, stream)
        ingest_text = m.transcript_text
        wrong = garble(item.sentence, item.answer, seed=i)
        overwrite_transcript(c, m.id, wrong)
        rows.append((item, voice, stream, m.id, ingest_text, wrong))
        print(f"ingested {stream} ({voice[0]}): {ingest_text!r} → garbled {wrong!r}", flush=True)
    # the "before" service: the same store and models, re-listening off
    plain = Components(settings.replace(relisten_max_memories=0))
    for name in ("store", "embedder", "llm", "snippets"):
        plain.__dict__[name] = getattr(c, name)
    off = MemoryQA(plain, warm_after_request=False)
    on = MemoryQA(c, warm_after_request=False)
    on.prepare()
    off.prepare()
    results = []
    for item, voice, _stream, mid, ingest_text, wrong in rows:
        before = off.ask(AskRequest(item.question))
        t = time.perf_counter()
        after, trace = on.ask_traced(AskRequest(item.question))
        first_s = time.perf_counter() - t
        t = time.perf_counter()
        again, trace2 = on.ask_traced(AskRequest(item.question))
        second_s = time.perf_counter() - t
        stored = c.store.get_memory(mid).transcript_text
        rep = trace.notes.get("relisten")
        results.append({
            "item": item.sentence, "voice": voice[0], "snr_db": voice[2],
            "ingest": ingest_text, "garbled": wrong, "stored_after": stored,
            "right_before": holds(before.answer, item.answer),
            "right_after": holds(after.answer, item.answer),
            "fixed": holds(stored, item.answer),
            "ask_s": first_s, "second_s": second_s,
            "relisten_s": rep.seconds if rep else 0.0,
            "outcomes": [x.outcome for x in rep.memories] if rep else [],
            # the second ask may not even reach detailed recall: the corrected summary answers
            "again": ([x.outcome for x in trace2.notes["relisten"].memories]
                      if "relisten" in trace2.notes else [f"{again.pathway.value} path"]),
            "answer": after.answer,
            "timings": after.timings_ms, "timings2": again.timings_ms,
        })
    print(f"split={split}  items={len(results)}  recogniser={on.relisten.recognizer().model_id}  "
          f"beam={settings.relisten_beam_size}  bias={settings.relisten_bias}")
    for r in results:
        print(f"- {r['voice']:<20} {r['snr_db']:>4.0f} dB  before={'right' if r['right_before'] else 'wrong'}  "
              f"after={'right' if r['right_after'] else 'wrong'}  fixed={r['fixed']}  ask={r['ask_s']:.2f}s "
              f"(relisten {r['relisten_s']:.2f}s)  second={r['second_s']:.2f}s  {r['outcomes']}→{r['again']}")
        print(f"    garbled : {r['garbled']}\n    stored  : {r['stored_after']}\n    answer  : {r['answer']}")
        print(f"    stages  : {r['timings']}\n    second  : {r['timings2']}")
    n = len(results)
    print(f"answers right: before {sum(r['right_before'] for r in results)}/{n}, "
          f"after {sum(r['right_after'] for r in results)}/{n}; transcripts fixed {sum(r['fixed'] for r in results)}/{n}")
    asks = [r["ask_s"] for r in results]
    print(f"re-listened Ask: median {statistics.median(asks):.2f} s, max {max(asks):.2f} s; "
          f"relisten stage median {statistics.median(r['relisten_s'] for r in results):.2f} s; "
          f"second Ask median {statistics.median(r['second_s'] for r in results):.2f} s")
    if compare_bias:
        compare_biases(on.relisten, c, rows)
    c.close()


def compare_biases(relistener, components, rows) -> None:
    """Transcribe each item's stored audio once per bias mode; score and check answer words."""
    from episodic.retrieval.listen_targets import hot_words
    from episodic.retrieval.snippet_audio import memory_audio
    from episodic.retrieval.transcript_scorer import TranscriptScorer

    rec = relistener.recognizer()
    scorer = TranscriptScorer(relistener._whisper())
    modes = ("prompt", "hotwords", "none")
    stats = {m: {"score": [], "hits": 0, "s": []} for m in modes}
    for item, _voice, _stream, mid, _ingest, _wrong in rows:
        m = components.store.get_memory(mid)
        audio = memory_audio(m, m.t_start, m.t_end, components.snippets.path_for)
        enc = scorer.encode(audio)
        words = hot_words(item.question)
        for mode in modes:
            relistener.settings = relistener.settings.replace(relisten_bias=mode)
            bias = relistener._bias(item.question, (), words)
            t = time.perf_counter()
            pieces = rec.transcribe(audio, 16000, m.t_start, beam_size=relistener.settings.relisten_beam_size, **bias)
            stats[mode]["s"].append(time.perf_counter() - t)
            text = " ".join(p.text for p in pieces)
            score = scorer.score(enc, [text])[0]
            stats[mode]["score"].append(score if score is not None else -10.0)
            stats[mode]["hits"] += holds(text, item.answer)
    print("bias mode comparison (same audio):")
    for mode in modes:
        st = stats[mode]
        print(f"  {mode:<9} mean token log-prob {np.mean(st['score']):+.3f}  answer words heard "
              f"{st['hits']}/{len(rows)}  transcribe {np.median(st['s']):.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "held-out"), default="held-out")
    ap.add_argument("--bias", action="store_true", help="also compare prompt / hotwords / none")
    args = ap.parse_args()
    run(args.split, args.bias)


if __name__ == "__main__":
    main()
