"""Property: with retries, outcomes and skips, the incremental FlowIndex and a full `plan()`
still agree at every step, and no attempt is ever created twice.

Random DAGs whose entries each get an `outcome` (Completed, Failed, Finished), a strategy
and a retry policy (0–2 retries, Constant 10 s backoff, OnFailure or Always) are driven as
the controller drives a flow: vcjobs the index creates appear Pending, a random live one
moves on (Running, Completed or Failed), or time passes and the flow's timers fire; the
failed attempts a due retry replaces are deleted. Before each decision a full plan is built
from the status the index wrote last and the same vcjobs; both must decide the same and
write the same status. The run ends when the flow is Succeed or Failed with nothing live.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vcflow.api.jobflow import JobFlow, JobFlowStatus
from vcflow.api.jobtemplate import JobTemplate
from vcflow.api.phases import FlowPhase
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import flow as reconcile
from vcflow.reconcile import retry

from .test_properties import T0, make_templates, with_phase

PROPERTY = settings(max_examples=150, deadline=None)


@dataclass(frozen=True)
class Spec:
    targets: tuple[int, ...]
    any_of: bool
    outcome: str
    retries: int
    always: bool


@st.composite
def flows(draw: st.DrawFn) -> list[Spec]:
    size = draw(st.integers(min_value=1, max_value=10))
    specs = []
    for i in range(size):
        targets = draw(st.lists(st.integers(0, i - 1), max_size=3, unique=True)) if i else []
        outcome = draw(st.sampled_from(["Completed", "Completed", "Failed", "Finished"]))
        specs.append(
            Spec(
                tuple(targets),
                draw(st.booleans()),
                outcome if targets else "Completed",
                draw(st.integers(0, 2)),
                draw(st.booleans()),
            )
        )
    return specs


def make_flow(specs: list[Spec]) -> JobFlow:
    entries: list[dict[str, Any]] = []
    for i, spec in enumerate(specs):
        item: dict[str, Any] = {"name": f"e{i}"}
        if spec.targets:
            item["dependsOn"] = {
                "targets": [f"e{t}" for t in spec.targets],
                "strategy": "any" if spec.any_of else "all",
                "outcome": spec.outcome,
            }
        if spec.retries:
            item["retryPolicy"] = {
                "maxRetries": spec.retries,
                "policy": "Always" if spec.always else "OnFailure",
                "backoff": {"type": "Constant", "baseDelay": "10s"},
            }
        entries.append(item)
    return JobFlow.from_dict(
        {
            "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
            "spec": {"flows": entries},
        }
    )


@dataclass
class World:
    flow: JobFlow
    templates: dict[str, JobTemplate]
    now: datetime = T0
    jobs: dict[str, VCJob] = field(default_factory=dict)
    written: JobFlowStatus | None = None
    attempts: Counter[tuple[str, int]] = field(default_factory=Counter)

    def full(self) -> tuple[reconcile.FlowIndex, reconcile.Plan]:
        flow = JobFlow.from_dict(self.flow.to_dict())
        flow.status = self.written
        return reconcile.plan(flow, self.templates, list(self.jobs.values()), now=self.now)

    def decide(self, index: reconcile.FlowIndex) -> reconcile.Plan:
        full_index, full_plan = self.full()
        plan = index.decide(self.templates, now=self.now)
        assert sorted(j.name for j in plan.create) == sorted(j.name for j in full_plan.create)
        assert plan.replace == full_plan.replace
        assert plan.phase == full_plan.phase
        for job in plan.create:
            attempt = retry.attempt_of(job.metadata.annotations)
            self.attempts[(job.name, attempt)] += 1
            index.mark_created(job.name)
            full_index.mark_created(job.name)
            self.jobs[job.name] = with_phase(job, "Pending", created=self.now)
        self.written = index.status()
        assert self.written.to_dict() == full_index.status().to_dict()
        for name in plan.replace:
            last = self.jobs.pop(name)
            index.forget(name, last.phase, self.now)
        for job in plan.create:  # the creations are seen (and written) at once
            index.observe(self.jobs[job.name], self.now)
        self.written = index.status()
        return plan


@PROPERTY
@given(specs=flows(), data=st.data())
def test_incremental_and_full_agree_with_retries_outcomes_and_skips(
    specs: list[Spec], data: st.DataObject
) -> None:
    world = World(make_flow(specs), make_templates([None] * len(specs)))  # type: ignore[arg-type]
    index, plan = reconcile.plan(world.flow, world.templates, [], now=world.now)
    for job in plan.create:
        world.attempts[(job.name, 1)] += 1
        index.mark_created(job.name)
        world.jobs[job.name] = with_phase(job, "Pending", created=world.now)
    for job in plan.create:
        index.observe(world.jobs[job.name], world.now)
    world.written = index.status()
    for _ in range(300):
        live = sorted(n for n, j in world.jobs.items() if j.phase in ("Pending", "Running"))
        if index.phase in (FlowPhase.SUCCEED, FlowPhase.FAILED) and not live:
            break
        if live and data.draw(st.booleans(), label="move"):
            name = data.draw(st.sampled_from(live), label="job")
            nxt = data.draw(st.sampled_from(["Running", "Completed", "Failed"]), label="phase")
            world.jobs[name] = with_phase(world.jobs[name], nxt)
            index.observe(world.jobs[name], world.now)
        else:
            world.now += timedelta(seconds=data.draw(st.integers(0, 15), label="dt"))
        world.decide(index)
    assert set(world.attempts.values()) <= {1}, world.attempts
    if index.phase == FlowPhase.SUCCEED:
        assert world.written is not None and world.written.phase == "Succeed"
