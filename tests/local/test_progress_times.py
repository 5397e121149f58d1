"""A job's time in `vcflow run` (`local.progress.JobProgress`): from when it went Running,
else from its creation — and a Running the store records only after the job's end (its
run was killed, a rerun caught up) is no start."""

from __future__ import annotations

from vcflow.local.progress import JobProgress


def _job(**times: float | None) -> JobProgress:
    return JobProgress(namespace="default", job="f-a", entry="a", flow="f", **times)


def test_a_job_is_timed_from_when_it_ran() -> None:
    job = _job(started=100.0, first_started=100.0, ran=104.0, first_ran=104.0, finished=105.5)
    assert job.elapsed(now=200.0) == 1.5
    assert job.total(now=200.0) == 1.5


def test_a_running_recorded_after_the_end_counts_from_creation() -> None:
    # the rerun recorded Running at 109 for a process that had ended at 105.5
    job = _job(started=104.0, first_started=104.0, ran=109.0, first_ran=109.0, finished=105.5)
    assert job.elapsed(now=200.0) == 1.5
    assert job.total(now=200.0) == 1.5


def test_a_job_that_has_not_run_counts_from_its_creation() -> None:
    job = _job(started=100.0, first_started=100.0)
    assert job.elapsed(now=103.0) == 3.0
