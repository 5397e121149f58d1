"""Resource models: wire names, defaults, unknown fields kept, exact dumps, convenience views."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from vcflow.api import phases
from vcflow.api.jobflow import JobFlow, Patch
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobSpec, VCJob, spec_defaults_applied

FLOW_API = "flow.volcano.sh/v1alpha1"


def jobflow(spec: dict[str, Any], **meta: Any) -> JobFlow:
    return JobFlow.from_dict(
        {"apiVersion": FLOW_API, "kind": "JobFlow", "metadata": {"name": "f", **meta}, "spec": spec}
    )


def test_flow_views_and_defaults() -> None:
    flow = jobflow(
        {
            "flows": [
                {"name": "a"},
                {"name": "b", "dependsOn": {"targets": ["a"], "strategy": "any"}},
                {"name": "c", "dependsOn": {}},
            ]
        }
    )
    a, b, c = flow.flows
    assert (a.targets, b.targets, c.targets) == ([], ["a"], [])
    assert (a.strategy, b.strategy) == (
        phases.DependencyStrategy.ALL,
        phases.DependencyStrategy.ANY,
    )
    assert flow.retain_policy is phases.RetainPolicy.RETAIN
    assert flow.phase == ""
    assert flow.namespace == "default"
    assert flow.key == "default/f"


def test_flow_without_spec_has_no_flows() -> None:
    flow = JobFlow.from_dict({"apiVersion": FLOW_API, "kind": "JobFlow", "metadata": {"name": "f"}})
    assert flow.flows == []
    assert flow.to_dict() == {"apiVersion": FLOW_API, "kind": "JobFlow", "metadata": {"name": "f"}}


def test_retain_policy_and_status_phase_are_volcano_strings() -> None:
    flow = JobFlow.from_dict(
        {
            "apiVersion": FLOW_API,
            "kind": "JobFlow",
            "metadata": {"name": "f", "namespace": "ns"},
            "spec": {"jobRetainPolicy": "delete"},
            "status": {"state": {"phase": "Succeed"}, "unKnowJobs": ["x"]},
        }
    )
    assert flow.retain_policy is phases.RetainPolicy.DELETE
    assert flow.phase == "Succeed"
    assert flow.status is not None and flow.status.un_know_jobs == ["x"]
    assert flow.to_dict()["status"] == {"state": {"phase": "Succeed"}, "unKnowJobs": ["x"]}


def test_wrong_kind_or_version_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError):
        JobFlow.from_dict({"apiVersion": "v1", "kind": "JobFlow"})
    with pytest.raises(pydantic.ValidationError):
        JobTemplate.from_dict({"apiVersion": FLOW_API, "kind": "JobFlow"})


def test_types_are_strict() -> None:
    with pytest.raises(pydantic.ValidationError):
        jobflow({"flows": [{"name": 1}]})
    with pytest.raises(pydantic.ValidationError):
        JobSpec.from_dict({"minAvailable": "1"})


@pytest.mark.parametrize("spelling", ["jobSpec", "spec"])
def test_patch_spellings_parse_to_job_spec_and_dump_as_job_spec(spelling: str) -> None:
    patch = Patch.from_dict({spelling: {"minAvailable": 2}})
    assert patch.job_spec is not None and patch.job_spec.min_available == 2
    assert patch.to_dict() == {"jobSpec": {"minAvailable": 2}}


def test_patch_refuses_both_spellings() -> None:
    with pytest.raises(pydantic.ValidationError, match="not both"):
        Patch.from_dict({"spec": {}, "jobSpec": {}})


def test_unknown_fields_are_kept_everywhere() -> None:
    data = {
        "apiVersion": FLOW_API,
        "kind": "JobTemplate",
        "metadata": {"name": "t", "uid": "u-1", "somethingNew": 1},
        "spec": {
            "newTopLevel": {"x": [1, 2]},
            "tasks": [
                {
                    "name": "t",
                    "newTaskField": True,
                    "template": {
                        "spec": {
                            "hostNetwork": True,
                            "containers": [{"name": "c", "stdin": True, "image": "busybox"}],
                        }
                    },
                }
            ],
        },
        "futureTopLevel": "kept",
    }
    template = JobTemplate.from_dict(data)
    assert template.to_dict() == data
    assert template.spec is not None
    assert template.spec.model_extra == {"newTopLevel": {"x": [1, 2]}}


def test_to_dict_dumps_only_what_was_given_or_set() -> None:
    template = JobTemplate.from_dict(
        {"apiVersion": FLOW_API, "kind": "JobTemplate", "metadata": {"name": "t"}, "spec": {}}
    )
    assert template.to_dict()["spec"] == {}
    assert template.spec is not None
    template.spec.queue = "batch"
    assert template.to_dict()["spec"] == {"queue": "batch"}


def test_clone_is_deep_and_keeps_set_fields() -> None:
    flow = jobflow({"flows": [{"name": "a", "dependsOn": {"targets": ["x"]}}]})
    copy = flow.clone()
    copy.flows[0].targets.append("y")
    assert flow.flows[0].targets == ["x"]
    assert copy.to_dict()["spec"] == {
        "flows": [{"name": "a", "dependsOn": {"targets": ["x", "y"]}}]
    }


def test_spec_defaults_applied_is_a_copy_with_crd_defaults() -> None:
    spec = JobSpec.from_dict({"tasks": []})
    filled = spec_defaults_applied(spec)
    assert (filled.queue, filled.max_retry) == ("default", 3)
    assert spec.to_dict() == {"tasks": []}
    kept = spec_defaults_applied(JobSpec.from_dict({"queue": "q", "maxRetry": 0}))
    assert (kept.queue, kept.max_retry) == ("q", 0)


def test_vcjob_phase() -> None:
    job = VCJob.from_dict(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "f-a"},
            "status": {"state": {"phase": "Running"}},
        }
    )
    assert job.phase == "Running"
    bare = VCJob.from_dict({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job"})
    assert bare.phase == ""


def test_metadata_controller_ref() -> None:
    flow = jobflow(
        {},
        ownerReferences=[
            {"apiVersion": "v1", "kind": "X", "name": "other"},
            {"apiVersion": FLOW_API, "kind": "JobFlow", "name": "owner", "controller": True},
        ],
    )
    ref = flow.metadata.controller_ref()
    assert ref is not None and ref.name == "owner"
