"""The status functions of the state machine (reference §6): given the job's shape and the
counters a primitive just computed, the next phase and retry count.

Each primitive (SyncJob, KillJob, KillTarget) runs one of these after counting; `lifecycle`
picks which from the dispatch table of §6.1. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vcflow.api.phases import JobPhase
from vcflow.reconcile.vcjob.spec import Shape
from vcflow.reconcile.vcjob.status import Counts


@dataclass(frozen=True)
class Seen:
    """What a rule reads: the phase and retry count before it, fresh counters and
    `status.minAvailable`."""

    phase: str
    retry_count: int
    counts: Counts
    min_available: int


@dataclass(frozen=True)
class Next:
    phase: str
    retry_count: int


Rule = Callable[[Shape, Seen], Next]


def keep(shape: Shape, seen: Seen) -> Next:
    """No phase change (terminal phases, Aborted)."""
    return Next(seen.phase, seen.retry_count)


def to(phase: JobPhase, *, retry: bool = False) -> Rule:
    """A fixed transition; `retry` counts one more retry (restarts and resume)."""

    def rule(shape: Shape, seen: Seen) -> Next:
        return Next(phase, seen.retry_count + int(retry))

    return rule


def pending(shape: Shape, seen: Seen) -> Next:
    """Pending → Running once running + succeeded + failed ≥ minAvailable."""
    c = seen.counts
    if c.running + c.succeeded + c.failed >= shape.min_available:
        return Next(JobPhase.RUNNING, seen.retry_count)
    return Next(JobPhase.PENDING, seen.retry_count)


def running(shape: Shape, seen: Seen) -> Next:
    """The Running rule (§6.2): minSuccess completes at once; otherwise the job waits until
    every pod has finished and then applies the success test; a failed pod alone never fails
    it. Too many Pending pods send it back to Pending."""
    c, total = seen.counts, shape.total_replicas
    if total == 0:
        return keep(shape, seen)
    if shape.min_success is not None and c.succeeded >= shape.min_success:
        return Next(JobPhase.COMPLETED, seen.retry_count)
    if c.succeeded + c.failed == total:
        return Next(_outcome(shape, c), seen.retry_count)
    if c.pending > total - shape.min_available:
        return Next(JobPhase.PENDING, seen.retry_count)
    return keep(shape, seen)


def _outcome(shape: Shape, c: Counts) -> JobPhase:
    if shape.task_gates:
        for task in shape.tasks:
            counted = c.tasks.get(task.name)
            if task.min_available and counted and counted.get("Succeeded", 0) < task.min_available:
                return JobPhase.FAILED
    if shape.min_success is not None and c.succeeded < shape.min_success:
        return JobPhase.FAILED
    return JobPhase.COMPLETED if c.succeeded >= shape.min_available else JobPhase.FAILED


def restarting(shape: Shape, seen: Seen) -> Next:
    """The Restarting rule: out of retries → Failed; enough pods not terminating → Pending."""
    if seen.retry_count >= shape.max_retry:
        return Next(JobPhase.FAILED, seen.retry_count)
    if shape.total_replicas - seen.counts.terminating >= seen.min_available:
        return Next(JobPhase.PENDING, seen.retry_count)
    return keep(shape, seen)


def ends_in(phase: JobPhase) -> Rule:
    """Aborting/Completing/Terminating end once no pod is Pending, Running or terminating."""

    def rule(shape: Shape, seen: Seen) -> Next:
        c = seen.counts
        if c.terminating == c.pending == c.running == 0:
            return Next(phase, seen.retry_count)
        return keep(shape, seen)

    return rule
