"""meta.k8s.io Table responses: what `kubectl get` asks for (`Accept:
application/json;as=Table;v=v1;g=meta.k8s.io`) and prints, with the kind's printer columns
(`kubeapi.columns`, the same `vcflow get` prints) and rows carrying the object, its metadata or
nothing (`?includeObject=Object|Metadata|None`). The app factory takes `view` (get and
list answers) and `watch_view` (each watch event's object); both leave a request that asks
for no Table alone.

The cells of vcflow's own kinds (JobFlow, JobTemplate) are kube-apiserver's for their CRDs
(`kubeapi.crds.printer_columns`): a CRD column is a JSONPath, whose value a `string` column
prints as is, or as compact JSON when it is no string (a list), and an absent field is a
null cell. So `kubectl get jf -o wide` shows the same here as on a cluster: JOBS is
`.status.completedJobs` (`["f-a","f-b"]`, blank before any), not the `1/2` `vcflow get`
computes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from vcflow.api import clock
from vcflow.api.meta import Resource
from vcflow.kubeapi import columns, crds, resources
from vcflow.kubeapi import status as kubestatus

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
    """The columns' definitions; a CRD column's description is its CRD's."""
    described = {
        c["name"]: c["description"]
        for c in (crds.printer_columns(resource) if resource in crds.KINDS else ())
        if c.get("description")
    }
    return [
        {
            "name": col.name,
            "type": col.type,
            "format": col.format,
            "description": described.get(col.name, col.description),
            "priority": col.priority,
        }
        for col in columns.of(resource)
    ]


def _crd_paths(resource: resources.APIResource) -> dict[str, tuple[str, str]]:
    """Column name → (type, JSONPath) of the printer columns of `resource`'s CRD; empty
    for a kind vcflow has no CRD for."""
    if resource not in crds.KINDS:
        return {}
    return {c["name"]: (c["type"], c["jsonPath"]) for c in crds.printer_columns(resource)}


def _at(data: Any, path: str) -> Any:
    """The value at a simple JSONPath (`.status.completedJobs`), None when absent."""
    for key in path.lstrip(".").split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _printed(value: Any) -> Any:
    """A `string` CRD column's cell, as kube-apiserver's JSONPath printer writes it."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def row_cells(
    resource: resources.APIResource, obj: Resource, cols: Sequence[columns.Column], now: datetime
) -> list[Any]:
    """One row's cells: `vcflow get`'s, but for a CRD column that is not a date, the value
    its JSONPath finds (`_printed`), as kube-apiserver's table convertor gives it."""
    found: list[Any] = list(columns.cells(obj, cols, now))
    paths = _crd_paths(resource)
    if not paths:
        return found
    data = obj.to_dict()
    for index, col in enumerate(cols):
        kind, path = paths.get(col.name, ("date", ""))
        if kind == "string":
            found[index] = _printed(_at(data, path))
    return found


def _row(
    resource: resources.APIResource,
    obj: Resource,
    cols: Sequence[columns.Column],
    include: str,
    now: datetime,
    version: str,
) -> dict[str, Any]:
    row: dict[str, Any] = {"cells": row_cells(resource, obj, cols, now)}
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
        "rows": [_row(resource, obj, cols, include, now, version) for obj in objects],
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
    return JSONResponse(kubestatus.failure(400, message), status_code=400)
