"""A wide job in the runtime shell (the conformance world: the real executor, a simulated
kubelet): its cost grows with its pods, not with their square; its pods are created in
batches, the first ones started before the last is created; and a settle stops when asked
(a deadline, a Ctrl-C), however much is left to do."""

from __future__ import annotations

import time
from typing import Any

from vcflow.api.phases import JobPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.conformance.kubelet_sim import SimHandle
from vcflow.conformance.runtime_world import RuntimeWorld
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.runtime.executor import POD_BATCH
from vcflow.runtime.launch import PodRequest


def wide(replicas: int, min_available: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {
            "minAvailable": min_available,
            "tasks": [
                {
                    "name": "t",
                    "replicas": replicas,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}},
                }
            ],
        },
    }


def run_to_the_end(replicas: int) -> float:
    """CPU seconds to create, start and end every pod of a `replicas`-wide job."""
    world = RuntimeWorld()
    began = time.process_time()
    world.create_job(wide(replicas))
    for pod in world.pods().values():
        world.kubelet.start(pod.key)
    world.settle()
    for pod in world.pods().values():
        world.kubelet.exit(pod.key, 0)
    world.settle()
    spent = time.process_time() - began
    job = world.job("w")
    assert job is not None and job.phase == JobPhase.COMPLETED
    assert len(world.pods()) == replicas
    return spent


def test_a_wide_jobs_cost_grows_with_its_pods_not_their_square() -> None:
    """Four times the pods cost about four times as much (it was sixteen: every pod's
    change surveyed every pod of the job — 1,000 pods took 6.7 s of CPU, 250 took 0.44)."""
    small = min(run_to_the_end(250) for _ in range(2))
    large = min(run_to_the_end(1000) for _ in range(2))  # (the best of two: a CI's noise)
    assert large < 8 * small, f"250 pods: {small:.2f}s, 1000 pods: {large:.2f}s"


class Counting(RuntimeWorld):
    """Records how many pods the store held when each pod was launched."""

    def __init__(self) -> None:
        super().__init__()
        self.held_at_launch: list[int] = []
        launch = self.kubelet.launch

        def counted(request: PodRequest) -> SimHandle:
            self.held_at_launch.append(len(self.store.list(Pod)))
            return launch(request)

        self.kubelet.launch = counted  # type: ignore[method-assign]


def test_a_jobs_pods_are_created_in_batches_and_the_first_start_before_the_last_exists() -> None:
    world = Counting()
    world.create_job(wide(1000))
    assert len(world.pods()) == 1000
    assert sorted(world.pods()) == sorted(f"w-t-{k}" for k in range(1000))  # each once
    assert world.held_at_launch[0] <= POD_BATCH  # (it was all 1,000)


def test_a_gang_is_created_whole_before_it_is_placed() -> None:
    """The batches never split a gang: a job of 600 that needs all 600 starts them all."""
    world = Counting()
    world.create_job(wide(600, min_available=600))
    assert world.held_at_launch[0] == 600 and len(world.held_at_launch) == 600


def test_a_settle_stops_when_asked_and_what_it_did_is_kept() -> None:
    world = RuntimeWorld()
    world.store.create(jobspec.with_defaults(VCJob.from_dict(wide(1000))))
    asked = [0]

    def stop() -> bool:
        asked[0] += 1
        return asked[0] > 300

    world.executor.settle(stop=stop)
    made = len(world.pods())
    assert 0 < made < 1000  # stopped half-way; what it created is in the store
    world.executor.settle()
    assert len(world.pods()) == 1000  # and the next settle goes on from there
