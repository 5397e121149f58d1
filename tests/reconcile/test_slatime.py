"""The operator's sla mode: the `volcano.sh/sla-waiting-time` of each vcjob a flow creates,
so that vc-scheduler's sla plugin (PodGroup creation + waiting time) orders a flow's jobs by
one deadline, the longest remaining path first, never due sooner than the floor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from vcflow.api import scheduling
from vcflow.api.jobflow import JobFlow
from vcflow.api.meta import ObjectMeta
from vcflow.api.vcjob import VCJob
from vcflow.reconcile import slatime
from vcflow.reconcile.slatime import WAITING_TIME, Policy

T0 = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)
POLICY = Policy(budget=3600, floor=60)


def _flow(entries: list[dict[str, object]], created: datetime | None = T0) -> JobFlow:
    meta: dict[str, object] = {"name": "a", "namespace": "ns"}
    if created is not None:
        meta["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    return JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": meta,
            "spec": {"flows": entries},
        }
    )


PIPELINE = [
    {"name": "prep", "runningEstimate": "1m"},
    {"name": "train", "runningEstimate": "2h", "dependsOn": {"targets": ["prep"]}},
    {"name": "eval", "dependsOn": {"targets": ["train"]}},
]


def _job(name: str, annotations: dict[str, str] | None = None) -> VCJob:
    return VCJob(metadata=ObjectMeta(name=name, namespace="ns", annotations=annotations or {}))


def _key(flow: JobFlow, name: str, at: datetime, policy: Policy = POLICY) -> datetime:
    """When the sla plugin makes the job due: its creation plus its waiting time."""
    job = slatime.stamped(_job(name), flow, at, policy, slatime.ranks(flow))
    seconds = {"h": 3600, "m": 60, "s": 1}
    text, total, number = job.metadata.annotations[WAITING_TIME], 0, ""
    for char in text:
        if char.isdigit():
            number += char
        else:
            total, number = total + int(number) * seconds[char], ""
    return at + timedelta(seconds=total)


def test_ranks_use_running_estimate_else_one_second() -> None:
    assert slatime.ranks(_flow(PIPELINE)) == {"prep": 60 + 7200 + 1, "train": 7201, "eval": 1}


def test_a_flows_jobs_share_its_deadline_less_their_remaining_path() -> None:
    flow = _flow([{"name": "x"}, {"name": "y", "dependsOn": {"targets": ["x"]}}])
    # y is created 30 s after x; both are due at the flow's deadline less their rank
    assert _key(flow, "a-x", T0) == T0 + timedelta(seconds=3600 - 2)
    assert _key(flow, "a-y", T0 + timedelta(seconds=30)) == T0 + timedelta(seconds=3600 - 1)


def test_the_longer_remaining_path_is_due_first() -> None:
    flow = _flow([{"name": "short"}, {"name": "long", "runningEstimate": "10m"}])
    assert _key(flow, "a-long", T0) < _key(flow, "a-short", T0)


def test_an_older_flows_later_stage_is_due_before_a_younger_flows_job() -> None:
    older = _flow(PIPELINE)
    younger = _flow([{"name": "b"}], created=T0 + timedelta(seconds=10))
    train_created = T0 + timedelta(seconds=65)  # (after prep ran, later than b's creation)
    assert _key(older, "a-train", train_created) < _key(younger, "a-b", T0 + timedelta(seconds=10))


@pytest.mark.parametrize(
    ("age", "expected"),
    [(0, "1h0m0s"), (3000, "10m0s"), (3540, "1m0s"), (3599, "1m0s"), (90000, "1m0s")],
    ids=["new", "aging", "at-floor", "below-floor", "long-overdue"],
)
def test_never_below_the_floor(age: int, expected: str) -> None:
    flow = _flow([{"name": "x", "runningEstimate": "0s"}])
    at = T0 + timedelta(seconds=age)
    job = slatime.stamped(_job("a-x"), flow, at, POLICY, slatime.ranks(flow))
    assert job.metadata.annotations[WAITING_TIME] == expected


def test_items_of_a_for_entry_take_its_rank() -> None:
    flow = _flow([{"name": "sweep-x", "runningEstimate": "5m"}])
    ranked = slatime.ranks(flow)
    assert slatime.entry_of(flow, "a-sweep-x-3", ranked) == "sweep-x"
    assert slatime.entry_of(flow, "a-sweep-x", ranked) == "sweep-x"
    assert slatime.entry_of(flow, "b-sweep-x", ranked) is None


def test_the_flow_controllers_rank_annotation_wins() -> None:
    flow = _flow([{"name": "x"}])
    job = _job("a-x", {scheduling.RANK: "600"})
    slatime.stamped(job, flow, T0, POLICY, slatime.ranks(flow))
    assert job.metadata.annotations[WAITING_TIME] == "50m0s"


def test_a_waiting_time_already_there_is_kept() -> None:
    flow = _flow([{"name": "x"}])
    job = _job("a-x", {WAITING_TIME: "5s"})
    slatime.stamped(job, flow, T0, POLICY, slatime.ranks(flow))
    assert job.metadata.annotations[WAITING_TIME] == "5s"


def test_a_flow_without_creation_time_counts_from_now() -> None:
    flow = _flow([{"name": "x"}], created=None)
    job = slatime.stamped(_job("a-x"), flow, T0, POLICY, slatime.ranks(flow))
    assert job.metadata.annotations[WAITING_TIME] == "59m59s"


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.2, "1s"), (-5, "1s"), (59.1, "1m0s"), (3661, "1h1m1s")]
)
def test_duration_is_whole_seconds_rounded_up_and_positive(seconds: float, text: str) -> None:
    assert slatime.duration(seconds) == text
