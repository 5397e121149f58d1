"""The server's discovery documents, from `kubeapi.resources`: `/api` (APIVersions), `/apis`
(APIGroupList, or the aggregated `apidiscovery.k8s.io/v2` APIGroupDiscoveryList kubectl 1.27+
asks for), `/apis/G` (APIGroup), `/api/v1` and `/apis/G/V` (APIResourceList) and `/version`.
kubectl and the Kubernetes clients read them to map `jf` to `/apis/flow.volcano.sh/...`.
The app factory mounts `routes()`.
"""

from __future__ import annotations

import importlib.metadata
import platform
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vcflow.kubeapi import resources
from vcflow.kubeapi import status as kubestatus
from vcflow.kubeapi.resources import APIResource

#: the Kubernetes release whose API vcflow's server follows: aggregated discovery
#: (apidiscovery.k8s.io/v2) and OpenAPI v3 are GA from 1.30 on, so clients of 1.30 and
#: later use them. kubectl parses `gitVersion` as semver; vcflow's version is its build
#: metadata (`+vcflow.0.1.0`, as k3s writes `v1.30.2+k3s1`), which orders as v1.30.0.
KUBE_MAJOR, KUBE_MINOR = "1", "30"

#: the kinds kubectl's `get all` includes (kube puts pods in category `all`; Volcano's CRDs
#: declare no categories)
_CATEGORIES: dict[APIResource, list[str]] = {resources.PODS: ["all"]}
_SUBRESOURCE_VERBS = {"status": ["get", "patch", "update"], "log": ["get"], "binding": ["create"]}
_SUBRESOURCE_KIND = {"binding": "Binding"}

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def vcflow_version() -> str:
    try:
        return importlib.metadata.version("vcflow")
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0"


def version_info() -> dict[str, str]:
    """A version.Info as `/version` answers it: `v1.30.0+vcflow.X.Y.Z`."""
    machine = platform.machine().lower().replace("x86_64", "amd64").replace("aarch64", "arm64")
    return {
        "major": KUBE_MAJOR,
        "minor": KUBE_MINOR,
        "gitVersion": f"v{KUBE_MAJOR}.{KUBE_MINOR}.0+vcflow.{vcflow_version()}",
        "gitCommit": "",
        "gitTreeState": "",
        "buildDate": "",
        "goVersion": f"python{platform.python_version()}",
        "compiler": "cpython",
        "platform": f"{platform.system().lower()}/{machine}",
    }


def _groups() -> dict[str, list[APIResource]]:
    """Named group → its resources (the core group "" apart), in table order."""
    found: dict[str, list[APIResource]] = {}
    for resource in resources.ALL:
        found.setdefault(resource.group, []).append(resource)
    return found


def _group_versions(group: str) -> list[dict[str, str]]:
    versions = dict.fromkeys(r.version for r in resources.ALL if r.group == group)
    return [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]


def api_group(group: str) -> dict[str, Any]:
    versions = _group_versions(group)
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions,
        "preferredVersion": versions[0],
    }


def api_group_list() -> dict[str, Any]:
    groups = [api_group(g) for g in _groups() if g]
    for group in groups:
        del group["kind"], group["apiVersion"]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": [r.version for r in resources.ALL if not r.group][:1],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def _names_and_categories(resource: APIResource) -> dict[str, Any]:
    """The `shortNames` and `categories` of a resource that has them, as both discovery
    documents write them."""
    entry: dict[str, Any] = {}
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource in _CATEGORIES:
        entry["categories"] = _CATEGORIES[resource]
    return entry


def _resource_entry(resource: APIResource) -> dict[str, Any]:
    return {
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": list(resources.VERBS),
        **_names_and_categories(resource),
    }


def _subresource_entries(resource: APIResource) -> list[dict[str, Any]]:
    return [
        {
            "name": f"{resource.plural}/{sub}",
            "singularName": "",
            "namespaced": resource.namespaced,
            "kind": _SUBRESOURCE_KIND.get(sub, resource.kind),
            "verbs": _SUBRESOURCE_VERBS.get(sub, ["get"]),
        }
        for sub in resource.subresources
    ]


def api_resource_list(group_version: str) -> dict[str, Any] | None:
    """The APIResourceList of `group/version` (or `v1`); None if vcflow serves none."""
    served = resources.group_versions().get(group_version)
    if served is None:
        return None
    listed: list[dict[str, Any]] = []
    for resource in served:
        listed += [_resource_entry(resource), *_subresource_entries(resource)]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": listed,
    }


def _discovery_resource(resource: APIResource) -> dict[str, Any]:
    gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    entry: dict[str, Any] = {
        "resource": resource.plural,
        "responseKind": gvk,
        "scope": "Namespaced" if resource.namespaced else "Cluster",
        "singularResource": resource.singular,
        "verbs": list(resources.VERBS),
        **_names_and_categories(resource),
    }
    if resource.subresources:
        entry["subresources"] = [
            {
                "subresource": sub,
                "responseKind": {**gvk, "kind": _SUBRESOURCE_KIND.get(sub, resource.kind)},
                "verbs": _SUBRESOURCE_VERBS.get(sub, ["get"]),
            }
            for sub in resource.subresources
        ]
    return entry


def aggregated(*, core: bool) -> dict[str, Any]:
    """The APIGroupDiscoveryList of `/api` (core) or `/apis` (every named group)."""
    items = []
    for group, served in _groups().items():
        if bool(group) == core:
            continue
        versions: dict[str, list[dict[str, Any]]] = {}
        for resource in served:
            versions.setdefault(resource.version, []).append(_discovery_resource(resource))
        items.append(
            {
                "metadata": {"name": group} if group else {},
                "versions": [
                    {"version": v, "resources": listed, "freshness": "Current"}
                    for v, listed in versions.items()
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }


def wants_aggregated(request: Request) -> bool:
    """The Accept header offers the aggregated v2 form (v2beta1 alone gets the legacy one,
    which every client falls back to)."""
    for offer in request.headers.get("accept", "").split(","):
        params = {p.strip() for p in offer.split(";")[1:]}
        if {"g=apidiscovery.k8s.io", "v=v2", "as=APIGroupDiscoveryList"} <= params:
            return True
    return False


def _aggregated_response(body: dict[str, Any]) -> Response:
    response = JSONResponse(body)
    response.headers["content-type"] = AGGREGATED
    response.headers["vary"] = "Accept"
    return response


def _legacy(body: dict[str, Any]) -> Response:
    response = JSONResponse(body)
    response.headers["vary"] = "Accept"
    return response


async def _api(request: Request) -> Response:
    if wants_aggregated(request):
        return _aggregated_response(aggregated(core=True))
    return _legacy(api_versions(request.url.netloc))


async def _apis(request: Request) -> Response:
    if wants_aggregated(request):
        return _aggregated_response(aggregated(core=False))
    return _legacy(api_group_list())


async def _core_version(request: Request) -> Response:
    return _resource_list(request.path_params["version"])


async def _group_version(request: Request) -> Response:
    group, version = request.path_params["group"], request.path_params["version"]
    return _resource_list(f"{group}/{version}")


async def _group(request: Request) -> Response:
    group = request.path_params["group"]
    if not group or group not in _groups():
        return not_found(request.url.path)
    return JSONResponse(api_group(group))


async def _version(request: Request) -> Response:
    return JSONResponse(version_info())


def _resource_list(group_version: str) -> Response:
    body = api_resource_list(group_version)
    if body is None:
        return not_found(f"/apis/{group_version}")
    return JSONResponse(body)


def not_found(path: str) -> Response:
    """kube-apiserver's answer for a path it does not serve."""
    message = "the server could not find the requested resource"
    return JSONResponse(kubestatus.failure(404, message, details={}), status_code=404)


def routes() -> list[Route]:
    """The discovery routes; mount them before the resource routes (`/api/v1` alone is a
    discovery path, `/api/v1/...` below it are resources)."""
    return [
        Route("/api", _api, methods=["GET"]),
        Route("/api/{version}", _core_version, methods=["GET"]),
        Route("/apis", _apis, methods=["GET"]),
        Route("/apis/{group}", _group, methods=["GET"]),
        Route("/apis/{group}/{version}", _group_version, methods=["GET"]),
        Route("/version", _version, methods=["GET"]),
    ]
