"""Which action a request asks for (reference §4.3) and the bookkeeping of delayed actions
(§4.4).

Resolution, first rule that applies: the request's own action (Command, fired delay); an
internal event → SyncJob; another job's UID or an older job version → SyncJob; the request
task's policies in order, then the job's (first match wins, event and exit-code policies
interleaved by list order; `*` matches every non-internal event, TaskCompleted included —
Volcano's B3, kept on purpose; PodPending matches only a policy with a timeout); no match →
SyncJob. There is no default policy. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from vcflow.api.clock import parse_go_duration
from vcflow.api.phases import USER_ACTIONS, Action, Event
from vcflow.api.vcjob import LifecyclePolicy, VCJob
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.reconcile.vcjob.model import DelayedAction, Request

INTERNAL_EVENTS = frozenset({Event.OUT_OF_SYNC, Event.COMMAND_ISSUED, Event.POD_RUNNING})
#: Actions on the whole job; the others act on the request's task, pod or partition.
JOB_ACTIONS = frozenset(
    {
        Action.ABORT_JOB,
        Action.RESTART_JOB,
        Action.TERMINATE_JOB,
        Action.COMPLETE_JOB,
        Action.RESUME_JOB,
    }
)
#: Pod events that cancel a delayed action born from the same pod's PodPending.
_ENDS_PENDING = frozenset({Event.POD_RUNNING, Event.POD_FAILED, Event.POD_EVICTED})
#: Events whose delayed action a later PodRunning of the same pod name cancels.
_ENDS_RUNNING = frozenset({Event.POD_FAILED, Event.POD_EVICTED})


@dataclass(frozen=True)
class Resolved:
    """The action to run and, when the matched policy has one, its delay in seconds."""

    action: Action
    timeout: float | None = None


SYNC = Resolved(Action.SYNC_JOB)


def resolve(job: VCJob, request: Request) -> Resolved:
    if request.action is not None:
        return Resolved(request.action)
    if request.event in INTERNAL_EVENTS:
        return SYNC
    if request.job_uid and job.metadata.uid and request.job_uid != job.metadata.uid:
        return SYNC
    version = (job.status.version if job.status else None) or 0
    if request.job_version < version:
        return SYNC
    for policies in _lists(job, request.task):
        for policy in policies:
            if _matches(policy, request):
                return _resolved(policy)
    return SYNC


def _lists(job: VCJob, task_name: str) -> list[Sequence[LifecyclePolicy]]:
    lists: list[Sequence[LifecyclePolicy]] = []
    if task_name:
        task = next((t for t in jobspec.task_specs(job) if t.name == task_name), None)
        if task is not None:
            lists.append(task.policies or [])
    lists.append((job.spec.policies if job.spec else None) or [])
    return lists


def policy_events(policy: LifecyclePolicy) -> list[str]:
    return ([policy.event] if policy.event else []) + list(policy.events or [])


def _matches(policy: LifecyclePolicy, request: Request) -> bool:
    events = policy_events(policy)
    if events and (request.event in events or Event.ANY in events):
        return request.event != Event.POD_PENDING or _timeout(policy) is not None
    return policy.exit_code is not None and policy.exit_code == request.exit_code


def _resolved(policy: LifecyclePolicy) -> Resolved:
    if policy.action not in USER_ACTIONS:
        return SYNC  # admission rejects these; never guess an action
    return Resolved(Action(policy.action), _timeout(policy))


def _timeout(policy: LifecyclePolicy) -> float | None:
    if not policy.timeout:
        return None
    return parse_go_duration(policy.timeout)


# Delayed actions (§4.4) -----------------------------------------------------------------------

Delayed = Mapping[str, DelayedAction]


def scheduled(delayed: Delayed, request: Request, resolved: Resolved, now: datetime) -> Delayed:
    """`delayed` with the request's action due after its timeout, keyed by the pod name; an
    identical action already waiting for that pod keeps its due time."""
    key = request.pod
    current = delayed.get(key)
    if current is not None and current.action == resolved.action:
        return delayed
    entry = DelayedAction(
        action=resolved.action,
        event=request.event,
        due=now + timedelta(seconds=resolved.timeout or 0.0),
        task=request.task,
        pod=request.pod,
        pod_uid=request.pod_uid,
    )
    return {**delayed, key: entry}


def cancelled_by_event(delayed: Delayed, request: Request) -> Delayed:
    """A PodPending-born action ends when the same pod (same UID) runs, fails or is evicted;
    a PodFailed/PodEvicted-born one when a pod of that name runs."""
    entry = delayed.get(request.pod) if request.pod else None
    if entry is None:
        return delayed
    if entry.event == Event.POD_PENDING:
        gone = request.event in _ENDS_PENDING and entry.pod_uid == request.pod_uid
    else:
        gone = request.event == Event.POD_RUNNING and entry.event in _ENDS_RUNNING
    return {k: v for k, v in delayed.items() if k != request.pod} if gone else delayed


def cancelled_by_action(delayed: Delayed, action: Action, request: Request) -> Delayed:
    """Executing an action cancels the waiting ones of the same scope: a job-level action all
    job-level ones; RestartTask those of its task; RestartPod those of its pod."""
    return {k: v for k, v in delayed.items() if not _same_scope(v, action, request)}


def _same_scope(entry: DelayedAction, action: Action, request: Request) -> bool:
    if action in JOB_ACTIONS:
        return entry.action in JOB_ACTIONS
    if action == Action.RESTART_TASK:
        return entry.action == Action.RESTART_TASK and entry.task == request.task
    if action == Action.RESTART_POD:
        return entry.action == Action.RESTART_POD and entry.pod == request.pod
    return False
