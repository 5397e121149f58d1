"""A JobFlow deleted and created again under the same name is a new object: what the flow
controller keeps of the earlier one (its deleted vcjobs' outcomes, its index, a late event
of its vcjobs) is keyed by the earlier flow's uid and never counts for the new one, so the
new flow runs its jobs (issue 25, defect 1). A vcjob deleted while its own flow waits for
its first sync still counts for that flow."""

from __future__ import annotations

from typing import Any

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.store import MemoryStore
from vcflow.store.base import EventType, WatchEvent


def template(name: str) -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}
    task: dict[str, Any] = {"name": "t", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


def jobflow(*entries: str) -> JobFlow:
    flows: list[dict[str, Any]] = [{"name": entries[0]}]
    flows += [{"name": e, "dependsOn": {"targets": [entries[0]]}} for e in entries[1:]]
    return JobFlow.from_dict(
        {"metadata": {"name": "f", "namespace": "default"}, "spec": {"flows": flows}}
    )


def world(*entries: str) -> tuple[MemoryStore, Manager]:
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    store.apply([*(template(e) for e in entries), jobflow(*entries)])
    return store, Manager(store, clock)


def set_phase(store: MemoryStore, name: str, phase: str) -> None:
    job = store.get(VCJob, "default", name)
    job.status = VCJobStatus(state=JobState(phase=phase))
    store.update_status(job)


def flow_phase(store: MemoryStore) -> str:
    return store.get(JobFlow, "default", "f").phase


def test_a_flow_deleted_and_created_again_runs_its_job_every_time() -> None:
    store, manager = world("a")
    uids = set()
    for _ in range(4):
        manager.settle()
        assert [j.name for j in store.list(VCJob)] == ["f-a"], "the job was not created"
        assert flow_phase(store) == "Running" or flow_phase(store) == "Pending"
        set_phase(store, "f-a", "Completed")
        manager.settle()
        assert flow_phase(store) == "Succeed"
        uids.add(store.get(JobFlow, "default", "f").metadata.uid)
        store.delete(JobFlow, "default", "f")  # its vcjob is collected after it
        manager.settle()
        assert manager.flows.tombstones == {}  # (nothing kept of a deleted flow)
        store.apply([jobflow("a")])
    assert len(uids) == 4


def test_a_flow_created_again_while_the_earlier_ones_job_remains_waits_for_it() -> None:
    """As on a cluster, whose garbage collector deletes the vcjobs some time after their
    flow: the new flow's entry waits (NameConflict) and its job is created once the earlier
    one is gone; that deletion is not an outcome of the new flow's job."""
    store, manager = world("a", "b")
    manager.settle()
    set_phase(store, "f-a", "Completed")
    manager.settle()
    set_phase(store, "f-b", "Completed")
    manager.settle()
    assert flow_phase(store) == "Succeed"
    kept = {j.name: j for j in store.list(VCJob)}
    store.delete(JobFlow, "default", "f")
    manager.settle()
    for job in kept.values():  # not collected yet, as the GC of a cluster may leave them
        job.metadata.resource_version = ""
        store.create(job)
        set_phase(store, job.name, "Completed")
    manager.settle()
    store.apply([jobflow("a", "b")])
    manager.settle()
    status = store.get(JobFlow, "default", "f").status
    assert flow_phase(store) != "Succeed"
    assert status is not None and not status.completed_jobs
    store.delete(VCJob, "default", "f-a", force=True)  # the earlier flow's, collected
    manager.settle()
    created = store.get(VCJob, "default", "f-a")
    assert created.metadata.uid and flow_phase(store) != "Succeed"
    assert (
        created.metadata.owner_references[0].uid == store.get(JobFlow, "default", "f").metadata.uid
    )
    store.delete(VCJob, "default", "f-b", force=True)
    manager.settle()
    assert flow_phase(store) != "Succeed"  # f-b waits for f-a, which has not completed
    set_phase(store, "f-a", "Completed")
    manager.settle()
    assert {j.name for j in store.list(VCJob)} == {"f-a", "f-b"}
    set_phase(store, "f-b", "Completed")
    manager.settle()
    assert flow_phase(store) == "Succeed"


def deleted(job: VCJob, owner_uid: str, rv: int) -> WatchEvent:
    late = job.clone()
    late.metadata.owner_references[0].uid = owner_uid
    data = late.model_dump_json(by_alias=True, exclude_none=True)
    return WatchEvent(EventType.DELETED, VCJob, job.namespace, job.name, rv, data)


def test_a_late_deletion_of_an_earlier_flows_job_is_not_the_new_ones_outcome() -> None:
    """A watch of vcjobs that lags the watch of flows (the operator: one stream per kind)
    brings the earlier flow's vcjob's DELETED after the new flow created its own."""
    store, manager = world("a")
    manager.settle()
    job = store.get(VCJob, "default", "f-a")
    assert flow_phase(store) != "Succeed"
    stale = job.clone()
    stale.status = VCJobStatus(state=JobState(phase="Completed"))
    manager.flows.handle(deleted(stale, "uid-of-an-earlier-flow", store.resource_version()))
    manager.settle()
    assert flow_phase(store) != "Succeed"
    assert store.get(VCJob, "default", "f-a").metadata.uid == job.metadata.uid
    set_phase(store, "f-a", "Completed")
    manager.settle()
    assert flow_phase(store) == "Succeed"


def test_a_job_deleted_before_its_flows_first_sync_counts_for_that_flow() -> None:
    """A restarted controller (no index yet) sees a running vcjob of its flow deleted: the
    tombstone, kept by the flow's uid, makes it JobDeleted at the flow's first sync."""
    store, manager = world("a")
    manager.settle()
    set_phase(store, "f-a", "Running")
    manager.settle()
    uid = store.get(JobFlow, "default", "f").metadata.uid
    fresh = Manager(store, FakeClock())
    fresh.start()  # every flow cached and queued, none synced
    store.delete(VCJob, "default", "f-a", force=True)
    fresh.pump()
    assert fresh.flows.tombstones == {uid: {"f-a": "Running"}}
    fresh.settle()
    assert fresh.flows.tombstones == {}
    status = store.get(JobFlow, "default", "f").status
    assert status is not None and status.failed_jobs == ["f-a"]
