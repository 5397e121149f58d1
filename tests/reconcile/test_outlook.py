"""A flow's outlook from its status (`reconcile.outlook`): entry phases, `for` progress,
the controller's estimates and the seconds left, at a fake clock's time."""

from __future__ import annotations

from typing import Any

from vcflow.api import clock
from vcflow.api.jobflow import JobFlow
from vcflow.reconcile import scheduling
from vcflow.reconcile.outlook import durations, elsewhere, outlook

T0 = "2026-01-01T00:00:00Z"


def flow(entries: list[dict[str, Any]], status: dict[str, Any] | None = None) -> JobFlow:
    body: dict[str, Any] = {
        "metadata": {"name": "f", "namespace": "default"},
        "spec": {"flows": entries},
    }
    if status is not None:
        body["status"] = status
    return JobFlow.model_validate(body)


def cond(phase: str, reason: str | None = None) -> dict[str, Any]:
    return {"phase": phase, "createTime": T0, **({"reason": reason} if reason else {})}


def done(name: str, start: str, end: str) -> dict[str, Any]:
    return {"name": name, "state": "Completed", "startTimestamp": start, "endTimestamp": end}


CHAIN = [
    {"name": "a", "runningEstimate": "1m"},
    {"name": "b", "dependsOn": {"targets": ["a"]}, "runningEstimate": "5m"},
    {"name": "c", "dependsOn": {"targets": ["b"]}},
]


def test_a_running_entry_counts_its_estimate_less_its_elapsed_time():
    fake = clock.FakeClock(clock.parse_rfc3339(T0))
    status = {
        "conditions": {"f-a": cond("Completed"), "f-b": cond("Running")},
        "jobStatusList": [
            done("f-a", "2025-12-31T23:59:00Z", T0),
            {"name": "f-b", "state": "Running", "startTimestamp": T0},
        ],
    }
    fake.advance(120)
    got = outlook(flow(CHAIN, status), fake.now())
    assert got.critical_path == ["a", "b", "c"]
    assert got.entries["b"].phase == "Running"
    assert got.seconds_left == 180.0 + 1.0  # b's 5m less 2m, then c's default


def test_unknown_before_any_estimate_and_none_for_an_ended_flow():
    bare = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]
    now = clock.parse_rfc3339(T0)
    assert outlook(flow(bare), now).seconds_left is None
    ended = {"conditions": {"f-a": cond("Completed"), "f-b": cond("Failed")}}
    assert outlook(flow(CHAIN[:2], ended), now).seconds_left is None


def test_past_runs_of_the_same_template_estimate_an_entry():
    entries = [
        {"name": "x", "template": "t"},
        {"name": "y", "template": "t", "dependsOn": {"targets": ["x"]}},
    ]
    status = {
        "conditions": {"f-x": cond("Completed")},
        "jobStatusList": [done("f-x", T0, "2026-01-01T00:00:42Z")],
    }
    got = outlook(flow(entries, status), clock.parse_rfc3339(T0))
    assert got.seconds_left == 42.0


def test_a_for_entry_counts_its_items():
    entries = [{"name": "sweep", "for": {"items": [1, 2, 3]}}]
    status = {
        "conditions": {
            "f-sweep": cond("Running", "ForEach"),
            "f-sweep-0": cond("Completed"),
            "f-sweep-1": cond("Running"),
        }
    }
    got = outlook(flow(entries, status), clock.parse_rfc3339(T0))
    assert got.entries["sweep"].items == (1, 3)


def test_a_pending_vcjob_has_its_whole_estimate_ahead():
    status = {"conditions": {"f-a": cond("Pending")}}
    later = clock.parse_rfc3339("2026-01-01T00:00:50Z")
    got = outlook(flow(CHAIN[:2], status), later)
    assert got.seconds_left == 60.0 + 300.0


def _named(name: str, entries: list[dict[str, Any]], status: dict[str, Any]) -> JobFlow:
    found = flow(entries, status)
    found.metadata.name = name
    return found


def test_runs_of_the_template_in_other_flows_estimate_an_entry_only_when_given():
    """The dashboard's ETA counts the same template's runs in the namespace's other flows
    (`durations`, `elsewhere`); describe and get (no `past`) keep the flow's own only."""
    entries = [{"name": "train", "template": "t"}]
    earlier = _named(
        "old",
        entries,
        {
            "conditions": {"old-train": cond("Completed")},
            "jobStatusList": [
                done("old-train", T0, "2026-01-01T00:01:00Z"),
            ],
        },
    )
    other = _named(
        "older",
        entries,
        {"jobStatusList": [done("older-train", T0, "2026-01-01T00:03:00Z")]},
    )
    fresh = _named("new", entries, {"conditions": {}})
    now = clock.parse_rfc3339(T0)
    assert outlook(fresh, now).seconds_left is None
    pool = durations([earlier, other, fresh])
    assert pool == {"old": {"t": [60.0]}, "older": {"t": [180.0]}}
    got = outlook(fresh, now, elsewhere(pool, "new"))
    assert got.seconds_left == 120.0  # the median of 60 and 180
    # the flow's own runs are not counted twice: `elsewhere` leaves them out
    assert elsewhere(pool, "old") == {"t": [180.0]}


def test_the_runs_counted_elsewhere_are_bounded():
    pool = {f"f{i}": {"t": [float(i)]} for i in range(40)}
    kept = elsewhere(pool, "none")["t"]
    assert kept == [float(i) for i in range(40 - scheduling.PAST_MAX, 40)]
