"""Pod identity (reference §3): the pod object the job controller creates for replica `k` of a
task — name `<job>-<task>-<k>`, Volcano's labels and annotations, the owner reference, and the
environment of the `env` and `svc` plugins — plus the accessors that read them back.

The svc plugin's ConfigMap `<job>-svc` has no object locally: `svc_files` gives its data
(file name → content; the runtime shell writes them to a per-pod directory instead of
`/etc/volcano`), and `container_env` resolves the pods' `configMapKeyRef`s against it.
The ssh plugin's key pair is random, so it belongs to the shell, not here. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic

from vcflow.api import names
from vcflow.api.meta import ObjectMeta, OwnerReference, controller_reference
from vcflow.api.phases import PodPhase
from vcflow.api.pod import Pod, PodSpec, PodStatus
from vcflow.api.vcjob import Container, EnvVar, TaskSpec, VCJob
from vcflow.reconcile.vcjob import spec as jobspec

JOB_NAME = "volcano.sh/job-name"
JOB_NAMESPACE = "volcano.sh/job-namespace"
TASK_SPEC = "volcano.sh/task-spec"
TASK_INDEX = "volcano.sh/task-index"
QUEUE_NAME = "volcano.sh/queue-name"
JOB_VERSION = "volcano.sh/job-version"
RETRY_COUNT = "volcano.sh/job-retry-count"
TEMPLATE_UID = "volcano.sh/template-uid"
GROUP_NAME = "scheduling.k8s.io/group-name"
NUMA_POLICY = "volcano.sh/numa-topology-policy"
PARTITION_ID = "volcano.sh/partition-id"
OUT_OF_SYNC = "volcano.sh/controller-out-of-sync"
#: Copied from the job's labels (as labels) and annotations (as annotations) when present.
COPIED_BOTH = ("volcano.sh/preemptable", "volcano.sh/cooldown-time")
#: Copied from the job's labels (as labels), a vcflow addition: the labels the JobFlow
#: controller puts on a flow's vcjobs, so a selector (`kubectl logs -l
#: volcano.sh/createdByJobFlow=<ns>.<flow>`) finds the flow's pods too.
COPIED_FLOW_LABELS = (names.LABEL_CREATED_BY_FLOW, names.LABEL_CREATED_BY_TEMPLATE)
#: Copied from the job's annotations only.
COPIED_ANNOTATIONS = (
    "volcano.sh/revocable-zone",
    "volcano.sh/jdb-min-available",
    "volcano.sh/jdb-max-unavailable",
)
#: The reason of a pod created Failed: its template holds what a Pod cannot (`build_pod`).
INVALID_POD_SPEC = "InvalidPodSpec"
DEFAULT_RESTART_POLICY = "Always"  # Kubernetes' default for a pod without one (§2.1)
NO_HOSTS_ENV = "--inject-hosts-env=false"


def build_pod(job: VCJob, task: TaskSpec, index: int) -> Pod:
    """Replica `index` of `task` (a defaulted task of `job`), as SyncJob creates it: phase
    Pending, unplaced, stamped with the job's current `version` and `retryCount`.

    A template field a Pod cannot hold (`priorityClassName: 5`: admission refuses it, a
    vcjob stored before it did may have one) is left out and the pod is created Failed,
    reason `InvalidPodSpec`, saying which field: the job goes on by its policies."""
    template = task.template
    task_name = task.name or "default"
    pod_spec, invalid = PodSpec(), ""
    if template is not None and template.spec is not None:
        pod_spec, invalid = _pod_spec(template.spec.to_dict())
    meta = template.metadata if template is not None else None
    labels = dict((meta.labels if meta else None) or {})
    annotations = dict((meta.annotations if meta else None) or {})
    metadata = ObjectMeta(
        name=names.pod_name(job.name, task_name, index),
        namespace=job.namespace,
        labels={**labels, **_labels(job, task, index)},
        annotations={**annotations, **_annotations(job, task, index)},
        owner_references=[_owner(job)],
    )
    _fill_spec(pod_spec, job)
    plugins = jobspec.plugins(job)
    if "env" in plugins:
        index_env = [EnvVar(name=n, value=str(index)) for n in ("VK_TASK_INDEX", "VC_TASK_INDEX")]
        _add_env(pod_spec, index_env)
    if "svc" in plugins:
        _svc(pod_spec, job, metadata.name, inject=NO_HOSTS_ENV not in plugins["svc"])
    status = PodStatus(phase=PodPhase.PENDING)
    if invalid:
        status = PodStatus(phase=PodPhase.FAILED, reason=INVALID_POD_SPEC, message=invalid)
    return Pod(metadata=metadata, spec=pod_spec, status=status)


def _pod_spec(data: dict[str, Any]) -> tuple[PodSpec, str]:
    """The Pod spec of a template's spec, and what in it a Pod spec refuses ("" if nothing)."""
    try:
        return PodSpec.model_validate(data), ""
    except pydantic.ValidationError as exc:
        bad = sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]})
    kept = {k: v for k, v in data.items() if k not in bad}
    fields = ", ".join(f"spec.{name}" for name in bad)
    message = (
        f"the pod template's {fields}: not a valid value for a Pod (the vcjob was stored "
        "before admission checked it); correct the template and apply it again"
    )
    return PodSpec.model_validate(kept), message


def _labels(job: VCJob, task: TaskSpec, index: int) -> dict[str, str]:
    spec = job.spec
    out = {
        JOB_NAME: job.name,
        TASK_SPEC: task.name or "default",
        TASK_INDEX: str(index),
        QUEUE_NAME: (spec.queue if spec else None) or jobspec.DEFAULT_QUEUE,
        JOB_NAMESPACE: job.namespace,
    }
    copied = (*COPIED_BOTH, *COPIED_FLOW_LABELS)
    out.update({k: job.metadata.labels[k] for k in copied if k in job.metadata.labels})
    size = task.partition_policy.partition_size if task.partition_policy else None
    if size:
        out[PARTITION_ID] = str(index // size)
    return out


def _annotations(job: VCJob, task: TaskSpec, index: int) -> dict[str, str]:
    status = job.status
    task_name = task.name or "default"
    out = {
        JOB_NAME: job.name,
        TASK_SPEC: task_name,
        TASK_INDEX: str(index),
        QUEUE_NAME: (job.spec.queue if job.spec else None) or jobspec.DEFAULT_QUEUE,
        JOB_VERSION: str((status.version if status else None) or 0),
        RETRY_COUNT: str((status.retry_count if status else None) or 0),
        TEMPLATE_UID: f"{job.name}-{task_name}",
        GROUP_NAME: f"{job.name}-{job.metadata.uid}",
    }
    if task.topology_policy:
        out[NUMA_POLICY] = task.topology_policy
    copied = (*COPIED_BOTH, *COPIED_ANNOTATIONS)
    out.update({k: job.metadata.annotations[k] for k in copied if k in job.metadata.annotations})
    return out


def _owner(job: VCJob) -> OwnerReference:
    return controller_reference(job)


def _fill_spec(pod_spec: PodSpec, job: VCJob) -> None:
    """The job's scheduler and priority class where the template has none. Only a value is
    assigned: an assigned None would show as `priorityClassName: null` in every pod."""
    spec = job.spec
    pod_spec.restart_policy = pod_spec.restart_policy or DEFAULT_RESTART_POLICY
    if spec is not None:
        if not pod_spec.scheduler_name and spec.scheduler_name:
            pod_spec.scheduler_name = spec.scheduler_name
        if not pod_spec.priority_class_name and spec.priority_class_name:
            pod_spec.priority_class_name = spec.priority_class_name


def _containers(pod_spec: PodSpec) -> list[Container]:
    return [*(pod_spec.containers or []), *(pod_spec.init_containers or [])]


def _add_env(pod_spec: PodSpec, env: list[EnvVar]) -> None:
    for container in _containers(pod_spec):
        container.env = [*(container.env or []), *(e.clone() for e in env)]


def _svc(pod_spec: PodSpec, job: VCJob, pod_name: str, *, inject: bool) -> None:
    """The svc plugin's per-pod effect (§3.3): hostname, subdomain, host-list variables."""
    pod_spec.hostname = pod_spec.hostname or pod_name
    pod_spec.subdomain = pod_spec.subdomain or job.name
    if not inject:
        return
    refs: list[EnvVar] = []
    for task in jobspec.task_specs(job):
        var = _var_prefix(task.name or "")
        for key in (f"{var}_HOSTS", f"{var}_NUM"):
            ref = {"configMapKeyRef": {"name": svc_configmap(job.name), "key": key}}
            refs.append(EnvVar(name=key, value_from=ref))
    _add_env(pod_spec, refs)


def _var_prefix(task: str) -> str:
    return "VC_" + task.upper().replace("-", "_")


def svc_configmap(job_name: str) -> str:
    return f"{job_name}-svc"


def task_hosts(job: VCJob, task: TaskSpec) -> list[str]:
    """`<hostname>.<subdomain>` of every replica; one entry when the template sets hostname."""
    spec = task.template.spec if task.template is not None else None
    hostname = spec.hostname if spec is not None else None
    subdomain = (spec.subdomain if spec is not None else None) or job.name
    if hostname:
        return [f"{hostname}.{subdomain}"]
    task_name = task.name or "default"
    count = max(task.replicas or 0, 0)
    return [f"{names.pod_name(job.name, task_name, k)}.{subdomain}" for k in range(count)]


def svc_files(job: VCJob) -> dict[str, str]:
    """The data of the svc ConfigMap `<job>-svc` (file name → content); `{}` without svc."""
    if "svc" not in jobspec.plugins(job):
        return {}
    files: dict[str, str] = {}
    for task in jobspec.task_specs(job):
        hosts = task_hosts(job, task)
        var = _var_prefix(task.name or "")
        files[f"{(task.name or '').replace('-', '_')}.host"] = "\n".join(hosts)
        files[f"{var}_HOSTS"] = ",".join(hosts)
        files[f"{var}_NUM"] = str(len(hosts))
    return files


def container_env(pod: Pod, files: Mapping[str, str], container: int = 0) -> dict[str, str]:
    """A container's environment with `configMapKeyRef`s resolved against `files` (the svc
    ConfigMap data); references that do not resolve are left out, as the kubelet would
    refuse to start the container."""
    containers = (pod.spec.containers or []) if pod.spec else []
    if container >= len(containers):
        return {}
    out: dict[str, str] = {}
    for var in containers[container].env or []:
        if var.value_from is None:
            out[var.name] = var.value or ""
            continue
        value = _config_map_value(var.value_from, files)
        if value is not None:
            out[var.name] = value
    return out


def _config_map_value(source: Mapping[str, Any], files: Mapping[str, str]) -> str | None:
    ref = source.get("configMapKeyRef")
    if not isinstance(ref, Mapping):
        return None
    return files.get(str(ref.get("key")))


# Reading a pod back -------------------------------------------------------------------------


def job_of(pod: Pod) -> str:
    meta = pod.metadata
    return meta.annotations.get(JOB_NAME) or meta.labels.get(JOB_NAME, "")


def task_of(pod: Pod) -> str:
    meta = pod.metadata
    return meta.annotations.get(TASK_SPEC) or meta.labels.get(TASK_SPEC, "")


def index_of(pod: Pod) -> int | None:
    """The replica index: the task-index label, else the name's last `-` segment (§3.1)."""
    text = pod.metadata.labels.get(TASK_INDEX) or pod.name.rsplit("-", 1)[-1]
    return int(text) if text.isdigit() else None


def job_version(pod: Pod) -> int:
    text = pod.metadata.annotations.get(JOB_VERSION, "0")
    return int(text) if text.isdigit() else 0


def partition_of(pod: Pod) -> str:
    return pod.metadata.labels.get(PARTITION_ID, "")


def is_out_of_sync(pod: Pod) -> bool:
    return pod.metadata.annotations.get(OUT_OF_SYNC) == "true"


def marked_out_of_sync(pod: Pod) -> Pod:
    """The pod with the mark the controller puts on it just before deleting it (§3.2)."""
    out = pod.clone()
    out.metadata.annotations[OUT_OF_SYNC] = "true"
    return out
