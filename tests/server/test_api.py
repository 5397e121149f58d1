"""The Kubernetes API of a real `vcflow server` (controllers and runtime off: a bare store),
driven with httpx: the status codes, Status bodies and headers clients rely on."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from vcflow.api.config import ConfigMap
from vcflow.api.meta import ObjectMeta
from vcflow.store import SqliteStore

from .conftest import CORE, DEADLINE, FLOW, Server, Start, jobflow, template

BARE = ("--runtime", "none", "--controllers", "off")


@pytest.fixture
def server(start_server: Start) -> Server:
    return start_server(*BARE)


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as found:
        yield found


def test_each_request_is_logged_on_one_line(server: Server, client: httpx.Client) -> None:
    assert client.get(f"{FLOW}/jobflows").status_code == 200
    assert client.get(f"{FLOW}/jobflows/x").status_code == 404
    logged = server.out.read_text().splitlines()
    assert logged[0].startswith(f"vcflow server: serving {server.url} ")
    assert f"; kubeconfig {server.state_dir / 'kubeconfig'}; working dir /" in logged[0]
    assert any(f'"GET {FLOW}/jobflows HTTP/1.1" 200' in line for line in logged[1:])
    assert any(f'"GET {FLOW}/jobflows/x HTTP/1.1" 404' in line for line in logged[1:])


def test_create_get_and_not_found(client: httpx.Client) -> None:
    made = client.post(f"{FLOW}/jobtemplates", json=template("a", "true"))
    assert made.status_code == 201, made.text
    assert made.json()["metadata"]["namespace"] == "default"
    assert made.json()["metadata"]["resourceVersion"].isdigit()
    got = client.get(f"{FLOW}/jobtemplates/a").json()
    assert got["kind"] == "JobTemplate" and got["metadata"]["uid"]
    again = client.post(f"{FLOW}/jobtemplates", json=template("a", "true"))
    assert again.status_code == 409 and again.json()["reason"] == "AlreadyExists"
    missing = client.get(f"{FLOW}/jobflows/nope")
    assert missing.status_code == 404
    body = missing.json()
    assert body["kind"] == "Status" and body["reason"] == "NotFound"
    assert body["message"] == 'jobflows.flow.volcano.sh "nope" not found'
    assert body["details"] == {"name": "nope", "group": "flow.volcano.sh", "kind": "jobflows"}


def test_a_stale_update_is_a_409_conflict(client: httpx.Client) -> None:
    made = client.post(f"{FLOW}/jobtemplates", json=template("a", "true")).json()
    first = dict(made, metadata={**made["metadata"], "labels": {"x": "1"}})
    assert client.put(f"{FLOW}/jobtemplates/a", json=first).status_code == 200
    stale = dict(made, metadata={**made["metadata"], "labels": {"x": "2"}})
    answer = client.put(f"{FLOW}/jobtemplates/a", json=stale)
    assert answer.status_code == 409
    assert answer.json()["reason"] == "Conflict"
    assert answer.json()["message"] == (
        'Operation cannot be fulfilled on jobtemplates.flow.volcano.sh "a": the object has '
        "been modified; please apply your changes to the latest version and try again"
    )


def test_admission_errors_are_422_with_admissions_message(client: httpx.Client) -> None:
    answer = client.post(f"{FLOW}/jobflows", json=jobflow("f", "a", "b<zz"))
    assert answer.status_code == 422
    body = answer.json()
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'JobFlow.flow.volcano.sh "f" is invalid: spec.flows[1].dependsOn.targets[0]: '
        "jobflow Flow is not DAG: vertex is not defined: zz"
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "jobflow Flow is not DAG: vertex is not defined: zz",
            "field": "spec.flows[1].dependsOn.targets[0]",
        }
    ]
    assert client.get(f"{FLOW}/jobflows/f").status_code == 404


def test_unknown_fields_warn_or_fail_by_field_validation(client: httpx.Client) -> None:
    odd = template("a", "true")
    odd["spec"]["bogus"] = 1
    warned = client.post(f"{FLOW}/jobtemplates", json=odd)
    assert warned.status_code == 201
    assert warned.headers.get_list("warning") == ['299 - "unknown field \\"spec.bogus\\""']
    odd["metadata"]["name"] = "b"
    strict = client.post(f"{FLOW}/jobtemplates?fieldValidation=Strict", json=odd)
    assert strict.status_code == 422
    assert 'unknown field "spec.bogus"' in strict.json()["message"]
    ignored = client.post(f"{FLOW}/jobtemplates?fieldValidation=Ignore", json=odd)
    assert ignored.status_code == 201 and "warning" not in ignored.headers


def test_list_selectors_and_pages(client: httpx.Client) -> None:
    for name in ("a", "b", "c", "d", "e"):
        body = template(name, "true")
        body["metadata"]["labels"] = {"odd": str(name in "ace").lower()}
        assert client.post(f"{FLOW}/jobtemplates", json=body).status_code == 201

    def names(url: str) -> list[str]:
        return [i["metadata"]["name"] for i in client.get(url).json()["items"]]

    assert names(f"{FLOW}/jobtemplates?labelSelector=odd%3Dtrue") == ["a", "c", "e"]
    assert names(f"{FLOW}/jobtemplates?fieldSelector=metadata.name%3Db") == ["b"]
    assert names("/apis/flow.volcano.sh/v1alpha1/jobtemplates") == ["a", "b", "c", "d", "e"]
    first = client.get(f"{FLOW}/jobtemplates?limit=2").json()
    assert [i["metadata"]["name"] for i in first["items"]] == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 3
    token = first["metadata"]["continue"]
    second = client.get(f"{FLOW}/jobtemplates", params={"limit": 2, "continue": token}).json()
    assert [i["metadata"]["name"] for i in second["items"]] == ["c", "d"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    bad = client.get(f"{FLOW}/jobtemplates?labelSelector=a%20in%20(")
    assert bad.status_code == 400 and bad.json()["kind"] == "Status"
    field = client.get(f"{FLOW}/jobtemplates?fieldSelector=spec.queue%3Dx")
    assert field.status_code == 400


def test_field_selectors_of_events(client: httpx.Client) -> None:
    for name, target in (("e1", "x"), ("e2", "y")):
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name},
            "involvedObject": {"kind": "JobFlow", "name": target, "namespace": "default"},
            "reason": "Created",
        }
        assert client.post(f"{CORE}/events", json=event).status_code == 201
    query = "involvedObject.name=x,involvedObject.kind=JobFlow,type!=Warning"
    found = client.get(f"{CORE}/events", params={"fieldSelector": query}).json()["items"]
    assert [e["metadata"]["name"] for e in found] == ["e1"]
    bad = client.get(f"{CORE}/events", params={"fieldSelector": "involvedObject.bogus=x"})
    assert bad.status_code == 400
    assert bad.json()["message"] == 'field label not supported: "involvedObject.bogus"'


def test_merge_patch_status_subresource_and_dry_run(client: httpx.Client) -> None:
    assert client.post(f"{FLOW}/jobtemplates", json=template("a", "true")).status_code == 201
    merge = {"Content-Type": "application/merge-patch+json"}
    patched = client.patch(
        f"{FLOW}/jobtemplates/a",
        content=json.dumps({"metadata": {"labels": {"k": "v"}}}),
        headers=merge,
    )
    assert patched.status_code == 200 and patched.json()["metadata"]["labels"] == {"k": "v"}
    status = {"status": {"jobDependsOnList": ["x"]}, "metadata": {"labels": {"k": "no"}}}
    written = client.patch(
        f"{FLOW}/jobtemplates/a/status", content=json.dumps(status), headers=merge
    ).json()
    assert written["status"] == {"jobDependsOnList": ["x"]}
    assert written["metadata"]["labels"] == {"k": "v"}  # (only the status is written)
    ignored = client.patch(
        f"{FLOW}/jobtemplates/a",
        content=json.dumps({"status": {"jobDependsOnList": []}}),
        headers=merge,
    )
    assert ignored.json()["status"] == {"jobDependsOnList": ["x"]}
    dry = client.post(f"{FLOW}/jobtemplates?dryRun=All", json=template("b", "true"))
    assert dry.status_code == 201 and dry.json()["metadata"]["name"] == "b"
    assert client.get(f"{FLOW}/jobtemplates/b").status_code == 404
    json_patch = client.patch(
        f"{FLOW}/jobtemplates/a",
        content="[]",
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert json_patch.status_code == 200  # (an empty JSON patch)
    server_side = client.patch(
        f"{FLOW}/jobtemplates/a",
        content="{}",
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert server_side.status_code == 415


def test_a_dry_run_answers_the_object_as_it_would_be_at_its_version(
    client: httpx.Client,
) -> None:
    made = client.post(f"{FLOW}/jobtemplates", json=template("a", "true")).json()
    rv = made["metadata"]["resourceVersion"]
    merge = {"Content-Type": "application/merge-patch+json"}
    labels = json.dumps({"metadata": {"labels": {"k": "v"}}})
    dry = "?dryRun=All"
    created = client.post(f"{FLOW}/jobtemplates{dry}", json=template("b", "true")).json()
    assert created["metadata"]["name"] == "b" and not created["metadata"].get("resourceVersion")
    relabelled = {**made, "metadata": {**made["metadata"], "labels": {"k": "v"}}}
    status = json.dumps({"status": {"jobDependsOnList": ["x"]}})
    answers = [
        client.patch(f"{FLOW}/jobtemplates/a{dry}", content=labels, headers=merge),
        client.put(f"{FLOW}/jobtemplates/a{dry}", json=relabelled),
        client.patch(f"{FLOW}/jobtemplates/a/status{dry}", content=status, headers=merge),
    ]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert [a.json()["metadata"]["resourceVersion"] for a in answers] == [rv] * 3
    deleted = client.delete(f"{FLOW}/jobtemplates/a{dry}")  # (a Status, as kube answers)
    assert deleted.status_code == 200 and deleted.json()["status"] == "Success"
    assert deleted.json()["details"]["uid"] == made["metadata"]["uid"]
    assert answers[0].json()["metadata"]["labels"] == {"k": "v"}  # (as it would be)
    assert answers[2].json()["status"] == {"jobDependsOnList": ["x"]}
    real = client.patch(f"{FLOW}/jobtemplates/a", content=labels, headers=merge).json()
    assert real["metadata"]["resourceVersion"] == str(int(rv) + 1)
    events = _watch(client, f"resourceVersion={rv}", 1)  # nothing written before it
    assert events[0]["type"] == "MODIFIED"
    assert events[0]["object"]["metadata"]["resourceVersion"] == str(int(rv) + 1)  # type: ignore[index]
    assert client.get(f"{FLOW}/jobtemplates/b").status_code == 404


def test_reads_do_not_wait_behind_a_write_waiting_for_the_store(server: Server) -> None:
    """Another connection (the control plane's) holds SQLite's write lock: a write through
    the API waits for it, and gets, lists and watches go on meanwhile."""
    with server.client() as client:
        assert client.post(f"{CORE}/configmaps", json=_configmap("x")).status_code == 201
    holder = sqlite3.connect(server.state_dir / "vcflow.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    written: list[int] = []
    try:
        with server.client() as client, server.client() as reader:
            write = threading.Thread(
                target=lambda: written.append(
                    client.post(f"{CORE}/configmaps", json=_configmap("y")).status_code
                )
            )
            write.start()
            end = time.monotonic() + 1.0  # (reads for a second while the write waits)
            while time.monotonic() < end:
                assert reader.get(f"{CORE}/configmaps/x", timeout=2.0).status_code == 200
                assert reader.get(f"{CORE}/configmaps", timeout=2.0).status_code == 200
            assert write.is_alive() and not written  # (it did wait, all along)
            holder.execute("COMMIT")
            write.join(DEADLINE)
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
    assert written == [201]


def _configmap(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def test_a_pod_is_bound_through_its_binding_subresource(client: httpx.Client) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["true"]}]},
    }
    assert client.post(f"{CORE}/pods", json=pod).status_code == 201

    def binding(node: str) -> httpx.Response:
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                "target": {"kind": "Node", "name": node}}  # fmt: skip
        return client.post(f"{CORE}/pods/p/binding", json=body)

    bound = binding("here")
    assert bound.status_code == 201 and bound.json()["status"] == "Success"
    assert client.get(f"{CORE}/pods/p").json()["spec"]["nodeName"] == "here"
    for node in ("elsewhere", "here"):  # (kube-apiserver refuses a binding again, anywhere)
        again = binding(node)
        assert again.status_code == 409 and again.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'Operation cannot be fulfilled on pods/binding "p": pod p is already '
            'assigned to node "here"',
            "reason": "Conflict",
            "details": {"name": "p", "kind": "pods/binding"},
            "code": 409,
        }
    missing = client.post(f"{CORE}/pods/q/binding", json={**binding_body("q"), "kind": "Binding"})
    assert missing.status_code == 404 and missing.json()["message"] == 'pods "q" not found'


def binding_body(name: str, node: str = "n", uid: str = "") -> dict[str, object]:
    meta = {"name": name, **({"uid": uid} if uid else {})}
    return {"apiVersion": "v1", "kind": "Binding", "metadata": meta,
            "target": {"kind": "Node", "name": node}}  # fmt: skip


def test_a_binding_is_refused_in_kube_apiservers_words(client: httpx.Client) -> None:
    """As kube-apiserver v1.37 answers them: a uid that is not the pod's, a pod being
    deleted (its finalizer holds it)."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "finalizers": ["example.com/hold"]},
        "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["true"]}]},
    }
    made = client.post(f"{CORE}/pods", json=pod).json()
    uid = made["metadata"]["uid"]
    wrong = client.post(f"{CORE}/pods/p/binding", json=binding_body("p", uid="other"))
    assert wrong.status_code == 409 and wrong.json()["details"] == {"name": "p", "kind": "pods"}
    assert wrong.json()["message"].endswith(
        f"Precondition failed: UID in precondition: other, UID in object meta: {uid}"
    )
    assert client.request("DELETE", f"{CORE}/pods/p").status_code == 200
    deleting = client.post(f"{CORE}/pods/p/binding", json=binding_body("p"))
    assert deleting.status_code == 409
    assert deleting.json()["message"] == (
        'Operation cannot be fulfilled on pods/binding "p": pod p is being deleted, cannot be '
        "assigned to a host"
    )


def test_delete_with_options(client: httpx.Client) -> None:
    assert client.post(f"{FLOW}/jobtemplates", json=template("a", "true")).status_code == 201
    gone = client.request(
        "DELETE",
        f"{FLOW}/jobtemplates/a",
        content=json.dumps(
            {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        ),
    )
    assert gone.status_code == 200 and gone.json()["details"]["name"] == "a"
    assert client.get(f"{FLOW}/jobtemplates/a").status_code == 404
    again = client.delete(f"{FLOW}/jobtemplates/a")
    assert again.status_code == 404


def test_a_refused_delete_is_403_and_grace_period_0_forces_it(client: httpx.Client) -> None:
    assert client.post(f"{FLOW}/jobflows", json=jobflow("f", "a")).status_code == 201
    running = json.dumps({"status": {"state": {"phase": "Running"}}})
    merge = {"Content-Type": "application/merge-patch+json"}
    assert client.patch(f"{FLOW}/jobflows/f/status", content=running, headers=merge).is_success
    refused = client.delete(f"{FLOW}/jobflows/f")
    assert refused.status_code == 403, refused.text
    body = refused.json()
    assert (body["reason"], body["details"]) == (
        "Forbidden",
        {"name": "f", "group": "flow.volcano.sh", "kind": "jobflows"},
    )
    assert body["message"] == (
        'jobflows.flow.volcano.sh "f" is forbidden: cannot delete JobFlow "f" while it is '
        "Running: stop it first (vcflow stop jobflow f -n default), which terminates its "
        "jobs, then delete it"
    )
    assert client.get(f"{FLOW}/jobflows/f").status_code == 200
    forced = client.request(
        "DELETE", f"{FLOW}/jobflows/f", content=json.dumps({"gracePeriodSeconds": 0})
    )
    assert forced.status_code == 200
    assert client.get(f"{FLOW}/jobflows/f").status_code == 404


def test_bad_requests_are_refused_before_use(client: httpx.Client) -> None:
    huge = template("a", "x" * (2 * 1024 * 1024))
    too_big = client.post(f"{FLOW}/jobtemplates", json=huge)
    assert too_big.status_code == 413 and too_big.json()["reason"] == "RequestEntityTooLarge"
    bad_ns = client.get("/apis/flow.volcano.sh/v1alpha1/namespaces/Bad_NS/jobflows")
    assert bad_ns.status_code == 400 and "invalid namespace" in bad_ns.json()["message"]
    dotdot = client.get(f"{CORE}/pods/..%2F..%2Fetc/log")
    assert dotdot.status_code in (400, 404) and dotdot.json()["kind"] == "Status"
    yaml_body = client.post(
        f"{FLOW}/jobtemplates", content="a: b", headers={"Content-Type": "application/yaml"}
    )
    assert yaml_body.status_code == 415
    not_json = client.post(
        f"{FLOW}/jobtemplates", content="{", headers={"Content-Type": "application/json"}
    )
    assert not_json.status_code == 400
    wrong_kind = client.post(f"{FLOW}/jobtemplates", json=jobflow("f", "a"))
    assert wrong_kind.status_code == 400
    assert client.get("/apis/nothing/here").status_code == 404
    assert client.post(f"{FLOW}/jobtemplates/a/status", json={}).status_code == 405


def _watch(client: httpx.Client, query: str, count: int) -> list[dict[str, object]]:
    found = []
    with client.stream("GET", f"{FLOW}/jobtemplates?watch=true&{query}") as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/json")
        for line in answer.iter_lines():
            if line:
                found.append(json.loads(line))
            if len(found) >= count:
                break
    return found


def test_watch_from_a_resource_version(client: httpx.Client) -> None:
    first = client.post(f"{FLOW}/jobtemplates", json=template("a", "true")).json()
    rv = first["metadata"]["resourceVersion"]
    client.post(f"{FLOW}/jobtemplates", json=template("b", "true"))
    client.delete(f"{FLOW}/jobtemplates/a")
    events = _watch(client, f"resourceVersion={rv}", 2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [  # type: ignore[index]
        ("ADDED", "b"),
        ("DELETED", "a"),
    ]
    current = _watch(client, "", 1)  # no resourceVersion: the current objects first
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in current] == [("ADDED", "b")]  # type: ignore[index]
    quiet = _watch(client, "allowWatchBookmarks=true&resourceVersion=" + str(int(rv) + 2), 1)
    assert quiet[0]["type"] == "BOOKMARK"
    assert quiet[0]["object"]["metadata"] == {"resourceVersion": str(int(rv) + 2)}  # type: ignore[index]
    with client.stream(
        "GET", f"{FLOW}/jobtemplates?watch=true&timeoutSeconds=1&resourceVersion={rv}"
    ) as s:
        assert len([line for line in s.iter_lines() if line]) == 2  # then it ends


def _fill(state: Path, count: int, first: int = 0) -> None:
    """Write `count` ConfigMaps with a store keeping 5 events: older ones are compacted."""
    with SqliteStore.in_state_dir(state, event_retention=5) as store:
        for i in range(first, first + count):
            store.create(ConfigMap(metadata=ObjectMeta(name=f"c{i:02d}", namespace="default")))


def test_a_watch_from_a_compacted_version_gets_410(start_server: Start, tmp_path: Path) -> None:
    state = tmp_path / "state"
    _fill(state, 40)
    server = start_server(*BARE)
    with server.client() as client:
        with client.stream("GET", f"{CORE}/configmaps?watch=true&resourceVersion=2") as answer:
            assert answer.status_code == 200
            events = [json.loads(line) for line in answer.iter_lines() if line]
        assert len(events) == 1 and events[0]["type"] == "ERROR"
        status = events[0]["object"]
        assert status["code"] == 410 and status["reason"] == "Expired"
        assert status["message"].startswith("too old resource version: 2 (")
        page = client.get(f"{CORE}/configmaps?limit=10").json()
        token = page["metadata"]["continue"]
        fresh = client.get(f"{CORE}/configmaps", params={"limit": 10, "continue": token})
        assert fresh.status_code == 200 and fresh.json()["items"][0]["metadata"]["name"] == "c10"
    assert server.stop() == 0
    _fill(state, 40, first=40)  # the token's version is compacted now
    with start_server(*BARE).client() as client:
        stale = client.get(f"{CORE}/configmaps", params={"limit": 10, "continue": token})
        assert stale.status_code == 410 and stale.json()["reason"] == "Expired"
        forged = client.get(f"{CORE}/configmaps", params={"limit": 10, "continue": "x!"})
        assert forged.status_code == 400
