"""The CRDs generated from the models: the committed files under deploy/crds/ are the
generator's output, each schema is structural as apiextensions.k8s.io/v1 requires, and every
Volcano JobFlow and JobTemplate manifest (copies in tests/data/volcano/) validates under it as
kube-apiserver validates it with kubectl's default `fieldValidation=Strict`.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from vcflow.kubeapi import crds, resources
from vcflow.kubeapi.resources import APIResource

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy" / "crds"
VOLCANO = REPO / "tests" / "data" / "volcano"
VOLCANO_CRDS = VOLCANO / "config" / "crd" / "jobflow" / "bases"
MANIFESTS = sorted((VOLCANO / "example" / "jobflow").glob("*.yaml"))
_COMBINATORS = ("allOf", "anyOf", "oneOf", "not")


def _manifests(kind: str) -> list[dict[str, Any]]:
    docs = [d for path in MANIFESTS for d in yaml.safe_load_all(path.read_text()) if d]
    return [d for d in docs if d["kind"] == kind]


def _volcano_schema(resource: APIResource) -> dict[str, Any]:
    crd = yaml.safe_load((VOLCANO_CRDS / crds.file_name(resource)).read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]


def structural_errors(node: Any, path: str = "", *, root: bool = True) -> list[str]:
    """kube's structural-schema rules (apiextensions.k8s.io/v1), as `path: problem` lines:
    only known keywords, a type on every node but int-or-string and preserve-unknown ones,
    `type: object` wherever there are fields, never `properties` with `additionalProperties`,
    nothing but field names and value rules inside a combinator, and root `metadata` an
    opaque object."""
    if not isinstance(node, dict):
        return [f"{path}: not a schema"]
    errors = [f"{path}: unknown keyword {k!r}" for k in node if k not in crds.KEYWORDS]
    free = node.get("x-kubernetes-int-or-string") or node.get(
        "x-kubernetes-preserve-unknown-fields"
    )
    if "type" not in node and not free:
        errors.append(f"{path}: no type")
    if ("properties" in node or "additionalProperties" in node) and node.get("type") != "object":
        errors.append(f"{path}: fields but not type object")
    if "properties" in node and "additionalProperties" in node:
        errors.append(f"{path}: properties with additionalProperties")
    if node.get("x-kubernetes-preserve-unknown-fields") not in (None, True):
        errors.append(f"{path}: x-kubernetes-preserve-unknown-fields not true")
    for key in ("exclusiveMinimum", "exclusiveMaximum"):
        if key in node and not isinstance(node[key], bool):
            errors.append(f"{path}: {key} is not a boolean (OpenAPI v3.0)")
    for key in _COMBINATORS:
        for branch in node.get(key, []) if key != "not" else [node.get(key)]:
            if isinstance(branch, dict):
                bad = {"description", "type", "default", "additionalProperties", "nullable"}
                if not node.get("x-kubernetes-int-or-string"):
                    errors += [f"{path}/{key}: sets {k}" for k in bad & set(branch)]
    for name, field in node.get("properties", {}).items():
        if root and name == "metadata":
            if set(field) - {"type"} or field.get("type") != "object":
                errors.append(f"{path}.metadata: more than an opaque object")
            continue
        errors += structural_errors(field, f"{path}.{name}", root=False)
    for key, mark in (("items", "[]"), ("additionalProperties", "{}")):
        if isinstance(node.get(key), dict):
            errors += structural_errors(node[key], path + mark, root=False)
    return errors


def as_json_schema(node: Any) -> Any:
    """A CRD schema as the Draft 4 JSON Schema OpenAPI v3.0 is close to: int-or-string as
    `anyOf` integer, string; an object with fields but no x-kubernetes-preserve-unknown-fields
    refuses unknown ones (kube prunes them, and refuses them under `fieldValidation=Strict`,
    kubectl's default); the other x- keys dropped. Root metadata stays the API server's."""
    if isinstance(node, list):
        return [as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: value if key == "enum" else as_json_schema(value)
        for key, value in node.items()
        if not key.startswith("x-kubernetes-") and key != "properties"
    }
    if "properties" in node:
        out["properties"] = {k: as_json_schema(v) for k, v in node["properties"].items()}
        if not node.get("x-kubernetes-preserve-unknown-fields"):
            out.setdefault("additionalProperties", False)
    if node.get("x-kubernetes-int-or-string") and "anyOf" not in node:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    out.pop("nullable", None)
    return out


def _validator(schema: dict[str, Any]) -> jsonschema.Draft4Validator:
    translated = as_json_schema(schema)
    translated["properties"]["metadata"] = {"type": "object"}
    jsonschema.Draft4Validator.check_schema(translated)
    return jsonschema.Draft4Validator(translated)


def _errors(schema: dict[str, Any], manifest: dict[str, Any]) -> list[str]:
    found = _validator(schema).iter_errors(manifest)
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in found]


@pytest.mark.parametrize("resource", crds.KINDS, ids=lambda r: r.kind)
def test_committed_crd_is_what_the_models_generate(resource: APIResource) -> None:
    committed = (DEPLOY / crds.file_name(resource)).read_text(encoding="utf-8")
    assert committed == crds.render(resource), (
        f"deploy/crds/{crds.file_name(resource)} is stale: run `python scripts/write_crds.py`"
    )
    assert sorted(p.name for p in DEPLOY.glob("*.yaml")) == sorted(crds.files())


@pytest.mark.parametrize("resource", crds.KINDS, ids=lambda r: r.kind)
def test_crd_names_scope_and_version_are_volcanos(resource: APIResource) -> None:
    ours = crds.definition(resource)
    volcano = yaml.safe_load((VOLCANO_CRDS / crds.file_name(resource)).read_text())
    assert ours["metadata"]["name"] == volcano["metadata"]["name"]
    for key in ("group", "names", "scope"):
        assert ours["spec"][key] == volcano["spec"][key], key
    (version,) = ours["spec"]["versions"]
    (theirs,) = volcano["spec"]["versions"]
    for key in ("name", "served", "storage", "subresources"):
        assert version[key] == theirs[key], key
    assert version["subresources"] == {"status": {}}


def test_printer_columns_are_vcflow_gets_with_json_paths() -> None:
    flow = crds.definition(resources.JOBFLOWS)["spec"]["versions"][0]
    columns = {c["name"]: c for c in flow["additionalPrinterColumns"]}
    assert list(columns) == ["Status", "Age", "Jobs"]
    assert columns["Status"]["jsonPath"] == ".status.state.phase"
    assert columns["Age"] == {**columns["Age"], "type": "date"}
    assert columns["Age"]["jsonPath"] == ".metadata.creationTimestamp"
    assert columns["Jobs"]["priority"] == 1  # `-o wide`, as `vcflow get -o wide`
    template = crds.definition(resources.JOBTEMPLATES)["spec"]["versions"][0]
    assert [c["jsonPath"] for c in template["additionalPrinterColumns"]] == [
        ".metadata.creationTimestamp"
    ]


@pytest.mark.parametrize("resource", crds.KINDS, ids=lambda r: r.kind)
def test_generated_schema_is_structural(resource: APIResource) -> None:
    schema = crds.definition(resource)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert structural_errors(schema) == []
    assert "default" not in repr(schema).replace("'default'", "")  # no API-server defaults
    assert set(schema["properties"]) >= {"apiVersion", "kind", "metadata", "spec", "status"}


def test_structural_check_finds_what_kube_refuses() -> None:
    schema = crds.structural(resources.JOBFLOWS)
    assert structural_errors(_volcano_schema(resources.JOBFLOWS)) == []
    broken = copy.deepcopy(schema)
    spec = broken["properties"]["spec"]
    spec["properties"]["flows"] = {"$ref": "#/definitions/Flow"}
    spec["additionalProperties"] = {"type": "string"}
    broken["properties"]["metadata"] = {"type": "object", "properties": {"x": {}}}
    assert sorted(structural_errors(broken)) == [
        ".metadata: more than an opaque object",
        ".spec.flows: no type",
        ".spec.flows: unknown keyword '$ref'",
        ".spec: properties with additionalProperties",
    ]


@pytest.mark.parametrize("resource", crds.KINDS, ids=lambda r: r.kind)
def test_every_volcano_manifest_validates_under_the_generated_crd(resource: APIResource) -> None:
    manifests = _manifests(resource.kind)
    assert manifests, f"no {resource.kind} manifest in {VOLCANO}"
    for manifest in manifests:
        assert _errors(_volcano_schema(resource), manifest) == []  # the control: Volcano's
        assert _errors(crds.structural(resource), manifest) == [], manifest["metadata"]["name"]


def test_a_manifest_of_the_wrong_type_is_refused() -> None:
    (flow,) = _manifests("JobFlow")
    flow = {**flow, "spec": {**flow["spec"], "flows": 3}}
    assert _errors(crds.structural(resources.JOBFLOWS), flow) == [
        "spec.flows: 3 is not of type 'array'"
    ]
    template = _manifests("JobTemplate")[0]
    task = {**template["spec"]["tasks"][0], "replicas": "one"}
    template = {**template, "spec": {**template["spec"], "tasks": [task]}}
    errors = _errors(crds.structural(resources.JOBTEMPLATES), template)
    assert errors == ["spec.tasks.0.replicas: 'one' is not of type 'integer'"]


def test_no_field_volcanos_crd_keeps_is_pruned_by_the_generated_one() -> None:
    """Volcano's schema plus vcflow's fields: each property path of Volcano's CRD is in
    ours, or under a node of ours that keeps unknown fields (where the models hold only
    part of a pod spec), so the API server drops nothing Volcano's CRD stores."""
    missing: list[str] = []

    def walk(theirs: dict[str, Any], ours: dict[str, Any], path: str) -> None:
        if ours.get("x-kubernetes-preserve-unknown-fields") and "properties" not in ours:
            return
        for name, field in theirs.get("properties", {}).items():
            if name not in ours.get("properties", {}):
                if not ours.get("x-kubernetes-preserve-unknown-fields"):
                    missing.append(f"{path}.{name}")
                continue
            walk(field, ours["properties"][name], f"{path}.{name}")
        for key, mark in (("items", "[]"), ("additionalProperties", "{}")):
            if isinstance(theirs.get(key), dict) and isinstance(ours.get(key), dict):
                walk(theirs[key], ours[key], path + mark)

    for resource in crds.KINDS:
        walk(_volcano_schema(resource), crds.structural(resource), resource.kind)
    assert missing == []


def _defaults(node: Any, path: str = "") -> dict[str, Any]:
    """Every `default` in a schema, by property path."""
    found: dict[str, Any] = {}
    if not isinstance(node, dict):
        return found
    if "default" in node:
        found[path] = node["default"]
    for name, field in node.get("properties", {}).items():
        found |= _defaults(field, f"{path}.{name}")
    for key, mark in (("items", "[]"), ("additionalProperties", "{}")):
        found |= _defaults(node.get(key), path + mark)
    return found


def test_the_crds_default_what_every_store_defaults_and_nothing_else() -> None:
    """A cluster fills a JobTemplate's `spec.queue` and `spec.maxRetry` as vcflow's stores do
    (`store.base`'s defaulter, the server's admission) and as Volcano's CRD does; without
    these a real kube-apiserver stored templates without them (found on v1.37). No other
    default: the models fill theirs when read."""
    assert _defaults(crds.structural(resources.JOBTEMPLATES)) == {
        ".spec.queue": "default",
        ".spec.maxRetry": 3,
    }
    assert _defaults(crds.structural(resources.JOBFLOWS)) == {}
    theirs = _defaults(_volcano_schema(resources.JOBTEMPLATES))
    assert (theirs[".spec.queue"], theirs[".spec.maxRetry"]) == ("default", 3)
