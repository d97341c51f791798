"""Answers read straight off the memory, before the ordinary pathways: questions that ask
*whether* (reasoning/yes_no.py) or *when in the recording* something was said or heard
(reasoning/when_said.py), questions asking for every time, room, price or colour said
(reasoning/value_list.py), questions about a moment of a recording's own time or one of
its ends (retrieval/time_anchor.py, reasoning/moment_answer.py), and questions about the
recordings themselves (reasoning/recording_facts.py).

Each is a kind of question the ordinary pathways answer badly because they look for the text
most like the question: "Was there a picture of a guitar?" got a guess at another picture,
"What was said at 0:24?" a sentence a minute away, "How long was the screen dark?" the number
on a sign. What they need is in the memory's structure: where a thing surely was, what the
stream holds at a second, its order, its lengths and counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from episodic.core.interfaces import QueryStore
from episodic.core.query import AskRequest, Scope
from episodic.reasoning.answer import Draft
from episodic.reasoning.moment_answer import moment_answer, moment_modalities
from episodic.reasoning.recording_facts import asks_about_the_recording, recording_fact
from episodic.reasoning.structured import StructuredAnswerer, sound_words
from episodic.reasoning.value_list import asks_for_values, values_answer
from episodic.reasoning.when_said import WHEN_LOOKED, asks_when_said, when_answer
from episodic.reasoning.yes_no import (
    YES_LOOKED,
    asks_about_words,
    beside_the_question,
    yes_answer,
    yes_from_evidence,
)
from episodic.retrieval.detailed import MemoryReader, stream_named_in
from episodic.retrieval.moments import MomentSearch
from episodic.retrieval.query_analysis import (
    GENERIC_QUESTION_WORDS,
    QueryAnalysis,
    asks_yes_or_no,
    term_set,
)
from episodic.retrieval.time_anchor import (
    TimeAnchor,
    anchored_to,
    recording_edge,
    time_anchor,
    without_anchor,
)

# "what was said last?": the stream's last this many seconds are read first, then twice as many
END_WINDOW_S = 60.0


class DirectAnswers:
    """The answers above, over one store; the moment search and structured answerer are the
    query service's own (shared caches)."""

    def __init__(self, store: QueryStore, moments: MomentSearch, structured: StructuredAnswerer) -> None:
        self.store = store
        self.moments = moments
        self.structured = structured

    # -- a moment of stream time ------------------------------------------------------------
    def scoped_to_moment(self, req: AskRequest) -> tuple[AskRequest, TimeAnchor | None]:
        """``req`` scoped to the seconds around the moment of stream time its question names,
        its question without the time phrase; as it is when it names none."""
        anchor = time_anchor(req.question)
        if anchor is None:
            return req, None
        reader = MemoryReader(self.store)
        streams = reader.streams_in(req.scope)
        named = stream_named_in(req.question, streams)
        ends = [e for e in (reader.stream_end(sid) for sid in ([named] if named else streams)) if e]
        if not anchored_to(req.question, anchor, named is not None, max(ends) if ends else None):
            return req, None
        lo, hi = anchor.window()
        scope = req.scope
        t_min = lo if scope.t_min is None else max(lo, scope.t_min)
        t_max = hi if scope.t_max is None else min(hi, scope.t_max)
        if t_max < t_min:  # a moment outside the asked scope: nothing there
            t_min = t_max = hi
        ids = (named,) if named else scope.stream_ids
        return replace(req, question=without_anchor(req.question, anchor),
                       scope=Scope(stream_ids=ids, t_min=t_min, t_max=t_max)), anchor

    # -- whether ----------------------------------------------------------------------------
    def whether(self, req: AskRequest, analysis: QueryAnalysis, q_vec: np.ndarray, named: str | None,
                reader: MemoryReader) -> tuple[Draft | None, list[str]]:
        """For a whether-question: a yes with the moment that surely shows what it asks about
        (or None), and the things it asks about (stems; empty for any other question)."""
        shape = analysis.shape
        if (req.options or not asks_yes_or_no(req.question)
                or shape.order or shape.counts or shape.gist or shape.asks_stream or shape.said_while_dark
                or shape.pictured_while or shape.said_while_pictured or shape.said_while_sound):
            return None, []
        # the recording it names is where to look, not a word to find; "was there music?":
        # the kind of sound is all it names ("music" is a cue word)
        place = term_set(named.replace("-", " ").replace("_", " ")) if named else set()
        asked = [t for t in analysis.terms if t not in place] or sorted(sound_words(req.question))
        moments = self.moments.search(analysis, q_vec, req.scope, YES_LOOKED, reader)
        return yes_answer(asked, moments, asks_about_words(req.question)), asked

    # -- when in the recording ---------------------------------------------------------------
    def when_said(self, req: AskRequest, analysis: QueryAnalysis, q_vec: np.ndarray, named: str | None,
                  reader: MemoryReader) -> Draft | None:
        """"When was the suitcase mentioned?": the moments that surely hold what it asks about,
        in the recording's own time (reasoning/when_said.py); None for any other question, or
        when no moment holds it all (the ordinary answer then answers or refuses)."""
        if req.options or not asks_when_said(req.question):
            return None
        place = term_set(named.replace("-", " ").replace("_", " ")) if named else set()
        asked = [t for t in analysis.terms
                 if t not in place and t not in GENERIC_QUESTION_WORDS] or sorted(sound_words(req.question))
        moments = self.moments.search(analysis, q_vec, req.scope, WHEN_LOOKED, reader)
        return when_answer(asked, moments, req.question)

    @staticmethod
    def settle_whether(question: str, asked: Sequence[str], yes: Draft | None, final: Draft) -> tuple[Draft, bool]:
        """A whether-question's final answer, and whether to refuse it: the ordinary answer
        becomes a yes when its own evidence holds every thing ``asked`` ("Look, the lawnmower is
        here."), and is refused when it holds half of them or less; other questions (no
        ``asked``) and those already answered yes pass as they are."""
        if not asked or yes is not None:
            return final, False
        found = yes_from_evidence(asked, final, asks_about_words(question))
        if found is not None:
            return found, False
        return final, beside_the_question(asked, final)

    # -- read off the structure -------------------------------------------------------------
    def read_off(self, req: AskRequest, analysis: QueryAnalysis, anchor: TimeAnchor | None, named: str | None,
                 in_scope: Sequence[str], reader: MemoryReader) -> Draft | None:
        """A question about the recordings themselves, or one asking only what was there at a
        moment of stream time or at a recording's end: its answer; None for any other."""
        shape = analysis.shape
        if req.options:
            return None
        kind = asks_for_values(req.question)
        if kind is not None:  # "What times were mentioned in harbour-cam?": every one said
            streams = [named] if named else reader.streams_in(req.scope)
            units = [u for sid in streams for u in self.structured.units_between(
                sid, req.scope.t_min or 0.0, req.scope.t_max or (reader.stream_end(sid) or 0.0), reader)]
            return values_answer(kind, units)
        if asks_about_the_recording(req.question):
            streams = [named] if named else reader.streams_in(req.scope)
            memories = [m for sid in streams
                        for m in self.store.list_memories(sid, t_min=req.scope.t_min, t_max=req.scope.t_max)]
            return recording_fact(req.question, streams, memories, {sid: reader.stream_end(sid) for sid in streams})
        if (analysis.object_terms or shape.focus != "any"
                or shape.order or shape.counts or shape.gist or shape.asks_stream):
            return None  # something to look for: the ordinary way (within the moment's seconds)
        kinds = moment_modalities(req.question, analysis.preferred_modalities, analysis.asks_text)
        if anchor is not None:
            t0, t1 = req.scope.t_min or 0.0, req.scope.t_max or anchor.seconds
            units = [u for sid in reader.streams_in(req.scope)
                     for u in self.structured.units_between(sid, t0, t1, reader)
                     if min(u.t_end, t1) >= max(u.t_start, t0)]
            return moment_answer(units, anchor.seconds, kinds)
        edge = recording_edge(req.question)
        if edge is not None and (named or len(in_scope) == 1):
            return self._at_an_end(named or in_scope[0], edge, kinds, req.scope, reader)
        return None

    def _at_an_end(self, stream_id: str, position: str, kinds: tuple[str, ...], scope: Scope,
                   reader: MemoryReader) -> Draft | None:
        """What a stream holds of the kinds asked nearest its end (or start): read back from
        there over a window that doubles (from END_WINDOW_S) until it holds one of them, so the
        last sign shown an hour before the end is still found."""
        end = reader.stream_end(stream_id)
        if end is None:
            return None
        lo_all = scope.t_min if scope.t_min is not None else 0.0
        hi_all = min(end, scope.t_max) if scope.t_max is not None else end
        width = END_WINDOW_S
        while True:
            lo, hi = (max(lo_all, hi_all - width), hi_all) if position == "end" else (lo_all, min(hi_all, lo_all + width))
            units = [u for u in self.structured.units_between(stream_id, lo, hi, reader)
                     if u.modality in kinds and u.modality != "summary"]
            if units or (lo <= lo_all and hi >= hi_all):
                break
            width *= 2
        edge = max((u.t_end for u in units), default=hi) if position == "end" else min((u.t_start for u in units), default=lo)
        return moment_answer(units, edge, kinds)
