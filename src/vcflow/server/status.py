"""Kubernetes `Status` objects, the body of every error the server answers, and the map
from vcflow's error tree (`api.errors`) to their codes and reasons: ValidationFailed is
422 Invalid with one cause per FieldError (403 Forbidden when none names a field),
NotFound 404, AlreadyExists and Conflict 409, Expired 410, other input errors 400. Used by
the routes and the auth middleware.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from vcflow.api.errors import (
    AlreadyExists,
    Conflict,
    FieldError,
    InputError,
    NotFound,
    ValidationFailed,
    VcflowError,
)
from vcflow.api.resources import APIResource
from vcflow.store.base import Expired

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
    504: "Timeout",
}


class ApiError(Exception):
    """An answer other than success, as the Status object it becomes."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        reason: str = "",
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code, self.message = code, message
        self.reason = reason or REASONS.get(code, "")
        self.details = details

    def body(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            found["details"] = self.details
        return found

    def response(self, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.code, headers=headers)


def success(resource: APIResource, name: str) -> dict[str, Any]:
    """The Status a DELETE of an object without a body to return answers (kube's form)."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": _details(resource, name, resource.plural),
    }


def of(exc: VcflowError, resource: APIResource | None, name: str = "") -> ApiError:
    """The ApiError a vcflow error answers as, for a request on `resource`/`name`."""
    if isinstance(exc, Expired):
        return ApiError(410, str(exc), reason="Expired")
    if resource is None:
        return ApiError(400 if isinstance(exc, InputError) else 500, str(exc))
    qualified = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
    details = _details(resource, name, resource.plural)
    if isinstance(exc, NotFound):
        return ApiError(404, f'{qualified} "{name}" not found', details=details)
    if isinstance(exc, AlreadyExists):
        message = f'{qualified} "{name}" already exists'
        return ApiError(409, message, reason="AlreadyExists", details=details)
    if isinstance(exc, Conflict):
        message = (
            f'Operation cannot be fulfilled on {qualified} "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again"
        )
        return ApiError(409, message, reason="Conflict", details=details)
    if isinstance(exc, ValidationFailed):
        return invalid(resource, name, exc.errors)
    if isinstance(exc, InputError):
        return ApiError(400, str(exc))
    return ApiError(500, str(exc))


def invalid(resource: APIResource, name: str, errors: list[FieldError]) -> ApiError:
    """422 Invalid: `Kind.group "name" is invalid: <each error>; <...>`, a cause for each.
    A refusal about no field (a DELETE review's) is kube admission's 403 Forbidden,
    `plural.group "name" is forbidden: <each error>`: kubectl prints a 422's causes as
    `field: message`, which a cause without a field would make `: message`."""
    lines = [e.bare() for e in errors]
    if errors and not any(e.path for e in errors):
        resource_name = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
        message = f'{resource_name} "{name}" is forbidden: ' + "; ".join(lines)
        return ApiError(403, message, details=_details(resource, name, resource.plural))
    kind = f"{resource.kind}.{resource.group}" if resource.group else resource.kind
    details = _details(resource, name, resource.kind)
    details["causes"] = [
        {"reason": "FieldValueInvalid", "message": e.bare(path=False), "field": e.path}
        for e in errors
    ]
    message = f'{kind} "{name}" is invalid: ' + "; ".join(lines)
    return ApiError(422, message, details=details)


def _details(resource: APIResource, name: str, kind: str) -> dict[str, Any]:
    found: dict[str, Any] = {"name": name, "group": resource.group, "kind": kind}
    if not name:
        del found["name"]
    return found
