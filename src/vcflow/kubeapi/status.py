"""Kubernetes `Status` objects both ways, with one table of codes and reasons: vcflow's
errors (`api.errors`) as the Status the API answers (`of_error`), and a Status a server
answered as vcflow's errors again (`error_of`). The vcflow server answers with the first;
KubeStore and the operator read with the second; the webhook words its refusals with
`refusal`, as the server does. Pure.

Encoded: ValidationFailed is 422 Invalid with one cause per FieldError, carrying its
`reason` (kube admission's 403 Forbidden when none names a field), NotFound 404,
AlreadyExists and Conflict 409, Expired 410, other input errors 400.

Decoded: `Error from server (Reason): message` is how kubectl prints a Status; the errors
say it the same way, but for NotFound (the CLI names the missing object itself), 422
Invalid (one FieldError per cause, so the CLI prints one line per problem, as embedded),
an admission refusal in a 403 and a write too large to store (etcd's 500, a 413), which
are ValidationFailed as the embedded store's refusals are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from vcflow.api import bounds
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
from vcflow.kubeapi.resources import APIResource

#: HTTP code → the Status `reason` kube-apiserver gives it (metav1.StatusReason)
REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class Unauthorized(StoreError):
    """401: no token, or a wrong one."""


class Forbidden(StoreError):
    """403: the token may not do this."""


# --- vcflow error → Status -----------------------------------------------------------------


def failure(
    code: int, message: str, *, reason: str = "", details: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A Failure Status (`reason`: REASONS' for the code when not given)."""
    found: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason or REASONS.get(code, ""),
        "code": code,
    }
    if details is not None:
        found["details"] = details
    return found


def result(code: int, message: str, *, reason: str = "") -> dict[str, Any]:
    """A Failure Status as an AdmissionReview's `response.status` carries it: without its
    type and details (kube-apiserver reads its code, reason and message)."""
    kept = ("status", "code", "reason", "message")
    return {k: v for k, v in failure(code, message, reason=reason).items() if k in kept}


def success(resource: APIResource, name: str) -> dict[str, Any]:
    """The Status a request without an object to return answers (a DELETE's, a binding's)."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details(resource, name, resource.plural),
    }


def deleted(resource: APIResource, name: str, uid: str) -> dict[str, Any]:
    """The Status kube-apiserver answers for an object its DELETE removed (the registry's
    `finalizeDelete`): details name, group (left out for the core group), the resource's
    plural as `kind`, and the uid — no object, so a client knows it is gone, not held."""
    found: dict[str, Any] = {"name": name}
    if resource.group:
        found["group"] = resource.group
    found["kind"] = resource.plural
    if uid:
        found["uid"] = uid
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": found,
    }


def of_error(exc: VcflowError, resource: APIResource | None, name: str = "") -> dict[str, Any]:
    """The Status a vcflow error answers as, for a request on `resource`/`name`."""
    if isinstance(exc, Expired):
        return failure(410, str(exc), reason="Expired")
    if resource is None:
        return failure(400 if isinstance(exc, InputError) else 500, str(exc))
    qualified = _qualified(resource.group, resource.plural)
    found = details(resource, name, resource.plural)
    if isinstance(exc, NotFound):
        return failure(404, f'{qualified} "{name}" not found', details=found)
    if isinstance(exc, AlreadyExists):
        message = f'{qualified} "{name}" already exists'
        return failure(409, message, reason="AlreadyExists", details=found)
    if isinstance(exc, Conflict):
        message = (
            f'Operation cannot be fulfilled on {qualified} "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again"
        )
        return failure(409, message, reason="Conflict", details=found)
    if isinstance(exc, ValidationFailed):
        return invalid(resource, name, exc.errors)
    return failure(400 if isinstance(exc, InputError) else 500, str(exc))


def invalid(resource: APIResource, name: str, errors: Sequence[FieldError]) -> dict[str, Any]:
    """422 Invalid: `Kind.group "name" is invalid: <each error>; <...>`, a cause for each.
    A refusal about no field (a DELETE review's) is kube admission's 403 Forbidden,
    `plural.group "name" is forbidden: <each error>`: kubectl prints a 422's causes as
    `field: message`, which a cause without a field would make `: message`."""
    code, text = refusal(errors)
    if code == 403:
        message = forbidden_prefix(resource.group, resource.plural, name) + text
        return failure(403, message, details=details(resource, name, resource.plural))
    kind = _qualified(resource.group, resource.kind)
    found = details(resource, name, resource.kind)
    found["causes"] = causes(errors)
    return failure(422, f'{kind} "{name}" is invalid: {text}', details=found)


def refusal(errors: Sequence[FieldError]) -> tuple[int, str]:
    """The code of admission's refusal — 422 Invalid, 403 Forbidden when no error names a
    field — and its words: each error's, joined by "; "."""
    text = "; ".join(e.bare() for e in errors)
    return (422 if any(e.path for e in errors) else 403), text


def causes(errors: Sequence[FieldError]) -> list[dict[str, Any]]:
    """A 422's `details.causes`: each error's reason, words (without its field) and field."""
    return [{"reason": e.reason, "message": e.bare(path=False), "field": e.path} for e in errors]


def details(resource: APIResource, name: str, kind: str) -> dict[str, Any]:
    """A Status's `details` naming the object (`kind`: the plural, or a 422's Kind)."""
    found: dict[str, Any] = {"name": name, "group": resource.group, "kind": kind}
    if not name:
        del found["name"]
    return found


def forbidden_prefix(group: str, plural: str, name: str) -> str:
    """What a 403 of kube's (`NewForbidden`: RBAC's, admission's) says before why."""
    return f'{_qualified(group, plural)} "{name}" is forbidden: '


def _qualified(group: str, name: str) -> str:
    return f"{name}.{group}" if group else name


# --- Status → vcflow error -----------------------------------------------------------------


def error_of(
    status: dict[str, Any],
    code: int,
    data: bytes = b"",
    *,
    kind: str = "",
    namespace: str = "",
    name: str = "",
) -> VcflowError:
    """The vcflow error of a Status (an answer's body, `code` its HTTP status; or a watch's
    ERROR frame) about the object `kind namespace/name`; `data`, the body, says it when the
    Status has no message."""
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or data.decode("utf-8", "replace").strip() or code)
    code = int(status.get("code") or code)
    said = f"Error from server ({reason or REASONS.get(code, 'Unknown')}): {message}"
    if code == 401:
        return Unauthorized("error: You must be logged in to the server (Unauthorized)")
    if code == 403:
        refused = _refusal(status, message, kind, name)
        if refused is not None:  # admission's refusal of a write that names no field
            return ValidationFailed([FieldError(refused, "", kind, namespace, name)])
        return Forbidden(said)
    if code == 404:
        return NotFound(message)
    if code == 409 and reason == "AlreadyExists":
        return AlreadyExists(said)
    if code == 409:
        return Conflict(said)
    if code == 410:
        return Expired(said)
    if code == 422:
        return ValidationFailed(_field_errors(status, message, kind, namespace, name))
    if code == 413 or (code == 500 and _ETCD_TOO_LARGE in message):
        return ValidationFailed([FieldError(_too_large(message), "", kind, namespace, name)])
    return StoreError(said)


#: etcd's refusal of a request past its limit (--max-request-bytes, 1.5 MiB by default),
#: which kube-apiserver answers as a 500 InternalError carrying that text
_ETCD_TOO_LARGE = "etcdserver: request is too large"
#: kube-apiserver's words for a webhook's denial (`webhookerrors.ToStatusErr`)
_WEBHOOK_DENIAL = re.compile(r'admission webhook "[^"]*" denied the request')


def _too_large(message: str) -> str:
    """A write refused for its size — by etcd (a 500) or by the server's body limit (413):
    what the embedded store says of an object past `bounds.MAX_OBJECT_BYTES`, and the
    server's words."""
    return (
        f"the object is more than the Kubernetes API stores (etcd's default limit: "
        f"{bounds.MAX_OBJECT_BYTES:,} (1.5 MiB) as JSON, with what the server adds): {message}"
    )


def _refusal(status: dict[str, Any], message: str, kind: str, name: str) -> str | None:
    """An admission refusal of the write to the object the request named, in a 403: a
    webhook's denial, whole (kube-apiserver passes the webhook's Status on, its message
    prefixed: vcflow's webhook refusing a delete on a cluster); else, when `details` name
    the object, what follows kube's `NewForbidden` words for it — the vcflow server's
    admission (a refused delete), a ValidatingAdmissionPolicy's. None otherwise: the token
    may not do this (RBAC says so in the same form, `User "..." cannot ...`: kept whole)."""
    if not (kind and name):
        return None
    if _WEBHOOK_DENIAL.match(message):
        return message
    found = status.get("details")
    named = found if isinstance(found, dict) else {}
    if named.get("name") != name:
        return None
    prefix = forbidden_prefix(str(named.get("group") or ""), str(named.get("kind") or ""), name)
    if not message.startswith(prefix) or message[len(prefix) :].startswith("User "):
        return None
    return message[len(prefix) :]


def _field_errors(
    status: dict[str, Any], message: str, kind: str, namespace: str, name: str
) -> list[FieldError]:
    """A 422's causes as FieldErrors (the message, when it has none)."""
    found = status.get("details") or {}
    name = name or str(found.get("name") or "")
    given = [c for c in found.get("causes") or () if isinstance(c, dict)]
    if not given:
        return [FieldError(message, "", kind, namespace, name)]
    return [
        FieldError(
            str(c.get("message") or ""),
            str(c.get("field") or ""),
            kind,
            namespace,
            name,
            reason=str(c.get("reason") or "") or Cause.INVALID,
        )
        for c in given
    ]
