"""The state machine (reference §5, §6): the dispatch table, the phase rules, and what the
three primitives decide, asserted on `handle`'s Decision."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from vcflow.api.phases import Action, Event, JobPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import kubelet, lifecycle, pods, rules
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.reconcile.vcjob.lifecycle import Primitive
from vcflow.reconcile.vcjob.model import Group, JobContext, Request
from vcflow.reconcile.vcjob.spec import Shape, TaskShape
from vcflow.reconcile.vcjob.status import Counts

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SYNC = Request(Event.OUT_OF_SYNC)
ONE = Shape((TaskShape("w", 1, 1, 3),), min_available=1, max_retry=3)

P, R, RS = JobPhase.PENDING, JobPhase.RUNNING, JobPhase.RESTARTING
KILL, TARGET, SYNCP = Primitive.KILL_JOB, Primitive.KILL_TARGET, Primitive.SYNC
TABLE = [
    # phase, action, primitive, soft, phase after (no pods, retry 0), retry after
    ("", Action.SYNC_JOB, SYNCP, False, P, 0),
    (P, Action.RESTART_JOB, KILL, False, RS, 1),
    (P, Action.RESTART_POD, TARGET, False, RS, 1),
    (R, Action.RESTART_TASK, TARGET, False, RS, 1),
    (R, Action.RESTART_PARTITION, TARGET, False, RS, 1),
    (R, Action.ABORT_JOB, KILL, True, JobPhase.ABORTING, 0),
    (R, Action.TERMINATE_JOB, KILL, True, JobPhase.TERMINATING, 0),
    (P, Action.COMPLETE_JOB, KILL, True, JobPhase.COMPLETING, 0),
    (R, Action.RESUME_JOB, SYNCP, False, R, 0),
    (RS, Action.SYNC_JOB, SYNCP, False, P, 0),
    (RS, Action.RESTART_TASK, TARGET, False, P, 0),
    (RS, Action.RESTART_JOB, KILL, False, P, 0),
    (RS, Action.ABORT_JOB, KILL, False, P, 0),  # B4: the abort is lost
    (RS, Action.RESUME_JOB, KILL, False, P, 0),
    (JobPhase.ABORTING, Action.SYNC_JOB, KILL, True, JobPhase.ABORTED, 0),
    (JobPhase.ABORTING, Action.RESUME_JOB, KILL, True, RS, 1),
    (JobPhase.ABORTED, Action.RESTART_JOB, KILL, True, JobPhase.ABORTED, 0),
    (JobPhase.ABORTED, Action.RESUME_JOB, KILL, True, RS, 1),
    (JobPhase.COMPLETING, Action.ABORT_JOB, KILL, True, JobPhase.COMPLETED, 0),
    (JobPhase.TERMINATING, Action.RESUME_JOB, KILL, True, JobPhase.TERMINATED, 0),
    (JobPhase.COMPLETED, Action.RESTART_JOB, KILL, True, JobPhase.COMPLETED, 0),
    (JobPhase.FAILED, Action.RESUME_JOB, KILL, True, JobPhase.FAILED, 0),
    (JobPhase.TERMINATED, Action.RESUME_JOB, KILL, True, JobPhase.TERMINATED, 0),
]


@pytest.mark.parametrize(("phase", "action", "primitive", "soft", "after", "retry"), TABLE)
def test_dispatch_table(
    phase: str, action: Action, primitive: Primitive, soft: bool, after: str, retry: int
) -> None:
    op = lifecycle.dispatch(phase, action)
    assert (op.primitive, op.soft) == (primitive, soft)
    nxt = op.rule(ONE, rules.Seen(phase or P, 0, Counts(), 1))
    assert (nxt.phase, nxt.retry_count) == (after, retry)


TWO = Shape((TaskShape("a", 2, 2, 3), TaskShape("b", 1, 1, 3)), min_available=3, max_retry=3)


@pytest.mark.parametrize(
    ("shape", "counts", "after"),
    [
        pytest.param(TWO, Counts(running=3), R, id="running"),
        pytest.param(TWO, Counts(succeeded=2, running=1), R, id="waits-for-every-pod"),
        pytest.param(TWO, Counts(failed=1, running=2), R, id="failed-pod-alone-never-fails"),
        pytest.param(
            TWO,
            Counts(succeeded=3, tasks={"a": {"Succeeded": 2}, "b": {"Succeeded": 1}}),
            JobPhase.COMPLETED,
            id="all-succeeded",
        ),
        pytest.param(
            TWO,
            Counts(succeeded=2, failed=1, tasks={"a": {"Succeeded": 1, "Failed": 1}, "b": {}}),
            JobPhase.FAILED,
            id="task-below-its-minimum",
        ),
        pytest.param(
            Shape((TaskShape("a", 3, 3, 3),), min_available=2, max_retry=3),
            Counts(succeeded=2, failed=1, tasks={"a": {"Succeeded": 2, "Failed": 1}}),
            JobPhase.COMPLETED,
            id="task-gates-off-below-sum",
        ),
        pytest.param(
            Shape((TaskShape("a", 3, 1, 3),), min_available=1, max_retry=3, min_success=2),
            Counts(succeeded=2, running=1),
            JobPhase.COMPLETED,
            id="min-success-completes-at-once",
        ),
        pytest.param(
            Shape((TaskShape("a", 3, 1, 3),), min_available=1, max_retry=3, min_success=3),
            Counts(succeeded=2, failed=1),
            JobPhase.FAILED,
            id="min-success-missed",
        ),
        pytest.param(TWO, Counts(pending=1, running=2), P, id="back-to-pending"),
        pytest.param(
            Shape((TaskShape("a", 3, 3, 3),), min_available=2, max_retry=3),
            Counts(pending=1, running=2),
            R,
            id="pending-within-slack",
        ),
        pytest.param(Shape((TaskShape("a", 0, 0, 3),), 0, 3), Counts(), R, id="scaled-to-zero"),
    ],
)
def test_running_rule(shape: Shape, counts: Counts, after: str) -> None:
    assert rules.running(shape, rules.Seen(R, 0, counts, shape.min_available)).phase == after


@pytest.mark.parametrize(
    ("retry", "terminating", "after"),
    [(3, 0, JobPhase.FAILED), (2, 0, P), (2, 1, RS), (0, 3, RS)],
)
def test_restarting_rule(retry: int, terminating: int, after: str) -> None:
    seen = rules.Seen(RS, retry, Counts(terminating=terminating), 3)
    assert rules.restarting(TWO, seen).phase == after


# Scenarios through handle ---------------------------------------------------------------------


def job_of(
    make: Any, *tasks: dict[str, Any], status: dict[str, Any] | None = None, **spec: Any
) -> VCJob:
    data = make.job("j", *tasks, **spec)
    if status is not None:
        data["status"] = status
    return make.vcjob(data)


def pod(job: VCJob, task: str, index: int, phase: str = "Pending", placed: bool = True) -> Pod:
    task_spec = next(t for t in jobspec.task_specs(job) if t.name == task)
    out = pods.build_pod(job, task_spec, index)
    out.metadata.uid = f"{out.name}-uid"
    if placed:
        out = kubelet.place(out, NOW)
    if phase in ("Running", "Succeeded", "Failed"):
        out = kubelet.start(out, NOW)
    if phase in ("Succeeded", "Failed"):
        out = kubelet.exit_container(out, 0 if phase == "Succeeded" else 1, NOW)
    return out


def by_name(*items: Pod) -> dict[str, Pod]:
    return {p.name: p for p in items}


def test_first_sync_initialises_and_requests_admission(make: Any) -> None:
    job = job_of(make, make.task("w", 2))
    decision = lifecycle.handle(JobContext(job), SYNC, NOW)
    assert decision.status.phase == P
    assert decision.group is Group.PENDING
    assert decision.create == ()
    assert decision.status.min_available == 2
    assert [c.status for c in decision.status.conditions or []] == [P]


def test_admitted_sync_creates_stamped_pods(make: Any) -> None:
    job = job_of(make, make.task("w", 2), status={"state": {"phase": "Pending"}, "version": 2})
    decision = lifecycle.handle(JobContext(job, group=Group.ADMITTED), SYNC, NOW)
    assert [p.name for p in decision.create] == ["j-w-0", "j-w-1"]
    assert {p.metadata.annotations[pods.JOB_VERSION] for p in decision.create} == {"2"}
    assert decision.status.pending == 2


def test_no_pods_before_admission(make: Any) -> None:
    job = job_of(make, make.task("w", 2), status={"state": {"phase": "Pending"}})
    decision = lifecycle.handle(JobContext(job, group=Group.PENDING), SYNC, NOW)
    assert decision.create == ()


def test_restart_job_kills_every_pod_and_withdraws_admission(make: Any) -> None:
    job = job_of(make, make.task("w", 2), status={"state": {"phase": "Running"}})
    current = by_name(pod(job, "w", 0, "Succeeded"), pod(job, "w", 1, "Failed"))
    ctx = JobContext(job, current, Group.ADMITTED)
    decision = lifecycle.handle(ctx, Request(action=Action.RESTART_JOB), NOW)
    assert sorted(decision.delete) == ["j-w-0", "j-w-1"]
    assert (decision.status.phase, decision.status.retry_count) == (RS, 1)
    assert decision.status.version == 1
    assert decision.group is Group.NONE


def test_last_retry_keeps_finished_pods(make: Any) -> None:
    status = {"state": {"phase": "Running"}, "retryCount": 1}
    job = job_of(make, make.task("w", 3), status=status, maxRetry=2)
    current = by_name(
        pod(job, "w", 0, "Succeeded"), pod(job, "w", 1, "Failed"), pod(job, "w", 2, "Running")
    )
    ctx = JobContext(job, current, Group.ADMITTED)
    decision = lifecycle.handle(ctx, Request(action=Action.RESTART_JOB), NOW)
    assert decision.delete == ("j-w-2",)
    # R1: the kept pods are counted (Volcano reports 0 for them, B1).
    assert (decision.status.succeeded, decision.status.failed) == (1, 1)
    assert decision.status.terminating == 1


def test_restart_task_keeps_admission_and_version(make: Any) -> None:
    job = job_of(make, make.task("a", 1), make.task("b", 2), status={"state": {"phase": "Running"}})
    current = by_name(
        pod(job, "a", 0, "Running"), pod(job, "b", 0, "Running"), pod(job, "b", 1, "Failed")
    )
    ctx = JobContext(job, current, Group.ADMITTED)
    request = Request(Event.POD_FAILED, action=Action.RESTART_TASK, task="b", pod="j-b-1")
    decision = lifecycle.handle(ctx, request, NOW)
    assert sorted(decision.delete) == ["j-b-0", "j-b-1"]
    assert decision.group is Group.ADMITTED
    assert (decision.status.version or 0, decision.status.retry_count) == (0, 1)
    assert decision.status.running == 1  # R1: the untouched ps pod is still counted


def test_restart_pod_of_a_gone_pod_kills_nothing_but_counts(make: Any) -> None:
    job = job_of(make, make.task("w", 2), status={"state": {"phase": "Running"}})
    ctx = JobContext(job, by_name(pod(job, "w", 0, "Running")), Group.ADMITTED)
    request = Request(Event.POD_EVICTED, action=Action.RESTART_POD, task="w", pod="j-w-1")
    decision = lifecycle.handle(ctx, request, NOW)
    assert decision.delete == ()
    assert (decision.status.phase, decision.status.retry_count) == (RS, 1)


def test_kept_pods_do_not_make_an_unadmitted_job_run(make: Any) -> None:
    """R1 changes the report only: after a resume the rules still see Volcano's zeros."""
    status = {"state": {"phase": "Pending"}, "succeeded": 1, "failed": 1}
    job = job_of(make, make.task("w", 2), status=status)
    decision = lifecycle.handle(JobContext(job, group=Group.PENDING), SYNC, NOW)
    assert decision.status.phase == P


def test_out_of_sync_and_surplus_pods_are_deleted(make: Any) -> None:
    job = job_of(make, make.task("w", 1), status={"state": {"phase": "Running"}})
    marked = pods.marked_out_of_sync(pod(job, "w", 0, "Running"))
    surplus = pod(job, "w", 0, "Running").model_copy(deep=True)
    surplus.metadata.name = "j-w-5"
    surplus.metadata.labels[pods.TASK_INDEX] = "5"
    decision = lifecycle.handle(
        JobContext(job, by_name(marked, surplus), Group.ADMITTED), SYNC, NOW
    )
    assert sorted(decision.delete) == ["j-w-0", "j-w-5"]
    assert decision.status.terminating == 1


def test_depends_on_holds_pods_back_until_ready(make: Any) -> None:
    tasks = (make.task("a", 1), make.task("b", 2, dependsOn={"name": ["a"]}))
    job = job_of(make, *tasks, status={"state": {"phase": "Pending"}}, minAvailable=1)
    waiting = by_name(pod(job, "a", 0, "Pending"))
    first = lifecycle.handle(JobContext(job, waiting, Group.ADMITTED), SYNC, NOW)
    assert first.create == ()
    running = by_name(pod(job, "a", 0, "Running"))
    second = lifecycle.handle(JobContext(job, running, Group.ADMITTED), SYNC, NOW)
    assert [p.name for p in second.create] == ["j-b-0", "j-b-1"]


def test_a_policy_with_timeout_only_schedules(make: Any) -> None:
    policies = [{"event": "PodPending", "timeout": "5m", "action": "AbortJob"}]
    job = job_of(make, make.task("w", 1), status={"state": {"phase": "Pending"}}, policies=policies)
    request = Request(Event.POD_PENDING, task="w", pod="j-w-0", pod_uid="u")
    decision = lifecycle.handle(JobContext(job, group=Group.ADMITTED), request, NOW)
    assert decision.status == job.status
    assert decision.delayed["j-w-0"].action == Action.ABORT_JOB
    assert [e.message for e in decision.events] == ["Execute action AbortJob after 5m0s"]


def test_commands_are_recorded(make: Any) -> None:
    job = job_of(make, make.task("w", 1), status={"state": {"phase": "Running"}})
    request = Request(Event.COMMAND_ISSUED, action=Action.ABORT_JOB)
    decision = lifecycle.handle(JobContext(job, group=Group.ADMITTED), request, NOW)
    assert [e.reason for e in decision.events] == ["CommandIssued", "ExecuteAction"]
    assert decision.status.phase == JobPhase.ABORTING  # Aborted on the next request


def test_inputs_are_not_modified(make: Any) -> None:
    job = job_of(make, make.task("w", 2), status={"state": {"phase": "Running"}})
    current = by_name(pod(job, "w", 0, "Running"), pod(job, "w", 1, "Running"))
    before = (job.to_dict(), {n: p.to_dict() for n, p in current.items()})
    lifecycle.handle(
        JobContext(job, current, Group.ADMITTED), Request(action=Action.RESTART_JOB), NOW
    )
    assert (job.to_dict(), {n: p.to_dict() for n, p in current.items()}) == before


PHASES = ["", *JobPhase]


@pytest.mark.parametrize("action", [Action.ABORT_JOB, Action.TERMINATE_JOB, Action.RESUME_JOB])
@pytest.mark.parametrize("phase", PHASES)
def test_a_command_takes_effect_where_the_dispatch_table_does_more_than_sync(
    phase: str, action: Action
) -> None:
    """`command_takes_effect` (what the CLI refuses to send) agrees with §6.1: where it says
    no, the command is handled as a plain SyncJob would be, or lost while Restarting (B4)."""
    seen = rules.Seen(phase or P, 0, Counts(), 1)
    op, sync = lifecycle.dispatch(phase, action), lifecycle.dispatch(phase, Action.SYNC_JOB)
    acts = (op.primitive, op.soft, op.rule(ONE, seen)) != (
        sync.primitive,
        sync.soft,
        sync.rule(ONE, seen),
    )
    if phase == RS:
        assert not lifecycle.command_takes_effect(phase, action)
    else:
        assert lifecycle.command_takes_effect(phase, action) == acts
