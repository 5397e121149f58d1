"""The test cluster's fixtures, shared by every test directory (tests/conftest.py registers
them, so one session has one cluster): `cluster`, a real Kubernetes v1.37 + Volcano v1.10
control plane with kwok nodes (scripts/cluster/kubecluster.py), its binaries built once from
the Go module proxy (cached outside the repository) and started once per session; `kube` (an
admin client) and `kube_namespace` (a fresh namespace per test) on it.

When a piece cannot be had (no Go, the proxy refusing a module, a failed build) the tests
skip with that reason (under `CI=true` they fail: CI must run them); `VCFLOW_TEST_CLUSTER=0`
skips them without building. A cluster that was built but does not start is an error, not a
skip."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
KUBECLUSTER = REPO / "scripts" / "cluster" / "kubecluster.py"
DEADLINE = 60.0


def load_kubecluster() -> ModuleType:
    """scripts/cluster/kubecluster.py as a module (scripts/ is not a package)."""
    name = "vcflow_test_kubecluster"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, KUBECLUSTER)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before exec: its dataclasses look themselves up there
        spec.loader.exec_module(module)
    return sys.modules[name]


kubecluster = load_kubecluster()


@contextlib.contextmanager
def _uncaptured(config: pytest.Config) -> Iterator[None]:
    """Let the build's and the start's progress lines through pytest's capture: a first build
    takes minutes."""
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is None:
        yield
        return
    with capture.global_and_fixture_disabled():
        yield


@pytest.fixture(scope="session")
def cluster(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A started kubecluster.Cluster, shared by the session; stopped at its end."""
    if os.environ.get("VCFLOW_TEST_CLUSTER") == "0":
        pytest.skip("VCFLOW_TEST_CLUSTER=0: the real Kubernetes + Volcano test cluster is off")
    with _uncaptured(pytestconfig):
        try:
            binaries = kubecluster.build()
        except kubecluster.ClusterUnavailable as error:
            if os.environ.get("CI") == "true":  # CI must run them: .ci/run, README
                pytest.fail(f"no test cluster under CI=true: {error}")
            pytest.skip(f"no test cluster: {error}")
        started = kubecluster.Cluster.start(
            tmp_path_factory.mktemp("kubecluster"), binaries=binaries
        )
    try:
        yield started
    finally:
        started.stop()


class Kube:
    """An httpx client for one user of the cluster, with the few calls the tests need."""

    def __init__(self, cluster: Any, user: str = "admin") -> None:
        self.cluster = cluster
        self.http = httpx.Client(
            base_url=cluster.url,
            headers={"Authorization": f"Bearer {cluster.token_for(user)}"},
            verify=cluster.ssl_context(),
            timeout=30,
        )

    def get(self, path: str) -> dict[str, Any] | None:
        """The object at `path`, None when it is not found."""
        answer = self.http.get(path)
        if answer.status_code == 404:
            return None
        answer.raise_for_status()
        return dict(answer.json())

    def items(self, path: str, **params: str) -> list[dict[str, Any]]:
        answer = self.http.get(path, params=params)
        answer.raise_for_status()
        return list(answer.json()["items"])

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.http.post(path, json=body)
        assert answer.status_code == 201, f"POST {path}: {answer.status_code} {answer.text}"
        return dict(answer.json())

    def delete(self, path: str, **body: Any) -> httpx.Response:
        return self.http.request("DELETE", path, json=body or None)

    def close(self) -> None:
        self.http.close()


def wait_until(check: Callable[[], Any], what: str, deadline: float = DEADLINE) -> Any:
    """Poll `check` until it returns something truthy (returned); fail naming `what`."""
    end = time.monotonic() + deadline
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > end:
            pytest.fail(f"timed out after {deadline:.0f} s waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def kube(cluster: Any) -> Iterator[Kube]:
    """An admin (system:masters) client of the session's cluster."""
    client = Kube(cluster)
    yield client
    client.close()


@pytest.fixture
def kube_namespace(kube: Kube) -> Iterator[str]:
    """A new namespace for one test (its `default` ServiceAccount made, so pods can be
    created in it); deleted afterwards, with what the test left in it."""
    name = f"t-{secrets.token_hex(4)}"
    kube.create("/api/v1/namespaces", {"metadata": {"name": name}})
    wait_until(
        lambda: kube.get(f"/api/v1/namespaces/{name}/serviceaccounts/default"),
        f"ServiceAccount {name}/default (kube-controller-manager)",
    )
    yield name
    kube.delete(f"/api/v1/namespaces/{name}")
