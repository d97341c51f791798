"""One background thread that hands decoded items to the ingestor, in order.

When a recording's frames are bigger than the working size, its embedded ingest is two halves
of about equal weight: decoding the next chunk (FFmpeg's decoder and scaler) and segmenting and
encoding what was decoded (vision, speech, the store). Run one after the other they leave a
core idle much of the time; with this thread the next chunk decodes while the previous one is
encoded. Order is kept (one thread, and a
hand-over: :meth:`PushThread.submit` returns once the thread has taken the items, so at most
two chunks of decoded frames are held: the one being encoded and the one being decoded), so
the stored records are exactly those of running both halves in turn.

The Kafka worker does not use it: it commits a chunk's offset once :meth:`StreamRunner.feed`
returns, which must mean the chunk's media is in the ingestor.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

_STOP = object()


class PushThread:
    """``push(items)`` run on a thread of its own, one call at a time, in submission order.

    An exception raised by ``push`` is kept and raised again by the next :meth:`submit` or
    :meth:`drain` in the caller's thread; items submitted after it are discarded (what
    follows a failed chunk must not be encoded as if it had not failed).
    """

    def __init__(self, push: Callable[[list[Any]], None]) -> None:
        self._push = push
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._taken = threading.Semaphore(0)
        self._error: BaseException | None = None
        self._failed = False  # after a failure nothing more is pushed
        self._thread = threading.Thread(target=self._run, name="episodic-push", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            items = self._queue.get()
            try:
                if items is _STOP:
                    return
                self._taken.release()
                if self._error is None and not self._failed:
                    self._push(items)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                self._error = exc
            finally:
                self._queue.task_done()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            self._failed = True
            raise error

    def submit(self, items: list[Any]) -> None:
        """Hand ``items`` over; returns once the thread has taken them (it has finished the
        ones before), so the caller decodes the next chunk while these are pushed."""
        self._raise()
        if self._failed:
            return
        self._queue.put(items)
        self._taken.acquire()

    def drain(self) -> None:
        """Wait until everything submitted has been pushed; raise what pushing raised."""
        self._queue.join()
        self._raise()

    def close(self) -> None:
        """Push what is queued, end the thread and raise what pushing raised."""
        self._queue.put(_STOP)
        self._thread.join()
        self._raise()
