"""Hearing what is not speech (memory/sound.py): window kinds on generated sounds the rules
were never tuned on (seeds 2000+; tuning used the dev split's seeds 0–23), merging of
windows, the "sound" evidence units and query cues, and one small end-to-end ingest where a
music stretch must be stored, found by search and cited by Ask."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from episodic import sample_sounds as ss
from episodic.core.records import ShortTermMemory, SoundObservation, TranscriptPiece
from episodic.memory.sound import (
    FeatureSoundDescriber,
    SoundDescriber,
    WindowKind,
    merge_windows,
    searchable,
)
from episodic.retrieval.detailed import units_of
from episodic.samples import synthesize

RATE = 16000
SEEDS = range(2000, 2008)


def _at_dbfs(x: np.ndarray, dbfs: float) -> np.ndarray:
    rms = float(np.sqrt(np.mean(x.astype(np.float64) ** 2))) or 1.0
    return (x * (10 ** (dbfs / 20) / rms)).astype(np.float32)


def _main_kind(obs: list[SoundObservation]) -> str:
    """The kind covering most of the clip."""
    cover: dict[str, float] = {}
    for o in obs:
        cover[o.kind] = cover.get(o.kind, 0.0) + o.t_end - o.t_start
    return max(cover, key=cover.get)


def test_generators_are_seeded_and_vary():
    a, b = ss.music(2.0, RATE, 1), ss.music(2.0, RATE, 1)
    assert np.array_equal(a, b) and a.dtype == np.float32 and a.size == 2 * RATE
    assert abs(float(np.abs(a).max()) - ss.PEAK) < 1e-3
    assert not np.allclose(a, ss.music(2.0, RATE, 2))
    mixed = ss.mix_at_snr(a, ss.noise(0.5, RATE, 0, "pink"), 10.0)  # tiled to the signal
    noise_part = mixed - a
    snr = 10 * np.log10(np.mean(a.astype(np.float64) ** 2) / np.mean(noise_part.astype(np.float64) ** 2))
    assert mixed.size == a.size and abs(snr - 10.0) < 0.3
    with pytest.raises(ValueError):
        ss.noise(1.0, RATE, 0, "purple")


@pytest.mark.parametrize(
    ("make", "kind", "words"),
    [(ss.music, "music", "music"), (ss.engine, "engine", "engine"), (ss.applause, "applause", "applause")],
)
def test_held_out_sounds_are_described_as_such(make, kind, words):
    describer = FeatureSoundDescriber()
    rng = np.random.default_rng(5)
    right = 0
    for seed in SEEDS:
        x = _at_dbfs(make(4.0, RATE, seed), float(rng.uniform(-32, -12)))
        x = x + _at_dbfs(ss.noise(4.0, RATE, seed, "pink"), -62)  # room tone under it
        obs = describer.describe(x, RATE, 10.0)
        assert obs and obs[0].t_start == 10.0 and abs(obs[-1].t_end - 14.0) < 1e-6
        assert all(0.0 <= o.confidence <= 1.0 for o in obs)
        if _main_kind(obs) == kind:
            right += 1
            assert any(words in o.description for o in obs if o.kind == kind)
    assert right >= 7, f"{kind}: {right}/{len(SEEDS)} held-out seeds described as {kind}"


def test_applause_in_a_noisy_place_is_applause_and_steady_noise_is_not():
    """Applause over steady noise at 5 and 0 dB (a hall, a street) is still applause, window by
    window; the same noise alone never is (seeds the rules were not tuned on). Before the rules
    had an "applause in noise" prototype, 27/32 and 20/32 windows were applause."""
    describer = FeatureSoundDescriber()
    heard = {5.0: 0, 0.0: 0}
    false_alarms = 0
    for i, seed in enumerate(SEEDS):
        colour = ("white", "pink", "brown", "babble")[i % 4]
        bg = ss.noise(4.0, RATE, seed + 50, colour)
        clap = _at_dbfs(ss.applause(4.0, RATE, seed), -20)
        for snr in heard:
            kinds = [w.kind for w in describer.window_kinds(ss.mix_at_snr(clap, bg, snr), RATE)]
            heard[snr] += kinds.count("applause")
        false_alarms += [w.kind for w in describer.window_kinds(_at_dbfs(bg, -20), RATE)].count("applause")
    assert heard[5.0] >= 30 and heard[0.0] >= 26, heard  # of 32 windows each
    assert false_alarms == 0


def test_music_in_a_noisy_place_is_music_and_speech_in_that_noise_is_not():
    """Music over white or pink noise at 10 dB (a radio in a workshop) keeps its held notes,
    window by window; speech over the same noise stays speech (seeds the rules were not tuned
    on). Before the "music in noise" prototype, 18 of the 32 music windows were music."""
    describer = FeatureSoundDescriber()
    music = speech_as_music = 0
    for i, seed in enumerate(SEEDS):
        bg = ss.noise(4.0, RATE, seed + 60, ("white", "pink")[i % 2])
        tune = _at_dbfs(ss.music(4.0, RATE, seed), -24)
        music += [w.kind for w in describer.window_kinds(ss.mix_at_snr(tune, bg, 10.0), RATE)].count("music")
    for i, text in enumerate(("The poetry reading is in room four oh six.",
                              "Please remember that the ferry crossing begins at eight thirty-five.")):
        voice = _at_dbfs(synthesize(text, ("en-gb+m3", "en-us+f3")[i]), -24)
        bg = ss.noise(voice.size / RATE, RATE, 2100 + i, ("white", "pink")[i])[: voice.size]
        kinds = [w.kind for w in describer.window_kinds(ss.mix_at_snr(voice, bg, 15.0), RATE)]
        speech_as_music += kinds.count("music")
    assert music >= 28, music  # of 32 windows
    assert speech_as_music == 0


def test_an_engine_in_a_noisy_place_is_an_engine_and_the_noise_alone_is_not():
    """An engine over white, pink or babble noise at 10 and 5 dB (a street, a windy yard) keeps
    its low band and its firing harmonics, window by window; the same noise alone, and brown
    noise (all low band), never is an engine (seeds the rules were not tuned on). Before the
    "engine in noise" prototype, 18/32 and 0/32 windows were engine; with it, 26 and 23."""
    describer = FeatureSoundDescriber()
    heard = {10.0: 0, 5.0: 0}
    false_alarms = 0
    for i, seed in enumerate(SEEDS):
        colour = ("white", "pink", "babble")[i % 3]
        bg = ss.noise(4.0, RATE, seed + 70, colour)
        motor = _at_dbfs(ss.engine(4.0, RATE, seed), -22)
        for snr in heard:
            heard[snr] += [w.kind for w in describer.window_kinds(ss.mix_at_snr(motor, bg, snr), RATE)].count("engine")
        for noise in (bg, ss.noise(4.0, RATE, seed + 80, "brown")):
            false_alarms += [w.kind for w in describer.window_kinds(_at_dbfs(noise, -22), RATE)].count("engine")
    assert heard[10.0] >= 24 and heard[5.0] >= 20, heard  # of 32 windows each
    assert false_alarms == 0


def test_a_music_bed_is_heard_in_the_pauses_around_the_voice_it_accompanies():
    """Music 14 dB under a voice, with white or pink hiss 12 or 18 dB under it (a vlog's bed
    in a noisy room): in the pauses before and after the voice the music is about as loud as
    the hiss, whose flat spectrum hides its harmonics; its held notes still keep their place.
    The same clip without the bed never has music. Before the "music under hiss" prototype
    the bed was heard in 8 of these 16 clips; with it, 14."""
    describer = FeatureSoundDescriber()
    texts = ("The poetry reading is in room four oh six.",
             "Please remember that the ferry crossing begins at eight thirty-five.",
             "Our bus leaves from the north gate at noon.",
             "Bring the blue folder to the second meeting.")
    voices = ("en-gb+m3", "en-us+f3", "en-gb-scotland+f2", "en-029+m1")
    heard = false_alarms = 0
    n, s0 = int(7.5 * RATE), int(2.0 * RATE)
    for i, seed in enumerate(range(2100, 2116)):
        voice = _at_dbfs(synthesize(texts[i % 4], voices[i % 4]), -24)
        speech = np.zeros(n, np.float32)
        speech[s0 : s0 + voice.size] = voice[: n - s0]
        hiss = _at_dbfs(ss.noise(7.5, RATE, seed + 40, ("white", "pink")[i % 2]), -24 - (12.0, 18.0)[(i // 2) % 2])
        bed = _at_dbfs(ss.music(7.5, RATE, seed), -24 - 14)
        said = [TranscriptPiece(2.0, 2.0 + voice.size / RATE, texts[i % 4])]
        heard += "music" in {o.kind for o in describer.describe(speech + hiss + bed, RATE, 0.0, said)}
        false_alarms += "music" in {o.kind for o in describer.describe(speech + hiss, RATE, 0.0, said)}
    assert heard >= 13, heard
    assert false_alarms == 0


def test_a_music_bed_wholly_under_a_voice_is_heard_in_the_gaps_between_its_words():
    """A voice that never pauses long enough for a music window of its own, over a music bed
    6, 9 or 12 dB down (seeds 2400–2423, sentences and speaking rates no rule was tuned on):
    the bed keeps its notes through the gaps between words. Before the floor-tonality rule
    7 of these 24 clips had music; with it, 21. The same voices without the bed, alone or in
    pink noise 15 dB down, never have music."""
    describer = FeatureSoundDescriber()
    texts = ("Please remember that the ferry crossing begins at eight thirty-five, so do not be late.",
             "The poetry reading is in room four oh six, right next to the old staircase.",
             "Our bus leaves from the north gate at noon and comes back before the evening.",
             "Bring the blue folder to the second meeting and ask Maria about the budget.")
    voices = ("en-gb+m3", "en-us+f3", "en-gb-scotland+f2", "en-029+m1", "en-us-nyc+f1", "en-gb-x-rp+f4")
    heard = false_alarms = 0
    for i, seed in enumerate(range(2400, 2424)):
        voice = _at_dbfs(synthesize(texts[i % 4], voices[i % 6], 140 + 10 * (i % 5), RATE), -22)
        seconds = voice.size / RATE
        said = [TranscriptPiece(0.0, seconds, texts[i % 4])]
        bed = _at_dbfs(ss.music(seconds, RATE, seed), -22 - (6.0, 9.0, 12.0)[i % 3])
        heard += "music" in {o.kind for o in describer.describe(voice + bed, RATE, 0.0, said)}
        hiss = ss.mix_at_snr(voice, ss.noise(seconds, RATE, seed + 50, "pink"), 15.0)
        for plain in (voice, hiss):
            false_alarms += "music" in {o.kind for o in describer.describe(plain, RATE, 0.0, said)}
    assert heard >= 19, heard
    assert false_alarms == 0


def test_a_rough_engine_over_hiss_is_an_engine():
    """An engine with much roar of its own holds its peaks less steadily than a smooth one;
    over white hiss 18 dB down or pink noise 10 dB down it is still low, dark and not
    harmonic like brown noise. Seeds 2300–2399 (no rule was tuned on them): before the
    "rough engine" prototype 355 and 314 of 400 windows were an engine; with it, 383 and 377."""
    describer = FeatureSoundDescriber()
    heard = {("white", 18.0): 0, ("pink", 10.0): 0}
    for seed in range(2300, 2400):
        motor = _at_dbfs(ss.engine(4.0, RATE, seed), -22)
        for colour, snr in heard:
            x = ss.mix_at_snr(motor, ss.noise(4.0, RATE, seed + 91, colour), snr)
            heard[colour, snr] += [w.kind for w in describer.window_kinds(x, RATE)].count("engine")
    assert heard["white", 18.0] >= 372 and heard["pink", 10.0] >= 362, heard


def test_steady_noise_of_any_colour_is_never_music_or_an_engine():
    """Hiss, rumble and babble at ordinary levels hold no note: none of 640 windows may be
    called music or an engine (seeds no rule was tuned on)."""
    describer = FeatureSoundDescriber()
    named = []
    for colour in ("white", "pink", "brown", "babble"):
        for seed in range(2200, 2240):
            x = _at_dbfs(ss.noise(4.0, RATE, seed, colour), -22.0 - 6.0 * (seed % 3))
            named += [w.kind for w in describer.window_kinds(x, RATE) if w.kind in ("music", "engine")]
    assert named == []


def test_silence_and_room_tone_are_silence():
    describer = FeatureSoundDescriber()
    for x in (
        np.zeros(3 * RATE, np.float32),
        _at_dbfs(ss.noise(3.0, RATE, 2001, "brown"), -55),
        _at_dbfs(ss.noise(3.0, RATE, 2002, "white"), -47),
    ):
        (obs,) = describer.describe(x, RATE, 0.0)
        assert (obs.kind, obs.description, obs.t_start, obs.t_end) == ("silence", "silence", 0.0, 3.0)
        assert obs.confidence >= 0.6


def test_speech_is_not_called_music():
    describer = FeatureSoundDescriber()
    text = "Could you pass me the green folder from the shelf behind you, please?"
    for voice in ("en-gb-x-rp+f4", "en-029+m4", "en-us-nyc+f1"):
        x = _at_dbfs(synthesize(text, voice, 150, RATE), -20)
        windows = describer.window_kinds(x, RATE)
        kinds = [w.kind for w in windows]
        assert kinds.count("music") == 0, (voice, kinds)
        assert kinds.count("speech") >= 0.7 * len(kinds), (voice, kinds)
        assert _main_kind(describer.describe(x, RATE, 0.0)) == "speech"


def test_loud_noise_and_transcript_cues():
    describer = FeatureSoundDescriber()
    loud = _at_dbfs(ss.noise(3.0, RATE, 2003, "white"), -15)
    (obs,) = describer.describe(loud, RATE, 0.0)
    assert (obs.kind, obs.description) == ("noise", "loud noise")
    # Whisper's own tag names what it heard; words recognised in a window are a speech cue
    tagged = describer.window_kinds(loud, RATE, 0.0, [TranscriptPiece(0.0, 3.0, "[Music]")])
    assert all(w.kind != "speech" for w in tagged)
    assert isinstance(describer, SoundDescriber) and describer.model_id


def _w(t0: float, kind: str, conf: float = 0.8, also: str = "") -> WindowKind:
    return WindowKind(t0, t0 + 1.0, kind, conf, -20.0, also)


def test_merging_windows():
    windows = [_w(0, "music"), _w(1, "music", 0.6), _w(2, "speech"), _w(3, "music"), _w(4, "music"),
               _w(5, "silence"), _w(6, "silence"), _w(7, "silence")]
    obs = merge_windows(windows, min_run_s=2.0)
    # the one-window "speech" blip inside the music joins it; silence stays its own run
    assert [(o.t_start, o.t_end, o.kind) for o in obs] == [(0, 5, "music"), (5, 8, "silence")]
    assert obs[0].description == "music playing"
    assert obs[0].confidence == pytest.approx(np.mean([0.8, 0.6, 0.4, 0.8, 0.8]), abs=1e-3)
    # without smoothing every change of kind starts a new observation
    assert len(merge_windows(windows, min_run_s=0.0)) == 4
    # music heard under speech becomes its own observation, joined to the music beside it
    bed = merge_windows([_w(0, "music"), _w(1, "music"), _w(2, "speech", 0.7, "music"),
                         _w(3, "speech", 0.7, "music")], 2.0)
    assert [(o.t_start, o.t_end, o.kind) for o in bed] == [(0, 4, "music"), (2, 4, "speech")]
    assert [o.kind for o in searchable(bed)] == ["music"]


def test_sound_units_and_query_cues():
    from episodic.retrieval.query_analysis import SOUND_CUES

    memory = ShortTermMemory(
        id="m1", stream_id="hall", t_start=0.0, t_end=10.0, vector=np.zeros(4, np.float32),
        transcript=[TranscriptPiece(0.5, 3.0, "Welcome everyone.")],
        sounds=[
            SoundObservation(0.0, 3.0, "speech", 0.9, "speech"),
            SoundObservation(3.0, 6.0, "music", 0.8, "music playing"),
            SoundObservation(6.0, 7.0, "silence", 0.7, "silence"),
            SoundObservation(7.0, 10.0, "music", 0.8, "music playing"),
        ],
    )
    units = [u for u in units_of(memory) if u.modality == "sound"]
    assert [(u.text, u.t_start, u.t_end) for u in units] == [("music playing", 3.0, 10.0), ("silence", 6.0, 7.0)]
    assert {"music", "heard", "engine", "applause", "quiet", "silent"} <= SOUND_CUES


@pytest.mark.slow
def test_music_stretch_is_stored_found_and_cited(tmp_path):
    """A 24 s recording: speech, 10 s of music, speech. Ingested for real (Whisper, MiniLM,
    Milvus Lite); the music must come back from the store at the right time, with an E_i
    entry, and both Search and Ask about music must point there."""
    from episodic.components import Components
    from episodic.config import load_settings
    from episodic.core.query import AskRequest, Scope
    from episodic.pipeline import ingest_file
    from episodic.services.qa import MemoryQA

    rate = 48000
    n = 24 * rate
    track = _at_dbfs(ss.noise(24.0, rate, 2100, "pink"), -60)
    for t0, text in ((1.0, "Good evening and welcome to the concert hall."),
                     (18.0, "Please take your seats, the show begins soon.")):
        voice = synthesize(text, "en-us+f3", 140, rate)
        s = int(t0 * rate)
        track[s : s + voice.size] += voice[: n - s]
    music_span = (7.0, 17.0)
    m = _at_dbfs(ss.music(10.0, rate, 2101), -18)
    track[int(music_span[0] * rate) : int(music_span[0] * rate) + m.size] += m
    path = tmp_path / "hall.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((np.clip(track, -1, 1) * 32767).astype("<i2").tobytes())

    components = Components(load_settings(data_dir=Path(tmp_path) / "data"))
    try:
        ingest_file(path, "hall", components)
        memories = components.store.list_memories("hall", limit=100)
        full = [components.store.get_memory(mm.id, with_vectors=True) for mm in memories]
        music = [o for mm in full for o in mm.sounds if o.kind == "music"]
        covered = sum(max(0.0, min(o.t_end, music_span[1]) - max(o.t_start, music_span[0])) for o in music)
        assert covered >= 0.7 * (music_span[1] - music_span[0]), music
        assert all(o.t_start >= music_span[0] - 1.5 and o.t_end <= music_span[1] + 1.5 for o in music)
        entries = [e for mm in full for e in mm.embeddings if e.modality == "sound"]
        assert any(e.text == "music playing" and e.vector.size for e in entries)

        qa = MemoryQA(components)
        moments = qa.search("when was there music?", Scope(), 3)
        assert moments and moments[0].t_start < music_span[1] and moments[0].t_end > music_span[0]
        result = qa.ask(AskRequest(question="When was there music?"))
        cited = [e for e in result.evidence if e.modality == "sound" and "music" in e.text]
        assert cited and cited[0].t_start < music_span[1] and cited[0].t_end > music_span[0]
    finally:
        components.close()
