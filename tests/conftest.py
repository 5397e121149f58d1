"""Shared test fixtures: repository paths, the CLI through typer's CliRunner, manifest files;
and the cost markers put on every test (tests/markers.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

# The real Kubernetes + Volcano test cluster (one per session) for every directory's tests.
from tests.cluster.fixtures import cluster, kube, kube_namespace  # noqa: F401
from tests.markers import mark

# vcflow's CRDs in it, once per session (for tests/store's "cluster" backend, tests/conformance).
from tests.store.clusterbackend import vcflow_crds  # noqa: F401
from typer.testing import CliRunner, Result

from vcflow.cli.app import app

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

Invoke = Callable[..., Result]
Write = Callable[..., Path]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The cost markers `lint`, `apiserver`, `process` (tests/markers.py), put before `-m`
    selects by them."""
    mark(items)


@pytest.fixture
def vcflow_cli() -> Invoke:
    """`vcflow_cli("validate", "-f", path, input=...)` → Result (stdout/stderr separate)."""
    runner = CliRunner()

    def invoke(*args: str | Path, input: str | bytes | None = None) -> Result:
        return runner.invoke(app, [str(a) for a in args], input=input)

    return invoke


@pytest.fixture
def write_manifest(tmp_path: Path) -> Write:
    """`write_manifest(text, name="m.yaml")` → the path of a new file in tmp_path."""

    def write(text: str | bytes, name: str = "manifest.yaml") -> Path:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return write
