"""Questions about what was never recorded, in phrasings the generator does not use: refused?

The generated sets hold ten unanswerable questions each, in the set's own question templates.
This asks more of them over an ingested dev set, worded here and nowhere else: about someone
named in the recordings with a thing, person or event from a theme the set does not have
("Where did Maria put the anchor?", "When is Tom meeting the archivist?"), and about a name
never said with the set's own things ("What colour does Quentin want the ladle to be?"). Every
one should be refused ("I found nothing about that in memory"); the script prints those that
were answered, and how many. Choices are seeded by the set's folder, so a run is repeatable.

    .venv/bin/python benchmarks/bench_qa.py --split dev --seed 4 --root /tmp/qa --reingest
    .venv/bin/python benchmarks/bench_never_recorded.py --root /tmp/qa --seeds 4 5 6 8
    .venv/bin/python benchmarks/bench_never_recorded.py --folders /tmp/qa/v1-s5-n3-m2.5-o-h6 …
    .venv/bin/python benchmarks/bench_never_recorded.py --more --folders …   (other shapes, session 63)
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qa_runs import add_set_arguments, set_folders  # noqa: E402

from episodic.components import Components  # noqa: E402
from episodic.config import load_settings  # noqa: E402
from episodic.core.query import AskRequest  # noqa: E402
from episodic.qa_content import NAMES, THEMES  # noqa: E402
from episodic.qa_evaluation import is_abstention  # noqa: E402
from episodic.services.qa import MemoryQA  # noqa: E402

# someone in the recordings, with something from a theme the set does not have
ABOUT_ANOTHER_THEME = (
    "Where did {name} put the {object}?", "What colour is the {object} that {name} painted?",
    "How much did {name} pay for the {thing}?", "When is {name} meeting the {role}?",
    "Who is looking after the {object}?", "How many {items} did {name} buy?",
    "What time does the {event} start?", "Which room is the {event} in?",
)
# someone never named, with the set's own things
ABOUT_SOMEONE_ELSE = (
    "Where did {name} leave the {object}?", "What colour does {name} want the {object} to be?",
    "When is {name} seeing the {role}?", "How many {items} does {name} have?",
)
STRANGERS = ("Quentin", "Beatrix")
# --more (session 63): other shapes still — things of another theme asked about alone, a
# stranger's doings and things, and why someone named did something never said
MORE_ABOUT_ANOTHER_THEME = (
    "Which room is the {event} in?", "What time does the {event} finish?", "How much does the {object} cost?",
    "Who is meeting the {role}?", "What colour is the {object}?", "Where is the {object} now?",
    "How many {items} are left?", "Who repaired the {object}?",
)
MORE_ABOUT_SOMEONE_ELSE = (
    "What did {stranger} buy this morning?", "When does {stranger} arrive?", "What colour is {stranger}'s {object}?",
    "Where did {stranger} go after lunch?", "What is {stranger}'s phone number?", "Why was {name} late?",
)
MORE_STRANGERS = ("Quentin", "Beatrix", "Ignatius")


def questions(folder: Path, split: str) -> list[str]:
    """The set's questions about what was never recorded (see the module doc)."""
    script = json.loads((folder / split / "script.json").read_text(encoding="utf-8"))
    rng = random.Random(folder.name)
    streams = {rec["stream_id"] for rec in script}
    said = " ".join(b.get("said") or "" for rec in script for b in rec["beats"])
    here = [t for t in THEMES[split] if t.stream_id in streams]
    elsewhere = [t for t in THEMES[split] if t.stream_id not in streams]
    named = [n for n in NAMES[split] if n in said]
    strangers = [n for n in NAMES[split] if n not in said] + list(STRANGERS)
    out = []
    for form in ABOUT_ANOTHER_THEME if elsewhere and named else ():
        t = rng.choice(elsewhere)
        out.append(form.format(name=rng.choice(named), object=rng.choice(t.objects), thing=t.items[0][0],
                               role=rng.choice(t.roles), items=t.items[1][1], event=rng.choice(t.events)))
    for form in ABOUT_SOMEONE_ELSE if here else ():
        t = rng.choice(here)
        out.append(form.format(name=rng.choice(strangers), object=rng.choice(t.objects),
                               role=rng.choice(t.roles), items=t.items[1][1]))
    return out


def more_questions(folder: Path, split: str) -> list[str]:
    """``--more``: the set's questions about what was never recorded in the other shapes above."""
    script = json.loads((folder / split / "script.json").read_text(encoding="utf-8"))
    rng = random.Random(folder.name + "p2")
    streams = {rec["stream_id"] for rec in script}
    said = " ".join(b.get("said") or "" for rec in script for b in rec["beats"])
    here = [t for t in THEMES[split] if t.stream_id in streams]
    elsewhere = [t for t in THEMES[split] if t.stream_id not in streams]
    named = [n for n in NAMES[split] if n in said] or ["Tom"]
    out = []
    for form in MORE_ABOUT_ANOTHER_THEME if elsewhere else ():
        t = rng.choice(elsewhere)
        out.append(form.format(event=rng.choice(t.events), object=rng.choice(t.objects), role=rng.choice(t.roles),
                               items=t.items[1][1]))
    for form in MORE_ABOUT_SOMEONE_ELSE if here else ():
        t = rng.choice(here)
        out.append(form.format(stranger=rng.choice(MORE_STRANGERS), object=rng.choice(t.objects), name=rng.choice(named)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_set_arguments(ap)
    ap.add_argument("--folders", type=Path, nargs="+", help="set folders to read instead of --seeds")
    ap.add_argument("--more", action="store_true",
                    help="ask the other shapes (session 63: another theme's things alone, strangers, why) instead")
    args = ap.parse_args()
    make = more_questions if args.more else questions
    answered = asked = 0
    for folder in args.folders or set_folders(args):
        components = Components(load_settings(data_dir=folder / f"data-{args.split}"))
        qa = MemoryQA(components, warm_after_request=False)
        try:
            for question in make(folder, args.split):
                result = qa.ask(AskRequest(question))
                asked += 1
                if not is_abstention(result.answer):
                    answered += 1
                    print(f"ANSWERED {result.confidence:.2f} | {folder.name} | {question} | {result.answer[:90]}")
        finally:
            components.close()
    print(f"{asked} questions about what was never recorded: refused {asked - answered}, answered {answered}")


if __name__ == "__main__":
    main()
