"""FlowIndex through `reconcile.flow.plan` and its incremental API: waiting reasons and
messages (compatibility rows 9, 12, 18), `strategy: any` (row 5), deleted jobs (row 16), the
retain policy, the stop annotation, and jobStatusList histories stamped with `now`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from vcflow.api import clock
from vcflow.api.jobflow import JobFlow, JobFlowStatus
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import OwnerReference
from vcflow.api.phases import FlowPhase
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import jobs as jobbuild

T0 = datetime(2026, 1, 1, tzinfo=UTC)
UID = "uid-flow-f"


def make_flow(
    entries: list[dict[str, Any]],
    *,
    name: str = "f",
    retain: str | None = None,
    annotations: dict[str, str] | None = None,
    status: JobFlowStatus | None = None,
) -> JobFlow:
    spec: dict[str, Any] = {"flows": entries}
    if retain is not None:
        spec["jobRetainPolicy"] = retain
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": UID}
    if annotations:
        meta["annotations"] = annotations
    flow = JobFlow.from_dict({"metadata": meta, "spec": spec})
    flow.status = status
    return flow


def entry(name: str, *targets: str, strategy: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if targets:
        depends: dict[str, Any] = {"targets": list(targets)}
        if strategy is not None:
            depends["strategy"] = strategy
        out["dependsOn"] = depends
    return out


def template(name: str) -> JobTemplate:
    return JobTemplate.from_dict(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "minAvailable": 1,
                "queue": "default",
                "maxRetry": 3,
                "tasks": [
                    {
                        "name": "main",
                        "replicas": 1,
                        "template": {"spec": {"containers": [{"name": "main", "image": "x"}]}},
                    }
                ],
            },
        }
    )


def templates(*names: str) -> dict[str, JobTemplate]:
    return {n: template(n) for n in names}


def job(
    flow: JobFlow,
    entry_name: str,
    phase: str,
    *,
    created: datetime = T0,
    retry: int | None = None,
    running_duration: str | None = None,
) -> VCJob:
    """The vcjob the flow creates for `entry_name`, as the store holds it, with a phase."""
    spec_entry = next(e for e in flow.flows if e.name == entry_name)
    out = jobbuild.build_job(flow, spec_entry, template(entry_name))
    out.metadata.creation_timestamp = clock.rfc3339(created)
    status = VCJobStatus(state=JobState(phase=phase) if phase else None)
    if retry is not None:
        status.retry_count = retry
    if running_duration is not None:
        status.running_duration = running_duration
    out.status = status
    return out


def foreign(name: str, owner: OwnerReference | None, phase: str = "Completed") -> VCJob:
    out = VCJob.from_dict({"metadata": {"name": name, "namespace": "default"}})
    if owner is not None:
        out.metadata.owner_references = [owner]
    out.status = VCJobStatus(state=JobState(phase=phase))
    return out


def created(plan: reconcile.Plan) -> list[str]:
    return [j.name for j in plan.create]


def conditions(index: reconcile.FlowIndex) -> dict[str, dict[str, Any]]:
    status = index.status().to_dict()
    result: dict[str, dict[str, Any]] = status.get("conditions") or {}
    return result


def lists(index: reconcile.FlowIndex) -> dict[str, list[str]]:
    status = index.status().to_dict()
    return {k: sorted(v) for k, v in status.items() if k.endswith("Jobs")}


def mark(index: reconcile.FlowIndex, plan: reconcile.Plan) -> None:
    for j in plan.create:
        index.mark_created(j.name)


# -- waiting reasons and messages --------------------------------------------------------------


def test_fresh_flow_creates_roots_and_waits_for_dependencies() -> None:
    flow = make_flow([entry("a"), entry("b", "a"), entry("c", "a", "b")])
    index, plan = reconcile.plan(flow, templates("a", "b", "c"), [], now=T0)
    assert created(plan) == ["f-a"]
    assert plan.phase == FlowPhase.PENDING
    assert plan.delete == ()
    mark(index, plan)
    assert conditions(index) == {
        "f-b": {"phase": "Waiting", "reason": "Dependencies", "message": "waiting for all of: a"},
        "f-c": {
            "phase": "Waiting",
            "reason": "Dependencies",
            "message": "waiting for all of: a, b",
        },
    }
    assert lists(index) == {}
    assert index.status().phase == "Pending"


def test_dependencies_message_lists_only_unmet_targets() -> None:
    flow = make_flow([entry("a"), entry("b"), entry("c", "a", "b")])
    jobs = [job(flow, "a", "Completed"), job(flow, "b", "Running")]
    index, plan = reconcile.plan(flow, templates("a", "b", "c"), jobs, now=T0)
    assert created(plan) == []
    assert conditions(index)["f-c"]["message"] == "waiting for all of: b"
    assert lists(index) == {"completedJobs": ["f-a"], "runningJobs": ["f-b"]}
    assert plan.phase == FlowPhase.RUNNING


def test_strategy_any_starts_on_one_completed_target() -> None:
    flow = make_flow(
        [
            entry("a"),
            entry("b"),
            entry("c", "a", "b", strategy="any"),
            entry("d", "a", "b"),
            entry("e", "a", "b", strategy="all"),
        ]
    )
    jobs = [job(flow, "a", "Running"), job(flow, "b", "Completed")]
    index, plan = reconcile.plan(flow, templates(*"abcde"), jobs, now=T0)
    assert created(plan) == ["f-c"]
    mark(index, plan)
    conds = conditions(index)
    assert "f-c" not in conds
    assert conds["f-d"]["message"] == "waiting for all of: a"
    assert conds["f-e"]["message"] == "waiting for all of: a"


def test_strategy_any_message_before_any_target_completed() -> None:
    flow = make_flow([entry("a"), entry("b"), entry("c", "a", "b", strategy="any")])
    index, plan = reconcile.plan(flow, templates("a", "b", "c"), [], now=T0)
    assert created(plan) == ["f-a", "f-b"]
    mark(index, plan)
    assert conditions(index)["f-c"] == {
        "phase": "Waiting",
        "reason": "Dependencies",
        "message": "waiting for any of: a, b",
    }


def test_completing_satisfies_no_dependency() -> None:
    flow = make_flow([entry("a"), entry("b", "a")])
    index, plan = reconcile.plan(flow, templates("a", "b"), [job(flow, "a", "Completing")], now=T0)
    assert created(plan) == []
    assert lists(index) == {"completedJobs": ["f-a"]}
    assert plan.phase == FlowPhase.RUNNING


# -- TemplateNotFound ---------------------------------------------------------------------------


def test_template_not_found_waits_alone_then_template_appeared_resumes() -> None:
    flow = make_flow([entry("a"), entry("b"), entry("c", "b")])
    have = templates("a", "c")
    index, plan = reconcile.plan(flow, have, [], now=T0)
    assert created(plan) == ["f-a"]
    mark(index, plan)
    assert conditions(index)["f-b"] == {
        "phase": "Waiting",
        "reason": "TemplateNotFound",
        "message": 'jobtemplate.flow.volcano.sh "b" not found',
    }
    assert conditions(index)["f-c"]["reason"] == "Dependencies"
    assert index.template_waiters == {"b": {"b"}}

    # another decide without the template: still waiting, nothing created twice
    assert created(index.decide(have)) == []
    # the template exists, but only template_appeared makes the entry a candidate again
    have["b"] = template("b")
    index.template_appeared("b")
    assert index.template_waiters == {}
    plan = index.decide(have)
    assert created(plan) == ["f-b"]
    mark(index, plan)
    assert "f-b" not in conditions(index)


def test_template_appeared_for_unknown_template_is_a_no_op() -> None:
    flow = make_flow([entry("a")])
    index, plan = reconcile.plan(flow, templates("a"), [], now=T0)
    mark(index, plan)
    index.template_appeared("zzz")
    assert created(index.decide(templates("a"))) == []


# -- CreateFailed -------------------------------------------------------------------------------


def test_create_failed_keeps_the_message_and_is_retried() -> None:
    flow = make_flow([entry("a"), entry("b")])
    have = templates("a", "b")
    index, plan = reconcile.plan(flow, have, [], now=T0)
    assert created(plan) == ["f-a", "f-b"]
    index.mark_created("f-b")
    index.mark_create_failed("f-a", 'denied the request: queue "gpu" is closed')
    assert conditions(index)["f-a"] == {
        "phase": "Waiting",
        "reason": "CreateFailed",
        "message": 'denied the request: queue "gpu" is closed',
    }
    retry = index.decide(have)
    assert created(retry) == ["f-a"]
    index.mark_created("f-a")
    assert "f-a" not in conditions(index)


# -- NameConflict -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("owner", "owned_by"),
    [
        (None, "no controller"),
        (
            OwnerReference(
                api_version="flow.volcano.sh/v1alpha1",
                kind="JobFlow",
                name="other",
                uid="uid-other",
                controller=True,
            ),
            "JobFlow other",
        ),
        (
            OwnerReference(
                api_version="flow.volcano.sh/v1alpha1",
                kind="JobFlow",
                name="f",
                uid="uid-of-an-earlier-f",
                controller=True,
            ),
            "JobFlow f",
        ),
    ],
    ids=["no-owner", "other-flow", "same-name-other-uid"],
)
def test_name_conflict_is_not_counted(owner: OwnerReference | None, owned_by: str) -> None:
    flow = make_flow([entry("a"), entry("b", "a")])
    index, plan = reconcile.plan(
        flow, templates("a", "b"), [foreign("f-a", owner, "Completed")], now=T0
    )
    assert created(plan) == []
    assert plan.phase == FlowPhase.PENDING
    assert lists(index) == {}
    assert conditions(index)["f-a"] == {
        "phase": "Waiting",
        "reason": "NameConflict",
        "message": f"vcjob f-a exists and is not this flow's (owned by {owned_by})",
    }
    assert conditions(index)["f-b"]["reason"] == "Dependencies"
    assert "jobStatusList" not in index.status().to_dict()


def test_name_conflict_clears_when_the_foreign_job_is_gone() -> None:
    flow = make_flow([entry("a"), entry("b")])
    have = templates("a", "b")
    index, plan = reconcile.plan(flow, have, [foreign("f-a", None, "Running")], now=T0)
    assert created(plan) == ["f-b"]
    mark(index, plan)
    flow.status = index.status()
    index.observe(job(flow, "b", "Running"), T0)
    index.forget("f-a", "Running", T0)  # the foreign job is deleted
    _, full = reconcile.plan(flow, have, [job(flow, "b", "Running")], now=T0)
    assert created(full) == ["f-a"]  # a full plan (restart) creates it
    assert created(index.decide(have)) == created(full)


def test_mark_conflict_after_already_exists() -> None:
    flow = make_flow([entry("a")])
    index, plan = reconcile.plan(flow, templates("a"), [], now=T0)
    assert created(plan) == ["f-a"]
    index.mark_conflict(foreign("f-a", None))
    assert conditions(index)["f-a"]["reason"] == "NameConflict"
    assert created(index.decide(templates("a"))) == []


# -- deleted jobs (row 16) ----------------------------------------------------------------------


def test_forget_completed_job_keeps_outcome_and_dependents_start() -> None:
    flow = make_flow([entry("a"), entry("b"), entry("c", "a", "b")])
    have = templates("a", "b", "c")
    jobs = [job(flow, "a", "Completed"), job(flow, "b", "Running")]
    index, plan = reconcile.plan(flow, have, jobs, now=T0)
    assert created(plan) == []
    index.forget("f-a", "Completed", T0)
    assert created(index.decide(have)) == []
    assert lists(index) == {"completedJobs": ["f-a"], "runningJobs": ["f-b"]}
    assert conditions(index)["f-a"] == {"phase": "Completed", "createTime": clock.rfc3339(T0)}

    index.observe(job(flow, "b", "Completed"), T0)
    plan = index.decide(have)
    assert created(plan) == ["f-c"]
    assert plan.phase == FlowPhase.RUNNING
    assert index.to_delete() == []


def test_forget_unfinished_job_fails_the_flow() -> None:
    flow = make_flow([entry("a"), entry("b", "a"), entry("c")])
    have = templates("a", "b", "c")
    jobs = [job(flow, "a", "Running"), job(flow, "c", "Running")]
    index, _ = reconcile.plan(flow, have, jobs, now=T0)
    index.forget("f-a", "Running", T0 + timedelta(seconds=5))
    plan = index.decide(have)
    assert created(plan) == []
    assert plan.phase == FlowPhase.FAILED
    assert lists(index) == {"failedJobs": ["f-a"], "runningJobs": ["f-c"]}
    cond = conditions(index)["f-a"]
    assert (cond["phase"], cond["reason"]) == ("Failed", "JobDeleted")
    assert cond["message"] == "vcjob f-a was deleted before it finished"
    history = {h["name"]: h for h in index.status().to_dict()["jobStatusList"]}
    assert [h["state"] for h in history["f-a"]["runningHistories"]] == ["Running", "Failed"]


def test_forget_of_a_job_never_seen_is_ignored() -> None:
    flow = make_flow([entry("a")])
    index, _ = reconcile.plan(flow, templates("a"), [], now=T0)
    index.forget("f-a", "Running", T0)  # not marked created, not observed
    index.forget("not-a-job", "Running", T0)
    assert index.status().phase == "Pending"
    assert lists(index) == {}


def test_plan_remembers_a_deleted_job_through_the_status() -> None:
    """A full plan (restart) from the status of a flow whose Completed job was deleted, and
    tombstones for jobs deleted while Running or Pending."""
    flow = make_flow([entry("a"), entry("b"), entry("c", "a")])
    have = templates("a", "b", "c")
    jobs = [job(flow, "a", "Completed"), job(flow, "b", "Running")]
    first, plan = reconcile.plan(flow, have, jobs, now=T0)
    assert created(plan) == ["f-c"]
    mark(first, plan)
    first.observe(job(flow, "c", "Pending"), T0)
    flow.status = first.status()
    later, plan = reconcile.plan(
        flow, have, [], now=T0, tombstones={"f-b": "Running", "f-c": "Pending"}
    )
    assert created(plan) == []
    assert plan.phase == FlowPhase.FAILED
    assert lists(later) == {"completedJobs": ["f-a"], "failedJobs": ["f-b", "f-c"]}


def test_tombstone_of_a_job_created_but_not_yet_in_the_status() -> None:
    flow = make_flow([entry("a"), entry("c", "a")])
    have = templates("a", "c")
    first, plan = reconcile.plan(flow, have, [job(flow, "a", "Completed")], now=T0)
    assert created(plan) == ["f-c"]
    mark(first, plan)
    flow.status = first.status()  # written before f-c was seen
    later, plan = reconcile.plan(
        flow, have, [job(flow, "a", "Completed")], now=T0, tombstones={"f-c": "Running"}
    )
    assert created(plan) == []
    assert plan.phase == FlowPhase.FAILED
    assert conditions(later)["f-c"]["reason"] == "JobDeleted"


def test_plan_without_tombstone_counts_a_missing_running_job_as_deleted() -> None:
    flow = make_flow([entry("a"), entry("b")])
    have = templates("a", "b")
    first, _ = reconcile.plan(
        flow, have, [job(flow, "a", "Running"), job(flow, "b", "Completed")], now=T0
    )
    flow.status = first.status()
    later, plan = reconcile.plan(flow, have, [job(flow, "b", "Completed")], now=T0)
    assert plan.phase == FlowPhase.FAILED
    assert conditions(later)["f-a"]["reason"] == "JobDeleted"
    assert created(plan) == []


# -- retain policy and stop ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("retain", "expected"),
    [(None, ()), ("retain", ()), ("delete", ("f-a", "f-b"))],
    ids=["absent", "retain", "delete"],
)
def test_retain_policy_after_succeed(retain: str | None, expected: tuple[str, ...]) -> None:
    flow = make_flow([entry("a"), entry("b")], retain=retain)
    jobs = [job(flow, "a", "Completed"), job(flow, "b", "Completed")]
    index, plan = reconcile.plan(flow, templates("a", "b"), jobs, now=T0)
    assert plan.phase == FlowPhase.SUCCEED
    assert plan.delete == expected
    for name in plan.delete:
        index.forget(name, "Completed", T0)
    again = index.decide(templates("a", "b"))
    assert again.delete == ()
    assert again.phase == FlowPhase.SUCCEED
    assert lists(index) == {"completedJobs": ["f-a", "f-b"]}


def test_retain_delete_keeps_jobs_while_running() -> None:
    flow = make_flow([entry("a"), entry("b")], retain="delete")
    jobs = [job(flow, "a", "Completed"), job(flow, "b", "Running")]
    _, plan = reconcile.plan(flow, templates("a", "b"), jobs, now=T0)
    assert plan.phase == FlowPhase.RUNNING
    assert plan.delete == ()


def test_stop_annotation_terminates_then_fails() -> None:
    flow = make_flow(
        [entry("a"), entry("b"), entry("c", "a")],
        annotations={reconcile.STOP_ANNOTATION: "true"},
    )
    have = templates("a", "b", "c")
    jobs = [job(flow, "a", "Completed"), job(flow, "b", "Running")]
    index, plan = reconcile.plan(flow, have, jobs, now=T0)
    assert plan.phase == FlowPhase.TERMINATING
    assert created(plan) == []  # c would be ready, but a stopped flow creates nothing
    assert plan.delete == ("f-a", "f-b")
    assert index.status().phase == "Terminating"
    for name in plan.delete:
        index.forget(name, "Completed" if name == "f-a" else "Running", T0)
    plan = index.decide(have)
    assert plan.phase == FlowPhase.FAILED
    assert plan.delete == ()
    assert lists(index) == {"completedJobs": ["f-a"], "failedJobs": ["f-b"]}


def test_stop_annotation_on_a_running_index() -> None:
    flow = make_flow([entry("a")])
    have = templates("a")
    index, plan = reconcile.plan(flow, have, [job(flow, "a", "Running")], now=T0)
    assert plan.phase == FlowPhase.RUNNING
    stopped = flow.model_copy(deep=True)
    stopped.metadata.annotations[reconcile.STOP_ANNOTATION] = "true"
    index.flow = stopped
    plan = index.decide(have)
    assert (plan.phase, plan.delete) == (FlowPhase.TERMINATING, ("f-a",))
    index.forget("f-a", "Running", T0)
    assert index.decide(have).phase == FlowPhase.FAILED


def test_stop_after_succeed_keeps_succeed() -> None:
    flow = make_flow([entry("a")], annotations={reconcile.STOP_ANNOTATION: "true"})
    _, plan = reconcile.plan(flow, templates("a"), [job(flow, "a", "Completed")], now=T0)
    assert plan.phase == FlowPhase.SUCCEED


def test_stop_restored_from_terminating_status_stays_terminating() -> None:
    """A restart while a stopped flow's jobs are being removed."""
    flow = make_flow([entry("a"), entry("b")])
    have = templates("a", "b")
    index, _ = reconcile.plan(
        flow, have, [job(flow, "a", "Running"), job(flow, "b", "Running")], now=T0
    )
    index.flow = flow.model_copy(deep=True)
    index.flow.metadata.annotations[reconcile.STOP_ANNOTATION] = "true"
    assert index.decide(have).phase == FlowPhase.TERMINATING
    index.forget("f-a", "Running", T0)
    stopped = index.flow.model_copy(deep=True)
    stopped.status = index.status()
    assert stopped.phase == "Terminating"
    _, plan = reconcile.plan(stopped, have, [job(flow, "b", "Running")], now=T0)
    assert (plan.phase, plan.delete) == (FlowPhase.TERMINATING, ("f-b",))


def test_stop_with_no_jobs_fails_at_once() -> None:
    flow = make_flow([entry("a")], annotations={reconcile.STOP_ANNOTATION: "true"})
    _, plan = reconcile.plan(flow, templates("a"), [], now=T0)
    assert (plan.phase, created(plan), plan.delete) == (FlowPhase.FAILED, [], ())


# -- phase (row 7) and after Failed (row 8) -----------------------------------------------------


def test_empty_flow_succeeds() -> None:
    index, plan = reconcile.plan(make_flow([]), {}, [], now=T0)
    assert (plan.phase, plan.create, plan.delete) == (FlowPhase.SUCCEED, (), ())
    assert index.status().to_dict() == {"state": {"phase": "Succeed"}}


def test_after_failed_nothing_is_created_but_status_tracks() -> None:
    flow = make_flow([entry("a"), entry("b"), entry("c", "a")])
    have = templates("a", "b", "c")
    jobs = [job(flow, "a", "Running"), job(flow, "b", "Failed")]
    index, plan = reconcile.plan(flow, have, jobs, now=T0)
    assert plan.phase == FlowPhase.FAILED
    index.observe(job(flow, "a", "Completed"), T0)
    plan = index.decide(have)
    assert (plan.phase, created(plan)) == (FlowPhase.FAILED, [])
    assert lists(index) == {"completedJobs": ["f-a"], "failedJobs": ["f-b"]}


# -- jobStatusList ------------------------------------------------------------------------------


def test_job_status_list_history_is_stamped_with_now() -> None:
    flow = make_flow([entry("a")])
    have = templates("a")
    created_at = T0 - timedelta(minutes=1)
    index, plan = reconcile.plan(flow, have, [], now=T0)
    mark(index, plan)
    t1, t2, t3 = (T0 + timedelta(seconds=s) for s in (10, 20, 95))
    # a vcjob with no phase yet has an entry (Volcano's getAllJobStatus lists every vcjob
    # of the flow), with an empty state and no history
    index.observe(job(flow, "a", "", created=created_at), t1)
    assert index.status().to_dict()["jobStatusList"] == [
        {"name": "f-a", "state": "", "startTimestamp": clock.rfc3339(created_at), "restartCount": 0}
    ]
    index.observe(job(flow, "a", "Pending", created=created_at), t1)
    index.observe(job(flow, "a", "Pending", created=created_at), t2)  # unchanged: no entry
    index.observe(job(flow, "a", "Running", created=created_at, retry=1), t2)
    index.observe(
        job(flow, "a", "Completed", created=created_at, retry=1, running_duration="2m35s"), t3
    )
    index.decide(have)
    status = index.status().to_dict()
    assert status["state"] == {"phase": "Succeed"}
    assert status["jobStatusList"] == [
        {
            "name": "f-a",
            "state": "Completed",
            "startTimestamp": "2025-12-31T23:59:00Z",
            "endTimestamp": "2026-01-01T00:01:35Z",
            "restartCount": 1,
            "runningHistories": [
                {
                    "startTimestamp": "2026-01-01T00:00:10Z",
                    "endTimestamp": "2026-01-01T00:00:20Z",
                    "state": "Pending",
                },
                {
                    "startTimestamp": "2026-01-01T00:00:20Z",
                    "endTimestamp": "2026-01-01T00:01:35Z",
                    "state": "Running",
                },
                {
                    "startTimestamp": "2026-01-01T00:01:35Z",
                    "endTimestamp": None,
                    "state": "Completed",
                },
            ],
        }
    ]
    assert status["conditions"]["f-a"] == {
        "phase": "Completed",
        "createTime": "2025-12-31T23:59:00Z",
        "runningDuration": "2m35s",
    }


def test_job_status_list_continues_from_a_restored_status() -> None:
    flow = make_flow([entry("a")])
    have = templates("a")
    first, _ = reconcile.plan(flow, have, [job(flow, "a", "Running")], now=T0)
    flow.status = first.status()
    later = T0 + timedelta(seconds=30)
    index, plan = reconcile.plan(flow, have, [job(flow, "a", "Completed")], now=later)
    assert plan.phase == FlowPhase.SUCCEED
    (item,) = index.status().to_dict()["jobStatusList"]
    assert item["runningHistories"] == [
        {
            "startTimestamp": "2026-01-01T00:00:00Z",
            "endTimestamp": "2026-01-01T00:00:30Z",
            "state": "Running",
        },
        {"startTimestamp": "2026-01-01T00:00:30Z", "endTimestamp": None, "state": "Completed"},
    ]


def test_status_of_an_unchanged_flow_is_stable() -> None:
    """A second plan from the written status and the same jobs writes the same status."""
    flow = make_flow([entry("a"), entry("b", "a"), entry("c")])
    have = templates("a", "b", "c")
    jobs = [job(flow, "a", "Completed"), job(flow, "c", "Aborted")]
    first, plan = reconcile.plan(flow, have, jobs, now=T0)
    mark(first, plan)
    flow.status = first.status()
    second, again = reconcile.plan(flow, have, jobs, now=T0 + timedelta(hours=1))
    assert created(again) == ["f-b"]
    mark(second, again)
    assert second.status().to_dict() == flow.status.to_dict()
    assert lists(second) == {"completedJobs": ["f-a"], "unKnowJobs": ["f-c"]}


# -- a limit on creations (`vcflow run` creates a wide flow's vcjobs in batches) ---------------


def test_a_limit_creates_in_flow_order_and_leaves_the_rest_for_the_next_decision() -> None:
    flow = make_flow([entry("e"), entry("d"), entry("c"), entry("b"), entry("a")])
    index, plan = reconcile.plan(flow, templates(*"abcde"), [], now=T0, limit=2)
    assert created(plan) == ["f-e", "f-d"]
    assert plan.more
    mark(index, plan)
    plan = index.decide(templates(*"abcde"), 2)
    assert created(plan) == ["f-c", "f-b"]
    assert plan.more
    mark(index, plan)
    plan = index.decide(templates(*"abcde"), 2)
    assert created(plan) == ["f-a"]
    assert not plan.more
    mark(index, plan)
    assert index.decide(templates(*"abcde"), 2).create == ()


def test_without_a_limit_every_ready_entry_is_created_at_once() -> None:
    flow = make_flow([entry("a"), entry("b"), entry("c")])
    _, plan = reconcile.plan(flow, templates(*"abc"), [], now=T0)
    assert created(plan) == ["f-a", "f-b", "f-c"]
    assert not plan.more


def test_a_limited_decision_takes_entries_that_became_ready_in_between_in_flow_order() -> None:
    flow = make_flow([entry("a"), entry("b"), entry("c", "a"), entry("d")])
    names = templates(*"abcd")
    index, plan = reconcile.plan(flow, names, [], now=T0, limit=1)
    assert created(plan) == ["f-a"]
    mark(index, plan)
    index.observe(job(flow, "a", "Completed"), T0)  # c is ready now, before d in the flow
    order = []
    while True:
        plan = index.decide(names, 1)
        mark(index, plan)
        order += created(plan)
        if not plan.more:
            break
    assert order == ["f-b", "f-c", "f-d"]
