"""Looking again at the stored video (issue 15), end to end on a real ingest: a sign on screen for
2 s that the ingest's key frames missed is found to within a second by Locate, and Ask escalates
to the inspect pathway for it and cites the frame."""

from __future__ import annotations

from dataclasses import replace

import pytest

from episodic import samples
from episodic.components import Components
from episodic.config import load_settings
from episodic.core.errors import InputError
from episodic.core.query import AskRequest, LocateRequest, Pathway, Scope
from episodic.pipeline import ingest_file
from episodic.services.qa import MemoryQA
from tests.vision_standin import RedScreenVision, vision_settings
from tests.vision_standin import start as start_vision

SIGN = (80.0, 82.0)  # "EAST DOCK" written over the same picture for 2 s: no cut
TINT = (141, 120, 160)


def _scenes() -> list[samples.Scene]:
    scenes = [samples.Scene(duration_s=20, seed=i, tint=((i * 37) % 200 + 30, 120, 160)) for i in range(3)]
    scenes += [
        samples.Scene(duration_s=20, seed=3, tint=TINT),
        samples.Scene(duration_s=2, seed=3, tint=TINT, text="EAST DOCK"),
        samples.Scene(duration_s=18, seed=3, tint=TINT),
        samples.Scene(duration_s=20, seed=10, tint=(30, 90, 140)),
    ]
    return scenes


@pytest.fixture(scope="module")
def qa(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect")
    # these tests judge what looking finds, not how fast: on a CI machine running two test
    # workers on two cores the look took longer than the default 6 s budget (bench_inspect.py
    # measures the time), so the budget here leaves room for a slow machine
    # and the key-frame rule for a new sign on the same background (memory/keyframes.py) off, so
    # that ingest misses the sign as it misses one too small or too brief for its key frames
    components = Components(load_settings(data_dir=root / "data", inspect_budget_s=60.0, keyframe_local_change=1.0))
    path = root / "harbour.mp4"
    speech = [samples.Speech(t=5.0, text="We are walking along the harbour this morning."),
              samples.Speech(t=100.0, text="The boats come in later in the afternoon.")]
    samples.make_recording(path, _scenes(), speech, fps=10)
    ingest_file(path, "harbour", components)
    voice = root / "voice.wav"
    samples.make_recording(voice, [samples.Scene(duration_s=6, seed=1)],
                           [samples.Speech(t=1.0, text="Only a voice here.")], video=False)
    ingest_file(voice, "voice", components)
    flash = root / "flash.mp4"  # a red screen for 2 s between grey ones
    samples.make_recording(flash, [samples.Scene(duration_s=30, seed=5, tint=(110, 110, 110)),
                                   samples.Scene(duration_s=2, seed=6, tint=(230, 10, 10), static=True),
                                   samples.Scene(duration_s=28, seed=5, tint=(110, 110, 110))],
                           [samples.Speech(t=2.0, text="Watch the screen over there.")], fps=10)
    ingest_file(flash, "flash", components)
    quay = root / "quay.mp4"  # a sign the ingest does read, inside a memory of tens of seconds
    samples.make_recording(quay, [samples.Scene(duration_s=20, seed=21, tint=(90, 120, 150)),
                                  samples.Scene(duration_s=2, seed=22, tint=(40, 150, 90), text="WEST PIER", static=True),
                                  samples.Scene(duration_s=30, seed=23, tint=(150, 120, 90))],
                           [samples.Speech(t=3.0, text="Here we are at the quay.")], fps=10)
    ingest_file(quay, "quay", components)
    service = MemoryQA(components, warm_after_request=False)
    yield service
    components.close()


def test_ingest_missed_the_sign(qa):
    memories = qa.c.store.list_memories(stream_id="harbour", with_vectors=False)
    assert memories and not any("EAST" in m.ocr_text.upper() for m in memories)


def test_locate_finds_the_sign_to_the_second(qa):
    found = qa.look.locate(LocateRequest("the sign for the east dock", Scope(("harbour",))))
    assert found.stopped == "found" and found.streams_looked == ["harbour"]
    best = found.moments[0]
    assert best.stream_id == "harbour" and SIGN[0] - 1.0 <= best.t <= SIGN[1] + 1.0, found
    assert best.t_end - best.t_start < 3.0 and "EAST" in best.why.upper()
    assert found.frames_examined <= 4 * 64  # a few grids, not the 1800 frames of the recording


def test_ask_escalates_to_inspect_and_cites_the_frame(qa):
    res = qa.ask(AskRequest("Which place was named on the sign?", options=("North gate", "East dock", "Fish market")))
    assert res.pathway is Pathway.INSPECT and res.choice_index == 1, res
    frame = res.evidence[0]
    assert frame.modality == "frame" and frame.stream_id == "harbour"
    assert SIGN[0] - 1.0 <= frame.t_start <= SIGN[1] and frame.segment_id.startswith("harbour@")
    assert frame.snippet_uri
    when = qa.ask(AskRequest("When was the sign for the east dock on screen?"))
    assert when.pathway is Pathway.INSPECT and "1:2" in when.answer, when  # 1:20-1:21
    assert 0 < when.confidence < 1


def test_a_sure_memory_of_a_sign_is_refined_to_the_second(qa):
    memories = qa.c.store.list_memories(stream_id="quay", with_vectors=False)
    knew = [m for m in memories if "WEST" in m.ocr_text.upper()]
    assert knew and knew[0].t_end - knew[0].t_start > 4.0  # the memory knows it, not when to the second
    res = qa.ask(AskRequest("When was the sign for the west pier on screen?", scope=Scope(("quay",))))
    assert res.pathway is Pathway.INSPECT, res
    frame = res.evidence[0]
    assert frame.modality == "frame" and 19.0 <= frame.t_start <= 23.0 and frame.t_end - frame.t_start < 3.0


def test_inspect_off_by_setting_still_runs_on_request(qa):
    settings = qa.c.settings
    look = settings.look
    object.__setattr__(settings, "look", replace(look, inspect_enabled=False))
    try:
        req = AskRequest("Which place was named on the sign?", options=("North gate", "East dock", "Fish market"))
        assert qa.ask(req).pathway is not Pathway.INSPECT
        assert qa.ask(replace(req, inspect=True)).pathway is Pathway.INSPECT
    finally:
        object.__setattr__(settings, "look", look)


def test_what_cannot_be_seen_is_said(qa):
    found = qa.look.locate(LocateRequest("the sign for the east dock", Scope(("voice",))))
    assert found.moments == [] and found.not_seen and "no stored video" in found.not_seen[0]
    with pytest.raises(InputError):
        qa.look.locate(LocateRequest("the sign", Scope(("harbour",)), max_frames=10))
    quick = qa.look.locate(LocateRequest("the sign for the east dock", Scope(("harbour",)), deadline_s=0.001))
    assert quick.frames_examined <= 64 and (quick.moments == [] or quick.stopped == "found")  # no hang


def test_a_vision_model_navigates_to_the_moment_and_answers_from_salient_frames(qa):
    """Master, Workers and MAGNET's agent with a vision-language model behind the OpenAI client:
    a stand-in that really looks at the pixels it is sent (red tiles, red frames)."""
    vision = RedScreenVision()
    server = start_vision(vision)
    components = qa.c
    before = components.settings
    try:
        components.settings = vision_settings(server.url, before, looker="openai")
        service = MemoryQA(components, warm_after_request=False)
        found = service.look.locate(LocateRequest("the red screen", Scope(("flash",))))
        assert found.moments and 29.0 <= found.moments[0].t <= 33.0, found
        res = service.ask(AskRequest("What colour was the screen when it flashed?", options=("blue", "red", "green"),
                                     scope=Scope(("flash",)), inspect=True))
        assert res.pathway is Pathway.INSPECT and res.choice_index == 1, res
        frame = res.evidence[0]
        assert frame.modality == "frame" and frame.stream_id == "flash" and 29.0 <= frame.t_start <= 33.0
        shown = [seen for seen in vision.seen if seen.images > 1]
        assert shown and shown[-1].images <= components.settings.look.sfs_frames  # the salient few
    finally:
        components.settings = before
        server.close()
