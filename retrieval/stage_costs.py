"""What a listening stage is expected to cost: a first guess until the stage has run in this
process, then the running mean of what it took.

A stage starts only when its expected cost fits in the time left (the request's deadline, and
for an Ask that listens again ``relistened_ask_max_s`` from its start), so the estimate follows
the machine: a loaded 2-core box scored a re-hearing in 1.0 s where the first guess said 0.5."""

from __future__ import annotations

import threading

# of an Ask's ``relistened_ask_max_s``, kept for answering once its listening stages are done
AFTER_LISTENING_S = 0.25
# the weight of the newest measurement: a machine that slows down is followed within a few runs
NEWEST_WEIGHT = 0.5


class RunningCost:
    """Seconds one kind of work takes, per key (a model id), shared by the threads of a process."""

    def __init__(self, first_guess_s: float) -> None:
        self.first_guess_s = first_guess_s
        self._seconds: dict[str, float] = {}
        self._lock = threading.Lock()

    def estimate(self, key: str = "") -> float:
        """The seconds the next run is expected to take."""
        return self._seconds.get(key, self.first_guess_s)

    def measured(self, seconds: float, key: str = "") -> None:
        """Record what one run took."""
        with self._lock:
            old = self._seconds.get(key)
            self._seconds[key] = seconds if old is None else (1 - NEWEST_WEIGHT) * old + NEWEST_WEIGHT * seconds

    def forget(self) -> None:
        """Back to the first guess (tests)."""
        with self._lock:
            self._seconds.clear()
