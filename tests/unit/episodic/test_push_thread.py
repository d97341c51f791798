"""The push thread keeps order, hands failures to the caller and stops cleanly."""

from __future__ import annotations

import threading
import time

import pytest

from episodic.core.errors import StoreError
from episodic.push_thread import PushThread


def test_items_are_pushed_in_order_on_another_thread_one_chunk_behind_at_most():
    seen, threads, done_before_submit_returned = [], set(), []

    def push(items):
        time.sleep(0.01 * (len(seen) % 3))  # uneven work must not reorder anything
        threads.add(threading.get_ident())
        seen.extend(items)

    t = PushThread(push)
    for i in range(10):
        t.submit([i, i + 0.5])
        # the hand-over: once submit returns, everything before these items is pushed, so
        # only the chunk being pushed and the one the caller decodes next are held
        done_before_submit_returned.append(len(seen) >= 2 * i)
    t.drain()
    assert seen == [x for i in range(10) for x in (i, i + 0.5)]
    assert all(done_before_submit_returned)
    assert threads and threading.get_ident() not in threads
    t.close()


def test_a_failure_is_raised_in_the_caller_and_nothing_after_it_is_pushed():
    seen = []

    def push(items):
        if items == ["bad"]:
            raise StoreError("disk full")
        seen.extend(items)

    t = PushThread(push)
    t.submit(["a"])
    t.submit(["bad"])
    with pytest.raises(StoreError, match="disk full"):
        t.drain()
    t.submit(["after"])  # discarded: it must not be encoded as if the failure had not happened
    t.drain()
    assert seen == ["a"]
    t.close()


def test_close_pushes_what_it_was_given_and_raises_a_late_failure():
    def push(items):
        raise StoreError("late")

    t = PushThread(push)
    t.submit([1])
    with pytest.raises(StoreError, match="late"):
        t.close()
