"""Events through the events API: the controllers' Recorder writes core v1 Events, which a
KubeStore sends as `events.k8s.io/v1` (regarding, note, action, reportingController
"vcflow", reportingInstance, eventTime; no deprecated field) and reads back as core v1
(describe shows them); `vcflow server` serves the events API from the core Events'
storage, converting both ways, checking creates as kube does. Over the server's app."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.store.conftest import flow, template, vcjob
from tests.store.kuberecording import Recorded
from tests.store.kubeserver import KubeBackend
from typer.testing import CliRunner

from vcflow.api.clock import FakeClock
from vcflow.api.event import Event
from vcflow.cli.app import app
from vcflow.controller.events import Recorder
from vcflow.controller.manager import Manager
from vcflow.kubestore import eventsapi
from vcflow.store import MemoryStore
from vcflow.store.base import Cursor

V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


@pytest.fixture
def backend() -> Iterator[KubeBackend]:
    served = KubeBackend(MemoryStore(clock=FakeClock()))
    with served:
        yield served


def test_the_recorder_writes_through_the_events_api(
    backend: KubeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = backend.store
    job = store.create(vcjob("a"))
    recorded = Recorded(store, monkeypatch)
    Recorder(store, FakeClock()).record(job, "Warning", "Failed", "it failed")
    (post,) = [s for s in recorded.sent if s.method == "POST"]
    assert post.path == V1
    body = post.body
    assert not [key for key in body if key.startswith("deprecated")], body
    assert body["regarding"]["name"] == "a" and body["regarding"]["kind"] == "Job"
    assert (body["note"], body["reason"], body["type"]) == ("it failed", "Failed", "Warning")
    assert (body["action"], body["reportingController"]) == ("Failed", "vcflow")
    assert body["reportingInstance"] == eventsapi.default_instance()
    assert MICRO.match(body["eventTime"]), body["eventTime"]
    (stored,) = backend.engine.list(Event)  # one storage: a core v1 Event on the server
    assert stored.involved_object.name == "a" and stored.message == "it failed"
    assert stored.reporting_component == "vcflow" and stored.event_time == body["eventTime"]
    (read,) = store.list(Event)  # read back through the events API, as core v1
    assert (read.message, read.reason, read.type, read.count) == (
        "it failed",
        "Failed",
        "Warning",
        1,
    )
    assert read.first_timestamp == read.last_timestamp == body["eventTime"][:19] + "Z"
    assert read.source is not None and read.source.component == "vcflow"
    found, _ = store.poll_events(Cursor(), (Event,))
    assert [e.object.involved_object.name for e in found] == ["a"]  # watched, converted too


def test_a_counted_event_goes_out_as_a_series() -> None:
    core = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "default"},
        "involvedObject": {"kind": "Job", "name": "a"},
        "reason": "Restarted",
        "message": "again",
        "count": 3,
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:05:00Z",
        "source": {"component": "vc-controller-manager"},
    }
    sent = eventsapi.outgoing(core, instance="i")
    assert sent["series"] == {"count": 3, "lastObservedTime": "2026-01-01T00:05:00.000000Z"}
    assert sent["eventTime"] == "2026-01-01T00:00:00.000000Z"
    back = eventsapi.incoming(sent)
    assert (back["count"], back["lastTimestamp"], back["firstTimestamp"]) == (
        3,
        "2026-01-01T00:05:00Z",
        "2026-01-01T00:00:00Z",
    )


def test_describe_over_the_kube_store_shows_the_flows_events(backend: KubeBackend) -> None:
    store = backend.store
    store.create(template("a"))
    store.create(flow("f", "a"))
    Manager(store, FakeClock()).settle()  # the controllers over the KubeStore: Created
    described = CliRunner().invoke(app, ["--server", store.url, "describe", "jf", "f"])
    assert described.exit_code == 0, described.output
    events = described.stdout.split("Events:", 1)[1]
    assert re.search(r"Normal\s+Created\s+\S+\s+vcflow\s+create a job named f-a!", events), events


def _http(backend: KubeBackend) -> httpx.Client:
    return httpx.Client(base_url=backend.store.url, timeout=10)


def test_the_server_serves_core_events_through_the_events_api(backend: KubeBackend) -> None:
    job = backend.engine.create(vcjob("a"))
    Recorder(backend.engine, FakeClock()).record(job, "Normal", "Created", "made")
    with _http(backend) as http:
        listed = http.get(V1, params={"fieldSelector": "regarding.name=a"}).json()
        assert (listed["apiVersion"], listed["kind"]) == ("events.k8s.io/v1", "EventList")
        (item,) = listed["items"]
        assert (item["apiVersion"], item["note"], item["regarding"]["name"]) == (
            "events.k8s.io/v1",
            "made",
            "a",
        )
        assert item["deprecatedSource"] == {"component": "vc-controller-manager"}
        assert "message" not in item and "involvedObject" not in item
        none = http.get(V1, params={"fieldSelector": "regarding.name=b"}).json()
        assert none["items"] == []
        one = http.get(f"{V1}/{item['metadata']['name']}").json()
        assert one["note"] == "made"
        core = http.get("/api/v1/namespaces/default/events").json()["items"]
        assert [e["message"] for e in core] == ["made"]


def _new(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e1", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-0",
        "action": "Sync",
        "reason": "Synced",
        "type": "Normal",
        "regarding": {"kind": "Job", "name": "a", "namespace": "default"},
        "note": "ok",
        **fields,
    }


def test_an_events_api_create_is_checked_as_kube_checks_it(backend: KubeBackend) -> None:
    with _http(backend) as http:
        refused = http.post(V1, json=_new(deprecatedCount=2, action="", type="Odd"))
        assert refused.status_code == 422
        fields = sorted(c["field"] for c in refused.json()["details"]["causes"])
        assert fields == ["action", "deprecatedCount", "type"]
        created = http.post(V1, json=_new())
        assert created.status_code == 201, created.text
        assert created.json()["reportingController"] == "example.com/ctl"
        (stored,) = backend.engine.list(Event)
        assert stored.message == "ok" and stored.involved_object.name == "a"
        patched = http.patch(
            f"{V1}/e1",
            json={"series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}},
            headers={"content-type": "application/merge-patch+json"},
        )
        assert patched.status_code == 200, patched.text
        assert backend.engine.get(Event, "default", "e1").series is not None
        assert http.delete(f"{V1}/e1").status_code == 200
        assert backend.engine.list(Event) == []
