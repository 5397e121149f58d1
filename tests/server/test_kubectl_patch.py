"""`kubectl patch --type json` (RFC 6902) against `vcflow server`, as against a cluster: the
operations applied, and an operation that cannot apply refused with why, nothing written."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from vcflow.server.app import create_app
from vcflow.store import MemoryStore

from .asgi import Client
from .conftest import CORE, jobflow, template
from .test_kubectl import Make, kubectl, write

__all__ = ["kubectl"]  # (the fixture, used by name)


def test_a_json_patch_is_applied(kubectl: Make, tmp_path: Path) -> None:
    kube = kubectl("--runtime", "none", "--controllers", "off")
    kube.ok(
        "apply", "-f", str(write(tmp_path / "f.yaml", template("a", "true"), jobflow("test", "a")))
    )
    ops = [
        {"op": "add", "path": "/metadata/labels", "value": {"team": "ml", "tier": "gold"}},
        {"op": "remove", "path": "/metadata/labels/tier"},
    ]
    assert kube.ok("patch", "jf", "test", "--type", "json", "-p", json.dumps(ops)) == (
        "jobflow.flow.volcano.sh/test patched\n"
    )
    assert kube.ok("get", "jf", "test", "-o", "jsonpath={.metadata.labels}") == '{"team":"ml"}'
    replace = [{"op": "replace", "path": "/spec/tasks/0/replicas", "value": 3}]
    kube.ok("patch", "jt", "a", "--type=json", "-p", json.dumps(replace))
    assert kube.ok("get", "jt", "a", "-o", "jsonpath={.spec.tasks[0].replicas}") == "3"

    bad = [
        {"op": "add", "path": "/metadata/labels/x", "value": "y"},
        {"op": "remove", "path": "/metadata/annotations/nope"},
    ]
    refused = kube.run("patch", "jf", "test", "--type", "json", "-p", json.dumps(bad))
    assert refused.returncode == 1
    assert "operation 1: path segment 'nope' does not exist" in refused.stderr, refused.stderr
    assert kube.ok("get", "jf", "test", "-o", "jsonpath={.metadata.labels}") == '{"team":"ml"}'


def test_the_events_api_takes_a_json_patch_too() -> None:
    client = Client(create_app(MemoryStore(), stopping=threading.Event()))
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "involvedObject": {"kind": "JobFlow", "name": "f", "namespace": "default"},
        "reason": "Created",
        "message": "m",
        "type": "Normal",
    }
    assert client.request("POST", f"{CORE}/events", json=event).status_code == 201
    ops = [{"op": "replace", "path": "/note", "value": "n2"}]
    answer = client.request(
        "PATCH",
        "/apis/events.k8s.io/v1/namespaces/default/events/e",
        content=json.dumps(ops),
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert answer.status_code == 200, answer.text
    assert client.get(f"{CORE}/events/e").json()["message"] == "n2"
