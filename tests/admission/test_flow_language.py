"""Admission of the flow language built so far (docs/flow-features.md part II): an entry's
`template` (section 16) — a JobTemplate name, checked as one, resolved wherever an entry's
template is looked up — and `spec.arguments` (section 10). One line per problem, naming the
field."""

from __future__ import annotations

from typing import Any

import pytest
from tests.admission.test_flow_features import problems, template

from vcflow.admission import review
from vcflow.api.jobflow import JobFlow


def flow(*entries: dict[str, Any], name: str = "f", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"flows": list(entries), **spec},
    }


# -- template ---------------------------------------------------------------------------------

TEMPLATE_BAD = [
    (
        "empty",
        flow({"name": "a", "template": ""}),
        'spec.flows[0].template: Invalid value: "": spec.flows[0].template in body should be '
        "at least 1 chars long",
    ),
    (
        "upper-case",
        flow({"name": "a", "template": "Trainer"}),
        'spec.flows[0].template: Invalid value: "Trainer": a lowercase RFC 1123 subdomain must '
        "consist of lower case alphanumeric characters, '-' or '.', and must start and end "
        "with an alphanumeric character",
    ),
    (
        "label-value-too-long",
        flow({"name": "a", "template": "t" * 60}),
        f'spec.flows[0].template: label value "default.{"t" * 60}" '
        f'(volcano.sh/createdByJobTemplate) of vcjob "f-a": must be no more than 63 characters',
    ),
    (
        "not-a-string",
        flow({"name": "a", "template": 5}),
        "spec.flows[0].template: Invalid value: 5: must be of type string",
    ),
]


@pytest.mark.parametrize(
    ("data", "message"), [c[1:] for c in TEMPLATE_BAD], ids=[c[0] for c in TEMPLATE_BAD]
)
def test_a_bad_template_name_is_one_clear_line(data: dict[str, Any], message: str) -> None:
    errors, _ = problems(data)
    assert errors == [message]


def test_two_entries_may_share_a_template() -> None:
    data = flow(
        {"name": "train-a", "template": "trainer"},
        {"name": "train-b", "template": "trainer"},
        {"name": "trainer"},
    )
    assert problems(data, template("trainer")) == ([], [])


def test_a_missing_template_is_named_at_its_field() -> None:
    data = flow({"name": "a", "template": "scorer"}, {"name": "b"})
    obj = JobFlow.from_dict(data)
    context = review.Context(
        templates={"a": template("a"), "b": template("b")},
        resolve_templates=True,
        unknown_fields=False,
    )
    warnings = [f"{e.path}: {e.message}" for e in review.review(obj, context=context)]
    assert warnings == [
        'spec.flows[0].template: JobTemplate "scorer" not found; the entry will wait '
        "(TemplateNotFound) until it is created"
    ]


def test_the_entry_s_spec_is_its_template_s() -> None:
    """What admission reads of an entry's vcjob — the patched spec, its pod names, the
    restart policies retries multiply — comes from the named template."""
    restarting = template(
        "trainer", maxRetry=4, policies=[{"event": "PodFailed", "action": "RestartJob"}]
    )
    data = flow(
        {"name": "a", "template": "trainer", "retryPolicy": {"maxRetries": 1}},
        {"name": "b", "template": "trainer", "patch": {"jobSpec": {"minAvailable": 5}}},
    )
    errors, warnings = problems(data, restarting, template("a"), template("b"))
    assert errors == [
        "spec.flows[1].patch.jobSpec.minAvailable: after patch: job 'minAvailable' should not "
        "be greater than total replicas in tasks"
    ]
    assert warnings == [
        "spec.flows[0].retryPolicy.maxRetries: entry a: maxRetries 1 and the vcjob's own "
        "RestartJob policy (maxRetry 4) multiply: each of the 2 attempts may run its job 4 "
        "times, up to 8 runs in all"
    ]


def test_a_template_a_flow_uses_under_another_entry_name_is_not_deleted() -> None:
    running = [
        _with_phase(flow({"name": "a", "template": "shared"}, name="g"), "Running"),
        _with_phase(flow({"name": "a", "template": "shared"}, name="h"), "Succeed"),
    ]
    context = review.Context(flows=running)
    found = review.review(template("shared"), operation=review.Operation.DELETE, context=context)
    assert [e.message for e in found] == [
        'cannot delete JobTemplate "shared": unfinished JobFlow(s) g use it; stop or delete '
        "them first"
    ]
    # (entry a of g names another template: template a is free to go)
    assert review.review(template("a"), operation=review.Operation.DELETE, context=context) == []


def _with_phase(data: dict[str, Any], phase: str) -> JobFlow:
    return JobFlow.from_dict({**data, "status": {"state": {"phase": phase}}})
