"""What a local run returns: each flow's and job's outcome, in flow order, and for a job that
failed the container that failed it — exit code, reason, message and its log's last lines —
read from the store's pods and the pods' log files when the run ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vcflow.api.errors import InputError
from vcflow.api.phases import FlowPhase, JobPhase
from vcflow.api.pod import Pod
from vcflow.local.progress import FlowProgress, JobProgress, Progress
from vcflow.reconcile.vcjob import pods as podnames
from vcflow.runtime import logs as podlogs
from vcflow.runtime.run import Ending
from vcflow.store.base import Store

#: log lines kept of a failed container
LOG_TAIL = 5
INTERRUPTED_EXIT = 130
FAILED_PHASES = frozenset({JobPhase.FAILED, JobPhase.TERMINATED, JobPhase.ABORTED})


@dataclass(frozen=True)
class Failure:
    """The container whose end failed a job (the latest such, if several did)."""

    pod: str
    container: str
    exit_code: int | None
    reason: str = ""
    message: str = ""
    log_tail: tuple[str, ...] = ()

    def __str__(self) -> str:
        code = f"exit code {self.exit_code}" if self.exit_code is not None else "failed"
        why = f" ({self.reason})" if self.reason else ""
        text = f"{code}{why}: pod {self.pod}, container {self.container}"
        return f"{text}: {self.message}" if self.message else text


@dataclass(frozen=True)
class JobResult:
    namespace: str
    job: str  # the vcjob's name
    entry: str  # the flow entry (the vcjob's name for a vcjob run alone)
    flow: str  # "" for a vcjob run alone
    phase: str  # "" when the entry's vcjob was never created
    duration: float | None
    reason: str = ""  # the job's own reason (Unschedulable, ...)
    message: str = ""
    waiting: str = ""  # why an entry that was never created waits
    failure: Failure | None = None

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


PodDir = Callable[[str, str], Path]  # (namespace, pod name) → its pod directory


def build(
    progress: Progress, store: Store, pod_dir: PodDir, ending: Ending, terminated: int
) -> RunResult:
    """The result of a run that ended with `ending`, from what `progress` saw."""
    now = progress.now()
    flows = tuple(_flow(f, progress, store, pod_dir, now) for f in progress.flows.values())
    jobs = tuple(_job(j, store, pod_dir, now) for j in progress.jobs.values())
    return RunResult(ending, flows, jobs, terminated)


def _flow(
    flow: FlowProgress, progress: Progress, store: Store, pod_dir: PodDir, now: float
) -> FlowResult:
    jobs = tuple(_job(j, store, pod_dir, now) for j in flow.jobs.values())
    return FlowResult(
        flow.namespace,
        flow.name,
        flow.phase or FlowPhase.PENDING,
        progress.flow_span(flow),
        jobs,
        flow.ended_before,
    )


def _job(job: JobProgress, store: Store, pod_dir: PodDir, now: float) -> JobResult:
    failed = job.phase in FAILED_PHASES
    failure = failure_of(store, pod_dir, job.namespace, job.job) if failed else None
    return JobResult(
        job.namespace,
        job.job,
        job.entry,
        job.flow,
        job.phase,
        job.elapsed(now),
        job.reason,
        job.message,
        job.waiting,
        failure,
    )


def failure_of(
    store: Store, pod_dir: PodDir, namespace: str, job: str, *, tail: int = LOG_TAIL
) -> Failure | None:
    """The latest container of the job's pods that ended with a non-zero exit code (or
    failed to start), with the last `tail` lines of its log; None if no pod of it failed."""
    found: list[tuple[str, Failure]] = []
    for pod in store.list(Pod, namespace, {podnames.JOB_NAME: job}):
        status = pod.status
        if status is None:
            continue
        for c in [*(status.init_container_statuses or []), *(status.container_statuses or [])]:
            ended = c.state.terminated if c.state is not None else None
            if ended is None or ended.exit_code == 0:
                continue
            failure = Failure(
                pod.name,
                c.name,
                ended.exit_code,
                ended.reason or "",
                ended.message or "",
                _log_tail(pod_dir(namespace, pod.name), c.name, tail) if tail else (),
            )
            found.append((ended.finished_at or "", failure))
    if not found:
        return None
    return max(found, key=lambda item: item[0])[1]


def _log_tail(directory: Path, container: str, lines: int) -> tuple[str, ...]:
    try:
        data = podlogs.read_log(directory, container, tail=lines)
    except (InputError, OSError):
        return ()
    return tuple(data.decode(errors="replace").splitlines())
