"""The operator's sla mode in the flow controller (`ControllerOptions.sla`): each vcjob a
flow creates carries `volcano.sh/sla-waiting-time`, so that, created when its predecessor
ended, it is due at the flow's deadline less its remaining path; without the mode no vcjob
carries it."""

from __future__ import annotations

from typing import Any

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.reconcile.slatime import WAITING_TIME, Policy
from vcflow.store import MemoryStore


def template(name: str) -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}
    task: dict[str, Any] = {"name": "main", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


PIPELINE = JobFlow.from_dict(
    {
        "metadata": {"name": "f", "namespace": "default"},
        "spec": {
            "flows": [
                {"name": "prep", "runningEstimate": "1m"},
                {"name": "train", "runningEstimate": "10m", "dependsOn": {"targets": ["prep"]}},
            ]
        },
    }
)


def annotation(store: MemoryStore, name: str) -> str | None:
    return store.get(VCJob, "default", name).metadata.annotations.get(WAITING_TIME)


def run(options: ControllerOptions) -> tuple[MemoryStore, FakeClock, Manager]:
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    store.apply([template("prep"), template("train"), PIPELINE])
    manager = Manager(store, clock, options=options)
    manager.settle()
    return store, clock, manager


def test_each_vcjob_is_due_at_the_flows_deadline_less_its_remaining_path() -> None:
    store, clock, manager = run(ControllerOptions(sla=Policy(budget=3600, floor=60)))
    assert annotation(store, "f-prep") == "49m0s"  # 3600 - (60 + 600)
    clock.advance(120)  # prep ran two minutes
    job = store.get(VCJob, "default", "f-prep")
    job.status = VCJobStatus(state=JobState(phase="Completed"))
    store.update_status(job)
    manager.settle()
    assert annotation(store, "f-train") == "48m0s"  # 3600 - 600 - 120: the same deadline


def test_without_the_mode_no_vcjob_carries_a_waiting_time() -> None:
    store, _, _ = run(ControllerOptions())
    assert annotation(store, "f-prep") is None
