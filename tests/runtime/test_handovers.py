"""The runtime's hand-over holds (`runtime.handovers`): a hold when a hand-over job has
ended and its pods hold nothing, of the least of its need, what its pods freed and what is
free; once per job; dropped with a stopped or deleted flow."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from fractions import Fraction

from vcflow.api.jobflow import JobFlow
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import kubelet, pods, podset, resources
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.runtime.handovers import Handovers
from vcflow.runtime.jobrecord import JobRecord

NOW = datetime(2026, 1, 1, tzinfo=UTC)
GPU = "nvidia.com/gpu"
ROOMY = resources.capacity({GPU: "8"})


def _job(phase: str, need: str = "2", gpus: str = "2", handover: bool = True) -> VCJob:
    notes = {"vcflow.io/handover": json.dumps({"holdSeconds": 30, "need": {GPU: need}})}
    container = {"name": "m", "image": "b", "resources": {"requests": {GPU: gpus}}}
    job = VCJob.from_dict(
        {
            "metadata": {
                "name": "prep",
                "namespace": "default",
                "uid": "u1",
                "labels": {"volcano.sh/createdByJobFlow": "default.a"},
                "annotations": notes if handover else {},
            },
            "spec": {
                "tasks": [
                    {
                        "name": "w",
                        "replicas": 1,
                        "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
                    }
                ]
            },
            "status": {"state": {"phase": phase}},
        }
    )
    return jobspec.with_defaults(job)


def _pods(job: VCJob, phase: str) -> podset.PodSet:
    task = jobspec.task_specs(job)[0]
    pod: Pod = kubelet.place(pods.build_pod(job, task, 0), NOW)
    assert pod.status is not None
    pod.status.phase = phase
    return podset.of([pod])


def test_an_ended_job_holds_the_least_of_need_freed_and_free() -> None:
    shell = Handovers()
    job = _job("Completed", need="4", gpus="2")
    assert shell.job_seen(JobRecord(job), _pods(job, "Succeeded"), ROOMY, NOW)
    (hold,) = shell.holds
    assert hold.flow == "default.a" and hold.amount == {GPU: Fraction(2)}  # (what it freed)
    assert not shell.job_seen(JobRecord(job), _pods(job, "Succeeded"), ROOMY, NOW)  # once
    other = Handovers()
    assert other.job_seen(
        JobRecord(job), _pods(job, "Succeeded"), resources.capacity({GPU: "1"}), NOW
    )
    assert next(iter(other.holds)).amount == {GPU: Fraction(1)}  # (what is free)


def test_no_hold_while_its_pods_hold_or_without_a_hand_over() -> None:
    shell = Handovers()
    running = _job("Running")
    assert not shell.job_seen(JobRecord(running), _pods(running, "Running"), ROOMY, NOW)
    done = _job("Completed")
    assert not shell.job_seen(JobRecord(done), _pods(done, "Running"), ROOMY, NOW)
    plain = _job("Completed", handover=False)
    assert not shell.job_seen(JobRecord(plain), _pods(plain, "Succeeded"), ROOMY, NOW)
    assert shell.job_seen(JobRecord(done), _pods(done, "Succeeded"), ROOMY, NOW)  # (later)


def test_dropped_with_a_stopped_or_deleted_flow() -> None:
    shell = Handovers()
    job = _job("Completed")
    shell.job_seen(JobRecord(job), _pods(job, "Succeeded"), ROOMY, NOW)
    running = JobFlow.from_dict(
        {"metadata": {"name": "a"}, "status": {"state": {"phase": "Running"}}}
    )
    failed = JobFlow.from_dict(
        {"metadata": {"name": "a"}, "status": {"state": {"phase": "Failed"}}}
    )
    assert not shell.drop_stopped(lambda ns, name: running)
    assert shell.holds
    assert shell.drop_stopped(lambda ns, name: failed if (ns, name) == ("default", "a") else None)
    assert not shell.holds
    shell.job_seen(JobRecord(_job("Completed").model_copy()), _pods(job, "Succeeded"), ROOMY, NOW)
    assert not shell.holds  # (the same job's end, already handed over)
