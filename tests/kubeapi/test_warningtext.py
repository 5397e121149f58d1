"""`kubeapi.warningtext`: a warning the server says is heard by a client as the FieldError
it was, an unknown field's reason included."""

from __future__ import annotations

import pytest

from vcflow.api.errors import Cause, FieldError
from vcflow.kubeapi import warningtext
from vcflow.kubeapi.fieldvalidation import unknown_field

OBJECT = {"kind": "JobFlow", "namespace": "ns", "name": "f"}


@pytest.mark.parametrize(
    "warning",
    [
        FieldError("is deprecated", "spec.flows[0].retry", warning=True, **OBJECT),
        FieldError("runs nothing", "", warning=True, **OBJECT),
    ],
)
def test_a_warning_said_is_heard_as_it_was(warning: FieldError) -> None:
    text = warningtext.said(warning)
    assert warningtext.heard(text, **OBJECT) == warning


def test_an_unknown_field_is_said_once_and_heard_by_its_words() -> None:
    """Its words quote the field, so the text has no path in front (nor the FieldError
    heard); its reason comes back from the words, which kube-apiserver's share."""
    warning = unknown_field("spec.z")
    assert warningtext.said(warning) == 'unknown field "spec.z"'
    heard = warningtext.heard('JobFlow ns/f: unknown field "spec.z"', **OBJECT)
    assert (heard.path, heard.reason) == ("", Cause.UNKNOWN_FIELD)
    assert heard.message == 'unknown field "spec.z"'
