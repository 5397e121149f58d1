"""The fan-out `for` in the pure index (docs/flow-features.md section 19): one vcjob per item
under `parallelism`, the entry's outcome from its items', its outputs as a list, an empty
list, items that cannot be had, `vcflow retry` of the failed items only, and a restarted
controller that expands the entry again and creates no item twice."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from vcflow.api.jobflow import JobFlow
from vcflow.api.phases import FlowPhase
from vcflow.reconcile import flow as reconcile

from .test_flow_features import request, restarted
from .test_flow_index import T0, conditions, created, job, mark, templates
from .test_language import after, env_of, flow

T = templates("prep", "train", "pick", "alert")


def item_job(f: JobFlow, name: str, phase: str) -> Any:
    """An item's vcjob as the store holds it (`job` builds from the entry named)."""
    entry, _, _i = name.rpartition("-")
    out = job(f, entry, phase)
    out.metadata.name = f"{f.name}-{name}"
    return out


def sweep(parallelism: int | None = None, **extra: Any) -> JobFlow:
    fan: dict[str, Any] = {"fromOutput": "prep.configs"}
    if parallelism is not None:
        fan["parallelism"] = parallelism
    return flow(
        {"name": "prep"},
        after("train", "prep", **{"for": fan}, **extra),
        after("pick", "train"),
        arguments=[],
    )


def started(index: reconcile.FlowIndex, f: JobFlow, configs: list[Any]) -> reconcile.Plan:
    index.observe(job(f, "prep", "Completed"), T0)
    index.give_outputs("f-prep", {"configs": configs}, T0)
    plan = index.decide(T, now=T0)
    mark(index, plan)
    return plan


def end(index: reconcile.FlowIndex, f: JobFlow, item: str, phase: str, out: Any = None) -> None:
    index.observe(item_job(f, item, phase), T0)
    if phase == "Completed":
        index.give_outputs(f"f-{item}", out if out is not None else {}, T0)


def test_one_vcjob_per_item_with_its_item_then_the_outputs_as_a_list() -> None:
    f = sweep()
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    plan = started(index, f, [{"lr": 0.1}, "b", 3])
    assert created(plan) == ["f-train-0", "f-train-1", "f-train-2"]
    envs = [env_of(plan, f"f-train-{i}") for i in range(3)]
    assert [(e["VCFLOW_ITEM"], e["VCFLOW_INDEX"]) for e in envs] == [
        ('{"lr":0.1}', "0"),
        ("b", "1"),
        ("3", "2"),
    ]
    assert conditions(index)["f-train"] == {
        "phase": "Running",
        "reason": "ForEach",
        "message": "3 items: 3 Pending",
    }
    for i in range(3):
        end(index, f, f"train-{i}", "Completed", {"accuracy": i / 10})
    plan = index.decide(T, now=T0)
    assert created(plan) == ["f-pick"]
    inputs = json.loads(env_of(plan, "f-pick")["VCFLOW_INPUTS"])
    assert inputs == {"train": [{"accuracy": 0.0}, {"accuracy": 0.1}, {"accuracy": 0.2}]}
    assert conditions(index)["f-train"]["phase"] == "Completed"
    mark(index, plan)
    index.observe(job(f, "pick", "Completed"), T0)
    index.give_outputs("f-pick", {}, T0)
    assert index.decide(T, now=T0).phase == FlowPhase.SUCCEED


def test_parallelism_bounds_the_unfinished_items() -> None:
    f = sweep(parallelism=2)
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    plan = started(index, f, list(range(5)))
    assert created(plan) == ["f-train-0", "f-train-1"]
    cond = conditions(index)["f-train-2"]
    assert (cond["phase"], cond["reason"]) == ("Waiting", "Parallelism")
    index.observe(item_job(f, "train-1", "Running"), T0)
    assert created(index.decide(T, now=T0)) == []
    end(index, f, "train-1", "Completed")
    plan = index.decide(T, now=T0)
    assert created(plan) == ["f-train-2"]
    mark(index, plan)
    end(index, f, "train-0", "Completed")
    end(index, f, "train-2", "Completed")
    plan = index.decide(T, now=T0)
    assert created(plan) == ["f-train-3", "f-train-4"]


def test_a_failed_item_fails_the_entry_and_the_rest_is_not_made() -> None:
    f = sweep(parallelism=1)
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    started(index, f, [1, 2, 3])
    end(index, f, "train-0", "Failed")
    plan = index.decide(T, now=T0)
    assert (created(plan), plan.phase) == ([], FlowPhase.FAILED)
    cond = conditions(index)
    assert cond["f-train"]["phase"] == "Failed"
    assert cond["f-train"]["message"].startswith("item train-0 failed; 3 items: ")
    assert (cond["f-train-1"]["phase"], cond["f-train-1"]["reason"]) == ("Skipped", "FanOutFailed")


def test_an_outcome_failed_dependent_of_a_fan_out_runs_when_an_item_fails() -> None:
    f = flow(
        {"name": "prep"},
        after("train", "prep", **{"for": {"items": [1, 2]}}),
        {"name": "alert", "dependsOn": {"targets": ["train"], "outcome": "Failed"}},
        arguments=[],
    )
    index, plan = reconcile.plan(f, T, [job(f, "prep", "Completed")], now=T0)
    index.give_outputs("f-prep", {}, T0)
    plan = index.decide(T, now=T0)
    assert created(plan) == ["f-train-0", "f-train-1"]
    mark(index, plan)
    end(index, f, "train-1", "Failed")
    end(index, f, "train-0", "Completed")
    plan = index.decide(T, now=T0)
    assert created(plan) == ["f-alert"]
    mark(index, plan)
    index.observe(job(f, "alert", "Completed"), T0)
    index.give_outputs("f-alert", {}, T0)
    assert index.decide(T, now=T0).phase == FlowPhase.SUCCEED  # (the failure was handled)


def test_each_item_has_its_own_retries() -> None:
    f = sweep(retryPolicy={"maxRetries": 1, "backoff": {"type": "Constant", "baseDelay": "1s"}})
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    started(index, f, [1, 2])
    end(index, f, "train-1", "Failed")
    assert conditions(index)["f-train-1"]["reason"] == "Backoff"
    assert conditions(index)["f-train"]["phase"] == "Running"
    plan = index.decide(T, now=T0 + timedelta(seconds=5))
    assert plan.replace == ("f-train-1",)


def test_an_empty_list_skips_the_entry_and_a_non_list_fails_it() -> None:
    f = sweep()
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    plan = started(index, f, [])
    assert created(plan) == ["f-pick"]  # (a Skipped entry satisfies its dependents)
    cond = conditions(index)["f-train"]
    assert (cond["phase"], cond["reason"]) == ("Skipped", "NoItems")
    g = sweep()
    index, plan = reconcile.plan(g, T, [], now=T0)
    mark(index, plan)
    plan = started(index, g, {"not": "a list"})  # type: ignore[arg-type]
    assert plan.phase == FlowPhase.FAILED
    cond = conditions(index)["f-train"]
    assert (cond["phase"], cond["reason"]) == ("Failed", "ItemsInvalid")
    assert cond["message"] == "output prep.configs is not a JSON list (it is an object)"


def test_vcflow_retry_reruns_only_the_failed_and_unmade_items() -> None:
    f = sweep(parallelism=2)
    jobs = [
        job(f, "prep", "Completed"),
        item_job(f, "train-0", "Completed"),
        item_job(f, "train-1", "Failed"),
    ]
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    started(index, f, [1, 2, 3])
    end(index, f, "train-0", "Completed")
    end(index, f, "train-1", "Failed")
    assert index.decide(T, now=T0).phase == FlowPhase.FAILED
    asked = request(restarted(index, f))
    at = T0 + timedelta(minutes=1)
    again, plan = reconcile.plan(asked, T, jobs, now=at)
    assert plan.phase == FlowPhase.RUNNING
    assert plan.replace == ("f-train-1",)
    assert created(plan) == ["f-train-2"]  # (the item never made, now made)
    again.forget("f-train-1", "Failed", at)
    mark(again, plan)
    plan = again.decide(T, now=at)
    assert created(plan) == ["f-train-1"]
    assert plan.create[0].metadata.annotations["vcflow.io/attempt"] == "2"
    assert conditions(again)["f-train-0"]["phase"] == "Completed"  # (not run again)


def test_a_restarted_controller_expands_again_and_makes_no_item_twice() -> None:
    f = sweep(parallelism=2)
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    started(index, f, [1, 2, 3, 4])
    end(index, f, "train-0", "Completed", {"n": 0})
    index.decide(T, now=T0)  # (train-2 made)
    stored = restarted(index, f)
    jobs = [
        job(f, "prep", "Completed"),
        item_job(f, "train-0", "Completed"),
        item_job(f, "train-1", "Running"),
        item_job(f, "train-2", "Pending"),
    ]
    again, plan = reconcile.plan(stored, T, jobs, now=T0)
    assert created(plan) == []  # (2 unfinished: parallelism 2)
    end(again, f, "train-1", "Completed")
    assert created(again.decide(T, now=T0)) == ["f-train-3"]


def test_item_vcjobs_made_before_the_status_said_so_are_adopted() -> None:
    f = sweep()
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    index.observe(job(f, "prep", "Completed"), T0)
    index.give_outputs("f-prep", {"configs": [1, 2]}, T0)
    stored = restarted(index, f)  # (written before train was expanded)
    jobs = [job(f, "prep", "Completed"), item_job(f, "train-0", "Running")]
    _again, plan = reconcile.plan(stored, T, jobs, now=T0)
    assert created(plan) == ["f-train-1"]


def second(vcjob: Any) -> Any:
    """The vcjob of attempt 2."""
    vcjob.metadata.annotations["vcflow.io/attempt"] = "2"
    return vcjob


@pytest.mark.parametrize("static", [False, True])
def test_restart_successful_with_the_entry_upstream_holds_the_items_until_it_ran_again(
    static: bool,
) -> None:
    f = sweep(parallelism=1)
    if static:  # (items a restarted controller has again: not the reset prep's outputs)
        f = flow(
            {"name": "prep"},
            after("train", "prep", **{"for": {"items": [1, 2], "parallelism": 1}}),
            after("pick", "train"),
            arguments=[],
        )
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    started(index, f, [1, 2])
    for i in range(2):
        mark(index, index.decide(T, now=T0))
        end(index, f, f"train-{i}", "Completed", {"n": i})
    mark(index, index.decide(T, now=T0))
    index.observe(job(f, "pick", "Failed"), T0)
    assert index.decide(T, now=T0).phase == FlowPhase.FAILED
    jobs = [
        job(f, "prep", "Completed"),
        item_job(f, "train-0", "Completed"),
        item_job(f, "train-1", "Completed"),
        job(f, "pick", "Failed"),
    ]
    asked = request(restarted(index, f), entries=("prep",), restart_successful=True)
    at = T0 + timedelta(minutes=1)
    again, plan = reconcile.plan(asked, T, jobs, now=at)
    assert sorted(plan.replace) == ["f-pick", "f-prep", "f-train-0", "f-train-1"]
    for j in jobs:
        again.forget(j.metadata.name, j.status.state.phase, at)
    plan = again.decide(T, now=at)
    assert created(plan) == ["f-prep"]  # (not the items: train waits for prep again)
    mark(again, plan)
    cond = conditions(again)
    assert (cond["f-train"]["phase"], cond["f-train"]["reason"]) == ("Waiting", "ForEach")
    assert cond["f-train"]["message"].startswith("waiting for all of: prep; 2 items: ")
    assert (cond["f-train-0"]["phase"], cond["f-train-0"]["reason"]) == ("Waiting", "Dependencies")
    if static:  # a restarted controller holds them too
        running = second(job(f, "prep", "Running"))
        held, plan = reconcile.plan(restarted(again, f), T, [running], now=at)
        assert created(plan) == []
        assert {k: v for k, v in conditions(held).items() if "train" in k} == {
            k: v for k, v in cond.items() if "train" in k
        }
    again.observe(second(job(f, "prep", "Completed")), at)
    again.give_outputs("f-prep", {"configs": [7, 8, 9]}, at)  # (not read again)
    plan = again.decide(T, now=at)
    assert created(plan) == ["f-train-0"]  # (parallelism 1)
    assert plan.create[0].metadata.annotations["vcflow.io/attempt"] == "2"
    assert conditions(again)["f-train"]["phase"] == "Running"
    mark(again, plan)
    again.observe(second(item_job(f, "train-0", "Completed")), at)
    again.give_outputs("f-train-0", {"n": 10}, at)
    plan = again.decide(T, now=at)
    assert created(plan) == ["f-train-1"]
    mark(again, plan)
    again.observe(second(item_job(f, "train-1", "Completed")), at)
    again.give_outputs("f-train-1", {"n": 11}, at)
    plan = again.decide(T, now=at)
    assert created(plan) == ["f-pick"]
    inputs = json.loads(env_of(plan, "f-pick")["VCFLOW_INPUTS"])
    assert inputs == {"train": [{"n": 10}, {"n": 11}]}


def test_a_held_entry_skipped_when_its_reset_dependency_fails_makes_no_item() -> None:
    f = flow(
        {"name": "prep"},
        after("train", "prep", **{"for": {"items": [1, 2]}}),
        after("pick", "train"),
        {"name": "alert", "dependsOn": {"targets": ["prep"], "outcome": "Failed"}},
        arguments=[],
    )
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    plan = started(index, f, [])
    assert created(plan) == ["f-train-0", "f-train-1"]
    mark(index, plan)
    for i in range(2):
        end(index, f, f"train-{i}", "Completed")
    mark(index, index.decide(T, now=T0))
    index.observe(job(f, "pick", "Failed"), T0)
    assert index.decide(T, now=T0).phase == FlowPhase.FAILED
    asked = request(restarted(index, f), entries=("prep",), restart_successful=True)
    at = T0 + timedelta(minutes=1)
    jobs = [job(f, "prep", "Completed"), job(f, "pick", "Failed")]
    jobs += [item_job(f, f"train-{i}", "Completed") for i in range(2)]
    again, plan = reconcile.plan(asked, T, jobs, now=at)
    for j in jobs:
        again.forget(j.metadata.name, j.status.state.phase, at)
    plan = again.decide(T, now=at)
    assert created(plan) == ["f-prep"]
    mark(again, plan)
    again.observe(second(job(f, "prep", "Failed")), at)
    plan = again.decide(T, now=at)
    # no item: train Skipped (its dependents go on), its items' new attempts not made
    assert created(plan) == ["f-pick", "f-alert"]
    cond = conditions(again)
    assert (cond["f-train"]["phase"], cond["f-train"]["reason"]) == ("Skipped", "TargetFailed")
    assert [cond[f"f-train-{i}"]["phase"] for i in range(2)] == ["Completed", "Completed"]
    mark(again, plan)
    again.observe(second(job(f, "pick", "Completed")), at)
    again.observe(job(f, "alert", "Completed"), at)  # (Skipped before: its first vcjob)
    for name in ("pick", "alert"):
        again.give_outputs(f"f-{name}", {}, at)
    assert again.decide(T, now=at).phase == FlowPhase.SUCCEED


def test_items_a_retry_makes_due_together_run_in_index_order_under_parallelism() -> None:
    f = flow(
        {"name": "prep"},
        after("train", "prep", **{"for": {"items": [1, 2, 3, 4], "parallelism": 1}}),
        after("pick", "train"),
        arguments=[],
    )
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    index.observe(job(f, "prep", "Completed"), T0)
    for i in range(4):
        mark(index, index.decide(T, now=T0))
        end(index, f, f"train-{i}", "Completed")
    mark(index, index.decide(T, now=T0))
    index.observe(job(f, "pick", "Failed"), T0)
    assert index.decide(T, now=T0).phase == FlowPhase.FAILED
    jobs = [job(f, "prep", "Completed"), job(f, "pick", "Failed")]
    jobs += [item_job(f, f"train-{i}", "Completed") for i in range(4)]
    asked = request(restarted(index, f), entries=("train",), restart_successful=True)
    at = T0 + timedelta(minutes=1)
    again, plan = reconcile.plan(asked, T, jobs, now=at)
    for j in jobs[1:]:
        again.forget(j.metadata.name, j.status.state.phase, at)
    made = []
    for i in range(4):  # one at a time (parallelism 1), item 0 first, then 1, 2, 3
        plan = again.decide(T, now=at)
        made += created(plan)
        mark(again, plan)
        again.observe(second(item_job(f, f"train-{i}", "Completed")), at)
        again.give_outputs(f"f-train-{i}", {}, at)
    assert made == ["f-train-0", "f-train-1", "f-train-2", "f-train-3"]
