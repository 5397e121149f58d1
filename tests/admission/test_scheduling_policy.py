"""Admission of `spec.schedulingPolicy` and `flows[].runningEstimate` (docs/scheduling.md):
each value outside its set, a negative hold or a malformed estimate is refused naming the
field, in the API server's words; the valid values, and absence, are today's flow."""

from __future__ import annotations

from typing import Any

import pytest
from tests.admission.test_flow_features import entry_b, flow, problems

POLICY = "spec.schedulingPolicy"


def test_every_valid_value_is_admitted() -> None:
    policy = {
        "ageFrom": "Flow",
        "jobOrder": "CriticalPath",
        "handover": {"holdSeconds": 60},
        "admission": "Hold",
    }
    assert problems(flow({"schedulingPolicy": policy})) == ([], [])
    other = {"ageFrom": "Job", "jobOrder": "FlowOrder", "handover": {"holdSeconds": 0}}
    assert problems(flow({"schedulingPolicy": {**other, "admission": "Ignore"}})) == ([], [])
    assert problems(entry_b(runningEstimate="2h")) == ([], [])
    assert problems(entry_b(runningEstimate="0s")) == ([], [])


BAD: list[tuple[str, dict[str, Any], str]] = [
    (
        "age-from",
        {"schedulingPolicy": {"ageFrom": "flow"}},
        f'{POLICY}.ageFrom: Unsupported value: "flow": supported values: "Flow", "Job"',
    ),
    (
        "job-order",
        {"schedulingPolicy": {"jobOrder": "Rank"}},
        f'{POLICY}.jobOrder: Unsupported value: "Rank": supported values: "CriticalPath", '
        '"FlowOrder"',
    ),
    (
        "admission",
        {"schedulingPolicy": {"admission": "Reject"}},
        f'{POLICY}.admission: Unsupported value: "Reject": supported values: "Hold", "Ignore"',
    ),
    (
        "negative-hold",
        {"schedulingPolicy": {"handover": {"holdSeconds": -1}}},
        f"{POLICY}.handover.holdSeconds: Invalid value: -1: {POLICY}.handover.holdSeconds in "
        "body should be greater than or equal to 0",
    ),
]


@pytest.mark.parametrize(("spec", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_policy_value_is_refused_at_its_path(spec: dict[str, Any], message: str) -> None:
    assert problems(flow(spec)) == ([message], [])


def test_a_running_estimate_is_a_go_duration_not_negative() -> None:
    errors, _ = problems(entry_b(runningEstimate="2 hours"))
    assert errors == [
        'spec.flows[1].runningEstimate: Invalid value: "2 hours": not a Kubernetes duration '
        '(numbers with units h, m, s, ms: 30s, 5m, 1h30m) (did you mean "2h"?)'
    ]
    errors, _ = problems(entry_b(runningEstimate="-5m"))
    assert errors == ['spec.flows[1].runningEstimate: Invalid value: "-5m": must not be negative']


def test_the_policy_cannot_change_after_create() -> None:
    from vcflow.admission.jobflow import SPEC_UPDATE, validate_jobflow
    from vcflow.api.jobflow import JobFlow

    old = JobFlow.from_dict(flow({"schedulingPolicy": {"admission": "Hold"}}))
    new = JobFlow.from_dict(flow({"schedulingPolicy": {"admission": "Ignore"}}))
    assert [e.message for e in validate_jobflow(new, old=old)] == [SPEC_UPDATE]
