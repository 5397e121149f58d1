"""What `vcflow run`'s live view and closing report show of the flow features
(docs/flow-features.md §6), from a `Progress` fed as a run feeds it: a retry that waits (with
its next attempt's time and how long until it), an attempt after the first, a Skipped entry,
a running job's and the flow's deadline."""

from __future__ import annotations

import io
from typing import Any

from vcflow.api.jobflow import JobFlow
from vcflow.cli.runview import LiveView, report
from vcflow.local.progress import Progress
from vcflow.local.result import FlowResult, JobResult, RunResult
from vcflow.runtime.run import Ending

from .flows import flow_job, flow_object

NOW = 1_800_000_000.0


def flow(status: dict[str, Any] | None = None) -> JobFlow:
    spec = {
        "activeDeadlineSeconds": 600,
        "flows": [
            {"name": "a", "retryPolicy": {"maxRetries": 2}},
            {"name": "b", "activeDeadlineSeconds": 90},
            {"name": "c", "dependsOn": {"targets": ["a"], "outcome": "Failed"}},
        ],
    }
    return flow_object(spec, status)  # created at NOW


job = flow_job


def shown(progress: Progress) -> str:
    view = LiveView(progress, lambda: 40)
    return "\n".join(line.plain for line in view.render().renderables)  # type: ignore[attr-defined]


def test_a_waiting_retry_shows_backoff_with_its_time_and_a_countdown() -> None:
    said: list[tuple[str, str]] = []
    progress = Progress([flow()], now=lambda: NOW, on_change=lambda w, p, _s: said.append((w, p)))
    progress.observe(job("a", "Failed"), False)
    progress.update_waiting(
        flow(
            {
                "conditions": {
                    "f-a": {
                        "phase": "Waiting",
                        "reason": "Backoff",
                        "message": "attempt 2 of 3 at 2027-01-15T08:00:12Z (attempt 1 Failed)",
                    }
                },
                "jobStatusList": [
                    {"name": "f-a", "state": "Failed", "nextAttemptTime": "2027-01-15T08:00:12Z"}
                ],
            }
        )
    )
    text = shown(progress)
    assert "a  Backoff" in text
    assert "attempt 2 of 3 at 2027-01-15T08:00:12Z (attempt 1 Failed) (in 12s)" in text
    assert said[-1] == (
        "f/a",
        "Backoff: attempt 2 of 3 at 2027-01-15T08:00:12Z (attempt 1 Failed)",
    )
    progress.observe(job("a", "Running", attempt=2), False)
    assert "a  Running" in shown(progress) and "attempt 2" in shown(progress)
    assert said[-1] == ("f/a", "Running (attempt 2)")


def test_skipped_entries_and_deadlines_show() -> None:
    progress = Progress([flow()], now=lambda: NOW + 30)
    row = progress.observe(job("b", "Running"), False)
    assert row is not None
    row.started = NOW
    progress.update_waiting(
        flow(
            {
                "conditions": {
                    "f-c": {
                        "phase": "Skipped",
                        "reason": "TargetCompleted",
                        "message": "a Completed: c runs only when a has Failed (outcome: Failed)",
                    }
                }
            }
        )
    )
    text = shown(progress)
    assert "c  Skipped" in text and "a Completed: c runs only when a has Failed" in text
    assert "deadline in 1m0s" in text  # b: 90 s from its start, 30 s ago
    assert "deadline in 9m30s" in text.splitlines()[0]  # the flow's 600 s


def test_the_report_says_attempts_skips_and_why_a_flow_ended() -> None:
    jobs = (
        JobResult("default", "f-a", "a", "f", "Completed", 1.0, attempts=3),
        JobResult("default", "f-c", "c", "f", "Skipped", None, skipped="TargetCompleted: why"),
    )
    reason = "DeadlineExceeded: activeDeadlineSeconds (60s) passed at 2027-01-15T08:01:00Z"
    flow_result = FlowResult("default", "f", "Failed", 60.0, jobs, reason=reason)
    out = io.StringIO()
    report(RunResult(Ending.DONE, (flow_result,), ()), out)
    text = out.getvalue()
    assert "Completed (3 attempts)" in text
    assert "Skipped" in text and "TargetCompleted: why" in text
    assert text.endswith(f"flow f Failed in 60.0s: {reason}\n")


def test_a_for_entrys_items_show_right_after_it() -> None:
    spec = {
        "flows": [
            {"name": "a", "for": {"items": [1, 2]}},
            {"name": "b", "dependsOn": {"targets": ["a"]}},
        ]
    }
    progress = Progress([flow_object(spec)], now=lambda: NOW)
    for name in ("a-1", "a-0"):  # (seen after b's row was made, and out of order)
        progress.observe(job(name, "Running"), False)
    entries = [line.split()[0] for line in shown(progress).splitlines()[1:]]
    assert entries == ["a", "a-0", "a-1", "b"]
