"""Where a picture was shown, from how the key frames look: a run of alike key frames unlike
anything else in its stream is a candidate; the background coming back, dark frames, signs and
surely named pictures are not; search offers the candidates for a thing nothing can name."""

from __future__ import annotations

import numpy as np
import pytest

from episodic.core.query import Scope
from episodic.core.records import FrameObservation, ShortTermMemory, SnippetRef
from episodic.retrieval.distinct_frames import (
    MIN_DISTINCT,
    DistinctFrames,
    distinct_stretches,
    key_frames,
    stretches,
)
from tests.fakes import ListingStore

DIM = 16


def _look(k: int, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    """A feature vector mostly along axis ``k`` (frames of one look share an axis)."""
    v = np.full(DIM, 0.05, dtype=np.float32)
    v[k] = 1.0
    if noise:
        v = v + noise * np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v


def _memory(stream: str, t0: float, frames: list[tuple[float, np.ndarray, FrameObservation]]) -> ShortTermMemory:
    return ShortTermMemory(
        id=f"{stream}@{t0}", stream_id=stream, t_start=t0, t_end=t0 + 10.0, vector=np.zeros(4),
        frames=[f for _, _, f in frames], frame_features=[(t, v) for t, v, _ in frames],
        snippets=[SnippetRef(f"file:///snippets/{stream}-{t0:g}.mp4", t0, t0 + 10.0)])


def _frame(t: float, look: np.ndarray, **kw) -> tuple[float, np.ndarray, FrameObservation]:
    kw = {"description": "a scene", **kw}
    return t, look, FrameObservation(t=t, **kw)


def _stream(pictures: dict[float, tuple[np.ndarray, dict]], stream: str = "cam", length: int = 12) -> list[ShortTermMemory]:
    """A stream whose background alternates between two looks every 10 s, with ``pictures``
    (t → look, observation fields) instead of the background at those key frames."""
    memories = []
    for i in range(length):
        t = 10.0 * i
        look, kw = pictures.get(t, (_look(i % 2, 0.05, i), {}))
        memories.append(_memory(stream, t, [_frame(t, look, **kw)]))
    return memories


def test_a_picture_shown_once_is_the_most_distinct_stretch_and_lasts_until_the_next_key_frame():
    memories = _stream({40.0: (_look(5), {"guesses": [("a keyboard", 0.13)]}),
                        50.0: (_look(5, 0.02, 9), {"guesses": [("a keyboard", 0.11)]})})
    frames = key_frames(memories)
    assert [f.t for f in frames] == [10.0 * i for i in range(12)]
    assert (4, 6) in stretches(frames)  # the picture's two alike frames are one stretch
    found = distinct_stretches("cam", frames)
    assert found, "the picture was not found"
    best = found[0]
    assert (best.t_start, best.t_end, best.memory_id, best.guess) == (40.0, 60.0, "cam@40.0", "a keyboard")
    assert best.distinctness > 0.8
    # the alternating background comes back all the time: never a candidate
    assert all(s.t_start in (40.0,) or s.distinctness < best.distinctness for s in found)
    assert not any(s.t_start in (0.0, 10.0, 20.0, 70.0) for s in found)


@pytest.mark.parametrize("kw", [{"quality": "dark"}, {"ocr_text": "OPEN UNTIL 9 PM"}])
def test_dark_frames_and_signs_are_never_candidates(kw):
    memories = _stream({40.0: (_look(5), kw)})
    assert distinct_stretches("cam", key_frames(memories)) == []


def test_a_surely_named_picture_is_marked_named_and_left_out_unless_asked_for():
    memories = _stream({40.0: (_look(5), {"guesses": [("a cat", 0.9), ("tabby cat", 0.5)]}),
                        50.0: (_look(5, 0.02, 3), {"guesses": [("Egyptian cat", 0.6), ("a cat", 0.4)]})})
    (found,) = distinct_stretches("cam", key_frames(memories))
    assert found.named and found.guess == "a cat"
    assert found.guesses[:3] == (("a cat", 0.9), ("Egyptian cat", 0.6), ("tabby cat", 0.5))
    distinct = DistinctFrames(ListingStore(memories))
    assert distinct.of(["cam"], Scope()) == []
    assert distinct.of(["cam"], Scope(), named=True) == [found]


def test_stray_marks_on_a_photo_are_not_writing_and_a_picture_shown_twice_is_background():
    memories = _stream({40.0: (_look(5), {"ocr_text": "米*"})})
    assert [s.t_start for s in distinct_stretches("cam", key_frames(memories))] == [40.0]
    # the same look again a minute later: the camera's surroundings, not a picture shown once
    memories = _stream({20.0: (_look(5), {}), 90.0: (_look(5), {})})
    assert all(s.distinctness < MIN_DISTINCT for s in distinct_stretches("cam", key_frames(memories)))


def test_frames_without_features_and_streams_with_nothing_to_compare_give_nothing():
    memories = _stream({40.0: (_look(5), {})})
    for m in memories:
        m.frame_features = []
    assert key_frames(memories) == []
    one = [_memory("cam", 0.0, [_frame(0.0, _look(5))])]
    assert distinct_stretches("cam", key_frames(one)) == []


def test_stretches_are_kept_per_stream_version_and_cut_to_the_scope():
    memories = _stream({40.0: (_look(5), {})}) + _stream({70.0: (_look(7), {})}, stream="cam2")
    store = ListingStore(memories)
    distinct = DistinctFrames(store)
    found = distinct.of(["cam", "cam2"], Scope())
    assert {(s.stream_id, s.t_start) for s in found} >= {("cam", 40.0), ("cam2", 70.0)}
    read = store.listings
    assert distinct.of(["cam"], Scope(t_min=60.0)) == []  # the picture ended before the scope
    assert [s.t_start for s in distinct.of(["cam2"], Scope(t_min=60.0, t_max=75.0))] == [70.0]
    assert store.listings == read  # read once per stream until it changes
    memories.append(_memory("cam", 120.0, [_frame(120.0, _look(1))]))
    distinct.of(["cam"], Scope())
    assert store.listings == read + 1


@pytest.mark.parametrize(("thing", "nameable", "why"), [
    ("coins", False, "nothing can name coins"),  # no ImageNet class
    ("clock", True, "no key frame was recognised as clock"),  # a class, not seen in the photo
])
def test_search_for_a_picture_nothing_recognised_offers_the_distinct_stretch(thing, nameable, why):
    """"a picture of coins" to an ImageNet classifier, or "a picture of a clock" where no key
    frame was recognised as one (a blurred photo guessed as "a keyboard"): the stretch unlike
    the rest of its stream is offered as a candidate, said to be no sighting, not nothing; the
    surely named cat is not offered, and is found as itself when asked for."""
    from episodic.config import Settings
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.retrieval.detailed import MemoryReader, TextScorer
    from episodic.retrieval.moments import MomentSearch

    memories = _stream({30.0: (_look(5), {"guesses": [("a keyboard", 0.13)]}),
                        80.0: (_look(8), {"guesses": [("a cat", 0.9)], "description": "a cat"})})
    for m in memories:
        m.metadata = {"models": {"describer": OfflineVisualDescriber.model_id}}
    store = ListingStore(memories)
    search = MomentSearch(store, TextScorer(MiniLMEmbedder(Settings())), Settings().retrieval)
    assert search.vocabulary.unnameable([thing], ["cam"], Scope()) == [not nameable]
    found = search._guessed(thing, Scope(), MemoryReader(store), [], 5)
    assert [(m.stream_id, m.t_start, m.t_end) for m in found] == [("cam", 30.0, 40.0)], found
    assert found[0].segment_id == "cam@30.0" and found[0].snippet_uri == "file:///snippets/cam-30.mp4"
    assert "unlike anything else in cam" in found[0].why
    assert f"{why}, so not a sure sighting" in found[0].why
    cat = search._guessed("cat", Scope(), MemoryReader(store), [], 5)
    assert (cat[0].t_start, cat[0].why.startswith("key frames guessed")) == (80.0, True), cat


def _ask_said_while(memories, wall, pictured, said, question, topics):
    """Ask ``question`` with ``topics`` of one stream whose key frames at ``pictured`` times keep
    their own guesses (the others are the ``wall``'s), each memory saying ``said[t]``."""
    from episodic.config import Settings
    from episodic.core.query import QueryType
    from episodic.core.records import TranscriptPiece
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer, units_of
    from episodic.retrieval.query_analysis import QueryAnalysis, content_terms, key_terms_of
    from episodic.retrieval.question_shape import question_shape

    for m in memories:
        m.metadata = {"models": {"describer": OfflineVisualDescriber.model_id}}
        if m.t_start not in pictured:
            m.frames[0].guesses = list(wall)
        if said.get(m.t_start):
            m.transcript = [TranscriptPiece(m.t_start + 1.0, m.t_start + 4.0, said[m.t_start])]
    store = ListingStore(memories)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    everything = [u for m in memories for u in units_of(m, None, False)]
    answerer._candidates = lambda text, scope, reader, extra: list(everything)
    terms = content_terms(question)
    analysis = QueryAnalysis(question, QueryType.VIDEO_AUDIO, {}, "", terms, "any", shape=question_shape(question),
                             key_terms=key_terms_of(question, terms))
    return answerer.answer(analysis, np.zeros(384), topics, [], Scope(), MemoryReader(store))


def test_what_was_said_while_a_picture_nothing_can_name_was_shown_comes_from_the_distinct_stretch():
    """"What was mentioned while a picture of coins was on screen?": the coins are guessed
    as "a keyboard", as the walls are all through the stream, so no guess stands out; how the
    key frames look places the picture, and what was said then answers (as a guess)."""
    wall = [("a keyboard", 0.12), ("Windsor tie", 0.08)]
    memories = _stream({30.0: (_look(5), {"guesses": [("a keyboard", 0.13), ("thimble", 0.05)]})})
    said = {30.0: "Priya is meeting the caretaker at twelve.", 60.0: "The price of the rope went up.",
            90.0: "Chen bought three magazines."}
    topics = ["the price of the rope", "Priya's appointment with the caretaker", "Chen and the magazines"]
    draft = _ask_said_while(memories, wall, (30.0,), said,
                            "What was mentioned while a picture of coins was on screen?", topics)
    assert draft is not None and draft.choice_index == 1 and draft.caps["route"] == 11.0, draft
    assert draft.confidence <= 0.25


def test_what_was_said_while_an_everyday_picture_named_wrongly_was_shown_comes_from_any_stand_out():
    """"What was mentioned while a picture of a colour wheel was on screen?": the describer has
    no name for a colour wheel and called it "a ball", surely, so it is not among the pictures
    no sure guess named; there the one such picture's sentence was misheard and tells no
    option. Every stand-out picture is then looked at, the surely named ones too: the story
    hour was said while one of them was on screen, Chen's magazines while none was."""
    from episodic.reasoning.structured import ELIMINATION_SUPPORT

    wall = [("a keyboard", 0.12), ("Windsor tie", 0.08)]
    memories = _stream({30.0: (_look(5), {"guesses": [("a remote control", 0.14)]}),
                        80.0: (_look(6), {"guesses": [("a ball", 0.83), ("croquet ball", 0.4)]})})
    said = {30.0: "The vlog is a thing you'll long have to account to.", 80.0: "The story of her has moved to room 210.",
            100.0: "Chen bought three magazines.", 10.0: "The story hour is on Fridays."}
    draft = _ask_said_while(memories, wall, (30.0, 80.0), said,
                            "What was mentioned while a picture of a colour wheel was on screen?",
                            ["Chen and the magazines", "the room for the story hour"])
    assert draft is not None and draft.choice_index == 1 and draft.caps["route"] == 11.0, draft
    assert "stand_outs" in draft.caps and draft.confidence <= ELIMINATION_SUPPORT / 2


def test_of_two_options_nothing_can_name_the_people_detectors_keep_the_one_that_fits():
    """"Which of these appeared in a picture: an astronaut, coins, a cup of coffee?" with
    neither an astronaut nor coins nameable to the classifier: a picture where the detectors
    found no one is coins; one with a face is the astronaut."""
    from episodic.config import Settings
    from episodic.core.query import QueryType
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer
    from episodic.retrieval.query_analysis import QueryAnalysis, content_terms, key_terms_of
    from episodic.retrieval.question_shape import question_shape

    def ask(memories, question, options):
        for m in memories:
            m.metadata = {"models": {"describer": OfflineVisualDescriber.model_id}}
        store = ListingStore(memories)
        answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())),
                                      settings=Settings().retrieval)
        terms = content_terms(question)
        analysis = QueryAnalysis(question, QueryType.VIDEO, {}, "", terms, "any", shape=question_shape(question),
                                 key_terms=key_terms_of(question, terms))
        return answerer.answer(analysis, np.zeros(384), options, [], Scope(), MemoryReader(store))

    question = "Which of these appeared in a picture in the cam recording?"
    options = ["a cup of coffee", "an astronaut", "coins", "a motorcycle"]
    no_one = _stream({30.0: (_look(5), {"guesses": [("a keyboard", 0.13)]})})
    draft = ask(no_one, question, options)
    assert draft is not None and draft.choice_index == 2 and draft.caps.get("eliminated") == 3.0, draft
    someone = _stream({30.0: (_look(5), {"guesses": [("a keyboard", 0.13)], "faces": 1,
                                          "description": "a scene; a face; colours: white"})})
    draft = ask(someone, question, options)
    assert draft is not None and draft.choice_index == 1, draft


def test_options_that_name_people_and_frames_that_show_them():
    from episodic.retrieval.detailed import Unit
    from episodic.retrieval.people_words import names_a_person, shows_people

    assert [names_a_person(o) for o in ("an astronaut", "a man with a camera", "two children", "a crowd")] == [True] * 4
    assert [names_a_person(o) for o in ("coins", "a cat", "a cup of coffee", "a teddy bear", "a manhole")] == [False] * 5

    def frame(text: str, modality: str = "visual") -> Unit:
        return Unit("cam", "cam@0", 0.0, 5.0, modality, text)

    from episodic.memory.people import people_phrase

    # read back as the describer writes it (memory/people.py)
    for people, faces in ((1, 0), (0, 1), (1, 1), (3, 0), (0, 2), (7, 7)):
        assert shows_people([frame(f"a scene; {people_phrase(people, faces)}; colours: grey")]), (people, faces)
    assert not shows_people([frame(f"a scene{people_phrase(0, 0)}; colours: grey")])
    assert shows_people([frame("a scene; one person, a face; colours: blue")])
    assert shows_people([frame("a scene; three people; colours: grey")])
    assert not shows_people([frame('on-screen text: "STAFF ONLY, TWO PEOPLE MAX"; a scene; colours: white')])
    assert not shows_people([frame("one person", "speech"), frame("a cat; colours: orange")])


def test_what_a_picture_nobody_talked_about_showed_is_guessed_where_the_stream_looks_least_like_itself():
    """The rocket is guessed at only 0.12, less than the walls' own guesses, so no guess stands
    out; the stretch most unlike the rest of the stream is where it was shown, and its best
    guess, hedged, is the answer."""
    from episodic.config import Settings
    from episodic.core.query import QueryType
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer
    from episodic.retrieval.query_analysis import QueryAnalysis, content_terms, key_terms_of
    from episodic.retrieval.question_shape import question_shape

    memories = _stream({0.0: (_look(5), {"guesses": [("a rocket", 0.12), ("pole", 0.09), ("a flag", 0.08)]})})
    for i, m in enumerate(memories[1:]):
        m.frames[0].guesses = [("theater curtain", 0.2 if i == 3 else 0.04), ("velvet", 0.06)]
    for m in memories:
        m.metadata = {"models": {"describer": OfflineVisualDescriber.model_id}}
    store = ListingStore(memories)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    def answer(question: str):
        terms = content_terms(question)
        analysis = QueryAnalysis(question, QueryType.VIDEO, {}, "", terms, "any", shape=question_shape(question),
                                 key_terms=key_terms_of(question, terms))
        return answerer.answer(analysis, np.zeros(384), [], [], Scope(), MemoryReader(store))

    draft = answer("In the cam recording a picture was shown that nobody talked about. What did it show?")
    assert draft is not None and draft.answer.startswith("Probably a rocket (or: pole, a flag;"), draft
    assert "cam, 0.0–10.0 s" in draft.answer and draft.caps["route"] == 9.0 and draft.confidence <= 0.12
    # asked whether a picture of something else was shown, a guess at this one is no answer
    draft = answer("In the cam recording, was there a picture of a guitar on screen?")
    assert draft is None or not draft.answer.startswith("Probably"), draft


@pytest.mark.parametrize(("part", "said"), [(0.82, "Probably a rocket"), (0.3, "Probably a lamp")])
def test_what_a_picture_showed_is_the_crop_that_holds_it_when_that_is_surer(part, said):
    """A rocket shown in part of a busy frame is guessed as "a lamp" 0.26 whole and "a rocket"
    0.82 in the crop that holds it: the open answer says the crop's guess. A crop's guess that
    is not sure (0.3) does not replace the whole frame's."""
    from episodic.config import Settings
    from episodic.core.query import QueryType
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer
    from episodic.retrieval.query_analysis import QueryAnalysis, content_terms
    from episodic.retrieval.question_shape import question_shape

    picture = {"guesses": [("a lamp", 0.26), ("candle", 0.25)], "part_guesses": [("a rocket", part), ("projectile", 0.2)]}
    store = ListingStore(_stream({40.0: (_look(5), picture)}))
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    question = "In the cam recording a picture was shown that nobody talked about. What did it show?"
    analysis = QueryAnalysis(question, QueryType.VIDEO, {}, "", content_terms(question), "any",
                             shape=question_shape(question))
    draft = answerer.pictured_open(analysis, (), Scope(), MemoryReader(store))
    assert draft is not None and draft.answer.startswith(said) and "40.0–50.0 s" in draft.answer, draft
    assert draft.confidence <= 0.45


def test_which_picture_was_shown_believes_the_guess_where_a_picture_was_shown():
    """A texture guessed "a clock" 0.15 on an ordinary key frame, and a picture guessed
    "a dog" 0.58 on the stretch unlike the rest of the stream: the texture's guess counts for
    half there, so the picture's (an animal: the horse) is what was shown. In a stream with
    no such stretch every key frame counts in full."""
    from episodic.config import Settings
    from episodic.core.query import QueryType
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.reasoning.structured import OFF_PICTURE_WEIGHT, StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer
    from episodic.retrieval.query_analysis import QueryAnalysis, content_terms
    from episodic.retrieval.question_shape import question_shape

    memories = _stream({20.0: (_look(0, 0.05, 2), {"guesses": [("a clock", 0.15)]}),
                        70.0: (_look(5), {"guesses": [("a dog", 0.58)]})})
    for m in memories:
        m.metadata = {"models": {"describer": OfflineVisualDescriber.model_id}}
    store = ListingStore(memories)
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    question = "Which of these appeared in a picture in the cam recording?"
    analysis = QueryAnalysis(question, QueryType.VIDEO, {}, "", content_terms(question), "any",
                             shape=question_shape(question))
    draft = answerer.pictured(analysis, ["galaxies in space", "a clock", "an astronaut", "a horse"], Scope(),
                              MemoryReader(store))
    assert draft is not None and draft.choice_index == 3, draft
    units = answerer._visual_units(["cam"], Scope())
    weights = {u.t_start: float(w) for u, w in zip(units, answerer._picture_weights(units), strict=True)}
    assert weights[70.0] == 1.0 and weights[20.0] == OFF_PICTURE_WEIGHT
    for m in memories:
        m.frame_features = []
    plain = StructuredAnswerer(ListingStore(memories), scorer=answerer.scorer, settings=Settings().retrieval)
    units = plain._visual_units(["cam"], Scope())
    assert set(plain._picture_weights(units).tolist()) == {1.0}


def test_which_camera_showed_a_thing_nothing_can_name_is_the_stream_whose_stand_out_nothing_named():
    """"Which camera showed coins?": the classifier's guesses of coins are guesses of something
    else ("a remote control" 0.18), so they cannot point to coins by name; the cup's stream
    (its stand-out guessed "a cup" 0.9) and the rocket's (0.85 in a crop) are not it; the
    stream whose stand-out nothing named is, as a guess. Asked without options, the answer
    says it is a guess."""
    from episodic.config import Settings
    from episodic.core.query import QueryType
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.reasoning.structured import UNANCHORED_SUPPORT, StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer
    from episodic.retrieval.query_analysis import QueryAnalysis, content_terms, key_terms_of
    from episodic.retrieval.question_shape import question_shape

    memories = (_stream({30.0: (_look(5), {"guesses": [("a cup", 0.9), ("espresso", 0.4)]})}, stream="cup-cam")
                + _stream({60.0: (_look(6), {"guesses": [("a remote control", 0.18)]})}, stream="desk-cam")
                + _stream({90.0: (_look(7), {"guesses": [("a lamp", 0.2)], "part_guesses": [("a rocket", 0.85)]})},
                          stream="yard-cam"))
    from episodic.core.records import StreamInfo
    from episodic.memory.in_memory_store import InMemoryStore

    for m in memories:
        m.metadata = {"models": {"describer": OfflineVisualDescriber.model_id}}
        m.vector = np.ones(4, dtype=np.float32)
    store = InMemoryStore()  # which-stream questions also search each stream's vectors
    store.ensure_schema(4, DIM)
    store.upsert_memories(memories)
    for sid in ("cup-cam", "desk-cam", "yard-cam"):
        store.upsert_stream(StreamInfo(sid, t_end=120.0, memories=12))
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)

    def ask(question, options):
        terms = content_terms(question)
        analysis = QueryAnalysis(question, QueryType.VIDEO, {}, "", terms, "any", shape=question_shape(question),
                                 key_terms=key_terms_of(question, terms))
        if options:
            return answerer.answer(analysis, np.ones(4), options, [], Scope(), MemoryReader(store))
        return answerer.which_stream_open(analysis, np.ones(4), ["cup-cam", "desk-cam", "yard-cam"],
                                          Scope(), MemoryReader(store))

    streams = ["yard-cam", "cup-cam", "desk-cam"]
    draft = ask("Which camera showed coins?", streams)
    assert draft is not None and draft.choice_index == 2, draft
    assert "unnamed_picture" in draft.caps and draft.confidence <= UNANCHORED_SUPPORT
    # a thing the describer can name is not found this way (its guesses say where it was)
    draft = ask("Which camera showed a motorcycle?", streams)
    assert draft is None or "unnamed_picture" not in draft.caps, draft
    open_answer = ask("In which recording were coins shown?", [])
    assert open_answer is not None and open_answer.answer.startswith("probably desk-cam"), open_answer


def test_which_camera_showed_a_thing_is_not_answered_by_a_show_said_elsewhere():
    """"Which camera showed a rocket?": its "showed" is a cue that the question is about
    pictures, like "shows" and "shown", no word to find. Found in "The flower show is in room
    116" it had made that stream the answer, with the rocket guessed on the other stream's
    picture."""
    from episodic.config import Settings
    from episodic.core.query import QueryType
    from episodic.core.records import StreamInfo, ThetaEvent, TranscriptPiece
    from episodic.memory.in_memory_store import InMemoryStore
    from episodic.memory.text_embedder import MiniLMEmbedder
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.detailed import MemoryReader, TextScorer
    from episodic.retrieval.query_analysis import QueryAnalysis, content_terms, key_terms_of
    from episodic.retrieval.question_shape import question_shape

    def analysed(question):
        terms = content_terms(question)
        return QueryAnalysis(question, QueryType.VIDEO, {}, "", terms, "any", shape=question_shape(question),
                             key_terms=key_terms_of(question, terms))

    garden = _stream({}, stream="garden-cam")
    garden[4].transcript = [TranscriptPiece(41.0, 43.0, "The flower show is in room 116.")]
    library = _stream({30.0: (_look(5), {"guesses": [("a rocket", 0.3), ("a lamp", 0.1)]})}, stream="library-cam")
    memories = garden + library
    for m in memories:
        m.metadata = {"models": {"describer": OfflineVisualDescriber.model_id}}
        m.vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
    store = InMemoryStore()  # searched with the text embedder's 384-d vectors
    store.ensure_schema(384, DIM)
    store.upsert_memories(memories)
    for sid in ("garden-cam", "library-cam"):
        store.upsert_stream(StreamInfo(sid, t_end=120.0, memories=12))
    said = garden[4]  # its event's summary, as the composer writes it
    store.upsert_events([ThetaEvent(f"{said.id}:e", "garden-cam", said.id, said.t_start, said.t_end,
                                    'Someone says "The flower show is in room 116". Seen: a picture in grey, still.',
                                    garden[4].vector, garden[4].vector)])
    answerer = StructuredAnswerer(store, scorer=TextScorer(MiniLMEmbedder(Settings())), settings=Settings().retrieval)
    question = analysed("Which camera showed a rocket?")
    assert question.terms == ["rocket"] and content_terms("What is shown, what shows, what showed?") == []
    q_vec = answerer.scorer.embed([question.question])[0]
    draft = answerer.answer(question, q_vec, ["garden-cam", "library-cam"], [], Scope(), MemoryReader(store))
    assert draft is not None and draft.choice_index == 1, draft
