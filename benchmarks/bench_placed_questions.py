"""Questions placed by the recording's own structure rather than by words, over ingested QA sets:
when in the recording something was mentioned, what was said while (or right after) a sound
went on, when the screen was dark, which signs were shown, who was mentioned. Answered right?

The generated sets ask none of these (session 64). This words them here, from each set's script
(what was said when, where the sounds, dark stretches and signs were), and judges each answer
by what it cites or names, not by its wording:

- ``when``: "When was the suitcase mentioned?" (the set's "someone mentions …" moments): right
  when the answer's first evidence is in one of the moment's streams and overlaps it (± 2 s).
- ``while-sound``: "What was said while the engine was running in garden-cam?": right when the
  first evidence overlaps a sentence spoken during the sound, or, when none was, the answer
  says no words were heard.
- ``after-sound``: "What was said right after the music in kitchen-cam?": right when the first
  evidence overlaps the first sentence that starts once the sound has stopped.
- ``dark``: "When was the screen dark in library-cam?": right when every dark stretch of the
  script overlaps a stretch the answer cites.
- ``signs``: "Which signs were shown in garden-cam?": right when the answer names every sign.
- ``who``: "Who was mentioned in station-cam?": right when it names every person said there
  (as written in the script; a misheard name is a miss), with the names it adds counted apart.
- ``times`` / ``rooms``: "What times (Which rooms) were mentioned in harbour-cam?": right when
  the answer holds every clock time (room number) the set's own time (room) questions about
  that stream have as their answer, in any of its written forms.

Prints each miss (dev; held-out: totals only, pass --quiet) and the totals by kind.

    .venv/bin/python benchmarks/bench_placed_questions.py --root /tmp/qa --seeds 4 6 13 14
    .venv/bin/python benchmarks/bench_placed_questions.py --folders /tmp/qa/v1-s5-n3-m2.5-o-h6 …
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
from episodic.qa_content import NAMES  # noqa: E402
from episodic.qa_evaluation import mentions  # noqa: E402
from episodic.retrieval.question_shape import focus_of  # noqa: E402
from episodic.services.qa import MemoryQA  # noqa: E402

SLACK_S = 2.0
SOUND_PHRASES = {
    "music": ("What was said while the music was playing in {sid}?", "What was said right after the music in {sid}?"),
    "engine": ("What was said while the engine was running in {sid}?", "What was said right after the engine noise in {sid}?"),
    "applause": ("What was said during the applause in {sid}?", "What was said right after the applause in {sid}?"),
}


def _overlaps(a0: float, a1: float, b0: float, b1: float, slack: float = 0.0) -> bool:
    return min(a1, b1) + slack >= max(a0, b0)


def _sentences(record: dict) -> list[tuple[float, float, str]]:
    return [(b["speech_t"][0], b["speech_t"][1], b["said"]) for b in record["beats"] if b.get("said") and b.get("speech_t")]


def _asks(question: str) -> str:
    """"time" for a question asking a clock time, "room" for one asking a room, else ""."""
    if re.search(r"\broom\b", question, re.I) and re.search(r"\b(?:which|what)\s+room\b", question, re.I):
        return "room"
    return "time" if focus_of(question) == "time" else ""


def _answer_forms(item: dict) -> tuple[str, ...]:
    """A labelled item's right answer in each written form it accepts."""
    if item.get("answers"):
        return tuple(a for alt in item["answers"] for a in alt.split("|"))
    return (item["options"][item["answer_index"]],)


def questions(folder: Path, split: str) -> list[tuple[str, str, dict]]:
    """(kind, question, what a right answer holds) for the set."""
    script = json.loads((folder / split / "script.json").read_text(encoding="utf-8"))
    qa = json.loads((folder / split / "qa.json").read_text(encoding="utf-8"))
    out: list[tuple[str, str, dict]] = []
    for m in qa["moments"]:
        if m["query"].startswith("someone mentions "):
            thing = re.sub(r"^(?:the|a|an)\s+", "", m["query"][17:])
            spans = [(t["stream_id"], t["t_start"], t["t_end"]) for t in m["targets"]]
            out.append(("when", f"When was the {thing} mentioned?", {"spans": spans}))
    for rec in script:
        sid, said = rec["stream_id"], _sentences(rec)
        for kind, a, b in rec["sounds"]:
            if kind not in SOUND_PHRASES:
                continue
            during = [(s0, s1) for s0, s1, _ in said if min(s1, b) - max(s0, a) >= 0.5]
            after = [(s0, s1) for s0, s1, _ in said if s0 >= b - 0.5]
            while_q, after_q = (p.format(sid=sid) for p in SOUND_PHRASES[kind])
            out.append(("while-sound", while_q, {"sid": sid, "during": during}))
            if after and after[0][0] - b < 30.0:
                out.append(("after-sound", after_q, {"sid": sid, "next": after[0]}))
        dark = [(b["t_start"], b["t_start"] + b["duration_s"]) for b in rec["beats"] if b["visual"] == "dark"]
        if dark:
            out.append(("dark", f"When was the screen dark in {sid}?", {"sid": sid, "dark": dark}))
        signs = sorted({b["sign"] for b in rec["beats"] if b["visual"] in ("sign", "slide") and b["sign"]})
        if signs:
            out.append(("signs", f"Which signs were shown in {sid}?", {"signs": signs}))
        names = sorted({n for n in NAMES[split] for _, _, s in said if re.search(rf"\b{n}\b", s)})
        if names:
            out.append(("who", f"Who was mentioned in {sid}?", {"names": names}))
        # the set's own labels for its time and room questions about this stream
        for plural, wording, wanted in (("times", "What times were", "time"), ("rooms", "Which rooms were", "room")):
            values = sorted({_answer_forms(it) for it in qa["items"] if it["answerable"] and it["category"] == "A"
                             and any(e["stream_id"] == sid for e in it.get("evidence") or [])
                             and _asks(it["question"]) == wanted})
            if values:
                out.append((plural, f"{wording} mentioned in {sid}?", {"values": values}))
    return out


def judge(kind: str, answer: str, evidence: list, truth: dict) -> tuple[bool, int]:
    """Whether the answer is right, and (for ``who``) how many names it adds."""
    first = evidence[0] if evidence else None
    if kind == "when":
        return first is not None and any(first.stream_id == sid and _overlaps(first.t_start, first.t_end, a, b, SLACK_S)
                                         for sid, a, b in truth["spans"]), 0
    if kind == "while-sound":
        if not truth["during"]:
            return answer.startswith("No words were heard"), 0
        return first is not None and first.stream_id == truth["sid"] and any(
            _overlaps(first.t_start, first.t_end, a, b) for a, b in truth["during"]), 0
    if kind == "after-sound":
        a, b = truth["next"]
        return first is not None and first.stream_id == truth["sid"] and _overlaps(first.t_start, first.t_end, a, b), 0
    if kind == "dark":
        cited = [(float(x), float(y)) for x, y in re.findall(rf"{re.escape(truth['sid'])}, ([\d.]+)–([\d.]+) s", answer)]
        return bool(cited) and all(any(_overlaps(a, b, x, y) for x, y in cited) for a, b in truth["dark"]), 0
    if kind == "signs":
        return all(s.lower() in answer.lower() for s in truth["signs"]), 0
    if kind in ("times", "rooms"):
        return all(any(mentions(answer, form.strip()) for form in value) for value in truth["values"]), 0
    if kind == "who":
        listed = answer.split(" (heard")[0]
        said = set(truth["names"])
        heard = {w for w in re.findall(r"[A-Z][a-z]+", listed)}
        return said <= heard, len(heard - said)
    raise ValueError(kind)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_set_arguments(ap)
    ap.add_argument("--folders", type=Path, nargs="+", help="set folders to read instead of --seeds")
    ap.add_argument("--quiet", action="store_true", help="totals only (for held-out sets)")
    ap.add_argument("--kinds", nargs="+", help="ask only these kinds (when, while-sound, …, times, rooms)")
    args = ap.parse_args()
    totals: dict[str, list[int]] = {}
    for folder in args.folders or set_folders(args):
        components = Components(load_settings(data_dir=folder / f"data-{args.split}"))
        qa = MemoryQA(components, warm_after_request=False)
        try:
            for kind, question, truth in questions(folder, args.split):
                if args.kinds and kind not in args.kinds:
                    continue
                result = qa.ask(AskRequest(question))
                right, extra = judge(kind, result.answer, list(result.evidence), truth)
                row = totals.setdefault(kind, [0, 0, 0])
                row[0] += right
                row[1] += 1
                row[2] += extra
                if not right and not args.quiet:
                    print(f"MISSED | {folder.name} | {question} | {result.answer[:110]}")
        finally:
            components.close()
    for kind, (right, asked, extra) in sorted(totals.items()):
        print(f"{kind}: {right}/{asked} right" + (f" ({extra} names added)" if kind == "who" else ""))
    print(f"all: {sum(r[0] for r in totals.values())}/{sum(r[1] for r in totals.values())} right")


if __name__ == "__main__":
    main()
