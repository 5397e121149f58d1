"""Warnings for what a pod template asks that vcflow's local runtime cannot give: volume
sources with no local meaning (a PersistentVolumeClaim, NFS...), Volcano's job-level
`volumes`, and — where this machine has no private namespaces (`Context.isolation` False) —
mount paths other than the host path and the svc plugin's host names. Called by `review`
for JobTemplates and vcjobs. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vcflow.api import volumes
from vcflow.api.errors import FieldError
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.meta import Resource
from vcflow.api.vcjob import JobSpec, VCJob


def warnings(obj: Resource, isolation: bool | None) -> list[FieldError]:
    """The warnings for a JobTemplate's or vcjob's spec; [] for other kinds."""
    if not isinstance(obj, JobTemplate | VCJob) or obj.spec is None:
        return []
    spec: JobSpec = obj.spec
    found = [
        _warn(
            f"volume mountPath {v.mount_path!r}: Volcano's job volumes (PersistentVolumeClaims) "
            "are not made by vcflow's local runtime; its containers run without it",
            f"spec.volumes[{i}]",
        )
        for i, v in enumerate(spec.volumes or [])
    ]
    svc = any(p in (spec.plugins or {}) for p in volumes.SVC_PLUGINS)
    if svc and isolation is False:
        found.append(
            _warn(
                "the svc plugin's host names (<job>-<task>-<index>.<job>) do not resolve on "
                "this machine (no private network and mount namespaces): the pods share the "
                f"host's network and ports; ${volumes.HOSTS_ENV} names a hosts file listing them",
                "spec.plugins",
            )
        )
    for t, task in enumerate(spec.tasks or []):
        pod = task.template.spec if task.template is not None else None
        if pod is not None:
            found += _pod(pod.model_extra or {}, pod, f"spec.tasks[{t}].template.spec", isolation)
    return found


def _pod(extra: Mapping[str, Any], pod: Any, at: str, isolation: bool | None) -> list[FieldError]:
    found: list[FieldError] = []
    declared: dict[str, Mapping[str, Any]] = {}
    for i, volume in enumerate(extra.get("volumes") or []):
        if not isinstance(volume, Mapping):
            continue
        declared[str(volume.get("name"))] = volume
        kind = volumes.source_of(volume)
        if kind and kind not in volumes.LOCAL:
            found.append(
                _warn(
                    f"volume {volume.get('name')!r}: {kind} volumes are not available in vcflow's "
                    "local runtime: containers run without it (hostPath, emptyDir, configMap "
                    "and secret volumes work)",
                    f"{at}.volumes[{i}].{kind}",
                )
            )
    if isolation is not False:
        return found
    for kind in ("initContainers", "containers"):
        for c, container in enumerate(getattr(pod, _attr(kind)) or []):
            mounts = (container.model_extra or {}).get("volumeMounts") or []
            for m, mount in enumerate(mounts):
                if not isinstance(mount, Mapping):
                    continue
                volume = declared.get(str(mount.get("name")))
                if volume is None or volumes.source_of(volume) not in volumes.LOCAL:
                    continue
                path = str(mount.get("mountPath") or "")
                if volumes.host_path(volume) == path and not mount.get("subPath"):
                    continue
                env = volumes.volume_env(str(mount.get("name")))
                found.append(
                    _warn(
                        f"mountPath {path!r} cannot be honoured on this machine (no private "
                        f"mount namespaces): the process finds the volume's directory in ${env}",
                        f"{at}.{kind}[{c}].volumeMounts[{m}].mountPath",
                    )
                )
    return found


def _attr(kind: str) -> str:
    return "init_containers" if kind == "initContainers" else "containers"


def _warn(message: str, path: str) -> FieldError:
    return FieldError(message, path, warning=True)
