"""The flow phase as one function of its entries' outcomes (compatibility row 7). Pure.

Volcano computes the phase in state-specific functions, so Pending never jumps to Succeed and
Running+Terminated passes through Running (reference §4); vcflow decides from the outcomes
alone, in the same reconcile, from any phase. With the flow features (docs/flow-features.md
§3) a Skipped entry and a failure some entry depends on (outcome Failed or Finished) count
as settled, and a failure counts only once its retries are spent.
"""

from __future__ import annotations

from dataclasses import dataclass

from vcflow.api.phases import FlowPhase, JobPhase

#: Phases that end a flow entry unsuccessfully (row 7).
FAILING = frozenset({JobPhase.FAILED, JobPhase.TERMINATED})
#: Phases a status list files under `completedJobs` / `terminatedJobs` (row 6).
COMPLETED_LIST = frozenset({JobPhase.COMPLETED, JobPhase.COMPLETING})
TERMINATED_LIST = frozenset({JobPhase.TERMINATED, JobPhase.TERMINATING})


@dataclass(frozen=True)
class Counts:
    """How many of a flow's `entries` have an outcome in each class: `completed` counts the
    settled ones (Completed, Skipped, handled failures), `failed` the unhandled failures,
    `live` the ones still running (a vcjob, or a retry waiting)."""

    entries: int
    completed: int = 0
    failed: int = 0
    started: int = 0
    #: entries whose vcjob runs (or waits to run again)
    live: int = 0


def next_phase(previous: str, counts: Counts) -> FlowPhase:
    """`Succeed` when every entry is settled; else `Failed` when an entry failed (unhandled);
    else `Running` when any job left Pending; else `Pending`. Succeed and Failed are final."""
    if previous in (FlowPhase.SUCCEED, FlowPhase.FAILED):
        return FlowPhase(previous)
    if counts.completed == counts.entries:
        return FlowPhase.SUCCEED
    if counts.failed:
        return FlowPhase.FAILED
    if counts.started:
        return FlowPhase.RUNNING
    return FlowPhase.PENDING


def has_started(phase: str) -> bool:
    """A job has left Pending: any phase but empty or Pending."""
    return phase not in ("", JobPhase.PENDING)


def status_list(phase: str) -> str:
    """The JobFlow status list (wire name) a job of this phase is filed under."""
    if phase == JobPhase.PENDING:
        return "pendingJobs"
    if phase == JobPhase.RUNNING:
        return "runningJobs"
    if phase in COMPLETED_LIST:
        return "completedJobs"
    if phase == JobPhase.FAILED:
        return "failedJobs"
    if phase in TERMINATED_LIST:
        return "terminatedJobs"
    return "unKnowJobs"
