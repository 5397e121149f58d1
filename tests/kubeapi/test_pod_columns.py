"""A pod's STATUS cell, as kubectl prints it from a cluster (kube's pod printer): a pod that
succeeded is `Completed`, one that failed `Error` (its container's terminated reason), a
waiting container's reason, `ExitCode:N` for an end with no reason. Pure."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from vcflow.api.pod import Pod
from vcflow.kubeapi import columns, resources

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _pod(phase: str, *states: dict[str, Any], deleting: bool = False, ready: bool = False) -> Pod:
    meta: dict[str, Any] = {"name": "p", "namespace": "default"}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-01T00:00:00Z"
    names = [f"c{i}" for i in range(len(states))]
    return Pod.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"containers": [{"name": n, "image": "x"} for n in names]},
            "status": {
                "phase": phase,
                "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                "containerStatuses": [
                    {"name": n, "ready": "running" in s, "restartCount": 0, "state": s}
                    for n, s in zip(names, states, strict=True)
                ],
            },
        }
    )


def _status(pod: Pod) -> str:
    cols = columns.of(resources.PODS)
    return dict(zip([c.name for c in cols], columns.cells(pod, cols, NOW), strict=True))["Status"]


DONE = {"terminated": {"exitCode": 0, "reason": "Completed"}}
ERROR = {"terminated": {"exitCode": 3, "reason": "Error"}}
RUNNING = {"running": {"startedAt": "2026-12-01T00:00:00Z"}}


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (_pod("Succeeded", DONE), "Completed"),
        (_pod("Failed", ERROR), "Error"),
        (_pod("Running", RUNNING), "Running"),
        (_pod("Pending", {"waiting": {"reason": "ContainerCreating"}}), "ContainerCreating"),
        (_pod("Failed", {"terminated": {"exitCode": 137}}), "ExitCode:137"),
        (_pod("Failed", {"terminated": {"exitCode": 0, "signal": 9}}), "Signal:9"),
        (_pod("Running", DONE, RUNNING, ready=True), "Running"),
        (_pod("Running", DONE, RUNNING), "NotReady"),
        (_pod("Failed", ERROR, DONE), "Error"),  # (the first container's reason wins)
        (_pod("Running", RUNNING, deleting=True), "Terminating"),
        (_pod("Pending"), "Pending"),
    ],
    ids=[
        "succeeded",
        "failed",
        "running",
        "waiting",
        "exit-code",
        "signal",
        "sidecar-ready",
        "sidecar-not-ready",
        "first-wins",
        "terminating",
        "no-containers-yet",
    ],
)
def test_the_status_cell_is_kubes(pod: Pod, expected: str) -> None:
    assert _status(pod) == expected
