"""Contract: writes inside a transaction (a controller's burst). Each write is all or nothing
without a savepoint of its own: one refused by a check (Conflict, NotFound, AlreadyExists,
ValidationFailed) leaves nothing and the burst goes on; one that fails after it began
writing aborts the whole transaction — nothing of it is committed, any further use of it
and its commit raise StoreError — and takes no resourceVersion."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.api.errors import AlreadyExists, Conflict, NotFound, StoreError, ValidationFailed
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.store import EventType
from vcflow.store.base import batched
from vcflow.store.engine import StoreEngine
from vcflow.store.wire import Row

from .conftest import finished, flow, vcjob


class Boom(Exception):
    pass


class Interrupt(BaseException):
    """As KeyboardInterrupt: not an Exception, so no `except Exception` swallows it."""


def fail_event_of(
    store: StoreEngine, monkeypatch: pytest.MonkeyPatch, name: str, error: BaseException
) -> None:
    """Make the write of object `name` fail after its row is written, when its watch event
    is appended (the object is then half-written: row and indexes without the event)."""
    append = store._append_event  # type: ignore[attr-defined]

    def failing(row: Row, event: EventType) -> None:
        if row.name == name:
            raise error
        append(row, event)

    monkeypatch.setattr(store, "_append_event", failing)


def names(store: StoreEngine) -> list[str]:
    return [j.name for j in store.list(VCJob)]


def test_refused_writes_leave_the_burst_going(store: StoreEngine) -> None:
    store.create(vcjob("a"))
    with batched(store):
        store.create(vcjob("b", labels={"k": "v"}))
        with pytest.raises(AlreadyExists):
            store.create(vcjob("a"))
        stale = store.get(VCJob, "default", "a")
        stale.metadata.resource_version = "99"
        with pytest.raises(Conflict):
            store.update(stale)
        with pytest.raises(NotFound):
            store.update_status(vcjob("missing"))
        with pytest.raises(Conflict):
            store.delete(VCJob, "default", "a", resource_version="99")
        invalid = vcjob("invalid")
        invalid.metadata.name = "Not_A_Name"
        with pytest.raises(ValidationFailed):
            store.create(invalid)
        store.create(vcjob("c"))
    assert names(store) == ["a", "b", "c"]
    assert [(e.name, e.resource_version) for e in store.events_since(0)] == [
        ("a", 1),
        ("b", 2),
        ("c", 3),
    ]
    assert [j.name for j in store.list(VCJob, label_selector="k=v")] == ["b"]


def test_a_write_failing_midway_aborts_the_transaction(
    store: StoreEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.create(vcjob("before"))
    fail_event_of(store, monkeypatch, "mid", Boom("disk full"))
    with pytest.raises(StoreError, match="rolled back") as aborted, store.transaction():
        store.create(vcjob("a"))
        with pytest.raises(Boom):
            store.create(vcjob("mid", labels={"k": "v"}))
        with pytest.raises(StoreError, match="rolled back"):
            store.create(vcjob("b"))  # no write lands in an aborted transaction
        with pytest.raises(StoreError, match="rolled back"):
            store.get(VCJob, "default", "a")
        with pytest.raises(StoreError, match="rolled back"), store.transaction():
            pass
        assert store.resource_version() == 1  # the committed state
    assert isinstance(aborted.value.__cause__, Boom)
    assert names(store) == ["before"]
    assert store.list(VCJob, label_selector="k=v") == []
    assert [e.name for e in store.events_since(0)] == ["before"]
    monkeypatch.undo()
    assert store.create(vcjob("mid", labels={"k": "v"})).metadata.resource_version == "2"
    assert [j.name for j in store.list(VCJob, label_selector="k=v")] == ["mid"]


def test_an_update_failing_midway_aborts_the_transaction(
    store: StoreEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.create(vcjob("a", labels={"k": "old"}))
    fail_event_of(store, monkeypatch, "a", Boom("disk full"))
    with pytest.raises(StoreError, match="rolled back"), store.transaction():
        job = store.get(VCJob, "default", "a")
        job.metadata.labels = {"k": "new"}
        with pytest.raises(Boom):
            store.update(job)
    monkeypatch.undo()
    assert store.get(VCJob, "default", "a").metadata.labels == {"k": "old"}
    assert [j.name for j in store.list(VCJob, label_selector="k=old")] == ["a"]
    assert store.list(VCJob, label_selector="k=new") == []
    job.metadata.resource_version = ""
    assert store.update(job).metadata.resource_version == "2"


def test_garbage_collection_failing_midway_aborts_the_transaction(
    store: StoreEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner = store.create(finished(flow("f", "a")))
    store.create(vcjob("f-a", owners=(owner,)))
    store.create(vcjob("f-b", owners=(owner,)))
    fail_event_of(store, monkeypatch, "f-b", Boom("disk full"))  # the second dependent
    with (
        pytest.raises(StoreError, match="rolled back"),
        store.transaction(),
        pytest.raises(Boom),
    ):
        store.delete(JobFlow, "default", "f")
    assert names(store) == ["f-a", "f-b"]
    assert store.get(JobFlow, "default", "f").metadata.uid == owner.metadata.uid
    assert store.resource_version() == 3


def test_an_interrupt_midway_rolls_back_and_propagates(
    store: StoreEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_event_of(store, monkeypatch, "mid", Interrupt())
    with pytest.raises(Interrupt), store.transaction():
        store.create(vcjob("a"))
        store.create(vcjob("mid"))
    assert names(store) == []
    assert store.resource_version() == 0
    monkeypatch.undo()
    assert store.create(vcjob("a")).metadata.resource_version == "1"


def test_an_aborted_inner_transaction_aborts_the_outer(
    store: StoreEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A nested transaction is a savepoint for what raises out of it, but a write that
    failed midway inside it aborts everything: the outer level cannot commit either."""
    fail_event_of(store, monkeypatch, "mid", Boom("disk full"))
    with pytest.raises(StoreError, match="rolled back"), store.transaction():
        store.create(vcjob("outer"))
        with pytest.raises(Boom), store.transaction():
            store.create(vcjob("inner"))
            store.create(vcjob("mid"))
    assert names(store) == []
    assert store.events_since(0) == []


def test_a_write_failing_midway_on_its_own_is_undone(
    store: StoreEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside a transaction a write is one: its failure rolls it back, and raises as is."""
    store.create(vcjob("a"))
    fail_event_of(store, monkeypatch, "mid", Boom("disk full"))
    with pytest.raises(Boom):
        store.create(vcjob("mid"))
    assert names(store) == ["a"]
    assert store.create(vcjob("b")).metadata.resource_version == "2"


def test_failed_write_takes_no_resource_version_in_a_burst(store: StoreEngine) -> None:
    def create(name: str) -> Any:
        return store.create(vcjob(name)).metadata.resource_version

    with batched(store):
        assert create("a") == "1"
        with pytest.raises(AlreadyExists):
            create("a")
        assert create("b") == "2"
    assert store.resource_version() == 2
