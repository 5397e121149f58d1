"""The Kubernetes-API routes of the served resources, made from the resource table
(`kubeapi.resources`): for each, the all-namespace list, the namespaced collection (list,
watch, create), the object (get, update, patch, delete) and its subresources (`status`;
a pod's `log` and `binding`). A cluster-scoped resource (Queue) has only the collection
without a namespace, its objects stored under namespace `""`; its namespaced URLs are
not routes (404, as kube-apiserver answers). Each route turns the request into a call of
`objects`, `listing`, `watching` or `podlogs`, run in a worker thread, and any error into
a Status object.
`create_app` mounts them; `Api` holds what they share.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from vcflow.api import printable, warncap
from vcflow.api.errors import VcflowError
from vcflow.kubeapi import resources
from vcflow.kubeapi.resources import APIResource
from vcflow.server import listing, objects, podlogs, requests, status, watching
from vcflow.server.status import ApiError
from vcflow.store.base import EmbeddedStore, Store

log = logging.getLogger("vcflow.server")
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
PATCH_TYPES = (requests.JSON_PATCH, requests.MERGE_PATCH, requests.STRATEGIC_PATCH)

#: What a get or list answers instead of its JSON (kubectl's Table, say), or None: called
#: with the request, the resource and the body (the object, or the `<Kind>List`).
View = Callable[[Request, APIResource, dict[str, Any]], Response | None]
#: For a watch: a function that turns each event's object into what the client asked for
#: (a Table row, say), or None to send the objects as they are.
WatchView = Callable[[Request, APIResource], watching.Convert | None]


@dataclass
class Api:
    """What every route needs: the store, the state directory (pod logs), the flag set
    when the server stops (streams end), the response views (`create_app`), and the store
    reads go to (`reads`; None: `store`) — a connection of its own, so that a get, list
    or watch does not wait behind a write that waits for another connection's write
    transaction (SQLite has one writer; WAL readers never wait for it)."""

    store: EmbeddedStore
    state_dir: Path | None = None
    stopping: threading.Event = field(default_factory=threading.Event)
    views: Sequence[View] = ()
    watch_views: Sequence[WatchView] = ()
    reads: Store | None = None

    @property
    def reader(self) -> Store:
        return self.store if self.reads is None else self.reads


Handler = Callable[[Request, APIResource, "Api"], Awaitable[Response]]


def resource_routes(api: Api, served: Sequence[APIResource]) -> list[BaseRoute]:
    """Every route of every resource in `served`."""
    found: list[BaseRoute] = []
    for resource in served:
        if resource in resources.STORED_AS:
            continue  # (its own routes: `eventsv1`)
        collection = resource.path("{namespace}")  # (no namespace: cluster-scoped)
        if resource.namespaced:
            found.append(_route(api, resource, resource.path(None), _collection))
        found.append(_route(api, resource, collection, _collection))
        found.append(_route(api, resource, collection + "/{name}", _item))
        if "status" in resource.subresources:
            found.append(_route(api, resource, collection + "/{name}/status", _status))
        if "log" in resource.subresources:
            found.append(_route(api, resource, collection + "/{name}/log", _log))
        if "binding" in resource.subresources:
            found.append(_route(api, resource, collection + "/{name}/binding", _binding))
        if resource is resources.PODS:
            for sub in UNSERVED_POD_SUBRESOURCES:
                found.append(_route(api, resource, f"{collection}/{{name}}/{sub}", _unserved))
    return found


def namespace_routes() -> list[BaseRoute]:
    """`kubectl create namespace` (POST /api/v1/namespaces): a 400 saying that namespaces
    need no creating here, where a 404 read as a broken server."""

    async def refuse(request: Request) -> Response:
        if request.method != "POST":  # (as before: no such resource)
            return ApiError(404, "the server could not find the requested resource").response()
        return ApiError(
            400,
            "vcflow server keeps no Namespace objects: a namespace exists once an object is "
            "created in it (kubectl apply -n NAMESPACE -f ...)",
        ).response()

    return [Route(f"{resources.PODS.prefix}/namespaces", refuse, methods=METHODS)]


#: what kubectl exec, attach and port-forward ask for, which a local process cannot give
UNSERVED_POD_SUBRESOURCES = ("exec", "attach", "portforward")


async def _unserved(request: Request, resource: APIResource, api: Api) -> Response:
    """A 400 saying why, where a 404 (`the server could not find the requested resource`)
    would read as a missing pod."""
    namespace, name = requests.object_names(request)
    await run_in_threadpool(objects.get, api.reader, resource, namespace, name)  # (404 if none)
    raise ApiError(
        400,
        f'vcflow server serves no exec, attach or port-forward: pod "{name}" is a process on '
        f"the server's machine, not a container (its log: kubectl logs {name})",
    )


def _route(api: Api, resource: APIResource, path: str, handler: Handler) -> Route:
    async def endpoint(request: Request) -> Response:
        name = request.path_params.get("name", "")
        try:
            return await handler(request, resource, api)
        except ApiError as exc:
            return _refused(exc)
        except VcflowError as exc:
            return _refused(status.of(exc, resource, name))
        except Exception:
            log.exception("internal error serving %s %s", request.method, request.url.path)
            return ApiError(500, "internal error; see the server's log").response()

    return Route(path, endpoint, methods=METHODS)


def _verb(request: Request, verb: str) -> None:
    """Say what the request does, for middleware (metrics) that reads scope state."""
    request.state.verb = verb


async def _collection(request: Request, resource: APIResource, api: Api) -> Response:
    namespace, _ = requests.path_names(request)
    if request.method == "GET":
        options = requests.list_options(request, resource)
        if options.watch:
            _verb(request, "watch")
            return await _watch(request, resource, api, namespace, options)
        _verb(request, "list")
        body = await run_in_threadpool(listing.list_body, api.reader, resource, namespace, options)
        return await run_in_threadpool(_view, request, resource, api, body)
    if not resource.namespaced:
        namespace = None if request.method == "GET" else ""  # (list all; create in "")
    if request.method == "POST" and namespace is not None:
        _verb(request, "create")
        wanted = requests.write_options(request)
        data = await requests.body(request)
        written = await run_in_threadpool(
            objects.create, api.store, resource, namespace, data, wanted
        )
        return _written(written)
    raise _not_allowed(request)


async def _watch(
    request: Request,
    resource: APIResource,
    api: Api,
    namespace: str | None,
    options: requests.ListOptions,
) -> Response:
    await watching.wait_fresh(api.reader, options)  # (a bad one is a 400 before the stream)
    convert = next((c for v in api.watch_views if (c := v(request, resource))), None)
    events = watching.stream(api.reader, resource, namespace, options, api.stopping.is_set, convert)
    return StreamingResponse(events, media_type="application/json")


async def _item(request: Request, resource: APIResource, api: Api) -> Response:
    namespace, name = requests.object_names(request)
    store = api.store
    if request.method == "GET":
        _verb(request, "get")
        body = await run_in_threadpool(objects.get, api.reader, resource, namespace, name)
        return await run_in_threadpool(_view, request, resource, api, body)
    if request.method == "DELETE":
        _verb(request, "delete")
        delete = await requests.delete_options(request)
        body = await run_in_threadpool(objects.delete, store, resource, namespace, name, delete)
        return JSONResponse(body)
    return await _write(request, resource, api, namespace, name, status=False)


async def _status(request: Request, resource: APIResource, api: Api) -> Response:
    namespace, name = requests.object_names(request)
    if request.method == "GET":
        _verb(request, "get")
        body = await run_in_threadpool(objects.get, api.reader, resource, namespace, name)
        return JSONResponse(body)
    return await _write(request, resource, api, namespace, name, status=True)


async def _write(
    request: Request,
    resource: APIResource,
    api: Api,
    namespace: str,
    name: str,
    *,
    status: bool,
) -> Response:
    options = requests.write_options(request)
    if request.method == "PUT":
        _verb(request, "update")
        data = await requests.body(request)
        written = await run_in_threadpool(
            objects.replace, api.store, resource, namespace, name, data, options, status=status
        )
        return _written(written)
    if request.method == "PATCH":
        _verb(request, "patch")
        data = await requests.body(request, PATCH_TYPES)
        listed = requests.content_type(request) == requests.JSON_PATCH
        written = await run_in_threadpool(
            functools.partial(objects.patch, status=status, json_patch=listed),
            api.store,
            resource,
            namespace,
            name,
            data,
            options,
        )
        return _written(written)
    raise _not_allowed(request)


async def _log(request: Request, resource: APIResource, api: Api) -> Response:
    namespace, name = requests.object_names(request)
    if request.method != "GET":
        raise _not_allowed(request)
    _verb(request, "get")
    return await podlogs.answer(
        request, api.reader, api.state_dir, namespace, name, api.stopping.is_set
    )


async def _binding(request: Request, resource: APIResource, api: Api) -> Response:
    namespace, name = requests.object_names(request)
    if request.method != "POST":
        raise _not_allowed(request)
    _verb(request, "create")
    data = await requests.body(request)
    body = await run_in_threadpool(objects.bind, api.store, namespace, name, data)
    return JSONResponse(body, status_code=201)


def _view(request: Request, resource: APIResource, api: Api, body: dict[str, Any]) -> Response:
    """The response of a get or list (a view's, or the JSON): made in a worker thread by
    the routes, as a big list's Table or JSON takes long and the event loop serves all."""
    for view in api.views:
        found = view(request, resource, body)
        if found is not None:
            return found
    return JSONResponse(body)


def _written(written: objects.Written) -> Response:
    return _warned(JSONResponse(written.object, status_code=written.code), written.warnings)


def _refused(error: ApiError) -> Response:
    """An error's Status; a refused write's with its review's warnings, as kube-apiserver
    answers one (the Status, and admission's `Warning` headers beside it)."""
    return _warned(error.response(), error.warnings)


def _warned(response: Response, warnings: Sequence[str]) -> Response:
    for value in warning_headers(warnings):
        response.headers.append("Warning", value)
    return response


def warning_headers(texts: Sequence[str]) -> list[str]:
    """The `Warning` header values of admission's warnings, within kube-apiserver's bounds
    (`warncap`: duplicates dropped; past its total, each cut short, then one line saying
    how many more): a header per warning made a big flow's answer unreadable to Python's
    clients. The bounds are of the texts, as kube-apiserver's: quoting adds a backslash
    per quote and backslash."""
    return [_quoted(text) for text in warncap.capped([_flat(text) for text in texts])]


def _flat(text: str) -> str:
    """The text as one line of ASCII (control and other characters escaped)."""
    flat = " ".join(printable.escaped(text).split())
    return flat.encode("ascii", "backslashreplace").decode("ascii")


def _quoted(flat: str) -> str:
    """`299 - "text"` (RFC 7234), quotes and backslashes escaped."""
    quoted = flat.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{quoted}"'


def _not_allowed(request: Request) -> ApiError:
    return ApiError(
        405,
        f"the server does not allow this method on the requested resource "
        f"({request.method} {request.url.path})",
    )
