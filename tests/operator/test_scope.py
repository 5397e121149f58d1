"""`vcflow operator --namespace NS ...`: the controllers over a KubeStore scoped to those
namespaces see only them, at the first resync and in the events after it; the in-cluster
config; the flags refused as usage errors."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from tests.store.kubeserver import KubeBackend
from typer.testing import CliRunner

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.cli.app import app
from vcflow.controller.manager import Manager
from vcflow.kubestore import KubeClient, KubeStore
from vcflow.operator import process
from vcflow.store import MemoryStore


def template(namespace: str) -> JobTemplate:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}
    task: dict[str, Any] = {"name": "t", "replicas": 1, "template": {"spec": spec}}
    return JobTemplate.from_dict(
        {"metadata": {"name": "a", "namespace": namespace}, "spec": {"tasks": [task]}}
    )


def flow(namespace: str, name: str = "f") -> JobFlow:
    spec = {"jobRetainPolicy": "retain", "flows": [{"name": "a"}]}
    return JobFlow.from_dict({"metadata": {"name": name, "namespace": namespace}, "spec": spec})


def jobs(store: MemoryStore) -> list[str]:
    return sorted(f"{j.namespace}/{j.name}" for j in store.list(VCJob))


@contextmanager
def scoped(namespaces: Sequence[str]) -> Iterator[tuple[MemoryStore, KubeStore]]:
    """A served store and a KubeStore of it scoped to `namespaces`, as the operator's."""
    served = KubeBackend(MemoryStore())
    with served:
        url = served.served.url
        store = KubeStore(
            KubeClient.for_url(url, timeout=10), cached_reads=True, namespaces=namespaces
        )
        try:
            yield served.engine, store
        finally:
            store.close()


def settled(manager: Manager, store: MemoryStore, want: list[str]) -> list[str]:
    """The vcjobs once the manager made `want` (the watches deliver the events a moment
    after the writes), then after a few more turns: what it made of everything."""
    deadline = time.monotonic() + 20
    while jobs(store) != want and time.monotonic() < deadline:
        manager.settle()
        time.sleep(0.02)
    for _ in range(10):
        manager.settle()
        time.sleep(0.02)
    return jobs(store)


@pytest.mark.parametrize("namespaces", [("one",), ("one", "three")])
def test_only_the_namespaces_given_are_reconciled(namespaces: tuple[str, ...]) -> None:
    with scoped(namespaces) as (store, scope):
        store.apply([template(ns) for ns in ("one", "two", "three")])
        store.apply([flow("one"), flow("two")])
        manager = Manager(scope)
        try:
            assert settled(manager, store, ["one/f-a"]) == ["one/f-a"]
            store.apply([flow("three"), flow("two", "g")])
            want = ["one/f-a", "three/f-a"] if "three" in namespaces else ["one/f-a"]
            assert settled(manager, store, want) == want
        finally:
            manager.flows.close()


def test_no_namespace_means_all() -> None:
    with scoped(()) as (store, scope):
        store.apply([template("one"), template("two"), flow("one"), flow("two")])
        manager = Manager(scope)
        try:
            assert settled(manager, store, ["one/f-a", "two/f-a"]) == ["one/f-a", "two/f-a"]
        finally:
            manager.flows.close()


def test_a_scoped_list_holds_the_namespaces_given_only() -> None:
    with scoped(("one", "three")) as (store, scope):
        store.apply([template(ns) for ns in ("one", "two", "three")])
        assert [(t.namespace, t.name) for t in scope.list(JobTemplate)] == [
            ("one", "a"),
            ("three", "a"),
        ]
        assert scope.list(JobTemplate, "two") == []
        assert {e.namespace for e in scope.events_since(0, kinds=[JobTemplate])} == {
            "one",
            "three",
        }


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--lease-duration", "5", "--renew-deadline", "5"], "--lease-duration must be greater"),
        (["--renew-deadline", "2", "--retry-period", "2"], "--renew-deadline must be greater"),
        (["--metrics-addr", "8080"], "expected HOST:PORT"),
        (["--health-addr", "8081"], "--health-addr '8081': expected HOST:PORT"),
        (["--kube-api-burst", "0"], "--kube-api-burst"),
    ],
)
def test_bad_flags_are_usage_errors(flags: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["operator", *flags])
    assert result.exit_code == 2
    assert message in result.output


def test_in_a_pod_the_service_account_is_used_unless_a_kubeconfig_or_context_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    assert process.in_cluster(process.Settings())
    assert not process.in_cluster(process.Settings(kubeconfig="k"))
    assert not process.in_cluster(process.Settings(context="c"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    assert not process.in_cluster(process.Settings())
