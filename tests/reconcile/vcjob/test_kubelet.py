"""The kubelet's part (reference §9): restartPolicy, in-place restarts, exit codes,
activeDeadlineSeconds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from vcflow.api.pod import Pod
from vcflow.reconcile.vcjob import kubelet, pods
from vcflow.reconcile.vcjob import spec as jobspec

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def running_pod(make: Any, restart: str | None, deadline: int | None = None) -> Pod:
    task = make.task("w", 1, restart=restart)
    if deadline is not None:
        task["template"]["spec"]["activeDeadlineSeconds"] = deadline
    job = make.vcjob(make.job("j", task))
    pod = pods.build_pod(job, jobspec.task_specs(job)[0], 0)
    return kubelet.start(kubelet.place(pod, NOW), NOW)


@pytest.mark.parametrize(
    ("restart", "code", "phase", "restarts"),
    [
        ("Never", 0, "Succeeded", 0),
        ("Never", 3, "Failed", 0),
        ("OnFailure", 0, "Succeeded", 0),
        ("OnFailure", 1, "Running", 1),
        ("Always", 0, "Running", 1),
        ("Always", 1, "Running", 1),
        (None, 0, "Running", 1),  # omitted restartPolicy = Always
    ],
)
def test_restart_policy(
    make: Any, restart: str | None, code: int, phase: str, restarts: int
) -> None:
    out = kubelet.exit_container(running_pod(make, restart), code, NOW)
    assert (out.phase, kubelet.restart_count(out)) == (phase, restarts)


def test_exit_code_of_the_first_container(make: Any) -> None:
    out = kubelet.exit_container(running_pod(make, "Never"), 3, NOW)
    assert kubelet.exit_code(out) == 3


def test_deadline_counts_from_placement_across_restarts(make: Any) -> None:
    pod = running_pod(make, "OnFailure", deadline=60)
    assert kubelet.deadline(pod) == NOW + timedelta(seconds=60)
    later = NOW + timedelta(seconds=30)
    restarted = kubelet.exit_container(pod, 1, later)
    assert kubelet.deadline(restarted) == NOW + timedelta(seconds=60)
    failed = kubelet.exceed_deadline(restarted, NOW + timedelta(seconds=60))
    assert (failed.phase, failed.status and failed.status.reason) == ("Failed", "DeadlineExceeded")
    assert kubelet.exit_code(failed) == kubelet.KILLED
    assert kubelet.deadline(failed) is None


def test_ready_means_running_with_ready_containers(make: Any) -> None:
    pod = running_pod(make, "Never")
    assert kubelet.is_ready(pod)
    assert not kubelet.is_ready(kubelet.exit_container(pod, 0, NOW))
