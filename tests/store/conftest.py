"""Fixtures of the store contract suite: every test taking `store` runs on each backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vcflow.api.clock import FakeClock
from vcflow.api.jobflow import JobFlow
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.vcjob import VCJob
from vcflow.store import MemoryStore, SqliteStore
from vcflow.store.engine import StoreEngine

BACKENDS = ["memory", "sqlite"]


def make_store(backend: str, tmp_path: Path, clock: FakeClock, **options: Any) -> StoreEngine:
    if backend == "memory":
        return MemoryStore(clock=clock, **options)
    return SqliteStore.in_state_dir(tmp_path / "state", clock=clock, **options)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
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
