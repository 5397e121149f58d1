"""The Kubernetes way to run a flow again — `kubectl delete jf X && kubectl apply -f X.yaml`
against a real `vcflow server` — runs its job every time: the vcjobs the garbage collector
deletes after their flow are not outcomes of the next flow of that name (issue 25,
defect 1)."""

from __future__ import annotations

from pathlib import Path

import yaml

from .conftest import FLOW, Start, flow_phase, jobflow, lines, template, wait_until
from .test_kubectl import Kubectl, kubectl_binary


def test_a_flow_deleted_and_applied_again_runs_its_job_each_time(
    start_server: Start, tmp_path: Path
) -> None:
    marks, manifest = tmp_path / "marks", tmp_path / "flow.yaml"
    manifest.write_text(
        yaml.safe_dump_all([template("a", f"echo ran >> {marks}"), jobflow("f", "a")])
    )
    server = start_server()
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "KUBECONFIG": str(server.state_dir / "kubeconfig")}
    kube = Kubectl(kubectl_binary(), env)
    uids = set()
    with server.client() as client:
        for run in range(1, 5):
            kube.ok("apply", "-f", str(manifest))
            wait_until(lambda: flow_phase(client, "f") in ("Succeed", "Failed"), "the flow to end")
            assert flow_phase(client, "f") == "Succeed"
            assert lines(marks) == ["ran"] * run, f"the job did not run on apply {run}"
            flow = client.get(f"{FLOW}/jobflows/f").json()
            assert flow["status"]["completedJobs"] == ["f-a"]
            uids.add(flow["metadata"]["uid"])
            kube.ok("delete", "jobflow", "f")
    assert len(uids) == 4
