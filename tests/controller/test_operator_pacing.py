"""What the operator's options change in how the controllers use the API server
(`vcflow operator` sets them; `vcflow run` and the server keep them 0): a flow's new phase
waits `phase_interval` so that its next changes share the write, a template's
`jobDependsOnList` waits `template_delay` so that one write carries a burst of vcjobs, and
a flow whose vcjob finished is synced ahead of the flows queued before it. Found by
`bench/kube_bench.py` on a real kube-apiserver: per single-job flow, two status writes and
a template write of its own, and a burst of new flows held an ending flow's `Succeed`
back for tens of seconds."""

from __future__ import annotations

from typing import Any

from vcflow.api.clock import FakeClock
from vcflow.api.errors import StoreError
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.controller.jobflow import FlowKey
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.store import MemoryStore

from .test_status_flush import set_phase
from .volcano_player import START, flow, template


class CountingStore(MemoryStore):
    """Counts the status writes of each JobFlow and JobTemplate, by name."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.writes: list[tuple[str, str]] = []

    def update_status_data(self, kind: Any, namespace: str, name: str, *a: Any, **kw: Any) -> Any:
        self.writes.append((kind.__name__, name))
        return super().update_status_data(kind, namespace, name, *a, **kw)


def started(**options: Any) -> tuple[FakeClock, CountingStore, Manager]:
    clock = FakeClock(START)
    store = CountingStore(clock)
    store.apply([template("c")])
    manager = Manager(store, clock, options=ControllerOptions(status_interval=3600, **options))
    return clock, store, manager


def test_a_flow_that_ends_within_its_phase_interval_is_written_once() -> None:
    clock, store, manager = started(phase_interval=0.2)
    store.apply([flow("single", [{"name": "c"}])])
    manager.settle(flush=False)  # created; Running, not written yet
    assert store.get(JobFlow, "default", "single").phase in ("", "Pending")
    set_phase(store, "single-c", "Running")
    set_phase(store, "single-c", "Completed")
    manager.settle(flush=False)
    assert ("JobFlow", "single") not in store.writes
    wait = manager.flows.flush_wait()
    assert wait is not None and 0 < wait <= 0.2
    clock.advance(wait)
    manager.settle(flush=False)
    assert store.get(JobFlow, "default", "single").phase == "Succeed"
    assert store.writes.count(("JobFlow", "single")) == 1


def test_without_a_phase_interval_each_new_phase_is_written_at_once() -> None:
    _, store, manager = started()
    store.apply([flow("single", [{"name": "c"}])])
    for phase, shown in (("", "Pending"), ("Running", "Running"), ("Completed", "Succeed")):
        if phase:
            set_phase(store, "single-c", phase)
        manager.settle(flush=False)
        assert store.get(JobFlow, "default", "single").phase == shown
    assert store.writes.count(("JobFlow", "single")) == 3


def test_a_template_delay_writes_one_status_for_a_burst_of_its_vcjobs() -> None:
    clock, store, manager = started(template_delay=1.0)
    manager.settle()  # (the template's first sync)
    store.writes.clear()
    store.apply([flow(f"f{i}", [{"name": "c"}]) for i in range(5)])
    manager.settle()
    assert ("JobTemplate", "c") not in store.writes
    found = store.get(JobTemplate, "default", "c").status
    assert found is None or not found.job_depends_on_list
    due = manager.next_due()
    assert due is not None and 0 < due - clock.monotonic() <= 1.0
    clock.advance(1.0)
    manager.settle()
    assert store.writes.count(("JobTemplate", "c")) == 1
    found = store.get(JobTemplate, "default", "c").status
    assert found is not None
    assert sorted(found.job_depends_on_list or []) == [f"f{i}-c" for i in range(5)]


def test_a_flow_whose_vcjob_finished_is_synced_before_the_flows_queued_ahead() -> None:
    _, store, manager = started()
    store.apply([flow("old", [{"name": "c"}])])
    manager.settle()
    store.apply([flow(f"new{i}", [{"name": "c"}]) for i in range(3)])
    set_phase(store, "old-c", "Completed")
    manager.pump()
    assert manager.flows.queue.get() == FlowKey("default", "old")
    assert manager.flows.queue.get() == FlowKey("default", "new0")


def test_a_vcjob_that_changes_without_finishing_keeps_its_flow_in_line() -> None:
    _, store, manager = started()
    store.apply([flow("old", [{"name": "c"}])])
    manager.settle()
    store.apply([flow("new0", [{"name": "c"}])])
    set_phase(store, "old-c", "Running")
    manager.pump()
    assert manager.flows.queue.get() == FlowKey("default", "new0")


class Untransacted:
    """A store's calls without its transactions, as KubeStore has none: the controller
    then syncs flows together and makes its requests from its workers."""

    def __init__(self, inner: MemoryStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "transaction":
            raise AttributeError(name)
        return getattr(self._inner, name)


class RefusingStore(CountingStore):
    """A store whose create of one vcjob fails (the API server answered 500)."""

    def __init__(self, clock: FakeClock, refuse: str) -> None:
        super().__init__(clock)
        self.refuse = refuse

    def create(self, obj: Any, **kwargs: Any) -> Any:
        if obj.name == self.refuse:
            raise StoreError(f"create {obj.name}: the server failed")
        return super().create(obj, **kwargs)


def test_flows_synced_together_post_their_creates_at_once_and_fail_alone() -> None:
    clock = FakeClock(START)
    store = RefusingStore(clock, refuse="f1-c")
    store.apply([template("c")])
    options = ControllerOptions(sync_batch=3, create_workers=2)
    manager = Manager(Untransacted(store), clock, options=options)
    manager.start()
    store.apply([flow(f"f{i}", [{"name": "c"}]) for i in range(4)])
    manager.pump()
    assert manager.flows.process_one()  # three flows, their creates together
    assert sorted(j.name for j in store.list(VCJob)) == ["f0-c", "f2-c"]
    assert manager.flows.queue.failures(FlowKey("default", "f1")) == 1  # (retried)
    assert not manager.flows.queue.failures(FlowKey("default", "f2"))
    assert manager.flows.process_one()  # the fourth
    assert sorted(j.name for j in store.list(VCJob)) == ["f0-c", "f2-c", "f3-c"]
    store.refuse = ""
    clock.advance(1.0)  # (f1's backoff)
    manager.settle()
    assert sorted(j.name for j in store.list(VCJob)) == ["f0-c", "f1-c", "f2-c", "f3-c"]
    assert manager.flows.last_error is None
    assert {f.name: f.phase for f in store.list(JobFlow)} == {f"f{i}": "Pending" for i in range(4)}
    manager.flows.close()


def test_a_flush_writes_its_statuses_from_the_workers() -> None:
    clock = FakeClock(START)
    store = CountingStore(clock)
    store.apply([template("c")])
    options = ControllerOptions(create_workers=4, sync_batch=4)
    manager = Manager(Untransacted(store), clock, options=options)
    store.apply([flow(f"f{i}", [{"name": "c"}]) for i in range(6)])
    manager.settle()
    for i in range(6):
        set_phase(store, f"f{i}-c", "Completed")
    manager.settle()
    assert {f.name: f.phase for f in store.list(JobFlow)} == {f"f{i}": "Succeed" for i in range(6)}
    assert sorted(n for k, n in store.writes if k == "JobFlow") == sorted(
        [f"f{i}" for i in range(6)] * 2
    )
    manager.flows.close()


def test_an_embedded_store_syncs_one_flow_at_a_time_whatever_the_options() -> None:
    """Its transaction holds its lock across a sync: no worker could write meanwhile."""
    _, store, manager = started(sync_batch=4, create_workers=4)
    manager.start()
    store.apply([flow(f"f{i}", [{"name": "c"}]) for i in range(3)])
    manager.pump()
    assert manager.flows.process_one()
    assert [j.name for j in store.list(VCJob)] == ["f0-c"]
