"""One place for configuration: defaults from the papers, a TOML file, then environment.

Precedence (later wins): built-in defaults → TOML file → ``EPISODIC_<FIELD>`` environment
variables → explicit overrides (CLI flags). Every name carries its unit (``_s``, ``_hz``,
``_fps``) so a value is never ambiguous. TOML tables are only for grouping: keys are flat and
unique, so ``[segmentation] segment_min_s = 6`` and ``segment_min_s = 6`` mean the same thing.

Inside the program the keys are filed under sections (storage, sampling, segmentation, vision,
sound, speech, models, consolidation, snippets, limits, retrieval, articles, server, metrics,
chunks, reconnect, kafka, retention; defined in :mod:`.ingest`, :mod:`.serving`,
:mod:`.transport` and :mod:`.retention`),
each checking its own values; a component is given the section it needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import tomllib

from episodic.config.ingest import (
    DEFAULT_DATA_DIR,
    ConsolidationSettings,
    LimitSettings,
    ModelSettings,
    SamplingSettings,
    SegmentationSettings,
    SnippetSettings,
    SoundSettings,
    SpeechSettings,
    StorageSettings,
    VisionSettings,
)
from episodic.config.retention import RetentionSettings
from episodic.config.serving import (
    ArticleSettings,
    LookSettings,
    MetricsSettings,
    RecallSettings,
    RetrievalSettings,
    ServerSettings,
)
from episodic.config.transport import ChunkSettings, KafkaSettings, ReconnectSettings
from episodic.config.watches import WatchSettings
from episodic.core.errors import ConfigError

ENV_PREFIX = "EPISODIC_"
CONFIG_FILE_NAME = "episodic.toml"


# section name → its class; the order is the order keys are documented in
SECTIONS: dict[str, type] = {
    "storage": StorageSettings,
    "sampling": SamplingSettings,
    "segmentation": SegmentationSettings,
    "vision": VisionSettings,
    "sound": SoundSettings,
    "speech": SpeechSettings,
    "models": ModelSettings,
    "consolidation": ConsolidationSettings,
    "snippets": SnippetSettings,
    "limits": LimitSettings,
    "retrieval": RetrievalSettings,
    "look": LookSettings,
    "recall": RecallSettings,
    "articles": ArticleSettings,
    "server": ServerSettings,
    "metrics": MetricsSettings,
    "chunks": ChunkSettings,
    "reconnect": ReconnectSettings,
    "kafka": KafkaSettings,
    "retention": RetentionSettings,
    "watches": WatchSettings,
}
# every flat key → the section it is filed under
FIELD_SECTION: dict[str, str] = {f.name: name for name, cls in SECTIONS.items() for f in fields(cls)}


@dataclass(frozen=True, init=False)
class Settings:
    """All tunables, filed under sections (:mod:`episodic.config.ingest`, ``.serving``,
    ``.transport``). A component takes the section it needs (``settings.segmentation``);
    every key can still be read flat (``settings.segment_min_s``) and is written flat in TOML,
    the environment and :meth:`replace`, so the keys users know never changed."""

    storage: StorageSettings
    sampling: SamplingSettings
    segmentation: SegmentationSettings
    vision: VisionSettings
    sound: SoundSettings
    speech: SpeechSettings
    models: ModelSettings
    consolidation: ConsolidationSettings
    snippets: SnippetSettings
    limits: LimitSettings
    retrieval: RetrievalSettings
    look: LookSettings
    recall: RecallSettings
    articles: ArticleSettings
    server: ServerSettings
    metrics: MetricsSettings
    chunks: ChunkSettings
    reconnect: ReconnectSettings
    kafka: KafkaSettings
    retention: RetentionSettings
    watches: WatchSettings
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __init__(self, extra: dict[str, Any] | None = None, **values: Any) -> None:
        """Flat keys (``segment_min_s=6``) and/or whole sections (``kafka=KafkaSettings(…)``)."""
        given: dict[str, dict[str, Any]] = {name: {} for name in SECTIONS}
        for key, value in values.items():  # whole sections first…
            if key in SECTIONS:
                if not isinstance(value, SECTIONS[key]):
                    raise TypeError(f"section {key!r} must be a {SECTIONS[key].__name__}")
                given[key].update({f.name: getattr(value, f.name) for f in fields(value)})
            elif key not in FIELD_SECTION:
                raise TypeError(f"unknown setting {key!r}")
        for key, value in values.items():  # …then single keys, which win (dataclasses.replace)
            if key in FIELD_SECTION:
                given[FIELD_SECTION[key]][key] = value
        for name, cls in SECTIONS.items():
            object.__setattr__(self, name, cls(**given[name]))
        object.__setattr__(self, "extra", dict(extra or {}))

    def __getattr__(self, name: str) -> Any:
        # only reached for names that are not attributes: a flat key is read from its section
        section = FIELD_SECTION.get(name)
        if section is None:
            raise AttributeError(f"{type(self).__name__!s} has no setting {name!r}")
        return getattr(object.__getattribute__(self, section), name)

    def flat(self) -> dict[str, Any]:
        """Every key and its value, as the TOML file and the environment name them."""
        return {key: getattr(getattr(self, section), key) for key, section in FIELD_SECTION.items()}

    def replace(self, **changes: Any) -> Settings:
        """A copy with some flat keys (or whole sections) changed."""
        values: dict[str, Any] = self.flat()
        for key, value in changes.items():
            if key in SECTIONS:
                values.update({f.name: getattr(value, f.name) for f in fields(value)})
            else:
                values[key] = value
        return Settings(extra=self.extra, **values)

    # -- derived locations -----------------------------------------------------------------
    @property
    def resolved_milvus_uri(self) -> str:
        return self.storage.resolved_milvus_uri

    @property
    def resolved_snippet_dir(self) -> Path:
        return self.storage.resolved_snippet_dir

    @property
    def snippet_s3_location(self) -> tuple[str, str] | None:
        return self.storage.snippet_s3_location

    @property
    def resolved_snippet_cache_dir(self) -> Path:
        return self.storage.resolved_snippet_cache_dir

    @property
    def resolved_model_cache_dir(self) -> Path:
        return self.models.resolved_model_cache_dir

    @property
    def resolved_forget_dir(self) -> Path:
        return self.retention.resolved_forget_dir(self.data_dir)

    # -- derived choices -----------------------------------------------------------------------
    @property
    def asks_answer_model(self) -> bool:
        """Whether Ask asks the language model for a vote (``answer_model``; auto = only a
        capable backend, ``llm = "openai"``)."""
        mode = self.retrieval.answer_model
        return mode == "always" or (mode == "auto" and self.models.llm == "openai")


_FIELDS = {f.name: f for cls in SECTIONS.values() for f in fields(cls)}


def _coerce(name: str, raw: Any) -> Any:
    """Turn a TOML or environment value into the field's type, with a clear error."""
    f = _FIELDS[name]
    default = getattr(Settings(), name)
    try:
        if isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
        if isinstance(default, Path):
            return Path(str(raw)).expanduser()
        if isinstance(default, int):
            if isinstance(raw, float) and not raw.is_integer():
                raise ValueError(raw)
            return int(raw)
        if isinstance(default, float):
            value = float(raw)
            if value != value:  # NaN
                raise ValueError(raw)
            return value
        return str(raw)
    except (TypeError, ValueError):
        raise ConfigError(
            f"setting {name!r} expects {type(default).__name__} ({f.type}), got {raw!r}"
        ) from None


def _flatten(table: dict[str, Any], source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(_flatten(value, source))
        elif key in _FIELDS:
            out[key] = value
        else:
            raise ConfigError(f"unknown setting {key!r} in {source}")
    return out


def validate(s: Settings) -> Settings:
    """Reject values that would make the pipeline misbehave silently: each section's own
    checks, then those that relate two sections."""
    problems = [p for name in SECTIONS for p in getattr(s, name).problems()]
    if s.consolidation_max_s < s.segment_max_s:
        problems.append("consolidation_max_s must be >= segment_max_s")
    if not 64 * 1024 <= s.chunk_max_bytes <= s.kafka_max_message_bytes - 64 * 1024:
        problems.append("chunk_max_bytes must be >= 64 KiB and leave 64 KiB under kafka_max_message_bytes")
    if s.checkpoint_interval_s < s.segment_max_s:
        problems.append("checkpoint_interval_s must be >= segment_max_s")
    if problems:
        raise ConfigError("invalid configuration: " + "; ".join(problems))
    return s


def load_settings(
    config_file: str | Path | None = None,
    data_dir: str | Path | None = None,
    env: dict[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Build the settings: defaults → TOML → environment → overrides.

    The TOML file is ``config_file``, else ``$EPISODIC_CONFIG``, else
    ``<data_dir>/episodic.toml`` when it exists.
    """
    env = dict(os.environ if env is None else env)
    values: dict[str, Any] = {}

    data = data_dir or env.get(ENV_PREFIX + "DATA") or env.get(ENV_PREFIX + "DATA_DIR")
    path = config_file or env.get(ENV_PREFIX + "CONFIG")
    if path is None:
        candidate = Path(data or DEFAULT_DATA_DIR) / CONFIG_FILE_NAME
        path = candidate if candidate.is_file() else None
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file not found: {p}")
        try:
            values.update(_flatten(tomllib.loads(p.read_text()), str(p)))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {p} is not valid TOML: {exc}") from None

    for name in _FIELDS:
        raw = env.get(ENV_PREFIX + name.upper())
        if raw is not None and raw != "":
            values[name] = raw
    if data:
        values["data_dir"] = data
    for name, raw in overrides.items():
        if raw is None:
            continue
        if name not in _FIELDS:
            raise ConfigError(f"unknown setting {name!r}")
        values[name] = raw

    coerced = {name: _coerce(name, raw) for name, raw in values.items()}
    return validate(Settings(**coerced))
