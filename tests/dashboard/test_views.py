"""The dashboard's JSON from a flow (`dashboard.views`, `dashboard.detail`): rows, nodes
and edges as docs/dashboard.md's contract names them, the reasons `describe jf` prints,
`onExit` node ids, a `for` entry's items paged, only changed nodes in a `nodes` frame,
and an entry's attempts from its phase history. Pure: a fixed time."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.dashboard import detail, views
from vcflow.reconcile import jobs as jobbuild

NOW = datetime(2026, 1, 1, 0, 10, tzinfo=UTC)
T0 = "2026-01-01T00:00:00Z"
T1 = "2026-01-01T00:01:00Z"
T2 = "2026-01-01T00:02:00Z"


def make(entries: list[dict[str, Any]], status: dict[str, Any], **spec: Any) -> JobFlow:
    return JobFlow.from_dict(
        {
            "metadata": {
                "name": "f",
                "namespace": "default",
                "uid": "u",
                "creationTimestamp": T0,
                "labels": {"team": "a"},
                "resourceVersion": "7",
            },
            "spec": {"flows": entries, **spec},
            "status": status,
        }
    )


ENTRIES = [
    {"name": "a", "runningEstimate": "5m"},
    {"name": "b", "dependsOn": {"targets": ["a"]}},
    {"name": "c", "dependsOn": {"targets": ["a"], "strategy": "any"}, "when": "true"},
    {"name": "sweep", "for": {"items": [1, 2, 3]}, "dependsOn": {"targets": ["b"]}},
    {"name": "tidy"},
]


def running() -> JobFlow:
    conditions = {
        "f-a": {"phase": "Running", "createTime": T0},
        "f-b": {"phase": "Waiting", "reason": "Dependencies", "message": "waiting for all of: a"},
        "f-c": {"phase": "Skipped", "reason": "WhenFalse", "message": "when false: x"},
        "f-sweep": {"phase": "Running", "reason": "ForEach"},
        "f-sweep-0": {"phase": "Completed"},
        "f-sweep-1": {"phase": "Running"},
    }
    records = [
        {"name": "f-a", "state": "Running", "startTimestamp": T1},
        {"name": "f-sweep-0", "state": "Completed", "startTimestamp": T0, "endTimestamp": T1},
        {"name": "f-sweep-1", "state": "Running", "startTimestamp": T1},
    ]
    status = {
        "state": {"phase": "Running"},
        "conditions": conditions,
        "jobStatusList": records,
    }
    return make(ENTRIES, status, onExit=["tidy"])


def test_a_row_counts_entries_done_and_gives_an_eta() -> None:
    row = views.row(views.look(running(), NOW))
    assert row == {
        "namespace": "default",
        "name": "f",
        "uid": "u",
        "phase": "Running",
        "done": 1,  # (c Skipped)
        "total": 5,
        "created": T0,
        "started": T0,
        "finished": None,
        "labels": {"team": "a"},
        "eta": row["eta"],
        "etaSeconds": row["etaSeconds"],
    }
    assert row["etaSeconds"] is not None and row["etaSeconds"] > 0
    assert row["eta"].endswith("Z")


def test_nodes_say_kind_phase_reason_items_and_exit_ids() -> None:
    graph = views.graph(views.look(running(), NOW), read_only=True)
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert list(nodes) == ["a", "b", "c", "sweep", "onExit:tidy"]
    assert nodes["a"]["kind"] == "job" and nodes["a"]["reason"] is None
    assert nodes["a"]["started"] == T1 and nodes["a"]["finished"] is None
    assert nodes["b"]["reason"] == "waiting for all of: a"  # describe jf's text
    assert nodes["c"]["kind"] == "when" and nodes["c"]["phase"] == "Skipped"
    assert nodes["c"]["reason"] == "when false: x"
    assert nodes["sweep"]["kind"] == "for"
    assert nodes["sweep"]["items"] == {"done": 1, "total": 3}
    assert nodes["sweep"]["started"] == T0
    assert nodes["onExit:tidy"]["kind"] == "exit" and nodes["onExit:tidy"]["label"] == "tidy"
    assert graph["edges"] == [
        {"source": "a", "target": "b", "label": ""},
        {"source": "a", "target": "c", "label": "any"},
        {"source": "b", "target": "sweep", "label": ""},
    ]
    assert graph["readOnly"] is True
    header = graph["flow"]
    assert header["resourceVersion"] == "7" and header["criticalPath"][0] == "a"
    assert all(nodes[n]["critical"] for n in header["criticalPath"])


def test_a_scheduler_s_reason_on_a_waiting_vcjob_wins_as_in_describe() -> None:
    flow = make(
        [{"name": "a"}],
        {"conditions": {"f-a": {"phase": "Pending"}}, "state": {"phase": "Running"}},
    )
    job = VCJob.from_dict(
        {
            "metadata": {
                "name": "f-a",
                "namespace": "default",
                "ownerReferences": [jobbuild.owner_reference(flow).to_dict()],
            },
            "status": {
                "state": {"phase": "Pending"},
                "conditions": [
                    {"status": "Pending", "reason": "Unschedulable", "message": "queue q full"}
                ],
            },
        }
    )
    (node,) = views.nodes(views.look(flow, NOW, jobs=[job]))
    assert node["reason"] == "queue q full"


def test_a_nodes_frame_carries_only_the_nodes_that_changed() -> None:
    before = {n["id"]: views.slim(n) for n in views.nodes(views.look(running(), NOW))}
    flow = running()
    assert flow.status is not None and flow.status.conditions is not None
    flow.status.conditions["f-sweep-1"].phase = "Completed"
    now = views.nodes(views.look(flow, NOW))
    changed = views.changed(before, now)
    assert [n["id"] for n in changed] == ["sweep"]
    assert changed[0]["items"] == {"done": 2, "total": 3}
    assert set(changed[0]) == {"id", *views.CHANGING}
    assert views.changed(before, views.nodes(views.look(running(), NOW))) == []


def test_the_shape_changes_with_the_spec_or_the_uid_only() -> None:
    flow = running()
    assert views.shape(flow) == views.shape(running())
    flow.metadata.uid = "v"
    assert views.shape(flow) != views.shape(running())


def test_items_are_paged_and_bounded() -> None:
    view = views.look(running(), NOW)
    page = views.items(view, "sweep", 1, 5)
    assert page == {
        "total": 3,
        "items": [
            {"index": 1, "job": "f-sweep-1", "phase": "Running", "started": T1, "finished": None},
            {"index": 2, "job": "f-sweep-2", "phase": "", "started": None, "finished": None},
        ],
    }
    assert views.items(view, "a", 0, 10) is None
    assert views.items(view, "nope", 0, 10) is None


def test_an_entry_s_detail_lists_its_vcjob_attempts_pods_and_events() -> None:
    flow = running()
    assert flow.status is not None and flow.status.job_status_list is not None
    flow.status.job_status_list[0] = flow.status.job_status_list[0].model_validate(
        {
            "name": "f-a",
            "state": "Running",
            "startTimestamp": T1,
            "attempt": 2,
            "outputs": {"model": "m1"},
            "runningHistories": [
                {"startTimestamp": T0, "state": "Running"},
                {"startTimestamp": T1, "state": "Failed"},
                {"startTimestamp": T1, "state": "Pending"},
                {"startTimestamp": T2, "state": "Running"},
            ],
        }
    )
    owner = jobbuild.owner_reference(flow).to_dict()
    job = VCJob.from_dict(
        {
            "metadata": {"name": "f-a", "namespace": "default", "ownerReferences": [owner]},
            "status": {"state": {"phase": "Running"}, "retryCount": 1},
        }
    )
    pod = Pod.from_dict(
        {
            "metadata": {
                "name": "f-a-t-0",
                "namespace": "default",
                "labels": {"volcano.sh/job-name": "f-a"},
            },
            "spec": {"containers": [{"name": "main"}], "nodeName": "n1"},
            "status": {"phase": "Running", "startTime": T2},
        }
    )
    other = Event.from_dict(
        {
            "metadata": {"name": "e1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "f-b-t-0"},
            "reason": "Started",
            "message": "not a's",
        }
    )
    mine = Event.from_dict(
        {
            "metadata": {"name": "e2", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "f-a-t-0"},
            "type": "Normal",
            "reason": "Started",
            "message": "started",
            "lastTimestamp": T2,
        }
    )
    found = detail.entry(views.look(flow, NOW), "a", [job], [pod], [other, mine])
    assert found is not None
    (vcjob,) = found["vcjobs"]
    assert vcjob["retryCount"] == 1 and vcjob["outputs"] == {"model": "m1"}
    assert vcjob["attempts"] == [
        {
            "attempt": 1,
            "phase": "Failed",
            "started": T0,
            "finished": T1,
            "exitCode": None,
            "reason": None,
        },
        {
            "attempt": 2,
            "phase": "Running",
            "started": T1,
            "finished": None,
            "exitCode": None,
            "reason": None,
        },
    ]
    assert vcjob["pods"] == [
        {
            "name": "f-a-t-0",
            "phase": "Running",
            "node": "n1",
            "containers": ["main"],
            "started": T2,
            "finished": None,
        }
    ]
    assert [e["object"] for e in found["events"]] == ["pod/f-a-t-0"]
    assert detail.entry(views.look(flow, NOW), "onExit:tidy", [], [], [])["entry"]["id"] == (
        "onExit:tidy"
    )
    assert detail.entry(views.look(flow, NOW), "nope", [], [], []) is None
