"""`kubectl delete jf NAME --cascade=orphan` (a DELETE with `propagationPolicy: Orphan`)
removes the flow and keeps its vcjobs and their pods, without the flow's ownerReference,
as kube's garbage collector orphans them; the default (Background) still collects them,
and a dry run changes nothing. (In process: the app around a MemoryStore.)"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from vcflow.server.app import create_app
from vcflow.store import MemoryStore

from .asgi import Client
from .conftest import BATCH, CORE, FLOW, jobflow, template


@pytest.fixture
def client() -> Client:
    return Client(create_app(MemoryStore(), stopping=threading.Event()))


def _owned_by(owner: dict[str, Any]) -> list[dict[str, Any]]:
    meta = owner["metadata"]
    return [
        {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": meta["name"],
            "uid": meta["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def _flow_with_job_and_pod(client: Client) -> None:
    """Flow `f`, its vcjob `f-a` and the vcjob's pod `f-a-t-0`, owned as the controllers
    own them."""
    assert client.request("POST", f"{FLOW}/jobtemplates", json=template("a", "true")).is_success
    flow = client.request("POST", f"{FLOW}/jobflows", json=jobflow("f", "a")).json()
    task = {"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "f-a", "ownerReferences": _owned_by(flow)},
        "spec": {"minAvailable": 1, "tasks": [task]},
    }
    made = client.request("POST", f"{BATCH}/jobs", json=job)
    assert made.status_code == 201, made.text
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "f-a-t-0", "ownerReferences": _owned_by(made.json())},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    assert client.request("POST", f"{CORE}/pods", json=pod).status_code == 201


def test_an_orphaning_delete_keeps_the_flows_jobs_and_pods(client: Client) -> None:
    _flow_with_job_and_pod(client)
    orphan = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"}
    dry = client.request("DELETE", f"{FLOW}/jobflows/f?dryRun=All", json=orphan)
    assert dry.status_code == 200, dry.text
    job = client.get(f"{BATCH}/jobs/f-a").json()
    assert job["metadata"]["ownerReferences"][0]["name"] == "f"  # (a dry run keeps it)
    answer = client.request("DELETE", f"{FLOW}/jobflows/f", json=orphan)
    assert answer.status_code == 200, answer.text
    assert client.get(f"{FLOW}/jobflows/f").status_code == 404
    job = client.get(f"{BATCH}/jobs/f-a")
    assert job.status_code == 200, "the orphaned vcjob was deleted"
    assert job.json()["metadata"].get("ownerReferences", []) == []
    pod = client.get(f"{CORE}/pods/f-a-t-0")
    assert pod.status_code == 200
    assert pod.json()["metadata"]["ownerReferences"][0]["name"] == "f-a"


def test_a_background_delete_still_collects_them(client: Client) -> None:
    _flow_with_job_and_pod(client)
    assert client.request("DELETE", f"{FLOW}/jobflows/f").status_code == 200
    assert client.get(f"{BATCH}/jobs/f-a").status_code == 404
    pod = client.get(f"{CORE}/pods/f-a-t-0")
    assert pod.status_code == 404 or pod.json()["metadata"].get("deletionTimestamp")
