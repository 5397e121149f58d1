"""tests/cluster's fixtures: the smoke tests' `namespace` (a fresh namespace of the session's
cluster per test); `deployed`, vcflow's deploy/ applied to the cluster with `vcflow webhook`
serving it (once per module, undone at its end); `scene`, one test's namespace, operators,
kubectl and CLI on it (tests/cluster/deployed.py). A failed test that used `scene` reports
the tails of its processes' and the components' logs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cluster.deployed import Deployed, Scene, deploy
from tests.cluster.fixtures import Kube


@pytest.fixture
def namespace(kube_namespace: str) -> str:
    return kube_namespace


@pytest.fixture(scope="module")
def deployed(cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    with deploy(cluster, tmp_path_factory.mktemp("deployed")) as found:
        yield found


@pytest.fixture
def scene(
    cluster: Any, kube: Kube, kube_namespace: str, deployed: Deployed, tmp_path: Path
) -> Iterator[Scene]:
    found = Scene(cluster, kube, kube_namespace, deployed, tmp_path)
    try:
        yield found
    finally:
        found.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call" and report.failed:
        scene = getattr(item, "funcargs", {}).get("scene")
        if isinstance(scene, Scene):
            report.sections.append(("vcflow and cluster logs", scene.explain()))
    return report
