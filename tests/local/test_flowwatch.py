"""`FlowWatch`, what `vcflow run` waits on: the applied flows read once, then only the
JobFlow events since and the store's phase read; `refresh()` says whether a watched flow's
phase changed (or a flow went away), `ended()` whether every flow that still exists ended,
`gone()` which were deleted, `current()` each flow's phase as last written. On a real
SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vcflow.api import names
from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.controller.manager import Manager
from vcflow.local.flowwatch import FlowWatch
from vcflow.store import SqliteStore


def jobflow(name: str) -> JobFlow:
    return JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]},
        }
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore.in_state_dir(tmp_path / "state", clock=FakeClock()) as opened:
        yield opened


def status(store: SqliteStore, name: str, phase: str, **more: Any) -> None:
    store.update_status_data(JobFlow, "default", name, {"state": {"phase": phase}, **more})


def test_a_flow_runs_to_its_end(store: SqliteStore) -> None:
    flow = store.create(jobflow("f"))
    watch = FlowWatch(store, {flow.key: None})
    assert watch.ended() is False
    assert watch.refresh() is False  # nothing written since
    assert watch.current() == {flow.key: ""}

    status(store, "f", "Running")
    assert watch.refresh() is True
    assert watch.ended() is False
    assert watch.current() == {flow.key: "Running"}

    status(store, "f", "Running", runningJobs=["f-a"])  # same phase, more status
    assert watch.refresh() is False
    assert watch.ended() is False
    assert watch.current() == {flow.key: "Running"}

    status(store, "f", "Succeed", completedJobs=["f-a", "f-b"])
    assert watch.refresh() is True
    assert watch.ended() is True
    assert watch.current() == {flow.key: "Succeed"}


def test_a_failed_flow_has_ended(store: SqliteStore) -> None:
    flow = store.create(jobflow("f"))
    watch = FlowWatch(store, {flow.key: None})
    status(store, "f", "Failed")
    assert watch.refresh() is True
    assert watch.ended() is True


def test_a_deleted_flow_ends_the_watch(store: SqliteStore) -> None:
    flow = store.create(jobflow("f"))
    watch = FlowWatch(store, {flow.key: None})
    status(store, "f", "Running")
    assert watch.refresh() is True
    store.delete(JobFlow, "default", "f", force=True)  # a running flow: past the review
    assert watch.refresh() is True
    assert watch.ended() is True
    assert watch.current() == {}
    assert watch.refresh() is False


def test_a_flow_gone_before_the_watch_is_not_waited_for(store: SqliteStore) -> None:
    store.create(jobflow("f"))
    keys = [names.object_key("default", n) for n in ("f", "gone")]
    watch = FlowWatch(store, keys)
    assert watch.ended() is False  # f has not ended
    assert watch.gone() == [keys[1]]
    assert list(watch.current()) == [keys[0]]


def test_every_flow_must_end(store: SqliteStore) -> None:
    keys = [store.create(jobflow(n)).key for n in ("f", "g")]
    watch = FlowWatch(store, dict.fromkeys(keys))
    status(store, "f", "Succeed")
    assert watch.refresh() is True
    assert watch.ended() is False  # g has not
    status(store, "g", "Running")
    assert watch.refresh() is True
    assert watch.ended() is False
    status(store, "g", "Failed")
    assert watch.refresh() is True
    assert watch.ended() is True
    assert list(watch.current().items()) == [(keys[0], "Succeed"), (keys[1], "Failed")]


def test_flows_not_watched_are_ignored(store: SqliteStore) -> None:
    flow = store.create(jobflow("f"))
    store.create(jobflow("other"))
    watch = FlowWatch(store, {flow.key: None})
    assert list(watch.current()) == [names.object_key("default", "f")]
    status(store, "other", "Running")
    assert watch.refresh() is False
    status(store, "other", "Succeed")
    assert watch.refresh() is False
    store.delete(JobFlow, "default", "other")
    store.create(jobflow("late"))  # created after the watch began: not watched either
    status(store, "late", "Failed")
    assert watch.refresh() is False
    assert watch.ended() is False
    assert list(watch.current()) == [names.object_key("default", "f")]
    status(store, "f", "Running")
    assert watch.refresh() is True
    assert watch.current() == {flow.key: "Running"}


def test_a_watch_whose_events_were_compacted_reads_the_flows_again(tmp_path: Path) -> None:
    """Events kept for one write only: the watch's position is compacted away (Expired), so
    the next refresh lists the flows again — and reports a change."""
    with SqliteStore.in_state_dir(tmp_path / "state", event_retention=1) as store:
        flow = store.create(jobflow("f"))
        watch = FlowWatch(store, {flow.key: None})
        status(store, "f", "Running")
        status(store, "f", "Succeed")
        assert store.events_since(store.resource_version() - 1) != []  # the last one is kept
        assert watch.refresh() is True
        assert watch.ended() is True
        assert watch.current() == {flow.key: "Succeed"}
        assert watch.refresh() is False


@pytest.mark.optimisation
def test_a_big_flow_is_not_parsed_for_its_phase(store: SqliteStore) -> None:
    """The watch reads a changed flow's phase from the store (`Store.phase`), never the
    flow itself: a flow's status lists every job. (Pins an optimisation: the parse count.)"""
    flow = store.create(jobflow("f"))
    watch = FlowWatch(store, [flow.key])
    parsed: list[str] = []
    original = JobFlow.model_validate_json

    def counting(data: str | bytes, **kw: Any) -> JobFlow:
        parsed.append("x")
        return original(data, **kw)

    jobs = [f"f-j{i}" for i in range(2000)]
    status(store, "f", "Running", runningJobs=jobs)
    JobFlow.model_validate_json = counting  # type: ignore[method-assign]
    try:
        assert watch.refresh() is True
    finally:
        JobFlow.model_validate_json = original  # type: ignore[method-assign]
    assert watch.current() == {flow.key: "Running"}
    assert parsed == []


def test_a_stored_flow_status_gives_its_phase(store: SqliteStore) -> None:
    """What the controller really writes, read back through the store's phase read."""
    for name in ("a", "b"):
        task = {"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}
        store.create(
            JobTemplate.from_dict(
                {
                    "apiVersion": "flow.volcano.sh/v1alpha1",
                    "kind": "JobTemplate",
                    "metadata": {"name": name, "namespace": "default"},
                    "spec": {"tasks": [task]},
                }
            )
        )
    store.create(jobflow("f"))
    Manager(store).settle()
    assert store.phase(JobFlow, "default", "f") == "Pending"
