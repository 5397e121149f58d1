"""Property: the incremental FlowIndex and a full `plan()` agree at every step.

Random DAGs (each entry's targets are drawn among the earlier entries, so the graph is
acyclic; strategy `all` or `any`) are driven as the controller drives a flow: each vcjob the
index decides to create is marked created and observed `Pending`; then, one at a time, a
created job moves on (Pending → Running or Completed, Running → Completed) in a random order,
the index observes it and decides. Before each incremental decision, a full plan is built
from scratch from the same state — the flow with the status the incremental index wrote last,
and the same vcjobs — and both must give the same jobs to create, the same phase and the same
status. Every vcjob is created exactly once, only after its targets completed (all of them,
or one for `any`), and the flow ends `Succeed`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vcflow.api import clock
from vcflow.api.jobflow import JobFlow, JobFlowStatus
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.phases import FlowPhase
from vcflow.api.vcjob import JobState, VCJob, VCJobStatus
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import jobs as jobbuild

T0 = datetime(2026, 1, 1, tzinfo=UTC)
PROPERTY = settings(max_examples=100, deadline=None)


@dataclass(frozen=True)
class Spec:
    """One random entry: its targets (indexes of earlier entries) and strategy."""

    targets: tuple[int, ...]
    any_of: bool


@st.composite
def dags(draw: st.DrawFn) -> list[Spec]:
    size = draw(st.integers(min_value=1, max_value=30))
    specs = []
    for i in range(size):
        targets = draw(st.lists(st.integers(0, i - 1), max_size=4, unique=True)) if i else []
        specs.append(Spec(tuple(targets), draw(st.booleans())))
    return specs


def entry_name(i: int) -> str:
    return f"e{i}"


def make_flow(specs: list[Spec]) -> JobFlow:
    entries: list[dict[str, Any]] = []
    for i, spec in enumerate(specs):
        item: dict[str, Any] = {"name": entry_name(i)}
        if spec.targets:
            item["dependsOn"] = {
                "targets": [entry_name(t) for t in spec.targets],
                "strategy": "any" if spec.any_of else "all",
            }
        entries.append(item)
    return JobFlow.from_dict(
        {
            "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
            "spec": {"flows": entries, "jobRetainPolicy": "retain"},
        }
    )


def make_templates(specs: list[Spec]) -> dict[str, JobTemplate]:
    spec = {
        "minAvailable": 1,
        "tasks": [{"name": "main", "replicas": 1, "template": {"spec": {"containers": []}}}],
    }
    return {
        entry_name(i): JobTemplate.from_dict(
            {"metadata": {"name": entry_name(i), "namespace": "default"}, "spec": spec}
        )
        for i in range(len(specs))
    }


def with_phase(job: VCJob, phase: str, created: datetime | None = None) -> VCJob:
    out = job.model_copy(deep=True)
    if created is not None:
        out.metadata.creation_timestamp = clock.rfc3339(created)
    out.status = VCJobStatus(state=JobState(phase=phase))
    return out


def with_status(flow: JobFlow, status: JobFlowStatus | None) -> JobFlow:
    out = flow.model_copy(deep=True)
    out.status = status.model_copy(deep=True) if status is not None else None
    return out


@dataclass
class World:
    """The store (vcjobs by name) and what the incremental controller has done."""

    specs: list[Spec]
    flow: JobFlow
    templates: dict[str, JobTemplate]
    now: datetime = T0
    jobs: dict[str, VCJob] = field(default_factory=dict)
    creations: Counter[str] = field(default_factory=Counter)
    written: JobFlowStatus | None = None

    def phase_of(self, i: int) -> str:
        job = self.jobs.get(f"p-{entry_name(i)}")
        return job.phase if job is not None else ""

    def check_ready(self, name: str) -> None:
        """A vcjob is created only after its targets completed."""
        i = int(name.removeprefix("p-e"))
        spec = self.specs[i]
        done = [self.phase_of(t) == "Completed" for t in spec.targets]
        if spec.targets:
            assert any(done) if spec.any_of else all(done), (name, spec)

    def full_plan(self) -> tuple[reconcile.FlowIndex, reconcile.Plan]:
        """A reconcile from scratch: the flow with the last written status, the same jobs."""
        flow = with_status(self.flow, self.written)
        return reconcile.plan(flow, self.templates, list(self.jobs.values()), now=self.now)

    def sync(
        self,
        index: reconcile.FlowIndex,
        plan: reconcile.Plan,
        full: tuple[reconcile.FlowIndex, reconcile.Plan],
    ) -> list[VCJob]:
        """Apply a plan as the controller does: create, mark, write the status (which must
        be the full plan's). Returns the vcjobs created, as the store holds them (Pending)."""
        agree(full, (index, plan), set(self.jobs))
        assert plan.delete == ()
        for job in plan.create:
            self.check_ready(job.name)
            self.creations[job.name] += 1
            index.mark_created(job.name)
        full_index, full_plan = full
        for job in full_plan.create:
            full_index.mark_created(job.name)
        self.written = index.status()
        assert self.written.to_dict() == full_index.status().to_dict()
        return [with_phase(job, "Pending", created=self.now) for job in plan.create]

    def change(self, index: reconcile.FlowIndex, jobs: list[VCJob]) -> list[VCJob]:
        """These vcjobs changed in the store: the index observes them, a full plan is built
        from the same state, the index decides, and the flow is synced."""
        if not jobs:
            return []
        for job in jobs:
            self.jobs[job.name] = job
            index.observe(job, self.now)
        full = self.full_plan()
        return self.sync(index, index.decide(self.templates), full)


def agree(
    full: tuple[reconcile.FlowIndex, reconcile.Plan],
    incremental: tuple[reconcile.FlowIndex, reconcile.Plan],
    existing: set[str],
) -> None:
    """Same creations (none of an existing job), same phase, same deletions."""
    _, full_plan = full
    _, plan = incremental
    want = sorted(j.name for j in full_plan.create)
    have = sorted(j.name for j in plan.create)
    assert not existing & set(want), want
    assert have == want
    assert plan.phase == full_plan.phase
    assert plan.delete == full_plan.delete


@PROPERTY
@given(specs=dags(), data=st.data())
def test_incremental_index_agrees_with_full_plan(specs: list[Spec], data: st.DataObject) -> None:
    world = World(specs, make_flow(specs), make_templates(specs))
    full = world.full_plan()  # first sight: the index the controller keeps
    index, plan = reconcile.plan(world.flow, world.templates, [], now=world.now)
    news = world.sync(index, plan, full)
    while True:
        while news:  # the creations are seen, Pending (they complete nothing)
            news = world.change(index, news)
        moving = sorted(n for n, j in world.jobs.items() if j.phase != "Completed")
        if not moving:
            break
        name = data.draw(st.sampled_from(moving), label="job")
        nxt = "Completed"
        if world.jobs[name].phase == "Pending":
            nxt = data.draw(st.sampled_from(["Running", "Completed"]), label="next")
        world.now += timedelta(seconds=data.draw(st.integers(0, 90), label="dt"))
        news = world.change(index, [with_phase(world.jobs[name], nxt)])

    assert set(world.creations) == {f"p-{entry_name(i)}" for i in range(len(specs))}
    assert set(world.creations.values()) == {1}
    assert index.phase == FlowPhase.SUCCEED
    assert world.written is not None and world.written.phase == "Succeed"
    assert sorted(world.written.completed_jobs or []) == sorted(world.creations)


@PROPERTY
@given(specs=dags(), data=st.data())
def test_full_plan_is_idempotent(specs: list[Spec], data: st.DataObject) -> None:
    """Planning twice from the same state (the second time from the status the first wrote,
    at a later time) decides the same and writes the same status."""
    flow = make_flow(specs)
    templates = make_templates(specs)
    phases = ["Pending", "Running", "Completed", "Completing", "Aborted", ""]
    jobs = []
    for i in range(len(specs)):
        phase = data.draw(st.sampled_from([None, *phases]), label=entry_name(i))
        if phase is not None:
            job = jobbuild.build_job(flow, flow.flows[i], templates[entry_name(i)])
            jobs.append(with_phase(job, phase, created=T0))
    index, plan = reconcile.plan(flow, templates, jobs, now=T0)
    for job in plan.create:
        index.mark_created(job.name)
    status = index.status()
    again, plan2 = reconcile.plan(
        with_status(flow, status), templates, jobs, now=T0 + timedelta(hours=1)
    )
    assert sorted(j.name for j in plan2.create) == sorted(j.name for j in plan.create)
    assert plan2.phase == plan.phase
    for job in plan2.create:
        again.mark_created(job.name)
    assert again.status().to_dict() == status.to_dict()
