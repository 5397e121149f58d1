"""A finished flow read back through `vcflow server`'s API, deleted and created again from
that copy runs its jobs again: the server drops the status a create carries, as
kube-apiserver does for a CRD with a status subresource. (The copy is created under a new
name: a flow of the same name again is tests/server/test_recreated_flow.py's case.)"""

from __future__ import annotations

from pathlib import Path

from .conftest import BATCH, FLOW, Start, flow_phase, jobflow, lines, template, wait_until


def test_an_exported_flow_created_again_runs_its_jobs(start_server: Start, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    server = start_server()
    with server.client() as client:
        made = client.post(f"{FLOW}/jobtemplates", json=template("a", f"echo ran >> {marks}"))
        assert made.status_code == 201, made.text
        assert client.post(f"{FLOW}/jobflows", json=jobflow("f", "a")).status_code == 201
        wait_until(lambda: flow_phase(client, "f") == "Succeed", "the flow to succeed")
        assert lines(marks) == ["ran"]
        exported = client.get(f"{FLOW}/jobflows/f").json()
        assert exported["status"]["state"]["phase"] == "Succeed"
        assert client.delete(f"{FLOW}/jobflows/f").status_code == 200
        wait_until(lambda: not client.get(f"{BATCH}/jobs").json()["items"], "the jobs' delete")

        exported["metadata"] = {**exported["metadata"], "name": "g"}
        del exported["metadata"]["resourceVersion"]  # (kube refuses one on a create)
        again = client.post(f"{FLOW}/jobflows", json=exported)
        assert again.status_code == 201, again.text
        assert "status" not in again.json()
        wait_until(lambda: lines(marks) == ["ran", "ran"], "the job to run again")
        wait_until(lambda: flow_phase(client, "g") == "Succeed", "the flow to succeed again")
        jobs = client.get(f"{BATCH}/jobs").json()["items"]
        assert [j["metadata"]["name"] for j in jobs] == ["g-a"]
        assert jobs[0]["status"]["state"]["phase"] == "Completed"
