"""`admission: Hold` (docs/scheduling.md, `reconcile.neverfits`): a flow an entry of which can
never fit its queue or this machine is held before any vcjob is made, with one line saying
which entry, which resource, and against what; released once nothing says so."""

from __future__ import annotations

from typing import Any

from tests.reconcile.test_flow_index import T0, job, mark
from tests.reconcile.test_flow_scheduling import make, tmpl

from vcflow.api.queues import QueueTable
from vcflow.api.scheduling import Queue
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import neverfits
from vcflow.reconcile.vcjob import resources


def queue(name: str, state: str | None = None, **capability: Any) -> Queue:
    body: dict[str, Any] = {
        "metadata": {"name": name, "namespace": ""},
        "spec": {"weight": 1, **({"capability": capability} if capability else {})},
    }
    if state is not None:
        body["status"] = {"state": state}
    return Queue.from_dict(body)


P1P2 = [{"name": "p1"}, {"name": "p2", "dependsOn": {"targets": ["p1"]}}]
TEMPLATES = {"p1": tmpl("p1", cpu="1"), "p2": tmpl("p2", cpu="4")}


def why(
    spec_queue: str | None,
    queues: list[Queue],
    machine: dict[str, str] | None = None,
    entries: list[dict[str, Any]] = P1P2,
    temps: Any = None,
) -> str:
    flow = make({"admission": "Hold"}, entries)
    if spec_queue is not None:
        assert flow.spec is not None
        flow.spec.queue = spec_queue
    return neverfits.why_held(
        flow, temps or TEMPLATES, QueueTable.of(queues), resources.capacity(machine)
    )


def test_over_the_queue_s_capability() -> None:
    assert why("team-a", [queue("team-a", cpu="2")]) == (
        "entry p2 needs cpu 4; queue team-a capability cpu 2"
    )


def test_over_the_machine() -> None:
    assert why(None, [], {"cpu": "2"}) == "entry p2 needs cpu 4; this machine has cpu 2"


def test_a_closed_queue() -> None:
    assert why("team-a", [queue("team-a", "Closed")]) == "queue team-a is Closed"


def test_fits_when_the_capability_does_not_list_the_resource_or_is_large() -> None:
    assert why("team-a", [queue("team-a", memory="1Gi")]) == ""
    assert why("team-a", [queue("team-a", cpu="8")], {"cpu": "4"}) == ""


def test_default_is_implicit_and_uncapped_and_an_unknown_queue_holds_nothing() -> None:
    assert why(None, []) == ""
    assert why("nowhere", []) == ""


def test_an_entry_patch_names_its_own_queue() -> None:
    entries = [P1P2[0], {**P1P2[1], "patch": {"jobSpec": {"queue": "big"}}}]
    queues = [queue("team-a", cpu="2"), queue("big", cpu="16")]
    assert why("team-a", queues, entries=entries) == ""


def test_each_switch_case_is_checked() -> None:
    entries = [{"name": "p", "switch": [{"when": "true", "template": "p1"}, {"template": "p2"}]}]
    assert why(None, [], {"cpu": "2"}, entries=entries) == (
        "entry p needs cpu 4; this machine has cpu 2"
    )


def test_a_gang_needs_its_minimum_only() -> None:
    temps = {"p1": tmpl("p1"), "p2": tmpl("p2", cpu="1", replicas=8, min_available=2)}
    assert why(None, [], {"cpu": "2"}, temps=temps) == ""
    temps["p2"] = tmpl("p2", cpu="1", replicas=8, min_available=3)
    assert why(None, [], {"cpu": "2"}, temps=temps) == (
        "entry p2 needs cpu 3; this machine has cpu 2"
    )


def test_an_undeclared_extended_resource() -> None:
    gpu = tmpl("p2")
    assert gpu.spec is not None and gpu.spec.tasks
    pod = gpu.spec.tasks[0].template
    assert pod is not None and pod.spec is not None and pod.spec.containers
    resources_ = pod.spec.containers[0].resources
    assert resources_ is not None and resources_.requests is not None
    resources_.requests["nvidia.com/gpu"] = "1"
    got = why(None, [], {"cpu": "8"}, temps={"p1": tmpl("p1"), "p2": gpu})
    assert got == "entry p2 needs nvidia.com/gpu 1; this machine has no nvidia.com/gpu"


def test_a_held_flow_creates_nothing_and_says_why_until_released() -> None:
    flow = make({"admission": "Hold"}, P1P2)
    message = "entry p2 needs cpu 4; this machine has cpu 2"
    index, plan = reconcile.plan(flow, TEMPLATES, [], now=T0, held=message)
    assert plan.create == ()
    status = index.status().to_dict()
    assert status["state"] == {"phase": "Pending", "reason": "Held", "message": message}
    assert status["conditions"]["f-p1"] == {
        "phase": "Waiting",
        "reason": "Held",
        "message": message,
    }
    assert status["conditions"]["f-p2"]["reason"] == "Dependencies"
    index.hold("")
    plan = index.decide(TEMPLATES)
    assert [j.name for j in plan.create] == ["f-p1"]
    assert "reason" not in index.status().to_dict()["state"]


def test_a_hold_never_stops_a_flow_that_has_started() -> None:
    flow = make({"admission": "Hold"}, P1P2)
    index, plan = reconcile.plan(flow, TEMPLATES, [], now=T0)
    mark(index, plan)
    index.observe(job(flow, "p1", "Completed"), T0)
    assert index.started
    index.hold("queue team-a is Closed")
    assert [j.name for j in index.decide(TEMPLATES).create] == ["f-p2"]
