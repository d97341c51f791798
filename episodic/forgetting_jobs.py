"""Forgetting wired to the configured backends: the Forgetter of a process, the retention sweep
``serve`` and ``worker`` run in the background, and the storage gauges both publish (see
:mod:`services.forgetting` for what forgetting promises)."""

from __future__ import annotations

import logging
from typing import Any

from episodic import metrics
from episodic.services.forgetting import ForgetReport, Forgetter, RetentionSweeper, SweepReport

log = logging.getLogger(__name__)


def forgetter(components: Any) -> Forgetter:
    """A Forgetter over ``components`` (store, snippets; the embedder only when a range forget
    has overviews to recompose)."""
    f = Forgetter.for_backends(components)
    path = components.settings.watches.resolved_watch_db(components.settings.data_dir)
    if "watch_store" in getattr(components, "__dict__", {}) or path.exists():
        f.alerts = lambda sid, lo, hi: components.watch_store.forget_alerts(sid, lo, hi)
    return f


def publish_storage(f: Forgetter, settings: Any) -> None:
    """Refresh the per-stream storage gauges (only where a metrics endpoint is served)."""
    if not settings.metrics_port or not settings.metrics_storage_streams:
        return
    usage = f.storage()
    metrics.set_stream_storage({sid: (u.records, u.snippet_bytes) for sid, u in usage.items()},
                               settings.metrics_storage_streams)


def forgotten(report: ForgetReport) -> None:
    metrics.FORGOTTEN.labels(report.reason).inc(report.records)


def refresh_stream(f: Forgetter, settings: Any, stream_id: str) -> None:
    """After a forget: that stream's gauges only (a full refresh counts every stream)."""
    if not settings.metrics_port or not settings.metrics_storage_streams:
        return
    u = f.storage([stream_id])[stream_id]
    metrics.update_stream_storage(stream_id, u.records, u.snippet_bytes)


def start_sweeper(f: Forgetter, settings: Any) -> RetentionSweeper:
    """The background sweep (every ``retention_sweep_interval_s``; the first at once, which
    also finishes forgets a crash interrupted); ``stop()`` it on the way out."""

    def on_sweep(report: SweepReport) -> None:
        for r in report.recovered + report.forgotten:
            forgotten(r)
        try:
            publish_storage(f, settings)
        except Exception as exc:  # the gauges are a convenience; never fail the sweep for them
            log.warning("storage gauges not refreshed: %s", exc)

    if settings.retention_sweep_interval_s > 0:
        log.info("retention sweep every %.0f s (default retention: %s)", settings.retention_sweep_interval_s,
                 f"{settings.retention_days:g} days" if settings.retention_days else "keep")
    return RetentionSweeper(f, settings.retention_sweep_interval_s, on_sweep).start()
