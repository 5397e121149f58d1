"""The controllers over the Kubernetes store ask only for what the operator's roles grant:
a Manager on a KubeStore, against `vcflow server`'s API app (runtime and controllers off)
on a real socket, runs flows that create, retry, delete and terminate vcjobs while the test
plays Volcano's job controller through the store behind the server; every request the
controllers made, turned into RBAC's (apiGroup, resource, verb), is one
`vcflow.kubeapi.permissions` grants — so deploy/'s roles (which grant exactly that table,
test_rbac.py) let the operator do its work on a cluster with RBAC.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from tests.store.kubeserver import Served

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.kubeapi import permissions, resources
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.server.app import create_app
from vcflow.store import Cursor, MemoryStore

Grant = tuple[str, str, str]
DISCOVERY = ("/api", "/apis", "/version", "/openapi")


class Recorded:
    """An ASGI app that notes each HTTP request's method, path and query."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            query = scope["query_string"].decode()
            self.requests.append((scope["method"], scope["path"], query))
        await self.app(scope, receive, send)


def grant_of(method: str, path: str, query: str) -> Grant | None:
    """RBAC's view of a request: (apiGroup, resource[/subresource], verb); None for the
    discovery paths every authenticated user may read (system:discovery)."""
    parts = path.strip("/").split("/")
    if parts[0] == "api":
        group, rest = "", parts[2:]
    elif parts[0] == "apis" and len(parts) > 3:
        group, rest = parts[1], parts[3:]
    else:
        assert path.startswith(DISCOVERY), path
        return None
    if rest and rest[0] == "namespaces" and len(rest) > 2:
        rest = rest[2:]
    assert rest, path
    plural, name, sub = rest[0], rest[1] if len(rest) > 1 else "", "/".join(rest[2:])
    resource = f"{plural}/{sub}" if sub else plural
    watching = parse_qs(query).get("watch", [""])[0] in ("true", "1")
    verb = {
        "GET": ("get" if name else "watch" if watching else "list"),
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete" if name else "deletecollection",
    }[method]
    return group, resource, verb


@pytest.fixture
def world() -> Iterator[tuple[MemoryStore, Manager, Recorded, FakeClock]]:
    clock = FakeClock()
    engine = MemoryStore(clock=clock)
    stopping = threading.Event()
    recorded = Recorded(create_app(engine, stopping=stopping))
    served = Served(recorded)
    store = KubeStore(KubeClient.for_url(served.url, timeout=10))
    try:
        yield engine, Manager(store, clock), recorded, clock
    finally:
        stopping.set()
        store.close()
        served.stop()


def template(name: str) -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
    task = {"name": "t", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


def flow() -> JobFlow:
    """a; b after a, retried once; c after a, with a deadline of 5 s per attempt."""
    retry = {"maxRetries": 1, "backoff": {"type": "Constant", "baseDelay": "1s"}}
    entries = [
        {"name": "a"},
        {"name": "b", "dependsOn": {"targets": ["a"]}, "retryPolicy": retry},
        {"name": "c", "dependsOn": {"targets": ["a"]}, "activeDeadlineSeconds": 5},
    ]
    spec = {"jobRetainPolicy": "delete", "flows": entries}
    return JobFlow.from_dict({"metadata": {"name": "f", "namespace": "default"}, "spec": spec})


def set_phase(engine: MemoryStore, name: str, phase: str) -> None:
    """Volcano's job controller: the vcjob's phase, written to the store behind the API."""
    job = engine.get(VCJob, "default", name)
    job.status = VCJobStatus(state=JobState(phase=phase))
    engine.update_status(job)


def flow_phase(engine: MemoryStore) -> str:
    status = engine.get(JobFlow, "default", "f").status
    return str(status.state.phase) if status is not None else ""


def settle_until(manager: Manager, check: Any, what: str, seconds: float = 20.0) -> None:
    """Settle until `check()` holds; the KubeStore's watches deliver the writes made behind
    the API asynchronously, so between two settles it waits for the next event."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        manager.settle()
        if check():
            return
        manager.store.wait(Cursor.now(manager.store), 0.05)
    pytest.fail(f"never: {what}")


def test_the_controllers_ask_only_for_what_the_operators_roles_grant(
    world: tuple[MemoryStore, Manager, Recorded, FakeClock],
) -> None:
    engine, manager, recorded, clock = world
    engine.apply([template("a"), template("b"), template("c"), flow()])

    def names() -> set[str]:
        return {j.name for j in engine.list(VCJob)}

    settle_until(manager, lambda: names() == {"f-a"}, "f-a created")
    set_phase(engine, "f-a", "Completed")
    settle_until(manager, lambda: names() == {"f-a", "f-b", "f-c"}, "f-b and f-c created")
    set_phase(engine, "f-b", "Failed")  # retried: deleted, then created again
    set_phase(engine, "f-c", "Running")

    def second() -> bool:
        """Time goes on (past b's backoff and c's deadline) until b's second attempt: the
        watches bring f-b's failure when they do, and its backoff starts from then."""
        clock.advance(1)
        return any(
            j.metadata.annotations.get("vcflow.io/attempt") == "2" for j in engine.list(VCJob)
        )

    def terminated() -> bool:
        return second() and bool(engine.list(resources.COMMANDS.model))

    settle_until(manager, terminated, "f-b's second attempt and a TerminateJob for f-c")
    set_phase(engine, "f-b", "Completed")
    set_phase(engine, "f-c", "Terminated")
    settle_until(manager, lambda: flow_phase(engine) in ("Succeed", "Failed"), "the flow's end")

    granted = {
        (r.group, r.resource, verb)
        for table in (permissions.OPERATOR, permissions.OPERATOR_NAMESPACED)
        for r in table
        for verb in r.verbs
    }
    asked = {g for g in (grant_of(*r) for r in recorded.requests) if g is not None}
    assert asked - granted == set()
    done = {
        (resources.VCJOBS.group, "jobs", "create"),
        (resources.VCJOBS.group, "jobs", "delete"),
        (resources.COMMANDS.group, "commands", "create"),
    }
    assert done <= asked  # the run did what it claims


@pytest.mark.parametrize(
    ("request_", "grant"),
    [
        (("GET", "/apis/flow.volcano.sh/v1alpha1/jobflows", "watch=true"), "watch"),
        (("GET", "/apis/flow.volcano.sh/v1alpha1/jobflows", "limit=1"), "list"),
        (("GET", "/apis/flow.volcano.sh/v1alpha1/namespaces/d/jobflows/f", ""), "get"),
        (("PATCH", "/apis/flow.volcano.sh/v1alpha1/namespaces/d/jobflows/f/status", ""), "patch"),
        (("POST", "/api/v1/namespaces/d/events", ""), "create"),
        (("DELETE", "/apis/batch.volcano.sh/v1alpha1/namespaces/d/jobs/x", ""), "delete"),
    ],
)
def test_requests_map_to_rbac_verbs(request_: tuple[str, str, str], grant: str) -> None:
    found = grant_of(*request_)
    assert found is not None and found[2] == grant
    assert grant_of("GET", "/apis", "") is None
