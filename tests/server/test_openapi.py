"""OpenAPI from the models: `/openapi/v2` and `/openapi/v3` documents whose kinds carry
`x-kubernetes-group-version-kind`, self-contained refs, wire names, PATCH operations that
take `fieldValidation` (kubectl then leaves validation to the server), v2 also as gnostic's
protobuf (client-go reads no other form); and the reusable schema generation
(`kubeapi.schemas`) a CRD is written from."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
import yaml
from pydantic import BaseModel
from starlette.applications import Starlette
from tests.server.asgi import Client

from vcflow.kubeapi import crds, resources, schemas
from vcflow.server import openapi, openapi_pb, protobody

PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
STATUS = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
STATUS_GVK = ("", "v1", "Status")


@pytest.fixture
def client() -> Client:
    return Client(Starlette(routes=openapi.routes()))


def refs(node: Any) -> set[str]:
    text = json.dumps(node)
    return {part.split('"')[0] for part in text.split('"$ref": "')[1:]}


def kinds(definitions: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    found = {}
    for name, body in definitions.items():
        for gvk in body.get("x-kubernetes-group-version-kind", []):
            found[gvk["group"], gvk["version"], gvk["kind"]] = name
    return found


def test_v2_has_every_served_kind_and_no_dangling_ref(client: Client) -> None:
    doc = client.get("/openapi/v2", headers={"accept": "application/json"}).json()
    assert doc["swagger"] == "2.0"
    defs = doc["definitions"]
    served = {(r.group, r.version, r.kind) for r in resources.ALL}
    assert set(kinds(defs)) == served | {STATUS_GVK}  # (a DELETE's answer)
    assert kinds(defs)["flow.volcano.sh", "v1alpha1", "JobFlow"] == (
        "sh.volcano.flow.v1alpha1.JobFlow"
    )
    assert {r.removeprefix("#/definitions/") for r in refs(doc)} <= set(defs)


def test_wire_names_and_optional_fields_are_plain_openapi(client: Client) -> None:
    defs = client.get("/openapi/v2").json()["definitions"]
    spec = defs["io.vcflow.api.JobFlowSpec"]["properties"]
    assert set(spec) >= {"flows", "jobRetainPolicy"}
    assert spec["flows"] == {"type": "array", "items": {"$ref": "#/definitions/io.vcflow.api.Flow"}}
    text = json.dumps(defs)
    for keyword in ('"anyOf"', '"title"', '"const"', '"additionalProperties": true'):
        assert keyword not in text
    flow = defs["sh.volcano.flow.v1alpha1.JobFlow"]
    assert flow["properties"]["spec"] == {"$ref": "#/definitions/io.vcflow.api.JobFlowSpec"}
    assert flow["properties"]["apiVersion"]["type"] == "string"


def test_every_patch_operation_takes_field_validation(client: Client) -> None:
    doc = client.get("/openapi/v2").json()
    path = "/apis/flow.volcano.sh/v1alpha1/namespaces/{namespace}/jobflows/{name}"
    patch = doc["paths"][path]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "flow.volcano.sh",
        "version": "v1alpha1",
        "kind": "JobFlow",
    }
    params = {p["name"]: p for p in patch["parameters"]}
    assert params["fieldValidation"]["in"] == "query"
    patched = [
        op["x-kubernetes-group-version-kind"]["kind"]
        for item in doc["paths"].values()
        for method, op in item.items()
        if method == "patch"
    ]
    assert set(patched) == {r.kind for r in resources.ALL}


def _delete_answers(paths: dict[str, Any], prefix: str, *, v3: bool) -> dict[str, set[str]]:
    """The resource plural of each item path → the definitions its DELETE answers (200, 202)
    with."""
    found = {}
    for path, item in paths.items():
        if "delete" not in item:
            continue
        answers = item["delete"]["responses"]
        assert set(answers) == {"200", "202"}
        schemas_ = [
            a["content"]["application/json"]["schema"] if v3 else a["schema"]
            for a in answers.values()
        ]
        found[path.split("/")[-2]] = {s["$ref"].removeprefix(prefix) for s in schemas_}
    return found


def test_a_delete_answers_what_the_server_sends_as_kube_documents_it(client: Client) -> None:
    """kube-apiserver answers a DELETE of a custom resource, ConfigMap, Secret, Event or
    Lease with a Status (`server.objects.delete`), of a Pod with the Pod; its documents say
    so, for 200 and 202, and define Status (`kubectl delete` reads neither)."""
    doc = client.get("/openapi/v2").json()
    by_kind = _delete_answers(doc["paths"], "#/definitions/", v3=False)
    status_only = {STATUS}
    assert by_kind == {
        "jobflows": status_only,
        "jobtemplates": status_only,
        "jobs": status_only,
        "commands": status_only,
        "pods": {"io.k8s.api.core.v1.Pod"},
        "events": status_only,
        "configmaps": status_only,
        "secrets": status_only,
        "leases": status_only,
        "queues": status_only,
        "priorityclasses": status_only,
    }
    defs = doc["definitions"]
    status = defs[STATUS]
    assert set(status["properties"]) == {
        "apiVersion",
        "code",
        "details",
        "kind",
        "message",
        "metadata",
        "reason",
        "status",
    }
    assert status["x-kubernetes-group-version-kind"] == [
        {"group": "", "kind": "Status", "version": "v1"}
    ]
    details = defs["io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails"]["properties"]
    assert set(details) == {"causes", "group", "kind", "name", "retryAfterSeconds", "uid"}
    assert {r.removeprefix("#/definitions/") for r in refs(doc)} <= set(defs)

    for group_version in ("api/v1", "apis/flow.volcano.sh/v1alpha1", "apis/events.k8s.io/v1"):
        v3 = client.get(f"/openapi/v3/{group_version}").json()
        prefix = "#/components/schemas/"
        answers = _delete_answers(v3["paths"], prefix, v3=True)
        assert answers and all(
            found == ({"io.k8s.api.core.v1.Pod"} if plural == "pods" else status_only)
            for plural, found in answers.items()
        )
        assert STATUS in v3["components"]["schemas"]
        assert {r.removeprefix(prefix) for r in refs(v3)} <= set(v3["components"]["schemas"])

    pb = client.get("/openapi/v2", headers={"accept": PROTOBUF}).content
    (definitions,) = field(pb, 9)
    assert STATUS.encode() in [field(named, 1)[0] for named in field(definitions, 1)]
    (paths,) = field(pb, 8)
    path = b"/apis/flow.volcano.sh/v1alpha1/namespaces/{namespace}/jobflows/{name}"
    (item,) = [field(p, 2)[0] for p in field(paths, 2) if field(p, 1) == [path]]
    (delete,) = field(item, 5)
    (responses,) = field(delete, 9)
    codes = {field(r, 1)[0]: field(r, 2)[0] for r in field(responses, 1)}
    assert set(codes) == {b"200", b"202"}
    assert all(b"#/definitions/" + STATUS.encode() in answer for answer in codes.values())


def test_v3_index_names_each_group_version_by_its_hash(client: Client) -> None:
    index = client.get("/openapi/v3").json()["paths"]
    assert {
        "api/v1",
        "apis/flow.volcano.sh/v1alpha1",
        "apis/batch.volcano.sh/v1alpha1",
        "apis/bus.volcano.sh/v1alpha1",
        "apis/events.k8s.io/v1",
        "apis/coordination.k8s.io/v1",
    } <= set(index)
    url = index["apis/flow.volcano.sh/v1alpha1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/flow.volcano.sh/v1alpha1?hash=")
    answer = client.get(url)
    assert answer.headers["cache-control"] == "public, immutable"
    doc = answer.json()
    assert doc["openapi"].startswith("3.0")
    schemas_ = doc["components"]["schemas"]
    assert set(kinds(schemas_)) == {
        ("flow.volcano.sh", "v1alpha1", "JobFlow"),
        ("flow.volcano.sh", "v1alpha1", "JobTemplate"),
        STATUS_GVK,
    }
    assert {r.removeprefix("#/components/schemas/") for r in refs(doc)} <= set(schemas_)
    assert "io.k8s.api.core.v1.Pod" not in schemas_  # each document holds its own kinds


def _docstrings() -> set[str]:
    """The first line of each vcflow model's own docstring (what pydantic would describe
    the model with), so a test can look for them."""
    found: set[str] = set()
    todo: list[type[BaseModel]] = [BaseModel]
    while todo:
        for model in todo.pop().__subclasses__():
            todo.append(model)
            doc = model.__dict__.get("__doc__")
            if model.__module__.startswith("vcflow.") and doc:
                found.add(inspect.cleandoc(doc).splitlines()[0])
    return found


def _descriptions(node: Any) -> list[str]:
    """Every `description` in a document (not a property named so: that is a schema)."""
    if isinstance(node, list):
        return [d for item in node for d in _descriptions(item)]
    if not isinstance(node, dict):
        return []
    own = [node["description"]] if isinstance(node.get("description"), str) else []
    return own + [d for value in node.values() for d in _descriptions(value)]


def test_no_docstring_is_served_as_a_description(client: Client) -> None:
    """The models' docstrings are written for developers (`kubectl explain pods` said
    "A pod object. `phase` is `""` before the kubelet reported anything."): neither
    OpenAPI document, nor the CRDs deploy/ ships, describes anything with them; kube's own
    words for `apiVersion`, `kind` and `Status` stay."""
    docstrings = _docstrings()
    assert 'A pod object. `phase` is `""` before the kubelet reported anything.' in docstrings
    v3 = client.get("/openapi/v3").json()["paths"]
    docs = [client.get("/openapi/v2").json()]
    docs += [client.get(v3[gv]["serverRelativeURL"]).json() for gv in sorted(v3)]
    said = [d for doc in docs for d in _descriptions(doc)]
    said += [d for text in crds.files().values() for d in _descriptions(yaml.safe_load(text))]
    assert [d for d in said if any(line in d for line in docstrings)] == []
    pod = docs[0]["definitions"]["io.k8s.api.core.v1.Pod"]
    assert "description" not in pod
    assert pod["properties"]["kind"]["description"] == schemas.ABOUT_FIELD["kind"]["description"]
    retry = docs[0]["definitions"]["io.vcflow.api.RetryPolicy"]
    assert "PR #4567" not in json.dumps(retry)
    assert "description" not in retry


def field(data: bytes | int, number: int) -> list[bytes]:
    assert isinstance(data, bytes)
    return [v for n, v in protobody.fields(data) if n == number and isinstance(v, bytes)]


def test_v2_as_protobuf_is_gnostics_document(client: Client) -> None:
    answer = client.get("/openapi/v2", headers={"accept": PROTOBUF})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == openapi_pb.CONTENT_TYPE
    doc = answer.content
    assert field(doc, 1) == [b"2.0"]
    (definitions,) = field(doc, 9)
    names = [field(named, 1)[0].decode() for named in field(definitions, 1)]
    assert names == list(client.get("/openapi/v2").json()["definitions"])
    kind = b"sh.volcano.flow.v1alpha1.JobFlow"
    (jobflow,) = [n for n in field(definitions, 1) if field(n, 1) == [kind]]
    (schema,) = field(jobflow, 2)
    extensions = {field(e, 1)[0]: field(e, 2)[0] for e in field(schema, 31)}  # as YAML
    value = extensions[b"x-kubernetes-group-version-kind"]
    assert json.loads(field(value, 2)[0]) == [
        {"group": "flow.volcano.sh", "kind": "JobFlow", "version": "v1alpha1"}
    ]


def test_neither_json_nor_protobuf_is_not_acceptable(client: Client) -> None:
    answer = client.get("/openapi/v2", headers={"accept": "application/yaml"})
    assert answer.status_code == 406
    assert answer.json()["reason"] == "NotAcceptable"
    both = client.get("/openapi/v2", headers={"accept": f"application/json, {PROTOBUF}"})
    assert both.headers["content-type"] == "application/json"


def test_unserved_group_version_is_not_found(client: Client) -> None:
    assert client.get("/openapi/v3/apis/nope.io/v1").status_code == 404


def test_inlined_schema_has_no_refs_and_reaches_the_pod_template() -> None:
    schema = schemas.inlined(resources.JOBTEMPLATES)
    assert refs(schema) == set()
    tasks = schema["properties"]["spec"]["properties"]["tasks"]["items"]
    assert "containers" in tasks["properties"]["template"]["properties"]["spec"]["properties"]
    assert schema["x-kubernetes-group-version-kind"][0]["kind"] == "JobTemplate"


def test_quantities_are_int_or_string() -> None:
    defs = schemas.definitions("#/d/")
    limits = defs["io.vcflow.api.ResourceRequirements"]["properties"]["limits"]
    assert limits["additionalProperties"] == {"x-kubernetes-int-or-string": True}
