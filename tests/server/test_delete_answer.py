"""What a DELETE answers, kind by kind, as kube-apiserver answers it (in process: the app
around a MemoryStore): a custom resource, ConfigMap, Secret, Event or Lease removed at once
answers a Success Status naming it (name, group, the plural as `kind`, uid) — their
registries do not return the deleted object — a Pod answers the Pod, and an object that
finalizers hold answers itself with its deletionTimestamp. A client that took the answer
for the object (a vcjob with no phase) broke only on a real cluster (issue 25, defect 10)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from vcflow.server.app import create_app
from vcflow.store import MemoryStore

from .asgi import Client
from .conftest import CORE, FLOW, jobflow, template

BATCH = "/apis/batch.volcano.sh/v1alpha1/namespaces/default"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"


@pytest.fixture
def client() -> Client:
    return Client(create_app(MemoryStore(), stopping=threading.Event()))


def _vcjob(name: str, **meta: Any) -> dict[str, Any]:
    task = {"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, **meta},
        "spec": {"minAvailable": 1, "tasks": [task]},
    }


def _event(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "JobFlow", "name": "f", "namespace": "default"},
        "reason": "Created",
        "message": "m",
        "type": "Normal",
    }


def _core(kind: str, name: str, api_version: str = "v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}


CASES = [
    (f"{FLOW}/jobflows", jobflow("f", "a"), "flow.volcano.sh", "jobflows"),
    (f"{FLOW}/jobtemplates", template("a", "true"), "flow.volcano.sh", "jobtemplates"),
    (f"{BATCH}/jobs", _vcjob("j"), "batch.volcano.sh", "jobs"),
    (f"{CORE}/configmaps", _core("ConfigMap", "c"), "", "configmaps"),
    (f"{CORE}/secrets", _core("Secret", "s"), "", "secrets"),
    (f"{CORE}/events", _event("e"), "", "events"),
    (LEASES, _core("Lease", "l", "coordination.k8s.io/v1"), "coordination.k8s.io", "leases"),
]


@pytest.mark.parametrize(("collection", "body", "group", "plural"), CASES)
def test_an_object_removed_at_once_answers_a_success_status(
    client: Client, collection: str, body: dict[str, Any], group: str, plural: str
) -> None:
    made = client.request("POST", collection, json=body)
    assert made.status_code == 201, made.text
    meta = made.json()["metadata"]
    details: dict[str, Any] = {"name": meta["name"], "kind": plural, "uid": meta["uid"]}
    if group:  # (kube leaves the core group out)
        details["group"] = group
    url = f"{collection}/{meta['name']}"
    expected = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    for dry in ("?dryRun=All", ""):
        answer = client.request("DELETE", url + dry)
        assert answer.status_code == 200, answer.text
        assert answer.json() == {**expected, "details": details}
    assert client.get(url).status_code == 404


def test_the_events_api_names_its_own_group(client: Client) -> None:
    made = client.request("POST", f"{CORE}/events", json=_event("e")).json()
    answer = client.request("DELETE", f"{EVENTS_V1}/e").json()
    assert answer["details"] == {
        "name": "e",
        "group": "events.k8s.io",
        "kind": "events",
        "uid": made["metadata"]["uid"],
    }


def test_a_pod_answers_the_pod(client: Client) -> None:
    pod = {**_core("Pod", "p"), "spec": {"containers": [{"name": "c", "image": "x"}]}}
    made = client.request("POST", f"{CORE}/pods", json=pod)
    assert made.status_code == 201, made.text
    answer = client.request("DELETE", f"{CORE}/pods/p?gracePeriodSeconds=0").json()
    assert (answer["kind"], answer["metadata"]["name"]) == ("Pod", "p")


def test_an_object_finalizers_hold_answers_itself_marked(client: Client) -> None:
    held = _vcjob("j", finalizers=["example.com/keep"])
    assert client.request("POST", f"{BATCH}/jobs", json=held).status_code == 201
    for _ in range(2):  # (and again while it is being deleted)
        answer = client.request("DELETE", f"{BATCH}/jobs/j").json()
        assert answer["kind"] == "Job" and answer["metadata"]["deletionTimestamp"]
