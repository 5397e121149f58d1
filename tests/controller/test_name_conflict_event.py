"""A flow entry that waits because a vcjob that is not the flow's holds its name (SEMANTICS
row 12, NameConflict) gets one Warning Event saying which vcjob and how to free the name —
once: not at every sync, not when the foreign vcjob changes, not after a controller restart
(the flow's status already says so). As `kubectl delete jf diamond --cascade=orphan`
followed by applying the flow again leaves it."""

from __future__ import annotations

from vcflow.api.clock import FakeClock
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.controller.manager import Manager
from vcflow.store import MemoryStore

from .test_recreated_flow import flow_phase, jobflow, set_phase, world


def conflicts(store: MemoryStore) -> list[tuple[str, str, str]]:
    return [
        (e.type, e.involved_object.name, e.message)
        for e in store.list(Event)
        if e.reason == "NameConflict"
    ]


def orphaned(store: MemoryStore, manager: Manager) -> None:
    """Flow f ran f-a and was deleted keeping its vcjob (orphaned: no owner), then applied
    again."""
    manager.settle()
    set_phase(store, "f-a", "Completed")
    manager.settle()
    kept = store.get(VCJob, "default", "f-a")
    store.delete(JobFlow, "default", "f")
    manager.settle()
    kept.metadata.resource_version = ""
    kept.metadata.owner_references = []
    store.create(kept)
    store.apply([jobflow("a")])
    manager.settle()


def test_a_name_conflict_is_told_once_with_the_vcjob_and_how_to_free_it() -> None:
    store, manager = world("a")
    orphaned(store, manager)
    assert flow_phase(store) == "Pending"
    assert conflicts(store) == [
        (
            "Warning",
            "f",
            "vcjob f-a exists and is not this flow's (owned by no controller): the flow "
            "waits to create it until that vcjob is deleted (vcflow delete vcjob f-a, or "
            "kubectl delete vcjob f-a)",
        )
    ]
    foreign = store.get(VCJob, "default", "f-a")
    foreign.metadata.labels["touched"] = "yes"
    store.update(foreign)  # the foreign vcjob changes: the entry still waits, untold
    manager.settle()
    flow = store.get(JobFlow, "default", "f")
    flow.metadata.annotations["touched"] = "yes"
    store.update(flow)  # another sync
    manager.settle()
    restarted = Manager(store, FakeClock())  # a new controller: the status said it already
    restarted.settle()
    assert len(conflicts(store)) == 1
    store.delete(VCJob, "default", "f-a", force=True)  # the name is free: the flow's own
    restarted.settle()
    assert store.get(VCJob, "default", "f-a").metadata.owner_references
    assert len(conflicts(store)) == 1
