"""The store writes of a flow's retries and deadlines (docs/flow-features.md §1, §4), for
`FlowController._apply`: a failed attempt's vcjob deleted, the next attempt held back while
the last one's pods are still going (they have the same names), a vcjob past its entry's
deadline annotated and sent a `TerminateJob` — in one transaction, so a controller that
restarts sees both or neither. And the Warning Event of each failed attempt of an entry that
has retries (`attempt_failed`, from `FlowController._handle_job`), so `kubectl describe jf`
shows every failure, not only the last one's outcome.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from vcflow.api import clock, names
from vcflow.api.command import command_for
from vcflow.api.errors import AlreadyExists, NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FINISHED_JOB_PHASES, Action, JobPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.controller.events import WARNING, Recorder
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import jobs as jobbuild
from vcflow.reconcile import outputs, retry
from vcflow.reconcile.vcjob import pods as podnames
from vcflow.store.base import Store

#: seconds between two looks at whether the last attempt's pods are gone
POD_WAIT = 0.1
PODS_REMAIN = "waiting for the pods of the last attempt to be removed"
#: the Warning Event's reason for an attempt of a retried entry that failed
ATTEMPT_FAILED = "AttemptFailed"
_FAILED = frozenset({JobPhase.FAILED, JobPhase.TERMINATED})


def pods_remain(store: Store, job: VCJob) -> bool:
    """A retry's vcjob whose name still has pods (of the attempt before, being removed)."""
    if retry.attempt_of(job.metadata.annotations) < 2:
        return False
    return bool(store.list(Pod, job.namespace, {podnames.JOB_NAME: job.name}))


def read_outputs(store: Store, namespace: str, name: str) -> dict[str, Any] | outputs.Failure:
    """The outputs the pods of a completed vcjob wrote (docs/flow-features.md section 12):
    read through the API, on a cluster and locally alike. A vcjob gone has none left."""
    pods = store.list(Pod, namespace, {podnames.JOB_NAME: name})
    if not any(_has_message(pod) for pod in pods):
        return {}  # (most jobs hand nothing on: their vcjob is not read)
    try:
        job = store.get(VCJob, namespace, name)
    except NotFound:
        return {}
    return outputs.collect(job, pods)


def _has_message(pod: Pod) -> bool:
    status = pod.status
    for container in (status.container_statuses if status else None) or []:
        state = container.state
        if state is not None and state.terminated is not None and state.terminated.message:
            return True
    return False


def delete_job(store: Store, index: reconcile.FlowIndex, namespace: str, name: str) -> str | None:
    """Delete a vcjob of the flow of `index` (its pods go with it); its last phase (None if
    it was gone already): the DELETE answer's, or, when the answer has none — kube-apiserver
    answers a custom resource's DELETE with a Status — the phase the index last saw of the
    vcjob of that uid, so a job that had ended keeps its outcome (row 16)."""
    try:
        last = store.delete(VCJob, namespace, name, force=True)
    except NotFound:
        return None
    return last.phase or index.seen_phase(name, last.metadata.uid or "")


def terminate_for_deadline(
    store: Store, recorder: Recorder, flow: JobFlow, name: str, now: datetime
) -> None:
    """Mark the vcjob `vcflow.io/deadline-exceeded` and send it a TerminateJob (as `vcflow
    terminate vcjob`), unless it has finished or is not this flow's."""
    try:
        job = store.get(VCJob, flow.namespace, name)
    except NotFound:
        return
    if not jobbuild.is_owned_by(job, flow) or job.phase in FINISHED_JOB_PHASES:
        return
    if reconcile.DEADLINE_ANNOTATION in job.metadata.annotations:
        return
    marked = job.clone()
    marked.metadata.annotations[reconcile.DEADLINE_ANNOTATION] = clock.rfc3339(now)
    store.update(marked)
    with contextlib.suppress(AlreadyExists):
        store.create(command_for(job, Action.TERMINATE_JOB, reason=reconcile.DEADLINE_EXCEEDED))
    seconds = next(
        (
            e.active_deadline_seconds
            for e in flow.flows
            if names.job_name(flow.name, e.name) == name
        ),
        None,
    )
    recorder.record(
        flow,
        WARNING,
        reconcile.DEADLINE_EXCEEDED,
        f"vcjob {name} ran past its activeDeadlineSeconds ({seconds}s): terminating it",
    )


def tell_conflicts(recorder: Recorder, index: reconcile.FlowIndex) -> None:
    """A Warning Event `NameConflict` for each entry that began waiting because a vcjob that
    is not this flow's holds its name (row 12): which vcjob, and how to free the name. Once:
    not again while it waits, nor after a restart when the flow's status already said so."""
    flow = index.flow
    said = (flow.status.conditions if flow.status else None) or {}
    where = "" if flow.namespace == names.DEFAULT_NAMESPACE else f" -n {flow.namespace}"
    for job, message in index.take_conflicts():
        cond = said.get(job)
        if cond is not None and (cond.reason, cond.message) == (reconcile.NAME_CONFLICT, message):
            continue
        recorder.record(
            flow,
            WARNING,
            reconcile.NAME_CONFLICT,
            f"{message}: the flow waits to create it until that vcjob is deleted "
            f"(vcflow delete vcjob {job}{where}, or kubectl delete vcjob {job}{where})",
        )


def phase_seen(index: reconcile.FlowIndex, job_name: str) -> str:
    """The phase the index last saw of the entry's vcjob ("" when none): what
    `attempt_failed` compares the vcjob's new phase with."""
    entry = index.by_job.get(job_name)
    return (entry.phase or "") if entry is not None and entry.observed else ""


def attempt_failed(recorder: Recorder, index: reconcile.FlowIndex, job: VCJob, before: str) -> None:
    """A Warning Event `AttemptFailed` when `job` — this flow's, seen in phase `before`
    until now — has just failed and its entry has retries; its message names the attempt,
    the job's reason and the retries left."""
    entry = index.by_job.get(job.name)
    if entry is None or job.phase not in _FAILED or before == job.phase:
        return
    if entry.policy.retries <= 0 or before in _FAILED:
        return
    attempt = retry.attempt_of(job.metadata.annotations)
    state = job.status.state if job.status else None
    why = ""
    if state is not None and state.reason:
        why = f" ({state.reason}: {state.message})" if state.message else f" ({state.reason})"
    left = max(0, entry.policy.retries - (attempt - entry.first_attempt))
    recorder.record(
        index.flow,
        WARNING,
        ATTEMPT_FAILED,
        f"vcjob {job.name} attempt {attempt} {job.phase}{why}: "
        f"{left} of {entry.policy.retries} retries left",
    )
