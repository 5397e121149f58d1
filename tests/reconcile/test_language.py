"""The flow language in the pure index (docs/flow-features.md part II): outputs handed on
and kept in the status, `when` and `switch` decided once the dependencies are met, exit
handlers after success, failure, a stop and the flow's deadline, and a restarted controller
that resumes with the same outputs."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.phases import FlowPhase
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import outputs as reading

from .test_flow_features import attempt_job, request, restarted
from .test_flow_index import T0, conditions, created, job, mark, template, templates

T = templates(
    "prep", "train", "evaluate", "deploy", "serve-gpu", "serve-cpu", "notify", "a", "b", "c", "bye"
)


def flow(*entries: dict[str, Any], **spec: Any) -> JobFlow:
    return JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {
                "name": "f",
                "namespace": "default",
                "uid": "uid-flow-f",
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {"flows": list(entries), **spec},
        }
    )


def after(name: str, *targets: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "dependsOn": {"targets": list(targets)}, **fields}


def env_of(plan: reconcile.Plan, name: str) -> dict[str, str]:
    job_ = next(j for j in plan.create if j.name == name)
    containers = job_.to_dict()["spec"]["tasks"][0]["template"]["spec"]["containers"]
    return {v["name"]: v["value"] for v in containers[0].get("env", [])}


def complete(index: reconcile.FlowIndex, f: JobFlow, name: str, outputs: Any) -> reconcile.Plan:
    """The entry's vcjob Completed; the controller reads its outputs, then decides."""
    index.observe(job(f, name, "Completed"), T0)
    assert index.outputs_to_read() == [f"f-{name}"]
    index.give_outputs(f"f-{name}", outputs, T0)
    plan = index.decide(T, now=T0)
    mark(index, plan)
    return plan


DEPLOY = "double(outputs.evaluate.accuracy) >= double(args.threshold)"


def pipeline(threshold: str) -> JobFlow:
    return flow(
        {"name": "evaluate"},
        after("deploy", "evaluate", when=DEPLOY),
        after(
            "serve",
            "evaluate",
            switch=[
                {"when": "args.target == 'gpu'", "template": "serve-gpu"},
                {"template": "serve-cpu"},
            ],
        ),
        arguments=[{"name": "threshold", "value": threshold}, {"name": "target", "value": "cpu"}],
    )


def test_outputs_reach_the_successor_and_when_true_creates_it() -> None:
    f = pipeline("0.9")
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    plan = complete(index, f, "evaluate", {"accuracy": 0.93})
    assert created(plan) == ["f-deploy", "f-serve"]
    assert json.loads(env_of(plan, "f-deploy")["VCFLOW_INPUTS"]) == {"evaluate": {"accuracy": 0.93}}
    serve = next(j for j in plan.create if j.name == "f-serve")
    assert serve.metadata.labels["volcano.sh/createdByJobTemplate"] == "default.serve-cpu"
    assert serve.metadata.annotations["vcflow.io/switch-case"] == "1"
    items = {i["name"]: i for i in index.status_data()["jobStatusList"]}
    assert items["f-evaluate"]["outputs"] == {"accuracy": 0.93}
    assert (items["f-serve"]["template"], items["f-serve"]["switchCase"]) == ("serve-cpu", 1)


def test_when_false_skips_with_the_expression_and_the_flow_succeeds() -> None:
    f = pipeline("2")
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    plan = complete(index, f, "evaluate", {"accuracy": 0.93})
    assert created(plan) == ["f-serve"]
    cond = conditions(index)["f-deploy"]
    assert (cond["phase"], cond["reason"]) == ("Skipped", "WhenFalse")
    assert cond["message"] == (
        f'when false: {DEPLOY} (with args.threshold="2", outputs.evaluate={{"accuracy":0.93}})'
    )
    index.observe(job(f, "serve", "Completed"), T0)
    index.give_outputs("f-serve", {}, T0)
    assert index.decide(T, now=T0).phase == FlowPhase.SUCCEED


def test_a_when_that_cannot_be_evaluated_fails_the_entry_and_the_flow() -> None:
    f = pipeline("0.9")
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    plan = complete(index, f, "evaluate", {"loss": 0.1})  # no accuracy
    assert created(plan) == []  # (the flow failed: serve is not created either)
    cond = conditions(index)["f-deploy"]
    assert (cond["phase"], cond["reason"]) == ("Failed", "WhenError")
    assert "accuracy" in cond["message"]
    assert plan.phase == FlowPhase.FAILED
    assert "f-deploy" in index.status_data()["failedJobs"]


def test_no_case_matched_without_a_default_skips() -> None:
    f = flow(
        {"name": "a"},
        after("b", "a", switch=[{"when": "outputs.a.n > 1", "template": "serve-gpu"}]),
        arguments=[],
    )
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    plan = complete(index, f, "a", {"n": 1})
    assert created(plan) == []
    cond = conditions(index)["f-b"]
    assert (cond["phase"], cond["reason"]) == ("Skipped", "NoCaseMatched")
    assert plan.phase == FlowPhase.SUCCEED


def test_invalid_outputs_fail_the_entry_although_its_vcjob_completed() -> None:
    f = pipeline("0.9")
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    bad = reading.Failure(reading.OUTPUT_INVALID, "pod f-evaluate-main-0: not a JSON object")
    plan = complete(index, f, "evaluate", bad)
    assert plan.phase == FlowPhase.FAILED
    cond = conditions(index)["f-evaluate"]
    assert (cond["phase"], cond["reason"]) == ("Failed", "OutputInvalid")
    # the vcjob seen again (a resync) does not turn the entry Completed
    index.observe(job(f, "evaluate", "Completed"), T0 + timedelta(seconds=1))
    assert conditions(index)["f-evaluate"]["phase"] == "Failed"


def test_a_restarted_controller_keeps_the_outputs_and_decides_the_same() -> None:
    f = pipeline("0.9")
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    index.observe(job(f, "evaluate", "Completed"), T0)
    index.give_outputs("f-evaluate", {"accuracy": 0.95}, T0)
    # the status is written before the dependents are decided; the controller restarts
    stored = restarted(index, f)
    again, plan = reconcile.plan(stored, T, [job(f, "evaluate", "Completed")], now=T0)
    assert again.outputs_to_read() == []  # (read from the status, not the pods)
    assert created(plan) == ["f-deploy", "f-serve"]
    assert json.loads(env_of(plan, "f-deploy")["VCFLOW_INPUTS"])["evaluate"] == {"accuracy": 0.95}


def handlers_flow(**spec: Any) -> JobFlow:
    return flow({"name": "a"}, after("b", "a"), {"name": "notify"}, onExit=["notify"], **spec)


def test_an_exit_handler_runs_after_success_with_the_phase() -> None:
    f = handlers_flow()
    index, plan = reconcile.plan(f, T, [], now=T0)
    assert created(plan) == ["f-a"]  # (notify waits for every other entry)
    assert conditions(index)["f-notify"]["message"] == (
        "an exit handler (spec.onExit): it runs once every other entry has ended"
    )
    mark(index, plan)
    complete(index, f, "a", {})
    index.observe(job(f, "b", "Completed"), T0)
    index.give_outputs("f-b", {}, T0)
    plan = index.decide(T, now=T0)
    assert created(plan) == ["f-notify"]
    assert env_of(plan, "f-notify")["VCFLOW_FLOW_PHASE"] == "Succeed"
    assert plan.phase == FlowPhase.RUNNING
    assert index.status_data()["state"]["reason"] == "ExitHandlers"
    mark(index, plan)
    index.observe(job(f, "notify", "Completed"), T0)
    assert index.decide(T, now=T0).phase == FlowPhase.SUCCEED


def test_an_exit_handler_runs_after_a_failure_and_its_own_failure_fails_the_flow() -> None:
    f = handlers_flow()
    index, plan = reconcile.plan(f, T, [], now=T0)
    mark(index, plan)
    index.observe(job(f, "a", "Failed"), T0)
    plan = index.decide(T, now=T0)
    assert created(plan) == ["f-notify"]
    assert env_of(plan, "f-notify")["VCFLOW_FLOW_PHASE"] == "Failed"
    mark(index, plan)
    index.observe(job(f, "notify", "Completed"), T0)
    assert index.decide(T, now=T0).phase == FlowPhase.FAILED
    # a success whose exit handler fails is Failed
    g = handlers_flow()
    index, plan = reconcile.plan(g, T, [job(g, "a", "Completed"), job(g, "b", "Completed")], now=T0)
    assert created(plan) == ["f-notify"]
    mark(index, plan)
    index.observe(job(g, "notify", "Failed"), T0)
    assert index.decide(T, now=T0).phase == FlowPhase.FAILED


def test_a_failed_flow_waits_for_its_running_jobs_before_the_handlers() -> None:
    f = flow({"name": "a"}, {"name": "b"}, {"name": "notify"}, onExit=["notify"])
    index, plan = reconcile.plan(f, T, [job(f, "a", "Failed"), job(f, "b", "Running")], now=T0)
    assert created(plan) == []
    assert plan.phase == FlowPhase.RUNNING
    index.observe(job(f, "b", "Completed"), T0)
    plan = index.decide(T, now=T0)
    assert created(plan) == ["f-notify"]


def test_a_stop_deletes_the_jobs_then_runs_the_handlers_and_ends_failed() -> None:
    f = handlers_flow()
    index, plan = reconcile.plan(f, T, [job(f, "a", "Running")], now=T0)
    stopped = JobFlow.from_dict(f.to_dict())
    stopped.metadata.annotations[reconcile.STOP_ANNOTATION] = "true"
    index.flow = stopped
    plan = index.decide(T, now=T0)
    assert (plan.delete, plan.phase) == (("f-a",), FlowPhase.TERMINATING)
    index.forget("f-a", "Running", T0)
    plan = index.decide(T, now=T0)
    assert created(plan) == ["f-notify"]
    assert env_of(plan, "f-notify")["VCFLOW_FLOW_PHASE"] == "Failed"
    mark(index, plan)
    index.observe(job(f, "notify", "Running"), T0)
    assert index.decide(T, now=T0).delete == ()  # (the handler is not stopped)
    index.observe(job(f, "notify", "Completed"), T0)
    assert index.decide(T, now=T0).phase == FlowPhase.FAILED


def test_the_flow_deadline_runs_the_handlers() -> None:
    f = handlers_flow(activeDeadlineSeconds=60)
    index, plan = reconcile.plan(f, T, [job(f, "a", "Running")], now=T0)
    plan = index.decide(T, now=T0 + timedelta(seconds=61))
    assert plan.delete == ("f-a",)
    index.forget("f-a", "Running", T0 + timedelta(seconds=61))
    plan = index.decide(T, now=T0 + timedelta(seconds=62))
    assert created(plan) == ["f-notify"]
    mark(index, plan)
    index.observe(job(f, "notify", "Completed"), T0 + timedelta(seconds=63))
    plan = index.decide(T, now=T0 + timedelta(seconds=63))
    assert plan.phase == FlowPhase.FAILED
    assert index.status_data()["state"]["reason"] == "DeadlineExceeded"


def test_the_flow_outputs_together_are_bounded() -> None:
    f = flow({"name": "a"}, {"name": "b"}, arguments=[])
    index, _plan = reconcile.plan(
        f, T, [job(f, "a", "Completed"), job(f, "b", "Completed")], now=T0
    )
    big = {"x": "y" * (reading.FLOW_MAX // 2)}
    index.give_outputs("f-a", big, T0)
    index.give_outputs("f-b", big, T0)
    assert conditions(index)["f-a"]["phase"] == "Completed"
    cond = conditions(index)["f-b"]
    assert (cond["phase"], cond["reason"]) == ("Failed", "OutputTooLarge")
    assert str(reading.FLOW_MAX) in cond["message"]


def substituting(image: str, cpu: str = "1") -> dict[str, Any]:
    out = dict(T)
    t = template("b").to_dict()
    container = t["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    container["image"] = image
    container["resources"] = {"limits": {"cpu": cpu}}
    out["b"] = JobTemplate.from_dict(t)
    return out


def test_references_in_the_template_are_replaced_when_the_vcjob_is_built() -> None:
    f = flow({"name": "a"}, after("b", "a"), arguments=[{"name": "tag", "value": "3.11"}])
    given = substituting("python:${{ args.tag }}-${{ outputs.a.flavour }}", "${{ outputs.a.cpus }}")
    index, plan = reconcile.plan(f, given, [job(f, "a", "Completed")], now=T0)
    index.give_outputs("f-a", {"flavour": "slim", "cpus": 2}, T0)
    plan = index.decide(given, now=T0)
    spec = plan.create[0].to_dict()["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert (spec["image"], spec["resources"]["limits"]["cpu"]) == ("python:3.11-slim", "2")


def test_a_reference_that_cannot_be_resolved_fails_the_entry() -> None:
    f = flow({"name": "a"}, after("b", "a"), arguments=[])
    given = substituting("python:${{ outputs.a.flavour }}")
    index, plan = reconcile.plan(f, given, [job(f, "a", "Completed")], now=T0)
    index.give_outputs("f-a", {"n": 1}, T0)
    plan = index.decide(given, now=T0)
    assert (created(plan), plan.phase) == ([], FlowPhase.FAILED)
    cond = conditions(index)["f-b"]
    assert (cond["phase"], cond["reason"]) == ("Failed", "SubstitutionFailed")
    assert "a's outputs have no 'flavour'" in cond["message"]
    # a quantity the reference made is checked too
    g = flow({"name": "a"}, after("b", "a"), arguments=[])
    given = substituting("x", "${{ outputs.a.cpus }}")
    index, plan = reconcile.plan(g, given, [job(g, "a", "Completed")], now=T0)
    index.give_outputs("f-a", {"cpus": "lots"}, T0)
    index.decide(given, now=T0)
    assert "limits[cpu] 'lots' is not a quantity" in conditions(index)["f-b"]["message"]


def test_a_flow_without_the_language_is_never_substituted() -> None:
    f = flow({"name": "a"}, after("b", "a"))
    given = substituting("python:${{ args.tag }}")
    _index, plan = reconcile.plan(f, given, [job(f, "a", "Completed")], now=T0)
    spec = plan.create[0].to_dict()["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert spec["image"] == "python:${{ args.tag }}"


def test_vcflow_retry_runs_a_failed_exit_handler_again() -> None:
    f = handlers_flow()
    jobs = [job(f, "a", "Completed"), job(f, "b", "Completed"), job(f, "notify", "Failed")]
    index, plan = reconcile.plan(f, T, jobs, now=T0)
    assert plan.phase == FlowPhase.FAILED
    asked = request(restarted(index, f))
    at = T0 + timedelta(minutes=1)
    again, plan = reconcile.plan(asked, T, jobs, now=at)
    assert (plan.phase, plan.replace) == (FlowPhase.RUNNING, ("f-notify",))
    again.forget("f-notify", "Failed", at)
    plan = again.decide(T, now=at)
    assert created(plan) == ["f-notify"]
    assert env_of(plan, "f-notify")["VCFLOW_FLOW_PHASE"] == "Succeed"
    mark(again, plan)
    again.observe(attempt_job(f, "notify", "Completed", 2), at)
    assert again.decide(T, now=at).phase == FlowPhase.SUCCEED


def test_a_when_error_with_nothing_running_starts_the_exit_handlers_at_once() -> None:
    f = flow(
        {"name": "a"},
        after("b", "a", when="outputs.a.missing == 1"),
        after("c", "b"),
        {"name": "bye"},
        onExit=["bye"],
    )
    index, plan = reconcile.plan(f, T, [], now=T0)
    assert created(plan) == ["f-a"]
    mark(index, plan)
    plan = complete(index, f, "a", {"n": 1})
    assert created(plan) == ["f-bye"]
    assert env_of(plan, "f-bye")["VCFLOW_FLOW_PHASE"] == "Failed"
    assert conditions(index)["f-b"]["reason"] == "WhenError"
