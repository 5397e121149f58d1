"""The structural schema of a vcjob spec: the `spec` of Volcano's Job CRD, which vcflow ships
verbatim as package data (`crds/batch.volcano.sh_jobs.yaml`; provenance and licence in
`crds/NOTICE.md`). It names every field a JobSpec, its tasks and their pod templates (all of
Kubernetes' PodTemplateSpec) may hold; `unknown` walks it.

Read, parsed and compiled into `Node`s once, when first asked for (`job_spec_schema`): the
only file this tier reads, the package's own constant data, not the user's input.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

CRD_FILE = "batch.volcano.sh_jobs.yaml"
VERSION = "v1alpha1"


@dataclass(eq=False, slots=True)
class Node:
    """What a structural schema node says about the fields below it.

    `properties` are the known keys of an object; `values` the schema of every value of a
    map (`additionalProperties`); `items` that of a list's items; `open` an object that keeps
    any key (`x-kubernetes-preserve-unknown-fields`, `additionalProperties: true`).
    `layouts` is the walker's cache, per model class.
    """

    properties: dict[str, Node] = field(default_factory=dict)
    values: Node | None = None
    items: Node | None = None
    open: bool = False
    layouts: dict[type, Any] = field(default_factory=dict)


@functools.cache
def job_spec_schema() -> Node:
    """The schema of `spec` in the Job CRD's served version."""
    text = resources.files("vcflow.admission").joinpath("crds", CRD_FILE).read_text("utf-8")
    loader = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
    crd = yaml.load(text, Loader=loader)
    (version,) = (v for v in crd["spec"]["versions"] if v["name"] == VERSION)
    return compile_schema(version["schema"]["openAPIV3Schema"]["properties"]["spec"])


def compile_schema(schema: dict[str, Any]) -> Node:
    """The Node tree of an OpenAPI v3 structural schema (anyOf branches hold no fields)."""
    extra = schema.get("additionalProperties")
    items = schema.get("items")
    return Node(
        properties={k: compile_schema(v) for k, v in (schema.get("properties") or {}).items()},
        values=compile_schema(extra) if isinstance(extra, dict) else None,
        items=compile_schema(items) if isinstance(items, dict) else None,
        open=extra is True or schema.get("x-kubernetes-preserve-unknown-fields") is True,
    )
