"""The flow phase as one function of the entries' outcomes (compatibility row 7) and the status
list each job phase is filed under (row 6), as tables."""

from __future__ import annotations

import pytest

from vcflow.api.phases import FlowPhase, JobPhase
from vcflow.reconcile import phase
from vcflow.reconcile.phase import Counts

NEXT_PHASE: list[tuple[str, str, Counts, FlowPhase]] = [
    # (id, previous phase, counts, expected)
    ("empty-flow-succeeds", "Pending", Counts(0), FlowPhase.SUCCEED),
    ("empty-flow-from-nothing", "", Counts(0), FlowPhase.SUCCEED),
    ("nothing-started", "Pending", Counts(3), FlowPhase.PENDING),
    ("no-previous-phase", "", Counts(3), FlowPhase.PENDING),
    ("one-started", "Pending", Counts(3, started=1), FlowPhase.RUNNING),
    ("stays-running", "Running", Counts(3, completed=1, started=2), FlowPhase.RUNNING),
    ("running-without-started-is-pending", "Running", Counts(3), FlowPhase.PENDING),
    ("pending-to-succeed-at-once", "Pending", Counts(2, completed=2, started=2), FlowPhase.SUCCEED),
    ("running-to-succeed", "Running", Counts(2, completed=2, started=2), FlowPhase.SUCCEED),
    ("pending-to-failed-at-once", "Pending", Counts(2, failed=1, started=2), FlowPhase.FAILED),
    ("failed-beats-running", "Pending", Counts(3, failed=1, started=3), FlowPhase.FAILED),
    ("failed-with-some-completed", "Running", Counts(3, 2, 1, 3), FlowPhase.FAILED),
    ("succeed-is-final", "Succeed", Counts(2, failed=1, started=1), FlowPhase.SUCCEED),
    ("succeed-is-final-when-empty", "Succeed", Counts(2), FlowPhase.SUCCEED),
    ("failed-is-final", "Failed", Counts(2, completed=2, started=2), FlowPhase.FAILED),
    ("failed-is-final-when-running", "Failed", Counts(2, started=1), FlowPhase.FAILED),
    ("terminating-is-recomputed", "Terminating", Counts(2, started=1), FlowPhase.RUNNING),
    ("terminating-all-completed", "Terminating", Counts(1, 1, 0, 1), FlowPhase.SUCCEED),
]


@pytest.mark.parametrize(
    ("previous", "counts", "expected"),
    [row[1:] for row in NEXT_PHASE],
    ids=[row[0] for row in NEXT_PHASE],
)
def test_next_phase(previous: str, counts: Counts, expected: FlowPhase) -> None:
    assert phase.next_phase(previous, counts) == expected


STATUS_LIST: list[tuple[str, str]] = [
    (JobPhase.PENDING, "pendingJobs"),
    (JobPhase.RUNNING, "runningJobs"),
    (JobPhase.COMPLETING, "completedJobs"),
    (JobPhase.COMPLETED, "completedJobs"),
    (JobPhase.FAILED, "failedJobs"),
    (JobPhase.TERMINATING, "terminatedJobs"),
    (JobPhase.TERMINATED, "terminatedJobs"),
    (JobPhase.ABORTING, "unKnowJobs"),
    (JobPhase.ABORTED, "unKnowJobs"),
    (JobPhase.RESTARTING, "unKnowJobs"),
    ("", "unKnowJobs"),
    ("SomethingNew", "unKnowJobs"),
]


@pytest.mark.parametrize(
    ("job_phase", "expected"), STATUS_LIST, ids=[p or "empty" for p, _ in STATUS_LIST]
)
def test_status_list(job_phase: str, expected: str) -> None:
    assert phase.status_list(job_phase) == expected


HAS_STARTED: list[tuple[str, bool]] = [
    ("", False),
    (JobPhase.PENDING, False),
    *((p.value, True) for p in JobPhase if p != JobPhase.PENDING),
]


@pytest.mark.parametrize(
    ("job_phase", "expected"), HAS_STARTED, ids=[p or "empty" for p, _ in HAS_STARTED]
)
def test_has_started(job_phase: str, expected: bool) -> None:
    assert phase.has_started(job_phase) is expected


def test_outcome_classes() -> None:
    """Only Failed and Terminated end an entry unsuccessfully; the list classes of row 6."""
    assert {JobPhase.FAILED, JobPhase.TERMINATED} == phase.FAILING
    assert {JobPhase.COMPLETED, JobPhase.COMPLETING} == phase.COMPLETED_LIST
    assert {JobPhase.TERMINATED, JobPhase.TERMINATING} == phase.TERMINATED_LIST
    assert all(phase.status_list(p) != "unKnowJobs" for p in phase.FAILING)
