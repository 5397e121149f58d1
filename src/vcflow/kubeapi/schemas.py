"""OpenAPI schemas of the served kinds, generated from the pydantic models (their wire
names): the one source of the server's `/openapi/v2` and `/openapi/v3` documents and of
the CRDs generated from the models. Each kind's schema carries
`x-kubernetes-group-version-kind`; nested models are definitions referred to by `$ref`
(`definitions`), or written out in place (`inlined`, a CRD's structural schema). Pure.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from pydantic.json_schema import models_json_schema

from vcflow.kubeapi import resources
from vcflow.kubeapi.resources import APIResource

Schema = dict[str, Any]
_PLACEHOLDER = "#/$$defs/"
#: JSON Schema keywords OpenAPI (v2 and v3.0) has no use for, or does not know; and
#: `description`, which pydantic takes from the models' docstrings: they are written for
#: vcflow's developers (design notes, issue numbers), not for `kubectl explain`'s readers
_DROPPED = ("title", "const", "prefixItems", "$defs", "description")


def definition_name(resource: APIResource) -> str:
    """`sh.volcano.flow.v1alpha1.JobFlow`, `io.k8s.api.core.v1.Pod`: the reversed-group
    names kube-apiserver gives CRDs and core kinds in its OpenAPI documents."""
    if not resource.group:
        return f"io.k8s.api.core.{resource.version}.{resource.kind}"
    return ".".join([*reversed(resource.group.split(".")), resource.version, resource.kind])


def _nested_name(pydantic_name: str) -> str:
    """`ObjectMeta` → `io.vcflow.api.ObjectMeta`; pydantic's `vcflow__api__pod__PodSpec`
    (two models of one name) → `io.vcflow.api.pod.PodSpec`."""
    parts = pydantic_name.split("__")
    if parts[0] == "vcflow":
        parts = parts[1:]
    return ".".join(["io.vcflow", *parts] if len(parts) > 1 else ["io.vcflow.api", *parts])


@functools.cache
def _generated() -> tuple[dict[str, str], dict[str, Schema]]:
    """(pydantic's name of each kind's model → its definition name, pydantic's $defs)."""
    keys, schema = models_json_schema(
        [(r.model, "validation") for r in resources.ALL],
        by_alias=True,
        ref_template=_PLACEHOLDER + "{model}",
    )
    kinds = {
        keys[(r.model, "validation")]["$ref"].removeprefix(_PLACEHOLDER): definition_name(r)
        for r in resources.ALL
    }
    return kinds, schema["$defs"]


def definitions(ref_prefix: str) -> dict[str, Schema]:
    """Every definition the served kinds need, by name, its `$ref`s starting `ref_prefix`
    (`#/definitions/` for v2, `#/components/schemas/` for v3). A fresh copy each call."""
    kinds, defs = _generated()

    def rename(name: str) -> str:
        return kinds.get(name) or _nested_name(name)

    out = {rename(name): _openapi(body, rename, ref_prefix) for name, body in defs.items()}
    for resource in resources.ALL:
        kind = out[definition_name(resource)]
        kind["x-kubernetes-group-version-kind"] = [
            {"group": resource.group, "kind": resource.kind, "version": resource.version}
        ]
        for field in ("apiVersion", "kind"):
            kind["properties"][field] = dict(ABOUT_FIELD[field])
        kind.pop("required", None)
    return out


#: the schemas of `apiVersion` and `kind`, as kube-apiserver describes them
ABOUT_FIELD: dict[str, Schema] = {
    "apiVersion": {
        "type": "string",
        "description": "APIVersion defines the versioned schema of this representation of an "
        "object.",
    },
    "kind": {
        "type": "string",
        "description": "Kind is a string value representing the REST resource this object "
        "represents.",
    },
}


def _openapi(node: Any, rename: Any, prefix: str) -> Any:
    """One pydantic JSON Schema node as OpenAPI: an optional field (`anyOf: [X, null]`) is
    X, a field of several scalar types (a quantity: `1`, `"500m"`) has no type, an object
    that keeps unknown fields says so as a CRD does (`x-kubernetes-preserve-unknown-fields`),
    refs point at `prefix`; titles, `const` and the docstrings (`description`) go."""
    if isinstance(node, list):
        return [_openapi(item, rename, prefix) for item in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    if "anyOf" in node:
        choices = [c for c in node.pop("anyOf") if c != {"type": "null"}]
        if len(choices) == 1:
            merged = {**choices[0], **node}
        else:
            types = {c.get("type") for c in choices}
            merged = dict(node)
            if types == {"string", "integer"} or types == {"string", "integer", "number"}:
                merged["x-kubernetes-int-or-string"] = True
            elif types == {"integer", "number"}:
                merged["type"] = "number"
        node = merged
        if node.get("default") is None:
            node.pop("default", None)
    for key in _DROPPED:
        node.pop(key, None)
    if node.get("additionalProperties") is True:  # (kubectl's explain indexes it as a map)
        del node["additionalProperties"]
        node["x-kubernetes-preserve-unknown-fields"] = True
    if "$ref" in node:
        return {"$ref": prefix + rename(node["$ref"].removeprefix(_PLACEHOLDER))}
    if "properties" in node:
        node["properties"] = {k: _openapi(v, rename, prefix) for k, v in node["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            node[key] = _openapi(node[key], rename, prefix)
    if "allOf" in node:
        node["allOf"] = _openapi(node["allOf"], rename, prefix)
    return node


def inlined(resource: APIResource) -> Schema:
    """`resource`'s schema with every `$ref` written out in place (a CRD's
    `openAPIV3Schema` allows no refs); ValueError on a model that contains itself."""
    defs = definitions(_INLINE)

    def expand(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [expand(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            name = node["$ref"].removeprefix(_INLINE)
            if name in seen:
                raise ValueError(f"{' -> '.join((*seen, name))}: a model contains itself")
            return expand(copy.deepcopy(defs[name]), (*seen, name))
        if "allOf" in node and len(node["allOf"]) == 1:
            rest = {k: v for k, v in node.items() if k != "allOf"}
            return {**expand(node["allOf"][0], seen), **rest}
        return {k: (v if k == "enum" else expand(v, seen)) for k, v in node.items()}

    name = definition_name(resource)
    return expand(defs[name], (name,))  # type: ignore[no-any-return]


_INLINE = "#/inline/"
