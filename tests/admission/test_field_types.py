"""Types, integer ranges and quantities in a vcjob spec (`vcflow.admission.fieldtypes`, the
container rules of `containers`), by Volcano's Job CRD: what the API server would refuse is
an admission error, worded as its schema errors, so nothing that would break the runtime
later (a pod the pod builder refuses, a timer that overflows) gets past `validate`."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from vcflow.admission.jobtemplate import validate_job_spec
from vcflow.admission.review import Context, errors_only, review
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import JobSpec

from .test_unknown_fields import RICH_POD, job_spec, template

INT32_MAX = 2**31 - 1
BIG = 10**18
POD = "spec.tasks[0].template.spec"
MAIN = f"{POD}.containers[0]"


def errors(spec: dict[str, Any]) -> list[FieldError]:
    return errors_only(validate_job_spec(JobSpec.from_dict(spec)))


def pod_with(**fields: Any) -> dict[str, Any]:
    pod = copy.deepcopy(RICH_POD)
    pod["spec"].update(fields)
    return job_spec(pod)


def main_with(**fields: Any) -> dict[str, Any]:
    pod = copy.deepcopy(RICH_POD)
    pod["spec"]["containers"][0].update(fields)
    return job_spec(pod)


def only(found: list[FieldError]) -> FieldError:
    assert len(found) == 1, [str(e) for e in found]
    return found[0]


def test_a_rich_valid_spec_has_no_error() -> None:
    assert errors(job_spec()) == []


def test_a_pod_field_of_another_type_is_the_api_servers_type_error() -> None:
    # passed validate and crashed `vcflow run` (the pod builder's strict PodSpec) before
    found = only(errors(pod_with(priorityClassName=5)))
    assert found.path == f"{POD}.priorityClassName"
    assert found.message == (
        f'Invalid value: "integer": {POD}.priorityClassName in body must be of type string: '
        '"integer"'
    )


@pytest.mark.parametrize(
    ("spec", "path", "bound"),
    [
        (job_spec(ttlSecondsAfterFinished=BIG), "spec.ttlSecondsAfterFinished", INT32_MAX),
        (job_spec(maxRetry=2**31), "spec.maxRetry", INT32_MAX),
        (job_spec(minAvailable=2**40), "spec.minAvailable", INT32_MAX),
        (pod_with(activeDeadlineSeconds=BIG), f"{POD}.activeDeadlineSeconds", INT32_MAX),
        (
            pod_with(terminationGracePeriodSeconds=BIG),
            f"{POD}.terminationGracePeriodSeconds",
            INT32_MAX,  # int64 in Kubernetes; seconds are bounded at int32 here
        ),
        (pod_with(priority=2**31), f"{POD}.priority", INT32_MAX),
        (
            pod_with(securityContext={"runAsUser": 2**63}),
            f"{POD}.securityContext.runAsUser",
            2**63 - 1,
        ),
    ],
    ids=["ttl", "maxRetry", "minAvailable", "deadline", "grace", "priority", "int64"],
)
def test_integers_keep_the_range_of_their_kubernetes_type(
    spec: dict[str, Any], path: str, bound: int
) -> None:
    found = [e for e in errors(spec) if e.path == path and "in body" in e.message]
    assert [e.message for e in found] == [
        f"Invalid value: {spec_value(spec, path)}: {path} in body should be less than or "
        f"equal to {bound}"
    ]


def spec_value(spec: dict[str, Any], path: str) -> Any:
    node: Any = {"spec": spec}
    for part in path.replace("[0]", ".0").split("."):
        node = node[int(part)] if part.isdigit() else node[part]
    return node


def test_task_replicas_past_int32_are_refused() -> None:
    spec = job_spec()
    spec["tasks"][0]["replicas"] = 2**31
    assert "spec.tasks[0].replicas" in [e.path for e in errors(spec)]


def test_active_deadline_is_kubernetes_range() -> None:
    found = only(errors(pod_with(activeDeadlineSeconds=0)))
    assert found.path == f"{POD}.activeDeadlineSeconds"
    assert found.message.endswith("Invalid value: 0: must be between 1 and 2147483647, inclusive")


@pytest.mark.parametrize("value", ["abc", "1Zi", "12 cores", ""])
def test_a_quantity_kubernetes_cannot_parse_is_the_crd_pattern_error(value: str) -> None:
    found = only(errors(main_with(resources={"requests": {"cpu": value}})))
    assert found.path == f"{MAIN}.resources.requests[cpu]"
    assert found.message.startswith(f'Invalid value: "{value}": {found.path} in body should match')


@pytest.mark.parametrize("value", ["1e309", "8Ei", 10**20])
def test_a_quantity_past_2_63_is_refused(value: str | int) -> None:
    found = only(errors(main_with(resources={"limits": {"memory": value}})))
    assert found.path == f"{MAIN}.resources.limits[memory]"
    assert "quantities may not be larger than 2^63-1" in found.message


def test_a_negative_resource_is_kubernetes_error() -> None:
    found = only(errors(main_with(resources={"requests": {"cpu": "-4"}})))
    assert found.path == f"{MAIN}.resources.requests[cpu]"
    assert found.message.endswith('Invalid value: "-4": must be greater than or equal to 0')


def test_a_request_above_its_limit_is_refused() -> None:
    resources = {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}
    found = only(errors(main_with(resources=resources)))
    assert found.message.endswith('"2Gi": must be less than or equal to memory limit of 1Gi')


def test_quantities_in_volumes_are_checked_too() -> None:
    pod = copy.deepcopy(RICH_POD)
    pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] = "lots"
    found = only(errors(job_spec(pod)))
    assert found.path == f"{POD}.volumes[0].emptyDir.sizeLimit"


@pytest.mark.parametrize("timeout", ["abc", "10", "1d", "2562048h"])
def test_a_policy_timeout_is_a_go_duration(timeout: str) -> None:
    policies = [{"event": "PodFailed", "action": "RestartJob", "timeout": timeout}]
    found = only(errors(job_spec(policies=policies)))
    assert found.path == "spec.policies[0].timeout"
    assert found.message == f'Invalid value: "{timeout}": time: invalid duration "{timeout}"'


def test_a_good_policy_timeout_passes() -> None:
    policies = [{"event": "PodFailed", "action": "RestartJob", "timeout": "1h30m"}]
    assert errors(job_spec(policies=policies)) == []


def test_a_vcjob_a_template_and_a_flow_patch_are_all_checked() -> None:
    assert errors_only(review(template(pod_with(priorityClassName=5))))
    flow = JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "f"},
            "spec": {"flows": [{"name": "a", "patch": {"jobSpec": {"maxRetry": 2**31}}}]},
        }
    )
    found = errors_only(review(flow, context=Context(templates={"a": template(job_spec())})))
    assert [e.path for e in found] == ["spec.flows[0].patch.jobSpec.maxRetry"]


def test_a_templates_quantity_may_be_one_flow_reference_and_a_vcjobs_may_not() -> None:
    """docs/flow-features.md section 15: the flow replaces it when it builds the vcjob."""
    spec = JobSpec.from_dict(main_with(resources={"limits": {"cpu": "${{ args.cpu }}"}}))
    assert errors_only(validate_job_spec(spec, references=True)) == []
    found = only(errors_only(validate_job_spec(spec)))
    assert found.path == f"{MAIN}.resources.limits[cpu]"
    half = JobSpec.from_dict(main_with(resources={"limits": {"cpu": "${{ args.cpu }}m"}}))
    assert only(errors_only(validate_job_spec(half, references=True))).path == found.path
