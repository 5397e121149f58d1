"""`vcflow describe jobflow` says why each waiting job waits (docs/scheduling.md): the flow's
Hold, a dependency, the reason a scheduler put on a created vcjob's condition, and under
`jobOrder: CriticalPath` each job's rank; the flow's scheduling policy in its Spec."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.cli import describe
from vcflow.reconcile import jobs as jobbuild

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def make(policy: dict[str, Any], conditions: dict[str, Any], state: dict[str, Any]) -> JobFlow:
    return JobFlow.from_dict(
        {
            "metadata": {"name": "f", "namespace": "default", "uid": "u"},
            "spec": {
                "schedulingPolicy": policy,
                "flows": [
                    {"name": "a", "runningEstimate": "1m"},
                    {"name": "b"},
                    {"name": "c", "dependsOn": {"targets": ["a"]}},
                ],
            },
            "status": {"conditions": conditions, "state": state},
        }
    )


def lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


def waiting_job(flow: JobFlow, entry: int, reason: str, message: str) -> VCJob:
    job = VCJob.from_dict(
        {
            "metadata": {
                "name": f"f-{flow.flows[entry].name}",
                "namespace": "default",
                "ownerReferences": [jobbuild.owner_reference(flow).to_dict()],
            },
            "status": {
                "state": {"phase": "Pending"},
                "conditions": [{"status": "Pending", "reason": reason, "message": message}],
            },
        }
    )
    return job


def test_held_flow_says_why_with_the_ranks() -> None:
    held = "entry c needs cpu 4; queue team-a capability cpu 2"
    waits = {"phase": "Waiting", "reason": "Held", "message": held}
    flow = make(
        {"jobOrder": "CriticalPath", "admission": "Hold"},
        {
            "f-a": waits,
            "f-b": waits,
            "f-c": {
                "phase": "Waiting",
                "reason": "Dependencies",
                "message": "waiting for all of: a",
            },
        },
        {"phase": "Pending", "reason": "Held", "message": held},
    )
    got = lines(describe.render(flow, [], NOW))
    assert "Scheduling Policy: jobOrder=CriticalPath, admission=Hold" in got
    assert "Reason: Held" in got and f"Message: {held}" in got
    assert "JOB PHASE RANK REASON MESSAGE" in got
    assert f"f-a Waiting 61 Held {held}" in got
    assert f"f-b Waiting 1 Held {held}" in got
    assert "f-c Waiting 1 Dependencies waiting for all of: a" in got


def test_a_created_job_shows_the_scheduler_s_reason() -> None:
    flow = make(
        {"ageFrom": "Flow"},
        {"f-a": {"phase": "Pending"}, "f-b": {"phase": "Pending"}},
        {"phase": "Running"},
    )
    why = "queue team-a is over its capability: cpu 2 of 2 in use"
    jobs = [waiting_job(flow, 0, "Unschedulable", why)]
    got = lines(describe.render(flow, [], NOW, jobs))
    assert "JOB PHASE REASON MESSAGE" in got  # (no rank column: FlowOrder)
    assert f"f-a Pending Unschedulable {why}" in got
    assert "f-b Pending" in got


def test_a_vcjob_of_another_flow_is_not_read() -> None:
    flow = make({}, {"f-a": {"phase": "Pending"}}, {"phase": "Running"})
    other = waiting_job(flow, 0, "Unschedulable", "x")
    other.metadata.owner_references[0].uid = "another"
    assert "f-a Pending" in lines(describe.render(flow, [], NOW, [other]))


def test_describe_vcjob_shows_why_the_scheduler_keeps_it_waiting() -> None:
    flow = make({}, {"f-a": {"phase": "Pending"}}, {"phase": "Running"})
    why = "queue team-a capability cpu 2: its minimum needs cpu 4"
    got = lines(describe.render(waiting_job(flow, 0, "Unschedulable", why), [], NOW))
    assert "STATUS LAST TRANSITION REASON MESSAGE" in got
    assert f"Pending Unschedulable {why}" in got
