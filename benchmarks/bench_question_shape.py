"""How a question's shape survives other wordings: no recordings, no answers, only the reading.

A dev question in the generator's wording and the same question in other words
(benchmarks/qa_rewordings.py) ask for the same thing, so the analysis should read the same
shape from both: the same order, count, stream, focus (time, number, place, name, colour),
sound, gist and cross-modal moment. This prints, per rewording table, the share of reworded
questions whose shape matches their original's, and which fields differ, read by the wording
rules alone (``question_shape`` on the plain wording) and with the focus the nearest example
questions give where the rules read none (``QueryAnalyzer.shape_of``, the real MiniLM
embedder; retrieval/shape_examples.py). The original's shape is taken as right: a label-free
figure, cheap enough to run after every change to the rules (about ten seconds).

It reads the dev QA sets that ``bench_qa.py --split dev`` builds under ``--root`` (one
``*/dev/qa.json`` per set); held-out sets are never read.

    .venv/bin/python benchmarks/bench_question_shape.py [--root DIR] [--tables session19 session82 …] [--show N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # qa_rewordings, however this is run

import numpy as np  # noqa: E402
from qa_rewordings import TABLES, reword  # noqa: E402

from episodic.config import load_settings  # noqa: E402
from episodic.qa_set import load_qa_set  # noqa: E402
from episodic.retrieval.plain_wording import asked_plainly  # noqa: E402
from episodic.retrieval.query_analysis import QueryAnalyzer  # noqa: E402
from episodic.retrieval.question_shape import QuestionShape, question_shape  # noqa: E402

DEFAULT_ROOT = Path("/tmp/episodic-bench-qa")
FIELDS = ("order", "counts", "asks_stream", "focus", "sound", "gist", "said_while_dark")
# compared as present or not: their text is the rewording's own
PRESENT = ("pictured_while", "said_while_pictured", "said_while_sound", "compared", "anchor")


def signature(shape: QuestionShape) -> dict[str, object]:
    out = {**{f: getattr(shape, f) for f in FIELDS}, **{f: bool(getattr(shape, f)) for f in PRESENT}}
    if shape.asks_stream or shape.gist:  # answered by a stream's name or its gist, not a phrase
        out["focus"] = "-"
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="where bench_qa.py keeps its sets")
    ap.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES), help="rewording tables")
    ap.add_argument("--show", type=int, default=0, help="print up to N disagreeing questions per table")
    args = ap.parse_args()
    sets = sorted(args.root.glob("*/dev/qa.json"))
    if not sets:
        ap.error(f"no dev QA sets under {args.root}: build one with benchmarks/bench_qa.py --split dev")
    from episodic.components import Components

    with tempfile.TemporaryDirectory() as tmp:
        components = Components(load_settings(data_dir=Path(tmp) / "data"))
        analyzer = QueryAnalyzer(components.embedder)
        pairs: dict[str, dict[tuple[str, str, int], None]] = {t: {} for t in args.tables}  # ordered, unique
        for path in sets:
            for item in load_qa_set(path).items:
                if not item.answerable:
                    continue
                n_options = len(item.options or [])
                for table in args.tables:
                    for n in range(3):  # each template has at most three wordings
                        other = reword(item.question, n, TABLES[table])
                        if other:
                            pairs[table][(item.question, other, n_options)] = None
        texts = sorted({asked_plainly(q) for ps in pairs.values() for a, b, _ in ps for q in (a, b)})
        vectors = dict(zip(texts, np.asarray(components.embedder.embed_texts(texts), dtype=np.float32), strict=True))
        print(f"{len(sets)} dev sets under {args.root}")
        for table, ps in pairs.items():
            readers = (("rules", lambda q, k: question_shape(asked_plainly(q), k)),
                       ("rules + examples", lambda q, k: analyzer.shape_of(asked_plainly(q), vectors[asked_plainly(q)], k)))
            for label, read in readers:
                differ: Counter[str] = Counter()
                same, shown = 0, 0
                for original, other, k in ps:
                    a, b = signature(read(original, k)), signature(read(other, k))
                    fields = [f for f in a if a[f] != b[f]]
                    same += not fields
                    differ.update(fields)
                    if fields and shown < args.show and label != "rules":
                        shown += 1
                        print(f"    {original!r} → {other!r}: " + ", ".join(f"{f} {a[f]!r}→{b[f]!r}" for f in fields))
                share = same / len(ps) if ps else 0.0
                print(f"{table:16s} {label:17s} same shape {same}/{len(ps)} ({share:.1%})"
                      + (f"; differ in {dict(differ.most_common())}" if differ else ""))
        components.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
