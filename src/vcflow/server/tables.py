"""meta.k8s.io Table responses: what `kubectl get` asks for (`Accept:
application/json;as=Table;v=v1;g=meta.k8s.io`) and prints, with the kind's printer columns
(`api.columns`, the same `vcflow get` prints) and rows carrying the object, its metadata or
nothing (`?includeObject=Object|Metadata|None`). The app factory takes `view` (get and
list answers) and `watch_view` (each watch event's object); both leave a request that asks
for no Table alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from vcflow.api import clock, columns, resources
from vcflow.api.meta import Resource

GROUP = "meta.k8s.io"
#: what `includeObject` may be; kube-apiserver's default is Metadata
INCLUDE = ("Object", "Metadata", "None")
_VERSIONS = ("v1", "v1beta1")


class BadInclude(ValueError):
    """`includeObject` is none of Object, Metadata, None (a 400 BadRequest)."""


def table_version(accept: str) -> str | None:
    """`v1` (or `v1beta1`) when the Accept header asks for a Table, first offer first;
    None when it does not (the handler answers the object or list itself)."""
    for offer in accept.split(","):
        parts = [p.strip() for p in offer.split(";")]
        if parts[0] not in ("application/json", "*/*", "application/*"):
            continue
        params = dict(p.partition("=")[::2] for p in parts[1:])
        if params.get("as") == "Table" and params.get("g") == GROUP:
            if params.get("v") in _VERSIONS:
                return params["v"]
    return None


def wants_table(request: Request) -> str | None:
    """`table_version` of the request's Accept header."""
    return table_version(request.headers.get("accept", ""))


def include_object(query: Mapping[str, str]) -> str:
    """The `includeObject` query parameter (default Metadata); BadInclude otherwise."""
    value = query.get("includeObject") or "Metadata"
    if value not in INCLUDE:
        raise BadInclude(f'includeObject must be one of Object, Metadata or None, not "{value}"')
    return value


def column_definitions(resource: resources.APIResource) -> list[dict[str, Any]]:
    return [
        {
            "name": col.name,
            "type": col.type,
            "format": col.format,
            "description": col.description,
            "priority": col.priority,
        }
        for col in columns.of(resource)
    ]


def _row(
    obj: Resource, cols: Sequence[columns.Column], include: str, now: datetime, version: str
) -> dict[str, Any]:
    row: dict[str, Any] = {"cells": columns.cells(obj, cols, now)}
    if include == "Object":
        row["object"] = obj.to_dict()
    elif include == "Metadata":
        row["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": f"{GROUP}/{version}",
            "metadata": obj.metadata.to_dict(),
        }
    return row


def table(
    resource: resources.APIResource,
    objects: Sequence[Resource],
    *,
    include: str = "Metadata",
    now: datetime,
    version: str = "v1",
    list_meta: Mapping[str, str] | None = None,
    headers: bool = True,
) -> dict[str, Any]:
    """The Table of `objects` (one for a get, all for a list). `list_meta`: the list's
    `resourceVersion` and `continue`; `headers=False` leaves the column definitions out, as
    kube-apiserver does for every watch event but the first."""
    cols = columns.of(resource)
    return {
        "kind": "Table",
        "apiVersion": f"{GROUP}/{version}",
        "metadata": dict(list_meta or {}),
        "columnDefinitions": column_definitions(resource) if headers else [],
        "rows": [_row(obj, cols, include, now, version) for obj in objects],
    }


def view(
    request: Request, resource: resources.APIResource, body: dict[str, Any]
) -> Response | None:
    """The Table of a get or list answer `body` (the object, or the `<Kind>List`) when the
    request asks for one; None otherwise. A bad `includeObject` is a 400 Status."""
    version = wants_table(request)
    if version is None:
        return None
    try:
        include = include_object(request.query_params)
    except BadInclude as exc:
        return _bad_request(str(exc))
    listed = body.get("kind", "").endswith("List") and "items" in body
    items = body["items"] if listed else [body]
    meta = dict(body.get("metadata") or {}) if listed else {}
    if not listed:
        meta = {"resourceVersion": (body.get("metadata") or {}).get("resourceVersion", "")}
    found = table(
        resource,
        [resource.model.from_dict(item) for item in items],
        include=include,
        now=clock.SystemClock().now(),
        version=version,
        list_meta=meta,
    )
    return JSONResponse(found)


def watch_view(
    request: Request, resource: resources.APIResource
) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """For a watch that asks for Tables: each event's object as a one-row Table, the
    column definitions on the first (kubectl get -w prints the header once). None when
    the watch asks for objects; a bad `includeObject` sends the metadata."""
    version = wants_table(request)
    if version is None:
        return None
    try:
        include = include_object(request.query_params)
    except BadInclude:
        include = "Metadata"
    sent = [False]

    def convert(data: dict[str, Any]) -> dict[str, Any]:
        obj = resource.model.from_dict(data)
        first, sent[0] = not sent[0], True
        now = clock.SystemClock().now()
        return table(resource, [obj], include=include, now=now, version=version, headers=first)

    return convert


def _bad_request(message: str) -> Response:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "BadRequest",
        "code": 400,
    }
    return JSONResponse(body, status_code=400)
