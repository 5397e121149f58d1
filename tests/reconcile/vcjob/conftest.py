"""Builders for vcjob runtime tests: manifests as a user writes them (`make.job`,
`make.task`), the defaulted VCJob, and a fresh harness world (`make.world`)."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.api.vcjob import VCJob
from vcflow.conformance.runtime_world import RuntimeWorld
from vcflow.reconcile.vcjob import resources, spec


class Make:
    @staticmethod
    def task(
        name: str = "w",
        replicas: int = 1,
        *,
        restart: str | None = "Never",
        cpu: str | None = None,
        requests: dict[str, Any] | None = None,
        policies: list[dict[str, Any]] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        container: dict[str, Any] = {"name": "main", "image": "busybox"}
        wanted = dict(requests or {})
        if cpu is not None:
            wanted["cpu"] = cpu
        if wanted:
            container["resources"] = {"requests": wanted}
        pod_spec: dict[str, Any] = {"containers": [container]}
        if restart is not None:
            pod_spec["restartPolicy"] = restart
        out: dict[str, Any] = {"name": name, "replicas": replicas, "template": {"spec": pod_spec}}
        if policies is not None:
            out["policies"] = policies
        return {**out, **extra}

    @staticmethod
    def job(name: str = "j", *tasks: dict[str, Any], **job_spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"tasks": list(tasks) or [Make.task()], **job_spec},
        }

    @staticmethod
    def vcjob(data: dict[str, Any]) -> VCJob:
        return spec.with_defaults(VCJob.from_dict(data))

    @staticmethod
    def world(
        capacity: dict[str, Any] | None = None,
        priorities: dict[str, int] | None = None,
        hold: bool = False,
    ) -> RuntimeWorld:
        return RuntimeWorld(
            capacity=resources.capacity(capacity), priorities=priorities, hold_deletions=hold
        )


@pytest.fixture
def make() -> type[Make]:
    return Make
