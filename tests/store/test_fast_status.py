"""Contract: status writes given the caller's copy (`base`) and pod bindings (`bind`).

A status write with a current `base` validates only the status and returns `base` with the
new status and metadata; it must be indistinguishable from the whole-object path: the same
stored JSON, byte for byte, the same returned object, the same events, errors and
preconditions. Runs on every backend; "twins" are two stores of one backend whose objects
get the same uid, so their stored JSON can be compared whole.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import model_validator

from vcflow.api.clock import FakeClock
from vcflow.api.errors import Conflict, NotFound, ValidationFailed
from vcflow.api.event import Event
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import ObjectMeta, Resource
from vcflow.api.pod import Pod, PodSpec, PodStatus
from vcflow.api.vcjob import VCJob
from vcflow.store import EventType
from vcflow.store.base import batched
from vcflow.store.engine import StoreEngine

from .conftest import flow, make_store, template, vcjob

RUNNING = {
    "phase": "Running",
    "startTime": "2026-01-01T00:00:00Z",
    "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:01Z"}
    ],
    "containerStatuses": [
        {
            "name": "c",
            "ready": True,
            "restartCount": 0,
            "state": {"running": {"startedAt": "2026-01-01T00:00:01Z"}},  # (kube parses it)
        }
    ],
    "extraField": {"kept": [1, 2]},  # unknown fields are kept, as everywhere
}
SUCCEEDED = {
    "containerStatuses": [
        {"name": "c", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    ],
    "phase": "Succeeded",  # key order is the caller's, in the stored JSON too
}


@pytest.fixture
def twins(
    backend: str, tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[StoreEngine, StoreEngine]]:
    """(whole-object path, `base` path): two stores whose objects all get one uid."""
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=1))
    with (
        make_store(backend, tmp_path / "slow", clock) as slow,
        make_store(backend, tmp_path / "fast", clock) as fast,
    ):
        yield slow, fast


def pod(name: str = "p", *, spec: bool = True) -> Pod:
    data: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"volcano.sh/job-name": "j"}},
        "status": {"phase": "Pending"},
    }
    if spec:
        data["spec"] = {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
            "schedulerName": "volcano",
        }
    return Pod.from_dict(data)


def raw(store: StoreEngine) -> list[tuple[EventType, str]]:
    return [(e.type, e.raw) for e in store.events_since(0)]


def assert_is_stored(store: StoreEngine, written: Resource) -> None:
    """`written` is what `get` returns now, down to which fields were given."""
    stored = store.get(type(written), written.namespace, written.name)
    assert written == stored
    assert written.to_dict() == stored.to_dict()
    assert written.model_fields_set == stored.model_fields_set
    assert written.metadata.model_fields_set == stored.metadata.model_fields_set


# --- status writes with base -------------------------------------------------------------

STATUSES: list[tuple[Resource, list[dict[str, Any] | None]]] = [
    (pod(), [RUNNING, SUCCEEDED, None, {}]),
    (vcjob("j"), [{"state": {"phase": "Running"}, "running": 1}, {"state": {"phase": "Failed"}}]),
    (flow("f", "a"), [{"state": {"phase": "Running"}, "runningJobs": ["f-a"]}, None]),
    (template("t"), [{"jobDependsOnList": ["f-t"]}, {"jobDependsOnList": []}]),
]


@pytest.mark.parametrize(("obj", "statuses"), STATUSES, ids=[o.kind for o, _ in STATUSES])
def test_status_writes_with_base_store_and_return_what_the_whole_path_does(
    twins: tuple[StoreEngine, StoreEngine], obj: Resource, statuses: list[dict[str, Any] | None]
) -> None:
    slow, fast = twins
    kind = type(obj)
    slow.create(obj.clone(), admit=False)
    base = fast.create(obj.clone(), admit=False)
    for status in statuses:
        expected = slow.update_status_data(kind, obj.namespace, obj.name, status)
        written = fast.update_status_data(kind, obj.namespace, obj.name, status, base=base)
        assert written.to_dict() == expected.to_dict()
        assert_is_stored(fast, written)
        assert vars(written)["spec"] is vars(base)["spec"]  # shared, not parsed again
        base = written
    assert raw(fast) == raw(slow)  # every stored JSON, byte for byte, and every event


def test_a_stale_base_gives_the_stored_object(store: StoreEngine) -> None:
    first = store.create(pod())
    labelled = first.clone()
    labelled.metadata.labels["team"] = "x"
    store.update(labelled)
    written = store.update_status_data(Pod, "default", "p", RUNNING, base=first)
    assert written.metadata.labels["team"] == "x"  # from the store, not from the stale base
    assert written.spec is not first.spec
    assert_is_stored(store, written)


def test_a_base_of_an_object_deleted_and_created_again_is_not_used(store: StoreEngine) -> None:
    first = store.create(pod())
    store.delete(Pod, "default", "p", force=True)
    again = pod()
    again.metadata.labels["generation"] = "2"
    store.create(again)
    stale = first.clone()
    stale.metadata.resource_version = store.get(Pod, "default", "p").metadata.resource_version
    written = store.update_status_data(Pod, "default", "p", RUNNING, base=stale)
    assert written.metadata.labels["generation"] == "2"
    assert_is_stored(store, written)


def test_the_base_is_left_as_it_was(store: StoreEngine) -> None:
    base = store.create(pod())
    before = base.clone()
    written = store.update_status_data(Pod, "default", "p", RUNNING, base=base)
    assert base == before and base.to_dict() == before.to_dict()
    assert written.metadata is not base.metadata and written.status is not base.status
    assert written.metadata.resource_version == "2" and base.metadata.resource_version == "1"


def test_an_unchanged_status_writes_nothing(store: StoreEngine) -> None:
    base = store.update_status_data(Pod, "default", store.create(pod()).name, RUNNING)
    rv = store.resource_version()
    again = store.update_status_data(Pod, "default", "p", dict(RUNNING), base=base)
    assert store.resource_version() == rv
    assert [e.resource_version for e in store.events_since(0)] == [1, 2]
    assert again.metadata.resource_version == str(rv)
    assert_is_stored(store, again)


def test_a_status_write_emits_one_modified_event(store: StoreEngine) -> None:
    base = store.create(pod())
    written = store.update_status_data(Pod, "default", "p", RUNNING, base=base)
    (event,) = store.events_since(1)
    assert (event.type, event.key, event.resource_version) == (EventType.MODIFIED, "default/p", 2)
    assert event.object == written


@pytest.mark.parametrize("with_base", [False, True])
def test_an_invalid_status_is_refused_naming_the_field(store: StoreEngine, with_base: bool) -> None:
    base = store.create(pod())
    bad = {"phase": 3, "containerStatuses": [{"name": "c", "restartCount": "no"}]}
    with pytest.raises(ValidationFailed) as caught:
        store.update_status_data(Pod, "default", "p", bad, base=base if with_base else None)
    assert [(e.path, e.kind, e.namespace, e.name) for e in caught.value.errors] == [
        ("status.phase", "Pod", "default", "p"),
        ("status.containerStatuses[0].restartCount", "Pod", "default", "p"),
    ]
    assert "status.phase: Invalid value: 3: must be of type string" in str(caught.value)
    assert store.resource_version() == 1


def test_preconditions_hold_with_a_base(store: StoreEngine) -> None:
    base = store.create(pod())
    with pytest.raises(Conflict, match="has been modified"):
        store.update_status_data(Pod, "default", "p", RUNNING, resource_version="7", base=base)
    with pytest.raises(Conflict, match="deleted and created again"):
        store.update_status_data(Pod, "default", "p", RUNNING, uid="other", base=base)
    with pytest.raises(NotFound):
        store.update_status_data(Pod, "default", "q", RUNNING, base=base)
    written = store.update_status_data(
        Pod, "default", "p", RUNNING, resource_version="1", uid=base.metadata.uid, base=base
    )
    assert written.metadata.resource_version == "2"


def test_update_status_still_ignores_all_but_the_status(store: StoreEngine) -> None:
    """`update_status(obj)` does not take `obj` as its base: its other fields may differ."""
    created = store.create(pod())
    edited = created.clone()
    edited.metadata.labels = {"ignored": "yes"}
    assert edited.spec is not None
    edited.spec.node_name = "ignored"
    edited.status = PodStatus(phase="Running")
    written = store.update_status(edited)
    assert written.metadata.labels == created.metadata.labels
    assert written.spec == created.spec and written.phase == "Running"
    assert_is_stored(store, written)


class Checked(Resource):
    """A kind whose model validator reads the status: its status never validates alone."""

    api_version: str = "example.com/v1"
    kind: str = "Checked"
    spec: dict[str, Any] | None = None
    status: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _status_within_spec(self) -> Checked:
        limit = (self.spec or {}).get("limit", 0)
        if self.status and self.status.get("count", 0) > limit:
            raise ValueError("count exceeds spec.limit")
        return self


@pytest.mark.parametrize("with_base", [False, True])
def test_a_kind_with_a_model_validator_validates_the_whole_object(
    store: StoreEngine, with_base: bool
) -> None:
    store.register_kind(Checked)
    base = store.create(Checked(metadata=ObjectMeta(name="c"), spec={"limit": 1}), admit=False)
    written = store.update_status_data(Checked, "default", "c", {"count": 1}, base=base)
    assert_is_stored(store, written)
    assert written.spec is not base.spec  # validated whole
    with pytest.raises(ValidationFailed, match=r"count exceeds spec\.limit"):
        store.update_status_data(
            Checked, "default", "c", {"count": 2}, base=written if with_base else None
        )


def test_a_kind_without_a_status_field_keeps_it_as_an_unknown_field(store: StoreEngine) -> None:
    base = store.create(Event(metadata=ObjectMeta(name="e"), reason="R"), admit=False)
    written = store.update_status_data(Event, "default", "e", {"seen": True}, base=base)
    assert written.model_extra == {"status": {"seen": True}}
    assert_is_stored(store, written)


# --- bind --------------------------------------------------------------------------------


@pytest.mark.parametrize("with_base", [False, True])
def test_bind_sets_only_the_node_name(store: StoreEngine, with_base: bool) -> None:
    created = store.create(pod())
    bound = store.bind("default", "p", "node-1", base=created if with_base else None)
    assert bound.spec is not None and bound.spec.node_name == "node-1"
    assert created.spec is not None and created.spec.node_name is None  # the base is left alone
    assert (bound.metadata.resource_version, bound.metadata.generation) == ("2", 1)
    assert_is_stored(store, bound)
    (event,) = store.events_since(1)
    assert (event.type, event.resource_version) == (EventType.MODIFIED, 2)
    expected = created.to_dict()
    assert expected["spec"] is not None
    expected["spec"]["nodeName"] = "node-1"
    expected["metadata"]["resourceVersion"] = "2"
    assert json.loads(event.raw) == expected


def test_bind_matches_an_update_of_the_node_name_but_the_generation(
    twins: tuple[StoreEngine, StoreEngine],
) -> None:
    updated, bound = twins
    placed = updated.create(pod())
    assert placed.spec is not None
    placed.spec.node_name = "node-1"
    by_update = updated.update(placed, admit=False)
    by_bind = bound.bind("default", "p", "node-1", base=bound.create(pod()))
    assert by_update.metadata.generation == 2 and by_bind.metadata.generation == 1
    by_bind.metadata.generation = 2
    assert by_bind == by_update


@pytest.mark.parametrize("with_base", [False, True])
def test_bind_a_pod_without_a_spec(store: StoreEngine, with_base: bool) -> None:
    created = store.create(pod(spec=False), admit=False)
    bound = store.bind("default", "p", "node-1", base=created if with_base else None)
    assert bound.spec == PodSpec(node_name="node-1")
    assert_is_stored(store, bound)


def test_bind_with_a_stale_base_gives_the_stored_object(store: StoreEngine) -> None:
    first = store.create(pod())
    written = store.update_status_data(Pod, "default", "p", RUNNING)
    bound = store.bind("default", "p", "node-1", base=first)
    assert bound.status == written.status
    assert_is_stored(store, bound)


def test_bind_runs_no_admission(store: StoreEngine) -> None:
    created = store.create(pod("Bad_Name"), admit=False)
    assert store.bind("default", "Bad_Name", "node-1", base=created).metadata.generation == 1


def test_binding_again_to_the_same_node_writes_nothing(store: StoreEngine) -> None:
    bound = store.bind("default", store.create(pod()).name, "node-1")
    again = store.bind("default", "p", "node-1", base=bound)
    assert store.resource_version() == 2
    assert again == bound


def test_bind_refusals(store: StoreEngine) -> None:
    created = store.create(pod())
    with pytest.raises(NotFound):
        store.bind("default", "missing", "node-1")
    with pytest.raises(Conflict, match="deleted and created again"):
        store.bind("default", "p", "node-1", uid="other")
    with pytest.raises(ValidationFailed, match=r"target\.name: Required value"):
        store.bind("default", "p", "")
    store.bind("default", "p", "node-1", uid=created.metadata.uid)
    with pytest.raises(Conflict, match='Pod default/p is already assigned to node "node-1"'):
        store.bind("default", "p", "node-2")
    assert store.resource_version() == 2


def test_a_pod_being_deleted_is_not_bound(store: StoreEngine) -> None:
    held = pod()
    held.metadata.finalizers = ["example.com/hold"]
    store.create(held)
    store.delete(Pod, "default", "p", force=True)
    with pytest.raises(Conflict, match="Pod default/p is being deleted"):
        store.bind("default", "p", "node-1")
    assert store.get(Pod, "default", "p").spec == held.spec


def test_bind_and_a_status_write_with_a_base_chain(store: StoreEngine) -> None:
    """The runtime's sequence: bind, then status writes, each from the last returned."""
    obj: Pod = store.bind("default", store.create(pod()).name, "node-1")
    for status in (RUNNING, SUCCEEDED):
        obj = store.update_status_data(Pod, "default", "p", status, uid=obj.metadata.uid, base=obj)
        assert_is_stored(store, obj)
    assert obj.spec is not None and obj.spec.node_name == "node-1"
    assert obj.metadata.resource_version == "4"


def test_a_status_write_in_a_transaction_with_a_base(store: StoreEngine) -> None:
    base = store.create(vcjob("j"))
    with batched(store):
        first = store.update_status_data(VCJob, "default", "j", {"running": 1}, base=base)
        second = store.update_status_data(VCJob, "default", "j", {"running": 2}, base=first)
    assert second.metadata.resource_version == "3"
    assert_is_stored(store, second)


def test_a_template_status_write_leaves_its_spec_defaults_as_stored(store: StoreEngine) -> None:
    """JobTemplate's defaulter fills the spec on create; a status write does not run it."""
    base = store.create(template("t"))
    assert base.spec is not None and base.spec.queue == "default"
    written = store.update_status_data(
        JobTemplate, "default", "t", {"jobDependsOnList": ["x"]}, base=base
    )
    assert written.spec == base.spec
    assert_is_stored(store, written)
