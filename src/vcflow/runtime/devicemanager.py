"""The node's GPUs (`node.Node` calls it at each launch): which devices every live pod holds,
each pod's share picked at launch (`reconcile.vcjob.devices`), told to its containers
(`CUDA_VISIBLE_DEVICES`, `NVIDIA_VISIBLE_DEVICES`) and checkpointed in its pod directory
(`devices.json`, as the kubelet's device manager keeps a checkpoint), from which a restarted
runtime learns what the pods it re-adopts hold. Without devices (none found, none declared)
it changes nothing.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from vcflow.api import names
from vcflow.api.pod import Pod
from vcflow.podserver import podfs
from vcflow.reconcile.vcjob import devices
from vcflow.runtime.launch import LaunchError, PodFile, PodRequest
from vcflow.runtime.podcache import PodCache

Key = names.ObjectKey
#: The checkpoint in a pod directory: {"uid": ..., "nvidia.com/gpu": ["0", "1"]}.
CHECKPOINT = "devices.json"
PodDir = Callable[[str, str], Path]


class DeviceManager:
    def __init__(self, gpus: Sequence[str], cache: PodCache, pod_dir: PodDir) -> None:
        self.gpus = tuple(gpus)
        self.cache, self.pod_dir = cache, pod_dir
        self._held: dict[Key, tuple[str, tuple[str, ...]]] = {}  # key → (uid, devices)

    def prepare(self, pod: Pod, request: PodRequest) -> PodRequest:
        """`request` with the pod's devices told to its containers and checkpointed;
        LaunchError when the devices it needs are held (the scheduler counted them free:
        a capacity lowered while pods ran). Unchanged without devices to manage."""
        if not self.gpus:
            return request
        wanted = devices.pod_count(request.spec)
        # a pod launched before (its run goes on) keeps the devices it was given
        recorded = self._checkpoint(pod) if wanted else ()
        if len(recorded) == wanted and wanted:
            allotment = devices.allot(request.spec, recorded, ())
        else:
            allotment = devices.allot(request.spec, self.gpus, self._taken(pod.key))
        if allotment is None:
            raise LaunchError(
                f"pod {pod.namespace}/{pod.name}: {wanted} "
                f"{devices.GPU} wanted, but the free devices are fewer (held by running pods)"
            )
        files = dict(request.files)
        if allotment.pod:
            self._held[pod.key] = (pod.metadata.uid, allotment.pod)
            record = {"uid": pod.metadata.uid, devices.GPU: list(allotment.pod)}
            files[CHECKPOINT] = PodFile(json.dumps(record))
        spec = devices.with_devices(request.spec, allotment)
        return dataclasses.replace(request, spec=spec, files=files)

    def forget(self, key: Key) -> None:
        self._held.pop(key, None)

    def _taken(self, key: Key) -> set[str]:
        """The devices of the other live pods that hold GPUs: as allotted by this runtime,
        or, for a pod it did not launch (re-adopted), as its checkpoint says."""
        taken: set[str] = set()
        for other in self.cache.live:
            if other == key or not self.cache.held.get(other, {}).get(devices.GPU):
                continue
            pod = self.cache.get(other)
            if pod is None:
                continue
            known = self._held.get(other)
            if known is None or known[0] != pod.metadata.uid:
                known = (pod.metadata.uid, self._checkpoint(pod))
                self._held[other] = known
            taken.update(known[1])
        for gone in [k for k in self._held if k not in self.cache.live and k != key]:
            del self._held[gone]
        return taken

    def _checkpoint(self, pod: Pod) -> tuple[str, ...]:
        path = self.pod_dir(pod.namespace, pod.name) / CHECKPOINT
        record = podfs.read_json(str(path))
        if not isinstance(record, dict) or record.get("uid") != pod.metadata.uid:
            return ()
        listed = record.get(devices.GPU)
        return tuple(str(d) for d in listed) if isinstance(listed, list) else ()
