"""A flow's pods carry its labels on a cluster (issue 25, defect 5), end to end as real
processes: a bare `vcflow server` as the API server, `vcflow operator` on its kubeconfig,
the venv's kubectl, and a FakeVolcano that makes each vcjob's pods as Volcano's job
controller does (its labels, not the vcjob's; the vcjob as controller owner, by uid). After
Volcano's example flow ran, `kubectl get pods -l volcano.sh/createdByJobFlow=default.test`
lists every pod of the flow, each with its template's label; the pods of a vcjob no flow
created are not labelled, a label of another value is not overwritten, and with
`--no-label-pods` no pod is patched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.operator.conftest import StartOperator, flow_phase, wait_leader
from tests.operator.fakevolcano import FakeVolcano
from tests.server.conftest import Server, wait_until
from tests.server.test_kubectl import Kubectl

EXAMPLE = Path(__file__).parents[2] / "examples" / "jobflow"
ENTRIES = ("a", "b", "c", "d", "e")
FLOW = "volcano.sh/createdByJobFlow"
TEMPLATE = "volcano.sh/createdByJobTemplate"
PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
def volcano(api: Server) -> Iterator[FakeVolcano]:
    """FakeVolcano making the vcjobs' pods."""
    ca_file = api.info.get("caFile")
    with FakeVolcano(api.url, token=api.token, ca_file=ca_file, make_pods=True) as fake:
        yield fake
    assert not fake.errors, fake.errors


def apply_example(kubectl: Kubectl, tmp_path: Path) -> None:
    """Volcano's example, its vcjobs retained (its own comment's other choice), so that
    the pods stay to be listed once the flow has run."""
    flow = yaml.safe_load((EXAMPLE / "JobFlow.yaml").read_text())
    flow["spec"]["jobRetainPolicy"] = "retain"
    (tmp_path / "flow.yaml").write_text(yaml.safe_dump(flow))
    kubectl.ok("apply", "-f", str(EXAMPLE / "JobTemplate.yaml"))
    kubectl.ok("apply", "-f", str(tmp_path / "flow.yaml"))


def pods(api: Server) -> dict[str, dict[str, Any]]:
    with api.client() as client:
        items = client.get(PODS).json()["items"]
    return {item["metadata"]["name"]: item for item in items}


def labelled(kubectl: Kubectl, flow: str = "default.test") -> dict[str, str]:
    """Pod name → its createdByJobTemplate, of the pods `-l createdByJobFlow=<flow>` lists."""
    shown = kubectl.ok("get", "pods", "-l", f"{FLOW}={flow}", "-o", "json")
    return {
        item["metadata"]["name"]: item["metadata"]["labels"].get(TEMPLATE, "")
        for item in json.loads(shown)["items"]
    }


def flow_pods(volcano: FakeVolcano) -> dict[str, str]:
    """The pods FakeVolcano made for the flow's vcjobs → the template label they should get."""
    return {
        key.split("/", 1)[1]: f"default.{entry}"
        for key in volcano.pods
        for entry in ENTRIES
        if key.startswith(f"default/test-{entry}-")
    }


def owned_by(job: str, uid: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
    """A pod vcjob `job` (of `uid`) controls, as Volcano makes one."""
    owner = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": job,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"volcano.sh/job-name": job, "volcano.sh/task-spec": "x", **labels},
            "ownerReferences": [owner],
        },
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }


PLAIN_JOB = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "metadata": {"name": "plain", "namespace": "default", "labels": {"app": "mine"}},
    "spec": {
        "minAvailable": 1,
        "tasks": [
            {
                "name": "web",
                "replicas": 2,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "main", "image": "busybox"}],
                    }
                },
            }
        ],
    },
}


def test_a_flows_pods_carry_its_labels_and_nothing_else_is_touched(
    api: Server,
    start_operator: StartOperator,
    volcano: FakeVolcano,
    kubectl: Kubectl,
    tmp_path: Path,
) -> None:
    operator = start_operator()
    wait_leader(api, operator)
    apply_example(kubectl, tmp_path)
    wait_until(lambda: flow_phase(api, "test") == "Succeed", "the flow to succeed")
    want = flow_pods(volcano)
    assert sorted(want) == [f"test-{entry}-default-nginx-0" for entry in ENTRIES]
    wait_until(lambda: labelled(kubectl) == want, "the flow's pods to be labelled")
    assert labelled(kubectl, "default.other") == {}

    # a vcjob no flow created: its pods are made, and stay without the flow's labels
    (tmp_path / "plain.yaml").write_text(yaml.safe_dump(PLAIN_JOB))
    kubectl.ok("apply", "-f", str(tmp_path / "plain.yaml"))
    wait_until(lambda: len([k for k in volcano.pods if "/plain-" in k]) == 2, "plain's pods")
    # a pod of the flow's vcjob a user labelled otherwise, then one more pod of it: once
    # that one is labelled, the operator has seen the two before it (one watch, in order)
    uid = volcano.created()["default/test-a"][0]
    mine = owned_by("test-a", uid, "test-a-mine-0", {TEMPLATE: "default.mine"})
    with api.client() as client:
        assert client.post(PODS, json=mine).status_code == 201
        made = client.post(PODS, json=owned_by("test-a", uid, "test-a-late-0", {}))
        assert made.status_code == 201
    wait_until(lambda: "test-a-late-0" in labelled(kubectl), "the late pod to be labelled")
    now = pods(api)
    assert labelled(kubectl)["test-a-late-0"] == "default.a"
    assert now["test-a-mine-0"]["metadata"]["labels"] == mine["metadata"]["labels"]
    for name in ("plain-web-0", "plain-web-1"):
        labels = now[name]["metadata"]["labels"]
        assert FLOW not in labels and TEMPLATE not in labels
        assert now[name]["metadata"]["resourceVersion"] == volcano.pods[f"default/{name}"]
    said = [line for line in operator.output().splitlines() if "test-a-mine-0" in line]
    assert len(said) == 1 and f"{TEMPLATE}=default.mine" in said[0], said
    assert "pod labels: labelling flows' pods" in operator.output()


def test_with_no_label_pods_no_pod_is_patched(
    api: Server,
    start_operator: StartOperator,
    volcano: FakeVolcano,
    kubectl: Kubectl,
    tmp_path: Path,
) -> None:
    operator = start_operator("--no-label-pods")
    wait_leader(api, operator)
    apply_example(kubectl, tmp_path)
    wait_until(lambda: flow_phase(api, "test") == "Succeed", "the flow to succeed")
    assert len(flow_pods(volcano)) == len(ENTRIES)
    now = pods(api)
    assert {k.split("/", 1)[1] for k in volcano.pods} == set(now)
    for key, rv in volcano.pods.items():
        meta = now[key.split("/", 1)[1]]["metadata"]
        assert meta["resourceVersion"] == rv  # never written since Volcano made it
        assert FLOW not in meta["labels"]
    assert labelled(kubectl) == {}
    assert "pod labels" not in operator.output()
