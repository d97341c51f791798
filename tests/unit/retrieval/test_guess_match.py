"""Choosing between given options with the classifier's unsure guesses (retrieval/guess_match.py)
and the "what was pictured" routes built on them (reasoning/structured.py)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from episodic.config import Settings
from episodic.core.query import QueryType, Scope
from episodic.core.records import FrameObservation, ShortTermMemory
from episodic.retrieval.detailed import MemoryReader, TextScorer, Unit, units_of
from episodic.retrieval.guess_match import GUESS_CAP, KeyFrameUnits, guess_support, subject_phrase
from tests.fakes import ListingStore

OPTIONS = ["a motorcycle", "a clock", "a cat", "a cup of coffee"]


@pytest.fixture(scope="module")
def scorer() -> TextScorer:
    from episodic.memory.text_embedder import MiniLMEmbedder

    return TextScorer(MiniLMEmbedder(Settings()))


def _unit(guesses, stream_id="market-cam", t0=0.0) -> Unit:
    return Unit(stream_id, f"{stream_id}@{t0}", t0, t0 + 5.0, "visual", "a scene; colours: grey",
                guesses=tuple(guesses))


def test_a_guess_supports_the_option_it_leans_to(scorer: TextScorer) -> None:
    units = [_unit([("moped", 0.54), ("a motorbike", 0.57), ("tricycle", 0.06)]),
             _unit([("wall clock", 0.3), ("a clock", 0.32)]),
             _unit([("a cup", 0.6), ("espresso", 0.5)])]
    s = guess_support(OPTIONS, units, scorer)
    assert s.shape == (4, 3)
    assert s[0, 0] > 0.3 and s[1:, 0].max() == 0.0  # the motorbike frame: motorcycle only
    assert s[1, 1] > 0.1 and s[[0, 2, 3], 1].max() == 0.0
    assert s[3, 2] > 0.3 and s[1, 2] == 0.0  # "a cup" is nearer coffee than a clock
    assert float(s.max()) <= 1.0


def test_guesses_between_two_options_or_unrelated_support_nothing(scorer: TextScorer) -> None:
    # "space shuttle" sits between a rocket and an astronaut; a keyboard resembles none
    s = guess_support(["a rocket", "an astronaut"], [_unit([("space shuttle", 0.9)])], scorer)
    assert s.max() == 0.0
    s = guess_support(OPTIONS, [_unit([("typewriter keyboard", 0.9), ("thimble", 0.1)])], scorer)
    assert s.max() == 0.0
    assert guess_support(OPTIONS, [_unit([])], scorer).max() == 0.0  # no guesses, no support


def test_the_subject_of_a_which_camera_question() -> None:
    streams = ["market-cam", "school-cam"]
    assert subject_phrase("In which recording did a motorcycle appear on screen?", streams) == "motorcycle"
    assert subject_phrase("Which camera showed a cup of coffee?", streams) == "cup coffee"
    assert subject_phrase("Which camera showed the school-cam sign?", streams) == ""


def _memory(stream_id: str, t0: float, guesses, description: str = "a scene; colours: grey") -> ShortTermMemory:
    return ShortTermMemory(
        id=f"{stream_id}@{t0}", stream_id=stream_id, t_start=t0, t_end=t0 + 8.0, vector=np.zeros(4),
        frames=[FrameObservation(t=t0, description=description, guesses=list(guesses)),
                FrameObservation(t=t0 + 4.0, description=description, guesses=[("a lamp", 0.2)])],
    )


MEMORIES = [
    _memory("market-cam", 0.0, [("a cup", 0.6), ("espresso", 0.55)]),
    _memory("market-cam", 8.0, [("moped", 0.5), ("a motorbike", 0.55)]),
    _memory("school-cam", 0.0, [("Egyptian cat", 0.7), ("a cat", 0.9)]),
    _memory("school-cam", 8.0, [], description="a clock; colours: white"),  # a sure label, said
]


def _analysis(question: str) -> SimpleNamespace:
    from episodic.retrieval.question_shape import question_shape

    return SimpleNamespace(question=question, query_type=QueryType.VIDEO, asks_text=False,
                           preferred_modalities=("ocr", "visual"), shape=question_shape(question),
                           terms=[], key_terms={})


def test_key_frame_scans_are_kept_per_stream_and_handed_out_as_copies() -> None:
    store = ListingStore(list(MEMORIES))
    frames = KeyFrameUnits(store)
    first = frames.units(["market-cam", "school-cam"], Scope())
    assert [u.memory_id for u in first] == [m.id for m in MEMORIES] and store.listings == 2
    first[0].score, first[0].fuzzy_terms = 9.0, {"mutated"}
    first[1].fuzzy_terms.add("mutated")
    again = frames.units(["market-cam", "school-cam"], Scope())
    assert store.listings == 2  # nothing changed: read from what was kept
    assert again[0].score == 0.0 and not again[0].fuzzy_terms and not again[1].fuzzy_terms
    # the time range and the modalities are the request's
    assert [u.memory_id for u in frames.units(["market-cam"], Scope(t_min=9.0))] == ["market-cam@8.0"]
    assert frames.units(["school-cam"], Scope(t_max=-1.0)) == []
    # a stream that grows is read again; a stream that is gone holds nothing
    store.memories.append(_memory("market-cam", 16.0, [("a cat", 0.4)]))
    grown = frames.units(["market-cam"], Scope())
    assert store.listings == 3 and [u.memory_id for u in grown][-1] == "market-cam@16.0"
    store.memories = [m for m in store.memories if m.stream_id != "school-cam"]
    assert frames.units(["school-cam"], Scope()) == []


def test_key_frame_units_kept_are_bounded(monkeypatch) -> None:
    import episodic.retrieval.guess_match as gm

    monkeypatch.setattr(gm, "KEPT_MEMORIES", 2)
    store = ListingStore(list(MEMORIES))
    frames = KeyFrameUnits(store)
    frames.units(["market-cam"], Scope())
    frames.units(["school-cam"], Scope())  # two more memories: market-cam's are let go
    frames.units(["school-cam"], Scope())
    assert store.listings == 2
    frames.units(["market-cam"], Scope())
    assert store.listings == 3
    # a stream larger than one scan reads only the request's time range, every time
    monkeypatch.setattr(gm, "MAX_MEMORIES", 1)
    assert [u.memory_id for u in frames.units(["market-cam"], Scope(t_min=9.0))] == ["market-cam@8.0"]
    assert store.listings == 4


def test_consecutive_frames_merge_their_guesses() -> None:
    units = [u for u in units_of(MEMORIES[1]) if u.modality == "visual"]
    assert len(units) == 1  # the same description on both key frames: one unit
    assert dict(units[0].guesses) == {"moped": 0.5, "a motorbike": 0.55, "a lamp": 0.2}


def test_which_of_these_was_pictured_in_a_named_stream(scorer: TextScorer) -> None:
    from episodic.reasoning.structured import StructuredAnswerer

    store = ListingStore(MEMORIES)
    answerer, reader = StructuredAnswerer(store, scorer, Settings().retrieval), MemoryReader(store)
    q = "Which of these was shown on screen in market-cam?"
    draft = answerer.pictured(_analysis(q), ["a cat", "a motorcycle", "an astronaut"], Scope(), reader)
    assert draft is not None and draft.choice_index == 1, draft
    assert draft.confidence <= GUESS_CAP and "guess" in draft.caps
    assert draft.support and draft.support[0].stream_id == "market-cam"
    # a word the describer was sure of counts fully, and beats any guess
    q = "Which of these appeared in a picture in school-cam?"
    draft = answerer.pictured(_analysis(q), ["a motorcycle", "a clock", "a cup of coffee"], Scope(), reader)
    assert draft is not None and draft.choice_index == 1 and draft.caps["lexical"] == 1.0, draft
    # options naming streams are not this route's
    assert answerer.pictured(_analysis("Which camera showed a cat?"), ["market-cam", "school-cam"],
                             Scope(), reader) is None


def test_which_camera_showed_it_falls_back_to_guesses(scorer: TextScorer) -> None:
    from episodic.reasoning.structured import StructuredAnswerer

    store = ListingStore(MEMORIES)
    answerer = StructuredAnswerer(store, scorer, Settings().retrieval)
    guessed = answerer._stream_guesses(_analysis("In which recording did a motorcycle appear on screen?"),
                                       ["school-cam", "market-cam"], Scope())
    assert guessed is not None
    scores, support, evidence, best = guessed
    assert scores[1] > 0.3 and scores[0] == 0.0 and best == scores[1]
    assert support[1] <= GUESS_CAP and evidence[1][0].stream_id == "market-cam"
    assert answerer._stream_guesses(_analysis("In which recording did an astronaut appear on screen?"),
                                    ["school-cam", "market-cam"], Scope()) is None


def test_an_open_question_about_the_picture_is_not_answered_from_guesses(scorer: TextScorer) -> None:
    from episodic.reasoning.structured import StructuredAnswerer, asks_pictured

    store = ListingStore(MEMORIES)
    answerer, reader = StructuredAnswerer(store, scorer, Settings().retrieval), MemoryReader(store)
    q = "What did the photo that appeared in market-cam show?"
    assert asks_pictured(_analysis(q))
    assert answerer.pictured(_analysis(q), [], Scope(), reader) is None  # textures guess as surely
    # a moment-anchored or colour question is not a question about the stream's pictures
    assert not asks_pictured(_analysis("What was shown on screen while the price was discussed in market-cam?"))
    assert not asks_pictured(_analysis("What colour was the picture in market-cam?"))


def test_shown_on_screen_is_about_pictures_but_written_on_screen_is_about_text() -> None:
    from episodic.retrieval.guess_match import about_pictures

    def analysis(text_cues, asks_text=True, preferred=("ocr",)):
        return SimpleNamespace(asks_text=asks_text, cues={"text": list(text_cues)}, preferred_modalities=preferred)

    assert about_pictures(analysis(["screen"]))  # "which of these was shown on screen?"
    assert not about_pictures(analysis(["screen", "written"]))  # "what was written on screen?"
    assert not about_pictures(analysis(["sign"]))
    assert about_pictures(analysis([], asks_text=False, preferred=("ocr", "visual")))
    assert not about_pictures(analysis([], asks_text=False, preferred=("speech",)))


def test_a_visual_question_about_something_only_said_becomes_a_speech_question() -> None:
    from episodic.retrieval.detailed import Recall
    from episodic.retrieval.modality_check import retype_by_evidence, said_not_seen

    said = Unit("garden-cam", "m1", 0.0, 3.0, "speech", "Daniel is fixing the wheelbarrow today.")
    frame = Unit("garden-cam", "m1", 0.0, 3.0, "visual", "a scene; colours: green, grey")
    labelled = Unit("garden-cam", "m2", 5.0, 8.0, "visual", "a wheelbarrow; colours: red")
    from episodic.retrieval.query_analysis import object_terms_of

    things = object_terms_of("Which person is fixing the wheelbarrow?")
    assert said_not_seen(things, [said, frame])
    assert not said_not_seen(things, [said, labelled])  # seen too: stays visual
    assert not said_not_seen(things, [frame])  # never said either
    assert not said_not_seen([], [said])

    from episodic.retrieval.query_analysis import QueryAnalysis

    analysis = QueryAnalysis(question="Which person is fixing the wheelbarrow?", query_type=QueryType.VIDEO,
                             scores={}, why="video", terms=["fix", *things], expects="any",
                             object_terms=things)
    probed = []

    def probe(a):
        probed.append(a.query_type)
        return Recall(units=[said, frame], route="feature+text")

    out = retype_by_evidence(analysis, probe)
    assert out.query_type is QueryType.AUDIO and "said, never seen" in out.why
    assert probed == [QueryType.SUMMARY] and analysis.query_type is QueryType.VIDEO
    assert retype_by_evidence(analysis, lambda a: Recall(units=[said, labelled], route="x")).query_type is QueryType.VIDEO


def test_a_question_asking_in_so_many_words_what_was_shown_stays_visual() -> None:
    """"Which camera showed a cup of coffee?" while coffee was only said ("Ravi ordered 17
    coffees") in one stream and shown, unnamed, in another: the question asks what was seen."""
    from episodic.retrieval.detailed import Recall
    from episodic.retrieval.modality_check import retype_by_evidence
    from episodic.retrieval.query_analysis import QueryAnalysis, object_terms_of

    said = Unit("airport-cam", "m1", 140.0, 147.0, "speech", "Ravi ordered 17 coffees for the team.")
    frame = Unit("zoo-cam", "m2", 54.6, 60.6, "visual", "a scene; colours: orange")
    probe = lambda a: Recall(units=[said, frame], route="x")  # noqa: E731
    for q in ("Which camera showed a cup of coffee?", "In which recording did a cup of coffee appear on screen?",
              "Which recording had a picture of a cup of coffee?"):
        analysis = QueryAnalysis(question=q, query_type=QueryType.VIDEO, scores={}, why="video",
                                 terms=["cup", "coffe"], expects="any", object_terms=object_terms_of(q))
        assert analysis.object_terms
        assert retype_by_evidence(analysis, probe).query_type is QueryType.VIDEO, q
    talk = "Which camera showed someone talking about coffee?"  # names talk: where it was said
    talked = QueryAnalysis(question=talk, query_type=QueryType.VIDEO, scores={}, why="video", terms=["talk", "coffe"],
                           expects="any", object_terms=object_terms_of(talk), cues={"audio": ["talking"]})
    assert retype_by_evidence(talked, probe).query_type is QueryType.AUDIO
    asked = QueryAnalysis(question="Who ordered the coffees?", query_type=QueryType.VIDEO, scores={}, why="video",
                          terms=["order", "coffe"], expects="any", object_terms=object_terms_of("Who ordered the coffees?"))
    assert retype_by_evidence(asked, probe).query_type is QueryType.AUDIO


def test_search_finds_a_picture_only_the_guesses_point_to(scorer: TextScorer) -> None:
    from episodic.retrieval.moments import MomentSearch

    store = ListingStore(MEMORIES)
    search = MomentSearch(store, scorer, Settings().retrieval)
    reader = MemoryReader(store)
    streams = ["market-cam", "school-cam"]
    phrase = search._picture_subject(_analysis("a picture of a motorcycle"), streams)
    assert phrase == "motorcycle"
    assert search._picture_subject(_analysis("someone parks a motorcycle"), streams) == ""  # no scan
    found = search._guessed(phrase, Scope(), reader, [], 5)
    assert found and found[0].stream_id == "market-cam" and found[0].t_start == 8.0, found
    assert "not a sure sighting" in found[0].why and "moped" in found[0].why
    assert search._guessed("astronaut", Scope(), reader, [], 5) == []
    # scoped to another stream: not found there
    assert search._guessed(phrase, Scope(stream_ids=("school-cam",)), reader, [], 5) == []


def test_a_guessed_picture_also_found_by_unrelated_words_stays_with_the_guesses(scorer: TextScorer) -> None:
    """A warm server's vector cache finds more memories by their text, the picture's among them
    (by "colours: grey"); that weak text hit must not push the guessed picture out of the top."""
    from episodic.core.query import Moment
    from episodic.retrieval.moments import MomentSearch

    store = ListingStore(MEMORIES)
    search = MomentSearch(store, scorer, Settings().retrieval)
    reader = MemoryReader(store)
    sid = MEMORIES[1].id
    weak = Moment("market-cam", 8.0, 13.0, 0.9, 'visual: "a scene; colours: grey"', segment_id=sid)
    found = search._guessed("motorcycle", Scope(), reader, [Moment("school-cam", 0.0, 5.0, 1.0, "x"), weak], 5)
    assert found and found[0].segment_id == sid and "not a sure sighting" in found[0].why, found
    assert found[0].score >= 0.9
    # a memory whose words name the subject is not turned into a guess
    named = Moment("market-cam", 8.0, 13.0, 0.3, 'speech: "my motorcycle"', segment_id=sid)
    assert all(m.segment_id != sid for m in search._guessed("motorcycle", Scope(), reader, [named], 5))


def test_search_offers_a_sentence_that_sounds_like_what_was_asked_for(scorer: TextScorer) -> None:
    """"Someone mentions the robin" when the robin was heard as "the rubbing": that sentence is
    offered as perhaps misheard, one per memory not already found, in the places the moments
    found leave empty; never for a query about writing, and not a sentence that sounds like
    nothing asked."""
    from episodic.core.query import Moment
    from episodic.core.records import TranscriptPiece
    from episodic.retrieval.moments import MomentSearch, with_sounding_like

    def said(sid, t0, text):
        return ShortTermMemory(id=f"{sid}@{t0}", stream_id=sid, t_start=t0, t_end=t0 + 7.0, vector=np.zeros(4),
                               transcript=[TranscriptPiece(t0 + 1.0, t0 + 3.0, text)])

    memories = [said("garden-cam", 0.0, "Tom painted the spade red."),
                said("garden-cam", 7.0, "I can hear the rubbing outside."),
                said("kitchen-cam", 0.0, "Let me check the list once more.")]
    search = MomentSearch(ListingStore(memories), scorer, Settings().retrieval)
    streams = ["garden-cam", "kitchen-cam"]
    spoken = SimpleNamespace(question="someone mentions the robin", preferred_modalities=("speech",),
                             asks_text=False, asks_sound=False)
    heard = search._sounding_like(spoken, ["robin"], streams, Scope(), [])
    assert [(m.stream_id, m.t_start) for m in heard] == [("garden-cam", 8.0)], heard
    assert "perhaps misheard" in heard[0].why and "rubbing" in heard[0].why
    found = [Moment("garden-cam", 7.0, 14.0, 0.2, 'speech: "x"', segment_id=memories[1].id)]
    assert search._sounding_like(spoken, ["robin"], streams, Scope(), found) == []  # found already
    written = SimpleNamespace(**{**vars(spoken), "asks_text": True})
    assert search._sounding_like(written, ["robin"], streams, Scope(), []) == []
    assert search._sounding_like(spoken, ["anchor"], streams, Scope(), []) == []
    # only where the moments found leave room, never above one
    quoting = Moment("garden-cam", 30.0, 33.0, 0.5, 'speech: "the robin again"', segment_id="q")
    weak = Moment("kitchen-cam", 0.0, 3.0, 0.4, 'speech: "Let me check the list once more."', segment_id="w")
    assert [m.segment_id for m in with_sounding_like([quoting, weak], heard, 5)] == ["q", "w", memories[1].id]
    assert with_sounding_like([quoting, weak], heard, 2) == [quoting, weak]


def test_the_named_stream_is_where_not_what_a_question_asks_about() -> None:
    """"Which of these appeared in a picture in the library-cam recording?" is not about a
    library: "library" said in that stream ("the library card") must not make it a speech
    question."""
    from episodic.retrieval.detailed import Recall
    from episodic.retrieval.modality_check import retype_by_evidence, without_place_words
    from episodic.retrieval.query_analysis import QueryAnalysis, object_terms_of

    q = "Which of these was in view in the library-cam recording?"
    analysis = QueryAnalysis(question=q, query_type=QueryType.VIDEO, scores={}, why="video",
                             terms=["library", "cam"], expects="any", object_terms=object_terms_of(q))
    assert "library" in analysis.object_terms
    said = Unit("library-cam", "m1", 0.0, 3.0, "speech", "Grace will clean the library card after lunch.")
    frame = Unit("library-cam", "m2", 5.0, 8.0, "visual", "a cat; colours: grey")
    probe = lambda a: Recall(units=[said, frame], route="x")  # noqa: E731
    assert retype_by_evidence(analysis, probe).query_type is QueryType.AUDIO  # the mistake
    placed = without_place_words(analysis, "library-cam")
    assert "library" not in placed.object_terms and placed.terms == analysis.terms
    assert retype_by_evidence(placed, probe).query_type is QueryType.VIDEO
    assert without_place_words(analysis, None) is analysis
    kept = QueryAnalysis(question="Who left the rope in harbour-cam?", query_type=QueryType.VIDEO, scores={},
                         why="", terms=["rope"], expects="any", object_terms=["rope"])
    assert without_place_words(kept, "harbour-cam").object_terms == ["rope"]


def _walls_and_a_picture() -> list[ShortTermMemory]:
    """A camera whose walls are guessed "a shower curtain" all through (two stretches, far
    apart), and a picture of a rocket shown once in between, guessed less surely."""
    return [
        _memory("yard-cam", 0.0, [("a shower curtain", 0.8)]),
        _memory("yard-cam", 8.0, [("a shower curtain", 0.7)]),
        _memory("yard-cam", 30.0, [("a rocket", 0.6), ("a lamp", 0.1)]),
        _memory("yard-cam", 60.0, [("a shower curtain", 0.75)]),
        _memory("yard-cam", 68.0, []),
        _memory("yard-cam", 76.0, []),
        _memory("yard-cam", 84.0, []),
    ]


def test_a_stream_s_recurring_guesses_are_its_background_and_do_not_choose(scorer: TextScorer) -> None:
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.recurring_guesses import recurring

    memories = _walls_and_a_picture()
    units = [u for m in memories for u in units_of(m) if u.modality == "visual"]
    # "a lamp" rides on every memory's second key frame: more than 30 % of the key frames
    assert recurring(units) == {"a shower curtain", "a lamp"}
    frames = KeyFrameUnits(ListingStore(memories))
    kept = {g for u in frames.units(["yard-cam"], Scope()) for g, _ in u.guesses}
    assert kept == {"a rocket"}
    answerer = StructuredAnswerer(ListingStore(memories), scorer, Settings().retrieval)
    answerer.key_frames = frames
    options = ["a curtain", "a rocket", "a cat"]
    draft = answerer.pictured(_analysis("Which of these was shown on screen in yard-cam?"), options,
                              Scope(), MemoryReader(answerer.store))
    assert draft is not None and draft.choice_index == 1, draft
    # a request's own units (a detailed recall's) lose the same guesses
    recalled = [u for m in memories[:3] for u in units_of(m) if u.modality == "visual"]
    frames.without_background(recalled)
    assert {g for u in recalled for g, _ in u.guesses} == {"a rocket"}


def test_a_guess_in_one_stretch_of_few_frames_is_not_background() -> None:
    from episodic.retrieval.recurring_guesses import recurring

    units = [_unit([("a rocket", 0.5)], "yard-cam", 30.0), _unit([("a rocket", 0.4)], "yard-cam", 34.0)]
    units += [_unit([("a cat", 0.03)], "yard-cam", t) for t in (0.0, 60.0)]  # too weak to count
    units += [_unit([], "yard-cam", t) for t in (10.0, 20.0, 50.0, 70.0, 80.0, 90.0)]
    assert recurring(units) == set()
    units.append(_unit([("a rocket", 0.2)], "yard-cam", 80.0))  # seen again, in another stretch
    assert recurring(units) == {"a rocket"}


def test_the_parts_guesses_are_judged_apart_and_only_choose_between_options(scorer: TextScorer) -> None:
    """Crops of a wall carry "chain mail" all through the stream; the whole frame of a picture
    nothing can name carries it once. Judged apart, the parts' recurring name is dropped from
    the parts only: the picture still stands out by its whole frame's guess. A rocket clear
    only in a crop of one frame chooses the option."""
    from episodic.retrieval.distinct_picture import stand_outs

    def mem(t0: float, whole, parts) -> ShortTermMemory:
        return ShortTermMemory(id=f"yard-cam@{t0}", stream_id="yard-cam", t_start=t0, t_end=t0 + 8.0,
                               vector=np.zeros(4), frames=[FrameObservation(
                                   t=t0, description=f"a scene {t0}", guesses=list(whole), part_guesses=list(parts))])

    memories = [mem(0.0, [], [("chain mail", 0.6)]), mem(30.0, [("chain mail", 0.3)], []),
                mem(60.0, [], [("a rocket", 0.7), ("chain mail", 0.5)]), mem(90.0, [], [("chain mail", 0.6)]),
                *[mem(t, [], []) for t in (120.0, 150.0, 180.0, 210.0)]]
    units = KeyFrameUnits(ListingStore(memories)).units(["yard-cam"], Scope(), ("visual", "ocr"))
    assert {g for u in units for g, _ in u.part_guesses} == {"a rocket"}
    assert [o.label for o in stand_outs(units)] == ["chain mail"]
    support = guess_support(["a rocket", "a cat"], units, scorer)
    assert support[0].argmax() == 2 and support[0].max() > 0.5 and support[1].max() == 0.0


def test_a_background_guess_far_surer_on_one_stretch_stands_out_there(scorer: TextScorer) -> None:
    """The walls are guessed "a dog" now and then (0.05–0.07, in several stretches: background),
    and a horse's silhouette is guessed "a dog" at 0.76: that frame keeps its guess, and the
    horse is chosen by it; a wall guessed as surely as elsewhere keeps nothing."""
    from episodic.reasoning.structured import StructuredAnswerer
    from episodic.retrieval.recurring_guesses import stands_out

    memories = [_memory("yard-cam", 0.0, [("a dog", 0.07)]), _memory("yard-cam", 30.0, [("a dog", 0.05)]),
                _memory("yard-cam", 60.0, [("a dog", 0.76), ("Great Dane", 0.12)]),
                _memory("yard-cam", 90.0, [("a dog", 0.06)]),
                *[_memory("yard-cam", t, []) for t in (120.0, 150.0, 180.0, 210.0)]]
    frames = KeyFrameUnits(ListingStore(memories))
    kept = {(round(u.t_start), g) for u in frames.units(["yard-cam"], Scope()) for g, _ in u.guesses}
    assert (60, "a dog") in kept and not {(0, "a dog"), (30, "a dog"), (90, "a dog")} & kept, kept
    answerer = StructuredAnswerer(ListingStore(memories), scorer, Settings().retrieval)
    answerer.key_frames = frames
    draft = answerer.pictured(_analysis("Which of these was shown on screen in yard-cam?"),
                              ["an eye", "a rocket", "a horse"], Scope(), MemoryReader(answerer.store))
    assert draft is not None and draft.choice_index == 2, draft
    unit = _unit([("a dog", 0.2)], "yard-cam", 60.0)
    levels = {"a dog": [(0.0, 8.0, 0.07), (60.0, 68.0, 0.2)]}
    assert not stands_out("a dog", 0.2, unit, levels)  # not sure enough
    assert not stands_out("a dog", 0.35, unit, {"a dog": [(0.0, 8.0, 0.2)]})  # not surer enough
    assert stands_out("a dog", 0.35, unit, {"a dog": [(0.0, 8.0, 0.1), (62.0, 70.0, 0.3)]})  # its own stretch aside


def test_a_guess_of_the_same_kind_supports_the_only_option_of_that_kind(scorer: TextScorer) -> None:
    """A horse's silhouette guessed "a dog" (0.58): the words are far apart (cosine 0.51), but
    both are animals to the describer, and of "galaxies in space", "a clock", "an astronaut"
    and "a horse" only the horse is: the guess supports it at half its probability. With two
    animals among the options the kind tells them not apart."""
    from dataclasses import replace

    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.retrieval.guess_match import SAME_KIND, DescriberVocabulary

    memories = [ShortTermMemory(id="yard-cam@0", stream_id="yard-cam", t_start=0.0, t_end=8.0, vector=np.zeros(4),
                                frames=[FrameObservation(t=0.0, description="a scene", guesses=[("a dog", 0.58)])],
                                metadata={"models": {"describer": OfflineVisualDescriber.model_id}})]
    units = [u for u in units_of(memories[0]) if u.modality == "visual"]
    vocabulary = DescriberVocabulary(ListingStore(memories), scorer)
    options = ["galaxies in space", "a clock", "an astronaut", "a horse"]
    kinds = vocabulary.kinds(options, ["yard-cam"], Scope())
    assert kinds is not None and kinds[0] == [None, None, None, "an animal"]
    plain = guess_support(options, units, scorer)
    assert plain[3, 0] < 0.12  # by the words alone, too weak to count as seen
    kind = guess_support(options, units, scorer, kinds)
    assert kind[3, 0] == pytest.approx(0.58 * SAME_KIND) and kind[:3, 0].max() == plain[:3, 0].max()
    # a texture's stray guess of an animal says nothing of the kind of thing shown
    stray = [replace(units[0], guesses=(("a bird", 0.09),))]
    assert guess_support(options, stray, scorer, kinds)[3, 0] == guess_support(options, stray, scorer)[3, 0]
    # nor does a part's: the best of nine crops of a flower was "vegetables" 0.64, the whole
    # frame 0.17, and a cup of coffee is the only food offered; "a dog" in a crop only is no
    # animal shown either
    flower = [replace(units[0], guesses=(("vegetables", 0.17),), part_guesses=(("vegetables", 0.64),))]
    offered = ["a flower", "a rocket", "a cup of coffee", "an astronaut"]
    food = vocabulary.kinds(offered, ["yard-cam"], Scope())
    assert food is not None and food[0][2] == "food"
    assert guess_support(offered, flower, scorer, food)[2, 0] == guess_support(offered, flower, scorer)[2, 0] < 0.12
    cropped = [replace(units[0], guesses=(), part_guesses=(("a dog", 0.58),))]
    assert guess_support(options, cropped, scorer, kinds)[3, 0] == guess_support(options, cropped, scorer)[3, 0]
    two = ["a cat", "a horse", "a clock"]
    assert guess_support(two, units, scorer, vocabulary.kinds(two, ["yard-cam"], Scope()))[1, 0] == plain_horse(scorer, two, units)
    # an open-vocabulary describer: no kinds
    memories[0].metadata = {"models": {"describer": "vlm:qwen2.5-vl"}}
    assert DescriberVocabulary(ListingStore(memories), scorer).kinds(options, ["yard-cam"], Scope()) is None


def plain_horse(scorer: TextScorer, options: list[str], units: list[Unit]) -> float:
    return float(guess_support(options, units, scorer)[1, 0])


def test_search_for_a_picture_finds_a_guess_of_its_kind(scorer: TextScorer) -> None:
    """"a picture of a horse" where the horse's silhouette was guessed "a dog" 0.76: the key
    frame is offered (an animal, not a sure sighting) before the walls."""
    from episodic.memory.vision import OfflineVisualDescriber
    from episodic.retrieval.moments import MomentSearch

    memories = [_memory("yard-cam", 0.0, [("a shower curtain", 0.4)]),
                _memory("yard-cam", 30.0, [("a dog", 0.76), ("Great Dane", 0.12)]),
                *[_memory("yard-cam", t, []) for t in (60.0, 90.0, 120.0, 150.0)]]
    for m in memories:
        m.metadata = {"models": {"describer": OfflineVisualDescriber.model_id}}
    store = ListingStore(memories)
    search = MomentSearch(store, scorer, Settings().retrieval)
    found = search._guessed("horse", Scope(), MemoryReader(store), [], 5)
    assert found and (found[0].stream_id, found[0].t_start) == ("yard-cam", 30.0), found
    assert "not a sure sighting" in found[0].why
