"""The device manager's pure part: how many GPUs a pod holds (Kubernetes' rules, as the gang
scheduler counts them), which free ones it gets, each container's share and what its
processes are told."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.api.vcjob import PodSpec
from vcflow.reconcile.vcjob import devices, resources

GPUS = ("0", "1", "2", "3")


def gpu(name: str, limit: int | None = None, request: int | None = None) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if limit is not None:
        res["limits"] = {"nvidia.com/gpu": limit}
    if request is not None:
        res["requests"] = {"nvidia.com/gpu": request}
    return {"name": name, "resources": res}


def spec(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = ()) -> PodSpec:
    body: dict[str, Any] = {"containers": list(containers)}
    if init:
        body["initContainers"] = list(init)
    return PodSpec.from_dict(body)


@pytest.mark.parametrize(
    ("pod", "count"),
    [
        (spec({"name": "c"}), 0),
        (spec(gpu("c", limit=2)), 2),
        (spec(gpu("c", limit=1, request=1)), 1),
        (spec(gpu("a", limit=1), gpu("b", limit=2)), 3),
        # init containers' devices are reused by the app containers
        (spec(gpu("a", limit=1), init=(gpu("i", limit=3),)), 3),
        (spec(gpu("a", limit=2), init=(gpu("i", limit=1),)), 2),
    ],
    ids=["none", "limit", "request-equals-limit", "two-containers", "big-init", "small-init"],
)
def test_a_pod_holds_what_the_gang_scheduler_counts(pod: PodSpec, count: int) -> None:
    assert devices.pod_count(pod) == count
    assert resources.pod_request(pod).get(devices.GPU, 0) == count


def test_free_devices_go_lowest_first_and_never_twice() -> None:
    first = devices.allot(spec(gpu("c", limit=2)), GPUS, taken=set())
    assert first is not None and first.pod == ("0", "1")
    second = devices.allot(spec(gpu("c", limit=2)), GPUS, taken=set(first.pod))
    assert second is not None and second.pod == ("2", "3")
    assert devices.allot(spec(gpu("c", limit=1)), GPUS, taken={"0", "1", "2", "3"}) is None


def test_the_free_devices_are_those_not_taken_in_the_machines_order() -> None:
    got = devices.allot(spec(gpu("c", limit=2)), ("3", "1", "0"), taken={"1"})
    assert got is not None and got.pod == ("3", "0")


def test_each_app_container_gets_its_own_devices_and_an_init_container_reuses_them() -> None:
    pod = spec(gpu("a", limit=1), {"name": "cpu"}, gpu("b", limit=2), init=(gpu("i", limit=2),))
    got = devices.allot(pod, GPUS, taken={"0"})
    assert got is not None
    assert got.pod == ("1", "2", "3")
    assert got.containers == {"a": ("1",), "cpu": (), "b": ("2", "3"), "i": ("1", "2")}


def test_what_a_container_is_told() -> None:
    assert devices.visible_env(("2", "3")) == {
        "CUDA_VISIBLE_DEVICES": "2,3",
        "NVIDIA_VISIBLE_DEVICES": "2,3",
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",  # CUDA's device 2 is nvidia-smi's GPU 2
    }
    # no GPU asked for, none seen: as a Kubernetes pod without nvidia.com/gpu
    assert devices.visible_env(()) == {"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "void"}


def test_the_devices_come_first_in_the_env_so_the_containers_own_win() -> None:
    own = {"name": "CUDA_VISIBLE_DEVICES", "value": "7"}
    pod = spec({**gpu("a", limit=1), "env": [own]}, init=({"name": "i"},))
    got = devices.allot(pod, GPUS, taken=set())
    assert got is not None
    told = devices.with_devices(pod, got)
    env = [(v.name, v.value) for v in (told.containers or [])[0].env or []]
    assert env[0] == ("CUDA_VISIBLE_DEVICES", "0")
    assert env[-1] == ("CUDA_VISIBLE_DEVICES", "7")
    init_env = {v.name: v.value for v in (told.init_containers or [])[0].env or []}
    assert init_env["CUDA_VISIBLE_DEVICES"] == ""
    original = (pod.containers or [])[0].env or []
    assert [(v.name, v.value) for v in original] == [("CUDA_VISIBLE_DEVICES", "7")]  # untouched
