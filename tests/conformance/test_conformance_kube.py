"""Every controller conformance case on the Kubernetes backend: the controllers (`Manager`)
and the case's actions over a `KubeStore`, talking HTTP to `vcflow server`'s application (a
bare Kubernetes-API store: controllers and runtime off) on a real loopback socket, around
the case's memory store (tests/store/kubeserver.py). The server's store takes the world's
virtual clock, so it stamps every object (creationTimestamp, status times) with the case's
time; `fail_creates` faults are the server's refusals (a 422 over the API, as a webhook
refusing the vcjob); `set_phase` is a write of the vcjob's status subresource, as Volcano's
job controller makes it. Every controller case runs here: none needs the memory store."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send
from tests.store.conftest import flow, template
from tests.store.kubeserver import KubeBackend, Served

from vcflow.api.clock import rfc3339
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.conformance import HarnessStore, Passed, Skipped, load_case, run_file
from vcflow.conformance.world import World
from vcflow.kubeapi import resources
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.server.app import create_app

HERE = Path(__file__).parent
CONTROLLER_CASES = sorted((HERE / "cases" / "controller").rglob("*.yaml"))
VCFLOW_CASES = sorted((HERE / "vcflow").rglob("vf-ctl-*.yaml"))  # (vf-adm-*: admission)
CASE_FILES = CONTROLLER_CASES + VCFLOW_CASES


def test_the_controller_cases_are_there() -> None:
    assert len(CONTROLLER_CASES) >= 17 and len(VCFLOW_CASES) >= 30
    assert all(load_case(str(p)).kind == "controller" for p in CASE_FILES)


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_controller_case_on_kube(path: Path) -> None:
    result = run_file(str(path), serve=KubeBackend).result
    if isinstance(result, Skipped):
        pytest.skip(result.reason)
    assert isinstance(result, Passed), result.reason


class _Requests:
    """ASGI middleware recording each request's method and path."""

    def __init__(self, app: ASGIApp, seen: list[tuple[str, str]]) -> None:
        self.app, self.seen = app, seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.seen.append((str(scope["method"]), str(scope["path"])))
        await self.app(scope, receive, send)


def test_set_phase_and_the_controllers_write_status_through_the_subresource() -> None:
    """Over the API, a vcjob's phase (the case's `set_phase`, playing Volcano's job
    controller) and a flow's status (the controllers) are written to `.../status` only: the
    vcjobs are created by the controllers and never written whole, the flows never by them."""
    seen: list[tuple[str, str]] = []

    @contextmanager
    def serve(harness: HarnessStore) -> Iterator[KubeStore]:
        stopping = threading.Event()
        app = create_app(harness, stopping=stopping, middleware=[Middleware(_Requests, seen=seen)])
        served = Served(app)
        store = KubeStore(KubeClient.for_url(served.url, timeout=10))
        try:
            yield store
        finally:
            store.close()
            stopping.set()
            served.stop()

    path = HERE / "cases" / "controller" / "ctl-01-chain-lifecycle.yaml"
    assert run_file(str(path), serve=serve).result == Passed("7 steps")
    vcjobs = resources.of_model(VCJob).path("default")
    flows = resources.of_model(JobFlow).path("default")
    writes = [(m, p) for m, p in seen if m not in ("GET", "HEAD")]
    job_writes = {(m, p.removeprefix(vcjobs).count("/")) for m, p in writes if p.startswith(vcjobs)}
    assert ("POST", 0) in job_writes and any(p.endswith("/status") for _, p in writes)
    for method, path_ in writes:
        if path_.startswith(vcjobs + "/"):
            assert path_.endswith("/status") or method == "DELETE", (method, path_)
        if path_.startswith(flows + "/") and method != "DELETE":
            assert path_.endswith("/status"), (method, path_)


def test_the_server_stamps_objects_with_the_worlds_clock() -> None:
    """The server's store runs on the case's virtual clock: a vcjob the controllers create
    over the API after `wait` is stamped with the virtual time, not the wall clock's."""
    with World("default", KubeBackend) as world:
        world.clock.advance(3600)
        world.store.create(template("a"))
        world.store.create(flow("f", "a"))
        world.settle()
        job = world.store.get(VCJob, "default", "f-a")
        assert isinstance(world.store, KubeStore)
        assert (
            job.metadata.creation_timestamp == rfc3339(world.clock.now()) == "2026-01-01T01:00:00Z"
        )
