"""The section for forgetting on purpose: retention, its sweep, and where the forgetting keeps
its own books (audit log, tombstones, per-stream retention).

See :mod:`episodic.config` for how the flat keys are filed under sections.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RetentionSettings:
    """``episodic forget``, ``episodic retention``, ``episodic gc`` and the sweep in serve/worker."""

    # Days a stream's memories are kept (by when each was ingested) unless the stream has its
    # own (`episodic retention --stream-id S --days N`); 0 = kept until forgotten on purpose
    retention_days: float = 0.0
    # How often `serve` and `worker` sweep in a background thread (expired memories, forgets
    # a crash left half done, the storage gauges); 0 = never (`episodic gc` still does it)
    retention_sweep_interval_s: float = 3600.0
    # The audit log, tombstones and per-stream retention; "" → <data_dir>/forgetting. Processes
    # that forget and workers that write the same streams must share it (one host or one volume)
    forget_dir: str = ""
    # Streams given a storage gauge (episodic_stream_*{stream_id}), largest first; 0 = none
    metrics_storage_streams: int = 100

    def resolved_forget_dir(self, data_dir: Path | str) -> Path:
        return Path(self.forget_dir).expanduser() if self.forget_dir else Path(data_dir) / "forgetting"

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        problems: list[str] = []
        if not 0 <= self.retention_days <= 1e6:
            problems.append("retention_days must be in 0..1e6 (0 = keep until forgotten)")
        if not (self.retention_sweep_interval_s == 0 or 1 <= self.retention_sweep_interval_s <= 1e7):
            problems.append("retention_sweep_interval_s must be 0 (off) or 1..1e7 seconds")
        if not 0 <= self.metrics_storage_streams <= 10000:
            problems.append("metrics_storage_streams must be in 0..10000")
        return problems
