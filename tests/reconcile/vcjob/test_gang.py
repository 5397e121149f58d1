"""Gang admission and placement on one machine (reference §10, exact fit) and the resource
arithmetic under it."""

from __future__ import annotations

from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

import pytest

from vcflow.api.pod import Pod
from vcflow.api.vcjob import PodSpec, VCJob
from vcflow.reconcile.vcjob import gang, kubelet, pods, resources
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.reconcile.vcjob.model import Group

NOW = datetime(2026, 1, 1, tzinfo=UTC)
F = Fraction


@pytest.mark.parametrize(
    ("raw", "amount"),
    [
        ("500m", F(1, 2)),
        ("2", F(2)),
        (2, F(2)),
        ("1Gi", F(2**30)),
        ("1.5", F(3, 2)),
        ("1k", F(1000)),
    ],
)
def test_quantities(raw: str | int, amount: Fraction) -> None:
    assert resources.parse({"cpu": raw}) == {"cpu": amount}


def test_pod_request_sums_containers_and_takes_the_largest_init() -> None:
    spec = PodSpec.from_dict(
        {
            "containers": [
                {
                    "name": "a",
                    "resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}},
                },
                {"name": "b", "resources": {"limits": {"cpu": "1"}}},
            ],
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "3"}}}],
        }
    )
    assert resources.pod_request(spec) == {"cpu": F(3), "memory": F(2**30)}


def test_capacity_limits() -> None:
    cap = resources.capacity({"cpu": "4"})
    assert cap.limit("cpu") == 4
    assert cap.limit("memory") is None  # standard resources not listed are unlimited
    assert cap.limit("nvidia.com/gpu") == 0  # extended resources exist only if declared
    assert resources.capacity(None).limit("nvidia.com/gpu") is None


@pytest.mark.parametrize(
    ("name", "amount", "text"),
    [
        ("cpu", F(3, 2), "1500m"),
        ("cpu", F(4), "4"),
        ("memory", F(2**31), "2Gi"),
        ("memory", F(1000), "1000"),
    ],
)
def test_show(name: str, amount: Fraction, text: str) -> None:
    assert resources.show(name, amount) == text


def vcjob(make: Any, name: str, *tasks: dict[str, Any], **spec: Any) -> VCJob:
    job = make.vcjob(make.job(name, *tasks, **spec))
    job.status = None
    return job


def test_min_resources_follow_task_minimums_then_fill(make: Any) -> None:
    job = vcjob(
        make,
        "j",
        make.task("a", 3, cpu="1", minAvailable=1),
        make.task("b", 2, cpu="2", minAvailable=1),
    )
    assert gang.min_resources(job) == {"cpu": F(3)}  # minAvailable 2: one a, one b
    job = vcjob(
        make,
        "j",
        make.task("a", 3, cpu="1", minAvailable=1),
        make.task("b", 2, cpu="2", minAvailable=1),
        minAvailable=3,
    )
    assert gang.min_resources(job) == {"cpu": F(4)}  # then filled with a's replicas


def test_min_resources_below_task_sum_take_the_first_pods(make: Any) -> None:
    job = vcjob(make, "j", make.task("a", 2, cpu="1"), make.task("b", 2, cpu="2"), minAvailable=3)
    assert gang.min_resources(job) == {"cpu": F(4)}  # a, a, b


def make_pods(job: VCJob, *, placed: int = 0) -> list[Pod]:
    out = []
    for task in jobspec.task_specs(job):
        for k in range(task.replicas or 0):
            pod = pods.build_pod(job, task, k)
            if len(out) < placed:
                pod = kubelet.place(pod, NOW)
            out.append(pod)
    return out


def test_no_head_of_line_blocking(make: Any) -> None:
    big = vcjob(make, "big", make.task("w", 2, cpu="3"))
    small = vcjob(make, "small", make.task("w", 1, cpu="1"))
    out = gang.schedule(
        [gang.GangJob(big, Group.PENDING), gang.GangJob(small, Group.PENDING)],
        [],
        resources.capacity({"cpu": "4"}),
    )
    assert out.admitted == ("default/small",)
    assert out.unschedulable == {
        "default/big": "its minimum of 2 pods need cpu 6, but this machine has cpu 4",
        "default/small": "",
    }


def test_priority_before_creation_order(make: Any) -> None:
    first = vcjob(make, "first", make.task("w", 2, cpu="1"))
    urgent = vcjob(make, "urgent", make.task("w", 2, cpu="1"), priorityClassName="high")
    out = gang.schedule(
        [gang.GangJob(first, Group.PENDING), gang.GangJob(urgent, Group.PENDING)],
        [],
        resources.capacity({"cpu": "2"}),
        {"high": 10},
    )
    assert out.admitted == ("default/urgent",)


def test_admitted_gangs_reserve_their_minimum(make: Any) -> None:
    a = vcjob(make, "a", make.task("w", 2, cpu="1"))
    b = vcjob(make, "b", make.task("w", 1, cpu="1"))
    out = gang.schedule(
        [gang.GangJob(a, Group.ADMITTED), gang.GangJob(b, Group.PENDING)],
        [],  # a has no pods yet: its 2 CPUs are reserved
        resources.capacity({"cpu": "2"}),
    )
    assert out.admitted == ()


def test_all_or_nothing(make: Any) -> None:
    job = vcjob(make, "j", make.task("w", 3, cpu="1"))
    out = gang.schedule(
        [gang.GangJob(job, Group.ADMITTED)], make_pods(job), resources.capacity({"cpu": "2"})
    )
    assert out.placed == ()
    out = gang.schedule(
        [gang.GangJob(job, Group.ADMITTED)], make_pods(job), resources.capacity({"cpu": "3"})
    )
    assert out.placed == ("default/j-w-0", "default/j-w-1", "default/j-w-2")


def test_a_ready_gang_places_what_fits(make: Any) -> None:
    job = vcjob(make, "j", make.task("w", 4, cpu="1"), minAvailable=2)
    current = make_pods(job, placed=2)
    out = gang.schedule(
        [gang.GangJob(job, Group.ADMITTED)], current, resources.capacity({"cpu": "3"})
    )
    assert out.placed == ("default/j-w-2",)


def test_task_minimums_gate_placement(make: Any) -> None:
    job = vcjob(make, "j", make.task("a", 2, cpu="1"), make.task("b", 1, cpu="4"))
    out = gang.schedule(
        [gang.GangJob(job, Group.ADMITTED)], make_pods(job), resources.capacity({"cpu": "3"})
    )
    assert out.placed == ()  # a's two pods fit, but task b needs its pod too


def test_terminating_pods_use_capacity_but_do_not_count(make: Any) -> None:
    job = vcjob(make, "j", make.task("w", 2, cpu="1"))
    old, new = make_pods(job, placed=2)[0], make_pods(job)[1]
    old.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    assert gang.is_ready(jobspec.shape(job), [old, new], frozenset({new.name})) is False
    out = gang.schedule(
        [gang.GangJob(job, Group.ADMITTED)], [old, new], resources.capacity({"cpu": "4"})
    )
    assert out.placed == ()


def test_jobs_that_never_sync_are_not_admitted(make: Any) -> None:
    job = vcjob(make, "j", make.task("w", 1))
    job.status = make.vcjob({**make.job("x"), "status": {"state": {"phase": "Aborted"}}}).status
    out = gang.schedule([gang.GangJob(job, Group.PENDING)], [], resources.UNLIMITED)
    assert out.admitted == ()


def test_undeclared_gpu_never_fits(make: Any) -> None:
    job = vcjob(make, "g", make.task("w", 1, requests={"nvidia.com/gpu": 1}))
    out = gang.schedule([gang.GangJob(job, Group.PENDING)], [], resources.capacity({"cpu": "8"}))
    assert out.unschedulable == {
        "default/g": (
            "its minimum of 1 pod needs nvidia.com/gpu 1, but this machine has no nvidia.com/gpu"
        )
    }
    out = gang.schedule(
        [gang.GangJob(job, Group.PENDING)], [], resources.capacity({"nvidia.com/gpu": "2"})
    )
    assert out.admitted == ("default/g",)
