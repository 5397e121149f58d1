"""`create_app`: the ASGI application of `vcflow server` over a Store — the resource routes
(`routes`), the health checks, `kubectl auth can-i`'s reviews (`access`), bearer-token
auth (`auth`) and Status answers for paths and
methods no route takes. Other parts of the server (discovery, OpenAPI, metrics, tables)
plug in through its arguments rather than by editing the routes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from vcflow.controller.observer import Observer
from vcflow.kubeapi import resources
from vcflow.kubeapi.resources import APIResource
from vcflow.server import access, eventsv1
from vcflow.server.auth import BearerAuth
from vcflow.server.crosssite import CrossSiteGuard
from vcflow.server.routes import Api, View, WatchView, namespace_routes, resource_routes
from vcflow.server.status import ApiError
from vcflow.store.base import EmbeddedStore, Store


@dataclass(frozen=True)
class Extensions:
    """What other parts of the server add to `create_app` (its arguments of the same names);
    `serve` asks for them once the store is open."""

    routes: Sequence[BaseRoute] = ()
    middleware: Sequence[Middleware] = ()
    views: Sequence[View] = ()
    watch_views: Sequence[WatchView] = ()
    #: told what the controllers do (the server's metrics); `serve` gives it to them
    observer: Observer | None = None
    #: lines `serve` prints after its start line (where the dashboard is)
    notes: Sequence[str] = ()

    def joined(self, other: Extensions) -> Extensions:
        """Both extensions: this one's routes and middleware first (outside), the first
        observer given."""
        return Extensions(
            routes=[*self.routes, *other.routes],
            middleware=[*self.middleware, *other.middleware],
            views=[*self.views, *other.views],
            watch_views=[*self.watch_views, *other.watch_views],
            observer=self.observer if self.observer is not None else other.observer,
            notes=[*self.notes, *other.notes],
        )


@dataclass(frozen=True)
class Host:
    """What an extension is told of the server it extends: its store (writes) and the
    one reads go to, its state directory, the flag set when it stops, its token (None:
    none asked), the names `Host` and `Origin` may carry (`crosssite`), its scheme and
    the URL clients on this machine reach it at."""

    store: Store
    reads: Store
    state_dir: Path
    stopping: threading.Event
    token: str | None
    accepted_hosts: frozenset[str]
    scheme: str
    url: str


#: makes the Extensions of a server from what it is (`Host`)
Extend = Callable[[Host], Extensions]


def create_app(
    store: EmbeddedStore,
    *,
    state_dir: Path | None = None,
    token: str | None = None,
    extra_routes: Sequence[BaseRoute] = (),
    middleware: Sequence[Middleware] = (),
    views: Sequence[View] = (),
    watch_views: Sequence[WatchView] = (),
    stopping: threading.Event | None = None,
    served: Sequence[APIResource] = resources.ALL,
    reads: Store | None = None,
    accepted_hosts: Iterable[str] | None = None,
    scheme: str = "http",
) -> Starlette:
    """The server's application.

    - `state_dir`: where pod logs are read (None: the log route answers 400);
    - `token`: required as `Authorization: Bearer` on all but /healthz, /readyz, /livez;
    - `extra_routes`: matched before the resource routes (discovery, /openapi, /metrics);
    - `middleware`: outside the cross-site and auth checks (so it sees every request, 401s
      and 403s too); a route
      sets `request.state.verb` (get, list, watch, create, update, patch, delete);
    - `views`, `watch_views`: other renderings of get/list bodies and watch objects;
    - `stopping`: set when the server stops; watch and log streams end then;
    - `reads`: the store gets, lists, watches and logs read (None: `store`), another
      connection to the same data;
    - `accepted_hosts`: the names `Host` and `Origin` may carry besides loopback ones
      (`crosssite`; `scheme` is the server's); None: no cross-site check (an app called
      in-process, never one that listens).
    The store is `app.state.api.store`; `app.state.api` is the routes' shared `Api`.
    """
    api = Api(
        store, state_dir, stopping or threading.Event(), tuple(views), tuple(watch_views), reads
    )
    health = [Route(path, _ok) for path in ("/healthz", "/readyz", "/livez")]
    stack = list(middleware)
    if accepted_hosts is not None:
        stack.append(Middleware(CrossSiteGuard, hosts=accepted_hosts, scheme=scheme))
    if token is not None:
        stack.append(Middleware(BearerAuth, token=token))
    app = Starlette(
        routes=[
            *health,
            *extra_routes,
            *resource_routes(api, served),
            *_shared(api, served),
            *access.routes(served),
            *namespace_routes(),
        ],
        middleware=stack,
        exception_handlers={HTTPException: _http_error},
    )
    app.state.api = api
    return app


def _shared(api: Api, served: Sequence[APIResource]) -> list[BaseRoute]:
    """The routes of the resources served from another's storage (the events API)."""
    return eventsv1.routes(api) if resources.EVENTS_V1 in served else []


async def _ok(request: Request) -> Response:
    return PlainTextResponse("ok")


async def _http_error(request: Request, exc: Exception) -> Response:
    """A path no route serves (404) or a method it does not take (405), as a Status."""
    code = exc.status_code if isinstance(exc, HTTPException) else 500
    message = "the server could not find the requested resource" if code == 404 else str(exc)
    return ApiError(code, message).response()
