"""Questions answered from the structure of the memory rather than from one piece of text:

* **which stream** – options that name streams ("the lobby camera", "Camera 2") are matched
  to stream ids by their distinctive words ("lobby-cam" → lobby; "cam-2" → 2), and each
  stream is scored by its own best evidence for the question (searched per stream, so a
  stream that ranks second overall is not missed);
* **order, counts, "while the screen was dark"** – from when things happened
  (:mod:`reasoning.time_answers`, which this class extends);
* **what was pictured** – "which of these was shown in X?" looks at every key frame of the
  stream: an option said in a description wins, otherwise the classifier's unsure guesses
  choose (retrieval/guess_match.py), at a guess's confidence. "Which camera showed X?" falls
  back to the same guesses when no stream's evidence names X. With no options, only a guess
  that stands out in one stretch answers (retrieval/distinct_picture.py);
* **sounds and gist** – what could be heard besides speech, what a stream is about, who is
  mentioned in it.

Each returns a :class:`~reasoning.answer.Draft` (with its signals in ``caps``) or None when
the question does not have that shape or the memory cannot place it; the ordinary answer
path then answers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from episodic.core.query import QueryType, Scope
from episodic.reasoning.answer import NO_OPTION_SUPPORT, Draft, cited
from episodic.reasoning.evidence_fit import key_coverage
from episodic.reasoning.stream_gist import (
    SETTINGS,
    TOPIC_CONFIDENCE,
    people_answer,
    topic_answer,
    topic_words,
)
from episodic.reasoning.structured_base import (
    cosine_ramp,
    offered_streams,
)
from episodic.reasoning.time_answers import (
    ANCHOR_MIN,
    LISTEN_PER_THING,
    LISTEN_SENTENCES_READ,
    PLACED_WELL,
    SOUND_CHECKS_PER_THING,
    TimeAnswers,
    dark_spans,
    join_spans,
    not_naming,
    one_per_memory,
    sound_spans,
    tells,
)
from episodic.retrieval.detailed import (
    MemoryReader,
    Unit,
    nearest_memory_ids,
    units_of,
)
from episodic.retrieval.distinct_frames import DistinctFrames
from episodic.retrieval.distinct_picture import (
    ALTERNATIVES,
    SURE_GUESS,
    StandOut,
    guessed_answer,
    stand_outs,
    standout_answer,
)
from episodic.retrieval.guess_match import (
    GUESS_CAP,
    PICTURED,
    KeyFrameUnits,
    about_pictures,
    asks_what_was_shown,
    guess_support,
    subject_phrase,
)
from episodic.retrieval.mention_audio import talked_about, telling_phrase
from episodic.retrieval.people_words import names_a_person, shows_people
from episodic.retrieval.query_analysis import (
    SOUND_CUES,
    QueryAnalysis,
    asks_yes_or_no,
    content_terms,
    overlap,
    stem,
)
from episodic.retrieval.question_shape import DARK_WORDS
from episodic.retrieval.recurring_guesses import GUESS_MIN
from episodic.retrieval.word_candidates import WordCandidates

UNINFORMATIVE_SOUNDS = ("noise", "silence")  # kinds that say little about what was heard
_SOUND_NAMES = frozenset(stem(w) for w in SOUND_CUES) - {stem(w) for w in (
    "hear", "hears", "heard", "hearing", "sound", "sounds", "sounded", "noise", "noises", "noisy", "loud", "audible")}
UNINFORMATIVE_WEIGHT = 0.6  # an option matched only by such a kind scores this share
SHORT_SOUND_DISCOUNT = 0.5  # a sound heard for a moment scores up to this much less than the longest
SOUND_CONFIDENCE = 0.7  # a sound label from feature rules: right more often than not, not always
TOPIC_WORDS_FOR_CHOICE = 10  # "what is X mostly about: A, B or C?": options meet this many words
TOPIC_NEAREST = 3  # …and the stream's sentences: the mean cosine of this many nearest
# "what is X about?" names a setting only when the stream's characteristic words alone come
# this near it (MiniLM cosine), and alone when it fits this much better than the next (see
# _topic_scores; otherwise both, if the next comes as near); read off the dev QA sets' streams
SETTING_MIN_COS = 0.3
SETTING_MIN_MARGIN = 0.03
SEEN_MIN = 0.12  # a picture option guessed below this on every frame was not clearly seen
ELIMINATION_SUPPORT = 0.25  # the option left when the describer could have named the others
# "what picture was on screen while X was said?" with X's sentence not found (misheard): a
# picture that was on screen at some time, chosen without knowing when X was said (a guess)
UNANCHORED_SUPPORT = 0.2
SAID_WHILE_SEEN = 0.6  # what was said while a picture was seen: the words may be misheard
# … while any picture that stands out was on screen, the one asked about not found among them
ANY_STAND_OUT_SHARE = 0.5
SAID_THEN_SENTENCES = 3  # a moment with more sentences than this is not asked of the audio option by option
# key frames showing a picture about as surely as the best one (this share of its support) are
# the same picture: together they say how long it was on screen
SEEN_ALIKE = 0.6
STRETCH_GAP_S = 1.0  # key frames this close (or overlapping) show one stretch of a picture
# A stretch of key frames at least this unlike the rest of its stream is where a picture was
# shown (retrieval/distinct_frames.py); where a stream has such stretches, a guess on a key frame
# outside them (a wall, a texture) counts for OFF_PICTURE_WEIGHT of itself in questions about
# what a picture showed
PICTURE_DISTINCT = 0.3
OFF_PICTURE_WEIGHT = 0.5
GUESS_FALLBACK = 0.3  # which stream: below this support the key-frame guesses are asked
# …and a stream whose best evidence for a thing asked as shown, in so many words ("showed", "a
# picture of"), is no key frame (it was said there) supports it no more than this
SAID_NOT_SHOWN = 0.25
# "Which camera showed coins?", a thing the describer has no name for: the stream whose
# stand-out picture is most distinct and least surely named as anything (a guess); a stand-out
# showing no one counts this share of itself when the thing asked about is a person
NO_ONE_SHOWN_WEIGHT = 0.5
# "In which recording was X mentioned?" asked without options is answered as if every stream
# in scope were offered, when that choice reaches this raw confidence; below it the evidence
# extract answers (or refuses) as before. On the ten dev QA sets' multiple-choice
# which-stream questions a choice at 0.2 or more was right 84 times in 86, below it 2 in 12.
OPEN_STREAM_MIN = 0.2
# the memories of this many sentences per stream that best match the thing talked about are
# read in a which-stream question about talk (see StructuredAnswerer._talk_sentences)
TALK_CANDIDATES = 2
_ANCHORED = re.compile(r"\b(?:while|when|during|after|before)\b", re.I)
_DARK = re.compile(DARK_WORDS, re.I)


def asks_pictured(analysis: QueryAnalysis) -> bool:
    """"Which of these was shown in X?", "what did the photo in X show?": a question about what
    a stream showed as a whole, with no moment to anchor it ("while …", "after …"), no
    colour, number or name asked for, and no order, count, stream or sound shape."""
    shape = analysis.shape
    return (
        about_pictures(analysis)
        # "…a picture nobody talked about: what did it show?" names speech too, yet asks
        # about the picture: cross-modal only when a moment anchors it (_ANCHORED)
        and analysis.query_type in (QueryType.VIDEO, QueryType.VIDEO_AUDIO)
        and bool(PICTURED.search(analysis.question))
        and not _ANCHORED.search(analysis.question)
        and shape.focus == "any"
        and not (shape.order or shape.counts or shape.asks_stream or shape.sound or shape.gist)
        and not (shape.pictured_while or shape.said_while_pictured)  # a moment anchors it ("as X was said")
    )


def sound_words(text: str) -> set[str]:
    """Stems of the words that name a kind of sound ("applause, people clapping" → applaus,
    clap; "an engine running" → engin), without those every sound question has ("sound")."""
    return {stem(w) for w in re.findall(r"[a-z]+", text.lower())} & _SOUND_NAMES



def shown_stretches(units: Sequence[Unit], seen: np.ndarray, floor: float) -> list[tuple[str, float, float]]:
    """The stretches (stream, start, end) over which the key frames showing a picture at
    ``floor`` or more (``seen``: per unit) follow one another without a gap. One key frame's
    span can be a sliver: a picture on screen from 118.8 s to 125.9 s leaves a key frame at
    124.9–125.9 s that shows it as surely as the one at 118.8–124.9 s, and what was said while
    it was shown is in the first."""
    return join_spans(((u.stream_id, u.t_start, u.t_end) for u, s in zip(units, seen, strict=True) if s >= floor),
                      STRETCH_GAP_S)


def surest_guess(units: Sequence[Unit], stream_id: str, t_start: float, t_end: float) -> float:
    """The surest guess (of a whole key frame or of a part, background guesses already taken
    off) on the key frames of ``stream_id`` between ``t_start`` and ``t_end``; 0 when none."""
    return max((p for u in units if u.stream_id == stream_id and u.t_start < t_end and t_start < u.t_end
                for _, p in (*u.guesses, *u.part_guesses)), default=0.0)


def surely_something(units: Sequence[Unit], stream_id: str, t_start: float, t_end: float) -> bool:
    """Whether a key frame of ``stream_id`` between ``t_start`` and ``t_end`` carries a guess
    of ``SURE_GUESS`` or more."""
    return surest_guess(units, stream_id, t_start, t_end) >= SURE_GUESS


def sure_part_guesses(frames: Sequence[Unit], whole_best: float) -> list[tuple[str, float]]:
    """The guesses of the parts of ``frames`` (one shown picture's key frames, their stream's
    background guesses taken off), each at its best, best first, when the best is sure
    (``SURE_GUESS``) and surer than the whole frames' best (``whole_best``); else none. A
    picture shown in part of a busy frame is guessed as "a lamp" 0.26 whole and "a rocket"
    0.82 in the crop that holds it."""
    best: dict[str, float] = {}
    for u in frames:
        for name, p in u.part_guesses:
            best[name] = max(best.get(name, 0.0), float(p))
    ranked = sorted(best.items(), key=lambda g: -g[1])
    if not ranked or ranked[0][1] < SURE_GUESS or ranked[0][1] <= whole_best:
        return []
    return ranked

class StructuredAnswerer(TimeAnswers):
    """Every structured answer: which stream, what was pictured, order and counts
    (:class:`~reasoning.time_answers.TimeAnswers`), sounds, a stream's gist."""

    # -- which stream ------------------------------------------------------------------------
    def which_stream(self, analysis: QueryAnalysis, q_vec: np.ndarray, options: Sequence[str],
                     scope: Scope, reader: MemoryReader, recall: Sequence[Unit] = ()) -> Draft | None:
        """Each option's stream scored by its own best evidence: its own nearest memories and
        those holding the question's words (:meth:`_stream_candidates`), and the memories
        detailed recall found in it (``recall``; a sentence heard again with the question's
        words, which the store does not hold, among them)."""
        if not options:
            return None
        streams = reader.streams_in(scope)
        named = offered_streams(analysis, options, streams)
        if len({s for s in named if s is not None}) < 2:
            return None
        by_sound = self._stream_by_sound(analysis, options, named, scope)
        if by_sound is not None:
            return by_sound
        best_units: dict[str, list[Unit]] = {}
        talk = self._talk_sentences(analysis, options, scope, reader)
        for sid in {s for s in named if s is not None}:
            sub = Scope(stream_ids=(sid,), t_min=scope.t_min, t_max=scope.t_max)
            ids = self._stream_candidates(analysis, q_vec, sub)
            ids += [u.memory_id for u in recall if u.stream_id == sid]
            ids += [u.memory_id for u in talk if u.stream_id == sid][:TALK_CANDIDATES]
            units = reader.units(list(dict.fromkeys(ids)), self.scorer.reuse_visual_vectors, sub)
            best_units[sid] = self.scorer.rank(analysis, q_vec, units) if units else []
        scores, support, evidence = [], [], []
        for sid in named:
            ranked = best_units.get(sid or "", [])
            top = ranked[0] if ranked else None
            scores.append(top.score if top else 0.0)
            cover = overlap(analysis.terms, top.support_terms) if top is not None else 0.0
            support.append(min(1.0, cover, cosine_ramp(top.cos, self.settings.support_cos_min,
                                                 self.settings.support_cos_full) if top else 0.0)
                           if analysis.terms else (cosine_ramp(top.cos) if top else 0.0))
            evidence.append(ranked[:3])
        caps = {"route": 0.0, "streams_named": float(sum(s is not None for s in named))}
        pictures = about_pictures(analysis)
        if pictures and asks_what_was_shown(analysis):
            # "Which camera showed a cup of coffee?": a stream where coffee was only *said*
            # ("Ravi ordered 17 coffees") has not shown it; what the key frames guess comes first
            support = [min(v, SAID_NOT_SHOWN) if e and e[0].modality != "visual" else v
                       for v, e in zip(support, evidence, strict=True)]
        if max(support, default=0.0) < GUESS_FALLBACK and pictures:
            unnamed = self._stream_unnamed_picture(analysis, named, scope)
            guessed = unnamed or self._stream_guesses(analysis, named, scope)
            if guessed is not None:
                scores, support, evidence, best = guessed
                caps["unnamed_picture" if unnamed else "guess"] = round(best, 3)
        draft = self._choice(options, scores, support, evidence, caps)
        draft.caps["key_terms"] = key_coverage(analysis, [u for e in evidence for u in e])
        draft.confidence = min(draft.confidence, max(draft.caps["key_terms"], NO_OPTION_SUPPORT))
        return draft

    def _stream_candidates(self, analysis: QueryAnalysis, q_vec: np.ndarray, sub: Scope) -> list[str]:
        """The memories of one stream (``sub``) whose evidence may answer a which-stream
        question, best first: those its nearest vectors point to, as many distinct memories as
        recall reads (``recall_top_k``), its nearest summaries, and those holding most of the
        question's words (:class:`~retrieval.word_candidates.WordCandidates`). The nearest
        rows alone are not enough: a stream's key frames each keep a vector, and five of them
        ("a scene; colours: green") took the five nearest places of "Which camera recorded the
        talk about Mei's appointment with the concierge?", so "Don't forget, make us to see the
        concierge at I-50." was never read and its stream lost to one whose receptionist
        sentence was merely near in meaning."""
        k = self.settings.recall_top_k
        rows = nearest_memory_ids(self.store, q_vec, "vectors", max(k, self.settings.search_candidates), sub)
        ids = list(dict.fromkeys(m for m, _ in rows))[:k]
        ids += [m for m, _ in nearest_memory_ids(self.store, q_vec, "events", self.settings.fast_top_k, sub)]
        ids += self.words.find(analysis, sub)
        return list(dict.fromkeys(ids))

    def _talk_sentences(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                        reader: MemoryReader) -> list[Unit]:
        """For a which-stream question about talk ("… the talk about Mei's appointment with the
        concierge?"), every sentence of the offered streams, those that best match the thing
        talked about first (its words, exactly or tolerantly, or the question's cosine); empty
        for other questions and for streams too long to read whole."""
        talk = self._talk_matched(analysis, options, scope, reader)
        if talk is None or not talk[1]:
            return []
        _, said, match = talk
        return [said[j] for j in np.argsort(-match)]

    @cached_property
    def words(self) -> WordCandidates:
        """Memories found by their words (MemoryQA shares one with detailed recall)."""
        return WordCandidates(self.store)

    @staticmethod
    def streams_as_options(analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                           reader: MemoryReader) -> list[str]:
        """The streams in scope, as the options of a which-stream question asked without
        any ("In which recording was the time of the flower show mentioned?"); empty for
        other questions, and where fewer than two streams could be the answer."""
        if options or not analysis.shape.asks_stream:
            return []
        streams = list(reader.streams_in(scope))
        return streams if len(streams) >= 2 else []

    def which_stream_open(self, analysis: QueryAnalysis, q_vec: np.ndarray, streams: Sequence[str],
                          scope: Scope, reader: MemoryReader, recall: Sequence[Unit] = ()) -> Draft | None:
        """A which-stream question asked without options, answered like one offering every
        stream in ``streams`` (its sentences re-heard the same way, each stream judged by its
        own best evidence rather than by the best single unit of all), then said as the
        stream's name and where it was heard; None when that choice is not clear enough
        (``OPEN_STREAM_MIN``) and the chosen stream is not the only one with a sentence
        holding all of the question's words, so the evidence extract answers or refuses as
        before."""
        draft = self.which_stream(analysis, q_vec, streams, scope, reader, recall)
        if draft is None or draft.choice_index is None:
            return None
        stream = streams[draft.choice_index]
        if draft.confidence < OPEN_STREAM_MIN:
            # far from the question in cosine ("Everyone sends the flower shore of the map"),
            # yet the only stream with a sentence holding every word of the thing asked about
            if self._only_holder(analysis, streams, scope, reader) != stream:
                return None
            draft.confidence = OPEN_STREAM_MIN
        top = next((u for u in draft.support if u.stream_id == stream), None)
        answer = cited(stream, top) if top is not None else stream
        if "unnamed_picture" in draft.caps and top is not None:
            # what the key frame is described as is not what was asked about: say it is a guess
            answer = (f"probably {stream} (a picture unlike the rest of it, which nothing here "
                      f"could name, at {top.t_start:.1f}–{top.t_end:.1f} s)")
        # calibrated as the multiple-choice question it was answered as (source "choice")
        return Draft(answer=answer, confidence=draft.confidence, support=list(draft.support),
                     source="choice", caps={**draft.caps, "open_streams": float(len(streams))})

    def _only_holder(self, analysis: QueryAnalysis, streams: Sequence[str], scope: Scope,
                     reader: MemoryReader) -> str | None:
        """The one stream of ``streams`` where a sentence holds every one of the question's
        words; None when none or several do (or the streams are too long to read whole)."""
        said = self._said_in(streams, scope, reader) if analysis.terms else None
        holders = {u.stream_id for u in said or () if overlap(analysis.terms, u.terms) >= 1.0}
        return holders.pop() if len(holders) == 1 else None

    def listen_targets(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                       scope: Scope, reader: MemoryReader) -> list[Unit] | None:
        """The sentences worth hearing again before this question is answered (best first),
        ``[]`` when nothing is unsure, None to leave the choice to re-listening: order and
        count questions (:class:`TimeAnswers`), then "what picture was on screen while …?"
        (:meth:`_anchor_targets`), then which-stream questions (:meth:`_stream_targets`)."""
        chosen = super().listen_targets(analysis, options, recall, scope, reader)
        if chosen is not None:
            return chosen
        about = getattr(analysis.shape, "pictured_while", "")
        if about and options:
            return self._anchor_targets(about, options, scope, reader)
        return self._stream_targets(analysis, options, scope, reader)

    def _anchor_targets(self, about: str, options: Sequence[str], scope: Scope,
                        reader: MemoryReader) -> list[Unit] | None:
        """"What picture was on screen while someone talked about Chen and the eggs?": the
        sentence about X places the frames, and when none matches it well it was perhaps
        misheard where it was said ("Can ordered high necks for the team."), most likely in
        the sentences nearest to it by words and sound: up to ``LISTEN_PER_THING`` of those,
        heard again with the question's words, may place it (as for order and which-stream
        questions). The answer is one of the pictures offered, so the sentences said while
        one of them was clearly on screen come first ("Pre-op into the lid open." under the
        cat, for "the colour of Priya's ladle", sounds no nearer to it than the stream's other
        sentences). None for streams too long to read whole."""
        said = self._said_in(reader.streams_in(scope), scope, reader)
        if not said:
            return said
        # by all of X's words: "Chen and the eggs" is heard in "Can ordered high necks" (0.72)
        # through its everyday word too, which the telling words alone ("Chen") miss
        match = self._match(about, said)
        near = match + self._sounding_whole(about, said)
        nearest = self._misheard_first(said, match, near)
        if not nearest:
            return nearest
        under = self._said_under_options(options, said, scope)
        first = [said[j] for j in sorted(under, key=lambda j: -near[j])[:LISTEN_PER_THING]]
        return one_per_memory(first + nearest)

    def _said_under_options(self, options: Sequence[str], said: Sequence[Unit], scope: Scope) -> list[int]:
        """Indexes of the sentences of ``said`` spoken while a key frame clearly showing one of
        the ``options`` was on screen: the option named in its description, or guessed at
        ``SURE_GUESS`` or more."""
        frames = self._visual_units(sorted({u.stream_id for u in said}), scope)
        if not frames or not options:
            return []
        guessed = guess_support(options, frames, self.scorer)
        terms = [content_terms(o) for o in options]
        shown = [f for i in range(len(options)) for j, f in enumerate(frames)
                 if (terms[i] and overlap(terms[i], f.terms) >= 1.0) or float(guessed[i][j]) >= SURE_GUESS]
        return [k for k, u in enumerate(said)
                if any(f.stream_id == u.stream_id and f.t_start < u.t_end and u.t_start < f.t_end for f in shown)]

    def _said_in(self, streams: Sequence[str], scope: Scope, reader: MemoryReader) -> list[Unit] | None:
        """Every sentence said in ``streams`` within ``scope``; None past
        ``LISTEN_SENTENCES_READ`` (streams too long to read whole)."""
        said: list[Unit] = []
        for sid in streams:
            said += [u for u in self._stream_units(sid, scope.t_min, scope.t_max, reader)
                     if u.modality == "speech" and u.text.strip()]
            if len(said) > LISTEN_SENTENCES_READ:
                return None
        return said

    @staticmethod
    def _misheard_first(said: Sequence[Unit], match: np.ndarray, near: np.ndarray) -> list[Unit]:
        """Nothing when a sentence of ``said`` matches the thing well (``match``); else the
        ``LISTEN_PER_THING`` nearest to it (``near``: words and sound), one per memory."""
        if float(np.max(match)) >= PLACED_WELL:
            return []
        return one_per_memory([said[j] for j in np.argsort(-near)[:LISTEN_PER_THING]])

    def talk_checks(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                    reader: MemoryReader) -> list[tuple[str, list[Unit]]]:
        """For "which camera recorded the talk about the room for the poetry reading?" (options
        that are streams) and "what picture was on screen while someone talked about X?", when
        X is still placed nowhere after re-listening: the words that name X ("poetry reading")
        with the ``SOUND_CHECKS_PER_THING`` sentences nearest to it, to be asked of the audio
        whether one says it after all ("The only three reason is in room 104."). Nothing when a
        sentence matches X well or names it, or for questions about pictures, writing or sounds."""
        about = getattr(analysis.shape, "pictured_while", "")
        if about and options:
            streams = reader.streams_in(scope)
        else:
            about, streams = talked_about(analysis.question), self._talk_streams(analysis, options, scope, reader)
        phrase = telling_phrase(about)
        said = self._said_in(streams, scope, reader) if phrase and streams else None
        if not said:
            return []
        if float(np.max(self._match(about, said))) >= PLACED_WELL:
            return []
        lacking = not_naming(phrase, said)
        if len(lacking) < len(said):
            return []  # a sentence names it ("Hannah will clean the backpack …"): it is placed
        targets = [lacking[j] for j in self._sounding_nearest(about, lacking, SOUND_CHECKS_PER_THING)]
        return [(phrase, targets)] if targets else []

    def said_then(self, analysis: QueryAnalysis, scope: Scope, reader: MemoryReader) -> list[Unit]:
        """The sentences spoken at the moment a "what was said while …?" question names (a
        sound heard, the screen dark, a picture on screen: the moments :meth:`answer` tries in
        that order); [] for other questions."""
        sound = self._sound_moment(analysis, scope, reader)
        if sound is not None:
            return self._spoken_during(sound[0], reader)
        dark = self._dark_moment(analysis, scope, reader)
        if dark is not None:
            return self._spoken_during(dark[0], reader)
        pictured = self._pictured_moment(analysis, scope, reader)
        return self._spoken_in(pictured[0], reader) if pictured is not None else []

    def said_then_checks(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                         reader: MemoryReader) -> tuple[list[str], list[int], list[Unit]] | None:
        """For "what was talked about while the screen was dark (the engine ran, a picture of
        X was shown)?" with options, when what was heard then tells no option by more than a
        person's name ("Ruth will clean the stain after lunch." beside "who takes care of the
        spade" and "where Ruth left the watering can"): each option's telling phrase, the
        options said nowhere else (the candidates: one of them was said then, misheard) and
        the sentences of the moment (at most ``SAID_THEN_SENTENCES``), for the audio to choose
        between (``Relistener.hear_which``). None otherwise."""
        if not options:
            return None
        said = self.said_then(analysis, scope, reader)
        if not said or len(said) > SAID_THEN_SENTENCES:
            return None
        phrases = [telling_phrase(o) for o in options]
        if any(tells(o, phrase, u) for o, phrase in zip(options, phrases, strict=True) for u in said):
            return None
        left = [k for k in self._unplaced(options, "speech", scope, reader, (), here=said) if phrases[k]]
        return (phrases, left, said) if left else None

    def _stream_targets(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                        reader: MemoryReader) -> list[Unit] | None:
        """"Which camera recorded the talk about Chen's appointment with the baker?": when no
        option's stream holds a sentence that matches it well, it was perhaps misheard where it
        was said ("Chad is leaving the maker at 305"), most likely in the sentences nearest to
        it by words and sound across the options' streams: up to ``LISTEN_PER_THING`` of those,
        heard again with the question's words, may place it. None for questions about pictures,
        writing or sounds (their evidence is not speech) and for streams too long to read whole."""
        talk = self._talk_matched(analysis, options, scope, reader)
        if talk is None:
            return None
        thing, said, match = talk
        if not said:
            return said
        return self._misheard_first(said, match, match + self._sounding(thing, said))

    def _talk_matched(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope, reader: MemoryReader
                      ) -> tuple[str, list[Unit] | None, np.ndarray] | None:
        """For a which-stream question about talk: the thing talked about, every sentence of
        the offered streams (None past ``LISTEN_SENTENCES_READ``) and how well each matches it
        (the question's cosine and the thing's words, matched once); None for other questions."""
        named = self._talk_streams(analysis, options, scope, reader)
        thing = subject_phrase(analysis.question, named)
        if not named or not thing:
            return None
        said = self._said_in(named, scope, reader)
        match = self._match(analysis.question, said, content_terms(thing)) if said else np.zeros(0)
        return thing, said, match

    @staticmethod
    def _talk_streams(analysis: QueryAnalysis, options: Sequence[str], scope: Scope, reader: MemoryReader) -> list[str]:
        """The streams a which-stream question about talk offers (at least two); none for
        a question about pictures, writing or sounds, whose evidence is not speech."""
        q = analysis.question
        if not options or about_pictures(analysis) or analysis.asks_text or PICTURED.search(q) or sound_words(q):
            return []
        named = list(dict.fromkeys(s for s in offered_streams(analysis, options, reader.streams_in(scope)) if s is not None))
        return named if len(named) >= 2 else []

    def _stream_by_sound(self, analysis: QueryAnalysis, options: Sequence[str], named: Sequence[str | None],
                         scope: Scope) -> Draft | None:
        """"Which camera picked up applause?": the stream where the sound the question names
        was heard longest (a feature-rule label may fire once by mistake elsewhere); None
        when the question names no sound that any option's stream holds."""
        asked = sound_words(analysis.question)
        if not asked:
            return None
        seconds: list[float] = []
        evidence: list[list[Unit]] = []
        for sid in named:
            total, units = 0.0, []
            for m in self._memories([sid], scope) if sid else []:
                for o in m.sounds:
                    if o.kind != "speech" and o.description and sound_words(o.description) & asked:
                        total += max(o.t_end - o.t_start, 0.0)
                        units.append(Unit(m.stream_id, m.id, o.t_start, o.t_end, "sound", o.description))
            seconds.append(total)
            evidence.append(units[:3])
        if max(seconds, default=0.0) <= 0.0:
            return None
        share = [x / sum(seconds) for x in seconds]
        return self._choice(options, share, [SOUND_CONFIDENCE * x for x in share], evidence,
                            {"route": 0.0, "sound_seconds": round(max(seconds), 1)})

    # -- what was pictured ---------------------------------------------------------------------
    @cached_property
    def key_frames(self) -> KeyFrameUnits:
        """Key-frame scans kept per stream (MemoryQA shares one with Search)."""
        return KeyFrameUnits(self.store)

    @cached_property
    def distinct(self) -> DistinctFrames:
        """Stretches of key frames unlike the rest of their stream (MemoryQA shares one with
        Search)."""
        return DistinctFrames(self.store)

    def _visual_units(self, streams: Sequence[str], scope: Scope) -> list[Unit]:
        return self.key_frames.units(streams, scope)

    def _picture_units(self, stream_id: str, scope: Scope) -> list[Unit]:
        """One stream's key-frame and on-screen-text units (what stand-outs are read from)."""
        return self.key_frames.units([stream_id], scope, ("visual", "ocr"))

    def _picture_weights(self, units: Sequence[Unit]) -> np.ndarray:
        """Per key-frame unit, how much its guesses count in a question about a picture: 1 in a
        stretch unlike the rest of its stream (``PICTURE_DISTINCT``, where pictures are shown),
        ``OFF_PICTURE_WEIGHT`` elsewhere in a stream that has such stretches, 1 in one that has
        none (or whose memories keep no key-frame features). A silhouette guessed "a dog" 0.58
        on the picture's frame leans to "a horse" less than a texture's "a clock" 0.15 does by
        name alone; where the picture was shown says which one to believe."""
        streams = sorted({u.stream_id for u in units})
        # judged over whole streams: unlike the rest of the stream, not of the question's time range
        shown = [d for d in self.distinct.of(streams, Scope(), named=True) if d.distinctness >= PICTURE_DISTINCT]
        having = {d.stream_id for d in shown}
        return np.array([1.0 if u.stream_id not in having or any(
            d.stream_id == u.stream_id and u.t_start < d.t_end and d.t_start <= u.t_end for d in shown)
            else OFF_PICTURE_WEIGHT for u in units], dtype=np.float32)

    def _guessed(self, phrases: Sequence[str], units: Sequence[Unit]) -> np.ndarray:
        """(phrases, units) support of each phrase by each key frame's guesses
        (:func:`guess_support`, a guess of the only phrase's broad kind counting too), as much
        as where the frame is says it shows a picture (:meth:`_picture_weights`)."""
        streams = sorted({u.stream_id for u in units})
        kinds = self.vocabulary.kinds(phrases, streams, Scope()) if streams else None
        return guess_support(phrases, units, self.scorer, kinds) * self._picture_weights(units)[None, :]

    def _stream_unnamed_picture(self, analysis: QueryAnalysis, named: Sequence[str | None], scope: Scope
                                ) -> tuple[list[float], list[float], list[list[Unit]], float] | None:
        """Per option (a stream), how likely its stand-out picture is the one asked about when
        the describer has no name for that ("Which camera showed coins?"): its most distinct
        stretch (``PICTURE_DISTINCT`` or more, not surely named) times one less the surest
        guess on it, whole frame or part. A cup guessed "a cup" 0.9 and a rocket "a rocket"
        0.9 in its crop are not coins; coins guessed "a remote control" 0.18 are the likeliest
        (on thirteen dev sets with one such picture, the stream showing it came first in 12;
        the guesses of "coins" itself, "a wallet" 0.02, had chosen at chance). A thing that
        names a person prefers a stand-out where the detectors found someone. None unless the
        describer has no name for it, or when no stream has such a stretch. The support is a
        guess's (``UNANCHORED_SUPPORT``): several unnamed pictures look alike to this."""
        streams = [s for s in named if s]
        phrase = subject_phrase(analysis.question, streams)
        if not phrase or self.vocabulary.unnameable([phrase], streams, scope) != [True]:
            return None
        person = names_a_person(phrase)
        scores: list[float] = []
        evidence: list[list[Unit]] = []
        for sid in named:
            best, shown = 0.0, []
            units = self._visual_units([sid], scope) if sid else []
            for d in self.distinct.of([sid], scope, named=True) if sid else ():
                if d.named or d.distinctness < PICTURE_DISTINCT:
                    continue
                inside = [u for u in units if u.t_start < d.t_end and d.t_start < u.t_end]
                surest = max(surest_guess(inside, sid, d.t_start, d.t_end), d.guesses[0][1] if d.guesses else 0.0)
                likely = d.distinctness * (1.0 - min(1.0, surest))
                if person and not shows_people(inside):
                    likely *= NO_ONE_SHOWN_WEIGHT
                if likely > best:
                    best, shown = likely, inside[:1]
            scores.append(best)
            evidence.append(shown)
        if max(scores, default=0.0) <= 0.0:
            return None
        return scores, [UNANCHORED_SUPPORT] * len(scores), evidence, max(scores)

    def _stream_guesses(self, analysis: QueryAnalysis, named: Sequence[str | None], scope: Scope
                        ) -> tuple[list[float], list[float], list[list[Unit]], float] | None:
        """Per option (a stream), how strongly that stream's key-frame guesses resemble what the
        question asks about; None when no stream's guesses do."""
        phrase = subject_phrase(analysis.question, [s for s in named if s])
        if not phrase:
            return None
        scores, support, evidence = [], [], []
        for sid in named:
            units = self._visual_units([sid], scope) if sid else []
            g = self._guessed([phrase], units)[0] if units else np.zeros(0)
            j = int(np.argmax(g)) if g.size else -1
            best = float(g[j]) if j >= 0 else 0.0
            scores.append(best)
            support.append(min(best, GUESS_CAP))
            evidence.append([units[j]] if best > 0 else [])
        if max(scores) <= 0.0:
            return None
        return scores, support, evidence, max(scores)

    def pictured(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                 reader: MemoryReader) -> Draft | None:
        """"Which of these was shown (in a picture) in X?": every key frame of the named stream
        (else of the scope) against the options: an option's words in a frame description
        (a label the describer was sure of) count fully, the classifier's guesses as guesses."""
        # an open "what did the picture show?" is not answered from guesses: textures are
        # guessed as confidently as pictures ("a shower curtain" at 0.7)
        if not options or not asks_pictured(analysis):
            return None
        streams = reader.streams_in(scope)
        if offered_streams(analysis, options, streams).count(None) < len(options):
            return None  # the options are streams: which_stream's
        looked = self.looked_at(analysis.question, streams)
        return self._picture_choice(options, self._visual_units(looked, scope), looked, scope, {"route": 7.0})

    def pictured_while(self, analysis: QueryAnalysis, options: Sequence[str], recall: Sequence[Unit],
                       scope: Scope, reader: MemoryReader) -> Draft | None:
        """"What picture was on screen while someone talked about X?": the key frames on screen
        while X's sentence was said (the sentence found as an order anchor is), chosen
        between as "which of these was shown" chooses."""
        about = getattr(analysis.shape, "pictured_while", "")
        if not options or not about:
            return None
        if offered_streams(analysis, options, reader.streams_in(scope)).count(None) < len(options):
            return None
        cands = [u for u in self._candidates(about, scope, reader, recall) if u.modality == "speech"]
        m = self._match(about, cands, raised=True)
        if not len(m) or float(m.max()) < ANCHOR_MIN:
            return self._shown_at_some_time(options, scope, reader)
        said = cands[int(np.argmax(m))]
        near = Scope(stream_ids=(said.stream_id,), t_min=said.t_start, t_max=said.t_end)
        units = [u for u in self._visual_units([said.stream_id], near)
                 if u.t_end > said.t_start and u.t_start < said.t_end]
        caps = {"route": 10.0, "anchor": round(float(m.max()), 3)}
        draft = self._picture_choice(options, units, [said.stream_id], near, caps)
        if draft is None:  # nothing offered was on screen then: perhaps the wrong sentence
            return self._shown_at_some_time(options, scope, reader)
        draft.support = [*draft.support, said]
        return draft

    def _picture_choice(self, options: Sequence[str], units: Sequence[Unit], streams: Sequence[str],
                        scope: Scope, caps: dict[str, float]) -> Draft | None:
        """Options against key frames: an option's words in a frame description (a label the
        describer was sure of) count fully, the classifier's guesses as guesses; with nothing
        clearly seen, an option the describer has no name for (:meth:`_unnameable_left`)."""
        if not units:
            return None
        guessed, seen = self._seen_on(options, units)
        scores, support, evidence, said = [], [], [], []
        for i in range(len(options)):
            lex, both = seen[i]
            j = int(np.argmax(both))
            scores.append(float(both[j]))
            support.append(float(lex[j]) if lex[j] >= guessed[i][j] else min(float(guessed[i][j]), GUESS_CAP))
            said.append(float(lex[j]))
            evidence.append([units[j]] if both[j] > 0 else [])
        if max(scores) < SEEN_MIN:
            # nothing was clearly seen: an option the describer could not have named (coins,
            # to an ImageNet classifier) is what its unsure guesses were about, not one it
            # could have named and did not (a clock guessed 0.05 on a texture)
            left = self._unnameable_left(options, streams, scope, units)
            if len(left) == 1:
                return self._eliminated(options, left[0], ELIMINATION_SUPPORT, [],
                                        {**caps, "frames": float(len(units))})
            if left:
                return self._among_unnameable(options, left, scores, evidence,
                                              {**caps, "frames": float(len(units))})
        if max(scores) <= 0.0:
            return None
        best = int(np.argmax(scores))
        caps = {**caps, "frames": float(len(units)), "lexical": said[best]}
        if said[best] < 1.0:
            caps["guess"] = round(float(guessed[best].max()), 3)
        return self._choice(options, scores, support, evidence, caps)

    def _seen_on(self, options: Sequence[str], units: Sequence[Unit]
                 ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """The classifier's guesses' support of each option on each unit, and per option its
        (words in the descriptions, the better of words and guesses) on each unit; the words
        all options share ("a", "picture") count for none."""
        guessed = self._guessed(options, units)
        option_terms = [content_terms(o) for o in options]
        shared = set.intersection(*(set(t) for t in option_terms)) if option_terms else set()
        seen = []
        for i in range(len(options)):
            distinct = [t for t in option_terms[i] if t not in shared]
            lex = np.array([overlap(distinct, u.terms) if distinct else 0.0 for u in units])
            seen.append((lex, np.maximum(lex, guessed[i])))
        return guessed, seen

    def _shown_at_some_time(self, options: Sequence[str], scope: Scope, reader: MemoryReader) -> Draft | None:
        """"What picture was on screen while X was said?" when no sentence places X (misheard,
        or never said), or none of the options was on screen while the sentence taken for X
        was said (perhaps another sentence): the answer is still a picture that was on screen
        at *some* time. An option the describer could have named and that no key frame in
        scope shows, even as a guess, was never on screen; of the others, one seen somewhere
        comes before one the describer has no name for (which may or may not have been shown).
        A guess either way, at ``UNANCHORED_SUPPORT``; None with an open vocabulary or when
        every option is ruled out. (Twelve dev sets, 26 such questions: where a picture was
        chosen at X's sentence 18 of 18 were right; the other 8 went to the general answer
        path, 1 right, and get 5 right this way.)"""
        streams = reader.streams_in(scope)
        units = self._visual_units(streams, scope)
        unnamed = self.vocabulary.unnameable(options, streams, scope)
        if not units or unnamed is None:
            return None
        _, seen = self._seen_on(options, units)
        best = [float(both.max()) for _, both in seen]
        shown = [k for k in range(len(options)) if best[k] >= SEEN_MIN and not unnamed[k]]
        maybe = [k for k in range(len(options)) if unnamed[k]]
        pool = shown or maybe
        if not pool:
            return None
        left = max(pool, key=lambda k: best[k])
        j = int(np.argmax(seen[left][1]))
        evidence = [units[j]] if best[left] > 0 else []
        caps = {"route": 10.0, "anchor": 0.0, "shown": float(len(shown)), "unnamed": float(len(maybe))}
        return self._eliminated(options, left, UNANCHORED_SUPPORT, evidence, caps)

    def _unnameable_left(self, options: Sequence[str], streams: Sequence[str], scope: Scope,
                         units: Sequence[Unit] = ()) -> list[int]:
        """The options the describer that made these streams' memories has no name for (none
        with an open vocabulary). Of several (an astronaut, coins), the people detectors keep
        those naming someone when ``units`` (the key frames in question; of them, those where
        a picture unlike the rest of its stream was shown) show a person or a face, the others
        when they show no one (all of them when that would keep none)."""
        unnamed = self.vocabulary.unnameable(options, streams, scope)
        left = [k for k, u in enumerate(unnamed or []) if u]
        if len(left) > 1 and units:
            shown = self.distinct.of(sorted({u.stream_id for u in units}), scope)
            pictures = [u for u in units if any(d.stream_id == u.stream_id and d.t_start <= u.t_end
                                                and u.t_start <= d.t_end for d in shown)]
            someone = shows_people(pictures or units)
            left = [k for k in left if names_a_person(options[k]) == someone] or left
        return left

    def _among_unnameable(self, options: Sequence[str], left: Sequence[int], scores: Sequence[float],
                          evidence: Sequence[Sequence[Unit]], caps: dict[str, float]) -> Draft:
        """Several options the describer has no name for (the moon, an eye) and nothing clearly
        seen: the others, which it could have named, were not shown, so the answer is one of
        these, the likeliest by the unsure guesses (the first when none leans), at a guess's
        support shared between them."""
        best = max(left, key=lambda k: scores[k])
        kept = [scores[k] if k in left else 0.0 for k in range(len(options))]
        kept[best] = max(kept[best], 1e-3)
        support = [ELIMINATION_SUPPORT / len(left) if k in left else 0.0 for k in range(len(options))]
        return self._choice(options, kept, support, evidence, {**caps, "eliminated": float(len(options) - len(left))})

    def said_while_pictured(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                            reader: MemoryReader) -> Draft | None:
        """"What was mentioned while a picture of X was on screen?": what was said while the
        key frames showing X were. X is found as "which of these was shown" finds it (a
        description naming it, else the guesses); a thing the describer has no name for
        (coins) among the pictures that stand out in one stretch with no sure guess
        (retrieval/distinct_picture.py): then the answer is a guess."""
        moment = self._pictured_moment(analysis, scope, reader)
        if moment is None:
            return None
        stretches, trust, seen = moment
        spoken = self._spoken_in(stretches, reader)
        if not spoken:
            return None
        caps = {"route": 11.0, "stretches": float(len(stretches)), "seen": round(seen, 3)}
        if options:
            # what was said then matching no option (misheard?): the options found nowhere
            # else, or the ordinary path
            draft = self._choice_said_then(options, spoken, trust, caps, scope, reader, ELIMINATION_SUPPORT)
            if draft is None and seen < SEEN_MIN:
                draft = self._said_during_any_stand_out(analysis, options, stretches, scope, reader, caps)
            return draft
        top = spoken[0]
        return Draft(answer=f'"{top.text.strip()}" (said while the picture was on screen, {top.cite()})',
                     confidence=round(trust, 4), support=spoken, source="order", caps={**caps, "span": 1.0})

    def _said_during_any_stand_out(self, analysis: QueryAnalysis, options: Sequence[str],
                                   tried: Sequence[tuple[str, float, float]], scope: Scope,
                                   reader: MemoryReader, caps: dict[str, float]) -> Draft | None:
        """"What was mentioned while a picture of X was on screen?" when X was not found among
        the stand-out pictures no sure guess named (``tried``: what was said then told no
        option): every stand-out picture of the streams looked at, those the describer named
        surely included, at half a guess's confidence. An everyday picture is often named
        surely and wrongly ("a ball" for a colour wheel), so it is not among those no sure guess
        named; what was said while *some* picture was on screen still rules out what was said
        while none was. None when that adds no stretch or tells no option either."""
        streams = reader.streams_in(scope)
        looked = self.looked_at(analysis.question, streams)
        wider = [(d.stream_id, d.t_start, d.t_end) for d in self.distinct.of(looked, scope, named=True)]
        if not wider or set(wider) <= set(tried):
            return None
        spoken = self._spoken_in(wider, reader)
        if not spoken:
            return None
        guess = ELIMINATION_SUPPORT * ANY_STAND_OUT_SHARE
        return self._choice_said_then(options, spoken, guess, {**caps, "stand_outs": float(len(wider))},
                                      scope, reader, guess)

    def _pictured_moment(self, analysis: QueryAnalysis, scope: Scope, reader: MemoryReader
                         ) -> tuple[list[tuple[str, float, float]], float, float] | None:
        """Where the picture a "while a picture of X was on screen" question names was shown:
        the stretches (stream, start, end), how far they are trusted, and how surely X was
        seen there (0 when found as a picture nothing can name); None for other questions, or
        when X could have been named and was not seen."""
        thing = getattr(analysis.shape, "said_while_pictured", "")
        if not thing:
            return None
        streams = reader.streams_in(scope)
        looked = self.looked_at(analysis.question, streams)
        units = self._visual_units(looked, scope)
        if not units:
            return None
        terms = content_terms(thing)
        guessed = self._guessed([thing], units)[0]
        seen = np.array([max(overlap(terms, u.terms) if terms else 0.0, float(g)) for u, g in zip(units, guessed, strict=True)])
        best = int(np.argmax(seen))
        if seen[best] >= SEEN_MIN:
            stretches = shown_stretches(units, seen, max(SEEN_MIN, SEEN_ALIKE * float(seen[best])))
            trust = SAID_WHILE_SEEN * min(1.0, float(seen[best]))
        else:
            if self.vocabulary.unnameable([thing], looked, scope) != [True]:
                return None  # it could have been named, and was not seen
            # where a picture unlike the rest of its stream was shown (not one surely named);
            # for memories kept without key-frame features, where a guess stands out
            stretches = [(d.stream_id, d.t_start, d.t_end) for d in self.distinct.of(looked, scope)]
            # a stand-out the describer surely guessed as something (a rocket) is not a picture
            # of a thing it has no name for (coins)
            stretches = [s for s in stretches if not surely_something(units, *s)] or stretches
            if not stretches:
                for sid in looked:
                    frames = self._picture_units(sid, scope)
                    stretches += [(sid, o.t_start, o.t_end) for o in stand_outs(frames) if o.p < SURE_GUESS]
            trust = ELIMINATION_SUPPORT
        return stretches, trust, float(seen[best])

    def _spoken_in(self, stretches: Sequence[tuple[str, float, float]], reader: MemoryReader) -> list[Unit]:
        """The sentences overlapping the picture's stretches (read a second around each), each once."""
        spoken: list[Unit] = []
        for sid, a, b in dict.fromkeys(stretches):
            spoken += [u for u in self._stream_units(sid, a - 1.0, b + 1.0, reader)
                       if u.modality == "speech" and min(u.t_end, b) - max(u.t_start, a) > 0]
        return list({(u.stream_id, round(u.t_start, 2), u.text): u for u in spoken}.values())

    def pictured_open(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                      reader: MemoryReader) -> Draft | None:
        """"A picture was shown that nobody talked about: what did it show?" (no options): the
        best guess on the stretch of key frames most unlike the rest of the named stream (else
        of any stream in scope; retrieval/distinct_frames.py), hedged and at a guess's
        confidence; for memories kept without key-frame features, the guess that stands out
        in one stretch (retrieval/distinct_picture.py)."""
        # "Was there a picture of a guitar?" names its subject: a guess at what some other
        # picture showed is no answer to it
        if options or not asks_pictured(analysis) or asks_yes_or_no(analysis.question):
            return None
        streams = reader.streams_in(scope)
        looked = self.looked_at(analysis.question, streams)
        shown = [d for d in self.distinct.of(looked, scope, named=True) if d.guesses and d.guesses[0][1] >= GUESS_MIN]
        if shown:
            # the stretch most unlike the rest of its stream is where the picture was shown,
            # and what the classifier guessed there, however unsure, is what it probably showed
            d = shown[0]
            frames = [u for u in self._picture_units(d.stream_id, scope)
                      if u.modality == "visual" and u.t_start < d.t_end and d.t_start <= u.t_end]
            guesses = sure_part_guesses(frames, d.guesses[0][1]) or list(d.guesses)
            label, p = guesses[0]
            answer = guessed_answer(label, [n for n, _ in guesses[1:1 + ALTERNATIVES]],
                                    "a guess at the picture most unlike the rest of the stream",
                                    d.stream_id, d.t_start, d.t_end)
            return Draft(answer=answer, confidence=round(min(p, GUESS_CAP), 4), support=frames, source="extract",
                         caps={"route": 9.0, "guess": round(p, 3), "distinct": d.distinctness, "span": 1.0})
        best: tuple[str, float, StandOut] | None = None
        for sid in looked:
            found = standout_answer(self._picture_units(sid, scope))
            if found is not None and (best is None or found[1] > best[1]):
                best = found
        if best is None:
            return None
        answer, confidence, standout = best
        return Draft(answer=answer, confidence=round(confidence, 4), support=list(standout.units), source="extract",
                     caps={"route": 9.0, "guess": round(standout.p, 3), "span": 1.0})
    # -- a stream's sounds, topic and people ------------------------------------------------
    def sounds(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
               reader: MemoryReader) -> Draft | None:
        """"Besides speech, what could be heard (while the picture was dark)?": answered from
        the non-speech sounds of the named stream (else every stream in scope), those during
        dark frames when the question says so; the kinds that name something (music, an
        engine, applause) before plain noise, longer before shorter."""
        if not getattr(analysis.shape, "sound", False):
            return None
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        memories = self._memories([named] if named else streams, scope)
        heard: dict[str, list] = {}  # description → [seconds, kind, first unit]
        dark = dark_spans(memories)
        want_dark = bool(_DARK.search(analysis.question)) and bool(dark)
        for m in memories:
            for o in m.sounds:
                if o.kind == "speech" or not o.description:
                    continue
                if want_dark and not any(sid == m.stream_id and o.t_end >= a - 1.0 and o.t_start <= b + 1.0
                                         for sid, a, b in dark):
                    continue
                entry = heard.setdefault(o.description, [0.0, o.kind, None])
                entry[0] += max(o.t_end - o.t_start, 0.0)
                if entry[2] is None:
                    entry[2] = Unit(m.stream_id, m.id, o.t_start, o.t_end, "sound", o.description)
        if not heard:
            return None
        # "where could you hear applause?": the sound it names, not the loudest other one
        asked = sound_words(analysis.question)
        named_sounds = {d: e for d, e in heard.items() if sound_words(d) & asked}
        if named_sounds and not options:
            heard = named_sounds
        ranked = sorted(heard.values(), key=lambda e: (e[1] in UNINFORMATIVE_SOUNDS, -e[0]))
        units = [e[2] for e in ranked]
        caps = {"route": 4.0, "sounds": float(len(units)), "dark": float(want_dark)}
        if options:
            # a sound heard a second weighs less than one heard for many: a window of an engine
            # or of speech can pass for applause, ten seconds of it rarely do
            # (measured against the longest that names something: background noise lasts all along)
            named = [e[0] for e in ranked if e[1] not in UNINFORMATIVE_SOUNDS]
            longest = max(named or [e[0] for e in ranked]) or 1.0
            weights = np.array([(UNINFORMATIVE_WEIGHT if e[1] in UNINFORMATIVE_SOUNDS else 1.0)
                                * (1.0 - SHORT_SOUND_DISCOUNT * (1.0 - min(1.0, e[0] / longest))) for e in ranked])
            return self._choice_by_match(options, units, SOUND_CONFIDENCE, caps, weights)
        top = units[0]
        if named_sounds and (analysis.shape.asks_stream or analysis.shape.focus == "place"):
            # the sound is given, where it was heard is asked: the stream first
            streams = list(dict.fromkeys(u.stream_id for u in units))
            return Draft(answer=f"{', '.join(streams)} (heard: {top.text}, {top.cite()})",
                         confidence=SOUND_CONFIDENCE, support=units, source="sound",
                         caps={**caps, "span": 1.0, "where": 1.0})
        return Draft(answer=f"{top.text} (heard, {top.cite()})", confidence=SOUND_CONFIDENCE,
                     support=units, source="sound", caps={**caps, "span": 1.0})
    def said_while_sound(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
                         reader: MemoryReader) -> Draft | None:
        """"What was said while the engine was running?": the sentences spoken during the
        stretches of the sound the moment clause names (in the named stream, else in every
        stream in scope); with none, that no words were heard then. None when that sound was
        never heard (the ordinary search answers or refuses)."""
        moment = self._sound_moment(analysis, scope, reader)
        if moment is None:
            return None
        spans, what, memories = moment
        return self._said_during(spans, f'"{what}" could be heard', what, "sound", memories, options, scope, reader)

    def _sound_moment(self, analysis: QueryAnalysis, scope: Scope, reader: MemoryReader
                      ) -> tuple[list[tuple[str, float, float]], str, list] | None:
        """The stretches (stream, start, end) of the sound a "while the engine was running"
        question names, its description and the streams' memories; None for other questions
        or when that sound was never heard."""
        asked = sound_words(getattr(analysis.shape, "said_while_sound", ""))
        if not asked:
            return None
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        memories = self._memories([named] if named else streams, scope)
        spans = sound_spans(memories, lambda o: o.kind != "speech" and bool(o.description)
                            and bool(sound_words(o.description) & asked))
        if not spans:
            return None
        what = next(o.description for m in memories for o in m.sounds
                    if o.kind != "speech" and o.description and sound_words(o.description) & asked)
        return spans, what, memories

    def gist(self, analysis: QueryAnalysis, options: Sequence[str], scope: Scope,
             reader: MemoryReader) -> Draft | None:
        """"What is X mostly about?": the words most characteristic of the stream's speech and
        on-screen text (frequent there, rare in the other streams and in English);
        "name one person mentioned in X": the name said most often. Never the composed
        summary's own wording ("Seen", "Someone says")."""
        kind = getattr(analysis.shape, "gist", "")
        if not kind or (options and kind != "topic"):
            return None
        streams = reader.streams_in(scope)
        named = self.named_stream(analysis.question, streams)
        if named is None:
            return None
        texts: dict[str, list[Unit]] = {}
        for m in self._memories(streams, scope):
            for u in units_of(m, None, self.scorer.reuse_visual_vectors):
                if u.modality in ("speech", "ocr"):
                    texts.setdefault(m.stream_id, []).append(u)
        own = texts.get(named, [])
        if not own:
            return None
        if kind == "people":
            return people_answer(named, own, analysis.question)
        if options:
            return self._topic_choice(named, own, texts, options)
        return topic_answer(named, own, texts, lambda words: self._setting(named, own, texts, words))

    def _topic_choice(self, stream_id: str, own: Sequence[Unit], texts: dict[str, list[Unit]],
                      options: Sequence[str]) -> Draft | None:
        """"What is X mostly about: A, B or C?": the option nearest (MiniLM cosine) to the
        stream's most characteristic words."""
        words, support = topic_words(stream_id, own, texts, TOPIC_WORDS_FOR_CHOICE)
        if not words:
            return None
        scores = [float(c) for c in self._topic_scores(stream_id, own, texts, words, options)[0]]
        support_of = [TOPIC_CONFIDENCE * cosine_ramp(c) for c in scores]
        draft = self._choice(options, scores, support_of, [support or list(own[:1])] * len(options),
                             {"route": 6.0, "topic_words": float(len(words))})
        draft.source = "gist"
        return draft

    def _topic_scores(self, stream_id: str, own: Sequence[Unit], texts: dict[str, list[Unit]],
                      words: Sequence[str], candidates: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """How well each candidate topic fits the stream: its cosine to the stream's most
        characteristic ``words``, plus how much nearer it is to the stream's sentences than to
        any other stream's (the few words can be misheard ones: "cooking in a kitchen" is near
        "Ruth chopped the onions", not near the garden's sentences); and the cosine alone."""
        vecs = self.scorer.embed([", ".join(words)] + list(candidates))
        cos = vecs[1:] @ vecs[0]
        near = self._affinity(vecs[1:], own)
        others = [self._affinity(vecs[1:], units) for sid, units in texts.items() if sid != stream_id and units]
        return cos + near - (np.max(others, axis=0) if others else 0.0), cos

    def _setting(self, stream_id: str, own: Sequence[Unit], texts: dict[str, list[Unit]],
                 words: Sequence[str]) -> list[str]:
        """The place or activity (:data:`SETTINGS`) the stream's words point to: the one that
        fits clearly better than the rest; the two best when they fit about equally and both
        come near enough ("a kitchen or a restaurant": misheard words often leave the two
        closest settings a hair apart, and naming one would be a coin toss); none otherwise."""
        scores, cos = self._topic_scores(stream_id, own, texts, words, SETTINGS)
        first, second = (int(i) for i in np.argsort(-scores)[:2])
        if float(cos[first]) < SETTING_MIN_COS:
            return []
        if float(scores[first] - scores[second]) >= SETTING_MIN_MARGIN:
            return [SETTINGS[first]]
        return [SETTINGS[first], SETTINGS[second]] if float(cos[second]) >= SETTING_MIN_COS else []

    def _affinity(self, option_vecs: np.ndarray, units: Sequence[Unit]) -> np.ndarray:
        """Per option, the mean cosine of its TOPIC_NEAREST nearest sentences among ``units``."""
        sims = option_vecs @ self.scorer.embed([u.text for u in units]).T
        k = min(TOPIC_NEAREST, sims.shape[1])
        return np.sort(sims, axis=1)[:, -k:].mean(axis=1)

    def answer(self, analysis: QueryAnalysis, q_vec: np.ndarray, options: Sequence[str],
               recall: Sequence[Unit], scope: Scope, reader: MemoryReader) -> Draft | None:
        """The structured answer for this question's shape, or None."""
        for attempt in (
            lambda: self.which_stream(analysis, q_vec, options, scope, reader, recall),
            lambda: self.which_first(analysis, options, recall, scope, reader),
            lambda: self.next_to(analysis, options, recall, scope, reader),
            lambda: self.count(analysis, options, recall, scope, reader),
            lambda: self.said_while_sound(analysis, options, scope, reader),
            lambda: self.sounds(analysis, options, scope, reader),
            lambda: self.said_while_dark(analysis, options, scope, reader),
            lambda: self.pictured(analysis, options, scope, reader),
            lambda: self.pictured_while(analysis, options, recall, scope, reader),
            lambda: self.said_while_pictured(analysis, options, scope, reader),
            lambda: self.pictured_open(analysis, options, scope, reader),
            lambda: self.gist(analysis, options, scope, reader),
        ):
            draft = attempt()
            if draft is not None:
                return draft
        return None
