"""What a client may do, as kube-apiserver answers `kubectl auth can-i` and `kubectl auth
whoami`: SelfSubjectAccessReview (one verb on one resource), SelfSubjectRulesReview
(`can-i --list`) and SelfSubjectReview. The server's token may do everything it serves,
so a review is allowed exactly when the resource is served and takes the verb (a
subresource: its own verbs) — `kubectl auth can-i create deployments` is a `no` naming
why. The app factory (`app.create_app`) mounts `routes(served)`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from vcflow.kubeapi import resources
from vcflow.kubeapi.resources import APIResource
from vcflow.server import requests
from vcflow.server.status import ApiError

Endpoint = Callable[[Request], Awaitable[Response]]
AUTHORIZATION = "/apis/authorization.k8s.io/v1"
AUTHENTICATION = "/apis/authentication.k8s.io/v1"
#: the verbs of each subresource (discovery says the same)
SUBRESOURCE_VERBS = {"status": ("get", "patch", "update"), "log": ("get",), "binding": ("create",)}
#: who the token is: the one user of the server
USER = {"username": "vcflow", "groups": ["system:authenticated"]}


def _verbs(resource: APIResource, subresource: str) -> tuple[str, ...]:
    if not subresource:
        return resources.VERBS
    return SUBRESOURCE_VERBS.get(subresource, ()) if subresource in resource.subresources else ()


def _matches(resource: APIResource, group: str, plural: str) -> bool:
    return group in ("*", resource.group) and plural in ("*", resource.plural)


def review(attributes: dict[str, Any], served: Sequence[APIResource]) -> tuple[bool, str]:
    """(allowed, reason) of one resourceAttributes of a SelfSubjectAccessReview."""
    verb = str(attributes.get("verb") or "")
    group = str(attributes.get("group") or "")
    plural = str(attributes.get("resource") or "")
    sub = str(attributes.get("subresource") or "")
    found = [r for r in served if _matches(r, group, plural)]
    what = f"{plural}.{group}" if group else plural
    if not found:
        return False, f"vcflow server does not serve {what}"
    if all(verb == "*" or verb in _verbs(r, sub) for r in found):
        return True, "vcflow server: its token may do all the server serves"
    said = f"{what}/{sub}" if sub else what
    return False, f'vcflow server does not "{verb}" {said}'


def rules(served: Sequence[APIResource]) -> list[dict[str, Any]]:
    """The resourceRules of a SelfSubjectRulesReview: each served resource and its
    subresources, with their verbs."""
    found: list[dict[str, Any]] = []
    for resource in served:
        found.append(
            {
                "verbs": list(resources.VERBS),
                "apiGroups": [resource.group],
                "resources": [resource.plural],
            }
        )
        for sub in resource.subresources:
            found.append(
                {
                    "verbs": list(SUBRESOURCE_VERBS.get(sub, ())),
                    "apiGroups": [resource.group],
                    "resources": [f"{resource.plural}/{sub}"],
                }
            )
    return found


async def _body(request: Request, kind: str, group: str) -> dict[str, Any]:
    data = await requests.body(request)  # (JSON, or protobuf as kubectl 1.33+ sends it)
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise ApiError(400, f"the body must be a {group} {kind}")
    request.state.verb = "create"
    return data


def _answers(handler: Callable[[Request], Awaitable[Response]]) -> Endpoint:
    """`handler`, its refusals answered as Status objects."""

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except ApiError as exc:
            return exc.response()

    return endpoint


def routes(served: Sequence[APIResource]) -> list[BaseRoute]:
    async def access(request: Request) -> Response:
        data = await _body(request, "SelfSubjectAccessReview", "authorization.k8s.io/v1")
        spec = data.get("spec")
        attributes = spec.get("resourceAttributes") if isinstance(spec, dict) else None
        if isinstance(attributes, dict):
            allowed, reason = review(attributes, served)
        else:  # (nonResourceAttributes: discovery, /version, /metrics... are served)
            allowed, reason = True, "vcflow server: its token may read every path it serves"
        status = {"allowed": allowed, "reason": reason}
        return JSONResponse({**data, "status": status}, status_code=201)

    async def listed(request: Request) -> Response:
        data = await _body(request, "SelfSubjectRulesReview", "authorization.k8s.io/v1")
        status = {
            "resourceRules": rules(served),
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }
        return JSONResponse({**data, "status": status}, status_code=201)

    async def whoami(request: Request) -> Response:
        data = await _body(request, "SelfSubjectReview", "authentication.k8s.io/v1")
        return JSONResponse({**data, "status": {"userInfo": USER}}, status_code=201)

    return [
        Route(f"{AUTHORIZATION}/selfsubjectaccessreviews", _answers(access), methods=["POST"]),
        Route(f"{AUTHORIZATION}/selfsubjectrulesreviews", _answers(listed), methods=["POST"]),
        Route(f"{AUTHENTICATION}/selfsubjectreviews", _answers(whoami), methods=["POST"]),
    ]
