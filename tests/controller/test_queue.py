"""The controllers' work queue: keys collapse, failures back off, and a key can be put
ahead of the others (a flow whose vcjob finished, ahead of a burst of new flows)."""

from __future__ import annotations

from vcflow.api.clock import FakeClock
from vcflow.controller.queue import WorkQueue


def drain(queue: WorkQueue[str]) -> list[str]:
    found = []
    while (key := queue.get()) is not None:
        found.append(key)
    return found


def test_keys_come_oldest_first_and_a_key_added_twice_once() -> None:
    queue: WorkQueue[str] = WorkQueue(FakeClock())
    for key in ("a", "b", "a", "c"):
        queue.add(key)
    assert drain(queue) == ["a", "b", "c"]


def test_first_puts_a_key_ahead_of_those_ready_even_when_it_was_queued() -> None:
    queue: WorkQueue[str] = WorkQueue(FakeClock())
    for key in ("a", "b", "c"):
        queue.add(key)
    queue.add("c", first=True)
    queue.add("d", first=True)
    assert drain(queue) == ["d", "c", "a", "b"]


def test_first_takes_a_delayed_key_out_of_its_delay() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue(clock)
    queue.add("a")
    queue.add_after("b", 60.0)
    queue.add("b", first=True)
    assert drain(queue) == ["b", "a"]
    clock.advance(61.0)
    assert drain(queue) == []  # (its delayed entry is gone, not run twice)


def test_a_failed_key_backs_off_doubling_and_forget_resets_it() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue(clock, base_delay=1.0)
    assert queue.add_rate_limited("a") == 1.0
    assert queue.add_rate_limited("a") == 2.0
    assert queue.get() is None
    clock.advance(1.0)
    assert queue.get() == "a"
    queue.forget("a")
    assert queue.add_rate_limited("a") == 1.0
