"""Fixtures of the store contract suite: every test taking `store` runs on each backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.vcjob import VCJob
from vcflow.store import MemoryStore, SqliteStore
from vcflow.store.engine import StoreEngine

from . import cluster_cannot, kmock_cannot

BACKENDS = ["memory", "sqlite", "kube", "kmock", "cluster"]
#: the namespaces the contract tests name (the "cluster" backend makes and empties them)
NAMESPACES = ("default", "other", "ns1", "ns2")

#: Contract tests that cannot hold over the Kubernetes API ("kube": a `KubeStore` talking
#: to `vcflow server`'s application), and why. Each is run on the other backends.
_TX = (
    "the Kubernetes API has no multi-object transactions: KubeStore has no transaction() "
    "(base.Transactional is the embedded stores')"
)
_RV0 = (
    "a watch from resourceVersion 0 starts with the current objec"
    "ts as ADDED (Kubernetes' semantics), not the history of the event log"
)
_ADMIT = "the server's admission always runs over the API: admit=False cannot skip it"
_KINDS = (
    "the server serves a fixed set of kinds (kubeapi/resources.py): a"
    " kind registered only in the client has no URL"
)
_BASE = (
    "the object comes back from the server: a remote store never shares the caller's `base` copy"
)
_CONFLICT = (
    "vcflow server answers a binding's 409 Conflict in kube-apiserver's words (pod p is "
    "already assigned to node..., is being deleted, a uid precondition's StorageError), "
    "not the store's"
)
KUBE_CANNOT: dict[str, str] = {
    "test_bind_refusals": _CONFLICT,
    "test_a_pod_being_deleted_is_not_bound": _CONFLICT,
    "test_bind_runs_no_admission": _ADMIT,
    "test_admit_false_skips_admission": _ADMIT,
    "test_template_create_applies_crd_defaults": _ADMIT,
    "test_internal_writes_are_not_bounded": _ADMIT,
    "test_apply_reads_each_namespaces_templates_once": (
        "the server's admission reads the templates; the client cannot count its reads"
    ),
    "test_a_write_failing_midway_aborts_the_transaction": _TX,
    "test_a_write_failing_midway_on_its_own_is_undone": (
        "engine internals (a failure injected between two storage primitives)"
    ),
    "test_an_aborted_inner_transaction_aborts_the_outer": _TX,
    "test_an_interrupt_midway_rolls_back_and_propagates": _TX,
    "test_an_update_failing_midway_aborts_the_transaction": _TX,
    "test_garbage_collection_failing_midway_aborts_the_transaction": _TX,
    "test_rolled_back_writes_use_up_no_resource_version": _TX,
    "test_nested_transaction_is_a_savepoint": _TX,
    "test_other_threads_never_see_half_a_transaction": _TX,
    "test_transaction_rolls_back_on_error": _TX,
    "test_transaction_commits_together": _TX,
    "test_wait_inside_a_transaction_is_an_error": _TX,
    "test_kinds_are_registered_per_store": _KINDS,
    "test_unknown_kind_is_refused": _KINDS,
    "test_a_kind_with_a_model_validator_validates_the_whole_object": _KINDS,
    "test_a_kind_without_a_status_field_keeps_it_as_an_unknown_field": _KINDS,
    "test_delete_removes_and_returns_last_state": _RV0,
    "test_deleting_an_owner_collects_its_dependents": _RV0,
    "test_finalizers_hold_the_object_until_emptied": _RV0,
    "test_an_unchanged_status_writes_nothing": _RV0,
    "test_compacted_resume_is_expired": _RV0,
    "test_events_since_filters_and_pages": _RV0,
    "test_a_deleted_event_carries_the_last_state": _RV0,
    "test_raw_is_the_object_as_stored": _RV0,
    "test_status_writes_with_base_store_and_return_what_the_whole_path_does": _BASE,
    "test_a_client_create_drops_the_status_of_a_kind_with_a_status_subresource": (
        "KubeStore.create writes a given status after the POST, as the control plane's own "
        "creates need; the server's drop is tested through its API (tests/server/test_reapply.py)"
    ),
}


#: Contract tests that cannot hold on kmock's KubernetesEmulator ("kmock": a `KubeStore`
#: talking to it), and why (kmock_cannot.py): those of KUBE_CANNOT with their reasons, and
#: the emulator's own.
KMOCK_CANNOT: dict[str, str] = {**KUBE_CANNOT, **kmock_cannot.KMOCK_CANNOT}
#: Contract tests that cannot hold on a real control plane ("cluster": a `KubeStore` on
#: the session's kube-apiserver v1.37 + etcd, vcflow's CRDs and webhook installed), and why
#: (cluster_cannot.py): those of KUBE_CANNOT with their reasons, and the real server's own.
CLUSTER_CANNOT: dict[str, str] = {**KUBE_CANNOT, **cluster_cannot.CLUSTER_CANNOT}
#: backend → the tests left out on it
CANNOT: dict[str, dict[str, str]] = {
    "kube": KUBE_CANNOT,
    "kmock": KMOCK_CANNOT,
    "cluster": CLUSTER_CANNOT,
}


def make_store(backend: str, tmp_path: Path, clock: FakeClock, **options: Any) -> StoreEngine:
    """A fresh store of `backend`; "kube" is a server around a fresh memory store, "kmock"
    a fresh KubernetesEmulator, "cluster" a new client of the session's real control plane,
    its namespaces emptied by the `backend` fixture (each a `KubeStore`, typed here as the
    engine it stands in for)."""
    if backend == "cluster":
        from .clusterbackend import ClusterBackend

        assert _ON_CLUSTER, "the backend fixture sets up the cluster"
        return cast(StoreEngine, ClusterBackend(_ON_CLUSTER[0]))
    if backend == "memory":
        return MemoryStore(clock=clock, **options)
    if backend == "kube":
        from .kubeserver import KubeBackend

        return cast(StoreEngine, KubeBackend(MemoryStore(clock=clock, **options)))
    if backend == "kmock":
        from .kmockserver import KmockBackend

        return cast(StoreEngine, KmockBackend())
    return SqliteStore.in_state_dir(tmp_path / "state", clock=clock, **options)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out, on the kube and kmock backends only, the contract tests that cannot hold
    there (CANNOT says why for each): they are not run there, so they are not reported as
    skipped either; every one of them runs on the other backends."""
    kept: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("backend") if callspec is not None else None
        if item.name.partition("[")[0] in CANNOT.get(str(backend), {}):
            left_out.append(item)
        else:
            kept.append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


#: the package's vcflow on the cluster, while it is set up (for `make_store`)
_ON_CLUSTER: list[Any] = []


@pytest.fixture(scope="package")
def vcflow_on_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """vcflow installed in the session's cluster for NAMESPACES (clusterbackend.py), once
    for the package's tests on the "cluster" backend; undone after the last of them."""
    from .clusterbackend import started

    cluster = request.getfixturevalue("cluster")  # (skips when there is no cluster)
    request.getfixturevalue("vcflow_crds")
    with started(cluster, NAMESPACES, tmp_path_factory.mktemp("store-on-cluster")) as found:
        _ON_CLUSTER[:] = [found]
        try:
            yield found
        finally:
            _ON_CLUSTER.clear()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend's name; on "cluster", NAMESPACES emptied first."""
    if request.param == "cluster":
        request.getfixturevalue("vcflow_on_cluster").clean()
    return str(request.param)


@pytest.fixture
def store(backend: str, tmp_path: Path, clock: FakeClock) -> Iterator[StoreEngine]:
    with make_store(backend, tmp_path, clock) as opened:
        yield opened


TASKS = [
    {
        "name": "t",
        "replicas": 1,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
            }
        },
    }
]


def template(name: str, ns: str = "default", **spec: Any) -> JobTemplate:
    return JobTemplate.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobTemplate",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"tasks": TASKS, **spec},
        }
    )


def flow(name: str, *entries: str | tuple[str, list[str]], ns: str = "default") -> JobFlow:
    flows: list[dict[str, Any]] = []
    for entry in entries:
        if isinstance(entry, str):
            flows.append({"name": entry})
        else:
            flows.append({"name": entry[0], "dependsOn": {"targets": entry[1]}})
    return JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"flows": flows},
        }
    )


def vcjob(
    name: str,
    ns: str = "default",
    *,
    labels: dict[str, str] | None = None,
    owners: tuple[Resource, ...] = (),
    finalizers: list[str] | None = None,
) -> VCJob:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels or {}}
    if owners:
        meta["ownerReferences"] = [
            {
                "apiVersion": o.api_version,
                "kind": o.kind,
                "name": o.name,
                "uid": o.metadata.uid,
                "controller": i == 0,
            }
            for i, o in enumerate(owners)
        ]
    if finalizers:
        meta["finalizers"] = finalizers
    return VCJob.from_dict(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": meta,
            "spec": {"minAvailable": 1, "tasks": TASKS},
        }
    )


def finished(flow_obj: JobFlow, phase: str = "Succeed") -> JobFlow:
    """The flow with a status phase (flows may only be deleted once finished)."""
    out = flow_obj.clone()
    out.status = JobFlow.model_validate(
        {"apiVersion": out.api_version, "kind": out.kind, "status": {"state": {"phase": phase}}}
    ).status
    return out
