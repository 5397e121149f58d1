"""Between the store's pod objects and the pod processes (`pods.PodRunner`): what a placed
pod is launched with, how a process's `RunStatus` becomes the pod's `status`, and the
`v1 Event`s the runtime records on vcjobs.

- **Launch.** The pod's spec as the job controller built it (`reconcile.vcjob.pods`), with
  the svc plugin's ConfigMap made local: its data is written under the pod directory
  (`etc/volcano/<key>`, where Volcano mounts it at `/etc/volcano`) and every
  `configMapKeyRef` to it is replaced by its value (one that does not resolve is dropped,
  as `pods.container_env` does); the processes find that directory in `$VC_SVC_DIR`.
  The user's ConfigMaps and Secrets are read from the store (`configdata`); the job's
  network and hosts file are planned (`jobnet`); containers start in the directory the
  job was applied from (`api.workdir`). The ssh plugin's key pair is not made locally.
- **Status.** `RunStatus.wire` (kubelet-style: phase, startTime, containerStatuses…) plus
  the pod conditions the kubelet would set (PodScheduled; Initialized, ContainersReady and
  Ready while every container is ready). Nothing is written before a supervisor claimed the
  pod: the status `kubelet.place` wrote stays.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from vcflow.api import clock as clocks
from vcflow.api import volumes, workdir
from vcflow.api.phases import PodPhase
from vcflow.api.pod import Pod, PodSpec
from vcflow.api.vcjob import VCJob
from vcflow.podserver import isolation
from vcflow.podserver.statusfile import DEFAULT_GRACE
from vcflow.reconcile.vcjob import kubelet, pods
from vcflow.runtime import configdata, jobnet
from vcflow.runtime.launch import LOCAL_IP, LaunchError, PodFile, PodRequest
from vcflow.runtime.status import RunStatus

#: Kept on every pod the runtime creates, so a deleted pod stays (Terminating, with its
#: deletionTimestamp) until its processes have ended; the runtime then removes it.
FINALIZER = "vcflow.io/pod-process"
SVC_DIR = "etc/volcano"
COMPONENT = "vc-controller-manager"
#: The exit code a container that could not be started reports (as a runtime would).
CANNOT_RUN = 128


#: Environment variable telling a pod's processes where the svc plugin's files are (Volcano
#: mounts them at /etc/volcano; locally they are under the pod directory).
SVC_DIR_ENV = "VC_SVC_DIR"


def pod_request(
    pod: Pod,
    job: VCJob | None,
    pod_dir: Path | None = None,
    objects: configdata.Objects | None = None,
) -> PodRequest:
    """What `PodRunner.launch` needs to run `pod` (a placed pod of `job`); `objects` holds
    the ConfigMaps and Secrets it may read (`configdata`: a ConfigError if one is missing)."""
    svc = pods.svc_files(job) if job is not None else {}
    resolver = configdata.Resolver(objects, pod.namespace, svc)
    if job is not None and svc:
        resolver.svc_name = pods.svc_configmap(job.name)
    spec = PodSpec.model_validate((pod.spec or PodSpec()).to_dict())
    for container in [*(spec.containers or []), *(spec.init_containers or [])]:
        configdata.resolve_env(container, resolver)
    files = {f"{SVC_DIR}/{key}": PodFile(text) for key, text in svc.items()}
    files.update(configdata.volume_files(spec, resolver))
    env = {SVC_DIR_ENV: str(pod_dir / SVC_DIR)} if pod_dir is not None and svc else {}
    net = jobnet.plan(job, pod, isolated=isolation.usable()) if job is not None and svc else None
    if net is not None:
        files[jobnet.HOSTS_FILE] = PodFile(net.hosts)
        if pod_dir is not None:
            env[volumes.HOSTS_ENV] = str(jobnet.hosts_path(pod_dir))
    meta = pod.metadata
    return PodRequest(
        namespace=pod.namespace,
        name=pod.name,
        spec=spec,
        uid=meta.uid,
        labels=dict(meta.labels),
        annotations=dict(meta.annotations),
        env=env,
        files=files,
        node_name=spec.node_name or kubelet.NODE,
        working_dir=workdir.of(job, pod),
        network=net.key if net is not None else None,
        hosts_file=jobnet.HOSTS_FILE if net is not None else None,
        pod_ip=net.address if net is not None else LOCAL_IP,
    )


def status_data(pod: Pod, run: RunStatus, now: datetime) -> dict[str, Any] | None:
    """The pod's new status (wire form) from its process status; None when there is
    nothing to write: not claimed yet, unchanged, or only claimed — the supervisor writes
    its claim before starting anything and writes again at most `supervisor.COALESCE` after
    the first container started (at once if the pod ended), so skipping the claim saves a
    store write and a job sync per pod and hides only a `ContainerCreating` that lasts
    `COALESCE`."""
    if not run.lost and (not run.claimed or (run.seq <= 1 and not run.finished)):
        return None
    data = dict(run.wire)
    data.pop("conditions", None)
    old = pod.status.to_dict() if pod.status else {}
    data["conditions"] = _conditions(data, old.get("conditions") or [], now)
    if not data.get("startTime") and old.get("startTime"):
        data["startTime"] = old["startTime"]
    return None if data == old else data


def launch_failed(pod: Pod, error: str | LaunchError, now: datetime) -> dict[str, Any]:
    """The status of a pod that cannot be started here: Failed, its first container
    terminated with `CANNOT_RUN` (so the job's policies see a failure). A missing ConfigMap
    or Secret gives the kubelet's reason, `CreateContainerConfigError`."""
    message = str(error)
    reason = getattr(error, "reason", None) or "ContainerCannotRun"
    stamp = clocks.rfc3339(now)
    containers = (pod.spec.containers or []) if pod.spec else []
    terminated = {
        "exitCode": CANNOT_RUN,
        "reason": reason,
        "message": message,
        "finishedAt": stamp,
    }
    return {
        "phase": PodPhase.FAILED,
        "reason": reason if reason != "ContainerCannotRun" else "LaunchError",
        "message": message,
        "startTime": (pod.status.start_time if pod.status else None) or stamp,
        "conditions": [_condition("PodScheduled", "True", stamp)],
        "containerStatuses": [
            {
                "name": c.name or "",
                "ready": False,
                "restartCount": 0,
                "state": {"terminated": terminated},
            }
            for c in containers
        ],
    }


def _conditions(
    data: Mapping[str, Any], old: list[dict[str, Any]], now: datetime
) -> list[dict[str, Any]]:
    stamp = clocks.rfc3339(now)
    statuses = data.get("containerStatuses") or []
    running = data.get("phase") == PodPhase.RUNNING
    ready = running and bool(statuses) and all(c.get("ready") for c in statuses)
    inits = data.get("initContainerStatuses") or []
    initialized = all(
        ((c.get("state") or {}).get("terminated") or {}).get("exitCode") == 0 for c in inits
    )
    wanted = [
        ("PodScheduled", True),
        ("Initialized", initialized),
        ("ContainersReady", ready),
        ("Ready", ready),
    ]
    before = {c.get("type"): c for c in old}
    out = []
    for kind, value in wanted:
        text = "True" if value else "False"
        prior = before.get(kind)
        if prior is not None and prior.get("status") == text:
            out.append(prior)
        else:
            out.append(_condition(kind, text, stamp))
    return out


def _condition(kind: str, status: str, stamp: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "lastTransitionTime": stamp}


def grace_seconds(pod: Pod, default: float = DEFAULT_GRACE) -> float:
    """The pod's `terminationGracePeriodSeconds` (Kubernetes' default: 30)."""
    extra = (pod.spec.model_extra or {}) if pod.spec else {}
    value = extra.get("terminationGracePeriodSeconds")
    return float(value) if isinstance(value, int | float) and value >= 0 else default
