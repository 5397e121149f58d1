"""Policy resolution (reference §4.3) and delayed actions (§4.4)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from vcflow.api.phases import Action, Event
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import policy
from vcflow.reconcile.vcjob.model import DelayedAction, Request

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def job_with(
    make: Any,
    job_policies: list[dict[str, Any]],
    task_policies: list[dict[str, Any]] | None = None,
    version: int = 0,
) -> VCJob:
    data = make.job(
        "p",
        make.task("a", policies=task_policies),
        make.task("b"),
        policies=job_policies,
    )
    data["status"] = {"version": version}
    return make.vcjob(data)


@pytest.mark.parametrize(
    ("job_policies", "task_policies", "request_", "expected"),
    [
        pytest.param(
            [{"event": "PodFailed", "action": "AbortJob"}],
            [{"event": "PodFailed", "action": "RestartJob"}],
            Request(Event.POD_FAILED, task="a", exit_code=1),
            Action.RESTART_JOB,
            id="task-policy-first",
        ),
        pytest.param(
            [{"event": "PodFailed", "action": "AbortJob"}],
            [{"event": "PodFailed", "action": "RestartJob"}],
            Request(Event.POD_FAILED, task="b", exit_code=1),
            Action.ABORT_JOB,
            id="other-task-falls-back-to-job",
        ),
        pytest.param(
            [{"event": "PodFailed", "action": "AbortJob"}],
            [{"event": "PodEvicted", "action": "RestartTask"}],
            Request(Event.POD_FAILED, task="a", exit_code=1),
            Action.ABORT_JOB,
            id="no-task-match-consults-job-list",
        ),
        pytest.param(
            [{"event": "PodFailed", "action": "AbortJob"}, {"exitCode": 3, "action": "RestartJob"}],
            None,
            Request(Event.POD_FAILED, task="a", exit_code=3),
            Action.ABORT_JOB,
            id="first-match-by-list-order",
        ),
        pytest.param(
            [{"exitCode": 3, "action": "RestartJob"}, {"event": "PodFailed", "action": "AbortJob"}],
            None,
            Request(Event.POD_FAILED, task="a", exit_code=3),
            Action.RESTART_JOB,
            id="exit-code-listed-first",
        ),
        pytest.param(
            [{"exitCode": 3, "action": "RestartJob"}],
            None,
            Request(Event.POD_FAILED, task="a", exit_code=1),
            Action.SYNC_JOB,
            id="other-exit-code-no-default",
        ),
        pytest.param(
            [{"event": "*", "action": "RestartJob"}],
            None,
            Request(Event.TASK_COMPLETED, task="a"),
            Action.RESTART_JOB,
            id="star-matches-task-completed-B3",
        ),
        pytest.param(
            [{"event": "*", "action": "RestartJob"}],
            None,
            Request(Event.POD_PENDING, task="a"),
            Action.SYNC_JOB,
            id="star-skips-pod-pending-without-timeout",
        ),
        pytest.param(
            [{"event": "PodPending", "action": "RestartJob"}],
            None,
            Request(Event.POD_PENDING, task="a"),
            Action.SYNC_JOB,
            id="pod-pending-needs-timeout",
        ),
        pytest.param(
            [{"event": "*", "action": "RestartJob"}],
            None,
            Request(Event.POD_RUNNING, task="a"),
            Action.SYNC_JOB,
            id="pod-running-internal",
        ),
        pytest.param(
            [{"event": "*", "action": "RestartJob"}],
            None,
            Request(Event.OUT_OF_SYNC, task="a"),
            Action.SYNC_JOB,
            id="out-of-sync-internal",
        ),
        pytest.param(
            [{"events": ["PodEvicted", "PodFailed"], "action": "TerminateJob"}],
            None,
            Request(Event.POD_FAILED, task="a", exit_code=2),
            Action.TERMINATE_JOB,
            id="events-list",
        ),
        pytest.param(
            [{"event": "PodFailed", "action": "AbortJob"}],
            None,
            Request(Event.COMMAND_ISSUED, action=Action.RESUME_JOB),
            Action.RESUME_JOB,
            id="command-bypasses-policies",
        ),
        pytest.param(
            [{"event": "PodFailed", "action": "AbortJob"}],
            None,
            Request(Event.POD_FAILED, task="a", exit_code=1, job_uid="someone-else"),
            Action.SYNC_JOB,
            id="other-job-uid",
        ),
    ],
)
def test_resolution(
    make: Any,
    job_policies: list[dict[str, Any]],
    task_policies: list[dict[str, Any]] | None,
    request_: Request,
    expected: Action,
) -> None:
    job = job_with(make, job_policies, task_policies)
    assert policy.resolve(job, request_).action == expected


def test_events_of_an_older_job_version_only_sync(make: Any) -> None:
    job = job_with(make, [{"event": "PodFailed", "action": "AbortJob"}], version=2)
    stale = Request(Event.POD_FAILED, task="a", exit_code=1, job_version=1)
    current = Request(Event.POD_FAILED, task="a", exit_code=1, job_version=2)
    assert policy.resolve(job, stale).action == Action.SYNC_JOB
    assert policy.resolve(job, current).action == Action.ABORT_JOB


def test_timeout_is_returned_in_seconds(make: Any) -> None:
    job = job_with(make, [{"event": "PodPending", "timeout": "1m30s", "action": "RestartJob"}])
    resolved = policy.resolve(job, Request(Event.POD_PENDING, task="a", pod="p-a-0"))
    assert resolved == policy.Resolved(Action.RESTART_JOB, 90.0)


def pending_timer(pod: str = "p-a-0", uid: str = "u1") -> DelayedAction:
    return DelayedAction(Action.RESTART_JOB, Event.POD_PENDING, NOW, task="a", pod=pod, pod_uid=uid)


def test_identical_delayed_action_is_not_rescheduled() -> None:
    first = {"p-a-0": pending_timer()}
    again = Request(Event.POD_PENDING, task="a", pod="p-a-0", pod_uid="u1")
    later = NOW + timedelta(minutes=5)
    out = policy.scheduled(first, again, policy.Resolved(Action.RESTART_JOB, 60.0), later)
    assert out["p-a-0"].due == NOW


def test_a_new_delayed_action_is_due_after_its_timeout() -> None:
    request = Request(Event.POD_PENDING, task="a", pod="p-a-1", pod_uid="u2")
    out = policy.scheduled({}, request, policy.Resolved(Action.ABORT_JOB, 60.0), NOW)
    assert out["p-a-1"].due == NOW + timedelta(seconds=60)
    assert out["p-a-1"].action == Action.ABORT_JOB


@pytest.mark.parametrize(
    ("request_", "cancelled"),
    [
        (Request(Event.POD_RUNNING, pod="p-a-0", pod_uid="u1"), True),
        (Request(Event.POD_FAILED, pod="p-a-0", pod_uid="u1"), True),
        (Request(Event.POD_EVICTED, pod="p-a-0", pod_uid="u1"), True),
        (Request(Event.POD_RUNNING, pod="p-a-0", pod_uid="other-uid"), False),
        (Request(Event.OUT_OF_SYNC, pod="p-a-0", pod_uid="u1"), False),
        (Request(Event.POD_RUNNING, pod="p-a-1", pod_uid="u1"), False),
    ],
)
def test_pod_pending_timer_ends_with_the_same_pods_next_event(
    request_: Request, cancelled: bool
) -> None:
    out = policy.cancelled_by_event({"p-a-0": pending_timer()}, request_)
    assert ("p-a-0" not in out) == cancelled


def test_failure_timer_ends_when_a_pod_of_that_name_runs() -> None:
    timer = DelayedAction(Action.RESTART_TASK, Event.POD_FAILED, NOW, task="a", pod="p-a-0")
    running_again = Request(Event.POD_RUNNING, pod="p-a-0", pod_uid="new-uid")
    assert policy.cancelled_by_event({"p-a-0": timer}, running_again) == {}


@pytest.mark.parametrize(
    ("action", "request_", "left"),
    [
        (Action.ABORT_JOB, Request(), {"task-b", "pod-b0"}),
        (Action.RESTART_TASK, Request(task="a"), {"job", "task-b", "pod-b0"}),
        (Action.RESTART_TASK, Request(task="b"), {"job", "pod-b0"}),
        (Action.RESTART_POD, Request(pod="p-b-0"), {"job", "task-b"}),
        (Action.RESTART_POD, Request(pod="p-b-1"), {"job", "task-b", "pod-b0"}),
    ],
)
def test_executing_an_action_cancels_its_scope(
    action: Action, request_: Request, left: set[str]
) -> None:
    delayed = {
        "job": DelayedAction(Action.RESTART_JOB, Event.POD_FAILED, NOW, task="a", pod="p-a-0"),
        "task-b": DelayedAction(Action.RESTART_TASK, Event.POD_FAILED, NOW, task="b", pod="x"),
        "pod-b0": DelayedAction(Action.RESTART_POD, Event.POD_FAILED, NOW, task="b", pod="p-b-0"),
    }
    assert set(policy.cancelled_by_action(delayed, action, request_)) == left
