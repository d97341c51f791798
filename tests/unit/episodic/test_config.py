"""Configuration: defaults from the papers, file, environment, overrides, clear errors."""

from pathlib import Path

import pytest

from episodic.config import load_settings
from episodic.core.errors import ConfigError


def test_paper_defaults():
    s = load_settings(env={}, data_dir="/nonexistent-dir-for-test")
    assert (s.ssim_boundary, s.audio_neglog_energy_boundary) == (0.65, 40.0)
    assert (s.segment_min_s, s.segment_max_s) == (5.0, 10.0)
    assert (s.sample_fps_min, s.sample_fps_max) == (1.0, 10.0)
    assert s.consolidation_cos == 0.85 and s.keyframe_ssim_redundancy == 0.3
    assert s.resolved_milvus_uri.endswith("milvus.db")


def test_file_then_env_then_override(tmp_path: Path):
    cfg = tmp_path / "episodic.toml"
    cfg.write_text("[segmentation]\nsegment_min_s = 4\nsegment_max_s = 12\n")
    env = {"EPISODIC_SEGMENT_MAX_S": "11", "EPISODIC_DATA": str(tmp_path)}
    s = load_settings(env=env)  # file found in the data dir
    assert s.segment_min_s == 4.0 and s.segment_max_s == 11.0
    assert s.data_dir == tmp_path
    s = load_settings(env=env, segment_max_s=9)
    assert s.segment_max_s == 9.0


@pytest.mark.parametrize(
    "env, message",
    [
        ({"EPISODIC_SEGMENT_MIN_S": "five"}, "segment_min_s"),
        ({"EPISODIC_SEGMENT_MIN_S": "20"}, "segment_min_s <= segment_max_s"),
        ({"EPISODIC_EMBEDDER": "clip"}, "embedder"),
        ({"EPISODIC_SSIM_BOUNDARY": "nan"}, "ssim_boundary"),
        ({"EPISODIC_ANSWER_MODEL": "sometimes"}, "answer_model must be always, never or auto"),
    ],
)
def test_bad_values_are_clear_errors(env, message):
    with pytest.raises(ConfigError, match=message):
        load_settings(env=env, data_dir="/nonexistent-dir-for-test")


def test_unknown_key_and_bad_toml(tmp_path: Path):
    cfg = tmp_path / "a.toml"
    cfg.write_text("segmnt_min_s = 3\n")
    with pytest.raises(ConfigError, match="unknown setting 'segmnt_min_s'"):
        load_settings(config_file=cfg, env={})
    cfg.write_text("segment_min_s = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(config_file=cfg, env={})
    with pytest.raises(ConfigError, match="not found"):
        load_settings(config_file=tmp_path / "missing.toml", env={})


def test_keys_are_filed_under_sections_and_read_flat_or_by_section():
    from dataclasses import fields

    from episodic.config import FIELD_SECTION, SECTIONS, Settings
    from episodic.config.serving import RetrievalSettings
    from episodic.config.transport import KafkaSettings

    every = [f.name for cls in SECTIONS.values() for f in fields(cls)]
    assert len(every) == len(set(every)) == len(FIELD_SECTION)  # flat keys stay unique
    s = Settings(segment_min_s=6.0, kafka_topic="t1")
    assert s.segmentation.segment_min_s == s.segment_min_s == 6.0
    assert isinstance(s.kafka, KafkaSettings) and s.kafka.kafka_topic == "t1"
    assert isinstance(s.retrieval, RetrievalSettings) and not hasattr(s.retrieval, "kafka_topic")
    assert set(s.flat()) == set(FIELD_SECTION)
    t = s.replace(kafka=KafkaSettings(kafka_topic="t2"), segment_max_s=12.0)
    assert (t.kafka_topic, t.segment_max_s, t.segment_min_s) == ("t2", 12.0, 6.0)
    assert s.kafka_topic == "t1"  # the original is untouched
    import dataclasses

    assert dataclasses.replace(s, segment_min_s=4.0).segment_min_s == 4.0  # a key beats its section
    with pytest.raises(TypeError, match="unknown setting"):
        Settings(segment_min=5)
    with pytest.raises(AttributeError, match="no setting"):
        _ = s.segment_minimum_s


def test_each_section_checks_its_own_values_and_validate_relates_them():
    from episodic.config import Settings, validate
    from episodic.config.transport import ReconnectSettings

    assert ReconnectSettings(reconnect_first_delay_s=0).problems()  # its own check
    assert ReconnectSettings().problems() == []
    with pytest.raises(ConfigError, match="reconnect delays"):
        validate(Settings(reconnect_first_delay_s=0))
    with pytest.raises(ConfigError, match="checkpoint_interval_s must be >= segment_max_s"):
        validate(Settings(checkpoint_interval_s=8.0))  # chunks against segmentation
    with pytest.raises(ConfigError, match="people_detector must be auto, blaze or opencv"):
        validate(Settings(people_detector="yolo"))
    with pytest.raises(ConfigError, match="people_pose_min_score"):
        validate(Settings(people_pose_min_score=1.5))
    assert validate(Settings()) == Settings()
