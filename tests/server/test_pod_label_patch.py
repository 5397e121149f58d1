"""What `vcflow operator`'s pod labeller asks of an API server, asked of a real bare `vcflow
server` (`--runtime none`: it stores the pods others make, as kube-apiserver does): a JSON
merge patch of a pod's `metadata.labels` adds those labels and keeps the others, refused
with 409 when pinned to a resourceVersion the pod no longer has; and a watch of all
namespaces' pods by a set-based label selector (`key,!other`), resumed from a list's
resourceVersion, shows only the pods that match, a pod that stops matching as DELETED (its
last matching state) and one that matches again as ADDED."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx

from .conftest import DEADLINE, Start

BARE = ("--runtime", "none", "--controllers", "off")
PODS = "/api/v1/namespaces/default/pods"
ALL_PODS = "/api/v1/pods"
SELECTOR = "volcano.sh/job-name,!volcano.sh/createdByJobFlow"
FLOW = "volcano.sh/createdByJobFlow"
MERGE = {"Content-Type": "application/merge-patch+json"}


def pod(name: str, labels: dict[str, str]) -> dict[str, Any]:
    owner = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": "j",
        "uid": "0b4f1c43-1d2e-4a39-9d6c-8a4a0c2b9e11",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels, "ownerReferences": [owner]},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }


def patch(client: httpx.Client, name: str, body: dict[str, Any]) -> httpx.Response:
    return client.patch(f"{PODS}/{name}", content=json.dumps(body), headers=MERGE)


class Watch:
    """The selector's watch of all namespaces' pods from `rv`, read on a thread: (type,
    name, labels) of each event; `ready` once the server said it caught up (a BOOKMARK)."""

    def __init__(self, client: httpx.Client, rv: str, count: int) -> None:
        self.client, self.rv, self.count = client, rv, count
        self.found: list[tuple[str, str, dict[str, str]]] = []
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        assert self.ready.wait(DEADLINE), "the watch did not start"

    def _read(self) -> None:
        query = {
            "watch": "true",
            "labelSelector": SELECTOR,
            "resourceVersion": self.rv,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": "20",
        }
        with self.client.stream("GET", ALL_PODS, params=query) as answer:
            for line in answer.iter_lines():
                if not line:
                    continue
                frame = json.loads(line)
                if frame["type"] == "BOOKMARK":
                    self.ready.set()
                    continue
                meta = frame["object"]["metadata"]
                self.found.append((frame["type"], meta["name"], meta.get("labels") or {}))
                if len(self.found) >= self.count:
                    return

    def events(self) -> list[tuple[str, str, dict[str, str]]]:
        self.thread.join(DEADLINE)
        return self.found


def test_a_pods_labels_are_merge_patched_and_a_selected_watch_follows_them(
    start_server: Start,
) -> None:
    job = {"volcano.sh/job-name": "j", "volcano.sh/task-spec": "t"}
    labelled = {FLOW: "default.f", "volcano.sh/createdByJobTemplate": "default.a"}
    with start_server(*BARE).client() as client:
        made = client.post(PODS, json=pod("j-t-0", job))
        assert made.status_code == 201, made.text
        assert client.post(PODS, json=pod("done-t-0", {**job, **labelled})).status_code == 201
        assert client.post(PODS, json=pod("web", {"app": "web"})).status_code == 201
        listed = client.get(ALL_PODS, params={"labelSelector": SELECTOR}).json()
        assert [i["metadata"]["name"] for i in listed["items"]] == ["j-t-0"]
        watch = Watch(client, listed["metadata"]["resourceVersion"], 2)

        rv = made.json()["metadata"]["resourceVersion"]
        answer = patch(client, "j-t-0", {"metadata": {"resourceVersion": rv, "labels": labelled}})
        assert answer.status_code == 200, answer.text
        assert answer.json()["metadata"]["labels"] == {**job, **labelled}
        stale = patch(client, "j-t-0", {"metadata": {"resourceVersion": rv, "labels": {"x": "y"}}})
        assert stale.status_code == 409
        assert stale.json()["reason"] == "Conflict"
        assert client.get(f"{PODS}/j-t-0").json()["metadata"]["labels"] == {**job, **labelled}
        # the flow label taken off again: the pod matches again
        assert patch(client, "j-t-0", {"metadata": {"labels": {FLOW: None}}}).status_code == 200

        found = watch.events()
    assert found == [
        ("DELETED", "j-t-0", job),  # (its last state the selector matched)
        ("ADDED", "j-t-0", {**job, "volcano.sh/createdByJobTemplate": "default.a"}),
    ]
