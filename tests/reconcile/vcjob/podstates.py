"""A pod of a job in a named state, for the property tests of the scheduler and runtime."""

from __future__ import annotations

from datetime import datetime

from vcflow.api.pod import Pod
from vcflow.reconcile.vcjob import kubelet


def pod_in(pod: Pod, state: str, now: datetime) -> Pod | None:
    """`pod` (as built, unplaced) taken to `state` by the kubelet model; None for missing."""
    if state == "missing":
        return None
    if state == "unplaced":
        return pod
    pod = kubelet.place(pod, now)
    if state in ("running", "succeeded", "failed"):
        pod = kubelet.start(pod, now)
    if state in ("succeeded", "failed"):
        pod = kubelet.exit_container(pod, 0 if state == "succeeded" else 1, now)
    if state == "terminating":
        pod.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    return pod
