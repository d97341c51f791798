"""Near misses: questions about a person the memory never connected with the thing asked about.

"Where did Omar put the watering can?" when the recording says "Maria put the watering can by
the compost heap" (and mentions Omar elsewhere) has no answer in the memory; answering "the
compost heap" is a confident wrong answer. This builds such questions from a generated QA set
(``bench_qa.py`` makes and ingests it): every answerable free-form question about what was said
that names a person is asked twice, as written and with the name replaced by another person
named in the same recording but not in the sentence the question is about. It reports how
often the originals are answered right and how often the near misses are refused, so a rule
that refuses more near misses can be seen not to refuse the originals.

    .venv/bin/python benchmarks/bench_qa.py --split dev --seed 4 --root /tmp/qa --reingest
    .venv/bin/python benchmarks/bench_near_miss.py --root /tmp/qa --seeds 4 5 6 8 [--heard-as-script] [--list]

``--heard-as-script`` asks the store ``bench_qa.py --heard-as-script`` made (the script's words
as the transcript), where a near miss cannot hide behind a misheard name.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_qa import SCRIPT_OVERRIDES, SCRIPT_STORE_SUFFIX  # noqa: E402
from qa_runs import add_set_arguments, set_folders  # noqa: E402

from episodic.components import Components  # noqa: E402
from episodic.config import load_settings  # noqa: E402
from episodic.core.query import AskRequest, Scope  # noqa: E402
from episodic.qa_evaluation import free_form_correct, is_abstention  # noqa: E402
from episodic.qa_set import load_qa_set  # noqa: E402
from episodic.retrieval.given_names import is_given_name  # noqa: E402
from episodic.services.qa import MemoryQA  # noqa: E402

_CAPITAL = re.compile(r"\b([A-Z][a-z]+)\b")


def said_in(script: list[dict], stream_id: str, t0: float, t1: float) -> str:
    for rec in script:
        if rec["stream_id"] == stream_id:
            return " ".join(b["said"] for b in rec["beats"]
                            if b.get("said") and b.get("speech_t") and b["speech_t"][0] < t1 and b["speech_t"][1] > t0)
    return ""


def people(script: list[dict], stream_id: str) -> list[str]:
    """Given names said in a recording, in the order first said."""
    out: list[str] = []
    for rec in script:
        if rec["stream_id"] == stream_id:
            for b in rec["beats"]:
                for w in _CAPITAL.findall(b.get("said") or ""):
                    if is_given_name(w) and w not in out:
                        out.append(w)
    return out


def near_misses(folder: Path, split: str) -> list[tuple[object, str, str]]:
    """(item, near-miss question, the name put in) for the set's answerable free-form
    questions about speech that name someone said in its evidence sentence."""
    qa_set = load_qa_set(folder / split / "qa.json")
    script = json.loads((folder / split / "script.json").read_text(encoding="utf-8"))
    out = []
    for item in qa_set.items:
        if item.options or not item.answerable or item.category != "A" or not item.evidence:
            continue
        ev = item.evidence[0]
        sentence = said_in(script, ev.stream_id, ev.t_start, ev.t_end)
        asked = [w for w in _CAPITAL.findall(item.question) if is_given_name(w) and w in sentence]
        if not asked:
            continue
        others = [p for p in people(script, ev.stream_id) if p not in sentence and p not in item.question]
        if not others:
            continue
        out.append((item, re.sub(rf"\b{asked[0]}\b", others[0], item.question), others[0]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_set_arguments(ap)
    ap.add_argument("--heard-as-script", action="store_true", help="ask the store bench_qa.py --heard-as-script made")
    ap.add_argument("--list", action="store_true", help="print every question and answer")
    args = ap.parse_args()
    right = refused = refused_originals = n = 0
    for folder in set_folders(args):
        store = folder / f"data-{args.split}{SCRIPT_STORE_SUFFIX if args.heard_as_script else ''}"
        components = Components(load_settings(data_dir=store, **(SCRIPT_OVERRIDES if args.heard_as_script else {})))
        qa = MemoryQA(components, warm_after_request=False)
        try:
            for item, question, name in near_misses(folder, args.split):
                scope = Scope(stream_ids=tuple(item.scope.stream_ids)) if item.scope and item.scope.stream_ids else Scope()
                original = qa.ask(AskRequest(item.question, scope=scope))
                miss = qa.ask(AskRequest(question, scope=scope))
                ok = free_form_correct(original.answer, item.answers, item.keywords, item.wrong_answers)
                declined = is_abstention(miss.answer)
                n += 1
                right += ok
                refused += declined
                refused_originals += is_abstention(original.answer)
                if args.list:
                    print(f"{'right' if ok else 'WRONG'} {original.confidence:.2f} | {item.question} | {original.answer[:70]}")
                    print(f"{'refused' if declined else 'ANSWERED'} {miss.confidence:.2f} | {question} ({name} for the "
                          f"one said) | {miss.answer[:70]}")
        finally:
            components.close()
    print(f"{n} questions naming someone: originals right {right}/{n} (refused {refused_originals}), "
          f"near misses refused {refused}/{n}")


if __name__ == "__main__":
    main()
