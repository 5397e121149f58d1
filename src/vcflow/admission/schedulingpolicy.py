"""Admission of a flow's `spec.schedulingPolicy` and its entries' `runningEstimate`
(docs/scheduling.md): each refused with the Kubernetes API server's wording, naming the field,
as the CRD schema would word it (an enum, a minimum, a duration). Pure; `admission.jobflow`
calls `validate`.
"""

from __future__ import annotations

from vcflow.admission import flowfeatures, schema
from vcflow.api import scheduling
from vcflow.api.errors import FieldError
from vcflow.api.jobflow import JobFlow

PATH = "spec.schedulingPolicy"


def validate(flow: JobFlow) -> list[FieldError]:
    """Every problem of `spec.schedulingPolicy` and of each `flows[].runningEstimate`."""
    found: list[FieldError] = []
    policy = flow.spec.scheduling_policy if flow.spec is not None else None
    if policy is not None:
        found += schema.enum(
            policy.age_from, (scheduling.AGE_FROM_FLOW, scheduling.AGE_FROM_JOB), f"{PATH}.ageFrom"
        )
        found += schema.enum(
            policy.job_order,
            (scheduling.ORDER_CRITICAL_PATH, scheduling.ORDER_FLOW),
            f"{PATH}.jobOrder",
        )
        found += schema.enum(
            policy.admission,
            (scheduling.ADMISSION_HOLD, scheduling.ADMISSION_IGNORE),
            f"{PATH}.admission",
        )
        if policy.handover is not None:
            found += schema.minimum(policy.handover.hold_seconds, 0, f"{PATH}.handover.holdSeconds")
    for i, entry in enumerate(flow.flows):
        found += flowfeatures.duration_errors(
            entry.running_estimate, f"spec.flows[{i}].runningEstimate"
        )
    return found
