"""What a request says, read strictly before anything is looked up: the path's namespace
and name (DNS-1123, as they become keys and paths), the query's options (selectors, paging,
watch, dryRun, fieldValidation, delete options) and the body (size-limited, JSON only, as
`api.jsontext` reads it). Every refusal is an ApiError (400, 413, 415). Used by the routes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic
from starlette.requests import Request

from vcflow.api import bounds, jsontext, loading, names
from vcflow.api.errors import FieldError, Origin
from vcflow.api.meta import Resource
from vcflow.api.modelerrors import schema_errors
from vcflow.kubeapi import fieldvalidation
from vcflow.kubeapi.fieldvalidation import Validation
from vcflow.kubeapi.resources import APIResource
from vcflow.server import crosssite, fields, protobody
from vcflow.server.status import ApiError, invalid
from vcflow.store.base import InvalidSelector, Selector

#: the most a request body may hold: an object at the store's cap, and room for the rest
MAX_BODY = bounds.MAX_OBJECT_BYTES + 512 * 1024
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"  # merged as JSON merge, for CRDs
JSON_PATCH = "application/json-patch+json"  # RFC 6902: `kubectl patch --type json`
PROPAGATIONS = ("Orphan", "Background", "Foreground")


def path_names(request: Request) -> tuple[str | None, str]:
    """(namespace or None for all, name or "") from the path; 400 unless DNS-1123."""
    params = request.path_params
    namespace = params.get("namespace")
    name = params.get("name", "")
    if namespace is not None:
        check_name("namespace", namespace, names.dns1123_label_errors(namespace))
    if name:
        check_name("name", name, names.dns1123_subdomain_errors(name))
    return namespace, name


def object_names(request: Request) -> tuple[str, str]:
    """(namespace, name) of a request on one object: its route holds both, or only the
    name for a cluster-scoped object (stored under namespace `""`)."""
    namespace, name = path_names(request)
    return namespace or "", name


def check_name(what: str, value: str, problems: list[str]) -> None:
    if problems or "\n" in value:
        why = "; ".join(problems) or "it holds a line break"
        raise ApiError(400, f"invalid {what} {value!r}: {why}")


@dataclass(frozen=True)
class ListOptions:
    labels: Selector
    fields: fields.FieldSelector
    limit: int
    token: str
    watch: bool
    resource_version: str
    timeout: float | None
    bookmarks: bool
    #: `sendInitialEvents` (kube's watch-list): None when not given
    initial_events: bool | None = None


def list_options(request: Request, resource: APIResource) -> ListOptions:
    query = request.query_params
    try:
        labels = Selector.parse(query.get("labelSelector", ""))
    except InvalidSelector as exc:
        raise ApiError(400, f"unable to parse requirement: {exc}") from None
    timeout = _integer(query, "timeoutSeconds")
    return ListOptions(
        labels=labels,
        fields=fields.parse(query.get("fieldSelector", ""), resource.kind),
        limit=_integer(query, "limit") or 0,
        token=query.get("continue", ""),
        watch=_boolean(query, "watch"),
        resource_version=query.get("resourceVersion", ""),
        timeout=float(timeout) if timeout else None,
        bookmarks=_boolean(query, "allowWatchBookmarks"),
        initial_events=_boolean(query, "sendInitialEvents")
        if "sendInitialEvents" in query
        else None,
    )


def _integer(query: Any, key: str) -> int | None:
    text = query.get(key)
    if text is None or text == "":
        return None
    if not text.isdigit() or len(text) > 12:
        raise ApiError(400, f"{key}: {text!r} is not a non-negative integer")
    return int(text)


def _boolean(query: Any, key: str) -> bool:
    text = query.get(key, "false")
    if text in ("true", "1", "True"):
        return True
    if text in ("false", "0", "False", ""):
        return False
    raise ApiError(400, f"{key}: {text!r} is not a boolean")


@dataclass(frozen=True)
class WriteOptions:
    dry_run: bool
    validation: Validation


def write_options(request: Request) -> WriteOptions:
    query = request.query_params
    dry = query.getlist("dryRun")
    if any(value != "All" for value in dry):
        raise ApiError(400, f"dryRun: {', '.join(dry)!r}: only All is supported")
    validation = query.get("fieldValidation", "Warn") or "Warn"
    allowed = fieldvalidation.API_VALUES
    if validation not in allowed:
        raise ApiError(400, f"fieldValidation: {validation!r}: must be one of {', '.join(allowed)}")
    return WriteOptions(bool(dry), fieldvalidation.of_api(validation))


@dataclass(frozen=True)
class DeleteOptions:
    force: bool
    propagation: str
    preconditions_rv: str
    dry_run: bool


async def delete_options(request: Request) -> DeleteOptions:
    """From the query and the optional DeleteOptions body (the body's values win)."""
    query = request.query_params
    given = await _optional_body(request) or {}
    grace: Any = given.get("gracePeriodSeconds")
    if grace is None:
        grace = _integer(query, "gracePeriodSeconds")
    propagation = given.get("propagationPolicy") or query.get("propagationPolicy") or "Background"
    if propagation not in PROPAGATIONS:
        raise ApiError(400, f"propagationPolicy: {propagation!r} is not one of {PROPAGATIONS}")
    pre = given.get("preconditions") or {}
    rv = pre.get("resourceVersion", "") if isinstance(pre, dict) else ""
    dry = given.get("dryRun") or query.getlist("dryRun")
    return DeleteOptions(grace == 0, str(propagation), str(rv or ""), bool(dry))


async def body(
    request: Request,
    accepted: tuple[str, ...] = (JSON,),
    *,
    untyped: bool = False,
) -> Any:
    """The body as JSON, at most MAX_BODY bytes (413), of an accepted type (415). A body
    without a Content-Type is read as JSON (as kube does: the official Python client sends
    none on create) unless a browser sent it (`crosssite.from_browser`), which is refused:
    a web page's form or `no-cors` fetch can POST a body of no type, but no JSON type
    without the CORS preflight this server never grants. `untyped`: no Content-Type is
    fine from anyone (a DELETE, which needs a preflight whatever its type). Where JSON is
    accepted, so is the protobuf of the built-in objects kubectl 1.33+ sends that way
    (`protobody`: ConfigMap, Secret, access reviews), read as the JSON it means."""
    given = request.headers.get("content-type")
    kind = given.split(";")[0].strip().lower() if given is not None else ""
    protobuf = kind == protobody.MEDIA_TYPE and JSON in accepted
    if kind and kind not in accepted and not protobuf:
        raise _unsupported(accepted)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
        raise too_large()
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise too_large()
    if not kind and not untyped and data.strip() and crosssite.from_browser(request.headers):
        raise _unsupported(accepted)
    if protobuf:
        try:
            return protobody.decode(bytes(data))
        except protobody.Invalid as exc:
            raise ApiError(415, str(exc)) from None
    return parse_json(bytes(data))


def content_type(request: Request) -> str:
    """The request's media type, lower-cased, without parameters ("" when none)."""
    return (request.headers.get("content-type") or "").split(";")[0].strip().lower()


def _unsupported(accepted: tuple[str, ...]) -> ApiError:
    return ApiError(
        415,
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
    )


async def _optional_body(request: Request) -> dict[str, Any] | None:
    """A DELETE's DeleteOptions, if it sent one."""
    found = await body(request, untyped=True)
    if found is None:
        return None
    if not isinstance(found, dict):
        raise ApiError(400, "the body must be a JSON object (DeleteOptions)")
    return found


def too_large() -> ApiError:
    return ApiError(413, f"the request is larger than {bounds.mib(MAX_BODY)}: too large")


def parse_json(data: bytes) -> Any:
    if not data.strip():
        return None
    try:
        return jsontext.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ApiError(400, "the body is not UTF-8 text") from None
    except jsontext.Invalid as exc:
        where = f" (line {exc.line})" if exc.line is not None else ""
        raise ApiError(400, f"the body is not valid JSON: {exc}{where}") from None


def of_type(resource: APIResource, data: Any) -> dict[str, Any]:
    """`data`, a JSON object of `resource`'s apiVersion and kind; 400 if it is not one."""
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    if data.get("apiVersion") != resource.api_version or data.get("kind") != resource.kind:
        raise ApiError(
            400,
            f"the object must be apiVersion {resource.api_version!r} kind {resource.kind!r} "
            f"(got {data.get('apiVersion')!r}, {data.get('kind')!r})",
        )
    return data


def to_object(resource: APIResource, data: Any, name: str) -> Resource:
    """The typed object of a body; 400 if it is not a `resource` object, 422 for schema
    errors (each as a cause)."""
    data = of_type(resource, data)
    if (resource.api_version, resource.kind) in loading.MODELS:
        model, errors = loading.to_model(loading.Document(data, Origin()))
        if model is None:
            raise invalid(resource, name, errors)
        return model
    try:
        return resource.model.from_dict(data)
    except pydantic.ValidationError as exc:
        errors = [FieldError(m, path) for path, _loc, m in schema_errors(exc, data)]
        raise invalid(resource, name, errors) from None
