"""The event sources of reference §4.2: which `Request` an observation becomes.

The shell calls one of these for every change it sees (job created or updated, pod created,
updated or deleted, a Command, a delayed action due, a PodGroup admitted) and queues the
request for the job; requests of one job are handled one at a time, in arrival order.
Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from vcflow.api.clock import parse_rfc3339
from vcflow.api.phases import Action, Event, PodPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import kubelet, pods, podset
from vcflow.reconcile.vcjob.model import DelayedAction, Request
from vcflow.reconcile.vcjob.spec import TaskShape, shape


def job_created(job: VCJob) -> Request:
    """A plain sync; for a job with no phase yet, as of its creation (a runtime that sees it
    late — it was created while none ran — still starts its history then)."""
    return Request(Event.OUT_OF_SYNC, job_uid=job.metadata.uid, at=_created_at(job))


def _created_at(job: VCJob) -> datetime | None:
    stamp = job.metadata.creation_timestamp
    if job.phase or not stamp:
        return None
    try:
        return parse_rfc3339(stamp)
    except ValueError:
        return None


def job_updated(old: VCJob, new: VCJob) -> Request | None:
    """A sync only when the spec or the phase changed: the controller's own counter writes
    do not requeue the job."""
    spec_changed = (old.spec.to_dict() if old.spec else None) != (
        new.spec.to_dict() if new.spec else None
    )
    if spec_changed or old.phase != new.phase:
        return Request(Event.OUT_OF_SYNC, job_uid=new.metadata.uid)
    return None


def group_changed() -> Request:
    """The PodGroup was admitted (or the scheduler's verdict on it changed): a plain sync."""
    return Request(Event.OUT_OF_SYNC)


def command(action: Action, job: VCJob) -> Request:
    """A bus Command for the job (§12): its action bypasses the policies."""
    return Request(Event.COMMAND_ISSUED, action=action, job_uid=job.metadata.uid)


def delayed_due(delayed: DelayedAction) -> Request:
    """A delayed action whose timeout expired (§4.4); the shell drops it from its table."""
    return Request(
        delayed.event,
        action=delayed.action,
        task=delayed.task,
        pod=delayed.pod,
        pod_uid=delayed.pod_uid,
    )


def pod_created(pod: Pod) -> Request:
    event = Event.OUT_OF_SYNC if pods.is_out_of_sync(pod) else Event.POD_PENDING
    return _about(pod, event)


def pod_deleted(pod: Pod) -> Request:
    """Gone: PodEvicted, unless the controller itself deleted it (out-of-sync mark)."""
    event = Event.OUT_OF_SYNC if pods.is_out_of_sync(pod) else Event.POD_EVICTED
    return _about(pod, event)


def pod_updated(
    job: VCJob, old: Pod, new: Pod, siblings: Mapping[str, Pod] | Iterable[Pod]
) -> Request:
    """A pod update; `siblings` are the job's pods as they are now (`new` included): the
    shell's `podset.PodSet`, or any pods (indexed then)."""
    if pods.is_out_of_sync(new):
        return _about(new, Event.OUT_OF_SYNC)
    if new.deleting and not old.deleting:
        return pod_deleted(new)
    task = shape(job).task(pods.task_of(new))
    phase, before = new.phase, old.phase
    if phase == PodPhase.FAILED and before != PodPhase.FAILED:
        return _about(new, Event.POD_FAILED, kubelet.exit_code(new))
    if phase == PodPhase.SUCCEEDED and before != PodPhase.SUCCEEDED:
        done = task is not None and _task_completed(task, podset.of(siblings))
        return _about(new, Event.TASK_COMPLETED if done else Event.OUT_OF_SYNC)
    if phase == PodPhase.RUNNING and before != PodPhase.RUNNING:
        return _about(new, Event.POD_RUNNING)
    if phase == PodPhase.PENDING and before != PodPhase.PENDING:
        return _about(new, Event.POD_PENDING)
    if phase in kubelet.ALIVE and task is not None and _task_failed(task, podset.of(siblings)):
        return _about(new, Event.TASK_FAILED)
    return _about(new, Event.OUT_OF_SYNC)


def _task_completed(task: TaskShape, mates: podset.PodSet) -> bool:
    """Every replica of the task Succeeded (§4.2)."""
    return mates.succeeded(task.name) >= task.replicas


def _task_failed(task: TaskShape, mates: podset.PodSet) -> bool:
    """In-place restarts summed over the task's Pending/Running pods reach its maxRetry."""
    if task.max_retry < 0 or task.replicas == 0:
        return False
    return mates.alive_restarts(task.name) >= task.max_retry


def _about(pod: Pod, event: Event, exit_code: int = 0) -> Request:
    owner = pod.metadata.controller_ref()
    return Request(
        event,
        task=pods.task_of(pod),
        pod=pod.name,
        pod_uid=pod.metadata.uid,
        exit_code=exit_code,
        job_version=pods.job_version(pod),
        job_uid=owner.uid if owner else "",
        at=ended_at(pod),
    )


def ended_at(pod: Pod) -> datetime | None:
    """When an ended pod's last container ended (by its status), None for a pod that has
    not ended or says nothing."""
    status = pod.status
    if status is None or pod.phase not in (PodPhase.SUCCEEDED, PodPhase.FAILED):
        return None
    stamps = [
        c.state.terminated.finished_at
        for c in [*(status.container_statuses or []), *(status.init_container_statuses or [])]
        if c.state is not None and c.state.terminated is not None and c.state.terminated.finished_at
    ]
    found = []
    for stamp in stamps:
        try:
            found.append(parse_rfc3339(stamp))
        except ValueError:
            continue
    return max(found, default=None)
