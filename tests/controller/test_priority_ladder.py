"""The operator's priority mode in the flow controller (`ControllerOptions.ladder`): a
vcjob is created on its flow's rung of the PriorityClass ladder, and when the flow's age
crosses a step its vcjobs still Pending move up one — on a timer of the flow's own, due at
the step, not by polling; a vcjob that left Pending keeps its class."""

from __future__ import annotations

from typing import Any

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.reconcile.schedmode import Ladder
from vcflow.store import MemoryStore

LADDER = Ladder(("low", "mid", "high"), 600)


def template(name: str) -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}
    task: dict[str, Any] = {"name": "main", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


FLOW = JobFlow.from_dict(
    {
        "metadata": {"name": "f", "namespace": "default"},
        "spec": {
            "jobRetainPolicy": "retain",
            "flows": [{"name": "a"}, {"name": "w"}, {"name": "b", "dependsOn": {"targets": ["a"]}}],
        },
    }
)


def world(ladder: Ladder | None) -> tuple[MemoryStore, FakeClock, Manager]:
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    store.apply([template("a"), template("w"), template("b"), FLOW])
    manager = Manager(store, clock, options=ControllerOptions(ladder=ladder))
    manager.settle()
    return store, clock, manager


def klass(store: MemoryStore, name: str) -> str | None:
    spec = store.get(VCJob, "default", name).spec
    return spec.priority_class_name if spec is not None else None


def set_phase(store: MemoryStore, name: str, phase: str) -> None:
    job = store.get(VCJob, "default", name)
    job.status = VCJobStatus(state=JobState(phase=phase))
    store.update_status(job)


def test_pending_vcjobs_climb_one_rung_a_step_and_new_ones_start_on_the_flows() -> None:
    store, clock, manager = world(LADDER)
    assert (klass(store, "f-a"), klass(store, "f-w")) == ("low", "low")
    assert manager.next_due() == clock.monotonic() + 600  # the flow's timer: its next step
    clock.advance(599)
    manager.settle()
    assert klass(store, "f-a") == "low"
    clock.advance(1)
    manager.settle()
    assert (klass(store, "f-a"), klass(store, "f-w")) == ("mid", "mid")
    set_phase(store, "f-w", "Running")  # (admitted: it keeps its class)
    set_phase(store, "f-a", "Completed")
    manager.settle()
    assert klass(store, "f-b") == "mid"  # created on the flow's rung, not the lowest
    clock.advance(600)
    manager.settle()
    assert (klass(store, "f-b"), klass(store, "f-w")) == ("high", "mid")
    assert manager.next_due() is None  # the top rung: no timer left


def test_without_a_ladder_vcjobs_keep_the_class_they_were_built_with() -> None:
    store, clock, manager = world(None)
    clock.advance(1800)
    manager.settle()
    assert klass(store, "f-a") is None
    assert manager.next_due() is None
