"""What a local run returns: each flow's and job's outcome, in flow order, and for a job that
failed the container that failed it — exit code, reason, message and its log's last lines —
read from the store's pods and the pods' log files when the run ends, and from the attempts
kept of the job's pods that are gone (`runtime.loghistory`: a pod its policy deleted).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vcflow.api import names
from vcflow.api.errors import InputError, NotFound
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FlowPhase, JobPhase
from vcflow.api.pod import ContainerStatus, Pod
from vcflow.api.vcjob import VCJob
from vcflow.local.progress import SKIPPED, FlowProgress, JobProgress, Progress
from vcflow.podserver import podfs
from vcflow.reconcile import outlook
from vcflow.reconcile.vcjob import pods as podnames
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.runtime import loghistory
from vcflow.runtime import logs as podlogs
from vcflow.runtime.run import Ending
from vcflow.store.base import Store

#: log lines kept of a failed container
LOG_TAIL = 5
INTERRUPTED_EXIT = 130
FAILED_PHASES = frozenset({JobPhase.FAILED, JobPhase.TERMINATED, JobPhase.ABORTED})
#: the reason of a pod the runtime stopped (`podserver.supervisor`)
STOPPED = "Terminated"
#: the job controller's event on a job a Command acts on (volcano-vcjob section 12)
COMMAND_ISSUED = re.compile(r"^Start to execute command (\w+),")


@dataclass(frozen=True)
class Failure:
    """The container whose end failed a job (the latest such, if several did)."""

    pod: str
    container: str
    exit_code: int | None
    reason: str = ""
    message: str = ""
    log_tail: tuple[str, ...] = ()
    attempt: int | None = None  # a pod that is gone: the attempt its logs are kept as

    def __str__(self) -> str:
        code = f"exit code {self.exit_code}" if self.exit_code is not None else "failed"
        why = f" ({self.reason})" if self.reason else ""
        gone = f" (attempt {self.attempt}, deleted)" if self.attempt is not None else ""
        text = f"{code}{why}: pod {self.pod}{gone}, container {self.container}"
        return f"{text}: {self.message}" if self.message else text


@dataclass(frozen=True)
class JobResult:
    namespace: str
    job: str  # the vcjob's name
    entry: str  # the flow entry (the vcjob's name for a vcjob run alone)
    flow: str  # "" for a vcjob run alone
    phase: str  # "" when the entry's vcjob was never created; "Skipped" for a skipped entry
    duration: float | None  # the whole entry's: its first attempt's start to its end
    reason: str = ""  # the job's own reason (Unschedulable, ...)
    message: str = ""
    waiting: str = ""  # why an entry that was never created waits
    failure: Failure | None = None
    attempts: int = 1  # the vcjob's attempts (a retried entry, docs/flow-features.md)
    skipped: str = ""  # why a Skipped entry was (its condition's reason and message)
    backoff: str = ""  # a retry that still waited when the run ended
    verdict: str = ""  # the flow's reason for the outcome (DeadlineExceeded: ..., ...)
    last_attempt: float | None = None  # the last attempt's own time (a retried entry)
    coarse: bool = False  # the times are stored timestamps', to the second (a rerun)
    #: what the job handed on (docs/flow-features.md section 12), as its flow's status keeps it
    outputs: dict[str, Any] = field(default_factory=dict)
    #: the `for` entry whose item it is ("" for any other job; section 19)
    item_of: str = ""
    #: a Terminated job no container failed: the command that ended it (`ended_by`)
    ended_by: str = ""

    @property
    def succeeded(self) -> bool:
        return self.phase == JobPhase.COMPLETED


@dataclass(frozen=True)
class FlowResult:
    namespace: str
    name: str
    phase: str
    duration: float
    jobs: tuple[JobResult, ...]
    ended_before: bool = False  # it had ended before this run began
    reason: str = ""  # why it ended so, as its status says (`DeadlineExceeded: ...`)
    coarse: bool = False  # its time is stored timestamps', to the second (a remote run)

    @property
    def succeeded(self) -> bool:
        return self.phase == FlowPhase.SUCCEED


@dataclass(frozen=True)
class RunResult:
    ending: Ending
    flows: tuple[FlowResult, ...]
    jobs: tuple[JobResult, ...]  # the vcjobs run alone
    terminated: int = 0  # pods terminated by an interruption or the timeout

    @property
    def succeeded(self) -> bool:
        return (
            self.ending is Ending.DONE
            and all(f.succeeded for f in self.flows)
            and all(j.succeeded for j in self.jobs)
        )

    @property
    def exit_code(self) -> int:
        """`vcflow run`'s: 0 when everything succeeded, 130 when interrupted, else 1."""
        if self.ending is Ending.INTERRUPTED:
            return INTERRUPTED_EXIT
        return 0 if self.succeeded else 1

    def all_jobs(self) -> list[JobResult]:
        return [j for f in self.flows for j in f.jobs] + list(self.jobs)


def build(
    progress: Progress, store: Store, state_dir: Path, ending: Ending, terminated: int
) -> RunResult:
    """The result of a run that ended with `ending`, from what `progress` saw."""
    now = progress.now()
    flows = tuple(_flow(f, progress, store, state_dir, now) for f in progress.flows.values())
    jobs = tuple(_job(j, store, state_dir, now) for j in progress.jobs.values())
    return RunResult(ending, flows, jobs, terminated)


def _flow(
    flow: FlowProgress, progress: Progress, store: Store, state_dir: Path, now: float
) -> FlowResult:
    handed = _outputs(store, flow)
    jobs = tuple(
        replace(job, outputs=handed[job.job]) if job.job in handed else job
        for job in (_job(j, store, state_dir, now) for j in _in_flow_order(flow))
    )
    return FlowResult(
        flow.namespace,
        flow.name,
        flow.phase or FlowPhase.PENDING,
        progress.flow_span(flow),
        jobs,
        flow.ended_before,
        flow.reason,
        flow.coarse,
    )


def _job(job: JobProgress, store: Store, state_dir: Path, now: float) -> JobResult:
    failed = job.phase in FAILED_PHASES
    failure = failure_of(store, state_dir, job.namespace, job.job) if failed else None
    ended = ""
    if job.phase == JobPhase.TERMINATED and failure is None:
        ended = job.ended_by or ended_by(store, job.namespace, job.job)
    return JobResult(
        job.namespace,
        job.job,
        job.entry,
        job.flow,
        SKIPPED if job.skipped else job.phase,
        None if job.skipped else job.total(now),
        job.reason,
        job.message,
        job.waiting,
        failure,
        job.attempt,
        job.skipped,
        job.backoff,
        job.verdict,
        None if job.skipped else job.elapsed(now),
        job.coarse,
        item_of=job.item_of,
        ended_by=ended,
    )


def _in_flow_order(flow: FlowProgress) -> list[JobProgress]:
    """The flow's rows in flow order, a `for` entry's items after it by index (they are
    added as they are seen); a `for` entry's duration is its items' span."""
    rows = flow.in_order()
    for row in rows:
        if row.job in flow.groups and row.started is None:
            items = [r for r in rows if r.item_of == row.entry and r.began is not None]
            if items:
                row.started = min(r.began for r in items if r.began is not None)
                ends = [r.finished for r in items]
                if row.ended and all(end is not None for end in ends):
                    row.finished = max(end for end in ends if end is not None)
    return rows


def _outputs(store: Store, flow: FlowProgress) -> dict[str, dict[str, Any]]:
    """vcjob → the outputs the flow's status keeps for it (none for a flow without)."""
    try:
        stored = store.get(JobFlow, flow.namespace, flow.name)
    except NotFound:
        return {}
    items = outlook.records(stored).get("jobStatusList") or []
    return {item["name"]: dict(item["outputs"]) for item in items if item.get("outputs")}


def ended_by(store: Store, namespace: str, job: str) -> str:
    """Why a Terminated vcjob ended, when none of its containers failed it: the Command that
    terminated it (`TerminateJob command`), from the job controller's `CommandIssued` event
    on it. The job's status cannot say: Volcano never sets `state.reason` (volcano-vcjob
    section 7), and vcflow's runtime keeps its status as Volcano's. "" when no command did."""
    try:
        found = store.get(VCJob, namespace, job)
    except NotFound:
        return ""
    if found.phase != JobPhase.TERMINATED:
        return ""
    uid = found.metadata.uid
    issued: list[tuple[str, int, str]] = []
    for event in store.list(Event, namespace):
        about = event.involved_object
        if about.kind != "Job" or about.name != job or event.reason != "CommandIssued":
            continue
        if uid and about.uid and about.uid != uid:
            continue  # (an earlier vcjob of that name: a retried entry's)
        matched = COMMAND_ISSUED.match(event.message)
        if matched is not None:
            rv = event.metadata.resource_version
            issued.append((event.last_seen() or "", int(rv) if rv.isdigit() else 0, matched[1]))
    ending = [i for i in issued if i[2] == "TerminateJob"]
    return f"{max(ending)[2]} command" if ending else ""


def failure_of(
    store: Store, state_dir: Path, namespace: str, job: str, *, tail: int = LOG_TAIL
) -> Failure | None:
    """The latest container of the job's pods that ended with a non-zero exit code (or
    failed to start), with the last `tail` lines of its log; None if no pod of it failed.
    When no pod in the store failed, the attempts kept of the job's pods are looked at (a
    failed pod its policy deleted) — but not the pods the runtime stopped (reason
    `Terminated`: their end is what the job's failure did, not its cause)."""
    found: list[tuple[str, Failure, Path]] = []
    live: set[str] = set()
    for pod in store.list(Pod, namespace, {podnames.JOB_NAME: job}):
        live.add(pod.metadata.uid)
        status = pod.status
        if status is None:
            continue
        pod_dir = state_dir / podfs.PODS / namespace / pod.name
        for c in [*(status.init_container_statuses or []), *(status.container_statuses or [])]:
            failed = _failed(c, pod.name)
            if failed is not None:
                found.append((*failed, pod_dir))
    if found:
        _, failure, pod_dir = max(found, key=lambda item: item[0])
        lines = _log_tail(pod_dir, failure.container, tail) if tail else ()
        return replace(failure, log_tail=lines)
    return _kept_failure(store, state_dir, namespace, job, live, tail)


def _kept_failure(
    store: Store, state_dir: Path, namespace: str, job: str, live: set[str], tail: int
) -> Failure | None:
    found: list[tuple[str, Failure, loghistory.Attempt]] = []
    for attempt in _kept_attempts(store, state_dir, namespace, job):
        if attempt.uid in live or attempt.status.get("reason") == STOPPED:
            continue
        for raw in attempt.container_statuses:
            with contextlib.suppress(ValueError):
                failed = _failed(ContainerStatus.from_dict(raw), attempt.directory.parent.name)
                if failed is not None:
                    at, failure = failed
                    found.append((at, replace(failure, attempt=attempt.number), attempt))
    if not found:
        return None
    # (ends are stamped to the second: of two in one second, the later attempt's)
    _, failure, attempt = max(found, key=lambda item: (item[0], item[2].number))
    lines = _kept_tail(attempt, failure.container, tail) if tail else ()
    return replace(failure, log_tail=lines)


def _failed(c: ContainerStatus, pod: str) -> tuple[str, Failure] | None:
    """(when it ended, the failure) of a container that ended with a non-zero exit code."""
    ended = c.state.terminated if c.state is not None else None
    if ended is None or ended.exit_code == 0:
        return None
    failure = Failure(pod, c.name, ended.exit_code, ended.reason or "", ended.message or "")
    return ended.finished_at or "", failure


def _kept_attempts(
    store: Store, state_dir: Path, namespace: str, job: str
) -> list[loghistory.Attempt]:
    """The kept attempts of the pods of this vcjob (by its uid: not of an older vcjob of
    its name)."""
    try:
        vcjob = store.get(VCJob, namespace, job)
    except NotFound:
        return []
    group = f"{job}-{vcjob.metadata.uid}"
    out = []
    for task in jobspec.task_specs(vcjob):
        for index in range(max(task.replicas or 0, 0)):
            pod = names.pod_name(job, task.name or "default", index)
            history = loghistory.history_dir(state_dir, namespace, pod)
            for attempt in loghistory.kept(history):
                if attempt.record.get("annotations", {}).get(podnames.GROUP_NAME) == group:
                    out.append(attempt)
    return out


def _log_tail(directory: Path, container: str, lines: int) -> tuple[str, ...]:
    try:
        data = podlogs.read_log(directory, container, tail=lines)
    except (InputError, OSError):
        return ()
    return tuple(data.decode(errors="replace").splitlines())


def _kept_tail(attempt: loghistory.Attempt, container: str, lines: int) -> tuple[str, ...]:
    runs = attempt.runs(container)
    if not runs:
        return ()
    try:
        data = podlogs.read_path(runs[-1][1], lines)
    except (InputError, OSError):
        return ()
    return tuple(data.decode(errors="replace").splitlines())
