"""Admission of the flow language built so far (docs/flow-features.md part II): an entry's
`template` (section 16) — a JobTemplate name, checked as one, resolved wherever an entry's
template is looked up — and `spec.arguments` (section 10). One line per problem, naming the
field."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from tests.admission.test_flow_features import problems, template

from vcflow.admission import review
from vcflow.api.errors import Cause
from vcflow.api.jobflow import JobFlow
from vcflow.api.platform import Platform
from vcflow.kubeapi import fieldvalidation


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


# -- arguments ------------------------------------------------------------------------------


def with_arguments(*declared: dict[str, Any]) -> dict[str, Any]:
    return flow({"name": "a"}, arguments=list(declared))


ARGUMENTS_BAD = [
    (
        "required-without-value",
        with_arguments({"name": "threshold"}),
        'spec.arguments[0]: required argument "threshold" has no value: give it with '
        "-p threshold=...",
    ),
    (
        "duplicate",
        with_arguments({"name": "x", "value": "1"}, {"name": "x", "value": "2"}),
        'spec.arguments[1].name: Duplicate value: "x"',
    ),
    (
        "empty-name",
        with_arguments({"name": "", "value": "1"}),
        'spec.arguments[0].name: Invalid value: "": spec.arguments[0].name in body should be '
        "at least 1 chars long",
    ),
    (
        "dash-in-name",
        with_arguments({"name": "learning-rate", "value": "1"}),
        'spec.arguments[0].name: Invalid value: "learning-rate": an argument name is a CEL '
        "identifier: letters, digits and '_', not starting with a digit (regex "
        "[A-Za-z_][A-Za-z0-9_]*)",
    ),
    (
        "leading-digit",
        with_arguments({"name": "1st", "value": "1"}),
        'spec.arguments[0].name: Invalid value: "1st": an argument name is a CEL identifier: '
        "letters, digits and '_', not starting with a digit (regex [A-Za-z_][A-Za-z0-9_]*)",
    ),
    (
        "reserved-word",
        with_arguments({"name": "in", "value": "1"}),
        'spec.arguments[0].name: Invalid value: "in": a CEL reserved word cannot name an argument',
    ),
    (
        "long-name",
        with_arguments({"name": "n" * 64, "value": "1"}),
        "spec.arguments[0].name: Too long: may not be longer than 63",
    ),
    (
        "long-value",
        with_arguments({"name": "big", "value": "é" * 2049}),
        "spec.arguments[0].value: Too long: may not be longer than 4096 bytes (it has 4098)",
    ),
    (
        "long-description",
        with_arguments({"name": "x", "value": "1", "description": "d" * 1025}),
        "spec.arguments[0].description: Too long: may not be longer than 1024 bytes (it has 1025)",
    ),
    (
        "values-together",
        with_arguments(*({"name": f"v{i}", "value": "x" * 4096} for i in range(9))),
        "spec.arguments: Too long: the values may have at most 32768 bytes together (they "
        "have 36864)",
    ),
    (
        "too-many",
        with_arguments(*({"name": f"v{i}", "value": ""} for i in range(65))),
        "spec.arguments: Too many: 65: must have at most 64 items",
    ),
    (
        "a-number-value",
        with_arguments({"name": "x", "value": 0.9}),
        "spec.arguments[0].value: Invalid value: 0.9: must be of type string",
    ),
    (
        "not-a-list",
        flow({"name": "a"}, arguments={"parameters": [{"name": "x"}]}),
        'spec.arguments: Invalid value: {"parameters": [{"name": "x"}]}: must be of type array',
    ),
]


@pytest.mark.parametrize(
    ("data", "message"), [c[1:] for c in ARGUMENTS_BAD], ids=[c[0] for c in ARGUMENTS_BAD]
)
def test_a_bad_argument_is_one_clear_line(data: dict[str, Any], message: str) -> None:
    errors, _ = problems(data)
    assert errors == [message]


def test_the_webhook_says_to_write_the_value_in_the_manifest() -> None:
    errors, _ = problems(with_arguments({"name": "threshold"}), platform=Platform.CLUSTER)
    assert errors == [
        'spec.arguments[0]: required argument "threshold" has no value: give it a value in '
        "the manifest (spec.arguments[0].value)"
    ]


def test_good_arguments_are_admitted_without_a_word() -> None:
    data = with_arguments(
        {"name": "threshold", "value": "0.9", "description": "the bar"},
        {"name": "_target2", "value": ""},
        *({"name": f"v{i}", "value": "x" * 500} for i in range(62)),
    )
    assert problems(data, template("a")) == ([], [])
    assert problems(flow({"name": "a"}, arguments=[]), template("a")) == ([], [])


def test_a_container_that_sets_vcflow_args_itself_is_a_warning() -> None:
    pod = {
        "restartPolicy": "Never",
        "containers": [
            {"name": "m", "command": ["true"]},
            {"name": "own", "command": ["true"], "env": [{"name": "VCFLOW_ARGS", "value": "x"}]},
        ],
    }
    tasks = [{"name": "main", "replicas": 1, "template": {"spec": pod}}]
    _, warnings = problems(with_arguments({"name": "x", "value": "1"}), template("a", tasks=tasks))
    assert warnings == [
        "spec.flows[0].name: entry a: task main container own sets VCFLOW_ARGS itself: it "
        "keeps its own value, not the flow's arguments"
    ]
    # a flow that does not use the language adds no variable: nothing to say
    assert problems(flow({"name": "a"}), template("a", tasks=tasks)) == ([], [])


# -- unknown fields ---------------------------------------------------------------------------


def test_unknown_fields_are_judged_by_the_field_validation() -> None:
    obj = JobFlow.from_dict(flow({"name": "a", "withItems": [1], "depends": "x"}, arguments=[]))
    found = review.review(obj, context=review.Context(templates={"a": template("a")}))
    assert [(e.path, e.hint) for e in found] == [
        (
            "spec.flows[0].withItems",
            'use "for" (items, fromArgument or fromOutput): docs/flow-features.md section 19',
        ),
        ("spec.flows[0].depends", 'use "dependsOn" with "outcome": Completed, Failed or Finished'),
    ]
    assert all(e.warning for e in found)
    strict = fieldvalidation.judged(found, fieldvalidation.Validation.STRICT)
    assert [e.warning for e in strict] == [False, False]
    assert fieldvalidation.judged(found, fieldvalidation.Validation.WARN) == found
    assert fieldvalidation.judged(found, fieldvalidation.Validation.IGNORE) == []
    other = dataclasses.replace(found[0], message="a task creates no pods", reason=Cause.INVALID)
    assert fieldvalidation.judged([other], fieldvalidation.Validation.STRICT) == [other]
