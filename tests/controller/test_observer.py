"""The manager's observer: told each sync's duration by controller, and each vcjob's wait
from its entry's dependencies being met (its flow first seen, for a root) to its creation;
not told of an entry whose meeting it did not see (a restart)."""

from __future__ import annotations

from typing import Any

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.controller.observer import Observer
from vcflow.controller.options import ControllerOptions
from vcflow.store import MemoryStore


class Recorded(Observer):
    def __init__(self) -> None:
        self.syncs: list[str] = []
        self.waits: list[float] = []

    def synced(self, controller: str, seconds: float) -> None:
        self.syncs.append(controller)

    def vcjob_created(self, seconds_since_met: float) -> None:
        self.waits.append(seconds_since_met)


def template(name: str) -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}
    task: dict[str, Any] = {"name": "t", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


def world() -> tuple[MemoryStore, FakeClock]:
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    after_a = {"dependsOn": {"targets": ["a"]}}
    spec = {"flows": [{"name": "a"}, {"name": "b", **after_a}, {"name": "c", **after_a}]}
    flow = JobFlow.from_dict({"metadata": {"name": "f", "namespace": "default"}, "spec": spec})
    store.apply([template("a"), template("b"), template("c"), flow])
    return store, clock


def complete(store: MemoryStore, name: str) -> None:
    job = store.get(VCJob, "default", name)
    job.status = VCJobStatus(state=JobState(phase="Completed"))
    store.update_status(job)


def test_waits_run_from_the_dependency_met_to_the_creation() -> None:
    store, clock = world()
    seen = Recorded()
    manager = Manager(store, clock, options=ControllerOptions(create_batch=1, observer=seen))
    manager.settle()  # f-a: a root, created as the flow is first seen
    complete(store, "f-a")
    clock.advance(2)
    manager.settle()  # b and c met now; one creation per settle: f-b at once
    clock.advance(5)
    manager.settle()  # f-c, 5 s after
    assert seen.waits == [0, 0, 5]
    assert set(seen.syncs) == {"jobflow", "jobtemplate"}
    assert manager.queue_depths() == {"jobflow": 0, "jobtemplate": 0}


def test_a_meeting_not_seen_is_not_reported() -> None:
    store, clock = world()
    Manager(store, clock, options=ControllerOptions(create_batch=1)).settle()
    complete(store, "f-a")  # met while no controller runs
    seen = Recorded()
    manager = Manager(store, clock, options=ControllerOptions(observer=seen))
    manager.settle()
    assert sorted(j.name for j in store.list(VCJob)) == ["f-a", "f-b", "f-c"]
    assert seen.waits == []
