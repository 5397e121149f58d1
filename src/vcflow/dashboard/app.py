"""`create_app`: the dashboard's ASGI application over a Store (docs/dashboard.md): the page
and its static files (open: they hold no data), login and logout (`session`), the JSON
reads (`views`, `detail`), a pod's log (`logs`), the event stream (`stream`) and the three
actions (`controller.userrequests`, the CLI verbs' own code). Every answer carries the
headers of `web`; writes are JSON POSTs under the cross-site guard; `read_only` refuses
the actions (403). Hosted by `vcflow server` at `/` (`mount`) and by `vcflow dashboard`
(`hosting`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from vcflow.api import clock, names
from vcflow.api.event import Event
from vcflow.api.jobflow import JobFlow
from vcflow.api.pod import Pod
from vcflow.api.vcjob import VCJob
from vcflow.controller import userrequests
from vcflow.dashboard import detail, stream, views, web
from vcflow.dashboard.logs import LogSource
from vcflow.dashboard.session import Gate
from vcflow.reconcile import outlook
from vcflow.reconcile.vcjob import pods as podnames
from vcflow.server.status import ApiError
from vcflow.store.base import Selector, Store

STATIC = Path(__file__).parent / "static"
READ_ONLY = "the dashboard is read-only (--read-only)"
SERVER, CLUSTER = "server", "cluster"


@dataclass
class Settings:
    """One dashboard: the store it reads (`reads`) and writes (`writes`), where logs come
    from, the host's stop flag, its token (None: none asked), whether actions are refused,
    which host it is (`server` or `cluster`), the names `Host` and `Origin` may carry
    (`server.crosssite`; None: no check, an app called in-process), the scheme it is
    served with, and the namespaces it shows (None: all)."""

    reads: Store
    writes: Store
    logs: LogSource
    stopping: threading.Event
    token: str | None
    read_only: bool = False
    host: str = SERVER
    accepted_hosts: Iterable[str] | None = None
    scheme: str = "http"
    namespaces: list[str] | None = None
    now: Callable[[], datetime] = field(default=lambda: clock.SystemClock().now())


class Dashboard:
    """The routes' shared state: the settings, the token check, the event hub and the
    namespaces' past durations."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.gate = Gate(settings.token)
        self.hub = stream.Hub(settings.reads, settings.stopping)
        self.pasts = stream.Pasts(settings.reads)

    @property
    def secure(self) -> bool:
        return self.settings.scheme == "https"

    def require(self, request: Request) -> None:
        """401 unless the request carries the token or the session cookie."""
        if not self.gate.admits(request):
            raise ApiError(401, "Unauthorized: log in with the server's token")

    def writable(self) -> None:
        if self.settings.read_only:
            raise ApiError(403, READ_ONLY)


def create_app(settings: Settings) -> Starlette:
    """The dashboard's application (see the module docstring); `app.state.dashboard` is
    its `Dashboard`."""
    board = Dashboard(settings)
    stack = [Middleware(web.Headers)]
    if settings.accepted_hosts is not None:
        stack.append(Middleware(web.Guard, hosts=settings.accepted_hosts, scheme=settings.scheme))
    app = Starlette(
        routes=routes(board),
        middleware=stack,
        exception_handlers={HTTPException: _http_error},
    )
    app.state.dashboard = board
    return app


Handler = Callable[[Dashboard, Request], Awaitable[Response]]


def routes(board: Dashboard) -> list[BaseRoute]:
    """The page, its files and the routes of docs/dashboard.md; each route's errors are
    Status answers (`web.answering`)."""
    api = "/ui/api"
    flow = api + "/namespaces/{namespace}/jobflows/{name}"

    def route(path: str, handler: Handler, method: str) -> Route:
        async def endpoint(request: Request) -> Response:
            return await handler(board, request)

        return Route(path, web.answering(endpoint), methods=[method])

    return [
        Route("/", _index, methods=["GET", "HEAD"]),
        Mount("/ui/static", app=StaticFiles(directory=STATIC, check_dir=False), name="static"),
        route("/ui/login", _login, "POST"),
        route("/ui/logout", _logout, "POST"),
        route(api + "/session", _session, "GET"),
        route(api + "/flows", _flows, "GET"),
        route(flow, _graph, "GET"),
        route(flow + "/entries/{entry}", _entry, "GET"),
        route(flow + "/entries/{entry}/items", _items, "GET"),
        route(api + "/namespaces/{namespace}/pods/{pod}/log", _log, "GET"),
        route(api + "/stream", _stream, "GET"),
        route(flow + "/stop", _stop, "POST"),
        route(flow + "/retry", _retry, "POST"),
        route(flow + "/resubmit", _resubmit, "POST"),
    ]


async def _index(request: Request) -> Response:
    page = STATIC / "index.html"
    if not page.is_file():
        raise HTTPException(404)
    return FileResponse(page, media_type="text/html; charset=utf-8")


async def _http_error(request: Request, exc: Exception) -> Response:
    code = exc.status_code if isinstance(exc, HTTPException) else 500
    message = "the server could not find the requested resource" if code == 404 else str(exc)
    return ApiError(code, message).response()


# --- session -----------------------------------------------------------------------------


async def _login(board: Dashboard, request: Request) -> Response:
    body = await web.json_body(request)
    token = body.get("token")
    if not isinstance(token, str) or not board.gate.is_token(token):
        raise ApiError(401, "Unauthorized: that is not the server's token")
    response = Response(status_code=204)
    board.gate.log_in(response, secure=board.secure)
    return response


async def _logout(board: Dashboard, request: Request) -> Response:
    board.require(request)
    if request.headers.get("content-length") not in (None, "0"):
        await web.json_body(request)  # (a body, if any, is JSON: no form can log out)
    response = Response(status_code=204)
    board.gate.log_out(response, secure=board.secure)
    return response


async def _session(board: Dashboard, request: Request) -> Response:
    board.require(request)
    settings = board.settings
    return JSONResponse(
        {
            "readOnly": settings.read_only,
            "namespaces": settings.namespaces,
            "host": settings.host,
        }
    )


# --- reads -------------------------------------------------------------------------------


async def _flows(board: Dashboard, request: Request) -> Response:
    board.require(request)
    namespace = request.query_params.get("namespace") or None
    if namespace is not None:
        web.namespace_of(namespace)
    selector = Selector.parse(request.query_params.get("labelSelector") or "")
    rows = await run_in_threadpool(_rows, board, namespace, selector)
    return JSONResponse({"flows": rows})


def _rows(board: Dashboard, namespace: str | None, selector: Selector) -> list[dict[str, Any]]:
    reads, now = board.settings.reads, board.settings.now()
    flows = reads.list(JobFlow, namespace, selector)
    by_namespace: dict[str, list[JobFlow]] = {}
    for flow in flows:
        by_namespace.setdefault(flow.namespace, []).append(flow)
    out = []
    for ns, mine in by_namespace.items():
        if selector.requirements:  # (the past of the namespace's every flow)
            pool = board.pasts.by_flow(ns)
        else:
            pool = outlook.durations(mine)
            board.pasts.put(ns, pool)
        for flow in mine:
            past = outlook.elsewhere(pool, flow.name)
            out.append(views.row(views.look(flow, now, past=past)))
    return out


def _flow_names(request: Request) -> tuple[str, str]:
    params = request.path_params
    return web.namespace_of(params["namespace"]), web.name_of(params["name"])


def _read_flow(board: Dashboard, namespace: str, name: str) -> tuple[JobFlow, list[VCJob]]:
    reads = board.settings.reads
    flow = userrequests.get(reads, namespace, name)
    selector = {names.LABEL_CREATED_BY_FLOW: names.created_by_value(namespace, name)}
    return flow, reads.list(VCJob, namespace, selector)


def _view(board: Dashboard, flow: JobFlow, jobs: list[VCJob]) -> views.FlowView:
    past = board.pasts.of(flow.namespace, flow.name)
    return views.look(flow, board.settings.now(), past=past, jobs=jobs)


async def _graph(board: Dashboard, request: Request) -> Response:
    board.require(request)
    namespace, name = _flow_names(request)

    def read() -> dict[str, Any]:
        flow, jobs = _read_flow(board, namespace, name)
        return views.graph(_view(board, flow, jobs), read_only=board.settings.read_only)

    return JSONResponse(await run_in_threadpool(read))


async def _entry(board: Dashboard, request: Request) -> Response:
    namespace, name, entry = _entry_names(board, request)

    def read() -> dict[str, Any] | None:
        reads = board.settings.reads
        flow, jobs = _read_flow(board, namespace, name)
        job = names.job_name(name, entry)
        pods = reads.list(Pod, namespace, {podnames.JOB_NAME: job})
        events = reads.list(Event, namespace)
        return detail.entry(_view(board, flow, jobs), entry, jobs, pods, events)

    return await _found(read, f'jobflow "{name}" has no entry "{entry[:100]}"')


async def _items(board: Dashboard, request: Request) -> Response:
    namespace, name, entry = _entry_names(board, request)
    query = request.query_params
    offset = web.number(query.get("offset"), "offset", 0)
    limit = web.number(query.get("limit"), "limit", 200, most=views.MAX_ITEMS_PAGE)

    def read() -> dict[str, Any] | None:
        flow, jobs = _read_flow(board, namespace, name)
        return views.items(_view(board, flow, jobs), entry, offset, limit)

    return await _found(read, f'jobflow "{name}" has no for entry "{entry[:100]}"')


def _entry_names(board: Dashboard, request: Request) -> tuple[str, str, str]:
    """An entry route's namespace, flow and entry names, once its caller is let in."""
    board.require(request)
    namespace, name = _flow_names(request)
    return namespace, name, views.entry_of(request.path_params["entry"])


async def _found(read: Callable[[], dict[str, Any] | None], missing: str) -> Response:
    """`read`'s answer, read off the event loop; 404 saying `missing` when it finds none."""
    found = await run_in_threadpool(read)
    if found is None:
        raise ApiError(404, missing)
    return JSONResponse(found)


async def _log(board: Dashboard, request: Request) -> Response:
    board.require(request)
    namespace = web.namespace_of(request.path_params["namespace"])
    pod = web.name_of(request.path_params["pod"], "pod name")
    return await board.settings.logs.answer(request, namespace, pod)


async def _stream(board: Dashboard, request: Request) -> Response:
    board.require(request)
    query = request.query_params
    namespace = query.get("namespace") or None
    if namespace is not None:
        web.namespace_of(namespace)
    flow = query.get("flow") or None
    if flow is not None:
        web.name_of(flow, "flow")
        if namespace is None:
            raise ApiError(400, "flow= needs namespace=")
    selector = Selector.parse(query.get("labelSelector") or "")
    listener = board.hub.join(asyncio.get_running_loop())
    if listener is None:
        raise ApiError(503, f"too many open streams (cap {stream.MAX_STREAMS}): try again later")
    scope = stream.Scope(namespace, flow, selector)
    page = stream.Page(board.settings.reads, scope, board.pasts.of, board.settings.now)
    body = stream.events(board.hub, listener, page, board.settings.stopping)
    return stream.Response(body, board.hub, listener)


# --- actions -----------------------------------------------------------------------------


async def _action_start(board: Dashboard, request: Request) -> tuple[str, str, dict[str, Any]]:
    board.require(request)
    board.writable()
    body = await web.json_body(request)
    namespace, name = _flow_names(request)
    return namespace, name, body


async def _stop(board: Dashboard, request: Request) -> Response:
    namespace, name, _ = await _action_start(board, request)

    def act() -> str:
        flow = userrequests.get(board.settings.writes, namespace, name)
        return userrequests.stop(board.settings.writes, flow, board.settings.now())

    return JSONResponse({"message": await run_in_threadpool(act)})


async def _retry(board: Dashboard, request: Request) -> Response:
    namespace, name, body = await _action_start(board, request)
    restart = body.get("restartSuccessful", False)
    entries = body.get("entries")
    if not isinstance(restart, bool):
        raise ApiError(400, "restartSuccessful: true or false")
    if entries is not None and (
        not isinstance(entries, list) or not all(isinstance(e, str) for e in entries)
    ):
        raise ApiError(400, "entries: a list of entry names")
    if entries and not restart:
        raise ApiError(400, "entries names Completed entries to run again: set restartSuccessful")

    def act() -> str:
        return userrequests.retry(
            board.settings.writes,
            namespace,
            name,
            board.settings.now(),
            restart_successful=restart,
            entries=entries or None,
        )

    return JSONResponse({"message": await run_in_threadpool(act)})


async def _resubmit(board: Dashboard, request: Request) -> Response:
    namespace, name, body = await _action_start(board, request)
    new_name = body.get("name")
    arguments = body.get("arguments")
    if new_name is not None:
        if not isinstance(new_name, str):
            raise ApiError(400, "name: a string or null")
        new_name = web.name_of(new_name) if new_name else None
    if arguments is not None and (
        not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values())
    ):
        raise ApiError(400, "arguments: an object of strings")

    def act() -> JobFlow:
        return userrequests.resubmit(
            board.settings.writes, namespace, name, new_name=new_name, arguments=arguments
        )

    created = await run_in_threadpool(act)
    return JSONResponse(
        {"message": f"{userrequests.ref(created.name)} created", "name": created.name}
    )
