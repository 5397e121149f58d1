"""The server's OpenAPI documents, from the models (`kubeapi.schemas`): `/openapi/v2` (one
Swagger 2.0 document, as JSON or as gnostic's protobuf, `openapi_pb`) and `/openapi/v3`
(the index of group versions) with `/openapi/v3/api/v1` and `/openapi/v3/apis/G/V`
(OpenAPI 3.0 per group version). kubectl reads them for `explain`, and for `apply`'s
validation: every PATCH operation lists the `fieldValidation` parameter, so kubectl leaves
validation to the server. A DELETE answers (200, 202) what the server sends (`objects.delete`),
as kube-apiserver's documents say: the Pod for a Pod, else a `Status`
(`io.k8s.apimachinery.pkg.apis.meta.v1.Status`, defined here as kube defines it). The app
factory mounts `routes()`.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from vcflow.kubeapi import resources, schemas
from vcflow.kubeapi import status as kubestatus
from vcflow.kubeapi.resources import APIResource
from vcflow.server import discovery, openapi_pb
from vcflow.server.objects import RETURNS_DELETED

V2_REFS = "#/definitions/"
V3_REFS = "#/components/schemas/"
_JSON = "application/json"

#: the query parameters each operation takes (kube-apiserver's, those vcflow honours)
_WRITE_PARAMS = (
    ("dryRun", "When present, indicates that modifications should not be persisted."),
    ("fieldValidation", "Ignore, Warn (default) or Strict: what to do with unknown fields."),
)
_READ_PARAMS = (
    ("labelSelector", "A selector to restrict the list of returned objects by their labels."),
    ("fieldSelector", "A selector to restrict the list of returned objects by their fields."),
    ("resourceVersion", "The resourceVersion to list or watch from."),
    ("watch", "Watch for changes to the described resources."),
    ("limit", "limit is a maximum number of responses to return for a list call."),
    ("continue", "The continue option should be set when retrieving more results."),
)


_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
STATUS = _META + "Status"
_STRING = {"type": "string"}
_INT32 = {"type": "integer", "format": "int32"}


def _status_definitions(refs: str) -> dict[str, Any]:
    """kube-apiserver's `Status` and what it refers to (`StatusDetails`, `StatusCause`,
    `ListMeta`), as its OpenAPI documents define them."""

    def ref(name: str) -> dict[str, str]:
        return {"$ref": refs + _META + name}

    return {
        _META + "ListMeta": {
            "description": "ListMeta describes metadata that synthetic resources must have.",
            "type": "object",
            "properties": {
                "continue": _STRING,
                "remainingItemCount": {"type": "integer", "format": "int64"},
                "resourceVersion": _STRING,
                "selfLink": _STRING,
            },
        },
        STATUS: {
            "description": "Status is a return value for calls that don't return other objects.",
            "type": "object",
            "properties": {
                "apiVersion": dict(schemas.ABOUT_FIELD["apiVersion"]),
                "code": {**_INT32, "description": "Suggested HTTP return code for this status."},
                "details": ref("StatusDetails"),
                "kind": dict(schemas.ABOUT_FIELD["kind"]),
                "message": _STRING,
                "metadata": ref("ListMeta"),
                "reason": _STRING,
                "status": {**_STRING, "description": 'One of: "Success" or "Failure".'},
            },
            "x-kubernetes-group-version-kind": [{"group": "", "kind": "Status", "version": "v1"}],
        },
        _META + "StatusCause": {
            "description": "StatusCause provides more information about an api.Status failure.",
            "type": "object",
            "properties": {"field": _STRING, "message": _STRING, "reason": _STRING},
        },
        _META + "StatusDetails": {
            "description": "StatusDetails is a set of additional properties that MAY be set by "
            "the server to provide additional information about a response.",
            "type": "object",
            "properties": {
                "causes": {
                    "type": "array",
                    "items": ref("StatusCause"),
                    "x-kubernetes-list-type": "atomic",
                },
                "group": _STRING,
                "kind": _STRING,
                "name": _STRING,
                "retryAfterSeconds": _INT32,
                "uid": _STRING,
            },
        },
    }


def _definitions(refs: str) -> dict[str, Any]:
    """The served kinds' definitions and kube's Status, by name."""
    return {**schemas.definitions(refs), **_status_definitions(refs)}


def _operations(resource: APIResource) -> dict[str, dict[str, tuple[str, bool]]]:
    """path → method → (kube's action name, takes the write parameters)."""
    base = resource.path("{namespace}")
    item = base + "/{name}"
    paths = {
        base: {"get": ("list", False), "post": ("post", True)},
        item: {
            "get": ("get", False),
            "put": ("put", True),
            "patch": ("patch", True),
            "delete": ("delete", True),
        },
    }
    if "status" in resource.subresources:
        paths[item + "/status"] = {
            "get": ("get", False),
            "put": ("put", True),
            "patch": ("patch", True),
        }
    return paths


def _parameter(name: str, where: str, about: str, *, v3: bool) -> dict[str, Any]:
    param: dict[str, Any] = {"name": name, "in": where, "description": about}
    if where == "path":
        param["required"] = True
    if v3:
        param["schema"] = {"type": "string"}
    else:
        param["type"] = "string"
        param["uniqueItems"] = True
    return param


def _paths(served: list[APIResource], *, v3: bool) -> dict[str, Any]:
    refs = V3_REFS if v3 else V2_REFS
    out: dict[str, Any] = {}
    for resource in served:
        gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
        ref = {"$ref": refs + schemas.definition_name(resource)}
        for path, methods in _operations(resource).items():
            entry: dict[str, Any] = {
                "parameters": [
                    _parameter(p[1:-1], "path", f"the object's {p[1:-1]}", v3=v3)
                    for p in path.split("/")
                    if p.startswith("{")
                ]
            }
            for method, (action, writes) in methods.items():
                table = _WRITE_PARAMS if writes else _READ_PARAMS if action == "list" else ()
                answers = {"200": "OK"}
                answer = ref
                if action == "delete":  # (kube's: 202 when finalizers hold it)
                    answers["202"] = "Accepted"
                    if resources.STORED_AS.get(resource, resource) not in RETURNS_DELETED:
                        answer = {"$ref": refs + STATUS}
                entry[method] = {
                    "operationId": f"{action}{resource.kind}",
                    "parameters": [_parameter(n, "query", a, v3=v3) for n, a in table],
                    "responses": {
                        code: _response(about, answer, v3=v3) for code, about in answers.items()
                    },
                    "x-kubernetes-action": action,
                    "x-kubernetes-group-version-kind": gvk,
                }
            out[path] = entry
    return out


def _response(about: str, schema: dict[str, str], *, v3: bool) -> dict[str, Any]:
    if v3:
        return {"description": about, "content": {_JSON: {"schema": schema}}}
    return {"description": about, "schema": schema}


def _reachable(defs: dict[str, Any], roots: list[str], prefix: str) -> dict[str, Any]:
    """The definitions `roots` refer to, transitively (a group version's document holds
    only its own)."""
    keep: dict[str, Any] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep[name] = defs[name]
        text = json.dumps(defs[name])
        todo += [part.split('"')[0] for part in text.split(prefix)[1:]]
    return dict(sorted(keep.items()))


def _info() -> dict[str, str]:
    return {"title": "Kubernetes", "version": discovery.version_info()["gitVersion"]}


@functools.cache
def _v2_document() -> dict[str, Any]:
    return {
        "swagger": "2.0",
        "info": _info(),
        "paths": _paths(list(resources.ALL), v3=False),
        "definitions": _definitions(V2_REFS),
    }


@functools.cache
def v2() -> bytes:
    """The Swagger 2.0 document of every served kind, JSON."""
    return json.dumps(_v2_document(), separators=(",", ":")).encode()


@functools.cache
def v2_protobuf() -> bytes:
    """The same document as gnostic's protobuf, which client-go reads."""
    return openapi_pb.document(_v2_document())


@functools.cache
def v3(group_version: str) -> bytes | None:
    """The OpenAPI 3.0 document of `group/version` (or `v1`); None if none is served."""
    served = resources.group_versions().get(group_version)
    if served is None:
        return None
    paths = _paths(served, v3=True)
    roots = [schemas.definition_name(r) for r in served]
    roots += [ref.split('"')[0] for ref in json.dumps(paths).split(V3_REFS)[1:]]  # Status
    doc = {
        "openapi": "3.0.0",
        "info": _info(),
        "paths": paths,
        "components": {"schemas": _reachable(_definitions(V3_REFS), roots, V3_REFS)},
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def _v3_path(group_version: str) -> str:
    return f"api/{group_version}" if "/" not in group_version else f"apis/{group_version}"


@functools.cache
def v3_index() -> bytes:
    """`/openapi/v3`: each group version's document, by a URL that names its hash."""
    paths = {}
    for group_version in resources.group_versions():
        body = v3(group_version) or b""
        digest = hashlib.sha512(body).hexdigest().upper()
        path = _v3_path(group_version)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return json.dumps({"paths": paths}, separators=(",", ":")).encode()


def _media_type(request: Request, *, protobuf: bool) -> str | None:
    """The first type of the Accept header this document is served as: JSON, or (for v2)
    gnostic's protobuf; None for none of them (406 Not Acceptable)."""
    accept = request.headers.get("accept", "")
    if not accept:
        return _JSON
    for offer in accept.split(","):
        kind = offer.split(";")[0].strip()
        if kind in (_JSON, "*/*", "application/*"):
            return _JSON
        if protobuf and kind == openapi_pb.MEDIA_TYPE:
            return kind
    return None


def _not_acceptable() -> Response:
    message = "the server was unable to respond with a content type that the client supports"
    return Response(json.dumps(kubestatus.failure(406, message)), status_code=406, media_type=_JSON)


def _document(request: Request, body: bytes, protobuf: bytes | None = None) -> Response:
    kind = _media_type(request, protobuf=protobuf is not None)
    if kind is None:
        return _not_acceptable()
    if kind == _JSON:
        response = Response(body, media_type=_JSON)
    else:
        assert protobuf is not None
        response = Response(protobuf, media_type=openapi_pb.CONTENT_TYPE)
    response.headers["vary"] = "Accept"
    if "hash" in request.query_params:
        response.headers["cache-control"] = "public, immutable"
    return response


async def _v2(request: Request) -> Response:
    return _document(request, v2(), v2_protobuf())


async def _v3_index(request: Request) -> Response:
    return _document(request, v3_index())


async def _v3_core(request: Request) -> Response:
    body = v3(request.path_params["version"])
    return discovery.not_found(request.url.path) if body is None else _document(request, body)


async def _v3_group(request: Request) -> Response:
    params = request.path_params
    body = v3(f"{params['group']}/{params['version']}")
    return discovery.not_found(request.url.path) if body is None else _document(request, body)


def routes() -> list[Route]:
    return [
        Route("/openapi/v2", _v2, methods=["GET"]),
        Route("/openapi/v3", _v3_index, methods=["GET"]),
        Route("/openapi/v3/api/{version}", _v3_core, methods=["GET"]),
        Route("/openapi/v3/apis/{group}/{version}", _v3_group, methods=["GET"]),
    ]
