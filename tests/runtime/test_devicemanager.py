"""The node's GPUs: a pod gets devices no other live pod holds — those this runtime gave,
and those a pod it re-adopts was given (its checkpoint) — keeps its own when launched again,
and cannot launch when too few are free. No processes: a pod cache and pod directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vcflow.api.pod import Pod
from vcflow.runtime.devicemanager import CHECKPOINT, DeviceManager
from vcflow.runtime.launch import LaunchError, PodRequest
from vcflow.runtime.podcache import PodCache

GPUS = ("0", "1", "2", "3")


def gpu_pod(name: str, gpus: int, phase: str = "Running") -> Pod:
    container: dict[str, Any] = {"name": "c"}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return Pod.from_dict(
        {
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
            "spec": {"nodeName": "localhost", "containers": [container]},
            "status": {"phase": phase},
        }
    )


def request_of(pod: Pod) -> PodRequest:
    assert pod.spec is not None
    return PodRequest(namespace=pod.namespace, name=pod.name, spec=pod.spec, uid=pod.metadata.uid)


def env(request: PodRequest) -> dict[str, str]:
    return {v.name: v.value or "" for v in (request.spec.containers or [])[0].env or []}


def checkpoint(tmp_path: Path, pod: Pod, devices: list[str]) -> None:
    pod_dir = tmp_path / pod.namespace / pod.name
    pod_dir.mkdir(parents=True)
    record = {"uid": pod.metadata.uid, "nvidia.com/gpu": devices}
    (pod_dir / CHECKPOINT).write_text(json.dumps(record))


@pytest.fixture
def cache() -> PodCache:
    return PodCache()


def manager(tmp_path: Path, cache: PodCache, gpus: tuple[str, ...] = GPUS) -> DeviceManager:
    return DeviceManager(gpus, cache, lambda ns, name: tmp_path / ns / name)


def launched(devices: DeviceManager, cache: PodCache, pod: Pod) -> PodRequest:
    cache.put(pod)
    return devices.prepare(pod, request_of(pod))


def test_pods_get_the_devices_no_live_pod_holds(tmp_path: Path, cache: PodCache) -> None:
    devices = manager(tmp_path, cache)
    first = launched(devices, cache, gpu_pod("a", 2))
    second = launched(devices, cache, gpu_pod("b", 2))
    assert env(first)["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert env(second)["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert json.loads(str(second.files[CHECKPOINT].content))["nvidia.com/gpu"] == ["2", "3"]
    with pytest.raises(LaunchError, match=r"1 nvidia\.com/gpu wanted, but the free devices"):
        launched(devices, cache, gpu_pod("c", 1))
    cache.put(gpu_pod("a", 2, phase="Succeeded"))  # a ended: its devices are free
    assert env(launched(devices, cache, gpu_pod("c", 1)))["CUDA_VISIBLE_DEVICES"] == "0"


def test_the_devices_of_a_re_adopted_pod_are_read_from_its_checkpoint(
    tmp_path: Path, cache: PodCache
) -> None:
    adopted = gpu_pod("a", 2)
    checkpoint(tmp_path, adopted, ["1", "3"])
    cache.put(adopted)  # running since before this runtime started
    devices = manager(tmp_path, cache)
    assert env(launched(devices, cache, gpu_pod("b", 2)))["CUDA_VISIBLE_DEVICES"] == "0,2"


def test_a_pod_launched_again_keeps_its_devices(tmp_path: Path, cache: PodCache) -> None:
    again = gpu_pod("a", 2)
    checkpoint(tmp_path, again, ["2", "3"])
    devices = manager(tmp_path, cache)
    assert env(launched(devices, cache, again))["CUDA_VISIBLE_DEVICES"] == "2,3"


def test_a_pod_without_a_gpu_sees_none_and_without_gpus_nothing_changes(
    tmp_path: Path, cache: PodCache
) -> None:
    cpu = gpu_pod("cpu", 0)
    told = env(launched(manager(tmp_path, cache), cache, cpu))
    assert told == {"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "void"}
    request = request_of(cpu)
    assert manager(tmp_path, cache, gpus=()).prepare(cpu, request) is request
