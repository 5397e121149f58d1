"""Coalesced JobFlow status writes (`FlowController.flush`): a flow whose phase changed is
written at once; the other dirty flows wait for their interval. Found by
`bench/kube_bench.py --real`: each status patch took ~0.1 s on a loaded kube-apiserver, and
every phase change of any of 100 flows wrote the status of every dirty flow, one patch
after another on the controllers' thread — about one patch per vcjob instead of 0.2, and
seconds of blocked syncs at a time. The timing is the controller's clock's (a FakeClock
here): nothing in these tests sleeps."""

from __future__ import annotations

from typing import Any

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.store import MemoryStore

from .volcano_player import START, flow, template


def status(phase: str) -> VCJobStatus:
    data: dict[str, Any] = {
        "state": {"phase": phase, "lastTransitionTime": "2026-12-01T00:00:01Z"},
        "minAvailable": 1,
    }
    if phase == "Running":
        data["running"] = 1
    if phase == "Completed":
        data["succeeded"] = 1
    return VCJobStatus.from_dict(data)


def set_phase(store: MemoryStore, name: str, phase: str) -> None:
    job = store.get(VCJob, "default", name)
    job.status = status(phase)
    store.update_status(job)


def recorded(store: MemoryStore, flow_name: str, job: str) -> str:
    """The phase the flow's stored status shows for one of its vcjobs."""
    found = store.get(JobFlow, "default", flow_name).status
    assert found is not None
    condition = found.conditions.get(job)
    return str(condition.phase) if condition is not None else ""


class SlowStore(MemoryStore):
    """A JobFlow status write takes 20 ms of the clock, as a patch to a busy API server
    takes longer."""

    def update_status_data(self, kind: Any, *args: Any, **kwargs: Any) -> Any:
        if kind is JobFlow:
            self._clock.advance(0.02)  # type: ignore[attr-defined]
        return super().update_status_data(kind, *args, **kwargs)


def started(
    interval: float = 3600.0, store_class: type[MemoryStore] = MemoryStore
) -> tuple[MemoryStore, Manager]:
    """Two flows, `chain` (a → b) and `single` (c), Running, both statuses written; then a
    status interval of `interval` seconds (by default far longer than the test)."""
    clock = FakeClock(START)
    store = store_class(clock=clock)
    chain = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    store.apply([template("a"), template("b"), template("c")])
    store.apply([flow("chain", chain), flow("single", [{"name": "c"}])])
    manager = Manager(store, clock, options=ControllerOptions(status_interval=interval))
    manager.settle()
    assert sorted(j.name for j in store.list(VCJob)) == ["chain-a", "single-c"]
    set_phase(store, "chain-a", "Running")
    set_phase(store, "single-c", "Running")
    manager.settle()  # (writes both; the next flush waits `interval`)
    assert store.get(JobFlow, "default", "chain").phase == "Running"
    assert recorded(store, "chain", "chain-a") == "Running"
    return store, manager


def test_a_phase_change_writes_that_flow_and_leaves_the_others_to_their_interval() -> None:
    store, manager = started()
    set_phase(store, "chain-a", "Completed")  # chain creates b and stays Running: may wait
    set_phase(store, "single-c", "Completed")  # single Succeeds: written at once
    manager.settle(flush=False)  # (Manager.run's: only what is due)
    assert store.get(JobFlow, "default", "single").phase == "Succeed"
    assert sorted(j.name for j in store.list(VCJob)) == ["chain-a", "chain-b", "single-c"]
    assert recorded(store, "chain", "chain-a") == "Running"
    assert manager.flows.flush_due() is False
    wait = manager.flows.flush_wait()
    assert wait is not None and wait > 3000  # chain's status, at its interval
    manager.settle()  # idle: every status written
    assert recorded(store, "chain", "chain-a") == "Completed"
    assert manager.flows.flush_wait() is None


def test_a_status_without_a_phase_change_waits_for_its_interval() -> None:
    store, manager = started(interval=1.0)
    set_phase(store, "chain-a", "Completed")
    manager.settle(flush=False)
    assert recorded(store, "chain", "chain-a") == "Running"
    wait = manager.flows.flush_wait()
    assert wait is not None and 0 < wait <= 1.0
    manager.clock.advance(wait)  # type: ignore[attr-defined]
    manager.settle(flush=False)
    assert recorded(store, "chain", "chain-a") == "Completed"
    assert manager.flows.flush_wait() is None


def test_a_flow_written_at_its_phase_change_leaves_nothing_due() -> None:
    store, manager = started()
    set_phase(store, "single-c", "Completed")
    manager.settle(flush=False)
    assert store.get(JobFlow, "default", "single").phase == "Succeed"
    assert manager.flows.flush_wait() is None  # nothing left dirty


def test_the_interval_grows_with_the_cost_of_writing_every_dirty_status() -> None:
    """50x what the last flush of every dirty flow took: a write of 20 ms or more leaves
    at least a second before the next one."""
    store, manager = started(interval=0.0, store_class=SlowStore)
    set_phase(store, "chain-a", "Completed")  # (no phase change)
    manager.settle(flush=False)  # written: an interval of 0 is up at once
    assert recorded(store, "chain", "chain-a") == "Completed"
    set_phase(store, "chain-b", "Running")  # (no phase change either)
    manager.settle(flush=False)
    assert recorded(store, "chain", "chain-b") != "Running"  # (not written yet)
    wait = manager.flows.flush_wait()
    assert wait is not None and wait > 0.5
