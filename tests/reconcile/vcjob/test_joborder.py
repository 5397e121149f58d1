"""Job order within a queue: priority, then age (the flow's when stamped), then
critical-path rank, then creation order."""

from __future__ import annotations

from vcflow.api.meta import ObjectMeta
from vcflow.api.vcjob import JobSpec, VCJob
from vcflow.reconcile.vcjob import joborder
from vcflow.reconcile.vcjob.joborder import Priorities

TABLE = Priorities({"high": 100, "low": -5}, default=7)


def _job(
    name: str,
    created: str = "2026-01-01T00:00:10Z",
    *,
    cls: str | None = None,
    flow_created: str | None = None,
    rank: str | None = None,
) -> VCJob:
    notes = {}
    if flow_created is not None:
        notes["vcflow.io/flow-created"] = flow_created
    if rank is not None:
        notes["vcflow.io/rank"] = rank
    meta = ObjectMeta(name=name, creation_timestamp=created, annotations=notes)
    return VCJob(metadata=meta, spec=JobSpec(priority_class_name=cls))


def _order(*jobs: VCJob) -> list[str]:
    return [j.name for j in sorted(jobs, key=lambda j: joborder.key(j, TABLE))]


def test_priority_first_and_a_job_without_a_class_gets_the_default() -> None:
    assert _order(_job("low", cls="low"), _job("none"), _job("high", cls="high")) == [
        "high",
        "none",
        "low",
    ]
    assert TABLE.of("unknown") == 0


def test_a_stage_queues_with_its_flows_age() -> None:
    early_flow = _job("stage2", "2026-01-01T00:00:30Z", flow_created="2026-01-01T00:00:00Z")
    assert _order(_job("other", "2026-01-01T00:00:20Z"), early_flow) == ["stage2", "other"]


def test_rank_breaks_an_age_tie_then_creation_order() -> None:
    jobs = (_job("short", rank="2"), _job("none"), _job("long", rank="11.5"), _job("none2"))
    assert _order(*jobs) == ["long", "short", "none", "none2"]


def test_unreadable_annotations_fall_back() -> None:
    bad = _job("bad", "2026-01-01T00:00:05Z", flow_created="yesterday", rank="many")
    assert joborder.age(bad) == joborder.age(_job("x", "2026-01-01T00:00:05Z"))
    assert joborder.rank(bad) == 0.0
