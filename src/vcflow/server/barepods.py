"""The refusal of a bare Pod created through the API of a `vcflow server` that runs its
pods itself (`--runtime local`): its local runtime starts only the pods of vcjobs (their
`volcano.sh/job-name` owner), so a Pod a client creates would be stored and never run nor
given a status. kubectl and the clients get a kube-like 403 Forbidden Status saying why
instead. A server without a runtime (`--runtime none`: something else, the operator's
cluster or a test's kubelet, runs the pods) stores pods as any API server does.

`compat.extend` adds `route()` before the resource routes when the server runs pods.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from vcflow.kubeapi import resources
from vcflow.server import requests
from vcflow.server.status import ApiError

REASON = (
    "vcflow server runs pods only for vcjobs: a bare Pod would be stored and never run; "
    "create a vcjob (batch.volcano.sh/v1alpha1 Job) or a JobFlow instead"
)


def route() -> Route:
    """POST of the namespaced pods collection, refused (its other methods and paths are
    the resource routes')."""
    collection = resources.PODS.path("{namespace}")
    return Route(collection, _refuse, methods=["POST"])


async def _refuse(request: Request) -> Response:
    request.state.verb = "create"  # (for the metrics middleware, as the resource routes)
    try:
        requests.path_names(request)
        name = _name_of(await requests.body(request))
    except ApiError as exc:
        return exc.response()
    named = f'pods "{name}"' if name else "pods"
    details: dict[str, Any] = {"group": "", "kind": "pods"}
    if name:
        details["name"] = name
    return ApiError(403, f"{named} is forbidden: {REASON}", details=details).response()


def _name_of(data: Any) -> str:
    meta = data.get("metadata") if isinstance(data, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""
