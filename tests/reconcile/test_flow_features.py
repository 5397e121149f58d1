"""The flow features in the pure index (docs/flow-features.md): retries and their delays,
the attempt bookkeeping a restarted controller resumes from, outcomes and Skipped entries,
the flow phase with handled failures, deadlines, `vcflow retry` requests and probes."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from vcflow.api import clock
from vcflow.api.jobflow import JobFlow, JobFlowStatus
from vcflow.api.phases import FlowPhase
from vcflow.api.platform import Platform
from vcflow.api.vcjob import TaskState, VCJob
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import probes, retry

from .test_flow_index import T0, conditions, created, entry, job, lists, make_flow, mark, templates

T = templates(*"abcdef")


def flow_of(*entries: dict[str, Any], **spec: Any) -> JobFlow:
    out = make_flow(list(entries))
    assert out.spec is not None
    for key, value in spec.items():
        setattr(out.spec, key, value)
    return JobFlow.from_dict(out.to_dict())


def policy(**fields: Any) -> dict[str, Any]:
    return {"retryPolicy": fields}


def with_fields(e: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**e, **fields}


def attempt_job(flow: JobFlow, name: str, phase: str, attempt: int, **kw: Any) -> VCJob:
    out = job(flow, name, phase, **kw)
    if attempt > 1:
        out.metadata.annotations[retry.ATTEMPT_ANNOTATION] = str(attempt)
    return out


def restarted(index: reconcile.FlowIndex, flow: JobFlow) -> JobFlow:
    """The flow as the store holds it after the index's status was written."""
    out = JobFlow.from_dict(flow.to_dict())
    out.status = JobFlowStatus.model_validate(index.status_data())
    return out


# -- delays -------------------------------------------------------------------------------------


def test_delays_constant_exponential_capped() -> None:
    constant = retry.Plan(max_retries=5, exponential=False, base=10, cap=300)
    assert [retry.delay(constant, k, seed="s") for k in (1, 2, 3)] == [10, 10, 10]
    exponential = retry.Plan(max_retries=5, base=10, cap=35)
    assert [retry.delay(exponential, k, seed="s") for k in (1, 2, 3, 4)] == [10, 20, 35, 35]


def test_jitter_spreads_within_its_fraction_and_is_the_same_for_the_same_seed() -> None:
    plan = retry.Plan(max_retries=5, base=100, cap=1000, jitter=0.1)
    delays = [retry.delay(plan, 1, seed=f"uid/a/{n}") for n in range(200)]
    assert all(90 <= d <= 110 for d in delays)
    assert len(set(delays)) > 100  # spread, not one value
    assert retry.delay(plan, 1, seed="uid/a/7") == retry.delay(plan, 1, seed="uid/a/7")


def test_the_due_time_rounds_up_to_the_whole_second() -> None:
    ended = T0 + timedelta(seconds=10, milliseconds=900)
    assert retry.due(ended, 1.0) == T0 + timedelta(seconds=12)
    assert retry.due(T0, 30.0) == T0 + timedelta(seconds=30)


def test_defaults_are_volcano_designs_and_the_entry_policy_replaces_the_spec() -> None:
    f = flow_of(
        with_fields(entry("a"), retryPolicy={"maxRetries": 1}),
        entry("b"),
        **{"retry_policy": None},
    )
    assert retry.of(f, f.flows[0]) == retry.Plan(max_retries=1)
    assert retry.of(f, f.flows[1]) == retry.NONE
    g = JobFlow.from_dict(
        {
            "metadata": {"name": "g"},
            "spec": {
                "retryPolicy": {
                    "maxRetries": 3,
                    "backoff": {"type": "Constant", "baseDelay": "1s"},
                },
                "flows": [{"name": "a"}, {"name": "b", "retryPolicy": {"maxRetries": 1}}],
            },
        }
    )
    assert retry.of(g, g.flows[0]) == retry.Plan(max_retries=3, exponential=False, base=1.0)
    assert retry.of(g, g.flows[1]) == retry.Plan(max_retries=1)  # the whole object replaced


# -- retries in the index ----------------------------------------------------------------------

RETRY2 = {"maxRetries": 2, "backoff": {"type": "Constant", "baseDelay": "10s"}}


def retrying_flow(**extra: Any) -> JobFlow:
    return JobFlow.from_dict(
        {
            "metadata": {"name": "f", "namespace": "default", "uid": "uid-flow-f"},
            "spec": {
                "retryPolicy": RETRY2,
                "flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}],
                **extra,
            },
        }
    )


def test_a_failed_attempt_waits_then_is_replaced_and_created_again() -> None:
    f = retrying_flow()
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    index.observe(job(f, "a", "Failed"), T0 + timedelta(seconds=5))
    later = index.decide(T, now=T0 + timedelta(seconds=5))
    assert later.phase == FlowPhase.RUNNING and later.create == () and later.replace == ()
    assert conditions(index)["f-a"] == {
        "phase": "Waiting",
        "reason": "Backoff",
        "message": "attempt 2 of 3 at 2026-01-01T00:00:15Z (attempt 1 Failed)",
    }
    assert lists(index) == {}
    assert index.next_wakeup() == T0 + timedelta(seconds=15)
    due = index.decide(T, now=T0 + timedelta(seconds=15))
    assert due.replace == ("f-a",) and due.create == ()
    index.forget("f-a", "Failed", T0 + timedelta(seconds=15))
    again = index.decide(T, now=T0 + timedelta(seconds=15))
    assert created(again) == ["f-a"]
    assert again.create[0].metadata.annotations[retry.ATTEMPT_ANNOTATION] == "2"
    mark(index, again)
    index.observe(attempt_job(f, "a", "Completed", 2), T0 + timedelta(seconds=20))
    assert created(index.decide(T, now=T0 + timedelta(seconds=20))) == ["f-b"]
    item = index.status().to_dict()["jobStatusList"][0]
    assert item["restartCount"] == 1 and item["attempt"] == 2
    assert "nextAttemptTime" not in item
    assert [h["state"] for h in item["runningHistories"]] == ["Failed", "Completed"]


def test_retries_spent_fail_the_flow_with_a_reason() -> None:
    f = retrying_flow()
    f.spec.retry_policy.max_retries = 1  # type: ignore[union-attr]
    index, plan = reconcile.plan(f, T, [attempt_job(f, "a", "Failed", 2)], now=T0)
    assert plan.phase == FlowPhase.FAILED
    assert conditions(index)["f-a"]["reason"] == "RetriesExhausted"
    assert conditions(index)["f-a"]["message"] == "Failed after 2 attempts"
    assert index.next_wakeup() is None


def test_a_restarted_controller_keeps_the_schedule() -> None:
    f = retrying_flow()
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    failed = job(f, "a", "Failed")
    index.observe(failed, T0 + timedelta(seconds=3))
    index.decide(T, now=T0 + timedelta(seconds=3))
    stored = restarted(index, f)
    again, plan2 = reconcile.plan(stored, T, [failed], now=T0 + timedelta(seconds=8))
    assert plan2.create == () and plan2.replace == ()
    assert again.next_wakeup() == T0 + timedelta(seconds=13)
    assert conditions(again)["f-a"]["reason"] == "Backoff"
    # past the due time, it goes on where it was: the failed attempt is replaced
    _third, plan3 = reconcile.plan(stored, T, [failed], now=T0 + timedelta(seconds=30))
    assert plan3.replace == ("f-a",)


def test_an_attempt_created_before_a_crash_is_adopted_not_made_again() -> None:
    f = retrying_flow()
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    index.observe(job(f, "a", "Failed"), T0)
    index.decide(T, now=T0)
    stored = restarted(index, f)  # the status says: attempt 2 due at 10s
    second = attempt_job(f, "a", "Running", 2, created=T0 + timedelta(seconds=10))
    again, plan2 = reconcile.plan(stored, T, [second], now=T0 + timedelta(seconds=11))
    assert plan2.create == () and plan2.replace == ()
    assert lists(again) == {"runningJobs": ["f-a"]}
    assert again.status().to_dict()["jobStatusList"][0]["attempt"] == 2


@pytest.mark.parametrize(("policy_", "runs_again"), [("Always", True), ("OnFailure", False)])
def test_always_runs_a_completed_job_again_before_its_dependents(
    policy_: str, runs_again: bool
) -> None:
    f = retrying_flow()
    f.spec.retry_policy.policy = policy_  # type: ignore[union-attr]
    index, plan = reconcile.plan(f, T, [job(f, "a", "Completed")], now=T0)
    assert created(plan) == ([] if runs_again else ["f-b"])
    assert ("f-a" in lists(index).get("completedJobs", [])) is not runs_again


def test_a_job_deleted_before_it_finished_is_not_retried() -> None:
    f = retrying_flow()
    index, _plan = reconcile.plan(f, T, [job(f, "a", "Running")], now=T0)
    index.forget("f-a", "Running", T0)
    assert index.decide(T, now=T0).phase == FlowPhase.FAILED
    assert conditions(index)["f-a"]["reason"] == "JobDeleted"


# -- outcomes and Skipped ----------------------------------------------------------------------


def test_outcome_failed_runs_on_failure_and_the_handled_failure_does_not_fail_the_flow() -> None:
    f = make_flow(
        [
            entry("a"),
            entry("b", "a"),
            with_fields(entry("c"), dependsOn={"targets": ["a"], "outcome": "Failed"}),
        ]
    )
    index, plan = reconcile.plan(f, T, [job(f, "a", "Failed")], now=T0)
    assert created(plan) == ["f-c"] and plan.phase == FlowPhase.RUNNING
    assert conditions(index)["f-b"] == {
        "phase": "Skipped",
        "reason": "TargetFailed",
        "message": "a Failed: b runs only when a has Completed (outcome: Completed)",
    }
    mark(index, plan)
    index.observe(job(f, "c", "Completed"), T0)
    assert index.decide(T, now=T0).phase == FlowPhase.SUCCEED


def test_a_skip_satisfies_completed_dependencies_and_propagates_through_failed_ones() -> None:
    f = make_flow(
        [
            entry("a"),
            with_fields(entry("b"), dependsOn={"targets": ["a"], "outcome": "Failed"}),
            entry("c", "b"),  # a Skipped b satisfies it
            with_fields(
                entry("d"), dependsOn={"targets": ["b"], "outcome": "Failed"}
            ),  # skipped too
            with_fields(entry("e"), dependsOn={"targets": ["b", "d"], "outcome": "Finished"}),
        ]
    )
    index, plan = reconcile.plan(f, T, [job(f, "a", "Completed")], now=T0)
    assert created(plan) == ["f-c", "f-e"]
    mark(index, plan)
    phases_ = {k: v["phase"] for k, v in conditions(index).items()}
    assert phases_ == {"f-a": "Completed", "f-b": "Skipped", "f-d": "Skipped"}
    assert conditions(index)["f-d"]["reason"] == "TargetSkipped"


def test_strategy_any_is_skipped_only_when_no_target_can_meet_it() -> None:
    f = make_flow(
        [
            entry("a"),
            entry("b"),
            entry("c", "a", "b", strategy="any"),
            # handles a's and b's failures, so the flow goes on
            with_fields(entry("d"), dependsOn={"targets": ["a", "b"], "outcome": "Finished"}),
        ]
    )
    index, plan = reconcile.plan(f, T, [job(f, "a", "Failed"), job(f, "b", "Running")], now=T0)
    assert plan.phase == FlowPhase.RUNNING
    assert conditions(index)["f-c"]["message"] == "waiting for any of: a (Failed), b"
    index.observe(job(f, "b", "Failed"), T0)
    assert created(index.decide(T, now=T0)) == ["f-d"]
    assert conditions(index)["f-c"]["phase"] == "Skipped"


def test_in_a_failed_flow_nothing_is_skipped_and_waiting_retries_are_cancelled() -> None:
    f = JobFlow.from_dict(
        {
            "metadata": {"name": "f", "namespace": "default", "uid": "u"},
            "spec": {
                "flows": [
                    {"name": "a"},
                    {"name": "b", "retryPolicy": RETRY2},
                    {"name": "c", "dependsOn": {"targets": ["a"]}},
                ]
            },
        }
    )
    index, _plan = reconcile.plan(f, T, [job(f, "b", "Failed")], now=T0)
    assert conditions(index)["f-b"]["reason"] == "Backoff"
    index.observe(job(f, "a", "Failed"), T0)
    assert index.decide(T, now=T0).phase == FlowPhase.FAILED
    conds = conditions(index)
    assert conds["f-c"]["phase"] == "Waiting"  # not Skipped: a Failed flow decides nothing
    assert conds["f-b"]["phase"] == "Failed" and conds["f-b"]["reason"] == "RetryCancelled"
    assert index.next_wakeup() is None


# -- deadlines -----------------------------------------------------------------------------------


def test_an_entry_deadline_terminates_the_attempt_once_and_its_end_is_deadline_exceeded() -> None:
    f = make_flow([with_fields(entry("a"), activeDeadlineSeconds=30)])
    index, plan = reconcile.plan(f, T, [job(f, "a", "Running")], now=T0)
    assert plan.terminate == () and index.next_wakeup() == T0 + timedelta(seconds=30)
    assert index.decide(T, now=T0 + timedelta(seconds=30)).terminate == ("f-a",)
    assert index.decide(T, now=T0 + timedelta(seconds=31)).terminate == ()
    marked = job(f, "a", "Terminated")
    marked.metadata.annotations[reconcile.DEADLINE_ANNOTATION] = clock.rfc3339(T0)
    index.observe(marked, T0 + timedelta(seconds=32))
    assert index.decide(T, now=T0 + timedelta(seconds=32)).phase == FlowPhase.FAILED
    assert conditions(index)["f-a"]["reason"] == "DeadlineExceeded"


def test_a_job_that_finished_is_not_terminated_at_its_deadline() -> None:
    f = make_flow([with_fields(entry("a"), activeDeadlineSeconds=30)])
    index, _ = reconcile.plan(f, T, [job(f, "a", "Completed")], now=T0)
    assert index.decide(T, now=T0 + timedelta(seconds=60)).terminate == ()


def test_the_flow_deadline_stops_the_flow_with_deadline_exceeded() -> None:
    f = make_flow([entry("a"), entry("b", "a")])
    f.spec.active_deadline_seconds = 60  # type: ignore[union-attr]
    f.metadata.creation_timestamp = clock.rfc3339(T0)
    index, plan = reconcile.plan(f, T, [job(f, "a", "Running")], now=T0 + timedelta(seconds=10))
    assert plan.delete == () and index.next_wakeup() == T0 + timedelta(seconds=60)
    stop = index.decide(T, now=T0 + timedelta(seconds=60))
    assert stop.delete == ("f-a",) and stop.phase == FlowPhase.TERMINATING
    index.forget("f-a", "Running", T0 + timedelta(seconds=60))
    assert index.decide(T, now=T0 + timedelta(seconds=61)).phase == FlowPhase.FAILED
    state = index.status().to_dict()["state"]
    assert state == {
        "phase": "Failed",
        "reason": "DeadlineExceeded",
        "message": "activeDeadlineSeconds (60s) passed at 2026-01-01T00:01:00Z",
    }


# -- vcflow retry --------------------------------------------------------------------------------


def fan_out() -> JobFlow:
    return make_flow(
        [entry("a"), entry("b", "a"), entry("c", "a"), entry("d", "b", "c"), entry("e", "a")]
    )


def request(index_flow: JobFlow, **kw: Any) -> JobFlow:
    req = reconcile.RetryRequest("r1", T0 + timedelta(minutes=1), **kw)
    out = JobFlow.from_dict(index_flow.to_dict())
    out.status = index_flow.status
    out.metadata.annotations[reconcile.RETRY_ANNOTATION] = req.to_annotation()
    return out


def test_a_retry_request_resets_what_failed_and_keeps_what_completed() -> None:
    f = fan_out()
    jobs = [
        job(f, "a", "Completed"),
        job(f, "b", "Failed"),
        job(f, "c", "Completed"),
        job(f, "e", "Completed"),
    ]
    index, plan = reconcile.plan(f, T, jobs, now=T0)
    assert plan.phase == FlowPhase.FAILED
    asked = request(restarted(index, f))
    again, plan2 = reconcile.plan(asked, T, jobs, now=T0 + timedelta(minutes=1))
    assert plan2.phase == FlowPhase.RUNNING and plan2.replace == ("f-b",) and plan2.create == ()
    again.forget("f-b", "Failed", T0)
    third = again.decide(T, now=T0 + timedelta(minutes=1))
    assert created(third) == ["f-b"]
    assert third.create[0].metadata.annotations[retry.ATTEMPT_ANNOTATION] == "2"
    assert json.loads(again.status().to_dict()["lastRetry"])["id"] == "r1"
    mark(again, third)
    # carried out once: a restarted controller does not carry it out again
    stored = restarted(again, asked)
    new_b = attempt_job(f, "b", "Pending", 2)
    _, plan3 = reconcile.plan(stored, T, [*jobs[:1], new_b, *jobs[2:]], now=T0)
    assert (plan3.phase, plan3.create, plan3.replace) == (FlowPhase.RUNNING, (), ())


def test_restart_successful_reruns_the_named_entries_and_what_follows_them_not_upstream() -> None:
    f = fan_out()
    jobs = [job(f, n, "Completed") for n in "abce"] + [job(f, "d", "Failed")]
    index, _ = reconcile.plan(f, T, jobs, now=T0)
    asked = request(restarted(index, f), entries=("c",), restart_successful=True)
    _again, plan = reconcile.plan(asked, T, jobs, now=T0 + timedelta(minutes=1))
    assert sorted(plan.replace) == ["f-c", "f-d"]  # c named, d after it (and failed); a, b, e kept


def test_a_request_for_a_flow_that_has_not_failed_is_recorded_and_ignored() -> None:
    f = fan_out()
    index, _ = reconcile.plan(f, T, [job(f, "a", "Running")], now=T0)
    asked = request(restarted(index, f))
    again, plan = reconcile.plan(asked, T, [job(f, "a", "Running")], now=T0)
    assert plan.replace == () and json.loads(again.status().to_dict()["lastRetry"])["id"] == "r1"


# -- probes ---------------------------------------------------------------------------------------


def probed_flow(probe: dict[str, Any]) -> JobFlow:
    return make_flow(
        [entry("a"), with_fields(entry("b"), dependsOn={"targets": ["a"], "probe": probe})]
    )


def serving(f: JobFlow, running: int) -> VCJob:
    out = job(f, "a", "Running")
    assert out.status is not None
    out.status.task_status_count = {"main": TaskState(phase={"Running": running})}
    return out


def test_a_task_status_probe_is_met_from_the_vcjob_status_alone() -> None:
    f = probed_flow({"taskStatusList": [{"taskName": "main", "phase": "Running"}]})
    index, plan = reconcile.plan(f, T, [job(f, "a", "Running")], now=T0)
    assert created(plan) == []
    assert "taskStatus: the pods of main are not all Running" in conditions(index)["f-b"]["message"]
    index.observe(serving(f, 1), T0)
    assert created(index.decide(T, now=T0)) == ["f-b"]


def test_a_tcp_probe_runs_once_the_pods_run_and_meets_the_dependency_on_success() -> None:
    f = probed_flow({"tcpSocketList": [{"taskName": "main", "port": 6379}]})
    index, _plan = reconcile.plan(f, T, [job(f, "a", "Running")], now=T0)
    assert index.take_probes() == []
    index.observe(serving(f, 1), T0)
    index.decide(T, now=T0)
    (round_,) = index.take_probes()
    assert round_ == probes.Round("b", "a", (probes.Check("tcpSocket", 6379, task="main"),))
    assert not index.probe_result("b", "a", False, "tcpSocket main:6379: connection refused", T0)
    assert conditions(index)["f-b"]["message"] == (
        "waiting for all of: a (probe: tcpSocket main:6379: connection refused)"
    )
    assert index.next_wakeup() == T0 + timedelta(seconds=probes.PERIOD)
    index.decide(T, now=T0 + timedelta(seconds=1))
    assert len(index.take_probes()) == 1
    assert index.probe_result("b", "a", True, "", T0)
    assert created(index.decide(T, now=T0 + timedelta(seconds=1))) == ["f-b"]


def test_a_probe_of_a_svc_job_waits_for_completed_and_says_why() -> None:
    f = probed_flow({"tcpSocketList": [{"port": 6379}]})
    running = serving(f, 1)
    assert running.spec is not None
    running.spec.plugins = {"svc": []}
    index, _ = reconcile.plan(f, T, [running], now=T0)
    assert index.take_probes() == []
    assert "has its own network (svc plugin)" in conditions(index)["f-b"]["message"]
    index.observe(job(f, "a", "Completed"), T0)
    assert created(index.decide(T, now=T0)) == ["f-b"]


def test_on_a_pod_network_a_probe_of_a_svc_job_runs_while_it_runs() -> None:
    """On a cluster (the operator: each pod at its own IP) the svc plugin's own network is
    no obstacle: the probe runs once the pods run, as for any job."""
    f = probed_flow({"tcpSocketList": [{"port": 6379}]})
    running = serving(f, 1)
    assert running.spec is not None
    running.spec.plugins = {"svc": []}
    index, _ = reconcile.plan(f, T, [running], now=T0, platform=Platform.CLUSTER)
    index.decide(T, now=T0)
    (round_,) = index.take_probes()
    assert [(c.kind, c.port) for c in round_.checks] == [("tcpSocket", 6379)]
    assert index.probe_result("b", "a", True, "", T0)
    assert created(index.decide(T, now=T0)) == ["f-b"]


def test_a_job_that_had_failed_keeps_its_reason_when_its_vcjob_is_deleted() -> None:
    f = retrying_flow()
    f.spec.retry_policy.max_retries = 1  # type: ignore[union-attr]
    index, _ = reconcile.plan(f, T, [attempt_job(f, "a", "Failed", 2)], now=T0)
    index.forget("f-a", "Failed", T0)  # (a stop, or a user, deletes the failed vcjob)
    assert conditions(index)["f-a"]["reason"] == "RetriesExhausted"
    assert lists(index) == {"failedJobs": ["f-a"]}
