"""The `v1 Pod`: one replica of a vcjob task, as the local runtime creates and observes it.

The spec is the task's pod template spec (`vcjob.PodSpec`) plus the fields the job controller
and the scheduler fill in (`nodeName` when placed, `schedulerName`, `priorityClassName`).
The status carries what the kubelet reports: phase, conditions, per-container state with
restart counts and exit codes. Unknown fields are kept, as for every wire model.
"""

from __future__ import annotations

from typing import Literal

from vcflow.api import vcjob
from vcflow.api.meta import Resource, WireModel


class PodSpec(vcjob.PodSpec):
    node_name: str | None = None
    scheduler_name: str | None = None
    priority_class_name: str | None = None
    priority: int | None = None


class ContainerStateWaiting(WireModel):
    reason: str | None = None
    message: str | None = None


class ContainerStateRunning(WireModel):
    started_at: str | None = None


class ContainerStateTerminated(WireModel):
    exit_code: int = 0
    signal: int | None = None
    reason: str | None = None
    message: str | None = None
    started_at: str | None = None
    finished_at: str | None = None


class ContainerState(WireModel):
    waiting: ContainerStateWaiting | None = None
    running: ContainerStateRunning | None = None
    terminated: ContainerStateTerminated | None = None


class ContainerStatus(WireModel):
    name: str = ""
    ready: bool = False
    started: bool | None = None
    restart_count: int = 0
    state: ContainerState | None = None
    last_state: ContainerState | None = None
    image: str | None = None


class PodCondition(WireModel):
    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None


class PodStatus(WireModel):
    phase: str | None = None
    conditions: list[PodCondition] | None = None
    reason: str | None = None
    message: str | None = None
    start_time: str | None = None
    container_statuses: list[ContainerStatus] | None = None
    init_container_statuses: list[ContainerStatus] | None = None


class Pod(Resource):
    """A pod object. `phase` is `""` before the kubelet reported anything."""

    api_version: Literal["v1"] = "v1"
    kind: Literal["Pod"] = "Pod"
    spec: PodSpec | None = None
    status: PodStatus | None = None

    @property
    def phase(self) -> str:
        return (self.status.phase or "") if self.status else ""

    @property
    def deleting(self) -> bool:
        """Deleted but not gone yet (`Terminating` in kubectl's words)."""
        return self.metadata.deletion_timestamp is not None

    @property
    def placed(self) -> bool:
        """Bound to a node by the scheduler."""
        return bool(self.spec and self.spec.node_name)


__all__ = [
    "ContainerState",
    "ContainerStateRunning",
    "ContainerStateTerminated",
    "ContainerStateWaiting",
    "ContainerStatus",
    "Pod",
    "PodCondition",
    "PodSpec",
    "PodStatus",
]
