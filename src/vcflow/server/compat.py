"""What the server serves beyond the resources' CRUD, for kubectl and the Kubernetes
clients, bundled for the app factory: discovery, OpenAPI and /metrics routes, the metrics
middleware, the Table views, and the observer the controller manager reports to.
`vcflow server` builds one per app (`Extras.of(store)`) and passes its parts on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from vcflow.api.resources import APIResource
from vcflow.controller.observer import Observer
from vcflow.server import discovery, metrics, openapi, tables
from vcflow.store.base import Store

View = Callable[[Request, APIResource, dict[str, Any]], Response | None]
WatchView = Callable[[Request, APIResource], Callable[[dict[str, Any]], dict[str, Any]] | None]


@dataclass(frozen=True)
class Extras:
    metrics: metrics.Metrics
    routes: Sequence[BaseRoute]
    middleware: Sequence[Middleware]
    views: Sequence[View]
    watch_views: Sequence[WatchView]

    @classmethod
    def of(cls, store: Store) -> Extras:
        found = metrics.Metrics(store)
        return cls(
            metrics=found,
            routes=[*discovery.routes(), *openapi.routes(), found.route()],
            middleware=[found.middleware()],
            views=[tables.view],
            watch_views=[tables.watch_view],
        )

    @property
    def observer(self) -> Observer:
        """Give it to the controller manager (`Manager(observer=...)`)."""
        return self.metrics.observer

    def app_options(self) -> dict[str, Any]:
        """The keyword arguments of the app factory (`create_app(store, **...)`)."""
        return {
            "extra_routes": self.routes,
            "middleware": self.middleware,
            "views": self.views,
            "watch_views": self.watch_views,
        }
