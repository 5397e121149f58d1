"""The server's error answers: `ApiError`, raised by the routes and the auth middleware,
becomes the Kubernetes Status `kubeapi.status` words (the codes, reasons and the mapping
from vcflow's errors live there); a refused write's also carries its review's warnings,
which the routes send as `Warning` headers beside the Status, as kube-apiserver does.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from vcflow.api.errors import FieldError, ValidationFailed, VcflowError
from vcflow.kubeapi import status as kubestatus
from vcflow.kubeapi import warningtext
from vcflow.kubeapi.resources import APIResource


class ApiError(Exception):
    """An answer other than success, as the Status object it becomes; `warnings`, the
    texts of a refused write's warnings (the routes' `Warning` headers)."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        reason: str = "",
        details: dict[str, Any] | None = None,
        warnings: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.code, self.message = code, message
        self.reason = reason or kubestatus.REASONS.get(code, "")
        self.details = details
        self.warnings = warnings

    @classmethod
    def of_status(cls, found: dict[str, Any]) -> ApiError:
        """The error that answers a Failure Status (`kubeapi.status.failure`)."""
        code, message = int(found["code"]), str(found["message"])
        return cls(code, message, reason=str(found["reason"]), details=found.get("details"))

    def body(self) -> dict[str, Any]:
        return kubestatus.failure(self.code, self.message, reason=self.reason, details=self.details)

    def response(self, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.code, headers=headers)


def of(exc: VcflowError, resource: APIResource | None, name: str = "") -> ApiError:
    """The ApiError a vcflow error answers as, for a request on `resource`/`name`; an
    admission refusal's with the review's warnings."""
    found = ApiError.of_status(kubestatus.of_error(exc, resource, name))
    if isinstance(exc, ValidationFailed):
        found.warnings = tuple(warningtext.said(w) for w in exc.warnings)
    return found


def invalid(resource: APIResource, name: str, errors: list[FieldError]) -> ApiError:
    """Admission's refusal (`kubeapi.status.invalid`): 422 Invalid, or 403 Forbidden."""
    return ApiError.of_status(kubestatus.invalid(resource, name, errors))
