"""Contract: the event log (poll, resume, compaction), blocking waits and transactions."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.errors import AlreadyExists
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.store import EventType, Expired
from vcflow.store.base import Cursor
from vcflow.store.engine import StoreEngine

from .conftest import flow, make_store, template, vcjob


def test_events_since_filters_and_pages(store: StoreEngine) -> None:
    store.create(vcjob("a"))
    store.create(vcjob("b", "other"))
    store.create(flow("f", "a"))
    job = store.get(VCJob, "default", "a")
    job.metadata.labels = {"x": "y"}
    store.update(job)
    everything = store.events_since(0)
    assert [(e.type, e.object.name, e.resource_version) for e in everything] == [
        (EventType.ADDED, "a", 1),
        (EventType.ADDED, "b", 2),
        (EventType.ADDED, "f", 3),
        (EventType.MODIFIED, "a", 4),
    ]
    assert everything[3].object.metadata.labels == {"x": "y"}
    assert [e.object.name for e in store.events_since(0, kinds=[JobFlow])] == ["f"]
    assert [e.resource_version for e in store.events_since(0, namespace="default")] == [1, 3, 4]
    assert [e.resource_version for e in store.events_since(1, limit=2)] == [2, 3]
    assert store.events_since(4) == []


def test_compacted_resume_is_expired(backend: str, tmp_path: Path, clock: FakeClock) -> None:
    with make_store(backend, tmp_path, clock, event_retention=10) as store:
        for i in range(30):
            store.create(vcjob(f"j{i}"))
        with pytest.raises(Expired, match="too old"):
            store.events_since(0)
        assert [e.resource_version for e in store.events_since(25)] == [26, 27, 28, 29, 30]


def test_watch_resumes_from_a_resource_version(store: StoreEngine) -> None:
    store.create(vcjob("a"))
    store.create(vcjob("b"))
    seen = [e.object.name for e in store.watch([VCJob], since_rv=1, timeout=0)]
    assert seen == ["b"]
    assert list(store.watch([VCJob], timeout=0)) == []  # default: from now


def test_watch_skips_other_kinds_without_spinning(store: StoreEngine) -> None:
    store.create(template("t"))
    assert list(store.watch([VCJob], since_rv=0, timeout=0.05)) == []


def test_wait_wakes_on_commit_from_another_thread(store: StoreEngine) -> None:
    rv = store.resource_version()
    writer = threading.Timer(0.05, lambda: store.create(vcjob("late")))
    writer.start()
    try:
        assert store.wait(Cursor(rv), timeout=5)
    finally:
        writer.join()
    assert not store.wait(Cursor.now(store), timeout=0.01)


def test_blocking_watch_sees_new_events(store: StoreEngine) -> None:
    writer = threading.Timer(0.05, lambda: store.create(vcjob("late")))
    writer.start()
    try:
        events = store.watch([VCJob], since_rv=store.resource_version(), timeout=5)
        first = next(events)
    finally:
        writer.join()
    assert first.object.name == "late" and first.type is EventType.ADDED


def test_transaction_commits_together(store: StoreEngine) -> None:
    with store.transaction():
        store.create(vcjob("a"))
        store.create(vcjob("b"))
        assert [j.name for j in store.list(VCJob)] == ["a", "b"]  # own writes visible
    assert [e.resource_version for e in store.events_since(0)] == [1, 2]


def test_transaction_rolls_back_on_error(store: StoreEngine) -> None:
    store.create(vcjob("keep", labels={"k": "v"}))
    with pytest.raises(AlreadyExists), store.transaction():
        store.create(vcjob("a", labels={"k": "v"}))
        store.delete(VCJob, "default", "keep")
        store.create(vcjob("a"))
    assert [j.name for j in store.list(VCJob, label_selector="k=v")] == ["keep"]
    assert [e.object.name for e in store.events_since(0)] == ["keep"]
    later = store.create(vcjob("b"))
    assert int(later.metadata.resource_version) > 1
    assert [e.object.name for e in store.events_since(0)] == ["keep", "b"]


def test_nested_transaction_is_a_savepoint(store: StoreEngine) -> None:
    with store.transaction():
        store.create(vcjob("outer"))
        with pytest.raises(AlreadyExists), store.transaction():
            store.create(vcjob("inner"))
            store.create(vcjob("outer"))
        store.create(vcjob("after"))
    assert [j.name for j in store.list(VCJob)] == ["after", "outer"]
    assert [e.object.name for e in store.events_since(0)] == ["outer", "after"]


def test_other_threads_never_see_half_a_transaction(store: StoreEngine) -> None:
    seen: list[int] = []
    inside, done = threading.Event(), threading.Event()

    def reader() -> None:
        inside.wait(5)
        seen.append(len(store.list(VCJob)))
        done.set()

    thread = threading.Thread(target=reader)
    thread.start()
    with store.transaction():
        store.create(vcjob("a"))
        inside.set()
        assert not done.wait(0.05)  # the reader waits for the commit
        store.create(vcjob("b"))
    thread.join(5)
    assert seen == [2]


def test_wait_inside_a_transaction_is_an_error(store: StoreEngine) -> None:
    with pytest.raises(RuntimeError, match="inside a transaction"), store.transaction():
        store.wait(Cursor(), timeout=0.01)


def test_resume_ahead_of_the_store_is_expired(store: StoreEngine) -> None:
    store.create(vcjob("a"))
    with pytest.raises(Expired, match="newer than the store's"):
        store.events_since(5)


def test_poll_resumes_past_the_kinds_it_does_not_watch(store: StoreEngine) -> None:
    store.create(vcjob("a"))
    store.create(flow("f", "a"))
    found, resume = store.poll_events(Cursor(), (VCJob,))
    assert [(e.model, e.name) for e in found] == [(VCJob, "a")]
    assert resume.rv == store.resource_version() == 2  # the flow's event is not read again
    found, resume = store.poll_events(resume, (VCJob,))
    assert found == [] and resume.rv == 2
    store.create(vcjob("b"))
    found, resume = store.poll_events(resume, (VCJob,))
    assert [e.name for e in found] == ["b"] and resume.rv == 3
