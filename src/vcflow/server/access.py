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


PROTOBUF = "application/vnd.kubernetes.protobuf"
_MAGIC = b"k8s\x00"
#: the string fields of the protobuf messages read (authorization.k8s.io/v1 generated.proto)
_RESOURCE_ATTRIBUTES = {
    1: "namespace",
    2: "verb",
    3: "group",
    4: "version",
    5: "resource",
    6: "subresource",
    7: "name",
}
_NON_RESOURCE_ATTRIBUTES = {1: "path", 2: "verb"}


def _fields(data: bytes) -> dict[int, bytes]:
    """The length-delimited fields of a protobuf message (the last of each number); other
    wire types skipped. 400 for a message cut short."""
    found: dict[int, bytes] = {}
    at = 0

    def varint() -> int:
        nonlocal at
        value = shift = 0
        while True:
            if at >= len(data):
                raise ApiError(400, "the protobuf body is cut short")
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while at < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            varint()
        elif wire == 2:
            size = varint()
            found[number] = data[at : at + size]
            at += size
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        else:
            raise ApiError(400, f"the protobuf body has wire type {wire}")
    return found


def _strings(data: bytes, names: dict[int, str]) -> dict[str, str]:
    fields = _fields(data)
    return {name: fields[n].decode("utf-8", "replace") for n, name in names.items() if n in fields}


def from_protobuf(body: bytes) -> dict[str, Any]:
    """A review kubectl (1.33 on) sends as protobuf (`k8s\\0` + runtime.Unknown holding the
    typed message), as the JSON it means: its kind and spec."""
    if not body.startswith(_MAGIC):
        raise ApiError(400, "the protobuf body does not start with the k8s magic")
    unknown = _fields(body[len(_MAGIC) :])
    kind = _strings(unknown.get(1, b""), {2: "kind"}).get("kind", "")
    spec = _fields(_fields(unknown.get(2, b"")).get(2, b""))
    found: dict[str, Any] = {}
    if kind == "SelfSubjectAccessReview":
        if 1 in spec:
            found["resourceAttributes"] = _strings(spec[1], _RESOURCE_ATTRIBUTES)
        if 2 in spec:
            found["nonResourceAttributes"] = _strings(spec[2], _NON_RESOURCE_ATTRIBUTES)
    elif kind == "SelfSubjectRulesReview":
        found = _strings(_fields(unknown.get(2, b"")).get(2, b""), {1: "namespace"})
    group = "authentication.k8s.io" if kind == "SelfSubjectReview" else "authorization.k8s.io"
    return {"kind": kind, "apiVersion": f"{group}/v1", "metadata": {}, "spec": found}


async def _body(request: Request, kind: str, group: str) -> dict[str, Any]:
    if requests.content_type(request) == PROTOBUF:
        raw = await requests.body(request, (PROTOBUF,), raw=True)
        data: Any = from_protobuf(raw)
    else:
        data = await requests.body(request)
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
