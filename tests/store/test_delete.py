"""Contract: delete, finalizers, garbage collection by ownerReference, delete admission."""

from __future__ import annotations

import time

import pytest

from vcflow.api.errors import Conflict, NotFound, ValidationFailed
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.store import EventType
from vcflow.store.engine import StoreEngine

from .conftest import finished, flow, template, vcjob


def test_delete_removes_and_returns_last_state(store: StoreEngine) -> None:
    store.create(vcjob("a"))
    gone = store.delete(VCJob, "default", "a")
    assert gone.name == "a" and gone.metadata.resource_version == "2"
    with pytest.raises(NotFound):
        store.get(VCJob, "default", "a")
    with pytest.raises(NotFound):
        store.delete(VCJob, "default", "a")
    assert [e.type for e in store.events_since(0)] == [EventType.ADDED, EventType.DELETED]


def test_delete_precondition(store: StoreEngine) -> None:
    store.create(vcjob("a"))
    with pytest.raises(Conflict):
        store.delete(VCJob, "default", "a", resource_version="7")
    store.delete(VCJob, "default", "a", resource_version="1")


def test_finalizers_hold_the_object_until_emptied(store: StoreEngine) -> None:
    store.create(vcjob("a", finalizers=["example.com/keep"]))
    marked = store.delete(VCJob, "default", "a")
    assert marked.metadata.deletion_timestamp == "2026-01-01T00:00:00Z"
    again = store.delete(VCJob, "default", "a")  # already terminating: no new write
    assert again.metadata.resource_version == marked.metadata.resource_version
    held = store.get(VCJob, "default", "a")
    held.metadata.finalizers = []
    store.update(held)
    with pytest.raises(NotFound):
        store.get(VCJob, "default", "a")
    types = [e.type for e in store.events_since(0)]
    assert types == [EventType.ADDED, EventType.MODIFIED, EventType.DELETED]


def test_deleting_an_owner_collects_its_dependents(store: StoreEngine) -> None:
    owner = store.create(finished(flow("f", "a")))
    child = store.create(vcjob("f-a", owners=(owner,)))
    grandchild = store.create(vcjob("f-a-pod", owners=(child,)))
    store.create(vcjob("unrelated"))
    store.delete(JobFlow, "default", "f")
    assert [j.name for j in store.list(VCJob)] == ["unrelated"]
    deleted = [e.object.name for e in store.events_since(0) if e.type is EventType.DELETED]
    assert deleted == ["f", "f-a", grandchild.name]


def test_dependent_with_another_live_owner_stays(store: StoreEngine) -> None:
    first = store.create(vcjob("o1"))
    second = store.create(vcjob("o2"))
    store.create(vcjob("shared", owners=(first, second)))
    store.delete(VCJob, "default", "o1")
    assert store.get(VCJob, "default", "shared")
    store.delete(VCJob, "default", "o2")
    assert [j.name for j in store.list(VCJob)] == []


def test_dependent_with_finalizer_is_only_marked(store: StoreEngine) -> None:
    owner = store.create(vcjob("o"))
    store.create(vcjob("d", owners=(owner,), finalizers=["x/y"]))
    store.delete(VCJob, "default", "o")
    held = store.get(VCJob, "default", "d")
    assert held.metadata.deletion_timestamp is not None


def test_garbage_collection_is_atomic_with_the_delete(store: StoreEngine) -> None:
    owner = store.create(vcjob("o"))
    store.create(vcjob("d", owners=(owner,)))
    rv = store.resource_version()
    store.delete(VCJob, "default", "o")
    wanted = [rv + 1, rv + 2]
    seen = [e.resource_version for e in store.events_since(rv)]
    deadline = time.monotonic() + 10
    while seen != wanted and time.monotonic() < deadline:
        # (a loaded KubeStore takes a stream silent for 0.5 s as caught up: its events may
        # come at a later read; a write between the two would still show as a gap)
        time.sleep(0.1)
        seen = [e.resource_version for e in store.events_since(rv)]
    assert seen == wanted


def test_unfinished_flow_delete_is_refused(store: StoreEngine) -> None:
    """compatibility row 11: stop a running flow before deleting it; `force` skips the review."""
    store.create(flow("f", "a"))
    running = store.get(JobFlow, "default", "f")
    store.update_status(finished(running, "Running"))
    with pytest.raises(ValidationFailed, match="cannot delete JobFlow"):
        store.delete(JobFlow, "default", "f")
    store.delete(JobFlow, "default", "f", force=True)


def test_template_of_unfinished_flow_stays(store: StoreEngine) -> None:
    store.create(template("a"))
    store.create(flow("f", "a"))
    store.update_status(finished(store.get(JobFlow, "default", "f"), "Running"))
    with pytest.raises(ValidationFailed, match='cannot delete JobTemplate "a"'):
        store.delete(JobTemplate, "default", "a")
    store.update_status(finished(store.get(JobFlow, "default", "f"), "Succeed"))
    store.delete(JobTemplate, "default", "a")
