"""`vcflow operator` runs a flow deleted and applied again (`kubectl delete jf X && kubectl
apply -f X.yaml`) every time: the vcjobs the API server's garbage collector deletes after
their flow, seen on the operator's watch of vcjobs, are not outcomes of the next flow of
that name (issue 25, defect 1)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from tests.operator.conftest import StartOperator, flow_phase, wait_leader
from tests.operator.fakevolcano import FakeVolcano
from tests.server.conftest import Server, wait_until
from tests.server.test_kubectl import Kubectl

EXAMPLE = Path(__file__).parents[2] / "examples" / "jobflow"
JOBS = ("test-a", "test-b", "test-c", "test-d", "test-e")


VCJOBS = "jobs.batch.volcano.sh"


def hold(kubectl: Kubectl, finalizers: list[str] | None) -> None:
    """Set (or with None, remove) the finalizers of every vcjob of the example."""
    patch = json.dumps({"metadata": {"finalizers": finalizers}})
    for job in JOBS:
        kubectl.ok("patch", VCJOBS, job, "--type=merge", "-p", patch)


def vcjobs(kubectl: Kubectl) -> list[str]:
    return kubectl.ok("get", VCJOBS, "-o", "name").split()


def test_a_flow_deleted_and_applied_again_runs_its_jobs_each_time(
    api: Server,
    start_operator: StartOperator,
    volcano: FakeVolcano,
    kubectl: Kubectl,
    tmp_path: Path,
) -> None:
    """On a cluster the garbage collector deletes the vcjobs after their flow: a finalizer
    holds them here until the flow is gone. Then the flow is applied again once they are
    gone (odd runs), or while they remain (even runs: its jobs wait for the names). The
    example's flow, its vcjobs retained (else the flow deletes them itself)."""
    flow = yaml.safe_load((EXAMPLE / "JobFlow.yaml").read_text())
    flow["spec"]["jobRetainPolicy"] = "retain"
    manifest = tmp_path / "flow.yaml"
    manifest.write_text(yaml.safe_dump(flow))
    wait_leader(api, start_operator())
    kubectl.ok("apply", "-f", str(EXAMPLE / "JobTemplate.yaml"))
    kubectl.ok("apply", "-f", str(manifest))
    for run in range(1, 5):
        wait_until(lambda: flow_phase(api, "test") in ("Succeed", "Failed"), "the flow to end")
        assert flow_phase(api, "test") == "Succeed"
        created = {name: len(uids) for name, uids in volcano.created().items()}
        assert created == {f"default/{job}": run for job in JOBS}, f"apply {run}"
        if run == 4:
            break
        hold(kubectl, ["vcflow.test/hold"])
        kubectl.ok("delete", "jobflow", "test")
        assert len(vcjobs(kubectl)) == len(JOBS)  # (being deleted: held by the finalizer)
        if run % 2:
            hold(kubectl, None)
            wait_until(lambda: not vcjobs(kubectl), "the vcjobs to be deleted")
            kubectl.ok("apply", "-f", str(manifest))
        else:
            kubectl.ok("apply", "-f", str(manifest))
            hold(kubectl, None)
