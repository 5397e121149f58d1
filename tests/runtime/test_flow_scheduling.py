"""The runtime's flow-aware scheduling, end to end through the real executor on a memory
store with a simulated kubelet and a virtual clock (`conformance.runtime_world`): queue
weights over time, the hand-over race, the flows' holds, and that a waiting job's reason is
written when its kind changes, not at every pass."""

from __future__ import annotations

import json
from typing import Any

from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.scheduling import Queue
from vcflow.api.vcjob import VCJob
from vcflow.conformance.runtime_world import RuntimeWorld
from vcflow.reconcile.vcjob import resources
from vcflow.store.base import EventType

HANDOVER = json.dumps({"holdSeconds": 60, "need": {"nvidia.com/gpu": "2"}})


def _job(
    name: str,
    *,
    cpu: str | None = None,
    gpu: str | None = None,
    queue: str | None = None,
    flow: str | None = None,
    handover: bool = False,
) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("nvidia.com/gpu", gpu)) if v}
    container = {"name": "main", "image": "busybox", "resources": {"requests": requests}}
    template = {"spec": {"restartPolicy": "Never", "containers": [container]}}
    meta: dict[str, Any] = {"name": name}
    if flow:
        meta["labels"] = {"volcano.sh/createdByJobFlow": f"default.{flow}"}
    if handover:
        meta["annotations"] = {"vcflow.io/handover": HANDOVER}
    spec: dict[str, Any] = {"tasks": [{"name": "w", "replicas": 1, "template": template}]}
    if queue:
        spec["queue"] = queue
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": meta,
        "spec": spec,
    }


def _queue(name: str, weight: int) -> Queue:
    return Queue.from_dict({"metadata": {"name": name}, "spec": {"weight": weight}})


def _flow(name: str) -> JobFlow:
    data = {"metadata": {"name": name}, "spec": {"flows": []}}
    return JobFlow.from_dict({**data, "status": {"state": {"phase": "Running"}}})


def _running(world: RuntimeWorld) -> list[str]:
    return sorted(
        p.name for p in world.pods().values() if p.placed and p.phase in ("Pending", "Running")
    )


def test_backlogged_queues_weighted_3_to_1_get_75_25_of_the_cpu_seconds() -> None:
    world = RuntimeWorld(
        capacity=resources.capacity({"cpu": "4"}), objects=[_queue("a", 3), _queue("b", 1)]
    )
    for i in range(40):  # (interleaved: creation order favours neither)
        world.create_job(_job(f"a{i}", cpu="1", queue="a"))
        world.create_job(_job(f"b{i}", cpu="1", queue="b"))
    seconds = {"a": 0, "b": 0}
    for _tick in range(12):  # every job runs one tick; both queues stay backlogged
        running = _running(world)
        for name in running:
            seconds[name[0]] += 1
        for name in running:
            world.pod_exit(name, 0)
            world.settle()
    share = seconds["a"] / (seconds["a"] + seconds["b"])
    assert 0.65 <= share <= 0.85, seconds
    assert seconds["a"] + seconds["b"] == 4 * 12  # no CPU idle
    assert all(world.job(f"{q}30") is not None for q in "ab")  # (still backlogged)
    assert "a39-w-0" not in world.pods() and "b39-w-0" not in world.pods()


def test_the_hand_over_closes_the_race_with_a_waiting_rival() -> None:
    """prep ends; in that same settle the rival would be admitted before the flow
    controller creates train. The hold keeps the GPUs until train comes."""
    world = RuntimeWorld(capacity=resources.capacity({"nvidia.com/gpu": "2"}), objects=[_flow("a")])
    world.create_job(_job("prep", gpu="2", flow="a", handover=True))
    world.create_job(_job("rival", gpu="2", flow="b"))
    assert _running(world) == ["prep-w-0"]
    world.pod_exit("prep-w-0", 0)
    world.settle()
    assert _running(world) == []  # (without the hold: rival-w-0)
    world.create_job(_job("train", gpu="2", flow="a"))
    assert _running(world) == ["train-w-0"]
    assert not world.executor.gang.handovers.holds  # consumed by train


def test_a_job_without_hand_over_leaves_its_resources_to_the_next_in_line() -> None:
    world = RuntimeWorld(capacity=resources.capacity({"nvidia.com/gpu": "2"}), objects=[_flow("a")])
    world.create_job(_job("prep", gpu="2", flow="a"))
    world.create_job(_job("rival", gpu="2", flow="b"))
    world.pod_exit("prep-w-0", 0)
    world.settle()
    assert _running(world) == ["rival-w-0"]


def test_a_hold_goes_with_its_deleted_flow() -> None:
    world = RuntimeWorld(capacity=resources.capacity({"nvidia.com/gpu": "2"}), objects=[_flow("a")])
    world.create_job(_job("prep", gpu="2", flow="a", handover=True))
    world.create_job(_job("rival", gpu="2", flow="b"))
    world.pod_exit("prep-w-0", 0)
    world.settle()
    assert _running(world) == []
    world.delete_object(JobFlow, "a")
    world.wait(1)
    assert _running(world) == ["rival-w-0"]


def test_a_waiting_jobs_reason_is_written_when_its_kind_changes_not_at_every_pass() -> None:
    world = RuntimeWorld(capacity=resources.capacity({"cpu": "3"}))
    for name in ("s0", "s1", "s2", "big"):
        world.create_job(_job(name, cpu="3" if name == "big" else "1"))
    before = _status_writes(world, "big")
    for name in ("s0", "s1"):  # 1, then 2 CPUs free: big still waits for resources
        world.pod_exit(f"{name}-w-0", 0)
        world.settle()
    assert _status_writes(world, "big") == before
    big = world.job("big")
    assert isinstance(big, VCJob) and big.status is not None
    (condition,) = big.status.conditions or []
    assert (condition.model_extra or {}).get("reason") == "Unschedulable"
    assert (condition.model_extra or {}).get("message") == "needs cpu 3; free cpu 0"
    assert not [e for e in world.store.list(Event) if e.reason == "PodGroupPending"]
    world.pod_exit("s2-w-0", 0)
    world.settle()
    assert _running(world) == ["big-w-0"]
    admitted = world.job("big")
    assert admitted is not None and admitted.status is not None
    assert all("reason" not in (c.model_extra or {}) for c in admitted.status.conditions or [])


def _status_writes(world: RuntimeWorld, name: str) -> int:
    found = world.store.events_since(0, kinds=[VCJob])
    return sum(1 for e in found if e.name == name and e.type is EventType.MODIFIED)
