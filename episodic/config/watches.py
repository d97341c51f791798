"""Standing queries and alerts (issue 17). See :mod:`episodic.config` for how flat keys are
filed under sections."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WatchSettings:
    """Watches: where they are kept, when a memory matches one, and how alerts go out."""

    watch_db: str = ""  # "" → <data_dir>/watches.sqlite3 (shared by serve, worker and ingest)
    # A memory matches a watch when its best evidence unit scores at least this with the
    # hybrid scorer `episodic search` ranks with (0.55·cosine + 0.30·words + 0.15·words
    # around); watch_full_score or more is confidence 1. On four generated recordings and 14
    # queries (a first look, not a held-out measure): paraphrases of what was said or shown
    # scored 0.38-0.82, one loose paraphrase 0.29, unrelated queries at most 0.29.
    watch_min_score: float = 0.33
    watch_full_score: float = 0.7  # a match scoring this or more has confidence 1
    watch_webhook_timeout_s: float = 5.0  # one webhook POST
    watch_webhook_max_attempts: int = 6  # then the alert is marked failed (it stays in the log)
    watch_webhook_backoff_s: float = 1.0  # 1, 2, 4 … s between attempts, at most 300 s
    watch_tick_s: float = 30.0  # how often serve/worker check `--by HH:MM` deadlines

    def resolved_watch_db(self, data_dir: str | Path) -> Path:
        return Path(self.watch_db) if self.watch_db else Path(data_dir) / "watches.sqlite3"

    def problems(self) -> list[str]:
        """What is wrong with these values (empty when nothing is)."""
        s = self
        problems: list[str] = []
        if not 0 < s.watch_min_score < s.watch_full_score <= 2:
            problems.append("need 0 < watch_min_score < watch_full_score <= 2")
        if not 0.1 <= s.watch_webhook_timeout_s <= 60:
            problems.append("watch_webhook_timeout_s must be between 0.1 and 60")
        if not 1 <= s.watch_webhook_max_attempts <= 50:
            problems.append("watch_webhook_max_attempts must be between 1 and 50")
        if not 0.01 <= s.watch_webhook_backoff_s <= 3600:
            problems.append("watch_webhook_backoff_s must be between 0.01 and 3600")
        if not 1 <= s.watch_tick_s <= 3600:
            problems.append("watch_tick_s must be between 1 and 3600")
        return problems
