"""Were the re-hearings better than what ingest heard? Scored against the generator's script.

Every re-listening attempt is recorded in its memory (``metadata["transcripts"]``, see
retrieval/relisten.py) with its text, the hot words it was given and the scorer's mean token
log-probability for it and for the stored words. After ``bench_qa.py`` has asked a generated
set's questions, this reads those records from the set's store and compares each re-hearing
and ingest's words with what the script says was said in the same span (word error rate),
grouped by whether the re-hearing won on the scorer (by ``relisten_min_gain``) and whether it
adds words the question asked for. Run it on the dev split: it reads what was said.

    .venv/bin/python benchmarks/bench_qa.py --split dev --seed 4 --root /tmp/qa --reingest
    .venv/bin/python benchmarks/relisten_versions.py --root /tmp/qa --seeds 4 5 6 8 [--list]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_asr import edit_distance  # noqa: E402
from qa_runs import add_set_arguments, set_folders  # noqa: E402

from episodic.components import Components  # noqa: E402
from episodic.config import load_settings  # noqa: E402
from episodic.retrieval.listen_targets import _words_added  # noqa: E402

SAME_WITHIN = 0.05  # a word-error-rate difference this small is "the same"


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def word_error_rate(heard: str, said: str) -> float:
    """Word edits from what was said to what was heard, per word said (plain words, no
    number spelling: both sides come from the same recogniser or the same script)."""
    said_words = _words(said)
    return edit_distance(said_words, _words(heard)) / max(1, len(said_words))


def versions(folder: Path, split: str):
    """(ingest's version, the re-hearing's version, what was said) for every re-hearing
    whose words differ from ingest's, in the set under ``folder``."""
    script = json.loads((folder / split / "script.json").read_text(encoding="utf-8"))
    said = {r["stream_id"]: [(b["speech_t"][0], b["speech_t"][1], b["said"]) for b in r["beats"]
                             if b.get("said") and b.get("speech_t")] for r in script}
    components = Components(load_settings(data_dir=folder / f"data-{split}"))
    try:
        for m in components.store.list_memories(with_vectors=False, limit=100_000):
            history = m.metadata.get("transcripts") or []
            if len(history) < 2:
                continue
            ingest = history[0]
            for v in history[1:]:
                t0, t1 = v.get("span") or (m.t_start, m.t_end)
                truth = " ".join(s for a, b, s in said.get(m.stream_id, []) if t0 - 0.5 <= (a + b) / 2 < t1 + 0.5)
                old, new = ingest.get("text") or "", v.get("text") or ""
                if truth and new.strip() and _words(old) != _words(new) and v.get("score") is not None \
                        and ingest.get("score") is not None:
                    yield ingest, v, truth
    finally:
        components.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_set_arguments(ap)
    ap.add_argument("--list", action="store_true", help="print every re-hearing beside ingest's words and the script's")
    args = ap.parse_args()
    min_gain = load_settings().retrieval.relisten_min_gain
    table: Counter[tuple[str, str, str]] = Counter()
    for folder in set_folders(args):
        for ingest, v, truth in versions(folder, args.split):
            old, new = ingest["text"], v["text"]
            gap = v["score"] - ingest["score"]
            diff = word_error_rate(new, truth) - word_error_rate(old, truth)
            verdict = "better" if diff < -SAME_WITHIN else "worse" if diff > SAME_WITHIN else "same"
            wins = "wins on the scorer" if gap >= min_gain else "loses on the scorer"
            adds = "adds the question's words" if _words_added(old, new, v.get("hotwords") or []) else "adds none"
            table[(wins, adds, verdict)] += 1
            if args.list:
                print(f"{gap:+6.2f} {verdict:6s} {adds[:4]:4s} | {old[:48]:48s} | {new[:48]:48s} | {truth[:48]}")
    print(f"{'re-hearing':48s} better  same  worse")
    for wins in ("wins on the scorer", "loses on the scorer"):
        for adds in ("adds the question's words", "adds none"):
            row = [table[(wins, adds, v)] for v in ("better", "same", "worse")]
            print(f"{wins + ', ' + adds:48s} {row[0]:6d} {row[1]:5d} {row[2]:6d}")


if __name__ == "__main__":
    main()
