"""The events API (`/apis/events.k8s.io/v1/.../events`) served from the core v1 Events'
storage, as kube-apiserver serves both groups from one: each request is turned into the
core resource's (`objects`, `listing`, `watching` on `resources.EVENTS`) and each object
answered converted (`kubeapi.eventsv1`); a create is checked as kube checks an events API
create, field selectors take its names (`regarding.name`). Mounted by `app.create_app`.
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute

from vcflow.api.errors import Conflict, ValidationFailed
from vcflow.kubeapi import eventsv1, resources
from vcflow.server import listing, objects, requests, watching
from vcflow.server.routes import PATCH_TYPES, Api, _not_allowed, _route, _verb, _written

SERVED = resources.EVENTS_V1
STORED = resources.EVENTS


def routes(api: Api) -> list[BaseRoute]:
    collection = f"{SERVED.prefix}/namespaces/{{namespace}}/{SERVED.plural}"
    return [
        _route(api, SERVED, f"{SERVED.prefix}/{SERVED.plural}", _collection),
        _route(api, SERVED, collection, _collection),
        _route(api, SERVED, collection + "/{name}", _item),
    ]


def _core_request(request: Request) -> Request:
    """The request with its field selector in core v1's names."""
    query = parse_qsl(request.scope.get("query_string", b"").decode("latin-1"), True)
    moved = []
    for key, value in query:
        if key == "fieldSelector":
            terms = []
            for term in value.split(","):
                head, op, rest = _split_term(term)
                terms.append(eventsv1.field_to_core(head.strip()) + op + rest)
            value = ",".join(terms)
        moved.append((key, value))
    return Request({**request.scope, "query_string": urlencode(moved).encode()}, request.receive)


def _split_term(term: str) -> tuple[str, str, str]:
    for op in ("!=", "==", "="):
        head, found, rest = term.partition(op)
        if found:
            return head, op, rest
    return term, "", ""


def _list(body: dict[str, Any]) -> dict[str, Any]:
    return {
        **body,
        "apiVersion": SERVED.api_version,
        "kind": "EventList",
        "items": [eventsv1.to_v1(item) for item in body.get("items") or ()],
    }


def _answer(written: objects.Written) -> Response:
    return _written(objects.Written(eventsv1.to_v1(written.object), written.code, written.warnings))


def _checked_core(data: Any) -> dict[str, Any]:
    """A body of the events API as a core v1 Event; 400 if it is not one."""
    return eventsv1.to_core(requests.of_type(SERVED, data))


async def _collection(request: Request, resource: Any, api: Api) -> Response:
    request = _core_request(request)
    namespace, _ = requests.path_names(request)
    if request.method == "GET":
        options = requests.list_options(request, STORED)
        if options.watch:
            _verb(request, "watch")
            await watching.wait_fresh(api.reader, options)
            events = watching.stream(
                api.reader, STORED, namespace, options, api.stopping.is_set, eventsv1.to_v1
            )
            return StreamingResponse(events, media_type="application/json")
        _verb(request, "list")
        body = await run_in_threadpool(listing.list_body, api.reader, STORED, namespace, options)
        return JSONResponse(_list(body))
    if request.method == "POST" and namespace is not None:
        _verb(request, "create")
        wanted = requests.write_options(request)
        data = await requests.body(request)
        errors = eventsv1.create_errors(data) if isinstance(data, dict) else []
        if errors:
            raise ValidationFailed(errors)
        core = _checked_core(data)
        written = await run_in_threadpool(
            objects.create, api.store, STORED, namespace, core, wanted
        )
        return _answer(written)
    raise _not_allowed(request)


async def _item(request: Request, resource: Any, api: Api) -> Response:
    namespace, name = requests.object_names(request)
    if request.method == "GET":
        _verb(request, "get")
        body = await run_in_threadpool(objects.get, api.reader, STORED, namespace, name)
        return JSONResponse(eventsv1.to_v1(body))
    if request.method == "DELETE":
        _verb(request, "delete")
        delete = await requests.delete_options(request)
        body = await run_in_threadpool(
            functools.partial(objects.delete, shown=resources.EVENTS_V1),
            api.store,
            STORED,
            namespace,
            name,
            delete,
        )
        return JSONResponse(body if body.get("kind") == "Status" else eventsv1.to_v1(body))
    options = requests.write_options(request)
    if request.method == "PUT":
        _verb(request, "update")
        core = _checked_core(await requests.body(request))
        written = await run_in_threadpool(
            objects.replace, api.store, STORED, namespace, name, core, options
        )
        return _answer(written)
    if request.method == "PATCH":
        _verb(request, "patch")
        patch = await requests.body(request, PATCH_TYPES)
        listed = requests.content_type(request) == requests.JSON_PATCH
        written = await run_in_threadpool(_patch, api, namespace, name, patch, options, listed)
        return _answer(written)
    raise _not_allowed(request)


def _patch(
    api: Api,
    namespace: str,
    name: str,
    patch: Any,
    options: requests.WriteOptions,
    json_patch: bool = False,
) -> objects.Written:
    """A merge patch (or JSON patch) of the events API's shape: applied to the stored
    Event converted, written back as core v1 (against the resourceVersion read, again
    after a conflict unless the patch pins one)."""
    pinned = objects.pins_version(patch, json_patch)
    for attempt in range(objects.PATCH_ATTEMPTS):
        current = objects.get(api.store, STORED, namespace, name)
        merged = objects.patched(eventsv1.to_v1(current), patch, json_patch)
        core = _checked_core(merged)
        core.setdefault("metadata", {}).setdefault(
            "resourceVersion", current["metadata"]["resourceVersion"]
        )
        try:
            return objects.replace(api.store, STORED, namespace, name, core, options)
        except Conflict:
            if pinned or attempt == objects.PATCH_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
