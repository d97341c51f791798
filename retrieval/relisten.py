"""Listening again at question time (HippoMM C.2, fine-grained analysis of the recalled segments).

At ingest every segment is transcribed once, quickly, by the default recogniser, and whatever
it misheard ("The island-arm tested scheduled for our path to" for "the fire alarm test is
scheduled for half past two") is all the memory holds. HippoMM goes back to the raw segments
when a question needs detail; here that means: when detailed recall lands on memories for a
question about speech, their stored audio (the snippet files, C_i) is decoded for just the
time range needed and transcribed again by the strongest configured recogniser
(:func:`memory.speech.relistening_recognizer`), with beam search, told what to expect: the
question and its options as text said just before (``relisten_bias``; or their content words
as hot words).

Whether the new transcript is *better* is decided honestly, by the audio and not by the
question: the scoring model (the re-listening recogniser) force-aligns the old text and the
new text to the same audio without any prompt, and the one with the higher mean token
log-probability wins, the new one only by ``relisten_min_gain``. A hot word that was not
said does not help a transcript there, because the audio has to carry it. One exception, as
the unprompted scorer prefers what it would write itself: a new transcript that adds words of
the question scores within ``relisten_hint_tolerance`` of the old one is taken ("to Oxford"
for "talks for": −0.98 against −0.79; an unspoken word costs far more).

A new transcript that adds none of the question's words (nor hears speech where there was
none) is never taken, however it scores: the scorer hears the clip alone and favours its own
hearing over ingest's, made after the speech before it, so such a win is no evidence of
hearing better (on the four dev QA sets, scored against the script with
``benchmarks/relisten_versions.py``, those that won on the scorer were worse than the stored
words 36 times and better 10; those that also added the question's words were better 17 times
and worse 5).

What is kept: the winning pieces replace the old ones in this request's evidence units (the
answerer reads the new words). Only one taken that also wins on the audio alone (by
``relisten_min_gain``, not merely within the tolerance) replaces the stored memory's
(transcript, its "speech" E_i vectors, v_i, and a composed ThetaEvent summary): stored transcripts thus only gain score, and what the memory
holds does not depend on which questions were asked first (a hinted one, taken within the
tolerance, once let the last question's words overwrite the previous question's; re-hearings
prompted by unrelated questions had replaced half-right sentences with garbles).
Every attempt is recorded in ``memory.metadata["transcripts"]`` as a version with the model,
hot words, text and score that made it; a hinted version is used again for the same words. A memory is not listened to
again when a version already exists from the same model whose hot words include the current
ones.

Heard together: the recalled memories (at most ``relisten_max_memories``, each at most
``relisten_max_audio_s`` seconds, all within one 28 s window) are laid end to end with a short
silence between them and transcribed in one pass, each word going back to the memory it was
heard in (``retrieval/joint_hearing.py``). Whisper encodes a whole 30 s window however short the
audio, so five memories cost little more than one, and the sentence that answers a question is
often not the first recalled when its words were misheard ("So more than 15 lots of the theme"
for "How many ropes did Tom order?" ranked sixth). Only a hearing that adds the question's
words (or speech where there was none, or a number where there was none when a number or a
time is asked for, or a known given name where no one was named when a person is asked for)
can be taken, so only those are scored against the audio, within
``relisten_budget_s`` seconds after the pass. The first word or two of the next
sentence, where a memory's audio ends ("… with the conductor. At"), and a number written
"6 .25", are tidied before the comparison (ingest gave those words to the next memory).

Bounded: the joint pass starts only when its measured cost fits the request's deadline minus
``relisten_reserve_s`` (kept for answering); what does not fit is skipped, and the request
answers from what it has. Re-listening never fails a request: a missing snippet or a model
error leaves the old transcript in place.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from episodic.config import Settings
from episodic.core.errors import EpisodicError
from episodic.core.interfaces import CrossModalEmbedder, QueryBackends
from episodic.core.query import Scope
from episodic.core.records import (
    EmbeddingEntry,
    ShortTermMemory,
    TranscriptPiece,
    event_id,
)
from episodic.memory.consolidation import representative_vector
from episodic.memory.speech_context import looped_words
from episodic.memory.summary_composer import compose_summary
from episodic.retrieval.detailed import (
    MemoryReader,
    Recall,
    Unit,
    apply_position,
    relevant,
    units_of,
)
from episodic.retrieval.joint_hearing import (
    GAP_S,
    WINDOW_S,
    Clip,
    join_clips,
    split_pieces,
)
from episodic.retrieval.listen_targets import (
    _inside,
    _same_words,
    _span,
    _words_added,
    about_speech,
    about_the_question,
    hot_words,
    name_gained,
    names_lost,
    said_of_someone,
    said_value_focus,
    value_gained,
    value_lost,
    without_closing_phrase,
    without_cut_off_sentence,
)
from episodic.retrieval.mention_audio import (
    MIN_GAIN,
    MentionCheck,
    beats_decoys,
    carried_option,
    check_mention,
)
from episodic.retrieval.option_audio import OptionHearing, Slots, hear_options, scoreable
from episodic.retrieval.query_analysis import QueryAnalysis
from episodic.retrieval.snippet_audio import (
    SAMPLE_RATE_HZ,
    audio_or_none,
    memory_audio,
    speech_around,
)
from episodic.retrieval.transcript_scorer import TranscriptScorer
from episodic.retrieval.transcript_versions import (
    _hot_key,
    cached_version,
    ingest_version,
    record_version,
)
from episodic.retrieval.window_scope import mentioned_streams

log = logging.getLogger(__name__)

UNITS_CONSIDERED = 8  # how deep into the ranked evidence memories are picked from
# Where the old transcript has nothing here, the new one must at least be this sure (Whisper's
# own threshold for a decoded window it believes).
NEW_ONLY_MIN_SCORE = -1.0
# A first estimate of the seconds the joint pass takes (Whisper encodes a whole 30 s window
# however short the audio, so the cost is mostly fixed), replaced by measurements once
# memories have been re-listened in this process.
INITIAL_RELISTEN_S = 3.0
INITIAL_LOAD_S = 4.0
# a re-hearing within relisten_hint_tolerance per question word it adds, up to this many words:
# on the three dev sets' re-hearings (33 adding a question word) a flat 0.3 took 8 (7 better by
# word error rate, 0 worse), 0.3 per word 13 (12 better, 0 worse), a flat 0.5 22 (3 worse)
HINT_WORDS_COUNTED = 3
# scoring the options against one sentence's audio: median 0.52 s, 90th percentile 1.1 s on the
# held-out sets run two at a time (24 Asks); 1.5 s had kept it from starting with 1.2 s left
# of a re-listened Ask's 5 s, where it took 0.5 s
OPTION_HEARING_S = 0.8
# scoring an old and a new transcript against one clip's audio, encoded at its own length: 0.3 s
# on a 2-core 2.45 GHz EPYC (1.5 s with the audio padded to Whisper's 30 s window, as before)
SCORING_S = 0.3
# asking one sentence's audio whether it names a counted thing: an encoding and four alignments
MENTION_CHECK_S = 0.5
MIN_CLIP_S = 2.0  # a window with less room left than this takes no further clip
# a clip the joint pass stopped before (relisten_pass_max_s): not heard, so not recorded either
UNREACHED: list[TranscriptPiece] = []



# -- records -------------------------------------------------------------------------------
def _language_of(pieces: Sequence[TranscriptPiece]) -> str:
    """The language most of ``pieces``' words were heard in ("" when none says)."""
    counts: dict[str, int] = {}
    for p in pieces:
        if p.language:
            counts[p.language] = counts.get(p.language, 0) + len(p.text.split())
    return max(counts, key=lambda k: counts[k]) if counts else ""


def options_to_hear(analysis: QueryAnalysis, options: Sequence[str], streams: Sequence[str] = ()) -> Sequence[str]:
    """The options the recogniser may be told to expect: none when they are pictures seen
    while something was said ("what picture was on screen while someone talked about X?");
    told to expect "a rocket, coins, a cat", it heard "Priya painted the ladle pink" as
    "… the little pink", the words the question asked about lost. Nor the options that are
    the names of ``streams`` ("garden-cam" for "which camera recorded …?"): nobody says them."""
    if getattr(analysis.shape, "pictured_while", ""):
        return ()
    return [o for o in options if not mentioned_streams(o, list(streams))] if streams else options


def within_hint(old_score: float, new_score: float, added: set[str], tolerance: float) -> bool:
    """Whether a re-hearing that adds the question's words ``added`` scores close enough to
    the old transcript to answer this question: ``tolerance`` below it per word added, up to
    ``HINT_WORDS_COUNTED`` words (mean token log-probabilities, the same scorer for both)."""
    return bool(added) and new_score >= old_score - tolerance * min(len(added), HINT_WORDS_COUNTED)


@dataclass
class MemoryRelisten:
    """What happened to one memory."""

    memory_id: str
    t_start: float  # the stream time range that was re-transcribed
    t_end: float
    # "adopted" (stored) | "adopted-hint" (this question only) | "kept-old" | "cached" | "no-audio"
    # | "no-speech" | "error" | "unjudged" (no time to score it) | "unreached" (the pass stopped first)
    outcome: str
    model: str = ""
    audio_s: float = 0.0
    seconds: float = 0.0
    old_score: float | None = None  # mean token log-probability of the old text
    new_score: float | None = None
    text: str = ""  # the new text (adopted or not)
    version: int = 0  # the version recorded in the memory's history (0: none)
    names_lost: list[str] = field(default_factory=list)  # names of the old text the new one dropped


def _with_value_kept(memory: ShortTermMemory, rehearing: Unit, analysis: QueryAnalysis) -> Unit:
    """The sentence a question's options are put into, from a re-hearing that names the
    question's things: the re-hearing itself, or, when it lost the number or time the question
    asks for, the stored words it overlaps, over their span. Prompted with the question, the
    decoder often stops once it has written the question's words ("Please remember not the
    soup." over 2 s of "… soup tasting begins at three thirty-five", stored as "Please remember
    not to skip this and begin at 3.30 am."): the re-hearing tells that this memory is about
    the question, the stored words keep the slot the value was said in."""
    t0, t1 = rehearing.t_start, rehearing.t_end
    old = sorted((p for p in memory.transcript if p.text.strip() and p.t_start < t1 and p.t_end > t0),
                 key=lambda p: p.t_start)
    old_text = " ".join(p.text.strip() for p in old)
    if not old or not value_lost(old_text, rehearing.text, said_value_focus(analysis)):
        return rehearing
    return replace(rehearing, t_start=min(t0, old[0].t_start), t_end=max(t1, old[-1].t_end), text=old_text)


@dataclass
class RelistenReport:
    """What re-listening did for one request (``Trace.notes["relisten"]``)."""

    happened: bool = False  # some audio was transcribed again
    reason: str = ""  # why nothing (or not everything) was done
    seconds: float = 0.0
    cut: bool = False  # the deadline or the settings stopped it early
    hotwords: list[str] = field(default_factory=list)
    memories: list[MemoryRelisten] = field(default_factory=list)

    @property
    def adopted(self) -> list[MemoryRelisten]:
        return [m for m in self.memories if m.outcome.startswith("adopted")]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- the stage --------------------------------------------------------------------------------
def _check(scorer: TranscriptScorer, encoded: Any, language: str, before: str, after: str, sentence: str,
           phrase: str, keep: Collection[str]) -> MentionCheck | None:
    """``phrase`` put into ``sentence`` and scored against the encoded audio (:func:`check_mention`)."""
    return check_mention(scorer.loglik, encoded, sentence, phrase, language, before=before, after=after,
                         length=lambda text: len(scorer.token_ids(text)), keep=keep)


class Relistener:
    """Re-transcribes the recalled memories of a speech question; one per :class:`MemoryQA`."""

    _speed: dict[str, float] = {}  # model id → measured seconds per memory (per process)
    _speed_lock = threading.Lock()

    def __init__(self, components: QueryBackends, settings: Settings) -> None:
        self.c = components
        self.settings = settings
        self._rec: Any = None
        self._loaded = False
        self._lock = threading.Lock()  # one memory rewritten at a time in this process

    # -- the recogniser --------------------------------------------------------------
    def recognizer(self) -> Any:
        if self._rec is None:
            from episodic.memory.speech import relistening_recognizer

            current = self.c.loaded_asr()  # the ingest recogniser, only if already built
            self._rec = relistening_recognizer(self.settings, current)
        return self._rec

    def prepare(self) -> None:
        """Load the re-listening model now (a server warm-up), when re-listening is on."""
        if self.settings.relisten_max_memories > 0:
            self._whisper()

    def _whisper(self) -> Any:
        """The loaded faster-whisper model behind the recogniser (for scoring)."""
        rec = self.recognizer()
        model = rec._load()  # the recogniser loads once and keeps it
        self._loaded = True
        return model

    def estimate_s(self, model_id: str) -> float:
        """Seconds the next memory is expected to take (loading the model included)."""
        load = 0.0 if self._loaded else INITIAL_LOAD_S
        return load + self._speed.get(model_id, INITIAL_RELISTEN_S)

    def _measured(self, model_id: str, seconds: float) -> None:
        with self._speed_lock:
            old = self._speed.get(model_id)
            self._speed[model_id] = seconds if old is None else 0.5 * old + 0.5 * seconds

    # -- the request -----------------------------------------------------------------
    def run(
        self,
        analysis: QueryAnalysis,
        q_vec: np.ndarray,
        question: str,
        options: Sequence[str],
        recall: Recall,
        reader: MemoryReader,
        scope: Scope,
        scorer: Any,
        remaining: Callable[[], float | None],
        chosen: Sequence[Unit] | None = None,
    ) -> RelistenReport:
        """Re-listen to the top memories of ``recall`` when the question is about speech;
        ``recall.units`` is updated in place with any better transcript. ``chosen``, when
        given, names the sentences to hear again instead (an answer stage knows which of its
        sentences may be misheard, see ``TimeAnswers.listen_targets``; empty: none). Never
        raises for what it meets in the data; the report says what was done."""
        started = time.perf_counter()
        report = RelistenReport()
        try:
            self._run(report, analysis, q_vec, question, options, recall, reader, scope, scorer, remaining, chosen)
        except EpisodicError as exc:  # a store or model failure: answer from what we have
            log.warning("re-listening failed: %s", exc)
            report.reason = f"failed: {exc}"
        report.seconds = round(time.perf_counter() - started, 3)
        recall.notes["relisten"] = report.to_dict()
        return report

    def _budget(self, remaining: Callable[[], float | None]) -> float | None:
        left = remaining()
        return None if left is None else left - self.settings.relisten_reserve_s

    def _run(self, report, analysis, q_vec, question, options, recall, reader, scope, scorer, remaining,
             chosen=None) -> None:
        s = self.settings
        if s.relisten_max_memories <= 0:
            report.reason = "off"
            return
        # sentences an answerer chose to hear again are speech whatever the question's type
        # ("what picture was on screen while someone talked about X?" is a visual question)
        if chosen is None and (not recall.units or not about_speech(analysis, recall.units, s.retrieval)):
            report.reason = "not about speech"
            return
        budget = self._budget(remaining)
        if budget is not None and budget <= 0:
            report.reason, report.cut = "no time left", True
            return
        if chosen is not None and not chosen:
            report.reason = "nothing unsure"
            return
        targets = self._targets(chosen if chosen is not None else recall.units, reader, analysis,
                                every=chosen is not None)
        if not targets:
            report.reason = "no recalled memory with stored audio"
            return
        said_options = options_to_hear(analysis, options, reader.streams_in(scope))
        words = hot_words(question, said_options)
        report.hotwords = words
        rec = self.recognizer()
        model_id = str(getattr(rec, "model_id", type(rec).__name__))
        clips: list[tuple[ShortTermMemory, tuple[float, float]]] = []
        room = WINDOW_S
        for memory, units in targets:
            cached = cached_version(memory, model_id, words)
            if cached is not None:
                report.memories.append(MemoryRelisten(memory.id, memory.t_start, memory.t_end, "cached", model_id))
                if cached.get("hinted"):  # heard for these words before, never stored: use it again
                    self._use_hinted(cached, memory, analysis, q_vec, recall, reader, scope, scorer)
                continue
            span = _span(memory, units, s.relisten_max_audio_s)
            if span is not None and span[1] - span[0] > room:
                span = _span(memory, units, room, cut=False)  # the matched sentence alone, or none
            if span is None or span[1] - span[0] <= 0.0:
                continue
            # one pass decodes one language: a memory heard in another waits for its own question
            heard_in = _language_of(memory.transcript)
            if clips and heard_in and heard_in != (_language_of(clips[0][0].transcript) or heard_in):
                continue
            clips.append((memory, span))
            room -= (span[1] - span[0]) + GAP_S
            if room < MIN_CLIP_S:
                break
        if not clips:
            report.reason = report.reason or "done"
            return
        budget = self._budget(remaining)
        if budget is not None and budget < self.estimate_s(model_id):
            report.reason, report.cut = "no time left", True
            return
        bias = self._bias(question, said_options, words)
        heard = self._hear_together(clips, bias, model_id)
        started = time.perf_counter()
        for (memory, span), (audio, pieces, share) in zip(clips, heard, strict=True):
            result = MemoryRelisten(memory.id, round(span[0], 3), round(span[1], 3), "no-audio", model_id)
            report.memories.append(result)
            if audio is None:
                continue
            result.audio_s = round(audio.size / SAMPLE_RATE_HZ, 3)
            report.happened = True
            if pieces is None:
                result.outcome, result.seconds = "error", share
                continue
            if pieces is UNREACHED:  # the pass stopped before its audio: nothing is recorded
                result.outcome, result.seconds = "unreached", share
                report.cut = True
                continue
            budget = self._budget(remaining)
            spent = time.perf_counter() - started
            out_of_time = (budget is not None and budget < SCORING_S) or spent > s.relisten_budget_s
            self._judge(result, memory, span, audio, pieces, words, share, out_of_time,
                        analysis, q_vec, recall, reader, scope, scorer)
            report.cut |= result.outcome == "unjudged"
        if not report.reason:
            report.reason = "done"

    def hear_options(
        self,
        analysis: QueryAnalysis,
        question: str,
        options: Sequence[str],
        recall: Recall,
        reader: MemoryReader,
        remaining: Callable[[], float | None],
        heard: RelistenReport | None = None,
    ) -> OptionHearing:
        """Which given option the audio of the best recalled sentence carries (see
        retrieval/option_audio.py); runs after re-listening, on the transcript it left. With no
        recalled sentence about the question, a re-hearing of this request (``heard``) that is
        about it but was not taken gives the sentence the options are put into: "Omar has eight
        novels in the bag." scored below "Oh, Mata said our mail's in the bag." against the
        audio (a rare name and a prompted hearing cost likelihood), yet its slot, filled with
        each given number in turn, still tells which the audio carries. Never raises for what it
        meets in the data."""
        s = self.settings
        out = OptionHearing()
        if not s.relisten_score_options or not scoreable(options):
            out.reason = "off" if not s.relisten_score_options else "options too long"
            return out
        if not options_to_hear(analysis, options):
            out.reason = "the options are pictures"
            return out
        if not recall.units or not (about_speech(analysis, recall.units, s.retrieval) or said_of_someone(analysis)):
            out.reason = "not about speech"
            return out
        budget = self._budget(remaining)
        if budget is not None and budget < OPTION_HEARING_S:
            out.reason = "no time left"
            return out
        targets = self._targets(recall.units, reader, analysis)
        if not targets:
            out.reason = "no recalled memory with stored audio"
            return out
        # the best recalled sentence about the question, in whichever recalled memory it is
        memory, sentence = next(
            ((m, u) for m, units in targets for u in units
             if u.modality == "speech" and u.text.strip() and about_the_question(analysis, u)),
            (None, None),
        )
        if memory is None or sentence is None:
            memory, sentence = self._rehearing_about(analysis, heard, reader)
        if memory is None or sentence is None:
            out.reason = "no recalled sentence about the question"
            return out
        return self.hear_in_sentence(memory, sentence, question, options, out)

    def hear_in_sentence(self, memory: ShortTermMemory, sentence: Unit, question: str, options: Sequence[str],
                         out: OptionHearing | None = None, slots: Slots | None = None) -> OptionHearing:
        """Each of ``options`` put into ``sentence``'s likely slot and scored against the audio
        of ``memory`` there (retrieval/option_audio.py), with the re-listening model. ``out``
        carries the reason when nothing could be scored. Never raises for what it meets in the
        data. ``slots``: the sentence's windows to try them in (option_audio.slot_windows unless
        given)."""
        out = out or OptionHearing()

        def score(scorer, encoded, language, before, after) -> OptionHearing:
            return hear_options(scorer.loglik, encoded, sentence.text, question, options, language,
                                before=before, after=after, slots=slots)

        result = self._scored_against_audio(memory, sentence, score)
        if isinstance(result, str):
            out.reason = result
            return out
        return result

    def hear_mention(self, memory: ShortTermMemory, sentence: Unit, thing: str,
                     keep: Collection[str] = ()) -> MentionCheck | None:
        """Whether the audio of ``sentence`` names ``thing`` where the transcript has words
        that sound like it (retrieval/mention_audio.py; never in place of a word whose stem is
        in ``keep``); None when it could not be asked. Never raises for what it meets in the data."""
        return self.hear_phrases(memory, sentence, [thing], keep)[0]

    def hear_phrases(self, memory: ShortTermMemory, sentence: Unit, phrases: Sequence[str],
                     keep: Collection[str] = ()) -> list[MentionCheck | None]:
        """:meth:`hear_mention` for each of ``phrases`` ("" for none), the audio read and
        encoded once for all of them; all None when it could not be asked."""

        def score(scorer, encoded, language, before, after) -> list[MentionCheck | None]:
            return [_check(scorer, encoded, language, before, after, sentence.text, phrase, keep) if phrase else None
                    for phrase in phrases]

        result = self._scored_against_audio(memory, sentence, score)
        return [None] * len(phrases) if isinstance(result, str) else result

    def hear_against(self, memory: ShortTermMemory, sentence: Unit, thing: str, decoys: Sequence[str],
                     min_gain: float, keep: Collection[str] = ()) -> tuple[MentionCheck | None, list[MentionCheck | None]]:
        """:meth:`hear_mention` of ``thing`` and, only where that passes ``min_gain``, of each
        of ``decoys`` in the same sentence (retrieval/mention_audio.py, ``beats_decoys``), the
        audio encoded once; (None, []) when it could not be asked."""

        def score(scorer, encoded, language, before, after):
            check = _check(scorer, encoded, language, before, after, sentence.text, thing, keep)
            if check is None or not check.heard_at(min_gain):
                return check, []
            return check, [_check(scorer, encoded, language, before, after, sentence.text, d, keep) for d in decoys]

        result = self._scored_against_audio(memory, sentence, score)
        return (None, []) if isinstance(result, str) else result

    def _scored_against_audio(self, memory: ShortTermMemory, sentence: Unit, score: Callable[..., Any]) -> Any:
        """``score(scorer, encoded, language, before, after)`` over the audio of ``sentence``
        and what is said around it in ``memory``, with the re-listening model; a reason (str)
        when there is no audio or it cannot be read."""
        s = self.settings
        before, after, t0, t1 = speech_around(memory, sentence)
        try:
            audio = memory_audio(memory, t0, t1, self.c.snippets.path_for)
            if not audio.size or not np.any(audio):
                return "no audio"
            scorer = TranscriptScorer(self._whisper())
            language = s.asr_language or next(
                (p.language for p in memory.transcript if getattr(p, "language", "")), ""
            ) or s.asr_fallback_language or "en"
            return score(scorer, scorer.encode(audio, whole_window=False), language, before, after)
        except (EpisodicError, OSError, RuntimeError, ValueError) as exc:  # CTranslate2: plain errors
            log.info("scoring against the audio of %s failed: %s", memory.id, exc)
            return f"failed: {exc}"
        except Exception as exc:  # PyAV raises its own error types for damaged files
            if type(exc).__module__.split(".")[0] != "av":
                raise
            return f"cannot decode: {exc}"

    @staticmethod
    def _rehearing_about(
        analysis: QueryAnalysis, heard: RelistenReport | None, reader: MemoryReader
    ) -> tuple[ShortTermMemory | None, Unit | None]:
        """The first re-hearing in ``heard`` that was not taken (nor used as a hint) and is
        about the question, as a sentence over the span it was heard in; (None, None) if none."""
        for r in heard.memories if heard is not None else ():
            memory = reader.memory(r.memory_id)
            if memory is None:
                continue
            if r.outcome == "kept-old":
                text, span = r.text, (r.t_start, r.t_end)
            elif r.outcome == "cached":
                version = cached_version(memory, r.model, heard.hotwords) or {}
                if version.get("adopted") or version.get("hinted"):
                    continue  # already in the evidence
                text, span = str(version.get("text") or ""), tuple(version.get("span") or ())
            else:
                continue
            if not text.strip() or len(span) != 2:
                continue
            unit = Unit(memory.stream_id, memory.id, float(span[0]), float(span[1]), "speech", text.strip())
            if about_the_question(analysis, unit):
                return memory, _with_value_kept(memory, unit, analysis)
        return None, None

    def _targets(
        self, units: Sequence[Unit], reader: MemoryReader, analysis: QueryAnalysis, every: bool = False
    ) -> list[tuple[ShortTermMemory, list[Unit]]]:
        """The best-ranked distinct memories with stored audio, each with its relevant units
        (best first; with ``every``, all the given units), at most ``relisten_max_memories``.
        A sentence put near the top to be heard again (:attr:`Unit.found_by`) counts as
        relevant: it was found by a given value, the options' words or a lost value, not by the
        question's words."""
        s = self.settings
        order: list[str] = []
        by_memory: dict[str, list[Unit]] = {}
        for u in units[:UNITS_CONSIDERED]:
            if not every and not u.found_by and not relevant(u, s.retrieval, analysis):
                continue
            if u.memory_id not in by_memory:
                order.append(u.memory_id)
            by_memory.setdefault(u.memory_id, []).append(u)
        out = []
        for mid in order:
            m = reader.memory(mid)
            if m is None or not m.snippets:
                continue
            heard_speech = bool(m.transcript) or any(o.kind == "speech" for o in m.sounds)
            if not heard_speech:
                continue
            out.append((m, by_memory[mid]))
            if len(out) >= s.relisten_max_memories:
                break
        return out

    def _bias(self, question: str, options: Sequence[str], words: Sequence[str]) -> dict[str, str | None]:
        """How the recogniser is told what to expect. "prompt": the question and options as
        text said just before (a sentence reads naturally to the decoder); "hotwords": the
        content words alone; "none". Chosen by benchmarks/bench_relisten.py: a bare word list
        made the decoder drop words ("the fire alarm test scheduled for…")."""
        mode = self.settings.relisten_bias
        if mode == "hotwords" and words:
            return {"hotwords": " ".join(words), "initial_prompt": None}
        if mode == "prompt" and words:
            said = [" ".join(question.split())] + [o.strip().rstrip(".") + "." for o in options]
            return {"hotwords": None, "initial_prompt": " ".join(said)[:600]}
        return {"hotwords": None, "initial_prompt": None}

    def _hear_together(self, clips, bias, model_id) -> list[tuple[np.ndarray | None, list[TranscriptPiece] | None, float]]:
        """Transcribe every clip's audio in one recogniser pass (see retrieval/joint_hearing.py):
        for each clip its audio (None when it has none), its new pieces in stream time (None
        when the recogniser failed) and its share of the seconds spent."""
        s = self.settings
        t0 = time.perf_counter()
        audios = [audio_or_none(m, span[0], span[1], self.c.snippets.path_for, "re-listening") for m, span in clips]
        audible = [i for i, a in enumerate(audios) if a is not None and a.size and np.any(a)]
        out: list[tuple[np.ndarray | None, list[TranscriptPiece] | None, float]] = [(None, None, 0.0)] * len(clips)
        if not audible:
            return out
        parts = [Clip(clips[i][0].id, clips[i][1][0], audios[i]) for i in audible]
        joined = join_clips(parts, SAMPLE_RATE_HZ)
        # the language ingest decided for these words (detecting it again on a few noisy seconds
        # sometimes picks another and decodes twice); the best recalled memory's decides
        first = clips[audible[0]]
        old = [p for p in first[0].transcript if _inside(p.t_start, p.t_end, first[1])]
        heard_in = _language_of(old) or s.asr_language or s.asr_fallback_language
        try:
            # one decoding pass (no temperature ladder): a noisy clip could otherwise be decoded
            # up to six times, several seconds each, and the answer is waiting; word times put
            # each word back in the clip it was heard in
            heard = self.recognizer().hear(
                joined.audio, SAMPLE_RATE_HZ, 0.0, beam_size=s.relisten_beam_size, temperatures=(0.0,),
                language=heard_in, word_timestamps=True, time_limit_s=s.relisten_pass_max_s,
                keep_before_loop=True, **bias
            )
            per_clip: list[list[TranscriptPiece] | None] = list(split_pieces(heard.pieces, parts, joined))
            if heard.stopped_at_s is not None:
                # no window started after the limit: a clip starting where decoding stopped
                # was not reached, which is not the same as hearing nothing there
                per_clip = [UNREACHED if joined.offsets[k] >= heard.stopped_at_s else new
                            for k, new in enumerate(per_clip)]
        except (EpisodicError, RuntimeError, ValueError) as exc:  # CTranslate2 raises plain errors
            log.warning("re-listening %s failed: %s", ", ".join(c.key for c in parts), exc)
            per_clip = [None] * len(parts)
        seconds = time.perf_counter() - t0
        self._measured(model_id, seconds)
        share = round(seconds / len(parts), 3)
        for i, new in zip(audible, per_clip, strict=True):
            out[i] = (audios[i], new, share)
        return out

    def _judge(
        self, result, memory, span, audio, pieces, words, seconds, out_of_time,
        analysis, q_vec, recall, reader, scope, scorer,
    ) -> None:
        """Decide whether one clip's new hearing replaces its old words (see the module doc),
        record the attempt as a version, and put an adopted one in this request's evidence.
        Only a hearing that adds the question's words (or speech, or the number asked for,
        where there was none) can be taken, so only such a one is scored against the audio;
        ``out_of_time`` leaves it unjudged and the old words in place."""
        s = self.settings
        t0 = time.perf_counter()
        model_id = result.model
        old = [p for p in memory.transcript if _inside(p.t_start, p.t_end, span)]
        old_text = " ".join(p.text.strip() for p in old if p.text.strip())
        pieces = without_closing_phrase(without_cut_off_sentence(pieces, old_text), old_text)
        new_text = " ".join(p.text.strip() for p in pieces if p.text.strip())
        language = _language_of(pieces) or _language_of(old) or s.asr_fallback_language
        # the question's words it adds, and a number (a given name) where the old words had
        # none when a number or a time (a person) is asked for
        focus = said_value_focus(analysis)
        added = (_words_added(old_text, new_text, words) | value_gained(old_text, new_text, focus)
                 | name_gained(old_text, new_text, focus))
        useful = bool(added) or not old_text.strip()
        old_score = new_score = None
        result.text = new_text
        if useful and new_text and not _same_words(old_text, new_text):
            if out_of_time:
                result.outcome = "unjudged"
                result.seconds = seconds
                return
            try:
                scorer_model = TranscriptScorer(self._whisper())
                # the clip encoded at its own length (plus a second), not padded to 30 s
                old_score, new_score = scorer_model.score(
                    scorer_model.encode(audio, whole_window=False), [old_text, new_text], language
                )
            except (EpisodicError, RuntimeError, ValueError) as exc:  # CTranslate2 raises plain errors
                log.warning("scoring the re-hearing of %s failed: %s", memory.id, exc)
                result.outcome = "error"
                result.seconds = round(seconds + time.perf_counter() - t0, 3)
                return
        result.seconds = round(seconds + time.perf_counter() - t0, 3)
        result.old_score = None if old_score is None else round(old_score, 4)
        result.new_score = None if new_score is None else round(new_score, 4)
        clearly_better = new_score is not None and (
            new_score >= old_score + s.relisten_min_gain if old_score is not None
            else new_score >= NEW_ONLY_MIN_SCORE
        )
        # The scorer also favours common words over a rare name: "This is my low-hour cat"
        # outscored "This is Milo, our cat". A re-hearing that loses a name is never better.
        lost = names_lost(old_text, new_text, words)
        if lost:
            clearly_better = False
            result.names_lost = lost
        # A decoder loop ("I don't know. I don't know. I don't know.") scores high, each repeat
        # being likely once begun, but is no better hearing: a re-hearing that loops more than
        # the old words is never taken.
        looping = looped_words(pieces) > looped_words(old)
        if looping:
            clearly_better = False
        # nor one that drops the number a number or time question is answered by
        dropped = value_lost(old_text, new_text, said_value_focus(analysis))
        if dropped:
            clearly_better = False
        # The unprompted scorer favours what it would write itself, so a transcript that the
        # question's words helped to hear ("to Oxford" for "talks for") scores a little below
        # the old one although it is right. It is taken when it adds words the question asked
        # about and the audio carries it almost as well: within the tolerance for each such word
        # (a rare name costs the scorer about that; a word that was not said costs far more:
        # "the island-arm tested" scored −4.1 against −0.26).
        hinted = (
            not clearly_better
            and not lost
            and not looping
            and not dropped
            and new_score is not None
            and old_score is not None
            and within_hint(old_score, new_score, added, s.relisten_hint_tolerance)
        )
        # Taken only when it adds words the question asked for (or hears speech where there was
        # none): winning on the scorer alone is no evidence of hearing better (see the module
        # doc; "Let's see if there are homesmen in the room for Lord One." outscored "The safety
        # announcement in the room for all one."). Only one the audio also carries better is
        # kept in the store, so what the memory holds never depends on which questions were
        # asked before; a hinted one serves this question (and the same question again, from
        # its recorded version) but does not replace the stored words.
        adopted = ((clearly_better and useful) or hinted) and not _same_words(old_text, new_text)
        kept = adopted and clearly_better
        if adopted:
            result.outcome = "adopted" if kept else "adopted-hint"
        elif not new_text:
            result.outcome = "no-speech"
        else:
            result.outcome = "kept-old"
        ingest = ingest_version(memory, result.old_score)
        entry = {
            "source": "relisten",
            "model": model_id,
            "hotwords": _hot_key(words),
            "bias": s.relisten_bias,
            "beam_size": s.relisten_beam_size,
            "span": [result.t_start, result.t_end],
            "text": new_text,
            "score": result.new_score,
            "replaced_score": result.old_score,
            "adopted": kept,
            "hinted": adopted and not kept,  # used for its question only
            "at": round(time.time(), 3),
        }
        new_entries = self._speech_entries(memory, pieces) if adopted else []
        result.version = self._persist(memory, span, pieces if kept else None, new_entries if kept else [], entry, ingest)
        if adopted:
            self._apply(memory, span, pieces, new_entries)
            self._replace_units(memory, span, analysis, q_vec, recall, reader, scope, scorer, hinted=not kept)

    def _use_hinted(self, version, memory, analysis, q_vec, recall, reader, scope, scorer) -> None:
        """Put a recorded hinted transcript (see :meth:`_relisten_one`) in this request's
        evidence, as one piece over the span it was heard in; the store is not touched."""
        try:
            t0, t1 = (float(x) for x in version.get("span") or ())
        except (TypeError, ValueError):
            return
        text = str(version.get("text") or "").strip()
        if not text or t1 <= t0:
            return
        old_text = " ".join(p.text.strip() for p in memory.transcript if _inside(p.t_start, p.t_end, (t0, t1)))
        if value_lost(old_text, text, said_value_focus(analysis)):
            return  # recorded before that rule: its number was lost (see _judge)
        self._take_for_request(memory, (t0, t1), text, analysis, q_vec, recall, reader, scope, scorer)

    def _take_for_request(self, memory, span, text, analysis, q_vec, recall, reader, scope, scorer) -> None:
        """``text`` as the one piece of ``memory`` inside ``span``, in this request's copy and
        evidence only (its units marked hinted); the store is not touched."""
        pieces = [TranscriptPiece(span[0], span[1], text)]
        self._apply(memory, span, pieces, self._speech_entries(memory, pieces))
        self._replace_units(memory, span, analysis, q_vec, recall, reader, scope, scorer, hinted=True)

    def hear_mentions(self, thing: str, targets: Sequence[Unit], mentions: Callable[[Unit], bool],
                      analysis: QueryAnalysis, q_vec: np.ndarray, recall: Recall, reader: MemoryReader,
                      scope: Scope, scorer: Any, remaining: Callable[[], float | None],
                      best_only: bool = False, min_gain: float = MIN_GAIN,
                      keep: Collection[str] = (), decoys: Sequence[str] = ()) -> list[dict[str, Any]]:
        """A count question's sentences nearest the thing (``TimeAnswers.mention_targets``), as
        they are after re-listening: each that does not mention ``thing`` (``mentions``) is asked of its
        audio (:meth:`hear_mention`), and one whose audio carries it is taken, with the thing
        in it, for this request (hinted; the store keeps what was heard). ``best_only`` (a
        thing an order question places, ``TimeAnswers.placement_checks``: said once) takes only
        the one that carries it best; ``min_gain`` is the bar (retrieval/mention_audio.py);
        ``keep``: stems of words the thing may not be put in place of; ``decoys``: other things
        the audio must carry the thing clearly better than, in the same sentence
        (:func:`retrieval.mention_audio.beats_decoys`; a count's, :func:`~retrieval.mention_audio.decoys_for`).
        Returns what was asked, for the trace. Stops when the request's time runs short."""
        asked: list[dict[str, Any]] = []
        if not thing or self.settings.relisten_max_memories <= 0:
            return asked
        done: set[tuple[str, float]] = set()
        heard: list[tuple[float, ShortTermMemory, tuple[float, float], str, dict[str, Any]]] = []
        for u in targets:
            memory = reader.memory(u.memory_id)
            if memory is None:
                continue
            span = (u.t_start, u.t_end)
            for p in [p for p in memory.transcript
                      if _inside(p.t_start, p.t_end, span) or _inside(*span, (p.t_start, p.t_end))]:
                if (memory.id, p.t_start) in done:
                    continue
                done.add((memory.id, p.t_start))
                now = Unit(memory.stream_id, memory.id, p.t_start, p.t_end, "speech", p.text.strip())
                if not now.text or mentions(now):
                    continue
                budget = self._budget(remaining)
                if budget is not None and budget < MENTION_CHECK_S:
                    break
                check, rivals = self.hear_against(memory, now, thing, decoys, min_gain, keep)
                if check is None:
                    continue
                carries = check.heard_at(min_gain) and beats_decoys(check, rivals)
                asked.append({"memory_id": memory.id, "t_start": round(p.t_start, 3), "heard": now.text,
                              "with_thing": check.text, "gain": check.gain, "taken": carries and not best_only})
                if rivals:
                    asked[-1]["decoy_gain"] = max((r.gain for r in rivals if r is not None), default=None)
                if carries and not best_only:
                    self._take_for_request(memory, (p.t_start, p.t_end), check.text, analysis, q_vec, recall,
                                           reader, scope, scorer)
                elif carries:
                    heard.append((check.gain, memory, (p.t_start, p.t_end), check.text, asked[-1]))
        if heard:
            _, memory, span, text, note = max(heard, key=lambda h: h[0])
            note["taken"] = True
            self._take_for_request(memory, span, text, analysis, q_vec, recall, reader, scope, scorer)
        return asked

    def hear_which(self, phrases: Sequence[str], candidates: Sequence[int], said: Sequence[Unit],
                   analysis: QueryAnalysis, q_vec: np.ndarray, recall: Recall, reader: MemoryReader,
                   scope: Scope, scorer: Any, remaining: Callable[[], float | None]) -> list[dict[str, Any]]:
        """Which option a moment's sentences carry ("what was talked about while the screen
        was dark?" when nothing heard then tells any option: ``StructuredAnswerer.said_then_checks``):
        each option's telling phrase (``phrases``, "" for none) put into each sentence of
        ``said`` and scored against its audio (:meth:`hear_phrases`: each sentence's audio
        encoded once for all the phrases). The best of the
        ``candidates`` (the options said nowhere else) is taken for this request, its phrase in
        its sentence (hinted; the store keeps what was heard), when the audio carries it
        clearly (:func:`retrieval.mention_audio.carried_option`). Returns what was asked, for
        the trace. Stops when the request's time runs short (then nothing is taken)."""
        asked: list[dict[str, Any]] = []
        if self.settings.relisten_max_memories <= 0:
            return asked
        best: dict[int, tuple[float, ShortTermMemory, Unit, str]] = {}
        for u in said:
            memory = reader.memory(u.memory_id)
            if memory is None or not u.text.strip():
                continue
            budget = self._budget(remaining)
            if budget is not None and budget < MENTION_CHECK_S:
                return asked
            for k, check in enumerate(self.hear_phrases(memory, u, phrases)):
                if check is None:
                    continue
                asked.append({"memory_id": memory.id, "t_start": round(u.t_start, 3), "heard": u.text,
                              "option": k, "with_thing": check.text, "gain": check.gain, "taken": False})
                if k not in best or check.gain > best[k][0]:
                    best[k] = (check.gain, memory, u, check.text)
        top = carried_option({k: b[0] for k, b in best.items()}, candidates)
        if top is not None:
            _, memory, unit, text = best[top]
            for note in asked:
                note["taken"] = note["option"] == top and note["t_start"] == round(unit.t_start, 3)
            self._take_for_request(memory, (unit.t_start, unit.t_end), text, analysis, q_vec, recall, reader,
                                   scope, scorer)
        return asked

    def _speech_entries(self, memory: ShortTermMemory, pieces: list[TranscriptPiece]) -> list[EmbeddingEntry]:
        """E_i entries for the new pieces: text embeddings, as the encoder makes them. A memory
        without speech entries (a cross-modal embedder keeps raw audio vectors instead) gets
        none."""
        if not pieces or not any(e.modality == "speech" for e in memory.embeddings) and self._cross_modal():
            return []
        vecs = self.c.embedder.embed_texts([p.text for p in pieces])
        return [
            EmbeddingEntry(p.t_start, p.t_end, "speech", p.text, np.asarray(v, dtype=np.float32))
            for p, v in zip(pieces, vecs, strict=True)
        ]

    def _cross_modal(self) -> bool:
        return isinstance(self.c.embedder, CrossModalEmbedder)

    @staticmethod
    def _apply(
        memory: ShortTermMemory,
        span: tuple[float, float],
        pieces: list[TranscriptPiece] | None,
        entries: list[EmbeddingEntry],
    ) -> None:
        """Put the new pieces (and their E_i entries) in place of the old ones inside ``span``;
        everything else of the memory stays as it is. v_i is recomputed from E_i."""
        if pieces is None:
            return
        kept = [p for p in memory.transcript if not _inside(p.t_start, p.t_end, span)]
        memory.transcript = sorted(kept + list(pieces), key=lambda p: (p.t_start, p.t_end))
        others = [
            e for e in memory.embeddings
            if not (e.modality == "speech" and _inside(e.t_start, e.t_end, span))
        ]
        memory.embeddings = others + list(entries)
        memory.embeddings.sort(key=lambda e: (e.t_start, e.modality))
        if memory.embeddings:
            memory.vector = representative_vector(memory)

    def record_attempt(self, memory: ShortTermMemory, entry: dict[str, Any]) -> int:
        """Record a version made elsewhere (retrieval/second_listen.py) without touching the
        transcript, under the same lock as re-listening's own writes."""
        return self._persist(memory, (memory.t_start, memory.t_end), None, [], entry, ingest_version(memory))

    def _persist(self, memory, span, pieces, entries, entry, ingest) -> int:
        """Re-read the memory (with everything: frames, sounds, snippets, E_i, frame features),
        change only its transcript inside ``span``, its speech entries and v_i, record the
        version, and write it back. Returns the version number (0 when it could not be kept)."""
        store = self.c.store
        with self._lock:
            fresh = store.get_memory(memory.id, with_vectors=True)
            if fresh is None:  # deleted meanwhile: nothing to keep
                return 0
            self._apply(fresh, span, pieces, entries)
            version = record_version(fresh, entry, ingest)
            store.upsert_memories([fresh])
            if pieces is not None:
                self._refresh_event(fresh, version)
        memory.metadata = dict(fresh.metadata)
        return version

    def _refresh_event(self, memory: ShortTermMemory, version: int) -> None:
        """Bring the memory's ThetaEvent up to date with its new transcript: a composed summary
        (the local default, a pure function of the memory) is composed again, so fast
        retrieval finds the corrected words next time; a model-written one keeps its text and
        gets the new auditory context and v_i."""
        store = self.c.store
        event = store.get_event(event_id(memory.stream_id, memory.t_start))
        if event is None:
            return
        event.audio_context = [memory.transcript_text[:2000]] if memory.transcript_text else []
        event.vector = memory.vector
        if str(event.metadata.get("summariser", "")).startswith("composed"):
            event.summary = compose_summary(memory)
            event.summary_vector = np.asarray(self.c.embedder.embed_texts([event.summary])[0], dtype=np.float32)
        event.metadata["transcript_version"] = version
        store.upsert_events([event])

    def _replace_units(self, memory, span, analysis, q_vec, recall, reader, scope, scorer, hinted: bool = False) -> None:
        """Swap this memory's old speech units inside ``span`` for units of the new pieces,
        scored like the rest (marked ``hinted`` when the question's words helped hear them and
        the store keeps the old ones). Detailed recall's ranking is one formula, so the list is
        simply re-sorted; an association's order is kept and the new units take the old ones'
        place."""
        fresh = [
            u for u in units_of(memory, None, scorer.reuse_visual_vectors)
            if u.modality == "speech" and _inside(u.t_start, u.t_end, span)
            and u.overlaps(scope.t_min, scope.t_max)
        ]
        for u in fresh:
            u.hinted = hinted
        if fresh:
            fresh = apply_position(scorer.rank(analysis, q_vec, fresh), analysis, reader, scope)
        units = recall.units
        gone = [
            i for i, u in enumerate(units)
            if u.memory_id == memory.id and u.modality == "speech" and _inside(u.t_start, u.t_end, span)
        ]
        at = gone[0] if gone else len(units)
        keep = [u for i, u in enumerate(units) if i not in set(gone)]
        at = min(at, len(keep))
        merged = keep[:at] + fresh + keep[at:]
        if recall.route != "association":
            merged.sort(key=lambda u: (-u.score, u.stream_id, u.t_start))
        recall.units[:] = merged

