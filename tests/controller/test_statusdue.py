"""`StatusDue`: when the JobFlow controller writes the statuses its syncs left dirty, on the
controller's clock."""

from __future__ import annotations

from vcflow.api.clock import FakeClock
from vcflow.controller.statusdue import StatusDue


def due(
    status_interval: float = 10.0, phase_interval: float = 0.0
) -> tuple[FakeClock, StatusDue[str]]:
    clock = FakeClock()
    return clock, StatusDue(clock, status_interval, phase_interval)


def test_a_new_phase_is_due_at_once_without_a_phase_interval() -> None:
    _, status = due()
    status.mark("a", phase_changed=True)
    status.mark("b", phase_changed=False)
    assert status.due()
    assert status.to_write(due_only=True) == (["a"], False)


def test_a_new_phase_waits_its_interval_and_later_changes_ride_along() -> None:
    clock, status = due(phase_interval=0.2)
    status.mark("a", phase_changed=True)
    assert not status.due()
    assert status.to_write(due_only=True) == ([], False)
    clock.advance(0.1)
    status.mark("a", phase_changed=True)  # (its next phase: still due at the first's time)
    wait = status.wait()
    assert wait is not None and abs(wait - 0.1) < 1e-9
    clock.advance(0.1)
    assert status.due()
    assert status.to_write(due_only=True) == (["a"], False)
    status.written("a")
    status.flushed(every=False, wrote=True, began=clock.monotonic())
    assert status.wait() is None and not status.dirty


def test_other_dirty_flows_wait_for_the_status_interval_then_all_are_written() -> None:
    clock, status = due(status_interval=1.0)
    status.mark("a", phase_changed=False)
    clock.advance(0.5)
    status.mark("b", phase_changed=False)  # (its interval began with a's)
    assert not status.due()
    clock.advance(0.5)
    assert status.due()
    assert status.to_write(due_only=True) == (["a", "b"], True)


def test_an_idle_flush_writes_every_dirty_flow_before_it_is_due() -> None:
    _, status = due(phase_interval=5.0)
    status.mark("a", phase_changed=True)
    status.mark("b", phase_changed=False)
    assert status.to_write(due_only=False) == (["a", "b"], True)


def test_the_interval_grows_to_50x_the_cost_of_a_flush_of_every_flow() -> None:
    clock, status = due(status_interval=0.1)
    status.mark("a", phase_changed=False)
    clock.advance(0.1)
    began = clock.monotonic()
    keys, every = status.to_write(due_only=True)
    assert every
    for key in keys:
        status.written(key)
    clock.advance(0.04)  # (the flush's cost)
    status.mark("b", phase_changed=False)  # (dirtied during the flush)
    status.flushed(every=True, wrote=True, began=began)
    wait = status.wait()
    assert wait is not None and abs(wait - 2.0) < 1e-9


def test_a_dropped_flow_is_not_written() -> None:
    _, status = due()
    status.mark("a", phase_changed=True)
    status.drop("a")
    assert status.wait() is None
    assert status.to_write(due_only=False) == ([], True)
