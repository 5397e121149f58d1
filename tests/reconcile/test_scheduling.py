"""A flow's `spec.queue` and `spec.priorityClassName` (docs/scheduling.md): every vcjob the
flow creates gets them over its template's; an entry's patch still wins; absent, the vcjob
is what it was. The model keeps them on the wire only when given."""

from __future__ import annotations

from typing import Any

from tests.reconcile.test_flow_index import T0, templates

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import spec_defaults_applied
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import jobs as jobbuild


def make(spec: dict[str, Any], entries: list[dict[str, Any]] | None = None) -> JobFlow:
    flows = entries if entries is not None else [{"name": "a"}]
    return JobFlow.from_dict(
        {"metadata": {"name": "f", "namespace": "default"}, "spec": {"flows": flows, **spec}}
    )


def stored(name: str, **fields: Any) -> JobTemplate:
    """The template as the store holds it: CRD defaults applied (`queue: default`)."""
    out = templates(name)[name]
    assert out.spec is not None
    out.spec = spec_defaults_applied(out.spec.model_copy(update=fields))
    return out


def built(flow: JobFlow, template: JobTemplate, entry: int = 0) -> tuple[Any, Any]:
    job = jobbuild.build_job(flow, flow.flows[entry], template)
    assert job.spec is not None
    return job.spec.queue, job.spec.priority_class_name


def test_the_model_round_trips_and_absent_stays_off_the_wire() -> None:
    given = make({"queue": "team-a", "priorityClassName": "team-a-prod"})
    assert given.spec is not None
    assert (given.spec.queue, given.spec.priority_class_name) == ("team-a", "team-a-prod")
    wire = given.to_dict()["spec"]
    assert (wire["queue"], wire["priorityClassName"]) == ("team-a", "team-a-prod")
    assert JobFlow.from_dict(given.to_dict()) == given
    plain = make({}).to_dict()["spec"]
    assert "queue" not in plain and "priorityClassName" not in plain


def test_the_flow_s_fields_replace_the_template_s() -> None:
    template = stored("a", queue="q1", priority_class_name="low")
    flow = make({"queue": "q2", "priorityClassName": "high"})
    assert built(flow, template) == ("q2", "high")


def test_the_crd_default_queue_is_replaced_too() -> None:
    assert built(make({"queue": "team-a"}), stored("a")) == ("team-a", None)


def test_each_field_alone() -> None:
    template = stored("a", queue="q1", priority_class_name="low")
    assert built(make({"queue": "q2"}), template) == ("q2", "low")
    assert built(make({"priorityClassName": "high"}), template) == ("q1", "high")


def test_absent_leaves_the_template_s() -> None:
    template = stored("a", queue="q1", priority_class_name="low")
    assert built(make({}), template) == ("q1", "low")
    job = jobbuild.build_job(make({}), make({}).flows[0], template)
    assert job.spec == template.spec


def test_an_entry_patch_wins() -> None:
    entries = [
        {"name": "a", "patch": {"jobSpec": {"queue": "q3", "priorityClassName": "urgent"}}},
        {"name": "b", "patch": {"jobSpec": {"queue": "q3"}}},
        {"name": "c"},
    ]
    flow = make({"queue": "q2", "priorityClassName": "high"}, entries)
    template = stored("a", queue="q1", priority_class_name="low")
    assert built(flow, template, 0) == ("q3", "urgent")
    assert built(flow, template, 1) == ("q3", "high")
    assert built(flow, template, 2) == ("q2", "high")


def test_the_template_is_not_changed() -> None:
    template = stored("a", queue="q1")
    built(make({"queue": "q2"}), template)
    assert template.spec is not None and template.spec.queue == "q1"


def test_every_vcjob_the_flow_creates_gets_them() -> None:
    entries = [
        {"name": "a"},
        {"name": "b", "for": {"items": [1, 2]}},
        {"name": "c", "template": "a"},
    ]
    flow = make({"queue": "team-a", "priorityClassName": "team-a-prod"}, entries)
    given = {"a": stored("a"), "b": stored("b")}
    _, plan = reconcile.plan(flow, given, [], now=T0)
    made = {job.name: job.spec for job in plan.create}
    assert sorted(made) == ["f-a", "f-b-0", "f-b-1", "f-c"]
    for spec in made.values():
        assert spec is not None
        assert (spec.queue, spec.priority_class_name) == ("team-a", "team-a-prod")
