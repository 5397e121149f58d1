"""A `jobRetainPolicy: delete` flow through `vcflow operator` on `vcflow server`, which answers
a custom resource's DELETE as kube-apiserver does (a Status, not the object): polled every
0.1 s, the flow never lists a completed job as failed, and it ends Succeed with every job in
completedJobs, its vcjobs gone, and no Failed in any runningHistories (issue 25, defect 10:
on a real cluster the operator took the DELETE's Status for a vcjob with no phase and
recorded each job it deleted as Failed)."""

from __future__ import annotations

import time
from typing import Any

from tests.operator.conftest import StartOperator, wait_leader
from tests.operator.fakevolcano import FakeVolcano
from tests.server.conftest import BATCH, DEADLINE, FLOW, Server, jobflow, template
from tests.server.test_kubectl import Kubectl

JOBS = ["f-a", "f-b", "f-c"]
POLL = 0.1


def _flow(client: Any) -> dict[str, Any]:
    found: dict[str, Any] = client.get(f"{FLOW}/jobflows/f").json()
    return found


def test_a_delete_retained_flow_never_lists_a_completed_job_as_failed(
    api: Server, start_operator: StartOperator, volcano: FakeVolcano, kubectl: Kubectl
) -> None:
    operator = start_operator()
    wait_leader(api, operator)
    flow = jobflow("f", "a", "b<a", "c<a")
    flow["spec"]["jobRetainPolicy"] = "delete"
    seen: list[dict[str, Any]] = []
    with api.client() as client:
        for name in ("a", "b", "c"):
            assert client.post(f"{FLOW}/jobtemplates", json=template(name, "true")).is_success
        assert client.post(f"{FLOW}/jobflows", json=flow).status_code == 201
        end = time.monotonic() + DEADLINE
        while True:
            status = _flow(client).get("status") or {}
            seen.append(status)
            done = (status.get("state") or {}).get("phase") == "Succeed"
            if done and sorted(status.get("completedJobs") or []) == JOBS:
                if not client.get(f"{BATCH}/jobs").json()["items"]:
                    break
            assert time.monotonic() < end, f"the flow did not end: {status}"
            time.sleep(POLL)
        for status in seen:
            assert not status.get("failedJobs"), status
        final = _flow(client)["status"]
        for job in final["jobStatusList"]:
            histories = job.get("runningHistories") or []
            assert "Failed" not in [h.get("state") for h in histories], job
        # the server answers as kube-apiserver does: a custom resource's DELETE is a Status
        answer = client.delete(f"{FLOW}/jobtemplates/a")
        assert answer.status_code == 200
        assert answer.json()["kind"] == "Status" and answer.json()["details"]["name"] == "a"
    assert sorted(n.split("/")[1] for n in volcano.created()) == JOBS
    # kubectl reads the Status answer as kube's: its `deleted` line
    shown = kubectl.ok("delete", "jobflow", "f").strip()
    assert shown == 'jobflow.flow.volcano.sh "f" deleted from default namespace'
