"""AdmissionReview v1 (`admission.k8s.io/v1`) as kube-apiserver sends it and wants it back:
`parse` reads a review's body strictly (`Malformed`, one line, for anything else) and
`answer` builds the response, the request's uid, apiVersion and kind echoed. Used by
`webhook.app`; what to answer is `webhook.verdict`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vcflow.admission.review import Operation
from vcflow.api import jsontext, warncap
from vcflow.kubeapi import fieldvalidation, status
from vcflow.kubeapi.fieldvalidation import Validation

API_VERSION = "admission.k8s.io/v1"
KIND = "AdmissionReview"


class Malformed(ValueError):
    """A body that is not an AdmissionReview v1 request this webhook can answer (400)."""


@dataclass(frozen=True)
class Review:
    """The fields of a review's `request` the verdict reads."""

    uid: str
    group: str
    version: str
    kind: str
    operation: Operation
    namespace: str
    name: str
    sub_resource: str = ""
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = None
    dry_run: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    username: str = ""

    @property
    def field_validation(self) -> Validation:
        """CreateOptions'/UpdateOptions' `fieldValidation` (kubectl's `--validate`); the
        API server's default, Warn, when not sent."""
        return fieldvalidation.of_api(self.options.get("fieldValidation"))


@dataclass(frozen=True)
class Verdict:
    """The answer: allowed or not; a refusal's HTTP code, reason and message (what kubectl
    prints after `admission webhook "..." denied the request: `); warnings either way."""

    allowed: bool
    code: int = 200
    reason: str = ""
    message: str = ""
    warnings: tuple[str, ...] = ()


def parse(data: bytes) -> Review:
    """The review of a request body; Malformed saying what is wrong with it."""
    try:
        body = jsontext.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise Malformed("the body is not UTF-8 text") from None
    except jsontext.Invalid as exc:
        where = f" (line {exc.line})" if exc.line is not None else ""
        raise Malformed(f"the body is not valid JSON: {exc}{where}") from None
    if not isinstance(body, dict):
        raise Malformed("the body must be a JSON object (an AdmissionReview)")
    if body.get("apiVersion") != API_VERSION or body.get("kind") != KIND:
        raise Malformed(
            f"the body must be apiVersion {API_VERSION!r} kind {KIND!r} (got "
            f"{body.get('apiVersion')!r}, {body.get('kind')!r}): list only v1 in the "
            "webhook configuration's admissionReviewVersions"
        )
    request = _mapping(body, "request", "the AdmissionReview")
    kind = _mapping(request, "kind", "request")
    operation = _text(request, "operation", required=True)
    if operation not in Operation.__members__:
        raise Malformed(
            f"request.operation {operation!r}: this webhook reviews CREATE, UPDATE and DELETE"
        )
    return Review(
        uid=_text(request, "uid", required=True),
        group=_text(kind, "group", "request.kind"),
        version=_text(kind, "version", "request.kind"),
        kind=_text(kind, "kind", "request.kind", required=True),
        operation=Operation(operation),
        namespace=_text(request, "namespace"),
        name=_text(request, "name"),
        sub_resource=_text(request, "subResource"),
        object=_object(request, "object"),
        old_object=_object(request, "oldObject"),
        dry_run=request.get("dryRun") is True,
        options=_object(request, "options") or {},
        username=_text(_object(request, "userInfo") or {}, "username", "request.userInfo"),
    )


def answer(review: Review, verdict: Verdict) -> dict[str, Any]:
    """The AdmissionReview kube-apiserver reads back (`response.uid` = the request's)."""
    response: dict[str, Any] = {"uid": review.uid, "allowed": verdict.allowed}
    if not verdict.allowed:
        response["status"] = status.result(verdict.code, verdict.message, reason=verdict.reason)
    if verdict.warnings:
        response["warnings"] = warncap.capped(verdict.warnings)  # (kube caps them too)
    return {"apiVersion": API_VERSION, "kind": KIND, "response": response}


def _mapping(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    found = data.get(key)
    if not isinstance(found, dict):
        raise Malformed(f"{where} has no {key!r} object")
    return found


def _object(data: dict[str, Any], key: str) -> dict[str, Any] | None:
    found = data.get(key)
    if found is None:
        return None
    if not isinstance(found, dict):
        raise Malformed(f"request.{key} must be an object or null")
    return found


def _text(data: dict[str, Any], key: str, where: str = "request", *, required: bool = False) -> str:
    found = data.get(key)
    if found is None and not required:
        return ""
    if not isinstance(found, str) or (required and not found):
        what = "a non-empty string" if required else "a string"
        raise Malformed(f"{where}.{key} must be {what}")
    return found
