"""meta.k8s.io Table answers: asked for by kubectl's Accept header, with the columns `vcflow
get` prints (the wide ones at priority 1; a JobFlow's and a JobTemplate's cells as
kube-apiserver gives them from the CRD's JSONPaths: test_crd_tables.py), rows with the
object, its metadata or nothing, and watch events whose column definitions come once."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from tests.server.asgi import Client

from vcflow.api import clock
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.lease import Lease
from vcflow.api.vcjob import VCJob
from vcflow.kubeapi import columns, resources
from vcflow.server import tables

KUBECTL_GET = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
FLOWS = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows"


def flow(name: str, phase: str, done: int) -> JobFlow:
    created = clock.rfc3339(NOW - timedelta(minutes=3, seconds=12))
    return JobFlow.from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": created},
            "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]},
            "status": {
                "state": {"phase": phase},
                "completedJobs": [f"{name}-a", f"{name}-b"][:done],
            },
        }
    )


@pytest.mark.parametrize(
    ("accept", "version"),
    [
        (KUBECTL_GET, "v1"),
        ("application/json;as=Table;v=v1beta1;g=meta.k8s.io", "v1beta1"),
        ("application/json", None),
        ("", None),
        ("application/yaml;as=Table;v=v1;g=meta.k8s.io", None),
        ("application/json;as=Table;v=v2;g=meta.k8s.io", None),
    ],
)
def test_a_table_is_what_the_accept_header_asks_for(accept: str, version: str | None) -> None:
    assert tables.table_version(accept) == version


def test_the_columns_are_vcflow_gets_with_wide_ones_at_priority_one() -> None:
    body = tables.table(resources.JOBFLOWS, [flow("test", "Running", 1)], now=NOW)
    assert (body["kind"], body["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    defs = [(c["name"], c["type"], c["priority"]) for c in body["columnDefinitions"]]
    assert defs == [
        ("Name", "string", 0),
        ("Status", "string", 0),
        ("Age", "date", 0),
        ("Jobs", "string", 1),
    ]
    (row,) = body["rows"]
    assert row["cells"] == ["test", "Running", "3m12s", '["test-a"]']  # (as kube's: its CRD's)
    assert row["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {
            "name": "test",
            "namespace": "default",
            "creationTimestamp": "2026-12-01T11:56:48Z",
        },
    }


def test_vcjob_columns_keep_volcanos_names() -> None:
    names = [c["name"].upper() for c in tables.column_definitions(resources.VCJOBS)]
    assert names == ["NAME", "STATUS", "MINAVAILABLE", "RUNNINGS", "AGE", "QUEUE"]
    job = VCJob.from_dict({"metadata": {"name": "j", "namespace": "default"}})
    (row,) = tables.table(resources.VCJOBS, [job], now=NOW)["rows"]
    assert row["cells"] == ["j", "", "", "", "<unknown>", ""]


def test_lease_columns_are_kubectls() -> None:
    names = [c["name"].upper() for c in tables.column_definitions(resources.LEASES)]
    assert names == ["NAME", "HOLDER", "AGE"]
    lease = Lease.from_dict(
        {"metadata": {"name": "op", "namespace": "default"}, "spec": {"holderIdentity": "h_1"}}
    )
    (row,) = tables.table(resources.LEASES, [lease], now=NOW)["rows"]
    assert row["cells"] == ["op", "h_1", "<unknown>"]


def test_an_event_of_the_events_api_shows_when_and_how_often_as_kubectl_prints_it() -> None:
    """An Event written through events.k8s.io/v1 has no first/lastTimestamp or count in its
    core v1 view: kubectl's printer reads eventTime, the series' last observation and
    count instead (a singleton counts 1)."""
    names = [c["name"] for c in tables.column_definitions(resources.EVENTS)]
    seen, first, count = names.index("Last Seen"), names.index("First Seen"), names.index("Count")
    at = (NOW - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    last = (NOW - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    meta = {"name": "e", "namespace": "default"}
    single = Event.from_dict({"metadata": meta, "eventTime": at, "count": 0})
    repeated = Event.from_dict(
        {"metadata": meta, "eventTime": at, "series": {"count": 4, "lastObservedTime": last}}
    )
    one, many = (
        row["cells"] for row in tables.table(resources.EVENTS, [single, repeated], now=NOW)["rows"]
    )
    assert (one[seen], one[first], one[count]) == ("30s", "30s", "1")
    assert (many[seen], many[first], many[count]) == ("5s", "30s", "4")


def test_a_kind_without_printer_columns_gets_name_and_age() -> None:
    assert [c.name for c in columns.of(resources.COMMANDS)] == ["Name", "Age"]


@pytest.mark.parametrize("include", ["Object", "Metadata", "None"])
def test_include_object_chooses_what_a_row_carries(include: str) -> None:
    obj = flow("test", "Succeed", 2)
    query = {"includeObject": include}
    (row,) = tables.table(resources.JOBFLOWS, [obj], include=tables.include_object(query), now=NOW)[
        "rows"
    ]
    if include == "Object":
        assert row["object"] == obj.to_dict()
    elif include == "None":
        assert "object" not in row
    else:
        assert row["object"]["kind"] == "PartialObjectMetadata"


def test_include_object_is_metadata_by_default_and_nothing_else_is_accepted() -> None:
    assert tables.include_object({}) == "Metadata"
    with pytest.raises(tables.BadInclude, match="includeObject must be one of"):
        tables.include_object({"includeObject": "Everything"})


def test_a_list_table_carries_the_lists_metadata() -> None:
    meta = {"resourceVersion": "42", "continue": ""}
    body = tables.table(resources.JOBFLOWS, [], now=NOW, list_meta=meta)
    assert body["metadata"] == meta
    assert body["rows"] == []
    assert len(body["columnDefinitions"]) == 4


def app() -> Starlette:
    """A get, a list and a watch answered as h9's routes answer them: through the views."""
    objects = [flow("test", "Running", 1), flow("other", "Succeed", 2)]

    async def listing(request: Request) -> Response:
        if request.query_params.get("watch") == "true":
            convert = tables.watch_view(request, resources.JOBFLOWS) or (lambda d: d)
            lines = [
                json.dumps({"type": t, "object": convert(o.to_dict())}) + "\n"
                for t, o in zip(("ADDED", "MODIFIED"), objects, strict=True)
            ]
            return Response("".join(lines), media_type="application/json")
        body = {
            "kind": "JobFlowList",
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "metadata": {"resourceVersion": "7", "continue": "abc"},
            "items": [o.to_dict() for o in objects],
        }
        return tables.view(request, resources.JOBFLOWS, body) or JSONResponse(body)

    async def item(request: Request) -> Response:
        body = objects[0].to_dict()
        body["metadata"]["resourceVersion"] = "5"
        return tables.view(request, resources.JOBFLOWS, body) or JSONResponse(body)

    return Starlette(routes=[Route(FLOWS, listing), Route(FLOWS + "/test", item)])


def test_a_list_asked_as_table_is_one_with_the_lists_metadata() -> None:
    client = Client(app())
    body = client.get(FLOWS, headers={"accept": KUBECTL_GET}).json()
    assert body["kind"] == "Table"
    assert body["metadata"] == {"resourceVersion": "7", "continue": "abc"}
    assert [r["cells"][:2] for r in body["rows"]] == [["test", "Running"], ["other", "Succeed"]]
    plain = client.get(FLOWS, headers={"accept": "application/json"}).json()
    assert plain["kind"] == "JobFlowList"


def test_a_get_asked_as_table_is_a_one_row_table() -> None:
    client = Client(app())
    body = client.get(FLOWS + "/test?includeObject=Object", headers={"accept": KUBECTL_GET})
    table = body.json()
    assert table["metadata"] == {"resourceVersion": "5"}
    assert table["rows"][0]["object"]["kind"] == "JobFlow"
    bad = client.get(FLOWS + "/test?includeObject=All", headers={"accept": KUBECTL_GET})
    assert (bad.status_code, bad.json()["reason"]) == (400, "BadRequest")


def test_watch_events_carry_column_definitions_on_the_first_only() -> None:
    client = Client(app())
    answer = client.get(FLOWS + "?watch=true", headers={"accept": KUBECTL_GET})
    first, second = (json.loads(line) for line in answer.text.splitlines())
    assert first["type"] == "ADDED"
    assert len(first["object"]["columnDefinitions"]) == 4
    assert second["object"]["columnDefinitions"] == []
    assert second["object"]["rows"][0]["cells"][:2] == ["other", "Succeed"]
    plain = client.get(FLOWS + "?watch=true").text.splitlines()
    assert json.loads(plain[0])["object"]["kind"] == "JobFlow"


def test_events_have_kubes_columns() -> None:
    seen = clock.rfc3339(NOW - timedelta(seconds=42))
    event = Event.from_dict(
        {
            "metadata": {"name": "test.1", "namespace": "default"},
            "involvedObject": {"kind": "JobFlow", "name": "test"},
            "reason": "Created",
            "message": "create a job named test-a!",
            "firstTimestamp": seen,
            "lastTimestamp": seen,
            "count": 1,
        }
    )
    body = tables.table(resources.EVENTS, [event], now=NOW)
    shown = [(c["name"], c["priority"]) for c in body["columnDefinitions"]]
    assert [name for name, priority in shown if not priority] == [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Message",
    ]
    assert body["rows"][0]["cells"] == [
        "42s",
        "Normal",
        "Created",
        "jobflow/test",
        "",
        "create a job named test-a!",
        "42s",
        "1",
        "test.1",
    ]
