"""Questions about one moment of a recording's own time ("What was written on screen at 0:50 in
garden-cam?", "What could be heard at 1:30 in library-cam?") over ingested QA sets: answered
with what was there then?

The generated sets ask none. This turns each set's sign, mention, sound and picture moments into
one at the middle of the moment's first target (worded here and nowhere else, times written
m:ss as a person reads them off a player), and judges the answer as free-form answers are
judged (`episodic.qa_evaluation.free_form_correct`): the sign's text, the thing mentioned, the
kind of sound, the picture's names. Prints each miss and the totals by kind.

    .venv/bin/python benchmarks/bench_qa.py --split dev --seed 4 --root /tmp/qa --reingest
    .venv/bin/python benchmarks/bench_time_anchor.py --root /tmp/qa --seeds 4 6 13 14
    .venv/bin/python benchmarks/bench_time_anchor.py --folders /tmp/qa/v1-s5-n3-m2.5-o-h6 …
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qa_runs import add_set_arguments, set_folders  # noqa: E402

from episodic.components import Components  # noqa: E402
from episodic.config import load_settings  # noqa: E402
from episodic.core.query import AskRequest  # noqa: E402
from episodic.qa_content import PHOTOS  # noqa: E402
from episodic.qa_evaluation import free_form_correct  # noqa: E402
from episodic.services.qa import MemoryQA  # noqa: E402

SOUNDS = {"music playing": "music", "an engine running": "engine", "people applauding": "applause|clapping"}


def _stamp(t: float) -> str:
    t = int(round(t))
    return f"{t // 60}:{t % 60:02d}"


def questions(folder: Path, split: str) -> list[tuple[str, str, list[str]]]:
    """(kind, question, accepted answers) for each of the set's moments one can ask about."""
    qa = json.loads((folder / split / "qa.json").read_text(encoding="utf-8"))
    photos = {p.label: list(p.answers) for s in PHOTOS.values() for p in s}
    out = []
    for m in qa["moments"]:
        target = m["targets"][0]
        at, sid = _stamp((target["t_start"] + target["t_end"]) / 2), target["stream_id"]
        query = m["query"]
        if query.startswith("the sign saying "):
            out.append(("sign", f"What was written on screen at {at} in {sid}?", [query[16:]]))
        elif query.startswith("someone mentions "):
            thing = re.sub(r"^(?:the|a|an)\s+", "", query[17:])
            out.append(("mention", f"What was said at {at} in {sid}?", [thing]))
        elif query in SOUNDS:
            out.append(("sound", f"What could be heard at {at} in {sid}?", [SOUNDS[query]]))
        elif query.startswith("a picture of ") and query[13:] in photos:
            out.append(("picture", f"What was shown at {at} in {sid}?", photos[query[13:]]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_set_arguments(ap)
    ap.add_argument("--folders", type=Path, nargs="+", help="set folders to read instead of --seeds")
    args = ap.parse_args()
    totals: dict[str, list[int]] = {}
    for folder in args.folders or set_folders(args):
        components = Components(load_settings(data_dir=folder / f"data-{args.split}"))
        qa = MemoryQA(components, warm_after_request=False)
        try:
            for kind, question, answers in questions(folder, args.split):
                result = qa.ask(AskRequest(question))
                right = free_form_correct(result.answer, answers)
                row = totals.setdefault(kind, [0, 0])
                row[0] += right
                row[1] += 1
                if not right:
                    print(f"MISSED {result.confidence:.2f} | {folder.name} | {question} | {answers[0]} | {result.answer[:90]}")
        finally:
            components.close()
    for kind, (right, asked) in sorted(totals.items()):
        print(f"{kind}: {right}/{asked} right")
    print(f"all: {sum(r for r, _ in totals.values())}/{sum(n for _, n in totals.values())} right")


if __name__ == "__main__":
    main()
