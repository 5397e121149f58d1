"""`patched_spec`: the merge rules of compatibility row 3, one table row per rule."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.api.vcjob import JobSpec
from vcflow.patch.merge import patched_spec


def ctr(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, **fields}


def task(name: str, *containers: dict[str, Any], **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, **fields}
    if containers:
        out["template"] = {"spec": {"containers": list(containers)}}
    return out


def pod(name: str, **podspec: Any) -> dict[str, Any]:
    """A task whose pod template spec is exactly `podspec`."""
    return {"name": name, "template": {"spec": podspec}}


# (id, base, patch, expected) — all wire dicts of a JobSpec.
CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    (
        "scalar replaces",
        {"queue": "default", "maxRetry": 3},
        {"queue": "gpu"},
        {"queue": "gpu", "maxRetry": 3},
    ),
    (
        "scalar added",
        {"queue": "default"},
        {"minAvailable": 2},
        {"queue": "default", "minAvailable": 2},
    ),
    ("null deletes the key", {"queue": "q", "maxRetry": 3}, {"queue": None}, {"maxRetry": 3}),
    ("null on an absent key is a no-op", {"maxRetry": 3}, {"queue": None}, {"maxRetry": 3}),
    (
        "empty patch keeps the base",
        {"queue": "q", "tasks": [task("a")]},
        {},
        {"queue": "q", "tasks": [task("a")]},
    ),
    (
        "tasks merge by name",
        {"tasks": [task("a", replicas=1, maxRetry=2), task("b", replicas=1)]},
        {"tasks": [task("b", replicas=4)]},
        {"tasks": [task("a", replicas=1, maxRetry=2), task("b", replicas=4)]},
    ),
    (
        "a task with a new name is appended",
        {"tasks": [task("a", replicas=1)]},
        {"tasks": [task("z", ctr("main", image="busybox"), replicas=2)]},
        {"tasks": [task("a", replicas=1), task("z", ctr("main", image="busybox"), replicas=2)]},
    ),
    (
        "tasks patched into a spec without tasks",
        {"queue": "q"},
        {"tasks": [task("a", replicas=1)]},
        {"queue": "q", "tasks": [task("a", replicas=1)]},
    ),
    (
        "two patch tasks with the same new name are both appended",
        {"tasks": [task("a")]},
        {"tasks": [task("n", replicas=1), task("n", replicas=2)]},
        {"tasks": [task("a"), task("n", replicas=1), task("n", replicas=2)]},
    ),
    (
        "a patch item without its key is appended",
        {"tasks": [task("a")]},
        {"tasks": [{"replicas": 3}]},
        {"tasks": [task("a"), {"replicas": 3}]},
    ),
    (
        "containers merge by name",
        {"tasks": [task("a", ctr("main", image="v1", args=["x"]), ctr("side", image="s1"))]},
        {"tasks": [task("a", ctr("main", image="v2"))]},
        {"tasks": [task("a", ctr("main", image="v2", args=["x"]), ctr("side", image="s1"))]},
    ),
    (
        "a container with a new name is appended",
        {"tasks": [task("a", ctr("main", image="v1"))]},
        {"tasks": [task("a", ctr("logger", image="l1"))]},
        {"tasks": [task("a", ctr("main", image="v1"), ctr("logger", image="l1"))]},
    ),
    (
        "initContainers merge by name",
        {"tasks": [pod("a", initContainers=[ctr("init", image="i1"), ctr("wait", image="w1")])]},
        {"tasks": [pod("a", initContainers=[ctr("wait", image="w2")])]},
        {"tasks": [pod("a", initContainers=[ctr("init", image="i1"), ctr("wait", image="w2")])]},
    ),
    (
        "env merges by name",
        {
            "tasks": [
                task("a", ctr("m", env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]))
            ]
        },
        {
            "tasks": [
                task("a", ctr("m", env=[{"name": "B", "value": "3"}, {"name": "C", "value": "4"}]))
            ]
        },
        {
            "tasks": [
                task(
                    "a",
                    ctr(
                        "m",
                        env=[
                            {"name": "A", "value": "1"},
                            {"name": "B", "value": "3"},
                            {"name": "C", "value": "4"},
                        ],
                    ),
                )
            ]
        },
    ),
    (
        "env value switched to valueFrom with an explicit null",
        {"tasks": [task("a", ctr("m", env=[{"name": "A", "value": "1"}]))]},
        {"tasks": [task("a", ctr("m", env=[{"name": "A", "value": None, "valueFrom": {"x": 1}}]))]},
        {"tasks": [task("a", ctr("m", env=[{"name": "A", "valueFrom": {"x": 1}}]))]},
    ),
    (
        "initContainers env merges by name",
        {"tasks": [pod("a", initContainers=[ctr("i", env=[{"name": "A", "value": "1"}])])]},
        {"tasks": [pod("a", initContainers=[ctr("i", env=[{"name": "A", "value": "2"}])])]},
        {"tasks": [pod("a", initContainers=[ctr("i", env=[{"name": "A", "value": "2"}])])]},
    ),
    (
        "ports merge by containerPort",
        {
            "tasks": [
                task(
                    "a",
                    ctr(
                        "m", ports=[{"containerPort": 80, "name": "http"}, {"containerPort": 9090}]
                    ),
                )
            ]
        },
        {
            "tasks": [
                task(
                    "a",
                    ctr(
                        "m", ports=[{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 22}]
                    ),
                )
            ]
        },
        {
            "tasks": [
                task(
                    "a",
                    ctr(
                        "m",
                        ports=[
                            {"containerPort": 80, "name": "http", "protocol": "TCP"},
                            {"containerPort": 9090},
                            {"containerPort": 22},
                        ],
                    ),
                )
            ]
        },
    ),
    (
        "volumeMounts merge by mountPath",
        {
            "tasks": [
                task(
                    "a",
                    ctr(
                        "m",
                        volumeMounts=[
                            {"mountPath": "/d", "name": "v1"},
                            {"mountPath": "/e", "name": "e"},
                        ],
                    ),
                )
            ]
        },
        {
            "tasks": [
                task(
                    "a",
                    ctr(
                        "m",
                        volumeMounts=[
                            {"mountPath": "/d", "name": "v2"},
                            {"mountPath": "/f", "name": "f"},
                        ],
                    ),
                )
            ]
        },
        {
            "tasks": [
                task(
                    "a",
                    ctr(
                        "m",
                        volumeMounts=[
                            {"mountPath": "/d", "name": "v2"},
                            {"mountPath": "/e", "name": "e"},
                            {"mountPath": "/f", "name": "f"},
                        ],
                    ),
                )
            ]
        },
    ),
    (
        "job volumes merge by mountPath",
        {"volumes": [{"mountPath": "/data", "volumeClaimName": "old"}, {"mountPath": "/tmp"}]},
        {"volumes": [{"mountPath": "/data", "volumeClaimName": "new"}, {"mountPath": "/out"}]},
        {
            "volumes": [
                {"mountPath": "/data", "volumeClaimName": "new"},
                {"mountPath": "/tmp"},
                {"mountPath": "/out"},
            ]
        },
    ),
    (
        "container args and command replace",
        {"tasks": [task("a", ctr("m", command=["sh", "-c"], args=["a", "b"]))]},
        {"tasks": [task("a", ctr("m", args=["c"]))]},
        {"tasks": [task("a", ctr("m", command=["sh", "-c"], args=["c"]))]},
    ),
    (
        "job policies replace",
        {
            "policies": [
                {"event": "PodEvicted", "action": "RestartJob"},
                {"event": "PodFailed", "action": "AbortJob"},
            ]
        },
        {"policies": [{"event": "TaskCompleted", "action": "CompleteJob"}]},
        {"policies": [{"event": "TaskCompleted", "action": "CompleteJob"}]},
    ),
    (
        "task policies replace",
        {"tasks": [task("a", policies=[{"event": "PodFailed", "action": "RestartTask"}])]},
        {"tasks": [task("a", policies=[{"event": "PodEvicted", "action": "AbortJob"}])]},
        {"tasks": [task("a", policies=[{"event": "PodEvicted", "action": "AbortJob"}])]},
    ),
    (
        "plugins map merges, each plugin's arguments replace",
        {"plugins": {"ssh": [], "env": [], "svc": ["--a"]}},
        {"plugins": {"svc": ["--b"], "pytorch": ["--master=m"]}},
        {"plugins": {"ssh": [], "env": [], "svc": ["--b"], "pytorch": ["--master=m"]}},
    ),
    (
        "null deletes a key of an unmodelled map",
        {"tasks": [pod("a", nodeSelector={"disk": "ssd", "zone": "z1"})]},
        {"tasks": [pod("a", nodeSelector={"zone": None})]},
        {"tasks": [pod("a", nodeSelector={"disk": "ssd"})]},
    ),
    (
        "nested maps merge",
        {"networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
        {"networkTopology": {"highestTierAllowed": 2}},
        {"networkTopology": {"mode": "hard", "highestTierAllowed": 2}},
    ),
    (
        "pod template labels merge key by key",
        {"tasks": [{"name": "a", "template": {"metadata": {"labels": {"x": "1", "y": "2"}}}}]},
        {"tasks": [{"name": "a", "template": {"metadata": {"labels": {"y": "3", "z": "4"}}}}]},
        {
            "tasks": [
                {"name": "a", "template": {"metadata": {"labels": {"x": "1", "y": "3", "z": "4"}}}}
            ]
        },
    ),
    (
        "pod volumes (not keyed) replace",
        {
            "tasks": [
                pod("a", volumes=[{"name": "v1", "emptyDir": {}}, {"name": "v2", "emptyDir": {}}])
            ]
        },
        {"tasks": [pod("a", volumes=[{"name": "v3", "emptyDir": {}}])]},
        {"tasks": [pod("a", volumes=[{"name": "v3", "emptyDir": {}}])]},
    ),
    (
        "unmodelled pod fields are kept when others are patched",
        {
            "tasks": [
                pod(
                    "a",
                    nodeSelector={"disk": "ssd"},
                    tolerations=[{"key": "k", "operator": "Exists"}],
                    containers=[ctr("m", image="v1", securityContext={"runAsUser": 1000})],
                )
            ]
        },
        {"tasks": [pod("a", containers=[ctr("m", image="v2")], restartPolicy="Never")]},
        {
            "tasks": [
                pod(
                    "a",
                    nodeSelector={"disk": "ssd"},
                    tolerations=[{"key": "k", "operator": "Exists"}],
                    containers=[ctr("m", image="v2", securityContext={"runAsUser": 1000})],
                    restartPolicy="Never",
                )
            ]
        },
    ),
    (
        "unmodelled pod fields merge and replace like modelled ones",
        {"tasks": [pod("a", nodeSelector={"disk": "ssd"}, tolerations=[{"key": "k"}])]},
        {"tasks": [pod("a", nodeSelector={"zone": "z1"}, tolerations=[{"key": "j"}])]},
        {
            "tasks": [
                pod("a", nodeSelector={"disk": "ssd", "zone": "z1"}, tolerations=[{"key": "j"}])
            ]
        },
    ),
    (
        "nulls inside a new map are dropped",
        {"queue": "q"},
        {"tasks": [task("a", ctr("m", image="v", workingDir=None))]},
        {"queue": "q", "tasks": [task("a", ctr("m", image="v"))]},
    ),
    (
        "null removes a field of a matched task",
        {"tasks": [task("a", replicas=2, maxRetry=5)]},
        {"tasks": [task("a", maxRetry=None)]},
        {"tasks": [task("a", replicas=2)]},
    ),
    (
        "null deletes the whole tasks list",
        {"queue": "q", "tasks": [task("a")]},
        {"tasks": None},
        {"queue": "q"},
    ),
]


@pytest.mark.parametrize(
    ("base", "patch", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_merge_rules(base: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]) -> None:
    result = patched_spec(JobSpec.from_dict(base), JobSpec.from_dict(patch))
    assert result.to_dict() == expected


@pytest.mark.parametrize(("base", "patch"), [c[1:3] for c in CASES], ids=[c[0] for c in CASES])
def test_inputs_unchanged(base: dict[str, Any], patch: dict[str, Any]) -> None:
    base_spec, patch_spec = JobSpec.from_dict(base), JobSpec.from_dict(patch)
    before = (base_spec.to_dict(), patch_spec.to_dict())
    result = patched_spec(base_spec, patch_spec)
    assert (base_spec.to_dict(), patch_spec.to_dict()) == before
    assert result is not base_spec and result is not patch_spec


def test_result_shares_no_structure_with_inputs() -> None:
    base = JobSpec.from_dict({"tasks": [pod("a", nodeSelector={"d": "s"}, containers=[ctr("m")])]})
    patch = JobSpec.from_dict({"tasks": [pod("a", tolerations=[{"key": "k"}])]})
    result = patched_spec(base, patch)
    result_pod = result.to_dict()["tasks"][0]["template"]["spec"]
    assert result_pod["nodeSelector"] == {"d": "s"} and result_pod["tolerations"] == [{"key": "k"}]
    assert result.tasks and result.tasks[0].template and result.tasks[0].template.spec
    pod_spec = result.tasks[0].template.spec
    assert pod_spec.model_extra is not None
    pod_spec.model_extra["nodeSelector"]["d"] = "changed"
    pod_spec.model_extra["tolerations"].append({"key": "x"})
    assert base.to_dict()["tasks"][0]["template"]["spec"]["nodeSelector"] == {"d": "s"}
    assert patch.to_dict()["tasks"][0]["template"]["spec"]["tolerations"] == [{"key": "k"}]


def test_result_is_a_typed_job_spec() -> None:
    base = JobSpec.from_dict({"tasks": [task("a", ctr("m", image="v1"))]})
    patch = JobSpec.from_dict({"tasks": [task("b", ctr("n", image="v2"), replicas=3)]})
    result = patched_spec(base, patch)
    assert isinstance(result, JobSpec)
    assert [t.name for t in result.tasks or []] == ["a", "b"]
    added = (result.tasks or [])[1]
    assert added.replicas == 3
    assert added.template and added.template.spec and added.template.spec.containers
    assert added.template.spec.containers[0].image == "v2"
