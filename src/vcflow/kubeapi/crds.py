"""The CustomResourceDefinitions of JobFlow and JobTemplate, built from the models: names and
scope from `resources`, the schema from `schemas.inlined` made structural (root metadata an
opaque object, no defaults but a JobTemplate spec's, only the keywords apiextensions.k8s.io/v1
knows), printer columns
from `columns` (each with the JSONPath kube-apiserver reads). Pure; `scripts/write_crds.py`
writes `deploy/crds/`, tests/kubeapi/test_crds.py checks they have not drifted.
"""

from __future__ import annotations

from typing import Any

from vcflow.api import loading
from vcflow.api.vcjob import JobSpec, spec_defaults_applied
from vcflow.kubeapi import columns, resources, schemas
from vcflow.kubeapi.resources import APIResource

Schema = dict[str, Any]

#: the kinds that get a CRD (the others are Volcano's, or core kinds)
KINDS: tuple[APIResource, ...] = (resources.JOBFLOWS, resources.JOBTEMPLATES)

#: JSONPath of each printer column (Name is kube's own), and a description where the
#: column's own does not fit: a CRD column can only point at a field, so the `Jobs` cell
#: vcflow computes (`2/5`) shows here as the completed entries' names.
_JSON_PATHS: dict[str, tuple[str, str]] = {
    "Status": (".status.state.phase", ""),
    "Age": (".metadata.creationTimestamp", ""),
    "Jobs": (".status.completedJobs", "The entries whose vcjob completed (.status.completedJobs)."),
}

#: the keywords of apiextensions.k8s.io/v1 JSONSchemaProps a CRD may carry (no `$ref`,
#: `definitions`, `id`, `$schema`, `additionalItems`, `patternProperties`)
KEYWORDS = frozenset(
    {
        "description", "type", "format", "title", "default", "maximum", "exclusiveMaximum",
        "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems",
        "minItems", "uniqueItems", "multipleOf", "enum", "maxProperties", "minProperties",
        "required", "items", "allOf", "oneOf", "anyOf", "not", "properties",
        "additionalProperties", "dependencies", "externalDocs", "example", "nullable",
        "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys", "x-kubernetes-list-type",
        "x-kubernetes-map-type", "x-kubernetes-validations",
    }
)  # fmt: skip


def file_name(resource: APIResource) -> str:
    """`flow.volcano.sh_jobflows.yaml`: controller-gen's name, as Volcano's CRD files."""
    return f"{resource.group}_{resource.plural}.yaml"


def definition(resource: APIResource) -> Schema:
    """The apiextensions.k8s.io/v1 CustomResourceDefinition of `resource`."""
    version: Schema = {
        "name": resource.version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": structural(resource)},
    }
    if "status" in resource.subresources:
        version["subresources"] = {"status": {}}
    printer = printer_columns(resource)
    if printer:
        version["additionalPrinterColumns"] = printer
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{resource.plural}.{resource.group}"},
        "spec": {
            "group": resource.group,
            "names": {
                "kind": resource.kind,
                "listKind": f"{resource.kind}List",
                "plural": resource.plural,
                "singular": resource.singular,
                "shortNames": list(resource.short_names),
            },
            "scope": "Namespaced" if resource.namespaced else "Cluster",
            "versions": [version],
        },
    }


def printer_columns(resource: APIResource) -> list[Schema]:
    """`additionalPrinterColumns`: `vcflow get`'s columns but Name, in its order;
    KeyError for a column with no JSONPath in `_JSON_PATHS`."""
    out: list[Schema] = []
    for col in columns.of(resource):
        if col is columns.NAME:
            continue
        path, about = _JSON_PATHS[col.name]
        entry: Schema = {"name": col.name, "type": col.type, "jsonPath": path}
        if about or col.description:
            entry["description"] = about or col.description
        if col.priority:
            entry["priority"] = col.priority
        out.append(entry)
    return out


def structural(resource: APIResource) -> Schema:
    """`resource`'s `openAPIV3Schema`: the models' inlined schema, root `metadata` the
    opaque object the API server validates itself, without the models' defaults (they fill
    them when read: the API server must not write them into stored objects) or unknown
    keys — but for the defaults every store writes (`template_defaults`)."""
    schema: Schema = _cleaned(schemas.inlined(resource))
    schema["type"] = "object"
    schema["properties"]["metadata"] = {"type": "object"}
    for path, value in template_defaults(resource).items():
        node = schema
        for name in path:
            node = node["properties"][name]
        node["default"] = value
    return schema


def template_defaults(resource: APIResource) -> dict[tuple[str, ...], Any]:
    """The CRD defaults of a JobTemplate's spec, as Volcano's CRD has them and vcflow's
    stores write them (`vcjob.spec_defaults_applied`: `queue: default`, `maxRetry: 3`):
    without them in the CRD a cluster stored templates without, unlike every other store.
    None for other kinds."""
    if resource is not resources.JOBTEMPLATES:
        return {}
    filled = spec_defaults_applied(JobSpec()).to_dict()
    return {("spec", key): filled[key] for key in ("queue", "maxRetry")}


def _cleaned(node: Any) -> Any:
    if isinstance(node, list):
        return [_cleaned(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: Schema = {}
    for key, value in node.items():
        if key in ("default",) or key not in KEYWORDS:
            continue
        if key == "properties":
            out[key] = {name: _cleaned(field) for name, field in value.items()}
        elif key == "enum":
            out[key] = value
        else:
            out[key] = _cleaned(value)
    if not out and isinstance(node, dict) and not node.get("properties"):
        return {"x-kubernetes-preserve-unknown-fields": True}  # any JSON value (`Any`)
    return out


def render(resource: APIResource) -> str:
    """The CRD file's text: YAML after a `---`, as Volcano's files."""
    return "---\n" + loading.dump_yaml(definition(resource))


def files() -> dict[str, str]:
    """Every CRD file of `deploy/crds/`, name → text."""
    return {file_name(resource): render(resource) for resource in KINDS}
