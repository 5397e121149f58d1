"""Admission of a flow's `spec.queue` and `spec.priorityClassName` (docs/scheduling.md):
object names, as a vcjob's own `queue` and `priorityClassName` are; empty is refused, as an
entry's `template` is; absent is today's flow."""

from __future__ import annotations

from typing import Any

import pytest
from tests.admission.test_flow_features import flow, problems


@pytest.mark.parametrize("field", ["queue", "priorityClassName"])
def test_an_object_name_is_admitted(field: str) -> None:
    assert problems(flow({field: "team-a.prod"})) == ([], [])


def test_absent_is_admitted() -> None:
    assert problems(flow({})) == ([], [])


BAD: list[tuple[str, dict[str, Any], str]] = [
    (
        "empty-queue",
        {"queue": ""},
        'spec.queue: Invalid value: "": spec.queue in body should be at least 1 chars long',
    ),
    (
        "empty-priority-class",
        {"priorityClassName": ""},
        'spec.priorityClassName: Invalid value: "": spec.priorityClassName in body should be '
        "at least 1 chars long",
    ),
    (
        "upper-case-queue",
        {"queue": "Team-A"},
        'spec.queue: Invalid value: "Team-A": a lowercase RFC 1123 subdomain',
    ),
    (
        "underscore-priority-class",
        {"priorityClassName": "team_a"},
        'spec.priorityClassName: Invalid value: "team_a": a lowercase RFC 1123 subdomain',
    ),
    ("too-long-queue", {"queue": "q" * 254}, "spec.queue: Invalid value: "),
    ("non-string-queue", {"queue": 5}, "spec.queue: Invalid value: 5: must be of type string"),
]


@pytest.mark.parametrize(("spec", "start"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_malformed_name_is_refused_at_its_path(spec: dict[str, Any], start: str) -> None:
    errors, _ = problems(flow(spec))
    assert len(errors) == 1, errors
    assert errors[0].startswith(start), errors
    if "q" * 254 in errors[0]:
        assert errors[0].endswith("must be no more than 253 characters")


def test_both_wrong_both_said() -> None:
    errors, _ = problems(flow({"queue": "A", "priorityClassName": "B"}))
    assert [e.split(":")[0] for e in errors] == ["spec.queue", "spec.priorityClassName"]
