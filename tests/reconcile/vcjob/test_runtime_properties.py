"""Properties of the vcjob runtime over random jobs and random pod event sequences, driven
through the conformance harness's world (the real runtime shell with a simulated kubelet):

- a job never has more live pods than replicas (per task and in total);
- `retryCount` counts exactly the entries into Restarting (restart actions in
  Pending/Running, resumes), never exceeds maxRetry, and reaching it means Failed;
- once every pod has ended, the job is in an end phase (Completed, Failed, Terminated, or
  Aborted when suspended);
- the scheduler never places a partial gang and never overcommits the machine.
"""

from __future__ import annotations

from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from vcflow.admission.jobtemplate import validate_vcjob
from vcflow.admission.review import errors_only
from vcflow.api.phases import JobPhase, PodPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.conformance.runtime_world import RuntimeWorld
from vcflow.reconcile.vcjob import gang, kubelet, pods, resources
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.reconcile.vcjob.model import Group

from .podstates import pod_in

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
END_PHASES = {JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.TERMINATED, JobPhase.ABORTED}
EVENTS = ["PodFailed", "PodEvicted", "TaskCompleted", "TaskFailed"]
ACTIONS = ["RestartJob", "RestartTask", "RestartPod", "AbortJob", "TerminateJob", "CompleteJob"]


@st.composite
def policy_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A valid policy list: distinct events, distinct exit codes, `*` alone."""
    if draw(st.booleans()) and draw(st.booleans()):
        return [{"event": "*", "action": draw(st.sampled_from(ACTIONS))}]
    events = draw(st.lists(st.sampled_from(EVENTS), unique=True, max_size=2))
    codes = draw(st.lists(st.sampled_from([1, 3]), unique=True, max_size=1))
    items: list[dict[str, Any]] = [
        {"event": e, "action": draw(st.sampled_from(ACTIONS))} for e in events
    ]
    items += [{"exitCode": c, "action": draw(st.sampled_from(ACTIONS))} for c in codes]
    return draw(st.permutations(items)) if items else []


@st.composite
def jobs(draw: st.DrawFn) -> dict[str, Any]:
    tasks = []
    for i in range(draw(st.integers(1, 3))):
        replicas = draw(st.integers(1 if i == 0 else 0, 3))
        task: dict[str, Any] = {
            "name": f"t{i}",
            "replicas": replicas,
            "template": {
                "spec": {
                    "restartPolicy": draw(st.sampled_from(["Never", "OnFailure"])),
                    "containers": [{"name": "main", "image": "busybox"}],
                }
            },
        }
        if draw(st.booleans()):
            task["minAvailable"] = draw(st.integers(0, replicas))
        if draw(st.booleans()):
            task["policies"] = draw(policy_lists())
        if draw(st.booleans()):
            task["maxRetry"] = draw(st.integers(1, 3))
        tasks.append(task)
    total = sum(t["replicas"] for t in tasks)
    spec: dict[str, Any] = {"tasks": tasks, "policies": draw(policy_lists())}
    if draw(st.booleans()):
        spec["minAvailable"] = draw(st.integers(1, total))
    if draw(st.booleans()):
        spec["maxRetry"] = draw(st.integers(1, 3))
    if draw(st.booleans()):
        spec["minSuccess"] = draw(st.integers(1, total))
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "p"},
        "spec": spec,
    }


MOVES = st.one_of(
    st.tuples(st.just("run"), st.integers(0, 8)),
    st.tuples(st.just("exit"), st.integers(0, 8), st.sampled_from([0, 1, 3])),
    st.tuples(st.just("evict"), st.integers(0, 8)),
    st.tuples(st.just("command"), st.sampled_from(["AbortJob", "ResumeJob", "TerminateJob"])),
    st.tuples(st.just("gone")),
    st.tuples(st.just("wait"), st.integers(1, 120)),
)


def admitted(data: dict[str, Any]) -> bool:
    return not errors_only(validate_vcjob(VCJob.from_dict(data)))


def play(world: RuntimeWorld, move: tuple[Any, ...]) -> None:
    """Apply one random move to whatever pod it can apply to; skip it otherwise."""
    every = sorted(world.pods().values(), key=lambda p: p.name)
    kind = move[0]
    if kind == "run":
        ready = [p for p in every if p.placed and not p.deleting and p.phase == PodPhase.PENDING]
        if ready:
            world.pod_running(ready[move[1] % len(ready)].name)
    elif kind == "exit":
        alive = [p for p in every if p.placed and not p.deleting and p.phase in kubelet.ALIVE]
        if alive:
            world.pod_exit(alive[move[1] % len(alive)].name, move[2])
    elif kind == "evict":
        if every:
            world.pod_evicted(every[move[1] % len(every)].name)
    elif kind == "command":
        world.command("p", move[1])
    elif kind == "gone":
        if world.hold_deletions:
            world.pods_gone(None)
    else:
        world.wait(move[1])
        return
    world.settle()


def check_invariants(world: RuntimeWorld, job: VCJob) -> None:
    now = world.job("p")
    assert now is not None
    shape = jobspec.shape(job)
    live = [p for p in world.pods().values() if not p.deleting and p.phase in kubelet.ALIVE]
    for task in shape.tasks:
        assert sum(pods.task_of(p) == task.name for p in live) <= task.replicas
    assert len(live) <= shape.total_replicas
    status = now.status
    retry = (status.retry_count if status else None) or 0
    assert retry == world.restarts_entered.get("p", 0)
    assert retry <= shape.max_retry
    if retry >= shape.max_retry:
        assert now.phase == JobPhase.FAILED


def finish(world: RuntimeWorld, code: int) -> None:
    """Let pods end until nothing moves: start what is placed, then let its container exit
    with `code` (0 under OnFailure, which would restart it otherwise)."""
    for _ in range(30):
        world.settle()
        every = world.pods().values()
        waiting = [p for p in every if p.placed and _startable(p)]
        running = [p for p in every if not p.deleting and p.phase == "Running"]
        held = world.hold_deletions and any(p.deleting for p in every)
        if not (waiting or running or held):
            return
        for pod in waiting:
            world.pod_running(pod.name)
        for pod in running:
            world.pod_exit(pod.name, code if kubelet.restart_policy(pod) == "Never" else 0)
        if held:
            world.pods_gone(None)
    raise AssertionError("pods never settled")


def _startable(pod: Pod) -> bool:
    return not pod.deleting and pod.phase == PodPhase.PENDING


def check_end(world: RuntimeWorld) -> None:
    """Every pod ended → an end phase. Pods left waiting are only those the gang rule can
    never place: Failed pods do not count towards it (reference §10.4), so a replacement
    next to a Failed pod may wait forever, as in Volcano."""
    job = world.job("p")
    assert job is not None
    everyone = list(world.pods().values())
    left = [p for p in everyone if p.deleting or p.phase in kubelet.ALIVE]
    if not left:
        assert job.phase in END_PHASES
        return
    assert all(not p.placed and not p.deleting for p in left)
    shape = jobspec.shape(job)
    assert not gang.is_ready(shape, everyone, frozenset(p.name for p in left))


@SETTINGS
@given(
    data=jobs(),
    moves=st.lists(MOVES, max_size=40),
    hold=st.booleans(),
    code=st.sampled_from([0, 1, 3]),
)
def test_lifecycle_invariants(
    data: dict[str, Any], moves: list[tuple[Any, ...]], hold: bool, code: int
) -> None:
    assume(admitted(data))
    world = RuntimeWorld(hold_deletions=hold)
    world.create_job(data)
    job = world.job("p")
    assert job is not None
    check_invariants(world, job)
    for move in moves:
        play(world, move)
        check_invariants(world, job)
    finish(world, code)
    check_invariants(world, job)
    check_end(world)


# The scheduler alone ----------------------------------------------------------------------

POD_STATES = st.sampled_from(
    ["missing", "unplaced", "placed", "running", "succeeded", "failed", "terminating"]
)


@st.composite
def scenes(draw: st.DrawFn) -> tuple[list[gang.GangJob], list[Pod], resources.Capacity]:
    gangs: list[gang.GangJob] = []
    every: list[Pod] = []
    for j in range(draw(st.integers(1, 4))):
        tasks = [
            {
                "name": f"t{i}",
                "replicas": (n := draw(st.integers(1, 3))),
                "minAvailable": draw(st.integers(0, n)),
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "main",
                                "resources": {"requests": {"cpu": str(draw(st.integers(0, 3)))}},
                            }
                        ],
                    }
                },
            }
            for i in range(draw(st.integers(1, 2)))
        ]
        total = sum(t["replicas"] for t in tasks)
        spec: dict[str, Any] = {"tasks": tasks}
        if draw(st.booleans()):
            spec["minAvailable"] = draw(st.integers(1, total))
        raw = {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": f"j{j}"},
            "spec": spec,
        }
        job = jobspec.with_defaults(VCJob.from_dict(raw))
        group = draw(st.sampled_from([Group.PENDING, Group.ADMITTED]))
        gangs.append(gang.GangJob(job, group))
        if group is Group.ADMITTED:
            every += [p for p in _pods(job, draw) if p is not None]
    limited = draw(st.booleans())
    cap = resources.capacity({"cpu": str(draw(st.integers(0, 10)))} if limited else None)
    return gangs, every, cap


def _pods(job: VCJob, draw: st.DrawFn) -> list[Pod | None]:
    out: list[Pod | None] = []
    for task in jobspec.task_specs(job):
        for k in range(task.replicas or 0):
            out.append(_pod_in(pods.build_pod(job, task, k), draw(POD_STATES)))
    return out


def _pod_in(pod: Pod, state: str) -> Pod | None:
    return pod_in(pod, state, NOW)


def _cpu(every: list[Pod]) -> Fraction:
    return sum((resources.pod_request(p.spec).get("cpu", Fraction(0)) for p in every), Fraction(0))


@SETTINGS
@given(scene=scenes())
def test_no_partial_gang_and_no_overcommit(
    scene: tuple[list[gang.GangJob], list[Pod], resources.Capacity],
) -> None:
    gangs, every, cap = scene
    out = gang.schedule(gangs, every, cap)
    placed = {key.rsplit("/", 1)[-1] for key in out.placed}
    by_name = {p.name: p for p in every}
    holding = [p for p in every if p.placed and (p.deleting or p.phase in kubelet.ALIVE)]
    new = [by_name[n] for n in placed]
    limit = cap.limit("cpu")
    if limit is not None:  # what is placed now fits in what was left (pods needing 0 always do)
        assert _cpu(new) <= max(Fraction(0), limit - _cpu(holding))
    for item in gangs:
        mine = [p for p in every if pods.job_of(p) == item.job.name]
        chosen = frozenset(p.name for p in mine if p.name in placed)
        if not chosen:
            continue
        assert item.group is Group.ADMITTED
        assert all(
            not p.placed and not p.deleting and p.phase == "Pending"
            for p in mine
            if p.name in chosen
        )
        assert gang.is_ready(jobspec.shape(item.job), mine, chosen)
    for key in out.admitted:
        assert any(g.job.key == key and g.group is Group.PENDING for g in gangs)
