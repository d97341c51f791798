"""The deadline a call carries, and the stage timings measured against it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from episodic.core.errors import DeadlineExceeded


class Deadline:
    """Seconds allowed for a whole call (None: no limit), checked between stages, and how long
    each stage took (milliseconds, for the reply's timings)."""

    def __init__(self, deadline_s: float | None) -> None:
        self.started = time.perf_counter()
        self.deadline_s = deadline_s
        self.timings: dict[str, float] = {}

    def elapsed(self) -> float:
        """Seconds since the call started."""
        return time.perf_counter() - self.started

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None when there is none)."""
        if self.deadline_s is None:
            return None
        return self.deadline_s - (time.perf_counter() - self.started)

    def check(self, next_stage: str) -> None:
        """Raise :class:`DeadlineExceeded` if the time is up before ``next_stage`` starts."""
        if self.deadline_s is None:
            return
        elapsed = time.perf_counter() - self.started
        if elapsed >= self.deadline_s:
            raise DeadlineExceeded(
                f"deadline of {self.deadline_s:g} s exceeded before {next_stage} "
                f"({elapsed:.3f} s elapsed)"
            )

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self.check(name)
        t = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round((time.perf_counter() - t) * 1000.0, 2)

    def finish(self) -> dict[str, float]:
        self.timings["total"] = round((time.perf_counter() - self.started) * 1000.0, 2)
        return self.timings
