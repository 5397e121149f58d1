"""`vcflow logs vcjob/NAME` (and jobflow/NAME) through a server that does not give a started
pod's log — as kube-apiserver answers when it cannot reach the kubelet of the pod's node (500
`no preferred addresses found`, on the kwok test cluster: tests/cluster/test_cli.py) — says
so on stderr for that pod and exits 1. It printed nothing and exited 0: every error of a
remote log was taken for "no log yet". A pod not started yet is still skipped silently."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.server.conftest import BATCH, CORE, DEADLINE, Start, start_server

from vcflow.api.pod import Pod, PodSpec
from vcflow.kubeapi import logrefusal

__all__ = ["start_server"]


def pod(name: str, job_uid: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "ownerReferences": [
                {
                    "apiVersion": "batch.volcano.sh/v1alpha1",
                    "kind": "Job",
                    "name": "j",
                    "uid": job_uid,
                    "controller": True,
                }
            ],
        },
        "spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "busybox"}]},
    }


def test_a_started_pods_unreadable_log_is_an_error_not_silence(
    start_server: Start, tmp_path: Path
) -> None:
    server = start_server("--runtime", "none", "--controllers", "off")  # it keeps no logs
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "minAvailable": 1,
            "tasks": [
                {
                    "name": "work",
                    "replicas": 2,
                    "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}},
                }
            ],
        },
    }
    with server.client() as client:
        made = client.post(f"{BATCH}/jobs", json=job)
        assert made.status_code == 201, made.text
        uid = made.json()["metadata"]["uid"]
        for name in ("j-work-0", "j-work-1"):
            assert client.post(f"{CORE}/pods", json=pod(name, uid)).status_code == 201
        running = client.patch(
            f"{CORE}/pods/j-work-0/status",
            json={"status": {"phase": "Running"}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert running.status_code == 200, running.text
    env = {**os.environ, "VCFLOW_TOKEN": server.token or "", "HOME": str(tmp_path)}
    done = subprocess.run(
        [
            *(sys.executable, "-m", "vcflow", "--server", server.url),
            *("--certificate-authority", str(server.info.get("caFile"))),
            *("logs", "vcjob/j"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    # j-work-1 has not started: no log yet, nothing to say of it
    [line] = done.stderr.splitlines()
    assert line.startswith("error: pod/j-work-0: Error from server (BadRequest): "), line


def test_a_5xx_says_the_kubelet_of_the_node_could_not_be_reached() -> None:
    placed = Pod(spec=PodSpec(node_name="kwok-node-1"))
    said = "Error from server (InternalError): no preferred addresses found; known addresses: []"
    assert logrefusal.explained(said, placed) == (
        f"{said} (the API server reads a pod's log from the kubelet of node kwok-node-1, and "
        "could not)"
    )
    assert logrefusal.explained(said, None).endswith("of the pod's node, and could not)")
    other = "Error from server (BadRequest): container main is waiting to start"
    assert logrefusal.explained(other, placed) == other
