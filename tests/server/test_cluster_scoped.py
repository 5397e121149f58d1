"""`vcflow server` serves Queues and PriorityClasses as kube-apiserver serves cluster-scoped
resources: `/apis/G/V/PLURAL[/NAME[/status]]` for list, watch, get, create, update, patch
and delete; a namespace in the body is dropped; a namespaced URL is a 404; discovery says
`namespaced: false`; admission's refusals are 422s naming the field."""

from __future__ import annotations

import json

from .conftest import Start

QUEUES = "/apis/scheduling.volcano.sh/v1beta1/queues"
CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"
MERGE = {"Content-Type": "application/merge-patch+json"}


def queue(name: str, **spec: object) -> dict[str, object]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "namespace": "team1"},
        "spec": spec,
    }


def test_queue_routes_of_a_cluster_scoped_resource(start_server: Start) -> None:
    server = start_server("--runtime", "none", "--controllers", "off")
    with server.client() as client:
        made = client.post(QUEUES, json=queue("team-a", weight=2))
        assert made.status_code == 201, made.text
        body = made.json()
        assert "namespace" not in body["metadata"]
        assert (body["spec"]["weight"], body["spec"]["reclaimable"]) == (2, True)

        got = client.get(f"{QUEUES}/team-a")
        assert got.status_code == 200 and got.json()["metadata"]["name"] == "team-a"
        listed = client.get(QUEUES).json()
        assert listed["kind"] == "QueueList"
        assert [q["metadata"]["name"] for q in listed["items"]] == ["team-a"]

        patched = client.patch(f"{QUEUES}/team-a", content='{"spec":{"weight":5}}', headers=MERGE)
        assert patched.status_code == 200 and patched.json()["spec"]["weight"] == 5
        current = client.get(f"{QUEUES}/team-a").json()
        current["spec"]["capability"] = {"cpu": "4"}
        assert client.put(f"{QUEUES}/team-a", json=current).status_code == 200
        status = client.patch(
            f"{QUEUES}/team-a/status", content='{"status":{"state":"Closed"}}', headers=MERGE
        )
        assert status.status_code == 200 and status.json()["status"]["state"] == "Closed"
        assert client.get(f"{QUEUES}/team-a").json()["spec"]["capability"] == {"cpu": "4"}

        # (kube-apiserver has no namespaced URL for a cluster-scoped resource)
        namespaced = "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/queues"
        assert client.get(namespaced).status_code == 404
        assert client.get(f"{namespaced}/team-a").status_code == 404

        bad = client.post(QUEUES, json=queue("bad", weight=0))
        assert bad.status_code == 422
        assert bad.json()["details"]["causes"][0]["field"] == "spec.weight"

        gone = client.delete(f"{QUEUES}/team-a")
        assert gone.status_code == 200
        assert client.get(f"{QUEUES}/team-a").status_code == 404
        assert client.post(QUEUES, json=queue("default")).status_code == 201
        refused = client.delete(f"{QUEUES}/default")
        assert refused.status_code == 403 and "`default` queue can not be deleted" in refused.text


def test_priority_classes_watch_and_discovery(start_server: Start) -> None:
    server = start_server("--runtime", "none", "--controllers", "off")
    with server.client() as client:
        pc = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        }
        rv = client.get(CLASSES).json()["metadata"]["resourceVersion"]
        assert client.post(CLASSES, json=pc).status_code == 201
        with client.stream(
            "GET", CLASSES, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "5"}
        ) as watch:
            first = json.loads(next(watch.iter_lines()))
        assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "high")
        assert first["object"]["preemptionPolicy"] == "PreemptLowerPriority"
        too_high = {**pc, "metadata": {"name": "higher"}, "value": 2_000_000_000}
        refused = client.post(CLASSES, json=too_high)
        assert refused.status_code == 422
        assert "maximum allowed value of a user defined priority" in refused.text

        found = client.get("/apis/scheduling.k8s.io/v1").json()["resources"]
        entry = next(r for r in found if r["name"] == "priorityclasses")
        assert (entry["namespaced"], entry["shortNames"]) == (False, ["pc"])
        volcano = client.get("/apis/scheduling.volcano.sh/v1beta1").json()["resources"]
        names = {r["name"]: r["namespaced"] for r in volcano}
        assert names == {"queues": False, "queues/status": False}
