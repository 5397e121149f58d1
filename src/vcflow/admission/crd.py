"""The structural schema of a vcjob spec: the `spec` of Volcano's Job CRD, which vcflow ships
verbatim as package data (`crds/batch.volcano.sh_jobs.yaml`; provenance and licence in
`crds/NOTICE.md`). It names every field a JobSpec, its tasks and their pod templates (all of
Kubernetes' PodTemplateSpec) may hold and of what type each one is; `unknown` and `types`
walk it.

Read, parsed and compiled into `Node`s once, when first asked for (`job_spec_schema`): the
only file this tier reads, the package's own constant data, not the user's input.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from vcflow.api.meta import WireModel, wire_names

CRD_FILE = "batch.volcano.sh_jobs.yaml"
VERSION = "v1alpha1"
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
#: An int64 number of seconds may not pass the int32 range (68 years): Kubernetes bounds
#: `activeDeadlineSeconds` so, and a longer timer overflows Python's clocks.
SECONDS = (INT64[0], INT32[1])
#: The CRD's pattern for a resource quantity (`x-kubernetes-int-or-string` with it).
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


@dataclass(eq=False, slots=True)
class Node:
    """What a structural schema node says about the fields below it.

    `properties` are the known keys of an object; `values` the schema of every value of a
    map (`additionalProperties`); `items` that of a list's items; `open` an object that keeps
    any key (`x-kubernetes-preserve-unknown-fields`, `additionalProperties: true`).
    `types` are the JSON types a value may have (`string`, `integer`, ...; empty: any);
    `bounds` the range of an integer (its `format`: int32, else int64); `quantity` a
    resource quantity (int-or-string with the quantity pattern).
    `layouts` is the walkers' cache of `layout`, per model class.
    """

    properties: dict[str, Node] = field(default_factory=dict)
    values: Node | None = None
    items: Node | None = None
    open: bool = False
    types: frozenset[str] = frozenset()
    bounds: tuple[int, int] = INT64
    quantity: bool = False
    layouts: dict[type[WireModel], Layout] = field(default_factory=dict)

    def layout(self, model: type[WireModel]) -> Layout:
        """(attribute, wire name, its schema or None if this node does not know it) of each
        field of `model`; found once per model class and node (a flow checks thousands of
        entries)."""
        layout = self.layouts.get(model)
        if layout is None:
            get = self.properties.get
            layout = self.layouts[model] = tuple((n, a, get(a)) for n, a in wire_names(model))
        return layout


Layout = tuple[tuple[str, str, Node | None], ...]


@functools.cache
def job_spec_schema() -> Node:
    """The schema of `spec` in the Job CRD's served version."""
    text = resources.files("vcflow.admission").joinpath("crds", CRD_FILE).read_text("utf-8")
    loader = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
    crd = yaml.load(text, Loader=loader)
    (version,) = (v for v in crd["spec"]["versions"] if v["name"] == VERSION)
    return compile_schema(version["schema"]["openAPIV3Schema"]["properties"]["spec"])


def compile_schema(schema: dict[str, Any], name: str = "") -> Node:
    """The Node tree of an OpenAPI v3 structural schema (anyOf branches hold no fields, only
    types); `name` is the field's key, for the bound on seconds."""
    extra = schema.get("additionalProperties")
    items = schema.get("items")
    branches = [schema, *(schema.get("anyOf") or [])]
    types = frozenset(b["type"] for b in branches if isinstance(b.get("type"), str))
    int_or_string = schema.get("x-kubernetes-int-or-string") is True
    bounds = INT32 if schema.get("format") == "int32" or int_or_string else INT64
    if bounds is INT64 and (name.endswith("Seconds") or name == "seconds"):
        bounds = SECONDS
    return Node(
        properties={k: compile_schema(v, k) for k, v in (schema.get("properties") or {}).items()},
        values=compile_schema(extra) if isinstance(extra, dict) else None,
        items=compile_schema(items) if isinstance(items, dict) else None,
        open=extra is True or schema.get("x-kubernetes-preserve-unknown-fields") is True,
        types=types | {"integer", "string"} if int_or_string else types,
        bounds=bounds,
        quantity=int_or_string and schema.get("pattern") == QUANTITY_PATTERN,
    )
