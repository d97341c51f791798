"""Scoring given options against the audio (retrieval/option_audio.py).

Unit parts: numbers said as words, where the answer's slot is in a garbled sentence, and the
decision rule (with a stand-in scorer). End to end (slow): a generated recording whose stored
transcript is overwritten with a garble, the options put into it and scored by Whisper base
against the real audio.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from episodic import samples
from episodic.config import load_settings
from episodic.retrieval.option_audio import (
    hear_options,
    number_words,
    scoreable,
    slot_windows,
    spoken_forms,
    words_of,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_relisten import overwrite_transcript, speech_memory  # noqa: E402

SENTENCE = "The flower show is in room three twelve."
GARBLED = "The flow ashore is in room pre-tweil."
QUESTION = "In what room is the flower show?"
OPTIONS = ["316", "312", "213", "131"]


@pytest.mark.parametrize("n, said", [(0, "zero"), (13, "thirteen"), (40, "forty"), (312, "three hundred twelve"),
                                     (1005, "one thousand five"), (2026, "two thousand twenty-six"), (39, "thirty-nine")])
def test_number_words(n, said):
    assert number_words(n) == said


def test_spoken_forms_of_numbers_and_times():
    assert spoken_forms("312") == ["312", "three hundred twelve", "three twelve"]
    # a room with a zero in it is said with an "oh": "two oh seven", heard "2 for salmon"
    assert spoken_forms("207") == ["207", "two hundred seven", "two oh seven"]
    assert spoken_forms("1005") == ["1005", "one thousand five", "ten oh five"]
    assert spoken_forms("9:35") == ["9:35", "nine thirty-five", "twenty-five to ten"]
    assert spoken_forms("11:05") == ["11:05", "eleven oh five", "five past eleven"]
    assert spoken_forms("9.15") == ["9.15", "9:15", "nine fifteen", "quarter past nine"]
    assert spoken_forms("11:00") == ["11:00", "eleven o'clock"]
    # a time or a number given in words may be written in digits by the recogniser
    assert spoken_forms("ten to eight") == ["ten to eight", "7:50", "seven fifty"]
    assert spoken_forms("half past eleven") == ["half past eleven", "11:30", "eleven thirty"]
    assert spoken_forms("thirteen") == ["thirteen", "13"]
    # compound numbers as English writes them, which is what the recogniser expects to score
    assert spoken_forms("23 dollars") == ["23 dollars", "twenty-three dollars"]
    assert spoken_forms("twenty three dollars") == ["twenty three dollars", "23 dollars", "twenty-three dollars"]
    assert spoken_forms("Blue") == ["Blue"] and spoken_forms("Daniel") == ["Daniel"]


def test_the_slot_is_where_an_option_could_have_been_said():
    words = words_of(GARBLED)
    windows = [" ".join(words[i : i + n]) for i, n in slot_windows(words, QUESTION, OPTIONS)]
    assert windows[0] == "pre tweil."  # "room" is the question's word: the answer follows it
    assert all("room" not in w for w in windows)
    # a value joined to the question's word before it by a hyphen ("costs forty-five dollars"
    # heard as "cost-sported Ive dollars"): the slot is the part after the hyphen and on
    words = words_of("The seed packet cost-sported Ive dollars to make.")
    assert words[:5] == ["The", "seed", "packet", "cost", "sported"]
    windows = [" ".join(words[i : i + n]) for i, n in
               slot_windows(words, "How much does the seed packet cost?", ["34 dollars", "45 dollars", "12 dollars"])]
    assert "sported Ive dollars" in windows and not any("cost" in w for w in windows), windows
    assert words_of("It costs 3-12 today") == ["It", "costs", "3-12", "today"]  # digits keep their hyphen
    words = words_of("Pre-appainted that wandering can blew.")
    first = slot_windows(words, "Which colour is the watering can that Priya painted?",
                         ["green", "blue", "red", "white"])[0]
    assert " ".join(words[first[0] : first[0] + first[1]]) == "blew."


def test_a_value_lost_at_the_end_of_a_sentence_has_its_slot_after_the_last_word():
    """A re-hearing that stopped after "The night train is in room" says no value where every
    option is one: the options go after its last word (a window of length 0). A sentence that
    says a number, or options that are not values, get no such slot."""
    question, options = "Which room is the night train in?", ["208", "114", "108", "325"]
    words = words_of("The night train is in room")
    assert slot_windows(words, question, options) == [(6, 0)]
    words = words_of("The height really is in room to head.")
    windows = slot_windows(words, question, options)
    assert windows[1] == (len(words), 0) and len(windows) == 4
    assert (len(words), 0) not in slot_windows(words_of("The night train is in room 5 today."), question, options)
    assert (len(words), 0) not in slot_windows(words, "Where is the night train?", ["platform", "bridge"])

    def score(_encoded, texts, _language):
        return [-9.0 if texts[k].endswith("room 208") else -14.0 for k in range(len(texts))]

    h = hear_options(score, None, "The night train is in room", question, options)
    assert h.heard == 0 and h.sentences[0] == "The night train is in room 208"


def test_the_option_the_audio_carries_clearly_best_is_heard():
    def score(_encoded, texts, _language):
        return [-18.0 if "312" in t else -21.5 for t in texts]  # total log-probabilities

    h = hear_options(score, None, GARBLED, QUESTION, OPTIONS)
    assert h.heard == 1 and h.reason == "heard" and h.margin == pytest.approx(3.5)
    assert h.sentences[1] == "The flow ashore is in room 312"

    def close(_encoded, texts, _language):
        return [-18.0 if "312" in t else -19.5 for t in texts]  # 1.5 nats: not clear enough

    h = hear_options(close, None, GARBLED, QUESTION, OPTIONS)
    assert h.heard is None and h.reason == "too close"
    assert hear_options(score, None, "", QUESTION, OPTIONS).reason == "no slot"

    def said(_encoded, texts, _language):  # the audio says the time the way people say it
        return [-15.0 if "ten past twelve" in t else -20.0 for t in texts]

    h = hear_options(said, None, "The story hour starts at tempest while.", "When does the story hour start?",
                     ["12:10", "7:50", "quarter past one"])
    assert h.heard == 0 and "starts at ten past twelve" in h.sentences[0]
    assert scoreable(OPTIONS) and not scoreable(["who takes care of the clipboard today", "x"])
    assert not scoreable(["312"])


@pytest.fixture(scope="module")
def garbled(tmp_path_factory):
    from episodic.components import Components
    from episodic.pipeline import ingest_file
    from episodic.services.qa import MemoryQA

    root = tmp_path_factory.mktemp("options")
    components = Components(load_settings(data_dir=root / "data", relisten_score_options=True))
    path = root / "hall.mp4"
    samples.make_recording(path, [samples.Scene(duration_s=7, seed=8)], [samples.Speech(t=1.0, text=SENTENCE)])
    ingest_file(path, "hall", components)
    memory = speech_memory(components.store, "hall")
    overwrite_transcript(components, memory.id, GARBLED)
    service = MemoryQA(components, warm_after_request=False)
    service.prepare()
    yield service, components, components.store.get_memory(memory.id, with_vectors=True)
    components.close()


@pytest.mark.slow
def test_whisper_hears_which_option_was_said_in_a_garbled_sentence(garbled):
    from episodic.retrieval.snippet_audio import memory_audio
    from episodic.retrieval.transcript_scorer import TranscriptScorer

    service, components, memory = garbled
    audio = memory_audio(memory, memory.t_start, memory.t_end, components.snippets.path_for)
    scorer = TranscriptScorer(service.relisten._whisper())
    h = hear_options(scorer.loglik, scorer.encode(audio), GARBLED, QUESTION, OPTIONS)
    assert h.heard == 1, h  # "three twelve" was said
    assert h.margin >= 2.0


@pytest.mark.slow
def test_a_multiple_choice_question_about_speech_is_answered_with_what_was_heard(garbled):
    from episodic.core.query import AskRequest

    service, _, _ = garbled
    question = "Which room did they say the flower show is in?"
    result, trace = service.ask_traced(AskRequest(question, options=tuple(OPTIONS)))
    assert result.choice_index == 1, (result.answer, trace.notes.get("options_heard"))
    heard = trace.notes.get("options_heard")
    assert heard is not None and heard["reason"] in ("heard", "too close")
    assert "option_audio" in result.timings_ms
