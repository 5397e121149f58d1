"""What the server serves beyond the resources' CRUD, for kubectl and the Kubernetes
clients: discovery, OpenAPI and /metrics routes, the metrics middleware, the Table views,
the observer the controllers report to, and (when the server runs pods) the refusal of a
bare Pod (`barepods`) — `extend`, the server's `Extend` hook, which `vcflow server` passes
to `serve`.
"""

from __future__ import annotations

from vcflow.server import barepods, discovery, metrics, openapi, tables
from vcflow.server.app import Extensions, Host


def extend(host: Host, *, runs_pods: bool = False) -> Extensions:
    """The extensions of one app over the host's `reads` store (its own metrics registry);
    `runs_pods`: the server's local runtime runs the pods, so a client's bare Pod is
    refused."""
    found = metrics.Metrics(host.reads)
    refusals = [barepods.route()] if runs_pods else []
    return Extensions(
        routes=[*discovery.routes(), *openapi.routes(), found.route(), *refusals],
        middleware=[found.middleware()],
        views=[tables.view],
        watch_views=[tables.watch_view],
        observer=found.observer,
    )
