"""`ControllerOptions(create_batch=N)`: a flow sync creates at most N vcjobs, in flow order, and the
flow's next sync — at the next `settle` — goes on, so that `vcflow run` can take each batch
to running pods before creating the next."""

from __future__ import annotations

from typing import Any

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.controller.options import ControllerOptions
from vcflow.store import MemoryStore


def template(name: str) -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}
    task: dict[str, Any] = {"name": "t", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"tasks": [task]}}
    )


def wide_flow(names: str) -> JobFlow:
    spec = {"jobRetainPolicy": "retain", "flows": [{"name": n} for n in names]}
    return JobFlow.from_dict({"metadata": {"name": "f", "namespace": "default"}, "spec": spec})


def vcjobs(store: MemoryStore) -> list[str]:
    return sorted(j.name for j in store.list(VCJob))


def test_each_settle_creates_one_batch_and_the_next_one_is_due_at_once() -> None:
    store = MemoryStore()
    store.apply([*(template(n) for n in "abcde"), wide_flow("abcde")])
    manager = Manager(store, options=ControllerOptions(create_batch=2))
    manager.settle()
    assert vcjobs(store) == ["f-a", "f-b"]
    due = manager.next_due()
    assert due is not None and due <= manager.clock.monotonic()
    manager.settle()
    assert vcjobs(store) == ["f-a", "f-b", "f-c", "f-d"]
    manager.settle()
    assert vcjobs(store) == ["f-a", "f-b", "f-c", "f-d", "f-e"]
    assert manager.next_due() is None
    status = store.get(JobFlow, "default", "f").status
    assert status is not None
    assert [n for n, c in status.conditions.items() if c.phase == "Waiting"] == []


def test_a_status_written_between_batches_shows_the_rest_waiting() -> None:
    store = MemoryStore()
    store.apply([*(template(n) for n in "abc"), wide_flow("abc")])
    manager = Manager(store, options=ControllerOptions(create_batch=2))
    manager.settle()  # ends with every status written
    status = store.get(JobFlow, "default", "f").status
    assert status is not None
    assert [n for n, c in status.conditions.items() if c.phase == "Waiting"] == ["f-c"]


def test_without_a_batch_one_settle_creates_every_ready_vcjob() -> None:
    store = MemoryStore()
    store.apply([*(template(n) for n in "abcde"), wide_flow("abcde")])
    manager = Manager(store)
    manager.settle()
    assert vcjobs(store) == ["f-a", "f-b", "f-c", "f-d", "f-e"]
    assert manager.next_due() is None


def test_a_budget_commits_in_bursts_and_settles_all_the_same() -> None:
    """The server's control plane: with a budget each burst commits when it is spent and
    `between` runs (the API's writers go first) before the work goes on to the end."""
    store = MemoryStore()
    store.apply([*(template(n) for n in "abcde"), wide_flow("abcde"), wide_flow2()])
    manager = Manager(store)
    seen: list[int] = []
    manager.settle(budget=0.0, between=lambda: seen.append(len(store.list(VCJob))))
    assert len(store.list(VCJob)) == 10
    assert seen and seen[0] < 10  # committed (and handed over) before the end


def wide_flow2() -> JobFlow:
    flow = wide_flow("abcde")
    flow.metadata.name = "g"
    return flow
