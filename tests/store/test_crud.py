"""Contract: get/create/update/update_status — identity, resourceVersion, generation,
optimistic concurrency, copies. Runs on every backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.errors import AlreadyExists, Conflict, NotFound
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import ObjectMeta, OwnerReference, Resource
from vcflow.api.pod import Pod, PodSpec, PodStatus
from vcflow.api.vcjob import VCJob, VCJobStatus
from vcflow.store import UnknownKind
from vcflow.store.engine import StoreEngine

from .conftest import finished, flow, make_store, template, vcjob


def test_create_sets_server_fields(store: StoreEngine, clock: FakeClock) -> None:
    created = store.create(vcjob("a"))
    meta = created.metadata
    assert meta.uid and len(meta.uid) == 36
    assert meta.resource_version == "1"
    assert meta.generation == 1
    assert meta.creation_timestamp == "2026-01-01T00:00:00Z"
    assert store.get(VCJob, "default", "a").to_dict() == created.to_dict()


def test_create_ignores_client_server_fields(store: StoreEngine) -> None:
    job = vcjob("a")
    job.metadata.uid, job.metadata.resource_version = "mine", "99"
    job.metadata.deletion_timestamp = "2020-01-01T00:00:00Z"
    created = store.create(job)
    assert created.metadata.uid != "mine"
    assert created.metadata.resource_version == "1"
    assert created.metadata.deletion_timestamp is None


def test_namespace_defaults_and_separates(store: StoreEngine) -> None:
    job = VCJob.from_dict({**vcjob("a").to_dict(), "metadata": {"name": "a"}})
    assert store.create(job).namespace == "default"
    store.create(vcjob("a", "other"))
    assert [j.namespace for j in store.list(VCJob)] == ["default", "other"]
    assert [j.namespace for j in store.list(VCJob, "other")] == ["other"]


def test_generate_name(store: StoreEngine) -> None:
    data = vcjob("x").to_dict()
    data["metadata"] = {"generateName": "job-"}
    created = store.create(VCJob.from_dict(data))
    assert created.name.startswith("job-") and len(created.name) == 9


def test_resource_version_is_store_wide_and_increasing(store: StoreEngine) -> None:
    rvs = [int(store.create(vcjob(f"j{i}")).metadata.resource_version) for i in range(3)]
    rvs.append(int(store.create(template("t")).metadata.resource_version))
    assert rvs == [1, 2, 3, 4]
    assert store.resource_version() == 4


class _Undo(Exception):
    pass


def test_rolled_back_writes_use_up_no_resource_version(store: StoreEngine) -> None:
    """Both backends: the next write after a rollback (whole or nested) gets the next
    number, so resourceVersions stay gap-free and the same on memory and SQLite."""
    store.create(vcjob("a"))
    with pytest.raises(_Undo), store.transaction():
        store.create(vcjob("b"))
        raise _Undo
    assert store.resource_version() == 1
    with store.transaction():
        store.create(vcjob("c"))
        with pytest.raises(_Undo), store.transaction():
            store.create(vcjob("d"))
            raise _Undo
        assert store.create(vcjob("e")).metadata.resource_version == "3"
    assert store.resource_version() == 3
    assert [e.resource_version for e in store.events_since(0)] == [1, 2, 3]


def test_create_existing_is_already_exists(store: StoreEngine) -> None:
    store.create(vcjob("a"))
    with pytest.raises(AlreadyExists, match=r'Job default/a|jobs\.batch\.volcano\.sh "a"'):
        store.create(vcjob("a"))
    store.create(vcjob("a", "other"))  # other namespace: no clash
    store.create(template("a"))  # other kind: no clash


def test_get_missing_is_not_found(store: StoreEngine) -> None:
    with pytest.raises(
        NotFound, match=r'(JobFlow default/nope|jobflows\.flow\.volcano\.sh "nope") not found'
    ):
        store.get(JobFlow, "default", "nope")


def test_returns_copies(store: StoreEngine) -> None:
    created = store.create(vcjob("a", labels={"k": "v"}))
    created.metadata.labels["k"] = "changed"
    got = store.get(VCJob, "default", "a")
    assert got.metadata.labels == {"k": "v"}
    got.metadata.labels["k"] = "changed"
    assert store.list(VCJob)[0].metadata.labels == {"k": "v"}


def test_template_create_applies_crd_defaults(store: StoreEngine) -> None:
    created = store.create(template("t"))
    assert created.spec is not None
    assert (created.spec.queue, created.spec.max_retry) == ("default", 3)
    kept = store.create(template("u", queue="q", maxRetry=5))
    assert kept.spec is not None
    assert (kept.spec.queue, kept.spec.max_retry) == ("q", 5)
    bare = JobTemplate.from_dict(
        {"apiVersion": created.api_version, "kind": "JobTemplate", "metadata": {"name": "bare"}}
    )
    assert "spec" not in store.create(bare, admit=False).to_dict()


def test_names_are_those_list_returns_in_one_namespace(store: StoreEngine) -> None:
    for name, ns, labels in [
        ("b", "default", {"k": "v"}),
        ("a", "default", {"k": "v", "x": "1"}),
        ("c", "default", {"k": "w"}),
        ("d", "other", {"k": "v"}),
    ]:
        store.create(vcjob(name, ns, labels=labels))
    for selector in ("k=v", "k", "k!=w", "k=v,x", None):
        listed = [j.name for j in store.list(VCJob, "default", selector)]
        assert store.names(VCJob, "default", selector) == listed
    assert store.names(VCJob, "default", "k=v") == ["a", "b"]
    assert store.names(VCJob, "other") == ["d"]
    assert store.names(JobFlow, "default") == []


def test_update_bumps_rv_and_generation_on_spec_change(store: StoreEngine) -> None:
    created = store.create(vcjob("a"))
    changed = created.clone()
    assert changed.spec is not None
    changed.spec.queue = "other"
    updated = store.update(changed)
    assert updated.metadata.resource_version == "2"
    assert updated.metadata.generation == 2
    assert updated.metadata.uid == created.metadata.uid
    assert updated.metadata.creation_timestamp == created.metadata.creation_timestamp


def test_metadata_update_keeps_generation(store: StoreEngine) -> None:
    created = store.create(vcjob("a"))
    created.metadata.labels = {"x": "y"}
    updated = store.update(created)
    assert (updated.metadata.generation, updated.metadata.resource_version) == (1, "2")
    assert store.get(VCJob, "default", "a").metadata.labels == {"x": "y"}


def test_noop_update_writes_nothing(store: StoreEngine) -> None:
    created = store.create(vcjob("a"))
    assert store.update(created).metadata.resource_version == "1"
    assert store.update_status(created).metadata.resource_version == "1"
    assert store.resource_version() == 1


def test_update_ignores_status_and_update_status_only_status(store: StoreEngine) -> None:
    created = store.create(vcjob("a"))
    with_status = created.clone()
    with_status.status = _status("Running")
    with_status.metadata.labels = {"l": "1"}
    after_update = store.update(with_status)
    assert after_update.status is None and after_update.metadata.labels == {"l": "1"}

    with_status.metadata.labels = {"l": "ignored"}
    with_status.metadata.resource_version = ""
    after_status = store.update_status(with_status)
    assert after_status.phase == "Running"
    assert after_status.metadata.labels == {"l": "1"}
    assert after_status.metadata.generation == 1
    assert store.get(VCJob, "default", "a").phase == "Running"


def test_a_client_create_drops_the_status_of_a_kind_with_a_status_subresource(
    store: StoreEngine,
) -> None:
    # as kube-apiserver does for a CRD: an exported finished object created again must run
    job = vcjob("a")
    job.status = _status("Completed")
    assert store.create(job).status is None
    assert store.get(VCJob, "default", "a").status is None
    store.create(template("t"))
    assert store.create(finished(flow("f", "t"))).status is None
    assert store.phase(JobFlow, "default", "f") == ""


def test_an_internal_create_keeps_the_status_and_so_does_a_pod(store: StoreEngine) -> None:
    job = vcjob("a")
    job.status = _status("Running")
    assert store.create(job, admit=False).phase == "Running"
    pod = Pod(metadata=ObjectMeta(name="p"), spec=PodSpec(), status=PodStatus(phase="Pending"))
    assert store.create(pod).status == PodStatus(phase="Pending")  # (the API refuses bare pods)


def test_stale_resource_version_conflicts(store: StoreEngine) -> None:
    first = store.create(vcjob("a"))
    second = first.clone()
    first.metadata.labels = {"by": "first"}
    store.update(first)
    second.metadata.labels = {"by": "second"}
    with pytest.raises(Conflict, match="has been modified"):
        store.update(second)
    with pytest.raises(Conflict):
        store.update_status(second)
    second.metadata.resource_version = ""  # unconditional
    assert store.update(second).metadata.labels == {"by": "second"}


def test_uid_precondition(store: StoreEngine) -> None:
    old = store.create(vcjob("a"))
    store.delete(VCJob, "default", "a")
    store.create(vcjob("a"))
    old.metadata.resource_version = ""
    with pytest.raises(Conflict, match="deleted and created again"):
        store.update(old)


def test_update_missing_is_not_found(store: StoreEngine) -> None:
    with pytest.raises(NotFound):
        store.update(vcjob("a"))
    with pytest.raises(NotFound):
        store.update_status(vcjob("a"))


def test_flow_round_trip_is_exact(store: StoreEngine) -> None:
    given = flow("f", "a", ("b", ["a"]))
    stored = store.get(JobFlow, "default", "f") if store.create(given) else None
    assert stored is not None
    data, expected = stored.to_dict(), given.to_dict()
    for key in ("uid", "resourceVersion", "generation", "creationTimestamp"):
        data["metadata"].pop(key)
    data["metadata"].pop("managedFields", None)  # (kube-apiserver's, server-side apply's)
    assert data == expected


def test_unknown_kind_is_refused(store: StoreEngine) -> None:
    class Other(Resource):
        api_version: str = "example.com/v1"
        kind: str = "Other"

    with pytest.raises(UnknownKind, match='no kind "Other"'):
        store.create(Other())
    with pytest.raises(UnknownKind):
        store.list(Other)
    store.register_kind(Other)
    store.create(Other.from_dict({"metadata": {"name": "o"}}))
    assert [o.name for o in store.list(Other)] == ["o"]


def _status(phase: str) -> VCJobStatus | None:
    return VCJob.model_validate(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "status": {"state": {"phase": phase}},
        }
    ).status


def test_in_place_metadata_mutations_are_written(store: StoreEngine) -> None:
    """`to_dict()` drops never-assigned defaults; the store still sees in-place edits."""
    stored = store.create(vcjob("a"))
    stored.metadata.annotations["note"] = "x"
    stored.metadata.finalizers.append("example.com/f")
    updated = store.update(stored)
    assert updated.metadata.annotations == {"note": "x"}
    assert store.get(VCJob, "default", "a").metadata.finalizers == ["example.com/f"]
    bare = VCJob.from_dict(vcjob("b").to_dict() | {"metadata": {}})
    bare.metadata.name = "b"
    bare.metadata.labels["k"] = "v"
    assert store.create(bare).metadata.labels == {"k": "v"}


def test_kinds_are_registered_per_store(backend: str, tmp_path: Path, clock: FakeClock) -> None:
    """A kind registered by one process reads as a plain Resource in another."""

    class Widget(Resource):
        api_version: str = "example.com/v1"
        kind: str = "Widget"

    with make_store(backend, tmp_path, clock) as first:
        first.register_kind(Widget)
        owner = first.create(vcjob("owner"))
        pod = Widget.from_dict({"metadata": {"name": "p"}})
        pod.metadata.owner_references = [
            OwnerReference(
                api_version="batch.volcano.sh/v1alpha1",
                kind="Job",
                name="owner",
                uid=owner.metadata.uid,
            )
        ]
        first.create(pod)
        if backend == "memory":
            return
    with make_store(backend, tmp_path, clock) as second:
        with pytest.raises(UnknownKind):
            second.list(Widget)
        (added,) = [e for e in second.events_since(0) if e.object.kind == "Widget"]
        assert type(added.object) is Resource and added.object.name == "p"
        second.delete(VCJob, "default", "owner")  # collects the pod it cannot parse
        assert [e.object.kind for e in second.events_since(2)] == ["Job", "Widget"]


def test_phase_reads_status_state_phase(store: StoreEngine) -> None:
    store.create(template("a"))
    store.create(flow("f", "a"))
    assert store.phase(JobFlow, "default", "f") == ""  # no status yet
    store.update_status_data(JobFlow, "default", "f", {"state": {"phase": "Running"}})
    assert store.phase(JobFlow, "default", "f") == "Running"
    store.create(vcjob("j"))
    store.update_status_data(VCJob, "default", "j", {"state": {"phase": "Completed"}})
    assert store.phase(VCJob, "default", "j") == "Completed"
    with pytest.raises(NotFound, match=r'gone"? not found'):
        store.phase(JobFlow, "default", "gone")
