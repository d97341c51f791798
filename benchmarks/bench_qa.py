"""Question-answering accuracy on generated recordings the memory has never seen (issue 12, item 8).

Builds (once, cached under ``--root``) the dev and/or held-out QA sets of
:mod:`episodic.qa_generator`, ingests their recordings into a store of their own
(``ROOT/data-<split>``, skipped when already there), asks every question through the same
in-process service ``episodic ask`` uses and prints :mod:`episodic.qa_evaluation`'s figures:
accuracy by category (multiple choice and free form), abstention on unanswerable questions,
moment R@1/R@5, Ask and Search latency, the reliability table and ECE.

Report on ``--split heldout``; tune on ``--split dev`` only. ``--reworded`` asks the set's
questions in other words (benchmarks/qa_rewordings.py: the same answers, wordings the generator
does not use; meant for the dev split) to measure how much accuracy rests on the wording.
``--heard-as-script`` stores the script's sentences as the transcript instead of what Whisper
hears (benchmarks/script_hearing.py, re-listening off): what still fails then is lost after
hearing, in retrieval and answering. ``--harsher DB`` builds the split with its noise and music
bed that many decibels louder against speech (its own folder, ``…-h<DB>``): the same dev
voices, sentences and questions in worse sound, to tune hearing on without the held-out set.
``--other-sentences`` builds the dev split with its facts said in sentence shapes neither split
uses, each with its own questions (its own folder, ``…-o``): a dev figure for phrasing the service
was not tuned on, the sentence-level counterpart of ``--reworded``. ``--other-people`` has the
dev sentences said by and about people in places that are in neither split (its own folder,
``…-p``): names the recogniser may never have met, settings never tuned on. ``--other-pictures``
shows pictures in neither split (its own folder, ``…-i``): the moon, galaxies, a horse's
silhouette and an eye, mostly things the offline describer has no name for, so that several
options of one question can be such pictures at once. ``--everyday-pictures`` (``…-e``) shows a
temple, a flower, a brick wall and a colour wheel: things it names roughly, wrongly or not at all.

    .venv/bin/python benchmarks/bench_qa.py [--split heldout|dev|both] [--root DIR]
        [--seed 0] [--streams 3] [--minutes 2.5] [--harsher DB] [--other-sentences] [--other-people]
        [--other-pictures | --everyday-pictures] [--reingest] [--reworded]
        [--heard-as-script] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # qa_rewordings, however this is run

from qa_rewordings import TABLES, reworded  # noqa: E402
from rich.console import Console  # noqa: E402

from episodic.config import load_settings  # noqa: E402
from episodic.pipeline import Components  # noqa: E402
from episodic.qa_evaluation import QAReport, evaluate_qa, ingest_recordings, report_tables  # noqa: E402
from episodic.qa_generator import build_qa_set  # noqa: E402
from episodic.qa_set import QASet, load_qa_set  # noqa: E402

VERSION = 1  # bump when the generator changes what it writes
DEFAULT_ROOT = Path("/tmp/episodic-bench-qa")
# --heard-as-script: its own store beside data-<split>, and nothing heard again at question
# time (re-listening would replace the given words with Whisper's)
SCRIPT_STORE_SUFFIX = "-script"
SCRIPT_OVERRIDES = {"relisten_max_memories": 0, "relisten_score_options": False}


PICTURE_SUFFIX = {"other": "-i", "everyday": "-e"}  # a picture pool's set folders: …-i, …-e


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=Path(__file__).resolve().parents[1], check=False)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=Path(__file__).resolve().parents[1], check=False)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def ensure_set(root: Path, split: str, seed: int, streams: int, minutes: float, console: Console,
               harsher_db: float = 0.0, other_sentences: bool = False, other_people: bool = False,
               pictures: str = "", other_voices: bool = False) -> Path:
    """The split's qa.json, generated unless a set with the same parameters is already there;
    ``pictures``: a dev-only picture pool ("other", "everyday"; ``qa_content.PICTURE_POOLS``)."""
    harsh = f"-h{harsher_db:g}" if harsher_db else ""
    other = ("-o" if other_sentences else "") + ("-p" if other_people else "") + PICTURE_SUFFIX.get(pictures, "")
    other += "-v" if other_voices else ""
    folder = root / f"v{VERSION}-s{seed}-n{streams}-m{minutes:g}{other}{harsh}" / split
    qa_json = folder / "qa.json"
    if qa_json.is_file():
        return qa_json
    started = time.perf_counter()
    build_qa_set(folder, split, seed, streams, minutes, on_note=lambda m: console.print(m, highlight=False),
                 harsher_db=harsher_db, other_sentences=other_sentences, other_people=other_people,
                 other_pictures=pictures, other_voices=other_voices)
    console.print(f"built {qa_json} in {time.perf_counter() - started:.0f} s", highlight=False)
    return qa_json


def _evaluate_heard_as_script(qa_json: Path, qa_set: QASet, components: Components, reingest: bool,
                              note: Callable[[str], None]) -> QAReport:
    """Ingest each recording hearing its script (see script_hearing.py), then ask as usual."""
    from script_hearing import ScriptHearing

    hearing = ScriptHearing(qa_json.parent / "script.json")
    components.__dict__["asr"] = hearing  # Components builds it lazily; set before first use
    ingested = []
    for rec in qa_set.recordings:
        hearing.stream = rec.stream_id
        ingested += ingest_recordings(replace(qa_set, recordings=[rec]), components, reingest, note)
    report = evaluate_qa(qa_set, components, ingest=False, on_note=note)
    report.ingest = ingested
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("heldout", "dev", "both"), default="heldout")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--streams", type=int, default=3)
    ap.add_argument("--minutes", type=float, default=2.5)
    ap.add_argument("--harsher", type=float, default=0.0, metavar="DB",
                    help="noise and music bed this many dB louder against speech than the split's own "
                         "(same voices, sentences and questions; a folder of its own)")
    ap.add_argument("--other-sentences", action="store_true",
                    help="dev only: the facts said in sentence shapes neither split uses, asked with their own "
                         "questions (a folder of its own, ...-o)")
    ap.add_argument("--other-people", action="store_true",
                    help="dev only: the facts said by and about people in places neither split has (names a "
                         "recogniser may never have met, settings never tuned on; a folder of its own, ...-p)")
    ap.add_argument("--other-pictures", action="store_true",
                    help="dev only: pictures in neither split are shown (the moon, galaxies, a horse's silhouette, "
                         "an eye: mostly things the offline describer has no name for; a folder of its own, ...-i)")
    ap.add_argument("--everyday-pictures", action="store_true",
                    help="dev only: everyday pictures in neither split are shown (a temple, a flower, a brick wall, "
                         "a colour wheel: things the offline describer names roughly, wrongly or not at all; a "
                         "folder of its own, ...-e)")
    ap.add_argument("--other-voices", action="store_true",
                    help="dev only: everything said by another synthesiser's voices (flite's; apt-get install "
                         "flite) instead of espeak-ng's, at dev's speeds over dev's noise (a folder of its own, ...-v)")
    ap.add_argument("--reingest", action="store_true",
                    help="ingest again even when the store holds the recordings; needed to compare commits, "
                         "since a kept store holds what an earlier run's re-listening wrote back into it")
    ap.add_argument("--json", action="store_true", help="print one JSON document (summaries and per-item records)")
    ap.add_argument("--heard-as-script", action="store_true",
                    help="a diagnostic: store what the script says was said instead of what Whisper hears, "
                         "re-listening off (benchmarks/script_hearing.py; its own store, data-<split>-script)")
    ap.add_argument("--reworded", nargs="?", const="session19", choices=tuple(TABLES),
                    default=None,
                    help="ask the questions in other words (benchmarks/qa_rewordings.py; no moment queries): "
                         "session 19's rewordings (the default), session 82's (written later, tuned on less), "
                         "session 82's check (written after its rules, never tuned on), session 83's check "
                         "(written before that session's changes, never tuned on), session 84's check (likewise), session 84's "
                         "blind check (written after that session's rules, never tuned on), session 85's check (written before "
                         "that session's changes: owners, numbers and times of day) or session 85's blind check (its styles in "
                         "other words, written after its rules, never tuned on)")
    args = ap.parse_args()
    console = Console(stderr=True)
    splits = ("dev", "heldout") if args.split == "both" else (args.split,)
    out: dict[str, object] = {"commit": _commit()}
    for split in splits:
        if (args.other_sentences or args.other_people or args.other_pictures or args.everyday_pictures
                or args.other_voices) and split != "dev":
            ap.error("--other-sentences, --other-people, --other-pictures, --everyday-pictures and --other-voices "
                     "build the dev split only (use --split dev)")
        if args.other_pictures and args.everyday_pictures:
            ap.error("--other-pictures and --everyday-pictures are two different sets of pictures: choose one")
        pictures = "everyday" if args.everyday_pictures else ("other" if args.other_pictures else "")
        qa_json = ensure_set(args.root, split, args.seed, args.streams, args.minutes, console, args.harsher,
                             args.other_sentences, args.other_people, pictures, args.other_voices)
        qa_set = load_qa_set(qa_json)
        if args.reworded:
            qa_set = reworded(qa_set, args.reworded)
        def note(message: str) -> None:
            console.print(message, highlight=False)

        started = time.perf_counter()
        store = qa_json.parent.parent / f"data-{split}{SCRIPT_STORE_SUFFIX if args.heard_as_script else ''}"
        components = Components(load_settings(data_dir=store, **(SCRIPT_OVERRIDES if args.heard_as_script else {})))
        try:
            if args.heard_as_script:
                report = _evaluate_heard_as_script(qa_json, qa_set, components, args.reingest, note)
            else:
                report = evaluate_qa(qa_set, components, reingest=args.reingest, on_note=note)
        finally:
            components.close()
        wall = time.perf_counter() - started
        out[split] = {**report.to_dict(), "wall_s": round(wall, 1)}
        if not args.json:
            console.print(f"[bold]{split}[/bold]: {len(qa_set.items)} questions, {len(qa_set.moments)} moment "
                          f"queries, {wall:.0f} s (ingest {report.ingest})", highlight=False)
            for table in report_tables(report):
                Console().print(table)
    if args.json:
        sys.stdout.write(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    else:
        Console().print(f"measured at commit {out['commit']}")


if __name__ == "__main__":
    main()
