"""`vcflow operator --namespace NS ...`: the controllers over `Scoped` see only those
namespaces, at the first resync and in the events after it; the in-cluster config; the
flags refused as usage errors."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.vcjob import VCJob
from vcflow.cli.app import app
from vcflow.controller.manager import Manager
from vcflow.operator import process
from vcflow.operator.scope import Scoped
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


@pytest.mark.parametrize("namespaces", [("one",), ("one", "three")])
def test_only_the_namespaces_given_are_reconciled(namespaces: tuple[str, ...]) -> None:
    store = MemoryStore()
    store.apply([template(ns) for ns in ("one", "two", "three")])
    store.apply([flow("one"), flow("two")])
    scope = Scoped(store, namespaces)
    manager = Manager(scope)
    manager.settle()
    assert jobs(store) == ["one/f-a"]
    store.apply([flow("three"), flow("two", "g")])
    manager.settle()
    want = ["one/f-a", "three/f-a"] if "three" in namespaces else ["one/f-a"]
    assert jobs(store) == want


def test_no_namespace_means_all() -> None:
    store = MemoryStore()
    store.apply([template("one"), template("two"), flow("one"), flow("two")])
    Manager(Scoped(store, ())).settle()
    assert jobs(store) == ["one/f-a", "two/f-a"]


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
