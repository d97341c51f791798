"""Live sources that drop and come back (issue 13, item 5).

A camera's RTSP server restarts, a Wi-Fi link drops, an HLS playlist stops for a minute: none
of that should end the stream. :class:`LiveChunks` reads the chunks of a live source and, when
the source breaks off, opens it again with exponential backoff
(``reconnect_first_delay_s`` doubling up to ``reconnect_max_delay_s``).

The reopened source continues the *same* push session: chunk numbers go on, and stream time
goes on by the wall clock (the camera kept filming while nobody could see it), so the first
chunk after the drop starts that much later and says so in ``gap_before_s``. The worker closes
the open memory at the drop, so no memory spans the gap, and lists the gap with the stream.

It gives up after ``reconnect_attempts`` failed attempts in a row or ``reconnect_max_s``
without the source, whichever comes first: the stream is then closed (an empty
end-of-stream chunk) and :attr:`LiveChunks.gave_up` says why, so the caller can exit
non-zero. A later ``push --append`` continues the stream.

Only sources without a known duration reconnect (RTSP, live HLS, HTTP live streams,
devices): a file, local or remote, has an end, and opening it again would start it over.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from episodic.config import ReconnectSettings
from episodic.core.errors import MediaError
from episodic.stream.chunks import Chunker
from episodic.stream.media_chunk import MediaChunk

log = logging.getLogger(__name__)


class SourceLost(MediaError):
    """A live source stayed away longer than the reconnection policy allows."""


@dataclass
class Outage:
    """One drop of a live source: where in stream time, how long it stayed away (wall clock,
    0 while it is still away), how many attempts it took, and why it broke off."""

    at_s: float
    gap_s: float = 0.0
    attempts: int = 0
    reason: str = ""


# Opens the source as a chunker; a reconnection passes the continuation as keyword arguments
# of :class:`Chunker` (first_seq, t_offset_s, gap_before_s, mark_end, session_id).
OpenChunker = Callable[..., Chunker]


def is_live(chunker: Chunker) -> bool:
    """Whether a source may drop and come back: no known duration (files have one)."""
    return not chunker.info.duration_s


class LiveChunks:
    """The chunks of a source, across drops of a live one (see the module docstring).

    ``open_chunker(**continuation)`` opens the source; the first call's errors propagate (a
    source that cannot be opened at all is the caller's error to report). ``clock`` and
    ``sleep`` are injectable so the policy can be tested without waiting."""

    def __init__(
        self,
        open_chunker: OpenChunker,
        settings: ReconnectSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        on_outage: Callable[[Outage], None] | None = None,
    ) -> None:
        self.open_chunker = open_chunker
        self.settings = settings
        self.clock = clock
        self.sleep = sleep
        self.on_outage = on_outage
        self.outages: list[Outage] = []
        self.warnings: list[str] = []
        self.gave_up: SourceLost | None = None
        self.chunker: Chunker | None = None  # the open connection (its info describes the source)
        self.session_id = ""

    def open(self) -> Chunker:
        """Open the source the first time (errors propagate)."""
        self.chunker = self.open_chunker(first_seq=0, t_offset_s=0.0, gap_before_s=0.0, mark_end=False)
        self.session_id = self.chunker.session_id  # every reconnection continues this session
        return self.chunker

    def close(self) -> None:
        if self.chunker is not None:
            self.chunker.close()

    def __iter__(self) -> Iterator[MediaChunk]:
        chunker = self.chunker or self.open()
        if not (is_live(chunker) and self.settings.reconnect_attempts > 0):
            chunker.mark_end = True  # a file, or reconnection off: its last chunk ends the stream
            try:
                yield from chunker
            finally:
                self.warnings += chunker.warnings
            return
        last: MediaChunk | None = None
        last_seen = self.clock()
        outage: Outage | None = None
        while True:
            got = False
            try:
                for chunk in chunker:
                    got, last, last_seen = True, chunk, self.clock()
                    yield chunk
                reason = chunker.decoder.stop_reason or "the source ended"
            except MediaError as exc:  # nothing at all came from this connection
                if last is None:
                    raise
                reason = str(exc)
            finally:
                self.warnings += chunker.warnings
                chunker.warnings.clear()
                chunker.close()
            if last is None:
                return  # the chunker raises when it read nothing; defensive
            if got or outage is None:  # a new drop (a connection that gave nothing continues the old one)
                outage = Outage(at_s=last.t_end, reason=reason)
                self.outages.append(outage)
                log.warning("%s dropped at t=%.1f s (%s); reconnecting", chunker.display_source, last.t_end, reason)
                if self.on_outage is not None:
                    self.on_outage(outage)
            reopened = self._reconnect(outage, last, last_seen)
            if reopened is None:
                yield self._end(last)
                return
            chunker = self.chunker = reopened

    def _reconnect(self, outage: Outage, last: MediaChunk, last_seen: float) -> Chunker | None:
        """Open the source again with backoff; None (and :attr:`gave_up`) when it stays away."""
        s = self.settings
        error = outage.reason
        while outage.attempts < s.reconnect_attempts:
            delay = min(s.reconnect_first_delay_s * 2.0**outage.attempts, s.reconnect_max_delay_s)
            if self.clock() - last_seen + delay > s.reconnect_max_s:
                break
            self.sleep(delay)
            outage.attempts += 1
            gap = max(self.clock() - last_seen, 0.0)
            try:
                chunker = self.open_chunker(
                    first_seq=last.seq + 1, t_offset_s=last.t_end + gap, gap_before_s=gap, mark_end=False,
                    session_id=self.session_id,
                )
            except MediaError as exc:
                error = str(exc)
                log.info("reconnection attempt %d failed: %s", outage.attempts, error)
                continue
            outage.gap_s = round(gap, 3)
            self.warnings.append(
                f"{chunker.display_source} was away {gap:.1f} s from t={outage.at_s:.1f} s ({outage.reason}); "
                f"reconnected after {outage.attempts} attempt(s); the gap is recorded with the stream"
            )
            if self.on_outage is not None:
                self.on_outage(outage)
            return chunker
        away = self.clock() - last_seen
        self.gave_up = SourceLost(
            f"the source dropped at t={outage.at_s:.1f} s ({outage.reason}) and did not come back: "
            f"{outage.attempts} reconnection attempt(s) in {away:.0f} s failed (last: {error}); "
            f"the stream is closed with what was pushed; continue it with `episodic push --append`"
        )
        return None

    @staticmethod
    def _end(last: MediaChunk) -> MediaChunk:
        """An empty chunk that closes the stream right after ``last``."""
        return dataclasses.replace(
            last, seq=last.seq + 1, t_start=last.t_end, t_end=last.t_end, container="", payload=b"",
            payload_t0=0.0, keyframe=True, end_of_stream=True, gap_before_s=0.0,
            produced_at_ms=int(time.time() * 1000),
        )
