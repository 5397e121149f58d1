"""The CRD schema of a vcjob JobSpec (reference §2.6, §6.3): the min/max/pattern/enum rules the
API server applies to a JobTemplate's `spec`, a vcjob's `spec` and a flow's `patch.jobSpec`,
with the API server's messages. `path` prefixes every field path. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pydantic import ValidationError

from vcflow.admission import schema
from vcflow.api import clock
from vcflow.api.errors import FieldError
from vcflow.api.vcjob import JobSpec, LifecyclePolicy, NetworkTopology, PartitionPolicy, TaskSpec

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
MOUNT_PATH = re.compile(r"^[^:]+$")

#: The CRD's enum for `event`/`events`; wider than what the webhook lets users write.
CRD_EVENTS = (
    "*",
    "PodPending",
    "PodRunning",
    "PodFailed",
    "PodEvicted",
    "Unknown",
    "TaskCompleted",
    "OutOfSync",
    "CommandIssued",
    "JobUpdated",
    "TaskFailed",
)
TOPOLOGY_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
TOPOLOGY_MODES = ("hard", "soft")


def schema_errors(spec: JobSpec, path: str = "spec") -> list[FieldError]:
    """Every CRD-schema violation in `spec`."""
    errors = schema.max_length(spec.scheduler_name, 63, f"{path}.schedulerName")
    errors += schema.minimum(spec.min_available, 0, f"{path}.minAvailable")
    errors += schema.minimum(spec.max_retry, 0, f"{path}.maxRetry")
    errors += schema.minimum(spec.ttl_seconds_after_finished, 0, f"{path}.ttlSecondsAfterFinished")
    errors += schema.minimum(spec.min_success, 1, f"{path}.minSuccess")
    for key, value in (("queue", spec.queue), ("priorityClassName", spec.priority_class_name)):
        errors += schema.max_length(value, 253, f"{path}.{key}")
        errors += schema.pattern(value, DNS1123_SUBDOMAIN, f"{path}.{key}")
    errors += network_topology_schema(spec.network_topology, f"{path}.networkTopology")
    errors += policies_schema(spec.policies, f"{path}.policies")
    errors += volumes_schema(spec, path)
    errors += schema.min_items(spec.tasks, 1, f"{path}.tasks")
    for i, task in enumerate(spec.tasks or []):
        errors += task_schema(task, f"{path}.tasks[{i}]")
    return errors


def task_schema(task: TaskSpec, path: str) -> list[FieldError]:
    errors = schema.max_length(task.name, 63, f"{path}.name")
    errors += schema.pattern(task.name, DNS1123_LABEL, f"{path}.name")
    errors += schema.minimum(task.replicas, 0, f"{path}.replicas")
    errors += schema.minimum(task.min_available, 0, f"{path}.minAvailable")
    errors += schema.minimum(task.max_retry, 0, f"{path}.maxRetry")
    errors += schema.enum(task.topology_policy, TOPOLOGY_POLICIES, f"{path}.topologyPolicy")
    errors += policies_schema(task.policies, f"{path}.policies")
    if task.partition_policy is not None:
        errors += partition_schema(task.partition_policy, f"{path}.partitionPolicy")
    return errors


def partition_schema(policy: PartitionPolicy, path: str) -> list[FieldError]:
    errors = schema.required(policy.total_partitions, f"{path}.totalPartitions")
    errors += schema.required(policy.partition_size, f"{path}.partitionSize")
    errors += schema.minimum(policy.total_partitions, 1, f"{path}.totalPartitions")
    errors += schema.minimum(policy.partition_size, 1, f"{path}.partitionSize")
    errors += schema.minimum(policy.min_partitions, 0, f"{path}.minPartitions")
    topology = partition_topology(policy)
    errors += network_topology_schema(topology, f"{path}.networkTopology")
    return errors


def partition_topology(policy: PartitionPolicy) -> NetworkTopology | None:
    """`partitionPolicy.networkTopology`, modelled or kept as an unknown key; None if unusable."""
    value = getattr(policy, "network_topology", None)
    if value is None:
        value = (policy.model_extra or {}).get("networkTopology")
    if isinstance(value, NetworkTopology) or value is None:
        return value
    if not isinstance(value, dict):
        return None
    try:
        return NetworkTopology.model_validate(value)
    except ValidationError:
        return None


def network_topology_schema(topology: NetworkTopology | None, path: str) -> list[FieldError]:
    if topology is None:
        return []
    errors = schema.enum(topology.mode, TOPOLOGY_MODES, f"{path}.mode")
    errors += schema.minimum(topology.highest_tier_allowed, 0, f"{path}.highestTierAllowed")
    errors += schema.max_length(topology.highest_tier_name, 253, f"{path}.highestTierName")
    return errors


def policies_schema(policies: Sequence[LifecyclePolicy] | None, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for j, policy in enumerate(policies or []):
        errors += schema.enum(policy.event, CRD_EVENTS, f"{path}[{j}].event")
        for k, event in enumerate(policy.events or []):
            errors += schema.enum(event, CRD_EVENTS, f"{path}[{j}].events[{k}]")
        errors += _timeout(policy.timeout, f"{path}[{j}].timeout")
    return errors


def _timeout(timeout: str | None, path: str) -> list[FieldError]:
    """A policy's `timeout` is a Go `metav1.Duration`: what `time.ParseDuration` refuses
    (not a duration, or longer than ~292 years) fails to decode, as in Volcano's controller."""
    if timeout is None or clock.parse_go_duration(timeout) is not None:
        return []
    shown = json.dumps(timeout)
    return [FieldError(f"Invalid value: {shown}: time: invalid duration {shown}", path)]


def volumes_schema(spec: JobSpec, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for k, volume in enumerate(spec.volumes or []):
        vpath = f"{path}.volumes[{k}]"
        errors += schema.required(volume.mount_path, f"{vpath}.mountPath")
        errors += schema.min_length(volume.mount_path, 1, f"{vpath}.mountPath")
        if volume.mount_path:
            errors += schema.pattern(volume.mount_path, MOUNT_PATH, f"{vpath}.mountPath")
        errors += schema.max_length(volume.volume_claim_name, 253, f"{vpath}.volumeClaimName")
    return errors
