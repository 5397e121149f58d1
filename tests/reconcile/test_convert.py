"""`reconcile.convert` alone: a vcjob as a JobTemplate and back, on plain data."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from vcflow.reconcile import convert
from vcflow.reconcile.convert import Target

SPEC: dict[str, Any] = {
    "minAvailable": 1,
    "queue": "default",
    "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}],
    "futureField": {"kept": True},  # a field vcflow does not model
}


def live_vcjob() -> dict[str, Any]:
    """A vcjob as `vcflow get vcjob -o yaml` (or kubectl, from a cluster) prints it."""
    stamps = {
        "volcano.sh/createdByJobTemplate": "team.a",
        "volcano.sh/createdByJobFlow": "team.test",
    }
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": "test-a",
            "namespace": "team",
            "labels": {**stamps, "owner": "ana"},
            "annotations": {
                **stamps,
                "vcflow.io/attempt": "2",
                "vcflow.io/switch-case": "1",
                "vcflow.io/working-dir": "/home/ana",
                "vcflow.io/flow-created": "2026-12-01T00:00:00Z",
                "vcflow.io/rank": "3",
                "vcflow.io/handover": "{}",
                "vcflow.io/deadline-exceeded": "2026-12-01T00:00:00Z",
                "vcflow.io/unschedulable": "Unschedulable: no",
                "kubectl.kubernetes.io/last-applied-configuration": "{}",
                "vcflow.io/network": "host",  # the user's, read by the runtime
                "note": "keep me",
            },
            "uid": "u-1",
            "resourceVersion": "7",
            "generation": 1,
            "creationTimestamp": "2026-12-01T00:00:00Z",
            "deletionTimestamp": "2026-12-01T00:01:00Z",
            "deletionGracePeriodSeconds": 0,
            "managedFields": [{"manager": "vcflow"}],
            "ownerReferences": [{"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow"}],
            "finalizers": ["example.com/x"],
            "selfLink": "/apis/x",
        },
        "spec": copy.deepcopy(SPEC),
        "status": {"state": {"phase": "Running"}, "running": 1},
    }


def test_a_live_vcjob_becomes_a_clean_template() -> None:
    made = convert.converted(live_vcjob(), Target.JOBTEMPLATE)
    assert made == {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {
            "name": "test-a",
            "namespace": "team",
            "labels": {"owner": "ana"},
            "annotations": {"vcflow.io/network": "host", "note": "keep me"},
        },
        "spec": SPEC,
    }


def test_the_input_is_not_changed() -> None:
    job = live_vcjob()
    convert.converted(job, Target.JOBTEMPLATE, name="other")
    assert job == live_vcjob()


def test_a_template_becomes_a_vcjob_named_as_asked() -> None:
    template: dict[str, Any] = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": "a", "labels": {"team": "x"}},
        "spec": SPEC,
        "status": {"jobDependsOnList": ["test-a"]},
    }
    made = convert.converted(template, Target.VCJOB, name="a-now")
    assert made == {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "a-now", "labels": {"team": "x"}},
        "spec": SPEC,
    }
    assert template["metadata"]["name"] == "a"


def test_labels_of_stamps_only_leave_no_empty_mapping_but_an_empty_one_stays() -> None:
    job = live_vcjob()
    job["metadata"]["labels"] = {"volcano.sh/createdByJobFlow": "team.test"}
    job["metadata"]["annotations"] = {}
    meta = convert.converted(job, Target.JOBTEMPLATE)["metadata"]
    assert "labels" not in meta
    assert meta["annotations"] == {}


def test_a_name_given_for_an_object_without_metadata() -> None:
    bare = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "spec": {}}
    assert convert.problems(bare, Target.JOBTEMPLATE, name="n") == []
    made = convert.converted(bare, Target.JOBTEMPLATE, name="n")
    assert list(made) == ["apiVersion", "kind", "metadata", "spec"]
    assert made["metadata"] == {"name": "n"}


@pytest.mark.parametrize(
    ("data", "target", "expected"),
    [
        pytest.param(
            {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate"},
            Target.JOBTEMPLATE,
            "JobTemplate default/a: already a JobTemplate (flow.volcano.sh/v1alpha1 "
            "JobTemplate): nothing to convert",
            id="itself",
        ),
        pytest.param(
            {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job"},
            Target.VCJOB,
            "Job default/a: already a vcjob (batch.volcano.sh/v1alpha1 Job): nothing to convert",
            id="vcjob-itself",
        ),
        pytest.param(
            {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow"},
            Target.VCJOB,
            "JobFlow default/a: cannot convert JobFlow (flow.volcano.sh/v1alpha1) to vcjob: "
            "--to vcjob takes a JobTemplate (flow.volcano.sh/v1alpha1 JobTemplate)",
            id="jobflow",
        ),
        pytest.param(
            {"apiVersion": "batch/v1", "kind": "Job"},
            Target.JOBTEMPLATE,
            "Job default/a: cannot convert Job (batch/v1) to jobtemplate: --to jobtemplate "
            "takes a vcjob (batch.volcano.sh/v1alpha1 Job)",
            id="kubernetes-job",
        ),
        pytest.param(
            {"kind": "Job"},
            Target.JOBTEMPLATE,
            "Job default/a: cannot convert Job (no apiVersion) to jobtemplate: --to jobtemplate "
            "takes a vcjob (batch.volcano.sh/v1alpha1 Job)",
            id="no-api-version",
        ),
    ],
)
def test_refusals(data: dict[str, Any], target: Target, expected: str) -> None:
    found = convert.problems({**data, "metadata": {"name": "a"}}, target)
    assert [str(e) for e in found] == [expected]


def test_a_name_is_required() -> None:
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {}}
    assert [str(e) for e in convert.problems(job, Target.JOBTEMPLATE)] == [
        "Job: metadata.name: Required value (or give one with --name)"
    ]


def test_metadata_must_be_a_mapping() -> None:
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": "x"}
    assert [str(e) for e in convert.problems(job, Target.JOBTEMPLATE, name="n")] == [
        "Job: metadata: must be a mapping"
    ]
