"""Unknown-field warnings (`vcflow.admission.unknown`): everywhere in a JobTemplate, a vcjob
and a flow entry's `patch.jobSpec` — pod templates included, by Volcano's Job CRD schema —
and in every object's top level and metadata; a known field never warns."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from vcflow.admission import crd, unknown
from vcflow.admission.review import review, warnings_only
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.modelerrors import format_path
from vcflow.api.vcjob import JobSpec, VCJob

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "jobflow"

#: A pod template that uses many of Kubernetes' PodSpec fields, each spelled right.
RICH_POD: dict[str, Any] = {
    "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "x"}, "annotations": {}},
    "spec": {
        "restartPolicy": "Never",
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [{"key": "a", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}
                    ]
                }
            }
        },
        "securityContext": {"runAsUser": 1000, "fsGroup": 2000},
        "terminationGracePeriodSeconds": 5,
        "volumes": [
            {"name": "data", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
            {"name": "host", "hostPath": {"path": "/tmp", "type": "Directory"}},
            {"name": "cm", "configMap": {"name": "c", "items": [{"key": "k", "path": "p"}]}},
        ],
        "initContainers": [{"name": "init", "image": "busybox", "command": ["true"]}],
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", "echo hi"],
                "args": ["x"],
                "workingDir": "/tmp",
                "env": [
                    {"name": "A", "value": "1"},
                    {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "C", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                ],
                "envFrom": [{"configMapRef": {"name": "c"}}],
                "resources": {
                    "requests": {"cpu": 1, "memory": "1Gi", "nvidia.com/gpu": 1},
                    "limits": {"cpu": "2"},
                },
                "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}],
                "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
                "securityContext": {"privileged": False, "capabilities": {"add": ["NET_ADMIN"]}},
                "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 5},
                "lifecycle": {"preStop": {"exec": {"command": ["true"]}}},
            }
        ],
    },
}


def job_spec(pod: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    task = {"name": "main", "replicas": 1, "template": copy.deepcopy(pod or RICH_POD)}
    spec: dict[str, Any] = {"minAvailable": 1, "queue": "default", "tasks": [task]}
    spec.update(fields)
    return spec


def template(spec: dict[str, Any], **top: Any) -> JobTemplate:
    data = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate"}
    data |= {"metadata": {"name": "a"}, "spec": spec, **top}
    return JobTemplate.from_dict(data)


def vcjob(spec: dict[str, Any]) -> VCJob:
    data = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job"}
    return VCJob.from_dict(data | {"metadata": {"name": "j"}, "spec": spec})


def unknowns(obj: Resource) -> list[str]:
    """The paths of the object's unknown-field warnings, as review reports them."""
    found = [e for e in warnings_only(review(obj)) if e.message.startswith("unknown field")]
    for e in found:
        assert e.message == f'unknown field "{e.path}"'
        assert (e.kind, e.name) == (obj.kind, obj.name)
    return [e.path for e in found]


def with_field(data: dict[str, Any], path: tuple[str | int, ...], key: str) -> dict[str, Any]:
    """`data` with `key: 1` added to the mapping at `path`."""
    out = copy.deepcopy(data)
    node: Any = out
    for part in path:
        node = node[part]
    node[key] = 1
    return out


def test_a_rich_valid_template_has_no_warning() -> None:
    assert warnings_only(review(template(job_spec()))) == []


def test_the_volcano_example_has_no_warning() -> None:
    for doc in yaml.safe_load_all((EXAMPLES / "JobTemplate.yaml").read_text()):
        assert unknowns(JobTemplate.from_dict(doc)) == []


TASK = ("tasks", 0)
POD = (*TASK, "template", "spec")
MAIN = (*POD, "containers", 0)

PLACES = [
    pytest.param((), "minAvailble", id="job-spec"),
    pytest.param(TASK, "replica", id="task"),
    pytest.param((*TASK, "template"), "specs", id="pod-template"),
    pytest.param((*TASK, "template", "metadata"), "generateName", id="pod-template-metadata"),
    pytest.param(POD, "restartPolcy", id="pod-spec"),
    pytest.param(MAIN, "imagePullPolcy", id="container"),
    pytest.param((*POD, "initContainers", 0), "comand", id="init-container"),
    pytest.param((*MAIN, "env", 1), "valueFrm", id="env"),
    pytest.param((*MAIN, "env", 1, "valueFrom", "fieldRef"), "apiVerion", id="env-field-ref"),
    pytest.param((*MAIN, "resources"), "limts", id="resources"),
    pytest.param((*MAIN, "ports", 0), "protocl", id="ports"),
    pytest.param((*MAIN, "volumeMounts", 0), "mountPth", id="volume-mounts"),
    pytest.param((*MAIN, "securityContext", "capabilities"), "ad", id="container-security"),
    pytest.param((*MAIN, "readinessProbe", "httpGet"), "paht", id="probe"),
    pytest.param((*POD, "securityContext"), "runAsUsr", id="pod-security"),
    pytest.param((*POD, "volumes", 0, "emptyDir"), "sizeLimt", id="volume-source"),
    pytest.param((*POD, "volumes", 1), "hostPth", id="volume"),
    pytest.param((*POD, "tolerations", 0), "effct", id="toleration"),
]


@pytest.mark.parametrize(("where", "key"), PLACES)
def test_a_misspelt_field_anywhere_in_a_template_warns(
    where: tuple[str | int, ...], key: str
) -> None:
    path = format_path(("spec", *where, key))
    assert unknowns(template(with_field(job_spec(), where, key))) == [path]


@pytest.mark.parametrize(("where", "key"), PLACES)
def test_a_misspelt_field_anywhere_in_a_vcjob_warns(where: tuple[str | int, ...], key: str) -> None:
    path = format_path(("spec", *where, key))
    assert unknowns(vcjob(with_field(job_spec(), where, key))) == [path]


def test_policies_are_checked() -> None:
    spec = job_spec(policies=[{"event": "PodFailed", "action": "AbortJob", "exitcode": 1}])
    assert unknowns(template(spec)) == ["spec.policies[0].exitcode"]


def test_map_values_are_checked_by_their_schema() -> None:
    """`additionalProperties`: any key, each value by the map's value schema."""
    spec = with_field(job_spec(), (*POD, "volumes", 2, "configMap", "items", 0), "mod")
    assert unknowns(template(spec)) == [
        "spec.tasks[0].template.spec.volumes[2].configMap.items[0].mod"
    ]


def test_the_issue_12_template_cannot_validate_clean() -> None:
    spec = job_spec(RICH_POD)
    spec["minAvailble"] = spec.pop("minAvailable")
    spec["polices"] = [{"event": "PodFailed", "action": "AbortJob"}]
    spec["tasks"][0]["replica"] = spec["tasks"][0].pop("replicas") + 1
    paths = unknowns(template(spec))
    assert paths == ["spec.minAvailble", "spec.polices", "spec.tasks[0].replica"]
    others = [e.message for e in warnings_only(review(template(spec))) if e.path == "spec.tasks"]
    assert others and "every task has 0 replicas" in others[0]


def test_top_level_and_metadata_of_every_kind() -> None:
    obj = template(job_spec(), sepc={})
    assert unknowns(obj) == ["sepc"]
    meta = {"name": "f", "lables": {"a": "b"}, "managedFields": [], "selfLink": "/x"}
    flow = JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": meta,
            "spec": {"flows": []},
        }
    )
    assert unknowns(flow) == ["metadata.lables"]


def test_flow_entries_and_their_patches() -> None:
    patch = {
        "jobSpec": {
            "minAvailble": 1,
            "tasks": [
                {
                    "name": "main",
                    "replica": 3,
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "main", "imag": "x", "env": [{"name": "A", "value": "1"}]}
                            ]
                        }
                    },
                }
            ],
        }
    }
    flow = JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "f"},
            "spec": {"flows": [{"name": "a", "dependson": {}, "patch": patch}]},
        }
    )
    base = "spec.flows[0].patch.jobSpec"
    assert unknowns(flow) == [
        "spec.flows[0].dependson",
        f"{base}.minAvailble",
        f"{base}.tasks[0].replica",
        f"{base}.tasks[0].template.spec.containers[0].imag",
    ]


def test_a_null_known_field_is_no_warning_and_a_wrong_type_is_not_looked_into() -> None:
    pod = copy.deepcopy(RICH_POD)
    pod["spec"]["priorityClassName"] = None
    pod["spec"]["tolerations"] = "not a list"
    assert unknowns(template(job_spec(pod))) == []


def test_preserve_unknown_fields_keeps_any_key() -> None:
    node = crd.compile_schema(
        {
            "type": "object",
            "properties": {
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "any": {"type": "object", "additionalProperties": True},
                "strict": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
        }
    )
    data = {"free": {"x": {"y": 1}}, "any": {"z": 2}, "strict": {"a": "s", "b": 1}, "c": 3}
    found = unknown.schema_unknowns(data, node, "spec")
    assert sorted(e.path for e in found) == ["spec.c", "spec.strict.b"]


def test_the_schema_is_read_once_from_package_data() -> None:
    schema = crd.job_spec_schema()
    assert schema is crd.job_spec_schema()
    pod = schema.properties["tasks"].items
    assert pod is not None
    spec = pod.properties["template"].properties["spec"]
    assert {"containers", "volumes", "affinity", "priorityClassName"} <= set(spec.properties)


def test_a_modelled_field_the_schema_lacks_still_warns() -> None:
    """The walk goes by the schema, not by what vcflow happens to model."""
    node = crd.compile_schema({"type": "object", "properties": {"tasks": {"type": "array"}}})
    spec = JobSpec.from_dict({"queue": "q", "tasks": [], "maxRetry": None})
    found = unknown.schema_unknowns(spec, node, "spec")
    assert [e.path for e in found] == ["spec.queue"]
