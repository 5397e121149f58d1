"""What the server serves beyond the resources' CRUD, for kubectl and the Kubernetes
clients: discovery, OpenAPI and /metrics routes, the metrics middleware, the Table views,
and the observer the controllers report to — `extend`, the server's `Extend` hook, which
`vcflow server` passes to `serve`.
"""

from __future__ import annotations

from pathlib import Path

from vcflow.server import discovery, metrics, openapi, tables
from vcflow.server.app import Extensions
from vcflow.store.base import Store


def extend(store: Store, state_dir: Path) -> Extensions:
    """The extensions of one app over `store` (its own metrics registry)."""
    found = metrics.Metrics(store)
    return Extensions(
        routes=[*discovery.routes(), *openapi.routes(), found.route()],
        middleware=[found.middleware()],
        views=[tables.view],
        watch_views=[tables.watch_view],
        observer=found.observer,
    )
