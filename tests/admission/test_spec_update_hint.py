"""A JobFlow's spec cannot change (Volcano's rule), so running a flow again with other
arguments (`vcflow run -f . -p threshold=2` after a first run) is refused: the refusal
says what to do instead — delete the flow, or resubmit it as a new flow."""

from __future__ import annotations

import pytest

from vcflow.admission.jobflow import SPEC_UPDATE, validate_jobflow
from vcflow.api.jobflow import JobFlow


def _flow(namespace: str, threshold: str) -> JobFlow:
    return JobFlow.from_dict(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "sweep", "namespace": namespace},
            "spec": {
                "arguments": [{"name": "threshold", "value": threshold}],
                "flows": [{"name": "a"}],
            },
        }
    )


@pytest.mark.parametrize(("namespace", "flag"), [("default", ""), ("team-a", " -n team-a")])
def test_the_refusal_says_to_resubmit(namespace: str, flag: str) -> None:
    errors = validate_jobflow(_flow(namespace, "2"), old=_flow(namespace, "0.9"))
    assert [str(e) for e in errors] == [
        f"spec: {SPEC_UPDATE} (a flow runs its spec once: delete the flow first, or run it "
        f"again as a new flow with vcflow resubmit jobflow sweep{flag} [-p NAME=VALUE])"
    ]
