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
