"""The job controller's decision for one request (reference §4–§7): resolve the action
(`policy`), dispatch on the job's phase (§6.1) to one of the three primitives of §5 —
SyncJob, KillJob, KillTarget — and return what to create, delete and write.

`handle` is the whole contract; see the package docstring for how a shell drives it. Pure:
no I/O, no clock (`now` is an argument), inputs are never modified.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum

from vcflow.api.clock import go_duration
from vcflow.api.phases import Action, Event, JobPhase, PodPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJobStatus
from vcflow.reconcile.vcjob import pods, podset, policy, rules
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.reconcile.vcjob import status as jobstatus
from vcflow.reconcile.vcjob.model import Decision, Group, JobContext, JobEvent, Request
from vcflow.reconcile.vcjob.spec import Shape
from vcflow.reconcile.vcjob.status import Change, Counts, Tally

RESTART_TARGETS = frozenset({Action.RESTART_TASK, Action.RESTART_POD, Action.RESTART_PARTITION})
#: Phases whose every request is a KillJob(Soft) (§6.1 rows Aborting … Terminated).
KILLING = frozenset(
    {
        JobPhase.ABORTING,
        JobPhase.ABORTED,
        JobPhase.COMPLETING,
        JobPhase.COMPLETED,
        JobPhase.TERMINATING,
        JobPhase.TERMINATED,
        JobPhase.FAILED,
    }
)
_FINISHING = {
    JobPhase.ABORTING: JobPhase.ABORTED,
    JobPhase.COMPLETING: JobPhase.COMPLETED,
    JobPhase.TERMINATING: JobPhase.TERMINATED,
}
_STOPS = {
    Action.ABORT_JOB: JobPhase.ABORTING,
    Action.TERMINATE_JOB: JobPhase.TERMINATING,
    Action.COMPLETE_JOB: JobPhase.COMPLETING,
}
_STOPPABLE = frozenset({"", JobPhase.PENDING, JobPhase.RUNNING})
#: The phases in which a user's command (`vcctl job suspend|resume`, TerminateJob) does what
#: it asks (§6.1): AbortJob and TerminateJob stop a new, Pending or Running job; ResumeJob
#: restarts a suspended one. In every other phase the controller handles it as that phase's
#: own kill or sync, and drops it while Restarting (B4): the command changes nothing.
COMMAND_PHASES: Mapping[Action, frozenset[str]] = {
    Action.ABORT_JOB: _STOPPABLE,
    Action.TERMINATE_JOB: _STOPPABLE,
    Action.RESUME_JOB: frozenset({JobPhase.ABORTING, JobPhase.ABORTED}),
}


class Primitive(Enum):
    SYNC = "SyncJob"
    KILL_JOB = "KillJob"
    KILL_TARGET = "KillTarget"


@dataclass(frozen=True)
class Operation:
    """One cell of the dispatch table: a primitive, its retain set and its status function."""

    primitive: Primitive
    rule: rules.Rule
    soft: bool = False  # KillJob keeps Succeeded/Failed pods


def handle(ctx: JobContext, request: Request, now: datetime) -> Decision:
    """Handle one request for one job: what Volcano's job controller would decide."""
    delayed = policy.cancelled_by_event(ctx.delayed, request)
    resolved = policy.resolve(ctx.job, request)
    events = _command_events(request)
    if resolved.timeout is not None:
        delayed = policy.scheduled(delayed, request, resolved, now)
        after = go_duration(resolved.timeout)
        note = JobEvent("ExecuteAction", f"Execute action {resolved.action} after {after}")
        return _unchanged(ctx, delayed, (*events, note))
    if resolved.action != Action.SYNC_JOB:
        delayed = policy.cancelled_by_action(delayed, resolved.action, request)
        events += (JobEvent("ExecuteAction", f"Start to execute action {resolved.action} "),)
    operation = dispatch(ctx.job.phase, resolved.action)
    if delayed is not ctx.delayed:  # (`replace` costs more than the rest of a plain sync)
        ctx = replace(ctx, delayed=delayed)
    decision = _run(operation, ctx, request, resolved.action, now)
    return replace(decision, events=events + decision.events) if events else decision


def command_takes_effect(phase: str, action: Action) -> bool:
    """Does a user's `action` sent to a job in `phase` change it (COMMAND_PHASES)?"""
    return phase in COMMAND_PHASES.get(action, frozenset())


def dispatch(phase: str, action: Action) -> Operation:
    """The table of §6.1: (phase, action) → primitive, retain set, status function."""
    if phase in ("", JobPhase.PENDING, JobPhase.RUNNING):
        return _active(phase, action)
    if phase == JobPhase.RESTARTING:
        if action == Action.SYNC_JOB:
            return Operation(Primitive.SYNC, rules.restarting)
        if action in RESTART_TARGETS:
            return Operation(Primitive.KILL_TARGET, rules.restarting)
        # B4: RestartJob, AbortJob, TerminateJob, CompleteJob, ResumeJob only re-kill.
        return Operation(Primitive.KILL_JOB, rules.restarting)
    if phase in (JobPhase.ABORTING, JobPhase.ABORTED) and action == Action.RESUME_JOB:
        return Operation(Primitive.KILL_JOB, rules.to(JobPhase.RESTARTING, retry=True), soft=True)
    finishing = _FINISHING.get(JobPhase(phase)) if phase in _FINISHING else None
    rule = rules.ends_in(finishing) if finishing is not None else rules.keep
    return Operation(Primitive.KILL_JOB, rule, soft=True)


def _active(phase: str, action: Action) -> Operation:
    if action == Action.RESTART_JOB:
        return Operation(Primitive.KILL_JOB, rules.to(JobPhase.RESTARTING, retry=True))
    if action in RESTART_TARGETS:
        return Operation(Primitive.KILL_TARGET, rules.to(JobPhase.RESTARTING, retry=True))
    if action in _STOPS:
        return Operation(Primitive.KILL_JOB, rules.to(_STOPS[action]), soft=True)
    return Operation(Primitive.SYNC, rules.running if phase == JobPhase.RUNNING else rules.pending)


def _run(
    op: Operation, ctx: JobContext, request: Request, action: Action, now: datetime
) -> Decision:
    if op.primitive is Primitive.SYNC:
        return sync_job(ctx, op.rule, now)
    if op.primitive is Primitive.KILL_JOB:
        return kill_job(ctx, op.rule, now, soft=op.soft)
    return kill_target(ctx, op.rule, _targets(ctx, request, action), now)


# SyncJob (§5.1) -------------------------------------------------------------------------------


def sync_job(ctx: JobContext, rule: rules.Rule, now: datetime) -> Decision:
    """Initialise or update the job, request admission, and — only once admitted — create the
    missing pods, delete surplus ones and recount."""
    job, shape = ctx.job, jobspec.shape(ctx.job)
    old = _initiated(job.status or VCJobStatus(), shape, now)
    initiating = old.phase == JobPhase.PENDING
    group = ctx.group if ctx.group is not Group.NONE else Group.PENDING
    controlled = _with_plugins(old, jobspec.plugins(job)) if initiating else None
    if group is not Group.ADMITTED:
        counts = jobstatus.volcano_view(jobstatus.stored(old))
        nxt = rule(shape, _seen(old, counts, old.min_available or 0))
        change = Change(
            nxt.phase,
            nxt.retry_count,
            old.version or 0,
            min_available=shape.min_available if initiating else None,
            controlled=controlled,
            unschedulable=ctx.unschedulable or ctx.waiting,
        )
        new = jobstatus.written(old, change, now)
        return Decision(new, group, ctx.delayed, events=_pending_events(ctx, old))
    plan = _survey(ctx, shape)
    nxt = rule(shape, _seen(old, plan.counts, shape.min_available))
    change = Change(
        nxt.phase,
        nxt.retry_count,
        old.version or 0,
        counts=plan.counts,
        min_available=shape.min_available,
        controlled=controlled,
        unschedulable="",
    )
    new = jobstatus.written(old, change, now)
    return Decision(new, group, ctx.delayed, create=plan.create, delete=plan.delete)


def _initiated(old: VCJobStatus, shape: Shape, now: datetime) -> VCJobStatus:
    """SyncJob step 2 for a new job: phase Pending, its condition, `minAvailable`. (Volcano
    writes this before the rest of the sync; here it is folded into the one status.)"""
    if old.phase:
        return old
    first = Change(
        JobPhase.PENDING,
        old.retry_count or 0,
        old.version or 0,
        min_available=shape.min_available,
    )
    return jobstatus.written(old, first, now)


def _seen(old: VCJobStatus, counts: Counts, min_available: int) -> rules.Seen:
    return rules.Seen(old.phase, old.retry_count or 0, counts, min_available)


@dataclass(frozen=True)
class _Plan:
    create: tuple[Pod, ...]
    delete: tuple[str, ...]
    counts: Counts


def _survey(ctx: JobContext, shape: Shape) -> _Plan:
    """SyncJob step 4: walk every task index; create what is missing (unless `dependsOn`
    holds the task back, or the shell still creates pods of an earlier decision), delete
    out-of-sync and surplus pods, count the rest. Costs the pods missing or to delete,
    not the job's pods (`podset`)."""
    tally, create = Tally(), list[Pod]()
    found = podset.of(ctx.pods)
    layout = found.layout(ctx.job.name, tuple((t.name, t.replicas) for t in shape.tasks))
    for task in jobspec.task_specs(ctx.job):
        task_name = task.name or ""
        task_shape = shape.task(task_name)
        blocked = task_shape is not None and not _dependencies_ready(layout, shape, task_shape)
        for phase, count in layout.phases(task_name).items():
            tally.pod(task_name, phase, count)
        if blocked or not layout.missing(task_name):
            continue
        tally.pod(task_name, PodPhase.PENDING, layout.missing(task_name))
        if not ctx.creating:
            create += (pods.build_pod(ctx.job, task, k) for k in layout.absent(task_name))
    tally.terminating(layout.terminating)
    return _Plan(tuple(create), tuple(layout.surplus()), tally.counts())


def _dependencies_ready(layout: podset.Layout, shape: Shape, task: jobspec.TaskShape) -> bool:
    """`dependsOn` (§8.3): a dependency is ready when at least its minAvailable pods are
    Running with every container Ready, or Succeeded; `any` needs one, otherwise all."""
    if not task.depends_on:
        return True
    ready = [_task_ready(layout, shape.task(name)) for name in task.depends_on]
    return any(ready) if task.depends_any else all(ready)


def _task_ready(layout: podset.Layout, dep: jobspec.TaskShape | None) -> bool:
    return dep is None or layout.up(dep.name) >= dep.min_available


def _with_plugins(old: VCJobStatus, plugins: Mapping[str, object]) -> dict[str, str]:
    """`controlledResources` after plugin OnJobAdd: a `plugin-<name>` guard per plugin."""
    out = dict(old.controlled_resources or {})
    out.update({f"plugin-{name}": name for name in plugins})
    return out


def _without_plugins(old: VCJobStatus) -> dict[str, str]:
    """After OnJobDelete (every kill): the plugin guards are gone."""
    kept = (old.controlled_resources or {}).items()
    return {k: v for k, v in kept if not k.startswith("plugin-")}


def _pending_events(ctx: JobContext, old: VCJobStatus) -> tuple[JobEvent, ...]:
    """Warning PodGroupPending when the scheduler's unschedulable verdict is newly reported."""
    last = old.conditions[-1] if old.conditions else None
    said = last is not None and (last.model_extra or {}).get("message") == ctx.unschedulable
    if not ctx.unschedulable or said:
        return ()
    job = ctx.job
    text = f"PodGroup {job.namespace}:{job.name} unschedulable, reason: {ctx.unschedulable}"
    return (JobEvent("PodGroupPending", text, "Warning"),)


# KillJob (§5.2) and KillTarget (§5.3) -----------------------------------------------------


def kill_job(ctx: JobContext, rule: rules.Rule, now: datetime, *, soft: bool) -> Decision:
    """Delete the job's pods (keeping Succeeded/Failed ones when `soft` or on the last retry),
    bump `version`, and withdraw the admission."""
    job, shape = ctx.job, jobspec.shape(ctx.job)
    old = job.status or VCJobStatus()
    retry = old.retry_count or 0
    soft = soft or retry >= shape.max_retry - 1  # the last-retry rule
    found = podset.of(ctx.pods)  # (pods being deleted already are no victims)
    victims = found.killable() if soft else found.live()
    return _kill(ctx, shape, rule, victims, now, bump=True)


def kill_target(ctx: JobContext, rule: rules.Rule, victims: list[Pod], now: datetime) -> Decision:
    """Delete the victims (a task's pods, one pod, or a partition); the admission and
    `version` stay."""
    return _kill(ctx, jobspec.shape(ctx.job), rule, victims, now, bump=False)


def _targets(ctx: JobContext, request: Request, action: Action) -> list[Pod]:
    """The victims of RestartTask (every pod of the request's task, any phase), RestartPod
    (the request's pod, if it still exists) or RestartPartition (its partition)."""
    if action == Action.RESTART_TASK:
        return [p for p in ctx.pods.values() if pods.task_of(p) == request.task]
    pod = ctx.pods.get(request.pod)
    if pod is None:
        return []
    if action == Action.RESTART_POD:
        return [pod]
    part = pods.partition_of(pod)
    same = (p for p in ctx.pods.values() if pods.task_of(p) == request.task)
    return [p for p in same if pods.partition_of(p) == part]


def _kill(
    ctx: JobContext,
    shape: Shape,
    rule: rules.Rule,
    victims: list[Pod],
    now: datetime,
    *,
    bump: bool,
) -> Decision:
    old = ctx.job.status or VCJobStatus()
    found = podset.of(ctx.pods)
    doomed = [p for p in victims if not p.deleting and p.name in found]
    tally = Tally()
    for task, phase, count in found.live_counts():
        tally.pod(task, phase, count)  # R1: kept pods are counted
    for pod in doomed:
        tally.pod(pods.task_of(pod), pod.phase, -1)
    tally.terminating(found.deleting + len(doomed))
    delete = found.ordered({p.name for p in doomed})
    counts = tally.counts()
    nxt = rule(shape, _seen(old, jobstatus.volcano_view(counts), old.min_available or 0))
    change = Change(
        nxt.phase,
        nxt.retry_count,
        (old.version or 0) + int(bump),
        counts=counts,
        controlled=_without_plugins(old),
        unschedulable="",
    )
    new = jobstatus.written(old, change, now)
    group = Group.NONE if bump else ctx.group
    return Decision(new, group, ctx.delayed, delete=tuple(delete))


def _unchanged(ctx: JobContext, delayed: policy.Delayed, events: tuple[JobEvent, ...]) -> Decision:
    status = ctx.job.status or VCJobStatus()
    return Decision(status, ctx.group, delayed, events=events)


def _command_events(request: Request) -> tuple[JobEvent, ...]:
    if request.event != Event.COMMAND_ISSUED or request.action is None:
        return ()
    text = (
        f"Start to execute command {request.action}, and clean it up to make sure executed "
        "not more than once."
    )
    return (JobEvent("CommandIssued", text),)
