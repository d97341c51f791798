"""The guard a worker writes a stream through while forgets may happen (see
:mod:`services.forgetting` and ``episodic/worker_forget.py``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from episodic.core.interfaces import MemoryStore, SnippetStore
from episodic.core.records import ShortTermMemory, StreamInfo, ThetaEvent
from episodic.services.forget_books import ForgetBooks, Tombstone

log = logging.getLogger(__name__)


class GuardedStore:
    """One stream's store as a worker's runner writes it, so a forget made while the runner
    holds media of the forgotten stretch cannot bring it back.

    ``since_seq`` is the newest tombstone the runner knew of when it started. Each write holds
    the shared forget lock while it reads the tombstones and writes, so it lands either before
    a forget (which then deletes it) or after the forget's tombstone (and is checked against
    it): memories and events overlapping a newer tombstone are dropped (with the memories'
    snippet files), overviews are not written (the forget recomposed them), and after a
    whole-stream forget the listing is not written back. Everything else passes through."""

    def __init__(self, inner: MemoryStore, snippets: SnippetStore, books: ForgetBooks, stream_id: str, since_seq: int) -> None:
        self._inner = inner
        self._snippets = snippets
        self._books = books
        self.stream_id = stream_id
        self.since_seq = since_seq
        self.dropped = 0  # memories and events kept out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def newer(self) -> list[Tombstone]:
        return self._books.tombstones.for_stream(self.stream_id, self.since_seq)

    def _split(self, records: Sequence[Any], tombs: list[Tombstone]) -> tuple[list[Any], list[Any]]:
        """Records of a forgotten stretch go. A whole-stream forget newer than this writer
        takes everything it writes: what it holds was in hand when the stream was forgotten
        (a segment seen but still waiting to be heard lies after the stored end the tombstone
        names, and the forget removed its snippet files with the stream's)."""
        keep, drop = [], []
        for r in records:
            forgotten = r.stream_id == self.stream_id and any(t.whole or t.covers(r.t_start, r.t_end) for t in tombs)
            (drop if forgotten else keep).append(r)
        return keep, drop

    def upsert_memories(self, memories: Sequence[ShortTermMemory]) -> None:
        with self._books.guard_lock():
            keep, drop = self._split(memories, self.newer())
            if drop:
                self.dropped += len(drop)
                self._snippets.delete_uris([u for m in drop for u in m.file_uris])
                log.info("%s: %d memories of a forgotten stretch not stored", self.stream_id, len(drop))
            self._inner.upsert_memories(keep)

    def upsert_events(self, events: Sequence[ThetaEvent]) -> None:
        with self._books.guard_lock():
            keep, drop = self._split(events, self.newer())
            self.dropped += len(drop)
            self._inner.upsert_events(keep)

    def upsert_overviews(self, overviews: Sequence[Any]) -> None:
        with self._books.guard_lock():
            if self.newer():
                return
            self._inner.upsert_overviews(overviews)

    def upsert_stream(self, info: StreamInfo) -> None:
        with self._books.guard_lock():
            if any(t.whole for t in self.newer()):
                return
            self._inner.upsert_stream(info)


class GuardedBackends:
    """A Components-like object whose ``store`` is a :class:`GuardedStore` (everything else is
    the wrapped object's), handed to one stream's runner."""

    def __init__(self, backends: Any, books: ForgetBooks, stream_id: str, since_seq: int) -> None:
        self._backends = backends
        self.store = GuardedStore(backends.store, backends.snippets, books, stream_id, since_seq)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backends, name)
