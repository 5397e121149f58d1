"""Contract: cluster-scoped kinds (Queue, PriorityClass) are stored under namespace `""`
and found whatever namespace a caller names; create, get, list, apply, update, status,
delete and watch round-trip them. Runs on every backend that serves them; on "cluster"
(Volcano's Queue CRD installed, a `default` queue made by Volcano) each test deletes what
it made, as the backend empties namespaces only."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from vcflow.api.errors import NotFound, ValidationFailed
from vcflow.api.scheduling import CLOSED, PriorityClass, Queue, QueueStatus
from vcflow.store.base import Outcome
from vcflow.store.engine import StoreEngine


def queue(name: str, namespace: str | None = None, **spec: Any) -> Queue:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return Queue.from_dict(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": meta,
            "spec": spec,
        }
    )


def pclass(name: str, value: int, **more: Any) -> PriorityClass:
    return PriorityClass.from_dict(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            **more,
        }
    )


@pytest.fixture(autouse=True)
def cleaned(store: StoreEngine) -> Iterator[None]:
    """Whatever a test (or another module on the same cluster) leaves of these kinds is
    deleted before and after it: on a real cluster they outlive the namespaces the backend
    empties."""
    _delete_made(store)
    yield
    _delete_made(store)


def _delete_made(store: StoreEngine) -> None:
    for kind, made in ((Queue, ("team-a", "q", "a", "w")), (PriorityClass, ("a", "b", "high"))):
        for name in made:
            with contextlib.suppress(NotFound):
                store.delete(kind, "", name, force=True)


def test_a_queue_round_trips_without_a_namespace(store: StoreEngine) -> None:
    created = store.create(queue("team-a", "ignored", weight=3, capability={"cpu": "2"}))
    assert created.namespace == ""
    assert "namespace" not in created.to_dict()["metadata"]
    for asked in ("", "default", "other"):
        got = store.get(Queue, asked, "team-a")
        assert (got.name, got.weight, got.namespace) == ("team-a", 3, "")
        assert got.spec is not None and got.spec.capability == {"cpu": "2"}
    assert "team-a" in [q.name for q in store.list(Queue)]
    assert "team-a" in [q.name for q in store.list(Queue, "default")]


def test_queue_defaults_are_volcanos(store: StoreEngine) -> None:
    created = store.create(queue("q"))
    assert created.spec is not None
    assert (created.spec.weight, created.spec.reclaimable) == (1, True)
    assert created.state == "Open"


def test_update_status_and_delete_a_queue(store: StoreEngine) -> None:
    created = store.create(queue("q", weight=2))
    created.spec.weight = 5  # type: ignore[union-attr]
    updated = store.update(created)
    assert updated.weight == 5 and updated.metadata.generation == 2
    updated.status = QueueStatus.from_dict({"state": CLOSED, "allocated": {}})  # (Volcano's CRD)
    closed = store.update_status(updated)
    assert store.get(Queue, "", "q").state == CLOSED == closed.state
    store.delete(Queue, "default", "q")
    with pytest.raises(NotFound):
        store.get(Queue, "", "q")


def test_apply_creates_then_leaves_unchanged(store: StoreEngine) -> None:
    objects = [queue("a", weight=2), pclass("high", 1000)]
    assert [r.outcome for r in store.apply(objects)] == [Outcome.CREATED, Outcome.CREATED]
    again = [queue("a", weight=2), pclass("high", 1000)]
    assert [r.outcome for r in store.apply(again)] == [Outcome.UNCHANGED, Outcome.UNCHANGED]
    stored = store.get(PriorityClass, "", "high")
    assert (stored.value, stored.preemption_policy) == (1000, "PreemptLowerPriority")


def test_the_default_queue_cannot_be_deleted(store: StoreEngine) -> None:
    store.create(queue("default"))
    with pytest.raises(ValidationFailed, match="`default` queue can not be deleted"):
        store.delete(Queue, "", "default")
    assert store.get(Queue, "", "default").name == "default"


def test_one_global_default_class(store: StoreEngine) -> None:
    store.create(pclass("a", 10, globalDefault=True))
    with pytest.raises(ValidationFailed, match="PriorityClass a is already marked as default"):
        store.create(pclass("b", 20, globalDefault=True))
    assert store.create(pclass("b", 20, globalDefault=False)).value == 20


def test_a_watch_sees_a_cluster_scoped_object(store: StoreEngine) -> None:
    since = store.resource_version()
    store.create(queue("w"))
    event = next(iter(store.watch([Queue], since_rv=since, timeout=5)))
    assert (event.type, event.name, event.namespace) == ("ADDED", "w", "")
