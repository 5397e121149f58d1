"""/metrics: flows, vcjobs and running pods by phase kept from the store's changes,
API request durations by verb, resource and code (ASGI middleware), the controllers' sync
durations, work-queue depths and dependency-met → vcjob-created waits (the manager's
observer); one registry per app."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from tests.server.asgi import Client

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.server import metrics
from vcflow.store import MemoryStore

from .conftest import FLOW as FLOW_API
from .conftest import Start, flow_phase, jobflow, wait_until
from .conftest import template as template_of

FLOWS = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found[s.name, tuple(sorted(s.labels.items()))] = s.value
    return found


def template(name: str) -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}
    task: dict[str, Any] = {"name": "t", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


def fan_out() -> JobFlow:
    """a, then b and c once a is Completed."""
    after_a = {"dependsOn": {"targets": ["a"]}}
    spec = {"flows": [{"name": "a"}, {"name": "b", **after_a}, {"name": "c", **after_a}]}
    return JobFlow.from_dict({"metadata": {"name": "f", "namespace": "default"}, "spec": spec})


def app(m: metrics.Metrics) -> Starlette:
    async def flows(request: Request) -> Response:
        if request.method == "POST":
            return JSONResponse({"kind": "Status", "code": 409}, status_code=409)
        return JSONResponse({"kind": "JobFlowList", "items": []})

    async def log(request: Request) -> Response:
        return PlainTextResponse("hello\n")

    return Starlette(
        routes=[
            m.route(),
            Route(FLOWS, flows, methods=["GET", "POST"]),
            Route("/api/v1/namespaces/default/pods/{name}/log", log),
        ],
        middleware=[m.middleware()],
    )


def test_api_requests_are_timed_by_verb_resource_and_code() -> None:
    m = metrics.Metrics(MemoryStore())
    client = Client(app(m))
    client.get(FLOWS)
    client.get(FLOWS)
    client.request("POST", FLOWS, json={})
    client.get("/api/v1/namespaces/default/pods/p-0/log")
    got = samples(client.get("/metrics").text)
    count = "vcflow_api_request_duration_seconds_count"
    assert got[count, (("code", "200"), ("resource", "jobflows"), ("verb", "LIST"))] == 2
    assert got[count, (("code", "409"), ("resource", "jobflows"), ("verb", "POST"))] == 1
    assert got[count, (("code", "200"), ("resource", "pods/log"), ("verb", "GET"))] == 1


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/apis/flow.volcano.sh/v1alpha1/jobflows", "", ("LIST", "jobflows", False)),
        ("GET", FLOWS, "watch=true&resourceVersion=3", ("WATCH", "jobflows", True)),
        ("GET", FLOWS + "/test", "", ("GET", "jobflows", False)),
        ("PUT", FLOWS + "/test/status", "", ("PUT", "jobflows/status", False)),
        ("PATCH", FLOWS + "/test", "fieldValidation=Strict", ("PATCH", "jobflows", False)),
        ("DELETE", FLOWS + "/test", "", ("DELETE", "jobflows", False)),
        ("DELETE", FLOWS, "", ("DELETECOLLECTION", "jobflows", False)),
        ("GET", "/api/v1/namespaces/d/pods/p/log", "follow=true", ("GET", "pods/log", True)),
        ("GET", "/apis/flow.volcano.sh/v1alpha1", "", ("GET", "", False)),
        ("GET", "/apis/evil.io/v1/namespaces/d/xs/" + "a" * 50, "", ("GET", "", False)),
        ("GET", "/openapi/v2", "", ("GET", "", False)),
    ],
)
def test_request_labels_are_kube_apiservers_and_bounded(
    method: str, path: str, query: str, expected: tuple[str, str, bool]
) -> None:
    assert metrics.request_labels(method, path, query) == expected


def test_flows_jobs_and_running_pods_are_counted_from_the_store_at_scrape() -> None:
    store = MemoryStore()
    m = metrics.Metrics(store)
    client = Client(app(m))
    before = samples(client.get("/metrics").text)
    assert not [k for k in before if k[0] == "vcflow_jobflows"]
    store.apply([template("a"), template("b"), template("c"), fan_out()])
    Manager(store).settle()
    job = store.get(VCJob, "default", "f-a")
    job.status = VCJobStatus(state=JobState(phase="Running"))
    store.update_status(job)
    got = samples(client.get("/metrics").text)
    assert got["vcflow_jobflows", (("phase", "Pending"),)] == 1
    assert got["vcflow_vcjobs", (("phase", "Running"),)] == 1
    assert got["vcflow_pods_running", ()] == 0


class _CountingStore:
    """A store that counts its `list` calls (the reads of every object)."""

    def __init__(self, store: MemoryStore) -> None:
        self.store, self.lists = store, 0

    def list(self, *args: Any, **kwargs: Any) -> Any:
        self.lists += 1
        return self.store.list(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def test_a_scrape_reads_only_the_changes_since_the_last() -> None:
    store = MemoryStore()
    store.apply([template("a"), template("b"), template("c"), fan_out()])
    Manager(store).settle()
    counting = _CountingStore(store)
    m = metrics.Metrics(counting)  # type: ignore[arg-type]
    client = Client(app(m))
    first = samples(client.get("/metrics").text)
    assert first["vcflow_vcjobs", (("phase", "Pending"),)] == 1
    listed = counting.lists
    job = store.get(VCJob, "default", "f-a")
    job.status = VCJobStatus(state=JobState(phase="Running"))
    store.update_status(job)
    got = samples(client.get("/metrics").text)
    assert got["vcflow_vcjobs", (("phase", "Running"),)] == 1
    assert ("vcflow_vcjobs", (("phase", "Pending"),)) not in got
    store.delete(VCJob, "default", "f-a", force=True)
    store.delete(JobFlow, "default", "f", force=True)
    gone = samples(client.get("/metrics").text)
    assert not [k for k in gone if k[0] in ("vcflow_jobflows", "vcflow_vcjobs")]
    assert counting.lists == listed  # (no scrape after the first read every object)


def test_the_controllers_report_syncs_queue_depths_and_dependency_waits() -> None:
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    store.apply([template("a"), template("b"), template("c"), fan_out()])
    m = metrics.Metrics(store)
    manager = Manager(store, clock, options=ControllerOptions(create_batch=1, observer=m.observer))
    manager.settle()  # creates f-a at once: a root, waited 0 s since the flow was seen
    job = store.get(VCJob, "default", "f-a")
    job.status = VCJobStatus(state=JobState(phase="Completed"))
    store.update_status(job)
    clock.advance(2)
    manager.settle()  # b and c met now; one vcjob per settle: f-b
    clock.advance(5)
    manager.settle()  # f-c, 5 s after its dependency was met
    assert sorted(j.name for j in store.list(VCJob)) == ["f-a", "f-b", "f-c"]
    got = samples(m.exposition().decode())
    wait = "vcflow_dependency_met_to_vcjob_created_seconds"
    assert got[wait + "_count", ()] == 3
    assert got[wait + "_sum", ()] == 5
    assert got[wait + "_bucket", (("le", "0.001"),)] == 2
    syncs = got["vcflow_reconcile_duration_seconds_count", (("controller", "jobflow"),)]
    assert syncs >= 3
    assert got["vcflow_workqueue_depth", (("name", "jobflow"),)] == 0
    assert ("vcflow_workqueue_depth", (("name", "jobtemplate"),)) in got


def test_each_app_has_its_own_registry() -> None:
    first, second = metrics.Metrics(MemoryStore()), metrics.Metrics(MemoryStore())
    Client(app(first)).get(FLOWS)
    got = samples(Client(app(second)).get("/metrics").text)
    assert not [k for k in got if k[0] == "vcflow_api_request_duration_seconds_count"]


def test_a_real_server_reports_its_flows_controllers_and_requests(start_server: Start) -> None:
    server = start_server()
    with server.client() as client:
        for obj in (template_of("a", "true"), template_of("b", "true"), jobflow("f", "a", "b<a")):
            base = FLOW_API + ("/jobflows" if obj["kind"] == "JobFlow" else "/jobtemplates")
            assert client.post(base, json=obj).status_code == 201
        wait_until(lambda: flow_phase(client, "f") == "Succeed", "flow f to succeed")
        got = samples(client.get("/metrics").text)
    assert got["vcflow_jobflows", (("phase", "Succeed"),)] == 1
    assert got["vcflow_dependency_met_to_vcjob_created_seconds_count", ()] == 2
    assert got["vcflow_reconcile_duration_seconds_count", (("controller", "jobflow"),)] >= 2
    assert ("vcflow_workqueue_depth", (("name", "jobflow"),)) in got
    posted = (("code", "201"), ("resource", "jobtemplates"), ("verb", "POST"))
    assert got["vcflow_api_request_duration_seconds_count", posted] == 2
