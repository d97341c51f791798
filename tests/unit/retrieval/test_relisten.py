"""Listening again at question time (retrieval/relisten.py).

Unit parts: hot words, the span of a long memory, the version history and its cache, the
tokenisation used to score a text against audio. End to end (slow): a generated recording is
ingested, its stored transcript overwritten with what a weak recogniser made of it ("The
island-arm tested scheduled for our path to"), and a speech question asked through the
in-process service must come back with the right words, re-listened once, kept in the store
with the model that made it, and not re-listened on the second ask; a nearly spent deadline
skips re-listening without failing the request.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from episodic import samples
from episodic.config import load_settings
from episodic.core.errors import DeadlineExceeded
from episodic.core.query import AskRequest, Pathway, QueryType, Scope
from episodic.core.records import ShortTermMemory, TranscriptPiece
from episodic.memory.speech import Hearing
from episodic.retrieval.detailed import MemoryReader, Recall, TextScorer, Unit
from episodic.retrieval.listen_targets import (
    _span,
    about_speech,
    about_the_question,
    hot_words,
    name_gained,
    said_of_someone,
    said_value_focus,
    value_gained,
    value_lost,
    without_closing_phrase,
)
from episodic.retrieval.query_analysis import (
    QueryAnalysis,
    content_terms,
    key_terms_of,
    object_terms_of,
)
from episodic.retrieval.relisten import RelistenReport, options_to_hear, within_hint
from episodic.retrieval.transcript_versions import cached_version, record_version
from episodic.services.qa import HINTED_CONFIDENCE_CAP

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from bench_relisten import holds, overwrite_transcript, speech_memory  # noqa: E402

SENTENCE = "The fire alarm test is scheduled for half past two."
GARBLED = "The island-arm tested scheduled for our path to"
QUESTION = "When is the fire alarm test scheduled?"


# -- pieces --------------------------------------------------------------------------------
def test_hot_words_are_content_words_of_question_and_options():
    words = hot_words("When did Maria say the fire alarm test is?", ["Half past two", "3:30 pm"])
    assert words[:3] == ["Maria", "fire", "alarm"]
    assert "Half" in words and "3:30" in words
    assert not {"when", "did", "say", "the", "is"} & {w.lower() for w in words}
    assert len(hot_words(" ".join(f"word{i}x" for i in range(100)))) <= 30


def test_the_pictures_offered_for_what_was_on_screen_while_x_was_said_are_not_heard_for():
    """The options of "what picture was on screen while someone talked about X?" were seen,
    not said: the recogniser is told to expect X's words only; options of other questions
    stay hot words."""
    from episodic.retrieval.question_shape import question_shape

    pictures = ("a rocket", "coins", "a cat")
    asked = _analysis("What picture was on screen while someone talked about the colour of Priya's ladle?",
                      QueryType.VIDEO_AUDIO)
    asked.shape = question_shape(asked.question)
    assert options_to_hear(asked, pictures) == ()
    assert hot_words(asked.question, options_to_hear(asked, pictures)) == ["Priya's", "ladle"]
    said = ("Priya and the ladle", "the price of the onion")
    other = _analysis("What was mentioned while a picture of a cat was on screen?", QueryType.VIDEO_AUDIO)
    other.shape = question_shape(other.question)
    assert options_to_hear(other, said) == said
    # the options of "which camera recorded …?" are the recordings' names: nobody says them
    where = _analysis("Which camera recorded the talk about the flower show?", QueryType.AUDIO)
    where.shape = question_shape(where.question)
    streams = ("garden-cam", "harbour-cam", "kitchen-cam")
    assert options_to_hear(where, ("Garden-cam", "harbour cam", "the kitchen"), streams) == ["the kitchen"]
    assert hot_words(where.question, options_to_hear(where, streams, streams)) == hot_words(where.question)


def _analysis(question: str, qtype: QueryType) -> QueryAnalysis:
    terms = content_terms(question)
    return QueryAnalysis(question, qtype, {}, "", terms, "colour", key_terms=key_terms_of(question, terms),
                         object_terms=object_terms_of(question))


def test_options_are_heard_only_in_a_sentence_about_the_question():
    """"Tom painted the fishing net yet low" says yellow: hearing the options of "Which colour
    is the watering can that Omar painted?" in it would answer with the net's colour."""
    a = _analysis("Which colour is the watering can that Omar painted?", QueryType.VIDEO)
    unit = lambda text: Unit("s", "s@0", 0.0, 2.0, "speech", text)  # noqa: E731
    assert not about_the_question(a, unit("Tom painted the fishing net yet low."))
    assert about_the_question(a, unit("Or map into the water and camping."))  # misheard, still about it
    assert about_the_question(a, unit("Omar painted the watering can pink."))
    assert not about_the_question(a, unit("Omar painted it pink."))  # the can is what it is about
    # no thing parsed ("for one lemon"): the question's other words, all of them
    lemon = _analysis("How much do they charge for one lemon?", QueryType.AUDIO)
    assert not about_the_question(lemon, unit("A charge 14 pounds for one mask."))
    assert about_the_question(lemon, unit("They charge 56 pounds for one lemon."))
    # what is known of Omar was said, though "colour" made the question a visual one: its
    # options may be heard, and its sentences heard again
    assert said_of_someone(a) and not said_of_someone(_analysis("Which colour is the car?", QueryType.VIDEO))
    assert about_speech(a, [], load_settings().retrieval)
    assert not about_speech(_analysis("Which colour is the car?", QueryType.VIDEO), [], load_settings().retrieval)


def test_a_summary_first_does_not_hide_the_sentence_behind_it():
    """A summary quotes what was said beside what was seen, so for a time or number asked for
    it does not tell which answers: "At what time are the baker and Priya getting together?"
    recalls first the summary quoting the misheard sentence, then the sentence: a question about
    speech. With a frame behind the summary instead, it is not, unless the question names
    someone (no describer knows Priya); nor is a question about a picture, whatever is behind
    the summary."""
    from episodic.retrieval.question_shape import question_shape

    settings = load_settings().retrieval
    a = _analysis("At what time are the baker and the chef getting together?", QueryType.SUMMARY)
    a.shape = question_shape(a.question, 4)
    summary = Unit("k", "k@47", 47.0, 56.0, "summary",
                   'Someone says "The maker and three are getting together at the border to salmon".')
    said = Unit("k", "k@47", 48.3, 52.1, "speech", "The maker and three are getting together at the border to salmon.")
    frame = Unit("k", "k@47", 47.0, 56.0, "visual", "a scene; colours: green, grey")
    for u, cos in ((summary, 0.5), (said, 0.49), (frame, 0.3)):
        u.score = u.cos = cos
    assert about_speech(a, [summary, said, frame], settings)
    assert not about_speech(a, [summary, frame, said], settings)
    priya = _analysis("At what time are the baker and Priya getting together?", QueryType.SUMMARY)
    priya.shape = question_shape(priya.question, 4)
    assert priya.names_someone and about_speech(priya, [summary, frame, said], settings)
    # a picture asked about keeps the summary's say, though a sentence behind it names the thing
    rocket = _analysis("Which camera showed a rocket?", QueryType.VIDEO)
    rocket.shape = question_shape(rocket.question, 3)
    assert not about_speech(rocket, [summary, said, frame], settings)


def test_sentences_an_answerer_chose_are_heard_again_whatever_the_question_s_type():
    """"What picture was on screen while someone talked about Chen and the eggs?" is a visual
    question with visual evidence, so re-listening of its own accord does nothing; the
    sentence its answerer names as perhaps misheard is speech, and is heard again."""
    from episodic.memory.in_memory_store import InMemoryStore
    from episodic.retrieval.detailed import Recall
    from episodic.retrieval.relisten import Relistener

    settings = load_settings()
    from episodic.retrieval.question_shape import question_shape

    a = _analysis("What picture was on screen while someone talked about Chen and the eggs?", QueryType.VIDEO)
    a.shape = question_shape(a.question)
    frame = Unit("k", "k@0", 0.0, 4.0, "visual", "a scene; colours: orange")
    frame.score = frame.cos = 0.4
    said = Unit("k", "k@0", 1.0, 3.0, "speech", "Can ordered high necks for the team.")
    assert not about_speech(a, [frame], settings.retrieval)
    listener = Relistener(None, settings)  # the named sentence's memory is not stored here: no audio

    def run(chosen):
        return listener.run(a, np.ones(4, np.float32), a.question, ("coins", "a clock"), Recall([frame], "feature"),
                            MemoryReader(InMemoryStore()), Scope(), None, lambda: 10.0, chosen=chosen)

    assert run(None).reason == "not about speech"
    assert run([said]).reason == "no recalled memory with stored audio"  # went on to read it
    assert run([]).reason == "nothing unsure"


def test_options_are_put_into_a_re_hearing_about_the_question_that_was_not_taken():
    """No recalled sentence is about "How many novels are in Omar's bag?" ("Oh, Mata said our
    mail's in the bag."); heard again, "Omar has eight novels in the bag." was not taken (the
    audio carried it less well). That re-hearing, this request's or a recorded one, is the
    sentence the options are put into; one taken or used as a hint is already evidence, and
    one not about the question is no frame."""
    from episodic.memory.in_memory_store import InMemoryStore
    from episodic.retrieval.relisten import MemoryRelisten, Relistener

    a = _analysis("How many novels are in Omar's bag?", QueryType.AUDIO)
    store = InMemoryStore()
    store.ensure_schema(4, 4)
    m = _memory(70.0, 77.0, [(71.0, 74.0, "Oh, Mata said our mail's in the bag.")])
    store.upsert_memories([m])
    heard = "Omar has eight novels in the bag."
    report = RelistenReport(hotwords=["novels", "omar's", "bag", "8"])
    report.memories.append(MemoryRelisten(m.id, 70.5, 75.0, "kept-old", "base", text=heard))
    memory, sentence = Relistener._rehearing_about(a, report, MemoryReader(store))
    assert memory is not None and memory.id == m.id and sentence is not None
    assert (sentence.text, sentence.t_start, sentence.t_end) == (heard, 70.5, 75.0)
    # recorded by an earlier request with these words: found through the cache
    entry = {"source": "relisten", "model": "base", "hotwords": ["8", "bag", "novels", "omar's"],
             "text": heard, "span": [70.2, 75.5], "adopted": False, "hinted": False}
    record_version(m, entry, {"source": "ingest", "model": "base", "hotwords": [], "text": m.transcript[0].text})
    store.upsert_memories([m])
    report.memories[:] = [MemoryRelisten(m.id, 70.0, 77.0, "cached", "base")]
    _, sentence = Relistener._rehearing_about(a, report, MemoryReader(store))
    assert sentence is not None and (sentence.text, sentence.t_start) == (heard, 70.2)
    for taken in ("adopted", "hinted"):
        m.metadata["transcripts"][-1] |= {"adopted": False, "hinted": False, taken: True}
        store.upsert_memories([m])
        assert Relistener._rehearing_about(a, report, MemoryReader(store)) == (None, None)
    report.memories[:] = [MemoryRelisten(m.id, 70.5, 75.0, "kept-old", "base", text="Oh, Martha said a bell's in the bar.")]
    assert Relistener._rehearing_about(a, report, MemoryReader(store)) == (None, None)
    assert Relistener._rehearing_about(a, None, MemoryReader(store)) == (None, None)


def test_a_re_hearing_that_lost_the_time_asked_for_gives_the_options_the_stored_words():
    """Prompted with "When is the soup tasting starting?", the decoder wrote "Please remember
    not the soup." over the first 2 s of the sentence and stopped: the re-hearing shows the
    memory is about the question, but the time was in the words it lost. The options go into
    the stored words ("… begin at 3.30 am."), over their span; a re-hearing that keeps a
    value, or a question that asks for none, keeps the re-hearing."""
    from episodic.memory.in_memory_store import InMemoryStore
    from episodic.retrieval.query_analysis import QueryAnalyzer
    from episodic.retrieval.relisten import MemoryRelisten, Relistener
    from tests.fakes import HashEmbedder

    store = InMemoryStore()
    store.ensure_schema(4, 4)
    stored = "Please remember not to skip this and begin at 3.30 am."
    m = _memory(109.0, 116.0, [(110.7, 114.4, stored)])
    store.upsert_memories([m])
    report = RelistenReport(hotwords=["soup", "tasting"])

    def frame(question: str, heard: str) -> Unit | None:
        report.memories[:] = [MemoryRelisten(m.id, 110.4, 112.6, "kept-old", "base", text=heard)]
        analysis = QueryAnalyzer(HashEmbedder()).analyze(question)
        return Relistener._rehearing_about(analysis, report, MemoryReader(store))[1]

    sentence = frame("When is the soup tasting starting?", "Please remember not the soup.")
    assert sentence is not None and (sentence.text, sentence.t_start, sentence.t_end) == (stored, 110.4, 114.4)
    kept = "Please remember the soup tasting begins at 3.35."
    assert frame("When is the soup tasting starting?", kept).text == kept
    assert frame("Who is at the soup tasting?", "Please remember not the soup.").text == "Please remember not the soup."


def _memory(t0: float, t1: float, pieces: list[tuple[float, float, str]]) -> ShortTermMemory:
    return ShortTermMemory(
        id="s@000000000000", stream_id="s", t_start=t0, t_end=t1, vector=np.ones(4, np.float32),
        transcript=[TranscriptPiece(a, b, t) for a, b, t in pieces],
    )


def test_span_is_whole_short_memory_or_the_matched_pieces():
    m = _memory(0.0, 8.0, [(1.0, 4.0, "a")])
    assert _span(m, [], 20.0) == (0.0, 8.0)
    long = _memory(0.0, 60.0, [(5.0, 9.0, "a"), (30.0, 34.0, "b"), (50.0, 58.0, "c")])

    def unit(a: float, b: float) -> Unit:
        return Unit("s", long.id, a, b, "speech", "x")

    assert _span(long, [unit(30.0, 34.0)], 20.0) == pytest.approx((29.7, 34.3))
    # a second matched piece is added only while the span stays within the limit
    assert _span(long, [unit(30.0, 34.0), unit(50.0, 58.0)], 30.0) == pytest.approx((29.7, 58.3))
    assert _span(long, [unit(30.0, 34.0), unit(5.0, 9.0)], 20.0) == pytest.approx((29.7, 34.3))


def test_a_window_with_little_room_left_hears_a_sentence_whole_or_not_at_all():
    """The fifth memory of a joint pass had 2.3 s of the window left: its sentence "Everyone
    says the ferry crossing opens at nine thirty-five sharp." (92.1-96.0 s) was heard as its
    first 2.3 s, "… the ferry crossing", and that half was kept as the memory's hearing for the
    question's words. Without ``cut`` the matched sentence alone is taken where it fits, else
    nothing."""
    m = _memory(90.4, 97.4, [(92.1, 96.0, "Everyone sends the thermicross an oven at 9.30 a.m. sharp.")])
    said = [Unit("s", m.id, 92.1, 96.0, "speech", m.transcript[0].text)]
    assert _span(m, said, 12.0, cut=False) == (90.4, 97.4)  # room for all of it: the whole memory
    assert _span(m, said, 5.0, cut=False) == pytest.approx((91.8, 96.3))  # the sentence alone
    assert _span(m, said, 2.3, cut=False) is None  # not even the sentence: not heard
    assert _span(m, said, 2.3) == pytest.approx((91.8, 94.1))  # cut (one very long sentence)
    assert _span(m, [], 2.3, cut=False) is None


def test_versions_and_cache():
    m = _memory(0.0, 8.0, [(1.0, 4.0, GARBLED)])
    ingest = {"source": "ingest", "model": "tiny", "hotwords": [], "text": GARBLED, "adopted": True}
    entry = {"source": "relisten", "model": "base", "hotwords": ["alarm", "fire", "test"],
             "text": SENTENCE, "adopted": True}
    assert cached_version(m, "base", ["fire"]) is None
    assert record_version(m, entry, ingest) == 2
    history = m.metadata["transcripts"]
    assert [v["version"] for v in history] == [1, 2] and history[0]["model"] == "tiny"
    assert m.metadata["transcript_version"] == 2
    assert cached_version(m, "base", ["Fire", "alarm"]) is not None  # a subset of its words
    assert cached_version(m, "base", ["fire", "drill"]) is None  # a new word
    assert cached_version(m, "large", ["fire"]) is None  # another model
    for i in range(20):  # the history stays bounded, the ingest version stays first
        record_version(m, {**entry, "adopted": False, "hotwords": [f"w{i}"]}, ingest)
    history = m.metadata["transcripts"]
    assert len(history) == 8 and history[0]["source"] == "ingest" and history[-1]["version"] == 22
    assert m.metadata["transcript_version"] == 2  # not-adopted attempts do not change it


# -- end to end ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def garbled(tmp_path_factory):
    from episodic.components import Components
    from episodic.pipeline import ingest_file
    from episodic.services.qa import MemoryQA

    root = tmp_path_factory.mktemp("relisten")
    components = Components(load_settings(data_dir=root / "data"))
    path = root / "notice.mp4"
    samples.make_recording(
        path, [samples.Scene(duration_s=8, seed=5, tint=(90, 90, 120))],
        [samples.Speech(t=1.0, text=SENTENCE)],
    )
    ingest_file(path, "office", components)
    memory = speech_memory(components.store, "office")
    overwrite_transcript(components, memory.id, GARBLED)
    before = components.store.get_memory(memory.id, with_vectors=True)
    service = MemoryQA(components, warm_after_request=False)
    service.prepare()
    yield service, components, before
    components.close()


@pytest.mark.slow
def test_relistening_fixes_a_garbled_transcript_and_keeps_it(garbled):
    service, components, before = garbled
    assert not holds(before.transcript_text, "fire alarm half past two")

    result, trace = service.ask_traced(AskRequest(QUESTION))
    report: RelistenReport = trace.notes["relisten"]
    assert report.happened and [m.outcome for m in report.memories][:1] == ["adopted"], report
    done = report.memories[0]
    assert done.memory_id == before.id and done.new_score > done.old_score
    assert "relisten" in result.timings_ms and result.pathway is Pathway.DETAILED
    # the answerer saw the new words: they are in the answer and in its evidence
    assert holds(result.answer, "half past two"), result.answer
    speech = [e.text for e in result.evidence if e.modality == "speech"]
    assert speech and holds(speech[0], "fire alarm half past two"), result.evidence

    # kept: transcript, speech E_i and the version history; nothing else of the memory lost
    after = components.store.get_memory(before.id, with_vectors=True)
    assert holds(after.transcript_text, "fire alarm test half past two")
    spoken = [e for e in after.embeddings if e.modality == "speech"]
    assert spoken and all(GARBLED not in e.text for e in spoken)
    assert holds(" ".join(e.text for e in spoken), "fire alarm")
    history = after.metadata["transcripts"]
    assert history[0]["source"] == "ingest" and history[0]["text"] == GARBLED
    latest = history[-1]
    assert latest["adopted"] and latest["model"] == service.relisten.recognizer().model_id
    assert latest["model"] != before.metadata["models"]["asr"] or latest["beam_size"] > 1
    assert after.metadata["transcript_version"] == latest["version"]
    assert after.frames == before.frames and after.sounds == before.sounds
    assert after.snippets == before.snippets
    assert len(after.frame_features) == len(before.frame_features)
    others = [(e.modality, e.text) for e in after.embeddings if e.modality != "speech"]
    assert others == [(e.modality, e.text) for e in before.embeddings if e.modality != "speech"]
    assert np.isclose(np.linalg.norm(after.vector), 1.0, atol=1e-3)
    # the next question and Search find it: the speech vector now matches the real words
    moments = service.search("fire alarm test", top_k=1)
    assert moments and moments[0].segment_id == before.id and "alarm" in moments[0].why.lower()

    # asked again: answered from the kept version, not listened to again
    # (or straight from the corrected summary, without reaching detailed recall at all)
    again, trace2 = service.ask_traced(AskRequest(QUESTION))
    report2 = trace2.notes.get("relisten")
    assert report2 is None or not report2.happened, report2
    assert "relisten" not in again.timings_ms or again.timings_ms["relisten"] < 50
    assert holds(again.answer, "half past two"), again.answer
    assert len(components.store.get_memory(before.id).metadata["transcripts"]) == len(history)


@pytest.mark.slow
def test_nearly_spent_deadline_skips_relistening_without_error(garbled):
    service, components, before = garbled
    overwrite_transcript(components, before.id, GARBLED)  # garbled again, no versions
    try:
        result, trace = service.ask_traced(AskRequest(QUESTION, deadline_s=2.0))
    except DeadlineExceeded as exc:
        # the machine was too slow for retrieval itself; re-listening must not be why
        assert "relisten" not in str(exc)
        return
    report = trace.notes.get("relisten")
    if report is not None:  # the detailed path ran: re-listening saw no time for itself
        assert not report.happened and report.cut, report
    assert "relisten" not in result.timings_ms or result.timings_ms["relisten"] < 50
    assert result.timings_ms["total"] <= 2000.0 + 100.0
    # answered from what the memory holds, and re-listening wrote nothing (the small second
    # model's hearing, retrieval/second_listen.py, may fit what is left and keeps its own version)
    history = components.store.get_memory(before.id).metadata.get("transcripts") or []
    assert not [v for v in history if v.get("source") == "relisten"], history


def _recalled_garbled(service, components, before):
    """The garbled memory stored garbled again, and the stage's inputs for QUESTION: its
    analysis, vector, a reader and detailed recall's units."""
    overwrite_transcript(components, before.id, GARBLED)
    analysis = service.analyzer.analyze(QUESTION, None)
    q_vec = np.asarray(components.embedder.embed_texts([QUESTION])[0], dtype=np.float32)
    reader = MemoryReader(components.store)
    return analysis, q_vec, reader, service.detailed.recall(analysis, q_vec, Scope(), reader)


@pytest.mark.slow
def test_relistener_stops_when_the_budget_is_gone(garbled):
    """Straight at the stage: with 0.2 s left it does nothing, changes nothing, says why."""
    service, components, before = garbled
    analysis, q_vec, reader, recall = _recalled_garbled(service, components, before)
    units = list(recall.units)
    assert any(u.memory_id == before.id and u.modality == "speech" for u in units)
    report = service.relisten.run(analysis, q_vec, QUESTION, (), recall, reader, Scope(),
                                  service.scorer, lambda: 0.2)
    assert not report.happened and report.cut and report.reason == "no time left"
    assert recall.units == units
    # with time, the same call re-listens and puts the new words into the units in place
    report = service.relisten.run(analysis, q_vec, QUESTION, (), recall, reader, Scope(),
                                  service.scorer, lambda: None)
    assert report.happened and report.adopted, report
    top_speech = next(u for u in recall.units if u.modality == "speech")
    assert holds(top_speech.text, "fire alarm"), recall.units


@pytest.mark.slow
def test_a_re_hearing_is_judged_against_its_clip_at_its_own_length(garbled):
    """The new words are scored against the clip encoded at its own length (plus a second),
    not padded to Whisper's 30 s window: the recorded score is the one the short encoding
    gives, which is not the padded one (that judgement took five times as long)."""
    from episodic.retrieval.snippet_audio import audio_or_none
    from episodic.retrieval.transcript_scorer import TranscriptScorer

    service, components, before = garbled
    analysis, q_vec, reader, recall = _recalled_garbled(service, components, before)
    report = service.relisten.run(analysis, q_vec, QUESTION, (), recall, reader, Scope(),
                                  service.scorer, lambda: None)
    mine = next(m for m in report.memories if m.memory_id == before.id)
    assert mine.new_score is not None and mine.text, report
    memory = components.store.get_memory(before.id)
    audio = audio_or_none(memory, mine.t_start, mine.t_end, components.snippets.path_for, "test")
    assert audio is not None
    scorer = TranscriptScorer(service.relisten._whisper())
    language = memory.transcript[0].language or "en"
    own = scorer.score(scorer.encode(audio, whole_window=False), [mine.text], language)[0]
    padded = scorer.score(scorer.encode(audio), [mine.text], language)[0]
    assert own is not None and padded is not None
    assert mine.new_score == pytest.approx(own, abs=2e-3), (mine.new_score, own, padded)
    assert abs(own - padded) > 1e-2, (own, padded)


@pytest.mark.slow
def test_a_new_hearing_left_unjudged_when_the_stage_budget_is_spent_changes_nothing(garbled):
    """The joint pass ran, but ``relisten_budget_s`` was gone before the new words could be
    scored against the audio: they are not taken on trust, the stored words and the units stay,
    and the report says the stage was cut."""
    from episodic.retrieval.relisten import Relistener

    service, components, before = garbled
    analysis, q_vec, reader, recall = _recalled_garbled(service, components, before)
    units = list(recall.units)
    hurried = Relistener(components, service.settings.replace(relisten_budget_s=0.0))
    report = hurried.run(analysis, q_vec, QUESTION, (), recall, reader, Scope(), service.scorer, lambda: None)
    mine = [m for m in report.memories if m.memory_id == before.id]
    assert report.happened and report.cut and mine and mine[0].outcome == "unjudged", report
    assert holds(mine[0].text, "fire alarm")  # heard right, but not scored
    assert recall.units == units
    assert components.store.get_memory(before.id).transcript_text == GARBLED


def test_scorer_tokens_match_the_decoder():
    """Words the bundled tokenizer splits oddly (" test" → " " + "test") are scored as the
    single vocabulary entries the decoder writes; an empty text has no score."""
    from episodic.memory.speech import relistening_recognizer
    from episodic.retrieval.transcript_scorer import TranscriptScorer

    rec = relistening_recognizer(load_settings())
    model = rec._load()
    scorer = TranscriptScorer(model)
    ids = scorer.token_ids(" the fire alarm test is at two.")
    vocab = model.hf_tokenizer
    assert [vocab.id_to_token(i) for i in ids] == ["Ġthe", "Ġfire", "Ġalarm", "Ġtest", "Ġis", "Ġat", "Ġtwo", "."]
    enc = scorer.encode(np.zeros(16000, dtype=np.float32))
    scores = scorer.score(enc, ["", "hello"])
    assert scores[0] is None and scores[1] is not None and scores[1] < 0


@pytest.mark.slow
def test_a_transcript_heard_only_with_the_questions_help_answers_it_but_is_not_stored(garbled):
    """A re-listened transcript that does not win on the audio alone (here: any, by settings)
    but adds the question's words serves that question, and the same question again, yet the
    stored words stay: what the memory holds must not depend on which questions came first."""
    service, components, before = garbled
    overwrite_transcript(components, before.id, GARBLED)
    saved = service.relisten.settings
    service.relisten.settings = saved.replace(relisten_min_gain=100.0, relisten_hint_tolerance=100.0)
    try:
        result, trace = service.ask_traced(AskRequest(QUESTION))
        report: RelistenReport = trace.notes["relisten"]
        assert [m.outcome for m in report.memories][:1] == ["adopted-hint"], report
        assert holds(result.answer, "half past two"), result.answer
        # words the question helped to hear: an answer on them claims less than a sure one
        assert 0 < result.confidence <= HINTED_CONFIDENCE_CAP and trace.notes["signals"]["hinted"], result
        stored = components.store.get_memory(before.id)
        assert not holds(stored.transcript_text, "fire alarm half past two"), stored.transcript_text
        latest = stored.metadata["transcripts"][-1]
        assert latest["hinted"] and not latest["adopted"] and holds(latest["text"], "half past two")

        again, trace2 = service.ask_traced(AskRequest(QUESTION))
        report2 = trace2.notes["relisten"]
        assert [m.outcome for m in report2.memories][:1] == ["cached"], report2
        assert holds(again.answer, "half past two"), again.answer
        assert again.confidence <= HINTED_CONFIDENCE_CAP, again
        assert components.store.get_memory(before.id).transcript_text == stored.transcript_text
    finally:
        service.relisten.settings = saved


@pytest.mark.slow
def test_a_re_hearing_that_loops_is_never_taken(garbled):
    """Whisper, prompted with the question's words over noise, can loop ("I don't know. I
    don't know. …"), and the scorer likes a loop (each repeat is likely once begun): even when
    any gain would do, a re-hearing that loops more than the stored words is not adopted."""

    _never_taken(garbled, GARBLED, ("I don't know. " * 4).strip())


def _never_taken(garbled, old: str, heard: str) -> None:
    """With ``old`` stored and the recogniser made to hear ``heard`` (the real model still
    scores both), a re-hearing that any score would let in is kept out: "kept-old", and the
    store keeps ``old``."""
    service, components, before = garbled
    overwrite_transcript(components, before.id, old)
    rec = service.relisten.recognizer()

    def hearing(audio, rate, t_offset, **kw):
        return Hearing([TranscriptPiece(t_offset + 1.0, t_offset + 5.0, heard)])

    saved = service.relisten.settings
    service.relisten.settings = saved.replace(relisten_min_gain=-100.0, relisten_hint_tolerance=100.0)
    rec.hear = hearing
    try:
        _, trace = service.ask_traced(AskRequest(QUESTION))
        report: RelistenReport = trace.notes["relisten"]
        assert report.memories and report.memories[0].outcome == "kept-old", report
        assert components.store.get_memory(before.id).transcript_text == old
    finally:
        service.relisten.settings = saved
        del rec.hear


def test_a_re_hearing_that_drops_the_number_asked_for_loses_it():
    """"Which room is the night train in?": "The night trail is in room two ahead." heard again
    as "The night train is in room" names the train but has lost the room."""
    old = "The night trail is in room two ahead."
    assert value_lost(old, "The night train is in room", "number")
    assert not value_lost(old, "The night train is in room 208.", "number")
    assert not value_lost(old, "The night train is in room", "name")  # a name was asked: no number needed
    assert not value_lost("The night trail is here.", "The night train is here", "number")  # none to lose
    assert value_lost("It starts at 10.05.", "It starts at", "time")


def test_a_re_hearing_that_writes_the_number_asked_for_where_there_was_none_gains_it():
    """"What room is the flower show in now?": "The flower short has moved to room breathing."
    heard again as "… room 310." adds none of the question's words, but the number asked for."""
    old = "The flower short has moved to room breathing."
    assert value_gained(old, "The flower show has moved to room 310.", "number") == {"310"}
    assert value_gained(old, "The flower show has moved to room three ten.", "number")  # number words
    assert not value_gained(old, "The flower show has moved to room 310.", "name")  # no number asked for
    assert not value_gained(old, "The flower show has moved to the room.", "number")  # no number heard
    # a number heard differently is a disagreement, not a gain (the scorer decides it)
    assert not value_gained("The flower show is in room 13.", "The flower show is in room 310.", "number")
    assert value_gained("It starts at half.", "It starts at 10.05.", "time")
    # a count is a number, but not one said in a sentence: its re-hearings may drop numbers
    from episodic.retrieval.question_shape import question_shape

    count = _analysis("How many times was the printer mentioned in library-cam?", QueryType.AUDIO)
    count.shape = question_shape(count.question)
    assert count.shape.focus == "number" and said_value_focus(count) == ""
    room = _analysis("Which room is the night train in?", QueryType.AUDIO)
    room.shape = question_shape(room.question)
    assert said_value_focus(room) == "number"


def test_a_re_hearing_that_writes_a_name_where_there_was_none_gains_it():
    """"Name one person who was mentioned in library-cam.": "Someone's the library card to the
    purple." heard again as "Tom wants the library card to be purple." adds none of the
    question's words, but a person, which is what the question asks for."""
    old = "Someone's the library card to the purple."
    assert name_gained(old, "Tom wants the library card to be purple.", "name") == {"tom"}
    assert name_gained("Elix will clean the library card.", "Felix will clean the library card.", "name") == {"felix"}
    assert name_gained(old, "Ask Priya about the library card.", "name") == {"priya"}  # inside a sentence
    assert not name_gained(old, "Tom wants the library card to be purple.", "number")  # no person asked for
    assert not name_gained(old, "Someone wants the library card to be purple.", "name")  # no name heard
    # an everyday word opening a sentence is no name ("Will", "Look"), nor a rare word
    assert not name_gained(old, "Will wants the library card to be purple.", "name")
    assert not name_gained(old, "Look, the library card is purple.", "name")
    assert not name_gained(old, "Ask Zorblax about the library card.", "name")
    # a name heard differently is a disagreement, not a gain (the audio decides it)
    assert not name_gained("Sophie is repairing the suitcase.", "Sofia is repairing the suitcase.", "name")


@pytest.mark.slow
def test_a_re_hearing_that_drops_the_time_asked_for_is_never_taken(garbled):
    """A re-hearing that writes the question's words but stops before the time ("The fire alarm
    test is scheduled for") is not taken, even when any score would do: the time was in the
    words it dropped."""
    _never_taken(garbled, "The island-arm tested scheduled for half past two.", "The fire alarm test is scheduled for")


@pytest.mark.slow
def test_a_re_hearing_that_adds_none_of_the_questions_words_is_not_taken(garbled):
    """The scorer is the re-listening model hearing the clip alone, so it favours its own
    hearing over ingest's, which heard the clip after the speech before it. A re-hearing that
    scores better (here: any, by settings) but adds none of the words the question asked for
    is no evidence of hearing better: it neither answers the question nor replaces the stored
    words (so a question about something else cannot overwrite them); it is only recorded."""
    from episodic.core.records import TranscriptPiece

    service, components, before = garbled
    overwrite_transcript(components, before.id, GARBLED)
    rec = service.relisten.recognizer()
    elsewhere = "The island arm is planned for our path too."

    def unrelated(audio, rate, t_offset, **kw):
        return Hearing([TranscriptPiece(t_offset + 1.0, t_offset + 5.0, elsewhere)])

    saved = service.relisten.settings
    service.relisten.settings = saved.replace(relisten_min_gain=-100.0)
    rec.hear = unrelated  # the real model still scores both transcripts
    try:
        _, trace = service.ask_traced(AskRequest(QUESTION))
        report: RelistenReport = trace.notes["relisten"]
        assert report.memories and report.memories[0].outcome == "kept-old", report
        assert not any(elsewhere in u.text for u in trace.recall.units), trace.recall.units
        stored = components.store.get_memory(before.id)
        assert stored.transcript_text == GARBLED
        # (a time question: the second opinion, retrieval/second_listen.py, may record its own)
        latest = [v for v in stored.metadata["transcripts"] if v["source"] == "relisten"][-1]
        assert latest["text"] == elsewhere and not latest["adopted"] and not latest["hinted"], latest
    finally:
        service.relisten.settings = saved
        del rec.hear


def test_re_listening_keeps_the_language_ingest_heard_the_words_in() -> None:
    from episodic.core.records import TranscriptPiece
    from episodic.retrieval.relisten import _language_of

    pieces = [TranscriptPiece(0.0, 2.0, "Guten Morgen, wie geht es", language="de"),
              TranscriptPiece(2.0, 3.0, "okay", language="en"),
              TranscriptPiece(3.0, 4.0, "no language said")]
    assert _language_of(pieces) == "de"  # most words
    assert _language_of([TranscriptPiece(0.0, 1.0, "hello")]) == ""
    assert _language_of([]) == ""


@pytest.mark.parametrize(
    ("old", "new", "added", "taken"),
    [
        # "The Eagle ordered 19X through the team." → "Diego ordered 19 eggs for the team." (dev set)
        (-1.0964, -1.4192, {"diego", "eggs"}, True),
        (-1.0964, -1.4192, {"diego"}, False),  # one rare word does not explain the whole loss
        (-0.26, -4.10, {"island", "alarm", "test", "fire"}, False),  # words that were not said
        (-1.0, -1.95, {"a", "b", "c", "d", "e"}, False),  # three words' worth at most
        (-1.0, -1.85, {"a", "b", "c"}, True),
        (-1.0, -0.9, set(), False),  # nothing of the question added: not a hint
    ],
)
def test_a_re_hearing_is_taken_within_the_tolerance_per_question_word_it_adds(
    old: float, new: float, added: set[str], taken: bool
) -> None:
    assert within_hint(old, new, added, 0.3) is taken


@pytest.mark.parametrize(
    ("heard", "old", "kept"),
    [
        ("The soup tasting starts at 10 to 12. Thank you very much.", "The soup tastes", ["The soup tasting starts at 10 to 12."]),
        ("Daniel left the reveal next to the oven. You", "and you'll lift", ["Daniel left the reveal next to the oven."]),
        ("Omar painted the laptop. pink.", "Oma painted", ["Omar painted the laptop. pink."]),  # not a closing phrase
        ("Thank you.", "Great. Thank you.", ["Thank you."]),  # the old transcript heard it too
        ("Thank you.", "Great.", []),  # the whole piece goes
        ("Thank you for coming.", "", ["Thank you for coming."]),  # a sentence, not the closing phrase
    ],
)
def test_a_closing_phrase_whisper_adds_after_the_speech_is_dropped(heard: str, old: str, kept: list[str]) -> None:
    first = TranscriptPiece(0.0, 1.0, "First.")
    out = without_closing_phrase([first, TranscriptPiece(1.0, 3.0, heard)], old)
    assert [p.text for p in out] == ["First.", *kept]
    assert out[-1].t_start == (1.0 if kept else 0.0)


# -- answer stages name the sentences to hear again -----------------------------------------
ORDER_SAID = ["The weather looks fine today.", "Everyone seems to be in a good mood.",
              "Let me check the list once more.", "Grace ordered six tickets for the team.",
              "The night train is in room two oh eight."]
ORDER_OPTIONS = ("the room for the night train", "Grace and the tickets")
COUNT_SAID = ["There is the printer again.", "The weather looks fine today.", "Look, the printer is here.",
              "Let me check the list once more."]


def _misheard_recording(root: Path, stream_id: str, said: list[str], word: str, garbled: str,
                        others: dict[str, list[str]] | None = None, dark: int | None = None):
    """A recording of one sentence per shot, ingested (after ``others``: more streams, said
    clearly); the sentence holding ``word`` is then stored as ``garbled``; shot ``dark`` (an
    index) is black. Returns (components, service, that memory)."""
    from episodic.components import Components
    from episodic.pipeline import ingest_file
    from episodic.services.qa import MemoryQA

    components = Components(load_settings(data_dir=root / "data"))
    for sid, lines in [*(others or {}).items(), (stream_id, said)]:
        path = root / f"{sid}.mp4"
        scenes = [samples.Scene(duration_s=7, seed=20 + i, tint=(60 + 35 * i, 90, 200 - 30 * i))
                  if i != dark or sid != stream_id else samples.Scene(duration_s=7, seed=20 + i, static=True, brightness=0.03)
                  for i in range(len(lines))]
        samples.make_recording(path, scenes, [samples.Speech(t=7.0 * i + 1.5, text=x) for i, x in enumerate(lines)])
        ingest_file(path, sid, components)
    memories = sorted(components.store.list_memories(stream_id, limit=50), key=lambda m: m.t_start)
    target = [m for m in memories if word in m.transcript_text.lower()][-1]
    overwrite_transcript(components, target.id, garbled)
    service = MemoryQA(components, warm_after_request=False)
    service.prepare()
    return components, service, target


@pytest.mark.slow
def test_an_order_question_hears_again_the_thing_it_cannot_place(tmp_path):
    """"Which came first: the night train or the tickets?" with the night train misheard
    ("The height really is in room to head."): the tickets sentence alone would make it a
    guess from where the tickets were said (late in the recording, so probably not first:
    wrong here). The answer stage names the sentence nearest to the unplaced thing, it is
    heard again with the question's words, and both are placed in time."""
    components, service, train = _misheard_recording(tmp_path, "station", ORDER_SAID, "train",
                                                      "The height really is in room to head.")
    try:
        question = f"Which was mentioned first: {ORDER_OPTIONS[0]} or {ORDER_OPTIONS[1]}?"
        result, trace = service.ask_traced(AskRequest(question, options=ORDER_OPTIONS))
        report: RelistenReport = trace.notes["relisten"]
        assert any(m.memory_id == train.id and m.outcome.startswith("adopted") for m in report.memories), report
        assert result.choice_index == 1, result
        assert trace.detailed is not None and trace.detailed.caps.get("placed") == 2.0, trace.detailed
    finally:
        components.close()


@pytest.mark.slow
def test_a_count_question_hears_again_a_mention_it_missed(tmp_path):
    """"How many times was the printer mentioned?" with one of two mentions misheard ("Look,
    that minter in here."): heard again with the question's words, it counts."""
    components, service, printer = _misheard_recording(tmp_path, "library-cam", COUNT_SAID, "printer",
                                                        "Look, that minter in here.")
    try:
        result, trace = service.ask_traced(AskRequest("How many times was the printer mentioned in library-cam?"))
        report: RelistenReport = trace.notes["relisten"]
        assert any(m.memory_id == printer.id and m.outcome.startswith("adopted") for m in report.memories), report
        assert result.answer.startswith("2 times"), result.answer
    finally:
        components.close()


@pytest.mark.slow
def test_a_count_counts_a_mention_the_audio_carries_where_the_words_still_miss_it(tmp_path, monkeypatch):
    """"How many times was the robin mentioned?" with one of two mentions stored as "There is
    the lobby again." and re-hearing left out (as when it hears "lobby" again): Whisper scores
    the sentence with "robin" in place of "lobby" against the audio nearly as likely as heard,
    so it counts, for this request only; "There is the ladder again." said with the same words
    around it costs far more and stays out. Without that check the count is one short."""
    from episodic.retrieval.mention_audio import DECOY_LEAD, MIN_GAIN

    said = ["Look, the robin is here.", "There is the ladder again.", "There is the robin again.",
            "Let me check the list once more."]
    components, service, robin = _misheard_recording(tmp_path, "garden-cam", said, "robin",
                                                      "There is the lobby again.")
    try:
        ladder = next(m for m in components.store.list_memories("garden-cam", limit=50)
                      if "ladder" in m.transcript_text.lower())
        for memory_id, expected in ((robin.id, True), (ladder.id, False)):
            memory = components.store.get_memory(memory_id)
            piece = memory.transcript[0]
            unit = Unit("garden-cam", memory.id, piece.t_start, piece.t_end, "speech", piece.text)
            check = service.relisten.hear_mention(memory, unit, "robin")
            assert check is not None and check.heard is expected, (memory.transcript_text, check)
        question = "How many times was the robin mentioned in garden-cam?"
        monkeypatch.setattr(service.relisten, "run", lambda *a, **k: RelistenReport(reason="off"))
        result, trace = service.ask_traced(AskRequest(question))
        taken = [m for m in trace.notes["mentions_heard"] if m["taken"]]
        assert [m["memory_id"] for m in taken] == [robin.id], trace.notes["mentions_heard"]
        assert taken[0]["gain"] >= MIN_GAIN and "robin" in taken[0]["with_thing"]
        # other things put into the same sentence fit it clearly worse (session 74)
        assert taken[0]["decoy_gain"] is not None and taken[0]["decoy_gain"] <= taken[0]["gain"] - DECOY_LEAD
        assert result.answer.startswith("2 times"), result.answer
        # the store still holds what was heard
        assert "lobby" in components.store.get_memory(robin.id).transcript_text
        # where some other thing fitted the sentence as well, the mention would not count
        hear_against = service.relisten.hear_against

        def as_well(memory, sentence, thing, decoys, min_gain, keep=()):
            check, rivals = hear_against(memory, sentence, thing, decoys, min_gain, keep)
            return check, ([check] if rivals else rivals)

        monkeypatch.setattr(service.relisten, "hear_against", as_well)
        result, _ = service.ask_traced(AskRequest(question))
        assert result.answer.startswith("1 time "), result.answer
        monkeypatch.setattr(service.relisten, "hear_mentions", lambda *a, **k: [])
        result, _ = service.ask_traced(AskRequest(question))
        assert result.answer.startswith("1 time "), result.answer
    finally:
        components.close()


@pytest.mark.slow
def test_an_order_question_places_a_thing_where_the_audio_says_it(tmp_path, monkeypatch):
    """"What came up next after where Priya left the laptop?" with that sentence stored as
    "Bring your left, the left, top, next to the map shelf." and re-hearing left out: the
    laptop is placed nowhere, so the sentences nearest to it are asked of the audio; the one
    that says it takes "laptop" for this request, and what follows it answers."""
    said = ["The weather looks fine today.", "Priya left the laptop next to the map shelf.",
            "Ruth has an appointment with the archivist at six.", "Maria painted the reading lamp yellow."]
    components, service, laptop = _misheard_recording(tmp_path, "library-cam", said, "laptop",
                                                       "Bring your left, the left, top, next to the map shelf.")
    try:
        options = ("the colour of Maria's reading lamp", "Ruth's appointment with the archivist")
        question = "What came up next after where Priya left the laptop?"
        monkeypatch.setattr(service.relisten, "run", lambda *a, **k: RelistenReport(reason="off"))
        result, trace = service.ask_traced(AskRequest(question, options=options))
        taken = [m for m in trace.notes["mentions_heard"] if m["taken"]]
        assert [m["memory_id"] for m in taken] == [laptop.id], trace.notes["mentions_heard"]
        assert "laptop" in taken[0]["with_thing"]
        assert result.choice_index == 1, result
        assert "left, top" in components.store.get_memory(laptop.id).transcript_text  # the store keeps it
        monkeypatch.setattr(service.structured, "placement_checks", lambda *a, **k: [])
        unchecked, trace = service.ask_traced(AskRequest(question, options=options))
        # a guess at best without it: since session 74 the option said right after the sentence
        # that sounds like the anchor, at a guess's confidence (TimeAnswers._placed_by_neighbour)
        assert unchecked.choice_index != 1 or (
            "by_neighbour" in trace.detailed.caps and unchecked.confidence < result.confidence), unchecked
    finally:
        components.close()


@pytest.mark.slow
def test_a_question_whose_thing_was_misheard_finds_it_in_the_audio(tmp_path, monkeypatch):
    """"How much is a novel?" with that sentence stored as "A number is twelve pounds at the
    counter." and re-hearing left out: no recalled sentence holds the novel, so the sentences
    nearest to the question are asked of the audio; the one that says "novel" takes it for
    this request and answers. Without that it is refused."""
    said = ["The weather looks fine today.", "A novel is twelve pounds at the counter.",
            "Maria painted the reading lamp yellow."]
    components, service, novel = _misheard_recording(tmp_path, "library-cam", said, "novel",
                                                      "A number is twelve pounds at the counter.")
    try:
        monkeypatch.setattr(service.relisten, "run", lambda *a, **k: RelistenReport(reason="off"))
        result, trace = service.ask_traced(AskRequest("How much is a novel?"))
        taken = [m for m in trace.notes["mentions_heard"] if m["taken"]]
        assert [m["memory_id"] for m in taken] == [novel.id], trace.notes["mentions_heard"]
        assert "12" in result.answer or "twelve" in result.answer.lower(), result.answer
        assert "number" in components.store.get_memory(novel.id).transcript_text  # the store keeps it
        monkeypatch.setattr(service.structured, "object_checks", lambda *a, **k: [])
        result, _ = service.ask_traced(AskRequest("How much is a novel?"))
        assert "12" not in result.answer and "twelve" not in result.answer.lower(), result.answer
    finally:
        components.close()


@pytest.mark.slow
def test_a_which_stream_question_finds_the_talk_it_cannot_find_in_the_audio(tmp_path, monkeypatch):
    """"Which camera recorded the talk about the room for the poetry reading?" with that
    sentence stored as "The only three reason is in room 104." and re-hearing left out: no
    stream's words hold it, so the sentences nearest to it by all its words and their sound
    are asked of the audio whether they say "poetry reading"; the one that does takes it for
    this request, and its camera is chosen. Without that, the other camera's room is."""
    library = ["Amara will clean the reading lamp after lunch.", "The poetry reading is in room one oh four.",
               "Lucas put the laptop by the front desk."]
    station = ["The night train is in room three two five.", "Tom painted the umbrella purple.",
               "The safety announcement starts at noon."]
    components, service, reading = _misheard_recording(tmp_path, "library-cam", library, "poetry",
                                                        "The only three reason is in room 104.",
                                                        others={"station-cam": station})
    try:
        monkeypatch.setattr(service.relisten, "run", lambda *a, **k: RelistenReport(reason="off"))
        options = ("station-cam", "library-cam")
        question = "Which camera recorded the talk about the room for the poetry reading?"
        result, trace = service.ask_traced(AskRequest(question, options=options))
        taken = [m for m in trace.notes["mentions_heard"] if m["taken"]]
        assert [m["memory_id"] for m in taken] == [reading.id], trace.notes["mentions_heard"]
        assert result.choice_index == 1, result
        monkeypatch.setattr(service.structured, "talk_checks", lambda *a, **k: [])
        result, _ = service.ask_traced(AskRequest(question, options=options))
        assert result.choice_index == 0, result
    finally:
        components.close()


@pytest.mark.slow
def test_what_was_said_while_the_screen_was_dark_is_chosen_by_what_its_audio_carries(tmp_path, monkeypatch):
    """"What was talked about while the screen was dark?" with the sentence said then stored
    as "Ruth will clean the stain after lunch." and re-hearing left out: it tells no option by
    more than the name Ruth, which it shares with "where Ruth left the watering can" (said
    clearly elsewhere), so each option's thing is put into it and scored against its audio:
    "spade" costs it far less than the others, is taken for this request, and that option is
    chosen. Without the check the shared name wins."""
    said = ["Ruth left the watering can next to the greenhouse.", "Ruth will clean the spade after lunch.",
            "Tom painted the wheelbarrow blue.", "The harvest festival is in room two twenty four."]
    components, service, spade = _misheard_recording(tmp_path, "garden-cam", said, "clean",
                                                      "Ruth will clean the stain after lunch.", dark=1)
    try:
        monkeypatch.setattr(service.relisten, "run", lambda *a, **k: RelistenReport(reason="off"))
        options = ("where Ruth left the watering can", "who takes care of the spade",
                   "the colour of Tom's wheelbarrow", "the room for the harvest festival")
        question = "What was talked about while the screen was dark in garden-cam?"
        result, trace = service.ask_traced(AskRequest(question, options=options))
        taken = [m for m in trace.notes["mentions_heard"] if m["taken"]]
        assert [(m["memory_id"], m["option"]) for m in taken] == [(spade.id, 1)], trace.notes["mentions_heard"]
        assert "spade" in taken[0]["with_thing"]
        assert result.choice_index == 1, result
        assert "stain" in components.store.get_memory(spade.id).transcript_text  # the store keeps what was heard
        monkeypatch.setattr(service.structured, "said_then_checks", lambda *a, **k: None)
        result, _ = service.ask_traced(AskRequest(question, options=options))
        assert result.choice_index == 0, result
    finally:
        components.close()


@pytest.mark.slow
def test_a_which_stream_question_hears_again_the_talk_it_cannot_find(tmp_path):
    """"Which camera recorded the talk about Chen's appointment with the baker?" with that
    sentence misheard in kitchen-cam ("Chad is leaving the maker at 305."): no stream holds
    it, and what recall finds first is another appointment in harbour-cam. The sentence
    nearest to it across both cameras by words and sound is heard again with the question's
    words, and its stream is chosen."""
    kitchen = ["Look, the timer is here.", "Chen is meeting the baker at three oh five.",
               "Amara ordered three eggs for the team."]
    # the harbour master's appointment is what the question's words find first
    harbour = ["Daniel has an appointment with the harbour master at noon.", "Diego is repairing the fishing net.",
               "Ruth talked to the captain about the ferry."]
    components, service, meeting = _misheard_recording(tmp_path, "kitchen-cam", kitchen, "meeting",
                                                        "Chad is leaving the maker at 305.",
                                                        others={"harbour-cam": harbour})
    try:
        options = ("harbour-cam", "kitchen-cam")
        question = "Which camera recorded the talk about Chen's appointment with the baker?"
        result, trace = service.ask_traced(AskRequest(question, options=options))
        report: RelistenReport = trace.notes["relisten"]
        assert report.memories and report.memories[0].memory_id == meeting.id, report
        assert report.memories[0].outcome.startswith("adopted"), report
        assert result.choice_index == 1, result
    finally:
        components.close()


@pytest.mark.slow
def test_a_misheard_answer_below_the_first_recalled_memories_is_heard_again_in_the_same_pass(tmp_path):
    """"How many ropes did Tom order?" with the answer misheard as "So more than 15 lots of the
    theme." (it shares no word with the question): recall puts the other sentences about Tom
    and ordering first. Every recalled memory with speech goes into one recogniser pass, so
    the misheard one is heard again with the question's words too, and answers."""
    said = ["Ruth ordered fifty onions for the team.", "Tom painted the anchor purple.",
            "The weather looks fine today.", "Tom ordered fifteen ropes for the team."]
    components, service, ropes = _misheard_recording(tmp_path, "harbour-cam", said, "ropes",
                                                      "So more than 15 lots of the theme.")
    try:
        result, trace = service.ask_traced(AskRequest("How many ropes did Tom order?"))
        report: RelistenReport = trace.notes["relisten"]
        heard = [m.memory_id for m in report.memories]
        assert ropes.id in heard and heard.index(ropes.id) > 0, report  # not the first recalled
        assert any(m.memory_id == ropes.id and m.outcome.startswith("adopted") for m in report.memories), report
        assert "15" in result.answer.split("(")[0] or "fifteen" in result.answer.lower().split("(")[0], result.answer
    finally:
        components.close()


@pytest.mark.slow
def test_a_value_question_hears_again_the_sentence_whose_number_was_misheard_as_words(tmp_path):
    """"Which room is the night train in? 208, 114, 108, 325" with the night train misheard
    ("The height really is in room to head."): recall finds the other rooms, which say a
    number but not the night train, and the misheard sentence shares only "room" with the
    question and says no number. Nothing recalled being about the question, a sentence holding
    its words but no value is put first and heard again with them, and answers."""
    said = ["The Harvest Festival is in room one fourteen.", "Everyone seems to be in a good mood.",
            "The stormy hour is in room three twelve.", "The night train is in room two oh eight."]
    # more rooms in another camera: recall is full of sentences with a room and a number
    harbour = ["The ferry crossing is in room one oh eight.", "The book club meets in room three twenty five.",
               "The quiz night is in room two ten.", "The pottery class is in room one twelve."]
    components, service, train = _misheard_recording(tmp_path, "station-cam", said, "train",
                                                      "The height really is in room to head.",
                                                      others={"harbour-cam": harbour})
    try:
        result, trace = service.ask_traced(AskRequest("Which room is the night train in?",
                                                      options=("208", "114", "108", "325")))
        report: RelistenReport = trace.notes["relisten"]
        assert any(m.memory_id == train.id and m.outcome.startswith("adopted") for m in report.memories), report
        assert result.choice_index == 0, result
        assert trace.recall is not None and trace.recall.notes.get("value_lost_sentences"), trace.recall.notes
    finally:
        components.close()


def test_a_sentence_found_by_an_options_words_alone_is_heard_again():
    """"Where did Felix move the life jacket?" with that sentence misheard ("He looks smooth,
    the light yet it's on it and the fuel darker lit."): it shares no word with the question,
    so it bears on it by nothing recall measures, but it says "fuel" of the option "fuel dock"
    and was put first for that. Re-listening takes it; an irrelevant sentence put there by
    nothing it still passes over."""
    from episodic.core.records import SnippetRef
    from episodic.memory.in_memory_store import InMemoryStore
    from episodic.retrieval.detailed import with_sentences_of
    from episodic.retrieval.relisten import Relistener
    from tests.fakes import HashEmbedder

    settings = load_settings()
    store = InMemoryStore()
    store.ensure_schema(4, 4)
    said = "He looks smooth, the light yet it's on it and the fuel darker lit."
    jacket = ShortTermMemory(id="h@28", stream_id="h", t_start=28.0, t_end=35.0, vector=np.zeros(4, np.float32),
                             transcript=[TranscriptPiece(29.4, 32.7, said)],
                             snippets=[SnippetRef("file:///nowhere.mp4", 28.0, 35.0)])
    store.upsert_memories([jacket])
    reader = MemoryReader(store)
    a = _analysis("Where did Felix move the life jacket?", QueryType.VIDEO)
    other = Unit("h", "h@0", 0.0, 7.0, "speech", "Tom wants the anchor to be purple.")
    other.score = other.cos = 0.3
    listener = Relistener(None, settings)

    recall = Recall([other], "feature")
    q_vec = HashEmbedder().embed_texts([a.question])[0]
    assert with_sentences_of(recall, [jacket.id], a, q_vec, Scope(), reader,
                             TextScorer(HashEmbedder()), lambda text: "fuel" in text, at=0, within=0,
                             found_by="options") == 1
    first = recall.units[0]
    assert first.memory_id == jacket.id and first.found_by == "options"
    assert [m.id for m, _ in listener._targets(recall.units, reader, a)] == [jacket.id]
    first.found_by = ""  # the same sentence, there by its rank alone: it bears on nothing asked
    assert listener._targets(recall.units, reader, a) == []


@pytest.mark.slow
def test_a_price_misheard_with_the_for_before_it_is_found_by_its_number_and_heard_again(tmp_path):
    """"How much does a magazine cost here? 42 euros, 13 euros, 54 euros, 45 dollars" with the
    price misheard ("You can get a madman in 442 Euro here.": "for forty-two" is "four
    forty-two"): no word of the question is left, but 442 may be "for 42", a given value, so
    the sentence is found by it and heard again with the question's words, and answers, though
    the question is typed visual for its object."""
    said = ["The seed packet is on sale for forty-five dollars.", "Everyone seems to be in a good mood.",
            "You can get a magazine for forty-two euros here.", "Only thirteen tomato plants are left."]
    # prices of other things in another camera: recall is full of sentences about costs
    market = ["A rope costs ten dollars at the shop.", "The lamp costs thirty pounds here."]
    components, service, magazine = _misheard_recording(tmp_path, "library-cam", said, "magazine",
                                                         "You can get a madman in 442 Euro here.",
                                                         others={"harbour-cam": market})
    try:
        result, trace = service.ask_traced(AskRequest("How much does a magazine cost here?",
                                                      options=("42 euros", "13 euros", "54 euros", "45 dollars")))
        report: RelistenReport = trace.notes["relisten"]
        assert any(m.memory_id == magazine.id and m.outcome.startswith("adopted") for m in report.memories), report
        assert result.choice_index == 0, result
    finally:
        components.close()


@pytest.mark.slow
def test_a_search_for_something_said_but_misheard_hears_it_again(tmp_path):
    """"Someone mentions the seagull" with that sentence stored as "Look, no signal in here.":
    no moment found quotes the seagull, so the sentences sounding like it are heard again with
    the query as a hint, and the one that now says it is the first moment; the same search
    again reads what was heard and does not listen again."""
    said = ["Tom painted the anchor purple.", "The weather looks fine today.", "Look, the seagull is here.",
            "Ruth ordered fifty onions for the team.", "Let me check the list once more.",
            "Daniel is repairing the fishing net."]
    components, service, gull = _misheard_recording(tmp_path, "harbour-cam", said, "seagull",
                                                     "Look, no signal in here.")
    try:
        moments = service.search("someone mentions the seagull", top_k=5)
        assert moments and moments[0].segment_id == gull.id, moments
        assert "heard again" in moments[0].why and "seagull" in moments[0].why, moments[0]
        versions = components.store.get_memory(gull.id).metadata.get("transcripts") or []
        assert sum(v.get("source") == "relisten" for v in versions) == 1, versions
        again = service.search("someone mentions the seagull", top_k=5)
        assert again[0].segment_id == gull.id
        versions = components.store.get_memory(gull.id).metadata.get("transcripts") or []
        assert sum(v.get("source") == "relisten" for v in versions) == 1, versions  # not heard a third time
    finally:
        components.close()


def test_decoding_starts_no_window_after_its_time_and_reads_each_window_whole(monkeypatch):
    """faster-whisper decodes a window, then hands out its segments one by one. With a limit,
    the model gate refuses to encode a further window once the time is up (the first always
    runs), and every window decoded is read whole: stopping between its segments would throw
    away words already paid for. Without a limit every window is read."""
    from types import SimpleNamespace

    from episodic.memory import speech

    now = [0.0]
    encoded: list[int] = []
    inner = SimpleNamespace(encode=lambda window: encoded.append(window), is_multilingual=False)
    gate = speech._ModelGate(inner, lambda probs: "en")

    def segments():
        for w in range(4):
            gate.encode(w)  # what faster-whisper does as each window starts
            now[0] += 1.0  # decoding it costs a (fake) second
            for k in range(2):  # then its segments come out at once
                yield SimpleNamespace(w=w, k=k, end=10.0 * w + 5.0 * (k + 1))

    model = SimpleNamespace(transcribe=lambda x, **kw: (segments(), None), model=gate)
    monkeypatch.setattr(speech.time, "perf_counter", lambda: now[0])
    out, stopped = speech.WhisperRecognizer._decode(model, np.zeros(4, np.float32), "en", False, {}, until=2.5)
    assert [(seg.w, seg.k) for seg, _ in out] == [(w, k) for w in range(3) for k in range(2)]
    assert stopped and encoded == [0, 1, 2]  # the fourth window never started
    gate.encode(9)  # the call is over: the scorer's encoding is never refused
    now[0], encoded[:] = 0.0, []
    out, stopped = speech.WhisperRecognizer._decode(model, np.zeros(4, np.float32), "en", False, {})
    assert len(out) == 8 and not stopped and encoded == [0, 1, 2, 3]


def test_a_clip_the_joint_pass_stopped_before_is_unreached_not_silent(monkeypatch):
    """A joint pass whose decoding stopped (``relisten_pass_max_s``) before the second clip's
    audio heard the first clip; the second is marked unreached (nothing recorded for it), not
    heard as silence. A pass that decoded everything reaches both, however long it took."""
    from types import SimpleNamespace

    from episodic.retrieval import relisten as rl

    calls: list[dict] = []

    class Recogniser:
        def hear(self, audio, rate, t_offset, **kw):
            calls.append(kw)
            words = [(0.2, 0.8, "hello"), (0.9, 1.5, "there")]
            return Hearing([TranscriptPiece(0.2, 1.5, "hello there", words=words)],
                           1.5 if kw["time_limit_s"] < 1.0 else None)

    monkeypatch.setattr(rl, "audio_or_none", lambda *a, **k: np.full(32000, 0.1, np.float32))
    first = ShortTermMemory(id="a@0", stream_id="a", t_start=0.0, t_end=2.0, vector=np.zeros(4))
    second = ShortTermMemory(id="a@10", stream_id="a", t_start=10.0, t_end=12.0, vector=np.zeros(4))
    clips = [(first, (0.0, 2.0)), (second, (10.0, 12.0))]
    for limit, unreached in ((1e-9, True), (60.0, False)):
        listener = rl.Relistener(SimpleNamespace(snippets=SimpleNamespace(path_for=str)),
                                 load_settings().replace(relisten_pass_max_s=limit))
        listener._rec = Recogniser()
        out = listener._hear_together(clips, {}, "m")
        assert calls[-1]["time_limit_s"] == limit
        assert [p.text for p in out[0][1]] == ["hello there"]
        assert (out[1][1] is rl.UNREACHED) is unreached and out[1][1] == []
