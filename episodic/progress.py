"""The ingest progress display: stream seconds, segments, events and real-time factor."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from episodic.pipeline import Progress as IngestState


class IngestProgress:
    """A rich progress bar on stderr; silent when disabled (e.g. ``--json`` to a pipe)."""

    def __init__(self, console: Console, enabled: bool = True) -> None:
        self.enabled = enabled
        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[stream]}"),
            TextColumn("{task.fields[counts]}"),
            TextColumn("{task.fields[rtf]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
            disable=not enabled,
        )
        self._status: TaskID | None = None

    def __enter__(self) -> IngestProgress:
        self._bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.__exit__(*exc)

    def status(self, text: str) -> None:
        if self._status is None:
            self._status = self._bar.add_task(text, total=None, stream="", counts="", rtf="")
        else:
            self._bar.update(self._status, description=text)

    def start(self, name: str) -> TaskID:
        if self._status is not None:
            self._bar.remove_task(self._status)
            self._status = None
        return self._bar.add_task(name, total=None, stream="", counts="", rtf="")

    def update(self, task: TaskID, p: IngestState) -> None:
        self.show(task, p, f"{p.segments} seg · {p.events} ev")

    def show(self, task: TaskID, p: Any, counts: str) -> None:
        """Any progress with stream_s, duration_s, wall_s and realtime_factor, plus counts."""
        total = p.duration_s if p.duration_s and p.duration_s > 0 else None
        stream = f"{p.stream_s:6.1f}/{total:.1f} s" if total else f"{p.stream_s:6.1f} s"
        self._bar.update(
            task,
            total=total,
            completed=min(p.stream_s, total) if total else p.stream_s,
            stream=stream,
            counts=counts,
            rtf=f"{p.realtime_factor:4.1f}× rt" if p.wall_s > 0.5 else "",
        )

    def done(self, task: TaskID, p: IngestState) -> None:
        self.update(task, p)
        if p.duration_s:
            self._bar.update(task, completed=p.duration_s, total=p.duration_s)
