"""What a flow tells a scheduler (docs/scheduling.md, `reconcile.scheduling`): the
`vcflow.io/flow-created`, `vcflow.io/rank` and `vcflow.io/handover` annotations on the
vcjobs it creates, only under the policy that asks for each, and the creation order of a
CriticalPath flow's ready entries (highest rank first)."""

from __future__ import annotations

import json
from typing import Any

from tests.reconcile.test_flow_index import T0, entry, job, mark

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.scheduling import FLOW_CREATED, HANDOVER, RANK
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import scheduling

CREATED = "2026-01-01T00:00:00Z"


def make(policy: dict[str, Any] | None, entries: list[dict[str, Any]]) -> JobFlow:
    spec: dict[str, Any] = {"flows": entries}
    if policy is not None:
        spec["schedulingPolicy"] = policy
    meta = {"name": "f", "namespace": "default", "uid": "u", "creationTimestamp": CREATED}
    return JobFlow.from_dict({"metadata": meta, "spec": spec})


def tmpl(name: str, cpu: str = "1", replicas: int = 1, min_available: int = 1) -> JobTemplate:
    container = {"name": "main", "image": "x", "resources": {"requests": {"cpu": cpu}}}
    return JobTemplate.from_dict(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "minAvailable": min_available,
                "queue": "default",
                "tasks": [
                    {
                        "name": "main",
                        "replicas": replicas,
                        "template": {"spec": {"containers": [container]}},
                    }
                ],
            },
        }
    )


def scheduled(jobs: Any) -> dict[str, dict[str, str]]:
    keys = (FLOW_CREATED, RANK, HANDOVER)
    return {j.name: {k: v for k, v in j.metadata.annotations.items() if k in keys} for j in jobs}


# the e2 DAG: root -> {s1, s2, s3, lng}, lng -> tail
E2 = [
    entry("root"),
    {**entry("s1", "root"), "runningEstimate": "2s"},
    {**entry("s2", "root"), "runningEstimate": "2s"},
    {**entry("s3", "root"), "runningEstimate": "2s"},
    {**entry("lng", "root"), "runningEstimate": "6s"},
    {**entry("tail", "lng"), "runningEstimate": "4s"},
]
E2_TEMPLATES = {n: tmpl(n) for n in ("root", "s1", "s2", "s3", "lng", "tail")}


def test_without_a_policy_no_annotation_and_flow_order() -> None:
    flow = make(None, E2)
    index, plan = reconcile.plan(flow, E2_TEMPLATES, [], now=T0)
    assert scheduled(plan.create) == {"f-root": {}}
    mark(index, plan)
    index.observe(job(flow, "root", "Completed"), T0)
    plan = index.decide(E2_TEMPLATES)
    assert [j.name for j in plan.create] == ["f-s1", "f-s2", "f-s3", "f-lng"]
    assert all(v == {} for v in scheduled(plan.create).values())


def test_flow_created_only_with_age_from_flow() -> None:
    _, plan = reconcile.plan(
        make({"ageFrom": "Flow"}, [entry("a")]), E2_TEMPLATES | {"a": tmpl("a")}, [], now=T0
    )
    assert scheduled(plan.create) == {"f-a": {FLOW_CREATED: CREATED}}
    _, plan = reconcile.plan(make({"ageFrom": "Job"}, [entry("a")]), {"a": tmpl("a")}, [], now=T0)
    assert scheduled(plan.create) == {"f-a": {}}


def test_critical_path_ranks_and_creation_order() -> None:
    flow = make({"jobOrder": "CriticalPath"}, E2)
    index, plan = reconcile.plan(flow, E2_TEMPLATES, [], now=T0)
    assert scheduled(plan.create) == {"f-root": {RANK: "11"}}  # 1 + 6 + 4
    mark(index, plan)
    index.observe(job(flow, "root", "Completed"), T0)
    plan = index.decide(E2_TEMPLATES)
    # lng (rank 10) before the short entries (2 each), which keep flow order among them
    assert [j.name for j in plan.create] == ["f-lng", "f-s1", "f-s2", "f-s3"]
    assert scheduled(plan.create)["f-lng"] == {RANK: "10"}
    assert scheduled(plan.create)["f-s1"] == {RANK: "2"}


def test_critical_path_order_holds_under_a_create_limit() -> None:
    flow = make({"jobOrder": "CriticalPath"}, E2)
    index, plan = reconcile.plan(flow, E2_TEMPLATES, [], now=T0)
    mark(index, plan)
    index.observe(job(flow, "root", "Completed"), T0)
    assert [j.name for j in index.decide(E2_TEMPLATES, 1).create] == ["f-lng"]


def test_estimate_is_median_of_this_flow_s_past_durations_of_the_template() -> None:
    history = {
        "f-a": {
            "state": "Completed",
            "startTimestamp": "2026-01-01T00:00:00Z",
            "endTimestamp": "2026-01-01T00:00:30Z",
        },
        "f-b": {"state": "Running", "startTimestamp": "2026-01-01T00:00:00Z"},
    }
    flow = make(
        None,
        [
            {"name": "a", "template": "work"},
            {"name": "b", "template": "work", "dependsOn": {"targets": ["a"]}},
            {"name": "c", "dependsOn": {"targets": ["b"]}, "runningEstimate": "1m"},
        ],
    )
    assert scheduling.estimates(flow, history) == {"a": 30.0, "b": 30.0, "c": 60.0}


def test_past_durations_are_bounded() -> None:
    flow = make(None, [{"name": "w", "for": {"items": list(range(40))}}])
    history = {
        f"f-w-{i}": {
            "state": "Completed",
            "startTimestamp": "2026-01-01T00:00:00Z",
            "endTimestamp": f"2026-01-01T00:00:{i:02d}Z",
        }
        for i in range(40)
    }
    kept = scheduling.past_durations(flow, history)["w"]
    assert len(kept) == scheduling.PAST_MAX


def test_handover_need_sums_the_direct_successors_minimum() -> None:
    flow = make(
        {"handover": {"holdSeconds": 60}},
        [
            entry("prep"),
            entry("train", "prep"),
            entry("eval", "prep"),
            entry("late", "train"),
            entry("last"),
        ],
    )
    temps = {
        "prep": tmpl("prep"),
        "train": tmpl("train", cpu="2", replicas=3, min_available=2),  # gang of 2: cpu 4
        "eval": tmpl("eval", cpu="500m"),
        "late": tmpl("late", cpu="8"),
        "last": tmpl("last"),
    }
    _, plan = reconcile.plan(flow, temps, [], now=T0)
    got = scheduled(plan.create)
    assert json.loads(got["f-prep"][HANDOVER]) == {"holdSeconds": 60, "need": {"cpu": "4500m"}}
    assert got["f-last"] == {}  # no successor: nothing to hand over


def test_handover_leaves_out_successors_not_buildable_yet() -> None:
    flow = make(
        {"handover": {"holdSeconds": 5}},
        [
            entry("prep"),
            entry("gone", "prep"),  # no template yet
            {
                "name": "pick",
                "dependsOn": {"targets": ["prep"]},
                "switch": [{"when": "true", "template": "x"}],
            },
        ],
    )
    _, plan = reconcile.plan(flow, {"prep": tmpl("prep"), "x": tmpl("x")}, [], now=T0)
    assert scheduled(plan.create) == {"f-prep": {}}


def test_handover_zero_is_off() -> None:
    flow = make({"handover": {"holdSeconds": 0}}, [entry("a"), entry("b", "a")])
    _, plan = reconcile.plan(flow, {"a": tmpl("a"), "b": tmpl("b")}, [], now=T0)
    assert scheduled(plan.create) == {"f-a": {}}


def test_items_of_a_for_entry_carry_its_rank() -> None:
    flow = make(
        {"jobOrder": "CriticalPath"},
        [
            {"name": "w", "for": {"items": [1, 2]}, "runningEstimate": "3s"},
            entry("z", "w"),
        ],
    )
    _, plan = reconcile.plan(flow, {"w": tmpl("w"), "z": tmpl("z")}, [], now=T0)
    assert scheduled(plan.create) == {"f-w-0": {RANK: "4"}, "f-w-1": {RANK: "4"}}
