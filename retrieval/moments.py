"""Moment search: a text query → the moments of the streams that match it, best first.

Candidates come from the same semantic search detailed recall uses (nearest fine-grained
vectors, memories and summaries); every piece of text of those memories is ranked by the
hybrid score (embedding cosine + the query's words in it + in its surroundings). Hits are
then merged per memory: one moment per memory, spanning the matching pieces that lie
within ``association_window_s`` of the best one, so a sentence and the caption shown while
it is said come back as one moment, not two; consecutive memories that matched for the same
reason (a caption on screen across a cut) are joined too. ``why`` quotes what matched, e.g.
``speech: "the train to Oxford leaves from Platform 7" (matched: train, Oxford)``.
"""

from __future__ import annotations

import re

import numpy as np

from episodic.config import RetrievalSettings
from episodic.core.interfaces import QueryStore
from episodic.core.query import Moment, Scope
from episodic.core.records import TranscriptPiece
from episodic.retrieval.detailed import (
    MODALITY_LABEL,
    MemoryReader,
    TextScorer,
    Unit,
    apply_position,
    merge_guesses,
    position_memory_ids,
    relevant,
    semantic_candidates,
)
from episodic.retrieval.distinct_frames import DistinctFrames
from episodic.retrieval.distinct_picture import SURE_GUESS, stand_outs
from episodic.retrieval.guess_match import (
    PICTURED,
    DescriberVocabulary,
    KeyFrameUnits,
    about_pictures,
    guess_support,
    subject_phrase,
)
from episodic.retrieval.query_analysis import QueryAnalysis, matched_words, term_set
from episodic.retrieval.text_match import not_everyday, phrase_sound_nearness
from episodic.retrieval.transcript_versions import hearings_since_ingest
from episodic.retrieval.value_kinds import KIND_WEIGHT, asked_kinds, carried_kinds
from episodic.retrieval.word_candidates import WordCandidates

NEAR_BEST = 0.85  # pieces scoring at least this share of a memory's best join its moment
EXCERPT_CHARS = 140
MAX_REASONS = 2
GUESS_MIN = 0.2  # a picture found only by the classifier's guesses needs at least this support
UNNAMED_SHARE = 0.5  # a stand-out picture offered for a thing nothing can name: this share of the best match
# A sentence sounding like the query's telling words (Metaphone keys, text_match.sound_nearness:
# "printer" in "Look, the winter in here" 0.78, in "the reading lamp" 0.63; "robin" in "I can
# hear the rubbing outside" 0.94) is offered, below every match, when fewer than top_k matched
SOUNDS_LIKE_MIN = 0.75
SOUNDS_LIKE_MEMORIES = 600  # the memories read for them at most (a few hours of one stream)
SOUNDS_LIKE_CUE = "sounds like"


def excerpt(text: str, words: list[str], limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut to ``limit`` characters around the first matched word."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    low = text.lower()
    at = min((low.find(w.lower()) for w in words if low.find(w.lower()) >= 0), default=0)
    start = max(0, min(at - limit // 3, len(text) - limit))
    piece = text[start : start + limit].strip()
    return ("…" if start > 0 else "") + piece + ("…" if start + limit < len(text) else "")


def reason(unit: Unit, terms: list[str]) -> str:
    """`speech: "…" (matched: a, b)`: what matched, in the words a person would check."""
    words = matched_words(terms, unit.text)
    label = MODALITY_LABEL.get(unit.modality, unit.modality)
    out = f'{label}: "{excerpt(unit.text, words)}"'
    if words:
        out += f" (matched: {', '.join(words[:6])})"
    return out


def merge_memory_hits(units: list[Unit], terms: list[str], window_s: float) -> Moment:
    """One moment from the ranked pieces of one memory (``units`` best first)."""
    best = units[0]
    t0, t1 = best.t_start, best.t_end
    members = [best]
    for u in units[1:]:
        if u.score < NEAR_BEST * best.score:
            break
        if u.modality == "summary" and best.modality != "summary":
            continue  # a summary spans the whole memory: it would blur a precise hit
        if u.t_start <= t1 + window_s and u.t_end >= t0 - window_s:
            t0, t1 = min(t0, u.t_start), max(t1, u.t_end)
            members.append(u)
    reasons: list[str] = []
    modalities: set[str] = set()
    for u in members:
        if u.modality in modalities or len(reasons) >= MAX_REASONS:
            continue
        modalities.add(u.modality)
        reasons.append(reason(u, terms))
    return Moment(
        stream_id=best.stream_id,
        t_start=round(t0, 3),
        t_end=round(t1, 3),
        score=round(float(best.score), 4),
        why="; ".join(reasons),
        segment_id=best.memory_id,
        snippet_uri=best.snippet_uri,
    )


class MomentSearch:
    def __init__(self, store: QueryStore, scorer: TextScorer, settings: RetrievalSettings,
                 words: WordCandidates | None = None, key_frames: KeyFrameUnits | None = None) -> None:
        self.store = store
        self.scorer = scorer
        self.settings = settings
        self.vocabulary = DescriberVocabulary(store, scorer)
        self.words = words  # memories found by their words too (retrieval/word_candidates.py)
        self.key_frames = key_frames or KeyFrameUnits(store)  # key-frame scans, kept per stream
        self.distinct = DistinctFrames(store)  # stretches of key frames unlike the rest of their stream

    def search(
        self,
        analysis: QueryAnalysis,
        q_vec: np.ndarray,
        scope: Scope,
        top_k: int,
        reader: MemoryReader,
    ) -> list[Moment]:
        s = self.settings
        ids = semantic_candidates(self.store, q_vec, scope, s, max(s.search_candidates, 3 * top_k))
        ids = ids[: max(s.search_max_memories, top_k)]
        if self.words is not None:
            ids = list(dict.fromkeys(ids + self.words.find(analysis, scope)))
        ids += position_memory_ids(self.store, scope, analysis, reader)
        units = reader.units(ids, self.scorer.reuse_visual_vectors, scope)
        ranked = apply_position(self.scorer.rank(analysis, q_vec, units), analysis, reader, scope)
        per_memory: dict[str, list[Unit]] = {}
        for u in ranked:
            per_memory.setdefault(u.memory_id, []).append(u)
        moments = [
            merge_memory_hits(hits, analysis.terms, s.association_window_s)
            for hits in per_memory.values()
            if relevant(hits[0], s, analysis)
        ]
        phrase = self._picture_subject(analysis, reader.streams_in(scope))
        guessed = self._guessed(phrase, scope, reader, moments, top_k) if phrase else []
        if guessed:
            replaced = {m.segment_id for m in guessed}
            moments = [m for m in moments if m.segment_id not in replaced]
        moments = merge_repeats(moments, s.association_window_s)
        moments.sort(key=lambda m: (-m.score, m.stream_id, m.t_start))
        if guessed:
            # a moment that does not even mention what the query is about ranks below a
            # picture the classifier's guesses point to; one that does, above it
            words = phrase.split()
            named = [m for m in moments if _quotes_any(m.why, words)]
            others = [m for m in moments if not _quotes_any(m.why, words)]
            guessed.sort(key=lambda m: (-m.score, m.stream_id, m.t_start))
            moments = named + guessed + others
        if not phrase and len(moments) < top_k:
            streams = reader.streams_in(scope)
            words = subject_phrase(analysis.question, streams).split()
            heard_as = self._sounding_like(analysis, words, streams, scope, moments[:top_k])
            moments = with_sounding_like(moments, heard_as, top_k)
        return moments[:top_k]

    def _sounding_like(self, analysis: QueryAnalysis, subject: list[str], streams: list[str], scope: Scope,
                       found: list[Moment]) -> list[Moment]:
        """Sentences that may hold the query's subject misheard ("someone mentions the robin" /
        "I can hear the rubbing outside"), best first, one per memory not already found: for a
        query about what was said (not pictures, writing or sounds), offered as candidates
        only, never as matches."""
        words = telling(subject)
        have = {m.segment_id for m in found}
        return [
            Moment(stream_id=u.stream_id, t_start=round(u.t_start, 3), t_end=round(u.t_end, 3), score=0.0,
                   why=f'speech: "{excerpt(u.text, [])}" ({SOUNDS_LIKE_CUE}: {" ".join(words)}; perhaps misheard)',
                   segment_id=u.memory_id, snippet_uri=u.snippet_uri)
            for u in self._sounding_sentences(analysis, words, streams, scope, subject) if u.memory_id not in have
        ]

    def _sounding_sentences(self, analysis: QueryAnalysis, words: list[str], streams: list[str],
                            scope: Scope, subject: list[str] | None = None) -> list[Unit]:
        """The sentence of each memory in scope that sounds most like ``words`` (the subject's
        telling words) said with the rest of the ``subject`` (at least ``SOUNDS_LIKE_MIN``), as
        speech units, best first; none for a query that is not about what was said, or a scope
        of more than ``SOUNDS_LIKE_MEMORIES`` memories."""
        if not words or "speech" not in analysis.preferred_modalities or analysis.asks_text or analysis.asks_sound:
            return []
        memories = self.store.list_memories(streams, t_min=scope.t_min, t_max=scope.t_max,
                                            limit=SOUNDS_LIKE_MEMORIES + 1)
        if len(memories) > SOUNDS_LIKE_MEMORIES:
            return []
        # a word heard elsewhere (a name said right in other sentences: "Tom") tells nothing
        # about where the rest was misheard ("Tom and the ropes": "ropes" in "… 15 locks …")
        said = set().union(*(term_set(p.text) for m in memories for p in m.transcript))
        kept = [w for w in words if not term_set(w) <= said] or words
        words = kept + compound_words(analysis.question, kept, subject or [])
        kinds = asked_kinds(analysis.question)
        out: list[tuple[float, Unit]] = []
        for m in memories:
            best: tuple[float, TranscriptPiece] | None = None
            for piece in m.transcript:
                near = phrase_sound_nearness(words, piece.text)  # "lawn mower" heard as "longmore"
                if kinds & carried_kinds(piece.text):
                    near = with_kind_heard(near, len(words))
                if near >= SOUNDS_LIKE_MIN and (best is None or near > best[0]):
                    best = (near, piece)
            if best is not None:
                near, p = best
                out.append((near, Unit(m.stream_id, m.id, p.t_start, p.t_end, "speech", p.text,
                                       snippet_uri=m.snippets[0].uri if m.snippets else "")))
        out.sort(key=lambda x: (-x[0], x[1].stream_id, x[1].t_start))
        return [u for _, u in out]

    def unheard_subject(self, analysis: QueryAnalysis, scope: Scope, found: list[Moment], top_k: int,
                        reader: MemoryReader) -> tuple[list[str], list[Unit]]:
        """What to listen to again for a query about something said that no moment ``found``
        (its top ``top_k``, not those only sounding like it) quotes: "someone mentions the
        seagull" with "Look, no signal in here." stored. The query's telling words, and the
        sentences that sound like them (best first) for the re-listening stage
        (retrieval/relisten.py) to hear again with the query as a hint."""
        streams = reader.streams_in(scope)
        subject = subject_phrase(analysis.question, streams).split()
        words = telling(subject)
        if not words or self._picture_subject(analysis, streams):
            return [], []
        if any(says_all(m.why, words) for m in found[:top_k] if not _only_sounds_like(m)):
            return [], []
        return words, self._sounding_sentences(analysis, words, streams, scope, subject)

    @staticmethod
    def with_heard_again(sounding: list[Unit], words: list[str], found: list[Moment], top_k: int,
                         reader: MemoryReader) -> list[Moment]:
        """``found`` with, first, the sentences of ``sounding`` (best first) that say all the
        query's ``words``: as stored (at ingest, or since taken from a re-hearing), or in a
        recorded re-hearing (retrieval/transcript_versions.py); one moment per memory. The
        decoder was told the words, so a re-hearing the audio check did not take is offered as
        unconfirmed; it still comes before the moments found, none of which quote them."""
        heard: list[Moment] = []
        for u in sounding:
            memory = reader.memory(u.memory_id)
            if memory is None or any(m.segment_id == u.memory_id for m in heard):
                continue
            said = [p for p in memory.transcript if says_all(p.text, words)]
            if said:  # stored words (heard so at ingest: a moment the ranking left out)
                how = "heard again" if not says_all(u.text, words) else ""
                t0, t1, text = said[0].t_start, said[0].t_end, said[0].text
            else:
                version = next((v for v in hearings_since_ingest(memory) if says_all(v["text"], words)), None)
                if version is None:
                    continue
                span = version.get("span") or (memory.t_start, memory.t_end)
                t0, t1, text = float(span[0]), float(span[1]), str(version["text"])
                how = ("heard again with the query as a hint" if version.get("hinted")
                       else "heard again with the query as a hint; the audio check did not confirm it")
            heard.append(Moment(stream_id=u.stream_id, t_start=round(t0, 3), t_end=round(t1, 3),
                                score=max((m.score for m in found), default=0.0),
                                why=f'speech{", " + how if how else ""}: "{excerpt(text, words)}" '
                                    f'(matched: {", ".join(words)})',
                                segment_id=u.memory_id, snippet_uri=u.snippet_uri))
        if not heard:
            return found
        again = {m.segment_id for m in heard}
        return (heard + [m for m in found if m.segment_id not in again])[:top_k]

    @staticmethod
    def _picture_subject(analysis: QueryAnalysis, streams: list[str]) -> str:
        """What a query about a shown picture names ("a picture of a motorcycle" → "motorcycle"),
        "" for any other query: only those scan the key frames' guesses."""
        if not about_pictures(analysis) or not PICTURED.search(analysis.question):
            return ""
        return subject_phrase(analysis.question, streams)

    def _guessed(self, phrase: str, scope: Scope, reader: MemoryReader,
                 found: list[Moment], top_k: int) -> list[Moment]:
        """Pictures nothing said or written about: key frames whose classifier guesses resemble
        ``phrase`` (the query's subject: "motorcycle" → "moped, a motorbike"), scored as that
        share of the best text match, so a sure match still ranks first. A scan of the scope's
        key frames (retrieval/guess_match.py)."""
        streams = reader.streams_in(scope)
        units = self.key_frames.units(streams, scope)
        if not units:
            return []
        # a guess of the thing's broad kind counts too: "a horse" is found where a silhouette was
        # guessed "a dog" (both animals to the describer)
        support = guess_support([phrase], units, self.scorer, self.vocabulary.kinds([phrase], streams, scope))[0]
        top = max((m.score for m in found), default=1.0) or 1.0
        if float(support.max()) < GUESS_MIN:
            return self._unnamed(phrase, streams, scope, top, top_k)
        had = {m.segment_id: m for m in found}
        out: list[Moment] = []
        for k in np.argsort(-support)[:top_k]:
            g = float(support[k])
            if g < GUESS_MIN:
                break
            u = units[k]
            found_too = had.get(u.memory_id)
            if found_too is not None and _quotes_any(found_too.why, phrase.split()):
                continue  # its words name the subject: it ranks with the named moments
            # found by unrelated words too (a warm vector cache finds more memories): listed
            # with the guessed pictures, with the better of the two scores
            score = max(top * g, found_too.score if found_too is not None else 0.0)
            names = ", ".join(n for n, _ in merge_guesses(u.guesses, u.part_guesses)[:3])
            out.append(Moment(stream_id=u.stream_id, t_start=round(u.t_start, 3), t_end=round(u.t_end, 3),
                              score=round(score, 4), why=f"key frames guessed: {names} (not a sure sighting)",
                              segment_id=u.memory_id, snippet_uri=u.snippet_uri))
        return out


    def _unnamed(self, phrase: str, streams: list[str], scope: Scope, top: float, top_k: int) -> list[Moment]:
        """A picture of something no key frame was recognised as: a thing the describer has
        no name for ("a picture of coins" to an ImageNet classifier), or one it can name but
        did not see in the picture shown (blurred, grey, seen from an odd angle). The
        stretches of key frames that look like nothing else in their stream
        (retrieval/distinct_frames.py; those surely named as something else left out), most
        distinct first, or where no key frame has stored features, the pictures whose guesses
        stand out in one stretch (retrieval/distinct_picture.py); as candidates, never as
        sightings: where a picture was shown is all that is known."""
        if self.vocabulary.unnameable([phrase], streams, scope) == [True]:
            why = f"nothing can name {phrase}, so not a sure sighting"
        else:
            why = f"no key frame was recognised as {phrase}, so not a sure sighting"
        out = [Moment(stream_id=d.stream_id, t_start=round(d.t_start, 3), t_end=round(d.t_end, 3),
                      score=round(top * UNNAMED_SHARE * (1.0 + d.distinctness) / 2, 4),
                      why=f"a picture unlike anything else in {d.stream_id}"
                          + (f" (guessed: {d.guess})" if d.guess else "") + f"; {why}",
                      segment_id=d.memory_id, snippet_uri=d.snippet_uri)
               for d in self.distinct.of(streams, scope)]
        if not out:
            out = self._standing_out(why, streams, scope, top)
        return out[:top_k]

    def _standing_out(self, why: str, streams: list[str], scope: Scope, top: float) -> list[Moment]:
        """The pictures whose guesses stand out in one stretch of their stream, for memories
        kept without key-frame features (``why``: why the picture asked for is not named)."""
        out: list[Moment] = []
        for sid in streams:
            units = self.key_frames.units([sid], scope, ("visual", "ocr"))
            for o in stand_outs(units):
                if o.p >= SURE_GUESS:
                    continue
                first = o.units[0]
                out.append(Moment(stream_id=sid, t_start=round(o.t_start, 3), t_end=round(o.t_end, 3),
                                  score=round(top * UNNAMED_SHARE * (1.0 + o.p) / 2, 4),
                                  why=f"a picture seen only there (guessed: {o.label}); {why}",
                                  segment_id=first.memory_id, snippet_uri=first.snippet_uri))
        out = list({(m.stream_id, m.t_start): m for m in out}.values())  # one per stretch
        out.sort(key=lambda m: -m.score)
        return out


def with_sounding_like(moments: list[Moment], heard_as: list[Moment], top_k: int) -> list[Moment]:
    """The moments found, then, in the places they leave empty, those that only sound like the
    query's subject (``heard_as``): never above a moment found. (Placed above the found moments
    that quote none of the query's words, they found 3 more of the dev sets' 140 moments and
    2 fewer of the held-out sets' 165; in the empty places only, 1 more of each.)"""
    return moments[:top_k] + heard_as[: max(0, top_k - len(moments))]


def _quotes_any(why: str, words: list[str]) -> bool:
    """Whether a moment's ``why`` quotes one of ``words`` (by stem)."""
    return bool(term_set(why) & term_set(" ".join(words)))


def says_all(text: str, words: list[str]) -> bool:
    """Whether ``text`` holds every one of ``words`` (by stem)."""
    wanted = term_set(" ".join(words))
    return bool(wanted) and wanted <= term_set(text)


# what a moment's ``why`` says when it only points to where something may be
_UNSURE = ("not a sure sighting", "did not confirm", f"({SOUNDS_LIKE_CUE}:")


def holds_all(text: str, terms: list[str]) -> bool:
    """Whether ``text`` holds every one of ``terms`` (stems), those missing written as one word
    in it ("lawn mower" in "Look, the lawnmower is here.")."""
    missing = [t for t in terms if t not in term_set(text)]
    return bool(terms) and (not missing or any("".join(missing) in w for w in re.findall(r"[a-z]+", text.lower())))


def surely_holds(m: Moment, terms: list[str]) -> bool:
    """Whether moment ``m`` quotes every one of ``terms`` (by stem) as something surely said,
    shown, written or heard there: not a guess at a picture, not a sentence that only sounds
    like the words, not one heard again that the audio check did not confirm."""
    return not any(mark in m.why for mark in _UNSURE) and holds_all(m.why, terms)


def _only_sounds_like(m: Moment) -> bool:
    """A moment offered only because its words sound like the query's (see ``_sounding_like``)."""
    return f"({SOUNDS_LIKE_CUE}:" in m.why


def compound_words(question: str, telling_words: list[str], subject: list[str]) -> list[str]:
    """The everyday words of ``subject`` that stand right next to a telling word in
    ``question``, making one name with it ("ferry crossing", "flower show", "reading lamp"):
    misheard together with it, they sound like it only together ("the ferry crossing" heard
    as "Eric Rossing": 0.89 joined, while "ferry" alone sounds most like "for", 1.0). Words
    further off ("takes care" in "who takes care of the calculator") may have been said
    otherwise ("in charge of"), and would only blur the comparison."""
    tokens = re.findall(r"[a-z0-9']+", question.lower())
    out: list[str] = []
    for i, t in enumerate(tokens):
        if t not in telling_words:
            continue
        for j in (i - 1, i + 1):
            if 0 <= j < len(tokens) and tokens[j] in subject and tokens[j] not in telling_words + out:
                out.append(tokens[j])
    return out


def with_kind_heard(near: float, n_words: int) -> float:
    """How near a sentence sounds to a query's subject when it also holds a value of the kind
    the query asks for ("the colour of Hannah's anchor" and "I have entered the bunker
    purple"): the value counts as one more word of the subject, worth
    :data:`~retrieval.value_kinds.KIND_WEIGHT` of one, found in full. A recogniser that
    mishears a sentence's names most often still gets its value right, so such a sentence
    is worth hearing again before one that only sounds alike (0.73 → 0.79 for that one)."""
    return (near * n_words + KIND_WEIGHT) / (n_words + KIND_WEIGHT)


def telling(subject: list[str]) -> list[str]:
    """The words of a query's subject that tell it apart: those no everyday word (names,
    things: "seagull", "Tom"), or all of them when every one is everyday."""
    return [w for w in subject if not_everyday(w)] or list(subject)


def merge_repeats(moments: list[Moment], gap_s: float) -> list[Moment]:
    """Join moments of one stream that follow each other within ``gap_s`` and matched for the
    same reason (a caption that stays on screen across two memories is one moment)."""
    out: list[Moment] = []
    for m in sorted(moments, key=lambda m: (m.stream_id, m.t_start)):
        last = out[-1] if out else None
        if (
            last is not None
            and last.stream_id == m.stream_id
            and m.t_start <= last.t_end + gap_s
            and _first_reason(last.why) == _first_reason(m.why)
        ):
            better = m if m.score > last.score else last
            out[-1] = Moment(
                stream_id=last.stream_id,
                t_start=last.t_start,
                t_end=max(last.t_end, m.t_end),
                score=better.score,
                why=better.why,
                segment_id=last.segment_id,
                snippet_uri=last.snippet_uri,
            )
        else:
            out.append(m)
    return out


def _first_reason(why: str) -> str:
    return why.split("; ", 1)[0]
