"""`kubeapi.status`: vcflow's errors as Kubernetes Status objects and back — the server's
answers read by its clients as the errors they were, causes and their reasons kept — and
the Status forms of kube-apiserver's that the clients read (RBAC's and a webhook's 403s,
etcd's too-large 500)."""

from __future__ import annotations

from typing import Any

import pytest

from vcflow.api.errors import (
    AlreadyExists,
    Cause,
    Conflict,
    Expired,
    FieldError,
    InputError,
    NotFound,
    StoreError,
    ValidationFailed,
    VcflowError,
)
from vcflow.kubeapi import status
from vcflow.kubeapi.fieldvalidation import unknown_field
from vcflow.kubeapi.resources import JOBFLOWS, PODS
from vcflow.kubeapi.status import Forbidden, Unauthorized


def back(found: dict[str, Any], name: str = "f") -> VcflowError:
    """The error a client reads from a Status the server answered about JobFlow `name`."""
    return status.error_of(found, found["code"], kind="JobFlow", namespace="ns", name=name)


def test_a_failure_names_its_reason_from_the_one_table() -> None:
    assert status.failure(404, "gone") == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "gone",
        "reason": "NotFound",
        "code": 404,
    }
    assert status.failure(409, "x", reason="AlreadyExists")["reason"] == "AlreadyExists"
    assert status.failure(418, "x")["reason"] == ""
    assert status.result(403, "no") == {
        "status": "Failure",
        "code": 403,
        "reason": "Forbidden",
        "message": "no",
    }


@pytest.mark.parametrize(
    ("error", "code", "reason", "kind"),
    [
        (NotFound("x"), 404, "NotFound", NotFound),
        (AlreadyExists("x"), 409, "AlreadyExists", AlreadyExists),
        (Conflict("x"), 409, "Conflict", Conflict),
        (Expired("too old"), 410, "Expired", Expired),
        (InputError("bad"), 400, "BadRequest", StoreError),
        (VcflowError("broke"), 500, "InternalError", StoreError),
    ],
)
def test_each_error_answers_its_code_and_is_read_back_as_itself(
    error: VcflowError, code: int, reason: str, kind: type[VcflowError]
) -> None:
    found = status.of_error(error, JOBFLOWS, "f")
    assert (found["code"], found["reason"]) == (code, reason)
    assert type(back(found)) is kind


def test_not_found_and_conflict_use_kubes_words() -> None:
    gone = status.of_error(NotFound("x"), JOBFLOWS, "f")
    assert gone["message"] == 'jobflows.flow.volcano.sh "f" not found'
    assert gone["details"] == {"name": "f", "group": "flow.volcano.sh", "kind": "jobflows"}
    assert str(back(gone)) == 'jobflows.flow.volcano.sh "f" not found'
    stale = back(status.of_error(Conflict("x"), JOBFLOWS, "f"))
    said = "Error from server (Conflict): Operation cannot be fulfilled on jobflows.flow.volcano.sh"
    assert str(stale).startswith(f'{said} "f"')
    assert status.of_error(InputError("bad"), None)["code"] == 400  # (no resource: no name)
    assert status.of_error(NotFound("x"), None)["code"] == 500


def test_an_invalid_object_is_422_with_a_cause_per_error_carrying_its_reason() -> None:
    errors = [
        FieldError("must be DNS-1123", "metadata.name"),
        FieldError("is required", "spec.flows[0].name", reason=Cause.REQUIRED),
        unknown_field("spec.nope"),
    ]
    found = status.of_error(ValidationFailed(errors), JOBFLOWS, "f")
    assert found["code"] == 422 and found["reason"] == "Invalid"
    assert found["message"] == (
        'JobFlow.flow.volcano.sh "f" is invalid: metadata.name: must be DNS-1123; '
        'spec.flows[0].name: is required; spec.nope: unknown field "spec.nope"'
    )
    assert [(c["reason"], c["field"]) for c in found["details"]["causes"]] == [
        ("FieldValueInvalid", "metadata.name"),
        ("FieldValueRequired", "spec.flows[0].name"),
        ("FieldValueUnknown", "spec.nope"),
    ]
    read = back(found)
    assert isinstance(read, ValidationFailed)
    assert [(e.path, e.message, e.reason) for e in read.errors] == [
        (e.path, e.message, e.reason) for e in errors
    ]
    assert {(e.kind, e.namespace, e.name) for e in read.errors} == {("JobFlow", "ns", "f")}


def test_a_refusal_naming_no_field_is_403_and_read_back_as_admissions() -> None:
    refused = [FieldError('cannot delete JobFlow "f" while it is Running')]
    found = status.invalid(JOBFLOWS, "f", refused)
    assert found["code"] == 403 and found["reason"] == "Forbidden"
    assert found["message"] == (
        'jobflows.flow.volcano.sh "f" is forbidden: cannot delete JobFlow "f" while it is Running'
    )
    assert "causes" not in found["details"]
    read = back(found)
    assert isinstance(read, ValidationFailed)
    assert [e.message for e in read.errors] == [refused[0].message]
    assert status.refusal(refused) == (403, refused[0].message)


def test_a_403_is_admissions_only_when_its_details_name_the_object() -> None:
    """RBAC's refusal has kube's same form (`User ... cannot ...`); a Status about another
    object, or none, is the token's refusal too: kept whole, as kubectl says it."""
    rbac = status.failure(
        403,
        'jobflows.flow.volcano.sh "f" is forbidden: User "u" cannot delete resource "jobflows"',
        details={"name": "f", "group": "flow.volcano.sh", "kind": "jobflows"},
    )
    assert isinstance(back(rbac), Forbidden)
    assert str(back(rbac)) == f"Error from server (Forbidden): {rbac['message']}"
    other = status.invalid(JOBFLOWS, "g", [FieldError("no")])
    assert isinstance(back(other, name="f"), Forbidden)
    bare = dict(other, details=None)
    assert isinstance(back(bare, name="g"), Forbidden)
    pod = status.invalid(PODS, "p", [FieldError("no")])  # (core group: no `.group`)
    assert pod["message"] == 'pods "p" is forbidden: no'
    assert isinstance(back(pod, name="p"), ValidationFailed)


def test_a_webhooks_denial_is_a_refusal_in_kube_apiservers_words() -> None:
    message = 'admission webhook "jobflows.delete.vcflow.io" denied the request: cannot delete'
    read = back(status.failure(403, message))
    assert isinstance(read, ValidationFailed)
    assert [e.message for e in read.errors] == [message]


def test_what_only_a_client_meets() -> None:
    assert str(back(status.failure(401, "Unauthorized"))) == (
        "error: You must be logged in to the server (Unauthorized)"
    )
    assert isinstance(back(status.failure(401, "x")), Unauthorized)
    too_large = back(status.failure(500, "etcdserver: request is too large"))
    assert isinstance(too_large, ValidationFailed)
    assert "etcd's default limit" in str(too_large)
    assert isinstance(back(status.failure(413, "too big")), ValidationFailed)
    said = status.error_of({}, 503, b"upstream down")
    assert str(said) == "Error from server (ServiceUnavailable): upstream down"
    assert str(status.error_of({}, 599)) == "Error from server (Unknown): 599"


def test_a_success_names_the_object() -> None:
    gone = status.deleted(JOBFLOWS, "f", "u-1")
    assert gone["status"] == "Success" and "code" not in gone
    assert gone["details"] == {
        "name": "f",
        "group": "flow.volcano.sh",
        "kind": "jobflows",
        "uid": "u-1",
    }
    assert status.deleted(PODS, "p", "")["details"] == {"name": "p", "kind": "pods"}
    assert status.success(PODS, "p")["details"] == {"name": "p", "group": "", "kind": "pods"}
