"""Score the memory on a labelled question set (:mod:`episodic.qa_set`): accuracy you can see.

The recordings are ingested in-process exactly as ``episodic ingest`` does (skipped when the
store already holds the same file, fully ingested, by the same models), and every question goes
through the same :class:`services.qa.MemoryQA` that ``episodic ask`` uses, warmed up
first so latencies are those of a running server, not of loading models.

Figures:

* **multiple-choice accuracy** per category and overall (the chosen option is the labelled one);
* **free-form accuracy**: the reply contains an acceptable answer (or every keyword) and no
  listed wrong answer, compared after :func:`normalise` (case, plurals, number words, times:
  "8:15" = "8.15" = "eight fifteen" = "quarter past eight", "180" = "one hundred and eighty");
* **abstention**: the share of unanswerable questions the memory declined to answer, and the
  share of answerable ones it wrongly declined (false abstention);
* **moments**: R@1 and R@5 of ``MemoryQA.search`` (a hit is a returned moment of the target's
  stream that overlaps the target's interval);
* **latency**: mean and p95 (nearest rank) of Ask and of Search;
* **calibration**: accuracy by confidence bin (5 equal-width bins) and the expected calibration
  error over the answers given (abstentions are not claims, so they are left out), and the
  share right among answers given at confidence ≥ 0.75;
* **how sure each share is**: a 95 % Wilson interval beside every headline share (a generated
  set holds a few hundred questions, so 78.6 % of 294 is anywhere from 73.5 % to 82.9 %: a
  target inside the interval is neither shown met nor shown missed).

Reports of several sets are pooled by :func:`pooled_report` (their questions and moment
queries together, then the same figures), as ``benchmarks/qa_pool.py`` does for saved runs.

Per-item records (question, answer, confidence, correct, category, …) come out in ``to_dict``
so a calibrator can be fitted on the dev split later.
"""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from episodic.qa_set import CATEGORIES, Interval, QAItem, QAScope, QASet

N_BINS = 5
CONFIDENT = 0.75  # "answers given at ≥ 0.75 are right at least 90 % of the time" (issue 12)
MOMENT_K = 5
RELISTENED_ASK_MAX_S = 5.0  # "a re-listened Ask stays under 5 s" (issue 12)

# -- text normalisation ----------------------------------------------------------------------------
_UNITS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])}
_TEENS = {w: 10 + i for i, w in enumerate(
    ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"])}
_TENS = {w: 20 + 10 * i for i, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"])}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
             "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12}
_TIMES_WORDS = {"once": "1", "twice": "2", "thrice": "3", "noon": "12", "midday": "12", "midnight": "12"}
_DROP = {"a", "an", "the", "and", "am", "pm", "oclock", "o'clock", "minutes", "minute", "mins", "min"}
_CURRENCY = {"$": "dollars", "£": "pounds", "€": "euros"}


def _number_words(tokens: list[str]) -> list[str]:
    """Spelled-out numbers → digits: "one hundred and eighty" → "180", "twenty five" → "25";
    "two fourteen" stays two numbers ("2 14"), as a speaker would mean it."""
    out: list[str] = []
    cur: int | None = None
    last = ""  # kind of the previous number word: unit | teen | tens | hundred | thousand

    def flush() -> None:
        nonlocal cur, last
        if cur is not None:
            out.append(str(cur))
        cur, last = None, ""

    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if tok in _UNITS or tok in _TEENS or tok in _TENS:
            value = _UNITS.get(tok, _TEENS.get(tok, _TENS.get(tok, 0)))
            kind = "unit" if tok in _UNITS else "teen" if tok in _TEENS else "tens"
            if cur is not None and (
                (last == "tens" and kind == "unit" and value > 0)
                or (last in ("hundred", "thousand") and cur % 100 == 0)
            ):
                cur += value
            else:
                flush()
                cur = value
            last = kind
        elif tok == "hundred" and cur is not None and 0 < cur < 10 and last == "unit":
            cur *= 100
            last = "hundred"
        elif tok == "thousand" and cur is not None and 0 < cur < 1000:
            cur *= 1000
            last = "thousand"
        elif tok == "and" and last in ("hundred", "thousand") and (nxt in _UNITS or nxt in _TEENS or nxt in _TENS):
            continue
        elif tok in ("oh", "point") and cur is not None and nxt in _UNITS:
            flush()  # "eight oh five" → 8 5, "three point five" → 3 5
        else:
            flush()
            out.append(tok)
    flush()
    return out


def _clock_phrases(tokens: list[str]) -> list[str]:
    """"quarter past 8" → 8 15, "half past 2" → 2 30, "quarter to 9" → 8 45,
    "20 past 11" → 11 20, "10 to 9" → 8 50 (numbers already in digits)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        a = tokens[i]
        b = tokens[i + 1] if i + 1 < len(tokens) else ""
        c = tokens[i + 2] if i + 2 < len(tokens) else ""
        hour = int(c) if c.isdigit() and 1 <= int(c) <= 12 else None
        if hour is not None and b in ("past", "after", "to", "before"):
            minutes = {"quarter": 15, "half": 30}.get(a, int(a) if a.isdigit() and 0 < int(a) < 30 else None)
            if minutes is not None and not (a == "half" and b in ("to", "before")):
                if b in ("past", "after"):
                    out += [str(hour), str(minutes)]
                else:
                    out += [str(hour - 1 if hour > 1 else 12), str(60 - minutes)]
                i += 3
                continue
        out.append(a)
        i += 1
    return out


# British and American spellings of one word say the same thing: "the tire rack" answers
# "where is the wrench?" as well as "the tyre rack" does (the recogniser writes one, the
# script the other). The British form stands for both.
_SPELLINGS = {
    "tire": "tyre", "tires": "tyres", "color": "colour", "colors": "colours", "gray": "grey",
    "center": "centre", "centers": "centres", "theater": "theatre", "meter": "metre",
    "meters": "metres", "liter": "litre", "liters": "litres", "favor": "favour",
    "neighbor": "neighbour", "neighbors": "neighbours", "harbor": "harbour", "jewelry": "jewellery",
    "aluminum": "aluminium", "program": "programme", "catalog": "catalogue", "donut": "doughnut",
    "donuts": "doughnuts", "pajamas": "pyjamas", "mustache": "moustache", "plow": "plough",
    "cozy": "cosy", "curb": "kerb", "whiskey": "whisky", "organize": "organise", "practice": "practise",
}


def _stem(tok: str) -> str:
    tok = _SPELLINGS.get(tok, tok)
    if tok.isdigit() or len(tok) <= 3:
        return tok
    if tok.endswith("ies") and len(tok) > 4:
        return tok[:-3] + "y"
    if tok.endswith("s") and not tok.endswith("ss"):
        return tok[:-1]
    return tok


def normalise(text: str) -> list[str]:
    """Comparable tokens: lower case, no punctuation or articles, singular, numbers in digits,
    clock times as "hour minute" (":00" and "o'clock" dropped), currency symbols as words."""
    t = text.lower().replace("’", "'").replace("‘", "'")
    for sym, word in _CURRENCY.items():
        t = re.sub(re.escape(sym) + r"\s*(\d+(?:[.,]\d+)?)", rf"\1 {word}", t)
    t = t.replace("%", " percent ")
    t = re.sub(r"(\d),(\d{3})\b", r"\1\2", t)
    t = re.sub(r"\b(a|p)\.m\.", r"\1m", t)
    t = re.sub(r"(\d)(am|pm)\b", r"\1 \2", t)

    def clock(m: re.Match[str]) -> str:
        minutes = int(m.group(2))
        return f" {int(m.group(1))} " + (f"{minutes} " if minutes else "")

    t = re.sub(r"\b(\d{1,2})[:.](\d{2})\b", clock, t)
    t = re.sub(r"\b(\d+)\.(\d)\b", r"\1 \2", t)
    t = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", t)
    t = re.sub(r"\b(\d+)-(\d+)\b", r"\1 \2", t)
    t = t.replace("-", " ")
    t = re.sub(r"[^a-z0-9' ]+", " ", t).replace("'s ", " ").replace("'", "")
    tokens = [str(int(w)) if w.isdigit() else _TIMES_WORDS.get(w, w) for w in t.split()]
    tokens = [str(_ORDINALS[w]) if w in _ORDINALS else w for w in tokens]
    tokens = _clock_phrases(_number_words(tokens))
    return [_stem(w) for w in tokens if w not in _DROP]


def _contains(hay: list[str], needle: list[str]) -> bool:
    """Whether ``needle``'s tokens run in ``hay``, a compound written in one word or two on
    either side ("the green house" says "greenhouse", "a tool box" "toolbox")."""
    if not needle:
        return False
    n = len(needle)
    if any(hay[i : i + n] == needle for i in range(len(hay) - n + 1)):
        return True
    joined = "".join(needle)
    return any(
        "".join(hay[i : i + k]) == joined
        for k in range(max(1, n - 1), n + 2)
        if k != n
        for i in range(len(hay) - k + 1)
    )


def mentions(reply: str, phrase: str) -> bool:
    """Whether ``reply`` says ``phrase`` (``a|b``: either), compared as :func:`normalise` tokens."""
    hay = normalise(reply)
    return any(_contains(hay, normalise(alt)) for alt in phrase.split("|") if alt.strip())


_CITATION = re.compile(r"\([^()]*\)")


def answer_text(reply: str) -> str:
    """The reply without its parenthesised citations ("7 (heard: …, cam, 95.6–106.3 s)" → "7"):
    what it says, not what it quotes or where from, unless that is all there is."""
    text = reply
    while True:
        stripped = _CITATION.sub(" ", text)
        if stripped == text:
            break
        text = stripped
    return text if text.strip() else reply


def free_form_correct(reply: str, answers: Sequence[str], keywords: Sequence[str] = (),
                      wrong_answers: Sequence[str] = ()) -> bool:
    """Right when the reply (citations left out, see :func:`answer_text`) holds an acceptable
    answer (if any are listed), every keyword, and none of the wrong answers."""
    reply = answer_text(reply)
    if answers and not any(mentions(reply, a) for a in answers):
        return False
    if not all(mentions(reply, k) for k in keywords):
        return False
    if not answers and not keywords:
        return False
    # a wrong answer inside a right one ("8" in "8:15") does not count against the reply
    rights = [normalise(alt) for a in answers for alt in a.split("|") if alt.strip()]
    return not any(
        mentions(reply, w) and not any(_contains(r, normalise(w)) for r in rights) for w in wrong_answers
    )


_ABSTAIN = re.compile(
    r"(found nothing|nothing about (that|this)|not in (my |the )?memory|no (information|record|evidence)|"
    r"(do not|don't|cannot|can't) (know|tell|find|say)|not (mentioned|recorded|stated))",
    re.I,
)


def is_abstention(answer: str, options: Sequence[str] = (), choice_index: int | None = None) -> bool:
    """The reply declines to answer: no option chosen, or it says it found nothing."""
    if options and choice_index is None:
        return True
    return not answer.strip() or bool(_ABSTAIN.search(answer))


# -- metrics over records ----------------------------------------------------------------------
@dataclass
class Bin:
    lo: float
    hi: float
    n: int
    accuracy: float | None
    mean_confidence: float | None


def reliability(confidences: Sequence[float], correct: Sequence[bool], n_bins: int = N_BINS) -> tuple[list[Bin], float | None]:
    """Accuracy by confidence bin (equal width on [0, 1]; 1.0 falls in the last) and the
    expected calibration error Σ n_b/N · |accuracy_b − mean confidence_b|."""
    if len(confidences) != len(correct):
        raise ValueError("confidences and correct differ in length")
    groups: list[list[int]] = [[] for _ in range(n_bins)]
    for i, c in enumerate(confidences):
        groups[min(n_bins - 1, max(0, int(math.floor(float(c) * n_bins))))].append(i)
    bins: list[Bin] = []
    ece = 0.0
    total = len(confidences)
    for b, idx in enumerate(groups):
        if idx:
            acc = sum(bool(correct[i]) for i in idx) / len(idx)
            conf = sum(float(confidences[i]) for i in idx) / len(idx)
            ece += len(idx) / total * abs(acc - conf)
            bins.append(Bin(b / n_bins, (b + 1) / n_bins, len(idx), round(acc, 4), round(conf, 4)))
        else:
            bins.append(Bin(b / n_bins, (b + 1) / n_bins, 0, None, None))
    return bins, (round(ece, 4) if total else None)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (the smallest value with at least q % of values at or below it)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def overlaps(a0: float, a1: float, b0: float, b1: float) -> bool:
    return a0 < b1 and b0 < a1


def first_hit_rank(returned: Sequence[tuple[str, float, float]], targets: Sequence[Interval]) -> int | None:
    """1-based rank of the first returned (stream_id, t_start, t_end) overlapping a target."""
    for rank, (sid, t0, t1) in enumerate(returned, 1):
        if any(sid == t.stream_id and overlaps(t0, t1, t.t_start, t.t_end) for t in targets):
            return rank
    return None


def recall_at(ranks: Sequence[int | None], k: int) -> float | None:
    """Share of queries whose first hit is within the top k."""
    return round(sum(1 for r in ranks if r is not None and r <= k) / len(ranks), 4) if ranks else None


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


WILSON_Z = 1.959964  # two-sided 95 %


def wilson_interval(k: int, n: int, z: float = WILSON_Z) -> tuple[float, float] | None:
    """The Wilson score interval of a share of ``k`` in ``n`` (None for n = 0). Unlike the
    normal approximation it stays inside [0, 1] and is fair at shares near 0 or 1 and for
    small n (18 of 18 right is [0.82, 1.0], not [1.0, 1.0])."""
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"wilson_interval: {k} of {n} is not a share")
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


def _share(k: int, n: int) -> dict[str, Any]:
    """A share with its count and 95 % interval: ``{"n", "correct", "accuracy", "interval_95"}``."""
    return {"n": n, "correct": k, "accuracy": _rate(k, n), "interval_95": _interval(k, n)}


# -- records and report --------------------------------------------------------------------------
@dataclass
class ItemRecord:
    id: str
    category: str
    mode: str  # "choice" | "free"
    split: str
    question: str
    answer: str
    confidence: float
    correct: bool
    abstained: bool
    answerable: bool
    expected: str  # the labelled option, the acceptable answers, or "(abstain)"
    options: list[str] = field(default_factory=list)
    choice_index: int | None = None
    pathway: str = ""
    query_type: str = ""
    signals: dict[str, Any] = field(default_factory=dict)  # raw confidence and its evidence caps
    latency_s: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)  # the service's own stage times
    error: str = ""


@dataclass
class MomentRecord:
    id: str
    query: str
    split: str
    rank: int | None
    latency_s: float
    returned: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    category: str = ""  # the moment query's own, when its set names one


def _moments_by_category(records: Iterable[MomentRecord]) -> dict[str, dict[str, Any]]:
    """R@1 and R@5 per moment category (the moments that name one), largest first: where
    moment search finds what it is asked for and where it does not (pictures a classifier
    cannot name, sentences misheard)."""
    ranks: dict[str, list[int | None]] = defaultdict(list)
    for m in records:
        if m.category:
            ranks[m.category].append(m.rank)
    return {c: {"n": len(r), "r_at_1": recall_at(r, 1), f"r_at_{MOMENT_K}": recall_at(r, MOMENT_K)}
            for c, r in sorted(ranks.items(), key=lambda kv: (-len(kv[1]), kv[0]))}


def _by_category(records: Iterable[ItemRecord]) -> dict[str, dict[str, Any]]:
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        tally[r.category][0] += int(r.correct)
        tally[r.category][1] += 1
    order = {c: i for i, c in enumerate(CATEGORIES)}
    return {c: _share(k, n) for c, (k, n) in sorted(tally.items(), key=lambda kv: order.get(kv[0], 99))}


@dataclass
class QAReport:
    name: str
    split: str
    items: list[ItemRecord]
    moments: list[MomentRecord]
    ingest: list[dict[str, Any]] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        choice = [r for r in self.items if r.mode == "choice" and r.answerable]
        free = [r for r in self.items if r.mode == "free" and r.answerable]
        unanswerable = [r for r in self.items if not r.answerable]
        answerable = [r for r in self.items if r.answerable]
        given = [r for r in self.items if not r.abstained]
        bins, ece = reliability([r.confidence for r in given], [r.correct for r in given])
        confident = [r for r in given if r.confidence >= CONFIDENT]
        ask_lat = [r.latency_s for r in self.items if not r.error]
        # the Asks that listened again (their timings name the stage), against the bound
        relistened = [r.latency_s for r in self.items if not r.error and "relisten" in r.timings_ms]
        search_lat = [m.latency_s for m in self.moments if not m.error]
        ranks = [m.rank for m in self.moments]

        def lat(vals: list[float]) -> dict[str, Any]:
            p95 = percentile(vals, 95)
            return {"n": len(vals), "mean_s": round(sum(vals) / len(vals), 3) if vals else None,
                    "p95_s": None if p95 is None else round(p95, 3)}

        return {
            "items": len(self.items),
            "multiple_choice": {**_share(sum(r.correct for r in choice), len(choice)),
                                "by_category": _by_category(choice)},
            "free_form": {**_share(sum(r.correct for r in free), len(free)),
                          "by_category": _by_category(free)},
            "by_category": _by_category(self.items),
            "overall_accuracy": _rate(sum(r.correct for r in self.items), len(self.items)),
            "unanswerable": {"n": len(unanswerable),
                             "abstained": sum(r.abstained for r in unanswerable),
                             "abstention_rate": _rate(sum(r.abstained for r in unanswerable), len(unanswerable)),
                             "interval_95": _interval(sum(r.abstained for r in unanswerable), len(unanswerable))},
            "false_abstention_rate": _rate(sum(r.abstained for r in answerable), len(answerable)),
            "moments": {"n": len(ranks), "r_at_1": recall_at(ranks, 1), f"r_at_{MOMENT_K}": recall_at(ranks, MOMENT_K),
                        f"r_at_{MOMENT_K}_interval_95": _interval(
                            sum(1 for r in ranks if r is not None and r <= MOMENT_K), len(ranks)),
                        "by_category": _moments_by_category(self.moments)},
            "latency": {"ask": lat(ask_lat), "search": lat(search_lat),
                        "relistened_ask": {**lat(relistened), "median_s": None if not relistened else round(percentile(relistened, 50), 3),
                                           f"over_{RELISTENED_ASK_MAX_S:g}_s": sum(
                                               x > RELISTENED_ASK_MAX_S for x in relistened)}},
            "calibration": {
                "answers_given": len(given),
                "bins": [asdict(b) for b in bins],
                "ece": ece,
                f"accuracy_at_confidence_ge_{CONFIDENT}": _rate(sum(r.correct for r in confident), len(confident)),
                f"accuracy_at_confidence_ge_{CONFIDENT}_interval_95": _interval(
                    sum(r.correct for r in confident), len(confident)),
                f"answers_at_confidence_ge_{CONFIDENT}": len(confident),
            },
            "errors": sum(1 for r in self.items if r.error) + sum(1 for m in self.moments if m.error),
        }

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "split": self.split, "models": self.models, "ingest": self.ingest,
                "summary": self.summary(), "items": [asdict(r) for r in self.items],
                "moments": [asdict(m) for m in self.moments]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QAReport:
        """A report back from :meth:`to_dict`'s JSON (its summary is computed again). Fields a
        newer version added are ignored, missing optional ones take their defaults."""
        def record(kind: type, row: dict[str, Any]) -> Any:
            known = {f.name for f in fields(kind)}
            return kind(**{k: v for k, v in row.items() if k in known})

        try:
            return cls(str(data.get("name", "")), str(data.get("split", "")),
                       [record(ItemRecord, r) for r in data.get("items", [])],
                       [record(MomentRecord, m) for m in data.get("moments", [])],
                       list(data.get("ingest", [])), dict(data.get("models", {})))
        except TypeError as exc:  # a required field missing: not a QA report
            raise ValueError(f"not a QA report: {exc}") from None


def _interval(k: int, n: int) -> list[float] | None:
    ci = wilson_interval(k, n)
    return None if ci is None else list(ci)


def pooled_report(reports: Sequence[QAReport], name: str = "pooled") -> QAReport:
    """Several sets' reports as one: every question and moment query of each, so the figures
    (and their intervals) are those of all the sets together, each question counting once.
    The split is the reports' own when they share one ("mixed" otherwise)."""
    splits = {r.split for r in reports}
    split = splits.pop() if len(splits) == 1 else "mixed"
    return QAReport(name, split, [i for r in reports for i in r.items], [m for r in reports for m in r.moments],
                    [row for r in reports for row in r.ingest], dict(reports[0].models) if reports else {})


# -- running ---------------------------------------------------------------------------------------
def _scope(scope: QAScope | None) -> Any:
    from episodic.core.query import Scope

    if scope is None:
        return Scope()
    return Scope(stream_ids=None if scope.stream_ids is None else tuple(scope.stream_ids),
                 t_min=scope.t_min, t_max=scope.t_max)


def already_ingested(components: Any, stream_id: str, path: Path, duration_s: float | None) -> bool:
    """The store holds this stream from this very file, to its end, made by the same models."""
    info = components.store.get_stream(stream_id)
    if info is None or info.source != str(path.resolve()):
        return False
    if duration_s is not None and info.t_end < duration_s - 1.0:
        return False
    models = (info.metadata or {}).get("models")
    return not models or models == components.model_ids()


def ingest_recordings(qa_set: QASet, components: Any, reingest: bool = False,
                      on_note: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Ingest every recording of the set that the store does not already hold (see above)."""
    from episodic.core.errors import InputError
    from episodic.pipeline import ingest_file

    done: list[dict[str, Any]] = []
    for rec in qa_set.recordings:
        path = qa_set.recording_path(rec)
        if not path.is_file():
            raise InputError(f"recording not found: {path} (stream {rec.stream_id})")
        if not reingest and already_ingested(components, rec.stream_id, path, rec.duration_s):
            done.append({"stream_id": rec.stream_id, "skipped": True})
            continue
        if on_note is not None:
            on_note(f"ingesting {rec.stream_id}")
        report = ingest_file(path, rec.stream_id, components)
        p = report.progress
        done.append({"stream_id": rec.stream_id, "skipped": False, "stream_s": round(p.stream_s, 2),
                     "wall_s": round(p.wall_s, 2), "realtime_factor": round(p.realtime_factor, 2),
                     "memories": p.memories, "events": p.events})
    return done


def _ask_once(qa: Any, item: QAItem, mode: str, top_k: int) -> ItemRecord:
    from episodic import api_convert
    from episodic.core.errors import EpisodicError

    options = item.options if mode == "choice" else []
    scope = item.scope or QAScope()
    if mode == "choice":
        expected = item.options[item.answer_index] if item.answer_index is not None else "(abstain)"
    else:
        expected = " | ".join(item.answers + [f"+{k}" for k in item.keywords]) if item.answerable else "(abstain)"
    rec = ItemRecord(id=item.id, category=item.category, mode=mode, split=item.split, question=item.question,
                     answer="", confidence=0.0, correct=False, abstained=False, answerable=item.answerable,
                     expected=expected, options=list(options))
    started = time.perf_counter()
    try:
        req = api_convert.ask_request(item.question, options, scope.stream_ids or (), scope.t_min, scope.t_max, top_k)
        if hasattr(qa, "ask_traced"):  # the trace carries the confidence signals a calibrator fits
            result, trace = qa.ask_traced(req)
            rec.signals = dict((getattr(trace, "notes", {}) or {}).get("signals", {}) or {})
        else:
            result = qa.ask(req)
    except EpisodicError as exc:
        rec.latency_s = round(time.perf_counter() - started, 4)
        rec.error = str(exc)
        rec.abstained = True
        rec.correct = not item.answerable
        return rec
    rec.latency_s = round(time.perf_counter() - started, 4)
    rec.answer, rec.confidence, rec.choice_index = result.answer, float(result.confidence), result.choice_index
    rec.pathway = getattr(result.pathway, "value", str(result.pathway))
    rec.query_type = getattr(result.query_type, "value", str(result.query_type))
    rec.timings_ms = {k: round(float(v), 1) for k, v in (result.timings_ms or {}).items()}
    rec.abstained = is_abstention(result.answer, options, result.choice_index)
    if not item.answerable:
        rec.correct = rec.abstained
    elif rec.abstained:
        rec.correct = False
    elif mode == "choice":
        rec.correct = result.choice_index == item.answer_index
    else:
        rec.correct = free_form_correct(result.answer, item.answers, item.keywords, item.wrong_answers)
    return rec


def _search_once(qa: Any, mq: Any) -> MomentRecord:
    from episodic.core.errors import EpisodicError

    started = time.perf_counter()
    try:
        moments = qa.search(mq.query, _scope(mq.scope), top_k=MOMENT_K)
    except EpisodicError as exc:
        return MomentRecord(mq.id, mq.query, mq.split, None, round(time.perf_counter() - started, 4), error=str(exc),
                            category=mq.category)
    latency = round(time.perf_counter() - started, 4)
    returned = [(m.stream_id, m.t_start, m.t_end) for m in moments]
    return MomentRecord(mq.id, mq.query, mq.split, first_hit_rank(returned, mq.targets), latency,
                        [{"stream_id": s, "t_start": round(a, 2), "t_end": round(b, 2)} for s, a, b in returned],
                        category=mq.category)


def evaluate_qa(
    qa_set: QASet,
    components: Any,
    qa: Any = None,
    reingest: bool = False,
    ingest: bool = True,
    top_k: int = 5,
    on_step: Callable[[int, int, str], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> QAReport:
    """Ingest (unless already there), then ask every item and run every moment query."""
    from episodic.services.qa import MemoryQA

    ingested = ingest_recordings(qa_set, components, reingest, on_note) if ingest else []
    qa = qa or MemoryQA(components, warm_after_request=False)
    if on_note is not None:
        on_note("warming up the models")
    qa.prepare()  # latency as a running server sees it, not model loading
    jobs: list[tuple[str, Any]] = []
    for item in qa_set.items:
        if item.is_multiple_choice:
            jobs.append(("choice", item))
        if item.is_free_form:
            jobs.append(("free", item))
    jobs += [("moment", m) for m in qa_set.moments]
    records: list[ItemRecord] = []
    moment_records: list[MomentRecord] = []
    for n, (mode, obj) in enumerate(jobs, 1):
        if on_step is not None:
            on_step(n, len(jobs), obj.id)
        if mode == "moment":
            moment_records.append(_search_once(qa, obj))
        else:
            records.append(_ask_once(qa, obj, mode, top_k))
    if on_step is not None:
        on_step(len(jobs) + 1, len(jobs), "")
    return QAReport(qa_set.name, qa_set.split, records, moment_records, ingested, components.model_ids())


# -- presentation ----------------------------------------------------------------------------------
def report_tables(report: QAReport) -> list[Any]:
    """Rich tables for people: accuracy by category, the headline figures, reliability."""
    from rich.table import Table

    s = report.summary()

    def pct(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.0f} %"

    cats = Table(title=f"{report.name or 'QA set'} ({report.split}): accuracy by category")
    for col in ("category", "multiple choice", "n", "free form", "n", "all", "n"):
        cats.add_column(col, justify="left" if col == "category" else "right")
    mc, ff, both = s["multiple_choice"]["by_category"], s["free_form"]["by_category"], s["by_category"]
    for c in [c for c in CATEGORIES if c in both]:
        row = [c]
        for table in (mc, ff, both):
            cell = table.get(c)
            row += [pct(cell["accuracy"]), str(cell["n"])] if cell else ["–", "0"]
        cats.add_row(*row)
    cats.add_row("overall", pct(s["multiple_choice"]["accuracy"]), str(s["multiple_choice"]["n"]),
                 pct(s["free_form"]["accuracy"]), str(s["free_form"]["n"]), pct(s["overall_accuracy"]),
                 str(s["items"]), style="bold")

    head = Table(title="figures")
    head.add_column("figure")
    head.add_column("value", justify="right")
    lat, cal, mom = s["latency"], s["calibration"], s["moments"]
    def within(share: float | None, ci: list[float] | None, n: int) -> str:
        if share is None or ci is None:
            return f"– of {n}"
        return f"{100 * share:.1f} % of {n} (95 % interval {100 * ci[0]:.1f}–{100 * ci[1]:.1f} %)"

    mc_s, ff_s, un_s = s["multiple_choice"], s["free_form"], s["unanswerable"]
    head.add_row("multiple choice right", within(mc_s["accuracy"], mc_s["interval_95"], mc_s["n"]))
    head.add_row("free form right", within(ff_s["accuracy"], ff_s["interval_95"], ff_s["n"]))
    head.add_row("unanswerable refused", within(un_s["abstention_rate"], un_s["interval_95"], un_s["n"]))
    head.add_row("answerable refused (false abstention)", pct(s["false_abstention_rate"]))
    head.add_row(f"moments R@1 / R@{MOMENT_K}", f"{pct(mom['r_at_1'])} / {pct(mom[f'r_at_{MOMENT_K}'])} of {mom['n']}")
    for key in ("ask", "search"):
        if lat[key]["n"]:
            head.add_row(f"{key} latency mean / p95", f"{lat[key]['mean_s']:.2f} s / {lat[key]['p95_s']:.2f} s")
    again = lat["relistened_ask"]
    if again["n"]:
        head.add_row("re-listened ask latency median / p95",
                     f"{again['median_s']:.2f} s / {again['p95_s']:.2f} s; "
                     f"{again[f'over_{RELISTENED_ASK_MAX_S:g}_s']} of {again['n']} over {RELISTENED_ASK_MAX_S:g} s")
    head.add_row("ECE (answers given)", "–" if cal["ece"] is None else f"{cal['ece']:.3f}")
    key = f"accuracy_at_confidence_ge_{CONFIDENT}"
    head.add_row(f"right among answers at confidence ≥ {CONFIDENT}",
                 f"{pct(cal[key])} of {cal[f'answers_at_confidence_ge_{CONFIDENT}']}")
    if s["errors"]:
        head.add_row("errors", str(s["errors"]), style="red")

    tables = [cats, head]
    if mom.get("by_category"):
        kinds = Table(title=f"moments by category: R@1 / R@{MOMENT_K}")
        for col in ("category", "R@1", f"R@{MOMENT_K}", "n"):
            kinds.add_column(col, justify="left" if col == "category" else "right")
        for c, cell in mom["by_category"].items():
            kinds.add_row(c, pct(cell["r_at_1"]), pct(cell[f"r_at_{MOMENT_K}"]), str(cell["n"]))
        tables.append(kinds)

    rel = Table(title="reliability (answers given)")
    for col in ("confidence", "answers", "accuracy", "mean confidence"):
        rel.add_column(col, justify="right")
    for b in cal["bins"]:
        rel.add_row(f"{b['lo']:.1f}–{b['hi']:.1f}", str(b["n"]), pct(b["accuracy"]),
                    "–" if b["mean_confidence"] is None else f"{b['mean_confidence']:.2f}")
    return [*tables, rel]
