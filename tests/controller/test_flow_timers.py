"""The JobFlow controller carries out the flow features' timers (docs/flow-features.md): a
delayed key per flow is its next retry, deadline or probe round; a restarted controller keeps
the schedule and makes each attempt once; a retry waits for the last attempt's pods to go; a
vcjob past its deadline gets the annotation and a TerminateJob; probes run through the
controller's prober."""

from __future__ import annotations

from typing import Any

from vcflow.api.clock import FakeClock
from vcflow.api.command import Command
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.pod import Pod
from vcflow.api.vcjob import JobState, TaskState, VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import probes, retry
from vcflow.reconcile.vcjob import pods as podnames
from vcflow.store import MemoryStore


def template(name: str) -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}
    task: dict[str, Any] = {"name": "main", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


def flow(*entries: dict[str, Any], **spec: Any) -> JobFlow:
    return JobFlow.from_dict(
        {
            "metadata": {"name": "f", "namespace": "default"},
            "spec": {"flows": list(entries), **spec},
        }
    )


RETRY = {"maxRetries": 1, "backoff": {"type": "Constant", "baseDelay": "30s"}}


def world(*objects: Any, prober: Any = None) -> tuple[MemoryStore, FakeClock, Manager]:
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    store.apply(list(objects))
    manager = Manager(store, clock, options=ControllerOptions(prober=prober))
    manager.settle()
    return store, clock, manager


def set_phase(store: MemoryStore, name: str, phase: str, **status: Any) -> None:
    job = store.get(VCJob, "default", name)
    job.status = VCJobStatus(state=JobState(phase=phase), **status)
    store.update_status(job)


def attempt(store: MemoryStore, name: str) -> int:
    return retry.attempt_of(store.get(VCJob, "default", name).metadata.annotations)


def advance(clock: FakeClock, manager: Manager, seconds: float) -> None:
    clock.advance(seconds)
    manager.settle()


def test_a_backoff_is_a_delayed_key_that_keeps_a_run_alive_and_fires_once() -> None:
    store, clock, manager = world(template("a"), flow({"name": "a"}, retryPolicy=RETRY))
    set_phase(store, "f-a", "Failed")
    manager.settle()
    assert manager.next_due() == clock.monotonic() + 30
    advance(clock, manager, 29)
    assert attempt(store, "f-a") == 1
    advance(clock, manager, 1)
    assert attempt(store, "f-a") == 2
    assert manager.next_due() is None


def test_a_restarted_controller_keeps_the_schedule_and_creates_the_attempt_once() -> None:
    store, clock, manager = world(template("a"), flow({"name": "a"}, retryPolicy=RETRY))
    set_phase(store, "f-a", "Failed")
    manager.settle()
    advance(clock, manager, 10)
    restarted = Manager(store, clock)  # the first one died: a new one resyncs
    restarted.settle()
    assert restarted.next_due() == clock.monotonic() + 20
    advance(clock, restarted, 20)
    assert attempt(store, "f-a") == 2
    again = Manager(store, clock)
    again.settle()
    clock.advance(120)
    again.settle()
    created = [e for e in store.list(Event) if e.reason == "Created"]
    assert sum(e.count for e in created) == 2  # "create a job named f-a!": two attempts
    assert attempt(store, "f-a") == 2
    assert store.get(JobFlow, "default", "f").status.job_status_list[0].attempt == 2  # type: ignore[union-attr,index]


def test_the_next_attempt_waits_until_the_last_attempts_pods_are_gone() -> None:
    store, clock, manager = world(template("a"), flow({"name": "a"}, retryPolicy=RETRY))
    job = store.get(VCJob, "default", "f-a")
    pod = Pod.from_dict(
        {
            "metadata": {
                "name": "f-a-main-0",
                "namespace": "default",
                "labels": {podnames.JOB_NAME: "f-a"},
                "finalizers": ["vcflow.io/test"],
                "ownerReferences": [
                    {
                        "apiVersion": "batch.volcano.sh/v1alpha1",
                        "kind": "Job",
                        "name": "f-a",
                        "uid": job.metadata.uid,
                        "controller": True,
                    }
                ],
            }
        }
    )
    store.create(pod, admit=False)
    set_phase(store, "f-a", "Failed")
    manager.settle()
    advance(clock, manager, 30)  # due: the vcjob is deleted, its pod stays Terminating
    assert store.list(VCJob) == []
    status = store.get(JobFlow, "default", "f").status
    assert status is not None and status.conditions is not None
    assert "waiting for the pods of the last attempt" in (status.conditions["f-a"].message or "")
    gone = store.get(Pod, "default", "f-a-main-0")
    gone.metadata.finalizers = []
    store.update(gone, admit=False)  # the runtime removed it
    advance(clock, manager, 0.2)
    assert attempt(store, "f-a") == 2


def test_a_vcjob_past_its_deadline_is_marked_and_sent_a_terminate_job() -> None:
    store, clock, manager = world(template("a"), flow({"name": "a", "activeDeadlineSeconds": 60}))
    set_phase(store, "f-a", "Running")
    manager.settle()
    advance(clock, manager, 59)
    assert store.list(Command) == []
    advance(clock, manager, 1)
    (command,) = store.list(Command)
    assert command.action == "TerminateJob" and command.target_object is not None
    assert command.target_object.name == "f-a"
    marked = store.get(VCJob, "default", "f-a")
    assert marked.metadata.annotations[reconcile.DEADLINE_ANNOTATION] == "2026-01-01T00:01:00Z"
    advance(clock, manager, 60)
    assert len(store.list(Command)) == 1  # once


class Prober:
    def __init__(self, answers: list[bool]) -> None:
        self.answers = answers
        self.checks: list[probes.Check] = []

    def check(self, check: probes.Check) -> tuple[bool, str]:
        self.checks.append(check)
        ok = self.answers.pop(0) if self.answers else True
        return ok, f"{check.label()}: {'open' if ok else 'connection refused'}"


def test_probe_rounds_run_through_the_prober_every_period_until_one_succeeds() -> None:
    prober = Prober([False, False, True])
    probe = {"tcpSocketList": [{"taskName": "main", "port": 6379}]}
    store, clock, manager = world(
        template("server"),
        template("client"),
        flow(
            {"name": "server"},
            {"name": "client", "dependsOn": {"targets": ["server"], "probe": probe}},
        ),
        prober=prober,
    )
    set_phase(
        store, "f-server", "Running", task_status_count={"main": TaskState(phase={"Running": 1})}
    )
    manager.settle()
    assert [c.port for c in prober.checks] == [6379]
    assert sorted(j.name for j in store.list(VCJob)) == ["f-server"]
    advance(clock, manager, probes.PERIOD)
    assert len(prober.checks) == 2
    advance(clock, manager, probes.PERIOD)
    assert len(prober.checks) == 3
    assert sorted(j.name for j in store.list(VCJob)) == ["f-client", "f-server"]
    advance(clock, manager, 10)
    assert len(prober.checks) == 3  # met: no more rounds


def attempt_events(store: MemoryStore) -> list[tuple[str, str, str]]:
    """The AttemptFailed Events, by message (the store lists Events by their random names)."""
    return sorted(
        (e.type or "", e.reason or "", e.message or "")
        for e in store.list(Event)
        if e.reason == "AttemptFailed"
    )


def test_each_failed_attempt_of_a_retried_entry_is_a_warning_event() -> None:
    policy = {**RETRY, "maxRetries": 2}
    store, clock, manager = world(template("a"), flow({"name": "a"}, retryPolicy=policy))
    set_phase(store, "f-a", "Running")
    manager.settle()
    set_phase(
        store,
        "f-a",
        "Failed",
    )
    manager.settle()
    set_phase(store, "f-a", "Failed")  # seen again: no second Event
    manager.settle()
    advance(clock, manager, 30)
    assert attempt(store, "f-a") == 2
    job = store.get(VCJob, "default", "f-a")
    job.status = VCJobStatus(
        state=JobState(phase="Terminated", reason="DeadlineExceeded", message="too long")
    )
    store.update_status(job)
    manager.settle()
    advance(clock, manager, 30)
    set_phase(store, "f-a", "Failed")  # the last attempt: no retry left
    manager.settle()
    assert attempt_events(store) == [
        ("Warning", "AttemptFailed", "vcjob f-a attempt 1 Failed: 2 of 2 retries left"),
        (
            "Warning",
            "AttemptFailed",
            "vcjob f-a attempt 2 Terminated (DeadlineExceeded: too long): 1 of 2 retries left",
        ),
        ("Warning", "AttemptFailed", "vcjob f-a attempt 3 Failed: 0 of 2 retries left"),
    ]


def test_a_failure_without_retries_is_no_attempt_event() -> None:
    store, _clock, manager = world(template("a"), flow({"name": "a"}))
    set_phase(store, "f-a", "Failed")
    manager.settle()
    assert attempt_events(store) == []
