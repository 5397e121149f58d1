"""`podset.PodSet`, the index the runtime keeps of each job's pods: kept up to date pod by
pod, it answers as a set built from scratch does, and the lifecycle's survey through it
decides what the walk over every task index and every pod decided (the walk is spelled out
here as the reference) — without walking the pods."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vcflow.api import names
from vcflow.api.phases import Event, JobPhase, PodPhase
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import kubelet, lifecycle, pods, podset, rules
from vcflow.reconcile.vcjob import spec as jobspec
from vcflow.reconcile.vcjob.model import Group, JobContext, Request
from vcflow.reconcile.vcjob.status import Tally

from .podstates import pod_in

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STATES = ["unplaced", "placed", "running", "succeeded", "failed", "terminating"]


def job(replicas: tuple[int, ...], name: str = "j") -> VCJob:
    tasks = [
        {
            "name": f"t{i}",
            "replicas": n,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}},
        }
        for i, n in enumerate(replicas)
    ]
    data: dict[str, Any] = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default", "uid": "u"},
        "spec": {"minAvailable": 1, "tasks": tasks},
        "status": {"state": {"phase": JobPhase.RUNNING}},
    }
    return jobspec.with_defaults(VCJob.from_dict(data))


def a_pod(vcjob: VCJob, task: int, index: int, state: str, stale: bool = False) -> Pod:
    specs = jobspec.task_specs(vcjob)
    built = pods.build_pod(vcjob, specs[min(task, len(specs) - 1)], index)
    if task >= len(specs):  # a task no longer in the spec
        built.metadata.name = names.pod_name(vcjob.name, f"gone{task}", index)
        built.metadata.labels[pods.TASK_SPEC] = f"gone{task}"
        built.metadata.annotations[pods.TASK_SPEC] = f"gone{task}"
    found = pod_in(built, state, NOW)
    assert found is not None
    return pods.marked_out_of_sync(found) if stale else found


MOVES = st.lists(
    st.tuples(
        st.booleans(),  # put (else remove)
        st.integers(0, 2),  # task (2: not in a two-task spec)
        st.integers(0, 4),  # index (4: above the replicas)
        st.sampled_from(STATES),
        st.booleans(),  # marked out of sync
    ),
    max_size=40,
)


def reference_survey(ctx: JobContext) -> tuple[list[str], list[str], Any]:
    """The survey as a walk over every task index and every pod (what it was)."""
    tally, create, delete = Tally(), [], []
    expected: set[str] = set()
    for task in jobspec.task_specs(ctx.job):
        for index in range(task.replicas or 0):
            name = names.pod_name(ctx.job.name, task.name or "", index)
            expected.add(name)
            pod = ctx.pods.get(name)
            if pod is None:
                create.append(name)
                tally.pod(task.name or "", PodPhase.PENDING)
            elif pod.deleting:
                tally.terminating()
            else:
                if pods.is_out_of_sync(pod):
                    delete.append(name)
                tally.pod(task.name or "", pod.phase)
    for name, pod in ctx.pods.items():
        if name not in expected:
            tally.terminating()
            if not pod.deleting:
                delete.append(name)
    return create, delete, tally.counts()


@SETTINGS
@given(MOVES, st.tuples(st.integers(0, 4), st.integers(0, 4)))
def test_kept_up_to_date_it_answers_as_one_built_from_scratch(
    moves: list[tuple[bool, int, int, str, bool]], replicas: tuple[int, int]
) -> None:
    vcjob = job(replicas)
    kept = podset.PodSet()
    tasks = tuple((t.name, t.replicas) for t in jobspec.shape(vcjob).tasks)
    kept.layout(vcjob.name, tasks)  # kept from the start, as the runtime's is
    plain: dict[str, Pod] = {}
    for put, task, index, state, stale in moves:
        pod = a_pod(vcjob, task, index, state, stale)
        if put:
            kept.put(pod)
            plain[pod.name] = pod
        else:
            kept.remove(pod.name)
            plain.pop(pod.name, None)
    fresh = podset.PodSet(plain.values())
    assert list(kept) == list(plain)
    assert sorted(kept.live_counts()) == sorted(fresh.live_counts())
    assert kept.deleting == fresh.deleting
    assert [p.name for p in kept.unplaced()] == [p.name for p in fresh.unplaced()]
    assert [p.name for p in kept.killable()] == [p.name for p in fresh.killable()]
    for name, _ in tasks:
        assert kept.succeeded(name) == fresh.succeeded(name)
        assert kept.alive_restarts(name) == fresh.alive_restarts(name)
        assert kept.gang(name) == fresh.gang(name)
    mine, theirs = kept.layout(vcjob.name, tasks), fresh.layout(vcjob.name, tasks)
    assert mine.surplus() == theirs.surplus()
    assert mine.terminating == theirs.terminating
    for name, _ in tasks:
        assert mine.absent(name) == theirs.absent(name)
        assert dict(mine.phases(name)) == dict(theirs.phases(name))
        assert mine.up(name) == theirs.up(name)


@SETTINGS
@given(MOVES, st.tuples(st.integers(0, 4), st.integers(0, 4)))
def test_the_survey_decides_what_the_walk_over_every_pod_decided(
    moves: list[tuple[bool, int, int, str, bool]], replicas: tuple[int, int]
) -> None:
    vcjob = job(replicas)
    found: dict[str, Pod] = {}
    for put, task, index, state, stale in moves:
        pod = a_pod(vcjob, task, index, state, stale)
        if put:
            found.pop(pod.name, None)  # (a pod put again goes last)
            found[pod.name] = pod
        else:
            found.pop(pod.name, None)
    ctx = JobContext(vcjob, found, Group.ADMITTED)
    decision = lifecycle.sync_job(ctx, rules.running, NOW)
    create, delete, counts = reference_survey(ctx)
    assert [p.name for p in decision.create] == create
    assert list(decision.delete) == delete
    status = decision.status
    for counter in ("pending", "running", "succeeded", "failed", "terminating", "unknown"):
        assert (getattr(status, counter) or 0) == counts.of(counter)
    tasks = {t: dict(s.phase or {}) for t, s in (status.task_status_count or {}).items()}
    assert tasks == {t: dict(p) for t, p in counts.tasks.items()}


class Unwalkable(podset.PodSet):
    """A PodSet that fails the test when anything walks its pods."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise AssertionError("the job's pods were walked")


@pytest.mark.optimisation
def test_a_request_costs_the_pods_it_touches_not_the_jobs_pods() -> None:
    """Handling a pod's change (sync, then the kill of a finished job) reads the index's
    counts: a 2,000-pod job's request walks none of its pods (it did, every request: the
    survey of pod names was the run's cost, growing with the square of the pods)."""
    vcjob = job((2000,))
    every = Unwalkable()
    for index in range(2000):
        every.put(a_pod(vcjob, 0, index, "running"))
    ran = pods.index_of(every["j-t0-7"])
    assert ran == 7
    request = Request(Event.POD_RUNNING, task="t0", pod="j-t0-7", job_uid="u")
    decision = lifecycle.handle(JobContext(vcjob, every, Group.ADMITTED), request, NOW)
    assert (decision.status.running, decision.create, decision.delete) == (2000, (), ())
    done = vcjob.model_copy(update={"status": decision.status.model_copy()})
    assert done.status is not None and done.status.state is not None
    done.status.state.phase = JobPhase.COMPLETED
    killed = lifecycle.handle(JobContext(done, every, Group.ADMITTED), request, NOW)
    assert len(killed.delete) == 2000  # (a Completed job's running pods: soft KillJob)
    exited = kubelet.exit_container(every["j-t0-7"], 0, NOW)
    every.put(exited)
    again = lifecycle.handle(JobContext(done, every, Group.ADMITTED), request, NOW)
    assert len(again.delete) == 1999 and "j-t0-7" not in again.delete
