"""An entry's `template` (docs/flow-features.md section 16): the vcjob is built from the named
JobTemplate, keeps the name `<flow>-<entry>`, and its createdByJobTemplate label and
annotation name the template; a missing one makes the entry wait under the template's name
(`template_waiters`), and its creation resumes every entry that waits for it."""

from __future__ import annotations

import pytest
from tests.reconcile.test_flow_index import T0, make_flow, mark, templates

from vcflow.api import names
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import jobs as jobbuild


def test_two_entries_share_a_template_each_its_own_vcjob() -> None:
    flow = make_flow(
        [{"name": "a", "template": "shared"}, {"name": "b", "template": "shared"}, {"name": "c"}]
    )
    _, plan = reconcile.plan(flow, templates("shared", "c"), [], now=T0)
    by_name = {job.name: job for job in plan.create}
    assert list(by_name) == ["f-a", "f-b", "f-c"]
    for job, template in (("f-a", "shared"), ("f-b", "shared"), ("f-c", "c")):
        meta = by_name[job].metadata
        assert meta.labels[names.LABEL_CREATED_BY_TEMPLATE] == f"default.{template}"
        assert meta.annotations[names.LABEL_CREATED_BY_TEMPLATE] == f"default.{template}"


def test_the_template_is_the_named_one_not_the_entry_s() -> None:
    flow = make_flow([{"name": "a", "template": "other"}])
    given = templates("a", "other")
    assert given["other"].spec is not None and given["other"].spec.tasks is not None
    given["other"].spec.tasks[0].name = "from-other"
    job = jobbuild.build_job(flow, flow.flows[0], given["other"])
    assert job.spec is not None and job.spec.tasks is not None
    assert job.spec.tasks[0].name == "from-other"


def test_a_missing_template_waits_under_its_name_and_resumes_every_user() -> None:
    flow = make_flow([{"name": "a", "template": "later"}, {"name": "b", "template": "later"}])
    index, plan = reconcile.plan(flow, templates("a", "b"), [], now=T0)
    assert plan.create == ()
    assert index.template_waiters == {"later": {"a", "b"}}
    condition = index.status().to_dict()["conditions"]["f-a"]
    assert condition["reason"] == reconcile.TEMPLATE_NOT_FOUND
    assert condition["message"] == 'jobtemplate.flow.volcano.sh "later" not found'
    index.template_appeared("a")  # (the entry's own name: nobody waits for it)
    assert index.template_waiters == {"later": {"a", "b"}}
    index.template_appeared("later")
    plan = index.decide(templates("later"), now=T0)
    assert [job.name for job in plan.create] == ["f-a", "f-b"]
    mark(index, plan)
    assert index.template_waiters == {}


@pytest.mark.optimisation
def test_vcflow_args_is_found_once_per_flow(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wide flow's vcjobs share one `VCFLOW_ARGS`: found once (`FlowIndex.args_env`),
    not once per vcjob (each time O(entries))."""
    calls: list[str] = []
    real = jobbuild.args_env
    monkeypatch.setattr(jobbuild, "args_env", lambda flow: calls.append(flow.name) or real(flow))
    entries = [{"name": f"e{i}", "template": "shared"} for i in range(100)]
    flow = make_flow(entries)
    _, plan = reconcile.plan(flow, templates("shared"), [], now=T0)
    assert len(plan.create) == 100
    assert calls == ["f"]
    env = plan.create[0].to_dict()["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"]
    assert env == [
        {"name": "VCFLOW_ARGS", "value": "{}"},
        {"name": "VCFLOW_INPUTS", "value": "{}"},
        {"name": "VCFLOW_OUTPUTS", "value": "/dev/termination-log"},
    ]
