"""What kmock's KubernetesEmulator (0.8) does where a kube-apiserver does otherwise: each
fact behind a reason of KMOCK_CANNOT, shown by raw requests to the emulator, so that a
kmock release that closes a gap fails here — then the tests left out for it can run on it.
(docs/kubernetes.md, "what each test server cannot show", says the same in prose.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from vcflow.kubeapi import resources

from .conftest import TASKS
from .kmockserver import KmockBackend

JOBS = resources.VCJOBS.path("default")
FLOWS = resources.JOBFLOWS.path("default")


@pytest.fixture
def api() -> Iterator[httpx.Client]:
    with KmockBackend() as store, httpx.Client(base_url=store.url, timeout=10) as client:
        yield client


def _job(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default", **meta},
        "spec": {"minAvailable": 1, "tasks": TASKS},
    }


def test_a_create_is_stored_as_sent_without_server_fields(api: httpx.Client) -> None:
    made = api.post(JOBS, json=_job("a")).json()
    assert set(made["metadata"]) == {"name", "namespace"}  # no uid, resourceVersion, times
    named = api.post(JOBS, json=_job("", generateName="x-")).json()  # generateName unread
    assert named["metadata"]["name"] == ""


def test_a_list_has_no_resource_version_and_ignores_selectors(api: httpx.Client) -> None:
    api.post(JOBS, json=_job("a", labels={"k": "a"}))
    listed = api.get(JOBS, params={"labelSelector": "k=b"}).json()
    assert listed["metadata"] == {"resourceVersion": "..."}
    assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]


def test_put_is_not_served(api: httpx.Client) -> None:
    api.post(JOBS, json=_job("a"))
    for path in (f"{JOBS}/a", f"{JOBS}/a/status"):
        answer = api.put(path, json=_job("a"))
        assert (answer.status_code, answer.json()["reason"]) == (404, "Endpoint Not Found")


def test_a_status_patch_changes_the_spec_too(api: httpx.Client) -> None:
    """No status subresource: a patch of `/status` is a patch of the whole object."""
    api.post(JOBS, json=_job("a"))
    patch = {"spec": {"minAvailable": 7}, "status": {"state": {"phase": "Running"}}}
    merge = {"Content-Type": "application/merge-patch+json"}
    api.patch(f"{JOBS}/a/status", content=json.dumps(patch), headers=merge)
    got = api.get(f"{JOBS}/a").json()
    assert (got["spec"]["minAvailable"], got["status"]["state"]["phase"]) == (7, "Running")


def test_no_admission_no_dry_run_no_preconditions(api: httpx.Client) -> None:
    cyclic = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"flows": [{"name": "a", "dependsOn": {"targets": ["a"]}}]},
    }
    assert api.post(FLOWS, json=cyclic).status_code < 300  # stored
    assert api.post(JOBS, params={"dryRun": "All"}, json=_job("d")).status_code < 300
    assert api.get(f"{JOBS}/d").status_code == 200  # the dry run wrote it
    stale = {"apiVersion": "v1", "kind": "DeleteOptions"}
    stale["preconditions"] = {"resourceVersion": "1", "uid": "x"}  # type: ignore[assignment]
    assert api.request("DELETE", f"{JOBS}/d", json=stale).status_code == 200


def test_a_watch_ignores_its_resource_version_and_never_bookmarks(api: httpx.Client) -> None:
    api.post(JOBS, json=_job("a"))
    api.post(JOBS, json=_job("b"))
    query = {"watch": "true", "resourceVersion": "2", "allowWatchBookmarks": "true"}
    frames = []
    with api.stream("GET", JOBS, params={**query, "timeoutSeconds": "1"}) as answer:
        for line in answer.iter_lines():
            if line:
                frames.append(json.loads(line))
            if len(frames) == 2:
                break
    assert [(f["type"], f["object"]["metadata"]["name"]) for f in frames] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
    ]


def test_a_body_over_one_mebibyte_is_refused(api: httpx.Client) -> None:
    big = _job("a", annotations={"pad": "x" * (1024 * 1024)})
    answer = api.post(JOBS, json=big)
    assert answer.status_code == 413  # aiohttp's limit; kube-apiserver takes 3 MiB
