"""A scheduler pass with a `gang.Policy`: queues and PriorityClass values read by the pass,
flow age and rank ordering it, hand-over holds against other flows' jobs and their
placement, and every waiting job's reason."""

from __future__ import annotations

from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from vcflow.api import names
from vcflow.api.queues import QueueTable
from vcflow.api.scheduling import Queue
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import gang, joborder, resources
from vcflow.reconcile.vcjob.holds import Holds
from vcflow.reconcile.vcjob.model import Group
from vcflow.reconcile.vcjob.queueing import WaitKind

from .test_gang import make_pods, vcjob

NOW = datetime(2026, 1, 1, tzinfo=UTC)
GPU = "nvidia.com/gpu"


def _flowed(job: VCJob, flow: str) -> VCJob:
    job.metadata.labels["volcano.sh/createdByJobFlow"] = f"default.{flow}"
    return job


def test_stored_classes_and_their_global_default_order_the_pass(make: Any) -> None:
    plain = vcjob(make, "plain", make.task("w", 1, cpu="1"))
    low = vcjob(make, "low", make.task("w", 1, cpu="1"), priorityClassName="low")
    table = joborder.Priorities({"low": 1}, default=10)
    out = gang.schedule(
        [gang.GangJob(low, Group.PENDING), gang.GangJob(plain, Group.PENDING)],
        [],
        resources.capacity({"cpu": "1"}),
        policy=gang.Policy(priorities=table),
    )
    assert out.admitted == ("default/plain",)
    assert out.waits[names.object_key("default", "low")].kind is WaitKind.RESOURCES


def test_a_job_in_a_queue_that_is_not_stored_waits(make: Any) -> None:
    job = vcjob(make, "j", make.task("w", 1, cpu="1"), queue="team-a")
    stored = Queue.from_dict({"metadata": {"name": "team-b"}})
    out = gang.schedule(
        [gang.GangJob(job, Group.PENDING)],
        [],
        resources.capacity({"cpu": "4"}),
        policy=gang.Policy(queues=QueueTable.of([stored])),
    )
    assert out.admitted == ()
    assert out.unschedulable == {"default/j": ""}  # (it could fit: no event)
    assert out.waits[names.object_key("default", "j")].message == "queue team-a does not exist"


def test_a_hold_keeps_others_out_and_is_consumed_by_its_flow(make: Any) -> None:
    rival = _flowed(vcjob(make, "rival", make.task("w", 1, requests={GPU: "2"})), "b")
    train = _flowed(vcjob(make, "train", make.task("w", 1, requests={GPU: "2"})), "a")
    cap = resources.capacity({GPU: "2"})
    held = gang.Policy(holds=Holds().add("default.a", {GPU: Fraction(2)}, NOW, 60))
    out = gang.schedule([gang.GangJob(rival, Group.PENDING)], [], cap, policy=held)
    assert out.admitted == ()
    assert out.waits[names.object_key("default", "rival")].kind is WaitKind.HELD
    both = [gang.GangJob(rival, Group.PENDING), gang.GangJob(train, Group.PENDING)]
    out = gang.schedule(both, [], cap, policy=held)
    assert out.admitted == ("default/train",)
    assert not out.holds


def test_a_hold_yields_to_a_gang_admitted_before_it(make: Any) -> None:
    """The hold was made from resources an admitted job had reserved: its pods are placed,
    and the hold is cut to what is free."""
    early = _flowed(vcjob(make, "early", make.task("w", 1, requests={GPU: "2"})), "b")
    held = gang.Policy(holds=Holds().add("default.a", {GPU: Fraction(2)}, NOW, 60))
    out = gang.schedule(
        [gang.GangJob(early, Group.ADMITTED)],
        make_pods(early),
        resources.capacity({GPU: "2"}),
        policy=held,
    )
    assert out.placed == ("default/early-w-0",)
    assert not out.holds
