"""The store refuses an object a user writes (create, update, apply) larger than 1.5 MiB as
JSON, as the Kubernetes API does (etcd's default limit): a template with a 100 MB argument
grew vcflow.db to 1.1 GB. A status write is refused too, as etcd refuses it on a cluster
(a controller must keep its statuses smaller: docs/status-size.md); internal writes are not
bounded; an Event never carries a whole object (its message is cut at 1 kB)."""

from __future__ import annotations

import pytest

from vcflow.api import bounds
from vcflow.api.clock import FakeClock
from vcflow.api.errors import ValidationFailed
from vcflow.api.event import Event
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob, VCJobStatus
from vcflow.store.engine import StoreEngine
from vcflow.store.events import MAX_MESSAGE, Recorder

from .conftest import template, vcjob

HUGE = "x" * (bounds.MAX_OBJECT_BYTES + 1)


def big(name: str) -> JobTemplate:
    obj = template(name)
    obj.metadata.labels = {"size": "big"}
    assert obj.spec is not None and obj.spec.tasks
    pod = obj.spec.tasks[0].template
    assert pod is not None and pod.spec is not None and pod.spec.containers
    pod.spec.containers[0].args = [HUGE]
    return obj


def refused(error: pytest.ExceptionInfo[ValidationFailed], name: str) -> None:
    (found,) = error.value.errors
    assert (found.kind, found.name) == ("JobTemplate", name)
    assert found.message.startswith("the object is 1,57")
    assert "more than 1,572,864 (1.5 MiB)" in found.message


def test_a_create_larger_than_the_kubernetes_api_stores_is_refused(store: StoreEngine) -> None:
    with pytest.raises(ValidationFailed) as error:
        store.create(big("t"))
    refused(error, "t")
    assert store.list(JobTemplate) == [] and store.events_since(0) == []


def test_an_update_and_an_apply_are_refused_too_and_nothing_is_half_applied(
    store: StoreEngine,
) -> None:
    store.create(template("t"))
    with pytest.raises(ValidationFailed) as error:
        store.update(big("t"))
    refused(error, "t")
    with pytest.raises(ValidationFailed) as error:
        store.apply([template("a"), big("b")])
    refused(error, "b")
    assert [t.name for t in store.list(JobTemplate)] == ["t"]
    assert [e.name for e in store.events_since(0)] == ["t"]


def test_a_status_write_past_the_limit_is_refused_and_changes_nothing(
    store: StoreEngine,
) -> None:
    job = store.create(vcjob("j"))
    status = {"state": {"phase": "Running", "message": HUGE}}
    with pytest.raises(ValidationFailed) as error:
        store.update_status_data(VCJob, "default", job.name, status)
    (found,) = error.value.errors
    assert (found.kind, found.name) == ("Job", "j")
    assert "more than 1,572,864 (1.5 MiB)" in found.message
    job.status = VCJobStatus.from_dict(status)
    with pytest.raises(ValidationFailed):
        store.update_status(job)
    assert store.get(VCJob, "default", "j").status is None
    assert [e.name for e in store.events_since(0)] == ["j"]


def test_internal_writes_are_not_bounded(store: StoreEngine) -> None:
    store.create(big("internal"), admit=False)


def test_an_event_never_carries_a_whole_object(store: StoreEngine) -> None:
    job = store.create(vcjob("j"))
    Recorder(store, FakeClock()).record(job, "Warning", "CreateFailed", HUGE)
    # (on the shared test cluster other components' Events may be there too: this job's only)
    (event,) = [e for e in store.list(Event) if e.involved_object.uid == job.metadata.uid]
    assert len(event.message) == MAX_MESSAGE and event.message.endswith("...")
