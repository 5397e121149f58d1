"""The test cluster itself (scripts/cluster/kubecluster.py): a real kube-apiserver v1.37, the
controller manager's garbage collector, Volcano v1.10's job controller and scheduler, and kwok
running the pods they bind: Volcano Jobs go through PodGroup, scheduling, Running and an exit
code to the phase Volcano gives them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cluster.fixtures import REPO, Kube, kubecluster, wait_until

BATCH = "/apis/batch.volcano.sh/v1alpha1"
SCHEDULING = "/apis/scheduling.volcano.sh/v1beta1"
RUN_SECONDS = kubecluster.RUN_SECONDS
EXIT_CODE = kubecluster.EXIT_CODE
NODES = {node.name for node in kubecluster.DEFAULT_NODES}


def task(
    name: str,
    replicas: int = 1,
    *,
    annotations: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "busybox"}
    if limits:
        container["resources"] = {"limits": limits}
    return {
        "name": name,
        "replicas": replicas,
        "template": {
            "metadata": {"annotations": annotations or {}},
            "spec": {"restartPolicy": "Never", "containers": [container]},
        },
    }


def vcjob(name: str, *tasks: dict[str, Any], min_available: int, **spec: Any) -> dict[str, Any]:
    """A Volcano Job with what Volcano's admission webhook would default spelled out (that
    webhook is not part of the test cluster): the volcano scheduler and the default queue."""
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "volcano",
            "queue": "default",
            "minAvailable": min_available,
            "tasks": list(tasks),
            **spec,
        },
    }


def job_phase(kube: Kube, namespace: str, name: str) -> str:
    found = kube.get(f"{BATCH}/namespaces/{namespace}/jobs/{name}") or {}
    return str(((found.get("status") or {}).get("state") or {}).get("phase") or "")


def wait_phase(kube: Kube, namespace: str, name: str, phase: str) -> dict[str, Any]:
    wait_until(lambda: job_phase(kube, namespace, name) == phase, f"vcjob {name} {phase}")
    return kube.get(f"{BATCH}/namespaces/{namespace}/jobs/{name}") or {}


def pods_of(kube: Kube, namespace: str, job: str) -> list[dict[str, Any]]:
    return kube.items(
        f"/api/v1/namespaces/{namespace}/pods", labelSelector=f"volcano.sh/job-name={job}"
    )


def exit_codes(pod: dict[str, Any]) -> list[int]:
    return [
        s["state"]["terminated"]["exitCode"]
        for s in pod["status"].get("containerStatuses", [])
        if "terminated" in s.get("state", {})
    ]


def test_the_control_plane_is_kubernetes_volcano_and_kwok(kube: Kube, cluster: Any) -> None:
    version = kube.get("/version") or {}
    assert version["gitVersion"] == cluster.versions["kube"] == "v1.37.2"
    queue = kube.get(f"{SCHEDULING}/queues/default") or {}
    assert queue["status"]["state"] == "Open"
    nodes = {n["metadata"]["name"]: n for n in kube.items("/api/v1/nodes")}
    assert set(nodes) == NODES
    for node in nodes.values():
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
        assert node["status"]["nodeInfo"]["kubeletVersion"] == "kwok-0.8.0"
    assert all(p.exited() is None for p in cluster.processes.values())


def test_a_two_replica_job_is_gang_scheduled_runs_and_completes(kube: Kube, namespace: str) -> None:
    job = kube.create(
        f"{BATCH}/namespaces/{namespace}/jobs",
        vcjob("two", task("work", 2, annotations={RUN_SECONDS: "2"}), min_available=2),
    )
    # Volcano's job controller makes the PodGroup (owned by the job) and the pods ...
    group = wait_until(
        lambda: [
            g
            for g in kube.items(f"{SCHEDULING}/namespaces/{namespace}/podgroups")
            if any(o["uid"] == job["metadata"]["uid"] for o in g["metadata"]["ownerReferences"])
        ],
        "the job's PodGroup",
    )[0]
    assert group["spec"]["minMember"] == 2
    assert group["spec"]["queue"] == "default"
    # ... vc-scheduler binds both to kwok nodes, kwok runs them ...
    running = wait_until(
        lambda: (
            [
                p
                for p in pods_of(kube, namespace, "two")
                if p["status"].get("phase") in ("Running", "Succeeded")
            ]
            if len(pods_of(kube, namespace, "two")) == 2
            else []
        ),
        "two pods running",
    )
    for pod in running:
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["spec"]["nodeName"] in NODES
    # ... and ends them after 2 s with exit code 0: the job is Completed.
    done = wait_phase(kube, namespace, "two", "Completed")
    assert done["status"]["succeeded"] == 2
    pods = pods_of(kube, namespace, "two")
    assert [p["status"]["phase"] for p in pods] == ["Succeeded", "Succeeded"]
    assert [exit_codes(p) for p in pods] == [[0], [0]]


def test_a_pod_that_exits_3_fails_its_job(kube: Kube, namespace: str) -> None:
    """No policies: Volcano v1.10's running state only syncs the job when its pod fails; once
    every pod has ended with fewer than minAvailable succeeded, the phase is Failed (no
    restart: maxRetry counts RestartJob actions, and nothing asks for one)."""
    kube.create(
        f"{BATCH}/namespaces/{namespace}/jobs",
        vcjob("fails", task("work", annotations={EXIT_CODE: "3"}), min_available=1),
    )
    failed = wait_phase(kube, namespace, "fails", "Failed")
    assert failed["status"]["failed"] == 1
    assert failed["status"].get("retryCount", 0) == 0
    [pod] = pods_of(kube, namespace, "fails")
    assert pod["status"]["phase"] == "Failed"
    assert exit_codes(pod) == [3]
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Error"


def test_volcano_reads_the_exit_code_a_policy_names(kube: Kube, namespace: str) -> None:
    """A policy `exitCode: 3 → CompleteJob` completes the job whose pod exits 3 (the job
    controller reads the terminated containerStatus kwok writes); with minAvailable 1 of 2, a
    job with one failed and one succeeded pod is Completed too."""
    kube.create(
        f"{BATCH}/namespaces/{namespace}/jobs",
        vcjob(
            "policy",
            task("work", annotations={EXIT_CODE: "3"}),
            min_available=1,
            policies=[{"exitCode": 3, "action": "CompleteJob"}],
        ),
    )
    kube.create(
        f"{BATCH}/namespaces/{namespace}/jobs",
        vcjob(
            "half",
            task("bad", annotations={EXIT_CODE: "3"}),
            task("good", annotations={RUN_SECONDS: "2"}),
            min_available=1,
        ),
    )
    assert wait_phase(kube, namespace, "policy", "Completed")["status"].get("failed", 0) <= 1
    half = wait_phase(kube, namespace, "half", "Completed")
    assert (half["status"]["succeeded"], half["status"]["failed"]) == (1, 1)


def test_deleting_an_owner_deletes_its_dependents(kube: Kube, namespace: str) -> None:
    """kube-controller-manager's garbage collector: a vcjob owned by another object (as a
    JobFlow owns its vcjobs) goes when that object is deleted, and its pods with it."""
    owner = kube.create(
        f"/api/v1/namespaces/{namespace}/configmaps", {"metadata": {"name": "owner"}}
    )
    body = vcjob("owned", task("work", annotations={RUN_SECONDS: "600"}), min_available=1)
    body["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "owner",
            "uid": owner["metadata"]["uid"],
            "blockOwnerDeletion": True,
        }
    ]
    kube.create(f"{BATCH}/namespaces/{namespace}/jobs", body)
    wait_phase(kube, namespace, "owned", "Running")
    answer = kube.delete(f"/api/v1/namespaces/{namespace}/configmaps/owner")
    assert answer.status_code == 200, answer.text
    wait_until(
        lambda: kube.get(f"{BATCH}/namespaces/{namespace}/jobs/owned") is None,
        "the garbage collector to delete vcjob owned",
    )
    wait_until(lambda: not pods_of(kube, namespace, "owned"), "the vcjob's pods to go")


def test_a_job_asking_for_gpus_is_placed_on_gpu_nodes(kube: Kube, namespace: str) -> None:
    """Each node has 8 nvidia.com/gpu: two pods of 8 land on the two nodes, one each; then a
    pod asking for 9 is left unscheduled, its PodGroup saying why."""
    gpus = {"nvidia.com/gpu": "8"}
    kube.create(
        f"{BATCH}/namespaces/{namespace}/jobs",
        vcjob(
            "gpus", task("work", 2, annotations={RUN_SECONDS: "2"}, limits=gpus), min_available=2
        ),
    )

    def placed() -> list[str]:
        nodes = [p["spec"].get("nodeName") for p in pods_of(kube, namespace, "gpus")]
        return nodes if len(nodes) == 2 and all(nodes) else []

    assert sorted(wait_until(placed, "both GPU pods bound")) == sorted(NODES)
    for pod in pods_of(kube, namespace, "gpus"):
        assert pod["spec"]["containers"][0]["resources"]["requests"] == gpus
    wait_phase(kube, namespace, "gpus", "Completed")

    kube.create(
        f"{BATCH}/namespaces/{namespace}/jobs",
        vcjob("toobig", task("work", limits={"nvidia.com/gpu": "9"}), min_available=1),
    )

    def unschedulable() -> str:
        """The PodGroup's Unschedulable message once it names the pod's reason (its first
        one, before the pod exists, says only that the gang is not ready)."""
        for group in kube.items(f"{SCHEDULING}/namespaces/{namespace}/podgroups"):
            if group["metadata"]["name"].startswith("toobig-"):
                for condition in group.get("status", {}).get("conditions", []):
                    if condition["type"] == "Unschedulable" and "Origin reason" in str(
                        condition.get("message")
                    ):
                        return str(condition["message"])
        return ""

    message = wait_until(unschedulable, "PodGroup of toobig Unschedulable, with the reason")
    assert "0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu" in message
    [big] = pods_of(kube, namespace, "toobig")
    assert not big["spec"].get("nodeName")


def apply_deploy_rbac(kube: Kube, path: Path) -> list[str]:
    """Create the objects of one deploy/rbac file as admin; their API paths (for deletion)."""
    plural = {
        "ServiceAccount": "serviceaccounts",
        "ClusterRole": "clusterroles",
        "ClusterRoleBinding": "clusterrolebindings",
        "Role": "roles",
        "RoleBinding": "rolebindings",
    }
    made = []
    for obj in yaml.safe_load_all(path.read_text()):
        group = "/api/v1" if obj["apiVersion"] == "v1" else f"/apis/{obj['apiVersion']}"
        space = obj["metadata"].get("namespace")
        base = f"{group}/namespaces/{space}" if space else group
        kube.create(f"{base}/{plural[obj['kind']]}", obj)
        made.append(f"{base}/{plural[obj['kind']]}/{obj['metadata']['name']}")
    return made


def test_the_spare_users_are_the_service_accounts_deploy_binds(kube: Kube, cluster: Any) -> None:
    """vcflow-operator's token authenticates as the operator's ServiceAccount: without the
    RBAC of deploy/ it may not list vcjobs, with deploy/rbac/operator.yaml applied it may."""
    operator = cluster.username("vcflow-operator")
    assert operator == "system:serviceaccount:vcflow-system:vcflow-operator"
    client = Kube(cluster, "vcflow-operator")
    try:
        review = client.http.post(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        )
        assert review.status_code == 201, review.text
        assert review.json()["status"]["userInfo"]["username"] == operator
        assert client.http.get(f"{BATCH}/jobs").status_code == 403
        if kube.get("/api/v1/namespaces/vcflow-system") is None:
            kube.create("/api/v1/namespaces", {"metadata": {"name": "vcflow-system"}})
        made = apply_deploy_rbac(kube, REPO / "deploy" / "rbac" / "operator.yaml")
        try:
            wait_until(
                lambda: client.http.get(f"{BATCH}/jobs").status_code == 200,
                "deploy/rbac/operator.yaml to let vcflow-operator list vcjobs",
            )
        finally:
            for path in reversed(made):
                kube.delete(path)
    finally:
        client.close()


@pytest.mark.parametrize("user", ["admin", "vcflow-operator", "vcflow-webhook"])
def test_kubeconfig_for_a_user_reaches_the_api_server(cluster: Any, user: str) -> None:
    text = Path(cluster.kubeconfig_for(user)).read_text()
    assert f"server: {cluster.url}" in text
    assert cluster.token_for(user) in text
    status, body = cluster.request("GET", "/version", user=user)
    assert (status, body["gitVersion"]) == (200, "v1.37.2")
