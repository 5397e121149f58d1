"""Watch events carry the stored JSON and parse their object only when it is first read
(then keep it): a watcher that skips an event by `model`, `namespace`, `name`, `key`,
`resource_version` or `raw` pays no parse. Through `events_since` on both backends."""

from __future__ import annotations

import json

import pytest

from vcflow.api.errors import StoreError
from vcflow.api.jobflow import JobFlow
from vcflow.api.vcjob import VCJob
from vcflow.store import EventType, WatchEvent
from vcflow.store.engine import StoreEngine

from .conftest import finished, flow, vcjob


def unparsed(event: WatchEvent) -> bool:
    return event._object is None


@pytest.mark.optimisation
def test_an_event_is_not_parsed_until_its_object_is_read(store: StoreEngine) -> None:
    created = store.create(vcjob("a"))
    (event,) = store.events_since(0)
    assert unparsed(event)
    assert event.type is EventType.ADDED
    assert event.model is VCJob
    assert (event.namespace, event.name) == ("default", "a")
    assert event.key == "default/a"
    assert event.resource_version == 1
    assert json.loads(event.raw)["metadata"]["name"] == "a"
    assert "default/a" in repr(event)
    assert unparsed(event)  # none of the above parsed it
    obj = event.object
    assert not unparsed(event)
    assert isinstance(obj, VCJob)
    assert obj == created
    assert event.object is obj  # parsed once, then the same object


def test_raw_is_the_object_as_stored(store: StoreEngine) -> None:
    store.create(vcjob("a"))
    job = store.get(VCJob, "default", "a")
    job.metadata.labels = {"x": "y"}
    store.update(job)
    store.create(flow("f", "a"))
    store.update_status_data(JobFlow, "default", "f", {"state": {"phase": "Running"}})
    events = store.events_since(0)
    assert [(e.type, e.key, e.resource_version) for e in events] == [
        (EventType.ADDED, "default/a", 1),
        (EventType.MODIFIED, "default/a", 2),
        (EventType.ADDED, "default/f", 3),
        (EventType.MODIFIED, "default/f", 4),
    ]
    assert all(unparsed(e) for e in events)
    stored_job = store.get(VCJob, "default", "a")
    stored_flow = store.get(JobFlow, "default", "f")
    assert json.loads(events[1].raw) == stored_job.to_dict()
    assert json.loads(events[3].raw) == stored_flow.to_dict()
    assert json.loads(events[3].raw)["status"] == {"state": {"phase": "Running"}}
    assert json.loads(events[0].raw)["metadata"]["resourceVersion"] == "1"
    assert all(unparsed(e) for e in events)
    # what a parse gives is what a read gives
    assert events[1].object == stored_job
    assert events[3].object == stored_flow
    assert unparsed(events[0]) and unparsed(events[2])  # parsing one parses no other


def test_a_deleted_event_carries_the_last_state(store: StoreEngine) -> None:
    store.update_status(finished(store.create(flow("f", "a"))))
    store.delete(JobFlow, "default", "f")
    added, _, deleted = store.events_since(0)
    assert deleted.type is EventType.DELETED
    assert (deleted.model, deleted.key, deleted.resource_version) == (JobFlow, "default/f", 3)
    assert unparsed(deleted)
    last = json.loads(deleted.raw)
    assert last["metadata"]["resourceVersion"] == "3"
    assert last["status"]["state"]["phase"] == "Succeed"
    assert isinstance(deleted.object, JobFlow)
    assert deleted.object.phase == "Succeed"
    assert added.object.metadata.resource_version == "1"


def test_each_poll_builds_its_own_events(store: StoreEngine) -> None:
    """An event's object is shared by whoever reads that event; another poll's event is
    another object (parsed anew), so one poll's reader cannot change what the next sees."""
    store.create(vcjob("a"))
    (first,) = store.events_since(0)
    first.object.metadata.labels["changed"] = "in place"
    (again,) = store.events_since(0)
    assert unparsed(again)
    assert "changed" not in again.object.metadata.labels
    assert again.object is not first.object


def test_a_bad_payload_fails_only_when_read() -> None:
    """The parse is where the payload is first looked at: a watcher that skips an event by
    its key never meets what is inside."""
    event = WatchEvent(EventType.MODIFIED, VCJob, "default", "a", 7, "{not json")
    assert (event.key, event.resource_version, event.raw) == ("default/a", 7, "{not json")
    with pytest.raises(StoreError, match=r"^a stored Job is not a JSON object"):
        _ = event.object  # (one line: pydantic's text was an internal error at the CLI)
    assert unparsed(event)
