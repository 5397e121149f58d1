"""The store contract on the real control plane ("cluster" backend, clusterbackend.py) where
the suite's tests, as written, cannot hold there (cluster_cannot.py): the same promises with
etcd's resourceVersions — increasing and shared by the whole cluster, so compared by their
order and against the resourceVersion a test starts at —, with kube-controller-manager's
garbage collector working after the owner's delete, etcd's size limit, vcflow's webhook
refusing, the uid precondition of a status patch, a binding again; and the fence that keeps
Volcano off the suite's objects."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from vcflow.api.errors import AlreadyExists, Conflict, NotFound, ValidationFailed
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.kubestore import KubeStore
from vcflow.store import EventType, Expired, Outcome
from vcflow.store.base import Cursor, batched

from .clusterbackend import ClusterBackend, VcflowOnCluster
from .conftest import finished, flow, template, vcjob
from .test_fast_status import RUNNING, SUCCEEDED, assert_is_stored, pod
from .test_object_size import big

#: the kinds the tests write (events_since of every kind would be the cluster's too)
OURS = (VCJob, JobFlow, JobTemplate)
#: seconds kube-controller-manager's garbage collector gets
GC_DEADLINE = 60.0


@pytest.fixture
def store(vcflow_on_cluster: VcflowOnCluster) -> Iterator[KubeStore]:
    vcflow_on_cluster.clean()
    with ClusterBackend(vcflow_on_cluster) as opened:
        yield opened


def rv(obj: Resource) -> int:
    return int(obj.metadata.resource_version)


def ours(store: KubeStore, since: int, **options: Any) -> list[tuple[EventType, str, int]]:
    return [
        (e.type, e.key, e.resource_version)
        for e in store.events_since(since, kinds=OURS, **options)
    ]


def eventually(check: Callable[[], Any], what: str, deadline: float = GC_DEADLINE) -> Any:
    end = time.monotonic() + deadline
    while not (found := check()):
        if time.monotonic() > end:
            pytest.fail(f"timed out after {deadline:.0f} s waiting for {what}")
        time.sleep(0.1)
    return found


def test_writes_stamp_the_server_fields_and_increasing_versions(store: KubeStore) -> None:
    start = store.resource_version()
    given = vcjob("a")
    given.metadata.uid, given.metadata.resource_version = "mine", "99"
    given.metadata.deletion_timestamp = "2020-01-01T00:00:00Z"
    created = store.create(given)
    meta = created.metadata
    assert len(meta.uid) == 36 and meta.uid != "mine"
    assert rv(created) > start and meta.generation == 1 and meta.deletion_timestamp is None
    stamped = datetime.fromisoformat(str(meta.creation_timestamp))
    assert abs(datetime.now(UTC) - stamped) < timedelta(minutes=1)  # (the server's clock)
    assert store.get(VCJob, "default", "a").to_dict() == created.to_dict()
    rvs = [rv(store.create(vcjob(f"j{i}"))) for i in range(3)] + [rv(store.create(template("t")))]
    assert rvs == sorted(set(rvs)) and rvs[0] > rv(created)
    assert store.resource_version() >= rvs[-1]

    changed = created.clone()
    assert changed.spec is not None
    changed.spec.queue = "other"
    updated = store.update(changed)
    assert updated.metadata.generation == 2 and rv(updated) > rvs[-1]
    assert (updated.metadata.uid, updated.metadata.creation_timestamp) == (
        meta.uid,
        meta.creation_timestamp,
    )
    updated.metadata.labels = {"x": "y"}
    relabelled = store.update(updated)
    assert relabelled.metadata.generation == 2 and rv(relabelled) > rv(updated)
    assert rv(store.update(relabelled)) == rv(relabelled)  # nothing changed: nothing written
    assert rv(store.update_status(relabelled)) == rv(relabelled)
    with pytest.raises(Conflict):
        store.delete(VCJob, "default", "a", resource_version=str(rv(updated)))
    store.delete(VCJob, "default", "a", resource_version=str(rv(relabelled)))


def test_a_refused_write_writes_nothing_and_the_burst_goes_on(store: KubeStore) -> None:
    store.create(template("a"))
    start = store.resource_version()
    with pytest.raises(ValidationFailed, match="jobflow Flow is not DAG"):  # (the webhook)
        store.create(flow("f", ("a", ["b"]), ("b", ["a"])))
    with pytest.raises(ValidationFailed, match=r"metadata\.name"):  # (kube-apiserver)
        store.create(vcjob("Bad_Name"))
    batch = [template("b"), flow("ok", "a"), flow("cyclic", ("x", ["y"]), ("y", ["x"]))]
    with pytest.raises(ValidationFailed) as caught:
        store.apply([*batch, vcjob("Bad_Name")])
    messages = [str(e) for e in caught.value.errors]
    assert any("JobFlow default/cyclic" in m for m in messages)
    assert any("Job default/Bad_Name" in m for m in messages)
    assert ours(store, start) == []
    assert [t.name for t in store.list(JobTemplate)] == ["a"] and store.list(JobFlow) == []

    store.create(vcjob("keep"))
    with batched(store):
        store.create(vcjob("b", labels={"k": "v"}))
        with pytest.raises(AlreadyExists):
            store.create(vcjob("keep"))
        stale = store.get(VCJob, "default", "keep")
        stale.metadata.resource_version = str(start)
        with pytest.raises(Conflict, match="has been modified"):
            store.update(stale)
        with pytest.raises(NotFound):
            store.update_status(vcjob("missing"))
        with pytest.raises(Conflict):
            store.delete(VCJob, "default", "keep", resource_version=str(start))
        with pytest.raises(ValidationFailed):
            store.create(vcjob("Not_A_Name"))
        store.create(vcjob("c"))
    found = ours(store, start)
    added = [(EventType.ADDED, f"default/{n}") for n in ("keep", "b", "c")]
    assert [(t, k) for t, k, _ in found] == added
    assert found == sorted(found, key=lambda e: e[2])
    assert [j.name for j in store.list(VCJob, label_selector="k=v")] == ["b"]


def test_apply_outcomes(store: KubeStore) -> None:
    objects = [flow("f", "a", ("b", ["a"])), template("a"), template("b")]
    first = store.apply(objects)
    assert [r.outcome for r in first] == [Outcome.CREATED] * 3
    assert rv(first[0].object) > max(rv(first[1].object), rv(first[2].object))  # templates first
    written = store.resource_version()
    again = store.apply(objects)
    assert [r.outcome for r in again] == [Outcome.UNCHANGED] * 3
    assert ours(store, written) == []
    relabelled = template("a")
    relabelled.metadata.labels = {"v": "2"}
    third = store.apply([relabelled, template("b", queue="q")])
    assert [r.outcome for r in third] == [Outcome.CONFIGURED, Outcome.CONFIGURED]
    assert [r.object.metadata.generation for r in third] == [1, 2]


def test_events_after_a_resource_version(store: KubeStore) -> None:
    start = store.resource_version()
    store.create(vcjob("a"))
    store.create(vcjob("b", "other"))
    store.create(flow("f", "a"))
    job = store.get(VCJob, "default", "a")
    job.metadata.labels = {"x": "y"}
    store.update(job)
    everything = store.events_since(start, kinds=OURS)
    assert [(e.type, e.key) for e in everything] == [
        (EventType.ADDED, "default/a"),
        (EventType.ADDED, "other/b"),
        (EventType.ADDED, "default/f"),
        (EventType.MODIFIED, "default/a"),
    ]
    rvs = [e.resource_version for e in everything]
    assert rvs == sorted(set(rvs)) and rvs[0] > start
    assert all(e._object is None for e in everything)  # parsed when read, not before
    assert json.loads(everything[3].raw)["metadata"]["labels"] == {"x": "y"}
    assert everything[3].object.metadata.labels == {"x": "y"}
    (again,) = [e for e in store.events_since(start, kinds=OURS) if e.resource_version == rvs[3]]
    assert again.object is not everything[3].object  # each read builds its own events
    assert [e.name for e in store.events_since(start, kinds=[JobFlow])] == ["f"]
    in_default = store.events_since(start, kinds=OURS, namespace="default")
    assert [e.resource_version for e in in_default] == [rvs[0], rvs[2], rvs[3]]
    assert [e.resource_version for e in store.events_since(rvs[0], kinds=OURS, limit=2)] == rvs[1:3]
    assert store.events_since(rvs[3], kinds=OURS) == []
    seen = [e.name for e in store.watch([VCJob], since_rv=rvs[0], timeout=0)]
    assert seen == ["b", "a"]
    ahead = store.resource_version() + 1000
    with pytest.raises(Expired, match="newer than the store's"):
        store.events_since(ahead, kinds=OURS)


def test_poll_resumes_past_the_kinds_it_does_not_watch(store: KubeStore) -> None:
    start = Cursor.now(store)
    store.create(vcjob("a"))
    store.create(flow("f", "a"))
    found, resume = store.poll_events(start, (VCJob,))
    assert [(e.model, e.name) for e in found] == [(VCJob, "a")]
    assert resume.rv >= rv(store.get(JobFlow, "default", "f"))  # past the flow's event
    assert store.poll_events(resume, (VCJob,))[0] == []
    store.create(vcjob("b"))
    found, _ = store.poll_events(resume, (VCJob,))
    assert [e.name for e in found] == ["b"]


def test_status_writes_with_a_base(store: KubeStore) -> None:
    base = store.create(pod())
    before = base.clone()
    written = store.update_status_data(Pod, "default", "p", RUNNING, base=base)
    assert base == before and base.to_dict() == before.to_dict()  # the base is left as it was
    assert rv(written) > rv(base) and written.metadata is not base.metadata
    assert_is_stored(store, written)
    (event,) = store.events_since(rv(base), kinds=[Pod])
    assert (event.type, event.key, event.resource_version) == (
        EventType.MODIFIED,
        "default/p",
        rv(written),
    )
    assert event.object == written
    with pytest.raises(Conflict, match="has been modified"):
        store.update_status_data(
            Pod, "default", "p", SUCCEEDED, resource_version=str(rv(base)), base=written
        )
    with pytest.raises(Conflict, match="deleted and created again"):
        store.update_status_data(Pod, "default", "p", SUCCEEDED, uid="other", base=written)
    with pytest.raises(Conflict, match="deleted and created again"):
        store.update_status_data(Pod, "default", "p", SUCCEEDED, uid="other")  # (read first)
    with pytest.raises(NotFound):
        store.update_status_data(Pod, "default", "q", SUCCEEDED, base=written)
    done = store.update_status_data(
        Pod, "default", "p", SUCCEEDED, resource_version=str(rv(written)), uid=base.metadata.uid
    )
    assert done.phase == "Succeeded" and rv(done) > rv(written)

    job = store.create(vcjob("j"))
    with batched(store):
        first = store.update_status_data(VCJob, "default", "j", {"running": 1}, base=job)
        second = store.update_status_data(VCJob, "default", "j", {"running": 2}, base=first)
    assert rv(job) < rv(first) < rv(second)
    assert_is_stored(store, second)


def test_binding(store: KubeStore) -> None:
    created = store.create(pod())
    bound = store.bind("default", "p", "node-1", base=created)
    assert bound.spec is not None and bound.spec.node_name == "node-1"
    assert (bound.metadata.generation, created.spec and created.spec.node_name) == (1, None)
    assert rv(bound) > rv(created)
    assert_is_stored(store, bound)
    # kube-apiserver's binding also says the pod is scheduled (vcflow's stores do not)
    assert bound.status is not None
    conditions = [(c.type, c.status) for c in bound.status.conditions or []]
    assert conditions == [("PodScheduled", "True")]
    again = store.bind("default", "p", "node-1", base=bound)  # (409 from the server)
    assert again == bound and rv(store.get(Pod, "default", "p")) == rv(bound)
    with pytest.raises(Conflict, match='already assigned to node "node-1"'):
        store.bind("default", "p", "node-2")
    obj = bound
    for status in (RUNNING, SUCCEEDED):  # the runtime's sequence
        obj = store.update_status_data(Pod, "default", "p", status, uid=obj.metadata.uid, base=obj)
        assert_is_stored(store, obj)
    assert obj.spec is not None and obj.spec.node_name == "node-1" and obj.phase == "Succeeded"


def test_the_garbage_collector_collects_the_dependents_later(store: KubeStore) -> None:
    owner = store.create(finished(flow("f", "a")))
    child = store.create(vcjob("f-a", owners=(owner,)))
    store.create(vcjob("f-a-pod", owners=(child,)))
    store.create(vcjob("unrelated"))
    first, second = store.create(vcjob("o1")), store.create(vcjob("o2"))
    store.create(vcjob("shared", owners=(first, second)))
    held_owner = store.create(vcjob("o"))
    store.create(vcjob("d", owners=(held_owner,), finalizers=["x/y"]))
    for name in ("o1", "o"):
        store.delete(VCJob, "default", name)
    store.delete(JobFlow, "default", "f")

    def names() -> list[str]:
        return [j.name for j in store.list(VCJob)]

    eventually(lambda: names() == ["d", "o2", "shared", "unrelated"], "f's dependents collected")
    eventually(
        lambda: store.get(VCJob, "default", "d").metadata.deletion_timestamp,
        "d marked deleted (its finalizer holds it)",
    )
    time.sleep(1)  # (shared has another owner: it stays)
    assert "shared" in names()
    store.delete(VCJob, "default", "o2")
    eventually(lambda: "shared" not in names(), "shared collected with its last owner")


def test_a_write_too_large_for_etcd_is_refused(store: KubeStore) -> None:
    """etcd refuses an object over its request limit; kube-apiserver answers a 500
    InternalError, which the store raises as a ValidationFailed, as the embedded store
    refuses it; nothing is written."""
    start = store.resource_version()
    with pytest.raises(ValidationFailed) as error:
        store.create(big("t"))
    (found,) = error.value.errors
    assert (found.kind, found.name) == ("JobTemplate", "t")
    assert "1,572,864 (1.5 MiB)" in found.message and "request is too large" in found.message
    job = store.create(vcjob("j"))
    with pytest.raises(ValidationFailed, match="request is too large"):
        store.update_status_data(
            VCJob, "default", "j", {"state": {"phase": "Running", "message": "x" * 1_600_000}}
        )
    assert store.list(JobTemplate) == []
    assert store.get(VCJob, "default", "j").status is None
    assert ours(store, start) == [(EventType.ADDED, "default/j", rv(job))]


def test_volcano_is_fenced_off(store: KubeStore, vcflow_on_cluster: VcflowOnCluster) -> None:
    """Volcano's job controller would give a vcjob a status and a PodGroup at once; the
    backend's ValidatingAdmissionPolicy refuses its writes in the suite's namespaces."""
    created = store.create(vcjob("j"))
    time.sleep(1.5)
    assert store.get(VCJob, "default", "j") == created
    groups = vcflow_on_cluster.admin.ok(
        "GET", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups"
    )
    assert groups["items"] == []


def test_close_ends_the_watch_streams_at_once(vcflow_on_cluster: VcflowOnCluster) -> None:
    """A closed store's watches end with it: their readers, blocked on the socket, are not
    left until kube-apiserver ends the stream (after the watch's timeoutSeconds, a minute;
    it sends a bookmark about as seldom)."""
    store = vcflow_on_cluster.store()
    before = set(threading.enumerate())
    store.events_since(store.resource_version(), kinds=[VCJob, JobFlow])
    watching = [t for t in threading.enumerate() if t not in before and t.name.startswith("watch ")]
    assert sorted(t.name for t in watching) == ["watch Job", "watch JobFlow"]
    store.close()
    for thread in watching:
        thread.join(2)
    assert not any(t.is_alive() for t in watching)
