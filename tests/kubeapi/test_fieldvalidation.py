"""`kubeapi.fieldvalidation`: Strict, Warn and Ignore pick the unknown fields by their
reason, not by their words."""

from __future__ import annotations

import dataclasses

import pytest

from vcflow.api.errors import Cause, FieldError
from vcflow.kubeapi.fieldvalidation import (
    API_VALUES,
    Validation,
    is_unknown,
    judged,
    of_api,
    split,
    unknown_field,
)

ERROR = FieldError("must be a number", "spec.x")
WARNING = FieldError("is deprecated", "spec.y", warning=True)
UNKNOWN = unknown_field("spec.z")


def test_an_unknown_field_is_known_by_its_reason() -> None:
    assert UNKNOWN.message == 'unknown field "spec.z"' and UNKNOWN.reason == Cause.UNKNOWN_FIELD
    assert is_unknown(UNKNOWN)
    assert not is_unknown(dataclasses.replace(UNKNOWN, reason=Cause.INVALID))
    assert not is_unknown(dataclasses.replace(WARNING, message='unknown field "spec.y"'))


def test_the_api_values() -> None:
    assert API_VALUES == ("Strict", "Warn", "Ignore")
    assert [of_api(v) for v in API_VALUES] == list(Validation)
    assert of_api(None) is of_api("strict") is Validation.WARN  # (the API server's default)


@pytest.mark.parametrize(
    ("validation", "errors", "warnings"),
    [
        (Validation.STRICT, [ERROR, dataclasses.replace(UNKNOWN, warning=False)], [WARNING]),
        (Validation.WARN, [ERROR], [UNKNOWN, WARNING]),
        (Validation.IGNORE, [ERROR], [WARNING]),
    ],
)
def test_a_write_is_split_into_errors_and_warnings(
    validation: Validation, errors: list[FieldError], warnings: list[FieldError]
) -> None:
    """An API server's order: admission's errors, then the unknown fields Strict refuses."""
    assert split([UNKNOWN, ERROR, WARNING], validation) == (errors, warnings)


def test_judged_keeps_the_order() -> None:
    strict = judged([UNKNOWN, ERROR], Validation.STRICT)
    assert [(e.path, e.warning) for e in strict] == [("spec.z", False), ("spec.x", False)]
