"""Incremental scheduler passes (`gang.needs_pass`, `schedule(..., used=...)`): the runtime
hands a pass only the jobs that can still change (waiting for admission, or admitted with
pods to place or a gang not complete), their pods, and `used` — what every placed pod that
holds resources requests. That pass must decide exactly what a pass over every job and
every pod decides. And `resources.subtract` takes out exactly what `resources.add` put in
(the runtime keeps `used` by adding and subtracting as pods come and go)."""

from __future__ import annotations

from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vcflow.api import names
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import gang, kubelet, pods, resources
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.reconcile.vcjob.model import Group

from .podstates import pod_in

NOW = datetime(2026, 1, 1, tzinfo=UTC)
F = Fraction
PRIORITIES = {"high": 10, "low": -5}
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POD_STATES = ["missing", "unplaced", "placed", "running", "succeeded", "failed", "terminating"]
JOB_PHASES = ["", "Pending", "Running", "Restarting", "Completed", "Aborted"]

Scene = tuple[list[gang.GangJob], list[Pod], resources.Capacity]


# --- builders (as in test_gang.py / test_runtime_properties.py) ---------------------------


def _vcjob(name: str, tasks: list[dict[str, Any]], phase: str = "", **spec: Any) -> VCJob:
    raw: dict[str, Any] = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"tasks": tasks, **spec},
    }
    if phase:
        raw["status"] = {"state": {"phase": phase}}
    return jobspec.with_defaults(VCJob.from_dict(raw))


def _task(name: str, replicas: int, cpu: str, **extra: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
    return {
        "name": name,
        "replicas": replicas,
        "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
        **extra,
    }


def _pod_in(pod: Pod, state: str) -> Pod | None:
    return pod_in(pod, state, NOW)


def _job_pods(job: VCJob, states: list[str]) -> list[Pod]:
    """The job's pods in task then index order, the k-th in `states[k]` (missing: none)."""
    out: list[Pod] = []
    k = 0
    for task in jobspec.task_specs(job):
        for index in range(task.replicas or 0):
            pod = _pod_in(pods.build_pod(job, task, index), states[k % len(states)])
            k += 1
            if pod is not None:
                out.append(pod)
    return out


def _holds(pod: Pod) -> bool:
    """Written out here rather than taken from `gang`: placed, and Pending, Running or
    Terminating (what the runtime keeps in its `live` set)."""
    return pod.placed and (pod.deleting or pod.phase in kubelet.ALIVE)


def _used(every: list[Pod]) -> dict[str, Fraction]:
    return resources.total(resources.pod_request(p.spec) for p in every if _holds(p))


def _job_key(pod: Pod) -> names.ObjectKey:
    return names.object_key(pod.namespace, pods.job_of(pod))


def _mine(job: VCJob, every: list[Pod]) -> list[Pod]:
    return [p for p in every if _job_key(p) == job.key]


def _incremental(
    gangs: list[gang.GangJob], every: list[Pod], cap: resources.Capacity
) -> tuple[list[gang.GangJob], gang.Placement]:
    needy = [g for g in gangs if gang.needs_pass(g, _mine(g.job, every))]
    their = [p for g in needy for p in _mine(g.job, every)]
    # (the shell keeps what each queue's placed pods hold as it keeps `used`)
    by_queue = gang.Policy(queue_used={"default": _used(every)})
    return needy, gang.schedule(needy, their, cap, PRIORITIES, used=_used(every), policy=by_queue)


# --- the property ---------------------------------------------------------------------------


#: What a job is doing: (PodGroup, phases, pod states) to draw from. Most roles are ones a
#: runtime sees (waiting for admission, just admitted with pods to place, running its gang,
#: a gang broken — a pod failed or gone and no replacement yet, so it still reserves);
#: "anything" mixes every group, phase and pod state, real or not.
ROLES: dict[str, tuple[list[Group], list[str], list[str]]] = {
    "waiting": ([Group.PENDING], ["", "Pending", "Restarting"], ["missing"]),
    "fresh": ([Group.ADMITTED], ["Pending", "Running"], ["unplaced", "unplaced", "running"]),
    "running": ([Group.ADMITTED], ["Running"], ["running", "succeeded", "placed"]),
    "broken": ([Group.ADMITTED], ["Running", "Restarting"], ["running", "failed", "missing"]),
    "ended": ([Group.ADMITTED, Group.NONE], ["Completed", "Aborted"], POD_STATES),
    "anything": ([Group.PENDING, Group.ADMITTED, Group.NONE], JOB_PHASES, POD_STATES),
}


@st.composite
def scenes(draw: st.DrawFn) -> Scene:
    gangs: list[gang.GangJob] = []
    every: list[Pod] = []
    for j in range(draw(st.integers(1, 6))):
        tasks = []
        for i in range(draw(st.integers(1, 2))):
            replicas = draw(st.integers(1, 3))
            extra: dict[str, Any] = {}
            if draw(st.booleans()):
                extra["minAvailable"] = draw(st.integers(0, replicas))
            task = _task(f"t{i}", replicas, draw(st.sampled_from(["0", "500m", "1", "2", "3"])))
            if draw(st.integers(0, 3)) == 0:  # a task template's class orders min_resources
                task["template"]["spec"]["priorityClassName"] = "high"
            tasks.append({**task, **extra})
        spec: dict[str, Any] = {}
        if draw(st.booleans()):
            spec["minAvailable"] = draw(st.integers(1, sum(t["replicas"] for t in tasks)))
        if draw(st.booleans()):
            spec["priorityClassName"] = draw(st.sampled_from(["high", "low", "unknown"]))
        groups, phases, states = ROLES[draw(st.sampled_from(sorted(ROLES)))]
        job = _vcjob(f"j{j}", tasks, draw(st.sampled_from(phases)), **spec)
        total = sum(t["replicas"] for t in tasks)
        every += _job_pods(
            job, draw(st.lists(st.sampled_from(states), min_size=total, max_size=total))
        )
        if draw(st.integers(0, 5)) > 0:  # else: a job gone whose pods still hold resources
            gangs.append(gang.GangJob(job, draw(st.sampled_from(groups))))
    if draw(st.integers(0, 4)) == 0:
        return gangs, every, resources.UNLIMITED
    # mostly a machine a little larger than what its placed pods hold: tight enough that
    # reserves and holds decide admissions; sometimes one already overcommitted
    held = _used(every).get("cpu", F(0))
    millis = max(0, int(held * 1000) + 500 * draw(st.integers(-2, 8)))
    return gangs, every, resources.capacity({"cpu": f"{millis}m"})


@SETTINGS
@given(scene=scenes())
def test_a_pass_over_the_needy_jobs_decides_what_a_full_pass_does(scene: Scene) -> None:
    gangs, every, cap = scene
    full = gang.schedule(gangs, every, cap, PRIORITIES)
    needy, part = _incremental(gangs, every, cap)
    passed = {g.job.key for g in needy}
    assert part.admitted == full.admitted
    assert part.placed == full.placed
    assert part.unschedulable == {k: v for k, v in full.unschedulable.items() if k in passed}
    # every job waiting for admission is needy, so nothing the full pass reports is lost
    assert part.unschedulable == full.unschedulable
    # and a job left out could not have been decided on
    left_out = {g.job.key for g in gangs} - passed
    assert not left_out & set(full.admitted)
    by_key = {p.key: p for p in every}
    placed_jobs = {_job_key(by_key[k]) for k in full.placed}
    assert not placed_jobs & left_out


@settings(SETTINGS, max_examples=150)
@given(scene=scenes())
def test_needy_is_what_a_pass_would_look_at(scene: Scene) -> None:
    """needs_pass, spelled out: the job syncs with a PodGroup, and it waits for admission
    or is admitted with an unplaced Pending pod or a gang not complete."""
    gangs, every, _ = scene
    for item in gangs:
        mine = _mine(item.job, every)
        syncing = item.group is not Group.NONE and item.job.phase in gang.SYNCING
        unplaced = any(not p.placed and not p.deleting and p.phase == "Pending" for p in mine)
        ready = gang.is_ready(jobspec.shape(item.job), mine)
        expected = syncing and (item.group is Group.PENDING or unplaced or not ready)
        assert gang.needs_pass(item, mine) is expected


# --- examples -------------------------------------------------------------------------------


def test_which_jobs_are_needy() -> None:
    job = _vcjob("run", [_task("w", 2, "1")], "Running")
    running = _job_pods(job, ["running"])
    assert gang.needs_pass(gang.GangJob(job, Group.ADMITTED), running) is False
    # the same job waiting for its PodGroup
    waiting = _vcjob("wait", [_task("w", 2, "1")], "Pending")
    assert gang.needs_pass(gang.GangJob(waiting, Group.PENDING), []) is True
    # admitted with one pod not placed yet
    half = _job_pods(job, ["running", "unplaced"])
    assert gang.needs_pass(gang.GangJob(job, Group.ADMITTED), half) is True
    # admitted, gang not complete although nothing waits to be placed (a pod failed)
    broken = _job_pods(job, ["running", "failed"])
    assert gang.needs_pass(gang.GangJob(job, Group.ADMITTED), broken) is True
    # a job that does not sync any more is never looked at
    done = _vcjob("done", [_task("w", 2, "1")], "Completed")
    assert gang.needs_pass(gang.GangJob(done, Group.PENDING), []) is False
    assert gang.needs_pass(gang.GangJob(job, Group.NONE), half) is False


def test_running_jobs_left_out_still_hold_their_resources() -> None:
    """A running job is not passed, but what its pods hold (`used`) keeps a waiting job out:
    a pass over the needy jobs without `used` would overcommit the machine."""
    busy = _vcjob("busy", [_task("w", 3, "1")], "Running")
    busy_pods = _job_pods(busy, ["running"])
    waiting = _vcjob("wait", [_task("w", 2, "1")], "Pending")
    gangs = [gang.GangJob(busy, Group.ADMITTED), gang.GangJob(waiting, Group.PENDING)]
    cap = resources.capacity({"cpu": "4"})
    needy, part = _incremental(gangs, busy_pods, cap)
    assert [g.job.name for g in needy] == ["wait"]
    assert part.admitted == gang.schedule(gangs, busy_pods, cap).admitted == ()
    assert part.unschedulable == {"default/wait": ""}
    assert gang.schedule(needy, [], cap).admitted == ("default/wait",)  # without `used`
    # once one of busy's pods has ended, it fits in both
    freed = _job_pods(busy, ["running", "succeeded", "running"])
    needy, part = _incremental(gangs, freed, cap)
    assert part.admitted == gang.schedule(gangs, freed, cap).admitted == ("default/wait",)


def test_a_broken_gang_left_out_would_lose_its_reserve() -> None:
    """An admitted job whose gang is not complete (a pod failed, its replacement not created
    yet) still reserves what it misses; it is needy, so the pass keeps the reserve."""
    broken = _vcjob("broken", [_task("w", 2, "1")], "Running")
    broken_pods = _job_pods(broken, ["running", "failed"])
    waiting = _vcjob("wait", [_task("w", 1, "3")], "Pending")
    gangs = [gang.GangJob(broken, Group.ADMITTED), gang.GangJob(waiting, Group.PENDING)]
    cap = resources.capacity({"cpu": "4"})  # 1 used, 1 reserved: 2 left, wait needs 3
    needy, part = _incremental(gangs, broken_pods, cap)
    assert [g.job.name for g in needy] == ["broken", "wait"]
    assert part.admitted == gang.schedule(gangs, broken_pods, cap).admitted == ()
    without = gang.schedule(gangs[1:], [], cap, used=_used(broken_pods))
    assert without.admitted == ("default/wait",)  # what leaving it out would decide


# --- resources.subtract ---------------------------------------------------------------------

NAMES = st.sampled_from(["cpu", "memory", "pods", "nvidia.com/gpu"])
AMOUNTS = st.fractions(min_value=0, max_value=1000, max_denominator=1024)
PARTS = st.dictionaries(NAMES, AMOUNTS, max_size=4)


@settings(max_examples=100, deadline=None)
@given(have=PARTS, part=PARTS)
def test_subtract_undoes_add(have: dict[str, Fraction], part: dict[str, Fraction]) -> None:
    back = resources.subtract(resources.add(have, part), part)
    assert set(back) == set(have) | set(part)
    assert {n: a for n, a in back.items() if n in have} == have
    assert all(back[n] == 0 for n in set(part) - set(have))
    assert resources.subtract(have, {}) == have
    assert resources.subtract(have, have) == dict.fromkeys(have, F(0))


@settings(max_examples=100, deadline=None)
@given(
    parts=st.lists(PARTS, max_size=8),
    order=st.randoms(use_true_random=False),
)
def test_used_kept_by_add_and_subtract_is_the_sum_of_what_is_held(
    parts: list[dict[str, Fraction]], order: Any
) -> None:
    """As the runtime keeps `used`: add each pod's request when it starts holding, subtract
    it when it stops, in any order; what is left equals the total of the pods still held."""
    used: dict[str, Fraction] = {}
    for part in parts:
        used = resources.add(used, part)
    gone = [i for i in range(len(parts)) if order.random() < 0.5]
    order.shuffle(gone)
    for i in gone:
        used = resources.subtract(used, parts[i])
    kept = resources.total(p for i, p in enumerate(parts) if i not in gone)
    assert {n: a for n, a in used.items() if a} == {n: a for n, a in kept.items() if a}
    assert all(a == kept.get(n, 0) for n, a in used.items())
