"""The vcjob (`batch.volcano.sh/v1alpha1` Job): JobSpec, tasks, pod templates, status.

JobSpec is shared: a JobTemplate's `spec` and a flow entry's `patch.jobSpec` are JobSpecs
(reference §2.2, §2.6). String-valued enums (policy events/actions) stay `str` here so that
admission, not the parser, words the error as Volcano does.
"""

from __future__ import annotations

from typing import Any, Literal

from vcflow.api.meta import Resource, WireModel
from vcflow.api.quantity import Quantity


class EnvVar(WireModel):
    name: str
    value: str | None = None
    value_from: dict[str, Any] | None = None


class ResourceRequirements(WireModel):
    requests: dict[str, Quantity] | None = None
    limits: dict[str, Quantity] | None = None


class Container(WireModel):
    name: str | None = None
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    working_dir: str | None = None
    resources: ResourceRequirements | None = None


class PodSpec(WireModel):
    containers: list[Container] | None = None
    init_containers: list[Container] | None = None
    restart_policy: str | None = None
    active_deadline_seconds: int | None = None
    hostname: str | None = None
    subdomain: str | None = None


class PodTemplateMeta(WireModel):
    name: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class PodTemplateSpec(WireModel):
    metadata: PodTemplateMeta | None = None
    spec: PodSpec | None = None


class LifecyclePolicy(WireModel):
    action: str | None = None
    event: str | None = None
    events: list[str] | None = None
    exit_code: int | None = None
    timeout: str | None = None


class TaskDependsOn(WireModel):
    name: list[str] | None = None
    iteration: str | None = None


class PartitionPolicy(WireModel):
    total_partitions: int | None = None
    partition_size: int | None = None
    min_partitions: int | None = None


class TaskSpec(WireModel):
    name: str | None = None
    replicas: int | None = None
    min_available: int | None = None
    template: PodTemplateSpec | None = None
    policies: list[LifecyclePolicy] | None = None
    topology_policy: str | None = None
    max_retry: int | None = None
    depends_on: TaskDependsOn | None = None
    partition_policy: PartitionPolicy | None = None


class VolumeSpec(WireModel):
    mount_path: str | None = None
    volume_claim_name: str | None = None
    volume_claim: dict[str, Any] | None = None


class NetworkTopology(WireModel):
    mode: str | None = None
    highest_tier_allowed: int | None = None
    highest_tier_name: str | None = None


class JobSpec(WireModel):
    scheduler_name: str | None = None
    min_available: int | None = None
    volumes: list[VolumeSpec] | None = None
    tasks: list[TaskSpec] | None = None
    policies: list[LifecyclePolicy] | None = None
    plugins: dict[str, list[str]] | None = None
    running_estimate: str | None = None
    queue: str | None = None
    max_retry: int | None = None
    ttl_seconds_after_finished: int | None = None
    priority_class_name: str | None = None
    min_success: int | None = None
    network_topology: NetworkTopology | None = None


class TaskState(WireModel):
    phase: dict[str, int] | None = None


class JobState(WireModel):
    phase: str | None = None
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None


class JobCondition(WireModel):
    status: str | None = None
    last_transition_time: str | None = None


class VCJobStatus(WireModel):
    state: JobState | None = None
    min_available: int | None = None
    task_status_count: dict[str, TaskState] | None = None
    pending: int | None = None
    running: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    terminating: int | None = None
    unknown: int | None = None
    version: int | None = None
    retry_count: int | None = None
    running_duration: str | None = None
    controlled_resources: dict[str, str] | None = None
    conditions: list[JobCondition] | None = None

    @property
    def phase(self) -> str:
        """The job phase, `""` when none was written yet."""
        return (self.state.phase or "") if self.state else ""


class VCJob(Resource):
    """A Volcano vcjob; the unit a flow entry becomes and the local runtime runs."""

    api_version: Literal["batch.volcano.sh/v1alpha1"] = "batch.volcano.sh/v1alpha1"
    kind: Literal["Job"] = "Job"
    spec: JobSpec | None = None
    status: VCJobStatus | None = None

    @property
    def phase(self) -> str:
        return self.status.phase if self.status else ""


def spec_defaults_applied(spec: JobSpec) -> JobSpec:
    """The CRD's defaults inside a JobSpec: `queue: default`, `maxRetry: 3` (reference §2.2).

    Pure; returns a copy. Applied by the store when a JobTemplate is written, as the API
    server applies CRD defaults, so `load → dump` alone stays exact.
    """
    out = spec.clone()
    if out.queue is None:
        out.queue = "default"
    if out.max_retry is None:
        out.max_retry = 3
    return out


__all__ = [
    "Container",
    "EnvVar",
    "JobSpec",
    "JobState",
    "LifecyclePolicy",
    "PodSpec",
    "PodTemplateSpec",
    "Quantity",
    "TaskSpec",
    "VCJob",
    "VCJobStatus",
    "spec_defaults_applied",
]
