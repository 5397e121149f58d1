"""The kubelet's device manager on one machine, for `nvidia.com/gpu`: which of the machine's
GPUs a placed pod's containers get, and what their processes are told. The node
(`runtime.devicemanager`) calls `allot` at launch with the devices live pods hold.

Kubernetes' rules: an extended resource is counted from `limits` (a request must equal it),
in whole devices; an app container gets devices of its own, an init container reuses the
pod's (the pod needs max(largest init container, sum of app containers), as
`resources.pod_request` counts it for the gang scheduler). Free devices go lowest first.
Pure.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from vcflow.api.vcjob import Container, EnvVar, PodSpec
from vcflow.reconcile.vcjob import resources

GPU = "nvidia.com/gpu"
CUDA_VISIBLE = "CUDA_VISIBLE_DEVICES"
NVIDIA_VISIBLE = "NVIDIA_VISIBLE_DEVICES"
CUDA_ORDER = "CUDA_DEVICE_ORDER"
#: NVIDIA_VISIBLE_DEVICES of a container without a GPU: the container toolkit's "no GPU
#: container" (as runc), which is what Kubernetes gives a pod that requests none.
NO_GPU = "void"


@dataclass(frozen=True)
class Allotment:
    """The devices a pod holds (`pod`), and each container's share of them by name."""

    pod: tuple[str, ...] = ()
    containers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def container_count(container: Container) -> int:
    """The GPUs a container asks for (its limit, else its request; whole devices)."""
    res = container.resources
    if res is None:
        return 0
    amount = {**resources.parse(res.limits), **resources.parse(res.requests)}.get(GPU)
    return math.ceil(amount) if amount else 0


def pod_count(spec: PodSpec | None) -> int:
    """The GPUs the pod holds: what `resources.pod_request` reserves for it, in devices."""
    amount = resources.pod_request(spec).get(GPU)
    return math.ceil(amount) if amount else 0


def allot(spec: PodSpec | None, devices: Sequence[str], taken: Collection[str]) -> Allotment | None:
    """The pod's devices, from `devices` (the machine's, in order) less `taken` (held by
    other pods); None when too few are free."""
    need = pod_count(spec)
    free = [d for d in devices if d not in taken]
    if need > len(free):
        return None
    chosen = tuple(free[:need])
    shares: dict[str, tuple[str, ...]] = {}
    start = 0
    for c in (spec.containers or []) if spec else []:
        count = container_count(c)
        shares[c.name or ""] = chosen[start : start + count]
        start += count
    for c in (spec.init_containers or []) if spec else []:
        shares[c.name or ""] = chosen[: container_count(c)]
    return Allotment(chosen, shares)


def visible_env(share: Sequence[str]) -> dict[str, str]:
    """What a container's processes are told: its devices by index (CUDA's numbering made
    nvidia-smi's, PCI bus order), or that it has none."""
    if not share:
        return {CUDA_VISIBLE: "", NVIDIA_VISIBLE: NO_GPU}
    listed = ",".join(share)
    return {CUDA_VISIBLE: listed, NVIDIA_VISIBLE: listed, CUDA_ORDER: "PCI_BUS_ID"}


def with_devices(spec: PodSpec, allotment: Allotment) -> PodSpec:
    """`spec` with each container's `visible_env` first in its `env`, so a variable the
    container sets itself wins (as the device plugin's do in Kubernetes). A new spec."""

    def told(c: Container) -> Container:
        share = allotment.containers.get(c.name or "", ())
        added = [EnvVar(name=k, value=v) for k, v in visible_env(share).items()]
        return c.model_copy(update={"env": [*added, *(c.env or [])]})

    update: dict[str, list[Container]] = {"containers": [told(c) for c in spec.containers or []]}
    if spec.init_containers:
        update["init_containers"] = [told(c) for c in spec.init_containers]
    return spec.model_copy(update=update)
