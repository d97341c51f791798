"""Questions that ask *whether* ("Was there a picture of a cat on screen?", "Did anyone mention
the printer?", "Was there music?") over ingested QA sets: answered yes at the right moment when
it happened, refused when it did not?

The generated sets ask no yes-or-no questions. This turns each set's moment queries for a
picture, a mention, a sign, a sound and a dark screen into one (worded here and nowhere else),
and asks as many about things the set never showed, said, wrote or played: pictures, objects of
another theme, signs and sounds from the lists below. A yes is right when the first evidence it
cites lies within a second of one of the moment's targets. Prints each miss and the totals.

    .venv/bin/python benchmarks/bench_qa.py --split dev --seed 4 --root /tmp/qa --reingest
    .venv/bin/python benchmarks/bench_yes_no.py --root /tmp/qa --seeds 4 6 13 14
    .venv/bin/python benchmarks/bench_yes_no.py --folders /tmp/qa/v1-s5-n3-m2.5-o-h6 …
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qa_runs import add_set_arguments, set_folders  # noqa: E402

from episodic.components import Components  # noqa: E402
from episodic.config import load_settings  # noqa: E402
from episodic.core.query import AskRequest  # noqa: E402
from episodic.qa_content import THEMES  # noqa: E402
from episodic.qa_evaluation import is_abstention  # noqa: E402
from episodic.services.qa import MemoryQA  # noqa: E402

NEVER_PICTURED = ("a giraffe", "a bicycle", "a guitar", "a pizza", "an aeroplane", "a horse", "a lighthouse",
                  "a snowman", "a violin", "a tractor")
NEVER_WRITTEN = ("NO PARKING", "EXIT ONLY", "WET FLOOR", "STAFF ONLY", "PLATFORM 9", "ROOM 404")
NEVER_HEARD = ("Was there a dog barking?", "Could you hear a siren?", "Did a baby cry?", "Was there thunder?")
SLACK_S = 1.0
# moment query wordings (episodic/qa_generator.py) → a yes-or-no question in other words
_POSITIVE = (
    (re.compile(r"^a picture of (.+)$"), "Was there a picture of {0} on screen?"),
    (re.compile(r"^someone mentions (.+)$"), "Did anyone mention {0}?"),
    (re.compile(r"^the sign saying (.+)$"), "Was a sign saying {0} shown?"),
    (re.compile(r"^people applauding$"), "Was there applause?"),
    (re.compile(r"^an engine running$"), "Could you hear an engine?"),
    (re.compile(r"^music playing$"), "Was there music?"),
    (re.compile(r"^the screen goes dark$"), "Did the screen go dark?"),
)


def positives(folder: Path, split: str) -> list[tuple[str, list[dict]]]:
    """(question, targets) for each of the set's moments a yes-or-no question can ask about."""
    qa = json.loads((folder / split / "qa.json").read_text(encoding="utf-8"))
    out: dict[str, list[dict]] = {}
    for m in qa["moments"]:
        for pattern, form in _POSITIVE:
            hit = pattern.match(m["query"])
            if hit:
                out.setdefault(form.format(*hit.groups()), []).extend(m["targets"])
    return list(out.items())


def negatives(folder: Path, split: str) -> list[str]:
    """Questions about pictures, things, signs and sounds the set never had."""
    qa = json.loads((folder / split / "qa.json").read_text(encoding="utf-8"))
    script = json.loads((folder / split / "script.json").read_text(encoding="utf-8"))
    rng = random.Random(folder.name)
    queries = " ".join(m["query"] for m in qa["moments"]).lower()
    said = " ".join(b.get("said") or "" for rec in script for b in rec["beats"]).lower()
    streams = {rec["stream_id"] for rec in script}
    pictures = [p for p in NEVER_PICTURED if p.split()[-1] not in queries]
    signs = [s for s in NEVER_WRITTEN if s.lower() not in queries]
    things = [o for t in THEMES[split] if t.stream_id not in streams for o in t.objects if o not in said]
    out = [f"Was there a picture of {p} on screen?" for p in rng.sample(pictures, min(3, len(pictures)))]
    out += [f"Did anyone mention the {o}?" for o in rng.sample(things, min(3, len(things)))]
    out += [f"Was a sign saying {s} shown?" for s in rng.sample(signs, min(2, len(signs)))]
    out += list(rng.sample(NEVER_HEARD, 2))
    return out


def at_target(result, targets: list[dict]) -> bool:
    """Whether the first evidence the answer cites lies within SLACK_S of a target."""
    if not result.evidence:
        return False
    e = result.evidence[0]
    return any(e.stream_id == t["stream_id"] and e.t_start <= t["t_end"] + SLACK_S and e.t_end >= t["t_start"] - SLACK_S
               for t in targets)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_set_arguments(ap)
    ap.add_argument("--folders", type=Path, nargs="+", help="set folders to read instead of --seeds")
    args = ap.parse_args()
    yes = right = asked = 0
    refused = false_yes = asked_never = 0
    for folder in args.folders or set_folders(args):
        components = Components(load_settings(data_dir=folder / f"data-{args.split}"))
        qa = MemoryQA(components, warm_after_request=False)
        try:
            for question, targets in positives(folder, args.split):
                result = qa.ask(AskRequest(question))
                asked += 1
                said_yes = result.answer.startswith("Yes")
                yes += said_yes
                right += said_yes and at_target(result, targets)
                if not (said_yes and at_target(result, targets)):
                    print(f"MISSED {result.confidence:.2f} | {folder.name} | {question} | {result.answer[:100]}")
            for question in negatives(folder, args.split):
                result = qa.ask(AskRequest(question))
                asked_never += 1
                refused += is_abstention(result.answer)
                false_yes += result.answer.startswith("Yes")
                if not is_abstention(result.answer):
                    print(f"ANSWERED {result.confidence:.2f} | {folder.name} | {question} | {result.answer[:100]}")
        finally:
            components.close()
    print(f"{asked} about what happened: yes {yes}, yes at the right moment {right}")
    print(f"{asked_never} about what never happened: refused {refused}, answered yes {false_yes}")


if __name__ == "__main__":
    main()
