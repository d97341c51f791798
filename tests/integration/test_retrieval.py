"""The query side end to end: generated recordings → in-process ingest (real models, Milvus
Lite) → MemoryQA.ask / MemoryQA.search.

One store is built per module: stream "kitchen" (Tom and the apples, "KITCHEN" on screen, a
timer mentioned later) and stream "station" (a greeting, then the Oxford train and
"PLATFORM 7" on screen). Answers are checked against what is really in the recordings, with
tolerance for what Whisper tiny.en mishears ("three" → "free").
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from episodic import samples
from episodic.components import Components
from episodic.config import load_settings
from episodic.core.errors import DeadlineExceeded, InputError
from episodic.core.query import AskRequest, Pathway, QueryType, Scope
from episodic.pipeline import ingest_file
from episodic.retrieval.query_analysis import QueryAnalyzer
from episodic.services.qa import MemoryQA

pytestmark = pytest.mark.slow

KITCHEN_SPEECH = (2.0, 6.0)  # roughly when the apples sentence is spoken
STATION_SPEECH = (11.0, 15.5)  # …and the Oxford train sentence

RECORDINGS = {
    "kitchen": (
        [
            samples.Scene(duration_s=8, seed=1, tint=(200, 120, 60), text="KITCHEN"),
            samples.Scene(duration_s=8, seed=2, tint=(60, 140, 200)),
        ],
        [
            samples.Speech(t=2.0, text="Tom put three green apples in the blue bowl."),
            samples.Speech(t=10.0, text="The oven timer is set for twenty minutes."),
        ],
    ),
    "station": (
        [
            samples.Scene(duration_s=9, seed=3, tint=(90, 90, 90)),
            samples.Scene(duration_s=9, seed=4, tint=(40, 160, 80), text="PLATFORM 7"),
        ],
        [
            samples.Speech(t=1.5, text="Good morning, welcome to the central station."),
            samples.Speech(t=11.0, text="The train to Oxford leaves from platform seven."),
        ],
    ),
}


@pytest.fixture(scope="module")
def qa(tmp_path_factory):
    root = tmp_path_factory.mktemp("retrieval")
    components = Components(load_settings(data_dir=root / "data"))
    for stream_id, (scenes, speech) in RECORDINGS.items():
        path = root / f"{stream_id}.mp4"
        samples.make_recording(path, scenes, speech)
        ingest_file(path, stream_id, components)
    service = MemoryQA(components)
    service.prepare()
    yield service
    components.close()


def _overlaps(a0: float, a1: float, b0: float, b1: float) -> bool:
    return a0 <= b1 and b0 <= a1


def _evidence_hits(result, stream_id: str, window: tuple[float, float]) -> bool:
    return any(
        e.stream_id == stream_id and _overlaps(e.t_start, e.t_end, *window) for e in result.evidence
    )


# -- query analysis ------------------------------------------------------------------------
CLASSIFICATION = [
    ("What did Tom say he put in the bowl?", QueryType.AUDIO),
    ("Which platform does the announcer say the Oxford train leaves from?", QueryType.AUDIO),
    ("How long is the oven timer set for, according to the speaker?", QueryType.AUDIO),
    ("What animal barks in the background?", QueryType.AUDIO),
    ("What word appears on the screen in the kitchen?", QueryType.VIDEO),
    ("What colour is the bowl on the table?", QueryType.VIDEO),
    ("What is written on the sign at the station?", QueryType.VIDEO),
    ("Who can be seen wearing a red hat?", QueryType.VIDEO),
    ("What was on screen when someone mentioned the train to Oxford?", QueryType.VIDEO_AUDIO),
    ("What is the cook doing while she talks about the apples?", QueryType.VIDEO_AUDIO),
    ("What is this recording about?", QueryType.SUMMARY),
    ("Give me a short summary of the station clip.", QueryType.SUMMARY),
    ("What happens in the kitchen?", QueryType.SUMMARY),
]


def test_query_analysis(qa):
    analyzer: QueryAnalyzer = qa.analyzer
    wrong = []
    for question, expected in CLASSIFICATION:
        got = analyzer.analyze(question)
        assert got.why and set(got.scores) == set(QueryType)
        if got.query_type is not expected:
            wrong.append((question, expected.value, got.why))
    assert len(CLASSIFICATION) - len(wrong) >= 11, wrong
    assert analyzer.classify("What did she say?") is QueryType.AUDIO


# -- ask -----------------------------------------------------------------------------------
def test_audio_question(qa):
    res = qa.ask(AskRequest("What did Tom put in the blue bowl?"))
    assert re.search(r"apple", res.answer, re.I), res
    assert res.confidence > 0.5, res
    assert _evidence_hits(res, "kitchen", KITCHEN_SPEECH), res.evidence
    ev = res.evidence[0]
    assert ev.stream_id == "kitchen" and ev.segment_id.startswith("kitchen@")
    assert ev.snippet_uri.startswith("file://") and ev.text
    assert ev.modality in ("summary", "speech", "visual", "ocr")
    assert res.timings_ms["total"] > 0


def test_on_screen_text_question(qa):
    res = qa.ask(AskRequest("What is written on the screen at the station?"))
    assert "PLATFORM 7" in res.answer.upper(), res
    assert _evidence_hits(res, "station", (9.0, 18.0)), res.evidence
    assert res.evidence[0].stream_id == "station"


def test_multiple_choice(qa):
    options = ("platform three", "platform seven", "platform nine", "platform one")
    res = qa.ask(AskRequest("Which platform does the train to Oxford leave from?", options=options))
    assert res.choice_index == 1, res
    assert "platform seven" in res.answer
    res = qa.ask(
        AskRequest("What did Tom put in the bowl?", options=("bananas", "keys", "green apples"))
    )
    assert res.choice_index == 2, res


def test_answer_not_in_summaries_takes_detailed_path(qa):
    """Ask for on-screen text that no ThetaEvent summary mentions: the fast path must not be
    confident, and detailed recall must find it in the memories.

    Composed summaries now carry the on-screen text, so the summaries are replaced for this
    test by ones that say nothing specific (what a summary of a capable model that left the
    sign out would look like), and restored afterwards."""
    store = qa.c.store
    events = store.list_events()
    assert any("PLATFORM 7" in e.summary.upper() for e in events)  # composed: text is kept
    neutral = "A moment of the recording."
    vec = qa.c.embedder.embed_texts([neutral])[0]
    store.upsert_events([dataclasses.replace(e, summary=neutral, summary_vector=vec) for e in events])
    try:
        res = qa.ask(AskRequest("What text is displayed on the screen at the station?"))
        assert res.pathway is Pathway.DETAILED, res
        assert res.fast_confidence < qa.settings.fast_confidence_tau
        assert "PLATFORM 7" in res.answer.upper(), res
        assert _evidence_hits(res, "station", (9.0, 18.0)), res.evidence
    finally:
        store.upsert_events(events)


def test_stream_filter_restricts_evidence(qa):
    res = qa.ask(AskRequest("What did Tom put in the bowl?", scope=Scope(stream_ids=("kitchen",))))
    assert res.evidence and all(e.stream_id == "kitchen" for e in res.evidence)
    res = qa.ask(AskRequest("Where does the train go?", scope=Scope(stream_ids=("kitchen",))))
    assert all(e.stream_id == "kitchen" for e in res.evidence)
    res = qa.ask(AskRequest("Where does the train go?", scope=Scope(t_min=0.0, t_max=8.0)))
    assert all(e.t_start <= 8.0 for e in res.evidence)


def test_unknown_stream_is_no_evidence_not_an_error(qa):
    res = qa.ask(AskRequest("What did Tom put in the bowl?", scope=Scope(stream_ids=("garage",))))
    assert res.evidence == [] and res.confidence == 0.0
    assert "nothing" in res.answer.lower()
    assert qa.search("apples", Scope(stream_ids=("garage",)), 5) == []


@pytest.mark.parametrize(
    "req, message",
    [
        (AskRequest(""), "empty"),
        (AskRequest("   \n "), "empty"),
        (AskRequest("x" * 4001), "4000"),
        (AskRequest("what?", top_k=0), "top_k"),
        (AskRequest("what?", top_k=101), "top_k"),
        (AskRequest("what?", scope=Scope(t_min=10.0, t_max=2.0)), "reversed"),
        (AskRequest("what?", scope=Scope(t_min=float("nan"))), "finite"),
        (AskRequest("what?", scope=Scope(t_max=float("inf"))), "finite"),
        (AskRequest("what?", scope=Scope(stream_ids=("bad id!",))), "stream id"),
        (AskRequest("what?", options=("only one",)), "2 to 10"),
        (AskRequest("what?", options=tuple(str(i) for i in range(11))), "2 to 10"),
        (AskRequest("what?", options=("a", "")), "empty"),
        (AskRequest("what?", options=("a", "b" * 501)), "500"),
        (AskRequest("what?", deadline_s=float("nan")), "finite"),
    ],
)
def test_bad_inputs(qa, req, message):
    with pytest.raises(InputError, match=message):
        qa.ask(req)


def test_bad_search_inputs(qa):
    with pytest.raises(InputError):
        qa.search("", Scope(), 5)
    with pytest.raises(InputError):
        qa.search("apples", Scope(), 0)
    with pytest.raises(InputError):
        qa.search("apples", Scope(t_min=5, t_max=1), 5)


def test_expired_deadline(qa):
    with pytest.raises(DeadlineExceeded) as info:
        qa.ask(AskRequest("What did Tom put in the bowl?", deadline_s=0.0))
    assert isinstance(info.value, TimeoutError)
    with pytest.raises(DeadlineExceeded):
        qa.ask(AskRequest("What did Tom put in the bowl?", deadline_s=-1.0))


# -- search --------------------------------------------------------------------------------
def test_search_finds_known_moments(qa):
    # how long a search takes is measured by benchmarks/bench_query.py, not asserted here
    moments = qa.search("the train to Oxford", Scope(), 3)
    assert any(
        m.stream_id == "station" and _overlaps(m.t_start, m.t_end, *STATION_SPEECH) for m in moments
    ), moments
    top = moments[0]
    # the why quotes what was heard; Whisper base hears this synthetic voice's "to Oxford" as
    # "talks for" (re-listening with the question fixes that at Ask time, not in Search)
    assert top.stream_id == "station" and re.search(r"oxford|train", top.why.lower())
    assert top.snippet_uri and top.segment_id.startswith("station@")
    assert [m.score for m in moments] == sorted((m.score for m in moments), reverse=True)

    moments = qa.search("green apples in a bowl", Scope(), 3)
    assert any(
        m.stream_id == "kitchen" and _overlaps(m.t_start, m.t_end, *KITCHEN_SPEECH) for m in moments
    ), moments

    moments = qa.search("KITCHEN", Scope(stream_ids=("station",)), 3)
    assert all(m.stream_id == "station" for m in moments)


def test_tight_deadline_answers_in_time_or_raises(qa):
    """A deadline too short for a model call is met by answering from the evidence alone."""
    try:
        res = qa.ask(AskRequest("What did Tom put in the blue bowl?", deadline_s=1.0))
    except DeadlineExceeded:
        return  # a loaded machine may not even finish retrieval in time: refusing is right
    assert res.timings_ms["total"] <= 1000.0 + 50.0, res.timings_ms


# -- parsing model replies (no store needed) -----------------------------------------------
@pytest.mark.parametrize(
    "reply, answer, confidence, abstained, letter",
    [
        ("Platform 7.", "Platform 7.", None, False, None),
        ("ANSWER: the blue bowl\nCONFIDENCE: 0.8", "the blue bowl", 0.8, False, None),
        ("Answer: NONE\nConfidence: 0", "", 0.0, True, None),
        ("not stated", "", None, True, None),
        ("The notes do not say.", "", None, True, None),
        ("- Remember to lock the door.", "Remember to lock the door.", None, False, None),
        ("It is twenty minutes, not stated exactly", "It is twenty minutes, not stated exactly", 0.5, False, None),
        ("confidence: 85%", "", 0.85, True, None),
        ("B", "B", None, False, 1),
        ("(C) the coffee machine", "(C) the coffee machine", None, False, 2),
        ("The answer is D. The lift", "D. The lift", None, False, 3),
        ("", "", None, True, None),
        ("\x00\ufffd", "", None, True, None),
    ],
)
def test_parse_reply(reply, answer, confidence, abstained, letter):
    from episodic.reasoning.model_reply import parse_reply

    options = ("the printer", "the back door", "the coffee machine", "the lift")
    parsed = parse_reply(reply, len(options), options)
    assert parsed.answer == answer
    assert parsed.confidence == confidence
    assert parsed.abstained is abstained
    assert parsed.letter == letter


def test_parse_reply_never_raises():
    from episodic.reasoning.model_reply import parse_reply

    for junk in (None, 42, "CONFIDENCE: 1e999", "CONFIDENCE: nan", "A" * 10000, "\n\n\n", "Z."):
        parsed = parse_reply(junk, 3, ("a", "b", "c"))  # type: ignore[arg-type]
        assert parsed.letter in (None, 0, 1, 2)
        assert parsed.confidence is None or 0.0 <= parsed.confidence <= 1.0
