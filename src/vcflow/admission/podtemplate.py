"""A task's pod template under the vcjob webhook (reference §6.4 rules 13 and 14): the practical
subset of Kubernetes pod-template validation (a container's own rules in `containers`; unique
volume names, each volumeMount naming one of them), the topology-policy CPU rule, and the
warnings for a template without `restartPolicy` and for a relative `workingDir`. Messages are
Volcano's `spec.task[<i>].<k8s error>`. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from vcflow.admission import containers, metadata
from vcflow.api import names, quantity
from vcflow.api.errors import FieldError
from vcflow.api.vcjob import Container, PodSpec, Quantity, ResourceRequirements, TaskSpec

RESTART_POLICIES = ("Always", "OnFailure", "Never")
MAX_INT32 = 2**31 - 1


def template_errors(task: TaskSpec, index: int, path: str) -> list[FieldError]:
    """Rule 13, then (only for a valid template, as Volcano) rule 14."""
    spec = task.template.spec if task.template is not None else None
    errors = _pod_spec_errors(spec or PodSpec(), index, f"{path}.template.spec")
    meta = task.template.metadata if task.template is not None else None
    if meta is not None:
        at = f"{path}.template.metadata"
        errors += metadata.label_errors(meta.labels, f"{at}.labels")
        errors += metadata.annotation_errors(meta.annotations, f"{at}.annotations")
    if not errors and spec is not None:
        errors = _topology_errors(task.topology_policy, spec, index, path)
    return errors


def _k8s(index: int, field: str, message: str, path: str) -> FieldError:
    return FieldError(f"spec.task[{index}].template.spec.{field}: {message}", path)


def _pod_spec_errors(spec: PodSpec, index: int, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if not spec.containers:
        errors.append(_k8s(index, "containers", "Required value", f"{path}.containers"))
    seen: set[str] = set()
    errors += _container_names(spec.containers or [], "containers", seen, index, path)
    errors += _container_names(spec.init_containers or [], "initContainers", seen, index, path)

    def report(field: str, message: str) -> FieldError:
        return _k8s(index, field, message, f"{path}.{field}")

    for key, listed in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for j, container in enumerate(listed or []):
            errors += containers.container_errors(container, f"{key}[{j}]", report)
    errors += _volume_errors(spec, index, path)
    deadline = spec.active_deadline_seconds
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        message = f"Invalid value: {deadline}: must be between 1 and {MAX_INT32}, inclusive"
        errors.append(report("activeDeadlineSeconds", message))
    policy = spec.restart_policy
    if policy and policy not in RESTART_POLICIES:
        supported = ", ".join(f'"{p}"' for p in RESTART_POLICIES)
        message = f'Unsupported value: "{policy}": supported values: {supported}'
        errors.append(_k8s(index, "restartPolicy", message, f"{path}.restartPolicy"))
    return errors


def _container_names(
    containers: Sequence[Container], key: str, seen: set[str], index: int, path: str
) -> list[FieldError]:
    """Kubernetes: each name required, a DNS-1123 label, unique across containers and
    initContainers (the later one is reported)."""
    errors: list[FieldError] = []
    for j, container in enumerate(containers):
        field = f"{key}[{j}].name"
        name = container.name
        if not name:
            errors.append(_k8s(index, field, "Required value", f"{path}.{field}"))
            continue
        problems = names.dns1123_label_errors(name)
        if problems:
            message = f'Invalid value: "{name}": {"; ".join(problems)}'
            errors.append(_k8s(index, field, message, f"{path}.{field}"))
        elif name in seen:
            errors.append(_k8s(index, field, f'Duplicate value: "{name}"', f"{path}.{field}"))
        seen.add(name)
    return errors


def _volume_errors(spec: PodSpec, index: int, path: str) -> list[FieldError]:
    """Kubernetes: volume names are unique, and a container mounts only a volume of its pod
    (a mount naming none would run the container without the data it expects)."""
    errors: list[FieldError] = []
    declared: set[str] = set()
    for i, volume in enumerate(_mappings((spec.model_extra or {}).get("volumes"))):
        name = volume.get("name")
        if isinstance(name, str) and name in declared:
            field = f"volumes[{i}].name"
            errors.append(_k8s(index, field, f'Duplicate value: "{name}"', f"{path}.{field}"))
        if isinstance(name, str):
            declared.add(name)
    for key, listed in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for j, container in enumerate(listed or []):
            mounts = _mappings((container.model_extra or {}).get("volumeMounts"))
            for m, mount in enumerate(mounts):
                name = mount.get("name")
                if isinstance(name, str) and name and name not in declared:
                    field = f"{key}[{j}].volumeMounts[{m}].name"
                    errors.append(_k8s(index, field, f'Not found: "{name}"', f"{path}.{field}"))
    return errors


def _mappings(value: object) -> list[Mapping[str, object]]:
    """The items of a list field (the schema check reports one of another type), mappings
    kept in place and others as empty ones, so indexes stay those of the manifest."""
    if not isinstance(value, list):
        return []
    return [item if isinstance(item, Mapping) else {} for item in value]


def _topology_errors(
    topology: str | None, spec: PodSpec, index: int, path: str
) -> list[FieldError]:
    """Rule 14: a topology policy other than none needs a Guaranteed pod with whole CPUs."""
    if not topology or topology == "none":
        return []
    containers = [*(spec.containers or []), *(spec.init_containers or [])]
    requests = [_requests(c.resources) for c in containers]
    qos = _qos(containers, requests)
    if qos != "Guaranteed":
        message = f"spec.task[{index}] isn't Guaranteed pod, kind={qos}"
        return [FieldError(message, f"{path}.topologyPolicy")]
    n_main = len(spec.containers or [])
    for j, req in enumerate(requests):
        if not _whole_cpus(req.get("cpu")):
            key = f"containers[{j}]" if j < n_main else f"initContainers[{j - n_main}]"
            message = f"the cpu request isn't an integer in spec.task[{index}] container[{j}]."
            return [FieldError(message, f"{path}.template.spec.{key}.resources")]
    return []


def _requests(resources: ResourceRequirements | None) -> dict[str, Quantity]:
    """Requests, or the limits when none are given (Volcano copies them before the check)."""
    if resources is None:
        return {}
    return dict(resources.requests or resources.limits or {})


def _qos(containers: Sequence[Container], requests: Sequence[dict[str, Quantity]]) -> str:
    """Kubernetes' pod QoS class over cpu and memory (GetPodQOS)."""
    req_sum: dict[str, Fraction] = {}
    lim_sum: dict[str, Fraction] = {}
    guaranteed = True
    for container, req in zip(containers, requests, strict=True):
        limits = container.resources.limits if container.resources else None
        _add_positive(req_sum, req)
        found = _add_positive(lim_sum, limits or {})
        guaranteed = guaranteed and found >= {"cpu", "memory"}
    if not req_sum and not lim_sum:
        return "BestEffort"
    return "Guaranteed" if guaranteed and req_sum == lim_sum else "Burstable"


def _add_positive(total: dict[str, Fraction], resources: dict[str, Quantity]) -> set[str]:
    found: set[str] = set()
    for name in ("cpu", "memory"):
        value = quantity.parse(resources.get(name))
        if value is not None and value > 0:
            total[name] = total.get(name, Fraction(0)) + value
            found.add(name)
    return found


def _whole_cpus(value: Quantity | None) -> bool:
    """Volcano's guaranteedCPUs != 0: Value()*1000 == MilliValue() (both round up), not 0."""
    amount = quantity.parse(value)
    if amount is None:
        return False
    whole = math.ceil(amount)
    return whole != 0 and whole * 1000 == math.ceil(amount * 1000)


def restart_policy_warning(task: TaskSpec, name: str, path: str) -> list[FieldError]:
    """Kubernetes defaults a missing restartPolicy to Always: the pods never end."""
    spec = task.template.spec if task.template is not None else None
    if spec is not None and spec.restart_policy:
        return []
    return [
        FieldError(
            f'task "{name}" has no restartPolicy: Kubernetes defaults it to Always, so its '
            "containers are restarted whenever they exit, its pods never finish and the job "
            "never completes; set template.spec.restartPolicy to Never (or OnFailure)",
            f"{path}.template.spec.restartPolicy",
            warning=True,
        )
    ]


def working_dir_warnings(task: TaskSpec, path: str) -> list[FieldError]:
    """`containers.working_dir_warning` for every container of the task's template."""
    spec = task.template.spec if task.template is not None else None
    if spec is None:
        return []
    found: list[FieldError] = []
    for key, listed in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for j, container in enumerate(listed or []):
            found += containers.working_dir_warning(container, f"{path}.template.spec.{key}[{j}]")
    return found
