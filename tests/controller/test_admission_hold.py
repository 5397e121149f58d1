"""`admission: Hold` in the flow controller (docs/scheduling.md): a flow an entry of which
can never fit its Queue or the machine (`ControllerOptions.capacity`) creates no vcjob and
stays Pending with reason `Held`; a Queue change that lets it fit releases it (the
controller watches Queues); `admission: Ignore` and a store without Queues keep today's
behaviour."""

from __future__ import annotations

from typing import Any

from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.scheduling import Queue, QueueStatus
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.reconcile.vcjob.resources import capacity
from vcflow.store import MemoryStore
from vcflow.store.base import KindRegistry, default_kinds


def template(name: str, cpu: str) -> JobTemplate:
    container = {"name": "main", "image": "x", "resources": {"requests": {"cpu": cpu}}}
    spec = {"restartPolicy": "Never", "containers": [container]}
    task: dict[str, Any] = {"name": "t", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


def flow(admission: str, queue: str | None = "team-a") -> JobFlow:
    spec: dict[str, Any] = {
        "schedulingPolicy": {"admission": admission},
        "flows": [{"name": "p1"}, {"name": "p2", "dependsOn": {"targets": ["p1"]}}],
    }
    if queue is not None:
        spec["queue"] = queue
    return JobFlow.from_dict({"metadata": {"name": "f", "namespace": "default"}, "spec": spec})


def queue(cpu: str) -> Queue:
    body: dict[str, Any] = {
        "metadata": {"name": "team-a", "namespace": ""},
        "spec": {"weight": 1, "capability": {"cpu": cpu}},
    }
    return Queue.from_dict(body)


def store_with_queues() -> MemoryStore:
    return MemoryStore()


def store_without_queues() -> MemoryStore:
    """A store whose kinds lack Queue (a Kubernetes API without Volcano's Queue CRD)."""
    kinds = KindRegistry()
    for info in default_kinds().all():
        if info.model is not Queue:
            kinds.register(info.model, defaulter=info.defaulter)
    return MemoryStore(kinds=kinds)


def close(store: MemoryStore) -> None:
    """The Queue's state, a status write as Volcano's queue controller makes it."""
    (found,) = store.list(Queue)
    found.status = QueueStatus(state="Closed")
    store.update_status(found)


def vcjobs(store: MemoryStore) -> list[str]:
    return sorted(j.name for j in store.list(VCJob))


def state(store: MemoryStore) -> dict[str, Any]:
    found = store.get(JobFlow, "default", "f").status
    assert found is not None
    data: dict[str, Any] = found.to_dict()["state"]
    return data


def test_held_against_the_queue_then_released_when_its_capability_grows() -> None:
    store = store_with_queues()
    store.apply([queue("2"), template("p1", "1"), template("p2", "4"), flow("Hold")])
    manager = Manager(store)
    manager.settle()
    assert vcjobs(store) == []
    assert state(store) == {
        "phase": "Pending",
        "reason": "Held",
        "message": "entry p2 needs cpu 4; queue team-a capability cpu 2",
    }
    (grown,) = store.list(Queue)
    assert grown.spec is not None
    grown.spec.capability = {"cpu": "8"}
    store.update(grown)
    manager.settle()
    assert vcjobs(store) == ["f-p1"]
    assert state(store) == {"phase": "Pending"}


def test_a_closed_queue_holds() -> None:
    store = store_with_queues()
    store.apply([queue("8")])
    close(store)
    store.apply([template("p1", "1"), template("p2", "4"), flow("Hold")])
    manager = Manager(store)
    manager.settle()
    assert vcjobs(store) == []
    assert state(store)["message"] == "queue team-a is Closed"


def test_held_against_the_machine() -> None:
    store = MemoryStore()  # (no Queue kind: the implicit default queue only)
    store.apply([template("p1", "1"), template("p2", "4"), flow("Hold", queue=None)])
    manager = Manager(store, options=ControllerOptions(capacity=capacity({"cpu": "2"})))
    manager.settle()
    assert vcjobs(store) == []
    assert state(store)["message"] == "entry p2 needs cpu 4; this machine has cpu 2"


def test_ignore_runs_the_first_stage_as_today() -> None:
    store = store_with_queues()
    store.apply([queue("2"), template("p1", "1"), template("p2", "4"), flow("Ignore")])
    manager = Manager(store, options=ControllerOptions(capacity=capacity({"cpu": "2"})))
    manager.settle()
    assert vcjobs(store) == ["f-p1"]


def test_queues_are_watched_only_where_the_store_holds_them() -> None:
    bare = Manager(store_without_queues())
    assert Queue not in bare.kinds and VCJob in bare.kinds
    assert Queue in Manager(store_with_queues()).kinds


def test_a_queue_deleted_releases_the_flow_it_held() -> None:
    store = store_with_queues()
    store.apply([queue("2"), template("p1", "1"), template("p2", "4"), flow("Hold")])
    manager = Manager(store)
    manager.settle()
    assert vcjobs(store) == []
    (found,) = store.list(Queue)
    store.delete(Queue, found.namespace, found.name)
    manager.settle()
    assert vcjobs(store) == ["f-p1"]  # (a queue vcflow does not know holds nothing)


def test_a_hold_and_its_release_are_told_once_each_in_events() -> None:
    store = store_with_queues()
    store.apply([queue("2"), template("p1", "1"), template("p2", "4"), flow("Hold")])
    manager = Manager(store)
    manager.settle()
    manager.settle()
    (grown,) = store.list(Queue)
    assert grown.spec is not None
    grown.spec.capability = {"cpu": "8"}
    store.update(grown)
    manager.settle()
    told = [
        (e.type, e.reason, e.message) for e in store.list(Event) if e.reason in ("Held", "Released")
    ]
    assert told == [
        ("Warning", "Held", "entry p2 needs cpu 4; queue team-a capability cpu 2"),
        ("Normal", "Released", "the flow fits its queue now"),
    ]
