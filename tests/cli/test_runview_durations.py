"""The durations `vcflow run`'s closing report shows, from a `Progress` fed as a run feeds
it with a clock the test moves: a retried entry's whole time (its first attempt's start to
its end) beside its last attempt's, a job shorter than a tenth of a second, and times read
from stored timestamps (a rerun), which are to the second."""

from __future__ import annotations

import io
from typing import Any

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.cli.runview import LiveView, final_rows, report
from vcflow.local import result
from vcflow.local.progress import Progress
from vcflow.local.result import RunResult
from vcflow.runtime.run import Ending
from vcflow.store.memory import MemoryStore

from .flows import flow_job, flow_object

BEGUN = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = BEGUN

    def __call__(self) -> float:
        return self.now


def flow(status: dict[str, Any] | None = None) -> JobFlow:
    spec = {"flows": [{"name": "a", "retryPolicy": {"maxRetries": 2}}, {"name": "b"}]}
    return flow_object(spec, status)  # created at BEGUN


def job(name: str, phase: str, attempt: int = 1) -> VCJob:
    return flow_job(name, phase, attempt, uid=f"{name}-{attempt}")


def built(progress: Progress, tmp_path: Any) -> RunResult:
    return result.build(progress, MemoryStore(), tmp_path, Ending.DONE, 0)


def rows(run: RunResult) -> dict[str, list[str]]:
    return {row[1]: row for row in final_rows(run)}


def test_a_retried_entry_shows_its_whole_time_and_its_last_attempts(tmp_path: Any) -> None:
    clock = Clock()
    progress = Progress([flow()], now=clock)
    progress.observe(job("a", "Running"), False)
    clock.now += 3.0
    progress.observe(job("a", "Failed"), False)
    clock.now += 5.0  # the backoff
    progress.observe(job("a", "Running", attempt=2), False)
    clock.now += 2.0
    progress.observe(job("a", "Completed", attempt=2), False)
    progress.observe(job("b", "Running"), False)
    clock.now += 0.3
    progress.observe(job("b", "Completed"), False)
    run = built(progress, tmp_path)
    a = next(j for j in run.all_jobs() if j.entry == "a")
    assert (a.duration, a.last_attempt, a.attempts) == (10.0, 2.0, 2)
    assert rows(run)["a"][2:4] == ["Completed (2 attempts)", "10.0s (last 2.0s)"]
    assert rows(run)["b"][3] == "0.3s"


def test_a_job_shorter_than_a_tenth_of_a_second_says_so(tmp_path: Any) -> None:
    clock = Clock()
    progress = Progress([flow()], now=clock)
    progress.observe(job("a", "Running"), False)
    clock.now += 0.02
    progress.observe(job("a", "Completed"), False)
    assert rows(built(progress, tmp_path))["a"][3] == "<0.1s"


def test_times_from_stored_timestamps_are_shown_to_the_second(tmp_path: Any) -> None:
    """A rerun of an ended flow: its jobs' times are its status', to the second."""
    clock = Clock()
    clock.now += 60
    status = {
        "state": {"phase": "Succeed"},
        "jobStatusList": [
            {
                "name": "f-a",
                "state": "Completed",
                "startTimestamp": "2027-01-15T08:00:00Z",
                "endTimestamp": "2027-01-15T08:00:00Z",
            },
            {
                "name": "f-b",
                "state": "Completed",
                "startTimestamp": "2027-01-15T08:00:00Z",
                "endTimestamp": "2027-01-15T08:00:03Z",
            },
        ],
    }
    progress = Progress([flow(status)], now=clock)
    run = built(progress, tmp_path)
    assert [rows(run)[e][3] for e in ("a", "b")] == ["<1s", "3s"]
    out = io.StringIO()
    report(run, out)
    assert "flow f Succeed in 3s (it had ended before this run)" in out.getvalue()


def test_the_timeout_keeps_the_phases_it_found(tmp_path: Any) -> None:
    """Terminating the pods at the timeout sends the job back to Pending; the report shows
    the Running flow and job the timeout found, why they did not end, and their time then."""
    clock = Clock()
    progress = Progress([flow()], now=clock)
    progress.observe(job("a", "Running"), False)
    progress.update_flows({flow().key: "Running"})
    clock.now += 4.0
    progress.freeze("the timeout passed: its running pods were terminated")
    clock.now += 2.0  # the pods' grace
    progress.observe(job("a", "Pending"), False)
    progress.update_flows({flow().key: "Pending"})
    run = built(progress, tmp_path)
    assert rows(run)["a"][2:] == [
        "Running",
        "4.0s",
        "the timeout passed: its running pods were terminated",
    ]
    out = io.StringIO()
    report(run, out)
    assert out.getvalue().endswith(
        "flow f Running in 4.0s: the timeout passed: its running pods were terminated\n"
    )


def stamped_job(name: str, phase: str, created: str, ended: str = "") -> VCJob:
    """Vcjob `f-NAME` as the API gives it: its creation and last transition to the second."""
    out = flow_job(name, phase)
    out.metadata.creation_timestamp = created
    if ended:
        data = out.to_dict()
        data["status"]["state"]["lastTransitionTime"] = ended
        out = VCJob.from_dict(data)
    return out


def test_a_run_followed_on_a_server_takes_every_time_from_the_objects(tmp_path: Any) -> None:
    """`vcflow run -f` against a server sees each change late, through the API: its jobs'
    and flow's times are those the objects record (to the second), not a late sighting
    set against a recorded end (a 2 s job shown `<1s`, a 3 s flow `1.7s`)."""
    clock = Clock()
    clock.now += 0.6  # the flow was applied, then followed
    progress = Progress([flow()], now=clock, stamped=True)
    clock.now = BEGUN + 1.5
    progress.observe(stamped_job("a", "Running", "2027-01-15T08:00:00Z"), False)
    clock.now = BEGUN + 4.2
    progress.observe(
        stamped_job("a", "Completed", "2027-01-15T08:00:00Z", "2027-01-15T08:00:02Z"), False
    )
    progress.observe(stamped_job("b", "Running", "2027-01-15T08:00:02Z"), False)
    clock.now = BEGUN + 4.4
    progress.observe(
        stamped_job("b", "Completed", "2027-01-15T08:00:02Z", "2027-01-15T08:00:03Z"), False
    )
    progress.update_flows({flow().key: "Succeed"})
    run = built(progress, tmp_path)
    assert [rows(run)[e][3] for e in ("a", "b")] == ["2s", "1s"]
    out = io.StringIO()
    report(run, out)
    assert out.getvalue().endswith("flow f Succeed in 3s\n")


def with_running(job: VCJob, since: str) -> VCJob:
    """`job` with the condition a runtime records when it went Running (to the second)."""
    data = job.to_dict()
    data["status"]["conditions"] = [{"status": "Running", "lastTransitionTime": since}]
    return VCJob.from_dict(data)


def resubmitted_before_the_run() -> tuple[Clock, Progress]:
    """A run that finds flow f's job a made 8 s before it (Pending meanwhile, no runtime),
    0.5 s into the run."""
    clock = Clock()
    clock.now += 8.0
    progress = Progress([flow()], now=clock)
    pending = job("a", "Pending")
    pending.metadata.creation_timestamp = "2027-01-15T08:00:00Z"  # BEGUN, 8 s ago
    progress.resyncing = True
    progress.observe(pending, False)
    progress.resyncing = False
    clock.now += 0.5
    return clock, progress


def test_a_job_made_before_the_run_is_timed_from_when_it_ran(tmp_path: Any) -> None:
    """A flow resubmitted 8 s before `vcflow run` ran it (its vcjob Pending meanwhile, no
    runtime): its job's time is from when it went Running, as its `runningDuration`, the
    flow's stored start and end, and describe count it — in the table, the live view and a
    later rerun alike — not its 8 s wait before the run."""
    clock, progress = resubmitted_before_the_run()
    progress.observe(with_running(job("a", "Running"), "2027-01-15T08:00:08Z"), False)
    clock.now += 0.3
    progress.observe(with_running(job("a", "Completed"), "2027-01-15T08:00:08Z"), False)
    assert rows(built(progress, tmp_path))["a"][3] == "0.3s"
    view = LiveView(progress, lambda: 10)
    text = "\n".join(line.plain for line in view.render().renderables)  # type: ignore[attr-defined]
    assert " ".join(next(x for x in text.splitlines() if x.startswith("  a ")).split()) == (
        "a Completed 0.3s"
    )
    # (a job the run saw only ended: from its recorded Running, to the second)
    clock.now += 5.0
    seen_late = Progress([flow()], now=clock)
    late = with_running(
        stamped_job("a", "Completed", "2027-01-15T08:00:00Z", "2027-01-15T08:00:10Z"),
        "2027-01-15T08:00:08Z",
    )
    seen_late.resyncing = True
    seen_late.observe(late, False)
    assert rows(built(seen_late, tmp_path))["a"][3] == "2s"  # (not 10s)


def test_a_flow_made_before_the_run_is_timed_from_when_its_first_job_ran(
    tmp_path: Any,
) -> None:
    """A flow resubmitted 8 s before `vcflow run` ran it: `describe` and `get jf` give it
    only an age (from its creation); the run's flow line, like its jobs' times, counts from
    when its first job went Running, not its 8 s wait before the run."""
    clock, progress = resubmitted_before_the_run()
    progress.observe(job("a", "Running"), False)
    progress.update_flows({flow().key: "Running"})
    clock.now += 0.3
    view = LiveView(progress, lambda: 10)
    text = "\n".join(line.plain for line in view.render().renderables)  # type: ignore[attr-defined]
    assert text.splitlines()[0].endswith("  0.3s")
    progress.observe(job("a", "Completed"), False)
    progress.observe(job("b", "Running"), False)
    clock.now += 0.4
    progress.observe(job("b", "Completed"), False)
    progress.update_flows({flow().key: "Succeed"})
    out = io.StringIO()
    report(built(progress, tmp_path), out)
    assert out.getvalue().endswith("flow f Succeed in 0.7s\n")  # (not 8.7s)
