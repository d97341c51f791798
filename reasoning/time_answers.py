"""Questions answered from *when* things were said or shown, not from one piece of text:

* **order** – "what was said right after X" finds the anchor X (its best-matching sentence)
  and answers with the nearest following (or preceding) evidence in the same stream, in
  time order (after a sound, once it stopped; before one, before it began); "which happened
  first, A or B" (or options with "…first?") compares the times of each candidate's best
  match, and so does "was A mentioned before or after B?";
* **how many times** – counts distinct moments that hold the question's words: mentions in
  speech (each occurrence), and time-separated appearances elsewhere;
* **while the screen was dark** (or a sound went on, reasoning/structured.py) – the sentences
  spoken during the dark key frames (or, with none there, that no words were heard, and what
  was).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from episodic.core.query import QueryType, Scope
from episodic.core.records import SoundObservation
from episodic.reasoning.answer import Draft
from episodic.reasoning.evidence_fit import holds_loosely, key_coverage
from episodic.reasoning.structured_base import StructuredBase, stream_words
from episodic.retrieval.detailed import MemoryReader, Unit, fuzzy_found
from episodic.retrieval.mention_audio import telling_phrase, thing_phrase
from episodic.retrieval.query_analysis import (
    GENERIC_QUESTION_WORDS,
    QueryAnalysis,
    content_terms,
    object_terms_of,
    stem,
    tokens,
)
from episodic.retrieval.text_match import (
    canonical_tokens,
    not_everyday,
    number_keys,
    phrase_sound_nearness,
    sound_nearness,
    words_and_pairs,
)
from episodic.retrieval.value_kinds import CLOCK, PRICE, asked_kinds, carried_kinds

ANCHOR_MIN = 0.35  # an anchor matched worse than this is not trusted to place the answer
ANCHOR_TIE = 0.02  # anchors matched within this of the best are as good (each is tried in turn)
OPTION_SENTENCE_DISCOUNT = 0.5  # an anchor candidate that is as much some option's sentence
# an anchor candidate without the anchor's thing, where another candidate holds it (exactly or
# misheard), counts this much: resemblance alone is not the sentence about that thing
THING_MISSING_DISCOUNT = 0.5
NEIGHBOUR_WINDOW_S = 60.0  # how far after (before) the anchor the next evidence is looked for
# a sentence cut between two memories: its pieces at most this far apart (word times at a cut
# are loose: "morning." was timed 3.7 s after "… at 11 o'clock in the", and zero seconds long)
CUT_GAP_S = 5.0
ORDER_WEIGHTS = (1.0, 0.6, 0.35, 0.2)  # the 1st, 2nd, … following unit
# an option placed next to a sentence that fits an unplaced anchor this much better than the
# stream's sentences do on the whole (and than any other option's neighbour) came right after it
NEIGHBOUR_LEAD = 0.1
MATCH_MIN = 0.3  # a candidate matched worse than this has no place in time
PLACED_MIN = 0.5  # … and one matched this well is placed (for ruling an option out)
PLACED_WELL = 0.75  # … and one matched this well needs no second hearing
LISTEN_PER_THING = 2  # sentences heard again for a thing placed less well
LISTEN_PER_COUNT = 4  # … and for a thing counted (its mentions may be misheard anywhere)
# … and whose audio is asked whether it names the thing (a fraction of a re-hearing's cost)
MENTION_CHECKS_PER_COUNT = 8
PLACE_CHECKS_PER_THING = 4  # … and for the thing a question about speech finds nowhere
# … and for a thing an order, which-stream or while-question cannot place, taken in turn from
# two rankings (retrieval by its telling words' sound and by all its words' sound)
SOUND_CHECKS_PER_THING = 6
OPTION_CHECKS = 2  # sentences saying an option asked besides the nearest (object checks)
LISTEN_SENTENCES_READ = 240  # a stream with more sentences than this is not read whole for them
ELIMINATION_CONFIDENCE = 0.3  # an option left when the others were found elsewhere: a guess
UNPLACED_FLOOR = 0.01  # an option found nowhere outranks one said clearly elsewhere
TOLD_ALONE_BONUS = 0.3  # said-then: the one option whose thing a sentence of the moment names
# of options found nowhere, one describing a kind of value ("the colour of Daniel's apron") is
# this much likelier where the misheard sentence still holds a value of that kind, and this
# much less likely where it holds none (a misheard sentence keeps its value more often than its
# words: retrieval/value_kinds.py)
KIND_FIT = 0.2
_NUMBER_KINDS = frozenset({PRICE, CLOCK})  # kinds whose value a bare number may be
COUNT_GAP_S = 3.0  # appearances closer than this are one moment
# the support of the option that says the count found: one mention misheard past recognition
# (or one heard that was not said) makes it wrong, and on the dev sets of sessions 66–69 such
# answers were right 31 times in 39 (at 0.7 they were calibrated to 0.79, above what that
# earns); at 0.6 they are calibrated just under 0.75
COUNT_SUPPORT = 0.6
DARK_SLACK_S = 1.0  # sentences are read this far around a dark stretch …
DARK_OVERLAP_S = 0.5  # … and count when this much of them (or half) falls inside it
NOTHING_SAID_CONFIDENCE = 0.5  # no transcript in the dark stretch: the recogniser may have missed words
DARK_SPEECH_CONFIDENCE = 0.7  # the words themselves may be misheard
SOUND_JOIN_S = 0.5  # sound windows this close make one stretch

# words of "how many separate times / on how many occasions / how frequently / count the
# mentions …" that say how to count, not what (stems, as QueryAnalysis.terms holds them)
# things that are also words of hearing (retrieval/query_analysis.py's cues), which a count
# question may count ("how many times was the siren mentioned?")
_HEARD_THINGS = frozenset({
    "siren", "sirens", "music", "song", "songs", "applause", "noise", "noises", "announcement",
    "announcements", "voice", "voices", "loudspeaker", "conversation", "conversations", "melody",
    "tune", "bark", "barks", "barking", "knock", "knocks", "beep", "beeps", "laugh", "laughs",
})
_COUNT_WORDS = frozenset(stem(w) for w in (
    "time", "times", "often", "frequently", "frequent", "occasion", "occasions", "instance", "instances",
    "mention", "mentions", "count", "separate", "distinct", "different", "individual", "total", "number"))
# "how many times was X mentioned (said, talked about)?" counts words, not sounds or sights: an
# engine heard is no mention of the jet engine, a dog seen none of the dog
_ASKS_MENTIONS = re.compile(
    r"\b(?:mention|mentions|mentioned|mentioning|said|say|says|saying|talk|talks|talked|talking|spoke|spoken|"
    r"speak|speaks|speaking|discuss|discussed|discussing|named|brought\s+up|came\s+up|come\s+up|referred\s+to)\b",
    re.I,
)
# (not "show", "see" or "sound" alone: "the flower show", "the sound check" are things mentioned)
_ASKS_SEEN_OR_HEARD = re.compile(
    r"\b(?:heard|hear|hears|hearing|audible|sounded|seen|saw|shown|showed|visible|appear|"
    r"appears|appeared|on\s+screen|in\s+view|written|pictured)\b",
    re.I,
)
MENTIONED_IN = ("speech", "ocr")  # where a mention can be: words said or written
# a sentence that only says who said the one before it ("Felix told me."): the recogniser ends
# "Only nine seed packets are left, Felix told me." early; it is that sentence's tail, nothing
# mentioned of its own
_ATTRIBUTION = re.compile(r"^\W*(?:[\w'-]+\s+){1,2}(?:told|tells|said|says)(?:\s+(?:me|us|them|so))?[\s.!?]*$",
                          re.IGNORECASE)
# words that open a clause belonging to the sentence around it (a time, a place, a condition)
_LEADS_IN = frozenset((
    "at", "on", "in", "by", "from", "until", "till", "after", "before", "during", "while", "when",
    "whenever", "if", "unless", "because", "since", "although", "though", "around", "near", "about",
    "for", "with", "without", "within", "as", "than", "where", "which", "who", "whose"))
# option words that say "earlier" / "later" (for "was A mentioned before or after B?")
_ORDER_SAID = (re.compile(r"\b(?:before|earlier|first|sooner|prior)\b", re.I),
               re.compile(r"\b(?:after|later|afterwards|second|next)\b", re.I))


def clauses(unit: Unit) -> list[Unit]:
    """A speech unit split at commas and semicolons into clauses of at least three words
    (times shared out by length); the unit itself when it has no such split."""
    if unit.modality != "speech":
        return [unit]
    parts = [p.strip() for p in re.split(r"[,;]\s+", unit.text) if p.strip()]
    merged: list[str] = []
    for p in parts:
        if merged and len(p.split()) < 3:
            merged[-1] += ", " + p
        else:
            merged.append(p)
    if len(merged) <= 1:
        return [unit]
    total = sum(len(p) for p in merged)
    span = max(unit.t_end - unit.t_start, 0.0)
    out, t = [], unit.t_start
    for p in merged:
        dt = span * len(p) / total
        out.append(Unit(unit.stream_id, unit.memory_id, t, t + dt, unit.modality, p,
                        snippet_uri=unit.snippet_uri, context_terms=unit.context_terms))
        t += dt
    return out


def stands_alone(clause: str) -> bool:
    """Whether a clause of a comma-joined transcript reads as a sentence of its own: three words
    or more, at least two of them words rather than numbers, not opening with a preposition
    or a subordinating word. "At 20 to 11, Grace's appointment …" is one sentence with a time
    in front, also when "At" was misheard ("F20 to 11, based on an appointment …"); "Welcome
    to the hotel, breakfast is at 8" is two."""
    words = clause.split()
    wordy = sum(1 for w in words if w.strip(".,;:!?\"'()").isalpha())
    return len(words) >= 3 and wordy >= 2 and words[0].lower().strip("\"'(") not in _LEADS_IN


_ENDS_SENTENCE = re.compile(r"[.!?\u2026][\"')\]]*\s*$")


def joined_across_cuts(units: Sequence[Unit]) -> list[Unit]:
    """One stream's ``units`` with each sentence that a cut between two memories split made
    whole again: a spoken piece that opens in lower case right after one (of another memory)
    that ends without a full stop continues it, unless it reads as a sentence of its own
    (:func:`stands_alone`: a misheard name opens many in lower case, "pre-upainted little
    brother you" for "Priya painted the umbrella blue"). Whisper wrote "Don't forget, Noor has
    to see the barber at 11 o'clock in the" at the end of one memory and "morning." at the
    start of the next; what was mentioned just before the next sentence is the whole of it,
    not "morning.". Other units are kept as they are."""
    out: list[Unit] = []
    last: int | None = None  # where in ``out`` the latest spoken piece is
    for u in sorted(units, key=lambda x: x.t_start):
        if u.modality != "speech":
            out.append(u)
            continue
        prev = out[last] if last is not None else None
        text = u.text.strip()
        if (prev is not None and text[:1].islower() and not stands_alone(text)
                and prev.memory_id != u.memory_id
                and not _ENDS_SENTENCE.search(prev.text) and u.t_start - prev.t_end <= CUT_GAP_S):
            out[last] = replace(prev, t_end=max(prev.t_end, u.t_end), text=f"{prev.text.rstrip()} {text}",
                                vector=None)
            continue
        out.append(u)
        last = len(out) - 1
    return out


def dark_spans(memories: Sequence) -> list[tuple[str, float, float]]:
    """(stream id, start, end) of each dark stretch: key frames the quality gate found dark,
    each up to the next key frame (or its memory's end), consecutive ones joined."""
    out: list[tuple[str, float, float]] = []
    for m in memories:
        frames = sorted(m.frames, key=lambda f: f.t)
        for i, f in enumerate(frames):
            if getattr(f, "quality", "") == "dark":
                t1 = frames[i + 1].t if i + 1 < len(frames) else m.t_end
                last = out[-1] if out else None
                if last is not None and last[0] == m.stream_id and last[2] - DARK_SLACK_S <= f.t <= last[2] + DARK_SLACK_S:
                    out[-1] = (last[0], last[1], max(last[2], t1))  # the stretch goes on
                else:
                    out.append((m.stream_id, f.t, t1))
    return out


def join_spans(spans: Iterable[tuple[str, float, float]], gap_s: float) -> list[tuple[str, float, float]]:
    """(stream id, start, end) spans, sorted, with those of one stream that overlap or come
    within ``gap_s`` of each other joined into one."""
    joined: list[tuple[str, float, float]] = []
    for sid, a, b in sorted(spans, key=lambda x: (x[0], x[1])):
        if joined and joined[-1][0] == sid and a <= joined[-1][2] + gap_s:
            joined[-1] = (sid, joined[-1][1], max(joined[-1][2], b))
        else:
            joined.append((sid, a, b))
    return joined


def sound_spans(memories: Sequence, wanted: Callable[[SoundObservation], bool]) -> list[tuple[str, float, float]]:
    """(stream id, start, end) of each stretch of the ``wanted`` sound; windows that touch
    (within half a second) make one stretch."""
    return join_spans(((m.stream_id, o.t_start, o.t_end) for m in memories for o in m.sounds if wanted(o)),
                      SOUND_JOIN_S)


def _compared(analysis: QueryAnalysis, options: Sequence[str]) -> tuple[list[str], bool]:
    """What a "which came first / last" question compares (none for other questions), and
    whether it is "was A before or after B?" (``relative``: the options are order words)."""
    shape = analysis.shape
    if shape.order not in ("first", "last"):
        return [], False
    relative = shape.relative and len(shape.compared) == 2
    return (list(shape.compared) if relative else list(options) or list(shape.compared)), relative


def _stream_terms(streams: Sequence[str]) -> set[str]:
    """The words of the streams' names and their stems ("station", "cam"): what a question
    says to name a recording, never the thing it asks about."""
    return {w for sid in streams for w in stream_words(sid)} | {stem(w) for sid in streams for w in stream_words(sid)}


def holders_first(thing: str, units: Sequence[Unit], match: np.ndarray, *, by_name_alone: bool = True) -> np.ndarray:
    """``match`` (how well ``thing`` matches each unit) with the units that do not hold its
    head noun (:func:`object_terms_of`, exactly or misheard) discounted, where some unit does:
    a sentence holding the suitcase is about "who takes care of the suitcase" before one that
    only resembles it ("There is the luggage trolley again.").

    Where no unit holds it, ``by_name_alone=False`` discounts the units that hold nothing of
    ``thing`` but its names: "Omar and the novels" is not placed by "Omar keeps the reading
    lamp at the front desk" when nothing mentions novels (the sentence about them was
    misheard), while "the room for the night train" still is by "The height really is in room
    two oh eight" (a room, not only a name)."""
    things = object_terms_of(thing)
    holds = np.array([any(holds_loosely(t, u.terms) for t in things) for u in units], dtype=bool)
    if holds.any():
        return np.where(holds, match, match * THING_MISSING_DISCOUNT)
    if by_name_alone or not things:
        return match
    words = unnamed_terms(thing)
    # a value of the kind the thing is told with is something of it too: "Luca's appointment
    # with the baker" in "The Mika and Luca are getting together at 4.35" (a time)
    kinds = asked_kinds(thing)
    names_only = np.array([not any(holds_loosely(t, u.terms) for t in words)
                           and not (kinds & carried_kinds(u.text)) for u in units], dtype=bool)
    return np.where(names_only, match * THING_MISSING_DISCOUNT, match)


def one_per_memory(units: Sequence[Unit]) -> list[Unit]:
    """The first unit of each memory, in order (one hearing covers a memory's sentences)."""
    seen: set[str] = set()
    return [u for u in units if not (u.memory_id in seen or seen.add(u.memory_id))]


def _holds_its_thing(option: str, unit: Unit) -> bool:
    """Whether ``unit`` holds (exactly or misheard) a word of what ``option`` is about, beyond
    the kind of fact it names: "The tomato plant cost 12 pounds." resembles "the price of the
    egg" (a price) but is another thing's price, so it does not place that option. An option of
    generic words only is held by any sentence."""
    telling = [t for t in content_terms(option) if t not in GENERIC_QUESTION_WORDS]
    return not telling or any(holds_loosely(t, unit.terms) for t in telling)


def _content_words(text: str) -> list[str]:
    """The words of ``text`` as written that carry content (not "the", "of", "who")."""
    return [w for w in re.findall(r"[A-Za-z]+", text) if content_terms(w)]


@dataclass
class Placement:
    """Where the compared things of an order question were placed: (time, match, unit) each
    (unit None where not placed), the stream ("" when none), and the candidates searched."""

    placed: list[tuple[float, float, Unit | None]]
    stream: str
    cands: list[Unit]


def _same_moment(a: Unit, b: Unit) -> bool:
    """Whether two sentences of the same modality share at least half of the shorter one's
    time: two hearings of one utterance, not one said before the other."""
    if a.modality != b.modality:
        return False
    shared = min(a.t_end, b.t_end) - max(a.t_start, b.t_start)
    return shared > 0 and shared >= 0.5 * min(a.t_end - a.t_start, b.t_end - b.t_start)


_UNINFORMATIVE_SOUND = re.compile(r"\b(?:background noise|silence)\b", re.I)
# a kind of sound (memory/sound.py's kinds) by the words people use for it
SOUND_KINDS = {
    "music": re.compile(r"\b(?:music|song|melody|tune)\b", re.I),
    "engine": re.compile(r"\b(?:engine|motor|vehicle)\b", re.I),
    "applause": re.compile(r"\b(?:applause|applauding|clapping|clapped)\b", re.I),
    "silence": re.compile(r"\b(?:silence|silent|quiet)\b", re.I),
    "noise": re.compile(r"\b(?:noise|noisy)\b", re.I),
}
_NAMED_SOUNDS = ("music", "engine", "applause")  # kinds a question names (not plain noise)


def _not_the_sound_named(anchor: str, units: Sequence[Unit]) -> list[Unit]:
    """``units`` without the sounds of another kind than the one ``anchor`` names: "right after
    the engine noise" is not placed by "background noise", "after the music" not by "loud
    noise" (they share the word "noise", or a sentence's embedding, not the sound)."""
    named = [SOUND_KINDS[k] for k in _NAMED_SOUNDS if SOUND_KINDS[k].search(anchor)]
    if not named:
        return list(units)
    return [u for u in units if u.modality != "sound" or any(p.search(u.text) for p in named)]


class TimeAnswers(StructuredBase):
    """Order, counts and "while the screen was dark" (see the module doc)."""

    # -- order -------------------------------------------------------------------------------
    def _around_anchor(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                       scope: Scope, reader: MemoryReader) -> tuple[Unit, float, list[Unit]] | None:
        """For "what was said right after (before) X?": X's sentence (the anchor), how well
        it matched, and the evidence after (before) it in its stream, nearest first; None
        when X is not placed or nothing follows (precedes) it."""
        shape = analysis.shape
        if shape.order not in ("after", "before") or not shape.anchor:
            return None
        named = self.named_stream(analysis.question, reader.streams_in(scope))
        if named is not None:
            # "… right after the screen went dark in garden-cam?": that stream's moment
            scope = Scope(stream_ids=(named,), t_min=scope.t_min, t_max=scope.t_max)
            recall = [u for u in recall if u.stream_id == named]
        cands = _not_the_sound_named(shape.anchor, self._candidates(shape.anchor, scope, reader, recall))
        if not cands:
            return None
        m = self._match(shape.anchor, cands, raised=True)
        # "who takes care of the suitcase" resembles "There is the luggage trolley again." more
        # (cosine 0.60) than "Hannah looks after the suitcase these days." (0.54): a sentence
        # holding the thing itself is the anchor before one that only resembles it
        m = holders_first(shape.anchor, cands, m)
        if options:
            # the anchor is another moment than the options': a sentence that matches one of
            # them at least as well ("Priya is leading the caretaker" for "where Priya left the
            # laptop", with "Priya's appointment with the caretaker" an option) is that option's
            taken = np.max([self._match(o, cands) for o in options], axis=0)
            m = np.where(taken >= m, m * OPTION_SENTENCE_DISCOUNT, m)
        best = float(np.max(m))
        if best < ANCHOR_MIN:
            return None
        # anchors that match as well as the best (a sound heard twice: "music playing" at the
        # start and near the end) are tried in turn: "what was said before the music?" has no
        # answer before the first, one before the second
        for i in (int(k) for k in np.argsort(-m, kind="stable")):
            if float(m[i]) < best - ANCHOR_TIE:
                break
            seq_found = self._next_to_anchor(analysis, cands, i, scope, reader)
            if seq_found is not None:
                anchor, seq = seq_found
                return anchor, best, seq
        return None

    def _next_to_anchor(self, analysis: QueryAnalysis, cands: Sequence[Unit], i: int, scope: Scope,
                        reader: MemoryReader) -> tuple[Unit, list[Unit]] | None:
        """The anchor (``cands[i]``, or its clause that matches) and the evidence after (before)
        it in its stream, nearest first; None when nothing follows (precedes) it."""
        shape = analysis.shape
        anchor = cands[i]
        # Whisper often joins two sentences with a comma ("Welcome to the hotel, breakfast is
        # at 815."): the anchor is then the clause that matches it, and the rest comes next
        inner = clauses(anchor)
        if len(inner) > 1:
            cm = self._match(shape.anchor, inner)
            k = int(np.argmax(cm))
            if cm[k] >= ANCHOR_MIN:
                following = inner[k + 1 :] if shape.order == "after" else inner[:k][::-1]
                anchor = inner[k]
                # a clause holding words of the anchor is the rest of the anchor's sentence,
                # not what came before or after it ("Only four tomato plants are left, Omar
                # told me." for "Omar and the tomato plants")
                topic = content_terms(shape.anchor)
                first = [u for u in following if stands_alone(u.text)
                         and not any(holds_loosely(t, u.terms) for t in topic)]
            else:
                first = []
        else:
            first = []
        wanted = self._wanted_modalities(analysis)
        if shape.asks_said:
            # "what was mentioned just before …": words, not a sign shown in between, nor the
            # sound the anchor names ("what was said right after the engine noise?")
            wanted = ("speech",)
        lo, hi = anchor.t_start - NEIGHBOUR_WINDOW_S, anchor.t_end + NEIGHBOUR_WINDOW_S
        if scope.t_min is not None:
            lo = max(lo, scope.t_min)
        if scope.t_max is not None:
            hi = min(hi, scope.t_max)
        # a sentence a cut between memories split is one sentence; completed, the anchor's own
        # is no neighbour of it
        whole_text = cands[i].text.strip()
        around = [u for u in joined_across_cuts(self._stream_units(anchor.stream_id, lo, hi, reader))
                  if u.modality in wanted and u.text.strip().lower() != anchor.text.strip().lower()
                  and not (whole_text and u.text != cands[i].text and u.text.startswith(whole_text))]
        mid = (anchor.t_start + anchor.t_end) / 2
        # a sound lasts: what came after the music is what came once it stopped, what came
        # before the engine what came before it started (a sentence said over the music is
        # neither); a sentence is placed by its middle
        after_t, before_t = (anchor.t_end, anchor.t_start) if anchor.modality == "sound" else (mid, mid)
        if anchor.modality == "sound":
            # the same sound again, or plain background noise, is not what happened next
            around = [u for u in around if u.modality != "sound"
                      or (u.text != anchor.text and not _UNINFORMATIVE_SOUND.search(u.text))]
        if shape.order == "after":
            seq = sorted((u for u in around if (u.t_start + u.t_end) / 2 > after_t), key=lambda u: u.t_start)
        else:
            seq = sorted((u for u in around if (u.t_start + u.t_end) / 2 < before_t), key=lambda u: -u.t_end)
        # the anchor's own sentence, whole or in part, is not what came before or after it;
        # nor is another hearing of it (a re-listened version kept beside the first: "Oma
        # ordered for tomato plants" beside "Omar ordered 4 tomato plants"), which shares most
        # of its time
        whole = cands[i]
        seq = [u for u in seq if not (u.t_start >= whole.t_start - 0.05 and u.t_end <= whole.t_end + 0.05
                                      and (u.text in whole.text or anchor.text.strip() in u.text))
               and not _same_moment(u, whole)]
        seq = [u for u in seq if not _ATTRIBUTION.match(u.text)]
        # nor a piece that says nothing ("And", "So,"): a word the recogniser left between two
        # sentences mentions nothing; what was mentioned is the sentence beyond it
        seq = [u for u in seq if u.modality != "speech" or content_terms(u.text)]
        seq = list({(u.text, round(u.t_start, 2)): u for u in first + seq}.values())[: len(ORDER_WEIGHTS)]
        if not seq:
            return None
        return anchor, seq

    def next_to(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                scope: Scope, reader: MemoryReader) -> Draft | None:
        found = self._around_anchor(analysis, options, recall, scope, reader)
        if found is None:
            return self._placed_by_neighbour(analysis, options, recall, scope, reader) if options else None
        anchor, anchor_q, seq = found
        shape = analysis.shape
        caps = {"anchor": round(anchor_q, 3), "route": 1.0}
        if options:
            scores, support, evidence, next_heard = [], [], [], []
            for o in options:
                mm = self._match(o, seq)
                w = np.array(ORDER_WEIGHTS[: len(seq)]) * mm
                j = int(np.argmax(w))
                scores.append(float(w[j]))
                support.append(float(mm[j]) * (ORDER_WEIGHTS[j] if j else 1.0))
                evidence.append([seq[j], anchor])
                next_heard.append(float(mm[0]))
            if max(next_heard) < PLACED_MIN:  # the very next sentence is no option: misheard?
                left = self._unplaced(options, seq[0].modality, scope, reader, recall)
                if len(left) == 1:
                    return self._eliminated(options, left[0], ELIMINATION_CONFIDENCE, [seq[0], anchor], caps,
                                            cap=min(1.0, anchor_q + 0.3))
                if 1 < len(left) < len(options):
                    # an option said clearly somewhere else is not what came next: the choice
                    # is among the ones found nowhere (one of them was misheard here): the one
                    # the next sentence matches and sounds most like (a weak match further on
                    # argues for later, not next)
                    near = self._option_sounding(options, seq[:1])
                    scores = [next_heard[k] + near[k] + UNPLACED_FLOOR if k in left else 0.0
                              for k in range(len(options))]
                    # a guess by sound, resting on the next sentence
                    support = [ELIMINATION_CONFIDENCE * near[k] if k in left else 0.0 for k in range(len(options))]
                    evidence = [[seq[0], anchor] for _ in options]
                    caps = {**caps, "eliminated": float(len(options) - len(left))}
            return self._choice(options, scores, support, evidence, caps, cap=min(1.0, anchor_q + 0.3))
        nxt = seq[0]
        word = "after" if shape.order == "after" else "before"
        answer = f'{nxt.text.strip()} ({word} "{anchor.text.strip()}", {nxt.cite()})'
        conf = min(0.9, anchor_q)
        return Draft(answer=answer, confidence=round(conf, 4), support=[nxt, anchor], source="order",
                     caps={**caps, "span": 1.0, "key_terms": key_coverage(analysis, [nxt, anchor] + list(recall))})

    def _placed_by_neighbour(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                             scope: Scope, reader: MemoryReader) -> Draft | None:
        """"What came up right after X: A, B or C?" when no sentence places X (misheard past
        matching: "If you need mercy son, nor keep sat at the mirror." for "where Noor left
        the scissors") but the options are placed: the answer is the option said right after
        (for "before": right before) a sentence that sounds like X. From each option placed
        at least ``PLACED_MIN``, up to ``len(ORDER_WEIGHTS)`` sentences back (forward) are
        read, stopping at another option's sentence; a sentence's fit to X (its words plus
        how near it sounds, :meth:`_nearness`) counts only above the median fit of the
        stream's sentences, since every sentence sounds a little like anything. The best
        option is taken when its fit is ``NEIGHBOUR_LEAD`` above nothing and above the
        runner-up's; a guess, at ``ELIMINATION_CONFIDENCE``. None otherwise."""
        shape = analysis.shape
        if shape.order not in ("after", "before") or not shape.anchor or len(options) < 2:
            return None
        named = self.named_stream(analysis.question, reader.streams_in(scope))
        if named is not None:
            scope = Scope(stream_ids=(named,), t_min=scope.t_min, t_max=scope.t_max)
            recall = [u for u in recall if u.stream_id == named]
        found = self._placed_in_one_stream(options, scope, reader, recall)
        if not found.stream:
            return None
        def key(u: Unit) -> tuple[str, float]:
            return u.memory_id, round(u.t_start, 2)

        units = sorted({key(u): u for u in self._stream_units(found.stream, scope.t_min, scope.t_max, reader)
                        if u.modality == "speech" and u.text.strip()}.values(), key=lambda u: u.t_start)
        if not 3 <= len(units) <= LISTEN_SENTENCES_READ:
            return None
        index = {key(u): i for i, u in enumerate(units)}
        where = [index.get(key(u)) if u is not None and q >= PLACED_MIN else None for _, q, u in found.placed]
        taken = {i for i in where if i is not None}
        fit = self._nearness(shape.anchor, units)
        above = fit - float(np.median(fit))
        step = -1 if shape.order == "after" else 1
        scores: list[float] = []
        evidence: list[list[Unit]] = []
        for i in where:
            best, shown = 0.0, []
            for n, weight in enumerate(ORDER_WEIGHTS if i is not None else ()):
                j = i + step * (n + 1)
                if not 0 <= j < len(units) or j in taken or abs(units[j].t_start - units[i].t_start) > NEIGHBOUR_WINDOW_S:
                    break
                if weight * float(above[j]) > best:
                    best, shown = weight * float(above[j]), [units[i], units[j]]
            scores.append(best)
            evidence.append(shown)
        ranked = sorted(scores, reverse=True)
        if ranked[0] < NEIGHBOUR_LEAD or ranked[0] - ranked[1] < NEIGHBOUR_LEAD:
            return None
        support = [ELIMINATION_CONFIDENCE if s == ranked[0] else 0.0 for s in scores]
        caps = {"route": 1.0, "anchor": 0.0, "by_neighbour": round(ranked[0], 3)}
        return self._choice(options, scores, support, evidence, caps)

    def _unplaced(self, options: Sequence[str], modality: str, scope: Scope, reader: MemoryReader,
                  recall: Sequence[Unit], here: Sequence[Unit] = ()) -> list[int]:
        """The options found nowhere, for when the sentence where the answer must be (next to
        an anchor, or said while a picture was shown) matches none: one of them was probably
        that sentence, misheard. "Right after where Daniel left the ladle: Sofia's
        appointment, the soup tasting, Diego and the eggs?" with the next sentence heard as "The
        ego order twelve legs" matches no option; the appointment and the tasting were said
        clearly elsewhere, so the eggs are left. A sentence places only the option it matches
        best: "Omar put the reading lamp by the front desk" is where Omar left the lamp, and
        does not also place "Omar and the novels" by the name they share. The indices of the
        options found nowhere but in ``here`` (the sentences of the moment asked about)."""
        pool: dict[tuple[str, float, str], int] = {}  # each candidate sentence once
        found: list[list[int]] = []  # per option, where its own search found sentences
        units: list[Unit] = []
        at_moment = {(u.memory_id, round(u.t_start, 2)) for u in here}
        for o in options:
            mine = []
            for u in self._candidates(o, scope, reader, recall):
                if u.modality == modality and (u.memory_id, round(u.t_start, 2)) not in at_moment:
                    key = (u.memory_id, round(u.t_start, 2), u.text)
                    if key not in pool:
                        pool[key] = len(units)
                        units.append(u)
                    mine.append(pool[key])
            found.append(mine)
        if not units:
            return list(range(len(options)))
        match = np.array([self._match(o, units) for o in options])  # (options, sentences)
        best = match.max(axis=0)  # a sentence places only the option(s) it matches best
        return [k for k, mine in enumerate(found)
                if not any(match[k, i] >= PLACED_MIN and match[k, i] >= best[i]
                           and _holds_its_thing(options[k], units[i]) for i in mine)]

    def _choice_said_then(self, options: Sequence[str], said: Sequence[Unit], confidence: float,
                          caps: dict[str, float], scope: Scope, reader: MemoryReader,
                          guess: float = ELIMINATION_CONFIDENCE) -> Draft | None:
        """The option said at a moment (``said``: the sentences heard then). When none of them
        matches any option, one was misheard: the options said clearly elsewhere are ruled out
        and the choice is among the rest (at a guess's confidence); None when that rules out
        none, or all."""
        heard = [float(self._match(o, said).max()) for o in options]
        # a sentence of the moment that names one option's thing ("… clean the spade …",
        # perhaps as the audio carried it) is about that option, whatever name it shares with
        # another ("where Ruth left the watering can"), however little else of it was heard
        # ("Ram it in the guide of it 13." for "Anya is meeting the guide at 8:15")
        told = [k for k, o in enumerate(options) if (phrase := telling_phrase(o)) and len(not_naming(phrase, said)) < len(said)]
        if max(heard) >= PLACED_MIN or len(told) == 1:
            bonus = [TOLD_ALONE_BONUS if told == [k] else 0.0 for k in range(len(options))]
            return self._choice_by_match(options, said, confidence, caps, bonus=bonus)
        left = self._unplaced(options, "speech", scope, reader, ())
        if len(left) == 1:
            return self._eliminated(options, left[0], guess, said[:1], caps)
        if not 1 < len(left) < len(options):
            return None
        near = self._option_sounding(options, said)
        scores = [heard[k] + UNPLACED_FLOOR + near[k] if k in left else 0.0 for k in range(len(options))]
        support = [heard[k] * guess if k in left else 0.0 for k in range(len(options))]
        caps = {**caps, "eliminated": float(len(options) - len(left))}
        return self._choice(options, scores, support, [list(said[:1]) for _ in options], caps)

    def which_first(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                    scope: Scope, reader: MemoryReader) -> Draft | None:
        compared, relative = _compared(analysis, options)
        if len(compared) < 2:
            return None
        first = analysis.shape.order == "first"
        placed = self._placed_in_one_stream(compared, scope, reader, recall).placed
        known = [i for i, p in enumerate(placed) if p[2] is not None]
        if not known:
            return None
        if len(compared) == 2 and len(known) == 1 and not relative:
            return self._one_placed(options, compared, placed, known[0], first, scope, reader)
        pick = (min if first else max)(known, key=lambda i: placed[i][0])
        others = [placed[i][1] for i in known if i != pick]
        gap = min((abs(placed[pick][0] - placed[i][0]) for i in known if i != pick), default=0.0)
        sure = placed[pick][1] * (min(others) if others else 0.3) * (1.0 if gap >= 1.0 else 0.5)
        caps = {"route": 2.0, "placed": float(len(known)), "gap_s": round(gap, 2)}
        unit = placed[pick][2]
        assert unit is not None
        if relative:
            return self._before_or_after(options, placed, caps, sure)
        if options:
            scores = [1.0 if i == pick else 0.0 for i in range(len(options))]
            support = [sure if i == pick else 0.0 for i in range(len(options))]
            evidence = [[p[2]] if p[2] is not None else [] for p in placed]
            return self._choice(options, scores, support, evidence, caps)
        answer = f"{compared[pick]} ({unit.cite()})"
        return Draft(answer=answer, confidence=round(sure, 4), support=[unit], source="order",
                     caps={**caps, "span": 1.0})

    def _placed_in_one_stream(self, compared: Sequence[str], scope: Scope, reader: MemoryReader,
                              recall: Sequence[Unit]) -> Placement:
        """(time, match, unit) of each compared thing, all in one stream: times of different
        recordings are not comparable ("the room for the night train", misheard in
        station-cam, is not placed by "the story hour is in room 312" in library-cam against
        "Grace and the tickets" in station-cam). The stream where most of them are placed,
        then best, is chosen. Each is placed by the words that tell it from the others:
        "where Priya left the laptop" or "Priya's appointment with the caretaker" is not
        placed by "Priya"."""
        words = [content_terms(c) for c in compared]
        pool: dict[tuple[str, float, str], Unit] = {}
        for c in compared:
            for u in self._candidates(c, scope, reader, recall):
                pool.setdefault((u.memory_id, round(u.t_start, 2), u.text), u)
        cands = list(pool.values())
        matches = []
        for c, own in zip(compared, words, strict=True):
            others = {t for w in words if w is not own for t in w}
            distinct = [t for t in own if t not in others]
            told = " ".join(w for w in c.split() if not set(content_terms(w)) & others) if distinct else c
            match = self._match(told, cands, distinct or own)
            matches.append(holders_first(c, cands, match, by_name_alone=False))
        best = Placement([(float("nan"), 0.0, None) for _ in compared], "", cands)
        best_key = (-1, 0.0)
        for sid in dict.fromkeys(u.stream_id for u in cands):
            here = np.array([u.stream_id == sid for u in cands])
            placed: list[tuple[float, float, Unit | None]] = []
            for m in matches:
                m = np.where(here, m, -1.0)
                j = int(np.argmax(m))
                placed.append((cands[j].t_start, float(m[j]), cands[j]) if float(m[j]) >= MATCH_MIN
                              else (float("nan"), 0.0, None))
            key = (sum(p[2] is not None for p in placed), sum(p[1] for p in placed))
            if key > best_key:
                best, best_key = Placement(placed, sid, cands), key
        return best

    def listen_targets(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                       scope: Scope, reader: MemoryReader) -> list[Unit] | None:
        """The sentences worth hearing again before "which came first, A or B?" or "how many
        times …?" is answered (best first), or None for other questions. A thing placed by
        all of its words needs nothing; one placed weakly or not at all was perhaps misheard
        where it was said, most likely in the sentences of the chosen stream nearest to it
        ("The height really is in room to head." for "the night train is in room two oh
        eight"): up to ``LISTEN_PER_THING`` of those, heard again with the question's words,
        may place it. Counts: see :meth:`_count_targets`; "what came right after X?":
        :meth:`_neighbour_targets`."""
        if analysis.shape.counts:
            return self._count_targets(analysis, scope, reader)
        if analysis.shape.order in ("after", "before"):
            return self._neighbour_targets(analysis, options, recall, scope, reader)
        compared, _ = _compared(analysis, options)
        if len(compared) < 2:
            return None
        found = self._placed_in_one_stream(compared, scope, reader, recall)
        if not found.stream:
            return []
        sure = {(p[2].memory_id, round(p[2].t_start, 2)) for p in found.placed
                if p[2] is not None and p[1] >= PLACED_WELL}
        said = [u for u in self._stream_units(found.stream, scope.t_min, scope.t_max, reader)
                if u.modality == "speech" and u.text.strip() and (u.memory_id, round(u.t_start, 2)) not in sure]
        if len(said) > LISTEN_SENTENCES_READ:  # a long recording: the searched candidates only
            said = [u for u in found.cands if u.stream_id == found.stream and u.modality == "speech"
                    and (u.memory_id, round(u.t_start, 2)) not in sure]
        if not said:
            return []
        # the least well placed first, and each thing's nearest sentence before any second one
        weak = sorted((q, k) for k, (_, q, _) in enumerate(found.placed) if q < PLACED_WELL)
        ranked = [[said[j] for j in np.argsort(-self._nearness(compared[k], said))[:LISTEN_PER_THING]] for _, k in weak]
        return one_per_memory([r[i] for i in range(LISTEN_PER_THING) for r in ranked if i < len(r)])

    def placement_checks(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                         scope: Scope, reader: MemoryReader) -> list[tuple[str, list[Unit]]]:
        """For an order question about speech, each thing it compares or starts from that is
        still placed weakly (after re-listening), as the words that name it ("laptop" of "where
        Priya left the laptop": :func:`retrieval.mention_audio.telling_phrase`) with the
        ``SOUND_CHECKS_PER_THING`` sentences nearest to it that do not hold them (in turn by
        two sound rankings, :meth:`_sounding_nearest`): where the
        audio carries the thing in one of them, it was said there ("Bring your left, the left,
        top, next to the map, Shell." for "Priya left the laptop next to the map shelf")."""
        shape = analysis.shape
        if shape.order not in ("first", "last", "after", "before") or getattr(analysis, "asks_sound", False):
            return []
        if analysis.query_type not in (QueryType.AUDIO, QueryType.VIDEO_AUDIO):
            return []  # "which was shown first?" is about pictures; "the colour of X" said is speech
        if shape.order in ("after", "before"):
            if not shape.anchor:
                return []
            found = self._around_anchor(analysis, options, recall, scope, reader)
            if found is not None and found[1] >= PLACED_WELL:
                return []
            named = self.named_stream(analysis.question, reader.streams_in(scope))
            streams = [named] if named is not None else list(reader.streams_in(scope))
            weak = [shape.anchor]
        else:
            compared, _ = _compared(analysis, options)
            if len(compared) < 2:
                return []
            placement = self._placed_in_one_stream(compared, scope, reader, recall)
            if not placement.stream:
                return []
            streams = [placement.stream]
            weak = [compared[k] for k, (_, q, _) in enumerate(placement.placed) if q < PLACED_WELL]
        said = [u for sid in streams for u in self._stream_units(sid, scope.t_min, scope.t_max, reader)
                if u.modality == "speech" and u.text.strip()]
        if not said or len(said) > LISTEN_SENTENCES_READ:
            return []
        out = []
        for thing in weak:
            phrase = telling_phrase(thing)
            lacking = not_naming(phrase, said) if phrase else []
            if len(lacking) < len(said):
                # its words were heard, in a sentence placed weakly for another reason (a name
                # misheard: "Henry has to see the stage manager" for Henrik's appointment): the
                # audio of the others could only place it a second time, wrongly ("There is the
                # stage bit again." took "stage manager" at -6.9)
                continue
            out.append((phrase, [lacking[j] for j in self._sounding_nearest(thing, lacking, SOUND_CHECKS_PER_THING)]))
        return out

    def object_checks(self, analysis: QueryAnalysis, recall: Sequence[Unit], scope: Scope,
                      reader: MemoryReader, options: Sequence[str] = ()) -> list[tuple[str, list[Unit]]]:
        """For a question about speech whose thing no recalled sentence holds, even misheard
        ("How much is an egg?" with "That may have been 54 times that of a cone top."): the
        thing as the question words it ("egg") with the ``PLACE_CHECKS_PER_THING`` sentences
        of the streams in scope nearest to the question in words and sound, to be asked of the
        audio whether one says it there after all. Nothing when anything recalled holds it
        (a sentence, a sign, a picture's words: "How much is an egg?" may be about a price tag),
        for a question about a sound or about writing, or for a recording too long to read
        whole. A stream's name is no thing ("… in the station-cam recording"). The
        ``OPTION_CHECKS`` nearest of the others that say an option (its value, or all its
        words) are asked too: "How much is a magazine?" (34, 52, 31 or 45 dollars) is answered
        where "Amaghaninen 52 northern at the counter." was heard, which shares no word with
        the question."""
        if getattr(analysis, "asks_sound", False) or getattr(analysis, "asks_text", False):
            return []
        streams = reader.streams_in(scope)
        of_streams = _stream_terms(streams)
        wanted = [t for t in getattr(analysis, "object_terms", None) or [] if t not in of_streams]
        phrase = thing_phrase(analysis.question, wanted)
        if not wanted or not phrase:
            return []
        if any(all(holds_loosely(t, u.support_terms) for t in wanted) for u in recall):
            return []
        said = [u for sid in streams for u in self._stream_units(sid, scope.t_min, scope.t_max, reader)
                if u.modality == "speech" and u.text.strip()]
        if not said or len(said) > LISTEN_SENTENCES_READ:
            return []
        ranked = [int(j) for j in np.argsort(-self._nearness(analysis.question, said), kind="stable")]
        near = ranked[:PLACE_CHECKS_PER_THING]
        near += [j for j in ranked[PLACE_CHECKS_PER_THING:] if says_an_option(said[j], options)][:OPTION_CHECKS]
        return [(phrase, [said[j] for j in near])]

    def _neighbour_targets(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                           scope: Scope, reader: MemoryReader) -> list[Unit] | None:
        """"What came up right after X: A, B or C?": the sentence next to X is where the
        answer must be. When it matches no option well it was perhaps misheard ("If you need
        the real value, or mark it, set up the compost key." for "where Omar left the
        wheelbarrow"), and is heard again with the question's and the options' words, with
        X's own sentence when X was placed weakly, then the sentence after the next. Nothing
        when the next sentence matches an option well and X is placed well; None (re-listening
        chooses from what was recalled) without options, or where X is not placed at all."""
        if not options:
            return None
        found = self._around_anchor(analysis, options, recall, scope, reader)
        if found is None:
            return None
        anchor, anchor_q, seq = found
        said = [u for u in seq if u.modality == "speech"]
        if not said:
            return None
        heard = max(float(self._match(o, said[:1])[0]) for o in options)
        if heard >= PLACED_WELL and anchor_q >= PLACED_WELL:
            return []
        weak_anchor = [anchor] if anchor_q < PLACED_WELL and anchor.modality == "speech" else []
        return one_per_memory(said[:1] + weak_anchor + said[1:2])

    def _count_targets(self, analysis: QueryAnalysis, scope: Scope, reader: MemoryReader) -> list[Unit] | None:
        """"How many times was the printer mentioned in library-cam?": the sentences of the
        named stream that do not mention it, nearest to it first ("Look, that minter in
        here."), up to ``LISTEN_PER_COUNT``: a mention misheard there is not counted unless it
        is heard again. Without a named stream (or in a long one) there is no opinion."""
        missing = self._count_missing(analysis, scope, reader)
        return None if missing is None else one_per_memory(missing[:LISTEN_PER_COUNT])

    def mention_targets(self, analysis: QueryAnalysis, scope: Scope, reader: MemoryReader) -> list[Unit]:
        """The sentences whose audio a count asks whether they name the thing after all
        (retrieval/mention_audio.py): the ``MENTION_CHECKS_PER_COUNT`` nearest to it that do
        not (those heard again first), more than are heard again, as asking costs a fraction of
        hearing ("There is the lobby again." was fifth nearest to "robin" of nine)."""
        if not analysis.shape.counts:
            return []
        return (self._count_missing(analysis, scope, reader) or [])[:MENTION_CHECKS_PER_COUNT]

    def _count_missing(self, analysis: QueryAnalysis, scope: Scope, reader: MemoryReader) -> list[Unit] | None:
        """The named stream's sentences that do not mention the counted thing, nearest to it
        in words and sound first; None without a named stream, in a long one, or when the
        question names no thing."""
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        wanted, whole = self._counted_words(analysis, streams)
        if named is None or not wanted:
            return None
        said = [u for u in self._stream_units(named, scope.t_min, scope.t_max, reader)
                if u.modality == "speech" and u.text.strip()]
        if len(said) > LISTEN_SENTENCES_READ:
            return None
        missing = [u for u in said if not self._mentions(analysis, wanted, u, whole)]
        if not missing:
            return []
        # near all of the thing's words: "lawn mower" misheard as "the long way", not its head alone
        m = self._nearness(" ".join(self._count_terms(analysis, streams)), missing)
        return [missing[j] for j in np.argsort(-m)]

    def _nearness(self, thing: str, units: Sequence[Unit]) -> np.ndarray:
        """How likely each unit is to hold ``thing`` misheard: its match (words, cosine) plus
        how near it sounds to the thing (:meth:`_sounding`)."""
        return self._match(thing, units) + self._sounding(thing, units)

    @staticmethod
    def _option_sounding(options: Sequence[str], said: Sequence[Unit]) -> list[float]:
        """How near the sentences ``said`` (where the answer must be, matching no option:
        misheard) come to sounding like each option, by all its content words (options differ
        in everyday words too: "Chen and the eggs" in "Can ordered high necks", 0.72, over
        "Chen's appointment with the baker", 0.66), give or take ``KIND_FIT`` for an option
        that describes a kind of value the sentences do or do not hold ("Bruce got 16 notes
        this morning" sounds a little nearer "the colour of Daniel's apron" than "Ruth and the
        eggs", but holds no colour). Only ranks options already left by elimination, never
        matches one."""
        carried = frozenset().union(*(carried_kinds(u.text) for u in said))
        # a price or a time heard without its unit is a bare number ("54 times that of a cone
        # top" for "fifty-four pounds at the counter"): neither for nor against
        numbers = any(t[:1].isdigit() for u in said for t in canonical_tokens(u.text))
        out = []
        for o in options:
            near = float(TimeAnswers._sounding_whole(o, said).max(initial=0.0))
            asked = asked_kinds(o)
            if asked & carried:
                near += KIND_FIT
            elif asked and not (numbers and asked <= _NUMBER_KINDS):
                near -= KIND_FIT
            out.append(min(1.0, max(0.0, near)))
        return out

    def _sounding_nearest(self, thing: str, units: Sequence[Unit], limit: int) -> list[int]:
        """Indexes of the ``limit`` units likeliest to hold ``thing`` misheard, taken in turn
        from two rankings by its words plus how near each sounds: to its telling words ("the
        price of the novel" in "The number in 57 you're long at the counter.") and to all its
        words ("the poetry reading" in "The only three reason is in room 104.", where "poetry"
        alone sounds nearest to "Luke has put the laptop")."""
        match = self._match(thing, units)
        rankings = [np.argsort(-(match + self._sounding(thing, units)), kind="stable"),
                    np.argsort(-(match + self._sounding_whole(thing, units)), kind="stable")]
        out: list[int] = []
        for j in (int(j) for pair in zip(*rankings, strict=True) for j in pair):
            if j not in out:
                out.append(j)
        return out[:limit]

    @staticmethod
    def _sounding_whole(thing: str, units: Sequence[Unit]) -> np.ndarray:
        """How near each unit sounds to all of ``thing``'s content words, everyday ones too."""
        said = _content_words(thing)
        return np.array([sound_nearness(said, u.text) for u in units])

    @staticmethod
    def _sounding(thing: str, units: Sequence[Unit]) -> np.ndarray:
        """How near each unit sounds to the telling words of ``thing`` (its less everyday
        ones, "backpack" of "who takes care of the backpack", else all its content words);
        a thing of two words written together, also as one word ("lawn mower" in "There is the
        long noise again."), never a question's or a topic's words joined ("fixing spade")."""
        said = _content_words(thing)
        telling = [w for w in said if not_everyday(w)] or said
        written = [w.lower() for w in re.findall(r"[A-Za-z]+", thing)]
        compound = len(telling) == 2 and any(
            written[i : i + 2] == [w.lower() for w in telling] for i in range(len(written) - 1))
        near = phrase_sound_nearness if compound else sound_nearness
        return np.array([near(telling, u.text) for u in units])

    @staticmethod
    def _count_terms(analysis: QueryAnalysis, streams: Sequence[str]) -> list[str]:
        """The question's words that say what is counted (not "times", not a stream's name);
        a thing that is also a word of hearing ("How many times was the siren mentioned?":
        "siren" tells what to listen for, so it is no content word) when nothing else is."""
        of_streams = _stream_terms(streams)
        terms = [t for t in analysis.terms if t not in _COUNT_WORDS and t not in of_streams]
        return terms or list(dict.fromkeys(stem(t) for t in tokens(analysis.question) if t in _HEARD_THINGS))

    def counted_thing(self, analysis: QueryAnalysis, streams: Sequence[str]) -> tuple[str, Callable[[Unit], bool]]:
        """What a count question counts, as the question words it ("book trolley"), and
        whether a unit mentions it (as :meth:`count` decides); ("", …) for another question."""
        if not analysis.shape.counts:
            return "", lambda u: False
        wanted, whole = self._counted_words(analysis, streams)
        # all its words ("dump truck"): its head alone ("truck") fits a misheard "troll" too well
        return thing_phrase(analysis.question, self._count_terms(analysis, streams)), \
            lambda u: self._mentions(analysis, wanted, u, whole)

    def _counted_words(self, analysis: QueryAnalysis, streams: Sequence[str]) -> tuple[list[str], list[str]]:
        """The words of the thing a count question counts (its object, else all its words), and
        the stems of all its words as the question writes it ("stage bell": the modifier too,
        where the first keeps its head)."""
        terms = self._count_terms(analysis, streams)
        wanted = [t for t in getattr(analysis, "object_terms", []) if t in terms] or terms
        words = tokens(thing_phrase(analysis.question, terms))
        named = set(words) | {stem(t) for t in words}
        return wanted, [t for t in terms if t in named]

    @staticmethod
    def _mentions(analysis: QueryAnalysis, wanted: Sequence[str], u: Unit, whole: Sequence[str] = ()) -> bool:
        """Whether ``u`` mentions the counted thing (a misheard word counts, see
        :func:`reasoning.evidence_fit.holds_loosely`, also one heard as two words: "seagull"
        as "sea call"). Where the thing's head (``wanted``) only sounds like a word of ``u``,
        the rest of it (``whole``: all its words) must be there too, misheard or not: "Look
        at once the street to the poor bill." (said "… the script to be purple") is no
        mention of the stage bell, "There is the fairy horn again." is one of the ferry horn.
        Left uncounted, such a sentence is still asked of the audio (:meth:`mention_targets`)."""
        have = {stem(w) for w, _ in words_and_pairs([(t, False) for t in canonical_tokens(u.text)])}
        have |= fuzzy_found(analysis.question, [*wanted, *whole], u.text, u.terms)
        if not all(holds_loosely(t, have) for t in wanted):
            return False
        return all(t in have for t in wanted) or all(holds_loosely(t, have) for t in whole)

    def _one_placed(self, options: Sequence[str], compared: Sequence[str],
                    placed: Sequence[tuple[float, float, Unit | None]], found: int, first: bool,
                    scope: Scope, reader: MemoryReader) -> Draft | None:
        """"Which came first, A or B?" with only A found: B was misheard, somewhere among the
        stream's other sentences. A is first as likely as those sentences lie after it (one
        said near the start of a recording is probably first); a guess, at a guess's
        confidence."""
        unit = placed[found][2]
        assert unit is not None
        said = [u for u in self._stream_units(unit.stream_id, scope.t_min, scope.t_max, reader)
                if u.modality == "speech" and u.text.strip() and not (u.t_start < unit.t_end and unit.t_start < u.t_end)]
        said = list({(round(u.t_start, 2), u.text): u for u in said}.values())
        before = sum(1 for u in said if u.t_end <= unit.t_start)
        after = sum(1 for u in said if u.t_start >= unit.t_end)
        if before + after == 0 or before == after:
            return None
        p_first = after / (before + after)
        other = 1 - found
        pick = found if (p_first > 0.5) == first else other
        sure = ELIMINATION_CONFIDENCE * max(p_first, 1.0 - p_first)
        caps = {"route": 2.0, "placed": 1.0, "p_first": round(p_first, 3)}
        if options:  # not relative, so the options are what was compared
            return self._eliminated(options, pick, sure, [unit], caps)
        return Draft(answer=f"{compared[pick]} (a guess: only {compared[found]!r} was found, {unit.cite()})",
                     confidence=round(sure, 4), support=[unit], source="order", caps={**caps, "span": 1.0})

    def _before_or_after(self, options: Sequence[str], placed: Sequence[tuple[float, float, Unit | None]],
                         caps: dict[str, float], sure: float) -> Draft | None:
        """"Was A mentioned before or after B?": "before" when A was placed first. Both must be
        found; with options, the one that says that order word (or its synonym)."""
        (ta, _, ua), (tb, _, ub) = placed[0], placed[1]
        if ua is None or ub is None:
            return None
        first = ta <= tb
        word = "before" if first else "after"
        units = [ua, ub]
        if options:
            says = _ORDER_SAID[0] if first else _ORDER_SAID[1]
            wanted = [says.search(o) is not None for o in options]
            if not any(wanted):
                return None
            scores = [1.0 if w else 0.0 for w in wanted]
            support = [sure if w else 0.0 for w in wanted]
            return self._choice(options, scores, support, [units for _ in options], caps)
        answer = f"{word} ({ua.cite()}; {ub.cite()})"
        return Draft(answer=answer, confidence=round(sure, 4), support=units, source="order", caps={**caps, "span": 1.0})

    # -- how many times ----------------------------------------------------------------------
    def count(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
              scope: Scope, reader: MemoryReader) -> Draft | None:
        """Distinct moments whose text mentions the thing asked about: each sentence of speech
        that mentions it (a misheard word counts, see :func:`reasoning.evidence_fit.holds_loosely`), and
        time-separated appearances elsewhere. A stream named in the question ("… in
        library-cam") is read whole; otherwise the moments near the thing are searched."""
        if not analysis.shape.counts:
            return None
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        wanted, whole = self._counted_words(analysis, streams)
        if not wanted:
            return None
        if named is not None:
            cands = self._stream_units(named, scope.t_min, scope.t_max, reader)
        else:
            cands = self._candidates(" ".join(self._count_terms(analysis, streams)), scope, reader, recall)
        moments: list[tuple[str, float, float, Unit]] = []
        mentions = 0
        seen: set[tuple[str, str, float]] = set()
        words_only = counts_mentions(analysis.question)
        for u in sorted(cands, key=lambda u: (u.stream_id, u.t_start)):
            if u.modality == "summary" or (words_only and u.modality not in MENTIONED_IN):
                continue
            key = (u.stream_id, u.text.lower(), round(u.t_start, 1))
            if key in seen:
                continue
            seen.add(key)
            if not self._mentions(analysis, wanted, u, whole):
                continue
            if u.modality == "speech":
                # one sentence is one moment: a loose match may hit twice in it ("mower … moor")
                mentions += 1
                moments.append((u.stream_id, u.t_start, u.t_end, u))
                continue
            last = next((mo for mo in reversed(moments) if mo[0] == u.stream_id and mo[3].modality != "speech"), None)
            if last is not None and u.t_start - last[2] <= COUNT_GAP_S:
                continue
            mentions += 1
            moments.append((u.stream_id, u.t_start, u.t_end, u))
        n = mentions
        support_units = [mo[3] for mo in moments]
        caps = {"route": 3.0, "moments": float(len(moments))}
        if options:
            values = []
            for o in options:
                nums = [t for t in canonical_tokens(o) if re.fullmatch(r"\d+", t)]
                once = re.search(r"\b(once|twice|thrice)\b", o, re.I)
                if nums:
                    values.append(int(nums[0]))
                elif once:
                    values.append({"once": 1, "twice": 2, "thrice": 3}[once.group(1).lower()])
                else:
                    values.append(0 if re.search(r"\b(never|none|no)\b", o, re.I) else None)
            scores = [0.0 if v is None else 1.0 / (1.0 + abs(v - n)) for v in values]
            support = [COUNT_SUPPORT if v == n and n > 0 else 0.3 * s for v, s in zip(values, scores, strict=True)]
            evidence = [support_units[:3] for _ in options]
            return self._choice(options, scores, support, evidence, caps)
        if n == 0:
            return None
        answer = f"{n} time{'s' if n != 1 else ''} ({'; '.join(u.cite() for u in support_units[:5])})"
        return Draft(answer=answer, confidence=0.6, support=support_units, source="count",
                     caps={**caps, "span": 1.0})

    def said_while_dark(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                        reader: MemoryReader) -> Draft | None:
        """"What was talked about while the screen was dark?": the sentences spoken during the
        dark key frames of the named stream (else of every stream in scope). The memory keeps
        each key frame's quality, so the moment is known even though nothing was seen."""
        moment = self._dark_moment(analysis, scope, reader)
        if moment is None:
            return None
        spans, memories = moment
        return self._said_during(spans, "the picture was dark", "a dark picture", "visual",
                                 memories, options, scope, reader)

    def _dark_moment(self, analysis: QueryAnalysis, scope: Scope, reader: MemoryReader
                     ) -> tuple[list[tuple[str, float, float]], list] | None:
        """The dark stretches (stream, start, end) a "while the screen was dark" question asks
        about, in the named stream (else every stream in scope), with those streams' memories;
        None for other questions."""
        if not getattr(analysis.shape, "said_while_dark", False):
            return None
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        memories = self._memories([named] if named else streams, scope)
        return dark_spans(memories), memories

    def _spoken_during(self, spans: Sequence[tuple[str, float, float]], reader: MemoryReader) -> list[Unit]:
        """The sentences spoken during ``spans`` (stream, start, end): read ``DARK_SLACK_S``
        around each, kept when ``DARK_OVERLAP_S`` of them (or half) falls inside; each once."""
        said: list[Unit] = []
        for sid, a, b in spans:
            for u in self._stream_units(sid, a - DARK_SLACK_S, b + DARK_SLACK_S, reader):
                inside = min(u.t_end, b) - max(u.t_start, a)
                if u.modality == "speech" and inside >= min(DARK_OVERLAP_S, (u.t_end - u.t_start) / 2):
                    said.append(u)
        return list({(u.stream_id, round(u.t_start, 2), u.text): u for u in said}.values())

    def _said_during(self, spans: Sequence[tuple[str, float, float]], what: str, unit_text: str, modality: str,
                     memories: Sequence, options: Sequence[str], scope: Scope, reader: MemoryReader) -> Draft | None:
        """The sentences spoken during ``spans`` (stream, start, end) of a moment (``what``:
        "the picture was dark"); with none, that no words were heard then (and what was) —
        rather than let text search quote a sentence from elsewhere."""
        said = self._spoken_during(spans, reader)
        if not said:
            return None if options or not spans else _nothing_said(memories, spans, what, unit_text, modality)
        caps = {"route": 8.0, "dark_spans": float(len(spans)), "sentences": float(len(said))}
        if options:
            return self._choice_said_then(options, said, DARK_SPEECH_CONFIDENCE, caps, scope, reader)
        top = said[0]
        return Draft(answer=f'"{top.text.strip()}" (said while {what}, {top.cite()})',
                     confidence=DARK_SPEECH_CONFIDENCE, support=said, source="order", caps={**caps, "span": 1.0})


def _nothing_said(memories: Sequence, spans: Sequence[tuple[str, float, float]], what: str = "the picture was dark",
                  unit_text: str = "a dark picture", modality: str = "visual") -> Draft:
    """The answer to "what was said while the screen was dark (the engine ran)?" when the
    memory holds no sentence there: that no words were heard, with what was."""
    heard: dict[str, str] = {}  # description → kind
    for m in memories:
        for o in m.sounds:
            inside = any(sid == m.stream_id and o.t_end >= a and o.t_start <= b for sid, a, b in spans)
            if inside and o.kind != "speech" and o.description and o.description != unit_text:
                heard.setdefault(o.description, o.kind)
    named = sorted(heard, key=lambda d: heard[d] in ("noise", "silence"))  # music before noise
    sid, a, b = spans[0]
    home = next((m for m in memories if m.stream_id == sid and m.t_start <= a <= m.t_end), None)
    unit = Unit(sid, home.id if home is not None else "", a, b, modality, unit_text)
    where = f"{sid}, {a:.1f}–{b:.1f} s"
    # no claim that nobody spoke: the sound rules take some music for speech, and the
    # recogniser may have missed words; only that no words are in the memory
    also = f"; heard: {', '.join(named[:2])}" if named else ""
    answer = f"No words were heard while {what}{also} ({where})"
    return Draft(answer=answer, confidence=NOTHING_SAID_CONFIDENCE, support=[unit], source="sound",
                 caps={"route": 8.0, "dark_spans": float(len(spans)), "sentences": 0.0, "span": 1.0})


def counts_mentions(question: str) -> bool:
    """Whether a count question counts mentions ("How many times was the jet engine
    mentioned?", "how often did someone talk about …") and not sightings or sounds ("how many
    times could an engine be heard?", "… was a dog seen?")."""
    return bool(_ASKS_MENTIONS.search(question)) and not _ASKS_SEEN_OR_HEARD.search(question)


def says_an_option(unit: Unit, options: Sequence[str]) -> bool:
    """Whether ``unit`` says one of ``options``: a number or time it gives ("52 dollars" in
    "Amaghaninen 52 northern"), or every content word of one ("tool shed")."""
    said = unit.terms
    for option in options:
        values = number_keys(option)
        if values and values & number_keys(unit.text):
            return True
        words = content_terms(option)
        if not values and words and all(w in said for w in words):
            return True
    return False


def tells(option: str, phrase: str, unit: Unit) -> bool:
    """Whether ``unit`` says something of ``option`` besides a person's name: all the words of
    its telling ``phrase``, or any other of its content words ("Ruth will clean the stain
    after lunch." tells nothing of "where Ruth left the watering can": Ruth is a name)."""
    return bool(phrase and not not_naming(phrase, [unit])) or bool(set(unnamed_terms(option)) & unit.terms)


def unnamed_terms(thing: str) -> list[str]:
    """The content terms of ``thing`` other than a person's name (its capitalised words)."""
    return [t for w in thing.split() if not w[:1].isupper() for t in content_terms(w)]


def not_naming(phrase: str, units: Sequence[Unit]) -> list[Unit]:
    """The units whose text lacks some word of ``phrase`` (as written, any case)."""
    own = phrase.lower().split()
    return [u for u in units if not all(w in u.text.lower() for w in own)]
