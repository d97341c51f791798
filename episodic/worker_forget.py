"""What a Kafka worker does about forgets made while it writes a stream (issue 17).

A forget records a tombstone (the stream-time range, when; ``services.forgetting``). The worker

* writes every stream through a :class:`~services.forget_guard.GuardedStore`: a write that comes
  after a forget it did not know of when its runner started is checked against that forget's
  tombstone under the shared forget lock, so a memory, event or overview of the forgotten
  stretch is never stored again (and a whole-stream forget's listing and checkpoint are not
  written back);
* before each chunk, drops a runner that a newer forget reached (a range ending at or after
  the runner's current run, or the whole stream): it holds media of the forgotten stretch.
  Snippet files it wrote that no stored memory names are deleted; the stream's next chunk
  opens a fresh runner (from the checkpoint, if the stream still has one);
* skips chunks of a forgotten stretch that were produced before the forget (``produced_at_ms``;
  a chunk without one counts as before): a worker restarted from an older Kafka offset, or
  a re-delivery, cannot bring the stretch back, while a stream pushed again after the forget
  is stored as usual.

The tombstones file is read through a stat()-checked cache: one stat per chunk. What this
needs: the forgetting process and the workers share ``forget_dir`` (one host, or one volume).
"""

from __future__ import annotations

import logging
from typing import Any

from episodic.core.records import StreamInfo
from episodic.pipeline import in_stream_numbering, sessions_of
from episodic.services.forget_books import ForgetBooks
from episodic.services.forget_guard import GuardedBackends

log = logging.getLogger(__name__)


class ForgetWatch:
    """The worker's side of forgetting (see the module docstring)."""

    def __init__(self, components: Any) -> None:
        self.c = components
        self.books = ForgetBooks(components.settings.resolved_forget_dir)

    def listing(self, stream_id: str) -> tuple[int, StreamInfo | None]:
        """The newest forget known and the stream's listing (its checkpoint), read together
        under the shared forget lock, for a runner about to open: read apart, a forget half
        done in between (tombstone written, listing not yet deleted) would hand the runner
        the forgotten stretch's checkpoint as if that forget were already taken into account."""
        with self.books.guard_lock():
            return self.books.tombstones.latest_seq(), self.c.store.get_stream(stream_id)

    def backends_for(self, stream_id: str, since_seq: int) -> GuardedBackends:
        """What a new runner of ``stream_id`` writes through: forgets after ``since_seq`` (the
        one :meth:`listing` returned with the checkpoint it resumes from) are checked."""
        return GuardedBackends(self.c, self.books, stream_id, since_seq)

    def reached(self, runner: Any) -> bool:
        """Whether a forget newer than ``runner`` reaches what it holds; forgets that end
        before its current run are taken as known (they cannot touch its media)."""
        guard = getattr(runner.c, "store", None)
        if not hasattr(guard, "newer"):
            return False
        newer = guard.newer()
        if not newer:
            return False
        if any(t.whole or t.t_max >= runner.checkpoint.t_s for t in newer):
            return True
        guard.since_seq = max(t.seq for t in newer)
        return False

    def drop(self, runner: Any) -> int:
        """Forget a runner's unsaved work: its snippet files that no stored memory names."""
        written = set(runner.snippet_uris) | set(runner.ingestor.snippet_uris)
        if not written:
            return 0
        named = {u for m in self.c.store.list_memories(runner.stream_id, limit=1 << 40) for u in m.file_uris}
        removed = self.c.snippets.delete_uris(sorted(written - named))
        log.info("%s: a forget reached the open run: runner dropped, %d unsaved snippet files deleted",
                 runner.stream_id, removed)
        return removed

    def forgotten(self, chunk: Any, runner: Any | None) -> bool:
        """Whether ``chunk`` lies in a stretch forgotten after it was produced."""
        tombs = self.books.tombstones.for_stream(chunk.stream_id)
        made = chunk.produced_at_ms / 1000.0
        tombs = [t for t in tombs if made <= 0 or made < t.at]
        if not tombs:
            return False
        sessions = runner.sessions if runner is not None else sessions_of(self.c.store.get_stream(chunk.stream_id))
        c = in_stream_numbering(chunk, sessions)
        return any(c.t_start < t.t_max and c.t_end > t.t_min for t in tombs)
