"""Hand-over holds: other flows see them as used, the flow's own jobs consume them, they
go at zero, at expiry or when dropped; the annotation's reading."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fractions import Fraction

import pytest

from vcflow.api.meta import ObjectMeta
from vcflow.api.vcjob import VCJob
from vcflow.reconcile.vcjob import resources
from vcflow.reconcile.vcjob.holds import Holds, flow_of, handover_of

NOW = datetime(2026, 1, 1, tzinfo=UTC)
GPU = "nvidia.com/gpu"


def _gpu(n: int) -> dict[str, Fraction]:
    return {GPU: Fraction(n)}


def test_other_flows_see_a_hold_as_used_the_flow_itself_does_not() -> None:
    holds = Holds().add("ns.a", _gpu(2), NOW, 60)
    assert holds.against("ns.b") == _gpu(2)
    assert holds.against(None) == _gpu(2)
    assert holds.against("ns.a") == {}


def test_consumed_by_the_flows_jobs_and_gone_at_zero() -> None:
    holds = Holds().add("ns.a", _gpu(2), NOW, 60)
    holds = holds.consume("ns.a", _gpu(1))
    assert holds.against("ns.b") == _gpu(1)
    assert not holds.consume("ns.a", _gpu(5))
    assert holds.consume("ns.b", _gpu(2)) == holds  # (another flow's job consumes nothing)


def test_expires_and_drops() -> None:
    holds = Holds().add("ns.a", _gpu(2), NOW, 60).add("ns.b", _gpu(1), NOW, 10)
    assert holds.next_due() == NOW + timedelta(seconds=10)
    assert set(holds.expire(NOW + timedelta(seconds=10)).by_flow) == {"ns.a"}
    assert not holds.expire(NOW + timedelta(seconds=60))
    assert set(holds.drop("ns.a").by_flow) == {"ns.b"}


def test_two_holds_of_one_flow_add_up_and_last_the_longer() -> None:
    holds = Holds().add("ns.a", _gpu(1), NOW, 60).add("ns.a", _gpu(1), NOW, 10)
    (hold,) = holds
    assert hold.amount == _gpu(2)
    assert hold.expires == NOW + timedelta(seconds=60)


def test_a_hold_never_claims_what_is_not_free() -> None:
    holds = Holds().add("ns.a", _gpu(2), NOW, 60).add("ns.b", _gpu(2), NOW, 60)
    cut = holds.within(resources.capacity({GPU: "3"}))
    assert cut.by_flow["ns.a"].amount == _gpu(2)
    assert cut.by_flow["ns.b"].amount == _gpu(1)
    assert set(holds.within(resources.capacity({GPU: "0"})).by_flow) == set()
    assert holds.within(resources.UNLIMITED) is holds


def _job(annotations: dict[str, str], labels: dict[str, str] | None = None) -> VCJob:
    meta = ObjectMeta(name="j", namespace="ns", annotations=annotations, labels=labels or {})
    return VCJob(metadata=meta)


def test_the_annotation_read() -> None:
    job = _job({"vcflow.io/handover": '{"holdSeconds": 60, "need": {"nvidia.com/gpu": "2"}}'})
    found = handover_of(job)
    assert found is not None
    assert found.hold_seconds == 60
    assert found.need == _gpu(2)


@pytest.mark.parametrize(
    "raw",
    ["not json", "[]", '{"holdSeconds": 0, "need": {"cpu": "1"}}', '{"holdSeconds": 5}'],
)
def test_an_unreadable_or_empty_handover_is_none(raw: str) -> None:
    assert handover_of(_job({"vcflow.io/handover": raw})) is None


def test_the_flow_is_the_created_by_label() -> None:
    assert flow_of(_job({}, {"volcano.sh/createdByJobFlow": "ns.a"})) == "ns.a"
    assert flow_of(_job({})) is None
