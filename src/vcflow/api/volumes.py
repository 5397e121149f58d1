"""The pod volumes vocabulary the local runtime and admission share: which volume sources
work on one machine, and the environment variables that name a volume's directory and a
job's hosts file. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Volume sources the local runtime provides: a per-pod directory, a host path, and the
#: data of a ConfigMap or Secret the user applied.
LOCAL = ("emptyDir", "hostPath", "configMap", "secret")
#: Plugins that imply the svc plugin (Volcano's webhook adds it): their pods get host names.
SVC_PLUGINS = ("svc", "tensorflow", "mpi", "pytorch", "ray")
#: Set in every container that mounts volume `<NAME>` (upper-cased, other characters `_`):
#: the directory the volume is on this machine, whatever its `mountPath`.
VOLUME_ENV_PREFIX = "VCFLOW_VOLUME_"
#: Set in the pods of a job with the svc plugin: the hosts file that maps its pods' names.
HOSTS_ENV = "VCFLOW_HOSTS_FILE"
_NOT_NAME = re.compile(r"[^A-Z0-9_]")


def volume_env(volume: str) -> str:
    """`VCFLOW_VOLUME_TRAIN_DATA` for volume `train-data`."""
    return VOLUME_ENV_PREFIX + _NOT_NAME.sub("_", volume.upper())


def source_of(volume: Mapping[str, Any]) -> str:
    """The volume's source kind (`emptyDir`, `persistentVolumeClaim`...); "" if none."""
    for key in volume:
        if key != "name":
            return str(key)
    return ""


def host_path(volume: Mapping[str, Any]) -> str | None:
    """The path of a hostPath volume, None for other kinds."""
    source = volume.get("hostPath")
    return str(source.get("path") or "") if isinstance(source, Mapping) else None
