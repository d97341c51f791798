"""The picture that stands out in a stream: "a picture was shown that nobody talked about; what
did it show?", asked with no options.

The offline describer names a thing only when it is nearly sure (memory/vision.py), so a photo
of a rocket is usually stored as "a scene; colours: blue" with the classifier's unsure guesses
beside it ("a rocket" 0.20, "a lamp" 0.11). Guesses alone are no answer: the walls, textures
and clothes a camera sees all the time are guessed as confidently ("Windsor tie" 0.77, "shower
curtain" 0.63). What tells a shown picture from the background is *where* a guess occurs: the
background's guesses come back again and again through the stream, a picture's come in one
stretch only. So a guess is a candidate when it is not background in its stream
(retrieval/recurring_guesses.py: carried by key frames in one stretch, covering at most a
share of the stream's key frames), and it is guessed on some frame that carries no
on-screen text (a sign's frame is about its writing; stray marks an OCR engine reads on a
photo, "米*", are not writing). The candidate with the highest probability answers,
hedged ("probably …"), with the other candidates of the same stretch as alternatives, and
its confidence never above ``GUESS_CAP`` (guess_match's cap for answers resting on guesses).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from episodic.retrieval.detailed import Unit
from episodic.retrieval.guess_match import GUESS_CAP
from episodic.retrieval.recurring_guesses import carriers, recurring

OPEN_GUESS_MIN = 0.15  # the standing-out guess must reach this on some frame
ALTERNATIVES = 2  # other guesses of the same stretch said beside the best one
SURE_GUESS = 0.5  # a stand-out guessed this surely is a picture of that, not of something unnamed
WRITING = re.compile(r"[^\W\d_]{3,}")  # three letters in a row: on-screen text that is writing


@dataclass
class StandOut:
    """A guess seen in one stretch of one stream only."""

    label: str
    p: float  # its highest probability on a frame
    units: list[Unit]  # the key frames carrying it, in time order
    also: list[str] = field(default_factory=list)  # other stand-out guesses in the same stretch

    @property
    def t_start(self) -> float:
        return self.units[0].t_start

    @property
    def t_end(self) -> float:
        return self.units[-1].t_end


def stand_outs(units: Sequence[Unit]) -> list[StandOut]:
    """Guesses of ``units`` (one stream's key-frame and on-screen-text units) that occur in one
    stretch only, best first."""
    frames = sorted((u for u in units if u.modality == "visual"), key=lambda u: u.t_start)
    # writing, not a recogniser's stray marks on a photo ("米*")
    written = [u for u in units if u.modality == "ocr" and WRITING.search(u.text)]
    plain = [f for f in frames
             if not any(w.t_start < f.t_end and f.t_start < w.t_end for w in written)]
    if not plain:
        return []
    by_name = carriers(frames)  # every frame counts for where a guess recurs, signs included
    background = recurring(frames, by_name)
    plain_ids = {id(f) for f in plain}
    out: list[StandOut] = []
    for name, hits in by_name.items():
        if name in background:
            continue
        on = [u for u, _ in hits]
        best = max((p for u, p in hits if id(u) in plain_ids), default=0.0)
        if best >= OPEN_GUESS_MIN:
            out.append(StandOut(name, best, on))
    out.sort(key=lambda s: -s.p)
    for s in out:
        s.also = [o.label for o in out if o is not s and o.t_start < s.t_end and s.t_start < o.t_end][:ALTERNATIVES]
    return out


def guessed_answer(label: str, also: Sequence[str], why: str, stream_id: str, t_start: float, t_end: float) -> str:
    """"Probably a rocket (or: a lamp; <why>, not a sure sighting; cam, 20.0–30.0 s)"."""
    alternatives = f"or: {', '.join(also)}; " if also else ""
    return f"Probably {label} ({alternatives}{why}, not a sure sighting; {stream_id}, {t_start:.1f}–{t_end:.1f} s)"


def standout_answer(units: Sequence[Unit]) -> tuple[str, float, StandOut] | None:
    """(answer, confidence, the stand-out) for the best stand-out guess, or None."""
    found = stand_outs(units)
    if not found:
        return None
    best = found[0]
    answer = guessed_answer(best.label, best.also, "a guess at a picture seen only there",
                            best.units[0].stream_id, best.t_start, best.t_end)
    return answer, min(best.p, GUESS_CAP), best
