"""Kubernetes `Status` answers as vcflow's error tree, keeping the server's message, and
admission warnings (`Warning` headers) as FieldErrors. Used by `store` after each request.

`Error from server (Reason): message` is how kubectl prints a Status; the errors say it the
same way, but for NotFound (the CLI names the missing object itself), 422 Invalid (one
FieldError per cause, so the CLI prints one line per problem, as embedded), an admission
refusal in a 403 and a write too large to store (etcd's 500, a 413), which are
ValidationFailed as the embedded store's refusals are.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vcflow.api import bounds
from vcflow.api.errors import (
    AlreadyExists,
    Conflict,
    FieldError,
    NotFound,
    StoreError,
    ValidationFailed,
    VcflowError,
)
from vcflow.kubestore.client import Response
from vcflow.store.base import Expired


class Unauthorized(StoreError):
    """401: no token, or a wrong one."""


class Forbidden(StoreError):
    """403: the token may not do this."""


def status_of(response: Response) -> dict[str, Any]:
    """The Status object of an error answer ({} when the body is not one)."""
    try:
        found = json.loads(response.data)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def error_for(
    response: Response, *, kind: str = "", namespace: str = "", name: str = ""
) -> VcflowError:
    """The vcflow error of a failed request about object `kind namespace/name`."""
    status = status_of(response)
    return error_of_status(
        status, response.status, response.data, kind=kind, namespace=namespace, name=name
    )


def error_of_status(
    status: dict[str, Any],
    code: int,
    data: bytes = b"",
    *,
    kind: str = "",
    namespace: str = "",
    name: str = "",
) -> VcflowError:
    """The vcflow error of a Status object (an answer's body, or a watch's ERROR event)."""
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or data.decode("utf-8", "replace").strip() or code)
    code = int(status.get("code") or code)
    said = f"Error from server ({reason or _REASONS.get(code, 'Unknown')}): {message}"
    if code == 401:
        return Unauthorized("error: You must be logged in to the server (Unauthorized)")
    if code == 403:
        refused = _refusal(message, kind, name)
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
        return ValidationFailed(_causes(status, message, kind, namespace, name))
    if code == 413 or (code == 500 and _ETCD_TOO_LARGE in message):
        return ValidationFailed([FieldError(_too_large(message), "", kind, namespace, name)])
    return StoreError(said)


#: etcd's refusal of a request past its limit (--max-request-bytes, 1.5 MiB by default),
#: which kube-apiserver answers as a 500 InternalError carrying that text
_ETCD_TOO_LARGE = "etcdserver: request is too large"


def _too_large(message: str) -> str:
    """A write refused for its size — by etcd (a 500) or by the server's body limit (413):
    what the embedded store says of an object past `bounds.MAX_OBJECT_BYTES`, and the
    server's words."""
    return (
        f"the object is more than the Kubernetes API stores (etcd's default limit: "
        f"{bounds.MAX_OBJECT_BYTES:,} (1.5 MiB) as JSON, with what the server adds): {message}"
    )


def _refusal(message: str, kind: str, name: str) -> str | None:
    """An admission refusal of the write to the object the request named, in a 403: what
    follows `<resource> "<name>" is forbidden: ` — vcflow server's admission (a refused
    delete), a ValidatingAdmissionPolicy's — or the whole message of a webhook's denial
    (`admission webhook "<webhook>" denied the request: ...`, as kube-apiserver words it:
    vcflow's webhook refusing a delete on a cluster); else None (the token may not do
    this: a cluster's RBAC says so in the first form, and is kept whole)."""
    if kind and name and _WEBHOOK_DENIAL.match(message):
        return message
    _head, sep, rest = message.partition(f'"{name}" is forbidden: ')
    if not (sep and kind and name) or rest.startswith("User "):
        return None
    return rest


_WEBHOOK_DENIAL = re.compile(r'admission webhook "[^"]*" denied the request')


_REASONS = {
    400: "BadRequest",
    405: "MethodNotAllowed",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    500: "InternalError",
    503: "ServiceUnavailable",
}


def _causes(
    status: dict[str, Any], message: str, kind: str, namespace: str, name: str
) -> list[FieldError]:
    details = status.get("details") or {}
    name = name or str(details.get("name") or "")
    causes = [c for c in details.get("causes") or () if isinstance(c, dict)]
    if not causes:
        return [FieldError(message, "", kind, namespace, name)]
    return [
        FieldError(str(c.get("message") or ""), str(c.get("field") or ""), kind, namespace, name)
        for c in causes
    ]


_PATH = re.compile(r"^[A-Za-z][\w.\-]*(\[[^\]]*\][\w.\-]*)*$")


def warning_of(text: str, *, kind: str, namespace: str, name: str) -> FieldError:
    """An admission warning's text as the FieldError admission made of it: the object the
    server names in front (`Kind ns/name: `) and a leading field path are taken apart
    again, so the CLI can point at the manifest line as it does embedded."""
    prefix = f"{kind} {namespace}/{name}: "
    rest = text[len(prefix) :] if text.startswith(prefix) else text
    head, sep, tail = rest.partition(": ")
    if sep and _PATH.match(head):
        return FieldError(tail, head, kind, namespace, name, warning=True)
    return FieldError(rest, "", kind, namespace, name, warning=True)
