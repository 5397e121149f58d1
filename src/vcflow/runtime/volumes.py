"""A pod's volumes on this machine, planned at launch (`launch.build_spec`): where each
volume is, what each container mounts where, and how it gets there.

- `emptyDir`: `<pod dir>/volumes/<name>/`, shared by the pod's containers, removed with
  the pod; `configMap`, `secret`: the same place, holding the files `configdata` wrote,
  mounted read-only; `hostPath`: the path itself (`DirectoryOrCreate`, `FileOrCreate` and
  no `type` create it when missing, as Docker does for a missing bind source; `Directory`,
  `File` must exist). `subPath` mounts a part of the volume; `readOnly` is kept.
- With private namespaces (`namespaces.usable`): each mount whose `mountPath` is not the
  directory itself is a bind mount in the container's own mount namespace
  (`isolation`), and so is the pod's hosts file over `/etc/hosts` (`jobnet`).
- Without: nothing is mounted. Every container still finds each volume it mounts in
  `$VCFLOW_VOLUME_<NAME>` (set either way), a working directory under a `mountPath` is
  taken from the real directory, and `vcflow validate` warns (`admission.local`).
Other volume sources are left out (`admission.local` warns). A volume that cannot be made
is a ValueError naming it (`launch` makes it a LaunchError).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from vcflow.api import volumes
from vcflow.api.vcjob import Container, PodSpec

VOLUMES = "volumes"
SHADOW = "root"


@dataclass(frozen=True)
class Volume:
    name: str
    source: str  # emptyDir, hostPath, configMap, secret
    path: str  # where it is on this machine
    read_only: bool
    host_type: str = ""


def pod_volumes(spec: PodSpec, pod_dir: Path) -> dict[str, Volume]:
    """The pod's volumes that exist locally, by name."""
    found: dict[str, Volume] = {}
    for volume in (spec.model_extra or {}).get("volumes") or []:
        if not isinstance(volume, Mapping):
            continue
        name, source = str(volume.get("name") or ""), volumes.source_of(volume)
        if source not in volumes.LOCAL or not name:
            continue
        if source == "hostPath":
            host = volume["hostPath"] or {}
            path, kind = str(host.get("path") or ""), str(host.get("type") or "")
            found[name] = Volume(name, source, os.path.normpath(path), False, kind)
        else:
            path = str(pod_dir / VOLUMES / name)
            found[name] = Volume(name, source, path, source in ("configMap", "secret"))
    return found


def prepare(spec: PodSpec, pod_dir: Path, where: str) -> None:
    """Make the pod's volume directories (and missing host paths that may be created)."""
    found = pod_volumes(spec, pod_dir)
    for volume in found.values():
        if volume.source != "hostPath":
            os.makedirs(volume.path, exist_ok=True)
            continue
        _host_path(volume, where)
    for container in [*(spec.init_containers or []), *(spec.containers or [])]:
        for mount in _mounts(container):
            mounted = found.get(str(mount.get("name")))
            sub = str(mount.get("subPath") or "")
            if mounted is not None and sub and mounted.source == "emptyDir":
                os.makedirs(os.path.join(mounted.path, sub), exist_ok=True)


def _host_path(volume: Volume, where: str) -> None:
    path, kind = volume.path, volume.host_type
    if not os.path.isabs(path):
        raise ValueError(f"{where}: volume {volume.name!r}: hostPath {path!r} must be absolute")
    if kind in ("", "DirectoryOrCreate") and not os.path.lexists(path):
        os.makedirs(path, exist_ok=True)
    elif kind == "FileOrCreate" and not os.path.lexists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        Path(path).touch()
    elif kind == "Directory" and not os.path.isdir(path):
        raise ValueError(f"{where}: hostPath type check failed: {path} is not a directory")
    elif kind == "File" and not os.path.isfile(path):
        raise ValueError(f"{where}: hostPath type check failed: {path} is not a file")


def _mounts(container: Container) -> list[Mapping[str, Any]]:
    mounts = (container.model_extra or {}).get("volumeMounts") or []
    return [m for m in mounts if isinstance(m, Mapping)]


@dataclass(frozen=True)
class Plan:
    """What one container gets: bind mounts (source, mountPath, read-only), variables."""

    mounts: list[tuple[str, str, bool]]
    env: dict[str, str]


def container_plan(container: Container, found: Mapping[str, Volume], where: str) -> Plan:
    """The container's mounts and `$VCFLOW_VOLUME_<NAME>` variables."""
    mounts: list[tuple[str, str, bool]] = []
    env: dict[str, str] = {}
    for mount in _mounts(container):
        name = str(mount.get("name") or "")
        volume = found.get(name)
        if volume is None:
            continue  # a source with no local meaning (admission warned) or undeclared
        target = str(mount.get("mountPath") or "")
        if not target.startswith("/"):
            raise ValueError(f"{where}: volumeMount {name!r}: mountPath must be absolute")
        source = volume.path
        sub = str(mount.get("subPath") or "")
        if sub:
            parts = PurePosixPath(sub).parts
            if PurePosixPath(sub).is_absolute() or ".." in parts:
                raise ValueError(f"{where}: volumeMount {name!r}: subPath must be relative")
            source = os.path.join(source, sub)
        env[volumes.volume_env(name)] = volume.path
        if os.path.normpath(target) != source:
            read_only = bool(mount.get("readOnly")) or volume.read_only
            mounts.append((source, os.path.normpath(target), read_only))
    return Plan(mounts, env)


def real_dir(cwd: str, mounts: list[tuple[str, str, bool]]) -> str:
    """Without namespaces: the directory a working directory under a mountPath really is."""
    for source, target, _ in mounts:
        if cwd == target or cwd.startswith(target.rstrip("/") + "/"):
            return source + cwd[len(target) :]
    return cwd
